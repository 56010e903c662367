//! The flow solver (`sptdump::flow`) held to two references written here, sharing no code
//! with it but the prices of `flow::cost`:
//!
//! - on tiny graphs, every assignment of counts to the edges tried, the cheapest flow kept;
//! - on larger graphs, a minimum-cost circulation by cycle canceling (Bellman-Ford finding
//!   each negative cycle) on a network built here, blocks split in two, each count's two
//!   prices as two parallel arcs.
//!
//! Both compute the objective themselves. Around them: properties of every flow the solver
//! returns (every block conserves, the same graph gives the same flow, rebalancing keeps the
//! optimum, joining reaches every block it can), and examples of what a reader of a profile
//! expects of a few small functions.
//!
//! Every property runs a fixed number of cases from a fixed seed; as in `properties.rs`,
//! `SPTDUMP_PROPTEST_CASES` and `SPTDUMP_PROPTEST_SEED` set others for one run.

use std::collections::VecDeque;

use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};
use sptdump::flow::cost::{self, Cost};
use sptdump::flow::{self, Edge, EdgeKind, Flow, FlowError, Graph, Observed, Options};

/// The seed every property starts from.
const SEED: u64 = 0x5350_543A_0000_0018;

/// `cases` cases from `SEED`, unless the environment sets others.
fn config(cases: u32) -> ProptestConfig {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    ProptestConfig {
        cases: env("SPTDUMP_PROPTEST_CASES").map_or(cases, |c: u64| c as u32),
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(env("SPTDUMP_PROPTEST_SEED").unwrap_or(SEED)),
        ..ProptestConfig::default()
    }
}

/// The minimum-cost flow alone, along one path: no step but the first. The references are
/// held to it, and to it spread evenly (`Options { even: true, ..MIN_COST }`).
const MIN_COST: Options = Options {
    even: false,
    rebalance: false,
    join: false,
};

/// Every combination of the solver's steps.
fn all_options() -> impl Iterator<Item = Options> {
    (0..8).map(|bits| Options {
        even: bits & 1 != 0,
        rebalance: bits & 2 != 0,
        join: bits & 4 != 0,
    })
}

// ----- What a flow is and what it costs, written again.

/// What a count of `count` costs where `seen` was seen, at `price` per unit: raising is
/// paid per unit above what was seen, lowering per unit below; nothing seen is seen as 0.
fn price(price: Cost, seen: Observed, count: u64) -> u128 {
    let seen = seen.unwrap_or(0);
    let (units, per_unit) = if count >= seen {
        (count - seen, price.raise)
    } else {
        (seen - count, price.lower)
    };
    u128::from(units) * u128::from(per_unit)
}

/// The objective: what every block's and every edge's count costs, added up.
fn objective(graph: &Graph, blocks: &[u64], edges: &[u64]) -> u128 {
    let blocks = graph.blocks.iter().zip(blocks);
    let blocks: u128 = blocks
        .map(|(&seen, &count)| price(cost::of_block(seen), seen, count))
        .sum();
    let edges = graph.edges.iter().zip(edges);
    let edges: u128 = edges
        .map(|(e, &count)| price(cost::of_edge(e.kind, e.observed), e.observed, count))
        .sum();
    blocks + edges
}

/// The counts of the edges into `block` and out of it, added up (a self-loop in both).
fn through(graph: &Graph, edges: &[u64], block: usize) -> (u128, u128) {
    let (mut into, mut out) = (0, 0);
    for (e, &count) in graph.edges.iter().zip(edges) {
        if e.to.map(|b| b as usize) == Some(block) {
            into += u128::from(count);
        }
        if e.from.map(|b| b as usize) == Some(block) {
            out += u128::from(count);
        }
    }
    (into, out)
}

/// Whether `flow` is a flow of `graph`: a count for every block and every edge, and every
/// block's count the sum of its incoming edges' and the sum of its outgoing edges'.
fn check_flow(graph: &Graph, flow: &Flow) -> Result<(), TestCaseError> {
    prop_assert_eq!(flow.blocks.len(), graph.blocks.len());
    prop_assert_eq!(flow.edges.len(), graph.edges.len());
    for (b, &count) in flow.blocks.iter().enumerate() {
        let (into, out) = through(graph, &flow.edges, b);
        prop_assert_eq!(into, u128::from(count), "into block {}: {:?}", b, flow);
        prop_assert_eq!(out, u128::from(count), "out of block {}: {:?}", b, flow);
    }
    Ok(())
}

/// Every observed count of `graph`, added up.
fn seen_total(graph: &Graph) -> u64 {
    let blocks = graph.blocks.iter().flatten();
    let edges = graph.edges.iter().filter_map(|e| e.observed.as_ref());
    blocks.chain(edges).sum()
}

// ----- The first reference: every flow of a tiny graph tried.

/// The least cost of any flow of `graph`, found by trying every count from 0 to K on every
/// edge, K the sum of all observed counts; a block's count is then its edges' sum.
///
/// Why K bounds a cheapest flow: of the cheapest flows take one with the least total count,
/// and write it as a sum of unit cycles through the graph (an entry-to-exit path closed
/// through the outside is one). Taking one cycle away would save the raise of every count
/// on it above what was seen, and cost the lowering of every count at or below it; so each
/// cycle passes through a count at or below an observation (else taking it away costs
/// nothing more and lowers the total count). A count c at or below what was seen, w, is
/// on c ≤ w of the cycles: there are at most K cycles, and no count exceeds K.
fn brute_force(graph: &Graph) -> u128 {
    let edges = graph.edges.len();
    // The blocks whose every edge has a count once edge i has one: checked there.
    let mut settled = vec![Vec::new(); edges];
    for b in 0..graph.blocks.len() {
        let touches = |e: &Edge| e.from == Some(b as u32) || e.to == Some(b as u32);
        if let Some(last) = graph.edges.iter().rposition(touches) {
            settled[last].push(b);
        }
    }
    let mut counts = vec![0; edges];
    let mut best = None;
    try_counts(
        graph,
        seen_total(graph),
        &settled,
        &mut counts,
        0,
        &mut best,
    );
    best.expect("the zero flow is a flow")
}

