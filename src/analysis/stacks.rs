//! Call stacks as a profile: where the time goes, by function (docs/output.md, "Stacks, frames
//! and keys").
//!
//! ```text
//! ETW_CALLSTACK  frames as stored:  f[0]      f[1]        ...  f[n-1]
//!                leaf first:        sampled   its caller  ...  outermost recorded
//!                looked up at:      RVA       RVA - 1     ...  RVA - 1   (return addresses)
//! ```
//!
//! Decoding keeps one table entry per unique (binary, stack as stored), nothing per record:
//! `StackCounts::add` hashes the frames in place. `StackCounts::profile` then turns each
//! unique address into a *key* once, with the binary's `/pdb` symbols when it has them (the
//! function holding the address) or the address itself, and folds the stacks by key, outermost
//! frame first: the `StackProfile` that `/functions`, `/folded` and the flame graph are made of.
//! Records before any BINARY_ID and stacks with no frames are left out.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::collections::hash_map::Entry;
use std::fmt;
use std::num::NonZeroU32;
use std::str::FromStr;
use std::sync::mpsc::{Receiver, sync_channel};

use byteorder::{ByteOrder, LittleEndian as LE};
use rustc_hash::{FxHashMap, FxHashSet};

use crate::analysis::Counted;
use crate::analysis::index::AddressIndex;
use crate::analysis::joined::{self, joined_cmp};
use crate::analysis::keys::{FrameKey, KeyId, Namer, Namers};
use crate::analysis::memory;
use crate::analysis::share::{self, Share, halves, joined};
use crate::analysis::slices::{SliceCounts, Slices};
use crate::analysis::summary::Summary;
use crate::format::error::UnknownName;
use crate::format::record::{SampleKind, Samples};
use crate::format::tables::Tables;
use crate::image::symbols::SymbolMap;

/// In which order the frames of a call stack are stored (`/stackorder`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StackOrder {
    /// `frames[0]` is the sampled frame: ETW's order, and the default.
    #[default]
    LeafFirst,
    /// `frames[0]` is the outermost frame.
    RootFirst,
}

impl StackOrder {
    /// The position of the leaf (the sampled frame) among `frames` frames as stored.
    pub fn leaf(self, frames: usize) -> usize {
        match self {
            StackOrder::LeafFirst => 0,
            StackOrder::RootFirst => frames.saturating_sub(1),
        }
    }

    /// `leaf-first` or `root-first`, as `/stackorder` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            StackOrder::LeafFirst => "leaf-first",
            StackOrder::RootFirst => "root-first",
        }
    }
}

impl fmt::Display for StackOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StackOrder {
    type Err = UnknownName;

    /// Parses `leaf-first` or `root-first`, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [StackOrder::LeafFirst, StackOrder::RootFirst]
            .into_iter()
            .find(|o| o.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownName {
                given: s.to_owned(),
                expected: "leaf-first or root-first",
            })
    }
}

/// The unique call stacks of a trace and their hits, as decoded.
#[derive(Debug, Default)]
pub(crate) struct StackCounts {
    /// The progid (2 bytes, little-endian) and the record's frames as stored, with the
    /// summed hits: keyed by the raw bytes, so that counting a record copies and hashes them
    /// once, and held one after another.
    stacks: SliceCounts<u8>,
    /// Per binary: the call-stack records with at least one frame, and their hits.
    totals: BTreeMap<u16, (u64, u128)>,
}

impl StackCounts {
    /// Counts a sample record at once, if it is a call stack of a known binary with frames.
    #[cfg(test)]
    pub(crate) fn add(&mut self, s: &Samples<'_>) {
        if let Some(progid) = self.taken(s) {
            let stored = [&progid.to_le_bytes()[..], s.payload].concat();
            self.stacks.add(&stored, s.hits);
        }
    }

    /// Counts a sample record, if it is a call stack of a known binary with frames, with
    /// the next ones, their cache misses overlapping ([`SliceCounts::add_soon`]): as the
    /// decoder hands them over. [`settle`](StackCounts::settle) must be called before the
    /// stacks are read. A stack is stored as its binary, then its frames.
    #[inline]
    pub fn add_soon(&mut self, s: &Samples<'_>) {
        if let Some(progid) = self.taken(s) {
            self.stacks
                .add_soon(&[&progid.to_le_bytes(), s.payload], s.hits);
        }
    }

    /// Counts the stacks [`add_soon`](StackCounts::add_soon) holds.
    pub fn settle(&mut self) {
        self.stacks.settle();
    }

    /// Counts a call-stack record of a known binary with frames in its binary's totals: the
    /// binary, or `None` for any other record.
    fn taken(&mut self, s: &Samples<'_>) -> Option<u16> {
        let (SampleKind::CallStack, Some(progid)) = (s.kind(), s.progid) else {
            return None;
        };
        if s.count == 0 {
            return None;
        }
        let total = self.totals.entry(progid).or_default();
        total.0 += 1;
        total.1 += s.hits;
        Some(progid)
    }

    /// Renumbers the binaries: `progid` becomes `to(progid)`.
    pub fn renumber(self, to: impl Fn(u16) -> u16) -> StackCounts {
        let mut out = StackCounts::default();
        for (progid, (records, hits)) in self.totals {
            let total = out.totals.entry(to(progid)).or_default();
            total.0 += records;
            total.1 += hits;
        }
        let mut stack = Vec::new();
        for (stored, hits) in self.stacks.iter() {
            stack.clear();
            stack.extend_from_slice(&to(LE::read_u16(&stored[..2])).to_le_bytes());
            stack.extend_from_slice(&stored[2..]);
            out.stacks.add(&stack, hits);
        }
        out
    }

    /// Adds what `other` counted.
    pub fn absorb(&mut self, other: StackCounts) {
        for (progid, (records, hits)) in other.totals {
            let total = self.totals.entry(progid).or_default();
            total.0 += records;
            total.1 += hits;
        }
        for (stack, hits) in other.stacks.iter() {
            self.stacks.add(stack, hits);
        }
    }

    /// Calls `f` with every unique stack: its progid, its frames as stored, and its hits.
    pub fn for_each(&self, mut f: impl FnMut(u16, &[u32], u128)) {
        let mut frames: Vec<u32> = Vec::new();
        for (progid, stored, hits) in self.raw() {
            frames.clear();
            frames.extend(stored.chunks_exact(4).map(LE::read_u32));
            f(progid, &frames, hits);
        }
    }

