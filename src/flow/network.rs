//! The minimum-cost flow, on profi's network: every block split into a node where its flow
//! comes in and one where it goes out; every block and edge an arc between two nodes that
//! raises its count at the raising cost and, where something was seen, an arc back that
//! lowers it at the lowering cost. A count seen on an element is forced through it: it is
//! supplied at the node after the element and demanded at the node before, so that the flow
//! found, added to what was seen, conserves at every block, and its cost is what moving the
//! counts costs. (Profi supplies every count from one extra source and drains it into one
//! extra sink; netting each node's supply and demand is the same problem with much less to
//! route, since counts that agree cancel where they meet.)
//!
//! The flow is found by successive shortest paths: from a node with supply left, Dijkstra's
//! algorithm over the residual network, with node potentials that keep every reduced cost
//! at zero or above, runs to the nearest node with demand left (and finishes the nodes as
//! near as it); the potentials of the nodes it finished are lowered by how much nearer they
//! are, which keeps every reduced cost at zero or above and makes every shortest path to
//! that node one of arcs of reduced cost zero; then flow is sent along those arcs. Each push
//! spreads its flow evenly over the acyclic graph of them, as profi's `augmentFlowAlongDAG`
//! does, so that where several routes cost the same each takes its share: integers, rounded
//! up at each split, the excess handed back the way it came. Each search stays near where it
//! starts: the time grows with the nodes between a supply and its demand, not with the
//! function.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::cost::{self, Cost};
use super::graph::{Flow, FlowError, Graph, MAX_BLOCKS, Observed};

/// The largest sum of seen counts the solver takes: a count is at most the sum seen plus
/// the flow pushed, which is at most that sum again, so twice it never overflows, and every
/// node's supply fits an `i64`.
const MAX_TOTAL: u64 = u64::MAX / 4;

/// An arc of the residual network. Arcs come in pairs, `2k` and its reverse `2k + 1`.
#[derive(Clone, Copy, Debug)]
struct Arc {
    head: u32,
    /// What can still be sent along it.
    residual: u64,
    cost: i64,
}

/// Where an element's count is read back: its raising arc and its lowering arc.
#[derive(Clone, Copy, Debug)]
struct Element {
    seen: u64,
    raise: u32,
    lower: Option<u32>,
}

/// The residual network of one function.
struct Network {
    arcs: Vec<Arc>,
    /// Arc ids by tail node: `out[start[v]..start[v + 1]]`.
    start: Vec<u32>,
    out: Vec<u32>,
    potential: Vec<i64>,
    /// What each node has yet to send (above zero) or to take (below zero).
    supply: Vec<i64>,
}

impl Network {
    fn tail(&self, arc: u32) -> u32 {
        self.arcs[(arc ^ 1) as usize].head
    }

    fn out(&self, node: u32) -> &[u32] {
        &self.out[self.start[node as usize] as usize..self.start[node as usize + 1] as usize]
    }

    fn reduced(&self, arc: u32) -> i64 {
        let a = &self.arcs[arc as usize];
        a.cost + self.potential[self.tail(arc) as usize] - self.potential[a.head as usize]
    }

    /// An arc that flow can take now: room left, reduced cost zero.
    fn tight(&self, arc: u32) -> bool {
        self.arcs[arc as usize].residual > 0 && self.reduced(arc) == 0
    }

    fn push(&mut self, arc: u32, amount: u64) {
        self.arcs[arc as usize].residual -= amount;
        self.arcs[(arc ^ 1) as usize].residual += amount;
    }

    /// The flow an element's arc carries: what its reverse can send back. An element's arcs
    /// are the first of their pairs, so their reverse is the next arc.
    fn carried(&self, arc: u32) -> u64 {
        self.arcs[arc as usize + 1].residual
    }
}

/// Builds the network of a graph, arc by arc, before the arcs are grouped by node.
struct Builder {
    arcs: Vec<Arc>,
    tails: Vec<u32>,
    supply: Vec<i64>,
    infinite: u64,
}

impl Builder {
    fn arc(&mut self, tail: u32, head: u32, capacity: u64, cost: u64) -> u32 {
        let id = self.arcs.len() as u32;
        let cost = cost as i64;
        self.arcs.push(Arc {
            head,
            residual: capacity,
            cost,
        });
        self.arcs.push(Arc {
            head: tail,
            residual: 0,
            cost: -cost,
        });
        self.tails.push(tail);
        self.tails.push(head);
        id
    }

