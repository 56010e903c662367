//! A trace on an SPD's own blocks (`/compare TRACE SPD`, docs/output.md, "A trace on the
//! SPD's blocks"): the trace's LBR ranges, or its IP samples, mapped onto the blocks of the
//! SPD of its binary, without the image or the PDB (the SPD's code ranges are the map), and
//! the two compared on shares of dynamic instructions.
//!
//! ```text
//! LBR   a range [start, end] of a record, under each order  ->  every block with code in it
//!       gets the record's hits once; weight = hits x the block's instructions
//! IP    a sample at an RVA  ->  the block whose code holds it; weight = the samples
//! SPD   weight = the block's count x its instructions
//! ```
//!
//! While the trace is decoded, the ranges of its LBR records are gathered, each distinct
//! range with its hits summed, and mapped a batch at a time (`BlockCounts`, a lookup of
//! each end in the SPD's map of its code), so the memory grows with the SPD's blocks, not
//! the trace. A range is *consistent on the SPD* when it starts no later than it ends and
//! both ends lie in one function's code; the order of the pairs is the one under which at
//! least 90% of the ranges are (section 14's rule); else the IP samples are used.

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::analysis::lbr::ranges::order;
use crate::analysis::lbr::reading::Order;
use crate::analysis::spd::flow::{self, SeenOnSpd, SpdFlow};
use crate::analysis::summary::Summary;
use crate::format::record::{Branch, Branches, SampleKind, Samples};
use crate::image::attached::SymbolMap;
use crate::image::spdprofile::SpdProfile;

/// Distinct ranges and their hits: an open-addressing table of `start << 32 | end` keys
/// with linear probing, the keys apart from their hits (a probe reads keys alone), the hits
/// in 64 bits (a sum that would pass them goes to `wide`). Measured against the standard
/// table it replaced: 7% less CPU for `/compare TRACE SPD` (docs/performance.md).
#[derive(Clone, Debug)]
struct Ranges {
    /// Per slot: a range's key, [`FREE`] for none.
    keys: Box<[u64]>,
    /// Per slot: its hits.
    hits: Box<[u64]>,
    /// How many slots are taken.
    len: usize,
    /// The hits past 64 bits, those of the key that marks a free slot, and those of new
    /// ranges once the slots are three quarters taken.
    wide: FxHashMap<u64, u128>,
}

/// A free slot's key (the range [0xFFFFFFFF, 0xFFFFFFFF], counted in `wide`).
const FREE: u64 = u64::MAX;

/// The table's slots: twice the distinct ranges a batch gathers.
const SLOTS: usize = 2 * PENDING;

impl Ranges {
    fn new() -> Ranges {
        Ranges {
            keys: vec![FREE; SLOTS].into_boxed_slice(),
            hits: vec![0; SLOTS].into_boxed_slice(),
            len: 0,
            wide: FxHashMap::default(),
        }
    }

    /// Counts `hits` more of the range `key`.
    #[inline]
    fn add(&mut self, key: u64, hits: u128) {
        let Some(small) = u64::try_from(hits).ok().filter(|_| key != FREE) else {
            *self.wide.entry(key).or_default() += hits;
            return;
        };
        // The product's top bits, the best mixed.
        let mut slot =
            (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize;
        loop {
            let k = self.keys[slot];
            if k == key {
                match self.hits[slot].checked_add(small) {
                    Some(sum) => self.hits[slot] = sum,
                    None => *self.wide.entry(key).or_default() += hits,
                }
                return;
            }
            if k == FREE {
                // Three quarters taken (a record of thousands of pairs before the batch is
                // mapped): no new range here, so probing stays short and always ends.
                if 4 * (self.len + 1) > 3 * SLOTS {
                    *self.wide.entry(key).or_default() += hits;
                    return;
                }
                (self.keys[slot], self.hits[slot]) = (key, small);
                self.len += 1;
                return;
            }
            slot = (slot + 1) & (SLOTS - 1);
        }
    }

    /// How many distinct ranges it holds (a range may be counted twice).
    fn len(&self) -> usize {
        self.len + self.wide.len()
    }

    /// Every range and its hits, emptying the table; a range may come twice.
    fn drain(&mut self) -> impl Iterator<Item = (u64, u128)> + '_ {
        self.len = 0;
        let slots = self.keys.iter_mut().zip(self.hits.iter_mut());
        let taken = slots.filter(|(k, _)| **k != FREE);
        let taken = taken.map(|(k, n)| (std::mem::replace(k, FREE), u128::from(std::mem::take(n))));
        taken.chain(self.wide.drain())
    }
}

