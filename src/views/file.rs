//! Writing a view's file: created, written through a buffer, and an error of the run naming
//! it when it cannot be.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::format::error::Error;
use crate::input::describe;
use crate::output::{FileInfo, Out, Printer};

/// Creates `path` and writes it with `write`, through a buffer.
pub(crate) fn write_file<T>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<T>,
) -> io::Result<T> {
    let mut w = BufWriter::new(File::create(path)?);
    let t = write(&mut w)?;
    w.flush()?;
    Ok(t)
}

/// Reports a file of ours that could not be written: an error of the run.
pub(crate) fn cannot_write<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    what: &str,
    path: &Path,
    e: &io::Error,
) -> Result<(), Error> {
    out.fail(file, &cannot_write_message(what, path, e))
}

/// `cannot write the flame graph PATH: why`.
pub(crate) fn cannot_write_message(what: &str, path: &Path, e: &io::Error) -> String {
    format!(
        "cannot write the {what} {}: {}",
        path.display(),
        describe(e)
    )
}
