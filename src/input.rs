//! Reading a trace from a file or a pipe: the header, the tables, and the start of the stream.
//!
//! A regular file is read where its parts lie, by seeking; its size is known up front. A pipe
//! is read once, front to back: table bytes are kept, gaps are discarded, and when a table
//! lies after the stream start the stream bytes before it are kept too, so they can be
//! decoded afterwards. That look-ahead is bounded (`PIPE_LOOKAHEAD`, about 1.6 MiB): memory never grows
//! with the file, whatever its header says.

use std::fs::File;
use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::Path;

use crate::etl::buffer::{BUFFER_HEADER, Buffer, BufferHeader, Buffers, Refused};
use crate::etl::recording::Recording;
use crate::format::diag::{Code, Diagnostic};
use crate::format::error::{Error, Result, read_full, shrunk};
use crate::format::header::{HEADER_SIZE, Header};
use crate::format::layout::{self, Layout};
use crate::format::magic::Foreign;
use crate::format::progid::{ENTRY_SIZE, ProgramIdTable};
use crate::format::strtab::StringTable;
use crate::format::tables::{StringIndex, Tables};

/// How many stream bytes a pipe may hold back while it reads tables that lie after the
/// stream start: the most both tables can span, 64 KiB + 1.5 MiB.
pub(crate) const PIPE_LOOKAHEAD: u64 = 0x1_0000 + 0xFFFF * ENTRY_SIZE as u64;

/// A trace to read.
pub struct Input {
    source: Source,
}

/// What a regular file offers: reading and seeking.
pub trait Seekable: Read + Seek {}
impl<T: Read + Seek> Seekable for T {}

enum Source {
    /// A regular file (or bytes in memory) and its size.
    File(Box<dyn Seekable>, u64),
    /// Anything read front to back, and how far it has been read.
    Pipe(Box<dyn Read>, u64),
}

/// What opening a trace gives: its tables, and the stream positioned at its start.
pub struct Opened {
    /// The string and program-ID tables, as far as they could be read.
    pub tables: Tables,
    /// The input positioned at the stream start; `None` when that lies past the end.
    pub stream: Option<Box<dyn Read>>,
    /// The file size when known: always for a file, for a pipe once it ended while the
    /// tables were read.
    pub size: Option<u64>,
    /// On a pipe, a layout whose tables-overlap check waits for the end of the stream.
    pub overlap_after_stream: Option<Layout>,
}

/// A reader that says how much it read.
struct Observed<R, F> {
    inner: R,
    seen: F,
}

impl<R: Read, F: FnMut(usize)> Read for Observed<R, F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        (self.seen)(n);
        Ok(n)
    }
}

impl<R: Seek, F> Seek for Observed<R, F> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// A trace that could not be opened: why, in the same words on every platform.
#[derive(Debug, thiserror::Error)]
#[error("cannot open: {}", describe(.0))]
pub struct OpenError(pub io::Error);

impl Input {
    /// Opens the trace at `path`: a regular file is read by seeking, anything else (a FIFO,
    /// a device) front to back.
    pub fn open(path: &Path) -> std::result::Result<Input, OpenError> {
        open_file(path).and_then(Input::file).map_err(OpenError)
    }

    /// Reads standard input, front to back.
    pub fn stdin() -> Input {
        Input::pipe(Box::new(io::stdin().lock()))
    }

    /// Reads `file`: by seeking when it is a regular file, front to back otherwise (a FIFO, a
    /// character device).
    pub fn file(file: File) -> io::Result<Input> {
        let meta = file.metadata()?;
        Ok(if meta.is_file() {
            Input {
                source: Source::File(Box::new(file), meta.len()),
            }
        } else {
            Input::pipe(Box::new(file))
        })
    }

    /// Reads a trace held in memory, as a file.
    pub fn memory(bytes: Vec<u8>) -> Input {
        let size = bytes.len() as u64;
        Input {
            source: Source::File(Box::new(Cursor::new(bytes)), size),
        }
    }

