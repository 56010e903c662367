//! `/annotate:FUNCTION` (a name as `/functions` prints it, or `binary!name`): the
//! function's instructions, one per line, each with its count by the LBR ranges, the
//! branches taken from it (and, for a conditional jump, its fall-through), the IP samples
//! at it and the source line above the instructions made of it, as `perf annotate` shows
//! them. The HTML report shows the hottest function so, when it is short enough to read.
//!
//! ```text
//! Annotated classify in progid 0 (lbr.exe) at 0x000010E0: 12 instructions, 3185 run by the LBR ranges
//!     count  taken  fall  flow  RETIRE_BR_INSTR  RVA         instruction
//!                                                lbr.c:32  if ((x & 15) == 0)
//!       431      0         433               29  0x000010E0  test cl, 0xF
//!       431     13   418   433                0  0x000010E3  je 0x10EF
//!   count: runs by the consistent LBR ranges; taken: branches from it that end a consistent ...
//! ```

use std::collections::BTreeMap;
use std::io::{self, Write};

use maud::{Markup, html};
use serde::Serialize;

use super::option::text;
use super::ranges;
use super::unnamed::unnamed;
use super::{Declaration, Declared, Opt, Parts, Profile, Reads, Section, Writes};
use crate::analysis::Counted;
use crate::analysis::lbr::annotate::{self, AnnotateReport, Annotated, Row, SourcePath};
use crate::analysis::lbr::ranges::RangeReport;
use crate::format::error::Error;
use crate::output::text::clean;
use crate::output::{Json, Out, Printer, Render, Reported, Text};

/// `/annotate:FUNCTION`, and where the PDB's source files are on this machine (`/srcpath`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Annotate {
    /// The function, as `/functions` names it, or `binary!name`.
    pub function: String,
    /// Where the PDB's source files are on this machine (`/srcpath`).
    pub sources: Vec<SourcePath>,
}

/// What the options of `/annotate` chose.
#[derive(Debug, Default)]
pub(crate) struct Chosen {
    function: Option<String>,
    sources: Vec<SourcePath>,
}

/// The most instructions a function may have for the report to show it annotated: a page's
/// worth.
const ANNOTATED_AT_MOST: usize = 200;

impl Declared for Annotate {
    const DECLARATION: Declaration = Declaration {
        prints: &["annotate"],
        section: Section::BeforeFold,
        ..Declaration::new(
            "annotate",
            6,
            Writes::Tables,
            Reads::LBR_RECORDS.and(Reads::SAMPLES),
        )
    };
    type Asked = Chosen;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[
        Opt::valued(
            "annotate",
            "FUNCTION",
            "one function's instructions with their LBR counts, the branches taken\n\
             from each, IP samples and source lines (with /pdb and /image)",
            |a, v| {
                let function = text(v);
                if function.is_empty() {
                    return Err("expected a function's name".into());
                }
                a.function = Some(function);
                Ok(())
            },
        ),
        Opt::valued(
            "srcpath",
            "OLD=NEW",
            "for /annotate: the source files the PDB names under OLD (C:\\src) are under\n\
         NEW here; may be repeated",
            |a: &mut Chosen, v| {
                a.sources
                    .push(SourcePath::parse(&text(v)).map_err(|e| e.to_string())?);
                Ok(())
            },
        )
        .output(),
    ];

    fn asked(asked: Chosen) -> Result<Option<Self>, String> {
        Ok(asked.function.map(|function| Annotate {
            function,
            sources: asked.sources,
        }))
    }

