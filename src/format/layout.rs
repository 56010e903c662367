//! Where the parts of an SPT file lie, and whether they fit in it.
//!
//! ```text
//! 0        32                 StringTableOffset      ProgramIdTableOffset        stream start
//! |header  | ...              |strings (capacity)    |program IDs (capacity x 24) |records ... EOF
//! ```
//!
//! Nothing here reads the file: these checks work from the header and the file size, so they
//! can be made before a byte of the tables is read, and on a pipe once its end is known.

use std::ops::Range;

use crate::format::diag::{Code, Diagnostic};
use crate::format::header::{HEADER_SIZE, Header};
use crate::format::progid::ENTRY_SIZE;

/// The byte ranges of a file's parts, computed in 64 bits so that nothing wraps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The used bytes of the string table.
    pub strings_used: Range<u64>,
    /// The whole capacity of the string table.
    pub strings_reserved: Range<u64>,
    /// The used entries of the program-ID table.
    pub progids_used: Range<u64>,
    /// The whole capacity of the program-ID table.
    pub progids_reserved: Range<u64>,
    /// The first byte of the event stream.
    pub stream_start: u64,
}

impl Layout {
    /// The layout the header describes.
    pub fn new(h: &Header) -> Self {
        let so = u64::from(h.string_table_offset);
        let po = u64::from(h.program_id_table_offset);
        let entry = ENTRY_SIZE as u64;
        Layout {
            strings_used: so..so + u64::from(h.string_table_used),
            strings_reserved: so..so + u64::from(h.string_table_capacity),
            progids_used: po..po + u64::from(h.program_ids_used) * entry,
            progids_reserved: po..po + u64::from(h.program_id_capacity) * entry,
            stream_start: h.stream_offset(),
        }
    }

    /// Reports the first two parts that overlap, once. Empty parts never overlap. The
    /// stream runs to `stream_end`, the end of the file.
    pub fn check_overlap(&self, stream_end: u64) -> Option<Diagnostic> {
        let parts = [
            ("the header", 0..HEADER_SIZE as u64),
            ("the string table", self.strings_reserved.clone()),
            ("the program-ID table", self.progids_reserved.clone()),
            (
                "the event stream",
                self.stream_start..stream_end.max(self.stream_start),
            ),
        ];
        for (i, (a_name, a)) in parts.iter().enumerate() {
            for (b_name, b) in &parts[i + 1..] {
                if !a.is_empty() && !b.is_empty() && a.start < b.end && b.start < a.end {
                    return Some(Diagnostic::new(
                        Code::TablesOverlap,
                        0x10,
                        format!("{a_name} {} overlaps {b_name} {}", span(a), span(b)),
                    ));
                }
            }
        }
        None
    }
}

/// `[0x00000020, 0x00004020)`, or `[0x00005820, end of file)` for an open end.
fn span(r: &Range<u64>) -> String {
    if r.end == u64::MAX {
        format!("[{:#010X}, end of input)", r.start)
    } else {
        format!("[{:#010X}, {:#010X})", r.start, r.end)
    }
}

/// Checks the header's counts against the capacities.
pub fn check_counts(h: &Header, mut report: impl FnMut(Diagnostic)) {
    if h.string_table_used > h.string_table_capacity {
        report(Diagnostic::new(
            Code::StringTableOverflow,
            0x18,
            format!(
                "StringTableUsed {} exceeds StringTableCapacity {}; the used bytes are read anyway",
                h.string_table_used, h.string_table_capacity
            ),
        ));
    }
    if h.program_ids_used > h.program_id_capacity {
        report(Diagnostic::new(
            Code::ProgidTableOverflow,
            0x1C,
            format!(
                "ProgramIdsUsed {} exceeds ProgramIdCapacity {}; the used entries are read anyway",
                h.program_ids_used, h.program_id_capacity
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(so: u32, scap: u16, po: u32, pcap: u16) -> Header {
        Header {
            signature: crate::format::header::SIGNATURE,
            version: 1,
            raw_data_id: 0,
            target_arch: 0,
            string_table_offset: so,
            program_id_table_offset: po,
            string_table_used: 8,
            string_table_capacity: scap,
            program_ids_used: 1,
            program_id_capacity: pcap,
        }
    }

    #[test]
    fn usual_layout_does_not_overlap() {
        let l = Layout::new(&header(0x20, 0x4000, 0x4020, 0x100));
        assert_eq!(l.stream_start, 0x5820);
        assert_eq!(l.check_overlap(0x6000), None);
        assert_eq!(l.progids_used, 0x4020..0x4038);
    }

    #[test]
    fn program_ids_inside_string_table() {
        let l = Layout::new(&header(0x20, 0x4000, 0x30, 0x100));
        let d = l.check_overlap(0x5000).unwrap();
        assert_eq!((d.code, d.offset), (Code::TablesOverlap, 0x10));
        assert!(d.message.contains("the string table"), "{}", d.message);
    }

    #[test]
    fn empty_parts_never_overlap() {
        // A string table of capacity 0 at offset 0, and an empty stream.
        let l = Layout::new(&header(0, 0, 0x20, 1));
        assert_eq!(l.check_overlap(l.stream_start), None);
        // The same with stream bytes present overlaps nothing either.
        assert_eq!(l.check_overlap(l.stream_start + 10), None);
    }

    #[test]
    fn table_over_header() {
        let l = Layout::new(&header(0x10, 0x20, 0x100, 1));
        assert!(l.check_overlap(0x200).is_some());
    }

    #[test]
    fn stream_running_into_a_later_table() {
        // The string table is placed after the stream start.
        let l = Layout::new(&header(0x1000, 0x10, 0x20, 1));
        assert_eq!(l.stream_start, 0x38);
        assert!(l.check_overlap(0x2000).is_some());
        assert_eq!(l.check_overlap(0x1000), None);
    }

    #[test]
    fn counts_over_capacity() {
        let mut h = header(0x20, 4, 0x40, 2);
        h.program_ids_used = 3;
        let mut found = vec![];
        check_counts(&h, |d| found.push((d.code, d.offset)));
        assert_eq!(
            found,
            [
                (Code::StringTableOverflow, 0x18),
                (Code::ProgidTableOverflow, 0x1C)
            ]
        );
    }
}
