//! The traces of a run, in argument order, decoded on every core when that changes nothing
//! of the output.

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::sync_channel;

use super::trace::{self, Within};
use super::{Outcome, Plan, Traces};
use crate::input::{Input, OpenError};
use crate::output::{FileInfo, Printer, Recorder};
use crate::views::kept::Kept;

/// Whether traces are decoded on several threads: when there are cores and traces for it,
/// what each prints is small (it is held in memory until its turn), and none is standard
/// input. Either way the output is the same bytes.
fn in_parallel(workers: usize, plan: &Plan, paths: &[String], replays: bool) -> bool {
    replays && workers > 1 && plan.prints_little() && !paths.iter().any(|p| p == "-")
}

/// Dumps every trace into `printer`, in argument order, and gives each one's outcome and
/// what its counters counted to `take`; `last` when nothing follows the last trace in the
/// output. Returns whether the reader of the output went away during a trace, which ends
/// the run (a reader gone between traces is an error of the output, as any other).
///
/// When there are several traces, none is standard input, and each prints little (no
/// section: summaries and verdicts), they are decoded on as many threads as there are
/// cores, each into memory, and printed here in argument order as they are done: the same
/// bytes, both streams in the same order, as one after another, with at most a few traces'
/// output and counts held at once. Each thread then counts on its own, without a second
/// thread per trace.
pub(super) fn each<P: Printer>(
    printer: &mut P,
    plan: &Plan,
    traces: &Traces<'_>,
    last: bool,
    mut take: impl FnMut(Outcome, Option<Kept>),
) -> io::Result<bool> {
    let paths = traces.paths;
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(paths.len());
    let opener = traces
        .opener()
        .filter(|_| in_parallel(workers, plan, paths, printer.replays()));
    let within = |i: usize, alone: bool| Within {
        last: last && i + 1 == paths.len(),
        alone,
    };
    let Some(open) = opener else {
        for i in 0..paths.len() {
            let input = traces.open(i);
            let (outcome, kept) = open_one(printer, paths, i, input, plan, within(i, false))?;
            let closed = matches!(outcome, Outcome::OutputClosed(_));
            take(outcome, kept);
            if closed {
                return Ok(true);
            }
        }
        return Ok(false);
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
                    let recorder = Recorder::default();
                    let mut buffered = plan.printer(recorder.out(), recorder.err());
                    let kept = open_one(&mut buffered, paths, i, open(i), plan, within(i, true));
                    drop(buffered);
                    if done.send((i, kept, recorder.finish())).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);
        let mut pending = BTreeMap::new();
        let mut want = 0;
        for (i, kept, recorded) in results {
            pending.insert(i, (kept, recorded));
            while let Some((kept, recorded)) = pending.remove(&want) {
                let (outcome, kept) = kept?;
                // What was found is taken before it is printed: a reader that went away
                // keeps none of it from the run's status.
                take(outcome, kept);
                printer.replay(&recorded)?;
                want += 1;
            }
        }
        Ok(false)
    })
}

/// Dumps trace `i`, at `paths[i]` and opened as `input`, as [`trace::one`] does.
pub(super) fn open_one<P: Printer>(
    printer: &mut P,
    paths: &[String],
    i: usize,
    input: Result<Input, OpenError>,
    plan: &Plan,
    within: Within,
) -> io::Result<(Outcome, Option<Kept>)> {
    let file = FileInfo {
        path: &paths[i],
        size: input.as_ref().ok().and_then(Input::size),
    };
    trace::one(printer, &file, input, plan, within)
}
