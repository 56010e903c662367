//! The program-ID table: which build of which binary each segment's samples belong to.
//!
//! ```text
//! ProgramIdTableOffset + index * 24
//! v
//! +-----------------------------------------------+-----------+--------------+
//! | GUID (16 bytes)                               | age (u32) | string (u32) |
//! | u32 LE   u16 LE  u16 LE  8 bytes as they are  |           | string index |
//! +-----------------------------------------------+-----------+--------------+
//! 0                                               16          20             24
//! ```
//!
//! The GUID and age are those of the binary's CodeView (RSDS) record, the pair SPDConvert
//! compares with the build being optimised. `ProgramIdsUsed` entries are in use;
//! `ProgramIdCapacity` entries are reserved. The string index is a byte offset into the
//! string table or the ordinal of a name; [`crate::format::tables`] decides which.

use std::fmt;

use byteorder::{ByteOrder, LittleEndian as LE};
use uuid::Uuid;

use crate::format::diag::{Code, Diagnostic};
use crate::format::strtab::StringTable;

/// The size of one entry in bytes.
pub const ENTRY_SIZE: usize = 24;

/// One program-ID entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramId {
    /// The PDB's GUID.
    pub guid: Uuid,
    /// The PDB's age.
    pub age: u32,
    /// The string index of the binary's name, as stored: a byte offset into the string
    /// table, or the ordinal of a non-empty name (see [`crate::format::tables`]).
    pub string_offset: u32,
}

impl ProgramId {
    /// Reads an entry from its 24 bytes.
    pub fn parse(bytes: &[u8; ENTRY_SIZE]) -> ProgramId {
        let mut guid = [0u8; 16];
        guid.copy_from_slice(&bytes[..16]);
        ProgramId {
            guid: Uuid::from_bytes_le(guid),
            age: LE::read_u32(&bytes[16..]),
            string_offset: LE::read_u32(&bytes[20..]),
        }
    }

    /// The GUID in registry form without braces, upper case:
    /// `42AC0098-ADB5-E796-8C0E-161D2814780E`.
    pub fn guid_string(&self) -> String {
        registry_form(&self.guid)
    }

    /// The symbol-server key: the GUID's 32 hex digits, then the age in upper-case hex
    /// without leading zeros: `42AC0098ADB5E7968C0E161D2814780E1`.
    pub fn symkey(&self) -> SymKey {
        SymKey::new(self.guid, self.age)
    }
}

/// A GUID in registry form without braces, upper case, as everything here shows GUIDs:
/// `42AC0098-ADB5-E796-8C0E-161D2814780E`.
pub fn registry_form(guid: &Uuid) -> String {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    guid.hyphenated().encode_upper(&mut buf).to_owned()
}

/// Displays a program ID's symbol-server key.
#[derive(Clone, Copy, Debug)]
pub struct SymKey {
    guid: Uuid,
    age: u32,
}

impl SymKey {
    /// The key of a PDB with this GUID and age.
    pub fn new(guid: Uuid, age: u32) -> SymKey {
        SymKey { guid, age }
    }
}

impl fmt::Display for SymKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; uuid::fmt::Simple::LENGTH];
        f.write_str(self.guid.simple().encode_upper(&mut buf))?;
        write!(f, "{:X}", self.age)
    }
}

/// The used entries of the program-ID table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgramIdTable {
    entries: Vec<ProgramId>,
    file_offset: u64,
}

impl ProgramIdTable {
    /// Parses the used entries from `bytes` (a whole number of entries), found at
    /// `file_offset`.
    pub fn parse(bytes: &[u8], file_offset: u64) -> Self {
        let entries = bytes
            .chunks_exact(ENTRY_SIZE)
            .map(|c| ProgramId::parse(c.try_into().expect("chunks_exact yields whole entries")))
            .collect();
        ProgramIdTable {
            entries,
            file_offset,
        }
    }