/// The LBR records of a trace mapped onto the blocks of the SPD attached to each binary.
#[derive(Debug, Default)]
pub(crate) struct BlockCounts {
    binaries: BTreeMap<u16, OnBlocks>,
    /// A record's pairs, reused from record to record.
    pairs: Vec<Branch>,
}

/// What one binary's LBR records add up to on its SPD's blocks, under each order.
#[derive(Clone, Debug)]
pub(crate) struct OnBlocks {
    /// The SPD.
    spd: Arc<SpdProfile>,
    /// Its LBR records of two pairs or more.
    records: u64,
    /// Their ranges, each counted with its record's hits.
    ranges: u128,
    /// The ranges consistent on the SPD, under newest-first and under oldest-first.
    consistent: [u128; 2],
    /// The ranges with an end in no function's code, under each order.
    outside: [u128; 2],
    /// Each block's count, by its place in the SPD's blocks, under each order.
    counts: [Vec<u128>; 2],
    /// Each edge of the SPD's graphs, by its place: the ranges that ran along it, under
    /// each order.
    along: [Vec<u128>; 2],
    /// The ranges not mapped yet, under each order, by `start << 32 | end`, with their hits
    /// summed: each distinct range is mapped once a batch, however many records hold it.
    pending: [Ranges; 2],
}

/// How many distinct ranges an order gathers before they are mapped: 2^16, about 2 MiB.
const PENDING: usize = 1 << 16;

impl OnBlocks {
    fn new(spd: Arc<SpdProfile>) -> OnBlocks {
        let n = spd.blocks.len();
        let edges = spd.graphs.edges().len();
        OnBlocks {
            records: 0,
            ranges: 0,
            consistent: [0; 2],
            outside: [0; 2],
            counts: [vec![0; n], vec![0; n]],
            along: [vec![0; edges], vec![0; edges]],
            pending: [Ranges::new(), Ranges::new()],
            spd,
        }
    }

    /// Adds what `other`, on the same SPD, counted.
    fn absorb(&mut self, mut other: OnBlocks) {
        if !Arc::ptr_eq(&self.spd, &other.spd) {
            return;
        }
        self.flush();
        other.flush();
        self.records = self.records.saturating_add(other.records);
        self.ranges = self.ranges.saturating_add(other.ranges);
        let add = |mine: &mut [u128], theirs: &[u128]| {
            for (m, t) in mine.iter_mut().zip(theirs) {
                *m = m.saturating_add(*t);
            }
        };
        for o in 0..2 {
            self.consistent[o] = self.consistent[o].saturating_add(other.consistent[o]);
            self.outside[o] = self.outside[o].saturating_add(other.outside[o]);
            add(&mut self.counts[o], &other.counts[o]);
            add(&mut self.along[o], &other.along[o]);
        }
    }

    /// Gathers the ranges between the pairs `pairs` of a record that counts `hits` times,
    /// under each order; maps them once enough are gathered.
    fn add(&mut self, pairs: &[Branch], hits: u128) {
        // A record counts at most 2^64 times, and a trace holds fewer than 2^64 records:
        // no sum of hits reaches 2^128.
        let ranges = pairs.len().saturating_sub(1) as u128;
        self.ranges += ranges * hits;
        for (o, order) in Order::BOTH.into_iter().enumerate() {
            let pending = &mut self.pending[o];
            for w in pairs.windows(2) {
                let (start, end) = order.range((&w[0], &w[1]));
                pending.add(u64::from(start) << 32 | u64::from(end), hits);
            }
        }
        if self.pending.iter().any(|p| p.len() >= PENDING) {
            self.flush();
        }
    }

