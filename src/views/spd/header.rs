//! `/header`: the identity of the SPD (section 10's: binary, GUID, age), the version, and
//! the two header totals, raw.

use std::io::{self, Write};

use serde::Serialize;

use super::declare::{SpdDeclaration, SpdDeclared};
use super::lines::line;
use super::shown::{Shown, SpdFailure};
use crate::format::progid::{SymKey, registry_form};
use crate::image::spd::Header as SpdHeader;
use crate::views::Opt;

/// `/header`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header;

impl SpdDeclared for Header {
    const DECLARATION: SpdDeclaration = SpdDeclaration {
        table: false,
        ..SpdDeclaration::new("header", 0)
    };
    type Asked = bool;
    const OPTIONS: &'static [Opt<bool>] = &[Opt::flag(
        "header",
        "the identity (binary, GUID, age), the version, the raw totals",
        |a| *a = true,
    )];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Header))
    }

    fn of_all() -> Option<Self> {
        Some(Header)
    }

    fn show(&self, s: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>> {
        show(s).map(Ok)
    }
}

/// The identity, the version and the raw totals: shown by `/header`, and by any view whose
/// file's table fails a check, so that the file still says whose it is.
pub(crate) fn show(s: &mut Shown<'_>) -> io::Result<()> {
    match s.json {
        true => json(s.out, s.file, s.header),
        false => text(s.out, s.header),
    }
}

fn text(out: &mut dyn Write, h: &SpdHeader) -> io::Result<()> {
    let spd = &h.spd;
    writeln!(out, "SPD header")?;
    writeln!(out, "  binary        {}", spd.binary)?;
    writeln!(out, "  GUID          {{{}}}", registry_form(&spd.guid))?;
    writeln!(out, "  age           {} (inferred)", spd.age)?;
    writeln!(out, "  key           {}", SymKey::new(spd.guid, spd.age))?;
    let version = match spd.new_version() {
        true => " (not seen before: its fields may mean something else)",
        false => "",
    };
    writeln!(out, "  version       {:#X}{version}", spd.version)?;
    writeln!(
        out,
        "  name hash     {:#010X} (djb2 of the binary's name)",
        h.name_hash
    )?;
    writeln!(out, "  functions     {}", spd.functions)?;
    let profiled = if spd.profiled {
        "yes"
    } else {
        "not yet profiled"
    };
    writeln!(out, "  profiled      {profiled}")?;
    writeln!(
        out,
        "  totals (raw)  {} {} (as stored; what they count is unknown)",
        h.totals[0], h.totals[1]
    )?;
    writeln!(out)
}

#[derive(Serialize)]
struct HeaderLine<'a> {
    r#type: &'static str,
    file: &'a str,
    binary: &'a str,
    guid: String,
    age: u32,
    symkey: String,
    version: u32,
    new_version: bool,
    name_hash: u32,
    functions: u32,
    profiled: bool,
    totals_raw: [u64; 2],
    inferred: &'static [&'static str],
}

/// `spd_header`.
fn json(mut out: &mut dyn Write, file: &str, h: &SpdHeader) -> io::Result<()> {
    let spd = &h.spd;
    line(
        &mut out,
        &HeaderLine {
            r#type: "spd_header",
            file,
            binary: &spd.binary,
            guid: registry_form(&spd.guid),
            age: spd.age,
            symkey: SymKey::new(spd.guid, spd.age).to_string(),
            version: spd.version,
            new_version: spd.new_version(),
            name_hash: h.name_hash,
            functions: spd.functions,
            profiled: spd.profiled,
            totals_raw: h.totals,
            inferred: &["age"],
        },
    )
}