    /// Every unique stack without copying it: its progid, its frames as stored (little-endian
    /// RVAs, 4 bytes each), and its hits, in the order first counted.
    pub fn raw(&self) -> impl Iterator<Item = (u16, &[u8], u128)> + '_ {
        (0..self.unique()).map(|i| self.get(i))
    }

    /// Unique stack `i` (below [`StackCounts::unique`]), as [`StackCounts::raw`] gives it.
    pub fn get(&self, i: usize) -> (u16, &[u8], u128) {
        let (stack, hits) = self.stacks.get(i);
        (LE::read_u16(&stack[..2]), &stack[2..], hits)
    }

    /// The binaries with call stacks, and the records and hits of each, in progid order.
    pub fn totals(&self) -> impl Iterator<Item = (u16, u64, u128)> + '_ {
        self.totals
            .iter()
            .map(|(&p, &(records, hits))| (p, records, hits))
    }

    /// Lets go of what finds a stack to count it, while the stacks are only read; it is made
    /// again if one is counted after.
    pub fn let_go_of_index(&mut self) {
        self.stacks.let_go_of_index();
    }

    /// How many unique (binary, stack) entries are held.
    pub fn unique(&self) -> usize {
        self.stacks.len()
    }

    /// The stacks by key, per binary: each unique address is looked up once, by `namers`
    /// (with inline frames, an address in inlined code is the chain of keys it gives).
    ///
    /// With two cores, about half the binaries are folded on a second thread
    /// ([`StackCounts::second_share`]): each binary's stacks are folded by one thread, in the
    /// same order and with the same numbers as by one thread alone, so the profile is the same.
    pub fn profile(&self, order: StackOrder, tables: &Tables, namers: &Namers<'_>) -> StackProfile {
        self.profile_shared(order, tables, namers, &self.second_share())
    }

    /// [`StackCounts::profile`], the binaries `theirs` holds folded on a second thread.
    fn profile_shared(
        &self,
        order: StackOrder,
        tables: &Tables,
        namers: &Namers<'_>,
        theirs: &Share,
    ) -> StackProfile {
        // The stacks of the binaries `share` says, the last first, numbered from 1.
        let fold_share = |share: &dyn Fn(u16) -> bool| {
            let mut fold = Fold::new(order, namers);
            for (number, i) in (0..self.unique()).rev().enumerate() {
                let (progid, stored, hits) = self.get(i);
                if share(progid) {
                    fold.add(stack_number(number), progid, stored, hits);
                }
            }
            fold.finished()
        };
        let finished = std::thread::scope(|scope| {
            let second = theirs
                .any()
                .then(|| scope.spawn(|| fold_share(&|p| theirs.has(p))));
            let mut finished = fold_share(&|p| !theirs.has(p));
            if let Some(second) = second {
                finished.extend(joined(second));
                memory::give_back();
            }
            finished
        });
        profile_of(finished, tables, &self.totals)
    }

    /// [`StackCounts::profile`], letting go of each stack as decoded once it is folded: the
    /// stacks by key take the room the decoded ones give back.
    pub fn into_profile(
        self,
        order: StackOrder,
        tables: &Tables,
        namers: &Namers<'_>,
    ) -> StackProfile {
        let theirs = self.second_share();
        self.into_profile_shared(order, tables, namers, &theirs)
    }

    /// [`StackCounts::into_profile`], the binaries `theirs` holds folded on a second thread:
    /// their stacks are copied to it in batches as this one walks them, so that the decoded
    /// ones are let go of as they are now.
    fn into_profile_shared(
        self,
        order: StackOrder,
        tables: &Tables,
        namers: &Namers<'_>,
        theirs: &Share,
    ) -> StackProfile {
        let StackCounts { stacks, totals, .. } = self;
        let finished = std::thread::scope(|scope| {
            let (tx, rx) = sync_channel::<Handed>(IN_FLIGHT);
            let second = theirs
                .any()
                .then(|| scope.spawn(move || fold_handed(rx, order, namers)));
            let mut fold = Fold::new(order, namers);
            let mut handed = Handed::default();
            let mut stacks = stacks.into_slices().into_last_first();
            let mut walked = 0;
            while let Some((stack, hits)) = stacks.next() {
                let number = stack_number(walked);
                walked += 1;
                let progid = LE::read_u16(&stack[..2]);
                if !theirs.has(progid) {
                    fold.add(number, progid, &stack[2..], hits);
                    continue;
                }
                handed.push(number, stack, hits);
                // A second thread that stopped (it panicked) is heard of when it is joined.
                if handed.is_full() && tx.send(std::mem::take(&mut handed)).is_err() {
                    break;
                }
            }
            if !handed.stacks.is_empty() {
                // As above: an error is the second thread's panic, resumed when joined.
                let _ = tx.send(handed);
            }
            drop(tx);
            let mut finished = fold.finished();
            if let Some(second) = second {
                finished.extend(joined(second));
                memory::give_back();
            }
            finished
        });
        profile_of(finished, tables, &totals)
    }

    /// The binaries a second thread folds, when there are two cores or more and call stacks
    /// of two binaries or more: about half the bytes of the distinct stacks ([`halves`]).
    fn second_share(&self) -> Share {
        if !share::two_cores() || self.totals.len() < 2 {
            return Share::default();
        }
        let mut bytes: BTreeMap<u16, usize> = BTreeMap::new();
        for (stack, _) in self.stacks.iter() {
            *bytes.entry(LE::read_u16(&stack[..2])).or_default() += stack.len();
        }
        halves(bytes)
    }

    /// Adds the distinct addresses of the stacks of each binary with symbols to
    /// `addresses`, each with whether it is a return address.
    fn addresses(
        &self,
        order: StackOrder,
        symbols: &SymbolMap,
        addresses: &mut BTreeMap<u16, FxHashSet<(u32, bool)>>,
    ) {
        for (progid, stored, _) in self.raw() {
            if symbols.get(Some(progid)).is_none() {
                continue;
            }
            let set = addresses.entry(progid).or_default();
            let frames = stored.chunks_exact(4).map(LE::read_u32);
            let leaf_at = order.leaf(frames.len());
            set.extend(frames.enumerate().map(|(i, rva)| (rva, i != leaf_at)));
        }
    }
}

/// The namers of a profile's binaries with `/pdb` symbols, made for every address its views
/// may ask about (the call stacks' frames, the IP samples, both ends of LBR branches), so
/// that each binary's PDB is read once; with `inline`, they read the inline chains.
pub(crate) fn namers<'a>(
    stacks: &StackCounts,
    summary: Option<&Summary>,
    order: StackOrder,
    symbols: &'a SymbolMap,
    inline: bool,
) -> Namers<'a> {
    let mut addresses: BTreeMap<u16, FxHashSet<(u32, bool)>> = BTreeMap::new();
    if inline && !symbols.is_empty() {
        stacks.addresses(order, symbols, &mut addresses);
        let progids = summary
            .into_iter()
            .flat_map(|s| s.progids().map(move |p| (s, p)));
        for (summary, progid) in progids.filter(|&(_, p)| symbols.get(Some(p)).is_some()) {
            let set = addresses.entry(progid).or_default();
            for t in summary.ip_tables(progid) {
                set.extend(t.iter().map(|(rva, _)| (rva, false)));
            }
            if let Some(t) = summary.lbr(progid) {
                set.extend(
                    t.iter()
                        .flat_map(|([from, to], _)| [(from, false), (to, false)]),
                );
            }
        }
    }
    Namers::new(symbols, inline, addresses)
}

/// The samples of every binary as [`flat`] stacks, in progid order: per IP event, then the
/// targets of LBR branches (where control went), named by `namers`; only the sources `keep`
/// keeps.
pub(crate) fn sampled(
    counted: &Counted<'_>,
    namers: &Namers<'_>,
    keep: impl Fn(SampleKind) -> bool,
) -> Vec<BinaryStacks> {
    let mut out = Vec::new();
    each_sampled(counted, namers, keep, |b| out.push(b));
    out
}

/// Calls `visit` with the samples of each binary and source as [`flat`] stacks, in the
/// order of [`sampled`], one at a time: what a view does not keep is let go before the next
/// is made.
pub(crate) fn each_sampled(
    counted: &Counted<'_>,
    namers: &Namers<'_>,
    keep: impl Fn(SampleKind) -> bool,
    mut visit: impl FnMut(BinaryStacks),
) {
    for progid in counted.summary.progids() {
        each_sampled_of(counted, namers, progid, &keep, &mut visit);
    }
}

