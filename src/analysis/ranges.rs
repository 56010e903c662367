//! LBR records read as SPGO reads them: branch sequences, the code that ran straight through
//! between two branches, and what that adds up to per instruction, block and function
//! (docs/output.md, "What SPGO will learn from LBR").
//!
//! ```text
//! a record, newest first:   p0 = (from0 -> to0)   p1 = (from1 -> to1)   p2 ...
//! ranges:                   [to1, from0]  ran after p1 and before p0
//!                           [to2, from1]  ...
//! oldest first:             [to0, from1], [to1, from2], ...
//! ```
//!
//! A range is *consistent* when both ends are in one function of the PDB, it starts no later
//! than it ends, the instructions decoded from its start reach its end exactly, and nothing
//! before its end leaves the straight line (a jump, call or return; a conditional jump is
//! not taken there). The order in which SPTAggregate stores a record's pairs is not
//! documented: per binary, both are tried, and the one with more consistent ranges is used
//! when at least 90% of its ranges are; otherwise no range is (`lbr-order-unknown`).
//! Each instruction of a consistent range counts the record's hits.
//!
//! Instructions are decoded once per run, when a range first reaches them; a function's
//! blocks, for coverage, only for the functions the ranges reached.

use std::collections::HashMap;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::analysis::lbr::LbrRecords;
use crate::format::record::Branch;
use crate::format::tables::Tables;
use crate::image::code::{Code, Flow, Instruction, Machine};
use crate::image::symbols::{SymbolMap, Symbols};

/// The share of consistent ranges an order needs to be used.
pub(crate) const ORDER_THRESHOLD: f64 = 0.9;

/// The order of a record's pairs on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// The most recent branch first (Windows' ETW LBR payload, perf's).
    NewestFirst,
    /// The oldest branch first.
    OldestFirst,
}

impl Order {
    /// `newest-first` or `oldest-first`, as text and JSON name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Order::NewestFirst => "newest-first",
            Order::OldestFirst => "oldest-first",
        }
    }

    /// The range between two pairs stored one after the other, under this order.
    fn range(self, stored: (&Branch, &Branch)) -> (u32, u32) {
        let (first, second) = stored;
        match self {
            Order::NewestFirst => (second.to, first.from),
            Order::OldestFirst => (first.to, second.from),
        }
    }
}

/// What the ranges of one function add up to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FunctionRun {
    pub(crate) name: String,
    /// The RVA of its first byte.
    pub(crate) rva: u32,
    /// The instructions it ran, by the ranges (each instruction's count summed).
    pub(crate) instructions: u128,
    /// Its basic blocks, padding left out; 0 when its code could not be walked.
    pub(crate) blocks: u32,
    /// The blocks with any count.
    pub(crate) covered: u32,
}

/// The ranges of one binary and what they add up to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct BinaryRanges {
    pub(crate) progid: u16,
    pub(crate) name: String,
    /// Its LBR records of two pairs or more, as stored.
    pub(crate) records: u64,
    /// Its ranges, each counted with its record's hits.
    pub(crate) ranges: u128,
    /// The consistent ones, under newest-first and under oldest-first.
    pub(crate) consistent: [u128; 2],
    /// The order used; `None` when neither reached the threshold (or nothing was read).
    pub(crate) order: Option<Order>,
    /// Every function with any count, the most instructions first (then by RVA).
    pub(crate) functions: Vec<FunctionRun>,
    /// The instructions of every function.
    pub(crate) instructions: u128,
    /// The functions of the binary's PDB.
    pub(crate) known_functions: usize,
    /// Each instruction's count, by RVA.
    pub(crate) counts: FxHashMap<u32, u128>,
    /// The branches taken from each instruction that ends a consistent range, by RVA: what
    /// its count less is its fall-through.
    pub(crate) taken: FxHashMap<u32, u128>,
    /// What kept ranges from being read: a PDB or an image missing, a machine not decoded.
    pub(crate) missing: Vec<String>,
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
pub(crate) struct RangeReport {
    pub(crate) binaries: Vec<BinaryRanges>,
}

/// Reads the LBR records of every binary as sequences of ranges.
pub(crate) fn ranges(records: &LbrRecords, tables: &Tables, symbols: &SymbolMap) -> RangeReport {
    let binaries = records
        .totals()
        .map(|(progid, stored, _)| {
            let mut b = BinaryRanges {
                progid,
                name: tables.binary_name(progid),
                records: stored,
                ..BinaryRanges::default()
            };
            match (symbols.get(Some(progid)), symbols.code(Some(progid))) {
                (None, _) => b
                    .missing
                    .push("LBR ranges join functions: give /pdb for it".into()),
                (Some(_), None) => b
                    .missing
                    .push("LBR ranges need its code: give /image for it".into()),
                (Some(_), Some(code)) if !matches!(code.machine, Machine::X64 | Machine::X86) => {
                    b.missing.push(format!(
                        "its image is {} code, which is not decoded yet: no LBR range read",
                        code.machine
                    ));
                }
                (Some(functions), Some(code)) => read(&mut b, records, functions, code),
            }
            b
        })
        .collect();
    RangeReport { binaries }
}

