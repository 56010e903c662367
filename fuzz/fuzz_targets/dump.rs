//! Dumps arbitrary bytes as a trace, the way the command line would, under the option sets
//! of the hostile-input tests (`sptdump_testkit::dumping::option_sets`) and from both kinds
//! of input: a file (bytes in memory, size known, seekable) and a pipe (read front to back,
//! size unknown).
//!
//! Besides "no panic, no hang, no runaway allocation", it checks what holds for any input
//! when the output goes to memory: writing never fails, so `dump_file` returns `Ok`; reading
//! never fails, so no outcome is `ReadFailed`; every line of `/json` output is JSON; and a
//! file is reported (any diagnostic at all) exactly when the tests' second reading of the
//! spec, `sptdump_testkit::reference`, finds something to report.

#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use sptdump::dump::{self, Options, Outcome};
use sptdump::input::Input;
use sptdump::output::{FileInfo, Printer};
use sptdump_testkit::dumping::{OptionSet, option_sets};
use sptdump_testkit::reference;

/// Dumps `bytes` with `options` into `out` and `err`, with the printer the options ask for.
fn dump_into(out: &mut Vec<u8>, err: &mut Vec<u8>, bytes: &[u8], pipe: bool, options: &Options) {
    let (input, info) = if pipe {
        let input = Input::pipe(Box::new(Cursor::new(bytes.to_vec())));
        (
            input,
            FileInfo {
                path: "-",
                size: None,
            },
        )
    } else {
        let input = Input::memory(bytes.to_vec());
        let size = Some(bytes.len() as u64);
        (
            input,
            FileInfo {
                path: "fuzz.spt",
                size,
            },
        )
    };
    let mut printer = dump::printer(options, out, err);
    let outcome = dump::dump_file(&mut printer, &info, Ok(input), options, true)
        .expect("writing to memory cannot fail, so dump_file cannot either");
    assert_ne!(
        outcome,
        Outcome::ReadFailed,
        "reading from memory cannot fail"
    );
    printer.flush().expect("writing to memory");
}

/// Checks the `/json` output of `data` dumped with `set`.
fn check_json(out: &[u8], data: &[u8], pipe: bool, set: &OptionSet) {
    let mut diagnostics = 0;
    for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(line) {
            panic!("not JSON ({e}): {}", String::from_utf8_lossy(line));
        }
        diagnostics += usize::from(line.starts_with(b"{\"type\":\"diagnostic\""));
    }
    if set.options.validate && !pipe {
        let expected = reference::reference_problem(data);
        assert_eq!(
            diagnostics > 0,
            expected.is_some(),
            "the reference says {expected:?}; the dump said:\n{}",
            String::from_utf8_lossy(out)
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let mut out = Vec::new();
    let mut err = Vec::new();
    for set in option_sets() {
        for pipe in [false, true] {
            out.clear();
            err.clear();
            dump_into(&mut out, &mut err, data, pipe, &set.options);
            if set.is_json() {
                check_json(&out, data, pipe, &set);
            }
        }
    }
});
