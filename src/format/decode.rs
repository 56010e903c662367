//! The event-stream decoder: one pass over the records, through a bounded buffer.
//!
//! ```text
//! stream start = ProgramIdTableOffset + ProgramIdCapacity * 24
//! |
//! v
//! [81 BINARY_ID p=0 len] [82 REPEAT] [02 n rva..] [10 n (to,from)..] ... [81 BINARY_ID p=1 len] ...
//! |<------------------ segment of progid 0 ------------------>|
//!                     offset + 4 + len = segment end ---------^
//! ```
//!
//! Records are decoded one after another by their opcodes. A segment's length is checked when
//! the next BINARY_ID (or the end of the stream) arrives, and it is what decoding
//! resynchronises on after an unknown opcode. A REPEAT applies to the next sample record and
//! then resets.
//!
//! The decoder reads from any [`Read`] through one fixed buffer, so memory does not grow with
//! the file, and it never allocates from a count in the file: the largest record is
//! `2 + 255 * 8` bytes. It pushes each record and each [`Diagnostic`] into a [`Sink`].

use std::io::{self, Read};

use byteorder::{ByteOrder, LittleEndian as LE};

use crate::format::diag::{Code, Diagnostic};
use crate::format::error::{Error, Result, read_full, shrunk};
use crate::format::opcode::Opcode;
use crate::format::record::{BinaryId, Record, Repeat, Samples, Unknown};

/// The size of the read buffer. Any size above the largest record works; this one keeps
/// system calls rare and fits in the L2 cache.
pub const BUFFER_SIZE: usize = 256 * 1024;

/// The largest record: opcode, n = 255, 255 LBR pairs of 8 bytes.
pub const MAX_RECORD: usize = 2 + 255 * 8;

/// Receives what the decoder finds, in file order.
pub trait Sink {
    /// A decoded record.
    fn record(&mut self, record: &Record<'_>) -> io::Result<()>;
    /// A problem.
    fn diagnostic(&mut self, diagnostic: Diagnostic) -> io::Result<()>;
}

/// Which program IDs' segments to decode; the others are skipped by their length.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection(Vec<bool>);

impl Selection {
    /// Selects exactly the given program IDs.
    pub fn new(progids: impl IntoIterator<Item = u16>) -> Self {
        let mut set = vec![false; usize::from(u16::MAX) + 1];
        for p in progids {
            set[usize::from(p)] = true;
        }
        Selection(set)
    }

    /// Whether segments of `progid` are decoded.
    pub fn contains(&self, progid: u16) -> bool {
        self.0[usize::from(progid)]
    }
}

/// Where the stream is and what it knows about the file.
pub struct Decoder<R> {
    input: R,
    buf: Box<[u8]>,
    /// Next unread byte in `buf`.
    pos: usize,
    /// End of the valid bytes in `buf`.
    end: usize,
    /// File offset of `buf[0]`.
    base: u64,
    /// Whether the input has no byte beyond `buf[end]`: a read came back short.
    input_done: bool,
    /// Whether decoding has reached the end of the input, and [`Decoder::ended`] judged it.
    eof: bool,
    /// The file size, when known up front (not on a pipe).
    size: Option<u64>,
    /// ProgramIdsUsed from the header.
    progids_used: u16,
    selection: Option<Selection>,
}

/// The decoding state that spans records.
#[derive(Default)]
struct State {
    /// The current segment's BINARY_ID and its declared end, when that is valid.
    segment: Option<(BinaryId, Option<u64>)>,
    /// The pending REPEAT.
    repeat: Option<Repeat>,
    /// Whether a record before any BINARY_ID was reported already.
    reported_orphan: bool,
    /// Whether the current segment is left out by the selection.
    hidden: bool,
}

impl<R: Read> Decoder<R> {
    /// A decoder for a stream that starts at file offset `start`, read from `input`, which
    /// is positioned there. `size` is the file size when known; `progids_used` is the
    /// header's ProgramIdsUsed.
    pub fn new(input: R, start: u64, size: Option<u64>, progids_used: u16) -> Self {
        Decoder {
            input,
            buf: vec![0u8; BUFFER_SIZE].into_boxed_slice(),
            pos: 0,
            end: 0,
            base: start,
            input_done: false,
            eof: false,
            size,
            progids_used,
            selection: None,
        }
    }