    /// The function's instructions; or, when no function bears the name, why (an error);
    /// or the input missing (the PDB, the image) that kept it from being shown.
    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        if profile.summary.is_none() {
            return Ok(());
        }
        let _ = ranges::shown(profile, out)?;
        let Some(counted) = profile.counted() else {
            return Ok(());
        };
        let report = annotate::annotate(
            &counted,
            profile.ranges.as_ref(),
            &self.function,
            &self.sources,
        );
        let file = profile.file;
        out.print(|p| p.show(&report))?;
        let function = &self.function;
        if report.functions.is_empty() && report.missing.is_empty() {
            let shows = |f: &str| format!("/annotate:{f} shows its instructions");
            return unnamed(profile, out, "annotate", function, shows);
        }
        for why in &report.missing {
            match report.functions.is_empty() {
                true => out.unable(format!("/annotate:{function}: {why}")),
                false => out.print(|p| p.note(file, why))?,
            }
        }
        Ok(())
    }

    /// The hottest function by the LBR ranges, instruction by instruction.
    fn section(_: Option<&Self>, profile: &Profile<'_>, parts: &mut Parts) {
        let (Some(counted), Some(ranges)) = (profile.counted(), &profile.ranges) else {
            return;
        };
        let Some(report) = hottest(&counted, ranges, &parts.sources) else {
            return;
        };
        let section = html! {
            @if !report.functions.is_empty() {
                h2 id="annotated" { "The hottest function, instruction by instruction" }
                @for f in &report.functions {
                    (html_function(f))
                }
            }
        };
        parts.add(section);
    }
}

/// The hottest function by the LBR ranges (of the first binary read under an order),
/// annotated as `/annotate` does, when it is short enough to read on the report's page.
fn hottest(
    counted: &Counted<'_>,
    ranges: &RangeReport,
    sources: &[SourcePath],
) -> Option<AnnotateReport> {
    let (binary, hottest) = ranges
        .binaries
        .iter()
        .filter(|b| b.order.is_some())
        .find_map(|b| Some((b, b.functions.first()?)))?;
    let name = format!("{}!{}", binary.name, hottest.name);
    on_a_page(annotate::annotate(counted, Some(ranges), &name, sources))
}

/// `report`, if it annotates a function (in some binary) and is short enough to read on the
/// report's page: [`ANNOTATED_AT_MOST`] instructions in all.
fn on_a_page(report: AnnotateReport) -> Option<AnnotateReport> {
    let short = report.functions.iter().map(|f| f.rows.len()).sum::<usize>() <= ANNOTATED_AT_MOST;
    (short && !report.functions.is_empty()).then_some(report)
}

impl Render for AnnotateReport {
    /// Per binary that has the function, its instructions, one per line, each source line
    /// (and the function inlined there) above the instructions made of it.
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        annotated_text(self, t)
    }

    /// An `annotate` line per instruction of each function annotated.
    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for f in &self.functions {
            for r in &f.rows {
                let line = AnnotateLine {
                    path: j.path,
                    progid: f.progid,
                    name: &f.name,
                    function: &f.function,
                    rva: r.rva,
                    text: &r.text,
                    count: r.count,
                    taken: r.taken,
                    fall_through: r.conditional.then(|| r.fall_through()),
                    flow: r.flow,
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
                j.line(&line)?;
            }
        }
        Ok(())
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::Annotate(self.clone()))
    }
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
    flow: Option<u64>,
    ip: BTreeMap<&'static str, u128>,
    file: Option<&'a str>,
    line: Option<u32>,
    inlined: Option<&'a str>,
    source: Option<&'a str>,
}

fn annotated_text(report: &AnnotateReport, t: &mut Text<'_>) -> io::Result<()> {
    for f in &report.functions {
        let o = t.block()?;
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
        let mut headings = vec!["count", "taken", "fall", "flow"];
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
                let flow = r.flow.map_or_else(|| "-".to_owned(), |n| n.to_string());
                let mut cells = vec![r.count.to_string(), r.taken.to_string(), fall, flow];
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
        writeln!(o, "{}", legend(f.ranges))?;
    }
    Ok(())
}

