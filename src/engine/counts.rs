//! Counts: exact hits per key (an RVA or an arc), in a hash table built for the memory system.
//!
//! A summary adds one key per RVA, pair or arc of every record, so this is the inner loop of
//! `/summary`, and it is bound by memory latency: on a long production trace the tables of
//! one binary hold about a million keys, far more than the caches. So the table is laid out
//! in cache lines:
//!
//! - A bucket is one 64-byte line: 8 RVAs or 5 arcs, each with the low 31 bits of its hits.
//!   The rare sums that pass 2^31 carry into a side table, so hits stay exact: a slot and
//!   the hits added to it at once are each under 2^31, so their sum never wraps, and its top
//!   bit is the carry. A key is looked up by comparing it with every slot of its line at
//!   once (no branch per slot), and nearly always found in its home bucket: one cache miss
//!   per update at most.
//! - The home bucket is chosen by multiply-shift, so any bucket count works; the table grows
//!   (doubles) before it is three quarters full. A full bucket spills into the next one,
//!   and a key found past its home trades places with one of the home's keys (a different
//!   slot each time): a key counted often comes home and stays, and a spill costs a second
//!   line only until it does. Growing visits the new buckets in order (multiply-shift keeps
//!   the order of the hashes), so it streams through memory.
//! - [`add_all`](Counts::add_all) asks for each key's home bucket as the key comes in and
//!   counts it 32 keys of the same table later, so that the misses overlap instead of
//!   queueing one behind the other. The keys wait in a small ring that outlives the record,
//!   each with its home, hashed once: a record's first keys were asked for during the
//!   table's previous records, and nothing waits at a record's start. A key that spilled
//!   waits again, its next bucket asked for, in a ring of four (spills are rare: a longer
//!   wait would see the bucket leave the cache again).
//!   Reading the table counts the keys still waiting, so no caller has to remember them.
//!
//! `benches/counting.rs` measures it against the general map a crate gives.

use std::hash::Hash;

use rustc_hash::FxHashMap;

/// A key: a `u32` RVA or an arc `[from, to]`.
pub trait CountKey: Copy + Eq + Ord + Hash + Default + std::fmt::Debug {
    /// The key that marks a free slot; it is counted apart when it occurs as a real key.
    const EMPTY: Self;
    /// One cache line of slots for this key.
    type Bucket: Bucket<Self>;
    /// Spreads the key over 64 bits; the high 32 pick the bucket.
    fn hash(self) -> u64;
    /// Adds `hits` (at most [`LOW_MAX`]) to the low hits of the slot of `keys` holding `key`,
    /// if one does: whether one did, and whether the sum passed [`LOW_MAX`], its top bit
    /// then taken off the slot, for the caller to carry.
    #[inline(always)]
    fn bump<const N: usize>(
        keys: &[Self; N],
        lows: &mut [u32; N],
        key: Self,
        hits: u32,
    ) -> (bool, bool) {
        let found = keys
            .iter()
            .enumerate()
            .fold(0u32, |found, (i, &k)| found | u32::from(k == key) << i);
        if found == 0 {
            return (false, false);
        }
        let low = &mut lows[found.trailing_zeros() as usize];
        let sum = *low + hits;
        *low = sum & LOW_MAX;
        (true, sum > LOW_MAX)
    }
}