/// Tries every count for edge `i` and on, given the counts of the edges before it.
fn try_counts(
    graph: &Graph,
    most: u64,
    settled: &[Vec<usize>],
    counts: &mut [u64],
    i: usize,
    best: &mut Option<u128>,
) {
    if i == counts.len() {
        let blocks: Vec<u64> = (0..graph.blocks.len())
            .map(|b| through(graph, counts, b).0 as u64)
            .collect();
        let cost = objective(graph, &blocks, counts);
        *best = Some(best.map_or(cost, |best| best.min(cost)));
        return;
    }
    for count in 0..=most {
        counts[i] = count;
        let conserves = settled[i].iter().all(|&b| {
            let (into, out) = through(graph, counts, b);
            into == out
        });
        if conserves {
            try_counts(graph, most, settled, counts, i + 1, best);
        }
    }
    counts[i] = 0;
}

// ----- The second reference: a minimum-cost circulation by cycle canceling.

/// An arc of the residual network. Arcs come in pairs, `a` and `a ^ 1`: an arc and its
/// reverse, which has no capacity of its own, the opposite cost, and minus the flow.
#[derive(Clone, Copy, Debug)]
struct Arc {
    from: usize,
    to: usize,
    capacity: i64,
    cost: i64,
    flow: i64,
}

/// The network of a graph: nodes 0 (the entry) and 1 (the exit), and block b's in-node
/// `2 + 2b` and out-node `3 + 2b`; an arc in to out for each block, an arc for each edge
/// between the nodes of its ends, an arc from the exit back to the entry.
struct Network {
    nodes: usize,
    arcs: Vec<Arc>,
    /// What the objective adds to the arcs' costs: each seen count's lowering, all of it.
    constant: i64,
    /// The forward arcs of each block, then of each edge.
    elements: Vec<Vec<usize>>,
}

const ENTRY: usize = 0;
const EXIT: usize = 1;

impl Network {
    /// `graph`'s network, with `big` the capacity that bounds nothing in a cheapest flow.
    fn of(graph: &Graph, big: i64) -> Network {
        let mut net = Network {
            nodes: 2 + 2 * graph.blocks.len(),
            arcs: Vec::new(),
            constant: 0,
            elements: Vec::new(),
        };
        let in_node = |b: u32| 2 + 2 * b as usize;
        let out_node = |b: u32| 3 + 2 * b as usize;
        for (b, &seen) in graph.blocks.iter().enumerate() {
            let b = b as u32;
            let arcs = net.element(in_node(b), out_node(b), cost::of_block(seen), seen, big);
            net.elements.push(arcs);
        }
        for e in &graph.edges {
            let from = e.from.map_or(ENTRY, out_node);
            let to = e.to.map_or(EXIT, in_node);
            let price = cost::of_edge(e.kind, e.observed);
            let arcs = net.element(from, to, price, e.observed, big);
            net.elements.push(arcs);
        }
        net.arc(EXIT, ENTRY, big, 0);
        net
    }

    /// The arcs of a block or an edge from `from` to `to`: for a count seen as w, w units at
    /// minus the lowering (the lowering of all w counted in the constant: using them takes
    /// it back) and as many more as wanted at the raise; for one not seen, as many as wanted
    /// at the raise.
    fn element(
        &mut self,
        from: usize,
        to: usize,
        price: Cost,
        seen: Observed,
        big: i64,
    ) -> Vec<usize> {
        let raise = price.raise as i64;
        match seen {
            Some(w) => {
                let (w, lower) = (w as i64, price.lower as i64);
                self.constant += lower * w;
                vec![
                    self.arc(from, to, w, -lower),
                    self.arc(from, to, big, raise),
                ]
            }
            None => vec![self.arc(from, to, big, raise)],
        }
    }

    fn arc(&mut self, from: usize, to: usize, capacity: i64, cost: i64) -> usize {
        let a = self.arcs.len();
        self.arcs.push(Arc {
            from,
            to,
            capacity,
            cost,
            flow: 0,
        });
        self.arcs.push(Arc {
            from: to,
            to: from,
            capacity: 0,
            cost: -cost,
            flow: 0,
        });
        a
    }

    fn residual(&self, a: usize) -> i64 {
        self.arcs[a].capacity - self.arcs[a].flow
    }

    /// A cycle of arcs with room whose costs add up below zero, if there is one: by
    /// Bellman-Ford from every node at once, until a pass changes nothing (there is none)
    /// or the arcs that last lowered each node's distance close a cycle. Such a cycle is
    /// negative; and while there is a negative cycle the distances fall without end, which
    /// they cannot do along paths without cycles, so one closes.
    fn negative_cycle(&self) -> Option<Vec<usize>> {
        let mut distance = vec![0i64; self.nodes];
        let mut last = vec![None; self.nodes];
        loop {
            let mut changed = false;
            for (a, arc) in self.arcs.iter().enumerate() {
                if self.residual(a) > 0 && distance[arc.from] + arc.cost < distance[arc.to] {
                    distance[arc.to] = distance[arc.from] + arc.cost;
                    last[arc.to] = Some(a);
                    changed = true;
                }
            }
            if !changed {
                return None;
            }
            if let Some(cycle) = self.closed(&last) {
                return Some(cycle);
            }
        }
    }

    /// A cycle the arcs `last` names close, walking back from each node in turn.
    fn closed(&self, last: &[Option<usize>]) -> Option<Vec<usize>> {
        let mut walked = vec![usize::MAX; self.nodes];
        for start in 0..self.nodes {
            let mut node = start;
            while walked[node] == usize::MAX {
                walked[node] = start;
                match last[node] {
                    Some(a) => node = self.arcs[a].from,
                    None => break,
                }
            }
            if walked[node] == start && last[node].is_some() {
                let mut cycle = Vec::new();
                let first = node;
                loop {
                    let a = last[node].expect("on the cycle");
                    cycle.push(a);
                    node = self.arcs[a].from;
                    if node == first {
                        return Some(cycle);
                    }
                }
            }
        }
        None
    }

    /// Cancels negative cycles, as much as each one's narrowest arc takes, until none is
    /// left: the circulation is then of the least cost.
    fn cancel_cycles(&mut self) {
        while let Some(cycle) = self.negative_cycle() {
            let cost: i64 = cycle.iter().map(|&a| self.arcs[a].cost).sum();
            assert!(cost < 0, "a cycle found costs {cost}");
            let room = cycle.iter().map(|&a| self.residual(a)).min().unwrap();
            assert!(room > 0);
            for a in cycle {
                self.arcs[a].flow += room;
                self.arcs[a ^ 1].flow -= room;
            }
        }
    }

