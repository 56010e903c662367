//! After the minimum-cost flow, two adjustments profi makes:
//!
//! - **Unsampled subgraphs split evenly.** Where a block with a seen count branches into
//!   blocks nothing covered, which meet again at one block (or leave the function), no
//!   count says how the flow divides: the minimum-cost flow may send it all one way. It is
//!   split evenly at every branch instead, in the order of the subgraph. Only edges nobody
//!   saw are moved, so the cost stays the least.
//! - **Isolated blocks joined.** A loop whose counts were all seen can carry its flow round
//!   and round without ever being entered, at no cost. A block that ran was entered: each
//!   block with flow that the entry does not reach gets one unit along a path from an
//!   entry through it to an exit, by the edges that carry flow where they can.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::graph::{Flow, FlowError, Graph};

/// The edges by the block they leave and the block they reach. Node `n` (the number of
/// blocks) stands for the exit, `n + 1` for the entry.
struct Adjacency {
    out: Vec<Vec<u32>>,
    into: Vec<Vec<u32>>,
}

impl Adjacency {
    fn of(graph: &Graph) -> Adjacency {
        let n = graph.blocks.len();
        let mut out = vec![Vec::new(); n + 2];
        let mut into = vec![Vec::new(); n + 2];
        for (i, e) in graph.edges.iter().enumerate() {
            let from = e.from.map_or(n + 1, |b| b as usize);
            let to = e.to.map_or(n, |b| b as usize);
            out[from].push(i as u32);
            into[to].push(i as u32);
        }
        Adjacency { out, into }
    }
}

fn head(graph: &Graph, edge: u32) -> usize {
    graph.edges[edge as usize]
        .to
        .map_or(graph.blocks.len(), |b| b as usize)
}

fn tail(graph: &Graph, edge: u32) -> usize {
    graph.edges[edge as usize]
        .from
        .map_or(graph.blocks.len() + 1, |b| b as usize)
}

/// Splits the flow through every unsampled subgraph evenly at each of its branches.
pub(super) fn rebalance(graph: &Graph, flow: &mut Flow) {
    let adjacency = Adjacency::of(graph);
    let mut subgraph = Subgraph::new(graph.blocks.len());
    for root in 0..graph.blocks.len() {
        if subgraph.find(graph, flow, &adjacency, root) {
            subgraph.split(graph, flow, &adjacency);
        }
    }
}

/// An unsampled subgraph: a root with a seen count, the unknown blocks below it, and the
/// one block with a seen count (or the exit) where they all end.
struct Subgraph {
    root: usize,
    end: Option<usize>,
    /// The unknown blocks, in an order where every edge among them goes forward.
    unknown: Vec<usize>,
    visited: Vec<bool>,
    indegree: Vec<u32>,
}

impl Subgraph {
    fn new(blocks: usize) -> Subgraph {
        Subgraph {
            root: 0,
            end: None,
            unknown: Vec::new(),
            visited: vec![false; blocks + 2],
            indegree: vec![0; blocks + 2],
        }
    }

    fn known(graph: &Graph, node: usize) -> bool {
        // The exit is a known end: flow that reaches it has left.
        node >= graph.blocks.len() || graph.blocks[node].is_some()
    }

    fn count(graph: &Graph, flow: &Flow, node: usize) -> u64 {
        flow.blocks
            .get(node)
            .copied()
            .unwrap_or(u64::from(node == graph.blocks.len()))
    }

    /// Whether an edge is left out of the subgraph (profi's `ignoreJump`): edges from the
    /// root to known blocks, edges to known blocks without flow; never an edge to the end.
    fn ignored(&self, graph: &Graph, flow: &Flow, edge: u32) -> bool {
        let to = head(graph, edge);
        if self.end == Some(to) {
            return false;
        }
        Subgraph::known(graph, to)
            && (tail(graph, edge) == self.root || Subgraph::count(graph, flow, to) == 0)
    }