impl CountKey for u32 {
    const EMPTY: u32 = u32::MAX;
    type Bucket = CacheLine<u32, 8>;
    #[inline]
    fn hash(self) -> u64 {
        u64::from(self).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
    #[inline(always)]
    fn bump<const N: usize>(
        keys: &[u32; N],
        lows: &mut [u32; N],
        key: u32,
        hits: u32,
    ) -> (bool, bool) {
        // Every slot adds `hits` under a mask, all ones for the key's slot and zero for the
        // others: with no index taken from the compare, the stores' addresses do not wait on
        // the loaded keys, and neither do the next keys' loads. A few vector instructions
        // for eight RVAs; for five arcs the scalar masks cost more than they save. Only the
        // key's slot can pass LOW_MAX, so a top bit in any sum is its carry.
        let (mut found, mut sums) = (0u32, 0u32);
        for (k, low) in keys.iter().zip(lows) {
            let mask = 0u32.wrapping_sub(u32::from(*k == key));
            let sum = *low + (hits & mask);
            *low = sum & LOW_MAX;
            found |= mask;
            sums |= sum;
        }
        (found != 0, sums > LOW_MAX)
    }
}

impl CountKey for [u32; 2] {
    const EMPTY: [u32; 2] = [u32::MAX; 2];
    type Bucket = CacheLine<[u32; 2], 5>;
    #[inline]
    fn hash(self) -> u64 {
        let x = u64::from(self[0]) << 32 | u64::from(self[1]);
        (x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// `N` keys and the low 31 bits of their hits, in one cache line. Slots fill in order, and
/// free ones hold [`CountKey::EMPTY`].
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub struct CacheLine<K, const N: usize> {
    keys: [K; N],
    lows: [u32; N],
}

/// What the table needs of a bucket; implemented by [`CacheLine`] only.
pub trait Bucket<K>: Copy + std::fmt::Debug {
    /// A bucket of free slots.
    const FREE: Self;
    /// Its slots: `N`.
    const SLOTS: usize;
    /// Adds `hits` (at most [`LOW_MAX`]) to the slot holding `key`, if one does: whether one
    /// did, and whether it carried 2^31 out. `key` must not be [`CountKey::EMPTY`].
    fn bump(&mut self, key: K, hits: u32) -> (bool, bool);
    /// How many slots are taken (they are the first ones).
    fn taken(&self) -> usize;
    /// The key and the low hits of slot `i`.
    fn slot(&self, i: usize) -> (K, u32);
    /// Puts `key` with `low` hits in slot `i`.
    fn put(&mut self, i: usize, key: K, low: u32);
}

impl<K: CountKey, const N: usize> Bucket<K> for CacheLine<K, N> {
    const FREE: Self = CacheLine {
        keys: [K::EMPTY; N],
        lows: [0; N],
    };
    const SLOTS: usize = N;

    #[inline(always)]
    fn bump(&mut self, key: K, hits: u32) -> (bool, bool) {
        K::bump(&self.keys, &mut self.lows, key, hits)
    }

    #[inline]
    fn taken(&self) -> usize {
        self.keys.iter().filter(|&&k| k != K::EMPTY).count()
    }

    #[inline]
    fn slot(&self, i: usize) -> (K, u32) {
        (self.keys[i], self.lows[i])
    }

    #[inline]
    fn put(&mut self, i: usize, key: K, low: u32) {
        self.keys[i] = key;
        self.lows[i] = low;
    }
}

/// The bits of a key's hits its slot keeps; the rest are carried apart.
const LOW_BITS: u32 = 31;

/// The most a slot holds, and the most [`Counts::add_all`] adds to one at once.
const LOW_MAX: u32 = (1 << LOW_BITS) - 1;

/// Hits per key.
#[derive(Clone, Debug)]
pub(crate) struct Counts<K: CountKey> {
    buckets: Vec<K::Bucket>,
    /// Keys in the buckets.
    len: usize,
    /// Each key's hits above the low 31 bits, in units of 2^31.
    carries: FxHashMap<K, u128>,
    /// The hits of the key equal to [`CountKey::EMPTY`], which cannot live in a slot.
    empty_key: Option<u128>,
    /// Keys whose home bucket was asked for, not yet counted.
    asked: Waiting<K, AHEAD>,
    /// Keys their home bucket did not settle, their next bucket asked for.
    spilled: Waiting<K, SPILLS_AHEAD>,
    /// The slot of a full home bucket whose key a spilled one trades places with last.
    turn: usize,
}

/// How many keys of a table are asked for before they are counted: about the misses a core
/// can have in flight.
const AHEAD: usize = 32;

/// How many spilled keys wait for their next bucket before they are counted. Spills are
/// rare (a few keys in a hundred), so a few of them span enough keys for the bucket to
/// arrive, and not so many that it leaves the cache again before it is used.
const SPILLS_AHEAD: usize = 4;

/// Keys with their hits and their home bucket, waiting for a bucket to arrive in the cache:
/// a ring, each key pushed in pushing out the one `N` keys before it. A key's home is
/// kept from when it was asked for (found again only when the table grows), so that it is
/// hashed once.
#[derive(Clone, Debug)]
struct Waiting<K: CountKey, const N: usize> {
    /// [`CountKey::EMPTY`] where free (that key never waits).
    keys: [(K, u32); N],
    homes: [usize; N],
    next: usize,
}

impl<K: CountKey, const N: usize> Waiting<K, N> {
    const EMPTY: Self = Waiting {
        keys: [(K::EMPTY, 0); N],
        homes: [0; N],
        next: 0,
    };

    /// Puts `key` in, and takes out the key that has waited longest, if any, with its hits
    /// and home.
    #[inline(always)]
    fn push(&mut self, key: K, low: u32, home: usize) -> Option<(K, u32, usize)> {
        let i = self.next % N;
        let (out, out_low) = std::mem::replace(&mut self.keys[i], (key, low));
        let out_home = std::mem::replace(&mut self.homes[i], home);
        self.next = i + 1;
        (out != K::EMPTY).then_some((out, out_low, out_home))
    }

    /// Finds every waiting key's home again, through `home`: the table has grown.
    fn rehome(&mut self, home: impl Fn(K) -> usize) {
        for ((key, _), at) in self.keys.iter().zip(&mut self.homes) {
            if *key != K::EMPTY {
                *at = home(*key);
            }
        }
    }

    /// Every key waiting, with its hits.
    fn iter(&self) -> impl Iterator<Item = (K, u32)> + '_ {
        self.keys.iter().copied().filter(|&(k, _)| k != K::EMPTY)
    }
}

/// Buckets of a new table: 512 bytes.
const INITIAL_BUCKETS: usize = 8;

impl<K: CountKey> Default for Counts<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K: CountKey> Counts<K> {
    /// An empty table.
    pub(crate) fn new() -> Self {
        Counts::with_buckets(INITIAL_BUCKETS)
    }

    fn with_buckets(n: usize) -> Self {
        Counts {
            buckets: vec![K::Bucket::FREE; n],
            len: 0,
            carries: FxHashMap::default(),
            empty_key: None,
            asked: Waiting::EMPTY,
            spilled: Waiting::EMPTY,
            turn: 0,
        }
    }

    /// How many distinct keys were added.
    pub(crate) fn len(&self) -> usize {
        let new = self
            .waiting()
            .into_keys()
            .filter(|&key| !self.contains(key));
        self.len + usize::from(self.empty_key.is_some()) + new.count()
    }

    /// The bucket `key` lives in, or would.
    #[inline(always)]
    fn home(&self, key: K) -> usize {
        home_of(key, self.buckets.len())
    }

    /// Adds `hits` to each of `keys`. Each key's home bucket is asked for as the key comes
    /// in, and the key counted [`AHEAD`] keys of this table later, from this record or the
    /// next ones, so that the cache misses overlap instead of queueing one behind the other.
    /// A key its home bucket does not settle waits again, its next bucket asked for.
    #[inline]
    pub(crate) fn add_all(&mut self, keys: impl Iterator<Item = K>, hits: u128) {
        let low = match u32::try_from(hits) {
            Ok(low) if low <= LOW_MAX => low,
            _ => {
                keys.for_each(|key| self.add(key, hits));
                return;
            }
        };
        for key in keys {
            if key == K::EMPTY {
                self.add_slow(0, key, low);
                continue;
            }
            let home = self.home(key);
            prefetch_line(&self.buckets[home]);
            if let Some((key, low, home)) = self.asked.push(key, low, home)
                && !self.add_home(home, key, low)
            {
                self.spill(home, key, low);
            }
        }
    }

    /// Lets a key its home bucket did not settle wait again, its next bucket asked for, and
    /// counts the one that waited longest.
    #[inline(never)]
    fn spill(&mut self, home: usize, key: K, low: u32) {
        if let Some(next) = self.buckets.get(home + 1) {
            prefetch_line(next);
        }
        if let Some((key, low, home)) = self.spilled.push(key, low, home) {
            self.add_slow(home, key, low);
        }
    }

    /// The keys waiting to be counted, each once with its hits.
    fn waiting(&self) -> FxHashMap<K, u128> {
        let mut all = FxHashMap::default();
        for (key, low) in self.asked.iter().chain(self.spilled.iter()) {
            *all.entry(key).or_insert(0) += u128::from(low);
        }
        all
    }

    /// Whether `key` is in the buckets.
    fn contains(&self, key: K) -> bool {
        let mut at = self.home(key);
        for _ in 0..self.buckets.len() {
            let bucket = &self.buckets[at];
            let taken = bucket.taken();
            if (0..taken).any(|i| bucket.slot(i).0 == key) {
                return true;
            }
            if taken < K::Bucket::SLOTS {
                return false;
            }
            at = self.next(at);
        }
        false
    }

    /// Adds `hits` to `key`.
    #[inline]
    pub(crate) fn add(&mut self, key: K, hits: u128) {
        let home = self.home(key);
        let low = hits as u32 & LOW_MAX;
        if !self.add_home(home, key, low) {
            self.add_slow(home, key, low);
        }
        if hits >> LOW_BITS != 0 {
            self.carry(key, hits >> LOW_BITS);
        }
    }

    /// Adds `hits` to `key` when its home bucket settles it: the key is there, or the bucket
    /// has a free slot, and then the key is new (a key goes past its home bucket only when
    /// that is full, and a bucket never frees a slot). The inner loop of a summary.
    #[inline(always)]
    fn add_home(&mut self, home: usize, key: K, hits: u32) -> bool {
        // The free slots hold EMPTY: as a key it is counted apart.
        if key == K::EMPTY {
            return false;
        }
        // The fast path, nearly always taken: `key` is in its home bucket.
        if self.bump_at(home, key, hits) {
            return true;
        }
        self.insert_at(home, key, hits)
    }

    /// Adds `hits` to `key` if bucket `at` holds it.
    #[inline(always)]
    fn bump_at(&mut self, at: usize, key: K, hits: u32) -> bool {
        let (found, wrapped) = self.buckets[at].bump(key, hits);
        if found && wrapped {
            self.carry(key, 1);
        }
        found
    }

    /// Puts a new key in bucket `at`, when that has a free slot, growing the table past
    /// three quarters full.
    #[inline(never)]
    fn insert_at(&mut self, at: usize, key: K, hits: u32) -> bool {
        if !self.put_at(at, key, hits) {
            return false;
        }
        self.len += 1;
        if self.len * 4 > self.buckets.len() * K::Bucket::SLOTS * 3 {
            self.grow();
        }
        true
    }

    /// Puts `key` in the first free slot of bucket `at`, if it has one.
    #[inline]
    fn put_at(&mut self, at: usize, key: K, low: u32) -> bool {
        let bucket = &mut self.buckets[at];
        let taken = bucket.taken();
        if taken == K::Bucket::SLOTS {
            return false;
        }
        bucket.put(taken, key, low);
        true
    }

    /// The bucket after `at`, the first after the last. Under three quarters full overall,
    /// a bucket with a free slot is always ahead.
    fn next(&self, at: usize) -> usize {
        if at + 1 == self.buckets.len() {
            0
        } else {
            at + 1
        }
    }

    /// Adds a key that is not in its home bucket: further along, or new.
    #[inline(never)]
    fn add_slow(&mut self, home: usize, key: K, hits: u32) {
        if key == K::EMPTY {
            let h = self.empty_key.get_or_insert(0);
            *h = h.saturating_add(u128::from(hits));
            return;
        }
        let mut at = home;
        let mut probed = 0;
        loop {
            if self.bump_at(at, key, hits) {
                if at != home {
                    self.bring_home(home, at, key);
                }
                return;
            }
            if self.insert_at(at, key, hits) {
                return;
            }
            // Full: the key spilled into a following bucket. One lap of the table at most
            // (under three quarters full, a free slot is ahead): checked in debug builds,
            // where a broken table then fails at once instead of looping.
            probed += 1;
            debug_assert!(
                probed < self.buckets.len(),
                "a lap of the table without room"
            );
            at = self.next(at);
        }
    }

    /// Trades the places of `key`, found in bucket `at` past its full home bucket, and a
    /// key of that home, taken in turn: a key counted often comes home and stays, its
    /// misses no longer two lines each. The key sent on stays where a search finds it: every
    /// bucket from its own home to `at` is full.
    #[cold]
    fn bring_home(&mut self, home: usize, at: usize, key: K) {
        let Some(j) = (0..K::Bucket::SLOTS).find(|&i| self.buckets[at].slot(i).0 == key) else {
            return;
        };
        self.turn = (self.turn + 1) % K::Bucket::SLOTS;
        let (sent, sent_low) = self.buckets[home].slot(self.turn);
        let (_, low) = self.buckets[at].slot(j);
        self.buckets[home].put(self.turn, key, low);
        self.buckets[at].put(j, sent, sent_low);
    }

    /// Adds `carry` units of 2^31 to `key`.
    #[cold]
    fn carry(&mut self, key: K, carry: u128) {
        if key == K::EMPTY {
            let h = self.empty_key.get_or_insert(0);
            *h = h.saturating_add(carry.saturating_mul(1 << LOW_BITS));
            return;
        }
        let c = self.carries.entry(key).or_insert(0);
        *c = c.saturating_add(carry);
    }

    /// Doubles the bucket count and puts every key in its new place.
    #[cold]
    fn grow(&mut self) {
        let mut bigger = Counts::<K>::with_buckets(self.buckets.len() * 2);
        for bucket in &self.buckets {
            for i in 0..bucket.taken() {
                let (key, low) = bucket.slot(i);
                bigger.place(key, low);
            }
        }
        self.buckets = bigger.buckets;
        // The keys waiting were asked for in the smaller table.
        let n = self.buckets.len();
        self.asked.rehome(|key| home_of(key, n));
        self.spilled.rehome(|key| home_of(key, n));
    }

    /// Puts a key that is not in the table in the first free slot from its home bucket on.
    fn place(&mut self, key: K, low: u32) {
        let mut at = self.home(key);
        while !self.put_at(at, key, low) {
            at = self.next(at);
        }
    }

    /// Every key with its exact hits, in no particular order, the keys waiting to be counted
    /// included.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (K, u128)> + '_ {
        let waiting = self.waiting();
        let new: Vec<(K, u128)> = waiting
            .iter()
            .map(|(&key, &hits)| (key, hits))
            .filter(|&(key, _)| !self.contains(key))
            .collect();
        self.buckets
            .iter()
            .flat_map(|b| (0..b.taken()).map(|i| b.slot(i)))
            .map(move |(key, low)| {
                let carries = self.carries.get(&key).copied().unwrap_or(0);
                let hits = carries
                    .saturating_mul(1 << LOW_BITS)
                    .saturating_add(u128::from(low));
                (
                    key,
                    hits.saturating_add(waiting.get(&key).copied().unwrap_or(0)),
                )
            })
            .chain(new)
            .chain(self.empty_key.map(|h| (K::EMPTY, h)))
    }
}

/// The bucket of `buckets` that `key` lives in, or would: multiply-shift, the high 32 bits
/// of the hash scaled to the bucket count.
#[inline(always)]
fn home_of<K: CountKey>(key: K, buckets: usize) -> usize {
    (((key.hash() >> 32) * buckets as u64) >> 32) as usize
}

/// Asks the CPU to start loading the cache line of `line` into the caches.
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn prefetch_line<T>(line: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is a hint: it reads nothing into a register, never faults and has
    // no effect the program can observe but time. The pointer comes from a live reference,
    // and SSE, which the instruction needs, is part of every x86_64 CPU. This is one of the
    // crate's two `unsafe` blocks; the fuzz targets run through it with every summary.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(line).cast());
    }
    // Elsewhere no hint: the table works the same, with its misses one after another.
    #[cfg(not(target_arch = "x86_64"))]
    let _ = line;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn sorted<K: CountKey>(c: &Counts<K>) -> Vec<(K, u128)> {
        let mut v: Vec<_> = c.iter().collect();
        v.sort();
        v
    }

