//! An index of addresses: each address of a binary, as stored and whether it is a return
//! address, to a `u32` value. The fold gives each address of the call stacks what it folds
//! to; pprof gives each address its location.
//!
//! Both look every frame of every distinct stack up here: millions of look-ups in a table of
//! tens of thousands of addresses per binary, larger than one core's L2 cache. So a slot is
//! one `u64` (the address, its return flag and the value), the table is probed linearly from
//! a home slot picked by multiply-shift and kept at most half full, and
//! [`AddressIndex::prefetch`] asks for an address's slot before it is looked up: both ask for
//! all of a stack's frames first, so that their misses overlap instead of coming one after
//! another.
//!
//! ```text
//! slot:  rva (32 bits) | returns (1 bit) | value (31 bits)      empty: all ones
//! ```

use super::counts::prefetch_line;

/// What marks a free slot: no address has it, as no value is `2^31 - 1` ([`VALUE`]).
const EMPTY: u64 = u64::MAX;

/// The values a slot holds: below `2^31 - 1`.
const VALUE: u32 = (1 << 31) - 1;

/// The bits of a slot that hold its value; the others hold its address.
const VALUE_BITS: u64 = VALUE as u64;

/// Slots of a new table.
const INITIAL_SLOTS: usize = 64;

/// Addresses to values.
#[derive(Debug)]
pub(crate) struct AddressIndex {
    slots: Vec<u64>,
    len: usize,
}

impl Default for AddressIndex {
    fn default() -> Self {
        AddressIndex {
            slots: vec![EMPTY; INITIAL_SLOTS],
            len: 0,
        }
    }
}

/// The address and its return flag, as the high 33 bits of a slot.
#[inline]
fn key(rva: u32, returns: bool) -> u64 {
    (u64::from(rva) << 1 | u64::from(returns)) << 31
}

/// Spreads the address `key` over 64 bits; the high 32 pick its home slot.
///
/// The multiplier is not the counting tables' (`counts.rs`): they place an address by the
/// high bits of the address times theirs, so an index filled by walking such a table, as
/// pprof's is, would be given its addresses in the order of their homes here too (twice
/// over), and linear probing piles keys given so into runs: a search looked at 588 slots a
/// key instead of 1.7 (100,000 addresses; the unit test below).
#[inline]
fn spread(key: u64) -> u64 {
    (key >> 31).wrapping_mul(0xFF51_AFD7_ED55_8CCD)
}

impl AddressIndex {
    /// The slot the address `key` is looked for first.
    #[inline]
    fn home(&self, key: u64) -> usize {
        (((spread(key) >> 32) * self.slots.len() as u64) >> 32) as usize
    }

    /// Asks for the slot of `rva` (a return address when `returns`) to be loaded: a hint.
    #[inline]
    pub(crate) fn prefetch(&self, rva: u32, returns: bool) {
        prefetch_line(&self.slots[self.home(key(rva, returns))]);
    }

    /// The value of `rva` (a return address when `returns`), if it has one.
    #[inline]
    pub(crate) fn get(&self, rva: u32, returns: bool) -> Option<u32> {
        let key = key(rva, returns);
        let mut at = self.home(key);
        loop {
            let slot = self.slots[at];
            if slot == EMPTY {
                return None;
            }
            if slot & !VALUE_BITS == key {
                return Some((slot & VALUE_BITS) as u32);
            }
            at = (at + 1) & (self.slots.len() - 1);
        }
    }

    /// Gives `rva` (a return address when `returns`) the value `value` (below [`VALUE`]),
    /// in place of the one it had, if any.
    pub(crate) fn insert(&mut self, rva: u32, returns: bool, value: u32) {
        assert!(value < VALUE, "a value of the index is below 2^31 - 1");
        // At most half full: probes stay short. An address given again takes no room.
        if 2 * (self.len + 1) > self.slots.len() && self.get(rva, returns).is_none() {
            self.grow();
        }
        if self.place(key(rva, returns) | u64::from(value)) {
            self.len += 1;
        }
    }

    /// Puts a slot's contents in the slot of its address from its home on, or the first
    /// free one: whether the address is new.
    fn place(&mut self, slot: u64) -> bool {
        let key = slot & !VALUE_BITS;
        let mut at = self.home(key);
        loop {
            let old = self.slots[at];
            if old == EMPTY || old & !VALUE_BITS == key {
                self.slots[at] = slot;
                return old == EMPTY;
            }
            at = (at + 1) & (self.slots.len() - 1);
        }
    }

