//! Reads arbitrary bytes as one function's graph and its observations, and solves it as
//! the flow views do: the solver returns a flow or refuses the graph with an error, never
//! panics or hangs, and the flow conserves exactly at every block (the sum of a block's
//! incoming edges, entries included, equals its count, which equals the sum of its
//! outgoing edges, exits included) under every combination of the solver's steps, and is
//! the same when solved again.
//!
//! Layout: byte 0 is the number of blocks (mod 32); then 6 bytes an edge: from, to (255 is
//! the entry or the exit; other values mod the blocks), kind, whether seen, and a count of
//! two bytes; then, a byte each, which blocks were seen, their counts a byte each after.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sptdump::flow::{self, Edge, EdgeKind, Flow, FlowError, Graph, Options};

fn graph(data: &[u8]) -> Option<Graph> {
    let (&n, rest) = data.split_first()?;
    let n = u32::from(n % 32);
    let edge_bytes = rest.len() / 2 / 6 * 6;
    let (edges, blocks) = rest.split_at(edge_bytes);
    let end = |b: u8| (b != 255 && n > 0).then(|| u32::from(b) % n);
    let edges = edges
        .chunks_exact(6)
        .map(|c| {
            let (from, to) = (end(c[0]), end(c[1]));
            let kind = match (from, to, c[2] % 2) {
                (None, _, _) => EdgeKind::Entry,
                (_, None, _) => EdgeKind::Exit,
                (_, _, 0) => EdgeKind::Fall,
                _ => EdgeKind::Jump,
            };
            let count = u64::from(u16::from_le_bytes([c[4], c[5]]));
            Edge {
                from,
                to,
                kind,
                observed: (c[3] % 2 == 0).then_some(count),
            }
        })
        .collect();
    let blocks = (0..n as usize)
        .map(|b| {
            let seen = blocks.get(2 * b).copied().unwrap_or(1);
            let count = blocks.get(2 * b + 1).copied().unwrap_or(0);
            (seen % 2 == 0).then_some(u64::from(count) * 7)
        })
        .collect();
    Some(Graph { blocks, edges })
}

fn conserves(graph: &Graph, flow: &Flow) {
    assert_eq!(flow.blocks.len(), graph.blocks.len());
    assert_eq!(flow.edges.len(), graph.edges.len());
    let mut into = vec![0u128; graph.blocks.len()];
    let mut out = vec![0u128; graph.blocks.len()];
    for (e, &count) in graph.edges.iter().zip(&flow.edges) {
        if let Some(to) = e.to {
            into[to as usize] += u128::from(count);
        }
        if let Some(from) = e.from {
            out[from as usize] += u128::from(count);
        }
    }
    for (b, &count) in flow.blocks.iter().enumerate() {
        assert_eq!(
            into[b],
            u128::from(count),
            "block {b}: in {} count {count}",
            into[b]
        );
        assert_eq!(
            out[b],
            u128::from(count),
            "block {b}: out {} count {count}",
            out[b]
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(graph) = graph(data) else { return };
    for bits in 0..8u8 {
        let options = Options {
            even: bits & 1 != 0,
            rebalance: bits & 2 != 0,
            join: bits & 4 != 0,
        };
        match flow::solve_with(&graph, options) {
            Ok(flow) => {
                conserves(&graph, &flow);
                assert_eq!(flow::solve_with(&graph, options).ok(), Some(flow));
            }
            Err(FlowError::BadEdge { .. }) => {
                // Only an edge from the entry straight to the exit: every end is in range.
                assert!(
                    graph
                        .edges
                        .iter()
                        .any(|e| e.from.is_none() && e.to.is_none())
                );
                return;
            }
            Err(e) => panic!("a graph of at most 31 blocks and small counts is solved: {e}"),
        }
    }
});
