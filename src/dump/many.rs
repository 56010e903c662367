//! Several traces in one run: dumped in argument order, decoded on every core when that
//! changes nothing of the output.

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;

use super::{Collected, Options, Outcome, RunStatus, Sections, Status, dump_file, dump_keeping};
use crate::input::Input;
use crate::output::{FileInfo, Output, Printer};

/// Dumps every trace into `printer`, in argument order, and gives each one's outcome and
/// counts to `take`; `last` when nothing follows the last trace. `open(i)` opens trace `i`,
/// whose path as given is `paths[i]`. Returns whether the reader of the output went away.
///
/// When there are several traces, none is standard input, and what each prints is small
/// (`/validate`, or no section but summaries and verdicts), they are decoded on as many
/// threads as there are cores, each trace into memory, and printed here in argument order as
/// they are done: the same bytes as one after another, with at most a few traces' output and
/// counts held at once. Each thread then counts on its own, without a second thread per
/// trace.
pub(super) fn each<P: Printer>(
    printer: &mut P,
    paths: &[String],
    open: &(dyn Fn(usize) -> Result<Input, String> + Sync),
    opts: &Options,
    last: bool,
    mut take: impl FnMut(Outcome, Option<Collected>),
) -> io::Result<bool> {
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(paths.len());
    let small = opts.validate || opts.sections == Sections::default();
    let parallel = workers > 1 && small && !paths.iter().any(|p| p == "-");
    let is_last = |i: usize| last && i + 1 == paths.len();
    if !parallel {
        for (i, path) in paths.iter().enumerate() {
            let input = open(i);
            let info = FileInfo {
                path,
                size: input.as_ref().ok().and_then(Input::size),
            };
            let (outcome, collected) = one(printer, &info, input, opts, is_last(i))?;
            let closed = matches!(outcome, Outcome::OutputClosed(_));
            take(outcome, collected);
            if closed {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    let opts = &Options {
        one_thread: true,
        ..opts.clone()
    };
    let next = AtomicUsize::new(0);
    let (done, results) = sync_channel(workers);
    std::thread::scope(|scope| -> io::Result<bool> {
        for _ in 0..workers {
            let done = done.clone();
            let next = &next;
            scope.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= paths.len() {
                        break;
                    }
                    let mut buffered: Output<Vec<u8>, Vec<u8>> =
                        super::printer(opts, Vec::new(), Vec::new());
                    let input = open(i);
                    let info = FileInfo {
                        path: &paths[i],
                        size: input.as_ref().ok().and_then(Input::size),
                    };
                    let kept = one(&mut buffered, &info, input, opts, is_last(i));
                    if done.send((i, kept, buffered.into_inner())).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);
        let mut pending = BTreeMap::new();
        let mut want = 0;
        for (i, kept, bytes) in results {
            pending.insert(i, (kept, bytes));
            while let Some((kept, (out, err))) = pending.remove(&want) {
                let (outcome, collected) = kept?;
                take(outcome, collected);
                match printer.replay(&out, &err) {
                    // The reader has gone: what was found so far has been taken.
                    Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(true),
                    written => written?,
                }
                want += 1;
            }
        }
        Ok(false)
    })
}

/// One trace: dumped into `printer` and closed, what it counted kept.
fn one<P: Printer>(
    printer: &mut P,
    file: &FileInfo<'_>,
    input: Result<Input, String>,
    opts: &Options,
    last: bool,
) -> io::Result<(Outcome, Option<Collected>)> {
    Ok(match input {
        Ok(input) => {
            let kept = dump_keeping(printer, file, input, opts)?;
            if !matches!(kept.0, Outcome::OutputClosed(_)) {
                printer.end_file(last)?;
            }
            kept
        }
        Err(message) => (dump_file(printer, file, Err(message), opts, last)?, None),
    })
}

/// Dumps every trace of a run into `printer`, in argument order (on every core when that
/// changes nothing of the output), and returns the run's status. `open(i)` opens trace `i`,
/// whose path as given is `paths[i]`.
pub fn run<P: Printer>(
    printer: &mut P,
    paths: &[String],
    open: &(dyn Fn(usize) -> Result<Input, String> + Sync),
    opts: &Options,
) -> io::Result<Status> {
    let mut status = RunStatus::default();
    each(printer, paths, open, opts, true, |outcome, _| {
        status.add(&outcome, opts);
    })?;
    Ok(status.status())
}
