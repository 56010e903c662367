//! `/coverage`: per binary, each function with a count by the LBR ranges, the most
//! instructions first, with its basic blocks and those covered: what SPGO will see as cold.
//!
//! ```text
//! Coverage of progid 0 (lbr.exe) by LBR ranges: 7 of 7 functions ran, 23 of 28 of their blocks covered (82.14%)
//!   by the flow: 25 blocks ran, 2 of them falsely cold (ran, no range covered them: what raw counts call cold)
//!     blocks  covered    share  ran (flow)  falsely cold  instructions  function
//!          9        6   66.67%           6             0         27809  sum_table
//! ```

use std::io::{self, Write};

use serde::Serialize;

use super::compared::Both;
use super::ranges::{self, read};
use super::{Compared, Declaration, Declared, Opt, Profile, Reads, Writes};
use crate::analysis::lbr::ranges::{BinaryRanges, RangeReport};
use crate::format::error::Error;
use crate::output::text::clean;
use crate::output::text::tables::{columns, showing};
use crate::output::{Json, Out, Printer, Render, Reported, Text, percent};

/// `/coverage`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coverage;

impl Declared for Coverage {
    const DECLARATION: Declaration = Declaration {
        prints: &["coverage"],
        compared: Compared::Both,
        ..Declaration::new("coverage", 4, Writes::Tables, Reads::LBR_RECORDS)
    };
    type Asked = bool;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::flag(
        "coverage",
        "per binary: the basic blocks of each function that ran and those the LBR\n\
         ranges cover: what SPGO will see as cold (with /pdb and /image)",
        |a| *a = true,
    )];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Coverage))
    }

    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        let top = profile.settings.top;
        let file = profile.file;
        let report = ranges::shown(profile, out)?;
        if ranges::unable("coverage", (file, report), out)? {
            return Ok(());
        }
        let Some(report) = report else {
            return Ok(());
        };
        out.print(|p| p.show(&CoverageReport { report, top }))
    }

    fn compared<P: Printer>(&self, both: &mut Both<'_>, printer: &mut P) -> io::Result<()> {
        ranges::compared(both, printer)
    }
}

/// What `/coverage` shows: per binary read under an order, `top` of its functions.
pub struct CoverageReport<'a> {
    /// The LBR records read as ranges.
    pub report: &'a RangeReport,
    /// How many functions each binary's table shows.
    pub top: usize,
}

impl Render for CoverageReport<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let top = self.top;
        for b in read(self.report) {
            let o = t.block()?;
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
            let (ran, cold) = flowed(b);
            writeln!(
                o,
                "  by the flow: {ran} blocks ran, {cold} of them falsely cold (ran, no range \
                 covered them: what raw counts call cold)"
            )?;
            let rows: Vec<[String; 7]> = b
                .functions
                .iter()
                .take(top)
                .map(|f| {
                    let flow = b.cfg.function(f.rva);
                    [
                        f.blocks.to_string(),
                        f.covered.to_string(),
                        percent(f.covered.into(), f.blocks.into()),
                        flow.map_or_else(|| "-".into(), |c| c.ran().to_string()),
                        flow.map_or_else(|| "-".into(), |c| c.falsely_cold().to_string()),
                        f.instructions.to_string(),
                        clean(&f.name).into_owned(),
                    ]
                })
                .collect();
            columns(
                o,
                [
                    "blocks",
                    "covered",
                    "share",
                    "ran (flow)",
                    "falsely cold",
                    "instructions",
                    "function",
                ],
                &rows,
            )?;
        }
        Ok(())
    }

    /// A `coverage` line per function with a count, `top` per binary.
    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for b in &self.report.binaries {
            for f in b.functions.iter().take(self.top) {
                let flow = b.cfg.function(f.rva).filter(|c| c.raw.is_none());
                let line = CoverageLine {
                    path: j.path,
                    progid: b.progid,
                    name: &b.name,
                    function: &f.name,
                    rva: f.rva,
                    blocks: f.blocks,
                    covered: f.covered,
                    instructions: f.instructions,
                    ran: flow.map(|c| c.ran()),
                    falsely_cold: flow.map(|c| c.falsely_cold()),
                    flow_instructions: flow.map(|c| c.flow_instructions()),
                };
                j.line(&line)?;
            }
        }
        Ok(())
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::Coverage(self.report.clone(), self.top))
    }
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
    ran: Option<u32>,
    falsely_cold: Option<u32>,
    flow_instructions: Option<u128>,
}

/// The blocks of `b`'s functions that ran by the flow, and of those the ones no range
/// covered, over every function with flow (the ones only their callers' flow reached
/// included).
pub(crate) fn flowed(b: &BinaryRanges) -> (u64, u64) {
    let functions = b.cfg.functions.iter().filter(|f| f.raw.is_none());
    functions.fold((0, 0), |(ran, cold), f| {
        (ran + u64::from(f.ran()), cold + u64::from(f.falsely_cold()))
    })
}
