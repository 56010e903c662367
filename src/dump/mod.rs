//! The driver: walks a [`Plan`] over the traces of a run, into a printer ([`Output`]).
//!
//! ```text
//! run()        by the plan's shape:
//!   many.rs      Each: every trace in argument order (on every core when little is printed)
//!   merge.rs     Merged: every trace, then the views of all of them as one profile
//!   compare.rs   Compared: BASE and NEW, then how NEW differs
//! trace.rs     one trace: header and tables, its sections, the stream decoded once into
//!              the printer and the counters the plan needs, its views, its verdicts
//! views.rs     the views of a profile: /summary, /functions, /folded and the exports
//! ```
//!
//! The plan says what runs; the driver never looks at options. A trace's own problems are
//! reported through the printer and its [`Outcome`]; only output that cannot be written
//! ends a run early, and a reader that went away (a closed pipe) ends it quietly.

use std::cell::RefCell;
use std::io::{self, Write};

use crate::format::diag::{Diagnostic, Tally};
use crate::format::error::Error;
use crate::image::matching::MatchFile;
use crate::input::{Input, OpenError};
use crate::output::{FileInfo, Output, Printer};

mod compare;
mod many;
mod merge;
mod plan;
mod trace;
mod views;

pub use plan::{Conflict, DEFAULT_TOP, Plan, Sections, Shape, Views};

/// The traces of a run: their paths as given (`-` for standard input), and how to open
/// each.
pub struct Traces<'a> {
    paths: &'a [String],
    open: Open<'a>,
}

/// How the traces of a run are opened.
enum Open<'a> {
    /// Each when its turn comes, on whichever thread reads it.
    Lazily(&'a (dyn Fn(usize) -> Result<Input, OpenError> + Sync)),
    /// Already open; read one after another.
    Given(RefCell<Vec<Option<Result<Input, OpenError>>>>),
}

impl<'a> Traces<'a> {
    /// The traces at `paths`; `open(i)` opens the one at `paths[i]`, and may be called from
    /// several threads at once.
    pub fn new(
        paths: &'a [String],
        open: &'a (dyn Fn(usize) -> Result<Input, OpenError> + Sync),
    ) -> Self {
        Traces {
            paths,
            open: Open::Lazily(open),
        }
    }

    /// The traces at `paths`, already opened (or not): `inputs[i]` is the one at `paths[i]`.
    /// They are read one after another, on this thread.
    ///
    /// # Panics
    ///
    /// When there are not as many inputs as paths.
    pub fn opened(paths: &'a [String], inputs: Vec<Result<Input, OpenError>>) -> Self {
        assert_eq!(paths.len(), inputs.len(), "an input per path");
        Traces {
            paths,
            open: Open::Given(RefCell::new(inputs.into_iter().map(Some).collect())),
        }
    }

    /// Opens trace `i`, which is read once.
    fn open(&self, i: usize) -> Result<Input, OpenError> {
        match &self.open {
            Open::Lazily(open) => open(i),
            Open::Given(inputs) => inputs.borrow_mut()[i]
                .take()
                .unwrap_or_else(|| Err(OpenError(io::Error::other("read twice")))),
        }
    }

    /// How to open the traces from several threads, when they can be.
    fn opener(&self) -> Option<&'a (dyn Fn(usize) -> Result<Input, OpenError> + Sync)> {
        match self.open {
            Open::Lazily(open) => Some(open),
            Open::Given(_) => None,
        }
    }

    /// How many traces there are.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }
}

/// How dumping one trace ended.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Decoded; the diagnostics found, and how many other errors there were: `/match` and
    /// `/pdb` files that do not fit the trace, `/check`'s errors, files of ours that could
    /// not be written.
    Done(Tally, usize),
    /// The trace could not be opened or read to its end; what was read was printed.
    ReadFailed,
    /// `/binary` names nothing in this trace: a note, and a usage error when it names
    /// nothing in any trace of the run.
    NoSuchBinary,
    /// The reader of the output went away (a closed pipe); what was found until then.
    OutputClosed(Tally),
}

/// What a run calls for, from best to worst; the command line makes an exit code of it.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// No error found (warnings allowed).
    #[default]
    Clean,
    /// An error diagnostic or verdict, a trace that could not be read, or a `/match` or
    /// `/pdb` file that does not fit.
    Errors,
    /// The command line asked for something the input cannot give: a `/binary` list that
    /// names nothing in any trace.
    Usage,
}

impl Outcome {
    /// The status this trace calls for; with `strict` (`/strict`) a warning is an error.
    pub fn status(&self, strict: bool) -> Status {
        let fails = |tally: &Tally| tally.errors > 0 || (strict && tally.warnings > 0);
        match self {
            Outcome::Done(tally, failed) if fails(tally) || *failed > 0 => Status::Errors,
            Outcome::OutputClosed(tally) if fails(tally) => Status::Errors,
            Outcome::Done(..) | Outcome::OutputClosed(_) => Status::Clean,
            Outcome::ReadFailed => Status::Errors,
            Outcome::NoSuchBinary => Status::Usage,
        }
    }
}

/// What a run did: the outcome of each trace read, in argument order, and the status of the
/// whole. A `/binary` list is a usage error only when it names no binary of any trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ran {
    outcomes: Vec<Outcome>,
    worst: Status,
    strict: bool,
    closed: bool,
}

impl Ran {
    fn new(plan: &Plan) -> Ran {
        Ran {
            strict: plan.strict,
            ..Ran::default()
        }
    }