/// [`each_sampled`] for the binary `progid` alone.
pub(crate) fn each_sampled_of(
    counted: &Counted<'_>,
    namers: &Namers<'_>,
    progid: u16,
    keep: impl Fn(SampleKind) -> bool,
    mut visit: impl FnMut(BinaryStacks),
) {
    let summary = counted.summary;
    let name = counted.tables.binary_name(progid);
    let namer = namers.get(progid);
    for t in summary.ip_tables(progid).filter(|t| keep(t.source())) {
        let records = t.records();
        visit(flat(
            progid,
            name.clone(),
            t.source(),
            records,
            t.iter(),
            true,
            namer,
        ));
    }
    if let Some(t) = summary.lbr(progid).filter(|t| keep(t.source())) {
        let targets = t.iter().map(|([_, to], hits)| (to, hits));
        visit(flat(
            progid,
            name.clone(),
            t.source(),
            t.records(),
            targets,
            false,
            namer,
        ));
    }
}

/// The samples of one binary and source, each a stack of one address: its chain of keys,
/// outermost first (with inline frames, its function and what was inlined there). What
/// `/functions` and flame graphs show of samples without call stacks.
///
/// `distinct`: no address of `samples` comes twice (an IP event's table; the targets of LBR
/// branches do). Then, without symbols, each address is a key of its own.
pub(crate) fn flat(
    progid: u16,
    name: String,
    source: SampleKind,
    records: u64,
    samples: impl Iterator<Item = (u32, u128)>,
    distinct: bool,
    namer: &Namer<'_>,
) -> BinaryStacks {
    if distinct && namer.is_plain() {
        return flat_plain(progid, name, source, records, samples);
    }
    let mut folding = Folding::new(namer);
    let mut hits = 0;
    // The addresses of a table are distinct: each is looked up once, nothing kept for a
    // second time. Most chains are one key (no inline frames): their hits go by key.
    let mut by_key: Vec<u128> = Vec::new();
    for (rva, h) in samples {
        hits += h;
        let (start, end) = folding.look_up(rva, false);
        let path = &folding.chains[start as usize..end as usize];
        if let [k] = *path {
            let k = k as usize;
            if by_key.len() <= k {
                by_key.resize(k + 1, 0);
            }
            by_key[k] += h;
        } else {
            folding.stacks.add(path, h);
        }
        // The chain is not needed again.
        folding.chains.truncate(start as usize);
    }
    // One-key stacks come in key order; the rest (few: addresses in inlined code) are sorted
    // and merged in, each before the first one-key stack that sorts after it.
    let mut longer: Vec<(Vec<u32>, u128)> = folding
        .stacks
        .iter()
        .map(|(path, h)| (path.to_vec(), h))
        .collect();
    longer.sort_unstable();
    let mut stacks = Paths::room_for(&by_key, &longer);
    let mut longer = longer.into_iter().peekable();
    for (k, &h) in by_key.iter().enumerate().filter(|&(_, &h)| h > 0) {
        let k = [k as u32];
        while let Some((path, h)) = longer.next_if(|(path, _)| path[..] < k[..]) {
            stacks.push(&path, h);
        }
        stacks.push(&k, h);
    }
    longer.for_each(|(path, h)| stacks.push(&path, h));
    BinaryStacks {
        progid,
        name,
        source,
        records,
        hits,
        keys: folding.keys,
        stacks,
    }
}

/// [`flat`] of distinct addresses without symbols: each address is a key, numbered in the
/// order they come, as [`Folding::look_up`] would number them, without a table of the keys
/// known: none comes twice.
fn flat_plain(
    progid: u16,
    name: String,
    source: SampleKind,
    records: u64,
    samples: impl Iterator<Item = (u32, u128)>,
) -> BinaryStacks {
    let (mut keys, mut by_key) = (Vec::new(), Vec::new());
    for (rva, h) in samples {
        keys.push(FrameKey::address(rva));
        by_key.push(h);
    }
    let mut stacks = Paths::room_for(&by_key, &[]);
    for (k, &h) in by_key.iter().enumerate().filter(|&(_, &h)| h > 0) {
        stacks.push(&[k as u32], h);
    }
    BinaryStacks {
        progid,
        name,
        source,
        records,
        hits: by_key.iter().sum(),
        keys,
        stacks,
    }
}

/// How many batches of stacks are on their way to the second thread at most.
const IN_FLIGHT: usize = 4;

/// Stacks as decoded handed to the second thread, each with its number (counted from the
/// last) and its hits, their bytes one after another.
#[derive(Default)]
struct Handed {
    bytes: Vec<u8>,
    /// Per stack: its number, where its bytes end, its hits.
    stacks: Vec<(NonZeroU32, usize, u128)>,
}

impl Handed {
    /// The bytes of a batch sent once they are reached.
    const FULL: usize = 1 << 16;

    fn push(&mut self, number: NonZeroU32, stack: &[u8], hits: u128) {
        self.bytes.extend_from_slice(stack);
        self.stacks.push((number, self.bytes.len(), hits));
    }

    fn is_full(&self) -> bool {
        self.bytes.len() >= Self::FULL
    }

    fn iter(&self) -> impl Iterator<Item = (NonZeroU32, &[u8], u128)> + '_ {
        let starts = std::iter::once(0).chain(self.stacks.iter().map(|&(_, end, _)| end));
        starts
            .zip(&self.stacks)
            .map(|(start, &(number, end, hits))| (number, &self.bytes[start..end], hits))
    }
}

/// Folds the stacks handed over on `rx` until it is closed: the second thread's part of
/// [`StackCounts::into_profile`].
fn fold_handed(
    rx: Receiver<Handed>,
    order: StackOrder,
    namers: &Namers<'_>,
) -> BTreeMap<u16, (Vec<FrameKey>, Paths)> {
    let mut fold = Fold::new(order, namers);
    for handed in rx {
        for (number, stack, hits) in handed.iter() {
            fold.add(number, LE::read_u16(&stack[..2]), &stack[2..], hits);
        }
    }
    fold.finished()
}

/// The number of the stack `i`-th from the last (from 0), counted from 1, as [`Fold::add`]
/// takes it: a key's first place is (0, 0) until a stack shows it.
fn stack_number(i: usize) -> NonZeroU32 {
    u32::try_from(i + 1)
        .ok()
        .and_then(NonZeroU32::new)
        .expect("fewer than 2^32 stacks: each is a slice of the index")
}

/// The stacks of each binary by key, with its call-stack records and hits in `totals`.
fn profile_of(
    finished: BTreeMap<u16, (Vec<FrameKey>, Paths)>,
    tables: &Tables,
    totals: &BTreeMap<u16, (u64, u128)>,
) -> StackProfile {
    let binaries = finished
        .into_iter()
        .map(|(progid, (keys, stacks))| {
            let (records, hits) = totals.get(&progid).copied().unwrap_or_default();
            BinaryStacks {
                progid,
                name: tables.binary_name(progid),
                source: SampleKind::CallStack,
                records,
                hits,
                keys,
                stacks,
            }
        })
        .collect();
    StackProfile { binaries }
}

/// The call stacks of a trace while they are folded by key, the last first (so that the
/// decoded ones can be let go of as they go), their keys numbered at the end as the trace
/// first shows them.
struct Fold<'n, 'a> {
    order: StackOrder,
    namers: &'n Namers<'a>,
    binaries: BTreeMap<u16, Folding<'n, 'a>>,
    /// The frames of the stack being folded, and its keys: kept to reuse their allocations.
    frames: Vec<u32>,
    path: Vec<u32>,
}

