//! What the LBR ranges add up to, per binary: the order used, and per function the
//! instructions run, the basic blocks and those covered (docs/output.md, "What SPGO will
//! learn from LBR"). The ranges themselves are read as the records are decoded (`lbr`).
//!
//! The order in which SPTAggregate stores a record's pairs is not documented: per binary,
//! both were tried, and the one with more consistent ranges is used when at least 90% of its
//! ranges are; otherwise no range is (`lbr-order-unknown`). A function's blocks, for
//! coverage, are decoded only for the functions the ranges reached.

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use crate::analysis::lbr::blocks::split;
use crate::analysis::lbr::cfg::{self, BinaryCfg, Seen};
pub(crate) use crate::analysis::lbr::reading::Order;
use crate::analysis::lbr::reading::{Decoded, RangeCounts, Reading};
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;
use crate::image::code::{Code, Flow, Machine};
use crate::image::symbols::Symbols;

/// The share of consistent ranges an order needs to be used.
pub(crate) const ORDER_THRESHOLD: f64 = 0.9;

/// What the ranges of one function add up to.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FunctionRun {
    /// The function's name.
    pub name: String,
    /// The RVA of its first byte.
    pub rva: u32,
    /// The instructions it ran, by the ranges (each instruction's count summed).
    pub instructions: u128,
    /// Its basic blocks, padding left out; 0 when its code could not be walked.
    pub blocks: u32,
    /// The blocks with any count.
    pub covered: u32,
}

/// A conditional jump the ranges ran through, and how often it was taken: the bias SPGO
/// lays its code out by.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BranchRun {
    /// The function that holds it.
    pub function: String,
    /// The branch's RVA.
    pub rva: u32,
    /// How often it ran (its count by the ranges).
    pub count: u128,
    /// How often it was taken (the ranges it ended); the rest fell through.
    pub taken: u128,
}

/// How many of a binary's conditional jumps [`BinaryRanges::branches`] keeps.
const BRANCHES: usize = 20;

/// The ranges of one binary and what they add up to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BinaryRanges {
    /// The binary's program ID.
    pub progid: u16,
    /// The binary's name.
    pub name: String,
    /// Its LBR records of two pairs or more, as stored.
    pub records: u64,
    /// Its ranges, each counted with its record's hits.
    pub ranges: u128,
    /// The consistent ones, under newest-first and under oldest-first.
    pub consistent: [u128; 2],
    /// The order used; `None` when neither reached the threshold (or nothing was read).
    pub order: Option<Order>,
    /// Every function with any count, the most instructions first (then by RVA).
    pub functions: Vec<FunctionRun>,
    /// The instructions of every function.
    pub instructions: u128,
    /// The functions of the binary's PDB.
    pub known_functions: usize,
    /// Each instruction's count, by RVA.
    pub counts: FxHashMap<u32, u128>,
    /// The branches taken from each instruction that ends a consistent range, by RVA: what
    /// its count less is its fall-through.
    pub taken: FxHashMap<u32, u128>,
    /// The LBR pairs, whatever the order, whose target is a function's first byte or lies
    /// in the function of their source, by `(from, to)`.
    pub pairs: FxHashMap<(u32, u32), u128>,
    /// What kept ranges from being read: a PDB or an image missing, a machine not decoded.
    pub missing: Vec<String>,
    /// The conditional jumps that ran most, at most 20, the most first (then by RVA).
    pub branches: Vec<BranchRun>,
    /// The graphs of the functions that ran, what was seen of them and their flow.
    pub cfg: BinaryCfg,
}

impl BinaryRanges {
    /// The consistent ranges under the order used, or under the better order when none is.
    pub(crate) fn consistent_used(&self) -> u128 {
        match self.order {
            Some(Order::NewestFirst) => self.consistent[0],
            Some(Order::OldestFirst) => self.consistent[1],
            None => self.consistent[0].max(self.consistent[1]),
        }
    }

    /// The blocks and covered blocks of every function with a count.
    pub(crate) fn blocks(&self) -> (u64, u64) {
        self.functions.iter().fold((0, 0), |(b, c), f| {
            (b + u64::from(f.blocks), c + u64::from(f.covered))
        })
    }
}

/// The ranges of every binary with LBR records.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RangeReport {
    /// Each binary with LBR records.
    pub binaries: Vec<BinaryRanges>,
}

/// What the LBR ranges of every binary add up to, the order of each decided.
pub(crate) fn ranges(counts: &RangeCounts, tables: &Tables, symbols: &SymbolMap) -> RangeReport {
    let binaries = counts
        .binaries()
        .map(|(progid, reading)| {
            let mut b = BinaryRanges {
                progid,
                name: tables.binary_name(progid),
                records: reading.records,
                ..BinaryRanges::default()
            };
            match (symbols.get(Some(progid)), symbols.code(Some(progid))) {
                (None, _) => b
                    .missing
                    .push("LBR ranges join functions: give /pdb:FILE for it".into()),
                (Some(_), None) => b
                    .missing
                    .push("LBR ranges need its code: give /image:FILE for it".into()),
                (Some(_), Some(code)) if !matches!(code.machine, Machine::X64 | Machine::X86) => {
                    b.missing.push(format!(
                        "its image is {} code, which is not decoded yet: no LBR range read",
                        code.machine
                    ));
                }
                (Some(functions), Some(code)) => read(&mut b, reading, functions, code),
            }
            b
        })
        .collect();
    RangeReport { binaries }
}

