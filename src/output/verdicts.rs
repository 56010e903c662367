//! The verdicts on a trace, after its views: `/match` (does each file fit a program ID?),
//! `/check` (is the trace fit for SPDConvert?) and `/validate` (is it well formed?); and
//! who the files given are: the identities of `/match` without a trace, and what the
//! symbol path found for a binary.
//!
//! ```text
//! Matches against the program IDs        {"type":"match","path":...,"file":...,"status":"match",...}
//!   app.pdb  PDB  {GUID}  age 1  match  progid 0 (app.exe)
//! Check of trace.spt for SPDConvert      {"type":"check_binary",...} {"type":"check",...}
//!   warning[no-lbr] ...                  {"type":"check_summary","mode":"LBR",...}
//! trace.spt: use SPDConvert /mode:LBR (0 errors, 1 warning)
//! trace.spt: valid (0 errors, 0 warnings) {"type":"validation","path":...,"valid":true}
//! ```

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::text::{clean, name_text};
use super::{FileInfo, Json, Render, Reported, Text};
use crate::analysis::check::CheckReport;
use crate::format::diag::{Severity, Tally};
use crate::format::progid::registry_form;
use crate::format::tables::Tables;
use crate::image::ident::{Identity, Kind};
use crate::image::matching::{MatchFile, MatchResult, MatchStatus};
use crate::image::symstore::BinarySymbols;

/// The verdict of each `/match` file on a trace's program IDs.
pub struct Matched<'a> {
    /// One per file.
    pub results: &'a [MatchResult<'a>],
    /// The trace's binaries.
    pub tables: &'a Tables,
}

/// The check of `/check`: each binary's counts, the verdicts and the SPDConvert mode, with
/// the format diagnostics found (which count in the closing line).
pub struct Checked<'a> {
    /// The trace.
    pub file: &'a FileInfo<'a>,
    /// What the check found.
    pub report: &'a CheckReport,
    /// The trace's diagnostics.
    pub diagnostics: Tally,
}

/// The verdict of `/validate`: the diagnostics found, and whether they pass (with `/strict`,
/// warnings do not).
pub struct Validated<'a> {
    /// The trace.
    pub file: &'a FileInfo<'a>,
    /// Its diagnostics.
    pub tally: Tally,
    /// Whether it passes.
    pub valid: bool,
}

/// What the symbol path (`/symbols`) gave a binary.
pub struct Found<'a> {
    /// The trace.
    pub file: &'a FileInfo<'a>,
    /// The binary's PDB and image, and where they came from.
    pub found: &'a BinarySymbols,
}

/// The identities of images, PDBs and SPDs given to `/match` without a trace.
pub struct Identities<'a>(pub &'a [MatchFile]);

