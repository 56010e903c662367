//! Counts that add up on the SPD's graph (section 18): each function of the SPD a trace's
//! LBR records saw, its blocks (with code or without) and successors as the SPD stores
//! them, what the records saw of each, and the flow inferred from that (`crate::flow`).
//!
//! ```text
//! blocks     the SPD's, in id order; block 1 is entered, the block without successors left
//! observed   a block with code: section 17's count (the consistent ranges that met it);
//!            an edge A->B: the ranges that ran from A's code on at once into B's, and the
//!            LBR pairs taken from A's code to B's lowest byte; the entries: the pairs to
//!            the function's first byte (from anywhere, itself included); nothing seen is
//!            unknown, and a block without code is never seen
//! calls      the SPD's call sites tie callers to callees, as on the image's graph
//! ```

use crate::analysis::lbr::cfg::{self, CfgBlock, CfgEdge, EdgeKind, FunctionCfg};
use crate::image::spdprofile::SpdProfile;

/// No block with code.
const NONE: u32 = u32::MAX;

/// What a trace's LBR records saw on an SPD's graphs, under the order used.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SeenOnSpd<'a> {
    /// Each block with code (by its place in the SPD's blocks): its count.
    pub(crate) counts: &'a [u128],
    /// Each edge (by its place in the SPD's graphs): the ranges that ran along it.
    pub(crate) along: &'a [u128],
}

/// The flow on an SPD's graphs: the functions solved, and each block's count by it.
#[derive(Clone, Debug, Default)]
pub(crate) struct SpdFlow {
    /// The functions with an observation or with flow their callers sent, by place in
    /// record order.
    pub(crate) functions: Vec<FunctionCfg>,
    /// Each block with code (by its place in the SPD's blocks): its count by the flow, 0
    /// for one of a function without flow.
    pub(crate) blocks: Vec<u64>,
}

impl SpdFlow {
    /// The graph and flow of the function at `function` (its place in record order), when
    /// it has one.
    pub(crate) fn function(&self, function: usize) -> Option<&FunctionCfg> {
        let at = self
            .functions
            .binary_search_by_key(&function, |f| f.key as usize)
            .ok()?;
        self.functions.get(at)
    }
}

/// The flow on `spd`'s graphs from what was seen, `arcs` being the binary's LBR pairs
/// (from, to) with their hits.
pub(crate) fn on_spd(
    spd: &SpdProfile,
    seen: SeenOnSpd<'_>,
    arcs: impl Iterator<Item = ([u32; 2], u128)>,
) -> SpdFlow {
    let graphs = &spd.graphs;
    let mut code = vec![NONE; graphs.nodes().len()];
    for (i, b) in spd.blocks.all().iter().enumerate() {
        if let Some(c) = code.get_mut(b.node as usize) {
            *c = i as u32;
        }
    }
    let mut taken = vec![0u128; graphs.edges().len()];
    let mut entries = vec![0u128; spd.functions.len()];
    for ([from, to], hits) in arcs {
        pair(spd, (&mut taken, &mut entries), (from, to), hits);
    }
    let build = |f: usize| build(spd, f, (&code, seen, &taken, &entries));
    let ran: Vec<FunctionCfg> = (0..spd.functions.len())
        .filter_map(|f| build(f).filter(FunctionCfg::observed))
        .collect();
    let functions = cfg::solved(ran, |f| build(f as usize));
    let mut blocks = vec![0u64; spd.blocks.len()];
    for f in &functions {
        let nodes = graphs.of_function(f.key as usize);
        for (node, b) in nodes.zip(&f.blocks) {
            if let (Some(&c), Some(flow)) = (code.get(node), b.flow)
                && c != NONE
            {
                blocks[c as usize] = flow;
            }
        }
    }
    SpdFlow { functions, blocks }
}