    /// An element whose flow runs from node `from` to node `to`, seen `observed`.
    fn element(&mut self, from: u32, to: u32, observed: Observed, cost: Cost) -> Element {
        let raise = self.arc(from, to, self.infinite, cost.raise);
        let seen = observed.unwrap_or(0);
        let mut lower = None;
        if seen > 0 {
            lower = Some(self.arc(to, from, seen, cost.lower));
            // The seen count, forced through: supplied after the element, taken before it.
            // Both fit: the seen counts add up to at most `MAX_TOTAL`.
            self.supply[to as usize] += seen as i64;
            self.supply[from as usize] -= seen as i64;
        }
        Element { seen, raise, lower }
    }

    fn finish(self) -> Network {
        let nodes = self.supply.len();
        let mut start = vec![0u32; nodes + 1];
        for &t in &self.tails {
            start[t as usize + 1] += 1;
        }
        for v in 0..nodes {
            start[v + 1] += start[v];
        }
        let mut next = start.clone();
        let mut out = vec![0u32; self.arcs.len()];
        for (id, &t) in self.tails.iter().enumerate() {
            out[next[t as usize] as usize] = id as u32;
            next[t as usize] += 1;
        }
        Network {
            arcs: self.arcs,
            start,
            out,
            potential: vec![0; nodes],
            supply: self.supply,
        }
    }
}

/// Checks `graph` and adds up what was seen: the total, when it is within bounds.
fn checked(graph: &Graph) -> Result<u64, FlowError> {
    let blocks = graph.blocks.len();
    if blocks > MAX_BLOCKS {
        return Err(FlowError::TooManyBlocks {
            blocks,
            max: MAX_BLOCKS,
        });
    }
    for (edge, e) in graph.edges.iter().enumerate() {
        let inside = |b: Option<u32>| b.is_none_or(|b| (b as usize) < blocks);
        if !inside(e.from) || !inside(e.to) || (e.from.is_none() && e.to.is_none()) {
            return Err(FlowError::BadEdge { edge, blocks });
        }
    }
    let seen = graph
        .blocks
        .iter()
        .copied()
        .chain(graph.edges.iter().map(|e| e.observed));
    seen.map(|s| s.unwrap_or(0))
        .try_fold(0u64, |sum, s| {
            sum.checked_add(s).filter(|&t| t <= MAX_TOTAL)
        })
        .ok_or(FlowError::CountsTooLarge { max: MAX_TOTAL })
}

/// The minimum-cost flow of `graph`: each block's and edge's count.
pub(super) fn min_cost(graph: &Graph, even: bool) -> Result<Flow, FlowError> {
    let total = checked(graph)?;
    let blocks = graph.blocks.len();
    if total == 0 {
        // Nothing seen above zero: no count need move, and none does.
        return Ok(Flow {
            blocks: vec![0; blocks],
            edges: vec![0; graph.edges.len()],
            joined: 0,
        });
    }
    // Nodes: block b comes in at 2b and goes out at 2b + 1; then the entry and the exit.
    let entry = 2 * blocks as u32;
    let exit = entry + 1;
    let mut builder = Builder {
        arcs: Vec::new(),
        tails: Vec::new(),
        supply: vec![0; entry as usize + 2],
        infinite: total,
    };
    let block_elements: Vec<Element> = (0..blocks as u32)
        .map(|b| {
            let seen = graph.blocks[b as usize];
            builder.element(2 * b, 2 * b + 1, seen, cost::of_block(seen))
        })
        .collect();
    let edge_elements: Vec<Element> = graph
        .edges
        .iter()
        .map(|e| {
            let from = e.from.map_or(entry, |b| 2 * b + 1);
            let to = e.to.map_or(exit, |b| 2 * b);
            builder.element(from, to, e.observed, cost::of_edge(e.kind, e.observed))
        })
        .collect();
    // What leaves at the exit comes back in at the entry: the flow is a circulation.
    builder.arc(exit, entry, total, 0);
    let mut network = builder.finish();

    let mut search = Search::new(&network);
    for node in 0..network.supply.len() as u32 {
        while network.supply[node as usize] > 0 {
            let Some(target) = search.nearest_demand(&mut network, node) else {
                // Every supply can be returned the way it was seen, so a demand is always
                // within reach; were it not, the counts are left as they stand.
                break;
            };
            let spread = even && search.acyclic(&network, node, target);
            if !spread || search.spread(&mut network, node, target) == 0 {
                // Nothing spread arrives only where the acyclic graph lost the path; the
                // path the search found is still there, untouched.
                search.along_the_path(&mut network, node, target);
            }
        }
    }

    let count = |e: &Element| {
        let raised = network.carried(e.raise);
        let lowered = e.lower.map_or(0, |l| network.carried(l));
        e.seen + raised - lowered
    };
    Ok(Flow {
        blocks: block_elements.iter().map(count).collect(),
        edges: edge_elements.iter().map(count).collect(),
        joined: 0,
    })
}