impl<'n, 'a> Fold<'n, 'a> {
    fn new(order: StackOrder, namers: &'n Namers<'a>) -> Fold<'n, 'a> {
        Fold {
            order,
            namers,
            binaries: BTreeMap::new(),
            frames: Vec::new(),
            path: Vec::new(),
        }
    }

    /// Folds a stack of `progid` as stored, with its hits: the `number`-th counted from the
    /// last (from 1), in the trace's order of every binary's stacks.
    fn add(&mut self, number: NonZeroU32, progid: u16, stored: &[u8], hits: u128) {
        let Fold {
            order,
            namers,
            frames,
            path,
            ..
        } = self;
        let folding = self
            .binaries
            .entry(progid)
            .or_insert_with(|| Folding::new(namers.get(progid)));
        frames.clear();
        frames.extend(stored.chunks_exact(4).map(LE::read_u32));
        let leaf_at = order.leaf(frames.len());
        folding.prefetch(frames, leaf_at);
        // Outermost first, the leaf last, whatever the stored order.
        path.clear();
        let mut visit = |i: usize| {
            let chain = folding.chain(frames[i], i != leaf_at);
            path.extend_from_slice(chain);
        };
        match order {
            StackOrder::LeafFirst => (0..frames.len()).rev().for_each(&mut visit),
            StackOrder::RootFirst => (0..frames.len()).for_each(&mut visit),
        }
        folding.met(number.get(), path);
        folding.stacks.add(path, hits);
    }

    /// The keys and the stacks by key of each binary.
    fn finished(self) -> BTreeMap<u16, (Vec<FrameKey>, Paths)> {
        self.binaries
            .into_iter()
            .map(|(progid, folding)| (progid, folding.finish()))
            .collect()
    }
}

/// In [`Folding::index`], what marks an address with a chain of several keys (the index
/// holds values below 2^31 - 1).
const LONG: u32 = 1 << 30;

/// In [`Folding::index`], the value of the `i`-th chain of several keys: [`LONG`] and `i`.
fn long(i: usize) -> u32 {
    let i = u32::try_from(i).ok().filter(|&i| i < LONG - 1);
    LONG | i.expect("fewer than 2^30 chains: each holds a key's memory")
}

/// One binary's keys and stacks while they are folded.
struct Folding<'n, 'a> {
    namer: &'n Namer<'a>,
    keys: Vec<FrameKey>,
    /// (address as stored, whether it is a return address) to its keys: the index of its
    /// one key, or [`LONG`] and where in `long` its chain of several is.
    index: AddressIndex,
    /// The chains of several keys (with inline frames), as ranges of `chains`.
    long: Vec<(u32, u32)>,
    /// The chains of keys, outermost first, one after another.
    chains: Vec<u32>,
    /// The chain of one key last asked for.
    one: [u32; 1],
    /// What identifies each key to its index: the keys, once each.
    known: FxHashMap<KeyId, u32>,
    /// Per key, where the trace first shows it as far as folded: the stack (counted from
    /// the last) and the place in it.
    first: Vec<(u32, u32)>,
    stacks: SliceCounts<u32>,
    /// The key ids of the address being looked up, kept to reuse the allocation.
    scratch: Vec<KeyId>,
}

impl<'n, 'a> Folding<'n, 'a> {
    fn new(namer: &'n Namer<'a>) -> Folding<'n, 'a> {
        Folding {
            namer,
            keys: Vec::new(),
            index: AddressIndex::default(),
            long: Vec::new(),
            chains: Vec::new(),
            one: [0],
            known: FxHashMap::default(),
            first: Vec::new(),
            stacks: SliceCounts::default(),
            scratch: Vec::new(),
        }
    }

    /// Asks for the index's slot of every frame of a stack, the leaf at `leaf_at`, before
    /// the first is looked up: their misses overlap.
    fn prefetch(&self, frames: &[u32], leaf_at: usize) {
        for (i, &rva) in frames.iter().enumerate() {
            self.index.prefetch(rva, i != leaf_at);
        }
    }

    /// The indices of the keys of `rva` (a return address when `returns`), outermost
    /// first: one key, or with inline frames, the function and what was inlined there.
    fn chain(&mut self, rva: u32, returns: bool) -> &[u32] {
        let found = match self.index.get(rva, returns) {
            Some(found) => found,
            None => {
                let (start, end) = self.look_up(rva, returns);
                let found = match self.chains[start as usize..end as usize] {
                    [k] if k < LONG => {
                        self.chains.truncate(start as usize);
                        k
                    }
                    _ => {
                        let found = long(self.long.len());
                        self.long.push((start, end));
                        found
                    }
                };
                self.index.insert(rva, returns, found);
                found
            }
        };
        if found & LONG == 0 {
            self.one = [found];
            &self.one
        } else {
            let (start, end) = self.long[(found & !LONG) as usize];
            &self.chains[start as usize..end as usize]
        }
    }

    /// Looks the keys of `rva` up, appends their chain to `chains`, and gives its range.
    fn look_up(&mut self, rva: u32, returns: bool) -> (u32, u32) {
        let mut ids = std::mem::take(&mut self.scratch);
        ids.clear();
        self.namer.ids(rva, returns, &mut ids);
        // The function holding the address, for the RVA inlined keys are shown at.
        let outer = match ids.first() {
            Some(&KeyId::Function(start)) => start,
            _ => rva,
        };
        let start = self.chains.len() as u32;
        for (depth, &id) in ids.iter().enumerate() {
            // Two addresses in one function share its key; an address, as leaf and as
            // return address, is one key; an inlined function is one key, whatever
            // it was inlined into (shown at the lowest of those).
            let k = match self.known.entry(id) {
                Entry::Occupied(e) => {
                    let k = *e.get();
                    let known = &mut self.keys[k as usize];
                    known.rva = known.rva.min(outer);
                    k
                }
                Entry::Vacant(e) => {
                    let k = self.keys.len() as u32;
                    e.insert(k);
                    self.keys.push(self.namer.key(rva, returns, depth));
                    self.first.push((0, 0));
                    k
                }
            };
            self.chains.push(k);
        }
        self.scratch = ids;
        (start, self.chains.len() as u32)
    }

    /// Marks where the keys of `path`, the `folded`-th stack counted from the last, are first
    /// shown: its first place of each, unless a stack before it shows it.
    fn met(&mut self, folded: u32, path: &[u32]) {
        for (at, &k) in path.iter().enumerate() {
            let first = &mut self.first[k as usize];
            if first.0 < folded {
                *first = (folded, at as u32);
            }
        }
    }

    /// The keys, numbered as the trace first shows them, and the stacks by those numbers.
    fn finish(self) -> (Vec<FrameKey>, Paths) {
        let first = &self.first;
        let mut order: Vec<u32> = (0..first.len() as u32).collect();
        order.sort_unstable_by_key(|&k| (Reverse(first[k as usize].0), first[k as usize].1));
        let mut number = vec![0; order.len()];
        for (new, &old) in order.iter().enumerate() {
            number[old as usize] = new as u32;
        }
        let mut keys: Vec<(u32, FrameKey)> = self
            .keys
            .into_iter()
            .enumerate()
            .map(|(old, key)| (number[old], key))
            .collect();
        keys.sort_unstable_by_key(|&(new, _)| new);
        let keys = keys.into_iter().map(|(_, key)| key).collect();
        (keys, Paths::sorted(self.stacks, &number))
    }
}

/// The call stacks of a trace by key, per binary in progid order.
#[derive(Debug, Default)]
pub(crate) struct StackProfile {
    /// The binaries with call stacks.
    pub binaries: Vec<BinaryStacks>,
}