    fn xorshift(x: &mut u32) -> u32 {
        *x ^= *x << 13;
        *x ^= *x >> 17;
        *x ^= *x << 5;
        *x
    }

    #[test]
    fn a_bucket_is_one_cache_line() {
        assert_eq!(size_of::<<u32 as CountKey>::Bucket>(), 64);
        assert_eq!(size_of::<<[u32; 2] as CountKey>::Bucket>(), 64);
        assert_eq!(align_of::<<u32 as CountKey>::Bucket>(), 64);
    }

    #[test]
    fn counts_like_a_map_through_growth() {
        let mut c = Counts::<u32>::new();
        let mut a = Counts::<[u32; 2]>::new();
        let mut model = BTreeMap::new();
        let mut arcs = BTreeMap::new();
        let mut x = 12345u32;
        for i in 0..50_000u32 {
            let key = xorshift(&mut x) % 7000;
            let hits = u128::from(i % 7 + 1);
            c.add_all([key].into_iter(), hits);
            *model.entry(key).or_insert(0u128) += hits;
            let arc = [key, xorshift(&mut x) % 3];
            a.add(arc, hits);
            *arcs.entry(arc).or_insert(0u128) += hits;
        }
        assert_eq!(c.len(), model.len());
        assert_eq!(sorted(&c), model.into_iter().collect::<Vec<_>>());
        assert_eq!(a.len(), arcs.len());
        assert_eq!(sorted(&a), arcs.into_iter().collect::<Vec<_>>());
    }

