//! A trace's blocks and edges as rows, per binary (specification, section 13, "Blocks"):
//! what `/parquet` writes to its `blocks` and `edges` tables, for an engine to sum a fleet's
//! flows. A sum of flows is a flow, so the rows of many traces added up by block give the
//! fleet's flow without solving again.
//!
//! ```text
//! image   a binary whose LBR ranges were read on its image's blocks (/image and /pdb):
//!         every function that ran, by the ranges or by the flow its callers send it
//! spd     a binary whose SPD is matched (/match) and whose LBR records have an order:
//!         every function with weight on either side, the SPD's counts beside the flow;
//!         a function the trace never ran has no observation and no flow (0)
//! ```
//!
//! A binary with both gets both graphs; a binary with neither gets no row.

use crate::analysis::lbr::cfg::FunctionCfg;
use crate::analysis::lbr::ranges::RangeReport;
use crate::analysis::spd::blocks::TraceOnBlocks;
use crate::image::spdprofile::SpdProfile;

/// Whose blocks a graph's rows are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GraphOf {
    /// The image's blocks (section 14), numbered in address order from 1.
    Image,
    /// The SPD's blocks and successors, as it stores them.
    Spd,
}

impl GraphOf {
    /// `image` or `spd`, as the tables name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            GraphOf::Image => "image",
            GraphOf::Spd => "spd",
        }
    }
}

/// Which function a row is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Of<'a> {
    /// Its name.
    pub(crate) function: &'a str,
    /// Its hash, on the SPD's graph.
    pub(crate) hash: Option<u64>,
    /// The RVA of its first byte; 0 for an SPD function that was not emitted.
    pub(crate) rva: u32,
}

/// A block's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BlockRow<'a> {
    pub(crate) of: Of<'a>,
    /// Its id: the SPD's, or its place in address order from 1.
    pub(crate) block: u32,
    /// The RVA of its first byte (on the SPD's graph, its lowest); `None` without code.
    pub(crate) rva: Option<u32>,
    pub(crate) instructions: u32,
    /// What the LBR ranges saw of it; `None` when nothing did.
    pub(crate) observed: Option<u128>,
    /// Its count by the flow; `None` when its function was left raw.
    pub(crate) flow: Option<u64>,
    /// The SPD's count, on the SPD's graph.
    pub(crate) spd_count: Option<u64>,
}

/// An edge's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct EdgeRow<'a> {
    pub(crate) of: Of<'a>,
    /// The block it leaves; `None` for an entry.
    pub(crate) from: Option<u32>,
    /// The block it reaches; `None` for an exit.
    pub(crate) to: Option<u32>,
    /// `entry`, `fall`, `taken`, `jump`, `exit`, or on the SPD's graph `edge`.
    pub(crate) kind: &'static str,
    pub(crate) observed: Option<u128>,
    pub(crate) flow: Option<u64>,
    /// The SPD's count of a successor it stores; `None` for an entry or an exit, which the
    /// SPD does not store.
    pub(crate) spd_count: Option<u64>,
}

/// What every row of a graph's tables has: whose it is, and its counts.
pub(crate) trait GraphRow<'a> {
    /// The function it is of.
    fn of(&self) -> Of<'a>;
    /// What was seen, the flow, the SPD's count.
    fn counts(&self) -> [Option<u128>; 3];
}

impl<'a> GraphRow<'a> for BlockRow<'a> {
    fn of(&self) -> Of<'a> {
        self.of
    }

    fn counts(&self) -> [Option<u128>; 3] {
        let (flow, spd) = (self.flow.map(u128::from), self.spd_count.map(u128::from));
        [self.observed, flow, spd]
    }
}

impl<'a> GraphRow<'a> for EdgeRow<'a> {
    fn of(&self) -> Of<'a> {
        self.of
    }

    fn counts(&self) -> [Option<u128>; 3] {
        let (flow, spd) = (self.flow.map(u128::from), self.spd_count.map(u128::from));
        [self.observed, flow, spd]
    }
}

/// One binary's graph as rows.
#[derive(Clone, Debug)]
pub(crate) struct BinaryGraph<'a> {
    pub(crate) progid: u16,
    pub(crate) graph: GraphOf,
    pub(crate) blocks: Vec<BlockRow<'a>>,
    pub(crate) edges: Vec<EdgeRow<'a>>,
}