    /// The circulation's cost: its arcs' costs and the constant.
    fn cost(&self) -> i64 {
        let arcs: i64 = self.arcs.iter().step_by(2).map(|a| a.cost * a.flow).sum();
        arcs + self.constant
    }

    /// The count of each block, then of each edge.
    fn counts(&self) -> Vec<u64> {
        let count = |arcs: &Vec<usize>| arcs.iter().map(|&a| self.arcs[a].flow).sum::<i64>();
        self.elements
            .iter()
            .map(|arcs| count(arcs) as u64)
            .collect()
    }
}

/// The least cost of any flow of `graph`, by cycle canceling from the zero circulation; and
/// the flow it found, checked to be a flow of that cost by this file's own objective.
fn cycle_canceling(graph: &Graph) -> Result<u128, TestCaseError> {
    // K, the sum of what was seen, bounds every count of some cheapest flow (see
    // `brute_force`): a capacity above it bounds nothing.
    let big = seen_total(graph) as i64 + 1;
    let mut net = Network::of(graph, big);
    net.cancel_cycles();
    let counts = net.counts();
    let (blocks, edges) = counts.split_at(graph.blocks.len());
    let found = Flow {
        blocks: blocks.to_vec(),
        edges: edges.to_vec(),
        joined: 0,
    };
    check_flow(graph, &found)?;
    let cost = net.cost();
    prop_assert!(cost >= 0);
    prop_assert_eq!(cost as u128, objective(graph, blocks, edges), "{:?}", found);
    Ok(cost as u128)
}

// ----- Reachability.

/// The blocks a count of the entry reaches through counts above zero.
fn reached(graph: &Graph, flow: &Flow) -> Vec<bool> {
    let starts = graph.edges.iter().zip(&flow.edges);
    let starts = starts.filter(|&(e, &count)| e.from.is_none() && count > 0);
    let starts = starts.filter_map(|(e, _)| e.to);
    let steps = graph.edges.iter().zip(&flow.edges);
    let steps = steps.filter(|&(_, &count)| count > 0).map(|(e, _)| *e);
    forward(graph.blocks.len(), starts, steps.collect())
}

/// The blocks some path of the graph takes from an entry to an exit: the ones a unit of
/// flow from the entry can pass through.
fn joinable(graph: &Graph) -> Vec<bool> {
    let n = graph.blocks.len();
    let entered = graph.edges.iter().filter(|e| e.from.is_none());
    let from_entry = forward(n, entered.filter_map(|e| e.to), graph.edges.clone());
    let reversed: Vec<Edge> = graph
        .edges
        .iter()
        .map(|e| Edge {
            from: e.to,
            to: e.from,
            ..*e
        })
        .collect();
    let exited = graph.edges.iter().filter(|e| e.to.is_none());
    let to_exit = forward(n, exited.filter_map(|e| e.from), reversed);
    (0..n).map(|b| from_entry[b] && to_exit[b]).collect()
}

/// The blocks reached from `starts` along `edges`.
fn forward(n: usize, starts: impl Iterator<Item = u32>, edges: Vec<Edge>) -> Vec<bool> {
    let mut seen = vec![false; n];
    let mut queue: VecDeque<u32> = starts.collect();
    while let Some(b) = queue.pop_front() {
        if std::mem::replace(&mut seen[b as usize], true) {
            continue;
        }
        let next = edges.iter().filter(|e| e.from == Some(b));
        queue.extend(next.filter_map(|e| e.to));
    }
    seen
}

// ----- Random graphs.

/// An edge, in one line.
fn edge(from: Option<u32>, to: Option<u32>, kind: EdgeKind, observed: Observed) -> Edge {
    Edge {
        from,
        to,
        kind,
        observed,
    }
}

/// A count seen up to `most` (zero among them now and then), or nothing seen, about as often.
fn observed(most: u64) -> impl Strategy<Value = Observed> {
    seen_at(0.5, most)
}

/// A count seen up to `most` (zero among them now and then) with probability `p`, else
/// nothing seen.
fn seen_at(p: f64, most: u64) -> impl Strategy<Value = Observed> {
    prop::option::weighted(p, prop_oneof![1 => Just(0), 4 => 1..=most])
}

/// A graph of 1 to `blocks` blocks and up to `edges` edges: entries mostly to block 0 but
/// to others too, exits, edges between blocks (self-loops and parallel edges among them),
/// each count seen or not; with few edges, sometimes no entry or no exit.
fn graph(blocks: usize, edges: usize, most: u64) -> impl Strategy<Value = Graph> {
    (1..=blocks).prop_flat_map(move |n| {
        let n = n as u32;
        let any_edge = prop_oneof![
            3 => observed(most).prop_map(|seen| edge(None, Some(0), EdgeKind::Entry, seen)),
            1 => (0..n, observed(most))
                .prop_map(|(to, seen)| edge(None, Some(to), EdgeKind::Entry, seen)),
            3 => (0..n, observed(most))
                .prop_map(|(from, seen)| edge(Some(from), None, EdgeKind::Exit, seen)),
            8 => (0..n, 0..n, any::<bool>(), observed(most)).prop_map(|(from, to, fall, seen)| {
                let kind = if fall { EdgeKind::Fall } else { EdgeKind::Jump };
                edge(Some(from), Some(to), kind, seen)
            }),
        ];
        (
            prop::collection::vec(observed(most), n as usize),
            prop::collection::vec(any_edge, 0..=edges),
        )
            .prop_map(|(blocks, edges)| Graph { blocks, edges })
    })
}

