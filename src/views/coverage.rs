//! `/coverage`: per binary, each function with a count by the LBR ranges, the most
//! instructions first, with its basic blocks and those covered: what SPGO will see as cold.
//!
//! ```text
//! Coverage of progid 0 (lbr.exe) by LBR ranges: 7 of 7 functions ran, 23 of 28 of their blocks covered (82.14%)
//!     blocks  covered    share  instructions  function
//!          9        6   66.67%         27809  sum_table
//! ```

use std::io::{self, Write};

use serde::Serialize;

use super::compared::Both;
use super::ranges::{self, read};
use super::{Compared, Declaration, Declared, Opt, Profile, Reads, Writes};
use crate::analysis::ranges::RangeReport;
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
            columns(
                o,
                ["blocks", "covered", "share", "instructions", "function"],
                &rows,
            )?;
        }
        Ok(())
    }

    /// A `coverage` line per function with a count, `top` per binary.
    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for b in &self.report.binaries {
            for f in b.functions.iter().take(self.top) {
                let line = CoverageLine {
                    path: j.path,
                    progid: b.progid,
                    name: &b.name,
                    function: &f.name,
                    rva: f.rva,
                    blocks: f.blocks,
                    covered: f.covered,
                    instructions: f.instructions,
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
}
