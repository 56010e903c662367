//! Writing an SPT v1 file: binaries, then each binary's records in one segment, in the layout
//! SPTAggregate's files have (a string table of 0x4000 bytes and room for 256 program IDs,
//! the stream at 0x5820), larger only when the names or binaries need it.
//!
//! A record's hits above 1 are written as a REPEAT before it; a record holds at most 255
//! values, so longer ones are split: IP samples and LBR pairs into records of 255, a call
//! stack into stacks that share their last and first frame, so that every arc is kept once.

use std::io::{self, Write};

use uuid::Uuid;

use crate::format::header::{HEADER_SIZE, SIGNATURE, VERSION};
use crate::format::opcode::Opcode;
use crate::format::progid::ENTRY_SIZE;

/// The string table's usual capacity.
pub const STRINGS: usize = 0x4000;
/// The program-ID table's usual capacity, in entries.
pub const PROGRAM_IDS: usize = 0x100;

/// Why a file cannot be written: the format has no room for it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NoRoom {
    /// The names need more than the 65,535 bytes a string table can hold.
    #[error("the binaries' names need {0} bytes; an SPT's string table holds 65,535")]
    Strings(usize),
    /// More binaries than a program-ID table can hold.
    #[error("{0} binaries; an SPT's program-ID table holds 65,535")]
    Binaries(usize),
    /// A segment longer than its 32-bit length can say.
    #[error("a binary's records take {0} bytes; a segment holds 4 GiB")]
    Segment(usize),
}

/// An SPT file being built in memory.
#[derive(Clone, Debug, Default)]
pub struct SptWriter {
    strings: Vec<u8>,
    ids: Vec<(Uuid, u32, u32)>,
    segments: Vec<Vec<u8>>,
}

impl SptWriter {
    /// An empty file.
    pub fn new() -> SptWriter {
        SptWriter::default()
    }

    /// Adds a binary and returns its program ID. A name holds no NUL: one is cut there.
    pub fn binary(&mut self, name: &str, guid: Uuid, age: u32) -> Result<u16, NoRoom> {
        let index = self.ids.len();
        let progid = u16::try_from(index).map_err(|_| NoRoom::Binaries(index + 1))?;
        let name = name.split('\0').next().unwrap_or_default();
        let offset = self.strings.len();
        let needed = offset + name.len() + 1;
        if needed > usize::from(u16::MAX) {
            return Err(NoRoom::Strings(needed));
        }
        self.strings.extend_from_slice(name.as_bytes());
        self.strings.push(0);
        self.ids.push((guid, age, offset as u32));
        self.segments.push(Vec::new());
        Ok(progid)
    }

    fn repeat(segment: &mut Vec<u8>, hits: u64) {
        if hits > 1 {
            segment.extend([Opcode::REPEAT.0, 0]);
            segment.extend((hits - 1).to_le_bytes());
        }
    }

    /// IP samples of `opcode` at `rvas`, each `hits` times (at least 1).
    pub fn ip(&mut self, progid: u16, opcode: Opcode, hits: u64, rvas: &[u32]) {
        let segment = &mut self.segments[usize::from(progid)];
        for chunk in rvas.chunks(255) {
            Self::repeat(segment, hits);
            segment.extend([opcode.0, chunk.len() as u8]);
            for rva in chunk {
                segment.extend(rva.to_le_bytes());
            }
        }
    }

    /// An LBR record of `(from, to)` pairs in the order given, taken `hits` times; on disk
    /// each pair is written to first.
    pub fn lbr(&mut self, progid: u16, hits: u64, pairs: &[(u32, u32)]) {
        let segment = &mut self.segments[usize::from(progid)];
        for chunk in pairs.chunks(255) {
            Self::repeat(segment, hits);
            segment.extend([Opcode::LBR.0, chunk.len() as u8]);
            for &(from, to) in chunk {
                segment.extend(to.to_le_bytes());
                segment.extend(from.to_le_bytes());
            }
        }
    }

