//! What every output format prints, in the order the dump calls it.
//!
//! Per file: [`Printer::begin_file`], then the selected sections in file order (header,
//! string table, program IDs, events), then the summary, then the verdict of `/validate`.
//! Diagnostics may come at any point after `begin_file`.

use std::borrow::Cow;
use std::io;

use crate::diag::{Diagnostic, Tally};
use crate::dump::MatchResult;
use crate::header::Header;
use crate::input::Tables;
use crate::record::Record;
use crate::strtab::StringTable;
use crate::summary::Summary;

/// The file being dumped, as the output names it.
#[derive(Clone, Copy, Debug)]
pub struct FileInfo<'a> {
    /// The path as given on the command line; `-` for standard input.
    pub path: &'a str,
    /// The size when known up front; `None` on a pipe.
    pub size: Option<u64>,
}

impl FileInfo<'_> {
    /// Whether this is standard input.
    pub fn is_stdin(&self) -> bool {
        self.path == "-"
    }

    /// How text names the file: its path, or "standard input".
    pub fn label(&self) -> Cow<'_, str> {
        if self.is_stdin() {
            Cow::Borrowed("standard input")
        } else {
            Cow::Borrowed(self.path)
        }
    }
}

/// An output format.
pub trait Printer {
    /// Starts a file.
    fn begin_file(&mut self, file: &FileInfo<'_>) -> io::Result<()>;
    /// The header section.
    fn header(&mut self, header: &Header) -> io::Result<()>;
    /// The string-table section; `table` is `None` when it could not be read.
    fn strings(&mut self, header: &Header, table: Option<&StringTable>) -> io::Result<()>;
    /// The program-ID section.
    fn progids(&mut self, header: &Header, tables: &Tables) -> io::Result<()>;
    /// Starts the events section.
    fn begin_events(&mut self) -> io::Result<()>;
    /// Ends the events section.
    fn end_events(&mut self) -> io::Result<()>;
    /// One record of the events section.
    fn record(&mut self, record: &Record<'_>, tables: &Tables) -> io::Result<()>;
    /// A problem in the file.
    fn diagnostic(&mut self, diagnostic: &Diagnostic) -> io::Result<()>;
    /// The summary of the file's samples.
    fn summary(&mut self, summary: &Summary, tables: &Tables) -> io::Result<()>;
    /// The verdicts of `/match`, one per file.
    fn matches(&mut self, results: &[MatchResult<'_>], tables: &Tables) -> io::Result<()>;
    /// The verdict of `/validate`.
    fn validation(&mut self, file: &FileInfo<'_>, tally: Tally) -> io::Result<()>;
    /// Ends a file; `last` when no file follows.
    fn end_file(&mut self, last: bool) -> io::Result<()>;
    /// The file could not be opened or read to its end.
    fn error(&mut self, file: &FileInfo<'_>, message: &str) -> io::Result<()>;
    /// Writes out what is buffered.
    fn flush(&mut self) -> io::Result<()>;
}
