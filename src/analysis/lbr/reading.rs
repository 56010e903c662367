//! LBR records read as branch sequences while they are decoded: each record's ranges, the
//! code that ran straight through between two of its branches, checked against the image's
//! instructions and counted per instruction under both orders the pairs may be stored in.
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
//! not taken there). Each instruction of a consistent range counts the record's hits.
//!
//! What a binary's records add up to is held per instruction (under each order), and each
//! instruction is decoded once, when a range first reaches it. Identical records are read
//! once with their hits summed: they are gathered in a table of distinct records (a trace
//! of a loop repeats the same snapshots), which is read and emptied whenever it holds
//! `PENDING` records, and at the end. So the memory is bounded by the code the ranges
//! touch and that table, however long the trace.
//! `ranges::ranges` then decides the order and adds the counts up per function.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::engine::slices::SliceCounts;
use crate::format::record::{Branch, Branches, SampleKind, Samples};
use crate::image::attached::SymbolMap;
use crate::image::code::{Code, Flow, Instruction, Machine};
use crate::image::symbols::Symbols;

/// The order of a record's pairs on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Order {
    /// The most recent branch first (Windows' ETW LBR payload, perf's).
    NewestFirst,
    /// The oldest branch first.
    OldestFirst,
}

impl Order {
    /// Both, in the order of [`Reading::consistent`].
    pub(crate) const BOTH: [Order; 2] = [Order::NewestFirst, Order::OldestFirst];

    /// `newest-first` or `oldest-first`, as text and JSON name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Order::NewestFirst => "newest-first",
            Order::OldestFirst => "oldest-first",
        }
    }

    /// The range between two pairs stored one after the other, under this order.
    pub(crate) fn range(self, stored: (&Branch, &Branch)) -> (u32, u32) {
        let (first, second) = stored;
        self.ends((first.from, first.to), (second.from, second.to))
    }

    /// [`range`](Order::range) of two pairs given as (from, to) of anything that stands for
    /// their addresses.
    #[inline]
    pub(crate) fn ends<T>(self, first: (T, T), second: (T, T)) -> (T, T) {
        match self {
            Order::NewestFirst => (second.1, first.0),
            Order::OldestFirst => (first.1, second.0),
        }
    }
}

/// What one binary's LBR records add up to, under each order.
#[derive(Debug, Default)]
pub(crate) struct Reading {
    /// Its LBR records of two pairs or more, as stored.
    pub(crate) records: u64,
    /// Their ranges, each counted with its record's hits.
    pub(crate) ranges: u128,
    /// The consistent ranges, under newest-first and under oldest-first.
    pub(crate) consistent: [u128; 2],
    /// Each instruction's count, by RVA, under each order.
    pub(crate) counts: [FxHashMap<u32, u128>; 2],
    /// The branches taken from each instruction that ends a consistent range, by RVA,
    /// under each order.
    pub(crate) taken: [FxHashMap<u32, u128>; 2],
    /// Every pair, whatever the order, whose target is a function's first byte or lies in
    /// the function of its source: the entries and the jumps inside functions the flow is
    /// built from (`(from, to)`).
    pub(crate) pairs: FxHashMap<(u32, u32), u128>,
    /// The instructions decoded so far.
    memo: FxHashMap<u32, Option<Instruction>>,
}

impl Reading {
    /// Adds what `other` counted.
    fn absorb(&mut self, other: Reading) {
        self.records = self.records.saturating_add(other.records);
        self.ranges = self.ranges.saturating_add(other.ranges);
        for o in 0..2 {
            self.consistent[o] = self.consistent[o].saturating_add(other.consistent[o]);
            for (mine, theirs) in [
                (&mut self.counts[o], &other.counts[o]),
                (&mut self.taken[o], &other.taken[o]),
            ] {
                for (&rva, &n) in theirs {
                    add(mine, rva, n);
                }
            }
        }
        for (&pair, &n) in &other.pairs {
            add(&mut self.pairs, pair, n);
        }
    }
}

/// How many records are gathered before the distinct ones are read: at most about 9 MiB
/// of 16-pair records.
const PENDING: usize = 1 << 16;

/// How many distinct ranges are gathered before they are walked: about 8 MiB of them (a
/// batch of records that share few ranges walks them sooner).
const RANGES: usize = 1 << 18;

