//! Which binaries a second thread takes, when the work of a profile is split by binary: the
//! fold of the call stacks (`stacks`), pprof's addresses.
//!
//! Each binary's work is done by one thread, in the order one thread alone would do it, so
//! what is made is the same; the split only evens out the time. [`joined`] takes what a
//! scoped thread gave, as every second thread of the crate's views is joined.

use std::cmp::Reverse;
use std::collections::BTreeMap;

/// What a scoped thread gave, its panic resumed on this one.
pub(crate) fn joined<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Whether there is a second core for a second thread.
pub(crate) fn two_cores() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

/// The binaries a second thread takes, by progid.
#[derive(Default)]
pub(crate) struct Share(Vec<bool>);

impl Share {
    /// Gives the binary `progid` to the second thread.
    pub(crate) fn add(&mut self, progid: u16) {
        let at = usize::from(progid);
        if self.0.len() <= at {
            self.0.resize(at + 1, false);
        }
        self.0[at] = true;
    }

    /// Whether the second thread takes the binary `progid`.
    pub(crate) fn has(&self, progid: u16) -> bool {
        self.0.get(usize::from(progid)).copied().unwrap_or(false)
    }

    /// Whether it holds any binary.
    pub(crate) fn any(&self) -> bool {
        self.0.contains(&true)
    }
}

/// The binaries the second thread takes of those with `work` each (bytes, addresses: any
/// measure that adds up): the largest first, each to the thread with less so far, this one
/// when even.
pub(crate) fn halves(work: BTreeMap<u16, usize>) -> Share {
    let mut largest: Vec<(usize, u16)> = work.into_iter().map(|(p, w)| (w, p)).collect();
    largest.sort_unstable_by_key(|&(w, p)| (Reverse(w), p));
    let mut share = Share::default();
    let (mut mine, mut theirs) = (0, 0);
    for (w, p) in largest {
        if theirs < mine {
            share.add(p);
            theirs += w;
        } else {
            mine += w;
        }
    }
    share
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_second_thread_takes_the_binaries_that_even_the_bytes() {
        let share = halves(BTreeMap::from([
            (0, 60),
            (1, 100),
            (2, 50),
            (3, 10),
            (4, 0),
        ]));
        // 1 here (100), 0 there (60), 2 there (110), 3 here (110), 4 here when even.
        assert_eq!(
            (0..6).map(|p| share.has(p)).collect::<Vec<_>>(),
            [true, false, true, false, false, false]
        );
        // Even from the start: the first binary here, the second there.
        let share = halves(BTreeMap::from([(5, 10), (2, 10)]));
        assert!(!share.has(2) && share.has(5));
        assert!(!halves(BTreeMap::from([(0, 10)])).any());
    }
}
