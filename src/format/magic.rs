//! What a file is when it is not an SPT trace: the formats a user may give by mistake,
//! known by their first bytes.
//!
//! ```text
//! MZ                                   PE image (.exe, .dll, .sys)
//! Microsoft C/C++ MSF 7.00\r\n\x1aDS   PDB
//! 7F 'E' 'L' 'F'                       ELF
//! FE ED FA CE / CF, CE / CF FA ED FE   Mach-O (and CA FE BA BE, a universal binary)
//! 1F 8B                                gzip
//! 'P' 'K' 03 04                        zip (and so .docx, .jar, ...)
//! 89 'P' 'N' 'G'                       PNG
//! '%' 'P' 'D' 'F'                      PDF
//! 'H' '_' 'Q' '_'                      SPD (a Sample Profile Database)
//! printable UTF-8                      text
//! ```
//!
//! Only the first bytes are looked at, never more than the header's 32.

use std::fmt;

use crate::format::diag::{Code, Diagnostic};

/// A format that is not SPT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Foreign {
    /// A Windows image: `.exe`, `.dll`, `.sys`.
    PeImage,
    /// A program database.
    Pdb,
    /// An ELF object or executable.
    Elf,
    /// A Mach-O object or executable.
    MachO,
    /// A gzip stream.
    Gzip,
    /// A zip archive.
    Zip,
    /// A PNG picture.
    Png,
    /// A PDF document.
    Pdf,
    /// A Sample Profile Database, which SPDConvert imports traces into.
    Spd,
    /// Text (printable UTF-8).
    Text,
}

/// The first bytes of a PDB in the MSF 7.00 container.
const MSF7: &[u8] = b"Microsoft C/C++ MSF 7.00\r\n\x1aDS";

impl Foreign {
    /// Recognises the format of a file from its first bytes (fewer than 32 when the file is
    /// shorter). `None` when it is none of the known ones: an SPT file, or something else.
    pub fn identify(first: &[u8]) -> Option<Foreign> {
        let starts = |magic: &[u8]| first.starts_with(magic);
        Some(if starts(b"MZ") {
            Foreign::PeImage
        } else if starts(MSF7) || (first.len() >= 8 && MSF7.starts_with(first)) {
            // A whole signature, or the start of one in a file cut short.
            Foreign::Pdb
        } else if starts(b"\x7FELF") {
            Foreign::Elf
        } else if [
            [0xFE, 0xED, 0xFA, 0xCE],
            [0xFE, 0xED, 0xFA, 0xCF],
            [0xCE, 0xFA, 0xED, 0xFE],
            [0xCF, 0xFA, 0xED, 0xFE],
            [0xCA, 0xFE, 0xBA, 0xBE],
        ]
        .iter()
        .any(|m| starts(m))
        {
            Foreign::MachO
        } else if starts(&[0x1F, 0x8B]) {
            Foreign::Gzip
        } else if starts(b"PK\x03\x04") {
            Foreign::Zip
        } else if starts(b"\x89PNG") {
            Foreign::Png
        } else if starts(b"%PDF") {
            Foreign::Pdf
        } else if starts(b"H_Q_") {
            Foreign::Spd
        } else if is_text(first) {
            Foreign::Text
        } else {
            return None;
        })
    }

    /// The bad-signature diagnostic for a file of this format: what it is, instead of a
    /// header full of junk.
    pub fn bad_signature(self, first: &[u8]) -> Diagnostic {
        Foreign::bad_signature_as(first, &self.to_string(), self.hint())
    }

    /// The bad-signature diagnostic for a file that is `what` (`a PDB`, or what more was
    /// read of it), with a `hint` of what the user may have meant.
    pub fn bad_signature_as(first: &[u8], what: &str, hint: Option<&str>) -> Diagnostic {
        let shown: Vec<String> = first.iter().take(4).map(|b| format!("{b:02X}")).collect();
        let mut message = format!(
            "this is {what}, not an SPT trace (its first bytes {} are not 3A 54 50 53, \"SPT:\")",
            shown.join(" ")
        );
        if let Some(hint) = hint {
            message.push_str("; ");
            message.push_str(hint);
        }
        Diagnostic::new(Code::BadSignature, 0, message)
    }

