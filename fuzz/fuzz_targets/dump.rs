//! Runs arbitrary bytes as a trace, the way the command line would, under every option set
//! of the hostile-input tests (`sptdump_testkit::dumping::option_sets`: every section, view,
//! export and verdict, root-first stacks, `/merge` and `/compare` beside the bundled sample,
//! `/compare TRACE SPD` beside the bundled app.spd)
//! and from both kinds of input: a file (bytes in memory, size known, seekable) and a pipe
//! (read front to back, size unknown).
//!
//! Besides "no panic, no hang, no runaway allocation", it checks what holds for any input
//! when the output goes to memory: writing never fails, so the run returns `Ok`; reading
//! never fails, so no outcome is `ReadFailed`; every line of `/json` output is JSON; the
//! exports read back whole, every index in range, their sums those of `/functions`
//! (`sptdump_testkit::exports`); and a
//! file is reported (any diagnostic at all) exactly when the tests' second reading of the
//! spec, `sptdump_testkit::reference`, finds something to report.
//!
//! Bytes that start an ETL (SPEC section 19) are read as one, through sptdump's aggregation:
//! for them a refusal is an outcome (a damaged recording), and the checks against the SPT
//! reading of the bytes do not apply; the rest hold.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sptdump::dump::Outcome;
use sptdump::etl::buffer::BufferHeader;
use sptdump_testkit::dumping::{Dumped, OptionSet, Via, dump_bytes, option_sets};
use sptdump_testkit::{exports, reference};

/// Checks the `/json` output of `data` run with `set`.
fn check_json(d: &Dumped, data: &[u8], via: Via, set: &OptionSet, etl: bool) {
    let mut diagnostics = 0;
    for line in d.out.lines() {
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(line) {
            panic!("{}: not JSON ({e}): {line}", set.name);
        }
        diagnostics += usize::from(line.starts_with("{\"type\":\"diagnostic\""));
    }
    if set.plan.validate && set.alone() && via == Via::File && !etl {
        let expected = reference::reference_problem(data);
        assert_eq!(
            diagnostics > 0,
            expected.is_some(),
            "the reference says {expected:?}; the dump said:\n{}",
            d.out
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let etl = BufferHeader::starts_etl(data);
    for set in option_sets() {
        for via in [Via::File, Via::Pipe] {
            let d = dump_bytes(data, &set, via);
            assert!(
                etl || d.outcome != Outcome::ReadFailed,
                "{}: reading from memory cannot fail",
                set.name
            );
            if set.is_json() {
                check_json(&d, data, via, &set, etl);
            }
            if set.exports() && matches!(d.outcome, Outcome::Done(..)) && !etl {
                let expected = exports::expected_hits(data, &set, via);
                if let Err(e) = exports::check_exports(&set, &d, &expected) {
                    panic!("{} via {via:?}: {e}", set.name);
                }
            }
        }
    }
});