/// A graph shaped like compiled code: blocks in order, an entry into block 0 (seen or not,
/// and now and then another into a later block), each block falling through to the next
/// and, by its shape, also jumping forward (branches that meet again), jumping back (loops)
/// or leaving; the last block leaves. Most edges unseen, as sparse records leave them.
fn code_graph(blocks: usize, most: u64) -> impl Strategy<Value = Graph> {
    let seen_edge = move || seen_at(0.15, most);
    (2..=blocks).prop_flat_map(move |n| {
        // Falling through only, jumping forward too, jumping back too, or leaving too.
        let shape = prop_oneof![3 => Just(0u8), 4 => Just(1), 1 => Just(2), 1 => Just(3)];
        let shape = (shape, any::<u32>(), seen_edge(), seen_edge(), seen_edge());
        (
            prop::collection::vec(seen_at(0.4, most), n),
            prop::collection::vec(shape, n),
            observed(most),
            prop::option::weighted(0.2, (1..n as u32, seen_edge())),
        )
            .prop_map(move |(blocks, shapes, entry, other_entry)| {
                let n = n as u32;
                let mut edges = vec![edge(None, Some(0), EdgeKind::Entry, entry)];
                if let Some((to, seen)) = other_entry {
                    edges.push(edge(None, Some(to), EdgeKind::Entry, seen));
                }
                for (b, (shape, pick, fall, jump, exit)) in (0..n).zip(shapes) {
                    if b + 1 == n {
                        edges.push(edge(Some(b), None, EdgeKind::Exit, exit));
                        continue;
                    }
                    edges.push(edge(Some(b), Some(b + 1), EdgeKind::Fall, fall));
                    match shape {
                        1 => {
                            let to = b + 1 + pick % (n - b - 1);
                            edges.push(edge(Some(b), Some(to), EdgeKind::Jump, jump));
                        }
                        2 => {
                            let to = pick % (b + 1);
                            edges.push(edge(Some(b), Some(to), EdgeKind::Jump, jump));
                        }
                        3 => edges.push(edge(Some(b), None, EdgeKind::Exit, exit)),
                        _ => {}
                    }
                }
                Graph { blocks, edges }
            })
    })
}

/// A graph small enough to try every flow of.
fn tiny_graph() -> impl Strategy<Value = Graph> {
    graph(3, 5, 3)
}

/// A graph as large as cycle canceling checks quickly: any edges, or shaped like code.
fn larger_graph() -> impl Strategy<Value = Graph> {
    prop_oneof![graph(10, 25, 300), code_graph(12, 300)]
}

/// `graph` solved with `options`: a random graph is always well formed.
fn solve(graph: &Graph, options: Options) -> Result<Flow, TestCaseError> {
    flow::solve_with(graph, options)
        .map_err(|e| TestCaseError::fail(format!("{options:?} refused the graph: {e}")))
}

// ----- The properties.

/// The minimum-cost flow, spread evenly or not, costs what the reference `optimum` costs.
fn check_min_cost(graph: &Graph, optimum: u128) -> Result<(), TestCaseError> {
    for even in [true, false] {
        let options = Options { even, ..MIN_COST };
        let flow = solve(graph, options)?;
        check_flow(graph, &flow)?;
        prop_assert_eq!(flow.joined, 0);
        prop_assert_eq!(
            objective(graph, &flow.blocks, &flow.edges),
            optimum,
            "{:?}: {:?}",
            options,
            flow
        );
        prop_assert_eq!(cost::of_flow(graph, &flow), optimum, "{:?}", options);
    }
    Ok(())
}

/// Rebalancing keeps the optimum and every count that was seen: it moves flow only among
/// counts nothing covered.
fn check_rebalance(graph: &Graph, optimum: u128) -> Result<(), TestCaseError> {
    for even in [true, false] {
        let min_cost = Options { even, ..MIN_COST };
        let alone = solve(graph, min_cost)?;
        let options = Options {
            rebalance: true,
            ..min_cost
        };
        let flow = solve(graph, options)?;
        check_flow(graph, &flow)?;
        prop_assert_eq!(flow.joined, 0);
        prop_assert_eq!(
            cost::of_flow(graph, &flow),
            optimum,
            "{:?}: {:?}",
            options,
            flow
        );
        for (b, seen) in graph.blocks.iter().enumerate() {
            if seen.is_some() {
                prop_assert_eq!(
                    flow.blocks[b],
                    alone.blocks[b],
                    "block {}: {:?}",
                    b,
                    options
                );
            }
        }
        for (i, e) in graph.edges.iter().enumerate() {
            if e.observed.is_some() {
                prop_assert_eq!(flow.edges[i], alone.edges[i], "edge {}: {:?}", i, options);
            }
        }
    }
    Ok(())
}

