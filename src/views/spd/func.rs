//! `/func`: each function's profile: its entry count (block 1's), blocks, edges,
//! instructions, estimated dynamic instructions (Σ block count × instructions) and covered
//! blocks.

use std::io::{self, Write};

use super::declare::{SpdDeclaration, SpdDeclared};
use super::lines::INFERRED;
use super::shown::{Shown, SpdFailure};
use crate::views::Opt;

/// `/func`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Func;

impl SpdDeclared for Func {
    const DECLARATION: SpdDeclaration = SpdDeclaration {
        lists_functions: true,
        ..SpdDeclaration::new("func", 3)
    };
    type Asked = bool;
    const OPTIONS: &'static [Opt<bool>] = &[Opt::flag(
        "func",
        "the function profiles: entry count, blocks, edges, instructions,\n\
         estimated dynamic instructions, covered blocks",
        |a| *a = true,
    )];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Func))
    }

    fn of_all() -> Option<Self> {
        Some(Func)
    }

    fn show(&self, s: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>> {
        if s.json {
            // Its lines are the functions' `spd_function` lines, which the views' driver
            // lists once, where the first view that declares them would be.
            return Ok(Ok(()));
        }
        let (t, out) = (s.table(), &mut s.out);
        writeln!(
            out,
            "Function profiles: {} functions ({INFERRED}; dyninst = Σ block count × instructions, \
             our estimate)",
            t.len()
        )?;
        writeln!(
            out,
            "  {:<16}  {:>12}  {:>6}  {:>6}  {:>7}  {:>16}  {:>7}  {:>9}  name",
            "hash", "entry", "blocks", "edges", "instr*", "dyninst*", "covered", "conserved"
        )?;
        for f in t.functions() {
            let p = f.profile();
            writeln!(
                out,
                "  {:016X}  {:>12}  {:>6}  {:>6}  {:>7}  {:>16}  {:>7}  {:>9}  {}",
                f.hash(),
                p.entry,
                p.blocks,
                p.edges,
                p.instructions,
                p.dyninst,
                p.covered,
                if p.conserved { "yes" } else { "no" },
                f.name()
            )?;
        }
        writeln!(out).map(Ok)
    }
}
