//! What a trace's counters counted: a profile the views read, kept past the trace when
//! the traces are merged or compared.

use crate::analysis::lbr::RangeCounts;
use crate::analysis::stacks::StackCounts;
use crate::analysis::summary::Summary;
use crate::format::tables::Tables;
use crate::image::symbols::SymbolMap;

/// What a trace's counters counted, with the names its addresses are shown by: a profile
/// the views read, kept past the trace when the traces are merged or compared.
pub(crate) struct Kept {
    /// Every address and arc per binary and source, when the plan counts them.
    pub summary: Option<Summary>,
    /// The distinct call stacks, when the plan keeps them.
    pub stacks: Option<StackCounts>,
    /// The distinct LBR records, whole, when the plan keeps them.
    pub lbr: Option<RangeCounts>,
    /// The binaries' names and identities.
    pub tables: Tables,
    /// The `/pdb` symbols attached to its binaries.
    pub symbols: SymbolMap,
}