    /// Maps each distinct range gathered onto the blocks and the edges it runs along.
    fn flush(&mut self) {
        let blocks = &self.spd.blocks;
        for o in 0..2 {
            let (counts, along) = (&mut self.counts[o], &mut self.along[o]);
            for (range, hits) in self.pending[o].drain() {
                let (start, end) = (blocks.spot((range >> 32) as u32), blocks.spot(range as u32));
                match blocks.span(start, end) {
                    None => self.outside[o] += hits,
                    Some(Some(span)) => {
                        self.consistent[o] += hits;
                        blocks.walk(span, |b| counts[b] += hits, |e| along[e] += hits);
                    }
                    Some(None) => {}
                }
            }
        }
    }
}

impl BlockCounts {
    /// Takes a sample record, if it is an LBR record of two pairs or more of a binary with
    /// an SPD attached whose blocks map its code: its ranges are mapped at once, a few
    /// lookups each (memory grows with the SPD's blocks, not the trace).
    pub(crate) fn add(&mut self, s: &Samples<'_>, symbols: &SymbolMap) {
        let (SampleKind::Lbr, Some(progid)) = (s.kind(), s.progid) else {
            return;
        };
        if s.count < 2 {
            return;
        }
        let binary = match self.binaries.get_mut(&progid) {
            Some(binary) => binary,
            None => {
                let Some(spd) = symbols.spd(progid) else {
                    return;
                };
                if spd.blocks.overlap().is_some() {
                    return;
                }
                let binary = OnBlocks::new(Arc::clone(spd));
                self.binaries.entry(progid).or_insert(binary)
            }
        };
        binary.records += 1;
        self.pairs.clear();
        self.pairs.extend(Branches::new(s.payload).iter());
        binary.add(&self.pairs, s.hits);
    }

    /// Maps what is still gathered, once the stream is decoded.
    pub(crate) fn flush(&mut self) {
        self.binaries.values_mut().for_each(OnBlocks::flush);
    }

    /// Renumbers the binaries: `progid` becomes `to(progid)`.
    pub(crate) fn renumber(self, to: impl Fn(u16) -> u16) -> BlockCounts {
        let mut out = BlockCounts::default();
        for (progid, binary) in self.binaries {
            out.absorb_binary(to(progid), binary);
        }
        out
    }

    /// Adds what `other` counted.
    pub(crate) fn absorb(&mut self, other: BlockCounts) {
        for (progid, binary) in other.binaries {
            self.absorb_binary(progid, binary);
        }
    }

    fn absorb_binary(&mut self, progid: u16, binary: OnBlocks) {
        match self.binaries.get_mut(&progid) {
            Some(mine) => mine.absorb(binary),
            None => {
                self.binaries.insert(progid, binary);
            }
        }
    }

    /// The binaries with LBR records on an SPD's blocks.
    pub(crate) fn progids(&self) -> impl Iterator<Item = u16> + '_ {
        self.binaries.keys().copied()
    }

    /// What binary `progid`'s records add up to on `spd`'s blocks, when they were mapped
    /// onto that SPD.
    fn of(&self, progid: u16, spd: &SpdProfile) -> Option<&OnBlocks> {
        let binary = self.binaries.get(&progid)?;
        std::ptr::eq(Arc::as_ptr(&binary.spd), spd).then_some(binary)
    }
}

/// What a trace's samples were read from, for its binary's blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BlockSource {
    /// The LBR ranges, their pairs read in this order.
    Lbr(Order),
    /// The IP samples of this event: the binary's LBR ranges have no order.
    Ip(SampleKind),
    /// Nothing: the binary has neither LBR ranges in an order nor IP samples.
    Nothing,
}

impl BlockSource {
    /// `LBR`, the event's name, or `none`.
    pub fn name(self) -> &'static str {
        match self {
            BlockSource::Lbr(_) => SampleKind::Lbr.name(),
            BlockSource::Ip(kind) => kind.name(),
            BlockSource::Nothing => "none",
        }
    }

    /// The order of the LBR pairs, when they were read.
    pub fn order(self) -> Option<Order> {
        match self {
            BlockSource::Lbr(order) => Some(order),
            _ => None,
        }
    }
}