    /// The entries, in table order.
    pub fn entries(&self) -> &[ProgramId] {
        &self.entries
    }

    /// The entry at `index`, if the table holds it.
    pub fn get(&self, index: u16) -> Option<&ProgramId> {
        self.entries.get(usize::from(index))
    }

    /// The file offset of the entry at `index`.
    pub fn entry_offset(&self, index: usize) -> u64 {
        self.file_offset + (index * ENTRY_SIZE) as u64
    }

    /// Reports entries whose string index, read as a byte offset, lies outside the used
    /// string table.
    pub fn check_names(&self, strings: &StringTable, mut report: impl FnMut(Diagnostic)) {
        for (index, entry) in self.entries.iter().enumerate() {
            if strings.get(entry.string_offset).is_none() {
                report(Diagnostic::new(
                    Code::StringOffsetOutOfRange,
                    self.entry_offset(index) + 20,
                    format!(
                        "program ID {index} names string offset {} ({:#X}), but the string table uses only {} bytes",
                        entry.string_offset,
                        entry.string_offset,
                        strings.bytes().len()
                    ),
                ));
            }
        }
    }

    /// Reports entries whose string index, read as an ordinal, is not below the number of
    /// names the string table lists.
    pub fn check_ordinals(&self, strings: &StringTable, mut report: impl FnMut(Diagnostic)) {
        for (index, entry) in self.entries.iter().enumerate() {
            if strings.nth(entry.string_offset).is_none() {
                report(Diagnostic::new(
                    Code::StringOffsetOutOfRange,
                    self.entry_offset(index) + 20,
                    format!(
                        "program ID {index} names string ordinal {}, but the string table lists only {} names",
                        entry.string_offset,
                        strings.name_count()
                    ),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entry of the specification's example, field by field.
    const ENTRY: [u8; 24] = [
        0x98, 0x00, 0xAC, 0x42, // GUID Data1 0x42AC0098, little-endian
        0xB5, 0xAD, // Data2 0xADB5
        0x96, 0xE7, // Data3 0xE796
        0x8C, 0x0E, 0x16, 0x1D, 0x28, 0x14, 0x78, 0x0E, // Data4, as it is
        0x01, 0x00, 0x00, 0x00, // age 1
        0x08, 0x00, 0x00, 0x00, // string offset 8
    ];

    #[test]
    fn guid_age_and_key() {
        let p = ProgramId::parse(&ENTRY);
        assert_eq!(p.guid_string(), "42AC0098-ADB5-E796-8C0E-161D2814780E");
        assert_eq!(p.age, 1);
        assert_eq!(p.string_offset, 8);
        assert_eq!(p.symkey().to_string(), "42AC0098ADB5E7968C0E161D2814780E1");
    }

    #[test]
    fn key_age_is_hex_without_leading_zeros() {
        let mut bytes = ENTRY;
        bytes[16..20].copy_from_slice(&0x1Fu32.to_le_bytes());
        assert!(
            ProgramId::parse(&bytes)
                .symkey()
                .to_string()
                .ends_with("0E1F")
        );
        bytes[16..20].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(
            ProgramId::parse(&bytes)
                .symkey()
                .to_string()
                .ends_with("0EFFFFFFFF")
        );
    }

    #[test]
    fn string_offset_out_of_range_points_at_the_field() {
        let mut bytes = ENTRY.to_vec();
        bytes.extend_from_slice(&ENTRY);
        bytes[24 + 20..].copy_from_slice(&100u32.to_le_bytes());
        let table = ProgramIdTable::parse(&bytes, 0x4020);
        let strings = StringTable::new(b"app.exe\0core.dll\0".to_vec(), 0x20);
        let mut found = vec![];
        table.check_names(&strings, |d| found.push((d.code, d.offset)));
        assert_eq!(found, [(Code::StringOffsetOutOfRange, 0x4020 + 24 + 20)]);
    }
}
