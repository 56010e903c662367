//! The two tables of a trace side by side: the string table and the program-ID table, as far
//! as they could be read, and the names they give the program IDs together.
//!
//! A program-ID entry's u32 string index is a byte offset into the string table, or the
//! ordinal of a non-empty name (0 for the first): the format's description does not say
//! which. [`Tables::read_indices`] decides for each file, as [`StringIndex`] asks:
//!
//! ```text
//! string table   a p p . e x e \0 c o r e . d l l \0 u c r t . d l l \0
//! byte offset    0                8                  17
//! ordinal        0                1                  2
//! ```
//!
//! With [`StringIndex::Auto`] the indices are ordinals exactly when one of them does not
//! start a name (8 above does, 3 does not) and every one is below the number of names
//! (3 above); otherwise they are byte offsets.

use std::fmt;
use std::str::FromStr;

use uuid::Uuid;

use crate::format::diag::{Code, Diagnostic};
use crate::format::error::UnknownName;
use crate::format::progid::{ENTRY_SIZE, ProgramId, ProgramIdTable};
use crate::format::strtab::StringTable;

/// How to read the program IDs' string indices, as asked for (`/strindex`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StringIndex {
    /// As ordinals when they cannot all be offsets of names but can all be ordinals, else as
    /// byte offsets; reading them as ordinals is reported as `string-index-ordinal`.
    #[default]
    Auto,
    /// Always as byte offsets into the string table.
    Offset,
    /// Always as ordinals of the non-empty names.
    Ordinal,
}

impl StringIndex {
    /// Every mode, in the order of the option's values.
    pub const ALL: [StringIndex; 3] =
        [StringIndex::Auto, StringIndex::Offset, StringIndex::Ordinal];

    /// `"auto"`, `"offset"` or `"ordinal"`, as `/strindex` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            StringIndex::Auto => "auto",
            StringIndex::Offset => "offset",
            StringIndex::Ordinal => "ordinal",
        }
    }
}

impl fmt::Display for StringIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StringIndex {
    type Err = UnknownName;

    /// Parses `auto`, `offset` or `ordinal`, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        StringIndex::ALL
            .into_iter()
            .find(|mode| mode.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownName {
                given: s.to_owned(),
                expected: "auto, offset or ordinal",
            })
    }
}

/// How a file's string indices were read: what [`StringIndex`] decided for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IndexReading {
    /// Byte offsets into the string table.
    #[default]
    Offset,
    /// Ordinals of the non-empty names.
    Ordinal,
}

/// A trace's string and program-ID tables. Either is `None` when it lies past the end of the
/// input; the diagnostics say why.
#[derive(Clone, Debug, Default)]
pub struct Tables {
    /// The string table.
    pub strings: Option<StringTable>,
    /// The program-ID table.
    pub progids: Option<ProgramIdTable>,
    /// How the program IDs' string indices are read; set by [`Tables::read_indices`].
    pub reading: IndexReading,
}

impl Tables {
    /// Decides how the program IDs' string indices are read, as `requested`, and reports
    /// `string-index-ordinal` when [`StringIndex::Auto`] chose ordinals, and
    /// `string-offset-out-of-range` for each index that names nothing. Nothing is decided
    /// or checked unless both tables could be read: the indices are then read as forced, or
    /// by default as byte offsets.
    pub fn read_indices(&mut self, requested: StringIndex, mut report: impl FnMut(Diagnostic)) {
        let mut reading = match requested {
            StringIndex::Auto | StringIndex::Offset => IndexReading::Offset,
            StringIndex::Ordinal => IndexReading::Ordinal,
        };
        if let (Some(strings), Some(progids)) = (&self.strings, &self.progids) {
            let entries = progids.entries();
            let count = strings.name_count();
            if requested == StringIndex::Auto
                && let Some(first) = entries
                    .iter()
                    .position(|e| !strings.is_name_start(e.string_offset))
                && entries.iter().all(|e| in_count(e.string_offset, count))
            {
                let index = entries[first].string_offset;
                report(Diagnostic::new(
                    Code::StringIndexOrdinal,
                    progids.entry_offset(first) + 20,
                    format!(
                        "the program IDs' string indices were read as ordinals (the n-th name of the string table, from 0): \
                         program ID {first}'s index {index} ({index:#X}) starts no name, and every index is below the table's {count} names; \
                         /strindex:offset reads them as byte offsets"
                    ),
                ));
                reading = IndexReading::Ordinal;
            }
            match reading {
                IndexReading::Offset => progids.check_names(strings, report),
                IndexReading::Ordinal => progids.check_ordinals(strings, report),
            }
        }
        self.reading = reading;
    }