    /// Hits are kept as 32 low bits in the table and the rest carried apart: every part of
    /// a u128 survives, including high bits whose low 96 are zero.
    #[test]
    fn a_table_doubles_when_it_grows() {
        // Growing by doubling keeps the work of growing linear in the keys; the counts
        // would be the same at any size.
        let mut c = Counts::<u32>::new();
        let mut sizes = vec![c.buckets.len()];
        for k in 0..100_000u32 {
            c.add(k, 1);
            if c.buckets.len() != *sizes.last().unwrap() {
                sizes.push(c.buckets.len());
            }
        }
        assert!(sizes.len() > 3, "{sizes:?}");
        assert!(sizes.windows(2).all(|w| w[1] == 2 * w[0]), "{sizes:?}");
        assert_eq!(c.iter().count(), 100_000);
    }

    #[test]
    fn hits_of_every_width_are_exact() {
        let mut c = Counts::<u32>::new();
        let widths = [
            1,
            u128::from(u32::MAX),
            1 << 32,
            (1 << 64) + 3,
            1 << 96,
            u128::MAX >> 1,
        ];
        for (key, &hits) in (7u32..).zip(&widths) {
            c.add(key, hits);
            c.add(key, hits);
        }
        let expected: Vec<(u32, u128)> = (7u32..).zip(widths.map(|h| 2 * h)).collect();
        assert_eq!(sorted(&c), expected);
    }

