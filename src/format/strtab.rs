//! The string table: the names of the profiled binaries.
//!
//! ```text
//! StringTableOffset
//! v
//! +-------------------------+------------------------+-----+----------------------+
//! | a p p . e x e \0        | c o r e . d l l \0     | ... | \0 \0 \0 (padding)   |
//! +-------------------------+------------------------+-----+----------------------+
//! |<------------------- StringTableUsed ------------------>|
//! |<------------------------------- StringTableCapacity -------------------------->|
//! ```
//!
//! Names are UTF-8 and NUL-terminated. A program-ID entry names its binary by a "string
//! index": a byte offset into the table ([`StringTable::get`]), or the ordinal of a
//! non-empty name ([`StringTable::nth`]); [`crate::format::tables`] decides which for each
//! file. A name runs from its start to the next NUL or to the end of the used bytes. Empty
//! strings are padding and are not listed.

use std::borrow::Cow;

use crate::format::diag::{Code, Diagnostic};

/// The used bytes of a string table, as loaded from the file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StringTable {
    bytes: Vec<u8>,
    file_offset: u64,
    /// The byte offset of each non-empty name, in table order: at most 32768 of them, as
    /// the table holds at most 64 KiB.
    starts: Vec<u32>,
}

/// One string of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Byte offset in the table.
    pub offset: u32,
    /// The bytes, without the NUL.
    pub bytes: &'a [u8],
    /// Whether a NUL ends it.
    pub terminated: bool,
}

impl Entry<'_> {
    /// The string, with U+FFFD for bytes that are not UTF-8.
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(self.bytes)
    }
}

impl StringTable {
    /// A table over `bytes`, the used bytes found at `file_offset`.
    pub fn new(bytes: Vec<u8>, file_offset: u64) -> Self {
        let mut table = StringTable {
            bytes,
            file_offset,
            starts: Vec::new(),
        };
        table.starts = table.entries().map(|e| e.offset).collect();
        table
    }

    /// The used bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The file offset of the table.
    pub fn file_offset(&self) -> u64 {
        self.file_offset
    }

    /// The listed strings, in table order, skipping empty ones.
    pub fn entries(&self) -> impl Iterator<Item = Entry<'_>> + '_ {
        let mut start = 0usize;
        std::iter::from_fn(move || {
            loop {
                if start >= self.bytes.len() {
                    return None;
                }
                let rest = &self.bytes[start..];
                let (bytes, terminated) = match rest.iter().position(|&b| b == 0) {
                    Some(len) => (&rest[..len], true),
                    None => (rest, false),
                };
                let offset = start;
                start += bytes.len() + usize::from(terminated);
                if !bytes.is_empty() {
                    // The table holds at most 64 KiB, so the offset fits.
                    return Some(Entry {
                        offset: offset as u32,
                        bytes,
                        terminated,
                    });
                }
            }
        })
    }

    /// Reports an unterminated last string and strings that are not UTF-8.
    pub fn check(&self, mut report: impl FnMut(Diagnostic)) {
        for entry in self.entries() {
            let at = self.file_offset + u64::from(entry.offset);
            if let Err(e) = std::str::from_utf8(entry.bytes) {
                report(Diagnostic::new(
                    Code::InvalidUtf8,
                    at,
                    format!(
                        "string at table offset {:#06X} is not valid UTF-8: byte {:#04X} at file offset {:#010X} starts no character; shown with U+FFFD",
                        entry.offset,
                        entry.bytes[e.valid_up_to()],
                        at + e.valid_up_to() as u64
                    ),
                ));
            }
            if !entry.terminated {
                report(Diagnostic::new(
                    Code::UnterminatedString,
                    at,
                    format!(
                        "last string (table offset {:#06X}) has no terminating NUL within the {} used bytes",
                        entry.offset,
                        self.bytes.len()
                    ),
                ));
            }
        }
    }

    /// The bytes of the name at byte `offset`: up to the next NUL or the end of the used
    /// bytes. `None` when the offset lies outside the used bytes.
    pub fn get(&self, offset: u32) -> Option<&[u8]> {
        let rest = self.bytes.get(usize::try_from(offset).ok()?..)?;
        if rest.is_empty() {
            return None;
        }
        let len = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        Some(&rest[..len])
    }

