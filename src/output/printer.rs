//! The `Printer` trait every format implements, and a recording of what a printer wrote
//! (for traces decoded on other threads, printed in order).

use std::cell::RefCell;
use std::io::{self, Write};
use std::rc::Rc;

use super::FileInfo;
use super::render::Render;
use crate::format::diag::Diagnostic;
use crate::format::record::Record;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;

/// Appends a decimal number.
#[inline]
pub(crate) fn push_dec(line: &mut Vec<u8>, v: impl itoa::Integer) {
    line.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// The share of `part` in `total` as a percentage with two decimals, as tables show it.
pub(crate) fn percent(part: u128, total: u128) -> String {
    if total == 0 {
        return "-".into();
    }
    let share = part as f64 * 100.0 / total as f64;
    if part > 0 && share < 0.005 {
        "<0.01%".into()
    } else {
        format!("{share:.2}%")
    }
}

/// Where a run goes: a format (text, JSON Lines: [`Output`](super::Output)), or whatever a
/// program makes of the reports ([`Collected`](super::Collected) keeps them as values). A
/// run calls it in the order of the dump: per file `begin_file`, its sections, its records,
/// its views and verdicts (each a [`Render`] to `show`), `end_file`; diagnostics, errors
/// and notes at any point after `begin_file`.
pub trait Printer {
    /// Writes a report.
    fn show(&mut self, report: &dyn Render) -> io::Result<()>;
    /// Whether what a printer of the run's own format printed into memory may be replayed
    /// into this one ([`Printer::replay`]): then the run decodes several traces at once,
    /// each into memory, and replays them in order.
    fn replays(&self) -> bool {
        false
    }
    /// Starts a file.
    fn begin_file(&mut self, file: &FileInfo<'_>) -> io::Result<()>;
    /// Starts the events section.
    fn begin_events(&mut self) -> io::Result<()>;
    /// Ends the events section.
    fn end_events(&mut self) -> io::Result<()>;
    /// One record of the events section; `tables` name its binary, `symbols` its addresses.
    fn record(
        &mut self,
        record: &Record<'_>,
        tables: &Tables,
        symbols: &SymbolMap,
    ) -> io::Result<()>;
    /// A problem in the file.
    fn diagnostic(&mut self, diagnostic: &Diagnostic) -> io::Result<()>;
    /// Ends a file; `last` when no file follows.
    fn end_file(&mut self, last: bool) -> io::Result<()>;
    /// The file could not be opened or read to its end.
    fn error(&mut self, file: &FileInfo<'_>, message: &str) -> io::Result<()>;
    /// Something about the file worth knowing that is not a problem in it (a `/binary`
    /// list naming none of its binaries, when another trace has them).
    fn note(&mut self, file: &FileInfo<'_>, message: &str) -> io::Result<()>;
    /// Writes out what is buffered.
    fn flush(&mut self) -> io::Result<()>;
    /// Writes what another printer of the same format printed into memory, both streams in
    /// the order it wrote them, as if it had been printed here.
    fn replay(&mut self, recorded: &Recorded) -> io::Result<()>;
}

/// What a printer printed into memory: the output and error streams, in the order they were
/// written.
#[derive(Debug, Default)]
pub struct Recorded {
    /// Runs of bytes, each with whether it went to the error stream.
    chunks: Vec<(bool, Vec<u8>)>,
}

impl Recorded {
    /// Writes what was recorded to `out` and `err`, in order: the output is flushed before
    /// each run of the error stream, so that a terminal shows them as they were printed.
    pub(crate) fn replay(&self, out: &mut impl Write, err: &mut impl Write) -> io::Result<()> {
        for (to_err, bytes) in &self.chunks {
            if *to_err {
                out.flush()?;
                err.write_all(bytes)?;
                err.flush()?;
            } else {
                out.write_all(bytes)?;
            }
        }
        Ok(())
    }
}

/// Records what a printer prints into memory: give it [`Recorder::out`] and
/// [`Recorder::err`] as its streams, then [`Recorder::finish`].
#[derive(Default)]
pub(crate) struct Recorder(Rc<RefCell<Recorded>>);

/// One stream of a [`Recorder`].
pub(crate) struct Recording {
    recorded: Rc<RefCell<Recorded>>,
    to_err: bool,
}

impl Recorder {
    /// The output stream.
    pub(crate) fn out(&self) -> Recording {
        Recording {
            recorded: Rc::clone(&self.0),
            to_err: false,
        }
    }

    /// The error stream.
    pub(crate) fn err(&self) -> Recording {
        Recording {
            recorded: Rc::clone(&self.0),
            to_err: true,
        }
    }

    /// What was recorded, once the printer is done with the streams.
    pub(crate) fn finish(self) -> Recorded {
        self.0.take()
    }
}

impl Write for Recording {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut recorded = self.recorded.borrow_mut();
        match recorded.chunks.last_mut() {
            Some((to_err, bytes)) if *to_err == self.to_err => bytes.extend_from_slice(buf),
            _ => recorded.chunks.push((self.to_err, buf.to_vec())),
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The output format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// Text for people (the default).
    #[default]
    Text,
    /// JSON Lines (`/json`).
    Json,
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::{Recorder, percent};

    #[test]
    fn a_recording_keeps_each_stream_s_writes_in_one_run_until_the_other_writes() {
        let recorder = Recorder::default();
        let (mut out, mut err) = (recorder.out(), recorder.err());
        out.write_all(b"a").unwrap();
        out.write_all(b"b").unwrap();
        err.write_all(b"c").unwrap();
        err.write_all(b"d").unwrap();
        out.write_all(b"e").unwrap();
        drop((out, err));
        let recorded = recorder.finish();
        let runs: Vec<(bool, &[u8])> = recorded
            .chunks
            .iter()
            .map(|(to_err, bytes)| (*to_err, bytes.as_slice()))
            .collect();
        assert_eq!(runs, [(false, &b"ab"[..]), (true, b"cd"), (false, b"e")]);
    }

    #[test]
    fn a_share_is_shown_as_it_rounds_and_below_a_hundredth_as_such() {
        assert_eq!(percent(1, 0), "-");
        assert_eq!(percent(0, 7), "0.00%");
        assert_eq!(percent(7, 7), "100.00%");
        // 1/20,000 is 0.005%: two decimals round it up, so it is no share "below 0.01%".
        assert_eq!(percent(1, 20_000), "0.01%");
        assert_eq!(percent(1, 20_001), "<0.01%");
        assert_eq!(percent(1, 3), "33.33%");
    }
}
