//! Distinct slices and their hits, kept one after another in blocks of a fixed size.
//!
//! A call stack is a slice: of bytes as a record stores it, of keys once folded. A trace has
//! some hundred thousand distinct stacks of tens of frames; a hash map of boxed slices would
//! take a heap block per stack, and a table slot besides. Here the slices' items are one
//! after another in blocks of 256 KiB, each slice the range between its neighbour's end and
//! its own (a slice that does not fit what is left of a block starts the next), and the
//! table that finds a slice holds only its index.
//!
//! Blocks rather than one vector: the decoded stacks are let go of block by block as they
//! are folded, and the folded ones take blocks of the same size, so that the allocator hands
//! the one's room to the other; a vector grown by doubling would be a new allocation each
//! time, beside the room the decoded ones gave back.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hash};

use rustc_hash::FxBuildHasher;

use super::counts::prefetch_line;

/// The bytes of a block.
const BLOCK: usize = 256 * 1024;

/// Slices of `T` and the hits of each, one after another in blocks.
#[derive(Debug)]
pub(crate) struct Slices<T> {
    blocks: Vec<Vec<T>>,
    /// Where each slice ends: its block, and its end in the block.
    ends: Vec<End>,
    hits: Vec<u128>,
}

/// Where a slice ends.
#[derive(Clone, Copy, Debug)]
struct End {
    block: u32,
    at: u32,
}

impl<T> Default for Slices<T> {
    fn default() -> Self {
        Slices {
            blocks: Vec::new(),
            ends: Vec::new(),
            hits: Vec::new(),
        }
    }
}

impl<T: Copy> Slices<T> {
    /// Room for the ends and hits of `slices` slices.
    pub(crate) fn with_capacity(slices: usize) -> Self {
        Slices {
            blocks: Vec::new(),
            ends: Vec::with_capacity(slices),
            hits: Vec::with_capacity(slices),
        }
    }

    /// Adds a slice with its hits, after those before it.
    pub(crate) fn push(&mut self, slice: &[T], hits: u128) {
        let room = self.blocks.last().map_or(0, |b| b.capacity() - b.len());
        if room < slice.len() || self.blocks.is_empty() {
            let items = (BLOCK / size_of::<T>().max(1)).max(slice.len());
            self.blocks.push(Vec::with_capacity(items));
        }
        let block = self.blocks.len() - 1;
        let items = &mut self.blocks[block];
        items.extend_from_slice(slice);
        // A block holds at most a block's bytes or one slice (a call stack's frames, their
        // keys): far fewer than 2^32 items, and fewer than 2^32 blocks fit in memory.
        let end = End {
            block: u32::try_from(block).expect("fewer than 2^32 blocks"),
            at: u32::try_from(items.len()).expect("a block of fewer than 2^32 items"),
        };
        self.ends.push(end);
        self.hits.push(hits);
    }

    /// How many slices there are.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Slice `i` and its hits.
    pub(crate) fn get(&self, i: usize) -> (&[T], u128) {
        (self.slice(i), self.hits[i])
    }

    /// The items of slice `i`.
    fn slice(&self, i: usize) -> &[T] {
        let End { block, at } = self.ends[i];
        let start = match i.checked_sub(1).map(|j| self.ends[j]) {
            Some(before) if before.block == block => before.at,
            _ => 0,
        };
        &self.blocks[block as usize][start as usize..at as usize]
    }

    /// Asks for where slice `i` ends and its hits.
    fn ask_place(&self, i: usize) {
        prefetch_line(&self.ends[i]);
        prefetch_line(&self.hits[i]);
    }

    /// Asks for the first items of slice `i` (its end asked for first).
    fn ask_items(&self, i: usize) {
        if let Some(first) = self.slice(i).first() {
            prefetch_line(first);
        }
    }

    /// The hits of slice `i`.
    pub(crate) fn hits(&self, i: usize) -> u128 {
        self.hits[i]
    }

    /// Every slice and its hits, in order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = (&[T], u128)> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Replaces every item `x` of every slice with `f(x)`.
    pub(crate) fn map_items(&mut self, f: impl Fn(T) -> T) {
        for x in self.blocks.iter_mut().flatten() {
            *x = f(*x);
        }
    }

    /// The slices, the last first, each let go of once the next is asked for: what is made
    /// of them as they come (a fold into other slices) takes the room they give back.
    pub(crate) fn into_last_first(self) -> LastFirst<T> {
        LastFirst {
            slices: self,
            handed: false,
        }
    }
}