/// Joining, after the minimum-cost flow (rebalanced or not): every block with a count that
/// a unit from the entry can pass through is reached from the entry through counts above
/// zero; the flow joined only adds a unit from the entry for each join counted, one for at
/// most each block left unreached; and with nothing to join, it is the flow before.
///
/// (A block that no path from an entry to an exit passes through cannot be reached by flow
/// from the entry at all: what comes in must go out.)
fn check_join(graph: &Graph, optimum: u128) -> Result<(), TestCaseError> {
    let joinable = joinable(graph);
    for options in all_options().filter(|o| o.join) {
        let before = solve(
            graph,
            Options {
                join: false,
                ..options
            },
        )?;
        let flow = solve(graph, options)?;
        check_flow(graph, &flow)?;

        let reached_after = reached(graph, &flow);
        for (b, &count) in flow.blocks.iter().enumerate() {
            if count > 0 && joinable[b] {
                prop_assert!(
                    reached_after[b],
                    "{:?}: block {} not reached: {:?}",
                    options,
                    b,
                    flow
                );
            }
        }

        let reached_before = reached(graph, &before);
        let unreached = (0..graph.blocks.len())
            .filter(|&b| before.blocks[b] > 0 && joinable[b] && !reached_before[b])
            .count();
        prop_assert!(
            flow.joined as usize <= unreached,
            "{:?}: {:?}",
            options,
            flow
        );
        prop_assert_eq!(
            flow.joined == 0,
            unreached == 0,
            "{:?}: {:?}",
            options,
            flow
        );
        let counts = |f: &Flow| f.blocks.iter().chain(&f.edges).copied().collect::<Vec<_>>();
        for (after, before) in counts(&flow).into_iter().zip(counts(&before)) {
            prop_assert!(after >= before, "{:?}: {:?}", options, flow);
        }
        let entered = |f: &Flow| -> u64 {
            let entries = graph.edges.iter().zip(&f.edges);
            entries
                .filter(|(e, _)| e.from.is_none())
                .map(|(_, &c)| c)
                .sum()
        };
        prop_assert_eq!(entered(&flow), entered(&before) + u64::from(flow.joined));
        if flow.joined == 0 {
            prop_assert_eq!(&flow, &before, "{:?}", options);
            prop_assert_eq!(cost::of_flow(graph, &flow), optimum, "{:?}", options);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    /// On a tiny graph, the cheapest of all its flows costs what the minimum-cost flow and
    /// the cycle-canceling reference cost.
    #[test]
    fn tiny_graphs_cost_the_least_any_flow_costs(graph in tiny_graph()) {
        let optimum = brute_force(&graph);
        prop_assert_eq!(cycle_canceling(&graph)?, optimum);
        check_min_cost(&graph, optimum)?;
        check_rebalance(&graph, optimum)?;
        check_join(&graph, optimum)?;
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// The minimum-cost flow, spread evenly or along one path, costs the least a
    /// circulation of the graph's network costs.
    #[test]
    fn the_minimum_cost_flow_costs_what_cycle_canceling_finds(graph in larger_graph()) {
        check_min_cost(&graph, cycle_canceling(&graph)?)?;
    }

    /// Rebalancing the flow through unsampled subgraphs keeps the optimum and every count
    /// that was seen.
    #[test]
    fn rebalancing_keeps_the_optimum(graph in larger_graph()) {
        check_rebalance(&graph, cycle_canceling(&graph)?)?;
    }

    /// Joining leaves no block with a count that the entry could reach unreached, counts
    /// its joins, and changes nothing when there is nothing to join.
    #[test]
    fn joining_reaches_every_block_the_entry_can(graph in larger_graph()) {
        check_join(&graph, cycle_canceling(&graph)?)?;
    }

    /// Whatever steps run, the solver returns a flow of the graph: a count for each of its
    /// blocks and edges, and every block's count its incoming and its outgoing edges' sum.
    #[test]
    fn every_block_conserves(graph in larger_graph()) {
        for options in all_options() {
            check_flow(&graph, &solve(&graph, options)?)?;
        }
    }

    /// The same graph gives the same flow, whatever steps run; and `solve` is every step.
    #[test]
    fn solving_again_gives_the_same_flow(graph in larger_graph()) {
        for options in all_options() {
            prop_assert_eq!(solve(&graph, options)?, solve(&graph, options)?, "{:?}", options);
        }
        prop_assert_eq!(flow::solve(&graph), flow::solve_with(&graph, Options::default()));
    }
}

// ----- Examples.

/// The example of the module's documentation: a block seen 100 times branches two ways
/// nobody sampled to a join seen 100 times. Keeping the 100 costs one per unit of the unseen
/// entry, dropping them 20 per unit of both blocks: 100 flow through, and with nothing to
/// choose between the two ways, each takes half, whether the minimum-cost flow spreads
/// evenly or rebalancing splits it. With neither, the two ways carry the 100 between them.
#[test]
fn an_unsampled_diamond_splits_evenly() {
    let graph = Graph {
        blocks: vec![Some(100), None, None, Some(100)],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, None),
            edge(Some(0), Some(1), EdgeKind::Fall, None),
            edge(Some(0), Some(2), EdgeKind::Jump, None),
            edge(Some(1), Some(3), EdgeKind::Jump, None),
            edge(Some(2), Some(3), EdgeKind::Fall, None),
            edge(Some(3), None, EdgeKind::Exit, None),
        ],
    };
    let flow = flow::solve(&graph).unwrap();
    assert_eq!(flow.blocks, [100, 50, 50, 100]);
    assert_eq!(flow.edges, [100, 50, 50, 50, 50, 100]);
    assert_eq!(flow.joined, 0);
    assert_eq!(cost::of_flow(&graph, &flow), 100);

    for options in all_options() {
        let flow = flow::solve_with(&graph, options).unwrap();
        assert_eq!(cost::of_flow(&graph, &flow), 100, "{options:?}");
        if options.even || options.rebalance {
            assert_eq!(flow.blocks, [100, 50, 50, 100], "{options:?}");
        } else {
            assert_eq!([flow.blocks[0], flow.blocks[3]], [100, 100], "{options:?}");
            assert_eq!(flow.blocks[1] + flow.blocks[2], 100, "{options:?}");
        }
    }
}

/// A loop entered 100 times (the entries seen) whose back edge is seen 900 times: the only
/// flow that departs from nothing seen runs the loop's head and body 1000 times each, and
/// the block after it 100 times.
#[test]
fn a_loop_runs_its_entries_and_its_back_edges_times() {
    let graph = Graph {
        blocks: vec![None, None, None],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, Some(100)),
            edge(Some(0), Some(1), EdgeKind::Fall, None),
            edge(Some(1), Some(0), EdgeKind::Jump, Some(900)),
            edge(Some(1), Some(2), EdgeKind::Fall, None),
            edge(Some(2), None, EdgeKind::Exit, None),
        ],
    };
    let flow = flow::solve(&graph).unwrap();
    assert_eq!(flow.blocks, [1000, 1000, 100]);
    assert_eq!(flow.edges, [100, 1000, 900, 100, 100]);
    assert_eq!(cost::of_flow(&graph, &flow), 0);
}

/// Nothing seen, nothing invented: a function no record covered, loops and all, has no
/// count anywhere.
#[test]
fn a_function_nothing_saw_has_no_counts() {
    let graph = Graph {
        blocks: vec![None; 4],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, None),
            edge(Some(0), Some(1), EdgeKind::Fall, None),
            edge(Some(1), Some(1), EdgeKind::Jump, None),
            edge(Some(1), Some(2), EdgeKind::Fall, None),
            edge(Some(2), Some(0), EdgeKind::Jump, None),
            edge(Some(2), Some(3), EdgeKind::Fall, None),
            edge(Some(3), None, EdgeKind::Exit, None),
            edge(None, Some(2), EdgeKind::Entry, None),
        ],
    };
    for options in all_options() {
        let flow = flow::solve_with(&graph, options).unwrap();
        assert_eq!(flow.blocks, [0; 4], "{options:?}");
        assert_eq!(flow.edges, [0; 8], "{options:?}");
        assert_eq!(flow.joined, 0, "{options:?}");
    }
}

