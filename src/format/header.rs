//! The 32-byte SPT header.
//!
//! ```text
//! offset  size  field
//! 0x00    u32   Signature             0x5350543A ("SPT:"); on disk 3A 54 50 53
//! 0x04    u32   Version               1
//! 0x08    u32   RawDataId             reserved, 0
//! 0x0C    u32   TargetArch            reserved, 0
//! 0x10    u32   StringTableOffset     usually 0x20
//! 0x14    u32   ProgramIdTableOffset  usually StringTableOffset + StringTableCapacity
//! 0x18    u16   StringTableUsed       bytes used in the string table
//! 0x1A    u16   StringTableCapacity   bytes reserved for it, usually 0x4000
//! 0x1C    u16   ProgramIdsUsed        entries in use
//! 0x1E    u16   ProgramIdCapacity     entries reserved (not bytes), usually 0x100
//! ```
//!
//! All integers are little-endian. The event stream starts right after the program-ID
//! table's capacity: `ProgramIdTableOffset + ProgramIdCapacity * 24`.

use byteorder::{ByteOrder, LittleEndian as LE};

use crate::format::diag::{Code, Diagnostic};
use crate::format::progid::ENTRY_SIZE;

/// The size of the header in bytes.
pub const HEADER_SIZE: usize = 32;

/// The signature: "SPT:" read as a multi-character constant.
pub const SIGNATURE: u32 = 0x5350_543A;

/// The only version this decoder knows.
pub const VERSION: u32 = 1;

/// The header fields, exactly as stored.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Must be [`SIGNATURE`].
    pub signature: u32,
    /// Must be [`VERSION`].
    pub version: u32,
    /// Reserved, 0.
    pub raw_data_id: u32,
    /// Reserved, 0.
    pub target_arch: u32,
    /// File offset of the string table.
    pub string_table_offset: u32,
    /// File offset of the program-ID table.
    pub program_id_table_offset: u32,
    /// Bytes used in the string table.
    pub string_table_used: u16,
    /// Bytes reserved for the string table.
    pub string_table_capacity: u16,
    /// Program-ID entries in use.
    pub program_ids_used: u16,
    /// Program-ID entries reserved.
    pub program_id_capacity: u16,
}

impl Header {
    /// Reads the header from its 32 bytes. Any bytes form a header; [`Header::check_fatal`]
    /// and [`Header::check_reserved`] say whether they form a good one.
    pub fn parse(bytes: &[u8; HEADER_SIZE]) -> Header {
        Header {
            signature: LE::read_u32(&bytes[0x00..]),
            version: LE::read_u32(&bytes[0x04..]),
            raw_data_id: LE::read_u32(&bytes[0x08..]),
            target_arch: LE::read_u32(&bytes[0x0C..]),
            string_table_offset: LE::read_u32(&bytes[0x10..]),
            program_id_table_offset: LE::read_u32(&bytes[0x14..]),
            string_table_used: LE::read_u16(&bytes[0x18..]),
            string_table_capacity: LE::read_u16(&bytes[0x1A..]),
            program_ids_used: LE::read_u16(&bytes[0x1C..]),
            program_id_capacity: LE::read_u16(&bytes[0x1E..]),
        }
    }

    /// The file offset where the event stream starts. Computed in 64 bits: it can lie past
    /// 4 GiB.
    pub fn stream_offset(&self) -> u64 {
        u64::from(self.program_id_table_offset)
            + u64::from(self.program_id_capacity) * ENTRY_SIZE as u64
    }

    /// Checks signature and version. An error here means nothing past the header can be
    /// trusted, so decoding stops.
    pub fn check_fatal(&self) -> Option<Diagnostic> {
        if self.signature != SIGNATURE {
            let message = if self.signature == SIGNATURE.swap_bytes() {
                format!(
                    "signature {:#010X} is \"SPT:\" written in the wrong byte order \
                     (the bytes are 53 50 54 3A; expected 3A 54 50 53, the little-endian {SIGNATURE:#010X})",
                    self.signature
                )
            } else {
                let b = self.signature.to_le_bytes();
                format!(
                    "signature bytes {:02X} {:02X} {:02X} {:02X} are not 3A 54 50 53 (\"SPT:\", {SIGNATURE:#010X}): not an SPT file",
                    b[0], b[1], b[2], b[3]
                )
            };
            return Some(Diagnostic::new(Code::BadSignature, 0, message));
        }
        if self.version != VERSION {
            return Some(Diagnostic::new(
                Code::UnsupportedVersion,
                4,
                format!(
                    "version {} is not supported (this decoder knows version {VERSION})",
                    self.version
                ),
            ));
        }
        None
    }

