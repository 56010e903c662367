//! `/coverage`: per function and overall, blocks and blocks with a count, and their share
//! (our estimate: SPDDump's own definition is not published).

use std::io::{self, Write};

use serde::Serialize;

use super::declare::{SpdDeclaration, SpdDeclared};
use super::lines::line;
use super::shown::{Shown, SpdFailure};
use crate::analysis::share;
use crate::analysis::spd::figures::coverage;
use crate::output::text::tables::percent_one;
use crate::views::Opt;

/// `/coverage`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coverage;

impl SpdDeclared for Coverage {
    const DECLARATION: SpdDeclaration = SpdDeclaration {
        lists_functions: true,
        ..SpdDeclaration::new("coverage", 7)
    };
    type Asked = bool;
    const OPTIONS: &'static [Opt<bool>] = &[Opt::flag(
        "coverage",
        "blocks with a count, per function and overall (our estimate)",
        |a| *a = true,
    )];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Coverage))
    }

    fn of_all() -> Option<Self> {
        Some(Coverage)
    }

    fn show(&self, s: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>> {
        let t = s.table();
        let c = coverage(t);
        if s.json {
            // The functions' own are on their `spd_function` lines, which the views' driver
            // lists (`lists_functions`).
            let line_of = CoverageLine {
                r#type: "spd_coverage",
                file: s.file,
                functions: c.functions,
                covered_functions: c.covered_functions,
                blocks: c.blocks,
                covered: c.covered,
                share: share(c.covered.into(), c.blocks.into()),
                estimate: true,
            };
            return line(&mut s.out, &line_of).map(Ok);
        }
        let out = &mut s.out;
        writeln!(
            out,
            "Coverage: blocks with a count, per function (our estimate; SPDDump's definition is \
             not published)"
        )?;
        writeln!(
            out,
            "  {:>6}  {:>7}  {:>6}  name",
            "blocks", "covered", "share"
        )?;
        for f in t.functions() {
            let p = f.profile();
            writeln!(
                out,
                "  {:>6}  {:>7}  {:>6}  {}",
                p.blocks,
                p.covered,
                percent_one(p.covered.into(), p.blocks.into()),
                f.name()
            )?;
        }
        writeln!(
            out,
            "  all: {} of {} blocks covered ({}); {} of {} functions with a covered block\n",
            c.covered,
            c.blocks,
            percent_one(c.covered.into(), c.blocks.into()),
            c.covered_functions,
            c.functions
        )
        .map(Ok)
    }
}

#[derive(Serialize)]
struct CoverageLine<'a> {
    r#type: &'static str,
    file: &'a str,
    functions: u64,
    covered_functions: u64,
    blocks: u64,
    covered: u64,
    share: f64,
    estimate: bool,
}