/// A block seen 100 times that no path from the entry reaches, on no cycle, has nothing
/// coming in: it is lowered to 0, and so is the unseen block before it. The same block on a
/// loop of its own keeps its 100 around the loop (lowering costs, the unseen loop does not),
/// and no join can reach it.
#[test]
fn a_block_the_entry_cannot_reach_is_lowered_unless_on_a_cycle() {
    let graph = Graph {
        blocks: vec![Some(10), Some(100), None],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, Some(10)),
            edge(Some(0), None, EdgeKind::Exit, Some(10)),
            edge(Some(2), Some(1), EdgeKind::Jump, None),
            edge(Some(1), None, EdgeKind::Exit, None),
        ],
    };
    let flow = flow::solve(&graph).unwrap();
    assert_eq!(flow.blocks, [10, 0, 0]);
    assert_eq!(flow.edges, [10, 10, 0, 0]);
    assert_eq!(
        cost::of_flow(&graph, &flow),
        100 * cost::BLOCK.lower as u128
    );

    let mut looped = graph.clone();
    looped
        .edges
        .push(edge(Some(1), Some(1), EdgeKind::Jump, None));
    let flow = flow::solve(&looped).unwrap();
    assert_eq!(flow.blocks, [10, 100, 0]);
    assert_eq!(flow.edges, [10, 10, 0, 0, 100]);
    assert_eq!(flow.joined, 0);
    assert_eq!(cost::of_flow(&looped, &flow), 0);
}

/// A loop seen 100 times that only unseen edges lead to from the entry: the minimum-cost
/// flow keeps it going on its own (raising the way in costs, the loop does not), and joining
/// then sends one unit from the entry through it along the one simple path there is.
#[test]
fn an_isolated_loop_is_joined_by_one_unit() {
    let graph = Graph {
        blocks: vec![Some(10), Some(100)],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, Some(10)),
            edge(Some(0), None, EdgeKind::Exit, Some(10)),
            edge(Some(0), Some(1), EdgeKind::Jump, None),
            edge(Some(1), Some(1), EdgeKind::Jump, None),
            edge(Some(1), None, EdgeKind::Exit, None),
        ],
    };
    let options = Options {
        join: false,
        ..Options::default()
    };
    let alone = flow::solve_with(&graph, options).unwrap();
    assert_eq!(alone.blocks, [10, 100]);
    assert_eq!(alone.edges, [10, 10, 0, 100, 0]);
    assert_eq!(alone.joined, 0);

    let flow = flow::solve(&graph).unwrap();
    assert_eq!(flow.blocks, [11, 101]);
    assert_eq!(flow.edges, [11, 10, 1, 100, 1]);
    assert_eq!(flow.joined, 1);
}

/// A function of no blocks has an empty flow.
#[test]
fn an_empty_graph_has_an_empty_flow() {
    assert_eq!(flow::solve(&Graph::default()).unwrap(), Flow::default());
}

/// One block more than the solver takes is refused, saying how many; as many as it takes
/// are solved.
#[test]
fn too_many_blocks_are_refused() {
    let graph = Graph {
        blocks: vec![None; flow::MAX_BLOCKS + 1],
        edges: Vec::new(),
    };
    assert_eq!(
        flow::solve(&graph),
        Err(FlowError::TooManyBlocks {
            blocks: flow::MAX_BLOCKS + 1,
            max: flow::MAX_BLOCKS
        })
    );
    let mut graph = graph;
    graph.blocks.pop();
    graph.blocks[0] = Some(5);
    let flow = flow::solve(&graph).unwrap();
    assert_eq!(flow.blocks.len(), flow::MAX_BLOCKS);
    assert!(flow.blocks.iter().all(|&count| count == 0));
}

/// An edge naming a block past the last, at either end, or one from the entry straight to
/// the exit, is refused, naming the edge and the graph's blocks.
#[test]
fn an_edge_naming_no_block_is_refused() {
    let good = [
        edge(None, Some(0), EdgeKind::Entry, Some(3)),
        edge(Some(0), Some(1), EdgeKind::Fall, None),
        edge(Some(1), None, EdgeKind::Exit, None),
    ];
    let bad = [
        edge(Some(1), Some(2), EdgeKind::Jump, None),
        edge(Some(2), Some(0), EdgeKind::Jump, None),
        edge(None, Some(7), EdgeKind::Entry, None),
        edge(Some(u32::MAX), None, EdgeKind::Exit, Some(1)),
        edge(None, None, EdgeKind::Entry, None),
    ];
    for bad in bad {
        let mut edges = good.to_vec();
        edges.insert(1, bad);
        let graph = Graph {
            blocks: vec![None, Some(3)],
            edges,
        };
        assert_eq!(
            flow::solve(&graph),
            Err(FlowError::BadEdge { edge: 1, blocks: 2 }),
            "{bad:?}"
        );
    }
}

/// Observations that add up past any 64-bit count are refused.
#[test]
fn counts_too_large_are_refused() {
    let graph = Graph {
        blocks: vec![Some(u64::MAX), Some(u64::MAX)],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, None),
            edge(Some(0), Some(1), EdgeKind::Fall, None),
            edge(Some(1), None, EdgeKind::Exit, None),
        ],
    };
    let refused = flow::solve(&graph);
    assert!(
        matches!(refused, Err(FlowError::CountsTooLarge { .. })),
        "{refused:?}"
    );
}

/// An edge seen as zero is a little dearer to raise than one seen above zero, as a block's
/// is: of two parallel jumps, one seen 0 and one seen once, the flow takes the second alone
/// (at a raise of 10 each, either split would cost the same and the flow would be spread).
#[test]
fn an_edge_seen_as_zero_is_dearer_to_raise_than_one_seen() {
    let graph = Graph {
        blocks: vec![Some(10), Some(10)],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, Some(10)),
            edge(Some(0), Some(1), EdgeKind::Jump, Some(0)),
            edge(Some(0), Some(1), EdgeKind::Jump, Some(1)),
            edge(Some(1), None, EdgeKind::Exit, None),
        ],
    };
    let flow = flow::solve(&graph).unwrap();
    assert_eq!(flow.edges, [10, 0, 10, 10]);
    assert_eq!(
        cost::of_edge(EdgeKind::Fall, Some(0)).raise,
        cost::FALL.raise + 1
    );
}

