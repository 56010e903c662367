//! The text form of the LBR views read as ranges: how each binary's records were read
//! (`lbr_ranges`), `/coverage`, `/dyninst` and `/annotate`, a block per binary.

use std::io::{self, Write};

use super::sink::{TextPrinter, clean};
use super::summary::{plural, showing};
use crate::analysis::annotate::{AnnotateReport, Row};
use crate::analysis::rangediff::BinaryMoved;
use crate::analysis::ranges::{BinaryRanges, Order, RangeReport};
use crate::output::percent;

/// How each binary's LBR records were read as ranges: the order used and the share of
/// consistent ranges, or that neither order was (binaries missing a file are told in a note).
pub(super) fn ranges<W: Write, E: Write>(
    p: &mut TextPrinter<W, E>,
    report: &RangeReport,
) -> io::Result<()> {
    for b in report.binaries.iter().filter(|b| b.missing.is_empty()) {
        let o = p.block()?;
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

/// `/coverage`: per binary, its functions with a count, the most instructions first, with
/// their blocks and those covered; `top` of them.
pub(super) fn coverage<W: Write, E: Write>(
    p: &mut TextPrinter<W, E>,
    report: &RangeReport,
    top: usize,
) -> io::Result<()> {
    for b in read(report) {
        let o = p.block()?;
        let (blocks, covered) = b.blocks();
        writeln!(
            o,
            "Coverage of progid {} ({}) by LBR ranges: {} of {} functions ran, {covered} of \
             {blocks} of their blocks covered ({}){}",
            b.progid,
            clean(&b.name),
            b.functions.len(),
            b.known_functions,
            percent(covered.into(), blocks.into()),
            showing(top, b.functions.len()),
        )?;
        let rows: Vec<[String; 5]> = b
            .functions
            .iter()
            .take(top)
            .map(|f| {
                [
                    f.blocks.to_string(),
                    f.covered.to_string(),
                    percent(f.covered.into(), f.blocks.into()),
                    f.instructions.to_string(),
                    clean(&f.name).into_owned(),
                ]
            })
            .collect();
        table(
            o,
            ["blocks", "covered", "share", "instructions", "function"],
            &rows,
        )?;
    }
    Ok(())
}

/// `/dyninst`: per binary, the `n` functions that ran the most instructions, with their
/// share of the binary's.
pub(super) fn dyninst<W: Write, E: Write>(
    p: &mut TextPrinter<W, E>,
    report: &RangeReport,
    n: usize,
) -> io::Result<()> {
    for b in read(report) {
        let o = p.block()?;
        writeln!(
            o,
            "Dynamic instructions of progid {} ({}) by LBR ranges: {} in {} function{}{}",
            b.progid,
            clean(&b.name),
            b.instructions,
            b.functions.len(),
            plural(b.functions.len() as u128),
            showing(n, b.functions.len()),
        )?;
        let rows: Vec<[String; 3]> = b
            .functions
            .iter()
            .take(n)
            .map(|f| {
                [
                    f.instructions.to_string(),
                    percent(f.instructions, b.instructions),
                    clean(&f.name).into_owned(),
                ]
            })
            .collect();
        table(o, ["instructions", "share", "function"], &rows)?;
    }
    Ok(())
}

/// The binaries whose ranges were read under an order.
fn read(report: &RangeReport) -> impl Iterator<Item = &BinaryRanges> {
    report.binaries.iter().filter(|b| b.order.is_some())
}

/// A table of right-aligned figures and a last column of names, under its headings.
pub(super) fn table<const N: usize>(
    o: &mut impl Write,
    headings: [&str; N],
    rows: &[[String; N]],
) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut widths = headings.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |o: &mut dyn Write, cells: [&str; N]| -> io::Result<()> {
        write!(o, "   ")?;
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == N {
                writeln!(o, " {cell}")?;
            } else {
                write!(o, " {cell:>width$} ", width = widths[i])?;
            }
        }
        Ok(())
    };
    line(o, headings)?;
    for row in rows {
        line(o, row.each_ref().map(String::as_str))?;
    }
    Ok(())
}