/// The line under an annotated function's table that says what its columns count.
fn legend(ranges: bool) -> &'static str {
    match ranges {
        true => {
            "  count: runs by the consistent LBR ranges; taken: branches from it that end a \
             consistent range (a record's oldest branch ends none: /callgraph counts it too); \
             fall: count - taken; flow: its block's count by the flow, inferred so that counts \
             add up (-: none)"
        }
        false => {
            "  count: 0, no LBR range was read; taken: every LBR branch taken from it; fall: \
             count - taken"
        }
    }
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

fn html_function(f: &Annotated) -> Markup {
    let ran = f.rows.iter().fold(0u128, |s, r| s.saturating_add(r.count));
    let columns = 4 + f.events.len();
    // Each source line above the first of its instructions, as perf annotate shows them.
    let mut place = None;
    let rows: Vec<(Option<String>, &Row)> = f
        .rows
        .iter()
        .map(|r| {
            let here = (&r.file, r.line, &r.inlined);
            let shown = (place != Some(here) && r.file.is_some()).then(|| source(r));
            place = Some(here);
            (shown, r)
        })
        .collect();
    html! {
        h3 {
            (f.name) "!" (f.function) " at " code { (format!("0x{:08X}", f.rva)) } ": "
            (f.rows.len()) " instructions, " (ran) " run by the LBR ranges"
        }
        table.annotated {
            thead { tr {
                th.n { "count" } th.n { "taken" } th.n { "fall" }
                @for e in &f.events { th.n { (e.name()) } }
                th { "RVA" } th { "instruction" }
            } }
            tbody {
                @for (shown, r) in &rows {
                    @if let Some(line) = shown {
                        tr.source { td colspan=(columns) {} td.mono { (line) } }
                    }
                    (row(r))
                }
            }
        }
    }
}

/// `file:line`, the function inlined there, and the line's text when the file was found.
fn source(r: &Row) -> String {
    let mut s = r.file.clone().unwrap_or_default();
    if let Some(line) = r.line {
        s.push_str(&format!(":{line}"));
    }
    if let Some(inlined) = &r.inlined {
        s.push_str(&format!(" ({inlined}, inlined)"));
    }
    if let Some(text) = &r.source {
        s.push_str("  ");
        s.push_str(text.trim());
    }
    s
}

fn row(r: &Row) -> Markup {
    html! {
        tr {
            td.n { (r.count) }
            td.n { (r.taken) }
            td.n { @if r.conditional { (r.fall_through()) } }
            @for n in &r.ip { td.n { (n) } }
            td.mono { (format!("0x{:08X}", r.rva)) }
            td.mono { (r.text) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report of one function per entry of `sizes`, each of that many instructions.
    fn report(sizes: &[usize]) -> AnnotateReport {
        let row = |rva| Row {
            rva,
            text: "nop".to_owned(),
            count: 1,
            taken: 0,
            conditional: false,
            flow: None,
            ip: Vec::new(),
            file: None,
            line: None,
            inlined: None,
            source: None,
        };
        let functions = (0u16..)
            .zip(sizes)
            .map(|(progid, &n)| Annotated {
                progid,
                name: format!("b{progid}.exe"),
                function: "f".to_owned(),
                rva: 0x1000,
                events: Vec::new(),
                rows: (0x1000..).take(n).map(row).collect(),
                ranges: true,
            })
            .collect();
        AnnotateReport {
            function: "f".to_owned(),
            functions,
            missing: Vec::new(),
        }
    }

    #[test]
    fn the_report_annotates_a_function_of_a_page_at_most() {
        assert!(on_a_page(report(&[1])).is_some());
        assert!(on_a_page(report(&[ANNOTATED_AT_MOST])).is_some());
        assert!(on_a_page(report(&[ANNOTATED_AT_MOST + 1])).is_none());
        // The instructions of every binary's function of that name count together.
        assert!(on_a_page(report(&[100, 100])).is_some());
        assert!(on_a_page(report(&[100, 101])).is_none());
        // A name no binary has (or none with its image) annotates nothing.
        assert!(on_a_page(report(&[])).is_none());
    }
}
