//! spddump's `conserved` (section 18): whether a function's counts form a flow, held to a
//! plain reading of its `spd_block` lines (each block's count beside the sums of its
//! incoming and outgoing edges), on SPDs built here to conserve or not, the bundled one and
//! the shared real ones.

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;
use sptdump_testkit::shared;
use sptdump_testkit::spd::{SpdBlock, SpdBuilder, SpdFunction};

use crate::support::crate_root;

/// `spddump /json /func /fg SPD`'s lines, parsed.
fn lines(spd: &Path) -> Vec<Value> {
    let out = Command::cargo_bin("spddump")
        .unwrap()
        .current_dir(crate_root())
        .args(["/json", "/func", "/fg"])
        .arg(spd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Each function's `conserved` as spddump says it, and as its blocks add up.
fn said_and_read(spd: &Path) -> BTreeMap<String, (bool, bool)> {
    let lines = lines(spd);
    let mut blocks: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for b in lines.iter().filter(|l| l["type"] == "spd_block") {
        blocks
            .entry(b["function"].as_str().unwrap().to_owned())
            .or_default()
            .push(b);
    }
    let mut out = BTreeMap::new();
    for f in lines.iter().filter(|l| l["type"] == "spd_function") {
        let hash = f["hash"].as_str().unwrap().to_owned();
        let mine = blocks.get(&hash).cloned().unwrap_or_default();
        let mut into: BTreeMap<u64, u128> = BTreeMap::new();
        for b in &mine {
            for s in b["successors"].as_array().unwrap() {
                let n = u128::from(s["count"].as_u64().unwrap());
                *into.entry(s["block"].as_u64().unwrap()).or_default() += n;
            }
        }
        let adds_up = mine.iter().all(|b| {
            let (id, count) = (
                b["id"].as_u64().unwrap(),
                u128::from(b["count"].as_u64().unwrap()),
            );
            let successors = b["successors"].as_array().unwrap();
            let out: u128 = successors
                .iter()
                .map(|s| u128::from(s["count"].as_u64().unwrap()))
                .sum();
            let into = into.get(&id).copied().unwrap_or(0);
            (id == 1 || into == count) && (successors.is_empty() || out == count)
        });
        out.insert(hash, (f["conserved"].as_bool().unwrap(), adds_up));
    }
    out
}

/// A function whose counts form a flow conserves; one block off by one in either direction
/// does not, and `/fg` marks that block.
#[test]
fn a_block_off_by_one_breaks_the_flow_and_is_marked() {
    let blocks = |middle: u64| {
        vec![
            SpdBlock::new(10, 3, &[(0, 8)], &[(2, 6), (3, 4)]),
            SpdBlock::new(middle, 2, &[(8, 4)], &[(3, 6)]),
            SpdBlock::new(10, 2, &[(12, 4)], &[]),
        ]
    };
    let dir = tempfile::tempdir().unwrap();
    let mut spd = SpdBuilder::new("app.exe", "7B3F9C21-5D4E-4A8B-9F12-6C0D3E8A1B57", 3);
    spd.functions = vec![
        SpdFunction::new("flows", 0x1000, 16, blocks(6)),
        SpdFunction::new("more", 0x1100, 16, blocks(7)),
        SpdFunction::new("less", 0x1200, 16, blocks(5)),
    ];
    let spd = spd.build();
    let path = dir.path().join("app.spd");
    std::fs::write(&path, spd).unwrap();
    let said: Vec<bool> = said_and_read(&path)
        .values()
        .map(|&(said, read)| {
            assert_eq!(said, read);
            said
        })
        .collect();
    assert_eq!(said.iter().filter(|&&c| c).count(), 1, "{said:?}");
    let out = Command::cargo_bin("spddump")
        .unwrap()
        .args(["/fg"])
        .arg(&path)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let marked: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("not conserved"))
        .collect();
    assert_eq!(marked.len(), 2, "{text}");
    assert!(
        marked
            .iter()
            .all(|l| l.trim_start().starts_with("block    2")),
        "{text}"
    );
}

/// The bundled SPD and every shared real one: `conserved` is what the blocks add up to;
/// nearly every function of a profiled real SPD conserves (SPDConvert writes flows), and
/// those that do not are the ones with tiny counts and edges of zero.
#[test]
fn conserved_is_what_the_blocks_add_up_to_on_real_spds() {
    for (_, (said, read)) in said_and_read(&crate_root().join("testdata/pe/app.spd")) {
        assert_eq!(said, read);
    }
    let Some(dir) = shared::spd_files("conserved_is_what_the_blocks_add_up_to_on_real_spds") else {
        return;
    };
    let mut broken = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "spd") {
            continue;
        }
        let functions = said_and_read(&path);
        let conserved = functions.values().filter(|(said, _)| *said).count();
        for (hash, (said, read)) in &functions {
            assert_eq!(said, read, "{}: {hash}", path.display());
        }
        assert!(
            conserved * 100 >= functions.len() * 99,
            "{}: {conserved} of {}",
            path.display(),
            functions.len()
        );
        broken += functions.len() - conserved;
    }
    assert!(
        broken > 0,
        "the real SPDs hold a few functions whose counts do not add up"
    );
}