/// Distinct slices of `T` and the hits of each, in the order they were first added.
#[derive(Debug)]
pub(crate) struct SliceCounts<T> {
    slices: Slices<T>,
    /// Each slice's index (the low 32 bits) with a 32-bit hash of its items (the high),
    /// found by that hash: a slot whose hash differs is passed over without reading its
    /// slice, and the table grows without hashing the slices again.
    index: Places,
    /// Slices added with [`SliceCounts::add_soon`], not yet counted.
    soon: Soon<T>,
}

/// Slices waiting to be counted together: their items one after another, and each one's
/// end and hits.
#[derive(Debug)]
struct Soon<T> {
    items: Vec<T>,
    slices: Vec<(usize, u128)>,
}

impl<T> Default for Soon<T> {
    fn default() -> Self {
        Soon {
            items: Vec::new(),
            slices: Vec::new(),
        }
    }
}

/// How many slices [`SliceCounts::add_soon`] counts together, their cache misses
/// overlapping: about the misses a core can have in flight, over the three steps a slice
/// is found in.
const SOON: usize = 16;

/// A table of [`entry`]s found by their hash: linear probing from the slot the hash picks,
/// at most half full, so that the slot a slice is looked for in can be asked for before it
/// is read.
#[derive(Debug, Default)]
struct Places {
    /// [`FREE`] where no entry is; a power of two of them, or none.
    slots: Vec<u64>,
    len: usize,
}

/// A free slot: no entry is, as no place reaches `u32::MAX` (each holds a slice in memory,
/// and its end and hits: more than 2^32 of them would not fit).
const FREE: u64 = u64::MAX;

impl Places {
    /// The slot the entries of hash `h` start from.
    fn home(&self, h: u32) -> usize {
        (spread(h) >> 32) as usize & (self.slots.len() - 1)
    }

    /// The first entry of hash `h`, if any, as `find` would look at it first.
    fn first(&self, h: u32) -> Option<u64> {
        self.probe(h).find(|&e| entry_is(e, h))
    }

    /// The place of the first entry of hash `h` whose place `is` the one sought.
    fn find(&self, h: u32, is: impl Fn(usize) -> bool) -> Option<usize> {
        self.probe(h)
            .filter(|&e| entry_is(e, h))
            .map(entry_place)
            .find(|&place| is(place))
    }

    /// The entries from the home slot of `h` to the first free slot.
    fn probe(&self, h: u32) -> impl Iterator<Item = u64> + '_ {
        let mask = self.slots.len().wrapping_sub(1);
        let home = if self.slots.is_empty() {
            0
        } else {
            self.home(h)
        };
        (0..self.slots.len())
            .map(move |i| self.slots[(home + i) & mask])
            .take_while(|&e| e != FREE)
    }

    /// Asks for the slot the entries of hash `h` start from.
    fn ask(&self, h: u32) {
        if !self.slots.is_empty() {
            prefetch_line(&self.slots[self.home(h)]);
        }
    }

    /// Adds `entry`, which is not in the table.
    fn insert(&mut self, entry: u64) {
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow();
        }
        self.put(entry);
        self.len += 1;
    }

    fn put(&mut self, entry: u64) {
        let mask = self.slots.len() - 1;
        let mut at = self.home((entry >> 32) as u32);
        while self.slots[at] != FREE {
            at = (at + 1) & mask;
        }
        self.slots[at] = entry;
    }

    /// Doubles the slots (16 at first) and puts every entry in its new place.
    fn grow(&mut self) {
        let slots = (self.slots.len() * 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![FREE; slots]);
        for e in old.into_iter().filter(|&e| e != FREE) {
            self.put(e);
        }
    }

    /// Room for `n` entries, and none in.
    fn cleared(n: usize) -> Places {
        let slots = (n * 2 + 2).next_power_of_two().max(16);
        Places {
            slots: vec![FREE; slots],
            len: 0,
        }
    }
}

/// The 32-bit hash of `items` that [`SliceCounts`] keeps beside a slice's place (and
/// speedscope's frames beside a name's).
/// Records of a binary, each stored as its progid (2 bytes, little-endian) then its payload,
/// with the binaries renumbered: `progid` becomes `to(progid)`.
pub(crate) fn renumbered(records: &SliceCounts<u8>, to: impl Fn(u16) -> u16) -> SliceCounts<u8> {
    let mut out = SliceCounts::default();
    let mut record = Vec::new();
    for (stored, hits) in records.iter() {
        record.clear();
        record.extend_from_slice(&to(u16::from_le_bytes([stored[0], stored[1]])).to_le_bytes());
        record.extend_from_slice(&stored[2..]);
        out.add(&record, hits);
    }
    out
}