/// A trace's samples on its binary's SPD blocks: per block what the trace counted there.
#[derive(Clone, Debug)]
pub(crate) struct TraceOnBlocks<'s> {
    /// The SPD.
    spd: &'s SpdProfile,
    /// Where the trace's side comes from.
    source: BlockSource,
    /// The LBR ranges (weighted by hits), consistent ones (under the order used, or
    /// newest-first), and those with an end outside every function; for IP, the samples
    /// and those outside.
    ranges: u128,
    consistent: u128,
    outside: u128,
    /// LBR records of two pairs or more, mapped.
    records: u64,
    /// When the binary's LBR ranges have no order: how many there are, and how many are
    /// consistent under each order.
    unordered: Option<(u128, [u128; 2])>,
    /// Per block: the trace's count (LBR) or samples (IP).
    counts: Vec<u128>,
    /// Per block: the trace's weight and the SPD's.
    trace: Vec<u128>,
    theirs: Vec<u128>,
    /// The totals of each side.
    trace_total: u128,
    spd_total: u128,
    /// The flow inferred on the SPD's graphs from the LBR records, when they were read.
    flow: Option<SpdFlow>,
    /// Per block: the flow's weight (its count × the block's instructions), and their total.
    flow_weights: Vec<u128>,
    flow_total: u128,
}

