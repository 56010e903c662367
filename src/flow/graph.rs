//! One function's graph as the solver takes it: blocks, edges between them, the edges that
//! enter it and leave it, and what was seen of each.

/// The most blocks a function may have for its flow to be computed (section 18).
pub const MAX_BLOCKS: usize = 100_000;

/// A count as observed: `Some(n)` when some record covered the block or the edge (n may be
/// 0 only where a caller knows it is a measured zero), `None` when nothing did. An unknown
/// count is no measurement: the solver raises it for free.
pub type Observed = Option<u64>;

/// How an edge's count may move away from what was seen: the kinds profi costs apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EdgeKind {
    /// Into the function (`from` is `None`): a call or a tail jump from elsewhere.
    Entry,
    /// A fall-through into the next block in code order.
    Fall,
    /// Any other edge between two blocks: a taken branch or a jump.
    Jump,
    /// Out of the function (`to` is `None`): a `ret`, an indirect or tail jump.
    Exit,
}

/// An edge of the graph. `from: None` is the function's entry, `to: None` its exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The block it leaves (an index into [`Graph::blocks`]), or `None` for an entry.
    pub from: Option<u32>,
    /// The block it reaches, or `None` for an exit.
    pub to: Option<u32>,
    /// What kind of edge it is, which decides what moving its count costs.
    pub kind: EdgeKind,
    /// What was seen of it.
    pub observed: Observed,
}

/// One function's graph and its observations: the solver's input.
///
/// Blocks are numbered from 0 by their index in `blocks`; every edge names its ends by that
/// index. Parallel edges and self-loops are allowed; an edge from the entry straight to the
/// exit is not (it would be no part of the function).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Graph {
    /// Each block's observed count.
    pub blocks: Vec<Observed>,
    /// The edges, entries and exits included.
    pub edges: Vec<Edge>,
}

/// The counts the solver chose: a flow over the graph.
///
/// For every block, the sum of its incoming edges' counts (the entries included) equals its
/// count, which equals the sum of its outgoing edges' counts (the exits included).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    /// Each block's count, by the block's index.
    pub blocks: Vec<u64>,
    /// Each edge's count, by the edge's index in [`Graph::edges`].
    pub edges: Vec<u64>,
    /// How many blocks with flow the minimum-cost flow left unreachable from the entry, each
    /// joined to it by one unit along a path (profi's joining of isolated components).
    pub joined: u32,
}

/// Why a graph was not solved.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FlowError {
    /// More blocks than the solver takes; the function is left with its raw counts.
    #[error("{blocks} blocks: more than the {max} the flow is computed for")]
    TooManyBlocks {
        /// The function's blocks.
        blocks: usize,
        /// The most the solver takes.
        max: usize,
    },
    /// The observed counts add up past what the solver counts exactly.
    #[error("the observed counts add up past {max}")]
    CountsTooLarge {
        /// The largest total the solver takes.
        max: u64,
    },
    /// An edge names a block the graph does not have, or joins the entry to the exit.
    #[error("edge {edge} names no block of the {blocks} the graph has")]
    BadEdge {
        /// The edge's index.
        edge: usize,
        /// The graph's blocks.
        blocks: usize,
    },
}
