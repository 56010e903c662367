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

use crate::analysis::summary::Summary;
use crate::format::diag::{Diagnostic, Tally};
use crate::format::header::Header;
use crate::format::progid::registry_form;
use crate::format::record::{Record, SampleKind, Samples};
use crate::format::strtab::StringTable;
use crate::format::tables::Tables;
use crate::image::ident::Kind;
use crate::image::matching::{MatchResult, Status};
use crate::image::symbols::{SymbolMap, Symbols};
use crate::output::{FileInfo, Printer};

/// Writes JSON Lines to `out`; failures to read a file go to `err` as text.
pub struct JsonPrinter<W: Write, E: Write> {
    out: W,
    err: E,
    /// The line being laid out, kept to reuse its allocation.
    line: Vec<u8>,
}

impl<W: Write, E: Write> JsonPrinter<W, E> {
    /// A printer writing JSON Lines to `out` and read failures to `err`.
    pub fn new(out: W, err: E) -> Self {
        JsonPrinter {
            out,
            err,
            line: Vec::with_capacity(4096),
        }
    }

    /// Gives back the writers.
    pub fn into_inner(self) -> (W, E) {
        (self.out, self.err)
    }

    fn line(&mut self, value: &impl Serialize) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, value).map_err(io::Error::from)?;
        self.out.write_all(b"\n")
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "file")]
struct FileLine<'a> {
    path: &'a str,
    size: Option<u64>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "header")]
struct HeaderLine {
    signature: u32,
    version: u32,
    raw_data_id: u32,
    target_arch: u32,
    string_table_offset: u32,
    program_id_table_offset: u32,
    string_table_used: u16,
    string_table_capacity: u16,
    program_ids_used: u16,
    program_id_capacity: u16,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "string")]
struct StringLine<'a> {
    offset: u32,
    value: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "progid")]
struct ProgidLine<'a> {
    index: usize,
    guid: String,
    age: u32,
    symkey: String,
    string_offset: u32,
    name: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "diagnostic")]
struct DiagnosticLine<'a> {
    severity: &'a str,
    code: &'a str,
    offset: u64,
    message: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "match")]
struct MatchLine<'a> {
    file: &'a str,
    kind: Option<&'a str>,
    guid: Option<String>,
    age: Option<u32>,
    status: &'a str,
    progid: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_guid: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_age: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<&'a str>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "validation")]
struct ValidationLine<'a> {
    path: &'a str,
    errors: u64,
    warnings: u64,
}

/// Appends a decimal number.
#[inline]
fn push_dec(line: &mut Vec<u8>, v: impl itoa::Integer) {
    line.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
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
    fn begin_file(&mut self, file: &FileInfo<'_>) -> io::Result<()> {
        self.line(&FileLine {
            path: file.path,
            size: file.size,
        })
    }

    fn header(&mut self, h: &Header) -> io::Result<()> {
        self.line(&HeaderLine {
            signature: h.signature,
            version: h.version,
            raw_data_id: h.raw_data_id,
            target_arch: h.target_arch,
            string_table_offset: h.string_table_offset,
            program_id_table_offset: h.program_id_table_offset,
            string_table_used: h.string_table_used,
            string_table_capacity: h.string_table_capacity,
            program_ids_used: h.program_ids_used,
            program_id_capacity: h.program_id_capacity,
        })
    }

    fn strings(&mut self, _: &Header, table: Option<&StringTable>) -> io::Result<()> {
        for entry in table.into_iter().flat_map(StringTable::entries) {
            self.line(&StringLine {
                offset: entry.offset,
                value: &entry.text(),
            })?;
        }
        Ok(())
    }

    fn progids(&mut self, _: &Header, tables: &Tables) -> io::Result<()> {
        let Some(table) = tables.progids.as_ref() else {
            return Ok(());
        };
        for (index, p) in table.entries().iter().enumerate() {
            let name = tables
                .strings
                .as_ref()
                .and_then(|s| s.get(p.string_offset))
                .map(String::from_utf8_lossy);
            self.line(&ProgidLine {
                index,
                guid: p.guid_string(),
                age: p.age,
                symkey: p.symkey().to_string(),
                string_offset: p.string_offset,
                name: name.as_deref(),
            })?;
        }
        Ok(())
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
        self.line(&DiagnosticLine {
            severity: d.severity().as_str(),
            code: d.code.as_str(),
            offset: d.offset,
            message: &d.message,
        })
    }

    fn summary(
        &mut self,
        summary: &Summary,
        tables: &Tables,
        symbols: &SymbolMap,
    ) -> io::Result<()> {
        for line in summary.lines(tables, symbols) {
            self.line(&line)?;
        }
        Ok(())
    }

    fn matches(&mut self, results: &[MatchResult<'_>], _: &Tables) -> io::Result<()> {
        for r in results {
            let line = match (&r.file.identity, &r.verdict) {
                (Ok(id), Some(v)) => {
                    let mismatch = matches!(v.status, Status::AgeMismatch | Status::GuidMismatch);
                    let trace = v.entry.filter(|_| mismatch);
                    MatchLine {
                        file: &r.file.path,
                        kind: Some(match id.kind {
                            Kind::Pe => "pe",
                            Kind::Pdb => "pdb",
                        }),
                        guid: Some(registry_form(&id.guid)),
                        age: Some(id.age),
                        status: v.status.as_str(),
                        progid: v.progid,
                        trace_guid: trace.map(|e| e.guid_string()),
                        trace_age: trace.map(|e| e.age),
                        message: None,
                    }
                }
                (identity, _) => MatchLine {
                    file: &r.file.path,
                    kind: None,
                    guid: None,
                    age: None,
                    status: "error",
                    progid: None,
                    trace_guid: None,
                    trace_age: None,
                    message: identity.as_ref().err().map(String::as_str),
                },
            };
            self.line(&line)?;
        }
        Ok(())
    }

    fn validation(&mut self, file: &FileInfo<'_>, tally: Tally) -> io::Result<()> {
        self.line(&ValidationLine {
            path: file.path,
            errors: tally.errors,
            warnings: tally.warnings,
        })
    }

    fn end_file(&mut self, _last: bool) -> io::Result<()> {
        Ok(())
    }

    fn error(&mut self, file: &FileInfo<'_>, message: &str) -> io::Result<()> {
        self.out.flush()?;
        writeln!(self.err, "sptdump: {}: {message}", file.label())?;
        self.err.flush()
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()?;
        self.err.flush()
    }
}
