//! Analysis: what a trace's samples add up to.
//!
//! Each analysis takes the decoded records one at a time and keeps a table per unique key
//! (an RVA, an arc, a stack), never anything per sample: [`summary`] counts per binary and
//! source, with `counts` as its hash tables and `collect` spreading the work over two
//! threads; [`stacks`] keeps the unique call stacks (one after another, in `slices`) and
//! folds them by key, which `functions` turns into inclusive and exclusive hits; [`check`]
//! judges whether a trace is fit for SPDConvert, and `compare` how two traces differ;
//! `lines` finds the hottest source lines. `keys` is the one rule for what an address is
//! attributed to and how that is named. `share` splits a profile's binaries between two
//! threads, and `memory` hands back what a helper thread freed.
//!
//! An analysis produces a report of plain values; printing it is the output layer's work.

pub mod check;
pub(crate) mod collect;
pub(crate) mod compare;
pub(crate) mod counts;
pub(crate) mod functions;
pub(crate) mod index;
pub(crate) mod joined;
pub(crate) mod keys;
pub(crate) mod lines;
pub(crate) mod memory;
pub(crate) mod share;
pub(crate) mod slices;
pub mod stacks;
pub mod summary;

use crate::format::tables::Tables;
use crate::image::symbols::SymbolMap;

/// The share of `part` in `total`, in [0, 1]; 0 of nothing.
pub(crate) fn share(part: u128, total: u128) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 / total as f64
    }
}

/// Everything a profile's counters counted, as the exporters read it: of one trace, or of
/// several merged.
#[derive(Clone, Copy)]
pub(crate) struct Counted<'a> {
    /// Every address and arc per binary and source.
    pub summary: &'a summary::Summary,
    /// The distinct call stacks.
    pub stacks: &'a stacks::StackCounts,
    /// How their frames are stored.
    pub order: stacks::StackOrder,
    /// The binaries' names and identities.
    pub tables: &'a Tables,
    /// The `/pdb` symbols.
    pub symbols: &'a SymbolMap,
}
