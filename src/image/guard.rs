//! A guard around the PDB reader's parsing, for hostile files.
//!
//! The `pdb2` crate panics on some inconsistent records (a line block whose sizes run past
//! its data slices it with `split_at`, found by `lines.rs`'s damaged-PDB test). Its parsing
//! runs inside [`guarded`], which turns such a panic into an error the caller reports like any
//! unreadable record, and keeps the panic's message off standard error: a damaged PDB is bad
//! input, not a bug of ours to print a backtrace for.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// Whether this thread is inside [`guarded`]: its panics are reported as errors.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// The panic hook, installed once: silent inside [`guarded`], the previous hook elsewhere.
fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(Cell::get) {
                previous(info);
            }
        }));
    });
}

/// A panic of the PDB reader, caught.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ReaderPanicked(pub String);

impl std::error::Error for ReaderPanicked {}

impl std::fmt::Display for ReaderPanicked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the PDB reader failed on inconsistent records ({})",
            self.0
        )
    }
}

/// Runs `parse`, the PDB reader's work on untrusted bytes; a panic in it becomes an error.
pub(crate) fn guarded<T>(parse: impl FnOnce() -> T) -> Result<T, ReaderPanicked> {
    install_hook();
    let outer = GUARDED.with(|g| g.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(parse));
    GUARDED.with(|g| g.set(outer));
    result.map_err(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        ReaderPanicked(message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_and_the_guard_nests() {
        assert_eq!(guarded(|| 7), Ok(7));
        let e = guarded(|| -> u8 { panic!("mid > len") }).unwrap_err();
        assert_eq!(e.0, "mid > len");
        let inner = guarded(|| guarded(|| -> u8 { panic!("inner") }));
        assert_eq!(inner, Ok(Err(ReaderPanicked("inner".to_owned()))));
        assert!(!GUARDED.with(Cell::get));
    }
}