impl<'s> TraceOnBlocks<'s> {
    /// Binary `progid`'s samples on `spd`'s blocks: its LBR ranges mapped while the trace
    /// was decoded, when their order is known, else its IP event with the most samples.
    pub(crate) fn new(
        summary: Option<&Summary>,
        counts: Option<&BlockCounts>,
        progid: u16,
        spd: &'s SpdProfile,
    ) -> TraceOnBlocks<'s> {
        let n = spd.blocks.len();
        let theirs: Vec<u128> = spd.blocks.all().iter().map(|b| b.weight()).collect();
        let mut on = TraceOnBlocks {
            spd,
            source: BlockSource::Nothing,
            ranges: 0,
            consistent: 0,
            outside: 0,
            records: 0,
            unordered: None,
            counts: vec![0; n],
            trace: vec![0; n],
            spd_total: theirs.iter().fold(0u128, |a, &w| a.saturating_add(w)),
            theirs,
            trace_total: 0,
            flow: None,
            flow_weights: Vec::new(),
            flow_total: 0,
        };
        let lbr = counts.and_then(|c| c.of(progid, spd));
        if let Some(b) = lbr {
            on.records = b.records;
            on.ranges = b.ranges;
            let chosen = order(b.ranges, b.consistent);
            let o = chosen.map_or(0, |o| Order::BOTH.iter().position(|&x| x == o).unwrap_or(0));
            on.consistent = b.consistent[o];
            on.outside = b.outside[o];
            match chosen {
                Some(chosen) => {
                    on.source = BlockSource::Lbr(chosen);
                    on.counts.clone_from(&b.counts[o]);
                    let seen = SeenOnSpd {
                        counts: &b.counts[o],
                        along: &b.along[o],
                    };
                    let arcs = summary.and_then(|s| s.lbr(progid));
                    let arcs = arcs.into_iter().flat_map(|t| t.iter());
                    on.flow = Some(flow::on_spd(spd, seen, arcs));
                }
                None if b.ranges > 0 => on.unordered = Some((b.ranges, b.consistent)),
                None => {}
            }
        }
        if on.source == BlockSource::Nothing {
            on.ip(summary, progid);
        }
        on.weigh();
        on
    }

    /// The IP event with the most samples in the binary, mapped onto the blocks.
    fn ip(&mut self, summary: Option<&Summary>, progid: u16) {
        let Some(table) = summary
            .into_iter()
            .flat_map(|s| s.ip_tables(progid))
            .max_by(|a, b| a.total().cmp(&b.total()).then(b.source().cmp(&a.source())))
        else {
            return;
        };
        self.source = BlockSource::Ip(table.source());
        let (mut samples, mut outside) = (0u128, 0u128);
        for (rva, n) in table.iter() {
            samples = samples.saturating_add(n);
            match self.spd.blocks.at(rva) {
                Some((_, b)) => self.counts[b] = self.counts[b].saturating_add(n),
                None => outside = outside.saturating_add(n),
            }
        }
        (self.ranges, self.consistent, self.outside) = (samples, samples - outside, outside);
    }

    /// The trace's weight per block: its count × the block's instructions (LBR), or its
    /// samples (IP).
    fn weigh(&mut self) {
        let lbr = matches!(self.source, BlockSource::Lbr(_));
        for (i, b) in self.spd.blocks.all().iter().enumerate() {
            let n = self.counts[i];
            self.trace[i] = match lbr {
                true => n.saturating_mul(u128::from(b.instructions)),
                false => n,
            };
        }
        self.trace_total = self.trace.iter().fold(0u128, |a, &w| a.saturating_add(w));
        if let Some(flow) = &self.flow {
            let blocks = self.spd.blocks.all().iter().zip(&flow.blocks);
            self.flow_weights = blocks
                .map(|(b, &n)| u128::from(n) * u128::from(b.instructions))
                .collect();
            self.flow_total = self
                .flow_weights
                .iter()
                .fold(0u128, |a, &w| a.saturating_add(w));
        }
    }

    /// Block `b`'s share of the flow's weight, when there is a flow.
    fn flow_share(&self, b: usize) -> Option<f64> {
        let w = *self.flow_weights.get(b)?;
        Some(fraction(w, self.flow_total))
    }

    /// The SPD.
    pub(crate) fn spd(&self) -> &'s SpdProfile {
        self.spd
    }

    /// The flow inferred on the SPD's graphs, when the LBR records were read.
    pub(crate) fn flow(&self) -> Option<&SpdFlow> {
        self.flow.as_ref()
    }

    /// Block `b`'s shares: the trace's and the SPD's.
    fn shares(&self, b: usize) -> (f64, f64) {
        (
            fraction(self.trace[b], self.trace_total),
            fraction(self.theirs[b], self.spd_total),
        )
    }

    /// The comparison, with at most `top` functions.
    pub(crate) fn report(&self, top: usize) -> SpdBlocksReport {
        let blocks = self.spd.blocks.all();
        let mut report = SpdBlocksReport {
            spd: String::new(),
            progid: 0,
            name: String::new(),
            source: self.source,
            records: self.records,
            unordered: self.unordered,
            ranges: self.ranges,
            consistent: self.consistent,
            outside: self.outside,
            trace_total: self.trace_total,
            spd_total: self.spd_total,
            overlap: None,
            flow: self.flow_figures(),
            blocks: blocks.len(),
            ran: 0,
            ran_cold: 0,
            cold_ran: 0,
            functions: 0,
            rows: Vec::new(),
        };
        let mut overlap = 0.0;
        for (f, spd_function) in self.spd.functions.iter().enumerate() {
            let range = self.spd.blocks.of_function(f);
            if range.is_empty() {
                continue;
            }
            let mut row = SpdBlocksFunction {
                hash: spd_function.hash,
                name: spd_function.name.clone(),
                rva: spd_function.rva,
                loss: 0.0,
                shape_overlap: None,
                trace_share: 0.0,
                spd_share: 0.0,
                blocks: range.len(),
                ran_cold: 0,
                flow_share: range.clone().map(|b| self.flow_share(b)).sum(),
            };
            let mut same = 0.0;
            for b in range.clone() {
                let (p, q) = self.shares(b);
                overlap += p.min(q);
                row.loss += (p - q).abs() / 2.0;
                row.trace_share += p;
                row.spd_share += q;
                let (ran, counted) = (self.trace[b] > 0, blocks[b].count > 0);
                report.ran += usize::from(ran);
                row.ran_cold += usize::from(ran && !counted);
                report.cold_ran += usize::from(counted && !ran);
            }
            report.ran_cold += row.ran_cold;
            if row.trace_share > 0.0 && row.spd_share > 0.0 {
                for b in range {
                    let (p, q) = self.shares(b);
                    same += (p / row.trace_share).min(q / row.spd_share);
                }
                row.shape_overlap = Some(same);
            }
            if row.trace_share > 0.0 || row.spd_share > 0.0 {
                report.rows.push(row);
            }
        }
        if self.trace_total > 0 && self.spd_total > 0 {
            report.overlap = Some(overlap);
        }
        report.rows.sort_by(|a, b| {
            b.loss
                .total_cmp(&a.loss)
                .then(a.rva.cmp(&b.rva))
                .then(a.hash.cmp(&b.hash))
        });
        report.functions = report.rows.len();
        report.rows.truncate(top);
        report
    }

    /// Section 17's figures with the flow's weights in the trace's place, when there is a
    /// flow.
    fn flow_figures(&self) -> Option<FlowFigures> {
        self.flow.as_ref()?;
        let mut figures = FlowFigures::default();
        let mut overlap = 0.0;
        for (b, block) in self.spd.blocks.all().iter().enumerate() {
            let (share, (_, q)) = (self.flow_share(b)?, self.shares(b));
            overlap += share.min(q);
            let (flowed, counted) = (self.flow_weights[b] > 0, block.count > 0);
            figures.ran += usize::from(flowed);
            figures.ran_cold += usize::from(flowed && !counted);
            figures.cold_ran += usize::from(counted && !flowed);
        }
        if self.flow_total > 0 && self.spd_total > 0 {
            figures.overlap = Some(overlap);
        }
        Some(figures)
    }

    /// The blocks of the SPD's function at `function` (its place in record order), in id
    /// order.
    pub(crate) fn blocks_of(&self, function: usize) -> Vec<SpdBlockRow> {
        let Some(f) = self.spd.functions.get(function) else {
            return Vec::new();
        };
        let blocks = self.spd.blocks.all();
        self.spd
            .blocks
            .of_function(function)
            .map(|b| {
                let (trace_share, spd_share) = self.shares(b);
                SpdBlockRow {
                    hash: f.hash,
                    name: f.name.clone(),
                    id: blocks[b].id,
                    ranges: self.spd.blocks.ranges(&blocks[b]).to_vec(),
                    instructions: blocks[b].instructions,
                    spd_count: blocks[b].count,
                    trace: self.counts[b],
                    flow_count: self.flow.as_ref().map(|f| f.blocks[b]),
                    spd_share,
                    trace_share,
                }
            })
            .collect()
    }

    /// Where the trace's side comes from.
    pub(crate) fn source(&self) -> BlockSource {
        self.source
    }
}