/// One binary's call stacks.
#[derive(Debug)]
pub(crate) struct BinaryStacks {
    /// Its program ID.
    pub progid: u16,
    /// Its name, as keys use it.
    pub name: String,
    /// What the stacks are: call stacks, or the samples of an IP event or the targets of
    /// LBR branches, one address each ([`flat`]).
    pub source: SampleKind,
    /// Call-stack records with at least one frame (or the source's records).
    pub records: u64,
    /// Their summed hits.
    pub hits: u128,
    /// The keys, which the stacks index.
    pub keys: Vec<FrameKey>,
    /// The stacks by key, outermost frame first, each with its hits; sorted by keys.
    pub stacks: Paths,
}

/// Distinct stacks of keys, outermost frame first, each with its hits, their keys one after
/// another in one vector: a stack of one key (an IP sample's address) takes 28 bytes, where
/// a vector of its own would take a heap block besides. Stacks folded in any order are
/// sorted by a permutation, not moved.
#[derive(Debug, Default)]
pub(crate) struct Paths {
    stacks: Slices<u32>,
    /// The stacks in order, as indices into `stacks`; empty when they are stored in order.
    order: Vec<usize>,
}

impl Paths {
    /// Room for the stacks of a flat profile: one per key with hits in `by_key`, and the
    /// `longer` ones. What is reserved changes memory alone.
    fn room_for(by_key: &[u128], longer: &[(Vec<u32>, u128)]) -> Paths {
        let singles = by_key.iter().filter(|&&h| h > 0).count();
        Paths {
            stacks: Slices::with_capacity(singles + longer.len()),
            order: Vec::new(),
        }
    }

    /// The distinct stacks of `stacks`, their key `k` renumbered `number[k]`, sorted by keys.
    fn sorted(stacks: SliceCounts<u32>, number: &[u32]) -> Paths {
        let mut stacks = stacks.into_slices();
        stacks.map_items(|k| number[k as usize]);
        let mut order: Vec<usize> = (0..stacks.len()).collect();
        order.sort_unstable_by(|&a, &b| stacks.get(a).0.cmp(stacks.get(b).0));
        Paths { stacks, order }
    }

    /// Appends a stack that sorts after those before it.
    fn push(&mut self, path: &[u32], hits: u128) {
        self.stacks.push(path, hits);
    }

    /// Where the `i`-th stack in order is stored.
    fn at(&self, i: usize) -> usize {
        if self.order.is_empty() {
            i
        } else {
            self.order[i]
        }
    }

    /// How many stacks there are.
    pub fn len(&self) -> usize {
        self.stacks.len()
    }

    /// Stack `i`: its keys and hits.
    pub fn get(&self, i: usize) -> (&[u32], u128) {
        self.stacks.get(self.at(i))
    }

    /// Every stack, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&[u32], u128)> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The summed hits of the stacks in `range`.
    pub fn hits(&self, range: std::ops::Range<usize>) -> u128 {
        range.map(|i| self.stacks.hits(self.at(i))).sum()
    }
}

impl BinaryStacks {
    /// The name of key `k`.
    pub fn key_name(&self, k: u32) -> String {
        self.keys[k as usize].name(&self.name)
    }
}

impl StackProfile {
    /// Whether no binary has a call stack.
    pub fn is_empty(&self) -> bool {
        self.binaries.is_empty()
    }

    /// The folded stacks (docs/output.md): `outer;...;leaf hits`, one line per distinct stack of
    /// names (two functions of one name fold together), sorted by byte value.
    pub fn folded(&self) -> Vec<(String, u128)> {
        self.folded_lines().to_vec()
    }

    /// The same lines, each made when it is written.
    pub fn folded_lines(&self) -> Folded<'_> {
        fold(self.binaries.iter(), false, None)
    }

    /// The folded stacks a flame graph draws: as [`StackProfile::folded`], but the stacks
    /// through a frame whose hits are less than one `parts`-th of all the hits (too narrow
    /// to be drawn, and so everything above it) end at that frame, as one line: every frame
    /// drawn keeps its place, width and count. Far fewer, shorter lines for a profile of
    /// many deep, distinct stacks.
    pub fn drawn(&self, parts: u128) -> Vec<(String, u128)> {
        fold(self.binaries.iter(), false, Some(parts)).to_vec()
    }
}

/// The hits of each binary's samples without call stacks, per source: what [`sampled`]
/// makes stacks of, read from the summary's totals.
pub(crate) fn sources(summary: &Summary) -> impl Iterator<Item = (SampleKind, u128)> + '_ {
    summary.progids().flat_map(|p| {
        let ip = summary.ip_tables(p).map(|t| (t.source(), t.total()));
        ip.chain(summary.lbr(p).map(|t| (t.source(), t.total())))
    })
}

/// Of `sources` (each a source and hits, as [`sources`] gives them, or the sources of
/// `sampled` stacks), the one with the most hits over all binaries, IP events first (of
/// equal hits, the first in opcode order), LBR branch targets only without IP samples;
/// `None` without samples.
pub(crate) fn busiest(sources: impl Iterator<Item = (SampleKind, u128)>) -> Option<SampleKind> {
    let mut hits: BTreeMap<SampleKind, u128> = BTreeMap::new();
    for (source, h) in sources.filter(|&(_, h)| h > 0) {
        *hits.entry(source).or_default() += h;
    }
    let ip = hits
        .iter()
        .filter(|(s, _)| matches!(s, SampleKind::Ip(_)))
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)));
    match ip {
        Some((&source, _)) => Some(source),
        None => hits.keys().next().copied(),
    }
}

/// The folded stacks of the `source` stacks of `sampled`, each under a frame named for its
/// binary: for a flame graph of samples without call stacks.
pub(crate) fn folded_by_binary(
    sampled: &[BinaryStacks],
    source: SampleKind,
    parts: Option<u128>,
) -> Vec<(String, u128)> {
    fold(sampled.iter().filter(|b| b.source == source), true, parts).to_vec()
}

/// Folds the stacks of `binaries` by name, each under its binary's name when `under_binary`;
/// with `parts`, without the frames of less than one `parts`-th of all the hits
/// ([`StackProfile::drawn`]).
fn fold<'b>(
    binaries: impl Iterator<Item = &'b BinaryStacks> + Clone,
    under_binary: bool,
    parts: Option<u128>,
) -> Folded<'b> {
    let total: u128 = binaries.clone().map(|b| b.hits).sum();
    let visible = |hits: u128| match parts {
        Some(parts) => hits.checked_mul(parts).is_none_or(|h| h >= total),
        None => true,
    };
    let mut folded = Folded::default();
    for (binary, b) in binaries.enumerate() {
        let names: Vec<String> = b.keys.iter().map(|k| k.frame_name(&b.name)).collect();
        // Narrow frames are left out by key, which is only leaving them out by name when no
        // two keys have one name (else their frames are one, whose width is their sum).
        let unique = names.iter().collect::<FxHashSet<_>>().len() == names.len();
        let narrow = match parts.is_some() && unique {
            true => narrow_frames(&b.stacks, visible),
            false => Vec::new(),
        };
        let mut narrow = narrow.into_iter().peekable();
        let mut i = 0;
        while i < b.stacks.len() {
            let (keys, mut hits) = b.stacks.get(i);
            let mut kept = keys.len();
            let stack = i;
            i += 1;
            if let Some(&(start, end, depth)) = narrow.peek()
                && start == stack
            {
                // The stacks through a narrow frame, as one line ending there: in its place
                // among its siblings, with its width, and drawn no more than before.
                narrow.next();
                hits = b.stacks.hits(start..end);
                kept = depth + 1;
                i = end;
            }
            folded.lines.push(Line {
                binary,
                stack,
                kept,
                hits,
                leading: 0,
            });
        }
        // A line starts with its binary's name, unless that is empty.
        let under = Some(b.name.as_str()).filter(|n| under_binary && !n.is_empty());
        folded.binaries.push(FoldedBinary {
            stacks: &b.stacks,
            names,
            under,
        });
    }
    folded.sort();
    folded
}

