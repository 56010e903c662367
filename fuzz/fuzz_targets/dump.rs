//! Dumps arbitrary bytes as a trace, the way the command line would, under several option
//! sets and from both kinds of input: a file (bytes in memory, size known, seekable) and a
//! pipe (read front to back, size unknown).
//!
//! Besides "no panic, no hang, no runaway allocation", it checks what holds for any input
//! when the output goes to memory: writing never fails, so `dump` returns `Ok`; reading
//! never fails, so no outcome is `ReadFailed`; every line of `/json` output is JSON; and a
//! file is reported (any diagnostic at all) exactly when the tests' second reading of the
//! spec, `tests/support/reference.rs`, finds something to report.

#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use sptdump::dump::{self, Options, Outcome, Sections};
use sptdump::json::JsonPrinter;
use sptdump::print::{FileInfo, Printer};
use sptdump::text::TextPrinter;

#[path = "../../tests/support/reference.rs"]
mod reference;

/// One run: the options, and whether the output is JSON.
struct Run {
    options: Options,
    json: bool,
    /// `/validate` in text leaves out the `File:` banner, as the command line does.
    banner: bool,
}

fn runs() -> Vec<Run> {
    let all = Options::default();
    let validate = Options {
        validate: true,
        ..Options::default()
    };
    let summary = Options {
        sections: Sections::default(),
        summary: Some(3),
        ..Options::default()
    };
    let binary0 = Options {
        sections: Sections {
            event: true,
            ..Sections::default()
        },
        binaries: Some(vec!["0".to_owned()]),
        ..Options::default()
    };
    let run = |options: &Options, json: bool| Run {
        options: options.clone(),
        json,
        banner: !options.validate,
    };
    vec![
        run(&all, false),      // /all (the default)
        run(&all, true),       // /json
        run(&validate, false), // /validate
        run(&validate, true),  // /validate /json
        run(&summary, false),  // /summary /top:3
        run(&summary, true),   // /summary /top:3 /json
        run(&binary0, true),   // /json /event /binary:0
    ]
}

fn dump_into<P: Printer>(printer: &mut P, bytes: &[u8], pipe: bool, options: &Options) {
    let (input, info) = if pipe {
        let input = sptdump::input::Input::pipe(Box::new(Cursor::new(bytes.to_vec())));
        (
            input,
            FileInfo {
                path: "-",
                size: None,
            },
        )
    } else {
        let input = sptdump::input::Input::memory(bytes.to_vec());
        let size = Some(bytes.len() as u64);
        (
            input,
            FileInfo {
                path: "fuzz.spt",
                size,
            },
        )
    };
    let outcome = dump::dump(printer, &info, input, options)
        .expect("writing to memory cannot fail, so dump cannot either");
    assert_ne!(
        outcome,
        Outcome::ReadFailed,
        "reading from memory cannot fail"
    );
    printer.end_file(true).expect("writing to memory");
    printer.flush().expect("writing to memory");
}

fuzz_target!(|data: &[u8]| {
    let mut out = Vec::new();
    let mut err = Vec::new();
    for run in runs() {
        for pipe in [false, true] {
            out.clear();
            err.clear();
            if run.json {
                let mut printer = JsonPrinter::new(&mut out, &mut err);
                dump_into(&mut printer, data, pipe, &run.options);
                let mut diagnostics = 0;
                for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                    if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(line) {
                        panic!("not JSON ({e}): {}", String::from_utf8_lossy(line));
                    }
                    diagnostics += usize::from(line.starts_with(b"{\"type\":\"diagnostic\""));
                }
                if run.options.validate && !pipe {
                    let expected = reference::reference_problem(data);
                    assert_eq!(
                        diagnostics > 0,
                        expected.is_some(),
                        "the reference says {expected:?}; the dump said:\n{}",
                        String::from_utf8_lossy(&out)
                    );
                }
            } else {
                let printer = TextPrinter::new(&mut out, &mut err);
                let mut printer = if run.banner {
                    printer
                } else {
                    printer.without_banner()
                };
                dump_into(&mut printer, data, pipe, &run.options);
            }
        }
    }
});
