//! Reading a trace from a file or a pipe: the header, the tables, and the start of the stream.
//!
//! A regular file is read where its parts lie, by seeking; its size is known up front. A pipe
//! is read once, front to back: table bytes are kept, gaps are discarded, and when a table
//! lies after the stream start the stream bytes before it are kept too, so they can be
//! decoded afterwards. That look-ahead is bounded by [`PIPE_LOOKAHEAD`]: memory never grows
//! with the file, whatever its header says.

use std::fs::File;
use std::io::{self, Cursor, Read, Seek, SeekFrom};
use std::ops::Range;

use crate::diag::{Code, Diagnostic};
use crate::error::{Error, Result};
use crate::header::{HEADER_SIZE, Header};
use crate::layout::{self, Layout};
use crate::progid::{ENTRY_SIZE, ProgramIdTable};
use crate::strtab::StringTable;

/// How many stream bytes a pipe may hold back while it reads tables that lie after the
/// stream start: the most both tables can span, 64 KiB + 1.5 MiB.
pub const PIPE_LOOKAHEAD: u64 = 0x1_0000 + 0xFFFF * ENTRY_SIZE as u64;

/// A trace to read.
pub struct Input {
    source: Source,
}

enum Source {
    /// A regular file and its size.
    File(File, u64),
    /// Anything read front to back, and how far it has been read.
    Pipe(Box<dyn Read>, u64),
}

/// The tables of a trace and the stream positioned at its start.
pub struct Tables {
    /// The string table; `None` when it lies past the end of the input.
    pub strings: Option<StringTable>,
    /// The program-ID table; `None` when it lies past the end of the input.
    pub progids: Option<ProgramIdTable>,
    /// The input positioned at the stream start; `None` when that lies past the end.
    pub stream: Option<Box<dyn Read>>,
    /// The file size when known: always for a file, for a pipe once it ended while the
    /// tables were read.
    pub size: Option<u64>,
}

impl Tables {
    /// The name bytes of program ID `progid`, when both tables can resolve it.
    pub fn name(&self, progid: u16) -> Option<&[u8]> {
        let entry = self.progids.as_ref()?.get(progid)?;
        self.strings.as_ref()?.get(entry.string_offset)
    }
}

impl Input {
    /// Reads `file`: by seeking when it is a regular file, front to back otherwise (a FIFO, a
    /// character device).
    pub fn file(file: File) -> io::Result<Input> {
        let meta = file.metadata()?;
        Ok(if meta.is_file() {
            Input {
                source: Source::File(file, meta.len()),
            }
        } else {
            Input::pipe(Box::new(file))
        })
    }

    /// Reads `reader` front to back.
    pub fn pipe(reader: Box<dyn Read>) -> Input {
        Input {
            source: Source::Pipe(reader, 0),
        }
    }

    /// The file size, when known before reading.
    pub fn size(&self) -> Option<u64> {
        match self.source {
            Source::File(_, size) => Some(size),
            Source::Pipe(..) => None,
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
                format!("the file has {got} bytes, fewer than the {HEADER_SIZE} of an SPT header"),
            )));
        }
        Ok(Ok(bytes))
    }

    /// Reads the tables the header describes and positions the input at the stream start,
    /// reporting every problem of the header and tables into `report`.
    pub fn tables(
        self,
        header: &Header,
        header_bytes: &[u8; HEADER_SIZE],
        mut report: impl FnMut(Diagnostic),
    ) -> Result<Tables> {
        let layout = Layout::new(header);
        let loaded = match self.source {
            Source::File(file, size) => load_file(file, size, &layout)?,
            Source::Pipe(reader, pos) => load_pipe(reader, pos, header_bytes, &layout)?,
        };

        header.check_reserved(&mut report);
        // Without a size, the pipe went on past the stream start: the stream is not empty.
        let stream_end = loaded.size.unwrap_or(u64::MAX);
        if let Some(d) = layout.check_overlap(stream_end) {
            report(d);
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
            Ok(bytes) => {
                let table = ProgramIdTable::parse(&bytes, layout.progids_used.start);
                if let Some(strings) = &strings {
                    table.check_names(strings, &mut report);
                }
                Some(table)
            }
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
        Ok(Tables {
            strings,
            progids,
            stream,
            size: loaded.size,
        })
    }
}

/// What loading found, before any judgement: each part's bytes, or why it could not be had.
struct Loaded {
    strings: std::result::Result<Vec<u8>, String>,
    progids: std::result::Result<Vec<u8>, String>,
    stream: std::result::Result<Box<dyn Read>, String>,
    size: Option<u64>,
}

fn past_end(range: &Range<u64>, size: u64) -> String {
    format!(
        "run to {:#010X}, past the end of the file at {size:#010X}",
        range.end
    )
}

fn load_file(mut file: File, size: u64, layout: &Layout) -> Result<Loaded> {
    let mut read_range = |range: &Range<u64>| -> Result<std::result::Result<Vec<u8>, String>> {
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
    })
}

/// The error for a file that ends before the size it had when it was opened.
fn shrunk(at: u64, size: u64) -> Error {
    Error::read(
        at,
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "the file ended at {at:#010X}, though it had {size} bytes when opened: was it changed while being read?"
            ),
        ),
    )
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
    })
}

/// Reads until `buf` is full or the input ends; returns how many bytes were read. `at` is
/// the file offset of `buf[0]`, for the error message.
fn read_full(r: &mut impl Read, buf: &mut [u8], at: u64) -> Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::read(at + got as u64, e)),
        }
    }
    Ok(got)
}