    #[test]
    fn long_runs_of_keys_count_alike_through_growth_and_spills() {
        // Runs longer than the ring of waiting keys, with repeats inside a run, that grow
        // the table in the middle of a run, hits that make the slots carry, and hits past
        // 32 bits now and then.
        let mut c = Counts::<u32>::new();
        let mut a = Counts::<[u32; 2]>::new();
        let mut model = BTreeMap::new();
        let mut arcs = BTreeMap::new();
        let mut x = 99u32;
        for run in 0..400u32 {
            let len = 1 + xorshift(&mut x) as usize % 200;
            let keys: Vec<u32> = (0..len)
                .map(|_| xorshift(&mut x) % (50 + 40 * run))
                .collect();
            let hits = if run % 50 == 7 {
                (1u128 << 40) + u128::from(run)
            } else if run % 10 == 3 {
                // Near the most the slots take at once: their sums pass 2^31 and carry.
                u128::from(LOW_MAX - run)
            } else {
                u128::from(run % 5 + 1)
            };
            c.add_all(keys.iter().copied(), hits);
            a.add_all(keys.windows(2).map(|w| [w[0], w[1]]), hits);
            for &k in &keys {
                *model.entry(k).or_insert(0u128) += hits;
            }
            for w in keys.windows(2) {
                *arcs.entry([w[0], w[1]]).or_insert(0u128) += hits;
            }
        }
        assert!(
            c.buckets.len() > 1000,
            "the table grew: {}",
            c.buckets.len()
        );
        assert_eq!(sorted(&c), model.into_iter().collect::<Vec<_>>());
        assert_eq!(sorted(&a), arcs.into_iter().collect::<Vec<_>>());
    }