impl Render for Matched<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        if t.banner {
            t.section(format_args!("Matches against the program IDs"))?;
        }
        let rows: Vec<[String; 5]> = self
            .results
            .iter()
            .map(|r| match_row(r, self.tables))
            .collect();
        let mut widths = [0; 5];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        for (result, row) in self.results.iter().zip(&rows) {
            if t.banner {
                t.write_all(b"  ")?;
            } else {
                // Under /validate each line names the trace, like the verdicts.
                let label = t.label;
                write!(t, "{label}: ")?;
            }
            let line = if result.verdict.is_some() {
                let [file, kind, guid, age, status] = row;
                format!(
                    "{file:<w0$}  {kind:<w1$}  {guid:<w2$}  {age:<w3$}  {status}",
                    w0 = widths[0],
                    w1 = widths[1],
                    w2 = widths[2],
                    w3 = widths[3],
                )
            } else {
                format!("{:<w0$}  {}", row[0], row[4], w0 = widths[0])
            };
            writeln!(t, "{}", line.trim_end())?;
        }
        Ok(())
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for r in self.results {
            let line = match (&r.file.identity, &r.verdict) {
                (Ok(id), Some(v)) => {
                    let mismatch = matches!(
                        v.status,
                        MatchStatus::AgeMismatch | MatchStatus::GuidMismatch
                    );
                    let trace = v.entry.filter(|_| mismatch);
                    MatchLine {
                        path: j.path,
                        file: &r.file.path,
                        kind: Some(json_kind(id.kind)),
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
                    path: j.path,
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
            j.line(&line)?;
        }
        Ok(())
    }
}

impl Render for Checked<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let (file, report, diagnostics) = (self.file, self.report, self.diagnostics);
        t.section(format_args!(
            "Check of {} for SPDConvert",
            clean(&file.label())
        ))?;
        for b in &report.binaries {
            writeln!(
                t,
                "  progid {} ({}): {} sample record{}{}",
                b.progid,
                clean(&b.name),
                b.records,
                if b.records == 1 { "" } else { "s" },
                if b.lbr { "" } else { ", no LBR" }
            )?;
            let width = b.events.iter().map(|e| e.0.name().len()).max().unwrap_or(0);
            for (event, records, hits) in &b.events {
                writeln!(
                    t,
                    "    {:<width$}  {records} record{}, {hits} hit{}",
                    event.name(),
                    if *records == 1 { "" } else { "s" },
                    if *hits == 1 { "" } else { "s" }
                )?;
            }
        }
        for v in &report.verdicts {
            let progid = v.progid.map_or(String::new(), |p| format!(" progid {p}"));
            writeln!(
                t,
                "  {}[{}]{progid}: {}",
                v.severity(),
                v.code,
                clean(&v.message)
            )?;
        }
        let errors = report.count(Severity::Error) + diagnostics.errors;
        let warnings = report.count(Severity::Warning) + diagnostics.warnings;
        let verdict = match report.mode.as_str() {
            Some(mode) => format!("use SPDConvert /mode:{mode}"),
            None => "no SPDConvert mode: the trace is not usable".to_owned(),
        };
        writeln!(
            t,
            "{}: {verdict} ({errors} error{}, {warnings} warning{})",
            file.label(),
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" }
        )
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        let (file, report, diagnostics) = (self.file, self.report, self.diagnostics);
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
            j.line(&line)?;
        }
        for v in &report.verdicts {
            j.line(&CheckLine {
                path: file.path,
                progid: v.progid,
                severity: v.severity().as_str(),
                code: v.code.as_str(),
                message: &v.message,
            })?;
        }
        j.line(&CheckSummaryLine {
            path: file.path,
            mode: report.mode.as_str(),
            errors: report.count(Severity::Error) + diagnostics.errors,
            warnings: report.count(Severity::Warning) + diagnostics.warnings,
        })
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::Check(self.report.clone()))
    }
}

impl Render for Validated<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let (tally, valid) = (self.tally, self.valid);
        let verdict = if valid { "valid" } else { "INVALID" };
        let strict = if !valid && tally.errors == 0 {
            "; /strict fails warnings"
        } else {
            ""
        };
        writeln!(
            t,
            "{}: {verdict} ({} error{}, {} warning{}{strict})",
            self.file.label(),
            tally.errors,
            if tally.errors == 1 { "" } else { "s" },
            tally.warnings,
            if tally.warnings == 1 { "" } else { "s" }
        )
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        j.line(&ValidationLine {
            path: self.file.path,
            errors: self.tally.errors,
            warnings: self.tally.warnings,
            valid: self.valid,
        })
    }
}

impl Render for Found<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let found = self.found;
        let what = [("", &found.pdb), ("image ", &found.image)]
            .into_iter()
            .filter_map(|(kind, f)| f.as_ref().map(|f| format!("{kind}{f}")))
            .collect::<Vec<_>>()
            .join(", ");
        let from = found.from.as_deref().unwrap_or("?");
        let copied = if found.fetched {
            " (fetched this run)"
        } else {
            ""
        };
        writeln!(
            t,
            "Symbols of progid {} ({}): {what} from {from}{copied}",
            found.progid, found.name
        )
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        let found = self.found;
        j.line(&SymbolsLine {
            path: self.file.path,
            progid: found.progid,
            name: &found.name,
            pdb: found.pdb.as_deref(),
            image: found.image.as_deref(),
            from: found.from.as_deref(),
            fetched: found.fetched,
        })
    }
}

