//! The function table of an SPD (the module block's symbol table, function records, blocks
//! and callees), read by the checks of docs/format.md: the real SPDs of the shared suite
//! give the figures `expected-module.json` holds, read in place.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Cursor;

use proptest::prelude::*;
use serde_json::{Value, json};
use sptdump::image::spd::{
    self,
    table::{FunctionTable, TableCheck, TableError},
};
use sptdump_testkit::fixtures::APP_GUID as APP;
use sptdump_testkit::shared;
use sptdump_testkit::spd::{SpdBuilder, field};

/// The figures `expected-module.json` holds for a file, as the reader finds them.
fn figures(path: &std::path::Path) -> Value {
    let mut file = File::open(path).unwrap();
    let len = file.metadata().unwrap().len();
    let header = spd::read_header(&mut file, len).unwrap();
    let table = FunctionTable::read(&mut file, &header)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (mut emitted, mut blocks, mut edges, mut callees, mut covered) = (0, 0, 0, 0, 0u64);
    let mut hottest: Option<(u64, Value)> = None;
    for f in table.functions() {
        let p = f.profile();
        emitted += u64::from(f.emitted());
        blocks += u64::from(p.blocks);
        edges += u64::from(p.edges);
        callees += f.callees().count() as u64;
        covered += u64::from(p.covered);
        // The first of the largest, in record order.
        if hottest.as_ref().is_none_or(|(d, _)| p.dyninst > *d) {
            let v = json!({
                "name": f.name(),
                "hash": format!("{:016X}", f.hash()),
                "rva": f.rva(),
                "size": f.code_size(),
                "blocks": p.blocks,
                "entry": p.entry,
                "dyninst": p.dyninst,
            });
            hottest = Some((p.dyninst, v));
        }
    }
    let first_names: Vec<String> = table
        .functions()
        .take(3)
        .map(|f| f.name().into_owned())
        .collect();
    json!({
        "functions": table.len(),
        "emitted": emitted,
        "blocks": blocks,
        "edges": edges,
        "callees": callees,
        "covered_blocks": covered,
        "totals_raw": header.totals,
        "first_names": first_names,
        "hottest_by_dyninst": hottest.map(|h| h.1),
    })
}

#[test]
fn the_real_spds_hold_the_figures_expected() {
    let Some(dir) = shared::spd_files("the_real_spds_hold_the_figures_expected") else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("expected-module.json")).unwrap();
    let expected: BTreeMap<String, Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(expected.len(), 6);
    for (file, want) in &expected {
        assert_eq!(&figures(&dir.join(file)), want, "{file}");
    }
}

/// Every function of a real SPD is found again by its hash, through its bucket's chain.
#[test]
fn the_real_spds_find_each_function_by_its_hash() {
    let Some(dir) = shared::spd_files("the_real_spds_find_each_function_by_its_hash") else {
        return;
    };
    let path = dir.join("2026-03-16_map_9ad16a75.spd");
    let mut file = File::open(&path).unwrap();
    let len = file.metadata().unwrap().len();
    let header = spd::read_header(&mut file, len).unwrap();
    let table = FunctionTable::read(&mut file, &header).unwrap();
    assert_eq!(table.len(), 19);
    for f in table.functions() {
        let found = table.by_hash(f.hash()).expect("found by its hash");
        assert_eq!(found.index(), f.index());
    }
    assert!(table.by_hash(0x0123_4567_89AB_CDEF).is_none());
}

/// The function table of an SPD in memory.
fn table_of(bytes: &[u8]) -> Result<FunctionTable, TableError> {
    let mut cursor = Cursor::new(bytes);
    let header = spd::read_header(&mut cursor, bytes.len() as u64).expect("section 10's checks");
    FunctionTable::read(&mut cursor, &header)
}

