//! `/functions`: inclusive and exclusive hits per key, as profilers report them (docs/output.md).
//!
//! Over one binary's call stacks, each weighing its record's hits:
//!
//! ```text
//! exclusive(k) = hits of the stacks whose leaf frame is k          (its own code)
//! inclusive(k) = hits of the stacks in which k appears at least once (it, or what it called)
//! ```
//!
//! so a recursive function counts once per stack, the exclusive column adds up to the
//! binary's total, and inclusive is never below exclusive.
//!
//! Samples without call stacks (each IP event, the targets of LBR branches) are stacks of
//! one address each (`sampled::flat`): a flat profile, where inclusive and exclusive differ
//! only by the functions inlined at an address.

use std::cmp::Reverse;

use serde::Serialize;

use crate::analysis::profile::{BinaryStacks, StackProfile};
use crate::format::record::SampleKind;

/// The `/functions` report of one binary: a `{"type":"functions",...}` line in JSON.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct FunctionsLine {
    /// The binary's program ID.
    pub progid: u16,
    /// The binary's name.
    pub name: String,
    /// What the hits are of: an IP event, `LBR` (branch targets) or `ETW_CALLSTACK`.
    pub source: &'static str,
    /// The source's records.
    pub records: u64,
    /// Call-stack records with at least one frame (0 for other sources).
    pub stacks: u64,
    /// Their summed hits: the total the shares are of.
    pub hits: u128,
    /// How many keys the stacks have.
    pub keys: usize,
    /// The same as `keys`: the old name, kept for consumers (deprecated).
    pub unique: usize,
    /// The keys with the most inclusive hits, at most `/top` of them, hottest first.
    pub top: Vec<FunctionRow>,
}

/// One key's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FunctionRow {
    /// `binary!function` or `binary+0x1A2B`.
    pub key: String,
    /// The function's start, or the address.
    pub rva: u32,
    /// The hits of the stacks it is in.
    pub inclusive: u128,
    /// The hits of the stacks it is the leaf of.
    pub exclusive: u128,
    /// Whether the key is a function the compiler inlined (with `/pdb`, unless
    /// `/noinline`): its hits are those of its code wherever it was inlined.
    pub inlined: bool,
}

impl FunctionRow {
    /// The key's name.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Hits of the stacks the key appears in.
    pub fn inclusive(&self) -> u128 {
        self.inclusive
    }

    /// Hits of the stacks the key is the leaf of.
    pub fn exclusive(&self) -> u128 {
        self.exclusive
    }

    /// Whether the key is an inlined function.
    pub fn inlined(&self) -> bool {
        self.inlined
    }
}

impl FunctionsLine {
    /// The rows shown, at most `/top:N` of them.
    pub fn rows(&self) -> &[FunctionRow] {
        &self.top
    }

    /// The binary's stack total.
    pub fn hits(&self) -> u128 {
        self.hits
    }
}

/// The report of every binary, in progid order, `top` rows each: per binary, the lines of
/// its `sampled` sources, then that of its call stacks.
pub(crate) fn functions(
    sampled: &[BinaryStacks],
    profile: &StackProfile,
    top: usize,
) -> Vec<FunctionsLine> {
    let sampled = sampled.iter().map(|b| line(b, top)).collect();
    with_stacks(sampled, profile, top)
}

/// The report of every binary, from the lines of its `sampled` sources (made by [`fn@line`], in
/// the order of `sampled::sampled`) and its call stacks.
pub(crate) fn with_stacks(
    sampled: Vec<FunctionsLine>,
    profile: &StackProfile,
    top: usize,
) -> Vec<FunctionsLine> {
    let mut all = sampled;
    all.extend(profile.binaries.iter().map(|b| line(b, top)));
    // Stable: each binary's sampled sources stay before its call stacks.
    all.sort_by_key(|l| l.progid);
    all
}