    /// Every address with a value, and its value, in no order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, bool, u32)> + '_ {
        self.slots.iter().filter(|&&s| s != EMPTY).map(|&s| {
            let value = (s & VALUE_BITS) as u32;
            let address = s >> 31;
            ((address >> 1) as u32, address & 1 != 0, value)
        })
    }

    /// How many addresses have a value.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Doubles the table.
    fn grow(&mut self) {
        let slots = vec![EMPTY; 2 * self.slots.len()];
        let old = std::mem::replace(&mut self.slots, slots);
        for slot in old.into_iter().filter(|&s| s != EMPTY) {
            self.place(slot);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::counts::Counts;
    use std::collections::HashMap;

    #[test]
    fn it_keeps_what_a_map_keeps_through_growth() {
        let mut index = AddressIndex::default();
        let mut map = HashMap::new();
        let mut x = 0x1234_5678u32;
        for i in 0..50_000u32 {
            // Addresses spread (xorshift) and clustered; every one both ways, at its edges.
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            let rva = match i % 4 {
                0 => x,
                1 => i,
                2 => u32::MAX - i,
                _ => x | 0x8000_0000,
            };
            for returns in [false, true] {
                if map.contains_key(&(rva, returns)) {
                    continue;
                }
                let value = (i * 2 + u32::from(returns)) % VALUE;
                assert_eq!(index.get(rva, returns), None);
                index.insert(rva, returns, value);
                map.insert((rva, returns), value);
            }
        }
        assert_eq!(index.len(), map.len());
        assert!(index.slots.len() >= 2 * index.len());
        for (&(rva, returns), &value) in &map {
            index.prefetch(rva, returns);
            assert_eq!(index.get(rva, returns), Some(value), "{rva:#x} {returns}");
        }
        assert_eq!(index.get(3, false), map.get(&(3, false)).copied());
        let mut all: Vec<_> = index.iter().collect();
        all.sort_unstable();
        let mut expected: Vec<_> = map.iter().map(|(&(r, b), &v)| (r, b, v)).collect();
        expected.sort_unstable();
        assert_eq!(all, expected);
    }

    /// How many slots a search for `rva` looks at: to its slot, or to the first free one.
    fn searched(index: &AddressIndex, rva: u32) -> usize {
        let key = key(rva, false);
        let mut at = index.home(key);
        let mut looked = 1;
        while index.slots[at] != EMPTY && index.slots[at] & !VALUE_BITS != key {
            at = (at + 1) & (index.slots.len() - 1);
            looked += 1;
        }
        looked
    }

    #[test]
    fn addresses_given_in_a_counting_tables_order_find_their_slots_soon() {
        let mut counts: Counts<u32> = Counts::new();
        let mut x = 0x2545_F491u32;
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            counts.add(x >> 8, 1);
        }
        let mut index = AddressIndex::default();
        let mut looked = 0;
        for (rva, _) in counts.iter() {
            looked += searched(&index, rva);
            index.insert(rva, false, 0);
        }
        // At most half full, a search looks at 1.7 slots a key here; with the counting
        // tables' multiplier, 588.
        let per_key = looked as f64 / counts.len() as f64;
        assert!(per_key < 4.0, "{per_key:.1} slots looked at a key");
    }

    #[test]
    fn the_table_is_the_least_power_of_two_at_least_twice_its_addresses() {
        let mut index = AddressIndex::default();
        for rva in 0..1000 {
            index.insert(rva, false, 0);
            // Given again: no new address, no growth.
            index.insert(rva, false, 1);
            let least = (2 * index.len()).next_power_of_two().max(INITIAL_SLOTS);
            assert_eq!(index.slots.len(), least, "{} addresses", index.len());
        }
    }

    #[test]
    fn a_value_given_again_replaces_the_first() {
        let mut index = AddressIndex::default();
        for i in 0..100 {
            index.insert(i, false, i);
            index.insert(i, true, i + 1);
        }
        for i in 0..100 {
            index.insert(i, false, 2 * i);
        }
        assert_eq!(index.len(), 200);
        assert_eq!(index.get(7, false), Some(14));
        assert_eq!(index.get(7, true), Some(8));
        assert_eq!(index.iter().count(), 200);
    }

    #[test]
    fn the_largest_value_and_address_are_kept_apart() {
        let mut index = AddressIndex::default();
        index.insert(u32::MAX, true, VALUE - 1);
        index.insert(u32::MAX, false, 0);
        assert_eq!(index.get(u32::MAX, true), Some(VALUE - 1));
        assert_eq!(index.get(u32::MAX, false), Some(0));
        assert_eq!(index.get(u32::MAX - 1, true), None);
    }

    #[test]
    #[should_panic(expected = "below 2^31 - 1")]
    fn a_value_that_would_read_as_empty_is_refused() {
        AddressIndex::default().insert(1, false, VALUE);
    }
}