    #[test]
    fn keys_that_share_a_bucket_spill_into_the_next_and_wrap() {
        // Keys whose hashes all pick the last bucket: it fills, and they spill into the
        // first ones.
        let mut c = Counts::<u32>::new();
        let last = INITIAL_BUCKETS - 1;
        let crowd: Vec<u32> = (0..u32::MAX)
            .filter(|&k| c.home(k) == last)
            .take(3 * 8)
            .collect();
        for (i, &k) in crowd.iter().enumerate() {
            c.add(k, i as u128 + 1);
        }
        for (i, &k) in crowd.iter().enumerate() {
            c.add(k, i as u128 + 1);
        }
        let mut want: Vec<(u32, u128)> = crowd
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, 2 * (i as u128 + 1)))
            .collect();
        want.sort();
        assert_eq!(sorted(&c), want);
        assert_eq!(c.buckets.len(), INITIAL_BUCKETS);
        assert_eq!(c.buckets[0].taken(), 8);
        assert_eq!(c.buckets[1].taken(), 8);
    }

    #[test]
    fn keys_counted_past_their_home_come_home() {
        // A key found past its full home bucket trades places with a key of the home, a
        // different slot each time: two such keys counted in turn both come home, the keys
        // sent on are still found, and no count moves with the wrong key.
        let mut c = Counts::<u32>::new();
        let crowd: Vec<u32> = (0..u32::MAX).filter(|&k| c.home(k) == 3).take(10).collect();
        for (i, &k) in crowd.iter().enumerate() {
            c.add(k, i as u128 + 1);
        }
        let at_home = |c: &Counts<u32>, k| (0..8).any(|i| c.buckets[3].slot(i).0 == k);
        assert!(!at_home(&c, crowd[8]) && !at_home(&c, crowd[9]));
        c.add(crowd[8], 100);
        c.add(crowd[9], 100);
        assert!(at_home(&c, crowd[8]) && at_home(&c, crowd[9]));
        assert_eq!((c.buckets[3].taken(), c.buckets[4].taken()), (8, 2));
        let mut want: Vec<(u32, u128)> = crowd
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, i as u128 + 1 + if i >= 8 { 100 } else { 0 }))
            .collect();
        want.sort();
        assert_eq!(sorted(&c), want);
    }

    #[test]
    fn keys_still_waiting_are_read_like_counted_ones() {
        // A record of fewer keys than wait: none is in the buckets yet, and reading counts
        // them all, repeats added up.
        let mut c = Counts::<[u32; 2]>::new();
        let mut model = BTreeMap::new();
        let record: Vec<[u32; 2]> = (0..10u32).map(|i| [i % 4, 7]).collect();
        c.add_all(record.iter().copied(), 5);
        for &k in &record {
            *model.entry(k).or_insert(0u128) += 5;
        }
        assert_eq!(c.len, 0, "the keys should still wait");
        assert_eq!(sorted(&c), model.clone().into_iter().collect::<Vec<_>>());
        assert_eq!(c.len(), model.len());

        // Keys that all pick the last bucket spill, and wait again; read at every step, the
        // table agrees with a map, whether a key waits once, twice or not at all.
        let last = INITIAL_BUCKETS - 1;
        let crowd: Vec<[u32; 2]> = (0..u32::MAX)
            .map(|i| [i, 1])
            .filter(|&k| c.home(k) == last)
            .take(3 * 5)
            .collect();
        for round in 0..3u32 {
            for (i, &k) in crowd.iter().enumerate() {
                let hits = u128::from(round) + i as u128 + 1;
                c.add_all([k, k].into_iter(), hits);
                *model.entry(k).or_insert(0) += 2 * hits;
                assert_eq!(sorted(&c), model.clone().into_iter().collect::<Vec<_>>());
                assert_eq!(c.len(), model.len());
            }
        }
        assert!(
            c.spilled.iter().count() > 0,
            "some keys should wait after a spill"
        );
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
    fn a_slot_that_carries_leaves_its_neighbours_alone() {
        // Keys that share a bucket, one of them summing past 2^32 again and again.
        let mut c = Counts::<u32>::new();
        let mut a = Counts::<[u32; 2]>::new();
        let crowd: Vec<u32> = (0..u32::MAX).filter(|&k| c.home(k) == 3).take(8).collect();
        let arcs: Vec<[u32; 2]> = (0..u32::MAX)
            .map(|k| [k, 9])
            .filter(|&k| a.home(k) == 3)
            .take(5)
            .collect();
        // The most a slot takes at once, so that its sums carry on the fast path.
        let hot = u128::from(LOW_MAX);
        for _ in 0..5 {
            c.add_all(crowd.iter().copied(), 3);
            c.add_all([crowd[4]; 3].into_iter(), hot);
            a.add_all(arcs.iter().copied(), 3);
            a.add_all([arcs[2]; 3].into_iter(), hot);
        }
        assert_eq!(c.buckets[3].taken(), 8);
        assert_eq!(a.buckets[3].taken(), 5);
        let mut want: Vec<(u32, u128)> = crowd.iter().map(|&k| (k, 15)).collect();
        want[4].1 += 15 * hot;
        want.sort();
        assert_eq!(sorted(&c), want);
        let mut want: Vec<([u32; 2], u128)> = arcs.iter().map(|&k| (k, 15)).collect();
        want[2].1 += 15 * hot;
        want.sort();
        assert_eq!(sorted(&a), want);
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
        // A new key whose first hits already pass 2^32.
        let mut r = Counts::<u32>::new();
        r.add(5, big + 3);
        r.add(5, u128::from(u32::MAX));
        r.add_all([6, u32::MAX, 6].into_iter(), big + 1);
        r.add_all([u32::MAX, 6].into_iter(), u128::from(u32::MAX));
        assert_eq!(
            sorted(&r),
            [
                (5, big + (1 << 32) + 2),
                (6, 2 * big + 2 + u128::from(u32::MAX)),
                (u32::MAX, big + (1 << 32))
            ]
        );
    }
}
