//! Summaries: what is hot, per binary.
//!
//! For each program ID with sample records (ascending, records before any BINARY_ID last),
//! all its segments merged: per IP event kind the records, samples, unique RVAs and the top N
//! RVAs; for LBR records the branches, unique arcs and top N arcs; for call stacks the arcs,
//! unique arcs and top N arcs. Totals are exact (128-bit). The top entries are the N largest
//! by summed hits, ties broken by the smaller RVA or `(from, to)`, so output is
//! deterministic.
//!
//! Memory holds one table entry per unique RVA or arc, nothing per sample.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::collections::HashMap;

use crate::engine::counts::{CountKey, Counts};
use crate::format::opcode::Opcode;
use crate::format::record::{Branch, SampleKind, Samples};

/// What a source's total counts, as `/summary` names it: the `samples` of an IP event, the
/// `branches` of LBR records, the `arcs` of call stacks (a stack of n frames, n - 1 arcs).
pub(crate) mod collect;
mod report;
mod shape;

pub use shape::{FunctionArcTable, IpSummary, SummaryLine, TopArc};

pub(crate) fn counted(source: SampleKind) -> &'static str {
    match source {
        SampleKind::Ip(_) => "samples",
        SampleKind::Lbr => "branches",
        SampleKind::CallStack => "arcs",
    }
}

/// One table of a binary, read in place: a source's records, hits and keys (an RVA for IP
/// events, an arc `[from, to]` for LBR and call stacks).
pub struct Table<'a, K: CountKey> {
    source: SampleKind,
    tally: &'a Keyed<K>,
}

impl<'a, K: CountKey> Table<'a, K> {
    /// The source: an IP event, LBR or call stacks.
    pub fn source(&self) -> SampleKind {
        self.source
    }

    /// Its sample records.
    pub fn records(&self) -> u64 {
        self.tally.records
    }

    /// The hits of its keys, summed: `/summary`'s `samples`, `branches` or `arcs`.
    pub fn total(&self) -> u128 {
        self.tally.total
    }

    /// How many distinct keys it has.
    pub fn unique(&self) -> usize {
        self.tally.hits.len()
    }

    /// Every key and its hits, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (K, u128)> + use<'a, K> {
        self.tally.hits.iter()
    }
}

/// What a binary's table adds up to, without its keys: the cheap list of what a binary
/// holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Totals {
    /// The source.
    pub source: SampleKind,
    /// Its sample records.
    pub records: u64,
    /// The hits of its keys, summed.
    pub total: u128,
    /// The hits of its records, each record once.
    pub record_hits: u128,
}

/// Per-binary aggregates of one file.
#[derive(Debug)]
pub struct Summary {
    top: usize,
    binaries: Vec<Binary>,
    index: HashMap<Option<u16>, usize>,
    /// The last program ID looked up and its position, since records come in runs.
    last: Option<(Option<u16>, usize)>,
}

/// The aggregates of one program ID.
#[derive(Debug)]
struct Binary {
    progid: Option<u16>,
    records: u64,
    ip: [Option<Keyed<u32>>; 6],
    /// Arcs keyed `[from, to]`.
    lbr: Option<Keyed<[u32; 2]>>,
    callstack: Option<Keyed<[u32; 2]>>,
}

impl Binary {
    fn new(progid: Option<u16>) -> Self {
        Binary {
            progid,
            records: 0,
            ip: Default::default(),
            lbr: None,
            callstack: None,
        }
    }
}

/// A table of a binary: its program ID and what [`Summary::table_of`] returns.
pub(crate) type TableId = (Option<u16>, usize);

/// The table of LBR arcs, after the IP events'.
const LBR: usize = 6;
/// The table of call-stack arcs.
const CALLSTACK: usize = 7;

/// Hits per key, with the record count and the exact total.
#[derive(Debug)]
struct Keyed<K: CountKey> {
    records: u64,
    /// The key updates so far: the work the table has cost.
    keys: u64,
    /// The hits of the records themselves, each counted once.
    record_hits: u128,
    total: u128,
    hits: Counts<K>,
}

impl<'a, K: CountKey> Table<'a, K> {
    fn totals(&self) -> Totals {
        Totals {
            source: self.source,
            records: self.tally.records,
            total: self.tally.total,
            record_hits: self.tally.record_hits,
        }
    }
}

impl<K: CountKey> Keyed<K> {
    fn new() -> Self {
        Keyed {
            records: 0,
            keys: 0,
            record_hits: 0,
            total: 0,
            hits: Counts::new(),
        }
    }