/// Records and hits per binary, the binaries renumbered: `progid` becomes `to(progid)`.
pub(crate) fn renumbered_totals(
    totals: BTreeMap<u16, (u64, u128)>,
    to: impl Fn(u16) -> u16,
) -> BTreeMap<u16, (u64, u128)> {
    let mut out = BTreeMap::new();
    absorb_totals(&mut out, totals.into_iter().map(|(p, t)| (to(p), t)));
    out
}

/// Adds records and hits per binary to `totals`.
pub(crate) fn absorb_totals(
    totals: &mut BTreeMap<u16, (u64, u128)>,
    other: impl IntoIterator<Item = (u16, (u64, u128))>,
) {
    for (progid, (records, hits)) in other {
        let total = totals.entry(progid).or_default();
        total.0 = total.0.saturating_add(records);
        total.1 = total.1.saturating_add(hits);
    }
}

pub(crate) fn hash32<T: Hash + ?Sized>(items: &T) -> u32 {
    let hash = FxBuildHasher.hash_one(items);
    (hash ^ (hash >> 32)) as u32
}

/// The 64-bit hash of items whose 32-bit hash is `h`, spread over every bit: a `hashbrown`
/// table (speedscope's frames) takes its buckets from the low bits and a tag from the high
/// ones, and [`Places`] its slot from the high half.
pub(crate) fn spread(h: u32) -> u64 {
    u64::from(h).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// An entry of a table of places found by their items' 32-bit hash ([`SliceCounts::index`],
/// speedscope's frames): place `i`, whose items' hash is `h`.
pub(crate) fn entry(h: u32, i: usize) -> u64 {
    let i = u32::try_from(i).expect("fewer than 2^32 places: each holds its items in memory");
    u64::from(h) << 32 | u64::from(i)
}

/// Whether `entry` is of items whose 32-bit hash is `h`.
pub(crate) fn entry_is(entry: u64, h: u32) -> bool {
    (entry >> 32) as u32 == h
}

/// The table's hash of an entry.
pub(crate) fn entry_hash(entry: u64) -> u64 {
    spread((entry >> 32) as u32)
}

/// The place of an entry.
pub(crate) fn entry_place(entry: u64) -> usize {
    (entry & 0xFFFF_FFFF) as usize
}

impl<T> Default for SliceCounts<T> {
    fn default() -> Self {
        SliceCounts {
            slices: Slices::default(),
            index: Places::default(),
            soon: Soon::default(),
        }
    }
}

impl<T: Copy + Eq + Hash> SliceCounts<T> {
    /// Adds `hits` to those of `slice`, which is added the first time it is seen.
    pub(crate) fn add(&mut self, slice: &[T], hits: u128) {
        if self.index.len < self.slices.len() {
            self.index_again();
        }
        let SliceCounts { slices, index, .. } = self;
        let h = hash32(slice);
        match index.find(h, |place| slices.slice(place) == slice) {
            Some(place) => slices.hits[place] += hits,
            None => {
                index.insert(entry(h, slices.len()));
                slices.push(slice, hits);
            }
        }
    }

    /// [`add`](SliceCounts::add)s the slice made of `pieces`, one after another, with the
    /// next slices, together: their slots, then
    /// their places' ends and hits, then their items are asked for before any is read, so
    /// that the misses of a slice and those of the next overlap. A slice is counted by
    /// [`settle`](SliceCounts::settle) at the latest, which the caller calls before the
    /// slices are read.
    pub(crate) fn add_soon(&mut self, pieces: &[&[T]], hits: u128) {
        for piece in pieces {
            self.soon.items.extend_from_slice(piece);
        }
        self.soon.slices.push((self.soon.items.len(), hits));
        if self.soon.slices.len() == SOON {
            self.settle();
        }
    }

    /// Counts the slices [`add_soon`](SliceCounts::add_soon) holds.
    pub(crate) fn settle(&mut self) {
        if self.soon.slices.is_empty() {
            return;
        }
        // After the index was let go of, no place is found before the first `add` makes
        // it again: each slice is then added as it comes.
        let soon = std::mem::take(&mut self.soon);
        let each = || {
            let starts = std::iter::once(0).chain(soon.slices.iter().map(|&(end, _)| end));
            starts
                .zip(&soon.slices)
                .map(|(start, &(end, hits))| (&soon.items[start..end], hits))
        };
        let mut hashes = [0u32; SOON];
        for ((slice, _), h) in each().zip(&mut hashes) {
            *h = hash32(slice);
            self.index.ask(*h);
        }
        let mut places = [None; SOON];
        let n = soon.slices.len();
        for (h, place) in hashes[..n].iter().zip(&mut places) {
            *place = self.index.first(*h).map(entry_place);
            if let Some(p) = *place {
                self.slices.ask_place(p);
            }
        }
        for &p in places.iter().flatten() {
            self.slices.ask_items(p);
        }
        for ((slice, hits), place) in each().zip(places) {
            match place {
                Some(p) if self.slices.slice(p) == slice => self.slices.hits[p] += hits,
                _ => self.add(slice, hits),
            }
        }
        self.soon = soon;
        self.soon.items.clear();
        self.soon.slices.clear();
    }

    /// How many distinct slices there are.
    pub(crate) fn len(&self) -> usize {
        debug_assert!(self.soon.slices.is_empty(), "slices added soon are settled");
        self.slices.len()
    }

    /// Lets go of the table that finds the slices, while they are only read; it is made
    /// again when a slice is added after.
    pub(crate) fn let_go_of_index(&mut self) {
        self.index = Places::default();
    }

    /// Makes the table that finds the slices again, after [`SliceCounts::let_go_of_index`].
    fn index_again(&mut self) {
        let SliceCounts { slices, index, .. } = self;
        *index = Places::cleared(slices.len());
        for i in 0..slices.len() {
            index.insert(entry(hash32(slices.slice(i)), i));
        }
    }

    /// Slice `i`, in the order first added, and its hits.
    pub(crate) fn get(&self, i: usize) -> (&[T], u128) {
        debug_assert!(self.soon.slices.is_empty(), "slices added soon are settled");
        self.slices.get(i)
    }

    /// Every slice and its hits, in the order first added.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = (&[T], u128)> + '_ {
        debug_assert!(self.soon.slices.is_empty(), "slices added soon are settled");
        self.slices.iter()
    }

    /// The slices, without the table that finds them.
    pub(crate) fn into_slices(self) -> Slices<T> {
        debug_assert!(self.soon.slices.is_empty(), "slices added soon are settled");
        self.slices
    }
}