/// A pair taken `hits` times: an entry of the function when it lands on its first byte,
/// else an edge when it leaves a block's code for another's lowest byte in the same
/// function and the graph has that edge.
fn pair(
    spd: &SpdProfile,
    (taken, entries): (&mut [u128], &mut [u128]),
    (from, to): (u32, u32),
    hits: u128,
) {
    let blocks = &spd.blocks;
    let Some(target) = blocks.head(blocks.spot(to)) else {
        return;
    };
    let target = &blocks.all()[target];
    let function = target.function as usize;
    if spd.functions.get(function).is_some_and(|f| f.rva == to) {
        entries[function] = entries[function].saturating_add(hits);
        return;
    }
    let Some(source) = blocks.block(blocks.spot(from)) else {
        return;
    };
    let source = &blocks.all()[source];
    if source.function != target.function {
        return;
    }
    if let Some(e) = spd.graphs.edge(source.node as usize, target.node as usize) {
        taken[e] = taken[e].saturating_add(hits);
    }
}

/// The graph of the emitted function at `f` and what was seen of it; `None` for one not
/// emitted or without blocks.
fn build(
    spd: &SpdProfile,
    f: usize,
    (code, seen, taken, entries): (&[u32], SeenOnSpd<'_>, &[u128], &[u128]),
) -> Option<FunctionCfg> {
    let function = spd.functions.get(f).filter(|f| f.emitted())?;
    let graphs = &spd.graphs;
    let nodes = graphs.of_function(f);
    if nodes.is_empty() {
        return None;
    }
    let some = |n: u128| (n > 0).then_some(n);
    let mut cfg = FunctionCfg::new(&function.name, function.rva, f as u32);
    cfg.hash = Some(function.hash);
    let first = nodes.start;
    cfg.edges.push(CfgEdge::new(
        None,
        Some(1),
        EdgeKind::Entry,
        some(entries.get(f).copied().unwrap_or(0)),
    ));
    for node in nodes.clone() {
        let n = &graphs.nodes()[node];
        let c = code.get(node).copied().unwrap_or(NONE);
        let observed = (c != NONE)
            .then(|| seen.counts.get(c as usize).copied().unwrap_or(0))
            .and_then(some);
        let (rva, end) = n.code.unwrap_or((0, 0));
        cfg.blocks.push(CfgBlock {
            id: n.id,
            code: n.code.is_some(),
            rva,
            end,
            instructions: n.instructions,
            observed,
            flow: None,
        });
        let out = graphs.out(node);
        if out.is_empty() {
            cfg.edges
                .push(CfgEdge::new(Some(n.id), None, EdgeKind::Exit, None));
        }
        for e in out {
            let to = &graphs.nodes()[graphs.edges()[e].to as usize];
            let along = seen.along.get(e).copied().unwrap_or(0);
            let observed = along.saturating_add(taken.get(e).copied().unwrap_or(0));
            cfg.edges.push(CfgEdge::new(
                Some(n.id),
                Some(to.id),
                EdgeKind::Edge,
                some(observed),
            ));
        }
    }
    for &(site, callee) in graphs.calls(f) {
        cfg.calls.push((site as usize - first, callee));
    }
    Some(cfg)
}

#[cfg(test)]
mod tests {
    use sptdump_testkit::fixtures::APP_GUID;
    use sptdump_testkit::spd::{SpdBlock, SpdBuilder, SpdFunction};

    use super::*;
    use crate::image::spd::table::of_bytes;

    /// A function of four blocks, 1 and 2 interleaved, block 3 without code: 1 -> 2 -> 3 -> 4,
    /// and 1 -> 4.
    fn woven() -> SpdProfile {
        let mut spd = SpdBuilder::new("app.exe", APP_GUID, 1);
        spd.functions = vec![SpdFunction::new(
            "woven",
            0x1000,
            20,
            vec![
                SpdBlock::new(5, 2, &[(0, 4), (8, 4)], &[(2, 3), (4, 2)]),
                SpdBlock::new(3, 2, &[(4, 4), (12, 4)], &[(3, 3)]),
                SpdBlock::new(3, 0, &[], &[(4, 3)]),
                SpdBlock::new(5, 1, &[(16, 4)], &[]),
            ],
        )];
        let bytes = spd.build();
        SpdProfile::from_table(&of_bytes(&bytes))
    }

    /// Pairs to the function's first byte are entries, from anywhere; a pair from a block's
    /// code to another's lowest byte observes that edge when the graph has it; a pair into
    /// the middle of a block, or along no edge, observes nothing. The flow conserves, and
    /// the block without code carries what goes through it.
    #[test]
    fn pairs_observe_entries_and_edges_and_the_flow_runs_through_a_block_without_code() {
        let spd = woven();
        let counts: Vec<u128> = vec![7, 0, 7];
        let along = vec![0u128; spd.graphs.edges().len()];
        let seen = SeenOnSpd {
            counts: &counts,
            along: &along,
        };
        let arcs = [
            ([0x5000, 0x1000], 7), // an entry, from elsewhere
            ([0x1013, 0x1000], 1), // an entry, from itself
            ([0x1003, 0x1004], 4), // 1 -> 2, to its lowest byte
            ([0x100B, 0x1010], 2), // 1 -> 4
            ([0x1003, 0x100C], 9), // into the middle of block 2: nothing
            ([0x1013, 0x1004], 9), // 4 -> 2: no such edge
        ];
        let flow = on_spd(&spd, seen, arcs.into_iter());
        let f = flow.function(0).expect("the function has a graph");
        let observed = |from: Option<u32>, to: Option<u32>| {
            let e = f
                .edges
                .iter()
                .find(|e| e.from == from && e.to == to)
                .unwrap();
            e.observed
        };
        assert_eq!(observed(None, Some(1)), Some(8));
        assert_eq!(observed(Some(1), Some(2)), Some(4));
        assert_eq!(observed(Some(1), Some(4)), Some(2));
        assert_eq!(observed(Some(2), Some(3)), None);
        assert_eq!(observed(Some(4), None), None);
        let ids: Vec<(u32, bool, Option<u128>)> = f
            .blocks
            .iter()
            .map(|b| (b.id, b.code, b.observed))
            .collect();
        assert_eq!(
            ids,
            [
                (1, true, Some(7)),
                (2, true, None),
                (3, false, None),
                (4, true, Some(7))
            ]
        );
        for b in &f.blocks {
            let flow = |e: &CfgEdge| e.flow.unwrap_or(0);
            let into: u64 = f
                .edges
                .iter()
                .filter(|e| e.to == Some(b.id))
                .map(flow)
                .sum();
            let out: u64 = f
                .edges
                .iter()
                .filter(|e| e.from == Some(b.id))
                .map(flow)
                .sum();
            assert_eq!((into, out), (b.flow.unwrap(), b.flow.unwrap()), "{b:?}");
        }
        assert!(f.blocks[2].flow.unwrap() > 0, "{:?}", f.blocks);
        // The blocks with code carry the flow of their nodes.
        assert_eq!(flow.blocks.len(), 3);
        assert_eq!(flow.blocks[0], f.blocks[0].flow.unwrap());
        assert_eq!(flow.blocks[2], f.blocks[3].flow.unwrap());
    }

    /// Calls tie functions on the SPD's graph: a callee no record saw gets the flow of the
    /// caller's block that calls it.
    #[test]
    fn a_callee_no_record_saw_gets_the_flow_its_callers_call_site_ran() {
        use sptdump_testkit::spd::SpdCallee;
        let mut spd = SpdBuilder::new("app.exe", APP_GUID, 1);
        let mut caller = SpdFunction::new(
            "caller",
            0x1000,
            8,
            vec![
                SpdBlock::new(1, 2, &[(0, 4)], &[(2, 1)]),
                SpdBlock::new(1, 1, &[(4, 4)], &[]),
            ],
        );
        let callee = SpdFunction::new(
            "callee",
            0x1100,
            4,
            vec![SpdBlock::new(1, 1, &[(0, 4)], &[])],
        );
        caller.callees = vec![SpdCallee {
            hash: callee.hash,
            kind: 1,
            calls: 1,
            sites: vec![2],
        }];
        spd.functions = vec![caller, callee];
        let bytes = spd.build();
        let spd = SpdProfile::from_table(&of_bytes(&bytes));
        let (counts, along) = (vec![6u128, 6, 0], vec![0u128; spd.graphs.edges().len()]);
        let seen = SeenOnSpd {
            counts: &counts,
            along: &along,
        };
        let flow = on_spd(&spd, seen, std::iter::empty());
        let callee = flow.function(1).expect("the callee is solved");
        assert!(!callee.observed());
        assert_eq!(callee.blocks[0].flow, Some(6));
        assert_eq!(flow.blocks, [6, 6, 6]);
    }
}