    /// A hint for the user, when there is an obvious thing they meant to do.
    pub fn hint(self) -> Option<&'static str> {
        match self {
            Foreign::PeImage => Some("did you mean /match:?"),
            Foreign::Pdb => Some("did you mean /pdb: or /match:?"),
            Foreign::Gzip | Foreign::Zip => Some("unpack it first"),
            Foreign::Spd => Some("to check a trace against it: sptdump /match:FILE TRACE"),
            _ => None,
        }
    }
}

impl fmt::Display for Foreign {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Foreign::PeImage => "a PE image (.exe, .dll or .sys)",
            Foreign::Pdb => "a PDB",
            Foreign::Elf => "an ELF file",
            Foreign::MachO => "a Mach-O file",
            Foreign::Gzip => "a gzip file",
            Foreign::Zip => "a zip archive",
            Foreign::Png => "a PNG picture",
            Foreign::Pdf => "a PDF document",
            Foreign::Spd => "an SPD (a Sample Profile Database)",
            Foreign::Text => "a text file",
        })
    }
}

/// Whether `bytes` read as text: UTF-8 (a character cut at the end is allowed) with no
/// control characters but tab, line feed, carriage return and form feed.
fn is_text(bytes: &[u8]) -> bool {
    if bytes.is_empty() {
        return false;
    }
    let valid = match std::str::from_utf8(bytes) {
        Ok(s) => s,
        // A multi-byte character cut by the end of what was read.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return false,
    };
    !valid.is_empty()
        && valid
            .chars()
            .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r' | '\x0C'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_formats() {
        let mut pdb = MSF7.to_vec();
        pdb.extend([0, 0, 0]);
        for (bytes, want) in [
            (&b"MZ\x90\0\x03\0\0\0"[..], Some(Foreign::PeImage)),
            (&pdb, Some(Foreign::Pdb)),
            (b"\x7FELF\x02\x01\x01", Some(Foreign::Elf)),
            (&[0xCF, 0xFA, 0xED, 0xFE, 7, 0, 0, 1], Some(Foreign::MachO)),
            (&[0x1F, 0x8B, 8, 0], Some(Foreign::Gzip)),
            (b"PK\x03\x04\x14\0", Some(Foreign::Zip)),
            (b"\x89PNG\r\n\x1a\n", Some(Foreign::Png)),
            (b"%PDF-1.7\n", Some(Foreign::Pdf)),
            (b"H_Q_\x0C\x10\0\0", Some(Foreign::Spd)),
            (b"RVA,hits\n0x1000,3\n", Some(Foreign::Text)),
            ("caf\u{e9} na\u{ef}ve".as_bytes(), Some(Foreign::Text)),
            // A character cut by the 32-byte limit is still text.
            (&"\u{e9}\u{e9}".as_bytes()[..3], Some(Foreign::Text)),
        ] {
            assert_eq!(Foreign::identify(bytes), want, "{bytes:02X?}");
        }
    }

    #[test]
    fn traces_and_binary_junk_are_not_recognised() {
        for bytes in [
            &b"\x3A\x54\x50\x53\x01\0\0\0"[..],
            b"SPT:\x01\0\0\0",
            &[0; 32],
            &[],
            b"\x01\x02\x03",
            b"text with a \0 in it",
        ] {
            assert_eq!(Foreign::identify(bytes), None, "{bytes:02X?}");
        }
    }

    #[test]
    fn the_diagnostic_says_what_the_file_is() {
        let d = Foreign::Pdb.bad_signature(MSF7);
        assert_eq!((d.code, d.offset), (Code::BadSignature, 0));
        assert_eq!(
            d.message,
            "this is a PDB, not an SPT trace (its first bytes 4D 69 63 72 are not 3A 54 50 53, \
             \"SPT:\"); did you mean /pdb: or /match:?"
        );
    }

    #[test]
    fn hints() {
        assert_eq!(Foreign::Pdb.hint(), Some("did you mean /pdb: or /match:?"));
        assert_eq!(
            Foreign::PeImage.to_string(),
            "a PE image (.exe, .dll or .sys)"
        );
        assert_eq!(Foreign::Png.hint(), None);
    }
}
