//! What the LBR views (`/coverage`, `/dyninst`, `/annotate`) share: how each binary's LBR
//! records were read as ranges, said once before the first of them, and under `/compare`
//! what each trace's ranges give, set side by side.
//!
//! ```text
//! LBR ranges of progid 0 (lbr.exe): newest-first, 6000 of 6000 ranges consistent (100.00%), 400 records
//! {"type":"lbr_ranges","path":...,"order":"newest-first","ranges":6000,"consistent":6000,...}
//! ```

use std::io::{self, Write};

use serde::Serialize;

use super::compared::Both;
use super::profile::Profile;
use crate::analysis::lbr::rangediff::{self, BinaryMoved};
use crate::analysis::lbr::ranges::{self, BinaryRanges, Order, RangeReport};
use crate::format::error::Error;
use crate::output::text::clean;
use crate::output::text::tables::{columns, plural, showing};
use crate::output::{FileInfo, Json, Out, Printer, Render, Text, percent};

/// How each binary's LBR records were read as ranges: the order used and the share of
/// consistent ranges, or that neither order was (binaries missing a file are told in a
/// note).
pub(super) struct RangesRead<'a>(pub &'a RangeReport);

/// Says how the LBR records of each binary were read as ranges, before the first view of
/// them, and why a binary's could not be; once per profile. The ranges, when read.
pub(crate) fn shown<'p, P: Printer>(
    profile: &'p mut Profile<'_>,
    out: &mut Out<'_, P>,
) -> Result<Option<&'p RangeReport>, Error> {
    let Some(report) = &profile.ranges else {
        return Ok(None);
    };
    if std::mem::replace(&mut profile.ranges_shown, true) {
        return Ok(Some(report));
    }
    let file = profile.file;
    out.print(|p| p.show(&RangesRead(report)))?;
    // When no binary's could be read for an input missing, the views say so ([`unable`]).
    let some_read = !unread(report);
    for b in &report.binaries {
        for why in b.missing.iter().filter(|_| some_read) {
            let message = format!("{}: {why}", b.name);
            out.print(|p| p.note(file, &message))?;
        }
        if b.missing.is_empty() && b.order.is_none() {
            let message = format!(
                "{}: lbr-order-unknown: of {} ranges, {} are consistent newest first and {} oldest \
                 first; neither reaches {}%, so no range is used",
                b.name,
                b.ranges,
                b.consistent[0],
                b.consistent[1],
                (ranges::ORDER_THRESHOLD * 100.0) as u32,
            );
            out.print(|p| p.note(file, &message))?;
        }
    }
    Ok(Some(report))
}

/// Whether every binary of `report` missed an input its ranges are read with (its PDB, its
/// image, a machine decoded): then no view of the ranges can run.
pub(super) fn unread(report: &RangeReport) -> bool {
    report.binaries.iter().all(|b| !b.missing.is_empty())
}

/// Says why the LBR view `/option` cannot run, if it cannot: the profile of `file` holds
/// no LBR records (`report` is `None`: a note, as no input given would change that), or
/// each binary's were left unread for an input missing (kept, per binary, to be said once
/// the views are done). Whether it cannot.
pub(super) fn unable<P: Printer>(
    option: &str,
    (file, report): (&FileInfo<'_>, Option<&RangeReport>),
    out: &mut Out<'_, P>,
) -> Result<bool, Error> {
    let Some(report) = report.filter(|r| !r.binaries.is_empty()) else {
        let message =
            format!("/{option}: the profile holds no LBR records, which the ranges are read from");
        out.print(|p| p.note(file, &message))?;
        return Ok(true);
    };
    if !unread(report) {
        return Ok(false);
    }
    for b in &report.binaries {
        for why in &b.missing {
            out.unable(format!("/{option}: {}: {why}", b.name));
        }
    }
    Ok(true)
}

/// The binaries whose ranges were read under an order.
pub(crate) fn read(report: &RangeReport) -> impl Iterator<Item = &BinaryRanges> {
    report.binaries.iter().filter(|b| b.order.is_some())
}

impl Render for RangesRead<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        for b in self.0.binaries.iter().filter(|b| b.missing.is_empty()) {
            let o = t.block()?;
            write!(
                o,
                "LBR ranges of progid {} ({}): ",
                b.progid,
                clean(&b.name)
            )?;
            let records = format!("{} record{}", b.records, plural(b.records));
            match b.order {
                Some(order) => writeln!(
                    o,
                    "{}, {} of {} ranges consistent ({}), {records}",
                    order.name(),
                    b.consistent_used(),
                    b.ranges,
                    percent(b.consistent_used(), b.ranges),
                )?,
                None => writeln!(
                    o,
                    "order unknown: {} consistent newest-first, {} oldest-first of {} ranges \
                     ({records}); no range is used",
                    percent(b.consistent[0], b.ranges),
                    percent(b.consistent[1], b.ranges),
                    b.ranges,
                )?,
            }
        }
        Ok(())
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for b in &self.0.binaries {
            let (blocks, covered) = b.blocks();
            let line = RangesLine {
                path: j.path,
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
            j.line(&line)?;
        }
        Ok(())
    }
}

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