/// `n / total`, 0 of nothing.
fn fraction(n: u128, total: u128) -> f64 {
    if total == 0 {
        0.0
    } else {
        n as f64 / total as f64
    }
}

/// A trace's binary on the blocks of its SPD.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SpdBlocksReport {
    /// The SPD, as given.
    pub spd: String,
    /// The trace's binary the SPD matches.
    pub progid: u16,
    /// Its name.
    pub name: String,
    /// What the trace's side was read from.
    pub source: BlockSource,
    /// Its LBR records of two pairs or more.
    pub records: u64,
    /// When its LBR ranges have no order on the SPD (`lbr-order-unknown`): how many there
    /// are, and how many are consistent newest first and oldest first.
    pub unordered: Option<(u128, [u128; 2])>,
    /// The LBR ranges, weighted by hits; or the IP samples.
    pub ranges: u128,
    /// Of those, the ranges consistent on the SPD (under the order used, else newest-first);
    /// or the samples in a block.
    pub consistent: u128,
    /// Of those, the ranges with an end in no function's code; or the samples in none.
    pub outside: u128,
    /// The trace's weight over all blocks (dynamic instructions for LBR, samples for IP).
    pub trace_total: u128,
    /// The SPD's: Σ count × instructions (inferred).
    pub spd_total: u128,
    /// Σ min(p, q) over the blocks; `None` when either side weighs nothing.
    pub overlap: Option<f64>,
    /// The same figures with the flow inferred on the SPD's graph in the trace's place;
    /// `None` when the LBR records were not read (the IP samples give no flow).
    pub flow: Option<FlowFigures>,
    /// The blocks that hold code.
    pub blocks: usize,
    /// Those with trace weight.
    pub ran: usize,
    /// Those the trace ran that the SPD counts 0: what this trace would add.
    pub ran_cold: usize,
    /// Those the SPD counts that the trace never ran.
    pub cold_ran: usize,
    /// The functions with weight on either side, before `top` cut them.
    pub functions: usize,
    /// The functions, the largest loss first.
    pub rows: Vec<SpdBlocksFunction>,
}

