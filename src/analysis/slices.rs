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
        let (items, ends, hits) = counts.into_parts();
        assert_eq!(items.len(), *ends.last().unwrap());
        assert_eq!(hits.iter().sum::<u128>(), expected.values().sum::<u128>());
    }
}
