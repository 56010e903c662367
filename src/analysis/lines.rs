//! `/lines`: the hottest source lines, per binary and source (docs/output.md).
//!
//! ```text
//! source          addresses                      attributed to
//! each IP event   the sampled RVAs               the line at the address, and the
//! ETW_CALLSTACK   each stack's leaf frame        innermost function inlined there
//! ```
//!
//! Every distinct address of a binary is looked up once, in its PDB (`/pdb`), whatever
//! source it comes from. An address without a line record is counted under no file, with
//! its function (or itself, in no function). A binary without a PDB has no lines: the
//! report names it instead.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::Serialize;

use crate::analysis::Counted;
use crate::analysis::keys::FrameKey;
use crate::format::record::SampleKind;
use crate::image::lines::SourceLines;

/// The hottest lines of one binary and source.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct LinesTable {
    /// The binary's program ID.
    pub progid: u16,
    /// The binary's name.
    pub name: String,
    /// The source of samples.
    pub source: SampleKind,
    /// The source's hits: what the shares are of.
    pub hits: u128,
    /// How many distinct lines (file, line, function) it has.
    pub unique: usize,
    /// The lines, at most `/top:N` of them, by hits descending, then by file, line and
    /// function.
    pub top: Vec<LineRow>,
}

/// One source line's hits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct LineRow {
    /// The source file, as the PDB records it; `None` without a line record.
    pub file: Option<String>,
    /// The line in that file.
    pub line: Option<u32>,
    /// The innermost function at the line (an inlined one where the compiler inlined), as
    /// keys are named: `binary!function`, or `binary+0x1A2B` in no function.
    pub function: String,
    /// The hits of the addresses compiled from it.
    pub hits: u128,
}

/// What `/lines` found.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct LinesReport {
    /// The tables, in progid order, each binary's sources in output order.
    pub tables: Vec<LinesTable>,
    /// The binaries with samples but no PDB, whose lines cannot be shown.
    pub without_pdb: Vec<String>,
    /// The binaries whose line records could not all be read, and why.
    pub problems: Vec<(String, String)>,
}

/// The sampled addresses of one binary and source, each with its hits.
struct Sampled {
    source: SampleKind,
    hits: Vec<(u32, u128)>,
    total: u128,
}

/// The hottest lines of every binary with a PDB, `top` per source.
pub(crate) fn lines(counted: &Counted<'_>, top: usize) -> LinesReport {
    let mut leaves = leaves(counted);
    let mut progids: Vec<u16> = counted.summary.progids().collect();
    progids.extend(leaves.keys());
    progids.sort_unstable();
    progids.dedup();

    let mut report = LinesReport::default();
    for progid in progids {
        let name = counted.tables.binary_name(progid);
        let Some(symbols) = counted.symbols.get(Some(progid)) else {
            report.without_pdb.push(name);
            continue;
        };
        let mut sampled: Vec<Sampled> = counted
            .summary
            .ip_tables(progid)
            .map(|t| Sampled {
                source: t.source(),
                hits: t.iter().collect(),
                total: t.total(),
            })
            .collect();
        if let Some(leaves) = leaves.remove(&progid) {
            sampled.push(Sampled {
                source: SampleKind::CallStack,
                total: leaves.values().sum(),
                hits: leaves.into_iter().collect(),
            });
        }
        let addresses: FxHashSet<u32> = sampled
            .iter()
            .flat_map(|s| s.hits.iter().map(|&(rva, _)| rva))
            .collect();
        let lines = SourceLines::read(symbols, addresses);
        if let Some(problem) = lines.problem() {
            report.problems.push((name.clone(), problem.to_owned()));
        }
        for s in sampled {
            let table = table(progid, &name, s, top, |rva| {
                match lines.chain(rva).and_then(|mut c| c.next()) {
                    Some(frame) => (
                        frame.file.map(str::to_owned),
                        frame.line,
                        format!("{name}!{}", frame.function),
                    ),
                    None => (
                        None,
                        None,
                        FrameKey::of(Some(symbols), rva, false).name(&name),
                    ),
                }
            });
            report.tables.push(table);
        }
    }
    report
}

/// A source's hits by line, `place` giving each address's (file, line, function).
fn table(
    progid: u16,
    name: &str,
    sampled: Sampled,
    top: usize,
    place: impl Fn(u32) -> (Option<String>, Option<u32>, String),
) -> LinesTable {
    let mut by_line: BTreeMap<(Option<String>, Option<u32>, String), u128> = BTreeMap::new();
    for (rva, h) in sampled.hits {
        *by_line.entry(place(rva)).or_default() += h;
    }
    let unique = by_line.len();
    let mut rows: Vec<LineRow> = by_line
        .into_iter()
        .map(|((file, line, function), hits)| LineRow {
            file,
            line,
            function,
            hits,
        })
        .collect();
    // Stable: equal hits stay in (file, line, function) order.
    rows.sort_by_key(|r| Reverse(r.hits));
    rows.truncate(top);
    LinesTable {
        progid,
        name: name.to_owned(),
        source: sampled.source,
        hits: sampled.total,
        unique,
        top: rows,
    }
}

/// The hits of each call stack's leaf frame, per binary and address.
fn leaves(counted: &Counted<'_>) -> BTreeMap<u16, FxHashMap<u32, u128>> {
    let mut leaves: BTreeMap<u16, FxHashMap<u32, u128>> = BTreeMap::new();
    counted.stacks.for_each(|progid, frames, hits| {
        if let Some(&leaf) = frames.get(counted.order.leaf(frames.len())) {
            *leaves.entry(progid).or_default().entry(leaf).or_default() += hits;
        }
    });
    leaves
}
