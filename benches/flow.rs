//! The flow solver alone, on functions of 1,000, 10,000 and 100,000 blocks (the most it
//! takes), as sparse sampling leaves them: a control-flow graph of branches that meet again
//! and loops, executions walked through it from its entry to its exit with fixed branch
//! odds, then each block and edge seen only when a record landed on it (one in `1/rate`).
//!
//! ```text
//! cargo bench --bench flow
//! ```
//!
//! The graphs are random walks, made for this benchmark alone; what they measure is the
//! solver's time as a function grows, which `docs/performance.md` records.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use sptdump::flow::{self, Edge, EdgeKind, Graph};
use sptdump_testkit::synth::Rng as Random;

/// A function of about `blocks` blocks: a chain of pieces, each a straight block, a branch
/// whose two sides meet again, or a loop whose body branches back to its head.
fn function(blocks: usize, random: &mut Random) -> (Graph, Vec<Vec<(usize, u32)>>) {
    let mut edges = Vec::new();
    let mut at = 0u32;
    let fall = |from: u32, to: u32| Edge {
        from: Some(from),
        to: Some(to),
        kind: EdgeKind::Fall,
        observed: None,
    };
    let jump = |from: u32, to: u32| Edge {
        kind: EdgeKind::Jump,
        ..fall(from, to)
    };
    edges.push(Edge {
        from: None,
        to: Some(0),
        kind: EdgeKind::Entry,
        observed: None,
    });
    while (at as usize) + 4 < blocks {
        match random.below(3) {
            0 => {
                edges.push(fall(at, at + 1));
                at += 1;
            }
            1 => {
                // at branches to at+1 or at+2; both go on to at+3.
                edges.extend([fall(at, at + 1), jump(at, at + 2)]);
                edges.extend([jump(at + 1, at + 3), fall(at + 2, at + 3)]);
                at += 3;
            }
            _ => {
                // at+1 is a loop's head; at+2 its body, back to the head or on to at+3.
                edges.extend([fall(at, at + 1), fall(at + 1, at + 2)]);
                edges.extend([jump(at + 2, at + 1), fall(at + 2, at + 3)]);
                at += 3;
            }
        }
    }
    edges.push(Edge {
        from: Some(at),
        to: None,
        kind: EdgeKind::Exit,
        observed: None,
    });
    let n = at as usize + 1;
    let mut out = vec![Vec::new(); n];
    for (i, e) in edges.iter().enumerate() {
        if let Some(from) = e.from {
            out[from as usize].push((i, e.to.map_or(u32::MAX, |t| t)));
        }
    }
    (
        Graph {
            blocks: vec![None; n],
            edges,
        },
        out,
    )
}

/// Walks `runs` executions through the function (a loop's back edge taken seven times in
/// eight) and sees each visit with odds 1 in `rate`.
fn sampled(blocks: usize, runs: u32, rate: u64, seed: u64) -> Graph {
    let mut random = Random(seed);
    let (mut graph, out) = function(blocks, &mut random);
    let mut seen_blocks = vec![0u64; graph.blocks.len()];
    let mut seen_edges = vec![0u64; graph.edges.len()];
    for _ in 0..runs {
        let mut at = 0usize;
        loop {
            if random.below(rate) == 0 {
                seen_blocks[at] += 1;
            }
            let succ = &out[at];
            let (edge, to) = match succ.len() {
                1 => succ[0],
                _ if succ[0].1 < at as u32 || succ[1].1 < at as u32 => {
                    let back = succ.iter().find(|s| s.1 < at as u32).copied().unwrap();
                    let on = succ.iter().find(|s| s.1 > at as u32).copied().unwrap();
                    if random.below(8) < 7 { back } else { on }
                }
                _ => succ[random.below(2) as usize],
            };
            if random.below(rate) == 0 {
                seen_edges[edge] += 1;
            }
            if to == u32::MAX {
                break;
            }
            at = to as usize;
        }
    }
    for (b, &seen) in graph.blocks.iter_mut().zip(&seen_blocks) {
        *b = (seen > 0).then_some(seen);
    }
    for (e, &seen) in graph.edges.iter_mut().zip(&seen_edges) {
        e.observed = (seen > 0).then_some(seen);
    }
    graph
}

fn solve(c: &mut Criterion) {
    let mut group = c.benchmark_group("flow");
    group.sample_size(10);
    for blocks in [1_000, 10_000, flow::MAX_BLOCKS] {
        let graph = sampled(blocks, 20, 64, blocks as u64);
        group.bench_with_input(BenchmarkId::new("solve", blocks), &graph, |b, graph| {
            b.iter(|| flow::solve(black_box(graph)).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, solve);
criterion_main!(benches);
