//! `/dyninst[:N]`: the top N (50) functions by estimated dynamic instructions, with their
//! share (our estimate: the sum of block count × instructions; SPDDump's own definition is
//! not published).

use std::io::{self, Write};

use serde::Serialize;

use super::declare::{SpdDeclaration, SpdDeclared};
use super::lines::{INFERRED, hex, line};
use super::shown::{Shown, SpdFailure};
use crate::analysis::share;
use crate::analysis::spd::figures::ranked_by_dyninst;
use crate::output::text::tables::percent_one;
use crate::views::{Opt, text};

/// `/dyninst[:N]`: how many functions it shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dyninst(pub usize);

/// How many functions `/dyninst` shows without a number: SPDDump's default.
pub const DEFAULT_DYNINST: usize = 50;

impl SpdDeclared for Dyninst {
    const DECLARATION: SpdDeclaration = SpdDeclaration::new("dyninst", 8);
    type Asked = Option<Dyninst>;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::optional(
        "dyninst",
        "/dyninst[:N]",
        "the top N (50) functions by estimated dynamic instructions (our\n\
         estimate: the sum of block count x instructions)",
        |a, n| {
            let n = match n.map(text) {
                None => DEFAULT_DYNINST,
                Some(v) => v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or("expected a number of functions, 1 or more")?,
            };
            *a = Some(Dyninst(n));
            Ok(())
        },
    )];

    fn asked(asked: Option<Dyninst>) -> Result<Option<Self>, String> {
        Ok(asked)
    }

    fn of_all() -> Option<Self> {
        Some(Dyninst(DEFAULT_DYNINST))
    }

    fn show(&self, s: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>> {
        let (t, n) = (s.table(), self.0);
        let (top, total) = ranked_by_dyninst(t, n);
        if s.json {
            for (rank, (index, p)) in top.iter().enumerate() {
                let Some(f) = t.function(*index) else {
                    continue;
                };
                let name = f.name();
                let line_of = DyninstLine {
                    r#type: "spd_dyninst",
                    file: s.file,
                    rank: rank + 1,
                    hash: hex(f.hash()),
                    name: &name,
                    dyninst: p.dyninst,
                    share: share(p.dyninst.into(), total),
                    entry: p.entry,
                    estimate: true,
                };
                line(&mut s.out, &line_of)?;
            }
            return Ok(Ok(()));
        }
        let out = &mut s.out;
        writeln!(
            out,
            "Dynamic instructions: top {n} of {} functions (our estimate: Σ block count × \
             instructions*, {INFERRED}; SPDDump's definition is not published)",
            t.len()
        )?;
        writeln!(
            out,
            "  {:>4}  {:>16}  {:>6}  {:>12}  name",
            "rank", "dyninst*", "share", "entry"
        )?;
        for (rank, (index, p)) in top.iter().enumerate() {
            let name = t
                .function(*index)
                .map(|f| f.name().into_owned())
                .unwrap_or_default();
            writeln!(
                out,
                "  {:>4}  {:>16}  {:>6}  {:>12}  {name}",
                rank + 1,
                p.dyninst,
                percent_one(p.dyninst.into(), total),
                p.entry
            )?;
        }
        writeln!(out, "  all: {total}\n").map(Ok)
    }
}

#[derive(Serialize)]
struct DyninstLine<'a> {
    r#type: &'static str,
    file: &'a str,
    rank: usize,
    hash: String,
    name: &'a str,
    dyninst: u64,
    share: f64,
    entry: u64,
    estimate: bool,
}
