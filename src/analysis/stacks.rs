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

use std::collections::BTreeMap;

use byteorder::{ByteOrder, LittleEndian as LE};
use rustc_hash::FxHashSet;

use crate::analysis::keys::Namers;
use crate::analysis::summary::Summary;
use crate::engine::slices::{self, SliceCounts};
use crate::format::record::{SampleKind, Samples};
use crate::format::stackorder::StackOrder;
use crate::image::attached::SymbolMap;

/// The unique call stacks of a trace and their hits, as decoded.
#[derive(Debug, Default)]
pub(crate) struct StackCounts {
    /// The progid (2 bytes, little-endian) and the record's frames as stored, with the
    /// summed hits: keyed by the raw bytes, so that counting a record copies and hashes them
    /// once, and held one after another.
    pub(super) stacks: SliceCounts<u8>,
    /// Per binary: the call-stack records with at least one frame, and their hits.
    pub(super) totals: BTreeMap<u16, (u64, u128)>,
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
    pub(crate) fn add_soon(&mut self, s: &Samples<'_>) {
        if let Some(progid) = self.taken(s) {
            self.stacks
                .add_soon(&[&progid.to_le_bytes(), s.payload], s.hits);
        }
    }

    /// Counts the stacks [`add_soon`](StackCounts::add_soon) holds.
    pub(crate) fn settle(&mut self) {
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
    pub(crate) fn renumber(self, to: impl Fn(u16) -> u16) -> StackCounts {
        StackCounts {
            stacks: slices::renumbered(&self.stacks, &to),
            totals: slices::renumbered_totals(self.totals, &to),
        }
    }

    /// Adds what `other` counted.
    pub(crate) fn absorb(&mut self, other: StackCounts) {
        slices::absorb_totals(&mut self.totals, other.totals);
        for (stack, hits) in other.stacks.iter() {
            self.stacks.add(stack, hits);
        }
    }

    /// Calls `f` with every unique stack: its progid, its frames as stored, and its hits.
    pub(crate) fn for_each(&self, mut f: impl FnMut(u16, &[u32], u128)) {
        let mut frames: Vec<u32> = Vec::new();
        for (progid, stored, hits) in self.raw() {
            frames.clear();
            frames.extend(stored.chunks_exact(4).map(LE::read_u32));
            f(progid, &frames, hits);
        }
    }

    /// Every unique stack without copying it: its progid, its frames as stored (little-endian
    /// RVAs, 4 bytes each), and its hits, in the order first counted.
    pub(crate) fn raw(&self) -> impl Iterator<Item = (u16, &[u8], u128)> + '_ {
        (0..self.unique()).map(|i| self.get(i))
    }

    /// Unique stack `i` (below [`StackCounts::unique`]), as [`StackCounts::raw`] gives it.
    pub(crate) fn get(&self, i: usize) -> (u16, &[u8], u128) {
        let (stack, hits) = self.stacks.get(i);
        (LE::read_u16(&stack[..2]), &stack[2..], hits)
    }

    /// The binaries with call stacks, and the records and hits of each, in progid order.
    pub(crate) fn totals(&self) -> impl Iterator<Item = (u16, u64, u128)> + '_ {
        self.totals
            .iter()
            .map(|(&p, &(records, hits))| (p, records, hits))
    }

    /// Lets go of what finds a stack to count it, while the stacks are only read; it is made
    /// again if one is counted after.
    pub(crate) fn let_go_of_index(&mut self) {
        self.stacks.let_go_of_index();
    }

    /// How many unique (binary, stack) entries are held.
    pub(crate) fn unique(&self) -> usize {
        self.stacks.len()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::keys::plain;
    use crate::analysis::{profile::*, sampled::*};
    use crate::engine::threads::Share;
    use crate::format::tables::Tables;

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
