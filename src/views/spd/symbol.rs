//! `/symbol`: the symbol table: each function's hash, id, RVA, code size and flags (static,
//! folded into another), and its name.

use std::io::{self, Write};

use super::declare::{SpdDeclaration, SpdDeclared};
use super::lines::{INFERRED, flags};
use super::shown::{Shown, SpdFailure};
use crate::views::Opt;

/// `/symbol`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Symbol;

impl SpdDeclared for Symbol {
    const DECLARATION: SpdDeclaration = SpdDeclaration {
        lists_functions: true,
        ..SpdDeclaration::new("symbol", 2)
    };
    type Asked = bool;
    const OPTIONS: &'static [Opt<bool>] = &[Opt::flag(
        "symbol",
        "the symbol table: hash, id, RVA, size, flags of each function",
        |a| *a = true,
    )];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Symbol))
    }

    fn of_all() -> Option<Self> {
        Some(Symbol)
    }

    fn show(&self, s: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>> {
        if s.json {
            // Its lines are the functions' `spd_function` lines, which the views' driver
            // lists once, where the first view that declares them would be.
            return Ok(Ok(()));
        }
        let (t, out) = (s.table(), &mut s.out);
        writeln!(out, "Symbols: {} functions ({INFERRED})", t.len())?;
        writeln!(
            out,
            "  {:<16}  {:>6}  {:>10}  {:>8}  {:<26}  name",
            "hash", "id*", "RVA*", "size*", "flags*"
        )?;
        for f in t.functions() {
            writeln!(
                out,
                "  {:016X}  {:>6}  {:>#10X}  {:>#8X}  {:<26}  {}",
                f.hash(),
                f.symbol().id,
                f.rva(),
                f.code_size(),
                flags(&f),
                f.name()
            )?;
        }
        writeln!(out).map(Ok)
    }
}