impl Render for Identities<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let files = self.0;
        let rows: Vec<[String; 6]> = files
            .iter()
            .filter_map(|f| {
                let id = f.identity.as_ref().ok()?;
                Some([
                    clean(&f.path).into_owned(),
                    text_kind(id.kind).to_owned(),
                    format!("{{{}}}", registry_form(&id.guid)),
                    age(id),
                    format!("key {}", id.symkey()),
                    identity_more(id),
                ])
            })
            .collect();
        let mut widths = [0; 6];
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut rows = rows.into_iter();
        for file in files {
            match &file.identity {
                Ok(_) => {
                    let row = rows.next().expect("a row per identity");
                    let mut line = String::new();
                    for (cell, w) in row.iter().zip(widths) {
                        line.push_str(&format!("{cell:<w$}  "));
                    }
                    writeln!(t, "{}", line.trim_end())?;
                }
                Err(why) => {
                    let info = FileInfo::new(&file.path, None);
                    t.error(&info.label(), &why.to_string())?;
                }
            }
        }
        Ok(())
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for file in self.0 {
            let info = FileInfo::new(&file.path, None);
            let id = match &file.identity {
                Ok(id) => id,
                Err(why) => {
                    j.message("error", &info, &why.to_string())?;
                    continue;
                }
            };
            j.line(&IdentityLine {
                path: &file.path,
                kind: json_kind(id.kind),
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
}

/// The cells of a `/match` line: file, kind, GUID, age, then the verdict and what it
/// concerns.
pub(crate) fn match_row(r: &MatchResult<'_>, tables: &Tables) -> [String; 5] {
    let file = clean(&r.file.path).into_owned();
    let (Ok(id), Some(v)) = (&r.file.identity, &r.verdict) else {
        let why = r.file.identity.as_ref().err().map(ToString::to_string);
        let why = why.unwrap_or_default();
        return [
            file,
            String::new(),
            String::new(),
            String::new(),
            format!("error: {why}"),
        ];
    };
    let progid = |p: u16| match tables.name(p) {
        Some(name) => format!("progid {p} ({})", name_text(name)),
        None => format!("progid {p}"),
    };
    let verdict = match (v.status, v.progid, v.entry) {
        (MatchStatus::Match, Some(p), _) => format!("match          {}", progid(p)),
        (MatchStatus::AgeMismatch, Some(p), Some(e)) if id.age_inferred() => format!(
            "age-mismatch   {} has age {} (the SPD's age is inferred: see docs/format.md)",
            progid(p),
            e.age
        ),
        (MatchStatus::AgeMismatch, Some(p), Some(e)) => {
            format!("age-mismatch   {} has age {}", progid(p), e.age)
        }
        (MatchStatus::GuidMismatch, Some(p), Some(e)) => format!(
            "guid-mismatch  {} is {{{}}} age {}",
            progid(p),
            e.guid_string(),
            e.age
        ),
        (status, ..) => status.to_string(),
    };
    [
        file,
        text_kind(id.kind).to_owned(),
        format!("{{{}}}", registry_form(&id.guid)),
        age(id),
        verdict,
    ]
}

/// `age 1`, and for an SPD, whose age is inferred, `age 1 (inferred)`.
fn age(id: &Identity) -> String {
    match id.age_inferred() {
        true => format!("age {} (inferred)", id.age),
        false => format!("age {}", id.age),
    }
}

/// The last cell of an identity's row: the PDB an image names, or what an SPD holds.
fn identity_more(id: &Identity) -> String {
    match (&id.spd, &id.pdb_path) {
        (Some(spd), _) => {
            let version = match spd.new_version() {
                true => format!("  (SPD version {:#X}, not seen before)", spd.version),
                false => String::new(),
            };
            format!(
                "binary {}  {} function{}  {}{version}",
                clean(&spd.binary),
                spd.functions,
                if spd.functions == 1 { "" } else { "s" },
                if spd.profiled {
                    "profiled"
                } else {
                    "not yet profiled"
                }
            )
        }
        (None, Some(pdb)) => format!("pdb {}", clean(pdb)),
        (None, None) => String::new(),
    }
}

/// How text names the kind of an image, PDB or SPD.
fn text_kind(kind: Kind) -> &'static str {
    match kind {
        Kind::Pe => "PE",
        Kind::Pdb => "PDB",
        _ => "SPD",
    }
}

/// How a `match` or `identity` line names the kind of file.
fn json_kind(kind: Kind) -> &'static str {
    match kind {
        Kind::Pe => "pe",
        Kind::Pdb => "pdb",
        _ => "spd",
    }
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
#[serde(tag = "type", rename = "check_binary")]
struct CheckBinaryLine<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    records: u64,
    hits: BTreeMap<&'a str, u128>,
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

#[derive(Serialize)]
struct SpdKeys<'a> {
    binary: &'a str,
    age_inferred: bool,
    functions: u32,
    profiled: bool,
    version: u32,
}