/// `/coverage` and `/dyninst` of two traces: what each one's LBR ranges give, per binary of
/// both and per function, as many as `/dyninst:N` asks (else `/top`); once, for whichever
/// of the two views comes first.
pub(crate) fn compared<P: Printer>(both: &mut Both<'_>, printer: &mut P) -> io::Result<()> {
    if std::mem::replace(&mut both.ranges_compared, true) {
        return Ok(());
    }
    let read = both.sides.map(|k| {
        k.records
            .lbr
            .as_ref()
            .map(|lbr| ranges::ranges(lbr, &k.tables, &k.symbols))
    });
    let [Some(base), Some(new)] = &read else {
        return Ok(());
    };
    let top = both.ranges_top;
    let moved = rangediff::compare(base, new, top);
    // Each binary whose records could not be read says why, as without /compare, once
    // when both traces lack the same file.
    let mut said = std::collections::BTreeSet::new();
    for b in read.iter().flatten().flat_map(|r| &r.binaries) {
        for why in &b.missing {
            let note = format!("{}: {why}", b.name);
            if said.insert(note.clone()) {
                printer.note(both.new_file, &note)?;
            }
        }
    }
    printer.show(&RangesCompared(&moved))
}

/// How what each trace's LBR ranges give moved from BASE to NEW.
pub(super) struct RangesCompared<'a>(pub &'a [BinaryMoved]);

impl Render for RangesCompared<'_> {
    /// Per binary of both traces, the instructions and blocks each trace's ranges give,
    /// then the functions whose share of the instructions moved most.
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        for b in self.0 {
            let o = t.block()?;
            let name = clean(&b.name);
            if !b.read() {
                let order = |o: Option<Order>| o.map_or("no order", Order::name);
                writeln!(
                    o,
                    "LBR ranges of {name} not compared: read {} in BASE, {} in NEW",
                    order(b.order[0]),
                    order(b.order[1]),
                )?;
                continue;
            }
            writeln!(
                o,
                "LBR ranges of {name} compared: {} function{} ran{}",
                b.ran,
                plural(b.ran as u128),
                showing(b.functions.len(), b.ran),
            )?;
            for (i, side) in ["BASE", "NEW"].iter().enumerate() {
                writeln!(
                    o,
                    "  {side:<4}  {}, {} instructions, {} of {} blocks covered ({})",
                    b.order[i].map_or("-", Order::name),
                    b.instructions[i],
                    b.covered[i],
                    b.blocks[i],
                    percent(b.covered[i].into(), b.blocks[i].into())
                )?;
            }
            let rows: Vec<[String; 6]> = b
                .functions
                .iter()
                .map(|f| {
                    let covered = |i: usize| format!("{}/{}", f.covered[i], f.blocks[i]);
                    [
                        format!("{:.2}%", f.share[0] * 100.0),
                        format!("{:.2}%", f.share[1] * 100.0),
                        format!("{:+.2}", f.delta() * 100.0),
                        covered(0),
                        covered(1),
                        clean(&f.name).into_owned(),
                    ]
                })
                .collect();
            let headings = [
                "base",
                "new",
                "delta",
                "covered base",
                "covered new",
                "function",
            ];
            columns(o, headings, &rows)?;
        }
        Ok(())
    }

    /// A `compare_lbr` line per binary of both traces, then a `compare_lbr_function` line
    /// per function whose share moved most.
    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        let path = j.path;
        for b in self.0 {
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
            j.line(&line)?;
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
                j.line(&line)?;
            }
        }
        Ok(())
    }
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