    /// Reads `reader` front to back.
    pub fn pipe(reader: Box<dyn Read>) -> Input {
        Input {
            source: Source::Pipe(reader, 0),
        }
    }

    /// Calls `seen` with the number of bytes of each read of the input, as it is read: for
    /// a progress bar. Seeking past parts of a file is not reading them.
    pub fn observed(self, seen: impl FnMut(usize) + 'static) -> Input {
        let source = match self.source {
            Source::File(file, size) => {
                Source::File(Box::new(Observed { inner: file, seen }), size)
            }
            Source::Pipe(reader, pos) => Source::Pipe(
                Box::new(Observed {
                    inner: reader,
                    seen,
                }),
                pos,
            ),
        };
        Input { source }
    }

    /// The input as a file to read anywhere in, and its size, when it is one (not a pipe):
    /// to say what a file that is not a trace is. Reading it moves the position of the
    /// trace's own reading: read no trace from it afterwards.
    pub fn seekable(&mut self) -> Option<(&mut dyn Seekable, u64)> {
        match &mut self.source {
            Source::File(file, size) => Some((file.as_mut(), *size)),
            Source::Pipe(..) => None,
        }
    }

    /// The file size, when known before reading.
    pub fn size(&self) -> Option<u64> {
        match self.source {
            Source::File(_, size) => Some(size),
            Source::Pipe(..) => None,
        }
    }

    /// Whether the input is an ETL rather than an SPT, by its first 80 bytes (SPEC section
    /// 19: a buffer's header and the log-file header's event). The bytes are read and put
    /// back: on a file by seeking, on a pipe by reading them again first.
    pub fn is_etl(&mut self) -> Result<bool> {
        let mut first = [0u8; BUFFER_HEADER + 8];
        let got = match &mut self.source {
            Source::File(file, _) => {
                let got = read_full(file, &mut first, 0)?;
                file.seek(SeekFrom::Start(0))
                    .map_err(|e| Error::read(0, e))?;
                got
            }
            Source::Pipe(reader, pos) => {
                let got = read_full(reader, &mut first, *pos)?;
                let read = std::mem::replace(reader, Box::new(io::empty()));
                *reader = Box::new(Cursor::new(first[..got].to_vec()).chain(read));
                got
            }
        };
        Ok(BufferHeader::starts_etl(&first[..got]))
    }

    /// Reads the whole input as an ETL, one buffer at a time, into a recording; `seen` is
    /// told of each buffer read (its index). A damaged buffer refuses the file.
    pub fn recording(
        &mut self,
        mut seen: impl FnMut(u64),
    ) -> std::result::Result<Recording, Refused> {
        let mut recording = Recording::new();
        self.buffers(|buffer| {
            recording.add(buffer);
            seen(buffer.index);
        })?;
        Ok(recording)
    }