/// The check a table fails and where, when it fails one.
fn failure(bytes: &[u8]) -> Option<(TableCheck, u64)> {
    match table_of(bytes) {
        Ok(_) => None,
        Err(TableError::Unreadable { check, offset, .. }) => Some((check, offset)),
        Err(e) => panic!("reading memory cannot fail: {e}"),
    }
}

#[test]
fn a_written_function_table_reads_back() {
    let b = SpdBuilder::new("app.exe", APP, 1);
    let table = table_of(&b.build()).unwrap();
    assert_eq!(table.len(), b.functions.len());
    assert!(!table.is_empty());
    for (f, want) in table.functions().zip(&b.functions) {
        assert_eq!(f.name(), want.name);
        assert_eq!(f.hash(), want.hash);
        assert_eq!((f.rva(), f.code_size()), (want.rva, want.size));
        assert_eq!(f.symbol().id, want.id);
        assert_eq!(f.is_static(), want.flags & 0x04 != 0);
        let p = f.profile();
        assert_eq!(p.blocks as usize, want.blocks.len());
        assert_eq!(p.entry, want.blocks[0].count);
        let dyninst: u64 = want
            .blocks
            .iter()
            .map(|b| b.count * u64::from(b.instructions))
            .sum();
        assert_eq!(p.dyninst, dyninst, "{}", want.name);
        let index = f.block_index();
        for (block, w) in f.blocks().zip(&want.blocks) {
            assert_eq!((block.count, block.instructions), (w.count, w.instructions));
            assert_eq!(block.ranges().collect::<Vec<_>>(), w.ranges);
            assert_eq!(block.value_profiles, w.value_profiles);
            assert_eq!(block.inline_bytes, &w.inline[..]);
            let successors: Vec<(u32, u64)> = block
                .successors()
                .map(|s| (index.id_at(s.target).unwrap(), s.count))
                .collect();
            assert_eq!(successors, w.successors);
        }
        let callees: Vec<(u64, u32, u64, Vec<u32>)> = f
            .callees()
            .map(|c| (c.hash, c.kind, c.calls, c.sites().collect()))
            .collect();
        let want_callees: Vec<(u64, u32, u64, Vec<u32>)> = want
            .callees
            .iter()
            .map(|c| (c.hash, c.kind, c.calls, c.sites.clone()))
            .collect();
        assert_eq!(callees, want_callees);
        let tail: Vec<(u64, u32, u64)> = f.tail().map(|t| (t.hash, t.flags, t.count)).collect();
        assert_eq!(tail, want.tail);
    }
    let folded = table
        .functions()
        .find(|f| f.name() == "checksum_fast")
        .unwrap();
    assert_eq!(folded.folded_into(), Some(0x10D0));
    assert!(!folded.emitted());
    // Found through the buckets' chains, heads and the entries after them.
    for f in table.functions() {
        assert_eq!(table.by_hash(f.hash()).unwrap().index(), f.index());
    }
}

/// An SPD of no function (a module whose code was all inlined, or none profiled) reads as
/// an empty table: its buckets all empty slots.
#[test]
fn a_table_of_no_function_is_empty() {
    let mut b = SpdBuilder::new("app.exe", APP, 1);
    b.functions.clear();
    let table = table_of(&b.build()).unwrap();
    assert!(table.is_empty());
    assert_eq!((table.len(), table.functions().count()), (0, 0));
    assert!(table.by_hash(0).is_none());
}

