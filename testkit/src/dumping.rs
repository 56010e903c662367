//! Running sptdump in-process, through the library, into memory: the option sets the
//! hostile-input tests and the fuzzer run every input through, and what a run printed.
//!
//! The printer is the one the command line would make for the plan
//! ([`sptdump::views::Plan::printer`]), and the traces are run as the command line runs them
//! ([`sptdump::dump::run`]). An option set reads the input under test alone, or beside the
//! bundled sample: twice merged, or compared with the sample as BASE.

use std::ffi::OsString;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::Value;
use sptdump::cli::{self, Command};
use sptdump::dump::{self, Outcome, Status, Traces};
use sptdump::format::diag::Tally;
use sptdump::input::{Input, OpenError};
use sptdump::output::{FileInfo, Format};
use sptdump::views::{Kind, Plan};

use crate::samples::sample_trace;

/// How the trace under test reaches the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// As a file: in memory, seekable, its size known up front.
    File,
    /// As standard input: read front to back, its size unknown.
    Pipe,
}

/// Which traces a run reads besides the one under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Company {
    /// None: the trace alone.
    Alone,
    /// The bundled sample after it (for `/merge`).
    ThenSample,
    /// The bundled sample before it, as BASE (for `/compare`).
    AfterSample,
    /// `testdata/pe/app.spd` after it, as `/compare TRACE SPD` reads one: by its path.
    BesideSpd,
}

/// The SPD an option set of [`Company::BesideSpd`] sets the trace under test beside:
/// `testdata/pe/app.spd` (the profile of `app.exe`, whose trace is `testdata/pe/profile.spt`).
pub fn bundled_spd() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/pe/app.spd")
}

/// One way of running the command line: a command line as a user types it, made into a
/// plan by sptdump's own parser ([`sptdump::cli::parse`]).
#[derive(Clone, Debug)]
pub struct OptionSet {
    /// The command line it was made of, as given to [`OptionSet::parse`].
    pub name: String,
    /// What to do.
    pub plan: Plan,
    /// The other traces of the run.
    pub company: Company,
}

impl OptionSet {
    /// The plan of the command line `line`, its words split at white space, read by
    /// sptdump's parser, the trace under test read alone. A value written `@NAME` is a file
    /// of this process's, for exports (`export_path`); a line that names no trace is given
    /// `TRACE`, which stands for the trace under test.
    ///
    /// # Panics
    ///
    /// When the parser refuses the line, or it is not a run over traces.
    pub fn parse(line: &str) -> Self {
        let args: Vec<OsString> = line.split_whitespace().map(expand).collect();
        OptionSet::of_args(line, args)
    }

    /// The set of the arguments `args`, named `name`; `TRACE` is added when none of them is
    /// a file.
    fn of_args(line: &str, mut args: Vec<OsString>) -> Self {
        if args.iter().all(|a| a.to_string_lossy().starts_with('/')) {
            args.push("TRACE".into());
        }
        match cli::parse(args) {
            Ok(Command::Run { mut plan, .. }) => {
                // The files it names (`/pdb`, `/image`, `/match`) are read into it, as the
                // command line reads them: a set never drops them.
                let unreadable = plan.load();
                assert!(
                    unreadable.is_empty(),
                    "`{line}`: files not read: {unreadable:?}"
                );
                OptionSet {
                    name: line.to_owned(),
                    plan: *plan,
                    company: Company::Alone,
                }
            }
            other => panic!("`{line}` is not a run over traces: {other:?}"),
        }
    }

    /// This set, with `company` read beside the trace under test.
    pub fn with(mut self, company: Company) -> Self {
        self.company = company;
        self
    }

    /// Whether the output is JSON Lines (`/json`).
    pub fn is_json(&self) -> bool {
        self.plan.format == Format::Json
    }

    /// Whether the run writes a pprof profile, a speedscope file, a flame graph or a report.
    pub fn exports(&self) -> bool {
        self.plan.views.files().next().is_some()
    }

    /// Whether the trace under test is the only one of the run.
    pub fn alone(&self) -> bool {
        self.company == Company::Alone
    }
}

