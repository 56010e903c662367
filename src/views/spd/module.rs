//! `/module`: the module block's header, its fields named where known, raw where not.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::declare::{SpdDeclaration, SpdDeclared};
use super::lines::line;
use super::shown::{Shown, SpdFailure};
use crate::image::spd::table::FunctionTable;
use crate::views::Opt;

/// `/module`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Module;

impl SpdDeclared for Module {
    const DECLARATION: SpdDeclaration = SpdDeclaration::new("module", 1);
    type Asked = bool;
    const OPTIONS: &'static [Opt<bool>] =
        &[Opt::flag("module", "the module block's header", |a| {
            *a = true
        })];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Module))
    }

    fn of_all() -> Option<Self> {
        Some(Module)
    }

    fn show(&self, s: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>> {
        let t = s.table();
        match s.json {
            true => json(s.out, s.file, t),
            false => text(s.out, t),
        }
        .map(Ok)
    }
}

fn text(out: &mut dyn Write, t: &FunctionTable) -> io::Result<()> {
    let h = t.header();
    writeln!(out, "Module block at {:#X}, {:#X} bytes", t.base(), h.size)?;
    writeln!(
        out,
        "  symbol table  offset {:#X}  size {:#X}  {} slots  {} buckets",
        h.symbols[0],
        h.symbols[1],
        h.slots(),
        h.symbols[2]
    )?;
    writeln!(
        out,
        "  records       offset {:#X}  size {:#X}  end {:#X}",
        h.records[0], h.records[1], h.records[2]
    )?;
    writeln!(out, "  functions     {}", h.functions)?;
    writeln!(
        out,
        "  string table  offset {:#X}  size {:#X}  then {} pad bytes",
        h.strings[0],
        h.strings[1],
        h.pad()
    )?;
    write!(out, "  unknown       ")?;
    for (i, (at, v)) in h.unknown.iter().enumerate() {
        let sep = if i == 0 { "" } else { "  " };
        write!(out, "{sep}+{at:02X}? {v:#X}")?;
    }
    writeln!(out, "\n")
}

#[derive(Serialize)]
struct ModuleLine<'a> {
    r#type: &'static str,
    file: &'a str,
    offset: u64,
    size: u32,
    functions: u32,
    symbols: BTreeMap<&'static str, u32>,
    records: BTreeMap<&'static str, u32>,
    strings: BTreeMap<&'static str, u32>,
    pad: u32,
    unknown: BTreeMap<String, u32>,
}

/// `spd_module`.
fn json(mut out: &mut dyn Write, file: &str, t: &FunctionTable) -> io::Result<()> {
    let h = t.header();
    let [offset, size, buckets] = h.symbols;
    let [r_offset, r_size, r_end] = h.records;
    line(
        &mut out,
        &ModuleLine {
            r#type: "spd_module",
            file,
            offset: t.base(),
            size: h.size,
            functions: h.functions,
            symbols: BTreeMap::from([
                ("offset", offset),
                ("size", size),
                ("slots", h.slots()),
                ("buckets", buckets),
            ]),
            records: BTreeMap::from([("offset", r_offset), ("size", r_size), ("end", r_end)]),
            strings: BTreeMap::from([("offset", h.strings[0]), ("size", h.strings[1])]),
            pad: h.pad(),
            unknown: h
                .unknown
                .iter()
                .map(|(at, v)| (format!("+{at:02X}"), *v))
                .collect(),
        },
    )
}
