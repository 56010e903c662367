//! Dumping a trace in-process, through the library, into memory: the option sets the
//! hostile-input tests and the fuzzer run every input through, and what a run printed.
//!
//! The printer is the one the command line would make for the options
//! ([`sptdump::dump::printer`]), and each file is dumped as the command line dumps it
//! ([`sptdump::dump::dump_file`]).

use std::io::Cursor;

use serde::Deserialize;
use serde_json::Value;
use sptdump::dump::{self, Options, Outcome, Sections, Status};
use sptdump::format::diag::Tally;
use sptdump::input::Input;
use sptdump::output::{FileInfo, Format, Printer};

/// How the trace reaches the dump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// As a file: in memory, seekable, its size known up front.
    File,
    /// As standard input: read front to back, its size unknown.
    Pipe,
}

/// One way of running the command line.
#[derive(Clone, Debug)]
pub struct OptionSet {
    /// The command line it stands for, for messages.
    pub name: &'static str,
    /// What to dump, and in which format.
    pub options: Options,
}

impl OptionSet {
    /// Whether the output is JSON Lines (`/json`).
    pub fn is_json(&self) -> bool {
        self.options.format == Format::Json
    }
}

/// The option sets every hostile input goes through: the default dump, `/json`,
/// `/validate` in text and JSON, `/summary /top:3` in text and JSON, `/json /event
/// /binary:0`, and `/functions /top:3 /folded` in text and JSON.
pub fn option_sets() -> Vec<OptionSet> {
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
    let stacks = Options {
        sections: Sections::default(),
        functions: Some(3),
        folded: true,
        ..Options::default()
    };
    let set = |name, options: &Options, format| OptionSet {
        name,
        options: Options {
            format,
            ..options.clone()
        },
    };
    vec![
        set("/all", &all, Format::Text),
        set("/json", &all, Format::Json),
        set("/validate", &validate, Format::Text),
        set("/validate /json", &validate, Format::Json),
        set("/summary /top:3", &summary, Format::Text),
        set("/summary /top:3 /json", &summary, Format::Json),
        set("/json /event /binary:0", &binary0, Format::Json),
        set("/functions /top:3 /folded", &stacks, Format::Text),
        set("/functions /top:3 /folded /json", &stacks, Format::Json),
    ]
}

/// The `/json` option set (everything, as JSON Lines).
pub fn json_all() -> OptionSet {
    option_sets().swap_remove(1)
}

/// The default text dump.
pub fn text_all() -> OptionSet {
    option_sets().swap_remove(0)
}

/// `/validate /json`: the diagnostics and a verdict line.
pub fn validate_json() -> OptionSet {
    option_sets().swap_remove(3)
}

/// What one dump printed and how it ended.
#[derive(Debug)]
pub struct Dumped {
    /// What `dump::dump_file` returned.
    pub outcome: Outcome,
    /// Standard output.
    pub out: String,
    /// Standard error: text diagnostics, and read failures in both formats.
    pub err: String,
}

impl Dumped {
    /// The tally, for a dump that ran to its end.
    pub fn tally(&self) -> Tally {
        match self.outcome {
            Outcome::Done(t, _) => t,
            other => panic!("expected a finished dump, got {other:?}"),
        }
    }

    /// The status this file calls for; the command line makes its exit code of it.
    pub fn status(&self) -> Status {
        self.outcome.status()
    }

    /// Every line of standard output parsed as JSON; panics on a line that is not.
    pub fn json(&self) -> Vec<Value> {
        self.out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    /// Every line of standard output parsed as JSON, keeping only what most checks look
    /// at (and so much faster than [`Dumped::json`]); panics on a line that is not JSON.
    pub fn json_brief(&self) -> Vec<Brief> {
        self.out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
            .collect()
    }

    /// The `diagnostic` lines of JSON output.
    pub fn json_diagnostics(&self) -> Vec<Value> {
        self.json()
            .into_iter()
            .filter(|v| v["type"] == "diagnostic")
            .collect()
    }
}

/// Dumps `bytes` with `set`, read as `via`, into memory. Panics if the dump fails, which it
/// may only do when the output cannot be written.
pub fn dump_bytes(bytes: &[u8], set: &OptionSet, via: Via) -> Dumped {
    let (input, info) = match via {
        Via::File => (
            Input::memory(bytes.to_vec()),
            FileInfo {
                path: "trace.spt",
                size: Some(bytes.len() as u64),
            },
        ),
        Via::Pipe => (
            Input::pipe(Box::new(Cursor::new(bytes.to_vec()))),
            FileInfo {
                path: "-",
                size: None,
            },
        ),
    };
    dump_input(input, &info, set)
}

/// Dumps `input` with `set` into memory, as the only file of a run.
pub fn dump_input(input: Input, info: &FileInfo<'_>, set: &OptionSet) -> Dumped {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut printer = dump::printer(&set.options, &mut out, &mut err);
    let outcome = dump::dump_file(&mut printer, info, Ok(input), &set.options, true)
        .expect("writing to memory cannot fail");
    printer.flush().expect("writing to memory cannot fail");
    drop(printer);
    Dumped {
        outcome,
        out: String::from_utf8(out).expect("standard output is UTF-8"),
        err: String::from_utf8(err).expect("standard error is UTF-8"),
    }
}

/// The diagnostics whose offset is where a part of the file *would* be, and so may lie past
/// its end; every other offset the output prints lies inside the file.
pub const OFFSET_MAY_LIE_OUTSIDE: [&str; 4] = [
    "truncated-header",
    "string-table-out-of-bounds",
    "progid-table-out-of-bounds",
    "stream-out-of-bounds",
];

/// The record lines of JSON output: the lines whose `offset` is a file offset of a record.
pub const RECORD_TYPES: [&str; 5] = ["binary", "repeat", "ip", "lbr", "callstack"];

/// A JSON line's type, offset and diagnostic fields; the rest is checked to be JSON and
/// skipped.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Brief {
    /// `"type"`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `"offset"`, on the lines that have one.
    pub offset: Option<u64>,
    /// `"code"` of a diagnostic.
    pub code: Option<String>,
    /// `"severity"` of a diagnostic.
    pub severity: Option<String>,
}

impl Brief {
    /// Whether this line's offset is a file offset that must lie inside the file: that of
    /// a record, or of a diagnostic other than those in [`OFFSET_MAY_LIE_OUTSIDE`].
    pub fn offset_inside(&self) -> Option<u64> {
        let inside = match self.kind.as_str() {
            "diagnostic" => {
                !OFFSET_MAY_LIE_OUTSIDE.contains(&self.code.as_deref().unwrap_or_default())
            }
            kind => RECORD_TYPES.contains(&kind),
        };
        if inside { self.offset } else { None }
    }
}
