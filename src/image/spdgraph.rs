//! An SPD's flow graphs: every block of every function, with code or without, its
//! successors, and the blocks that call other functions, as section 16 stores them. The flow
//! of section 18 is inferred on these graphs when a trace is set beside the SPD.
//!
//! ```text
//! nodes    per function in record order, its blocks in id order (block id = place + 1):
//!          count, instructions, its code's first and last byte (none for a block folded
//!          away), its successors in `edges`
//! edges    per node in node order, its successors: the target node and the stored count
//! calls    per function, (calling node, called function) for every call site of a callee
//!          the SPD holds a record of
//! ```
//!
//! Section 16's checks make the graphs sound: ids run 1..n, successors land on blocks of
//! their own function, and exactly one block, the last, has no successor (the exit).

use std::ops::Range;

use rustc_hash::FxHashMap;

use crate::image::spd::table::FunctionTable;

/// The flow graphs of an SPD's functions.
#[derive(Clone, Debug, Default)]
pub struct SpdGraphs {
    /// Per function in record order: its nodes in `nodes`.
    functions: Vec<Range<u32>>,
    /// Per function in record order: its call sites in `calls`.
    call_ranges: Vec<Range<u32>>,
    nodes: Vec<SpdNode>,
    edges: Vec<SpdEdge>,
    calls: Vec<(u32, u32)>,
}

/// A block of an SPD's flow graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpdNode {
    /// Its id, 1..n in its function.
    pub id: u32,
    /// Its count, as the SPD has it.
    pub count: u64,
    /// Its instructions (inferred).
    pub instructions: u32,
    /// Its code: the RVA of its lowest byte and the RVA just past its highest; `None` for a
    /// block without code.
    pub code: Option<(u32, u32)>,
    /// Its successors in [`SpdGraphs::edges`].
    edges: Range<u32>,
}

/// An edge of an SPD's flow graph: a block's successor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpdEdge {
    /// The block it leaves, by its place among all nodes.
    pub from: u32,
    /// The block it reaches, by its place among all nodes.
    pub to: u32,
    /// Its count, as the SPD has it.
    pub count: u64,
}

impl SpdGraphs {
    /// The graphs of a checked table's functions.
    pub fn of(table: &FunctionTable) -> SpdGraphs {
        let mut graphs = SpdGraphs::default();
        let by_hash: FxHashMap<u64, u32> = (table.functions().enumerate())
            .map(|(i, f)| (f.hash(), i as u32))
            .collect();
        for (i, f) in table.functions().enumerate() {
            let first = graphs.nodes.len() as u32;
            let index = f.block_index();
            let rva = f.rva();
            for b in f.blocks() {
                let from = graphs.edges.len() as u32;
                let node = graphs.nodes.len() as u32;
                for s in b.successors() {
                    // After the checks every target is a block of the function.
                    if let Some(to) = index.id_at(s.target) {
                        graphs.edges.push(SpdEdge {
                            from: node,
                            to: first + to - 1,
                            count: s.count,
                        });
                    }
                }
                let mut code: Option<(u64, u64)> = None;
                if f.emitted() {
                    for (offset, length) in b.ranges().filter(|&(_, l)| l > 0) {
                        let start = u64::from(rva) + u64::from(offset);
                        let end = start + u64::from(length);
                        code = Some(code.map_or((start, end), |(s, e)| (s.min(start), e.max(end))));
                    }
                }
                let rvas =
                    |(s, e): (u64, u64)| Some((u32::try_from(s).ok()?, u32::try_from(e).ok()?));
                graphs.nodes.push(SpdNode {
                    id: b.id,
                    count: b.count,
                    instructions: b.instructions,
                    code: code.and_then(rvas),
                    edges: from..graphs.edges.len() as u32,
                });
            }
            graphs.functions.push(first..graphs.nodes.len() as u32);
            let calls = graphs.calls.len() as u32;
            for callee in f.callees() {
                let Some(&to) = by_hash.get(&callee.hash) else {
                    continue;
                };
                for site in callee.sites() {
                    if let Some(node) = graphs.node(i, site) {
                        graphs.calls.push((node as u32, to));
                    }
                }
            }
            graphs.call_ranges.push(calls..graphs.calls.len() as u32);
        }
        graphs
    }

    /// How many functions there are.
    pub fn functions(&self) -> usize {
        self.functions.len()
    }

    /// The places among all nodes of the function's at `function` (its place in record
    /// order), in id order.
    pub fn of_function(&self, function: usize) -> Range<usize> {
        self.functions
            .get(function)
            .map_or(0..0, |r| r.start as usize..r.end as usize)
    }

    /// Every node, by function in record order, then by id.
    pub fn nodes(&self) -> &[SpdNode] {
        &self.nodes
    }

