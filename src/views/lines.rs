//! `/lines`: per binary and source, the hottest source lines (with `/pdb`): the line each
//! sampled address was compiled from, and the function there, inlined functions included.
//!
//! ```text
//! Lines of progid 0 (app.exe), UNHALT_CYCLE: 46 hits, 12 lines
//!     hits    share  line        function
//!       20   43.48%  app.c:17    parse
//! ```

use std::io::{self, Write};

use maud::html;
use serde::Serialize;

use super::{Declaration, Declared, Opt, Parts, Profile, Reads, Section, Writes};
use crate::analysis::lines::{self, LineRow, LinesReport, LinesTable};
use crate::analysis::share;
use crate::format::error::Error;
use crate::output::html::count;
use crate::output::text::clean;
use crate::output::text::tables::{plural, showing, table};
use crate::output::{Json, Out, Printer, Render, Reported, Text, percent};

/// `/lines`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lines;

impl Declared for Lines {
    const DECLARATION: Declaration = Declaration {
        prints: &["source_line"],
        section: Section::BeforeFold,
        ..Declaration::new(
            "lines",
            2,
            Writes::Tables,
            Reads::SAMPLES.and(Reads::STACKS),
        )
    };
    type Asked = bool;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::flag(
        "lines",
        "per binary and source: the hottest source lines (with /pdb)",
        |a| *a = true,
    )];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Lines))
    }

    /// The hottest source lines, and what kept a binary from having any.
    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        let Some(counted) = profile.counted() else {
            return Ok(());
        };
        let report = lines::lines(&counted, profile.settings.top);
        let file = profile.file;
        out.print(|p| p.show(&report))?;
        if !report.without_pdb.is_empty() {
            let message = format!(
                "source lines come from a binary's PDB: give /pdb:FILE for {}",
                report.without_pdb.join(", ")
            );
            match report.tables.is_empty() {
                true => out.unable(format!("/lines: {message}")),
                false => out.print(|p| p.note(file, &message))?,
            }
        }
        for (binary, problem) in &report.problems {
            let message = format!("{binary}: {problem}: some addresses are shown without a line");
            out.print(|p| p.note(file, &message))?;
        }
        Ok(())
    }

    /// The hottest source lines, when a binary has its PDB.
    fn section(_: Option<&Self>, profile: &Profile<'_>, parts: &mut Parts) {
        let Some(counted) = profile.counted().filter(|_| !profile.symbols.is_empty()) else {
            return;
        };
        let report = lines::lines(&counted, profile.settings.top);
        let section = html! {
            h2 id="lines" { "Source lines" }
            @for t in &report.tables {
                h3 { (t.name) ", " (t.source.name()) ": " (count(t.hits, "hit")) ", " (count(t.unique as u128, "line")) }
                table.sortable.lines {
                    thead { tr { th.n { "hits" } th.n { "share" } th { "line" } th { "function" } } }
                    tbody {
                        @for row in &t.top {
                            tr {
                                td.n data-v=(row.hits) { (row.hits) }
                                td.n data-v=(row.hits) { (percent(row.hits, t.hits)) }
                                td.mono {
                                    @match (&row.file, row.line) {
                                        (Some(file), Some(line)) => { (file) ":" (line) }
                                        (Some(file), None) => { (file) }
                                        (None, _) => { "(no line)" }
                                    }
                                }
                                td.mono { (row.function) }
                            }
                        }
                    }
                }
            }
        };
        parts.add(section);
    }
}

impl Render for LinesReport {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        for table in &self.tables {
            lines_of(t.block()?, table)?;
        }
        Ok(())
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for table in &self.tables {
            for row in &table.top {
                let line = SourceLineOf {
                    path: j.path,
                    progid: table.progid,
                    name: &table.name,
                    source: table.source.name(),
                    row,
                    share: share(row.hits, table.hits),
                };
                j.line(&line)?;
            }
        }
        Ok(())
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::Lines(self.clone()))
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "source_line")]
struct SourceLineOf<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    source: &'a str,
    #[serde(flatten)]
    row: &'a LineRow,
    share: f64,
}

/// The `/lines` table of one binary and source: `file:line` (or `(no line)`) and the
/// function there.
fn lines_of(o: &mut impl Write, t: &LinesTable) -> io::Result<()> {
    let shown = showing(t.top.len(), t.unique);
    writeln!(
        o,
        "Lines of progid {} ({}), {}: {} hit{}, {} line{}{shown}",
        t.progid,
        clean(&t.name),
        t.source.name(),
        t.hits,
        plural(t.hits),
        t.unique,
        plural(t.unique as u64),
    )?;
    let places: Vec<String> = t
        .top
        .iter()
        .map(|r| match (&r.file, r.line) {
            (Some(file), Some(line)) => format!("{}:{line}", clean(file)),
            (Some(file), None) => clean(file).into_owned(),
            (None, _) => "(no line)".to_owned(),
        })
        .collect();
    let width = places.iter().map(String::len).max().unwrap_or(0).max(4);
    let rows: Vec<(u128, String, String)> = t
        .top
        .iter()
        .zip(&places)
        .map(|(r, place)| {
            let key = format!("{place:<width$}  {}", clean(&r.function));
            (r.hits, percent(r.hits, t.hits), key)
        })
        .collect();
    table(o, &format!("{:<width$}  function", "line"), &rows)
}
