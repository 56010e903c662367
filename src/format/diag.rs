//! Diagnostics: every problem the decoder finds, with a severity, a stable code and the file
//! offset it concerns.
//!
//! Codes are part of the command-line contract (they appear in text as `error[CODE]` and in
//! JSON as `"code"`), so they never change once published.

use std::fmt;

/// How bad a problem is, from least to worst. Any error makes the exit status 1; warnings
/// alone leave it 0. Diagnostics are warnings or errors; the verdicts of `/check` may also
/// be notes.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; nothing is wrong.
    Note,
    /// Suspicious but harmless: everything was still decoded.
    Warning,
    /// The file breaks the format; some of it may not have been decoded.
    Error,
}

impl Severity {
    /// `"note"`, `"warning"` or `"error"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A table of stable codes: each variant with its spelling and the severity it always has.
/// The diagnostics' table is below; `/check`'s verdicts have one of their own
/// (`analysis::check::VerdictCode`).
macro_rules! codes {
    ($(#[$what:meta])* $vis:vis enum $ty:ident {
        $($(#[$doc:meta])* $variant:ident = $name:literal, $severity:ident;)*
    }) => {
        $(#[$what])*
        #[non_exhaustive]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        $vis enum $ty {
            $($(#[$doc])* $variant,)*
        }

        impl $ty {
            /// Every code, in the order of its table.
            pub const ALL: &'static [$ty] = &[$($ty::$variant,)*];

            /// The code as it is printed, for example `"bad-signature"`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)*
                }
            }

            /// The severity this code always has.
            pub fn severity(self) -> $crate::format::diag::Severity {
                match self {
                    $($ty::$variant => $crate::format::diag::Severity::$severity,)*
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use codes;

codes! {
/// The stable identifier of a kind of problem in a trace.
pub enum Code {
    /// The file is shorter than the 32-byte header.
    TruncatedHeader = "truncated-header", Error;
    /// The signature is not `0x5350543A`.
    BadSignature = "bad-signature", Error;
    /// The version is not 1.
    UnsupportedVersion = "unsupported-version", Error;
    /// RawDataId or TargetArch is not 0.
    ReservedNonzero = "reserved-nonzero", Warning;
    /// Two of the header, string table, program-ID table and stream overlap.
    TablesOverlap = "tables-overlap", Warning;
    /// StringTableUsed exceeds StringTableCapacity.
    StringTableOverflow = "string-table-overflow", Error;
    /// The used part of the string table runs past the end of the file.
    StringTableOutOfBounds = "string-table-out-of-bounds", Error;
    /// The last string has no terminating NUL.
    UnterminatedString = "unterminated-string", Warning;
    /// A string is not valid UTF-8.
    InvalidUtf8 = "invalid-utf8", Warning;
    /// ProgramIdsUsed exceeds ProgramIdCapacity.
    ProgidTableOverflow = "progid-table-overflow", Error;
    /// The used program-ID entries run past the end of the file.
    ProgidTableOutOfBounds = "progid-table-out-of-bounds", Error;
    /// A program ID's string index names no string: past the used string table, or (read as
    /// an ordinal) past its names.
    StringOffsetOutOfRange = "string-offset-out-of-range", Error;
    /// The program IDs' string indices were read as ordinals of names, not byte offsets.
    StringIndexOrdinal = "string-index-ordinal", Warning;
    /// The event stream would start past the end of the file.
    StreamOutOfBounds = "stream-out-of-bounds", Error;
    /// A sample or REPEAT record comes before any BINARY_ID.
    EventBeforeBinaryId = "event-before-binary-id", Error;
    /// A BINARY_ID names a program ID that is not in the table.
    ProgidOutOfRange = "progid-out-of-range", Error;
    /// A BINARY_ID's length is below 4 or runs past the end of the file.
    BadSegmentLength = "bad-segment-length", Error;
    /// A segment's records do not end where its length says.
    SegmentLengthMismatch = "segment-length-mismatch", Error;
    /// A record starts with an opcode this version does not know.
    UnknownOpcode = "unknown-opcode", Error;
    /// A record runs past the end of the file.
    TruncatedRecord = "truncated-record", Error;
    /// An ETW_CALLSTACK with fewer than two frames, so no arcs.
    ShortCallstack = "short-callstack", Warning;
    /// A REPEAT directly followed by another REPEAT.
    RepeatOverridden = "repeat-overridden", Warning;
    /// A REPEAT followed by a BINARY_ID or the end of the stream.
    DanglingRepeat = "dangling-repeat", Warning;
    /// An ETL buffer's events stop early: an event of a header type not known, or whose
    /// size leaves the buffer; the rest of that buffer is skipped.
    EtlUnknownHeader = "etl-unknown-header", Warning;
}
}

/// One problem found in a file.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// What kind of problem it is.
    pub code: Code,
    /// The absolute file offset it concerns.
    pub offset: u64,
    /// A sentence a person understands, without the code or offset.
    pub message: String,
}

impl Diagnostic {
    /// A diagnostic with `code` at `offset`.
    #[cold]
    pub fn new(code: Code, offset: u64, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            offset,
            message: message.into(),
        }
    }

    /// The severity, which follows from the code.
    pub fn severity(&self) -> Severity {
        self.code.severity()
    }
}

impl fmt::Display for Diagnostic {
    /// `error[CODE] at 0x0000ABCD: message`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}[{}] at {:#010X}: {}",
            self.severity(),
            self.code,
            self.offset,
            self.message
        )
    }
}

/// Counts of the diagnostics seen for one file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Error diagnostics.
    pub errors: u64,
    /// Warning diagnostics.
    pub warnings: u64,
}

impl Tally {
    /// Counts `d`.
    pub fn add(&mut self, d: &Diagnostic) {
        self.count(d.severity());
    }

    /// Counts one problem of `severity`; notes are not counted.
    pub fn count(&mut self, severity: Severity) {
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Note => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_lists_every_code_in_the_table_order() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/diagnostic.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let code = &schema["properties"]["code"];
        let listed: Vec<&str> = code["examples"]
            .as_array()
            .expect("the codes as examples")
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(listed, codes);
        let described = code["description"].as_str().unwrap();
        for c in codes {
            assert!(described.contains(c), "the description names {c}");
        }
    }

    #[test]
    fn codes_are_unique_and_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        for code in Code::ALL {
            assert!(seen.insert(code.as_str()), "duplicate {code}");
            assert!(
                code.as_str()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-' || b.is_ascii_digit())
            );
        }
        assert_eq!(Code::ALL.len(), 24);
    }

    #[test]
    fn display_has_severity_code_and_offset() {
        let d = Diagnostic::new(Code::DanglingRepeat, 0xABCD, "a REPEAT applies to nothing");
        assert_eq!(
            d.to_string(),
            "warning[dangling-repeat] at 0x0000ABCD: a REPEAT applies to nothing"
        );
        let d = Diagnostic::new(Code::TruncatedRecord, 0x1_0000_0000, "cut");
        assert_eq!(d.to_string(), "error[truncated-record] at 0x100000000: cut");
    }
}
