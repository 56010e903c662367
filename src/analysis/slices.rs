//! Distinct slices and their hits, kept one after another in one vector.
//!
//! A call stack is a slice: of bytes as a record stores it, of keys once folded. A trace has
//! some hundred thousand distinct stacks of tens of frames; a hash map of boxed slices would
//! take a heap block per stack, and a table slot besides. Here every slice's items are in one
//! vector, each slice is the range between its neighbour's end and its own, and the table
//! that finds a slice holds only its index.

use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// Distinct slices of `T` and the hits of each, in the order they were first added.
#[derive(Debug)]
pub(crate) struct SliceCounts<T> {
    items: Vec<T>,
    /// Where each slice ends in `items`.
    ends: Vec<usize>,
    hits: Vec<u128>,
    /// Each slice's index, found by the hash of its items.
    index: HashTable<usize>,
}

impl<T> Default for SliceCounts<T> {
    fn default() -> Self {
        SliceCounts {
            items: Vec::new(),
            ends: Vec::new(),
            hits: Vec::new(),
            index: HashTable::new(),
        }
    }
}

impl<T: Copy + Eq + Hash> SliceCounts<T> {
    /// Adds `hits` to those of `slice`, which is added the first time it is seen.
    pub fn add(&mut self, slice: &[T], hits: u128) {
        let SliceCounts {
            items,
            ends,
            hits: all,
            index,
        } = self;
        let hash = FxBuildHasher.hash_one(slice);
        let at = |i: usize| &items[i.checked_sub(1).map_or(0, |j| ends[j])..ends[i]];
        match index.find(hash, |&i| at(i) == slice) {
            Some(&i) => all[i] += hits,
            None => {
                let i = ends.len();
                index.insert_unique(hash, i, |&j| FxBuildHasher.hash_one(at(j)));
                items.extend_from_slice(slice);
                ends.push(items.len());
                all.push(hits);
            }
        }
    }

    /// How many distinct slices there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Slice `i`, in the order first added, and its hits.
    pub fn get(&self, i: usize) -> (&[T], u128) {
        let start = i.checked_sub(1).map_or(0, |j| self.ends[j]);
        (&self.items[start..self.ends[i]], self.hits[i])
    }

    /// Every slice and its hits, in the order first added.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&[T], u128)> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// The slices' items, ends and hits, without the table that finds them.
    pub fn into_parts(self) -> (Vec<T>, Vec<usize>, Vec<u128>) {
        (self.items, self.ends, self.hits)
    }

    /// The slices, the last first, each let go of once the next is asked for: what is made
    /// of them as they come (a fold into other slices) grows as they shrink, never beside
    /// all of them.
    pub fn into_last_first(self) -> LastFirst<T> {
        let (items, ends, hits) = self.into_parts();
        LastFirst { items, ends, hits }
    }
}

/// The slices of a [`SliceCounts`], handed over the last first ([`SliceCounts::into_last_first`]).
pub(crate) struct LastFirst<T> {
    items: Vec<T>,
    ends: Vec<usize>,
    hits: Vec<u128>,
}

impl<T> LastFirst<T> {
    /// The next slice and its hits, after letting go of the one before.
    pub fn next(&mut self) -> Option<(&[T], u128)> {
        self.items.truncate(self.ends.last().copied().unwrap_or(0));
        let_go(&mut self.items);
        let_go(&mut self.ends);
        let_go(&mut self.hits);
        let (end, hits) = (self.ends.pop()?, self.hits.pop()?);
        let start = self.ends.last().copied().unwrap_or(0);
        Some((&self.items[start..end], hits))
    }

    /// The bytes held for the slices not yet let go of.
    #[cfg(test)]
    fn held(&self) -> usize {
        self.items.capacity() * size_of::<T>()
            + self.ends.capacity() * size_of::<usize>()
            + self.hits.capacity() * size_of::<u128>()
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
        let mut last_first = counts.into_last_first();
        let mut drained = Vec::new();
        while let Some((s, h)) = last_first.next() {
            drained.push((s.to_vec(), h));
        }
        drained.reverse();
        assert_eq!(drained, want, "each slice once, the last first");
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
        let mut last_first = counts.into_last_first();
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
