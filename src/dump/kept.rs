//! What a trace's counters counted, kept for the views of its profile (and past the trace
//! when the traces are merged or compared), and what the `/match` files say of it.

use super::Plan;
use crate::analysis::stacks::StackCounts;
use crate::analysis::summary::Summary;
use crate::format::tables::Tables;
use crate::image::matching::{self, MatchResult};
use crate::image::symbols::SymbolMap;

/// What a trace's counters counted, with the names its addresses are shown by: a profile
/// the views read, kept past the trace when the traces are merged or compared.
pub(crate) struct Kept {
    /// Every address and arc per binary and source, when the plan counts them.
    pub summary: Option<Summary>,
    /// The distinct call stacks, when the plan keeps them.
    pub stacks: Option<StackCounts>,
    /// The binaries' names and identities.
    pub tables: Tables,
    /// The `/pdb` symbols attached to its binaries.
    pub symbols: SymbolMap,
}

/// The verdict of each `/match` file on the trace's program IDs.
pub(crate) fn match_results<'p>(plan: &'p Plan, tables: &Tables) -> Vec<MatchResult<'p>> {
    plan.matches
        .iter()
        .map(|file| MatchResult {
            file,
            verdict: file
                .identity
                .as_ref()
                .ok()
                .map(|id| matching::judge(id, tables)),
        })
        .collect()
}