    /// Reads the input as an ETL from where it is, handing each buffer to `each`.
    pub fn buffers(
        &mut self,
        mut each: impl FnMut(&Buffer<'_>),
    ) -> std::result::Result<(), Refused> {
        let reader: &mut dyn Read = match &mut self.source {
            Source::File(file, _) => file.as_mut(),
            Source::Pipe(reader, _) => reader.as_mut(),
        };
        let mut buffers = Buffers::new(io::BufReader::with_capacity(1 << 16, reader));
        while let Some(buffer) = buffers.next_buffer()? {
            each(&buffer);
        }
        Ok(())
    }

    /// Goes back to the start of a file, to read it again; false on a pipe, which is read
    /// once.
    pub fn rewind(&mut self) -> Result<bool> {
        match &mut self.source {
            Source::File(file, _) => {
                file.seek(SeekFrom::Start(0))
                    .map_err(|e| Error::read(0, e))?;
                Ok(true)
            }
            Source::Pipe(..) => Ok(false),
        }
    }

    /// Reads the header's 32 bytes. When the input is shorter, returns the error diagnostic.
    pub fn header(&mut self) -> Result<std::result::Result<[u8; HEADER_SIZE], Diagnostic>> {
        let mut bytes = [0u8; HEADER_SIZE];
        let got = match &mut self.source {
            Source::File(file, _) => read_full(file, &mut bytes, 0)?,
            Source::Pipe(reader, pos) => {
                let got = read_full(reader, &mut bytes, 0)?;
                *pos = got as u64;
                got
            }
        };
        if got < HEADER_SIZE {
            return Ok(Err(Diagnostic::new(
                Code::TruncatedHeader,
                0,
                match Foreign::identify(&bytes[..got]) {
                    _ if got == 0 => {
                        "the file is empty: an SPT trace starts with a 32-byte header".to_owned()
                    }
                    Some(kind) => format!(
                        "the file has {got} bytes, fewer than the {HEADER_SIZE} of an SPT header, and looks like {kind}"
                    ),
                    None => format!(
                        "the file has {got} bytes, fewer than the {HEADER_SIZE} of an SPT header"
                    ),
                },
            )));
        }
        Ok(Ok(bytes))
    }

    /// Reads the tables the header describes and positions the input at the stream start,
    /// reporting every problem of the header and tables into `report`. The program IDs'
    /// string indices are read as `strindex` asks (see [`Tables::read_indices`]).
    pub fn tables(
        self,
        header: &Header,
        header_bytes: &[u8; HEADER_SIZE],
        strindex: StringIndex,
        mut report: impl FnMut(Diagnostic),
    ) -> Result<Opened> {
        let layout = Layout::new(header);
        let loaded = match self.source {
            Source::File(file, size) => load_file(file, size, &layout)?,
            Source::Pipe(reader, pos) => load_pipe(reader, pos, header_bytes, &layout)?,
        };

        header.check_reserved(&mut report);
        // A pipe that has not ended yet: the stream runs at least as far as it was read. An
        // overlap with what lies beyond depends on where the stream ends, which only
        // decoding finds out.
        let mut overlap_after_stream = None;
        match loaded.size {
            Some(size) => report_some(&mut report, layout.check_overlap(size)),
            None => match layout.check_overlap(loaded.seen) {
                Some(d) => report(d),
                None if layout.check_overlap(u64::MAX).is_some() => {
                    overlap_after_stream = Some(layout.clone());
                }
                None => {}
            },
        }
        layout::check_counts(header, &mut report);

        let strings = match loaded.strings {
            Ok(bytes) => {
                let table = StringTable::new(bytes, layout.strings_used.start);
                table.check(&mut report);
                Some(table)
            }
            Err(why) => {
                report(Diagnostic::new(
                    Code::StringTableOutOfBounds,
                    layout.strings_used.start,
                    format!(
                        "the string table's {} used bytes at {:#010X} {why}; no strings listed",
                        header.string_table_used, layout.strings_used.start
                    ),
                ));
                None
            }
        };
        let progids = match loaded.progids {
            Ok(bytes) => Some(ProgramIdTable::parse(&bytes, layout.progids_used.start)),
            Err(why) => {
                report(Diagnostic::new(
                    Code::ProgidTableOutOfBounds,
                    layout.progids_used.start,
                    format!(
                        "the program-ID table's {} used entries at {:#010X} {why}; none listed",
                        header.program_ids_used, layout.progids_used.start
                    ),
                ));
                None
            }
        };
        let mut tables = Tables {
            strings,
            progids,
            ..Tables::default()
        };
        tables.read_indices(strindex, &mut report);
        let stream = match loaded.stream {
            Ok(stream) => Some(stream),
            Err(why) => {
                report(Diagnostic::new(
                    Code::StreamOutOfBounds,
                    layout.stream_start,
                    format!(
                        "the event stream would start at {:#010X} (ProgramIdTableOffset + ProgramIdCapacity x 24), {why}; no events",
                        layout.stream_start
                    ),
                ));
                None
            }
        };
        Ok(Opened {
            tables,
            stream,
            size: loaded.size,
            overlap_after_stream,
        })
    }
}

/// What loading found, before any judgement: each part's bytes, or why it could not be had.
struct Loaded {
    strings: std::result::Result<Vec<u8>, String>,
    progids: std::result::Result<Vec<u8>, String>,
    stream: std::result::Result<Box<dyn Read>, String>,
    size: Option<u64>,
    /// How far the input was read.
    seen: u64,
}

fn report_some(report: &mut impl FnMut(Diagnostic), d: Option<Diagnostic>) {
    if let Some(d) = d {
        report(d);
    }
}

fn past_end(range: &Range<u64>, size: u64) -> String {
    format!(
        "run to {:#010X}, past the end of the file at {size:#010X}",
        range.end
    )
}

fn load_file(mut file: Box<dyn Seekable>, size: u64, layout: &Layout) -> Result<Loaded> {
    let mut read_range = |range: &Range<u64>| -> Result<std::result::Result<Vec<u8>, String>> {
        // Nothing used, nothing to read: an empty table cannot run past the end.
        if range.is_empty() {
            return Ok(Ok(Vec::new()));
        }
        if range.end > size {
            return Ok(Err(past_end(range, size)));
        }
        // Both tables are at most 1.5 MiB long: their sizes come from 16-bit counts.
        let mut bytes = vec![0u8; (range.end - range.start) as usize];
        file.seek(SeekFrom::Start(range.start))
            .map_err(|e| Error::read(range.start, e))?;
        let got = read_full(&mut file, &mut bytes, range.start)?;
        if got < bytes.len() {
            return Err(shrunk(range.start + got as u64, size));
        }
        Ok(Ok(bytes))
    };
    let strings = read_range(&layout.strings_used)?;
    let progids = read_range(&layout.progids_used)?;
    let stream = if layout.stream_start > size {
        Err(format!("past the end of the file at {size:#010X}"))
    } else {
        file.seek(SeekFrom::Start(layout.stream_start))
            .map_err(|e| Error::read(layout.stream_start, e))?;
        Ok(Box::new(file) as Box<dyn Read>)
    };
    Ok(Loaded {
        strings,
        progids,
        stream,
        size: Some(size),
        seen: size,
    })
}

fn load_pipe(
    mut reader: Box<dyn Read>,
    mut pos: u64,
    header_bytes: &[u8; HEADER_SIZE],
    layout: &Layout,
) -> Result<Loaded> {
    let start = layout.stream_start;
    // Read until both tables are complete and one byte past the stream start is seen (so
    // an empty stream is known to be empty), but hold back no more than the look-ahead.
    let wanted = [&layout.strings_used, &layout.progids_used]
        .into_iter()
        .filter(|r| !r.is_empty())
        .map(|r| r.end)
        .fold(start + 1, u64::max);
    let target = wanted.min(start + PIPE_LOOKAHEAD);

    let mut strings = Vec::new();
    let mut progids = Vec::new();
    let mut held = Vec::new();
    let held_range = start..target;
    let mut take = |chunk_at: u64, chunk: &[u8]| {
        for (range, dest) in [
            (&layout.strings_used, &mut strings),
            (&layout.progids_used, &mut progids),
            (&held_range, &mut held),
        ] {
            let lo = range.start.max(chunk_at);
            let hi = range.end.min(chunk_at + chunk.len() as u64);
            if lo < hi {
                dest.extend_from_slice(&chunk[(lo - chunk_at) as usize..(hi - chunk_at) as usize]);
            }
        }
    };
    take(0, header_bytes);
    let mut chunk = vec![0u8; 64 * 1024];
    let mut size = None;
    while pos < target {
        let want = (target - pos).min(chunk.len() as u64) as usize;
        let got = read_full(&mut reader, &mut chunk[..want], pos)?;
        take(pos, &chunk[..got]);
        pos += got as u64;
        if got < want {
            size = Some(pos);
            break;
        }
    }

    let why = |range: &Range<u64>| match size {
        Some(end) => format!(
            "run to {:#010X}, past the end of the input at {end:#010X}",
            range.end
        ),
        None => format!(
            "lie more than {PIPE_LOOKAHEAD} bytes past the stream start, further than standard input can be read ahead; read the trace from a file"
        ),
    };
    let complete = |bytes: Vec<u8>, range: &Range<u64>| {
        if bytes.len() as u64 == range.end - range.start {
            Ok(bytes)
        } else {
            Err(why(range))
        }
    };
    let strings = complete(strings, &layout.strings_used);
    let progids = complete(progids, &layout.progids_used);
    let stream = match size {
        Some(end) if end < start => Err(format!("past the end of the input at {end:#010X}")),
        _ => Ok(Box::new(Cursor::new(held).chain(reader)) as Box<dyn Read>),
    };
    Ok(Loaded {
        strings,
        progids,
        stream,
        size,
        seen: pos,
    })
}

/// Opens `path` for reading. A directory is refused up front with the same words on every
/// platform (Windows cannot open one at all, and Unix fails only at the first read).
pub fn open_file(path: &Path) -> io::Result<File> {
    if std::fs::metadata(path)?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory, not a file",
        ));
    }
    File::open(path)
}

