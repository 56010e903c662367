//! Reads arbitrary bytes as an SPD (a Sample Profile Database), as `/match` and `spddump`
//! read one: its identity, then its function table. The readers must read it or refuse it
//! by a named check, never panic, hang or allocate from a field they have not checked; and
//! what they read keeps what the checks promise, walked whole as the views walk it: the
//! blocks as a map of the code, the SPD compared with itself and with the bundled app.spd
//! in both orders, and set beside a trace of its build drawn over its code, as
//! `/compare TRACE SPD` reads it from a file.

#![no_main]

use std::io::Cursor;

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use sptdump::analysis::spd::pair as spdpair;
use sptdump::dump::Outcome;
use sptdump::image::spd::table::{FunctionTable, TableError};
use sptdump::image::spd::{self, SpdError};
use sptdump::image::spdprofile::SpdProfile;
use sptdump_testkit::dumping::{OptionSet, Via, dump_beside};
use sptdump_testkit::onspd;

fuzz_target!(|data: &[u8]| {
    let mut cursor = Cursor::new(data);
    let header = match spd::read_header(&mut cursor, data.len() as u64) {
        Ok(header) => header,
        Err(SpdError::NotRecognised { .. }) => return,
        Err(e) => panic!("reading memory cannot fail: {e}"),
    };
    let spd = &header.spd;
    assert!(data.starts_with(spd::SIGNATURE));
    assert!(!spd.binary.is_empty() && spd.binary.len() <= 260);
    assert!(spd.binary.is_ascii());
    let table = match FunctionTable::read(&mut cursor, &header) {
        Ok(table) => table,
        Err(TableError::Unreadable { .. }) => return,
        Err(e) => panic!("reading memory cannot fail: {e}"),
    };
    for f in table.functions() {
        let p = f.profile();
        assert_eq!(p.blocks, f.block_count());
        let index = f.block_index();
        for block in f.blocks() {
            for s in block.successors() {
                assert!(
                    index.id_at(s.target).is_some(),
                    "a checked successor lands on a block"
                );
            }
            let _ = block.ranges().count();
        }
        for c in f.callees() {
            assert!(c.sites().all(|s| (1..=p.blocks).contains(&s)));
        }
        let _ = f.tail().count();
        assert_eq!(table.by_hash(f.hash()).map(|g| g.hash()), Some(f.hash()));
    }
    // What /match gives a trace of it: the functions with code name their first byte.
    let profile = SpdProfile::from_table(&table);
    assert_eq!(profile.functions.len(), table.len());
    for f in profile.functions.iter().filter(|f| f.emitted()) {
        assert!(profile.function_at(f.rva).is_some_and(|g| g.holds(f.rva)));
        assert!(profile.symbols.lookup(f.rva).is_some());
    }
    // The blocks map the code they tile (unless two functions' code overlaps: then there is
    // no map): each range's first byte is its block's, and the whole of a function's code,
    // run from its first byte to its last, meets every block of it once.
    let blocks = &profile.blocks;
    let mapped = blocks.overlap().is_none();
    for (f, function) in profile.functions.iter().enumerate().filter(|_| mapped) {
        let own = blocks.of_function(f);
        for b in own.clone() {
            let block = &blocks.all()[b];
            assert_eq!(block.function as usize, f);
            for &(rva, _) in blocks.ranges(block) {
                if rva != u32::MAX {
                    assert_eq!(blocks.at(rva), Some((f, b)));
                }
            }
        }
        let ends = u64::from(function.rva) + u64::from(function.size) <= 1 << 32;
        if function.emitted() && !own.is_empty() && ends {
            let end = function.rva + (function.size - 1);
            let mut met: Vec<usize> = Vec::new();
            let run = blocks.run(function.rva, end, |b| met.push(b));
            assert_eq!(run, Some(true));
            met.sort_unstable();
            assert_eq!(met, own.collect::<Vec<_>>());
        }
    }
    // An SPD beside itself: every function in both, of the same shape, fully overlapping.
    let report = spdpair::compare(&profile, &profile, usize::MAX);
    assert_eq!((report.both, report.same_shape), (table.len(), table.len()));
    assert_eq!(
        (report.only_old, report.only_new, report.changed),
        (0, 0, 0)
    );
    if report.total_old > 0 {
        assert!(
            (report.function_overlap - 1.0).abs() < 1e-9,
            "{}",
            report.function_overlap
        );
        assert!(
            (report.block_overlap - 1.0).abs() < 1e-9,
            "{}",
            report.block_overlap
        );
    }
    // Beside another SPD (the bundled app.spd), in both orders: the overlaps are shares, the
    // block overlap never exceeds the function overlap, every function is counted once.
    let other = bundled();
    for (old, new) in [(&profile, other), (other, &profile)] {
        let report = spdpair::compare(old, new, 5);
        let share = |x: f64| (-1e-9..=1.0 + 1e-9).contains(&x);
        assert!(
            share(report.function_overlap),
            "{}",
            report.function_overlap
        );
        assert!(share(report.block_overlap), "{}", report.block_overlap);
        assert!(report.block_overlap <= report.function_overlap + 1e-9);
        assert!(
            share(report.changed_share_old),
            "{}",
            report.changed_share_old
        );
        assert_eq!(report.same_shape + report.changed, report.both);
        assert_eq!(report.both + report.only_old, old.functions.len());
        assert!(report.rows.len() <= 5 && report.rows.len() <= report.functions);
    }
    beside_a_trace(data, &header, &profile);
});

/// `/compare TRACE SPD` with the SPD read from a file, as the command line reads it, beside
/// a trace of its build drawn over its code (`sptdump_testkit::onspd`), read from memory and
/// from a pipe: the run ends, every line is a JSON object with a type, and the shares and
/// overlaps are shares.
fn beside_a_trace(data: &[u8], header: &spd::Header, profile: &SpdProfile) {
    static SET: std::sync::OnceLock<(OptionSet, PathBuf)> = std::sync::OnceLock::new();
    let (set, path) = SET.get_or_init(|| {
        let path = std::env::temp_dir().join(format!("sptdump-fuzz-{}.spd", std::process::id()));
        (OptionSet::parse("/compare /json TRACE SPD"), path)
    });
    std::fs::write(path, data).expect("a scratch file");
    let trace = onspd::trace(header, profile, 12, 7);
    for via in [Via::File, Via::Pipe] {
        let d = dump_beside(&trace, set, via, path);
        assert_ne!(d.outcome, Outcome::ReadFailed, "reading memory cannot fail");
        for line in d.out.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            assert!(v["type"].is_string(), "{line}");
            for key in [
                "overlap",
                "trace_share",
                "spd_share",
                "shape_overlap",
                "loss",
            ] {
                let share = v[key]
                    .as_f64()
                    .is_none_or(|x| (-1e-9..=1.0 + 1e-9).contains(&x));
                assert!(share, "{key}: {line}");
            }
        }
    }
}

/// The bundled `testdata/pe/app.spd`, read once.
fn bundled() -> &'static SpdProfile {
    static APP: std::sync::OnceLock<SpdProfile> = std::sync::OnceLock::new();
    APP.get_or_init(|| {
        let bytes: &[u8] = include_bytes!("../../testdata/pe/app.spd");
        let mut cursor = Cursor::new(bytes);
        let header = spd::read_header(&mut cursor, bytes.len() as u64).expect("app.spd");
        let table = FunctionTable::read(&mut cursor, &header).expect("app.spd's table");
        SpdProfile::from_table(&table)
    })
}