    /// Looks for an unsampled subgraph under `root`; true when one is there whose flow can
    /// be split without moving anything seen.
    fn find(&mut self, graph: &Graph, flow: &Flow, adjacency: &Adjacency, root: usize) -> bool {
        if graph.blocks[root].is_none() || flow.blocks[root] == 0 {
            return false;
        }
        let to_unknown = |&e: &u32| !Subgraph::known(graph, head(graph, e));
        if !adjacency.out[root].iter().any(to_unknown) {
            return false;
        }
        self.root = root;
        self.end = None;
        self.unknown.clear();
        self.visited.fill(false);
        self.visited[root] = true;
        let mut ends = Vec::new();
        let mut queue = VecDeque::from([root]);
        while let Some(v) = queue.pop_front() {
            for &e in &adjacency.out[v] {
                if self.ignored(graph, flow, e) {
                    continue;
                }
                let to = head(graph, e);
                if self.visited[to] {
                    continue;
                }
                self.visited[to] = true;
                if Subgraph::known(graph, to) {
                    ends.push(to);
                } else {
                    queue.push_back(to);
                    self.unknown.push(to);
                }
            }
        }
        if self.unknown.is_empty() || ends.len() > 1 {
            return false;
        }
        self.end = ends.first().copied();
        self.fits(graph, flow, adjacency) && self.acyclic(graph, flow, adjacency)
    }

    /// The edges of the subgraph, each once: out of the root and out of its unknown blocks.
    fn edges<'a>(
        &'a self,
        graph: &'a Graph,
        flow: &'a Flow,
        adjacency: &'a Adjacency,
    ) -> impl Iterator<Item = u32> + 'a {
        let blocks = std::iter::once(self.root).chain(self.unknown.iter().copied());
        blocks
            .flat_map(|v| adjacency.out[v].iter().copied())
            .filter(|&e| !self.ignored(graph, flow, e))
    }

    /// Every unknown block passes its flow on, and nothing the subgraph moves was seen.
    fn fits(&self, graph: &Graph, flow: &Flow, adjacency: &Adjacency) -> bool {
        for &v in &self.unknown {
            let out = &adjacency.out[v];
            if out.is_empty() {
                if self.end.is_some() {
                    return false;
                }
                continue;
            }
            if out.iter().all(|&e| self.ignored(graph, flow, e)) {
                return false;
            }
        }
        self.edges(graph, flow, adjacency)
            .all(|e| graph.edges[e as usize].observed.is_none())
    }

    /// Orders the unknown blocks so that every edge among them goes forward; false when
    /// they hold a cycle (or one runs back through the root).
    fn acyclic(&mut self, graph: &Graph, flow: &Flow, adjacency: &Adjacency) -> bool {
        self.indegree.fill(0);
        let edges: Vec<u32> = self.edges(graph, flow, adjacency).collect();
        for &e in &edges {
            self.indegree[head(graph, e)] += 1;
        }
        if self.indegree[self.root] > 0 {
            return false;
        }
        let mut order = Vec::with_capacity(self.unknown.len());
        let mut queue = VecDeque::from([self.root]);
        while let Some(v) = queue.pop_front() {
            if Some(v) == self.end {
                break;
            }
            if v != self.root {
                order.push(v);
            }
            for &e in &adjacency.out[v] {
                if self.ignored(graph, flow, e) {
                    continue;
                }
                let to = head(graph, e);
                self.indegree[to] -= 1;
                if self.indegree[to] == 0 {
                    queue.push_back(to);
                }
            }
        }
        if order.len() != self.unknown.len() || order.iter().any(|&v| Subgraph::known(graph, v)) {
            return false;
        }
        self.unknown = order;
        true
    }

    /// Splits the root's flow into the subgraph evenly over its edges, then each unknown
    /// block's, in order.
    fn split(&self, graph: &Graph, flow: &mut Flow, adjacency: &Adjacency) {
        let root_out = adjacency.out[self.root].iter();
        let into: u64 = root_out
            .filter(|&&e| !self.ignored(graph, flow, e))
            .map(|&e| flow.edges[e as usize])
            .sum();
        self.split_block(graph, flow, adjacency, self.root, into);
        for &v in &self.unknown {
            let count: u64 = adjacency.into[v]
                .iter()
                .map(|&e| flow.edges[e as usize])
                .sum();
            flow.blocks[v] = count;
            self.split_block(graph, flow, adjacency, v, count);
        }
    }

    fn split_block(
        &self,
        graph: &Graph,
        flow: &mut Flow,
        adjacency: &Adjacency,
        block: usize,
        mut count: u64,
    ) {
        let kept: Vec<u32> = adjacency.out[block]
            .iter()
            .copied()
            .filter(|&e| !self.ignored(graph, flow, e))
            .collect();
        if kept.is_empty() {
            return;
        }
        let share = count.div_ceil(kept.len() as u64);
        for e in kept {
            let sent = share.min(count);
            flow.edges[e as usize] = sent;
            count -= sent;
        }
    }
}