/// Rebalancing alone, on the minimum-cost flow as it comes (not spread evenly).
const REBALANCE: Options = Options {
    even: false,
    rebalance: true,
    join: false,
};

/// A root seen 100 times branches to a block seen 40 times and into an unsampled diamond
/// that meets again at a block seen 60 times. The edge to the seen block is left out of the
/// subgraph (profi's `ignoreJump`: an edge from the root to a known block), so the diamond
/// is a subgraph of one end, and its 60 split evenly.
#[test]
fn the_roots_edge_to_a_seen_block_is_left_out_of_its_subgraph() {
    let graph = Graph {
        blocks: vec![Some(100), Some(40), None, None, Some(60)],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, None),
            edge(Some(0), Some(1), EdgeKind::Jump, None),
            edge(Some(0), Some(2), EdgeKind::Jump, None),
            edge(Some(0), Some(3), EdgeKind::Fall, None),
            edge(Some(2), Some(4), EdgeKind::Jump, None),
            edge(Some(3), Some(4), EdgeKind::Fall, None),
            edge(Some(1), None, EdgeKind::Exit, None),
            edge(Some(4), None, EdgeKind::Exit, None),
        ],
    };
    let flow = flow::solve_with(&graph, REBALANCE).unwrap();
    assert_eq!(flow.blocks, [100, 40, 30, 30, 60]);
    assert_eq!(flow.edges, [100, 40, 30, 30, 30, 30, 40, 60]);
}

/// An unsampled block of the diamond also branches to a block seen 0 times: an edge to a
/// known block without flow is left out too, and the diamond still splits evenly.
#[test]
fn an_edge_to_a_block_without_flow_is_left_out_of_the_subgraph() {
    let graph = Graph {
        blocks: vec![Some(100), None, None, Some(100), Some(0)],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, None),
            edge(Some(0), Some(1), EdgeKind::Jump, None),
            edge(Some(0), Some(2), EdgeKind::Fall, None),
            edge(Some(1), Some(3), EdgeKind::Jump, None),
            edge(Some(2), Some(3), EdgeKind::Fall, None),
            edge(Some(2), Some(4), EdgeKind::Jump, None),
            edge(Some(3), None, EdgeKind::Exit, None),
            edge(Some(4), None, EdgeKind::Exit, None),
        ],
    };
    let flow = flow::solve_with(&graph, REBALANCE).unwrap();
    assert_eq!(flow.blocks, [100, 50, 50, 100, 0]);
    assert_eq!(flow.edges, [100, 50, 50, 50, 50, 0, 100, 0]);
}

/// Unsampled blocks that hold a cycle, or run back into the root, have no order to split
/// them in: rebalancing leaves their flow as the minimum-cost flow made it, which conserves.
#[test]
fn a_subgraph_with_a_cycle_is_not_rebalanced() {
    // 0 -> 1 -> 2 -> 1 (a cycle of unsampled blocks), 2 -> 4; 0 -> 3 -> 4.
    let cycle = Graph {
        blocks: vec![Some(100), None, None, None, Some(100)],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, None),
            edge(Some(0), Some(1), EdgeKind::Jump, None),
            edge(Some(1), Some(2), EdgeKind::Fall, None),
            edge(Some(2), Some(1), EdgeKind::Jump, None),
            edge(Some(2), Some(4), EdgeKind::Fall, None),
            edge(Some(0), Some(3), EdgeKind::Fall, None),
            edge(Some(3), Some(4), EdgeKind::Fall, None),
            edge(Some(4), None, EdgeKind::Exit, None),
        ],
    };
    // 0 -> 1 -> 0 (back into the root), 0 -> 2 -> 3.
    let back = Graph {
        blocks: vec![Some(100), None, None, Some(100)],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, None),
            edge(Some(0), Some(1), EdgeKind::Jump, None),
            edge(Some(1), Some(0), EdgeKind::Jump, None),
            edge(Some(0), Some(2), EdgeKind::Fall, None),
            edge(Some(2), Some(3), EdgeKind::Fall, None),
            edge(Some(3), None, EdgeKind::Exit, None),
        ],
    };
    for graph in [cycle, back] {
        let alone = flow::solve_with(&graph, MIN_COST).unwrap();
        let flow = flow::solve_with(&graph, REBALANCE).unwrap();
        check_flow(&graph, &flow).unwrap();
        assert_eq!(flow.edges, alone.edges, "{graph:?}");
    }
}

/// Rebalancing starts at blocks with a seen count (profi's): an unsampled block whose own
/// children meet again is split only as part of its root's subgraph, and here its root's
/// has two ends (a block seen 80 times and one seen 20), so nothing is moved.
#[test]
fn an_unsampled_block_is_no_root_of_a_subgraph() {
    let graph = Graph {
        blocks: vec![Some(100), None, None, None, Some(80), None, Some(20)],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, None),
            edge(Some(0), Some(1), EdgeKind::Jump, None),
            edge(Some(0), Some(5), EdgeKind::Fall, None),
            edge(Some(1), Some(2), EdgeKind::Jump, None),
            edge(Some(1), Some(3), EdgeKind::Fall, None),
            edge(Some(2), Some(4), EdgeKind::Jump, None),
            edge(Some(3), Some(4), EdgeKind::Fall, None),
            edge(Some(5), Some(6), EdgeKind::Fall, None),
            edge(Some(4), None, EdgeKind::Exit, None),
            edge(Some(6), None, EdgeKind::Exit, None),
        ],
    };
    let alone = flow::solve_with(&graph, MIN_COST).unwrap();
    // The minimum-cost flow sends the 80 one way: what an even split would change.
    assert_ne!(alone.blocks[2], alone.blocks[3], "{alone:?}");
    let flow = flow::solve_with(&graph, REBALANCE).unwrap();
    assert_eq!(flow.edges, alone.edges);
}