    /// Counts a record that adds `hits` to each of `keys`.
    #[inline]
    fn record(&mut self, keys: impl ExactSizeIterator<Item = K>, hits: u128) {
        self.records += 1;
        self.keys = self.keys.saturating_add(keys.len() as u64);
        self.record_hits = self.record_hits.saturating_add(hits);
        self.total = self
            .total
            .saturating_add(hits.saturating_mul(keys.len() as u128));
        self.hits.add_all(keys, hits);
    }

    /// The `n` keys with the most hits, ties by the smaller key.
    fn top(&self, n: usize) -> Vec<(K, u128)> {
        top(self.hits.iter(), n)
    }

    /// Adds what `other` counted.
    fn merge(&mut self, other: Keyed<K>) {
        self.records += other.records;
        self.keys = self.keys.saturating_add(other.keys);
        self.record_hits = self.record_hits.saturating_add(other.record_hits);
        self.total = self.total.saturating_add(other.total);
        for (key, hits) in other.hits.iter() {
            self.hits.add(key, hits);
        }
    }

    /// The hits folded by function, through `to_function`; keys it cannot place count as
    /// unresolved. Costs a lookup per unique key, nothing per sample.
    fn fold<F: Ord + Copy + std::hash::Hash>(
        &self,
        to_function: impl Fn(K) -> Option<F>,
    ) -> (Vec<(F, u128)>, u128) {
        let mut by_function: HashMap<F, u128> = HashMap::new();
        let mut unresolved = 0u128;
        for (key, hits) in self.hits.iter() {
            match to_function(key) {
                Some(f) => {
                    let h = by_function.entry(f).or_insert(0);
                    *h = h.saturating_add(hits);
                }
                None => unresolved = unresolved.saturating_add(hits),
            }
        }
        (by_function.into_iter().collect(), unresolved)
    }
}

/// Merges a table into another, moving it when there is nothing to merge with.
fn merge_into<K: CountKey>(ours: &mut Option<Keyed<K>>, theirs: Option<Keyed<K>>) {
    match (ours.as_mut(), theirs) {
        (_, None) => {}
        (None, theirs) => *ours = theirs,
        (Some(ours), Some(theirs)) => ours.merge(theirs),
    }
}

/// The `n` entries with the most hits, ties by the smaller key, best first. Holds `n`
/// entries at a time, not all of them: a table can have millions.
fn top<K: Ord + Copy>(all: impl Iterator<Item = (K, u128)>, n: usize) -> Vec<(K, u128)> {
    // Ranked so that the best is the least; the heap's greatest is the worst kept.
    let mut kept = BinaryHeap::with_capacity(n.min(1024));
    // Internal iteration: a table's keys are a chain of iterators, each looped over in turn.
    all.for_each(|(key, hits)| {
        let rank = (Reverse(hits), key);
        if kept.len() < n {
            kept.push(rank);
        } else if let Some(mut worst) = kept.peek_mut()
            && rank < *worst
        {
            *worst = rank;
        }
    });
    kept.into_sorted_vec()
        .into_iter()
        .map(|(Reverse(hits), key)| (key, hits))
        .collect()
}

/// The key of an arc.
#[inline]
fn arc_key(b: Branch) -> [u32; 2] {
    [b.from, b.to]
}

impl Summary {
    /// An empty summary that will show `top` entries per table.
    pub fn new(top: usize) -> Self {
        Summary {
            top,
            binaries: Vec::new(),
            index: HashMap::new(),
            last: None,
        }
    }

    fn binary(&mut self, progid: Option<u16>) -> &mut Binary {
        let at = match self.last {
            Some((p, at)) if p == progid => at,
            _ => {
                let next = self.binaries.len();
                let at = *self.index.entry(progid).or_insert(next);
                if at == next {
                    self.binaries.push(Binary::new(progid));
                }
                self.last = Some((progid, at));
                at
            }
        };
        &mut self.binaries[at]
    }

    /// Renumbers the binaries: `progid` becomes `to(progid)` (records before any BINARY_ID
    /// stay apart). Two program IDs that become one are merged.
    pub fn renumber(self, to: impl Fn(u16) -> u16) -> Summary {
        let mut out = Summary::new(self.top);
        for mut b in self.binaries {
            b.progid = b.progid.map(&to);
            let mut one = Summary::new(self.top);
            one.index.insert(b.progid, 0);
            one.binaries.push(b);
            out.absorb(one);
        }
        out
    }

