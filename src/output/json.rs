//! The JSON Lines printer: one object per line, `"type"` first, for pipelines.
//!
//! ```text
//! {"type":"file","path":"sample.spt","size":23456}
//! {"type":"header","signature":1397773370,"version":1,...}
//! {"type":"string","offset":0,"value":"app.exe"}
//! {"type":"progid","index":0,"guid":"42AC0098-...","age":1,"symkey":"...","string_offset":0,"name":"app.exe"}
//! {"type":"binary","offset":22560,"progid":0,"length":1234}
//! {"type":"repeat","offset":22568,"count":2}
//! {"type":"ip","offset":22578,"event":"RETIRE_INSTR","progid":0,"hits":3,"rvas":[4096,4100]}
//! {"type":"lbr","offset":22588,"progid":0,"hits":1,"branches":[{"from":8192,"to":8208}]}
//! {"type":"callstack","offset":22608,"progid":0,"hits":1,"frames":[12288,12304,12320]}
//! {"type":"diagnostic","severity":"warning","code":"dangling-repeat","offset":22568,"message":"..."}
//! {"type":"validation","path":"sample.spt","errors":0,"warnings":1}
//! ```
//!
//! Each line is a small serialize-only struct, kept apart from the decoder's types, except
//! the event records: they are most of the output, hold only numbers and fixed names, and
//! are laid out by hand, which is several times faster. Numbers are plain JSON integers,
//! exact above 2^64. Records with an unknown opcode have no line of their own: their
//! `unknown-opcode` diagnostic says all there is.

use std::io::{self, Write};

use serde::Serialize;

use crate::format::diag::Diagnostic;
use crate::format::record::{Record, SampleKind, Samples};
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;
use crate::image::symbols::Symbols;
use crate::output::{FileInfo, Printer, Recorded, Render, push_dec};

mod line;
mod sink;

pub(crate) use line::write_line;
pub use sink::Json;

/// Writes JSON Lines to `out`; failures to read a file go to `err` as text.
pub(crate) struct JsonPrinter<W: Write, E: Write> {
    out: W,
    err: E,
    /// The path of the file being dumped, which diagnostic, match and summary lines carry.
    path: String,
    /// The line being laid out, kept to reuse its allocation.
    line: Vec<u8>,
}

impl<W: Write, E: Write> JsonPrinter<W, E> {
    /// A printer writing JSON Lines to `out` and read failures to `err`.
    pub(crate) fn new(out: W, err: E) -> Self {
        JsonPrinter {
            out,
            err,
            path: String::new(),
            line: Vec::with_capacity(4096),
        }
    }

    /// Gives back the writers.
    pub(crate) fn into_inner(self) -> (W, E) {
        (self.out, self.err)
    }

    fn line(&mut self, value: &impl Serialize) -> io::Result<()> {
        write_line(&mut self.out, value)
    }

    /// An `error` or `note` line on the output, for scripts, and the same words on the error
    /// stream, for the person watching.
    fn message(&mut self, kind: &str, file: &FileInfo<'_>, message: &str) -> io::Result<()> {
        self.json().message(kind, file, message)
    }

    /// The JSON printer as a report writes itself into it ([`Render::json`]).
    fn json(&mut self) -> Json<'_> {
        Json {
            out: &mut self.out,
            err: &mut self.err,
            path: &self.path,
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "file")]
struct FileLine<'a> {
    path: &'a str,
    size: Option<u64>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "diagnostic")]
struct DiagnosticLine<'a> {
    path: &'a str,
    severity: &'a str,
    code: &'a str,
    offset: u64,
    message: &'a str,
}

/// Appends `"progid":N` for a sample record, or `"progid":null` before any BINARY_ID.
#[inline]
fn push_progid(line: &mut Vec<u8>, progid: Option<u16>) {
    line.extend_from_slice(b"\"progid\":");
    match progid {
        Some(p) => push_dec(line, p),
        None => line.extend_from_slice(b"null"),
    }
}

/// Appends `"function+0xOFFSET"` or `null` for `rva`.
fn push_symbol(line: &mut Vec<u8>, symbols: &Symbols, rva: u32) {
    match symbols.lookup(rva) {
        Some((function, offset)) => {
            let text = format!("{}+0x{offset:X}", function.name);
            serde_json::to_writer(&mut *line, &text).expect("writing to a Vec cannot fail");
        }
        None => line.extend_from_slice(b"null"),
    }
}

