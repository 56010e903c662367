//! Failures that end the work on a file: the input could not be read, or the output could not
//! be written. Problems *in* a file are not errors of this kind but [`crate::format::diag`]
//! diagnostics.

use std::io::{self, Read};

/// Why dumping a file ended early.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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

    /// The I/O error underneath.
    pub fn into_io(self) -> io::Error {
        match self {
            Error::Read { source, .. } | Error::Write(source) => source,
        }
    }

    /// Whether this is the output pipe having been closed by its reader, which ends the
    /// program quietly.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Write(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

/// A value of a named set (`/strindex`'s modes, `/stackorder`'s orders) that is none of
/// them.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{given}' is not {expected}")]
pub struct UnknownName {
    /// The value given.
    pub given: String,
    /// What it could have been, as a person reads it: `leaf-first or root-first`.
    pub expected: &'static str,
}

/// The result of dumping.
pub type Result<T> = std::result::Result<T, Error>;

/// The error for a file that ends at `at`, before the `size` it had when it was opened: what
/// it holds now is not what its header described.
#[cold]
pub(crate) fn shrunk(at: u64, size: u64) -> Error {
    Error::read(
        at,
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "the file ended at {at:#010X}, though it had {size} bytes when opened: was it changed while being read?"
            ),
        ),
    )
}

/// Reads until `buf` is full or the input ends, retrying interrupted reads; returns how many
/// bytes were read. `at` is the file offset of `buf[0]`, for the error. This is the one
/// read-until-full loop of the crate.
pub fn read_full(r: &mut impl Read, buf: &mut [u8], at: u64) -> Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::read(at + got as u64, e)),
        }
    }
    Ok(got)
}
