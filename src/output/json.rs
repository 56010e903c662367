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

use crate::analysis::annotate::AnnotateReport;
use crate::analysis::callgraph::CallGraph;
use crate::analysis::check::CheckReport;
use crate::analysis::compare::CompareReport;
use crate::analysis::functions::FunctionsLine;
use crate::analysis::lines::{LineRow, LinesReport};
use crate::analysis::profile::Folded;
use crate::analysis::rangediff::BinaryMoved;
use crate::analysis::ranges::RangeReport;
use crate::analysis::share;
use crate::analysis::spdcompare::SpdCompareReport;
use crate::analysis::summary::{Summary, SummaryLine};
use crate::format::diag::{Diagnostic, Severity, Tally};
use crate::format::header::Header;
use crate::format::progid::registry_form;
use crate::format::record::{Record, SampleKind, Samples};
use crate::format::stackorder::StackOrder;
use crate::format::strtab::StringTable;
use crate::format::tables::Tables;
use crate::image::ident::Kind;
use crate::image::matching::{MatchFile, MatchResult, MatchStatus};
use crate::image::symbols::{SymbolMap, Symbols};
use crate::image::symstore::BinarySymbols;
use crate::output::{FileInfo, Printer, Recorded, push_dec};

mod compare;
mod lbr;
mod line;

use line::write_line;

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
        self.line(&MessageLine {
            kind,
            path: file.path,
            message,
        })?;
        self.out.flush()?;
        let note = if kind == "note" { "note: " } else { "" };
        writeln!(self.err, "sptdump: {}: {note}{message}", file.label())?;
        self.err.flush()
    }
}

/// How a `match` or `identity` line names the kind of file.
fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Pe => "pe",
        Kind::Pdb => "pdb",
        _ => "spd",
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
    path: &'a str,
    severity: &'a str,
    code: &'a str,
    offset: u64,
    message: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "match")]
struct MatchLine<'a> {
    path: &'a str,
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
    message: Option<String>,
    /// An SPD's age is inferred.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    age_inferred: bool,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "validation")]
struct ValidationLine<'a> {
    path: &'a str,
    errors: u64,
    warnings: u64,
    valid: bool,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "summary")]
struct SummaryOf<'a> {
    path: &'a str,
    #[serde(flatten)]
    summary: SummaryLine,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "functions")]
struct FunctionsOf<'a> {
    path: &'a str,
    #[serde(flatten)]
    functions: &'a FunctionsLine,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "source_line")]
struct SourceLineOf<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    source: &'a str,
    #[serde(flatten)]
    row: &'a LineRow,
    share: f64,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "call_edge")]
struct CallEdgeOf<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    caller: &'a str,
    callee: &'a str,
    calls: u128,
    kind: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "folded")]
struct FoldedLine<'a> {
    path: &'a str,
    stack: &'a str,
    hits: u128,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "check_binary")]
struct CheckBinaryLine<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    records: u64,
    hits: std::collections::BTreeMap<&'a str, u128>,
    events: Vec<CheckEvent<'a>>,
    lbr: bool,
}

#[derive(Serialize)]
struct CheckEvent<'a> {
    event: &'a str,
    records: u64,
    hits: u128,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "check")]
struct CheckLine<'a> {
    path: &'a str,
    progid: Option<u16>,
    severity: &'a str,
    code: &'a str,
    message: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "check_summary")]
struct CheckSummaryLine<'a> {
    path: &'a str,
    mode: Option<&'a str>,
    errors: u64,
    warnings: u64,
}

/// An `error` or a `note` line: a file that could not be read, or a word about it.
#[derive(Serialize)]
struct MessageLine<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    path: &'a str,
    message: &'a str,
}

/// What the symbol path gave a binary.
#[derive(Serialize)]
#[serde(tag = "type", rename = "symbols")]
struct SymbolsLine<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    pdb: Option<&'a str>,
    image: Option<&'a str>,
    from: Option<&'a str>,
    fetched: bool,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "identity")]
