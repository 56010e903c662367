//! Counts: exact hits per key (an RVA or an arc), in an open-addressing hash table.
//!
//! A summary adds one key per RVA, pair or arc of every record, so this is the inner loop of
//! `/summary`, and it is bound by memory latency: tables of a few thousand keys per event kind
//! and binary outgrow the L2 cache. So the table is specialised to be small: power-of-two
//! capacity filled up to three quarters, linear probing, a multiplicative hash, and slots of
//! the key and the low 32 bits of its hits (8 bytes for an RVA, 12 for an arc). Hits stay
//! exact: the rare sums that pass 2^32 carry into a side table.

use rustc_hash::FxHashMap;

/// A key: a `u32` RVA or an arc `[from, to]`.
pub trait Key: Copy + Eq + Ord + std::hash::Hash + Default {
    /// The key that marks a free slot; it is counted apart when it occurs as a real key.
    const EMPTY: Self;
    /// Spreads the key over 64 bits.
    fn hash(self) -> u64;
}

impl Key for u32 {
    const EMPTY: u32 = u32::MAX;
    #[inline]
    fn hash(self) -> u64 {
        u64::from(self).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

impl Key for [u32; 2] {
    const EMPTY: [u32; 2] = [u32::MAX; 2];
    #[inline]
    fn hash(self) -> u64 {
        let x = u64::from(self[0]) << 32 | u64::from(self[1]);
        (x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Slot<K> {
    key: K,
    /// The low 32 bits of the key's hits.
    low: u32,
}

/// Hits per key.
#[derive(Clone, Debug)]
pub struct Counts<K: Key> {
    slots: Vec<Slot<K>>,
    /// How far to shift a hash to get a slot index: 64 - log2(capacity).
    shift: u32,
    len: usize,
    /// Each key's hits above the low 32 bits, in units of 2^32.
    carries: FxHashMap<K, u128>,
    /// The hits of the key equal to [`Key::EMPTY`], which cannot live in a slot.
    empty_key: Option<u128>,
}

const INITIAL_BITS: u32 = 8;

impl<K: Key> Default for Counts<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: Key> Counts<K> {
    /// An empty table.
    pub fn new() -> Self {
        Counts {
            slots: vec![
                Slot {
                    key: K::EMPTY,
                    low: 0
                };
                1 << INITIAL_BITS
            ],
            shift: 64 - INITIAL_BITS,
            len: 0,
            carries: FxHashMap::default(),
            empty_key: None,
        }
    }

    /// How many distinct keys were added.
    pub fn len(&self) -> usize {
        self.len + usize::from(self.empty_key.is_some())
    }

    /// Adds `hits` to `key`.
    #[inline]
    pub fn add(&mut self, key: K, hits: u128) {
        if key == K::EMPTY {
            let h = self.empty_key.get_or_insert(0);
            *h = h.saturating_add(hits);
            return;
        }
        let mask = self.slots.len() - 1;
        let mut i = (key.hash() >> self.shift) as usize;
        loop {
            let slot = &mut self.slots[i & mask];
            if slot.key == key {
                let (low, carried) = slot.low.overflowing_add(hits as u32);
                slot.low = low;
                let carry = u128::from(carried) + (hits >> 32);
                if carry != 0 {
                    self.carry(key, carry);
                }
                return;
            }
            if slot.key == K::EMPTY {
                slot.key = key;
                slot.low = hits as u32;
                let carry = hits >> 32;
                if carry != 0 {
                    self.carry(key, carry);
                }
                self.len += 1;
                if self.len * 4 > self.slots.len() * 3 {
                    self.grow();
                }
                return;
            }
            i += 1;
        }
    }

    #[cold]
    fn carry(&mut self, key: K, carry: u128) {
        let c = self.carries.entry(key).or_insert(0);
        *c = c.saturating_add(carry);
    }

    #[cold]
    fn grow(&mut self) {
        let bigger = vec![
            Slot {
                key: K::EMPTY,
                low: 0
            };
            self.slots.len() * 2
        ];
        let old = std::mem::replace(&mut self.slots, bigger);
        self.shift -= 1;
        let mask = self.slots.len() - 1;
        for slot in old.into_iter().filter(|s| s.key != K::EMPTY) {
            let mut i = (slot.key.hash() >> self.shift) as usize;
            while self.slots[i & mask].key != K::EMPTY {
                i += 1;
            }
            self.slots[i & mask] = slot;
        }
    }

    /// Every key with its exact hits, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (K, u128)> + '_ {
        self.slots
            .iter()
            .filter(|s| s.key != K::EMPTY)
            .map(|s| {
                let carries = self.carries.get(&s.key).copied().unwrap_or(0);
                (
                    s.key,
                    carries
                        .saturating_mul(1 << 32)
                        .saturating_add(u128::from(s.low)),
                )
            })
            .chain(self.empty_key.map(|h| (K::EMPTY, h)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn sorted<K: Key>(c: &Counts<K>) -> Vec<(K, u128)> {
        let mut v: Vec<_> = c.iter().collect();
        v.sort();
        v
    }

    #[test]
    fn counts_like_a_map_through_growth() {
        let mut c = Counts::<u32>::new();
        let mut model = BTreeMap::new();
        let mut x = 12345u32;
        for i in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let key = x % 5000;
            let hits = u128::from(i % 7 + 1);
            c.add(key, hits);
            *model.entry(key).or_insert(0u128) += hits;
        }
        assert_eq!(c.len(), model.len());
        assert_eq!(sorted(&c), model.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn the_empty_marker_is_a_key_like_any_other() {
        let mut c = Counts::<u32>::new();
        c.add(u32::MAX, 2);
        c.add(0, 1);
        c.add(u32::MAX, 3);
        assert_eq!(c.len(), 2);
        assert_eq!(sorted(&c), [(0, 1), (u32::MAX, 5)]);
        let mut a = Counts::<[u32; 2]>::new();
        a.add([u32::MAX; 2], 1);
        a.add([u32::MAX, 0], 1);
        assert_eq!(sorted(&a), [([u32::MAX, 0], 1), ([u32::MAX; 2], 1)]);
    }

    #[test]
    fn sums_past_two_to_the_64_are_exact() {
        let big = 1u128 << 64; // a REPEAT of u64::MAX
        let mut c = Counts::<[u32; 2]>::new();
        for hits in [big, big, u128::from(u64::MAX), 1, u128::from(u32::MAX), 1] {
            c.add([7, 1], hits);
        }
        c.add([8, 1], 1);
        assert_eq!(sorted(&c), [([7, 1], 3 * big + (1 << 32)), ([8, 1], 1)]);
    }
}
