//! A printer that keeps what a run reports as values ([`Reported`]), with the diagnostics,
//! errors and notes, for a program that uses the library rather than reading text.
//!
//! ```no_run
//! use sptdump::dump::{self, Traces};
//! use sptdump::input::Input;
//! use sptdump::output::{Collected, Reported};
//! use sptdump::views::{Plan, Sections, View, functions::Functions};
//!
//! let mut plan = Plan::default();
//! plan.sections = Sections::NONE;
//! plan.views.add(View::Functions(Functions));
//! let paths = ["trace.spt".to_owned()];
//! let open = |_: usize| Input::open("trace.spt".as_ref());
//! let mut collected = Collected::default();
//! dump::run(&mut collected, &plan, &Traces::new(&paths, &open))?;
//! for (file, report) in &collected.reports {
//!     if let Reported::Functions(lines) = report {
//!         println!("{file}: {} tables", lines.len());
//!     }
//! }
//! # Ok::<(), dump::RunError>(())
//! ```

use std::io;

use super::reported::Reported;
use super::{FileInfo, Printer, Recorded, Render};
use crate::format::diag::Diagnostic;
use crate::format::record::Record;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;

/// What a run reported, as values, in the order it reported them; each with the file it is
/// of (as given; `-` for standard input).
#[non_exhaustive]
#[derive(Debug, Default)]
pub struct Collected {
    /// Each view's report and verdict.
    pub reports: Vec<(String, Reported)>,
    /// The problems found in the files.
    pub diagnostics: Vec<(String, Diagnostic)>,
    /// What could not be done: a file unread, a file of ours unwritten.
    pub errors: Vec<(String, String)>,
    /// What is worth knowing besides.
    pub notes: Vec<(String, String)>,
    /// The file at hand.
    file: String,
}

impl Printer for Collected {
    fn show(&mut self, report: &dyn Render) -> io::Result<()> {
        if let Some(reported) = report.reported() {
            self.reports.push((self.file.clone(), reported));
        }
        Ok(())
    }

    fn begin_file(&mut self, file: &FileInfo<'_>) -> io::Result<()> {
        file.path.clone_into(&mut self.file);
        Ok(())
    }

    fn begin_events(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn end_events(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn record(&mut self, _: &Record<'_>, _: &Tables, _: &SymbolMap) -> io::Result<()> {
        Ok(())
    }

    fn diagnostic(&mut self, diagnostic: &Diagnostic) -> io::Result<()> {
        self.diagnostics
            .push((self.file.clone(), diagnostic.clone()));
        Ok(())
    }

    fn end_file(&mut self, _: bool) -> io::Result<()> {
        Ok(())
    }

    fn error(&mut self, file: &FileInfo<'_>, message: &str) -> io::Result<()> {
        self.errors.push((file.path.to_owned(), message.to_owned()));
        Ok(())
    }

    fn note(&mut self, file: &FileInfo<'_>, message: &str) -> io::Result<()> {
        self.notes.push((file.path.to_owned(), message.to_owned()));
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Never asked: a run replays only into a printer that [`Printer::replays`].
    fn replay(&mut self, _: &Recorded) -> io::Result<()> {
        Ok(())
    }
}
