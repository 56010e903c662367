//! `/dyninst[:N]` (SPDDump's word): per binary, the N functions (50 unless said; 0: all)
//! that ran the most instructions by the LBR ranges, with their share. The HTML report's
//! section on what SPGO will learn from LBR is this view's.
//!
//! ```text
//! Dynamic instructions of progid 0 (lbr.exe) by LBR ranges: 56863 in 7 functions
//!     instructions   share   flow  flow share  function
//!            27809  48.91%  27820      48.83%  sum_table
//! ```

use std::io::{self, Write};

use maud::{PreEscaped, html};
use serde::Serialize;

use super::compared::Both;
use super::option::text;
use super::ranges::{self, read};
use super::{Compared, Declaration, Declared, Opt, Parts, Profile, Reads, Section, Writes};
use crate::analysis::lbr::ranges::{BinaryRanges, RangeReport};
use crate::analysis::share;
use crate::format::error::Error;
use crate::output::cfgsvg;
use crate::output::text::clean;
use crate::output::text::tables::{columns, plural, showing};
use crate::output::{Json, Out, Printer, Render, Reported, Text, percent};

/// `/dyninst[:N]`: how many functions each binary's table shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dyninst(pub usize);

/// How many functions `/dyninst` shows per binary without a number: SPDDump's default.
pub const DEFAULT_DYNINST: usize = 50;

/// The most functions the report lists per binary in its table of LBR ranges.
const RANGE_ROWS: usize = 50;