    /// How many non-empty names the table lists.
    pub fn name_count(&self) -> usize {
        self.starts.len()
    }

    /// Whether byte `offset` starts a non-empty name: it is 0 or follows a NUL, and is not
    /// itself a NUL.
    pub fn is_name_start(&self, offset: u32) -> bool {
        self.starts.binary_search(&offset).is_ok()
    }

    /// The bytes of the non-empty name with ordinal `ordinal` (0 for the first), up to its
    /// NUL or the end of the used bytes. `None` when the table lists fewer names.
    pub fn nth(&self, ordinal: u32) -> Option<&[u8]> {
        let start = *self.starts.get(usize::try_from(ordinal).ok()?)?;
        self.get(start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(bytes: &[u8]) -> StringTable {
        StringTable::new(bytes.to_vec(), 0x20)
    }

    fn diags(t: &StringTable) -> Vec<(Code, u64)> {
        let mut found = vec![];
        t.check(|d| found.push((d.code, d.offset)));
        found
    }

    #[test]
    fn lists_strings_with_their_offsets_and_skips_padding() {
        let t = table(b"app.exe\0\0core.dll\0\0\0");
        let got: Vec<_> = t
            .entries()
            .map(|e| (e.offset, e.text().into_owned()))
            .collect();
        assert_eq!(got, [(0, "app.exe".into()), (9, "core.dll".into())]);
        assert!(diags(&t).is_empty());
    }

    #[test]
    fn names_are_byte_offsets() {
        let t = table(b"app.exe\0core.dll\0");
        assert_eq!(t.get(0), Some(&b"app.exe"[..]));
        assert_eq!(t.get(8), Some(&b"core.dll"[..]));
        assert_eq!(t.get(12), Some(&b".dll"[..])); // mid-string is allowed
        assert_eq!(t.get(7), Some(&b""[..])); // the NUL itself: an empty name
        assert_eq!(t.get(17), None); // the end of the used bytes
        assert_eq!(t.get(u32::MAX), None);
    }

    #[test]
    fn unterminated_last_string() {
        let t = table(b"a\0app.ex!");
        let last = t.entries().last().unwrap();
        assert_eq!((last.offset, last.terminated), (2, false));
        assert_eq!(t.get(2), Some(&b"app.ex!"[..]));
        assert_eq!(diags(&t), [(Code::UnterminatedString, 0x22)]);
    }

    #[test]
    fn invalid_utf8_is_reported_at_the_string_and_replaced() {
        let t = table(b"ok\0a\xFFp.exe\0");
        assert_eq!(diags(&t), [(Code::InvalidUtf8, 0x23)]);
        let bad = t.entries().nth(1).unwrap();
        assert_eq!(bad.text(), "a\u{FFFD}p.exe");
    }

    #[test]
    fn empty_table() {
        let t = table(b"");
        assert_eq!(t.entries().count(), 0);
        assert_eq!(t.get(0), None);
        assert_eq!(t.name_count(), 0);
        assert_eq!(t.nth(0), None);
        assert!(!t.is_name_start(0));
    }

    #[test]
    fn names_by_ordinal_skip_padding() {
        let t = table(b"\0app.exe\0\0core.dll\0x");
        assert_eq!(t.name_count(), 3);
        assert_eq!(t.nth(0), Some(&b"app.exe"[..]));
        assert_eq!(t.nth(1), Some(&b"core.dll"[..]));
        assert_eq!(t.nth(2), Some(&b"x"[..])); // unterminated, to the end
        assert_eq!(t.nth(3), None);
        assert_eq!(t.nth(u32::MAX), None);
    }

    #[test]
    fn name_starts_follow_a_nul_and_are_not_one() {
        let t = table(b"\0app.exe\0\0core.dll\0x");
        let starts: Vec<u32> = (0..30).filter(|&o| t.is_name_start(o)).collect();
        assert_eq!(starts, [1, 10, 19]);
    }
}