/// Keeps the counts of binary `b`'s order, when one is used, and adds them up per function.
fn read(b: &mut BinaryRanges, reading: &Reading, functions: &Symbols, code: &Code) {
    b.ranges = reading.ranges;
    b.consistent = reading.consistent;
    b.known_functions = functions.len();
    b.order = order(b.ranges, b.consistent);
    let Some(order) = b.order else {
        return;
    };
    let used = Order::BOTH.iter().position(|&o| o == order).unwrap_or(0);
    b.counts = reading.counts[used].clone();
    b.taken = reading.taken[used].clone();
    b.pairs = reading.pairs.clone();
    let mut memo = FxHashMap::default();
    let mut decoded = Decoded {
        code,
        memo: &mut memo,
    };
    b.functions = per_function(&b.counts, functions, &mut decoded);
    b.branches = conditional(b, functions, &mut decoded);
    b.instructions = b
        .functions
        .iter()
        .fold(0u128, |sum, f| sum.saturating_add(f.instructions));
    let seen = Seen {
        counts: &b.counts,
        taken: &b.taken,
        pairs: &b.pairs,
    };
    let ran = b.functions.iter().map(|f| (f.rva, f.name.as_str()));
    b.cfg = cfg::binary(seen, ran, functions, code);
}

/// The conditional jumps of `b` with a count, the most run first, [`BRANCHES`] of them.
fn conditional(b: &BinaryRanges, functions: &Symbols, decoded: &mut Decoded<'_>) -> Vec<BranchRun> {
    let mut runs: Vec<BranchRun> = b
        .counts
        .iter()
        .filter(|&(&rva, _)| decoded.at(rva).is_some_and(|i| i.flow == Flow::Conditional))
        .filter_map(|(&rva, &count)| {
            let (f, _) = functions.lookup(rva)?;
            Some(BranchRun {
                function: f.name.to_owned(),
                rva,
                count,
                taken: b.taken.get(&rva).copied().unwrap_or(0),
            })
        })
        .collect();
    runs.sort_unstable_by(|x, y| y.count.cmp(&x.count).then(x.rva.cmp(&y.rva)));
    runs.truncate(BRANCHES);
    runs
}

/// The order used, given the ranges and the consistent ones under each order: the one with
/// more (newest-first on a tie), when at least [`ORDER_THRESHOLD`] of the ranges are.
pub(crate) fn order(ranges: u128, consistent: [u128; 2]) -> Option<Order> {
    let (order, best) = if consistent[1] > consistent[0] {
        (Order::OldestFirst, consistent[1])
    } else {
        (Order::NewestFirst, consistent[0])
    };
    (ranges > 0 && best as f64 >= ORDER_THRESHOLD * ranges as f64).then_some(order)
}

/// Every function with a count: its instructions, blocks and covered blocks, the most
/// instructions first.
fn per_function(
    counts: &FxHashMap<u32, u128>,
    functions: &Symbols,
    decoded: &mut Decoded<'_>,
) -> Vec<FunctionRun> {
    let mut ran: HashMap<u32, (String, u128)> = HashMap::new();
    for (&rva, &count) in counts {
        if let Some((f, _)) = functions.lookup(rva) {
            let entry = ran.entry(f.rva).or_insert_with(|| (f.name.to_owned(), 0));
            entry.1 = entry.1.saturating_add(count);
        }
    }
    let mut runs: Vec<FunctionRun> = ran
        .into_iter()
        .map(|(rva, (name, instructions))| {
            let (blocks, covered) = blocks(functions, rva, decoded, counts);
            FunctionRun {
                name,
                rva,
                instructions,
                blocks,
                covered,
            }
        })
        .collect();
    runs.sort_unstable_by(|a, b| b.instructions.cmp(&a.instructions).then(a.rva.cmp(&b.rva)));
    runs
}

/// The basic blocks of the function at `rva` in `code` and how many of them have a count,
/// as [`BinaryRanges::functions`] counts them.
pub(crate) fn blocks_of(
    functions: &Symbols,
    code: &Code,
    rva: u32,
    counts: &FxHashMap<u32, u128>,
) -> (u32, u32) {
    let mut memo = FxHashMap::default();
    blocks(
        functions,
        rva,
        &mut Decoded {
            code,
            memo: &mut memo,
        },
        counts,
    )
}

/// The basic blocks of the function at `rva` and how many of them have a count, padding
/// left out (see [`split`]).
fn blocks(
    functions: &Symbols,
    rva: u32,
    decoded: &mut Decoded<'_>,
    counts: &FxHashMap<u32, u128>,
) -> (u32, u32) {
    let code = split(functions, rva, decoded);
    let (mut blocks, mut covered) = (0u32, 0u32);
    for block in code.blocks.iter().filter(|b| !b.padding) {
        blocks += 1;
        let mut rvas = code.instructions[block.instructions.clone()].iter();
        covered += u32::from(rvas.any(|(at, _)| counts.contains_key(at)));
    }
    (blocks, covered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_with_more_consistent_ranges_is_used_from_ninety_percent() {
        assert_eq!(order(100, [90, 3]), Some(Order::NewestFirst));
        assert_eq!(order(100, [2, 95]), Some(Order::OldestFirst));
        assert_eq!(order(100, [89, 10]), None);
        assert_eq!(order(100, [50, 50]), None);
        assert_eq!(order(10, [10, 10]), Some(Order::NewestFirst));
        assert_eq!(order(0, [0, 0]), None);
    }
}
