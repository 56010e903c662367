//! Flow: counts that add up (specification, section 18), knowing nothing of SPT, images or
//! SPDs: one function's graph and what was seen of it in, a flow out.
//!
//! Sampled counts do not add up: where records are sparse, most blocks of a warm function
//! are never inside a sampled range, and a block's count differs from the sum of its
//! edges'. The compiler reads a *flow*: for every block, the counts of its incoming edges
//! add up to its count, and so do its outgoing edges'. This room turns observations into
//! the flow that departs from them least, as profi does (He et al., "Profile Inference
//! Revisited", POPL 2022; LLVM's `SampleProfileInference`):
//!
//! ```text
//! graph.rs    the input (blocks, edges, entries and exits, what was seen) and the output
//! cost.rs     what moving a count costs: raising is cheaper than lowering, unknown is free
//! network.rs  the minimum-cost flow: successive shortest paths over a residual network,
//!             each push spread evenly over the shortest paths
//! adjust.rs   after it: unsampled subgraphs split 50:50, isolated blocks joined to the entry
//! ```
//!
//! Integer and exact throughout; the same graph gives the same flow on every platform.
//!
//! ```
//! use sptdump::flow::{self, Edge, EdgeKind, Graph};
//!
//! // A block seen 100 times that branches two ways nobody sampled, to a join seen 100 times.
//! let edge = |from, to, kind| Edge { from, to, kind, observed: None };
//! let graph = Graph {
//!     blocks: vec![Some(100), None, None, Some(100)],
//!     edges: vec![
//!         edge(None, Some(0), EdgeKind::Entry),
//!         edge(Some(0), Some(1), EdgeKind::Fall),
//!         edge(Some(0), Some(2), EdgeKind::Jump),
//!         edge(Some(1), Some(3), EdgeKind::Jump),
//!         edge(Some(2), Some(3), EdgeKind::Fall),
//!         edge(Some(3), None, EdgeKind::Exit),
//!     ],
//! };
//! let flow = flow::solve(&graph)?;
//! assert_eq!(flow.blocks, [100, 50, 50, 100]);
//! # Ok::<(), flow::FlowError>(())
//! ```

mod adjust;
pub mod cost;
mod graph;
mod network;

pub use graph::{Edge, EdgeKind, Flow, FlowError, Graph, MAX_BLOCKS, Observed};

/// Which of the solver's steps run. Every step is on by default; the tests turn some off to
/// hold the minimum-cost flow alone to a reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// Spread each augmentation evenly over the shortest paths. Without it, each goes along
    /// one: the first the search finds, which of parallel edges is the earlier.
    pub even: bool,
    /// Split the flow through unsampled subgraphs evenly at each branch.
    pub rebalance: bool,
    /// Join blocks with flow that the entry does not reach, one unit along a path.
    pub join: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            even: true,
            rebalance: true,
            join: true,
        }
    }
}

/// The flow of `graph` that departs least from what was seen, by [`cost`]'s model.
///
/// # Errors
///
/// A graph of more than [`MAX_BLOCKS`] blocks, an edge naming no block, or observations
/// adding up past what is counted exactly.
pub fn solve(graph: &Graph) -> Result<Flow, FlowError> {
    solve_with(graph, Options::default())
}

/// [`solve`], with the steps `options` names.
///
/// # Errors
///
/// As [`solve`].
pub fn solve_with(graph: &Graph, options: Options) -> Result<Flow, FlowError> {
    let mut flow = network::min_cost(graph, options.even)?;
    if options.rebalance {
        adjust::rebalance(graph, &mut flow);
    }
    if options.join {
        adjust::join(graph, &mut flow)?;
    }
    Ok(flow)
}
