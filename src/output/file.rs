//! The file being dumped, as the output names it.

use std::borrow::Cow;

/// The file being dumped, as the output names it.
#[non_exhaustive]
#[derive(Clone, Copy, Debug)]
pub struct FileInfo<'a> {
    /// The path as given on the command line; `-` for standard input.
    pub path: &'a str,
    /// The size when known up front; `None` on a pipe.
    pub size: Option<u64>,
}

impl<'a> FileInfo<'a> {
    /// The file at `path` (`-` for standard input), of `size` bytes when known up front.
    pub fn new(path: &'a str, size: Option<u64>) -> Self {
        FileInfo { path, size }
    }

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