/// One function of the SPD, the trace beside it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SpdBlocksFunction {
    /// Its hash.
    pub hash: u64,
    /// Its name, as the SPD has it.
    pub name: String,
    /// Its RVA (inferred).
    pub rva: u32,
    /// ½ Σ |p − q| over its blocks: its part of 1 − overlap.
    pub loss: f64,
    /// The overlap of its blocks within it; `None` when either side has no weight in it.
    pub shape_overlap: Option<f64>,
    /// Σ p over its blocks.
    pub trace_share: f64,
    /// Σ q over its blocks.
    pub spd_share: f64,
    /// Its blocks that hold code.
    pub blocks: usize,
    /// Those the trace ran that the SPD counts 0.
    pub ran_cold: usize,
    /// Σ of its blocks' shares of the flow's weight; `None` without a flow.
    pub flow_share: Option<f64>,
}

/// A trace's flow on the SPD's graph beside the SPD: section 17's figures, the flow's
/// weight (its count × instructions) in the trace's place.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct FlowFigures {
    /// Σ min(flow share, SPD share) over the blocks with code; `None` when either weighs
    /// nothing.
    pub overlap: Option<f64>,
    /// The blocks with code that ran by the flow.
    pub ran: usize,
    /// Those the SPD counts 0.
    pub ran_cold: usize,
    /// The blocks the SPD counts that did not run by the flow.
    pub cold_ran: usize,
}

/// One block of a function, both sides (`/blocks:NAME`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SpdBlockRow {
    /// Its function's hash.
    pub hash: u64,
    /// Its function's name, as the SPD has it.
    pub name: String,
    /// Its id.
    pub id: u32,
    /// Its code ranges: (RVA, length).
    pub ranges: Vec<(u32, u32)>,
    /// Its instructions (inferred).
    pub instructions: u32,
    /// Its count in the SPD.
    pub spd_count: u64,
    /// The trace's count (LBR) or samples (IP) in it.
    pub trace: u128,
    /// Its count by the flow inferred on the SPD's graph; `None` without a flow.
    pub flow_count: Option<u64>,
    /// Its share of the SPD's weight.
    pub spd_share: f64,
    /// Its share of the trace's.
    pub trace_share: f64,
}

/// The places in record order of the SPD's functions `name` names: every function bearing
/// it, or the one whose hash it is (16 hex digits).
pub(crate) fn named(spd: &SpdProfile, name: &str) -> Vec<usize> {
    let hash = (name.len() == 16)
        .then(|| u64::from_str_radix(name, 16).ok())
        .flatten();
    (spd.functions.iter().enumerate())
        .filter(|(_, f)| f.name == name || Some(f.hash) == hash)
        .map(|(i, _)| i)
        .collect()
}

