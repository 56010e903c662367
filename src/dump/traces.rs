//! The traces of a run, and how each is opened: lazily on any thread, or already open.

use std::cell::RefCell;
use std::io;

use crate::input::{Input, OpenError};

/// The traces of a run: their paths as given (`-` for standard input), and how to open
/// each.
pub struct Traces<'a> {
    pub(super) paths: &'a [String],
    open: Open<'a>,
}

/// How the traces of a run are opened.
enum Open<'a> {
    /// Each when its turn comes, on whichever thread reads it.
    Lazily(&'a (dyn Fn(usize) -> Result<Input, OpenError> + Sync)),
    /// Already open; read one after another.
    Given(RefCell<Vec<Option<Result<Input, OpenError>>>>),
}

impl<'a> Traces<'a> {
    /// The traces at `paths`; `open(i)` opens the one at `paths[i]`, and may be called from
    /// several threads at once.
    pub fn new(
        paths: &'a [String],
        open: &'a (dyn Fn(usize) -> Result<Input, OpenError> + Sync),
    ) -> Self {
        Traces {
            paths,
            open: Open::Lazily(open),
        }
    }

    /// The traces at `paths`, already opened (or not): `inputs[i]` is the one at `paths[i]`.
    /// They are read one after another, on this thread.
    ///
    /// # Panics
    ///
    /// When there are not as many inputs as paths.
    pub fn opened(paths: &'a [String], inputs: Vec<Result<Input, OpenError>>) -> Self {
        assert_eq!(paths.len(), inputs.len(), "an input per path");
        Traces {
            paths,
            open: Open::Given(RefCell::new(inputs.into_iter().map(Some).collect())),
        }
    }

    /// Opens trace `i`, which is read once.
    pub(super) fn open(&self, i: usize) -> Result<Input, OpenError> {
        match &self.open {
            Open::Lazily(open) => open(i),
            Open::Given(inputs) => inputs.borrow_mut()[i]
                .take()
                .unwrap_or_else(|| Err(OpenError(io::Error::other("read twice")))),
        }
    }

    /// How to open the traces from several threads, when they can be.
    pub(super) fn opener(&self) -> Option<&'a (dyn Fn(usize) -> Result<Input, OpenError> + Sync)> {
        match self.open {
            Open::Lazily(open) => Some(open),
            Open::Given(_) => None,
        }
    }

    /// How many traces there are.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_count_their_paths() {
        let open = |_: usize| -> Result<Input, OpenError> { Ok(Input::memory(Vec::new())) };
        let none: [String; 0] = [];
        let two = ["a.spt".to_owned(), "b.spt".to_owned()];
        let (empty, full) = (Traces::new(&none, &open), Traces::new(&two, &open));
        assert_eq!((empty.len(), empty.is_empty()), (0, true));
        assert_eq!((full.len(), full.is_empty()), (2, false));
    }
}