/// Where the exports of the option sets go: a folder of this process's, made once, and a
/// file per thread, so that tests running at once write files of their own.
fn export_path(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("sptdump-exports-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a folder for the exports");
        dir
    });
    let thread = format!("{:?}", std::thread::current().id());
    let thread: String = thread.chars().filter(char::is_ascii_digit).collect();
    dir.join(format!("{thread}-{name}"))
}

/// A word of an option set's command line, with an export's `@NAME` made a path.
fn expand(word: &str) -> OsString {
    match word.split_once(":@") {
        Some((option, name)) => {
            let mut arg = OsString::from(format!("{option}:"));
            arg.push(export_path(name));
            arg
        }
        None => word.into(),
    }
}

/// The option sets every hostile input goes through, every mode among them: the default
/// dump, `/json`, `/validate` in text and JSON, `/summary /top:3` in text and JSON, both
/// forced readings of the string indices (`/strindex:ordinal`, `/strindex:offset`),
/// `/json /event /binary:0`, `/functions /top:3 /folded` in text and JSON (and root first),
/// `/lines`, `/callgraph`, the LBR views read as ranges (`/coverage`, `/dyninst`,
/// `/annotate`: without an image they gather the records and say what is missing), `/check`
/// with and beside `/validate /strict`, the exports (Parquet tables too), `/merge` and
/// `/compare` with the bundled sample, and `/compare TRACE SPD` beside `app.spd`.
pub fn option_sets() -> Vec<OptionSet> {
    const EXPORTS: &str = "/flamegraph:@flame.svg /pprof:@profile.pb.gz \
                           /speedscope:@speedscope.json /html:@report.html";
    let mut sets: Vec<OptionSet> = [
        "/all",
        "/json",
        "/validate",
        "/validate /json",
        "/summary /top:3",
        "/summary /top:3 /json",
        "/strindex:ordinal /json",
        "/strindex:offset /summary /top:3",
        "/json /event /binary:0",
        "/functions /top:3 /folded",
        "/functions /top:3 /folded /json",
        "/functions /folded /stackorder:root-first /json",
        "/lines /top:3",
        "/callgraph /top:3 /json",
        "/coverage /dyninst:3 /annotate:main /json",
        "/check /validate /strict",
        "/check /json",
        &format!("{EXPORTS} /parquet:@tables"),
    ]
    .into_iter()
    .map(OptionSet::parse)
    .collect();
    sets.extend([
        OptionSet::parse("/merge /summary /top:3 /functions /json").with(Company::ThenSample),
        OptionSet::parse(&format!("/merge {EXPORTS} /stackorder:root-first"))
            .with(Company::ThenSample),
        OptionSet::parse("/compare /min-overlap:0.5 /dyninst /json sample.spt TRACE")
            .with(Company::AfterSample),
        OptionSet::parse("/compare /validate sample.spt TRACE").with(Company::AfterSample),
        OptionSet::parse("/compare /json /blocks:mix_round TRACE app.spd").with(Company::BesideSpd),
    ]);
    sets
}

/// The option sets of the views that read an image and a PDB, with `lbr.exe`'s (the files
/// of `testdata/pe/`, by absolute path): what the hostile-input sweeps run over damaged copies
/// of `lbr.spt`, so that the LBR views meet damaged records with their files at hand.
pub fn option_sets_with_files() -> Vec<OptionSet> {
    let pe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/pe");
    let file = |option: &str, name: &str| {
        let mut arg = OsString::from(format!("/{option}:"));
        arg.push(pe.join(name));
        arg
    };
    [
        "/coverage /dyninst:3 /annotate:classify /json",
        "/callgraph /functions /top:3",
        "/check /validate /json",
        "/html:@lbr-report.html",
    ]
    .into_iter()
    .map(|set| {
        let mut args: Vec<OsString> = set.split_whitespace().map(expand).collect();
        args.extend([file("pdb", "lbr.pdb"), file("image", "lbr.exe")]);
        OptionSet::of_args(&format!("{set} /pdb:lbr.pdb /image:lbr.exe"), args)
    })
    .collect()
}

/// The option set named `name`.
fn named(name: &str) -> OptionSet {
    option_sets()
        .into_iter()
        .find(|s| s.name == name)
        .expect("an option set of that name")
}

