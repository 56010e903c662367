//! The call stacks folded by key: each distinct stack's frames named once per address, per
//! binary, on two threads when there are two cores.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::collections::hash_map::Entry;
use std::num::NonZeroU32;
use std::sync::mpsc::{Receiver, sync_channel};

use byteorder::{ByteOrder, LittleEndian as LE};
use rustc_hash::FxHashMap;

use super::profile::*;
use super::stacks::StackCounts;
use crate::analysis::keys::{FrameKey, KeyId, Namer, Namers};
use crate::engine::index::AddressIndex;
use crate::engine::memory;
use crate::engine::slices::SliceCounts;
use crate::engine::threads::{self, Share, halves, joined};
use crate::format::record::SampleKind;
use crate::format::stackorder::StackOrder;
use crate::format::tables::Tables;

impl StackCounts {
    /// The stacks by key, per binary: each unique address is looked up once, by `namers`
    /// (with inline frames, an address in inlined code is the chain of keys it gives).
    ///
    /// With two cores, about half the binaries are folded on a second thread
    /// ([`StackCounts::second_share`]): each binary's stacks are folded by one thread, in the
    /// same order and with the same numbers as by one thread alone, so the profile is the same.
    pub(crate) fn profile(
        &self,
        order: StackOrder,
        tables: &Tables,
        namers: &Namers<'_>,
    ) -> StackProfile {
        self.profile_shared(order, tables, namers, &self.second_share())
    }

    /// [`StackCounts::profile`], the binaries `theirs` holds folded on a second thread.
    pub(super) fn profile_shared(
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
    pub(crate) fn into_profile(
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
    pub(super) fn into_profile_shared(
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
    pub(super) fn second_share(&self) -> Share {
        if !threads::two_cores() || self.totals.len() < 2 {
            return Share::default();
        }
        let mut bytes: BTreeMap<u16, usize> = BTreeMap::new();
        for (stack, _) in self.stacks.iter() {
            *bytes.entry(LE::read_u16(&stack[..2])).or_default() += stack.len();
        }
        halves(bytes)
    }
}

/// How many batches of stacks are on their way to the second thread at most.
pub(super) const IN_FLIGHT: usize = 4;

/// Stacks as decoded handed to the second thread, each with its number (counted from the
/// last) and its hits, their bytes one after another.
#[derive(Default)]
pub(super) struct Handed {
    pub(super) bytes: Vec<u8>,
    /// Per stack: its number, where its bytes end, its hits.
    pub(super) stacks: Vec<(NonZeroU32, usize, u128)>,
}

impl Handed {
    /// The bytes of a batch sent once they are reached.
    const FULL: usize = 1 << 16;

    pub(super) fn push(&mut self, number: NonZeroU32, stack: &[u8], hits: u128) {
        self.bytes.extend_from_slice(stack);
        self.stacks.push((number, self.bytes.len(), hits));
    }

    pub(super) fn is_full(&self) -> bool {
        self.bytes.len() >= Self::FULL
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = (NonZeroU32, &[u8], u128)> + '_ {
        let starts = std::iter::once(0).chain(self.stacks.iter().map(|&(_, end, _)| end));
        starts
            .zip(&self.stacks)
            .map(|(start, &(number, end, hits))| (number, &self.bytes[start..end], hits))
    }
}

/// Folds the stacks handed over on `rx` until it is closed: the second thread's part of
/// [`StackCounts::into_profile`].
pub(super) fn fold_handed(
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
pub(super) fn stack_number(i: usize) -> NonZeroU32 {
    u32::try_from(i + 1)
        .ok()
        .and_then(NonZeroU32::new)
        .expect("fewer than 2^32 stacks: each is a slice of the index")
}

/// The stacks of each binary by key, with its call-stack records and hits in `totals`.
pub(super) fn profile_of(
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
pub(super) struct Fold<'n, 'a> {
    pub(super) order: StackOrder,
    pub(super) namers: &'n Namers<'a>,
    pub(super) binaries: BTreeMap<u16, Folding<'n, 'a>>,
    /// The frames of the stack being folded, and its keys: kept to reuse their allocations.
    pub(super) frames: Vec<u32>,
    pub(super) path: Vec<u32>,
}

impl<'n, 'a> Fold<'n, 'a> {
    pub(super) fn new(order: StackOrder, namers: &'n Namers<'a>) -> Fold<'n, 'a> {
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
    pub(super) fn add(&mut self, number: NonZeroU32, progid: u16, stored: &[u8], hits: u128) {
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
    pub(super) fn finished(self) -> BTreeMap<u16, (Vec<FrameKey>, Paths)> {
        self.binaries
            .into_iter()
            .map(|(progid, folding)| (progid, folding.finish()))
            .collect()
    }
}

/// In [`Folding::index`], what marks an address with a chain of several keys (the index
/// holds values below 2^31 - 1).
pub(super) const LONG: u32 = 1 << 30;

/// In [`Folding::index`], the value of the `i`-th chain of several keys: [`LONG`] and `i`.
pub(super) fn long(i: usize) -> u32 {
    let i = u32::try_from(i).ok().filter(|&i| i < LONG - 1);
    LONG | i.expect("fewer than 2^30 chains: each holds a key's memory")
}

/// One binary's keys and stacks while they are folded.
pub(super) struct Folding<'n, 'a> {
    pub(super) namer: &'n Namer<'a>,
    pub(super) keys: Vec<FrameKey>,
    /// (address as stored, whether it is a return address) to its keys: the index of its
    /// one key, or [`LONG`] and where in `long` its chain of several is.
    pub(super) index: AddressIndex,
    /// The chains of several keys (with inline frames), as ranges of `chains`.
    pub(super) long: Vec<(u32, u32)>,
    /// The chains of keys, outermost first, one after another.
    pub(super) chains: Vec<u32>,
    /// The chain of one key last asked for.
    pub(super) one: [u32; 1],
    /// What identifies each key to its index: the keys, once each.
    pub(super) known: FxHashMap<KeyId, u32>,
    /// Per key, where the trace first shows it as far as folded: the stack (counted from
    /// the last) and the place in it.
    pub(super) first: Vec<(u32, u32)>,
    pub(super) stacks: SliceCounts<u32>,
    /// The key ids of the address being looked up, kept to reuse the allocation.
    pub(super) scratch: Vec<KeyId>,
}

impl<'n, 'a> Folding<'n, 'a> {
    pub(super) fn new(namer: &'n Namer<'a>) -> Folding<'n, 'a> {
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
    pub(super) fn prefetch(&self, frames: &[u32], leaf_at: usize) {
        for (i, &rva) in frames.iter().enumerate() {
            self.index.prefetch(rva, i != leaf_at);
        }
    }

    /// The indices of the keys of `rva` (a return address when `returns`), outermost
    /// first: one key, or with inline frames, the function and what was inlined there.
    pub(super) fn chain(&mut self, rva: u32, returns: bool) -> &[u32] {
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
    pub(super) fn look_up(&mut self, rva: u32, returns: bool) -> (u32, u32) {
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
    pub(super) fn met(&mut self, folded: u32, path: &[u32]) {
        for (at, &k) in path.iter().enumerate() {
            let first = &mut self.first[k as usize];
            if first.0 < folded {
                *first = (folded, at as u32);
            }
        }
    }

    /// The keys, numbered as the trace first shows them, and the stacks by those numbers.
    pub(super) fn finish(self) -> (Vec<FrameKey>, Paths) {
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
