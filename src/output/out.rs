//! The printer, and what was reported through it for the trace at hand.

use std::io;

use crate::format::diag::{Diagnostic, Tally};
use crate::format::error::Error;
use crate::output::{FileInfo, Printer};

/// How many of a trace's diagnostics the HTML report lists; it counts them all.
const FIRST_KEPT: usize = 100;

/// The printer, and what was reported through it for the trace at hand.
pub(crate) struct Out<'a, P> {
    pub(crate) printer: &'a mut P,
    /// The diagnostics found.
    pub(crate) tally: Tally,
    /// The first [`FIRST_KEPT`] of them, for the HTML report's list.
    pub(crate) first: Vec<Diagnostic>,
    /// The other errors: `/match` and `/pdb` files that do not fit the trace, `/check`'s
    /// errors, files of ours that could not be written.
    pub(crate) failed: usize,
    /// What kept the views of the profile at hand that showed nothing from running: the
    /// input each missed (a PDB, an image, LBR records), said once the views are done
    /// ([`Out::unable`]).
    pub(crate) unable: Vec<String>,
}

impl<'a, P: Printer> Out<'a, P> {
    pub(crate) fn new(printer: &'a mut P) -> Self {
        Out {
            printer,
            tally: Tally::default(),
            first: Vec::new(),
            failed: 0,
            unable: Vec::new(),
        }
    }

    /// Prints with `f`; a failure is the output's.
    pub(crate) fn print(&mut self, f: impl FnOnce(&mut P) -> io::Result<()>) -> Result<(), Error> {
        f(self.printer).map_err(Error::Write)
    }

    /// Counts and prints a diagnostic.
    pub(crate) fn report(&mut self, d: Diagnostic) -> Result<(), Error> {
        self.count(&d);
        self.print(|p| p.diagnostic(&d))
    }

    /// Counts a diagnostic, and keeps it when it is one of the first.
    pub(crate) fn count(&mut self, d: &Diagnostic) {
        self.tally.add(d);
        if self.first.len() < FIRST_KEPT {
            self.first.push(d.clone());
        }
    }

    /// Keeps why a view showed nothing: an input it needs was not given. Once the views of
    /// the profile are done, it is said as an error when nothing else was shown of the
    /// profile, and as a note when something was.
    pub(crate) fn unable(&mut self, message: String) {
        self.unable.push(message);
    }

    /// Prints an error of the run about `file` that is not a problem in the trace (a file of
    /// ours that could not be written, a summary that could not be finished).
    pub(crate) fn fail(&mut self, file: &FileInfo<'_>, message: &str) -> Result<(), Error> {
        self.failed += 1;
        self.print(|p| p.error(file, message))
    }
}