/// The names of the SPD's functions closest to `name`, the closest first: at most `n`.
pub(crate) fn closest<'s>(spd: &'s SpdProfile, name: &str, n: usize) -> Vec<&'s str> {
    crate::analysis::named::closest(spd.functions.iter().map(|f| f.name.as_str()), name, n)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// What `ranges` adds up to, each key once.
    fn summed(ranges: &mut Ranges) -> BTreeMap<u64, u128> {
        let mut out = BTreeMap::new();
        for (k, n) in ranges.drain() {
            *out.entry(k).or_default() += n;
        }
        out
    }

    proptest! {
        /// The table of ranges adds up what a plain map adds up: keys that collide, the
        /// key that marks a free slot, hits past 64 bits and sums that pass them.
        #[test]
        fn the_table_of_ranges_adds_up_as_a_map_does(
            adds in prop::collection::vec(
                (prop_oneof![0u64..64, Just(FREE), any::<u64>()],
                 prop_oneof![1u128..4, Just(u128::from(u64::MAX)), Just(u128::from(u64::MAX) + 1)]),
                0..400,
            )
        ) {
            let mut ranges = Ranges::new();
            let mut plain: BTreeMap<u64, u128> = BTreeMap::new();
            for &(k, n) in &adds {
                ranges.add(k, n);
                *plain.entry(k).or_default() += n;
            }
            prop_assert_eq!(summed(&mut ranges), plain);
            prop_assert_eq!(ranges.len(), 0);
            prop_assert!(summed(&mut ranges).is_empty());
        }
    }

    /// Up to three quarters of its slots hold ranges, new ranges past that go to the map
    /// beside them: probing always ends, and nothing is lost.
    #[test]
    fn a_full_table_of_ranges_loses_nothing() {
        let mut ranges = Ranges::new();
        let n = SLOTS as u64;
        for k in 0..n {
            ranges.add(k, 1);
        }
        ranges.add(n - 1, 2);
        // The slots take new ranges up to three quarters, the map the rest.
        assert_eq!(ranges.len, SLOTS / 4 * 3);
        assert_eq!(ranges.wide.len(), SLOTS / 4);
        let all = summed(&mut ranges);
        assert_eq!(all.len() as u64, n);
        assert_eq!(all[&(n - 1)], 3);
        assert!(all.values().take(n as usize - 1).all(|&h| h == 1));
    }

    fn app_spd() -> Arc<SpdProfile> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe/app.spd");
        Arc::new(SpdProfile::read(&path).unwrap())
    }

    /// What an [`OnBlocks`] counted, mapped.
    fn counted(mut on: OnBlocks) -> (u128, [u128; 2], [u128; 2], [Vec<u128>; 2]) {
        on.flush();
        (on.ranges, on.consistent, on.outside, on.counts)
    }

    #[test]
    fn what_two_readings_on_one_spd_counted_adds_up_and_another_spds_is_left_out() {
        let spd = app_spd();
        let f = spd
            .functions
            .iter()
            .find(|f| f.emitted() && f.size > 8)
            .expect("a function with code");
        let (first, last) = (f.rva, f.rva + f.size - 1);
        // Newest first: [first, last], in the function; oldest first, [0x10, 0x20], outside.
        let record = [
            Branch {
                from: last,
                to: 0x10,
            },
            Branch {
                from: 0x20,
                to: first,
            },
        ];
        let mut all = OnBlocks::new(Arc::clone(&spd));
        all.add(&record, 3);
        all.add(&record, 4);
        let mut one = OnBlocks::new(Arc::clone(&spd));
        one.add(&record, 3);
        let mut other = OnBlocks::new(Arc::clone(&spd));
        other.add(&record, 4);
        one.absorb(other);
        let all = counted(all);
        assert_eq!(all.0, 7);
        assert_eq!((all.1, all.2), ([7, 0], [0, 7]));
        assert!(all.3[0].contains(&7), "{:?}", all.3[0]);
        // An OnBlocks of another SPD (the same file read again) adds nothing.
        let mut elsewhere = OnBlocks::new(app_spd());
        elsewhere.add(&record, 5);
        one.absorb(elsewhere);
        assert_eq!(counted(one), all);
    }

    #[test]
    fn block_counts_renumbered_and_absorbed_keep_each_binarys_counts() {
        let spd = app_spd();
        let f = spd
            .functions
            .iter()
            .find(|f| f.emitted() && f.size > 8)
            .unwrap();
        let record = [
            Branch {
                from: f.rva + f.size - 1,
                to: 0x10,
            },
            Branch {
                from: 0x20,
                to: f.rva,
            },
        ];
        let on = |hits| {
            let mut on = OnBlocks::new(Arc::clone(&spd));
            on.add(&record, hits);
            on
        };
        let mut mine = BlockCounts::default();
        mine.binaries.insert(0, on(2));
        let mut theirs = BlockCounts::default();
        theirs.binaries.insert(0, on(3));
        theirs.binaries.insert(1, on(5));
        // Their 0 is our 1, their 1 our 0.
        mine.absorb(theirs.renumber(|p| 1 - p));
        assert_eq!(mine.progids().collect::<Vec<_>>(), [0, 1]);
        let ranges = |p: u16| counted(mine.binaries[&p].clone()).0;
        assert_eq!((ranges(0), ranges(1)), (7, 3));
    }
}
