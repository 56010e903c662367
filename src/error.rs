//! Failures that end the work on a file: the input could not be read, or the output could not
//! be written. Problems *in* a file are not errors of this kind but [`crate::diag`]
//! diagnostics.

use std::io;

/// Why dumping a file ended early.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input could not be opened or read.
    #[error("cannot read at offset {offset:#010X}: {source}")]
    Read {
        /// Where the read was attempted.
        offset: u64,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The output could not be written (a closed pipe, a full disk).
    #[error("cannot write the output: {0}")]
    Write(#[source] io::Error),
}

impl Error {
    /// A read error at `offset`.
    #[cold]
    pub fn read(offset: u64, source: io::Error) -> Error {
        Error::Read { offset, source }
    }

    /// Whether this is the output pipe having been closed by its reader, which ends the
    /// program quietly.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Write(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

/// The result of dumping.
pub type Result<T> = std::result::Result<T, Error>;