/// Reads binary `b`'s records under both orders, keeps the counts of the one used, and
/// adds them up per function.
fn read(b: &mut BinaryRanges, records: &LbrRecords, functions: &Symbols, code: &Code) {
    let mut decoded = Decoded::new(code);
    let mut counts: [FxHashMap<u32, u128>; 2] = Default::default();
    let mut taken: [FxHashMap<u32, u128>; 2] = Default::default();
    let (mut pairs, mut passed) = (Vec::new(), Vec::new());
    for (branches, hits) in records.of(b.progid) {
        pairs.clear();
        pairs.extend(branches.iter());
        let ranges = (pairs.len().saturating_sub(1) as u128).saturating_mul(hits);
        b.ranges = b.ranges.saturating_add(ranges);
        for (o, order) in [Order::NewestFirst, Order::OldestFirst]
            .into_iter()
            .enumerate()
        {
            for w in pairs.windows(2) {
                let (start, end) = order.range((&w[0], &w[1]));
                passed.clear();
                if !straight(&mut decoded, functions, start, end, &mut passed) {
                    continue;
                }
                b.consistent[o] = b.consistent[o].saturating_add(hits);
                for &rva in &passed {
                    let count = counts[o].entry(rva).or_default();
                    *count = count.saturating_add(hits);
                }
                let branch = taken[o].entry(end).or_default();
                *branch = branch.saturating_add(hits);
            }
        }
    }
    b.known_functions = functions.len();
    b.order = order(b.ranges, b.consistent);
    let Some(order) = b.order else {
        return;
    };
    b.counts = std::mem::take(&mut counts[order as usize]);
    b.taken = std::mem::take(&mut taken[order as usize]);
    b.functions = per_function(&b.counts, functions, &mut decoded);
    b.instructions = b
        .functions
        .iter()
        .fold(0u128, |sum, f| sum.saturating_add(f.instructions));
}

/// The order used, given the ranges and the consistent ones under each order: the one with
/// more (newest-first on a tie), when at least [`ORDER_THRESHOLD`] of the ranges are.
fn order(ranges: u128, consistent: [u128; 2]) -> Option<Order> {
    let (order, best) = if consistent[1] > consistent[0] {
        (Order::OldestFirst, consistent[1])
    } else {
        (Order::NewestFirst, consistent[0])
    };
    (ranges > 0 && best as f64 >= ORDER_THRESHOLD * ranges as f64).then_some(order)
}

/// Whether `[start, end]` ran straight through: both ends in one function, and the
/// instructions decoded from `start` reach `end` exactly, none before it leaving the straight
/// line. The instructions are pushed onto `passed`, `end`'s included.
fn straight(
    decoded: &mut Decoded<'_>,
    functions: &Symbols,
    start: u32,
    end: u32,
    passed: &mut Vec<u32>,
) -> bool {
    if start > end {
        return false;
    }
    let same = functions.lookup(start).zip(functions.lookup(end));
    if same.is_none_or(|((a, _), (b, _))| a.rva != b.rva) {
        return false;
    }
    let mut at = start;
    loop {
        let Some(i) = decoded.at(at) else {
            return false;
        };
        passed.push(at);
        if at == end {
            return true;
        }
        if !matches!(i.flow, Flow::Next | Flow::Conditional) {
            return false;
        }
        match at.checked_add(i.len) {
            Some(next) if next <= end => at = next,
            _ => return false,
        }
    }
}

/// The instructions of an image, decoded once each, when first asked for.
struct Decoded<'c> {
    code: &'c Code,
    memo: FxHashMap<u32, Option<Instruction>>,
}

impl<'c> Decoded<'c> {
    fn new(code: &'c Code) -> Self {
        Decoded {
            code,
            memo: FxHashMap::default(),
        }
    }

    fn at(&mut self, rva: u32) -> Option<Instruction> {
        *self
            .memo
            .entry(rva)
            .or_insert_with(|| self.code.instruction(rva))
    }
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
    blocks(functions, rva, &mut Decoded::new(code), counts)
}

/// The basic blocks of the function at `rva` and how many of them have a count. Leaders are
/// its first instruction, every direct jump's target inside it, and every instruction after
/// a jump, conditional or not, or a return (a call does not end a block); a block of padding
/// alone (`int3`, `nop`) is not counted. The function is decoded from its first byte to its
/// end; where an instruction does not decode, its blocks end there.
fn blocks(
    functions: &Symbols,
    rva: u32,
    decoded: &mut Decoded<'_>,
    counts: &FxHashMap<u32, u128>,
) -> (u32, u32) {
    let inside = |at: u32| functions.lookup(at).is_some_and(|(f, _)| f.rva == rva);
    let mut code: Vec<(u32, Instruction)> = Vec::new();
    let mut leaders: FxHashSet<u32> = FxHashSet::default();
    leaders.insert(rva);
    let mut at = rva;
    while inside(at) {
        let Some(i) = decoded.at(at) else { break };
        code.push((at, i));
        let Some(next) = at.checked_add(i.len) else {
            break;
        };
        if matches!(i.flow, Flow::Jump | Flow::Conditional | Flow::Return) {
            leaders.insert(next);
            leaders.extend(i.target.filter(|&t| inside(t)));
        }
        at = next;
    }
    let (mut blocks, mut covered) = (0u32, 0u32);
    let mut block = (true, false); // (padding alone so far, any count)
    for (n, &(at, i)) in code.iter().enumerate() {
        block = (block.0 && i.padding, block.1 || counts.contains_key(&at));
        let last = code
            .get(n + 1)
            .is_none_or(|(next, _)| leaders.contains(next));
        if last {
            if !block.0 {
                blocks += 1;
                covered += u32::from(block.1);
            }
            block = (true, false);
        }
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

    #[test]
    fn a_range_lies_between_two_branches_in_time() {
        let older = Branch {
            from: 0x10,
            to: 0x20,
        };
        let newer = Branch {
            from: 0x30,
            to: 0x40,
        };
        // Newest first: the newer pair is stored first.
        assert_eq!(Order::NewestFirst.range((&newer, &older)), (0x20, 0x30));
        // Oldest first: the older pair is stored first.
        assert_eq!(Order::OldestFirst.range((&older, &newer)), (0x20, 0x30));
    }
}