/// The slices of a [`Slices`], handed over the last first ([`Slices::into_last_first`]).
pub(crate) struct LastFirst<T> {
    slices: Slices<T>,
    /// Whether the last slice has been handed over.
    handed: bool,
}

impl<T: Copy> LastFirst<T> {
    /// The next slice and its hits, after letting go of the one before and of the blocks
    /// that held only slices after it.
    pub(crate) fn next(&mut self) -> Option<(&[T], u128)> {
        let Slices { blocks, ends, hits } = &mut self.slices;
        if self.handed {
            ends.pop();
            hits.pop();
        }
        blocks.truncate(ends.last().map_or(0, |e| e.block as usize + 1));
        let_go(ends);
        let_go(hits);
        self.handed = !ends.is_empty();
        let last = ends.len().checked_sub(1)?;
        Some(self.slices.get(last))
    }

    /// The bytes held for the slices not yet let go of.
    #[cfg(test)]
    fn held(&self) -> usize {
        let Slices { blocks, ends, hits } = &self.slices;
        blocks
            .iter()
            .map(|b| b.capacity() * size_of::<T>())
            .sum::<usize>()
            + ends.capacity() * size_of::<End>()
            + hits.capacity() * size_of::<u128>()
    }
}

/// Gives the allocator back the room `v` no longer uses, once it is a mebibyte or more (a
/// shrinking allocation gives its pages back); the room is not asked for again.
fn let_go<T>(v: &mut Vec<T>) {
    const ROOM: usize = 1 << 20;
    if (v.capacity() - v.len()) * size_of::<T>() >= ROOM {
        v.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_list_that_let_go_of_its_index_counts_on_as_before() {
        let (mut kept, mut let_go) = (SliceCounts::default(), SliceCounts::default());
        for n in 0..3_000u32 {
            let slice = [n % 13, n % 7];
            kept.add(&slice, u128::from(n));
            let_go.add(&slice, u128::from(n));
            // Let go of now and then, and between two adds of one slice.
            if n % 500 == 0 || n == 91 {
                let_go.let_go_of_index();
                assert_eq!(let_go.index.len, 0, "the table is let go of");
            }
        }
        assert_eq!(let_go.len(), 91, "each slice once");
        assert!(
            let_go.iter().eq(kept.iter()),
            "the same slices, hits and order"
        );
    }

    /// Slices added soon, counted together, are counted as added one at a time: the same
    /// slices in the same order with the same hits, through growth, repeats within one
    /// batch, slices whose 32-bit hashes are one, a settle at any point, and the index let
    /// go of between.
    #[test]
    fn slices_added_soon_are_counted_as_added_at_once() {
        let mut seen = std::collections::HashMap::new();
        let (a, b) = (0u32..)
            .find_map(|i| seen.insert(hash32(&[i][..]), i).map(|j| (j, i)))
            .unwrap();
        let (mut now, mut soon) = (SliceCounts::default(), SliceCounts::default());
        let mut x = 1u32;
        for n in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let slice: Vec<u32> = match x % 10 {
                // The colliding pair, now and then, in either order.
                0 => vec![a],
                1 => vec![b],
                // A run of one slice, repeated within a batch.
                2 | 3 => vec![7, 7, n / 1000],
                _ => (0..x % 9).map(|k| (x >> k) % 5_000).collect(),
            };
            let hits = u128::from(x % 100) << (x % 3 * 40);
            now.add(&slice, hits);
            soon.add_soon(
                &[&slice[..1.min(slice.len())], &slice[1.min(slice.len())..]],
                hits,
            );
            if x.is_multiple_of(97) {
                soon.settle();
            }
            if n.is_multiple_of(4_999) {
                soon.settle();
                soon.let_go_of_index();
            }
        }
        soon.settle();
        assert!(now.len() > 3_000, "{} slices", now.len());
        assert!(
            soon.iter().eq(now.iter()),
            "the same slices, hits and order"
        );
        soon.settle();
        assert!(soon.iter().eq(now.iter()), "settling again changes nothing");
    }

    /// The index holds one entry per distinct slice, is at most half full, and spreads its
    /// entries: most sit in the slot their hash picks.
    #[test]
    fn the_index_is_at_most_half_full_and_spread() {
        let mut counts = SliceCounts::default();
        for n in 0..3_000u32 {
            counts.add(&[n, n / 7], 1);
            counts.add(&[n / 2, n / 14], 1);
        }
        let Places { slots, len } = &counts.index;
        assert_eq!(*len, counts.len());
        assert_eq!(slots.iter().filter(|&&e| e != FREE).count(), *len);
        assert!(
            slots.len() >= 2 * len,
            "{len} entries in {} slots",
            slots.len()
        );
        let at_home = slots
            .iter()
            .enumerate()
            .filter(|&(at, &e)| e != FREE && counts.index.home((e >> 32) as u32) == at)
            .count();
        assert!(
            at_home * 2 > *len,
            "{at_home} of {len} entries in their home slot"
        );
    }

    #[test]
    fn slices_whose_hashes_are_one_are_two_slices() {
        // The first two one-item slices whose 32-bit hashes are the same (a search of some
        // tens of thousands: the hashes are 32 bits).
        let mut seen = std::collections::HashMap::new();
        let (a, b) = (0u32..)
            .find_map(|i| seen.insert(hash32(&[i][..]), i).map(|j| (j, i)))
            .unwrap();
        assert_ne!(a, b);
        let mut counts = SliceCounts::default();
        counts.add(&[a][..], 1);
        counts.add(&[b][..], 2);
        counts.add(&[a][..], 4);
        let counted: Vec<(Vec<u32>, u128)> = counts.iter().map(|(s, h)| (s.to_vec(), h)).collect();
        assert_eq!(counted, [(vec![a], 5), (vec![b], 2)]);
    }

    #[test]
    fn every_slice_is_counted_once_with_its_hits() {
        let mut counts = SliceCounts::default();
        let mut expected: BTreeMap<Vec<u32>, u128> = BTreeMap::new();
        let mut first_seen: Vec<Vec<u32>> = Vec::new();
        // Enough slices to grow the table several times; slices that are prefixes of one
        // another, an empty one, and one that is another's items shifted by one.
        for n in 0..5_000u32 {
            let slice: Vec<u32> = (0..n % 7).map(|k| (n / 3 + k) % 11).collect();
            let hits = u128::from(n) << 90 | u128::from(n);
            counts.add(&slice, hits);
            let e = expected.entry(slice.clone()).or_default();
            if *e == 0 && !first_seen.contains(&slice) {
                first_seen.push(slice);
            }
            *e += hits;
        }
        assert_eq!(counts.len(), expected.len());
        let got: Vec<(Vec<u32>, u128)> = counts.iter().map(|(s, h)| (s.to_vec(), h)).collect();
        let want: Vec<(Vec<u32>, u128)> = first_seen
            .iter()
            .map(|s| (s.clone(), expected[s]))
            .collect();
        assert_eq!(got, want, "each slice once, in the order first added");
        let mut last_first = counts.into_slices().into_last_first();
        let mut drained = Vec::new();
        while let Some((s, h)) = last_first.next() {
            drained.push((s.to_vec(), h));
        }
        drained.reverse();
        assert_eq!(drained, want, "each slice once, the last first");
    }

    #[test]
    fn slices_that_do_not_fit_a_block_start_the_next() {
        let per_block = BLOCK / 4;
        let lengths = [per_block - 1, 2, 1, 0, per_block, 0, per_block + 5, 3, 0];
        let mut slices = Slices::default();
        let want: Vec<(Vec<u32>, u128)> = lengths
            .iter()
            .enumerate()
            .map(|(i, &n)| ((0..n as u32).map(|x| x ^ i as u32).collect(), i as u128))
            .collect();
        for (slice, hits) in &want {
            slices.push(slice, *hits);
        }
        let blocks: Vec<usize> = slices.blocks.iter().map(Vec::len).collect();
        assert_eq!(blocks, [per_block - 1, 3, per_block, per_block + 5, 3]);
        let got: Vec<(Vec<u32>, u128)> = slices.iter().map(|(s, h)| (s.to_vec(), h)).collect();
        assert_eq!(got, want);
        let mut last_first = slices.into_last_first();
        let mut drained = Vec::new();
        while let Some((s, h)) = last_first.next() {
            drained.push((s.to_vec(), h));
        }
        drained.reverse();
        assert_eq!(drained, want);
    }

    #[test]
    fn a_long_list_of_slices_lets_go_of_its_ends_and_hits() {
        const MIB: usize = 1 << 20;
        let mut slices = Slices::default();
        // 400,000 slices of one item: 3.2 MB of ends, 6.4 MB of hits, 1.6 MB of items.
        for i in 0..400_000u32 {
            slices.push(&[i], u128::from(i));
        }
        let mut last_first = slices.into_last_first();
        for i in (50_000..400_000u32).rev() {
            assert_eq!(last_first.next(), Some((&[i][..], u128::from(i))));
        }
        // 50,000 left: 1.2 MB of ends and hits, and a block; at most a mebibyte more of
        // each vector is kept.
        let held = last_first.held();
        assert!(
            held < 4 * MIB,
            "{held} bytes held for 50,000 slices of one item"
        );
    }

    #[test]
    fn slices_handed_over_are_let_go_of() {
        const MIB: usize = 1 << 20;
        let mut counts = SliceCounts::default();
        // Four slices of 1.5 MiB each (of 4-byte items), and one short one.
        const LONG: usize = 3 * MIB / 8;
        for n in 0..4u32 {
            counts.add(&vec![n; LONG], u128::from(n));
        }
        counts.add(&[9], 9);
        let mut last_first = counts.into_slices().into_last_first();
        let mut seen = Vec::new();
        let mut held = Vec::new();
        while let Some((s, h)) = last_first.next() {
            seen.push((s[0], s.len(), h));
            held.push(last_first.held());
        }
        let want = [
            (9, 1, 9),
            (3, LONG, 3),
            (2, LONG, 2),
            (1, LONG, 1),
            (0, LONG, 0),
        ];
        assert_eq!(seen, want);
        // Each slice is let go of once the next is handed over (the short one not).
        for (i, held) in held.iter().enumerate().skip(1) {
            let slices = 3 * (5 - i) * MIB / 2;
            assert!(
                *held < slices + MIB,
                "slice {i}: {held} bytes held, {slices} in use"
            );
        }
        let left = last_first.held();
        assert!(left < 1024, "{left} bytes held once all are handed over");
    }
}