/// What an I/O error says, in the same words on every platform for the common cases
/// (Windows and Unix word "not found" and "access denied" differently), and without the
/// `(os error N)` suffix, starting in lower case as the rest of a message does ("No space
/// left on device" is "no space left on device"; an acronym such as "PE" is kept).
pub fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => {
            let text = e.to_string();
            let mut text = match text.rfind(" (os error ") {
                Some(at) if text.ends_with(')') => text[..at].to_owned(),
                _ => text,
            };
            let b = text.as_bytes();
            if b.len() > 1 && b[0].is_ascii_uppercase() && b[1].is_ascii_lowercase() {
                text[..1].make_ascii_lowercase();
            }
            text
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    /// A header: string table at `so` (used `su`, capacity `sc`), program IDs at `po`
    /// (used `pu`, capacity `pc`).
    fn header(so: u32, su: u16, sc: u16, po: u32, pu: u16, pc: u16) -> Vec<u8> {
        let mut h = Vec::new();
        h.extend(0x5350_543Au32.to_le_bytes()); // Signature
        h.extend(1u32.to_le_bytes()); // Version
        h.extend([0; 8]); // RawDataId, TargetArch
        h.extend(so.to_le_bytes());
        h.extend(po.to_le_bytes());
        h.extend(su.to_le_bytes());
        h.extend(sc.to_le_bytes());
        h.extend(pu.to_le_bytes());
        h.extend(pc.to_le_bytes());
        h
    }

    /// One program-ID entry naming string offset `name`.
    fn entry(age: u32, name: u32) -> Vec<u8> {
        let mut e = (0u8..16).collect::<Vec<_>>(); // GUID bytes 00..0F
        e.extend(age.to_le_bytes());
        e.extend(name.to_le_bytes());
        e
    }

    /// A compact trace: strings at 0x20 (capacity 16), one program ID at 0x30 (capacity 1),
    /// stream at 0x48.
    fn compact() -> Vec<u8> {
        let mut f = header(0x20, 8, 16, 0x30, 1, 1);
        f.extend(b"app.exe\0\0\0\0\0\0\0\0\0"); // 16 bytes of string table
        f.extend(entry(1, 0));
        f.extend([0x81, 0, 0, 0, 10, 0, 0, 0, 0x02, 0x01, 1, 0, 0, 0]);
        f
    }

    struct Loaded {
        diags: Vec<(Code, u64)>,
        opened: Opened,
    }

    fn load(input: Input) -> Loaded {
        let mut input = input;
        let bytes = input.header().unwrap().unwrap();
        let h = Header::parse(&bytes);
        let mut diags = vec![];
        let tables = input
            .tables(&h, &bytes, StringIndex::Auto, |d| {
                diags.push((d.code, d.offset))
            })
            .unwrap();
        Loaded {
            diags,
            opened: tables,
        }
    }

    fn as_file(bytes: &[u8]) -> Input {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(bytes).unwrap();
        f.seek(SeekFrom::Start(0)).unwrap();
        Input::file(f).unwrap()
    }

    fn as_pipe(bytes: &[u8]) -> Input {
        Input::pipe(Box::new(Cursor::new(bytes.to_vec())))
    }

    fn rest(opened: &mut Opened) -> Vec<u8> {
        let mut out = vec![];
        opened.stream.take().unwrap().read_to_end(&mut out).unwrap();
        out
    }

    #[test]
    fn file_and_pipe_agree_on_a_good_trace() {
        let bytes = compact();
        for input in [as_file(&bytes), as_pipe(&bytes)] {
            let mut l = load(input);
            assert_eq!(l.diags, []);
            assert_eq!(l.opened.tables.name(0), Some(&b"app.exe"[..]));
            assert_eq!(rest(&mut l.opened), &bytes[0x48..]);
        }
    }

    #[test]
    fn truncated_header() {
        for input in [as_file(&compact()[..31]), as_pipe(&compact()[..31])] {
            let mut input = input;
            let d = input.header().unwrap().unwrap_err();
            assert_eq!((d.code, d.offset), (Code::TruncatedHeader, 0));
        }
        let d = as_file(&[]).header().unwrap().unwrap_err();
        assert!(d.message.contains("the file is empty"), "{}", d.message);
        let d = as_pipe(b"hello\n").header().unwrap().unwrap_err();
        assert!(
            d.message.ends_with(
                "6 bytes, fewer than the 32 of an SPT header, and looks like a text file"
            ),
            "{}",
            d.message
        );
    }

    #[test]
    fn tables_and_stream_past_the_end() {
        // Cut inside the program-ID table: strings fine, no program IDs, no stream.
        let bytes = &compact()[..0x38];
        for input in [as_file(bytes), as_pipe(bytes)] {
            let l = load(input);
            assert_eq!(
                l.diags,
                [
                    (Code::ProgidTableOutOfBounds, 0x30),
                    (Code::StreamOutOfBounds, 0x48)
                ]
            );
            assert!(l.opened.tables.strings.is_some());
            assert!(l.opened.tables.progids.is_none() && l.opened.stream.is_none());
        }
    }

    #[test]
    fn string_table_past_the_end_leaves_names_unchecked() {
        let mut bytes = compact();
        bytes[0x10..0x14].copy_from_slice(&0x10_0000u32.to_le_bytes()); // StringTableOffset
        for input in [as_file(&bytes), as_pipe(&bytes)] {
            let l = load(input);
            // No string-offset-out-of-range: the table itself is missing. The capacity now
            // overlaps nothing, so there is no overlap either.
            assert_eq!(l.diags, [(Code::StringTableOutOfBounds, 0x10_0000)]);
            assert_eq!(l.opened.tables.name(0), None);
            assert!(l.opened.tables.progids.is_some());
        }
    }

    #[test]
    fn empty_tables_far_away_are_fine() {
        // Nothing used in either table, wherever they are said to lie.
        let mut bytes = header(0x10_0000, 0, 0, 0x20_0000, 0, 0);
        bytes[0x14..0x18].copy_from_slice(&0x20u32.to_le_bytes()); // stream right after
        for input in [as_file(&bytes), as_pipe(&bytes)] {
            let l = load(input);
            assert_eq!(l.diags, []);
            assert_eq!(
                l.opened.tables.strings.as_ref().map(|t| t.bytes().len()),
                Some(0)
            );
        }
    }

    #[test]
    fn empty_stream_at_the_end_is_fine() {
        let bytes = &compact()[..0x48];
        for input in [as_file(bytes), as_pipe(bytes)] {
            let mut l = load(input);
            assert_eq!(l.diags, []);
            assert_eq!(rest(&mut l.opened), b"");
        }
    }

    #[test]
    fn an_observed_input_counts_what_it_reads() {
        use std::cell::Cell;
        use std::rc::Rc;
        let bytes = compact();
        for (input, all) in [(as_file(&bytes), false), (as_pipe(&bytes), true)] {
            let count = Rc::new(Cell::new(0usize));
            let seen = Rc::clone(&count);
            let mut l = load(input.observed(move |n| seen.set(seen.get() + n)));
            let stream = rest(&mut l.opened);
            assert_eq!(stream, &bytes[0x48..]);
            if all {
                assert_eq!(count.get(), bytes.len(), "a pipe is read front to back");
            } else {
                // The header, the tables' used bytes and the stream: the gaps are sought over.
                assert_eq!(count.get(), 32 + 8 + 24 + stream.len());
            }
        }
    }

    #[test]
    fn a_pipe_reaches_a_table_after_the_stream_start() {
        // The string table sits after the stream's first records.
        let mut f = header(0x60, 8, 8, 0x20, 1, 1);
        f.extend(entry(1, 0)); // program IDs at 0x20; the stream starts at 0x38
        f.extend([0x81, 0, 0, 0, 0x1C, 0, 0, 0]); // 0x38: BINARY_ID, length 28
        f.extend([
            0x02, 0x05, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        ]); // 0x40
        f.extend([0x02, 0x02, 0, 0, 0, 0, 0, 0, 0, 0]); // 0x56
        f.extend(b"app.exe\0"); // 0x60: read as records too, hence the overlap
        let file = load(as_file(&f));
        let mut pipe = load(as_pipe(&f));
        assert_eq!(pipe.diags, [(Code::TablesOverlap, 0x10)]);
        assert_eq!(pipe.diags, file.diags);
        assert_eq!(pipe.opened.tables.name(0), Some(&b"app.exe"[..]));
        assert_eq!(rest(&mut pipe.opened), &f[0x38..]);
    }

    #[test]
    fn a_pipe_holds_back_only_so_much() {
        // A string table far beyond the stream start: a file seeks to it, a pipe reports it
        // as out of reach without holding the stream in memory.
        let far = 0x48 + PIPE_LOOKAHEAD as usize + 100;
        let mut bytes = compact();
        bytes[0x10..0x14].copy_from_slice(&(far as u32).to_le_bytes());
        bytes.resize(far, 0);
        bytes.extend(b"app.exe\0");
        let file = load(as_file(&bytes));
        assert_eq!(file.opened.tables.name(0), Some(&b"app.exe"[..]));
        let mut pipe = load(as_pipe(&bytes));
        assert!(
            pipe.diags
                .contains(&(Code::StringTableOutOfBounds, far as u64))
        );
        assert_eq!(pipe.opened.tables.name(0), None);
        // The stream is still complete.
        assert_eq!(rest(&mut pipe.opened), &bytes[0x48..]);
    }

    #[test]
    fn huge_capacities_do_not_allocate_from_counts() {
        // Every count at its maximum, in a 32-byte file: each part is simply out of bounds.
        let bytes = header(0xFFFF_FFFF, 0xFFFF, 0xFFFF, 0xFFFF_FFFF, 0xFFFF, 0xFFFF);
        for input in [as_file(&bytes), as_pipe(&bytes)] {
            let l = load(input);
            let codes: Vec<_> = l.diags.iter().map(|d| d.0).collect();
            assert_eq!(
                codes,
                [
                    Code::TablesOverlap, // both tables start at 0xFFFFFFFF
                    Code::StringTableOutOfBounds,
                    Code::ProgidTableOutOfBounds,
                    Code::StreamOutOfBounds
                ]
            );
        }
    }

    #[test]
    fn common_errors_read_the_same_everywhere() {
        let missing = open_file(Path::new("no/such/file.spt")).unwrap_err();
        assert_eq!(describe(&missing), "no such file or directory");
        let dir = open_file(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap_err();
        assert_eq!(describe(&dir), "it is a directory, not a file");
        let other = io::Error::from_raw_os_error(22);
        assert!(
            !describe(&other).contains("os error"),
            "{}",
            describe(&other)
        );
        let said = |text: &str| describe(&io::Error::other(text.to_owned()));
        assert_eq!(said("No space left on device"), "no space left on device");
        assert_eq!(said("PE file too short"), "PE file too short");
        assert_eq!(said("N"), "N");
    }
}