const UNSEEN: u8 = 0;
const OPEN: u8 = 1;
const CLOSED: u8 = 2;

/// The scratch space of the searches, reused from one to the next. Marks are stamped with
/// the search's number, so that nothing is cleared over the whole network between two.
struct Search {
    epoch: u32,
    reached: Vec<u32>,
    done: Vec<u32>,
    distance: Vec<i64>,
    parent: Vec<u32>,
    heap: BinaryHeap<Reverse<(i64, u32)>>,
    /// The nodes the last search finished, in the order it did.
    finished: Vec<u32>,
    /// Of those, the ones from which a tight path leads to the target.
    reaches: Vec<u32>,
    queue: VecDeque<u32>,
    /// The depth-first search over tight arcs: its state, finishing times, stack.
    state: Vec<u8>,
    finish: Vec<u32>,
    stack: Vec<(u32, u32)>,
    /// Nodes in the order the depth-first search finished them (the target first).
    order: Vec<u32>,
    /// The acyclic arcs out of each node of `order`, by its index there.
    dag: Vec<u32>,
    dag_start: Vec<u32>,
    alive: Vec<bool>,
    excess: Vec<u64>,
    pushed: Vec<u64>,
}

impl Search {
    fn new(network: &Network) -> Search {
        let nodes = network.supply.len();
        Search {
            epoch: 0,
            reached: vec![0; nodes],
            done: vec![0; nodes],
            distance: vec![0; nodes],
            parent: vec![u32::MAX; nodes],
            heap: BinaryHeap::new(),
            finished: Vec::new(),
            reaches: vec![0; nodes],
            queue: VecDeque::new(),
            state: vec![UNSEEN; nodes],
            finish: vec![0; nodes],
            stack: Vec::new(),
            order: Vec::new(),
            dag: Vec::new(),
            dag_start: Vec::new(),
            alive: vec![false; nodes],
            excess: vec![0; nodes],
            pushed: vec![0; network.arcs.len()],
        }
    }

    fn in_region(&self, node: u32) -> bool {
        self.done[node as usize] == self.epoch
    }

    /// Dijkstra's algorithm on reduced costs from `source` to the nearest node with demand
    /// left, finishing every node as near; then lowers the potentials of the nodes finished
    /// by how much nearer they are than that node. Reduced costs stay at zero or above, and
    /// every shortest path from `source` to it is made of arcs of reduced cost zero.
    fn nearest_demand(&mut self, network: &mut Network, source: u32) -> Option<u32> {
        self.epoch += 1;
        self.heap.clear();
        self.finished.clear();
        self.reached[source as usize] = self.epoch;
        self.distance[source as usize] = 0;
        self.heap.push(Reverse((0, source)));
        let mut target = None;
        let mut limit = i64::MAX;
        while let Some(Reverse((d, v))) = self.heap.pop() {
            if d > limit {
                break;
            }
            // A node is pushed again only nearer, so the entry of a node not finished yet is
            // its latest, and any other is stale.
            if self.done[v as usize] == self.epoch {
                continue;
            }
            self.done[v as usize] = self.epoch;
            self.finished.push(v);
            if network.supply[v as usize] < 0 && target.is_none() {
                target = Some(v);
                limit = d;
            }
            for &arc in network.out(v) {
                let a = network.arcs[arc as usize];
                let head = a.head as usize;
                if a.residual == 0 || self.done[head] == self.epoch {
                    continue;
                }
                let next = d + network.reduced(arc);
                if self.reached[head] != self.epoch || next < self.distance[head] {
                    self.reached[head] = self.epoch;
                    self.distance[head] = next;
                    self.parent[head] = arc;
                    self.heap.push(Reverse((next, a.head)));
                }
            }
        }
        let target = target?;
        let to_target = self.distance[target as usize];
        for &v in &self.finished {
            network.potential[v as usize] += self.distance[v as usize] - to_target;
        }
        Some(target)
    }