/// Folded stacks, each line made when it is asked for: a stack of one binary (or its
/// frames a flame graph draws) by name, the lines in byte order, equal ones summed. A
/// line's text is not held: deep stacks make long lines, and many.
#[derive(Default)]
pub(crate) struct Folded<'b> {
    binaries: Vec<FoldedBinary<'b>>,
    lines: Vec<Line>,
}

/// A binary's stacks and the names of their keys.
struct FoldedBinary<'b> {
    stacks: &'b Paths,
    names: Vec<String>,
    /// The binary's name, first on each line, when the lines are under it.
    under: Option<&'b str>,
}

/// A line: its binary's `stack`-th stack, its first `kept` frames, with `hits`.
#[derive(Clone, Copy)]
struct Line {
    binary: usize,
    stack: usize,
    kept: usize,
    hits: u128,
    /// The places of its first two pieces, in the high and low halves (the second's + 1, 0
    /// for none), when the lines are sorted by places: many lines differ there, and compare
    /// without reading their stacks.
    leading: u64,
}

impl<'b> Folded<'b> {
    /// The names a line is made of, to be joined by `;`.
    fn parts<'s>(binaries: &'s [FoldedBinary<'b>], l: &Line) -> impl Iterator<Item = &'s str> {
        let b = &binaries[l.binary];
        let (keys, _) = b.stacks.get(l.stack);
        let names = keys[..l.kept].iter().map(|&k| b.names[k as usize].as_str());
        b.under.into_iter().chain(names)
    }

    /// Puts the lines in the byte order of their text and sums the equal ones: by the places
    /// of their pieces ([`joined::places`]), or, when a name is empty or holds a `;`, byte by byte.
    fn sort(&mut self) {
        let Folded { binaries, lines } = self;
        // Every binary's name, if its lines start with it, then its keys' names; per binary,
        // where its own start and whether the first is its name.
        let mut names: Vec<&str> = Vec::new();
        let mut starts: Vec<(usize, bool)> = Vec::with_capacity(binaries.len());
        for b in binaries.iter() {
            starts.push((names.len(), b.under.is_some()));
            names.extend(b.under);
            names.extend(b.names.iter().map(String::as_str));
        }
        let Some(places) = joined::places(&names) else {
            let binaries = &*binaries;
            return sort_and_sum(lines, |a, b| {
                joined_cmp(Self::parts(binaries, a), Self::parts(binaries, b))
            });
        };
        drop(names);
        let line = |l: &Line| {
            let (start, under) = starts[l.binary];
            let under = under.then(|| places[start]);
            let keys = &places[start + usize::from(under.is_some())..];
            let (stack, _) = binaries[l.binary].stacks.get(l.stack);
            let names = under
                .into_iter()
                .chain(stack[..l.kept].iter().map(|&k| keys[k as usize]));
            joined::line(names, usize::from(under.is_some()) + l.kept)
        };
        for l in lines.iter_mut() {
            l.leading = leading(line(l));
        }
        sort_and_sum(lines, |a, b| {
            a.leading.cmp(&b.leading).then_with(|| line(a).cmp(line(b)))
        });
    }

    /// Calls `f` with each line, in order: its text (`outer;...;leaf`) and hits.
    pub fn try_for_each<E>(&self, mut f: impl FnMut(&str, u128) -> Result<(), E>) -> Result<(), E> {
        let mut text = String::new();
        for l in &self.lines {
            text.clear();
            for (i, part) in Self::parts(&self.binaries, l).enumerate() {
                if i > 0 {
                    text.push(';');
                }
                text.push_str(part);
            }
            f(&text, l.hits)?;
        }
        Ok(())
    }

    /// Every line, made.
    pub fn to_vec(&self) -> Vec<(String, u128)> {
        let mut lines = Vec::with_capacity(self.lines.len());
        let made: Result<(), std::convert::Infallible> = self.try_for_each(|text, hits| {
            lines.push((text.to_owned(), hits));
            Ok(())
        });
        let Ok(()) = made;
        lines
    }
}

/// The places of a line's first two pieces, for [`Line::leading`]: the first in the high
/// half, the second's + 1 in the low one, or 0 when there is none. Lines compare as these do,
/// where they differ (the + 1 saturates: a tie sends the comparison on to the whole lines).
fn leading(mut pieces: impl Iterator<Item = u32>) -> u64 {
    let first = pieces.next().unwrap_or_default();
    let second = pieces.next().map_or(0, |p| p.saturating_add(1));
    u64::from(first) << 32 | u64::from(second)
}

/// Sorts `lines` by `cmp` and sums the hits of equal ones into the first.
fn sort_and_sum(lines: &mut Vec<Line>, cmp: impl Fn(&Line, &Line) -> std::cmp::Ordering) {
    lines.sort_unstable_by(&cmp);
    lines.dedup_by(|next, kept| {
        let equal = cmp(kept, next).is_eq();
        if equal {
            kept.hits += next.hits;
        }
        equal
    });
}

/// The outermost frames that are not `visible` in `stacks` (sorted by path: each frame's
/// stacks are consecutive), each as the range of its stacks and its depth, in order.
fn narrow_frames(stacks: &Paths, visible: impl Fn(u128) -> bool) -> Vec<(usize, usize, usize)> {
    // The frames of the current path, outermost first: where their stacks start, and the
    // hits so far.
    let mut open: Vec<(usize, u128)> = Vec::new();
    let mut narrow: Vec<(usize, usize, usize)> = Vec::new();
    // Closes the frames deeper than `depth`, their stacks ending before `end`. A frame closes
    // after the frames under it: a narrow one takes their place in `narrow`.
    let mut close = |open: &mut Vec<(usize, u128)>, depth: usize, end: usize| {
        while open.len() > depth {
            let at = open.len() - 1;
            let (start, hits) = open.pop().unwrap_or_default();
            if !visible(hits) {
                while narrow.last().is_some_and(|&(s, _, _)| s >= start) {
                    narrow.pop();
                }
                narrow.push((start, end, at));
            }
        }
    };
    let mut previous: &[u32] = &[];
    for (i, (path, hits)) in stacks.iter().enumerate() {
        let common = previous
            .iter()
            .zip(path)
            .take_while(|(a, b)| a == b)
            .count();
        close(&mut open, common, i);
        open.extend((common..path.len()).map(|_| (i, 0)));
        for frame in &mut open {
            frame.1 += hits;
        }
        previous = path;
    }
    close(&mut open, 0, stacks.len());
    narrow
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::keys::plain;

    fn le(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn stack(counts: &mut StackCounts, progid: Option<u16>, hits: u128, frames: &[u32]) {
        let payload = le(frames);
        counts.add(&Samples {
            offset: 0,
            opcode: crate::format::opcode::Opcode::ETW_CALLSTACK,
            progid,
            hits,
            count: frames.len() as u8,
            payload: &payload,
        });
    }

    fn folded(counts: &StackCounts, order: StackOrder) -> Vec<(String, u128)> {
        counts.profile(order, &Tables::default(), &plain()).folded()
    }

    #[test]
    fn stacks_fold_outermost_first_by_address() {
        let mut c = StackCounts::default();
        stack(&mut c, Some(0), 2, &[0x10, 0x20, 0x30]);
        stack(&mut c, Some(0), 3, &[0x10, 0x20, 0x30]);
        stack(&mut c, Some(0), 1, &[0x11]);
        stack(&mut c, Some(1), 4, &[0x10, 0x20]);
        assert_eq!(c.unique(), 3, "one entry per unique (binary, stack)");
        assert_eq!(
            folded(&c, StackOrder::LeafFirst),
            [
                ("progid 0+0x11".to_owned(), 1),
                ("progid 0+0x30;progid 0+0x20;progid 0+0x10".to_owned(), 5),
                ("progid 1+0x20;progid 1+0x10".to_owned(), 4),
            ]
        );
        assert_eq!(
            folded(&c, StackOrder::RootFirst)[0],
            ("progid 0+0x10;progid 0+0x20;progid 0+0x30".to_owned(), 5)
        );
    }

    #[test]
    fn keys_are_numbered_as_the_trace_first_shows_them() {
        let mut c = StackCounts::default();
        // Leaf first: 0x30 calls 0x10, which calls 0x30; 0x30 calls 0x20; then 0x05 alone,
        // and 0x10.
        stack(&mut c, Some(0), 1, &[0x30, 0x10, 0x30]);
        stack(&mut c, Some(0), 2, &[0x20, 0x30]);
        stack(&mut c, Some(0), 3, &[0x05]);
        stack(&mut c, Some(0), 4, &[0x10]);
        let profiles = [
            c.profile(StackOrder::LeafFirst, &Tables::default(), &plain()),
            c.into_profile(StackOrder::LeafFirst, &Tables::default(), &plain()),
        ];
        for profile in profiles {
            let binary = &profile.binaries[0];
            let rvas: Vec<u32> = binary.keys.iter().map(|k| k.rva).collect();
            assert_eq!(rvas, [0x30, 0x10, 0x20, 0x05]);
            let stacks: Vec<(Vec<u32>, u128)> =
                binary.stacks.iter().map(|(s, h)| (s.to_vec(), h)).collect();
            let want = [
                (vec![0, 1, 0], 1),
                (vec![0, 2], 2),
                (vec![1], 4),
                (vec![3], 3),
            ];
            assert_eq!(stacks, want, "sorted by those numbers");
        }
    }

    /// A binary's stacks by key as the views read them: its progid, its keys' names and its
    /// stacks.
    type LaidOut = (u16, Vec<String>, Vec<(Vec<u32>, u128)>);

    /// A profile as the views read it.
    fn laid_out(profile: &StackProfile) -> Vec<LaidOut> {
        let binaries = profile.binaries.iter();
        binaries
            .map(|b| {
                let names = b.keys.iter().map(|k| k.name(&b.name)).collect();
                let stacks = b.stacks.iter().map(|(s, h)| (s.to_vec(), h)).collect();
                (b.progid, names, stacks)
            })
            .collect()
    }

    fn share_of(progids: &[u16]) -> Share {
        let mut share = Share::default();
        progids.iter().for_each(|&p| share.add(p));
        share
    }

    /// Stacks of four binaries, interleaved, drawn from few addresses so that stacks fold
    /// together; enough of them for several batches to a second thread. The same each time.
    fn interleaved() -> StackCounts {
        let mut c = StackCounts::default();
        let mut x = 0x9E37_79B9u32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        for _ in 0..6000 {
            let progid = (next() % 4) as u16;
            let frames: Vec<u32> = (0..1 + next() % 40)
                .map(|_| 0x10 * (next() % 300))
                .collect();
            stack(&mut c, Some(progid), u128::from(next() % 7 + 1), &frames);
        }
        c
    }

    #[test]
    fn binaries_folded_on_a_second_thread_are_folded_as_by_one() {
        let c = interleaved();
        let (order, tables, namers) = (StackOrder::LeafFirst, Tables::default(), plain());
        let alone = laid_out(&c.profile_shared(order, &tables, &namers, &Share::default()));
        assert_eq!(alone.len(), 4);
        for theirs in [&[1][..], &[0, 2], &[0, 1, 2, 3], &[3, 7]] {
            let theirs = share_of(theirs);
            let shared = c.profile_shared(order, &tables, &namers, &theirs);
            assert!(laid_out(&shared) == alone, "profile with a second thread");
            let handed = interleaved().into_profile_shared(order, &tables, &namers, &theirs);
            assert!(
                laid_out(&handed) == alone,
                "into_profile with a second thread"
            );
        }
    }

    #[test]
    fn distinct_addresses_without_symbols_are_flat_as_any_others() {
        let namers = plain();
        let samples = [(0x40, 3), (0x10, 0), (0x30, 5), (0x20, 1)];
        let source = SampleKind::Ip(crate::format::opcode::Opcode::UNHALT_CYCLE);
        let [plain_way, looked_up] = [true, false].map(|distinct| {
            let b = flat(
                0,
                "a.exe".into(),
                source,
                4,
                samples.into_iter(),
                distinct,
                namers.get(0),
            );
            let keys: Vec<String> = b.keys.iter().map(|k| k.name(&b.name)).collect();
            let stacks: Vec<(Vec<u32>, u128)> =
                b.stacks.iter().map(|(s, h)| (s.to_vec(), h)).collect();
            (keys, stacks, b.hits, b.records)
        });
        assert_eq!(plain_way, looked_up);
        // Keys in the order the addresses come; a stack per key with hits.
        assert_eq!(
            plain_way.0,
            ["a.exe+0x40", "a.exe+0x10", "a.exe+0x30", "a.exe+0x20"]
        );
        assert_eq!(plain_way.1, [(vec![0], 3), (vec![2], 5), (vec![3], 1)]);
        assert_eq!(plain_way.2, 9);
        // Addresses that come twice (LBR branches' targets) are one key.
        let twice = [(0x40, 3), (0x40, 2)].into_iter();
        let b = flat(
            0,
            "a.exe".into(),
            SampleKind::Lbr,
            2,
            twice,
            false,
            namers.get(0),
        );
        assert_eq!(b.keys.len(), 1);
        assert_eq!(b.stacks.iter().map(|(_, h)| h).collect::<Vec<_>>(), [5]);
    }

    #[test]
    fn records_without_a_binary_or_frames_are_left_out() {
        let mut c = StackCounts::default();
        stack(&mut c, None, 5, &[0x10, 0x20]);
        stack(&mut c, Some(0), 5, &[]);
        assert_eq!(c.unique(), 0);
        assert!(
            c.profile(StackOrder::LeafFirst, &Tables::default(), &plain())
                .is_empty()
        );
    }

    #[test]
    fn totals_above_two_to_the_64_are_exact() {
        let max = u128::from(u64::MAX) + 1;
        let mut c = StackCounts::default();
        stack(&mut c, Some(0), max, &[1, 2]);
        stack(&mut c, Some(0), max, &[1, 2]);
        stack(&mut c, Some(0), 1, &[3]);
        let p = c.profile(StackOrder::LeafFirst, &Tables::default(), &plain());
        assert_eq!(p.binaries[0].hits, 2 * max + 1);
        assert_eq!(p.binaries[0].records, 3);
        assert_eq!(p.folded()[0].1, 2 * max);
    }

    #[test]
    fn a_flat_profile_with_inline_chains_is_sorted_and_exact() {
        use crate::format::opcode::Opcode;
        use crate::image::symbols::Symbols;
        use std::path::Path;
        use std::sync::Arc;
        let pdb = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe/inline.pdb");
        let symbols = Symbols::from_pdb(&pdb).unwrap();
        let start = |name: &str| symbols.iter().find(|f| f.name == name).unwrap().rva;
        let (digest, checksum) = (start("digest"), start("checksum"));
        // The IP samples of inline.spt; llvm-symbolizer reads them, outermost first, as
        // digest > mix > rotate, digest > mix, digest, checksum > step, checksum.
        let samples = [
            (digest + 0x3F, 300),
            (digest + 0x35, 200),
            (digest + 0x01, 50),
            (checksum + 0x30, 100),
            (checksum + 0x45, 40),
        ];
        let mut map = SymbolMap::default();
        map.attach(0, Arc::new(symbols));
        let addresses = samples.iter().map(|&(rva, _)| (rva, false)).collect();
        let namers = Namers::new(&map, true, BTreeMap::from([(0, addresses)]));
        let source = SampleKind::Ip(Opcode::UNHALT_CYCLE);
        let namer = namers.get(0);
        let b = flat(
            0,
            "inline.exe".into(),
            source,
            5,
            samples.into_iter(),
            true,
            namer,
        );
        assert_eq!(b.hits, 690);
        // Sorted by keys (the one-key stacks merged in among the longer ones), each stack
        // with its hits, none without.
        let paths: Vec<Vec<u32>> = b.stacks.iter().map(|(p, _)| p.to_vec()).collect();
        assert!(paths.is_sorted(), "{paths:?}");
        let named: Vec<(Vec<String>, u128)> = b
            .stacks
            .iter()
            .map(|(p, h)| (p.iter().map(|&k| b.key_name(k)).collect(), h))
            .collect();
        let stack = |names: &[&str], hits| {
            let names = names.iter().map(|n| format!("inline.exe!{n}")).collect();
            (names, hits)
        };
        assert_eq!(
            named,
            [
                stack(&["digest"], 50),
                stack(&["digest", "mix"], 200),
                stack(&["digest", "mix", "rotate"], 300),
                stack(&["checksum"], 40),
                stack(&["checksum", "step"], 100),
            ]
        );
        // An inlined function is shown at the start of the function it was inlined into.
        let rvas: Vec<(String, u32, bool)> = (0..b.keys.len() as u32)
            .map(|k| {
                (
                    b.key_name(k),
                    b.keys[k as usize].rva,
                    b.keys[k as usize].inlined,
                )
            })
            .collect();
        let key = |n: &str, rva, inlined| (format!("inline.exe!{n}"), rva, inlined);
        assert_eq!(
            rvas,
            [
                key("digest", digest, false),
                key("mix", digest, true),
                key("rotate", digest, true),
                key("checksum", checksum, false),
                key("step", checksum, true),
            ]
        );
    }

    #[test]
    fn a_narrow_frame_ends_its_stacks_in_its_own_place() {
        // Root first: main;a;x 50, main;b;y 3, main;b;z 2, main;c 45. At a tenth, b (5 hits)
        // is too narrow to draw: its stacks become one line that ends at b, under main.
        let mut c = StackCounts::default();
        let (main, a, b, cc, x, y, z) = (0x1, 0xA, 0xB, 0xC, 0x10, 0x11, 0x12);
        stack(&mut c, Some(0), 50, &[main, a, x]);
        stack(&mut c, Some(0), 3, &[main, b, y]);
        stack(&mut c, Some(0), 2, &[main, b, z]);
        stack(&mut c, Some(0), 45, &[main, cc]);
        let p = c.profile(StackOrder::RootFirst, &Tables::default(), &plain());
        let line = |l: &str, hits| (l.replace('.', "progid 0+0x"), hits);
        assert_eq!(
            p.drawn(10),
            [line(".1;.A;.10", 50), line(".1;.B", 5), line(".1;.C", 45),]
        );
    }

    #[test]
    fn frames_of_one_name_are_one_frame_when_narrow_frames_are_left_out() {
        // Two functions named dup, each too narrow to draw (1 hit of 100, a sixtieth is 1.7)
        // and together wide enough: the frame `dup` stays, and what was under each is kept.
        let map = crate::analysis::keys::main_and_two_dups();
        let mut c = StackCounts::default();
        stack(&mut c, Some(0), 1, &[0x400, 0x210, 0x120]);
        stack(&mut c, Some(0), 1, &[0x401, 0x310, 0x120]);
        stack(&mut c, Some(0), 98, &[0x130]);
        let order = StackOrder::LeafFirst;
        let namers = namers(&c, None, order, &map, true);
        let p = c.profile(order, &Tables::default(), &namers);
        assert_eq!(p.drawn(60), p.folded());
        assert_eq!(p.folded().len(), 3);

        // Stacks of different keys and one name are one line, their hits summed.
        let mut c = StackCounts::default();
        stack(&mut c, Some(0), 3, &[0x210, 0x120]);
        stack(&mut c, Some(0), 4, &[0x310, 0x120]);
        let p = c.profile(order, &Tables::default(), &namers);
        assert_eq!(p.folded(), [("progid 0!main;progid 0!dup".to_owned(), 7)]);
    }

    #[test]
    fn folded_lines_are_in_the_order_of_their_text_and_equal_ones_summed() {
        // `a` ends a line before `a0` does, yet `a;` sorts after `a0`: the places of a name
        // ending its line and followed by more differ. With a `;` in a name, the lines are
        // compared byte by byte instead.
        let keys: [&[u32]; 8] = [
            &[0],
            &[0, 1],
            &[0, 2],
            &[1],
            &[1, 0],
            &[2, 0, 1],
            &[0, 0],
            &[2],
        ];
        for names in [["a", "a0", "b"], ["a", "a;0", "b"], ["b", "a", "a0"]] {
            let mut paths = Paths::default();
            for (i, path) in keys.iter().enumerate() {
                paths.push(path, 1 << i);
            }
            for under in [None, Some("app.exe")] {
                let binary = |names: [&str; 3]| FoldedBinary {
                    stacks: &paths,
                    names: names.map(str::to_owned).to_vec(),
                    under,
                };
                // Two binaries, the second's names the first's in another order; lines of
                // whole stacks and of their first frame.
                let second = [names[1], names[0], names[2]];
                let mut folded = Folded {
                    binaries: vec![binary(names), binary(second)],
                    lines: Vec::new(),
                };
                let mut want: BTreeMap<String, u128> = BTreeMap::new();
                for b in 0..2 {
                    for (stack, path) in keys.iter().enumerate() {
                        for kept in [1, path.len()] {
                            let hits = 1 << (stack + 8 * b);
                            folded.lines.push(Line {
                                binary: b,
                                stack,
                                kept,
                                hits,
                                leading: 0,
                            });
                            let names = &folded.binaries[b].names;
                            let parts = under.into_iter().map(str::to_owned);
                            let parts = parts
                                .chain(path[..kept].iter().map(|&k| names[k as usize].clone()));
                            *want.entry(parts.collect::<Vec<_>>().join(";")).or_default() += hits;
                        }
                    }
                }
                folded.sort();
                let want: Vec<(String, u128)> = want.into_iter().collect();
                assert_eq!(folded.to_vec(), want, "{names:?} under {under:?}");
            }
        }
    }

    #[test]
    fn stack_orders_parse() {
        assert_eq!("Root-First".parse(), Ok(StackOrder::RootFirst));
        assert_eq!("leaf-first".parse(), Ok(StackOrder::LeafFirst));
        assert!("leaf".parse::<StackOrder>().is_err());
    }
}
