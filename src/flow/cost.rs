//! What moving a count away from what was seen costs, per unit: profi's model (He et al.,
//! "Profile Inference Revisited", POPL 2022, and LLVM's defaults), with the entry's cost as
//! section 18 of the specification gives it.
//!
//! - Raising a seen count costs less than lowering it: sparse records miss far more than
//!   they invent, so a count seen is more likely too low than too high.
//! - Raising a count seen as zero costs a little more than raising one seen above zero.
//! - A count nothing covered is unknown, not zero: raising it costs nothing.
//! - The function's entry is dearer to move: the entries counted (the calls recorded) are
//!   the best measured count of a function. An entry nobody sampled costs a little to raise,
//!   else flow could be pumped through it for free.

use super::graph::{EdgeKind, Flow, Graph, Observed};

/// The cost of raising and of lowering a count by one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cost {
    /// Per unit above what was seen.
    pub raise: u64,
    /// Per unit below what was seen.
    pub lower: u64,
}

/// A block seen with a count above zero.
pub const BLOCK: Cost = Cost {
    raise: 10,
    lower: 20,
};
/// A block seen with a count of zero.
pub const BLOCK_ZERO: Cost = Cost {
    raise: 11,
    lower: 20,
};
/// A taken branch or jump (or an exit) seen with a count above zero.
pub const JUMP: Cost = Cost {
    raise: 10,
    lower: 20,
};
/// A fall-through seen with a count above zero: a little dearer to raise than a jump, so
/// that of two equal routes the one the code takes when nothing branches is not favoured
/// for flow that no record showed.
pub const FALL: Cost = Cost {
    raise: 11,
    lower: 20,
};
/// The entries, seen.
pub const ENTRY: Cost = Cost {
    raise: 40,
    lower: 10,
};
/// The entries, when no record showed one.
pub const ENTRY_UNKNOWN: Cost = Cost { raise: 1, lower: 0 };
/// Any other block or edge nothing covered.
pub const UNKNOWN: Cost = Cost { raise: 0, lower: 0 };

/// What moving a block's count costs.
pub fn of_block(observed: Observed) -> Cost {
    match observed {
        None => UNKNOWN,
        Some(0) => BLOCK_ZERO,
        Some(_) => BLOCK,
    }
}

/// What moving an edge's count costs.
pub fn of_edge(kind: EdgeKind, observed: Observed) -> Cost {
    let seen = match (kind, observed) {
        (EdgeKind::Entry, None) => return ENTRY_UNKNOWN,
        (_, None) => return UNKNOWN,
        (EdgeKind::Entry, Some(_)) => ENTRY,
        (EdgeKind::Fall, Some(_)) => FALL,
        (EdgeKind::Jump | EdgeKind::Exit, Some(_)) => JUMP,
    };
    match observed {
        // A seen zero is dearer to raise, as a block's is.
        Some(0) => Cost {
            raise: seen.raise + 1,
            ..seen
        },
        _ => seen,
    }
}

/// What moving `observed` to `count` costs.
pub fn moved(cost: Cost, observed: Observed, count: u64) -> u128 {
    let seen = observed.unwrap_or(0);
    if count >= seen {
        u128::from(count - seen) * u128::from(cost.raise)
    } else {
        u128::from(seen - count) * u128::from(cost.lower)
    }
}

/// The cost of a flow: what the solver minimises (before the joining of isolated blocks).
///
/// # Panics
///
/// When `flow` is not a flow of `graph` (its lengths differ from the graph's).
pub fn of_flow(graph: &Graph, flow: &Flow) -> u128 {
    assert_eq!(
        graph.blocks.len(),
        flow.blocks.len(),
        "a flow of another graph"
    );
    assert_eq!(
        graph.edges.len(),
        flow.edges.len(),
        "a flow of another graph"
    );
    let blocks = graph.blocks.iter().zip(&flow.blocks);
    let blocks = blocks.map(|(&seen, &count)| moved(of_block(seen), seen, count));
    let edges = graph.edges.iter().zip(&flow.edges);
    let edges = edges.map(|(e, &count)| moved(of_edge(e.kind, e.observed), e.observed, count));
    blocks.chain(edges).sum()
}
