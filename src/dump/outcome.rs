//! How each trace of a run ended, and what the run calls for: the command line makes an
//! exit code of it.

use super::Plan;
use crate::format::diag::Tally;

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
    pub(super) closed: bool,
}

impl Ran {
    pub(super) fn new(plan: &Plan) -> Ran {
        Ran {
            strict: plan.strict,
            ..Ran::default()
        }
    }

    /// Adds the outcome of one trace.
    pub(super) fn add(&mut self, outcome: Outcome) {
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
    pub(super) fn add_status(&mut self, status: Status) {
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
