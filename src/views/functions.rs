//! `/functions`: per binary and source, the inclusive and exclusive hits of each key (a
//! function with `/pdb`, else an address), the hottest first. Under `/compare`, the keys
//! whose inclusive share moved most are part of the comparison.
//!
//! ```text
//! Functions of progid 0 (app.exe), UNHALT_CYCLE: 7 records, 46 hits, 30 keys, showing 10
//!     inclusive    share  exclusive    share  key
//!             5   10.87%          5   10.87%  app.exe!main+0x17
//! ```

use std::io::{self, Write};

use maud::html;
use serde::Serialize;

use super::{Compared, Declaration, Declared, Opt, Parts, Profile, Reads, Section, Writes};
use crate::analysis::functions::{FunctionRow, FunctionsLine};
use crate::format::error::Error;
use crate::format::record::SampleKind;
use crate::output::html::count;
use crate::output::text::clean;
use crate::output::text::tables::{plural, showing};
use crate::output::{Json, Out, Printer, Render, Reported, Text, percent};

/// `/functions`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Functions;

impl Declared for Functions {
    const DECLARATION: Declaration = Declaration {
        prints: &["functions"],
        section: Section::Walked,
        compared: Compared::InComparison,
        ..Declaration::new(
            "functions",
            1,
            Writes::Tables,
            Reads::FUNCTIONS
                .and(Reads::SAMPLES)
                .and(Reads::PROFILE)
                .and(Reads::INLINE_NAMES),
        )
    };
    type Asked = bool;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::flag(
        "functions",
        "per binary: inclusive and exclusive call-stack hits per function",
        |a| *a = true,
    )];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Functions))
    }

    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        out.print(|p| p.show(&FunctionsReport(&profile.flat.functions)))
    }

    fn section(_: Option<&Self>, profile: &Profile<'_>, parts: &mut Parts) {
        let lines = &profile.flat.functions;
        let section = html! {
            h2 id="functions" { "Functions" }
            @if lines.is_empty() { p { "No samples." } }
            @for line in lines {
                h3 { (line.name) ", " (line.source) ": " (count(line.hits(), "hit")) ", " (count(line.keys as u128, "key")) }
                table.sortable.functions {
                    thead { tr { th.n { "inclusive" } th.n { "share" } th.n { "exclusive" } th.n { "share" } th { "key" } } }
                    tbody {
                        @for row in line.rows() {
                            tr {
                                td.n data-v=(row.inclusive()) { (row.inclusive()) }
                                td.n data-v=(row.inclusive()) { (percent(row.inclusive(), line.hits())) }
                                td.n data-v=(row.exclusive()) { (row.exclusive()) }
                                td.n data-v=(row.exclusive()) { (percent(row.exclusive(), line.hits())) }
                                td.mono { (row.key()) @if row.inlined() { " (inlined)" } }
                            }
                        }
                    }
                }
            }
        };
        parts.add(section);
    }
}

/// What `/functions` shows of a profile: a table per binary and source.
pub struct FunctionsReport<'a>(pub &'a [FunctionsLine]);

impl Render for FunctionsReport<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        for line in self.0 {
            table(t.block()?, line)?;
        }
        Ok(())
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for functions in self.0 {
            let path = j.path;
            j.line(&FunctionsOf { path, functions })?;
        }
        Ok(())
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::Functions(self.0.to_vec()))
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "functions")]
struct FunctionsOf<'a> {
    path: &'a str,
    #[serde(flatten)]
    functions: &'a FunctionsLine,
}

/// The `/functions` table of one binary and source.
fn table(o: &mut impl Write, line: &FunctionsLine) -> io::Result<()> {
    let (records, what) = if line.source == SampleKind::CallStack.name() {
        (line.stacks, "stack")
    } else {
        (line.records, "record")
    };
    let shown = showing(line.rows().len(), line.unique);
    writeln!(
        o,
        "Functions of progid {} ({}), {}: {records} {what}{}, {} hit{}, {} key{}{shown}",
        line.progid,
        clean(&line.name),
        line.source,
        plural(records),
        line.hits,
        plural(line.hits),
        line.unique,
        plural(line.unique as u64)
    )?;
    let rows = line.rows();
    if rows.is_empty() {
        return Ok(());
    }
    let width = |f: fn(&FunctionRow) -> u128, title: &str| {
        rows.iter()
            .map(|r| f(r).to_string().len())
            .max()
            .unwrap_or(0)
            .max(title.len())
    };
    let iw = width(|r| r.inclusive(), "inclusive");
    let ew = width(|r| r.exclusive(), "exclusive");
    let sw = "100.00%".len();
    writeln!(
        o,
        "    {:>iw$}  {:>sw$}  {:>ew$}  {:>sw$}  key",
        "inclusive", "share", "exclusive", "share"
    )?;
    for r in rows {
        writeln!(
            o,
            "    {:>iw$}  {:>sw$}  {:>ew$}  {:>sw$}  {}{}",
            r.inclusive(),
            percent(r.inclusive(), line.hits()),
            r.exclusive(),
            percent(r.exclusive(), line.hits()),
            clean(r.key()),
            if r.inlined() { " (inlined)" } else { "" }
        )?;
    }
    Ok(())
}
