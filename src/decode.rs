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

use crate::diag::{Code, Diagnostic};
use crate::error::{Error, Result};
use crate::opcode::Opcode;
use crate::record::{BinaryId, Record, Repeat, Samples, Unknown};

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
        while self.end < n {
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(false);
                }
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::read(self.base + self.end as u64, e)),
            }
        }
        Ok(true)
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
            match self.input.read(&mut self.buf) {
                Ok(0) => self.eof = true,
                Ok(k) => {
                    if self.base + k as u64 > target {
                        self.pos = (target - self.base) as usize;
                        self.end = k;
                        return Ok(());
                    }
                    self.base += k as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::read(self.base, e)),
            }
        }
        Ok(())
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
                        progid: u16::from_le_bytes([b[2], b[3]]),
                        length: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
                    };
                    self.pos += 8;
                    self.end_segment(&mut st, offset, sink)?;
                    self.begin_segment(&mut st, binary, sink)?;
                }
                Opcode::REPEAT => {
                    if !self.fill(10)? {
                        return truncated(sink, offset, opcode, 10, self.offset_end());
                    }
                    let b = &self.buf[self.pos + 2..self.pos + 10];
                    let count = u64::from_le_bytes(b.try_into().expect("8 bytes"));
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
            let relation = if end > at { "before" } else { "after" };
            emit(
                sink,
                Diagnostic::new(
                    Code::SegmentLengthMismatch,
                    binary.offset,
                    format!(
                        "segment length {} says the records end at {end:#010X}, but they end at {at:#010X} ({} bytes {relation})",
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
