//! One JSON line.

use std::io::{self, Write};

use serde::Serialize;

/// Writes `value` as one JSON line.
pub(crate) fn write_line(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(io::Error::from)?;
    out.write_all(b"\n")
}