/// Joining takes the path with the fewest edges that carry no flow, then the fewest edges: a
/// loop seen 50 times that nothing enters is joined from the entry through the two blocks
/// that ran (one edge without flow), not through the unsampled block beside them (two edges
/// without flow, though it is the first block and the shorter way), and leaves by its own
/// exit.
#[test]
fn a_loop_is_joined_along_the_flow_where_it_can_be() {
    // 0: unsampled, 1 and 2: seen 10, 3 and 4: the loop.
    let graph = Graph {
        blocks: vec![None, Some(10), Some(10), Some(50), Some(50)],
        edges: vec![
            edge(None, Some(1), EdgeKind::Entry, None),
            edge(Some(1), Some(2), EdgeKind::Fall, None),
            edge(Some(2), None, EdgeKind::Exit, None),
            edge(None, Some(0), EdgeKind::Entry, None),
            edge(Some(0), Some(3), EdgeKind::Fall, None),
            edge(Some(2), Some(3), EdgeKind::Jump, None),
            edge(Some(3), Some(4), EdgeKind::Fall, Some(50)),
            edge(Some(4), Some(3), EdgeKind::Jump, Some(50)),
            edge(Some(4), None, EdgeKind::Exit, None),
        ],
    };
    let flow = flow::solve(&graph).unwrap();
    assert_eq!(flow.joined, 1);
    assert_eq!(flow.blocks, [0, 11, 11, 51, 51]);
    assert_eq!(flow.edges, [11, 11, 10, 0, 0, 1, 51, 50, 1]);
}

/// Of two joining paths of the same length, both along flow but for the edge into the
/// loop, the one through the lower block is taken.
#[test]
fn a_join_between_equal_paths_takes_the_lower_block() {
    let graph = Graph {
        blocks: vec![Some(5), Some(5), Some(50), Some(50)],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, None),
            edge(None, Some(1), EdgeKind::Entry, None),
            edge(Some(0), None, EdgeKind::Exit, None),
            edge(Some(1), None, EdgeKind::Exit, None),
            edge(Some(0), Some(2), EdgeKind::Jump, None),
            edge(Some(1), Some(2), EdgeKind::Jump, None),
            edge(Some(2), Some(3), EdgeKind::Fall, Some(50)),
            edge(Some(3), Some(2), EdgeKind::Jump, Some(50)),
            edge(Some(3), None, EdgeKind::Exit, None),
        ],
    };
    let flow = flow::solve(&graph).unwrap();
    assert_eq!(flow.joined, 1);
    assert_eq!(flow.blocks, [6, 5, 51, 51]);
    assert_eq!(flow.edges, [6, 5, 5, 5, 1, 0, 51, 50, 1]);
}

/// Twins, two edges with the same ends, kind and observation, are equally dear, and the
/// even spread gives each half of what they carry between them (within one, where it is
/// odd). Each graph below has many flows of the least cost; the counts pinned are the
/// spread's, and each graph holds one part of the search to them:
///
/// 1. a block nobody sampled, entered 10 times, leaving by two exits nobody sampled (a loop
///    on itself beside them): the spread shares only among arcs with room left;
/// 2. a block seen 10 times entered by twins seen 16 times each and a third entry seen 4
///    times: a spread that fills an arc before all has arrived searches again for the rest,
///    rather than sending it down one path;
/// 3. a block seen 13 times that leaves by twins seen 23 times each, entered 8 times: a
///    search finishes every node as near as the demand it found, and none farther;
/// 4. three entries seen 3 times each into a block nobody sampled that leaves 5 times: the
///    nodes as near as the demand are in the search's region, so every equal way shares.
#[test]
fn equally_dear_twins_share_the_flow_evenly() {
    use EdgeKind::{Entry, Exit, Jump};
    let cases = [
        (
            vec![None],
            vec![
                edge(Some(0), None, Exit, None),
                edge(Some(0), None, Exit, None),
                edge(None, Some(0), Entry, Some(10)),
                edge(Some(0), Some(0), Jump, None),
            ],
            [10],
            vec![5, 5, 10, 0],
        ),
        (
            vec![Some(10)],
            vec![
                edge(None, Some(0), Entry, Some(16)),
                edge(None, Some(0), Entry, Some(16)),
                edge(None, Some(0), Entry, Some(4)),
                edge(Some(0), None, Exit, Some(0)),
            ],
            [10],
            vec![5, 5, 0, 10],
        ),
        (
            vec![Some(13)],
            vec![
                edge(Some(0), None, Exit, Some(23)),
                edge(Some(0), None, Exit, Some(23)),
                edge(None, Some(0), Entry, Some(8)),
            ],
            [9],
            vec![4, 5, 9],
        ),
        (
            vec![None],
            vec![
                edge(None, Some(0), Entry, Some(3)),
                edge(None, Some(0), Entry, Some(3)),
                edge(None, Some(0), Entry, Some(3)),
                edge(Some(0), None, Exit, Some(5)),
            ],
            [5],
            vec![1, 2, 2, 5],
        ),
    ];
    for (i, (blocks, edges, counts, edge_counts)) in cases.into_iter().enumerate() {
        let graph = Graph { blocks, edges };
        let flow = flow::solve(&graph).unwrap();
        assert_eq!(flow.blocks, counts, "graph {}", i + 1);
        assert_eq!(flow.edges, edge_counts, "graph {}", i + 1);
        // The pick is among flows of the least cost: the search's rules choose, not the costs.
        let alone = flow::solve_with(&graph, MIN_COST).unwrap();
        assert_eq!(cost::of_flow(&graph, &flow), cost::of_flow(&graph, &alone));
    }
}

/// Without the even spread, each augmentation goes along one shortest path, the first the
/// search finds: of two parallel edges nobody sampled, the earlier takes all 100.
#[test]
fn without_the_even_spread_the_earlier_of_parallel_edges_takes_the_flow() {
    let graph = Graph {
        blocks: vec![None, None],
        edges: vec![
            edge(None, Some(0), EdgeKind::Entry, Some(100)),
            edge(Some(0), Some(1), EdgeKind::Fall, None),
            edge(Some(0), Some(1), EdgeKind::Jump, None),
            edge(Some(1), None, EdgeKind::Exit, None),
        ],
    };
    let alone = flow::solve_with(&graph, MIN_COST).unwrap();
    assert_eq!(alone.edges, [100, 100, 0, 100]);
    let even = Options {
        even: true,
        ..MIN_COST
    };
    assert_eq!(
        flow::solve_with(&graph, even).unwrap().edges,
        [100, 50, 50, 100]
    );
}
