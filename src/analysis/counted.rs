//! What a profile's counters counted, as the exporters read it, and the share of a part
//! in a total.

use super::stacks::StackCounts;
use super::summary::Summary;
use crate::format::stackorder::StackOrder;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;

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
    pub summary: &'a Summary,
    /// The distinct call stacks.
    pub stacks: &'a StackCounts,
    /// How their frames are stored.
    pub order: StackOrder,
    /// The binaries' names and identities.
    pub tables: &'a Tables,
    /// The `/pdb` symbols.
    pub symbols: &'a SymbolMap,
}