struct IdentityLine<'a> {
    path: &'a str,
    kind: &'a str,
    name: &'a str,
    guid: String,
    age: u32,
    symkey: String,
    pdb_path: Option<&'a str>,
    #[serde(flatten)]
    spd: Option<SpdKeys<'a>>,
}

/// What an `identity` line of an SPD adds.
#[derive(Serialize)]
struct SpdKeys<'a> {
    binary: &'a str,
    age_inferred: bool,
    functions: u32,
    profiled: bool,
    version: u32,
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
        file.path.clone_into(&mut self.path);
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
            let name = tables.name_of(p).map(String::from_utf8_lossy);
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

    fn summary(
        &mut self,
        summary: &Summary,
        tables: &Tables,
        symbols: &SymbolMap,
        order: StackOrder,
    ) -> io::Result<()> {
        for summary in summary.lines(tables, symbols, order) {
            let line = SummaryOf {
                path: &self.path,
                summary,
            };
            write_line(&mut self.out, &line)?;
        }
        Ok(())
    }

    fn functions(&mut self, lines: &[FunctionsLine]) -> io::Result<()> {
        for functions in lines {
            let line = FunctionsOf {
                path: &self.path,
                functions,
            };
            write_line(&mut self.out, &line)?;
        }
        Ok(())
    }

    fn source_lines(&mut self, report: &LinesReport) -> io::Result<()> {
        for table in &report.tables {
            for row in &table.top {
                let line = SourceLineOf {
                    path: &self.path,
                    progid: table.progid,
                    name: &table.name,
                    source: table.source.name(),
                    row,
                    share: share(row.hits, table.hits),
                };
                write_line(&mut self.out, &line)?;
            }
        }
        Ok(())
    }

    fn call_graph(&mut self, graph: &CallGraph) -> io::Result<()> {
        for b in &graph.binaries {
            for edge in &b.edges {
                let line = CallEdgeOf {
                    path: &self.path,
                    progid: b.progid,
                    name: &b.name,
                    caller: &edge.caller,
                    callee: &edge.callee,
                    calls: edge.calls,
                    kind: edge.kind.name(),
                };
                write_line(&mut self.out, &line)?;
            }
        }
        Ok(())
    }

    fn lbr_ranges(&mut self, report: &RangeReport) -> io::Result<()> {
        lbr::ranges(&mut self.out, &self.path, report)
    }

    fn coverage(&mut self, report: &RangeReport, top: usize) -> io::Result<()> {
        lbr::coverage(&mut self.out, &self.path, report, top)
    }

    fn dyninst(&mut self, report: &RangeReport, n: usize) -> io::Result<()> {
        lbr::dyninst(&mut self.out, &self.path, report, n)
    }

    fn annotate(&mut self, report: &AnnotateReport) -> io::Result<()> {
        lbr::annotate(&mut self.out, &self.path, report)
    }

    fn folded(&mut self, folded: &Folded<'_>) -> io::Result<()> {
        folded.try_for_each(|stack, hits| {
            let line = FoldedLine {
                path: &self.path,
                stack,
                hits,
            };
            write_line(&mut self.out, &line)
        })
    }

    fn check(
        &mut self,
        file: &FileInfo<'_>,
        report: &CheckReport,
        diagnostics: Tally,
    ) -> io::Result<()> {
        for b in &report.binaries {
            let line = CheckBinaryLine {
                path: file.path,
                progid: b.progid,
                name: &b.name,
                records: b.records,
                hits: b.events.iter().map(|&(e, _, h)| (e.name(), h)).collect(),
                events: b
                    .events
                    .iter()
                    .map(|&(event, records, hits)| CheckEvent {
                        event: event.name(),
                        records,
                        hits,
                    })
                    .collect(),
                lbr: b.lbr,
            };
            self.line(&line)?;
        }
        for v in &report.verdicts {
            self.line(&CheckLine {
                path: file.path,
                progid: v.progid,
                severity: v.severity().as_str(),
                code: v.code.as_str(),
                message: &v.message,
            })?;
        }
        self.line(&CheckSummaryLine {
            path: file.path,
            mode: report.mode.as_str(),
            errors: report.count(Severity::Error) + diagnostics.errors,
            warnings: report.count(Severity::Warning) + diagnostics.warnings,
        })
    }

    fn spd_compare(&mut self, file: &FileInfo<'_>, report: &SpdCompareReport) -> io::Result<()> {
        compare::spd(&mut self.out, file.path, report)
    }

    fn compare(&mut self, file: &FileInfo<'_>, report: &CompareReport) -> io::Result<()> {
        compare::compare(&mut self.out, file.path, report)
    }

    fn ranges_compared(&mut self, file: &FileInfo<'_>, binaries: &[BinaryMoved]) -> io::Result<()> {
        lbr::compared(&mut self.out, file.path, binaries)
    }

    fn matches(&mut self, results: &[MatchResult<'_>], _: &Tables) -> io::Result<()> {
        for r in results {
            let line = match (&r.file.identity, &r.verdict) {
                (Ok(id), Some(v)) => {
                    let mismatch = matches!(
                        v.status,
                        MatchStatus::AgeMismatch | MatchStatus::GuidMismatch
                    );
                    let trace = v.entry.filter(|_| mismatch);
                    MatchLine {
                        path: &self.path,
                        file: &r.file.path,
                        kind: Some(kind_name(id.kind)),
                        guid: Some(registry_form(&id.guid)),
                        age: Some(id.age),
                        status: v.status.as_str(),
                        progid: v.progid,
                        trace_guid: trace.map(|e| e.guid_string()),
                        trace_age: trace.map(|e| e.age),
                        message: None,
                        age_inferred: id.age_inferred(),
                    }
                }
                (identity, _) => MatchLine {
                    path: &self.path,
                    file: &r.file.path,
                    kind: None,
                    guid: None,
                    age: None,
                    status: "error",
                    progid: None,
                    trace_guid: None,
                    trace_age: None,
                    message: identity.as_ref().err().map(ToString::to_string),
                    age_inferred: false,
                },
            };
            write_line(&mut self.out, &line)?;
        }
        Ok(())
    }

    fn validation(&mut self, file: &FileInfo<'_>, tally: Tally, valid: bool) -> io::Result<()> {
        self.line(&ValidationLine {
            path: file.path,
            errors: tally.errors,
            warnings: tally.warnings,
            valid,
        })
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

    fn symbols(&mut self, file: &FileInfo<'_>, found: &BinarySymbols) -> io::Result<()> {
        self.line(&SymbolsLine {
            path: file.path,
            progid: found.progid,
            name: &found.name,
            pdb: found.pdb.as_deref(),
            image: found.image.as_deref(),
            from: found.from.as_deref(),
            fetched: found.fetched,
        })
    }

    fn identities(&mut self, files: &[MatchFile]) -> io::Result<()> {
        for file in files {
            let info = FileInfo {
                path: &file.path,
                size: None,
            };
            let id = match &file.identity {
                Ok(id) => id,
                Err(why) => {
                    self.error(&info, &why.to_string())?;
                    continue;
                }
            };
            self.line(&IdentityLine {
                path: &file.path,
                kind: kind_name(id.kind),
                name: &id.name,
                guid: registry_form(&id.guid),
                age: id.age,
                symkey: id.symkey().to_string(),
                pdb_path: id.pdb_path.as_deref(),
                spd: id.spd.as_ref().map(|spd| SpdKeys {
                    binary: &spd.binary,
                    age_inferred: true,
                    functions: spd.functions,
                    profiled: spd.profiled,
                    version: spd.version,
                }),
            })?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()?;
        self.err.flush()
    }

    fn replay(&mut self, recorded: &Recorded) -> io::Result<()> {
        recorded.replay(&mut self.out, &mut self.err)
    }
}