/// Each check refuses a synthetic SPD broken in exactly its way, at the offset of what
/// broke it; the SPD unbroken passes them all.
#[test]
fn each_table_check_refuses_what_breaks_it() {
    let good = SpdBuilder::new("app.exe", APP, 1);
    let l = good.layout();
    assert_eq!(failure(&good.build()), None);
    let m = l.module;
    // Function 0 heads bucket 1 (slot 1); a chain's link to slot 0 would read as its end.
    let head = (0..good.functions.len())
        .find(|&i| l.entries[i] != l.symbols)
        .unwrap();
    let mut same_hash = good.clone();
    same_hash.functions[1].hash = same_hash.functions[0].hash;
    let shared_at = {
        let l = same_hash.layout();
        l.entries[0].max(l.entries[1])
    };
    let mut early_exit = good.clone();
    early_exit.functions[2].blocks[1].successors.clear();
    let cases: Vec<(&str, SpdBuilder, TableCheck, usize)> = vec![
        (
            "symbols not after the header",
            good.clone().patch_u32(m + 0x24, 0x3C),
            TableCheck::ModuleAreas,
            m + 0x24,
        ),
        (
            "a function count too small",
            good.clone().patch_u32(m + field::FUNCTION_COUNT, 7),
            TableCheck::SymbolCount,
            m + 0x1C,
        ),
        (
            "two functions of one hash",
            same_hash,
            TableCheck::UniqueHashes,
            shared_at,
        ),
        (
            "an entry in another bucket",
            good.clone().patch(l.entries[0], &[0xFF; 8]),
            TableCheck::Buckets,
            l.entries[0],
        ),
        (
            "a chain's loop",
            good.clone().patch_u32(
                l.entries[head] + field::ENTRY_NEXT,
                (l.entries[head] - l.symbols) as u32,
            ),
            TableCheck::Chains,
            l.entries[head] + 0x20,
        ),
        (
            "a name out of order",
            good.clone().patch_u32(l.entries[1] + field::ENTRY_NAME, 1),
            TableCheck::RecordTiling,
            l.entries[1] + 0x08,
        ),
        (
            "a record's hash",
            good.clone().patch(l.records[2], &[0x11; 8]),
            TableCheck::RecordHash,
            l.records[2],
        ),
        (
            "a tail of no bytes said",
            good.clone().patch_u32(l.records[2] + 0x48, 24),
            TableCheck::RecordSize,
            l.records[2] + 0x10,
        ),
        (
            "a zero word",
            good.clone().patch_u32(l.records[2] + field::RECORD_ZERO, 1),
            TableCheck::ZeroWords,
            l.records[2] + 0x4C,
        ),
        (
            "a block's id",
            good.clone().patch_u32(l.blocks[2][1].start, 7),
            TableCheck::BlockIds,
            l.blocks[2][1].start,
        ),
        (
            "a successor between blocks",
            good.clone().patch_u32(l.blocks[2][0].successors, 4),
            TableCheck::Successors,
            l.blocks[2][0].successors,
        ),
        (
            "an exit before the last block",
            early_exit,
            TableCheck::ExitBlock,
            l.blocks[2][1].start,
        ),
        (
            "a gap between ranges",
            good.clone().patch_u32(l.blocks[2][1].ranges, 0x0D),
            TableCheck::Ranges,
            l.blocks[2][1].ranges,
        ),
        (
            "a call from block 9",
            good.clone().patch_u32(l.callees[0] + 24, 9),
            TableCheck::CallSites,
            l.callees[0] + 24,
        ),
    ];
    let mut seen = Vec::new();
    for (name, b, check, at) in cases {
        assert_eq!(failure(&b.build()), Some((check, at as u64)), "{name}");
        seen.push(check);
    }
    assert_eq!(seen, TableCheck::ALL, "a case per check, in order");
}

