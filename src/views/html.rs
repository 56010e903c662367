//! `/html:FILE`: one self-contained HTML report of a profile, to open in a browser or attach
//! to a bug: the trace's diagnostics, binaries, `/match` verdicts, check and totals, each
//! view's section (the views that have one give it, in their order, whether or not they
//! were asked for), the SPDs beside it, and the flame graph. Under `/compare`, the report of
//! the two traces: their binaries and totals, the overlap, the keys that moved, and the
//! differential flame graph.
//!
//! The report is written last, once what no other view reads is let go of, in the room the
//! others gave back.

use std::io;
use std::path::{Path, PathBuf};

use maud::html;

use super::compared::Both;
use super::file::{cannot_write, write_file};
use super::kept::Keep;
use super::option::text;
use super::{Compared, Declaration, Declared, Opt, Parts, Profile, Reads, Section, When, Writes};
use crate::analysis::lbr::annotate::SourcePath;
use crate::analysis::stacks::StackCounts;
use crate::analysis::{check, spd::compare as spdcompare};
use crate::format::error::Error;
use crate::image::matching;
use crate::output::html::{self as page, Flame};
use crate::output::{Out, Printer, flamegraph};

/// `/html:FILE`, and where the PDB's source files are on this machine (`/srcpath`), for the
/// hottest function annotated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Html {
    /// Where it is written.
    pub path: PathBuf,
    /// Where the PDB's source files are on this machine (`/srcpath`).
    pub sources: Vec<SourcePath>,
}

/// What the options of `/html` chose.
#[derive(Debug, Default)]
pub(crate) struct Chosen {
    path: Option<PathBuf>,
    sources: Vec<SourcePath>,
}

impl Declared for Html {
    const DECLARATION: Declaration = Declaration {
        when: When::BeforeFold,
        section: Section::BeforeFold,
        compared: Compared::Both,
        ..Declaration::new(
            "html",
            11,
            Writes::File("HTML report"),
            Reads::SAMPLES
                .and(Reads::STACK_ARCS)
                .and(Reads::STACKS)
                .and(Reads::FUNCTIONS)
                .and(Reads::LBR_RECORDS)
                .and(Reads::SPD_BLOCKS)
                .and(Reads::PROFILE)
                .and(Reads::INLINE_NAMES)
                .and(Reads::FLAME),
        )
    };
    type Asked = Chosen;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[
        Opt::valued(
            "html",
            "FILE",
            "write a self-contained HTML report (binaries, check, samples, functions,\n\
             lines, calls, flame graph) to FILE",
            |a, v| {
                a.path = Some(PathBuf::from(v));
                Ok(())
            },
        ),
        // /annotate's, which the report takes too, for its hottest function: the help lists
        // it once, with /annotate's words.
        Opt::valued(
            "srcpath",
            "OLD=NEW",
            "where the report's annotated function finds its sources",
            |a: &mut Chosen, v| {
                a.sources
                    .push(SourcePath::parse(&text(v)).map_err(|e| e.to_string())?);
                Ok(())
            },
        )
        .output(),
    ];

    fn asked(asked: Chosen) -> Result<Option<Self>, String> {
        Ok(asked.path.map(|path| Html {
            path,
            sources: asked.sources,
        }))
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn report(&self) -> Option<Parts> {
        Some(Parts::new(self.sources.clone()))
    }

    /// The report, its flame graphs drawn of what the walk drew for it, written once what
    /// no other view reads is let go of.
    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        let (Some(mut parts), Some((title, folded, _))) =
            (profile.parts.take(), profile.drawn.take())
        else {
            return Ok(());
        };
        // Memory alone: nothing after the report reads the counts but the caller.
        profile.summary = profile.summary.take().filter(|_| profile.after.summary);
        let stacks = profile.after.reads(<StackCounts as Keep>::READ_BY);
        profile.records.stacks = profile.records.stacks.take().filter(|_| stacks);
        let file = profile.file;
        let label = file.label();
        let body = html! {
            h1 { "Sample profile trace " code { (label) } }
            (page::diagnostics(out.tally, &out.first))
            (page::identity(profile.tables, "binaries"))
            @for part in &parts.head { (part) }
            @for section in parts.sections() { (section) }
            @for part in &parts.tail { (part) }
        };
        let written = write_file(&self.path, |w| {
            let (up, down) = flamegraph::both(&title, folded)?;
            let flame = Flame {
                heading: "Flame graph",
                up: &up,
                down: &down,
                title: &title,
            };
            page::page(w, &label, body, &flame)
        });
        if let Err(e) = written {
            cannot_write(out, file, "HTML report", &self.path, &e)?;
        }
        Ok(())
    }

    /// What the report shows of the trace as a whole: the `/match` verdicts, the check, the
    /// totals, and each `/match` SPD beside the binary it is of.
    fn section(_: Option<&Self>, profile: &Profile<'_>, parts: &mut Parts) {
        let Some(summary) = &profile.summary else {
            return;
        };
        let (settings, tables, symbols) = (profile.settings, profile.tables, profile.symbols);
        let matches = matching::results(settings.matches, tables);
        let check = check::check(summary, tables, symbols, &matches);
        let blocks = profile.records.blocks.as_ref();
        let spds = spdcompare::of_matches(
            summary,
            (tables, symbols),
            settings.matches,
            blocks,
            settings.top,
        );
        parts.head.push(page::matches(&matches, tables));
        parts.head.push(page::check(&check, &profile.file.label()));
        parts.head.push(page::totals(&check, "totals-table"));
        if !spds.is_empty() {
            parts.tail.push(page::beside_spds(&spds));
        }
    }

    /// The report of the two traces: both traces' binaries and totals, the overlap, the keys
    /// that moved, and the differential flame graph.
    fn compared<P: Printer>(&self, both: &mut Both<'_>, printer: &mut P) -> io::Result<()> {
        if both.report.is_none() {
            return Ok(());
        }
        both.drawing(printer)?;
        let Both {
            paths,
            sides,
            report,
            ..
        } = &*both;
        let (Some(report), Some(drawing)) = (report, both.drawn()) else {
            return Ok(());
        };
        let page = |w: &mut io::BufWriter<std::fs::File>| {
            let traces = [0, 1].map(|i| page::Trace {
                label: paths[i].as_str(),
                tables: &sides[i].tables,
                check: sides[i]
                    .summary
                    .as_ref()
                    .map(|summary| check::check(summary, &sides[i].tables, &sides[i].symbols, &[])),
            });
            let (up, down) = flamegraph::both_ways(|svg, icicle| drawing.draw(svg, icicle))?;
            let page = page::Compared {
                traces: &traces,
                report,
                flame: &up,
                icicle: &down,
                flame_title: &drawing.title,
            };
            page::write_compared(w, &page)
        };
        let written = write_file(&self.path, page);
        both.written(printer, "HTML report", &self.path, written)
    }
}