/// The LBR records of a trace read as ranges, per binary.
#[derive(Debug, Default)]
pub(crate) struct RangeCounts {
    binaries: BTreeMap<u16, Reading>,
    /// Distinct records not read yet: the progid (2 bytes, little-endian), then the pairs
    /// as stored, with their hits summed.
    pending: SliceCounts<u8>,
    /// The records gathered in `pending` (not only the distinct ones).
    gathered: usize,
    /// The ranges of the distinct records read from `pending`, under each order, with
    /// their hits summed: each distinct range is walked once a batch, however many records
    /// hold it (`(progid, order, start, end)`).
    ranges: FxHashMap<(u16, u8, u32, u32), u128>,
    /// The pairs of the distinct records read from `pending`, with their hits summed
    /// (`(progid, from, to)`): each distinct pair is looked up once a batch.
    batch_pairs: FxHashMap<(u16, u32, u32), u128>,
    /// A record's pairs, and a range's instructions: reused from record to record.
    pairs: Vec<Branch>,
    passed: Vec<u32>,
}

impl RangeCounts {
    /// Takes a sample record, if it is an LBR record of a known binary with at least two
    /// pairs (a record of one pair holds no range), to be read with `symbols`: its ranges
    /// are checked when the binary has its PDB and its image. [`flush`](RangeCounts::flush)
    /// must be called before the readings are.
    pub(crate) fn add(&mut self, s: &Samples<'_>, symbols: &SymbolMap) {
        let (SampleKind::Lbr, Some(progid)) = (s.kind(), s.progid) else {
            return;
        };
        if s.count < 2 {
            return;
        }
        let reading = self.binaries.entry(progid).or_default();
        reading.records += 1;
        if symbols.code(Some(progid)).is_none() {
            return;
        }
        self.pending
            .add_soon(&[&progid.to_le_bytes(), s.payload], s.hits);
        self.gathered += 1;
        if self.gathered >= PENDING {
            self.flush(symbols);
        }
    }

    /// Reads the records gathered so far: their ranges gathered, then each distinct range
    /// walked once.
    pub(crate) fn flush(&mut self, symbols: &SymbolMap) {
        self.pending.settle();
        let pending = std::mem::take(&mut self.pending);
        self.gathered = 0;
        for (stored, hits) in pending.iter() {
            let (binary, pairs) = stored.split_at(2);
            let progid = u16::from_le_bytes([binary[0], binary[1]]);
            self.gather(progid, Branches::new(pairs), hits, symbols);
            if self.ranges.len() >= RANGES || self.batch_pairs.len() >= RANGES {
                self.walk_ranges(symbols);
            }
        }
        drop(pending);
        self.walk_ranges(symbols);
    }

    /// Walks the distinct ranges gathered so far, and keeps the pairs the flow is built
    /// from.
    fn walk_ranges(&mut self, symbols: &SymbolMap) {
        let ranges = std::mem::take(&mut self.ranges);
        for ((progid, o, start, end), hits) in ranges {
            self.walk(progid, usize::from(o), (start, end), hits, symbols);
        }
        for ((progid, from, to), hits) in self.batch_pairs.drain() {
            let Some(functions) = symbols.get(Some(progid)) else {
                continue;
            };
            let Some((target, offset)) = functions.lookup(to) else {
                continue;
            };
            let inside = functions
                .lookup(from)
                .is_some_and(|(f, _)| f.rva == target.rva);
            if offset == 0 || inside {
                let reading = self.binaries.entry(progid).or_default();
                add(&mut reading.pairs, (from, to), hits);
            }
        }
    }

