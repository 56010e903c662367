//! Where a report writes itself as JSON Lines: the output, the error stream, and the path
//! of the file at hand, which most lines carry.

use std::io::{self, Write};

use serde::Serialize;

use super::line::write_line;
use crate::output::FileInfo;

/// Where a report writes itself as JSON Lines ([`Render::json`](crate::output::Render::json)): one object per line, and
/// the error stream.
pub struct Json<'a> {
    pub(super) out: &'a mut dyn Write,
    pub(super) err: &'a mut dyn Write,
    /// The path of the file being dumped, which most lines carry.
    pub(crate) path: &'a str,
}

impl Json<'_> {
    /// Writes `value` as one line.
    pub(crate) fn line(&mut self, value: &impl Serialize) -> io::Result<()> {
        write_line(&mut self.out, value)
    }

    /// An `error` or `note` line on the output, for scripts, and the same words on the error
    /// stream, for the person watching.
    pub(crate) fn message(
        &mut self,
        kind: &str,
        file: &FileInfo<'_>,
        message: &str,
    ) -> io::Result<()> {
        self.line(&MessageLine {
            kind,
            path: file.path,
            message,
        })?;
        self.out.flush()?;
        let note = if kind == "note" { "note: " } else { "" };
        writeln!(self.err, "sptdump: {}: {note}{message}", file.label())?;
        self.err.flush()
    }
}

/// An `error` or a `note` line: a file that could not be read, or a word about it.
#[derive(Serialize)]
struct MessageLine<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    path: &'a str,
    message: &'a str,
}