    /// Adds what `other` counted, as if its records had been added here.
    pub fn absorb(&mut self, other: Summary) {
        for theirs in other.binaries {
            let ours = self.binary(theirs.progid);
            ours.records += theirs.records;
            for (mine, their) in ours.ip.iter_mut().zip(theirs.ip) {
                merge_into(mine, their);
            }
            merge_into(&mut ours.lbr, theirs.lbr);
            merge_into(&mut ours.callstack, theirs.callstack);
        }
    }

    /// The table a record counts into: the IP event's position in [`Opcode::IP_KINDS`], then
    /// the LBR arcs and the call-stack arcs; `None` for an IP opcode with no table, which
    /// only counts as a record.
    #[inline]
    pub(crate) fn table_of(s: &Samples<'_>) -> Option<usize> {
        match s.kind() {
            SampleKind::Ip(op) => op.ip_index(),
            SampleKind::Lbr => Some(LBR),
            SampleKind::CallStack => Some(CALLSTACK),
        }
    }

    /// Every table with the key updates it has counted: the work it has cost.
    pub(crate) fn loads(&self) -> impl Iterator<Item = (TableId, u64)> + '_ {
        self.binaries.iter().flat_map(|b| {
            let ip = b.ip.iter().map(|t| t.as_ref().map(|t| t.keys));
            let arcs = [&b.lbr, &b.callstack].map(|t| t.as_ref().map(|t| t.keys));
            ip.chain(arcs)
                .enumerate()
                .filter_map(move |(table, keys)| Some(((b.progid, table), keys?)))
        })
    }

    /// Moves the tables `which` picks into a summary of their own. Record counts stay here;
    /// [`absorb`](Summary::absorb) puts the two together again.
    pub(crate) fn split_off(&mut self, which: impl Fn(TableId) -> bool) -> Summary {
        let mut out = Summary::new(self.top);
        for b in &mut self.binaries {
            let progid = b.progid;
            let mut moved = Binary::new(progid);
            for (i, (ours, theirs)) in b.ip.iter_mut().zip(&mut moved.ip).enumerate() {
                if which((progid, i)) {
                    *theirs = ours.take();
                }
            }
            if which((progid, LBR)) {
                moved.lbr = b.lbr.take();
            }
            if which((progid, CALLSTACK)) {
                moved.callstack = b.callstack.take();
            }
            if moved.ip.iter().any(Option::is_some)
                || moved.lbr.is_some()
                || moved.callstack.is_some()
            {
                out.index.insert(progid, out.binaries.len());
                out.binaries.push(moved);
            }
        }
        out
    }

    /// Counts one sample record.
    pub fn add(&mut self, s: &Samples<'_>) {
        let b = self.binary(s.progid);
        b.records += 1;
        match s.kind() {
            SampleKind::Ip(op) => {
                let Some(i) = op.ip_index() else { return };
                b.ip[i]
                    .get_or_insert_with(Keyed::new)
                    .record(s.rvas().iter(), s.hits);
            }
            SampleKind::Lbr => {
                b.lbr
                    .get_or_insert_with(Keyed::new)
                    .record(s.branches().iter().map(arc_key), s.hits);
            }
            SampleKind::CallStack => {
                b.callstack
                    .get_or_insert_with(Keyed::new)
                    .record(s.rvas().arcs().map(arc_key), s.hits);
            }
        }
    }

    /// The binaries with sample records, in progid order (records before any BINARY_ID,
    /// which belong to none, left out): what exporters go through.
    pub fn progids(&self) -> impl Iterator<Item = u16> + '_ {
        self.ordered().into_iter().filter_map(|b| b.progid)
    }

    /// The sources binary `progid` has, in output order, with what each adds up to.
    pub fn sources(&self, progid: u16) -> impl Iterator<Item = Totals> + '_ {
        let ip = self.ip_tables(progid).map(|t| t.totals());
        let arcs = [self.lbr(progid), self.callstack(progid)];
        ip.chain(arcs.into_iter().flatten().map(|t| t.totals()))
    }

    /// The IP tables of binary `progid`, in opcode order.
    pub fn ip_tables(&self, progid: u16) -> impl Iterator<Item = Table<'_, u32>> + '_ {
        let ip = self.of(progid).map(|b| &b.ip);
        Opcode::IP_KINDS
            .iter()
            .zip(ip.into_iter().flatten())
            .filter_map(|(&op, t)| {
                Some(Table {
                    source: SampleKind::Ip(op),
                    tally: t.as_ref()?,
                })
            })
    }

    /// The LBR arcs of binary `progid`, when it has LBR records.
    pub fn lbr(&self, progid: u16) -> Option<Table<'_, [u32; 2]>> {
        Some(Table {
            source: SampleKind::Lbr,
            tally: self.of(progid)?.lbr.as_ref()?,
        })
    }

    /// The call-stack arcs of binary `progid`, when it has call-stack records and they were
    /// counted.
    pub fn callstack(&self, progid: u16) -> Option<Table<'_, [u32; 2]>> {
        Some(Table {
            source: SampleKind::CallStack,
            tally: self.of(progid)?.callstack.as_ref()?,
        })
    }

    /// Lets go of every binary's call-stack arcs, once nothing reads them (the call stacks
    /// themselves are kept apart, [`StackCounts`](super::stacks::StackCounts)).
    pub(crate) fn let_go_of_stack_arcs(&mut self) {
        for b in &mut self.binaries {
            b.callstack = None;
        }
    }

    /// The sample records of binary `progid` (`None`: those before any BINARY_ID).
    pub fn records(&self, progid: Option<u16>) -> u64 {
        self.index
            .get(&progid)
            .map_or(0, |&at| self.binaries[at].records)
    }

    /// The sample records of the whole trace.
    pub fn all_records(&self) -> u64 {
        self.binaries.iter().map(|b| b.records).sum()
    }

    fn of(&self, progid: u16) -> Option<&Binary> {
        self.index.get(&Some(progid)).map(|&at| &self.binaries[at])
    }

    /// The binaries in output order: ascending program ID, records without one last.
    fn ordered(&self) -> Vec<&Binary> {
        let mut all: Vec<&Binary> = self.binaries.iter().collect();
        all.sort_by_key(|b| (b.progid.is_none(), b.progid));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::stackorder::StackOrder;
    use crate::format::tables::Tables;
    use crate::image::attached::SymbolMap;
    use serde_json::{Value, json};

    fn no_names() -> (Tables, SymbolMap) {
        (Tables::default(), SymbolMap::default())
    }

    fn le(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn add(s: &mut Summary, progid: Option<u16>, opcode: Opcode, hits: u128, values: &[u32]) {
        let payload = le(values);
        let width = if opcode == Opcode::LBR { 2 } else { 1 };
        s.add(&Samples {
            offset: 0,
            opcode,
            progid,
            hits,
            count: (values.len() / width) as u8,
            payload: &payload,
        });
    }

    fn lines(s: &Summary) -> Vec<Value> {
        let (tables, symbols) = no_names();
        s.lines(&tables, &symbols, StackOrder::LeafFirst)
            .map(|l| serde_json::to_value(&l).unwrap())
            .collect()
    }

    #[test]
    fn a_split_off_table_moves_whole_whatever_else_its_binary_has() {
        // Binary 1 has LBR only, 2 call stacks only, 3 an IP event and LBR (LBR pairs are
        // stored to first; the keys are from, to).
        let mut s = Summary::new(5);
        add(&mut s, Some(1), Opcode::LBR, 2, &[0x10, 0x20]);
        add(&mut s, Some(2), Opcode::ETW_CALLSTACK, 3, &[0x30, 0x40]);
        add(&mut s, Some(3), Opcode::IP_KINDS[0], 4, &[0x50]);
        add(&mut s, Some(3), Opcode::LBR, 5, &[0x60, 0x70]);
        let moved = s.split_off(|(_, t)| t == LBR || t == CALLSTACK);
        assert_eq!(moved.progids().collect::<Vec<_>>(), [1, 2, 3]);
        let lbr = |s: &Summary, p| s.lbr(p).map(|t| t.iter().collect::<Vec<_>>());
        assert_eq!(lbr(&moved, 1), Some(vec![([0x20, 0x10], 2)]));
        assert_eq!(lbr(&moved, 3), Some(vec![([0x70, 0x60], 5)]));
        let arcs = moved.callstack(2).map(|t| t.iter().collect::<Vec<_>>());
        assert_eq!(arcs, Some(vec![([0x30, 0x40], 3)]));
        assert_eq!(moved.ip_tables(3).count(), 0);
        // What stays: binary 3's IP event, and no table of the others.
        assert_eq!(s.ip_tables(3).map(|t| t.total()).collect::<Vec<_>>(), [4]);
        assert!(s.lbr(1).is_none() && s.callstack(2).is_none() && s.lbr(3).is_none());
    }

    #[test]
    fn ties_break_by_the_smaller_rva_and_arc() {
        let mut s = Summary::new(3);
        add(
            &mut s,
            Some(0),
            Opcode::RETIRE_INSTR,
            1,
            &[0x30, 0x10, 0x20, 0x40, 0x40],
        );
        // LBR pairs are stored to-first: (to 2, from 9), (to 1, from 9), (to 5, from 3).
        add(&mut s, Some(0), Opcode::LBR, 2, &[2, 9, 1, 9, 5, 3]);
        let got = lines(&s);
        assert_eq!(
            got[0]["ip"][0]["top"],
            json!([{"rva": 0x40, "hits": 2}, {"rva": 0x10, "hits": 1}, {"rva": 0x20, "hits": 1}])
        );
        assert_eq!(
            got[0]["lbr"]["top"],
            json!([{"from": 3, "to": 5, "hits": 2}, {"from": 9, "to": 1, "hits": 2}, {"from": 9, "to": 2, "hits": 2}])
        );
    }

    #[test]
    fn top_zero_shows_totals_only_and_a_large_top_shows_all() {
        for (n, shown) in [(0, 0), (2, 2), (1000, 3)] {
            let mut s = Summary::new(n);
            add(&mut s, Some(0), Opcode::UNHALT_CYCLE, 1, &[1, 2, 3, 3]);
            let got = &lines(&s)[0]["ip"][0];
            assert_eq!(got["samples"], 4);
            assert_eq!(got["unique_rvas"], 3);
            assert_eq!(got["top"].as_array().unwrap().len(), shown, "top {n}");
        }
    }

    #[test]
    fn totals_above_two_to_the_64_are_exact() {
        let max = u128::from(u64::MAX) + 1; // REPEAT u64::MAX
        let mut s = Summary::new(10);
        add(&mut s, Some(1), Opcode::ETW_INSTR, max, &[7, 7, 8]);
        add(&mut s, Some(1), Opcode::ETW_CALLSTACK, max, &[1, 2, 3]);
        let (tables, symbols) = no_names();
        let text = serde_json::to_string(
            &s.lines(&tables, &symbols, StackOrder::LeafFirst)
                .next()
                .unwrap(),
        )
        .unwrap();
        assert!(text.contains(r#""samples":55340232221128654848"#), "{text}");
        assert!(
            text.contains(r#"{"rva":7,"hits":36893488147419103232}"#),
            "{text}"
        );
        assert!(text.contains(r#""arcs":36893488147419103232"#), "{text}");
    }

    #[test]
    fn binaries_in_progid_order_with_null_last_and_segments_merged() {
        let mut s = Summary::new(10);
        add(&mut s, None, Opcode::RETIRE_INSTR, 1, &[1]);
        add(&mut s, Some(2), Opcode::RETIRE_INSTR, 1, &[1]);
        add(&mut s, Some(0), Opcode::RETIRE_INSTR, 1, &[5]);
        add(&mut s, Some(2), Opcode::RETIRE_INSTR, 3, &[1]);
        let got = lines(&s);
        let order: Vec<_> = got.iter().map(|l| l["progid"].clone()).collect();
        assert_eq!(order, [json!(0), json!(2), Value::Null]);
        assert_eq!(got[1]["records"], 2);
        assert_eq!(got[1]["ip"][0]["top"], json!([{"rva": 1, "hits": 4}]));
        assert_eq!(got[2]["name"], Value::Null);
    }

    #[test]
    fn ip_kinds_in_opcode_order_and_absent_tables_null() {
        let mut s = Summary::new(10);
        add(&mut s, Some(0), Opcode::ETW_INSTR, 1, &[1]);
        add(&mut s, Some(0), Opcode::UNHALT_CYCLE, 1, &[]);
        let got = &lines(&s)[0];
        let kinds: Vec<_> = got["ip"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["event"].clone())
            .collect();
        assert_eq!(kinds, [json!("UNHALT_CYCLE"), json!("ETW_INSTR")]);
        assert_eq!(got["ip"][0]["records"], 1);
        assert_eq!(got["ip"][0]["samples"], 0);
        assert_eq!(got["lbr"], Value::Null);
        assert_eq!(got["callstack"], Value::Null);
    }
}