    /// Adds the outcome of one trace.
    fn add(&mut self, outcome: Outcome) {
        if matches!(outcome, Outcome::OutputClosed(_)) {
            self.closed = true;
        }
        if outcome != Outcome::NoSuchBinary {
            self.worst = self.worst.max(outcome.status(self.strict));
        }
        self.outcomes.push(outcome);
    }

    /// Adds what the run found besides the traces: a merged export that could not be
    /// written, an overlap below `/min-overlap`.
    fn add_status(&mut self, status: Status) {
        self.worst = self.worst.max(status);
    }

    /// The outcome of each trace read, in argument order.
    pub fn outcomes(&self) -> &[Outcome] {
        &self.outcomes
    }

    /// The status of the run.
    pub fn status(&self) -> Status {
        // A trace read to its end with the list naming some of its binaries (or no list).
        let named = |o: &&Outcome| matches!(o, Outcome::Done(..) | Outcome::OutputClosed(_));
        let unnamed = self.outcomes.contains(&Outcome::NoSuchBinary);
        if unnamed && !self.outcomes.iter().any(|o| named(&o)) {
            self.worst.max(Status::Usage)
        } else {
            self.worst
        }
    }

    /// Whether the reader of the output went away before the run ended.
    pub fn output_closed(&self) -> bool {
        self.closed
    }
}

/// Runs `plan` over `traces` into `printer`, and flushes it.
///
/// # Errors
///
/// Only output that cannot be written ends a run early; a reader that went away ends it
/// quietly ([`Ran::output_closed`]). A plan that conflicts with itself or with the number of
/// traces ([`Plan::conflict`]) is refused before anything is read, with an
/// [`io::ErrorKind::InvalidInput`] error holding the [`Conflict`].
pub fn run<W: Write, E: Write>(
    printer: &mut Output<W, E>,
    plan: &Plan,
    traces: &Traces<'_>,
) -> io::Result<Ran> {
    if let Some(conflict) = plan.conflict(traces.len()) {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, conflict));
    }
    let mut ran = Ran::new(plan);
    let done = match plan.shape {
        Shape::Each => {
            many::each(printer, plan, traces, true, |outcome, _| ran.add(outcome)).map(drop)
        }
        Shape::Merged => merge::merge(printer, plan, traces, &mut ran),
        Shape::Compared { min_overlap } => compare::compare(printer, plan, traces, min_overlap)
            .map(|(outcomes, status)| {
                outcomes.into_iter().for_each(|o| ran.add(o));
                ran.add_status(status);
            }),
    }
    .and_then(|()| printer.flush());
    match done {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ran.closed = true,
        done => done?,
    }
    Ok(ran)
}

/// Prints the identities of the files given to `/match` when no trace is: what a user
/// compares with `SPDDump /header`. The status is `Errors` when one has no identity.
pub fn identities<W: Write, E: Write>(
    printer: &mut Output<W, E>,
    files: &[MatchFile],
) -> io::Result<Status> {
    printer.identities(files)?;
    printer.flush()?;
    Ok(if files.iter().all(|f| f.identity.is_ok()) {
        Status::Clean
    } else {
        Status::Errors
    })
}

/// The printer a plan asks for, writing the dump to `out` and diagnostics to `err`. The
/// command line, the tests and the fuzzer all print through it.
pub fn printer<W: Write, E: Write>(plan: &Plan, out: W, err: E) -> Output<W, E> {
    Output::new(plan.format, !plan.banner(), out, err)
}

/// The printer, and what was reported through it for the trace at hand.
/// How many of a trace's diagnostics the HTML report lists; it counts them all.
const FIRST_KEPT: usize = 100;

struct Out<'a, P> {
    printer: &'a mut P,
    /// The diagnostics found.
    tally: Tally,
    /// The first [`FIRST_KEPT`] of them, for the HTML report's list.
    first: Vec<Diagnostic>,
    /// The other errors: `/match` and `/pdb` files that do not fit the trace, `/check`'s
    /// errors, files of ours that could not be written.
    failed: usize,
}

impl<'a, P: Printer> Out<'a, P> {
    fn new(printer: &'a mut P) -> Self {
        Out {
            printer,
            tally: Tally::default(),
            first: Vec::new(),
            failed: 0,
        }
    }

    /// Prints with `f`; a failure is the output's.
    fn print(&mut self, f: impl FnOnce(&mut P) -> io::Result<()>) -> Result<(), Error> {
        f(self.printer).map_err(Error::Write)
    }

    /// Counts and prints a diagnostic.
    fn report(&mut self, d: Diagnostic) -> Result<(), Error> {
        self.count(&d);
        self.print(|p| p.diagnostic(&d))
    }

    /// Counts a diagnostic, and keeps it when it is one of the first.
    fn count(&mut self, d: &Diagnostic) {
        self.tally.add(d);
        if self.first.len() < FIRST_KEPT {
            self.first.push(d.clone());
        }
    }

    /// Prints an error of the run about `file` that is not a problem in the trace (a file of
    /// ours that could not be written, a summary that could not be finished).
    fn fail(&mut self, file: &FileInfo<'_>, message: &str) -> Result<(), Error> {
        self.failed += 1;
        self.print(|p| p.error(file, message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_count_their_paths() {
        let open = |_: usize| -> Result<Input, OpenError> { Ok(Input::memory(Vec::new())) };
        let none: [String; 0] = [];
        let two = ["a.spt".to_owned(), "b.spt".to_owned()];
        let (empty, full) = (Traces::new(&none, &open), Traces::new(&two, &open));
        assert_eq!((empty.len(), empty.is_empty()), (0, true));
        assert_eq!((full.len(), full.is_empty()), (2, false));
    }
}
