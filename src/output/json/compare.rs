//! The JSON lines of `/compare`: `compare`, `compare_function` and `compare_binary` for
//! two traces, `compare_spd` for a trace beside an SPD.

use std::io::{self, Write};

use serde::Serialize;

use super::line::write_line;
use crate::analysis::compare::CompareReport;
use crate::analysis::spdcompare::SpdCompareReport;
use crate::analysis::summary::counted;

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
pub(super) fn spd(out: &mut impl Write, path: &str, report: &SpdCompareReport) -> io::Result<()> {
    for row in &report.rows {
        write_line(
            out,
            &SpdCompareLine {
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
            },
        )?;
    }
    Ok(())
}

/// How NEW differs from BASE: a `compare` line per pair and source, `compare_function`
/// lines for the keys that moved, a `compare_binary` line per binary in one trace only.
pub(super) fn compare(out: &mut impl Write, path: &str, report: &CompareReport) -> io::Result<()> {
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
        write_line(
            out,
            &CompareLine {
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
            },
        )?;
    }
    for f in &report.functions {
        for k in &f.keys {
            write_line(
                out,
                &CompareFunctionLine {
                    path,
                    name: &f.name,
                    source: f.source,
                    key: &k.key,
                    base_inclusive: k.base_inclusive,
                    new_inclusive: k.new_inclusive,
                    base_exclusive: k.base_exclusive,
                    new_exclusive: k.new_exclusive,
                    delta: k.delta,
                },
            )?;
        }
    }
    for o in &report.only_in {
        write_line(
            out,
            &CompareBinaryLine {
                path,
                name: &o.name,
                only_in: o.only_in,
            },
        )?;
    }
    Ok(())
}
