//! Failures that end the work on a file: the input could not be read, or the output could not
//! be written. Problems *in* a file are not errors of this kind but [`crate::diag`]
//! diagnostics.

use std::fs::File;
use std::io;
use std::path::Path;

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

/// Opens `path` for reading. A directory is refused up front with the same words on every
/// platform (Windows cannot open one at all, and Unix fails only at the first read).
pub fn open_file(path: &Path) -> io::Result<File> {
    if std::fs::metadata(path)?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "it is a directory, not a file",
        ));
    }
    File::open(path)
}

/// What an I/O error says, in the same words on every platform for the common cases
/// (Windows and Unix word "not found" and "access denied" differently), and without the
/// `(os error N)` suffix.
pub fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => {
            let text = e.to_string();
            match text.rfind(" (os error ") {
                Some(at) if text.ends_with(')') => text[..at].to_owned(),
                _ => text,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_errors_read_the_same_everywhere() {
        let missing = open_file(Path::new("no/such/file.spt")).unwrap_err();
        assert_eq!(describe(&missing), "no such file or directory");
        let dir = open_file(Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap_err();
        assert_eq!(describe(&dir), "it is a directory, not a file");
        let other = io::Error::from_raw_os_error(22);
        assert!(
            !describe(&other).contains("os error"),
            "{}",
            describe(&other)
        );
    }
}