    /// A call stack of `frames` (leaf first), taken `hits` times. A stack of fewer than two
    /// frames has no arc and is not written.
    pub fn callstack(&mut self, progid: u16, hits: u64, frames: &[u32]) {
        let segment = &mut self.segments[usize::from(progid)];
        let mut start = 0;
        while start + 1 < frames.len() {
            let end = (start + 255).min(frames.len());
            Self::repeat(segment, hits);
            segment.extend([Opcode::ETW_CALLSTACK.0, (end - start) as u8]);
            for f in &frames[start..end] {
                segment.extend(f.to_le_bytes());
            }
            start = end - 1;
        }
    }

    /// Writes the file.
    pub fn write_to(&self, mut out: impl Write) -> io::Result<()> {
        let no_room = |e: NoRoom| io::Error::new(io::ErrorKind::InvalidInput, e);
        let strings_capacity = self.strings.len().max(STRINGS).min(usize::from(u16::MAX));
        let ids_capacity = self.ids.len().max(PROGRAM_IDS);
        if self.ids.len() > usize::from(u16::MAX) {
            return Err(no_room(NoRoom::Binaries(self.ids.len())));
        }
        let progid_offset = HEADER_SIZE + strings_capacity;
        let mut header = Vec::with_capacity(HEADER_SIZE);
        for v in [
            SIGNATURE,
            VERSION,
            0,
            0,
            HEADER_SIZE as u32,
            progid_offset as u32,
        ] {
            header.extend(v.to_le_bytes());
        }
        for v in [
            self.strings.len(),
            strings_capacity,
            self.ids.len(),
            ids_capacity,
        ] {
            header.extend((v as u16).to_le_bytes());
        }
        out.write_all(&header)?;
        out.write_all(&self.strings)?;
        out.write_all(&vec![0; strings_capacity - self.strings.len()])?;
        for &(guid, age, offset) in &self.ids {
            out.write_all(&guid.to_bytes_le())?;
            out.write_all(&age.to_le_bytes())?;
            out.write_all(&offset.to_le_bytes())?;
        }
        out.write_all(&vec![0; (ids_capacity - self.ids.len()) * ENTRY_SIZE])?;
        for (progid, segment) in self.segments.iter().enumerate() {
            if segment.is_empty() {
                continue;
            }
            let length = u32::try_from(segment.len() + 4)
                .map_err(|_| no_room(NoRoom::Segment(segment.len())))?;
            out.write_all(&[Opcode::BINARY_ID.0, 0])?;
            out.write_all(&(progid as u16).to_le_bytes())?;
            out.write_all(&length.to_le_bytes())?;
            out.write_all(segment)?;
        }
        Ok(())
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_to(&mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::format::decode::{Decoder, Sink};
    use crate::format::diag::Diagnostic;
    use crate::format::header::Header;
    use crate::format::record::Record;

    /// A record as written and as read back: progid, opcode, hits, values.
    type Plain = (u16, u8, u128, Vec<u32>);

    #[derive(Default)]
    struct Collect {
        records: Vec<Plain>,
        diagnostics: Vec<Diagnostic>,
    }

    impl Sink for Collect {
        fn record(&mut self, record: &Record<'_>) -> io::Result<()> {
            if let Record::Samples(s) = record {
                let values = if s.opcode == Opcode::LBR {
                    s.branches().iter().flat_map(|b| [b.from, b.to]).collect()
                } else {
                    s.rvas().iter().collect()
                };
                self.records
                    .push((s.progid.unwrap(), s.opcode.0, s.hits, values));
            }
            Ok(())
        }
        fn diagnostic(&mut self, d: Diagnostic) -> io::Result<()> {
            self.diagnostics.push(d);
            Ok(())
        }
    }

    fn read_back(bytes: &[u8]) -> (Header, Collect) {
        let header = Header::parse(bytes[..HEADER_SIZE].try_into().unwrap());
        let start = header.program_id_table_offset as usize
            + usize::from(header.program_id_capacity) * ENTRY_SIZE;
        let mut sink = Collect::default();
        Decoder::new(
            &bytes[start..],
            start as u64,
            Some(bytes.len() as u64),
            header.program_ids_used,
        )
        .run(&mut sink)
        .unwrap();
        (header, sink)
    }

    #[test]
    fn a_file_has_sptaggregates_layout_and_reads_back() {
        let mut w = SptWriter::new();
        let app = w.binary("app.exe", Uuid::from_u128(1), 2).unwrap();
        let dll = w.binary("x.dll\0junk", Uuid::from_u128(3), 4).unwrap();
        w.ip(app, Opcode::ETW_INSTR, 1, &[0x10, 0x20]);
        w.lbr(dll, 3, &[(0x100, 0x200)]);
        w.callstack(app, 1, &[7]);
        w.callstack(app, 2, &[7, 8, 9]);
        let bytes = w.to_bytes().unwrap();
        let (header, read) = read_back(&bytes);
        assert_eq!(header.string_table_offset, 0x20);
        assert_eq!(header.program_id_table_offset, 0x4020);
        assert_eq!((header.string_table_used, header.program_ids_used), (14, 2));
        assert_eq!(&bytes[0x20..0x2E], b"app.exe\0x.dll\0");
        assert_eq!(bytes[0x5820], Opcode::BINARY_ID.0);
        // The LBR pair is stored to first.
        let lbr = bytes.windows(10).position(|w| w[..2] == [0x10, 1]).unwrap();
        assert_eq!(bytes[lbr + 2..lbr + 10], [0, 2, 0, 0, 0, 1, 0, 0]);
        assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
        assert_eq!(
            read.records,
            [
                (app, 0x41, 1, vec![0x10, 0x20]),
                (app, 0x42, 2, vec![7, 8, 9]),
                (dll, 0x10, 3, vec![0x100, 0x200]),
            ]
        );
    }

    #[test]
    fn names_and_binaries_past_the_tables_room_are_refused() {
        let mut w = SptWriter::new();
        let long = "n".repeat(40_000);
        w.binary(&long, Uuid::nil(), 1).unwrap();
        assert_eq!(
            w.binary(&long, Uuid::nil(), 1),
            Err(NoRoom::Strings(80_002))
        );
        assert_eq!(w.ids.len(), 1, "a refused binary is not added");
        let bytes = w.to_bytes().unwrap();
        let (header, _) = read_back(&bytes);
        assert_eq!(header.string_table_capacity, 40_001);
        let mut w = SptWriter::new();
        for i in 0..300u32 {
            assert_eq!(w.binary("b", Uuid::nil(), i), Ok(i as u16));
        }
        let (header, _) = read_back(&w.to_bytes().unwrap());
        assert_eq!(header.program_id_capacity, 300);
    }

    proptest! {
        /// What is written reads back as written: long records split at 255 values, a call
        /// stack's pieces sharing a frame, hits through REPEAT.
        #[test]
        fn records_read_back_as_written(
            records in prop::collection::vec(
                (0u16..3, 0usize..4, 1u64..5, prop::collection::vec(any::<u32>(), 0..600)),
                0..12,
            )
        ) {
            let mut w = SptWriter::new();
            for i in 0..3 {
                w.binary(&format!("b{i}"), Uuid::from_u128(i), 1).unwrap();
            }
            let mut want: Vec<Plain> = Vec::new();
            for (progid, kind, hits, values) in &records {
                match kind {
                    0 | 1 => {
                        let op = [Opcode::ETW_INSTR, Opcode::RETIRE_INSTR][*kind];
                        w.ip(*progid, op, *hits, values);
                        for c in values.chunks(255) {
                            want.push((*progid, op.0, u128::from(*hits), c.to_vec()));
                        }
                    }
                    2 => {
                        let pairs: Vec<(u32, u32)> =
                            values.chunks_exact(2).map(|p| (p[0], p[1])).collect();
                        w.lbr(*progid, *hits, &pairs);
                        for c in pairs.chunks(255) {
                            let flat = c.iter().flat_map(|&(f, t)| [f, t]).collect();
                            want.push((*progid, 0x10, u128::from(*hits), flat));
                        }
                    }
                    _ => {
                        w.callstack(*progid, *hits, values);
                        let mut start = 0;
                        while start + 1 < values.len() {
                            let end = (start + 255).min(values.len());
                            want.push((*progid, 0x42, u128::from(*hits), values[start..end].to_vec()));
                            start = end - 1;
                        }
                    }
                }
            }
            // One segment per binary: the records by binary, in the order written.
            want.sort_by_key(|r| r.0);
            let (_, read) = read_back(&w.to_bytes().unwrap());
            prop_assert!(read.diagnostics.is_empty(), "{:?}", read.diagnostics);
            prop_assert_eq!(read.records, want);
        }
    }
}
