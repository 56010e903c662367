//! What the views of two traces together read (`/compare BASE NEW`): both traces as
//! counted, how NEW differs from BASE, and what is made of them once, for the first view
//! that reads it: each trace's keys named, the differential flame graph.

use std::io::{self, Write};
use std::path::Path;

use super::file::cannot_write_message;
use super::kept::Kept;
use super::settings::Settings;
use crate::analysis::compare::CompareReport;
use crate::analysis::profile::{self, BinaryStacks, StackProfile};
use crate::analysis::{sampled, stacks};
use crate::output::{FileInfo, Printer, flamegraph};

/// What the views of two traces together read.
pub(crate) struct Both<'b> {
    /// How many functions the LBR views compared show per binary (`/dyninst:N`, else
    /// `/top`).
    pub(crate) ranges_top: usize,
    /// BASE's and NEW's paths.
    pub(crate) paths: &'b [String],
    /// NEW, as the output names it: what is printed of the two is printed under it.
    pub(crate) new_file: &'b FileInfo<'b>,
    /// BASE and NEW as counted.
    pub(crate) sides: [&'b Kept; 2],
    /// How NEW differs from BASE, when both were counted.
    pub(crate) report: Option<CompareReport>,
    /// Whether what each trace's LBR ranges give was set side by side.
    pub(crate) ranges_compared: bool,
    /// Whether a file of the views could not be written.
    pub(crate) failed: bool,
    /// Each trace's keys named, once made.
    named: Option<[Named; 2]>,
    /// The differential flame graph, once made.
    drawing: Option<Differential>,
}

impl<'b> Both<'b> {
    /// BASE and NEW, read; `named` when the views of the two together read their keys.
    pub(crate) fn new(
        (settings, ranges_top): (Settings<'b>, usize),
        paths: &'b [String],
        new_file: &'b FileInfo<'b>,
        sides: [&'b Kept; 2],
        named: bool,
    ) -> Self {
        Both {
            ranges_top,
            paths,
            new_file,
            sides,
            report: None,
            ranges_compared: false,
            failed: false,
            named: named.then(|| sides.map(|k| Named::of(settings, k))),
            drawing: None,
        }
    }

    /// Each trace's keys named, when the views read them.
    pub(crate) fn named(&self) -> Option<&[Named; 2]> {
        self.named.as_ref()
    }

    /// The differential flame graph of NEW against BASE, made once, with a note saying
    /// what it shows when it is not the call stacks.
    pub(crate) fn drawing<P: Printer>(&mut self, printer: &mut P) -> io::Result<&Differential> {
        if self.drawing.is_none() {
            let drawing = self.differential(printer)?;
            self.drawing = Some(drawing);
        }
        Ok(self.drawing.as_ref().expect("made above"))
    }

    /// The differential flame graph, when made.
    pub(crate) fn drawn(&self) -> Option<&Differential> {
        self.drawing.as_ref()
    }

    fn differential<P: Printer>(&self, printer: &mut P) -> io::Result<Differential> {
        let none = [Named::default(), Named::default()];
        let [base, new] = self.named.as_ref().unwrap_or(&none);
        let input = differential_input(base, new);
        let mut title = format!("{} against {}", self.paths[1], self.paths[0]);
        match &input.what {
            Some(what) => {
                title = format!("{title}: {what} (no call stacks)");
                let message = format!(
                    "NEW has no call stacks: the differential views show {what}, by function"
                );
                printer.note(self.new_file, &message)?;
            }
            None if input.new.is_empty() => {
                let message = "NEW has no samples: the differential flame graph says so";
                printer.note(self.new_file, message)?;
            }
            None => {}
        }
        Ok(Differential {
            title,
            base: input.base,
            new: input.new,
        })
    }

    /// Says a file of the views that could not be written, and that the run failed.
    pub(crate) fn written<P: Printer>(
        &mut self,
        printer: &mut P,
        what: &str,
        path: &Path,
        written: io::Result<()>,
    ) -> io::Result<()> {
        if let Err(e) = written {
            printer.error(self.new_file, &cannot_write_message(what, path, &e))?;
            self.failed = true;
        }
        Ok(())
    }
}

/// A trace's keys named, for `/compare`: its call stacks, and its samples without call
/// stacks (one address each).
#[derive(Default)]
pub(crate) struct Named {
    /// The call stacks by key.
    pub(crate) profile: StackProfile,
    /// The samples without call stacks, by binary and source.
    pub(crate) sampled: Vec<BinaryStacks>,
}

impl Named {
    /// Names the keys of `kept` as the plan asks (functions with `/pdb`, inline frames).
    fn of(settings: Settings<'_>, kept: &Kept) -> Named {
        let (Some(summary), Some(stacks)) = (&kept.summary, &kept.records.stacks) else {
            return Named::default();
        };
        let order = settings.order;
        let counted = crate::analysis::Counted {
            summary,
            stacks,
            order,
            tables: &kept.tables,
            symbols: &kept.symbols,
        };
        let namers = stacks::namers(stacks, Some(summary), order, &kept.symbols, settings.inline);
        Named {
            profile: stacks.profile(order, &kept.tables, &namers),
            sampled: sampled::sampled(&counted, &namers, |_| true),
        }
    }
}

/// What a differential flame graph draws of BASE and NEW.
struct DifferentialInput {
    /// What it shows when it is not the call stacks: `UNHALT_CYCLE samples`.
    what: Option<String>,
    /// Each side's folded stacks.
    base: Vec<(String, u128)>,
    new: Vec<(String, u128)>,
}

/// NEW's call stacks when it has any; else the source without call stacks NEW has most hits
/// of (an IP event or LBR targets), in both traces; else nothing.
fn differential_input(base: &Named, new: &Named) -> DifferentialInput {
    if !new.profile.is_empty() {
        return DifferentialInput {
            what: None,
            base: base.profile.folded(),
            new: new.profile.folded(),
        };
    }
    let Some(source) = sampled::busiest(new.sampled.iter().map(|b| (b.source, b.hits))) else {
        return DifferentialInput {
            what: None,
            base: Vec::new(),
            new: Vec::new(),
        };
    };
    DifferentialInput {
        what: Some(flamegraph::source_drawn(source)),
        // A differential flame graph colours NEW's frames by BASE's: every frame of both.
        base: profile::folded_by_binary(&base.sampled, source, None),
        new: profile::folded_by_binary(&new.sampled, source, None),
    }
}

/// The differential flame graph of NEW against BASE: its title and both sides' folded stacks.
pub(crate) struct Differential {
    /// What it is.
    pub(crate) title: String,
    base: Vec<(String, u128)>,
    new: Vec<(String, u128)>,
}

impl Differential {
    /// Draws it into `w`, top-down when `icicle`.
    pub(crate) fn draw(&self, w: impl Write, icicle: bool) -> io::Result<()> {
        flamegraph::write_differential(w, &self.title, &self.base, &self.new, icicle).map(|_| ())
    }
}