    /// Every edge, by the node it leaves.
    pub fn edges(&self) -> &[SpdEdge] {
        &self.edges
    }

    /// The places in [`edges`](SpdGraphs::edges) of node `node`'s successors.
    pub fn out(&self, node: usize) -> Range<usize> {
        self.nodes
            .get(node)
            .map_or(0..0, |n| n.edges.start as usize..n.edges.end as usize)
    }

    /// The place of the edge from node `from` to node `to`, when there is one.
    #[inline]
    pub fn edge(&self, from: usize, to: usize) -> Option<usize> {
        self.out(from).find(|&e| self.edges[e].to as usize == to)
    }

    /// The place among all nodes of block `id` of the function at `function`.
    #[inline]
    pub fn node(&self, function: usize, id: u32) -> Option<usize> {
        let range = self.of_function(function);
        let at = range.start + (id as usize).checked_sub(1)?;
        (at < range.end).then_some(at)
    }

    /// The call sites of the function at `function`: (calling node, called function).
    pub fn calls(&self, function: usize) -> &[(u32, u32)] {
        self.call_ranges
            .get(function)
            .and_then(|r| self.calls.get(r.start as usize..r.end as usize))
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::SpdGraphs;
    use crate::image::spd::table::of_bytes;

    /// Every graph of the bundled SPD is as its records store it: ids in order, each edge
    /// inside its function, one exit (the last block), and each block's code within its
    /// function's.
    #[test]
    fn the_bundled_spds_graphs_are_as_stored() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe/app.spd");
        let bytes = std::fs::read(path).unwrap();
        let table = of_bytes(&bytes);
        let graphs = SpdGraphs::of(&table);
        assert_eq!(graphs.functions(), table.functions().count());
        let mut edges = 0;
        for (i, f) in table.functions().enumerate() {
            let nodes = graphs.of_function(i);
            assert_eq!(nodes.len(), f.blocks().count());
            for (b, at) in f.blocks().zip(nodes.clone()) {
                let node = &graphs.nodes()[at];
                assert_eq!((node.id, node.count), (b.id, b.count));
                assert_eq!(graphs.node(i, b.id), Some(at));
                let out = graphs.out(at);
                assert_eq!(out.len(), b.successor_count());
                assert_eq!(
                    out.is_empty(),
                    at + 1 == nodes.end,
                    "the exit is the last block"
                );
                for e in out {
                    let edge = graphs.edges()[e];
                    assert!(nodes.contains(&(edge.to as usize)));
                    assert_eq!(graphs.edge(at, edge.to as usize), Some(e));
                    edges += 1;
                }
                if let Some((lo, hi)) = node.code {
                    assert!(lo >= f.rva() && hi <= f.rva() + f.code_size() && lo < hi);
                }
            }
            // No block 0, none past the last.
            assert_eq!(graphs.node(i, 0), None);
            assert_eq!(graphs.node(i, nodes.len() as u32 + 1), None);
            for &(site, callee) in graphs.calls(i) {
                assert!(nodes.contains(&(site as usize)));
                assert!((callee as usize) < graphs.functions());
            }
        }
        assert_eq!(edges, graphs.edges().len());
        assert!(edges > 0 && graphs.nodes().iter().any(|n| n.code.is_none()));
    }

    /// A block's code spans its ranges, lowest to highest, those of no bytes left out: a
    /// block whose only range holds no bytes has no code. Call sites name their blocks.
    #[test]
    fn a_blocks_code_spans_its_ranges_of_bytes_and_call_sites_name_blocks() {
        use sptdump_testkit::fixtures::APP_GUID;
        use sptdump_testkit::spd::{SpdBlock, SpdBuilder, SpdCallee, SpdFunction};
        let mut spd = SpdBuilder::new("app.exe", APP_GUID, 1);
        let mut caller = SpdFunction::new(
            "caller",
            0x1000,
            16,
            vec![
                SpdBlock::new(1, 2, &[(8, 8), (0, 4)], &[(2, 1)]),
                SpdBlock::new(1, 1, &[(4, 0)], &[(3, 1)]),
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
            sites: vec![3],
        }];
        spd.functions = vec![caller, callee];
        let bytes = spd.build();
        let graphs = SpdGraphs::of(&of_bytes(&bytes));
        let code: Vec<_> = graphs.nodes().iter().map(|n| n.code).collect();
        assert_eq!(
            code,
            [
                Some((0x1000, 0x1010)),
                None,
                Some((0x1004, 0x1008)),
                Some((0x1100, 0x1104))
            ]
        );
        assert_eq!(graphs.calls(0), [(2, 1)]);
        assert!(graphs.calls(1).is_empty());
    }
}