    /// Decodes only the segments of the selected program IDs; the others are skipped by
    /// their declared length when it is valid, and decoded without output when it is not.
    /// Records before any BINARY_ID are not output either.
    pub fn select(&mut self, selection: Option<Selection>) {
        self.selection = selection;
    }

    /// The file offset of the next unread byte.
    pub fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Makes at least `n` bytes available at `pos`, unless the input ends first.
    #[inline]
    fn fill(&mut self, n: usize) -> Result<bool> {
        if self.end - self.pos >= n {
            return Ok(true);
        }
        self.refill(n)
    }

    #[cold]
    fn refill(&mut self, n: usize) -> Result<bool> {
        debug_assert!(n <= MAX_RECORD);
        if self.eof {
            return Ok(false);
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.base += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        if !self.input_done {
            let space = self.buf.len() - self.end;
            let at = self.base + self.end as u64;
            let got = read_full(&mut self.input, &mut self.buf[self.end..], at)?;
            self.end += got;
            self.input_done = got < space;
        }
        // The buffer holds far more than a record, so fewer than `n` bytes means the input
        // has ended.
        if self.end < n {
            self.ended(self.base + self.end as u64)?;
            return Ok(false);
        }
        Ok(true)
    }

    /// Notes that the input ended at `at`. A file that ends before the size it had when it
    /// was opened was changed while being read: what it holds now is not what its header
    /// described, so this is a read error rather than a truncated trace.
    #[cold]
    fn ended(&mut self, at: u64) -> Result<()> {
        self.eof = true;
        match self.size {
            Some(size) if at < size => Err(shrunk(at, size)),
            _ => Ok(()),
        }
    }

    /// Moves to file offset `target`, which lies at or after the current offset, reading and
    /// discarding what lies between. Stops early at the end of the input.
    fn skip_to(&mut self, target: u64) -> Result<()> {
        let buffered_end = self.base + self.end as u64;
        if target <= buffered_end {
            self.pos = (target - self.base) as usize;
            return Ok(());
        }
        self.base = buffered_end;
        self.pos = 0;
        self.end = 0;
        while !self.eof {
            if self.input_done {
                self.ended(self.base)?;
                break;
            }
            let got = read_full(&mut self.input, &mut self.buf, self.base)?;
            self.input_done = got < self.buf.len();
            if self.base + got as u64 > target {
                self.pos = (target - self.base) as usize;
                self.end = got;
                return Ok(());
            }
            self.base += got as u64;
        }
        Ok(())
    }

    /// Reads to the end of the input (after decoding stopped early) and returns its
    /// offset, the size of the file.
    pub fn end_of_input(&mut self) -> Result<u64> {
        self.skip_to(u64::MAX)?;
        Ok(self.offset())
    }

    /// Decodes the whole stream into `sink`.
    pub fn run<S: Sink + ?Sized>(&mut self, sink: &mut S) -> Result<()> {
        let mut st = State::default();
        loop {
            let offset = self.offset();
            if !self.fill(1)? {
                break;
            }
            let opcode = Opcode(self.buf[self.pos]);
            match opcode {
                Opcode::BINARY_ID => {
                    if !self.fill(8)? {
                        return truncated(sink, offset, opcode, 8, self.offset_end());
                    }
                    let b = &self.buf[self.pos..self.pos + 8];
                    let binary = BinaryId {
                        offset,
                        progid: LE::read_u16(&b[2..4]),
                        length: LE::read_u32(&b[4..8]),
                    };
                    self.pos += 8;
                    self.end_segment(&mut st, offset, sink)?;
                    self.begin_segment(&mut st, binary, sink)?;
                }
                Opcode::REPEAT => {
                    if !self.fill(10)? {
                        return truncated(sink, offset, opcode, 10, self.offset_end());
                    }
                    let count = LE::read_u64(&self.buf[self.pos + 2..self.pos + 10]);
                    self.pos += 10;
                    self.orphan_check(&mut st, offset, opcode, sink)?;
                    if let Some(previous) = st.repeat {
                        emit(
                            sink,
                            Diagnostic::new(
                                Code::RepeatOverridden,
                                previous.offset,
                                format!(
                                    "REPEAT count {} is overridden by the REPEAT at {offset:#010X} before any sample record uses it",
                                    previous.count
                                ),
                            ),
                        )?;
                    }
                    let repeat = Repeat { offset, count };
                    st.repeat = Some(repeat);
                    if !st.hidden {
                        sink.record(&Record::Repeat(repeat)).map_err(Error::Write)?;
                    }
                }
                op if op.is_ip() || op == Opcode::LBR || op == Opcode::ETW_CALLSTACK => {
                    if !self.fill(2)? {
                        return truncated(sink, offset, opcode, 2, self.offset_end());
                    }
                    let n = self.buf[self.pos + 1];
                    let width = if op == Opcode::LBR { 8 } else { 4 };
                    let len = 2 + usize::from(n) * width;
                    if !self.fill(len)? {
                        return truncated(sink, offset, opcode, len, self.offset_end());
                    }
                    self.orphan_check(&mut st, offset, opcode, sink)?;
                    let hits = 1 + st.repeat.take().map_or(0, |r| u128::from(r.count));
                    let start = self.pos;
                    self.pos += len;
                    if !st.hidden {
                        let samples = Samples {
                            offset,
                            opcode,
                            progid: st.segment.map(|(b, _)| b.progid),
                            hits,
                            count: n,
                            payload: &self.buf[start + 2..start + len],
                        };
                        sink.record(&Record::Samples(samples))
                            .map_err(Error::Write)?;
                    }
                    if op == Opcode::ETW_CALLSTACK && n < 2 {
                        emit(
                            sink,
                            Diagnostic::new(
                                Code::ShortCallstack,
                                offset,
                                format!(
                                    "ETW_CALLSTACK has {n} frame(s): a call stack needs 2 to form an arc"
                                ),
                            ),
                        )?;
                    }
                }
                _ => {
                    // A pending REPEAT cannot be known to apply to anything past here.
                    st.repeat = None;
                    let resume = match st.segment {
                        Some((_, Some(end))) if end > offset => Some(end),
                        _ => None,
                    };
                    if !st.hidden {
                        let unknown = Unknown {
                            offset,
                            opcode,
                            resumed_at: resume,
                        };
                        sink.record(&Record::Unknown(unknown))
                            .map_err(Error::Write)?;
                    }
                    let message = match resume {
                        Some(end) => format!(
                            "unknown opcode {:#04X}; skipped {} bytes to the end of the segment at {end:#010X}",
                            opcode.0,
                            end - offset
                        ),
                        None => format!(
                            "unknown opcode {:#04X} outside any segment with a valid length; decoding stopped",
                            opcode.0
                        ),
                    };
                    emit(sink, Diagnostic::new(Code::UnknownOpcode, offset, message))?;
                    match resume {
                        Some(end) => self.skip_to(end)?,
                        None => return Ok(()),
                    }
                }
            }
        }
        let end = self.offset();
        self.end_segment(&mut st, end, sink)
    }

    /// The file offset just past the buffered bytes: the end of the input once it has ended.
    fn offset_end(&self) -> u64 {
        self.base + self.end as u64
    }

    /// Checks the segment that ends at `at` (the next BINARY_ID or the end of the stream),
    /// and the REPEAT left pending before it.
    fn end_segment<S: Sink + ?Sized>(&self, st: &mut State, at: u64, sink: &mut S) -> Result<()> {
        if let Some(repeat) = st.repeat.take() {
            let what = if self.eof && at == self.offset() {
                "the end of the stream".to_owned()
            } else {
                format!("the BINARY_ID at {at:#010X}")
            };
            emit(
                sink,
                Diagnostic::new(
                    Code::DanglingRepeat,
                    repeat.offset,
                    format!(
                        "REPEAT count {} is followed by {what}, not by a sample record",
                        repeat.count
                    ),
                ),
            )?;
        }
        if let Some((binary, Some(end))) = st.segment
            && end != at
        {
            let relation = if end > at { "short of" } else { "past" };
            emit(
                sink,
                Diagnostic::new(
                    Code::SegmentLengthMismatch,
                    binary.offset,
                    format!(
                        "segment length {} says the records end at {end:#010X}, but they end at {at:#010X}, {} bytes {relation} it",
                        binary.length,
                        end.abs_diff(at)
                    ),
                ),
            )?;
        }
        Ok(())
    }

    /// Starts the segment of `binary`: checks its progid and length, and skips it when the
    /// selection leaves it out.
    fn begin_segment<S: Sink + ?Sized>(
        &mut self,
        st: &mut State,
        binary: BinaryId,
        sink: &mut S,
    ) -> Result<()> {
        let end = binary.declared_end();
        let valid_end = if binary.length < 4 {
            emit(
                sink,
                Diagnostic::new(
                    Code::BadSegmentLength,
                    binary.offset,
                    format!(
                        "segment length {} is less than 4, the size of the length field it counts",
                        binary.length
                    ),
                ),
            )?;
            None
        } else if let Some(size) = self.size.filter(|&size| end > size) {
            emit(
                sink,
                Diagnostic::new(
                    Code::BadSegmentLength,
                    binary.offset,
                    format!(
                        "segment length {} runs to {end:#010X}, past the end of the file at {size:#010X}",
                        binary.length
                    ),
                ),
            )?;
            None
        } else {
            Some(end)
        };
        st.segment = Some((binary, valid_end));
        st.hidden = self
            .selection
            .as_ref()
            .is_some_and(|s| !s.contains(binary.progid));
        if !st.hidden {
            sink.record(&Record::BinaryId(binary))
                .map_err(Error::Write)?;
        }
        if binary.progid >= self.progids_used {
            emit(
                sink,
                Diagnostic::new(
                    Code::ProgidOutOfRange,
                    binary.offset,
                    format!(
                        "BINARY_ID names program ID {}, but the table has {} entr{}",
                        binary.progid,
                        self.progids_used,
                        if self.progids_used == 1 { "y" } else { "ies" }
                    ),
                ),
            )?;
        }
        if st.hidden
            && let Some(end) = valid_end
        {
            self.skip_to(end)?;
        }
        Ok(())
    }

    /// Reports the first sample or REPEAT record that comes before any BINARY_ID.
    fn orphan_check<S: Sink + ?Sized>(
        &self,
        st: &mut State,
        offset: u64,
        opcode: Opcode,
        sink: &mut S,
    ) -> Result<()> {
        if st.segment.is_none() {
            // Without a selection such records are shown; with one they belong to no
            // selected binary.
            st.hidden = self.selection.is_some();
            if !st.reported_orphan {
                st.reported_orphan = true;
                emit(
                    sink,
                    Diagnostic::new(
                        Code::EventBeforeBinaryId,
                        offset,
                        format!("{opcode} record before any BINARY_ID: it belongs to no binary"),
                    ),
                )?;
            }
        }
        Ok(())
    }
}

fn emit<S: Sink + ?Sized>(sink: &mut S, d: Diagnostic) -> Result<()> {
    sink.diagnostic(d).map_err(Error::Write)
}

#[cold]
fn truncated<S: Sink + ?Sized>(
    sink: &mut S,
    offset: u64,
    opcode: Opcode,
    needed: usize,
    input_end: u64,
) -> Result<()> {
    emit(
        sink,
        Diagnostic::new(
            Code::TruncatedRecord,
            offset,
            format!(
                "{opcode} record needs {needed} bytes but the file ends after {} at {input_end:#010X}; decoding stopped",
                input_end - offset
            ),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::record::Branch;

    /// Everything a decode produced, owned.
    #[derive(Debug, Default)]
    struct Collect {
        records: Vec<String>,
        diags: Vec<(Code, u64)>,
    }

    impl Sink for Collect {
        fn record(&mut self, r: &Record<'_>) -> io::Result<()> {
            let line = match r {
                Record::BinaryId(b) => {
                    format!("{:#X} binary {} len {}", b.offset, b.progid, b.length)
                }
                Record::Repeat(r) => format!("{:#X} repeat {}", r.offset, r.count),
                Record::Samples(s) => {
                    let progid = s.progid.map_or("-".into(), |p| p.to_string());
                    let values: Vec<String> = match s.kind() {
                        crate::format::record::SampleKind::Lbr => s
                            .branches()
                            .iter()
                            .map(|Branch { from, to }| format!("{from:#X}->{to:#X}"))
                            .collect(),
                        _ => s.rvas().iter().map(|v| format!("{v:#X}")).collect(),
                    };
                    format!(
                        "{:#X} {} p{progid} x{} [{}]",
                        s.offset,
                        s.opcode,
                        s.hits,
                        values.join(" ")
                    )
                }
                Record::Unknown(u) => {
                    format!("{:#X} unknown {} {:?}", u.offset, u.opcode, u.resumed_at)
                }
            };
            self.records.push(line);
            Ok(())
        }

        fn diagnostic(&mut self, d: Diagnostic) -> io::Result<()> {
            assert!(!d.message.is_empty());
            self.diags.push((d.code, d.offset));
            Ok(())
        }
    }

    /// The stream starts at this offset in every test, as in the usual layout.
    const START: u64 = 0x5820;

    fn decode_with(stream: &[u8], size_known: bool, selection: Option<Selection>) -> Collect {
        let size = size_known.then_some(START + stream.len() as u64);
        let mut d = Decoder::new(stream, START, size, 2);
        d.select(selection);
        let mut c = Collect::default();
        d.run(&mut c).unwrap();
        c
    }

    fn decode(stream: &[u8]) -> Collect {
        decode_with(stream, true, None)
    }

    #[test]
    fn every_record_kind() {
        #[rustfmt::skip]
        let stream = [
            0x81, 0x00, 0x01, 0x00, 0x30, 0x00, 0x00, 0x00, // BINARY_ID progid 1, length 48
            0x02, 0x02, 0x00, 0x10, 0x00, 0x00, 0x04, 0x10, 0x00, 0x00, // RETIRE_INSTR n=2: 0x1000 0x1004
            0x82, 0x00, 0x02, 0, 0, 0, 0, 0, 0, 0, // REPEAT count 2
            0x10, 0x01, 0x10, 0x20, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, // LBR n=1: to 0x2010, from 0x2000
            0x42, 0x03, 0x00, 0x30, 0, 0, 0x10, 0x30, 0, 0, 0x20, 0x30, 0, 0, // ETW_CALLSTACK n=3
        ];
        let c = decode(&stream);
        assert_eq!(
            c.records,
            [
                "0x5820 binary 1 len 48",
                "0x5828 RETIRE_INSTR p1 x1 [0x1000 0x1004]",
                "0x5832 repeat 2",
                "0x583C LBR p1 x3 [0x2000->0x2010]",
                "0x5846 ETW_CALLSTACK p1 x1 [0x3000 0x3010 0x3020]",
            ]
        );
        assert_eq!(c.diags, []);
    }

    #[test]
    fn every_ip_kind_and_empty_records() {
        let mut stream = vec![0x81, 0, 0, 0, 26, 0, 0, 0]; // BINARY_ID progid 0, length 26
        for op in [0x01, 0x02, 0x03, 0x04, 0x05, 0x41] {
            stream.extend([op, 0x00]); // n = 0
        }
        stream.extend([0x10, 0x00, 0x42, 0x00, 0x42, 0x01, 7, 0, 0, 0]); // empty LBR, short stacks
        let c = decode(&stream);
        let names: Vec<_> = c.records[1..]
            .iter()
            .map(|r| r.split(' ').nth(1).unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "UNHALT_CYCLE",
                "RETIRE_INSTR",
                "RETIRE_BR_INSTR",
                "L1_ICACHE_MISS",
                "L1_DCACHE_MISS",
                "ETW_INSTR",
                "LBR",
                "ETW_CALLSTACK",
                "ETW_CALLSTACK"
            ]
        );
        assert_eq!(c.records[7], "0x5834 LBR p0 x1 []");
        assert_eq!(
            c.diags,
            [
                (Code::ShortCallstack, 0x5836),
                (Code::ShortCallstack, 0x5838)
            ]
        );
    }

    #[test]
    fn repeat_of_u64_max_gives_two_to_the_64_hits() {
        #[rustfmt::skip]
        let stream = [
            0x81, 0, 0, 0, 26, 0, 0, 0, // BINARY_ID length 26
            0x82, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, // REPEAT u64::MAX
            0x02, 0x01, 0x10, 0, 0, 0, // RETIRE_INSTR 0x10: hits 2^64
            0x02, 0x01, 0x20, 0, 0, 0, // RETIRE_INSTR 0x20: the REPEAT has reset
        ];
        let c = decode(&stream);
        assert_eq!(
            c.records[2],
            "0x5832 RETIRE_INSTR p0 x18446744073709551616 [0x10]"
        );
        assert_eq!(c.records[3], "0x5838 RETIRE_INSTR p0 x1 [0x20]");
        assert_eq!(c.diags, []);
    }

    #[test]
    fn event_before_binary_id_is_reported_once() {
        #[rustfmt::skip]
        let stream = [
            0x02, 0x01, 1, 0, 0, 0, // RETIRE_INSTR before any BINARY_ID
            0x82, 0, 1, 0, 0, 0, 0, 0, 0, 0, // REPEAT 1
            0x02, 0x01, 2, 0, 0, 0, // RETIRE_INSTR, hits 2
            0x81, 0, 0, 0, 10, 0, 0, 0, // BINARY_ID length 10
            0x02, 0x01, 3, 0, 0, 0,
        ];
        let c = decode(&stream);
        assert_eq!(c.records[0], "0x5820 RETIRE_INSTR p- x1 [0x1]");
        assert_eq!(c.records[2], "0x5830 RETIRE_INSTR p- x2 [0x2]");
        assert_eq!(c.records[4], "0x583E RETIRE_INSTR p0 x1 [0x3]");
        assert_eq!(c.diags, [(Code::EventBeforeBinaryId, 0x5820)]);
    }

    #[test]
    fn progid_out_of_range_still_decodes() {
        let stream = [0x81, 0, 5, 0, 10, 0, 0, 0, 0x02, 0x01, 1, 0, 0, 0];
        let c = decode(&stream);
        assert_eq!(c.records[1], "0x5828 RETIRE_INSTR p5 x1 [0x1]");
        assert_eq!(c.diags, [(Code::ProgidOutOfRange, 0x5820)]);
    }

    #[test]
    fn bad_segment_lengths() {
        // Length 2 < 4: reported, records still decode, no mismatch check.
        let c = decode(&[0x81, 0, 0, 0, 2, 0, 0, 0, 0x02, 0x01, 1, 0, 0, 0]);
        assert_eq!(c.records.len(), 2);
        assert_eq!(c.diags, [(Code::BadSegmentLength, 0x5820)]);
        // Past the end of the file.
        let stream = [0x81, 0, 0, 0, 0xE8, 0x03, 0, 0, 0x02, 0x01, 1, 0, 0, 0];
        assert_eq!(decode(&stream).diags, [(Code::BadSegmentLength, 0x5820)]);
        // On a pipe the size is not known up front: the end of the stream tells.
        assert_eq!(
            decode_with(&stream, false, None).diags,
            [(Code::SegmentLengthMismatch, 0x5820)]
        );
    }

    #[test]
    fn segment_length_mismatch_at_next_binary_and_at_end() {
        #[rustfmt::skip]
        let stream = [
            0x81, 0, 0, 0, 14, 0, 0, 0, // says the segment ends at 0x5836
            0x02, 0x01, 1, 0, 0, 0, // but the next BINARY_ID comes at 0x582E
            0x81, 0, 0, 0, 8, 0, 0, 0, // says it ends at 0x583A
            0x02, 0x02, 1, 0, 0, 0, 2, 0, 0, 0, // but the stream ends at 0x5840
        ];
        let c = decode(&stream);
        assert_eq!(c.records.len(), 4);
        assert_eq!(
            c.diags,
            [
                (Code::SegmentLengthMismatch, 0x5820),
                (Code::SegmentLengthMismatch, 0x582E)
            ]
        );
    }

    #[test]
    fn unknown_opcode_resynchronises_on_the_segment_length() {
        #[rustfmt::skip]
        let stream = [
            0x81, 0, 0, 0, 25, 0, 0, 0, // segment ends at 0x5820 + 4 + 25 = 0x583D
            0x02, 0x01, 1, 0, 0, 0, // RETIRE_INSTR
            0x82, 0, 9, 0, 0, 0, 0, 0, 0, 0, // REPEAT 9: dropped by the unknown opcode
            0x07, 0xAA, 0xBB, 0xCC, 0xDD, // unknown opcode 0x07 at 0x5838, then junk
            0x81, 0, 0, 0, 10, 0, 0, 0, // next segment at 0x583D
            0x02, 0x01, 9, 0, 0, 0, // hits 1: the REPEAT did not survive
        ];
        let c = decode(&stream);
        assert_eq!(c.records[3], "0x5838 unknown 0x07 Some(22589)");
        assert_eq!(c.records[5], "0x5845 RETIRE_INSTR p0 x1 [0x9]");
        assert_eq!(c.diags, [(Code::UnknownOpcode, 0x5838)]);
    }

    #[test]
    fn unknown_opcode_without_a_valid_segment_stops() {
        // Before any BINARY_ID.
        let c = decode(&[0x02, 0x01, 1, 0, 0, 0, 0x00, 0x81, 0, 0, 0, 4, 0, 0, 0]);
        assert_eq!(c.records.len(), 2);
        assert_eq!(c.records[1], "0x5826 unknown 0x00 None");
        assert_eq!(
            c.diags,
            [
                (Code::EventBeforeBinaryId, 0x5820),
                (Code::UnknownOpcode, 0x5826)
            ]
        );
        // In a segment whose declared end lies behind: stop, and make no end-of-stream checks.
        let c = decode(&[
            0x81, 0, 0, 0, 4, 0, 0, 0, 0x82, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xFF,
        ]);
        assert_eq!(
            c.diags,
            [(Code::UnknownOpcode, 0x5832)],
            "no dangling-repeat or mismatch after a stop"
        );
    }

    #[test]
    fn truncated_records_stop_without_end_checks() {
        // A BINARY_ID cut short: truncated-record and nothing else.
        let c = decode(&[0x81, 0, 0, 0, 4]);
        assert_eq!(c.records, Vec::<String>::new());
        assert_eq!(c.diags, [(Code::TruncatedRecord, 0x5820)]);
        // A REPEAT cut short after a good segment start: no dangling-repeat either.
        let c = decode(&[0x81, 0, 0, 0, 4, 0, 0, 0, 0x82, 0, 1, 0]);
        assert_eq!(c.diags, [(Code::TruncatedRecord, 0x5828)]);
        // An IP record whose n is missing, and one whose RVAs are.
        assert_eq!(decode(&[0x01]).diags, [(Code::TruncatedRecord, 0x5820)]);
        let c = decode(&[0x81, 0, 0, 0, 12, 0, 0, 0, 0x10, 0x01, 1, 0, 0, 0, 2, 0]);
        assert_eq!(c.diags, [(Code::TruncatedRecord, 0x5828)]);
    }

    #[test]
    fn repeat_overridden_and_dangling() {
        #[rustfmt::skip]
        let stream = [
            0x81, 0, 0, 0, 40, 0, 0, 0, // BINARY_ID, length 40
            0x82, 0, 5, 0, 0, 0, 0, 0, 0, 0, // REPEAT 5, overridden
            0x82, 0, 2, 0, 0, 0, 0, 0, 0, 0, // REPEAT 2 applies
            0x02, 0x01, 1, 0, 0, 0, // hits 3
            0x82, 0, 6, 0, 0, 0, 0, 0, 0, 0, // REPEAT 6, dangling before the BINARY_ID
            0x81, 0, 0, 0, 14, 0, 0, 0,
            0x82, 0, 7, 0, 0, 0, 0, 0, 0, 0, // REPEAT 7, dangling at the end
        ];
        let c = decode(&stream);
        assert_eq!(c.records[3], "0x583C RETIRE_INSTR p0 x3 [0x1]");
        assert_eq!(
            c.diags,
            [
                (Code::RepeatOverridden, 0x5828),
                (Code::DanglingRepeat, 0x5842),
                (Code::DanglingRepeat, 0x5854)
            ]
        );
    }

    #[test]
    fn empty_stream() {
        let c = decode(&[]);
        assert!(c.records.is_empty() && c.diags.is_empty());
    }

    #[test]
    fn selection_skips_other_segments_by_length() {
        #[rustfmt::skip]
        let stream = [
            0x02, 0x01, 1, 0, 0, 0, // before any BINARY_ID: left out, still reported
            0x81, 0, 1, 0, 10, 0, 0, 0, // progid 1: skipped...
            0x09, 0x01, 1, 0, 0, 0, // ...so its unknown opcode is never seen
            0x81, 0, 0, 0, 10, 0, 0, 0, // progid 0: shown
            0x02, 0x01, 2, 0, 0, 0,
        ];
        let c = decode_with(&stream, true, Some(Selection::new([0])));
        assert_eq!(
            c.records,
            ["0x5834 binary 0 len 10", "0x583C RETIRE_INSTR p0 x1 [0x2]"]
        );
        assert_eq!(c.diags, [(Code::EventBeforeBinaryId, 0x5820)]);
    }

    #[test]
    fn records_are_not_split_across_buffer_refills() {
        // Enough records to cross several buffer boundaries, each at an awkward size.
        let mut stream = vec![0x81, 0, 0, 0, 0, 0, 0, 0];
        let mut expected = 1;
        while stream.len() < 3 * BUFFER_SIZE {
            stream.extend([0x10, 0xFF]);
            for i in 0..255u32 {
                stream.extend(i.to_le_bytes());
                stream.extend((i + 1).to_le_bytes());
            }
            stream.extend([0x02, 0x01, 7, 0, 0, 0]);
            expected += 2;
        }
        let length = (stream.len() - 4) as u32;
        stream[4..8].copy_from_slice(&length.to_le_bytes());
        // A reader that hands out odd-sized pieces.
        struct Dribble<'a>(&'a [u8]);
        impl Read for Dribble<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.0.len()).min(4093);
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut c = Collect::default();
        Decoder::new(Dribble(&stream), START, None, 1)
            .run(&mut c)
            .unwrap();
        assert_eq!(c.diags, []);
        assert_eq!(c.records.len(), expected);
        assert!(
            c.records
                .last()
                .unwrap()
                .ends_with("RETIRE_INSTR p0 x1 [0x7]")
        );
    }

    #[test]
    fn a_file_shorter_than_its_size_was_changed_while_read() {
        let stream = [0x81, 0, 0, 0, 10, 0, 0, 0, 0x02, 0x01, 1, 0, 0, 0];
        let size = START + stream.len() as u64 + 100; // the size when it was opened
        let err = Decoder::new(&stream[..], START, Some(size), 1)
            .run(&mut Collect::default())
            .unwrap_err();
        assert!(
            matches!(&err, Error::Read { offset, .. } if *offset == START + 14),
            "{err:?}"
        );
        assert!(
            err.to_string().contains("changed while being read"),
            "{err}"
        );
    }

    #[test]
    fn read_errors_name_the_offset() {
        struct Failing;
        impl Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("device gone"))
            }
        }
        let err = Decoder::new(Failing, START, None, 1)
            .run(&mut Collect::default())
            .unwrap_err();
        assert!(matches!(err, Error::Read { offset: START, .. }), "{err:?}");
    }
}
