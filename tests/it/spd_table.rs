//! The function table of an SPD (the module block's symbol table, function records, blocks
//! and callees), read by the checks of docs/format.md: the real SPDs of the shared suite
//! give the figures `expected-module.json` holds, read in place.

use std::collections::BTreeMap;
use std::fs::File;

use serde_json::{Value, json};
use sptdump::image::spd::{self, table::FunctionTable};
use sptdump_testkit::shared;

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
