//! `/cg`: each function's callees, with call counts and calling blocks; the callees that
//! are imports named by the names the `/image` files import.

use std::io;

use super::declare::{SpdDeclaration, SpdDeclared};
use super::lines::{calls_json, calls_text};
use super::shown::{Shown, SpdFailure};
use crate::views::Opt;

/// `/cg`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cg;

impl SpdDeclared for Cg {
    const DECLARATION: SpdDeclaration = SpdDeclaration::new("cg", 5);
    type Asked = bool;
    const OPTIONS: &'static [Opt<bool>] = &[Opt::flag(
        "cg",
        "the call graph: each function's callees, call counts, calling blocks",
        |a| *a = true,
    )];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Cg))
    }

    fn of_all() -> Option<Self> {
        Some(Cg)
    }

    fn show(&self, s: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>> {
        let (t, imports) = (s.table(), s.imports);
        match s.json {
            true => calls_json(s, t, imports, t.functions()),
            false => calls_text(&mut s.out, t, imports, t.functions()),
        }
        .map(Ok)
    }
}
