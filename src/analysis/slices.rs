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

use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

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
    pub fn with_capacity(slices: usize) -> Self {
        Slices {
            blocks: Vec::new(),
            ends: Vec::with_capacity(slices),
            hits: Vec::with_capacity(slices),
        }
    }

    /// Adds a slice with its hits, after those before it.
    pub fn push(&mut self, slice: &[T], hits: u128) {
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
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Slice `i` and its hits.
    pub fn get(&self, i: usize) -> (&[T], u128) {
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

    /// The hits of slice `i`.
    pub fn hits(&self, i: usize) -> u128 {
        self.hits[i]
    }

    /// Every slice and its hits, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&[T], u128)> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Replaces every item `x` of every slice with `f(x)`.
    pub fn map_items(&mut self, f: impl Fn(T) -> T) {
        for x in self.blocks.iter_mut().flatten() {
            *x = f(*x);
        }
    }

    /// The slices, the last first, each let go of once the next is asked for: what is made
    /// of them as they come (a fold into other slices) takes the room they give back.
    pub fn into_last_first(self) -> LastFirst<T> {
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
    index: HashTable<u64>,
}

/// The 32-bit hash of `items` that [`SliceCounts`] keeps beside a slice's place (and
/// speedscope's frames beside a name's).
pub(crate) fn hash32<T: Hash + ?Sized>(items: &T) -> u32 {
    let hash = FxBuildHasher.hash_one(items);
    (hash ^ (hash >> 32)) as u32
}

/// A `hashbrown` table's hash of items whose 32-bit hash is `h`: spread over 64 bits, as
/// the table takes its buckets from the low bits and a tag from the high ones.
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
            index: HashTable::new(),
        }
    }
}

impl<T: Copy + Eq + Hash> SliceCounts<T> {
    /// Adds `hits` to those of `slice`, which is added the first time it is seen.
    pub fn add(&mut self, slice: &[T], hits: u128) {
        if self.index.len() < self.slices.len() {
            self.index_again();
        }
        let SliceCounts { slices, index } = self;
        let h = hash32(slice);
        let found = |&e: &u64| entry_is(e, h) && slices.slice(entry_place(e)) == slice;
        match index.find(spread(h), found) {
            Some(&e) => slices.hits[entry_place(e)] += hits,
            None => {
                index.insert_unique(spread(h), entry(h, slices.len()), |&e| entry_hash(e));
                slices.push(slice, hits);
            }
        }
    }

    /// How many distinct slices there are.
    pub fn len(&self) -> usize {
        self.slices.len()
    }

    /// Lets go of the table that finds the slices, while they are only read; it is made
    /// again when a slice is added after.
    pub fn let_go_of_index(&mut self) {
        self.index = HashTable::new();
    }

    /// Makes the table that finds the slices again, after [`SliceCounts::let_go_of_index`].
    fn index_again(&mut self) {
        let SliceCounts { slices, index } = self;
        index.clear();
        index.reserve(slices.len(), |&e| entry_hash(e));
        for i in 0..slices.len() {
            let h = hash32(slices.slice(i));
            index.insert_unique(spread(h), entry(h, i), |&e| entry_hash(e));
        }
    }

    /// Slice `i`, in the order first added, and its hits.
    pub fn get(&self, i: usize) -> (&[T], u128) {
        self.slices.get(i)
    }

    /// Every slice and its hits, in the order first added.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&[T], u128)> + '_ {
        self.slices.iter()
    }

    /// The slices, without the table that finds them.
    pub fn into_slices(self) -> Slices<T> {
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
    pub fn next(&mut self) -> Option<(&[T], u128)> {
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
                assert_eq!(let_go.index.len(), 0, "the table is let go of");
            }
        }
        assert_eq!(let_go.len(), 91, "each slice once");
        assert!(
            let_go.iter().eq(kept.iter()),
            "the same slices, hits and order"
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
