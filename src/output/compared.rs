//! How two profiles differ (`/compare`): how NEW's samples differ from BASE's, per binary
//! and source, and the keys that moved; a trace's functions beside an SPD's
//! (`/compare TRACE SPD`).
//!
//! ```text
//! Compared with NEW new.spt (BASE base.spt)       {"type":"compare","path":"new.spt",...}
//!   binary  source        base  new  counted  overlap  coverage
//! trace.spt beside the SPD app.spd: progid 0 ...  {"type":"compare_spd",...}
//! ```

use std::io::{self, Write};

use serde::Serialize;

use super::text::clean;
use super::text::tables::{columns, of, plural, showing};
use super::{FileInfo, Json, Render, Reported, Text};
use crate::analysis::compare::{CompareReport, Comparison, FunctionsCompared};
use crate::analysis::spd::compare::SpdCompareReport;
use crate::analysis::summary::counted;

/// How NEW differs from BASE.
pub struct Compared<'a> {
    /// NEW.
    pub file: &'a FileInfo<'a>,
    /// How it differs.
    pub report: &'a CompareReport,
}

/// A trace's binary beside the SPD of its build.
pub struct SpdCompared<'a> {
    /// The trace.
    pub file: &'a FileInfo<'a>,
    /// The binary's function shares beside the SPD's.
    pub report: &'a SpdCompareReport,
}

impl Render for Compared<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let (file, report) = (self.file, self.report);

        let base = if report.base == "-" {
            "standard input"
        } else {
            &report.base
        };
        t.section(format_args!(
            "Compared with NEW {} (BASE {})",
            clean(&file.label()),
            clean(base)
        ))?;
        let name_w = report
            .comparisons
            .iter()
            .map(|c| c.name.chars().count())
            .max()
            .unwrap_or(0)
            .max("binary".len());
        let hits_w = |f: fn(&Comparison) -> u128, title: &str| {
            report
                .comparisons
                .iter()
                .map(|c| f(c).to_string().len())
                .max()
                .unwrap_or(0)
                .max(title.len())
        };
        let (bw, nw) = (
            hits_w(|c| c.base_hits, "base"),
            hits_w(|c| c.new_hits, "new"),
        );
        // The totals count what /summary counts per source: samples, branches or arcs.
        if !report.comparisons.is_empty() {
            writeln!(
                t,
                "  {:<name_w$}  {:<15}  {:>bw$}  {:>nw$}  {:<8}  {:>7}  {:>8}",
                "binary", "source", "base", "new", "counted", "overlap", "coverage"
            )?;
        }
        for c in &report.comparisons {
            writeln!(
                t,
                "  {:<name_w$}  {:<15}  {:>bw$}  {:>nw$}  {:<8}  {:>7}  {:>8}",
                clean(&c.name),
                c.source,
                c.base_hits,
                c.new_hits,
                counted(c.source),
                format!("{:.1}%", c.overlap * 100.0),
                format!("{:.1}%", c.coverage * 100.0)
            )?;
        }
        for c in report.comparisons.iter().filter(|c| !c.missing.is_empty()) {
            more_in_new(t, c)?;
        }
        for f in &report.functions {
            moved(t, f)?;
        }
        for o in &report.only_in {
            writeln!(t, "  {}: only in {}", clean(&o.name), o.only_in)?;
        }
        Ok(())
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        compare_json(j, self.file.path, self.report)
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::Compare(self.report.clone()))
    }
}

impl Render for SpdCompared<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        spd_text(t, self.file, self.report)
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        spd_json(j, self.file.path, self.report)
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::SpdCompare(self.report.clone()))
    }
}

/// `/compare`: the keys NEW samples more than BASE, of one binary and source.
fn more_in_new(o: &mut impl Write, c: &Comparison) -> io::Result<()> {
    let shown = of(c.missing.len(), c.more_in_new);
    writeln!(
        o,
        "  {} {}: what NEW samples more than BASE{shown}",
        clean(&c.name),
        c.source
    )?;
    writeln!(o, "      base      new  key")?;
    for m in &c.missing {
        writeln!(
            o,
            "    {:>6}  {:>7}  {}",
            format!("{:.2}%", m.base_share * 100.0),
            format!("{:.2}%", m.new_share * 100.0),
            clean(&m.key)
        )?;
    }
    Ok(())
}

/// `/compare /functions`: the keys of one binary whose inclusive share moved most.
fn moved(o: &mut impl Write, f: &FunctionsCompared) -> io::Result<()> {
    writeln!(
        o,
        "  {} {}: the keys whose inclusive share moved most",
        clean(&f.name),
        f.source
    )?;
    writeln!(
        o,
        "    {:>9}  {:>9}  {:>9}  {:>9}  {:>8}  key",
        "base incl", "new incl", "base excl", "new excl", "delta"
    )?;
    let pct = |v: f64| format!("{:.2}%", v * 100.0);
    for k in &f.keys {
        writeln!(
            o,
            "    {:>9}  {:>9}  {:>9}  {:>9}  {:>8}  {}",
            pct(k.base_inclusive),
            pct(k.new_inclusive),
            pct(k.base_exclusive),
            pct(k.new_exclusive),
            format!("{:+.2}%", k.delta * 100.0),
            clean(&k.key)
        )?;
    }
    Ok(())
}

/// A share as a percentage with two decimals.
fn pct(share: f64) -> String {
    format!("{:.2}%", 100.0 * share)
}