impl Declared for Dyninst {
    const DECLARATION: Declaration = Declaration {
        prints: &["dyninst"],
        compared: Compared::Both,
        section: Section::BeforeFold,
        ..Declaration::new("dyninst", 5, Writes::Tables, Reads::LBR_RECORDS)
    };
    type Asked = Option<Dyninst>;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::optional(
        "dyninst",
        "/dyninst[:N]",
        "per binary: the N functions (default 50; 0: all) that ran the most\n\
         instructions by the LBR ranges (with /pdb and /image)",
        |a, n| {
            let n = match n.map(text) {
                None => DEFAULT_DYNINST,
                Some(n) => match n.parse::<usize>() {
                    Ok(0) => usize::MAX,
                    Ok(n) => n,
                    Err(_) => return Err("expected a whole number, 0 for every function".into()),
                },
            };
            *a = Some(Dyninst(n));
            Ok(())
        },
    )];

    fn asked(asked: Option<Dyninst>) -> Result<Option<Self>, String> {
        Ok(asked)
    }

    fn top(&self) -> Option<usize> {
        Some(self.0)
    }

    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        let file = profile.file;
        let report = ranges::shown(profile, out)?;
        if ranges::unable("dyninst", (file, report), out)? {
            return Ok(());
        }
        let Some(report) = report else {
            return Ok(());
        };
        out.print(|p| p.show(&DyninstReport { report, n: self.0 }))
    }

    fn compared<P: Printer>(&self, both: &mut Both<'_>, printer: &mut P) -> io::Result<()> {
        ranges::compared(both, printer)
    }

    /// What SPGO will learn from LBR: per binary read under an order, its instructions and
    /// blocks by function, and the conditional branches run most.
    fn section(_: Option<&Self>, profile: &Profile<'_>, parts: &mut Parts) {
        let Some(report) = &profile.ranges else {
            return;
        };
        let read: Vec<_> = read(report).collect();
        let section = html! {
            @if !read.is_empty() {
                h2 id="lbr-ranges" { "What SPGO will learn from LBR" }
                @for b in read {
                    @let (blocks, covered) = b.blocks();
                    h3 {
                        (b.name) ": " (b.instructions) " instructions by the LBR ranges ("
                        (b.order.map_or("", |o| o.name())) ", " (percent(b.consistent_used(), b.ranges))
                        " of " (b.ranges) " ranges consistent); " (covered) " of " (blocks)
                        " blocks covered in " (b.functions.len()) " functions"
                    }
                    @let (ran, cold) = super::coverage::flowed(b);
                    p.flow {
                        "By the flow (counts inferred so that they add up at every block, as the \
                         SPD holds them): " (ran) " blocks ran, " (cold) " of them falsely cold: \
                         no LBR range covered them, so raw counts call them cold."
                    }
                    @if let Some((name, svg)) = hottest_graph(b) {
                        figure.cfg {
                            (PreEscaped(svg))
                            figcaption {
                                "The graph of " (name) ", the function that ran the most \
                                 instructions by the flow: blocks red by their flow, a blue \
                                 border where no range covered a block that ran by it, edges \
                                 as thick as their flow (sptdump /cfg:" (name) " /svg:FILE)"
                            }
                        }
                    }
                    table.sortable.dyninst {
                        thead { tr {
                            th.n { "instructions" } th.n { "share" } th.n { "blocks" }
                            th.n { "covered" } th { "function" }
                        } }
                        tbody {
                            @for f in b.functions.iter().take(RANGE_ROWS) {
                                tr {
                                    td.n data-v=(f.instructions) { (f.instructions) }
                                    td.n data-v=(f.instructions) { (percent(f.instructions, b.instructions)) }
                                    td.n data-v=(f.blocks) { (f.blocks) }
                                    td.n data-v=(f.covered) { (f.covered) }
                                    td.mono { (f.name) }
                                }
                            }
                        }
                    }
                    @if !b.branches.is_empty() {
                        h3 { (b.name) ": the conditional branches run most, and how often each was taken" }
                        table.sortable.branches {
                            thead { tr {
                                th.n { "ran" } th.n { "taken" } th.n { "taken share" }
                                th.n { "fell through" } th { "function" } th { "RVA" }
                            } }
                            tbody {
                                @for r in &b.branches {
                                    @let fell = r.count.saturating_sub(r.taken);
                                    @let share = format!("{:.6}", r.taken as f64 / r.count.max(1) as f64);
                                    tr {
                                        td.n data-v=(r.count) { (r.count) }
                                        td.n data-v=(r.taken) { (r.taken) }
                                        td.n data-v=(share) { (percent(r.taken, r.count)) }
                                        td.n data-v=(fell) { (fell) }
                                        td.mono { (r.function) }
                                        td.mono { (format!("0x{:08X}", r.rva)) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        };
        parts.add(section);
    }
}

/// What `/dyninst` shows: per binary read under an order, the `n` functions that ran the
/// most instructions.
pub struct DyninstReport<'a> {
    /// The LBR records read as ranges.
    pub report: &'a RangeReport,
    /// How many functions each binary's table shows.
    pub n: usize,
}

impl Render for DyninstReport<'_> {
    /// Per binary, the `n` functions that ran the most instructions, with their share of
    /// the binary's.
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let n = self.n;
        for b in read(self.report) {
            let o = t.block()?;
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
            let total = flow_total(b);
            let rows: Vec<[String; 5]> = b
                .functions
                .iter()
                .take(n)
                .map(|f| {
                    let flow = flow_of(b, f.rva);
                    [
                        f.instructions.to_string(),
                        percent(f.instructions, b.instructions),
                        flow.map_or_else(|| "-".into(), |n| n.to_string()),
                        flow.map_or_else(|| "-".into(), |n| percent(n, total)),
                        clean(&f.name).into_owned(),
                    ]
                })
                .collect();
            columns(
                o,
                ["instructions", "share", "flow", "flow share", "function"],
                &rows,
            )?;
        }
        Ok(())
    }

    /// A `dyninst` line per function, `n` per binary, the most instructions first.
    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for b in &self.report.binaries {
            let total = flow_total(b);
            for f in b.functions.iter().take(self.n) {
                let flow = flow_of(b, f.rva);
                let line = DyninstLine {
                    path: j.path,
                    progid: b.progid,
                    name: &b.name,
                    function: &f.name,
                    rva: f.rva,
                    instructions: f.instructions,
                    share: share(f.instructions, b.instructions),
                    flow_instructions: flow,
                    flow_share: flow.map(|n| share(n, total)),
                };
                j.line(&line)?;
            }
        }
        Ok(())
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::Dyninst(self.report.clone(), self.n))
    }
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
    flow_instructions: Option<u128>,
    flow_share: Option<f64>,
}

/// The name and the picture (SVG, without its XML declaration) of the graph of `b`'s
/// function that ran the most instructions by the flow, when it can be drawn.
fn hottest_graph(b: &BinaryRanges) -> Option<(&str, String)> {
    let functions = b.cfg.functions.iter().filter(|f| f.raw.is_none());
    let hottest = functions.max_by_key(|f| (f.flow_instructions(), std::cmp::Reverse(f.rva)))?;
    let svg = cfgsvg::svg(hottest).ok()?;
    let at = svg.find("<svg")?;
    Some((hottest.name.as_str(), svg[at..].to_owned()))
}

/// The instructions the function at `rva` ran by the flow; `None` when it has no flow.
fn flow_of(b: &BinaryRanges, rva: u32) -> Option<u128> {
    let f = b.cfg.function(rva).filter(|f| f.raw.is_none())?;
    Some(f.flow_instructions())
}

/// The instructions every function of `b` ran by the flow.
fn flow_total(b: &BinaryRanges) -> u128 {
    let functions = b.cfg.functions.iter().filter(|f| f.raw.is_none());
    functions.fold(0u128, |sum, f| sum.saturating_add(f.flow_instructions()))
}