/// The report of one binary and source, `top` rows.
pub(crate) fn line(b: &BinaryStacks, top: usize) -> FunctionsLine {
    let mut inclusive = vec![0u128; b.keys.len()];
    let mut exclusive = vec![0u128; b.keys.len()];
    // Which keys the current stack has counted already: recursion counts once.
    let mut seen = vec![usize::MAX; b.keys.len()];
    for (n, (stack, hits)) in b.stacks.iter().enumerate() {
        if let Some(&leaf) = stack.last() {
            exclusive[leaf as usize] += hits;
        }
        for &k in stack {
            if seen[k as usize] != n {
                seen[k as usize] = n;
                inclusive[k as usize] += hits;
            }
        }
    }
    let rank = |k: u32| {
        (
            Reverse(inclusive[k as usize]),
            Reverse(exclusive[k as usize]),
        )
    };
    // Only the keys that can be among the first `top` are named: those ranked at or above the
    // `top`-th by hits (ties at that rank are ordered by name, so all of them are).
    let mut shown: Vec<u32> = (0..b.keys.len() as u32).collect();
    if top < shown.len() {
        match top.checked_sub(1) {
            None => shown.clear(),
            Some(last) => {
                let bound = rank(*shown.select_nth_unstable_by_key(last, |&k| rank(k)).1);
                shown.retain(|&k| rank(k) <= bound);
            }
        }
    }
    let mut rows: Vec<FunctionRow> = shown
        .into_iter()
        .map(|k| FunctionRow {
            key: b.key_name(k),
            rva: b.keys[k as usize].rva,
            inclusive: inclusive[k as usize],
            exclusive: exclusive[k as usize],
            inlined: b.keys[k as usize].inlined,
        })
        .collect();
    rows.sort_by(|a, b| {
        (Reverse(a.inclusive), Reverse(a.exclusive), &a.key, a.rva).cmp(&(
            Reverse(b.inclusive),
            Reverse(b.exclusive),
            &b.key,
            b.rva,
        ))
    });
    rows.truncate(top);
    rows.shrink_to_fit();
    let unique = b.keys.len();
    FunctionsLine {
        progid: b.progid,
        name: b.name.clone(),
        source: b.source.name(),
        records: b.records,
        stacks: if b.source == SampleKind::CallStack {
            b.records
        } else {
            0
        },
        hits: b.hits,
        keys: unique,
        unique,
        top: rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::keys::plain;
    use crate::analysis::stacks::StackCounts;
    use crate::format::opcode::Opcode;
    use crate::format::record::Samples;
    use crate::format::stackorder::StackOrder;
    use crate::format::tables::Tables;

    fn counts(stacks: &[(u128, &[u32])]) -> StackCounts {
        let mut c = StackCounts::default();
        for (hits, frames) in stacks {
            let payload: Vec<u8> = frames.iter().flat_map(|v| v.to_le_bytes()).collect();
            c.add(&Samples {
                offset: 0,
                opcode: Opcode::ETW_CALLSTACK,
                progid: Some(0),
                hits: *hits,
                count: frames.len() as u8,
                payload: &payload,
            });
        }
        c
    }

    fn rows(c: &StackCounts) -> Vec<(String, u128, u128)> {
        let p = c.profile(StackOrder::LeafFirst, &Tables::default(), &plain());
        functions(&[], &p, 100)[0]
            .top
            .iter()
            .map(|r| (r.key.clone(), r.inclusive, r.exclusive))
            .collect()
    }

    #[test]
    fn recursion_counts_once_per_stack() {
        // Leaf first: a (0xA) called by b (0xB) called by a.
        let c = counts(&[(5, &[0xA, 0xB, 0xA]), (2, &[0xB])]);
        assert_eq!(
            rows(&c),
            [
                ("progid 0+0xB".to_owned(), 7, 2),
                ("progid 0+0xA".to_owned(), 5, 5),
            ]
        );
    }

    #[test]
    fn exclusive_adds_up_to_the_total_and_inclusive_is_never_below() {
        let c = counts(&[
            (3, &[1, 2, 3]),
            (4, &[2, 3]),
            (1, &[3]),
            (6, &[4, 3, 4, 3]),
            (u128::from(u64::MAX) + 1, &[1, 3]),
        ]);
        let p = c.profile(StackOrder::LeafFirst, &Tables::default(), &plain());
        let line = &functions(&[], &p, 100)[0];
        assert_eq!(line.stacks, 5);
        assert_eq!(line.hits, 14 + u128::from(u64::MAX) + 1);
        assert_eq!(
            line.top.iter().map(|r| r.exclusive).sum::<u128>(),
            line.hits
        );
        assert!(line.top.iter().all(|r| r.inclusive >= r.exclusive));
        // 3 is the outermost frame of every stack.
        assert_eq!(line.top[0].key, "progid 0+0x3");
        assert_eq!(line.top[0].inclusive, line.hits);
    }

    #[test]
    fn a_stack_of_one_frame_is_its_own_leaf_and_root() {
        let c = counts(&[(9, &[0x42])]);
        assert_eq!(rows(&c), [("progid 0+0x42".to_owned(), 9, 9)]);
    }

    #[test]
    fn ties_order_by_exclusive_then_name_and_top_limits() {
        let c = counts(&[(1, &[0x2, 0x1]), (1, &[0x3, 0x1]), (1, &[0x1])]);
        let p = c.profile(StackOrder::LeafFirst, &Tables::default(), &plain());
        let line = &functions(&[], &p, 2)[0];
        assert_eq!(line.unique, 3);
        let keys: Vec<&str> = line.top.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["progid 0+0x1", "progid 0+0x2"]);
    }

    #[test]
    fn every_top_is_the_first_rows_of_the_whole_ranking() {
        // Ties of both columns across every boundary: 0x9 leads; 0x5, 0x7, 0x6 tie on hits
        // (so their names order them); so do 0x8 and the leaf 0x3, ahead of its caller 0x4,
        // which ties with them on inclusive hits alone.
        let c = counts(&[
            (5, &[0x9]),
            (2, &[0x7]),
            (2, &[0x5]),
            (2, &[0x6]),
            (1, &[0x8]),
            (1, &[0x3, 0x4]),
        ]);
        let p = c.profile(StackOrder::LeafFirst, &Tables::default(), &plain());
        let keys = |top| -> Vec<String> {
            let line = &functions(&[], &p, top)[0];
            assert_eq!(line.keys, 7);
            line.top.iter().map(|r| r.key.clone()).collect()
        };
        let all = keys(usize::MAX);
        let order = ["9", "5", "6", "7", "3", "8", "4"].map(|k| format!("progid 0+0x{k}"));
        assert_eq!(all, order);
        for top in 0..=8 {
            assert_eq!(keys(top), all[..top.min(7)], "/top:{top}");
        }
    }

    #[test]
    fn root_first_reads_the_last_frame_as_the_leaf() {
        let c = counts(&[(5, &[0xA, 0xB])]);
        let p = c.profile(StackOrder::RootFirst, &Tables::default(), &plain());
        let line = &functions(&[], &p, 10)[0];
        let leaf = line.top.iter().find(|r| r.exclusive > 0).unwrap();
        assert_eq!(leaf.key, "progid 0+0xB");
    }

    #[test]
    fn keys_are_functions_with_symbols_and_return_addresses_look_back_one_byte() {
        // main [0x100, 0x140), two functions both named "dup" at 0x200 and 0x300, and a gap.
        let map = crate::analysis::keys::main_and_two_dups();
        let c = counts(&[
            // Leaf 0x205 in the first dup, called from main: the return address 0x140 is
            // past main's end, but the call instruction at 0x13F is in it.
            (4, &[0x205, 0x140]),
            // Leaf in the second dup; return address 0x200 looks back into the gap, so it
            // stays an address, shown as stored.
            (2, &[0x310, 0x200]),
            // A leaf no function holds.
            (1, &[0x150, 0x120]),
        ]);
        let p = c.profile(
            StackOrder::LeafFirst,
            &Tables::default(),
            &crate::analysis::stacks::namers(&c, None, StackOrder::LeafFirst, &map, true),
        );
        let line = &functions(&[], &p, 10)[0];
        let got: Vec<(&str, u32, u128, u128)> = line
            .top
            .iter()
            .map(|r| (r.key.as_str(), r.rva, r.inclusive, r.exclusive))
            .collect();
        assert_eq!(
            got,
            [
                ("progid 0!main", 0x100, 5, 0),
                ("progid 0!dup", 0x200, 4, 4),
                ("progid 0!dup", 0x300, 2, 2),
                ("progid 0+0x200", 0x200, 2, 0),
                ("progid 0+0x150", 0x150, 1, 1),
            ]
        );
        // Folded, the two functions named dup are one name.
        let folded = p.folded();
        assert_eq!(
            folded,
            [
                ("progid 0!main;progid 0!dup".to_owned(), 4),
                ("progid 0!main;progid 0+0x150".to_owned(), 1),
                ("progid 0+0x200;progid 0!dup".to_owned(), 2),
            ]
        );
    }
}