/// The table of `/compare TRACE SPD`, the legend of its marks under it.
fn spd_text(t: &mut Text<'_>, file: &FileInfo<'_>, r: &SpdCompareReport) -> io::Result<()> {
    let o = t.block()?;
    writeln!(
        o,
        "{} beside the SPD {}: progid {} ({}), {} IP sample{} ({} in no function); the SPD: {} \
         entries, {} dynamic instructions*; {} function{}{}",
        clean(&file.label()),
        clean(&r.spd),
        r.progid,
        clean(&r.binary),
        r.trace_total,
        plural(r.trace_total),
        r.unnamed,
        r.entry_total,
        r.dyninst_total,
        r.functions,
        plural(r.functions as u128),
        showing(r.rows.len(), r.functions),
    )?;
    let or_dash = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    let rows: Vec<[String; 7]> = r
        .rows
        .iter()
        .map(|row| {
            [
                row.trace_samples.to_string(),
                pct(row.trace_share),
                or_dash(row.spd_entry),
                pct(row.spd_entry_share),
                or_dash(row.spd_dyninst),
                pct(row.spd_dyninst_share),
                clean(&row.function).into_owned(),
            ]
        })
        .collect();
    let headings = [
        "samples", "trace%", "entries", "entry%", "dyninst*", "dyninst%", "function",
    ];
    columns(o, headings, &rows)?;
    writeln!(
        o,
        "  * inferred: the sum of block count x instructions, our estimate; - no record in \
         the SPD"
    )
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "compare")]
struct CompareLine<'a> {
    path: &'a str,
    /// BASE's path (`path` is NEW's, as on every line about NEW).
    base: &'a str,
    /// NEW's path, the same as `path`.
    new: &'a str,
    name: &'a str,
    source: &'a str,
    base_hits: u128,
    new_hits: u128,
    /// What `base_hits` and `new_hits` count: `samples`, `branches` or `arcs`.
    counted: &'static str,
    overlap: f64,
    coverage: f64,
    missing: Vec<MissingKey<'a>>,
    /// The same as `missing`, named for what it is: the keys NEW samples more than BASE.
    more_in_new: Vec<MissingKey<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "compare_function")]
struct CompareFunctionLine<'a> {
    path: &'a str,
    name: &'a str,
    source: &'a str,
    key: &'a str,
    base_inclusive: f64,
    new_inclusive: f64,
    base_exclusive: f64,
    new_exclusive: f64,
    delta: f64,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "compare_spd")]
struct SpdCompareLine<'a> {
    path: &'a str,
    spd: &'a str,
    progid: u16,
    name: &'a str,
    function: &'a str,
    rva: Option<u32>,
    hash: Option<String>,
    trace_samples: u128,
    trace_share: f64,
    spd_entry: Option<u64>,
    spd_entry_share: f64,
    spd_dyninst: Option<u64>,
    spd_dyninst_share: f64,
    dyninst_inferred: bool,
}

#[derive(Clone, Serialize)]
struct MissingKey<'a> {
    key: &'a str,
    base_share: f64,
    new_share: f64,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "compare_binary")]
struct CompareBinaryLine<'a> {
    path: &'a str,
    name: &'a str,
    only_in: &'a str,
}

/// A `compare_spd` line per row of `/compare TRACE SPD`.
fn spd_json(j: &mut Json<'_>, path: &str, report: &SpdCompareReport) -> io::Result<()> {
    for row in &report.rows {
        j.line(&SpdCompareLine {
            path,
            spd: &report.spd,
            progid: report.progid,
            name: &report.binary,
            function: &row.function,
            rva: row.rva,
            hash: row.hash.map(|h| format!("{h:016X}")),
            trace_samples: row.trace_samples,
            trace_share: row.trace_share,
            spd_entry: row.spd_entry,
            spd_entry_share: row.spd_entry_share,
            spd_dyninst: row.spd_dyninst,
            spd_dyninst_share: row.spd_dyninst_share,
            dyninst_inferred: true,
        })?;
    }
    Ok(())
}

/// How NEW differs from BASE: a `compare` line per pair and source, `compare_function`
/// lines for the keys that moved, a `compare_binary` line per binary in one trace only.
fn compare_json(j: &mut Json<'_>, path: &str, report: &CompareReport) -> io::Result<()> {
    for c in &report.comparisons {
        let missing: Vec<MissingKey<'_>> = c
            .missing
            .iter()
            .map(|m| MissingKey {
                key: &m.key,
                base_share: m.base_share,
                new_share: m.new_share,
            })
            .collect();
        j.line(&CompareLine {
            path,
            base: &report.base,
            new: path,
            name: &c.name,
            source: c.source.name(),
            base_hits: c.base_hits,
            new_hits: c.new_hits,
            counted: counted(c.source),
            overlap: c.overlap,
            coverage: c.coverage,
            more_in_new: missing.clone(),
            missing,
        })?;
    }
    for f in &report.functions {
        for k in &f.keys {
            j.line(&CompareFunctionLine {
                path,
                name: &f.name,
                source: f.source,
                key: &k.key,
                base_inclusive: k.base_inclusive,
                new_inclusive: k.new_inclusive,
                base_exclusive: k.base_exclusive,
                new_exclusive: k.new_exclusive,
                delta: k.delta,
            })?;
        }
    }
    for o in &report.only_in {
        j.line(&CompareBinaryLine {
            path,
            name: &o.name,
            only_in: o.only_in,
        })?;
    }
    Ok(())
}