/// The rows of the image's graphs of `report`: each binary whose ranges have an order, each
/// function of it whose graph was built: one the ranges saw, or one a block with flow calls.
pub(crate) fn on_images(report: &RangeReport) -> impl Iterator<Item = BinaryGraph<'_>> {
    let read = report.binaries.iter().filter(|b| b.order.is_some());
    read.map(|b| {
        let mut graph = BinaryGraph {
            progid: b.progid,
            graph: GraphOf::Image,
            blocks: Vec::new(),
            edges: Vec::new(),
        };
        for f in &b.cfg.functions {
            graph.add_image(f);
        }
        graph
    })
}

/// The rows of binary `progid`'s SPD graph, the trace's records on it: `None` when its
/// records have no order, and so no flow.
pub(crate) fn on_spd<'a>(progid: u16, on: &'a TraceOnBlocks<'_>) -> Option<BinaryGraph<'a>> {
    let flow = on.flow()?;
    let spd: &'a SpdProfile = on.spd();
    let mut graph = BinaryGraph {
        progid,
        graph: GraphOf::Spd,
        blocks: Vec::new(),
        edges: Vec::new(),
    };
    for (f, function) in spd.functions.iter().enumerate() {
        let solved = flow.function(f);
        if !function.counted && solved.is_none() {
            continue;
        }
        let of = Of {
            function: &function.name,
            hash: Some(function.hash),
            rva: if function.emitted() { function.rva } else { 0 },
        };
        graph.add_spd(spd, f, of, solved);
    }
    Some(graph)
}

impl<'a> BinaryGraph<'a> {
    fn add_image(&mut self, f: &'a FunctionCfg) {
        let of = Of {
            function: &f.name,
            hash: None,
            rva: f.rva,
        };
        self.blocks.extend(f.blocks.iter().map(|b| BlockRow {
            of,
            block: b.id,
            rva: Some(b.rva),
            instructions: b.instructions,
            observed: b.observed,
            flow: b.flow,
            spd_count: None,
        }));
        self.edges.extend(f.edges.iter().map(|e| EdgeRow {
            of,
            from: e.from,
            to: e.to,
            kind: e.kind.name(),
            observed: e.observed,
            flow: e.flow,
            spd_count: None,
        }));
    }

    /// The blocks and edges of the SPD's function at `f`, in the order its graph is built
    /// (`analysis::spd::flow`): the entry into block 1, then each block's exit (when it has
    /// no successor) and successors. What was seen and the flow come from `solved`, the
    /// function's graph as solved, when the trace has one.
    fn add_spd(
        &mut self,
        spd: &'a SpdProfile,
        f: usize,
        of: Of<'a>,
        solved: Option<&'a FunctionCfg>,
    ) {
        let graphs = &spd.graphs;
        let nodes = graphs.of_function(f);
        if nodes.is_empty() {
            return;
        }
        // Without a graph solved, the trace saw nothing of the function and sent it no flow.
        let unsolved = Some(0);
        for (i, node) in nodes.clone().enumerate() {
            let n = &graphs.nodes()[node];
            let b = solved.and_then(|s| s.blocks.get(i));
            self.blocks.push(BlockRow {
                of,
                block: n.id,
                rva: n.code.map(|(start, _)| start),
                instructions: n.instructions,
                observed: b.and_then(|b| b.observed),
                flow: b.map_or(unsolved, |b| b.flow),
                spd_count: Some(n.count),
            });
        }
        let mut at = 0;
        let mut edge = |from, to, kind, spd_count| {
            // The solved graph's edges come in this same order: one is taken only where its
            // ends agree.
            let e = solved
                .and_then(|s| s.edges.get(at))
                .filter(|e| (e.from, e.to) == (from, to));
            at += 1;
            EdgeRow {
                of,
                from,
                to,
                kind,
                observed: e.and_then(|e| e.observed),
                flow: e.map_or(unsolved, |e| e.flow),
                spd_count,
            }
        };
        self.edges.push(edge(None, Some(1), "entry", None));
        for node in nodes {
            let n = &graphs.nodes()[node];
            let out = graphs.out(node);
            if out.is_empty() {
                self.edges.push(edge(Some(n.id), None, "exit", None));
            }
            for e in out {
                let stored = &graphs.edges()[e];
                let to = graphs.nodes()[stored.to as usize].id;
                self.edges
                    .push(edge(Some(n.id), Some(to), "edge", Some(stored.count)));
            }
        }
    }
}