/// Appends `,"symbols":[...]`, parallel to the record's RVAs, frames or branches.
fn push_symbols(line: &mut Vec<u8>, s: &Samples<'_>, symbols: &Symbols) {
    line.extend_from_slice(b",\"symbols\":[");
    if s.kind() == SampleKind::Lbr {
        for (i, b) in s.branches().iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(b"{\"from\":");
            push_symbol(line, symbols, b.from);
            line.extend_from_slice(b",\"to\":");
            push_symbol(line, symbols, b.to);
            line.push(b'}');
        }
    } else {
        for (i, rva) in s.rvas().iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            push_symbol(line, symbols, rva);
        }
    }
    line.push(b']');
}

/// Lays out the line of an event record in `line`, or leaves it empty for an unknown one.
fn record_line(line: &mut Vec<u8>, record: &Record<'_>, symbols: &SymbolMap) {
    match record {
        Record::BinaryId(b) => {
            line.extend_from_slice(b"{\"type\":\"binary\",\"offset\":");
            push_dec(line, b.offset);
            line.extend_from_slice(b",\"progid\":");
            push_dec(line, b.progid);
            line.extend_from_slice(b",\"length\":");
            push_dec(line, b.length);
            line.extend_from_slice(b"}\n");
        }
        Record::Repeat(r) => {
            line.extend_from_slice(b"{\"type\":\"repeat\",\"offset\":");
            push_dec(line, r.offset);
            line.extend_from_slice(b",\"count\":");
            push_dec(line, r.count);
            line.extend_from_slice(b"}\n");
        }
        Record::Samples(s) => {
            let kind = s.kind();
            line.extend_from_slice(match kind {
                SampleKind::Ip(_) => b"{\"type\":\"ip\",\"offset\":",
                SampleKind::Lbr => b"{\"type\":\"lbr\",\"offset\":",
                SampleKind::CallStack => b"{\"type\":\"callstack\",\"offset\":",
            });
            push_dec(line, s.offset);
            line.push(b',');
            if let SampleKind::Ip(op) = kind {
                line.extend_from_slice(b"\"event\":\"");
                line.extend_from_slice(op.name().unwrap_or_default().as_bytes());
                line.extend_from_slice(b"\",");
            }
            push_progid(line, s.progid);
            line.extend_from_slice(b",\"hits\":");
            push_dec(line, s.hits);
            match kind {
                SampleKind::Ip(_) | SampleKind::CallStack => {
                    line.extend_from_slice(if kind == SampleKind::CallStack {
                        &b",\"frames\":["[..]
                    } else {
                        &b",\"rvas\":["[..]
                    });
                    for (i, rva) in s.rvas().iter().enumerate() {
                        if i > 0 {
                            line.push(b',');
                        }
                        push_dec(line, rva);
                    }
                }
                SampleKind::Lbr => {
                    line.extend_from_slice(b",\"branches\":[");
                    for (i, b) in s.branches().iter().enumerate() {
                        if i > 0 {
                            line.push(b',');
                        }
                        line.extend_from_slice(b"{\"from\":");
                        push_dec(line, b.from);
                        line.extend_from_slice(b",\"to\":");
                        push_dec(line, b.to);
                        line.push(b'}');
                    }
                }
            }
            line.push(b']');
            if let Some(symbols) = symbols.get(s.progid) {
                push_symbols(line, s, symbols);
            }
            line.extend_from_slice(b"}\n");
        }
        Record::Unknown(_) => {}
    }
}

impl<W: Write, E: Write> Printer for JsonPrinter<W, E> {
    fn show(&mut self, report: &dyn Render) -> io::Result<()> {
        report.json(&mut self.json())
    }

    fn replays(&self) -> bool {
        true
    }

    fn begin_file(&mut self, file: &FileInfo<'_>) -> io::Result<()> {
        file.path.clone_into(&mut self.path);
        self.line(&FileLine {
            path: file.path,
            size: file.size,
        })
    }

    fn begin_events(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn end_events(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn record(&mut self, record: &Record<'_>, _: &Tables, symbols: &SymbolMap) -> io::Result<()> {
        self.line.clear();
        record_line(&mut self.line, record, symbols);
        self.out.write_all(&self.line)
    }

    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        write_line(
            &mut self.out,
            &DiagnosticLine {
                path: &self.path,
                severity: d.severity().as_str(),
                code: d.code.as_str(),
                offset: d.offset,
                message: &d.message,
            },
        )
    }

    fn end_file(&mut self, _last: bool) -> io::Result<()> {
        Ok(())
    }

    fn error(&mut self, file: &FileInfo<'_>, message: &str) -> io::Result<()> {
        self.message("error", file, message)
    }

    fn note(&mut self, file: &FileInfo<'_>, message: &str) -> io::Result<()> {
        self.message("note", file, message)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()?;
        self.err.flush()
    }

    fn replay(&mut self, recorded: &Recorded) -> io::Result<()> {
        recorded.replay(&mut self.out, &mut self.err)
    }
}