/// Joins every block with flow that the entry does not reach to the entry and an exit, one
/// unit along a path, counting the joins in `flow.joined`.
pub(super) fn join(graph: &Graph, flow: &mut Flow) -> Result<(), FlowError> {
    let n = graph.blocks.len();
    let adjacency = Adjacency::of(graph);
    let mut reached = vec![false; n + 2];
    reach(graph, flow, &adjacency, n + 1, &mut reached);
    for block in 0..n {
        if flow.blocks[block] == 0 || reached[block] {
            continue;
        }
        let (Some(to), Some(from)) = (
            path(graph, flow, &adjacency, n + 1, block),
            path(graph, flow, &adjacency, block, n),
        ) else {
            // No path from an entry through it to an exit: it stays a loop of its own.
            continue;
        };
        for &e in to.iter().chain(&from) {
            let e = e as usize;
            flow.edges[e] = flow.edges[e]
                .checked_add(1)
                .ok_or(FlowError::CountsTooLarge { max: u64::MAX })?;
            if let Some(b) = graph.edges[e].to {
                let b = b as usize;
                flow.blocks[b] = flow.blocks[b]
                    .checked_add(1)
                    .ok_or(FlowError::CountsTooLarge { max: u64::MAX })?;
            }
        }
        flow.joined += 1;
        for &e in &to {
            if let Some(b) = graph.edges[e as usize].to {
                reach(graph, flow, &adjacency, b as usize, &mut reached);
            }
        }
    }
    Ok(())
}

/// Marks what `start` reaches along edges that carry flow.
fn reach(graph: &Graph, flow: &Flow, adjacency: &Adjacency, start: usize, reached: &mut [bool]) {
    if reached[start] {
        return;
    }
    reached[start] = true;
    let mut queue = VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &e in &adjacency.out[v] {
            let to = head(graph, e);
            if flow.edges[e as usize] > 0 && !reached[to] {
                reached[to] = true;
                queue.push_back(to);
            }
        }
    }
}

/// The path from `from` to `to` that takes the fewest edges without flow, then the fewest
/// edges (ties to the lower node): the edges' indices in order.
fn path(
    graph: &Graph,
    flow: &Flow,
    adjacency: &Adjacency,
    from: usize,
    to: usize,
) -> Option<Vec<u32>> {
    let nodes = graph.blocks.len() + 2;
    // An edge without flow costs more than any simple path's edges with flow (at most
    // nodes - 1): fewer edges without flow always wins.
    let without_flow = nodes as u64;
    let mut distance = vec![u64::MAX; nodes];
    let mut parent = vec![u32::MAX; nodes];
    let mut heap = BinaryHeap::from([Reverse((0u64, from))]);
    distance[from] = 0;
    while let Some(Reverse((d, v))) = heap.pop() {
        // A stale entry: the node was reached shorter since it was pushed.
        if d != distance[v] {
            continue;
        }
        if v == to {
            break;
        }
        for &e in &adjacency.out[v] {
            let next = head(graph, e);
            let step = if flow.edges[e as usize] > 0 {
                1
            } else {
                without_flow
            };
            if d + step < distance[next] {
                distance[next] = d + step;
                parent[next] = e;
                heap.push(Reverse((d + step, next)));
            }
        }
    }
    if distance[to] == u64::MAX {
        return None;
    }
    let mut edges = Vec::new();
    let mut v = to;
    while v != from {
        let e = parent[v];
        edges.push(e);
        v = tail(graph, e);
    }
    edges.reverse();
    Some(edges)
}