/// A fault in a part after the first of its kind (a second successor, a second callee entry)
/// or in the last block is named at that part's own offset, not at its block's or its
/// area's start.
#[test]
fn a_fault_past_the_first_part_is_named_where_it_is() {
    const SUCCESSOR: usize = 16;
    const CALLEE: usize = 24;
    let good = SpdBuilder::new("app.exe", APP, 1);
    let l = good.layout();
    // main_entry's last block returns to its first: no block is the exit.
    let mut no_exit = good.clone();
    no_exit.functions[0].blocks[1].successors.push((1, 1));
    // main_entry calls compute_checksum (one site), then imports ExitProcess.
    let second_callee = l.callees[0] + CALLEE + 4;
    // ... from block 2, and from a block 9 it does not have.
    let mut second_site = good.clone();
    second_site.functions[0].callees[1].sites.push(9);
    let cases: Vec<(&str, SpdBuilder, TableCheck, usize)> = vec![
        (
            "a second successor between blocks",
            good.clone()
                .patch_u32(l.blocks[1][1].successors + SUCCESSOR, 4),
            TableCheck::Successors,
            l.blocks[1][1].successors + SUCCESSOR,
        ),
        (
            "a last block that is not the exit",
            no_exit,
            TableCheck::ExitBlock,
            l.blocks[0][1].start,
        ),
        (
            "a range's odd stored length",
            good.clone().patch_u32(l.blocks[2][1].ranges + 4, 0x65),
            TableCheck::Ranges,
            l.blocks[2][1].ranges + 4,
        ),
        (
            "a second callee entry past its area",
            good.clone().patch_u32(second_callee + 20, 0xFFFF),
            TableCheck::CallSites,
            second_callee,
        ),
        (
            "a second callee's second site",
            second_site,
            TableCheck::CallSites,
            second_callee + CALLEE + 4,
        ),
    ];
    for (name, b, check, at) in cases {
        assert_eq!(failure(&b.build()), Some((check, at as u64)), "{name}");
    }
}

/// The message names the check and the offset, and says what was found.
#[test]
fn a_refused_table_says_which_check_where() {
    let good = SpdBuilder::new("app.exe", APP, 1);
    let l = good.layout();
    let bytes = good.patch_u32(l.callees[0] + 24, 9).build();
    let e = table_of(&bytes).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "not a readable SPD function table: call sites failed at {:#X}: a call of \
             {:016X} is made from block 9, which is not in 1..2",
            l.callees[0] + 24,
            sptdump_testkit::spd::function_hash("compute_checksum")
        )
    );
    // A last block that loops back twice: it says how many successors it has.
    let mut no_exit = SpdBuilder::new("app.exe", APP, 1);
    no_exit.functions[0].blocks[1].successors = vec![(1, 1), (2, 1)];
    let e = table_of(&no_exit.build()).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "not a readable SPD function table: exit block failed at {:#X}: the last \
             block (2) has 2 successors; no block is the exit",
            l.blocks[0][1].start
        )
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any change of a synthetic SPD's module block, or any cut, is read or refused by a
    /// named check: never a panic; and what is read can be walked whole.
    #[test]
    fn corrupted_function_tables_are_read_or_refused(
        changes in proptest::collection::vec((0usize..4096, any::<u8>()), 1..6),
        cut in proptest::option::of(0usize..4096),
    ) {
        let b = SpdBuilder::new("app.exe", APP, 1);
        let module = b.module_offset();
        let mut bytes = b.build();
        let span = bytes.len() - module;
        for (at, v) in changes {
            bytes[module + at % span] = v;
        }
        if let Some(cut) = cut {
            bytes.truncate(module + cut % span);
        }
        let mut cursor = Cursor::new(&bytes);
        let Ok(header) = spd::read_header(&mut cursor, bytes.len() as u64) else {
            return Ok(());
        };
        match FunctionTable::read(&mut cursor, &header) {
            Ok(table) => {
                for f in table.functions() {
                    let p = f.profile();
                    prop_assert_eq!(p.blocks, f.block_count());
                    let index = f.block_index();
                    for block in f.blocks() {
                        for s in block.successors() {
                            prop_assert!(index.id_at(s.target).is_some());
                        }
                        let _ = block.ranges().count();
                    }
                    for c in f.callees() {
                        prop_assert!(c.sites().all(|s| (1..=p.blocks).contains(&s)));
                    }
                    let _ = f.tail().count();
                }
            }
            Err(TableError::Unreadable { offset, .. }) => {
                prop_assert!(offset < bytes.len() as u64 + 4);
            }
            Err(e) => prop_assert!(false, "reading memory cannot fail: {}", e),
        }
    }
}
