//! The printer, and what was reported through it for the trace at hand.

use std::io::{self, Write};

use super::Plan;
use crate::format::diag::{Diagnostic, Tally};
use crate::format::error::Error;
use crate::output::{FileInfo, Output, Printer};

/// How many of a trace's diagnostics the HTML report lists; it counts them all.
const FIRST_KEPT: usize = 100;

/// The printer, and what was reported through it for the trace at hand.
pub(super) struct Out<'a, P> {
    pub(super) printer: &'a mut P,
    /// The diagnostics found.
    pub(super) tally: Tally,
    /// The first [`FIRST_KEPT`] of them, for the HTML report's list.
    pub(super) first: Vec<Diagnostic>,
    /// The other errors: `/match` and `/pdb` files that do not fit the trace, `/check`'s
    /// errors, files of ours that could not be written.
    pub(super) failed: usize,
}

impl<'a, P: Printer> Out<'a, P> {
    pub(super) fn new(printer: &'a mut P) -> Self {
        Out {
            printer,
            tally: Tally::default(),
            first: Vec::new(),
            failed: 0,
        }
    }

    /// Prints with `f`; a failure is the output's.
    pub(super) fn print(&mut self, f: impl FnOnce(&mut P) -> io::Result<()>) -> Result<(), Error> {
        f(self.printer).map_err(Error::Write)
    }

    /// Counts and prints a diagnostic.
    pub(super) fn report(&mut self, d: Diagnostic) -> Result<(), Error> {
        self.count(&d);
        self.print(|p| p.diagnostic(&d))
    }

    /// Counts a diagnostic, and keeps it when it is one of the first.
    pub(super) fn count(&mut self, d: &Diagnostic) {
        self.tally.add(d);
        if self.first.len() < FIRST_KEPT {
            self.first.push(d.clone());
        }
    }

    /// Prints an error of the run about `file` that is not a problem in the trace (a file of
    /// ours that could not be written, a summary that could not be finished).
    pub(super) fn fail(&mut self, file: &FileInfo<'_>, message: &str) -> Result<(), Error> {
        self.failed += 1;
        self.print(|p| p.error(file, message))
    }
}

/// The printer a plan asks for, writing the dump to `out` and diagnostics to `err`. The
/// command line, the tests and the fuzzer all print through it.
pub fn printer<W: Write, E: Write>(plan: &Plan, out: W, err: E) -> Output<W, E> {
    Output::new(plan.format, !plan.banner(), out, err)
}