    /// The name bytes of program ID `progid`, when both tables can resolve it.
    pub fn name(&self, progid: u16) -> Option<&[u8]> {
        self.name_of(self.progids.as_ref()?.get(progid)?)
    }

    /// The name bytes of the program-ID entry `entry`, read as [`Tables::reading`] says,
    /// when the string table can resolve it.
    pub fn name_of(&self, entry: &ProgramId) -> Option<&[u8]> {
        let strings = self.strings.as_ref()?;
        match self.reading {
            IndexReading::Offset => strings.get(entry.string_offset),
            IndexReading::Ordinal => strings.nth(entry.string_offset),
        }
    }

    /// Tables that list `binaries` (name, GUID, age) as program IDs 0, 1, ...: how several
    /// traces merged into one (`/merge`) name their binaries.
    pub fn listing(binaries: &[(String, Uuid, u32)]) -> Tables {
        let mut strings = Vec::new();
        let mut entries = Vec::with_capacity(binaries.len() * ENTRY_SIZE);
        for (name, guid, age) in binaries {
            let offset = strings.len() as u32;
            strings.extend_from_slice(name.as_bytes());
            strings.push(0);
            entries.extend_from_slice(&guid.to_bytes_le());
            entries.extend_from_slice(&age.to_le_bytes());
            entries.extend_from_slice(&offset.to_le_bytes());
        }
        Tables {
            strings: Some(StringTable::new(strings, 0)),
            progids: Some(ProgramIdTable::parse(&entries, 0)),
            reading: IndexReading::Offset,
        }
    }

    /// The name a binary goes by in keys and exports: its program ID's name (with U+FFFD for
    /// what is not UTF-8), or `progid N` when it has none.
    pub fn binary_name(&self, progid: u16) -> String {
        match self.name(progid) {
            Some(name) => String::from_utf8_lossy(name).into_owned(),
            None => format!("progid {progid}"),
        }
    }

    /// How many program IDs the table lists (0 when it could not be read).
    pub fn progid_count(&self) -> usize {
        self.progids.as_ref().map_or(0, |t| t.entries().len())
    }
}

/// Whether `index` is below `count`.
fn in_count(index: u32, count: usize) -> bool {
    usize::try_from(index).is_ok_and(|i| i < count)
}

