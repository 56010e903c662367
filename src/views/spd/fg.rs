//! `/fg`: each function's flow graph: its blocks with their counts, instructions, RVA
//! ranges and successors with edge counts, written as they are read.

use std::io;

use super::declare::{SpdDeclaration, SpdDeclared};
use super::lines::{flow_json, flow_text};
use super::shown::{Shown, SpdFailure};
use crate::views::Opt;

/// `/fg`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fg;

impl SpdDeclared for Fg {
    const DECLARATION: SpdDeclaration = SpdDeclaration::new("fg", 6);
    type Asked = bool;
    const OPTIONS: &'static [Opt<bool>] = &[Opt::flag(
        "fg",
        "the flow graphs: blocks with count, instructions, ranges, successors",
        |a| *a = true,
    )];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Fg))
    }

    fn of_all() -> Option<Self> {
        Some(Fg)
    }

    fn show(&self, s: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>> {
        let t = s.table();
        match s.json {
            true => flow_json(s, t.functions()),
            false => flow_text(&mut s.out, t.functions()),
        }
        .map(Ok)
    }
}