/// `/annotate`: per binary that has the function, its instructions, one per line, each
/// source line (and the function inlined there) above the instructions made of it.
pub(super) fn annotate<W: Write, E: Write>(
    p: &mut TextPrinter<W, E>,
    report: &AnnotateReport,
) -> io::Result<()> {
    for f in &report.functions {
        let o = p.block()?;
        let ran = f.rows.iter().fold(0u128, |s, r| s.saturating_add(r.count));
        write!(
            o,
            "Annotated {} in progid {} ({}) at 0x{:08X}: {} instructions",
            clean(&f.function),
            f.progid,
            clean(&f.name),
            f.rva,
            f.rows.len(),
        )?;
        if f.ranges {
            writeln!(o, ", {ran} run by the LBR ranges")?;
        } else {
            writeln!(o, "; no LBR range was read (count 0)")?;
        }
        let mut headings = vec!["count", "taken", "fall"];
        headings.extend(f.events.iter().map(|e| e.name()));
        let rows: Vec<Vec<String>> = f
            .rows
            .iter()
            .map(|r| {
                let fall = if r.conditional {
                    r.fall_through().to_string()
                } else {
                    String::new()
                };
                let mut cells = vec![r.count.to_string(), r.taken.to_string(), fall];
                cells.extend(r.ip.iter().map(u128::to_string));
                cells
            })
            .collect();
        let widths: Vec<usize> = (0..headings.len())
            .map(|c| {
                rows.iter()
                    .map(|r| r[c].len())
                    .fold(headings[c].len(), usize::max)
            })
            .collect();
        let figures = |o: &mut dyn Write, cells: &[&str]| -> io::Result<()> {
            write!(o, "  ")?;
            for (cell, width) in cells.iter().zip(&widths) {
                write!(o, "  {cell:>width$}")?;
            }
            Ok(())
        };
        figures(o, &headings)?;
        writeln!(o, "  {:<10}  instruction", "RVA")?;
        let mut place = None;
        for (r, cells) in f.rows.iter().zip(&rows) {
            let here = (&r.file, r.line, &r.inlined);
            if place != Some(here) && r.file.is_some() {
                source_line(o, &widths, r)?;
            }
            place = Some(here);
            figures(o, &cells.iter().map(String::as_str).collect::<Vec<_>>())?;
            writeln!(o, "  0x{:08X}  {}", r.rva, clean(&r.text))?;
        }
    }
    Ok(())
}

/// A source line above its instructions: `file:line`, the function inlined there, and the
/// line's text when the file was found; in the instruction column.
fn source_line(o: &mut dyn Write, widths: &[usize], r: &Row) -> io::Result<()> {
    let indent = 2 + widths.iter().map(|w| w + 2).sum::<usize>() + 14;
    let file = r.file.as_deref().unwrap_or_default();
    write!(o, "{:indent$}{}", "", clean(file))?;
    if let Some(line) = r.line {
        write!(o, ":{line}")?;
    }
    if let Some(inlined) = &r.inlined {
        write!(o, " ({}, inlined)", clean(inlined))?;
    }
    if let Some(text) = &r.source {
        write!(o, "  {}", clean(text.trim()))?;
    }
    writeln!(o)
}

/// `/compare` with `/coverage` or `/dyninst`: per binary of both traces, the instructions
/// and blocks each trace's ranges give, then the functions whose share of the instructions
/// moved most.
pub(super) fn compared<W: Write, E: Write>(
    p: &mut TextPrinter<W, E>,
    binaries: &[BinaryMoved],
) -> io::Result<()> {
    for b in binaries {
        let o = p.block()?;
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
        table(o, headings, &rows)?;
    }
    Ok(())
}
