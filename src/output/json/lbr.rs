//! The JSON lines of the LBR views read as ranges: `lbr_ranges` per binary, then
//! `coverage` (`/coverage`) and `dyninst` (`/dyninst`) per function, `annotate`
//! (`/annotate`) per instruction.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::line::write_line;
use crate::analysis::annotate::AnnotateReport;
use crate::analysis::rangediff::BinaryMoved;
use crate::analysis::ranges::{BinaryRanges, FunctionRun, RangeReport};
use crate::analysis::share;

#[derive(Serialize)]
#[serde(tag = "type", rename = "lbr_ranges")]
struct RangesLine<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    order: Option<&'static str>,
    ranges: u128,
    consistent: u128,
    newest_first: u128,
    oldest_first: u128,
    records: u64,
    functions: usize,
    blocks: u64,
    covered: u64,
    instructions: u128,
    missing: &'a [String],
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "coverage")]
struct CoverageLine<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    function: &'a str,
    rva: u32,
    blocks: u32,
    covered: u32,
    instructions: u128,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "dyninst")]
struct DyninstLine<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    function: &'a str,
    rva: u32,
    instructions: u128,
    share: f64,
}

/// An `lbr_ranges` line per binary with LBR records.
pub(super) fn ranges(out: &mut impl Write, path: &str, report: &RangeReport) -> io::Result<()> {
    for b in &report.binaries {
        let (blocks, covered) = b.blocks();
        let line = RangesLine {
            path,
            progid: b.progid,
            name: &b.name,
            order: b.order.map(|o| o.name()),
            ranges: b.ranges,
            consistent: b.consistent_used(),
            newest_first: b.consistent[0],
            oldest_first: b.consistent[1],
            records: b.records,
            functions: b.functions.len(),
            blocks,
            covered,
            instructions: b.instructions,
            missing: &b.missing,
        };
        write_line(out, &line)?;
    }
    Ok(())
}

/// A `coverage` line per function with a count, `top` per binary.
pub(super) fn coverage(
    out: &mut impl Write,
    path: &str,
    report: &RangeReport,
    top: usize,
) -> io::Result<()> {
    for (b, f) in functions(report, top) {
        let line = CoverageLine {
            path,
            progid: b.progid,
            name: &b.name,
            function: &f.name,
            rva: f.rva,
            blocks: f.blocks,
            covered: f.covered,
            instructions: f.instructions,
        };
        write_line(out, &line)?;
    }
    Ok(())
}

/// A `dyninst` line per function, `n` per binary, the most instructions first.
pub(super) fn dyninst(
    out: &mut impl Write,
    path: &str,
    report: &RangeReport,
    n: usize,
) -> io::Result<()> {
    for (b, f) in functions(report, n) {
        let line = DyninstLine {
            path,
            progid: b.progid,
            name: &b.name,
            function: &f.name,
            rva: f.rva,
            instructions: f.instructions,
            share: share(f.instructions, b.instructions),
        };
        write_line(out, &line)?;
    }
    Ok(())
}

/// The first `n` functions of each binary, with their binary.
fn functions(
    report: &RangeReport,
    n: usize,
) -> impl Iterator<Item = (&BinaryRanges, &FunctionRun)> {
    report
        .binaries
        .iter()
        .flat_map(move |b| b.functions.iter().take(n).map(move |f| (b, f)))
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "annotate")]
struct AnnotateLine<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    function: &'a str,
    rva: u32,
    text: &'a str,
    count: u128,
    taken: u128,
    fall_through: Option<u128>,
    ip: BTreeMap<&'static str, u128>,
    file: Option<&'a str>,
    line: Option<u32>,
    inlined: Option<&'a str>,
    source: Option<&'a str>,
}

/// An `annotate` line per instruction of each function annotated.
pub(super) fn annotate(
    out: &mut impl Write,
    path: &str,
    report: &AnnotateReport,
) -> io::Result<()> {
    for f in &report.functions {
        for r in &f.rows {
            let line = AnnotateLine {
                path,
                progid: f.progid,
                name: &f.name,
                function: &f.function,
                rva: r.rva,
                text: &r.text,
                count: r.count,
                taken: r.taken,
                fall_through: r.conditional.then(|| r.fall_through()),
                ip: f
                    .events
                    .iter()
                    .map(|e| e.name())
                    .zip(r.ip.iter().copied())
                    .collect(),
                file: r.file.as_deref(),
                line: r.line,
                inlined: r.inlined.as_deref(),
                source: r.source.as_deref(),
            };
            write_line(out, &line)?;
        }
    }
    Ok(())
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "compare_lbr")]
struct ComparedLine<'a> {
    path: &'a str,
    name: &'a str,
    base_order: Option<&'static str>,
    new_order: Option<&'static str>,
    base_instructions: u128,
    new_instructions: u128,
    base_blocks: u64,
    new_blocks: u64,
    base_covered: u64,
    new_covered: u64,
    functions: usize,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "compare_lbr_function")]
struct MovedLine<'a> {
    path: &'a str,
    name: &'a str,
    function: &'a str,
    base_instructions: u128,
    new_instructions: u128,
    base_share: f64,
    new_share: f64,
    delta: f64,
    base_blocks: u32,
    new_blocks: u32,
    base_covered: u32,
    new_covered: u32,
}

/// `/compare` with `/coverage` or `/dyninst`: a `compare_lbr` line per binary of both
/// traces, then a `compare_lbr_function` line per function whose share moved most.
pub(super) fn compared(
    out: &mut impl Write,
    path: &str,
    binaries: &[BinaryMoved],
) -> io::Result<()> {
    for b in binaries {
        let line = ComparedLine {
            path,
            name: &b.name,
            base_order: b.order[0].map(|o| o.name()),
            new_order: b.order[1].map(|o| o.name()),
            base_instructions: b.instructions[0],
            new_instructions: b.instructions[1],
            base_blocks: b.blocks[0],
            new_blocks: b.blocks[1],
            base_covered: b.covered[0],
            new_covered: b.covered[1],
            functions: b.ran,
        };
        write_line(out, &line)?;
        for f in &b.functions {
            let line = MovedLine {
                path,
                name: &b.name,
                function: &f.name,
                base_instructions: f.instructions[0],
                new_instructions: f.instructions[1],
                base_share: f.share[0],
                new_share: f.share[1],
                delta: f.delta(),
                base_blocks: f.blocks[0],
                new_blocks: f.blocks[1],
                base_covered: f.covered[0],
                new_covered: f.covered[1],
            };
            write_line(out, &line)?;
        }
    }
    Ok(())
}