    /// Gathers the ranges of one distinct record of `progid` that counts `hits` times,
    /// under each order.
    fn gather(&mut self, progid: u16, branches: Branches<'_>, hits: u128, symbols: &SymbolMap) {
        let reading = self.binaries.entry(progid).or_default();
        let Some(code) = symbols.code(Some(progid)) else {
            return;
        };
        if symbols.get(Some(progid)).is_none()
            || !matches!(code.machine, Machine::X64 | Machine::X86)
        {
            return;
        }
        self.pairs.clear();
        self.pairs.extend(branches.iter());
        let ranges = self.pairs.len().saturating_sub(1) as u128;
        reading.ranges = reading.ranges.saturating_add(ranges.saturating_mul(hits));
        for pair in &self.pairs {
            let count = self
                .batch_pairs
                .entry((progid, pair.from, pair.to))
                .or_default();
            *count = count.saturating_add(hits);
        }
        for (o, order) in (0u8..).zip(Order::BOTH) {
            for w in self.pairs.windows(2) {
                let (start, end) = order.range((&w[0], &w[1]));
                let count = self.ranges.entry((progid, o, start, end)).or_default();
                *count = count.saturating_add(hits);
            }
        }
    }

    /// Walks one distinct range of `progid` under order `o`, which counts `hits` times: when
    /// it ran straight through, each of its instructions gets the hits.
    fn walk(
        &mut self,
        progid: u16,
        o: usize,
        (start, end): (u32, u32),
        hits: u128,
        symbols: &SymbolMap,
    ) {
        let (Some(functions), Some(code)) = (symbols.get(Some(progid)), symbols.code(Some(progid)))
        else {
            return;
        };
        let reading = self.binaries.entry(progid).or_default();
        self.passed.clear();
        let mut decoded = Decoded {
            code,
            memo: &mut reading.memo,
        };
        if !straight(&mut decoded, functions, start, end, &mut self.passed) {
            return;
        }
        reading.consistent[o] = reading.consistent[o].saturating_add(hits);
        for &rva in &self.passed {
            add(&mut reading.counts[o], rva, hits);
        }
        add(&mut reading.taken[o], end, hits);
    }

    /// Renumbers the binaries: `progid` becomes `to(progid)`.
    pub(crate) fn renumber(self, to: impl Fn(u16) -> u16) -> RangeCounts {
        let mut out = RangeCounts::default();
        for (progid, reading) in self.binaries {
            out.binaries.entry(to(progid)).or_default().absorb(reading);
        }
        out
    }

    /// Adds what `other` counted.
    pub(crate) fn absorb(&mut self, other: RangeCounts) {
        for (progid, reading) in other.binaries {
            self.binaries.entry(progid).or_default().absorb(reading);
        }
    }

    /// Every binary with LBR records of two pairs or more, and what they add up to, in
    /// progid order.
    pub(crate) fn binaries(&self) -> impl Iterator<Item = (u16, &Reading)> + '_ {
        self.binaries.iter().map(|(&p, r)| (p, r))
    }
}

/// Adds `n` to `key`'s count, saturating.
fn add<K: std::hash::Hash + Eq>(counts: &mut FxHashMap<K, u128>, key: K, n: u128) {
    let count = counts.entry(key).or_default();
    *count = count.saturating_add(n);
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
pub(crate) struct Decoded<'c> {
    pub(crate) code: &'c Code,
    pub(crate) memo: &'c mut FxHashMap<u32, Option<Instruction>>,
}

impl Decoded<'_> {
    pub(crate) fn at(&mut self, rva: u32) -> Option<Instruction> {
        *self
            .memo
            .entry(rva)
            .or_insert_with(|| self.code.instruction(rva))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn readings_merge_by_binary_and_add_up_per_instruction() {
        let mut a = RangeCounts::default();
        let mut r = Reading {
            records: 2,
            ranges: 30,
            consistent: [28, 4],
            ..Reading::default()
        };
        r.counts[0].insert(0x10, 5);
        a.binaries.insert(0, r);
        let mut b = RangeCounts::default();
        let mut r = Reading {
            records: 1,
            ranges: u128::MAX,
            consistent: [1, 0],
            ..Reading::default()
        };
        r.counts[0].insert(0x10, 7);
        r.taken[1].insert(0x20, 1);
        b.binaries.insert(3, r);
        a.absorb(b.renumber(|p| if p == 3 { 0 } else { p }));
        let (progid, merged) = a.binaries().next().unwrap();
        assert_eq!(progid, 0);
        assert_eq!((merged.records, merged.ranges), (3, u128::MAX));
        assert_eq!(merged.consistent, [29, 4]);
        assert_eq!(merged.counts[0][&0x10], 12);
        assert_eq!(merged.taken[1][&0x20], 1);
    }
}