    /// Warnings about the reserved fields.
    pub fn check_reserved(&self, mut report: impl FnMut(Diagnostic)) {
        for (offset, name, value) in [
            (8, "RawDataId", self.raw_data_id),
            (12, "TargetArch", self.target_arch),
        ] {
            if value != 0 {
                report(Diagnostic::new(
                    Code::ReservedNonzero,
                    offset,
                    format!("reserved field {name} is {value} ({value:#X}), expected 0"),
                ));
            }
        }
    }
}

/// The signature's four characters in the order a multi-character constant spells them,
/// each shown as itself when printable ASCII and as `.` otherwise: `SPT:` for a good one.
pub fn fourcc(value: u32) -> String {
    value
        .to_be_bytes()
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A typical header, field by field.
    const TYPICAL: [u8; 32] = [
        0x3A, 0x54, 0x50, 0x53, // Signature "SPT:" = 0x5350543A
        0x01, 0x00, 0x00, 0x00, // Version 1
        0x00, 0x00, 0x00, 0x00, // RawDataId
        0x00, 0x00, 0x00, 0x00, // TargetArch
        0x20, 0x00, 0x00, 0x00, // StringTableOffset 0x20
        0x20, 0x40, 0x00, 0x00, // ProgramIdTableOffset 0x4020
        0x08, 0x00, // StringTableUsed 8
        0x00, 0x40, // StringTableCapacity 0x4000
        0x01, 0x00, // ProgramIdsUsed 1
        0x00, 0x01, // ProgramIdCapacity 0x100
    ];

    #[test]
    fn parses_every_field() {
        let h = Header::parse(&TYPICAL);
        assert_eq!(
            h,
            Header {
                signature: SIGNATURE,
                version: 1,
                raw_data_id: 0,
                target_arch: 0,
                string_table_offset: 0x20,
                program_id_table_offset: 0x4020,
                string_table_used: 8,
                string_table_capacity: 0x4000,
                program_ids_used: 1,
                program_id_capacity: 0x100,
            }
        );
        assert_eq!(h.stream_offset(), 0x4020 + 0x100 * 24);
        assert_eq!(h.check_fatal(), None);
        let mut warnings = vec![];
        h.check_reserved(|d| warnings.push(d));
        assert!(warnings.is_empty());
        assert_eq!(fourcc(h.signature), "SPT:");
    }

    #[test]
    fn stream_offset_does_not_wrap() {
        let mut bytes = TYPICAL;
        bytes[0x14..0x18].copy_from_slice(&[0xFF; 4]);
        bytes[0x1E..0x20].copy_from_slice(&[0xFF; 2]);
        let h = Header::parse(&bytes);
        assert_eq!(h.stream_offset(), 0xFFFF_FFFF + 0xFFFF * 24);
    }

    #[test]
    fn bad_signature() {
        let mut bytes = TYPICAL;
        bytes[0..4].copy_from_slice(b"MZ\x90\x00");
        let d = Header::parse(&bytes).check_fatal().unwrap();
        assert_eq!((d.code, d.offset), (Code::BadSignature, 0));
        assert!(d.message.contains("not an SPT file"), "{}", d.message);
    }

    #[test]
    fn signature_in_wrong_byte_order_is_named() {
        let mut bytes = TYPICAL;
        bytes[0..4].copy_from_slice(&[0x53, 0x50, 0x54, 0x3A]);
        let d = Header::parse(&bytes).check_fatal().unwrap();
        assert_eq!((d.code, d.offset), (Code::BadSignature, 0));
        assert!(d.message.contains("wrong byte order"), "{}", d.message);
    }

    #[test]
    fn unsupported_version() {
        let mut bytes = TYPICAL;
        bytes[4] = 2;
        let d = Header::parse(&bytes).check_fatal().unwrap();
        assert_eq!((d.code, d.offset), (Code::UnsupportedVersion, 4));
    }

    #[test]
    fn reserved_fields_warn_at_their_offsets() {
        let mut bytes = TYPICAL;
        bytes[8] = 5; // RawDataId
        bytes[12] = 9; // TargetArch
        let mut found = vec![];
        Header::parse(&bytes).check_reserved(|d| found.push((d.code, d.offset)));
        assert_eq!(
            found,
            [(Code::ReservedNonzero, 8), (Code::ReservedNonzero, 12)]
        );
    }
}