/// The `/json` option set (everything, as JSON Lines).
pub fn json_all() -> OptionSet {
    named("/json")
}

/// The default text dump.
pub fn text_all() -> OptionSet {
    named("/all")
}

/// `/validate /json`: the diagnostics and a verdict line.
pub fn validate_json() -> OptionSet {
    named("/validate /json")
}

/// What one run printed and how it ended.
#[derive(Debug)]
pub struct Dumped {
    /// The outcome of the trace under test.
    pub outcome: Outcome,
    /// The status of the run, which the command line makes its exit code of.
    pub run_status: Status,
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

    /// The status the trace under test calls for (not `/strict`).
    pub fn status(&self) -> Status {
        self.outcome.status(false)
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

/// The path the trace under test is shown by.
pub const TRACE: &str = "trace.spt";
/// The path the bundled sample is shown by, beside the trace under test.
pub const SAMPLE: &str = "sample.spt";

/// Runs `set` over `bytes`, read as `via`, into memory (with the bundled sample, when the set
/// reads it too). Panics if the run fails, which it may only do when the output cannot be
/// written.
pub fn dump_bytes(bytes: &[u8], set: &OptionSet, via: Via) -> Dumped {
    let subject = |bytes: &[u8]| match via {
        Via::File => Input::memory(bytes.to_vec()),
        Via::Pipe => Input::pipe(Box::new(Cursor::new(bytes.to_vec()))),
    };
    let shown = match via {
        Via::File => TRACE,
        Via::Pipe => "-",
    };
    static SAMPLE_BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    let sample = SAMPLE_BYTES.get_or_init(sample_trace);
    let (paths, at): (Vec<String>, usize) = match set.company {
        Company::Alone => (vec![shown.into()], 0),
        Company::ThenSample => (vec![shown.into(), SAMPLE.into()], 0),
        Company::AfterSample => (vec![SAMPLE.into(), shown.into()], 1),
        Company::BesideSpd => return dump_beside(bytes, set, via, &bundled_spd()),
    };
    let open = |i: usize| -> Result<Input, OpenError> {
        Ok(match i == at {
            true => subject(bytes),
            false => Input::memory(sample.clone()),
        })
    };
    run(&Traces::new(&paths, &open), at, set)
}

/// Runs `set` (a `/compare` set) over `bytes`, read as `via`, beside the file at `spd`, as
/// `/compare TRACE SPD` reads one: by its path (a file that is no SPD is read as a trace).
pub fn dump_beside(bytes: &[u8], set: &OptionSet, via: Via, spd: &Path) -> Dumped {
    let (shown, subject) = match via {
        Via::File => (TRACE, Input::memory(bytes.to_vec())),
        Via::Pipe => ("-", Input::pipe(Box::new(Cursor::new(bytes.to_vec())))),
    };
    let paths = [
        shown.to_owned(),
        spd.to_str().expect("a UTF-8 path").to_owned(),
    ];
    run(
        &Traces::opened(&paths, vec![Ok(subject), Input::open(spd)]),
        0,
        set,
    )
}

/// Runs `set` over `input`, named as `info` says, as the only trace of a run.
pub fn dump_input(input: Input, info: &FileInfo<'_>, set: &OptionSet) -> Dumped {
    let paths = [info.path.to_owned()];
    run(&Traces::opened(&paths, vec![Ok(input)]), 0, set)
}

/// Runs `set` over `traces` into memory; the one at `at` is under test.
fn run(traces: &Traces<'_>, at: usize, set: &OptionSet) -> Dumped {
    // Parquet tables are never overwritten: each run writes them afresh. The other exports
    // are removed too, so that a run that does not write one is not judged by the last's.
    if let Some(dir) = set.plan.views.path(Kind::Parquet) {
        let _ = std::fs::remove_dir_all(dir);
    }
    for (_, path) in set.plan.views.files() {
        let _ = std::fs::remove_file(path);
    }
    let mut out = Vec::new();
    let mut err = Vec::new();
    let mut printer = set.plan.printer(&mut out, &mut err);
    let ran = dump::run(&mut printer, &set.plan, traces).expect("writing to memory cannot fail");
    drop(printer);
    Dumped {
        outcome: ran.outcomes()[at],
        run_status: ran.status(),
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