/// The last component of a binary's name, as Windows paths separate them (`\` or `/`):
/// `app.exe` for `C:\build\app.exe`. Names of binaries compare by it, case-insensitively.
pub fn base_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three names of different lengths: `app.exe` at byte 0, `core.dll` at 8,
    /// `ucrtbase.dll` at 17.
    const NAMES: &[u8] = b"app.exe\0core.dll\0ucrtbase.dll\0";

    /// Where the program-ID table lies in the file.
    const PROGIDS_AT: u64 = 0x4020;

    /// The file offset of entry `i`'s string index field.
    fn index_field(i: u64) -> u64 {
        PROGIDS_AT + i * 24 + 20
    }

    /// Tables over the string table `names` and one program-ID entry per string index.
    fn tables(names: &[u8], indices: &[u32]) -> Tables {
        let mut entries = Vec::new();
        for (age, index) in indices.iter().enumerate() {
            entries.extend([0x11; 16]); // GUID
            entries.extend((age as u32).to_le_bytes()); // age
            entries.extend(index.to_le_bytes()); // string index
        }
        Tables {
            strings: Some(StringTable::new(names.to_vec(), 0x20)),
            progids: Some(ProgramIdTable::parse(&entries, PROGIDS_AT)),
            ..Tables::default()
        }
    }

    /// Reads the indices as `requested`: the tables, and the diagnostics as (code, offset).
    fn read(names: &[u8], indices: &[u32], requested: StringIndex) -> (Tables, Vec<Diagnostic>) {
        let mut t = tables(names, indices);
        let mut found = vec![];
        t.read_indices(requested, |d| found.push(d));
        (t, found)
    }

    fn codes(found: &[Diagnostic]) -> Vec<(Code, u64)> {
        found.iter().map(|d| (d.code, d.offset)).collect()
    }

    fn names(t: &Tables) -> Vec<Option<&str>> {
        (0..t.progid_count() as u16)
            .map(|i| t.name(i).map(|n| std::str::from_utf8(n).unwrap()))
            .collect()
    }

    #[test]
    fn byte_offsets_stay_byte_offsets() {
        let (t, found) = read(NAMES, &[0, 8, 17], StringIndex::Auto);
        assert_eq!(t.reading, IndexReading::Offset);
        assert_eq!(codes(&found), []);
        assert_eq!(
            names(&t),
            [Some("app.exe"), Some("core.dll"), Some("ucrtbase.dll")]
        );
    }

    #[test]
    fn ordinals_are_read_as_ordinals_with_one_warning() {
        let (t, found) = read(NAMES, &[0, 1, 2], StringIndex::Auto);
        assert_eq!(t.reading, IndexReading::Ordinal);
        // Index 0 starts a name either way; index 1 is the first that does not.
        assert_eq!(codes(&found), [(Code::StringIndexOrdinal, index_field(1))]);
        assert_eq!(found[0].severity(), crate::format::diag::Severity::Warning);
        let message = &found[0].message;
        assert!(message.contains("ordinals"), "{message}");
        assert!(message.contains("/strindex:offset"), "{message}");
        assert_eq!(
            names(&t),
            [Some("app.exe"), Some("core.dll"), Some("ucrtbase.dll")]
        );
        // The entries keep the stored index.
        assert_eq!(t.progids.as_ref().unwrap().entries()[2].string_offset, 2);
    }

    #[test]
    fn ordinals_in_any_order_warn_at_the_first_that_starts_no_name() {
        let (t, found) = read(NAMES, &[2, 0, 1], StringIndex::Auto);
        assert_eq!(t.reading, IndexReading::Ordinal);
        assert_eq!(codes(&found), [(Code::StringIndexOrdinal, index_field(0))]);
        assert_eq!(
            names(&t),
            [Some("ucrtbase.dll"), Some("app.exe"), Some("core.dll")]
        );
    }

    #[test]
    fn a_single_index_0_is_an_offset_without_a_warning() {
        // Offset 0 and ordinal 0 name the same string: nothing to decide, nothing to say.
        let (t, found) = read(NAMES, &[0], StringIndex::Auto);
        assert_eq!(t.reading, IndexReading::Offset);
        assert_eq!(codes(&found), []);
        assert_eq!(names(&t), [Some("app.exe")]);
    }

    #[test]
    fn an_index_past_the_names_keeps_byte_offsets() {
        // 100 starts no name, but is no ordinal either: byte offsets, out of range as ever.
        let (t, found) = read(NAMES, &[0, 100], StringIndex::Auto);
        assert_eq!(t.reading, IndexReading::Offset);
        assert_eq!(
            codes(&found),
            [(Code::StringOffsetOutOfRange, index_field(1))]
        );
        assert_eq!(names(&t), [Some("app.exe"), None]);
        // 12 lies inside core.dll and is no ordinal: the tail of a name, as ever.
        let (t, found) = read(NAMES, &[1, 12], StringIndex::Auto);
        assert_eq!(t.reading, IndexReading::Offset);
        assert_eq!(codes(&found), []);
        assert_eq!(names(&t), [Some("pp.exe"), Some(".dll")]);
    }

    #[test]
    fn an_index_on_a_nul_starts_no_name() {
        // Byte 1 is padding between `a` and `bc`: it starts no name, so ordinals.
        let (t, found) = read(b"a\0\0bc\0", &[0, 1], StringIndex::Auto);
        assert_eq!(t.reading, IndexReading::Ordinal);
        assert_eq!(codes(&found), [(Code::StringIndexOrdinal, index_field(1))]);
        assert_eq!(names(&t), [Some("a"), Some("bc")]);
        // Byte 8 is padding too, but no ordinal of 2 names: an empty name, as ever.
        let (t, found) = read(b"app.exe\0\0core.dll\0", &[0, 8], StringIndex::Auto);
        assert_eq!(t.reading, IndexReading::Offset);
        assert_eq!(codes(&found), []);
        assert_eq!(names(&t), [Some("app.exe"), Some("")]);
        // Byte 0 is a NUL here, so even index 0 starts no name.
        let (t, found) = read(b"\0app.exe\0core.dll\0", &[0, 1], StringIndex::Auto);
        assert_eq!(t.reading, IndexReading::Ordinal);
        assert_eq!(codes(&found), [(Code::StringIndexOrdinal, index_field(0))]);
        assert_eq!(names(&t), [Some("app.exe"), Some("core.dll")]);
    }

    #[test]
    fn forced_offsets_read_ordinals_as_today() {
        let (t, found) = read(NAMES, &[0, 1, 2], StringIndex::Offset);
        assert_eq!(t.reading, IndexReading::Offset);
        assert_eq!(codes(&found), []);
        assert_eq!(names(&t), [Some("app.exe"), Some("pp.exe"), Some("p.exe")]);
    }

    #[test]
    fn forced_ordinals_past_the_names_are_out_of_range() {
        let (t, found) = read(NAMES, &[0, 3, 8], StringIndex::Ordinal);
        assert_eq!(t.reading, IndexReading::Ordinal);
        assert_eq!(
            codes(&found),
            [
                (Code::StringOffsetOutOfRange, index_field(1)),
                (Code::StringOffsetOutOfRange, index_field(2))
            ]
        );
        let message = &found[0].message;
        assert!(
            message.contains("ordinal 3") && message.contains("only 3 names"),
            "{message}"
        );
        assert_eq!(names(&t), [Some("app.exe"), None, None]);
        // Forced ordinals that fit are read without a warning.
        let (t, found) = read(NAMES, &[2, 1], StringIndex::Ordinal);
        assert_eq!(codes(&found), []);
        assert_eq!(names(&t), [Some("ucrtbase.dll"), Some("core.dll")]);
    }

    #[test]
    fn an_empty_string_table_has_neither_offsets_nor_ordinals() {
        let (t, found) = read(b"", &[0], StringIndex::Auto);
        assert_eq!(t.reading, IndexReading::Offset);
        assert_eq!(
            codes(&found),
            [(Code::StringOffsetOutOfRange, index_field(0))]
        );
        assert_eq!(names(&t), [None]);
        let (t, found) = read(b"", &[0], StringIndex::Ordinal);
        assert_eq!(
            codes(&found),
            [(Code::StringOffsetOutOfRange, index_field(0))]
        );
        assert_eq!(names(&t), [None]);
        let (_, found) = read(b"", &[], StringIndex::Auto);
        assert_eq!(codes(&found), []);
    }

    #[test]
    fn nothing_is_checked_without_a_string_table() {
        for requested in StringIndex::ALL {
            let mut t = tables(NAMES, &[5, 100]);
            t.strings = None;
            let mut found = vec![];
            t.read_indices(requested, |d| found.push(d));
            assert_eq!(codes(&found), [], "{requested}");
            assert_eq!(names(&t), [None, None]);
        }
    }

    #[test]
    fn modes_parse_in_any_case() {
        assert_eq!("AUTO".parse(), Ok(StringIndex::Auto));
        assert_eq!("offset".parse(), Ok(StringIndex::Offset));
        assert_eq!("Ordinal".parse(), Ok(StringIndex::Ordinal));
        assert!("index".parse::<StringIndex>().is_err());
        assert_eq!(StringIndex::default(), StringIndex::Auto);
    }

    #[test]
    fn base_names() {
        assert_eq!(base_name("C:\\build\\Core.DLL"), "Core.DLL");
        assert_eq!(base_name("/x/y/app.exe"), "app.exe");
        assert_eq!(base_name("app.exe"), "app.exe");
        assert_eq!(base_name("dir/"), "");
    }
}
