//! What a trace's counters counted, kept for the views of its profile (and past the trace
//! when the traces are merged or compared), and what the `/match` files say of it.

use std::sync::Arc;

use super::Plan;
use crate::analysis::lbr::RangeCounts;
use crate::analysis::stacks::StackCounts;
use crate::analysis::summary::Summary;
use crate::format::progid::registry_form;
use crate::format::tables::Tables;
use crate::image::code::ImageFile;
use crate::image::ident::Identity;
use crate::image::matching::{self, MatchResult, PdbFile};
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

/// A file a trace's binaries are given by GUID and age: a `/pdb` (its functions) or an
/// `/image` (its code).
#[derive(Clone, Copy)]
pub(super) enum BuildFile<'p> {
    Pdb(&'p PdbFile),
    Image(&'p ImageFile),
}

impl BuildFile<'_> {
    /// The `/pdb` and `/image` files of `plan`.
    pub(super) fn all(plan: &Plan) -> impl Iterator<Item = BuildFile<'_>> {
        let pdbs = plan.pdbs.iter().map(BuildFile::Pdb);
        pdbs.chain(plan.images.iter().map(BuildFile::Image))
    }

    /// Its identity.
    pub(super) fn identity(&self) -> &Identity {
        match self {
            BuildFile::Pdb(pdb) => &pdb.identity,
            BuildFile::Image(image) => &image.identity,
        }
    }

    /// Attaches what it gives to `progid`.
    pub(super) fn attach(&self, to: &mut SymbolMap, progid: u16) {
        match self {
            BuildFile::Pdb(pdb) => to.attach(progid, Arc::clone(&pdb.symbols)),
            BuildFile::Image(image) => to.attach_code(progid, Arc::clone(&image.code)),
        }
    }

    /// Why it is not used: `/pdb:PATH is {GUID} age N, which matches no program ID of
    /// WHERE; its symbols would be wrong, so they are not used`.
    pub(super) fn unused(&self, matching: &str) -> String {
        let (option, path, what) = match self {
            BuildFile::Pdb(pdb) => ("pdb", &pdb.path, "its symbols would be wrong, so they are"),
            BuildFile::Image(image) => ("image", &image.path, "its code would be wrong, so it is"),
        };
        let id = self.identity();
        format!(
            "/{option}:{path} is {{{}}} age {}, which matches no program ID of {matching}; \
             {what} not used",
            registry_form(&id.guid),
            id.age
        )
    }
}
