//! Reads arbitrary bytes as the image of an LBR trace, or as the trace beside a real image:
//! the first byte chooses. Even: the rest is `/image` for `testdata/pe/lbr.spt` (recorded
//! from a run of `lbr.exe`), so that mutations reach the PE reader, the section
//! table, code cut short and code that decodes to something else under real ranges. Odd:
//! the rest is the trace, read with the real `lbr.exe`, so that mutated records (pairs
//! outside the image, into padding, 255 pairs, REPEAT near 2^64) go through range reading.
//! Both with `lbr.pdb`, under the views that read LBR records as ranges: `/coverage`,
//! `/dyninst`, `/callgraph`, `/annotate`, `/cfg` (the flow), and `/check`'s `lbr-thin` and
//! `lbr-falsely-cold`.
//!
//! An image that cannot be read is refused with an error, never a panic; with one that can,
//! the run must end `Ok`, read nothing it cannot, and write JSON lines that parse; every
//! block of every function's graph `/cfg` prints conserves its flow exactly.

#![no_main]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use libfuzzer_sys::fuzz_target;
use sptdump::dump::Outcome;
use sptdump_testkit::dumping::{OptionSet, Via, dump_bytes};

const TRACE: &[u8] = include_bytes!("../../testdata/pe/lbr.spt");

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/pe")
        .join(name)
}

/// The file an input image is written to: the reader takes a path, as `/image` does.
fn scratch() -> PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed) % 4;
    std::env::temp_dir().join(format!("sptdump-fuzz-image-{}-{n}.exe", std::process::id()))
}

/// The option sets, each with `lbr.pdb`, made once.
fn sets() -> &'static [OptionSet] {
    static SETS: OnceLock<Vec<OptionSet>> = OnceLock::new();
    SETS.get_or_init(|| {
        [
            "/json /coverage /dyninst:0 /callgraph /annotate:scramble /cfg /top:0",
            "/coverage /dyninst /annotate:classify /cfg:scramble",
            "/json /check",
        ]
        .iter()
        .map(|line| {
            let mut set = OptionSet::parse(line);
            set.plan.files.pdbs = vec![fixture("lbr.pdb")];
            assert!(set.plan.load().is_empty(), "lbr.pdb");
            set
        })
        .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    let (image, trace) = if choice & 1 == 0 {
        let path = scratch();
        std::fs::write(&path, rest).unwrap();
        (path, TRACE)
    } else {
        (fixture("lbr.exe"), rest)
    };
    for set in sets() {
        let mut set = set.clone();
        set.plan.files.images = vec![image.clone()];
        // The library reads the image as the command line's run does; one it refuses is
        // said, and nothing more is done with it.
        if !set.plan.load().is_empty() {
            break;
        }
        let d = dump_bytes(trace, &set, Via::File);
        assert_ne!(d.outcome, Outcome::ReadFailed, "{}", set.name);
        if set.is_json() {
            for line in d.out.lines() {
                if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(line) {
                    panic!("{}: not JSON ({e}): {line}", set.name);
                }
            }
            conserved(&d.out);
        }
    }
    if choice & 1 == 0 {
        let _ = std::fs::remove_file(scratch());
    }
});

/// Every block of every `/cfg` graph in `out` (JSON lines) conserves: its flow equals the
/// sum of its incoming edges' flows and of its outgoing edges'.
fn conserved(out: &str) {
    use std::collections::BTreeMap;
    let mut flows: BTreeMap<(u64, u64), u128> = BTreeMap::new();
    let mut into: BTreeMap<(u64, u64), u128> = BTreeMap::new();
    let mut from: BTreeMap<(u64, u64), u128> = BTreeMap::new();
    for line in out.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let function = v["function_rva"].as_u64().unwrap_or(0);
        match v["type"].as_str() {
            Some("cfg_block") => {
                if let Some(flow) = v["flow"].as_u64() {
                    flows.insert((function, v["id"].as_u64().unwrap()), u128::from(flow));
                }
            }
            Some("cfg_edge") => {
                let flow = u128::from(v["flow"].as_u64().unwrap_or(0));
                if let Some(to) = v["to"].as_u64() {
                    *into.entry((function, to)).or_default() += flow;
                }
                if let Some(id) = v["from"].as_u64() {
                    *from.entry((function, id)).or_default() += flow;
                }
            }
            _ => {}
        }
    }
    for (block, flow) in flows {
        assert_eq!(
            into.get(&block).copied().unwrap_or(0),
            flow,
            "into {block:?}"
        );
        assert_eq!(
            from.get(&block).copied().unwrap_or(0),
            flow,
            "out of {block:?}"
        );
    }
}