    /// The acyclic graph of tight arcs from `source` to `target` among the nodes the search
    /// finished: first the nodes from which a tight path leads to `target`, then a
    /// depth-first search from `source` over them keeps the arcs to nodes that finished
    /// before their tail (none back into the search's own path), and nodes that no kept arc
    /// leads on from are let go. True when `source` still leads to `target`.
    fn acyclic(&mut self, network: &Network, source: u32, target: u32) -> bool {
        let epoch = self.epoch;
        self.reaches[target as usize] = epoch;
        self.queue.clear();
        self.queue.push_back(target);
        while let Some(v) = self.queue.pop_front() {
            for &arc in network.out(v) {
                // The reverse of an arc out of v is an arc into v.
                let from = network.arcs[arc as usize].head;
                if self.in_region(from)
                    && self.reaches[from as usize] != epoch
                    && network.tight(arc ^ 1)
                {
                    self.reaches[from as usize] = epoch;
                    self.queue.push_back(from);
                }
            }
        }
        if self.reaches[source as usize] != epoch {
            return false;
        }
        for &v in &self.finished {
            self.state[v as usize] = UNSEEN;
        }
        self.order.clear();
        self.stack.clear();
        self.state[source as usize] = OPEN;
        self.stack.push((source, 0));
        while let Some(&mut (v, ref mut next)) = self.stack.last_mut() {
            let arcs = network.out(v);
            if let Some(&arc) = arcs.get(*next as usize).filter(|_| v != target) {
                *next += 1;
                let head = network.arcs[arc as usize].head;
                if self.reaches[head as usize] == epoch
                    && self.state[head as usize] == UNSEEN
                    && network.tight(arc)
                {
                    self.state[head as usize] = OPEN;
                    self.stack.push((head, 0));
                }
            } else {
                self.stack.pop();
                self.state[v as usize] = CLOSED;
                self.finish[v as usize] = self.order.len() as u32;
                self.order.push(v);
            }
        }
        self.dag.clear();
        self.dag_start.clear();
        for index in 0..self.order.len() {
            let v = self.order[index];
            self.dag_start.push(self.dag.len() as u32);
            let mut alive = v == target;
            if !alive {
                for &arc in network.out(v) {
                    let head = network.arcs[arc as usize].head as usize;
                    if self.reaches[head] == epoch
                        && self.state[head] == CLOSED
                        && self.finish[head] < self.finish[v as usize]
                        && self.alive[head]
                        && network.tight(arc)
                    {
                        self.dag.push(arc);
                        alive = true;
                    }
                }
            }
            self.alive[v as usize] = alive;
        }
        self.dag_start.push(self.dag.len() as u32);
        self.alive[source as usize]
    }

    fn dag_of(&self, index: usize) -> std::ops::Range<usize> {
        self.dag_start[index] as usize..self.dag_start[index + 1] as usize
    }

    /// Sends what `source` has left to send and `target` to take down the acyclic graph,
    /// each node's inflow split evenly over its kept arcs (rounded up, no arc past its
    /// room); what a node could not pass on goes back the way it came. At least one unit
    /// arrives, and either all of it or an arc fills, so the pushes end. Returns what
    /// arrived; nothing moves when it is zero.
    fn spread(&mut self, network: &mut Network, source: u32, target: u32) -> u64 {
        let amount = network.supply[source as usize].min(-network.supply[target as usize]);
        for &v in &self.order {
            self.excess[v as usize] = 0;
        }
        self.excess[source as usize] = amount as u64;
        // Down, in topological order: the source first.
        for index in (0..self.order.len()).rev() {
            let v = self.order[index] as usize;
            let range = self.dag_of(index);
            if range.is_empty() || self.excess[v] == 0 {
                continue;
            }
            let share = self.excess[v].div_ceil(range.len() as u64);
            for i in range {
                let arc = self.dag[i];
                let a = network.arcs[arc as usize];
                let sent = self.excess[v].min(share).min(a.residual);
                self.pushed[arc as usize] += sent;
                self.excess[v] -= sent;
                self.excess[a.head as usize] += sent;
            }
        }
        let delivered = std::mem::take(&mut self.excess[target as usize]);
        // Back, the target first: each node takes back what its successors kept.
        for index in 0..self.order.len() {
            let v = self.order[index] as usize;
            for i in self.dag_of(index) {
                let arc = self.dag[i];
                let head = network.arcs[arc as usize].head as usize;
                let back = self.excess[head].min(self.pushed[arc as usize]);
                self.pushed[arc as usize] -= back;
                self.excess[head] -= back;
                self.excess[v] += back;
            }
        }
        for i in 0..self.dag.len() {
            let arc = self.dag[i];
            let sent = std::mem::take(&mut self.pushed[arc as usize]);
            network.push(arc, sent);
        }
        network.supply[source as usize] -= delivered as i64;
        network.supply[target as usize] += delivered as i64;
        delivered
    }

    /// Sends what the shortest path the search found can take.
    fn along_the_path(&mut self, network: &mut Network, source: u32, target: u32) {
        let mut room = network.supply[source as usize].min(-network.supply[target as usize]) as u64;
        let mut v = target;
        while v != source {
            let arc = self.parent[v as usize];
            room = room.min(network.arcs[arc as usize].residual);
            v = network.tail(arc);
        }
        let mut v = target;
        while v != source {
            let arc = self.parent[v as usize];
            network.push(arc, room);
            v = network.tail(arc);
        }
        network.supply[source as usize] -= room as i64;
        network.supply[target as usize] += room as i64;
    }
}
