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
//! Each line is a small serialize-only struct, kept apart from the decoder's types. Numbers
//! are plain JSON integers, exact above 2^64. Records with an unknown opcode have no line of
//! their own: their `unknown-opcode` diagnostic says all there is.

use std::io::{self, Write};

use serde::Serialize;
use serde::ser::{SerializeSeq, SerializeStruct, Serializer};

use crate::diag::{Diagnostic, Tally};
use crate::header::Header;
use crate::input::Tables;
use crate::print::{FileInfo, Printer};
use crate::record::{Branches, Record, Rvas, SampleKind};
use crate::strtab::StringTable;
use crate::summary::Summary;

/// Writes JSON Lines to `out`; failures to read a file go to `err` as text.
pub struct JsonPrinter<W: Write, E: Write> {
    out: W,
    err: E,
}

impl<W: Write, E: Write> JsonPrinter<W, E> {
    /// A printer writing JSON Lines to `out` and read failures to `err`.
    pub fn new(out: W, err: E) -> Self {
        JsonPrinter { out, err }
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
#[serde(tag = "type", rename = "binary")]
struct BinaryLine {
    offset: u64,
    progid: u16,
    length: u32,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "repeat")]
struct RepeatLine {
    offset: u64,
    count: u64,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "ip")]
struct IpLine<'a> {
    offset: u64,
    event: &'a str,
    progid: Option<u16>,
    hits: u128,
    rvas: RvaList<'a>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "lbr")]
struct LbrLine<'a> {
    offset: u64,
    progid: Option<u16>,
    hits: u128,
    branches: BranchList<'a>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "callstack")]
struct CallstackLine<'a> {
    offset: u64,
    progid: Option<u16>,
    hits: u128,
    frames: RvaList<'a>,
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
#[serde(tag = "type", rename = "validation")]
struct ValidationLine<'a> {
    path: &'a str,
    errors: u64,
    warnings: u64,
}

/// RVAs straight from the record's bytes, as a JSON array.
struct RvaList<'a>(Rvas<'a>);

impl Serialize for RvaList<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for rva in self.0.iter() {
            seq.serialize_element(&rva)?;
        }
        seq.end()
    }
}

/// LBR pairs as `[{"from":..,"to":..}, ...]`.
struct BranchList<'a>(Branches<'a>);

impl Serialize for BranchList<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for b in self.0.iter() {
            seq.serialize_element(&Arc {
                from: b.from,
                to: b.to,
            })?;
        }
        seq.end()
    }
}

/// One `{"from":..,"to":..}`.
struct Arc {
    from: u32,
    to: u32,
}

impl Serialize for Arc {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Arc", 2)?;
        st.serialize_field("from", &self.from)?;
        st.serialize_field("to", &self.to)?;
        st.end()
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

    fn record(&mut self, record: &Record<'_>, _: &Tables) -> io::Result<()> {
        match record {
            Record::BinaryId(b) => self.line(&BinaryLine {
                offset: b.offset,
                progid: b.progid,
                length: b.length,
            }),
            Record::Repeat(r) => self.line(&RepeatLine {
                offset: r.offset,
                count: r.count,
            }),
            Record::Samples(s) => match s.kind() {
                SampleKind::Ip(op) => self.line(&IpLine {
                    offset: s.offset,
                    event: op.name().unwrap_or_default(),
                    progid: s.progid,
                    hits: s.hits,
                    rvas: RvaList(s.rvas()),
                }),
                SampleKind::Lbr => self.line(&LbrLine {
                    offset: s.offset,
                    progid: s.progid,
                    hits: s.hits,
                    branches: BranchList(s.branches()),
                }),
                SampleKind::CallStack => self.line(&CallstackLine {
                    offset: s.offset,
                    progid: s.progid,
                    hits: s.hits,
                    frames: RvaList(s.rvas()),
                }),
            },
            Record::Unknown(_) => Ok(()),
        }
    }

    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        self.line(&DiagnosticLine {
            severity: d.severity().as_str(),
            code: d.code.as_str(),
            offset: d.offset,
            message: &d.message,
        })
    }

    fn summary(&mut self, summary: &Summary, tables: &Tables) -> io::Result<()> {
        for line in summary.json_lines(tables) {
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
