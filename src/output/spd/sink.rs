//! Where the views of a file write: its output, its name, text or JSON Lines.

use std::io::Write;

/// Where the views write: text or JSON Lines, with the file's name.
pub(super) struct Sink<'w, W: Write> {
    pub(super) out: &'w mut W,
    pub(super) file: &'w str,
    pub(super) json: bool,
}

impl<'w, W: Write> Sink<'w, W> {
    pub(super) fn new(out: &'w mut W, file: &'w str, json: bool) -> Self {
        Sink { out, file, json }
    }
}
