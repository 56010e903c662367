//! Modes that combine or refuse: every combination of options either does what each option
//! says, or is a usage error naming both; nothing is dropped quietly.

use std::path::Path;
use std::process::Output;

use serde_json::Value;
use sptdump_testkit::fixtures;

use crate::support::{run, run_in, stderr, stdout};

const SAMPLE: &str = "testdata/sample.spt";

fn types(o: &Output) -> Vec<String> {
    stdout(o)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["type"].as_str().unwrap().to_owned()
        })
        .collect()
}

#[test]
fn validate_beside_an_analysis_prints_both() {
    for (mode, line) in [
        ("/summary", "summary"),
        ("/functions", "functions"),
        ("/folded", "folded"),
        ("/check", "check_summary"),
    ] {
        let o = run(&["/json", "/validate", mode, SAMPLE]);
        assert_eq!(o.status.code(), Some(0), "{mode}: {}", stderr(&o));
        let types = types(&o);
        assert!(types.contains(&line.to_owned()), "{mode}: {types:?}");
        assert_eq!(
            types.last().unwrap(),
            "validation",
            "{mode}: the verdict last"
        );
    }
    // In text, the analysis is under the trace's line and the verdict closes it.
    let o = run(&["/validate", "/summary", "/top:1", SAMPLE]);
    let text = stdout(&o);
    assert!(text.starts_with("File: testdata/sample.spt"), "{text}");
    assert!(text.contains("Summary of progid 0"), "{text}");
    assert!(
        text.ends_with("testdata/sample.spt: valid (0 errors, 0 warnings)\n"),
        "{text}"
    );
}

#[test]
fn validate_beside_compare_gives_both_verdicts_and_the_comparison() {
    let o = run(&["/json", "/validate", "/compare", SAMPLE, SAMPLE]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let types = types(&o);
    let verdicts = types.iter().filter(|t| *t == "validation").count();
    assert_eq!(verdicts, 2, "{types:?}");
    assert!(types.iter().any(|t| t == "compare"), "{types:?}");
    assert_eq!(types.last().unwrap(), "compare");
    // A section asked for beside /validate is printed too.
    let o = run(&["/validate", "/header", SAMPLE]);
    assert!(stdout(&o).contains("SPT header"), "{}", stdout(&o));
    assert!(stdout(&o).contains(": valid (0 errors"), "{}", stdout(&o));
}

#[test]
fn check_and_compare_start_with_the_trace_line() {
    let o = run(&["/check", SAMPLE]);
    let text = stdout(&o);
    assert!(
        text.starts_with("File: testdata/sample.spt (25,546 bytes)\n\nCheck of "),
        "{text}"
    );
    let o = run(&["/compare", SAMPLE, SAMPLE]);
    let text = stdout(&o);
    assert!(
        text.starts_with(
            "File: testdata/sample.spt (25,546 bytes)\nFile: testdata/sample.spt (25,546 bytes)\n\nCompared with NEW"
        ),
        "{text}"
    );
    assert!(
        !text.contains("\n\n\n"),
        "one blank line between blocks: {text}"
    );
}

#[test]
fn combinations_that_cannot_work_are_usage_errors_naming_both_options() {
    for (args, says) in [
        (
            &["/merge", SAMPLE, SAMPLE][..],
            "/merge merges the analyses",
        ),
        (
            &["/compare", "/pprof:f.pb.gz", SAMPLE, SAMPLE],
            "/pprof draws one profile: it does not go with /compare",
        ),
        (
            &["/pprof:same", "/speedscope:same", SAMPLE],
            "/pprof and /speedscope would both write same",
        ),
        (
            &["/compare", SAMPLE, SAMPLE, SAMPLE],
            "/compare takes exactly two traces, BASE and NEW (3 given)",
        ),
        (
            &["/pprof:p.pb.gz", SAMPLE, SAMPLE],
            "/pprof writes one file: give it one trace, or /merge several",
        ),
        (
            &["/compare", "/merge", "/summary", SAMPLE, SAMPLE],
            "/compare reads two traces apart: it does not go with /merge",
        ),
        (
            &["/parquet:tables", "/merge", SAMPLE, SAMPLE],
            "/parquet writes each trace's tables, for an engine to sum: it does not go with /merge",
        ),
        (
            &["/parquet:tables", "/compare", SAMPLE, SAMPLE],
            "/parquet writes each trace's tables, for an engine to sum: it does not go with /compare",
        ),
        (
            &["/quiet", "/progress:always", SAMPLE],
            "/quiet shows no progress bar",
        ),
        (
            &["/summary", "/match:testdata/pe/app.exe"],
            "/summary needs a trace",
        ),
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(stdout(&o), "", "{args:?}: nothing is read");
        let err = stderr(&o);
        assert!(
            err.starts_with(&format!("sptdump: {says}")),
            "{args:?}: {err}"
        );
        assert!(err.ends_with("see 'sptdump /help'\n"), "{err}");
    }
}

#[test]
fn a_list_of_traces_counts_toward_compare() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("traces.txt");
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join(SAMPLE);
    std::fs::write(&list, format!("{}\n", sample.display())).unwrap();
    let list_arg = format!("/sptlist:{}", list.display());
    let o = run(&["/compare", &list_arg, SAMPLE, SAMPLE]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("(3 given)"), "{}", stderr(&o));
    let o = run(&["/json", "/compare", &list_arg, SAMPLE]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(types(&o).contains(&"compare".to_owned()));
}

#[test]
fn a_pdb_that_fits_the_merged_profile_is_no_error_under_merge() {
    let dir = fixtures::dir();
    // core.pdb fits profile.spt's core.dll, and nothing of the sample.
    let args = [
        "/merge",
        "/functions",
        "/pdb:core.pdb",
        "profile.spt",
        "../sample.spt",
    ];
    let o = run_in(&dir, &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert!(stdout(&o).contains("core.dll!"), "{}", stdout(&o));
    // One that fits no trace at all is one error, after the traces' own lines.
    let o = run_in(
        &dir,
        &[
            "/merge",
            "/summary",
            "/pdb:core.pdb",
            "../sample.spt",
            "../sample.spt",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("matches no program ID of any trace"), "{err}");
}

/// Standard output and standard error in one stream, as a terminal shows them.
#[cfg(unix)]
fn interleaved(dir: &Path, args: &[&str]) -> String {
    let o = std::process::Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg("exec \"$0\" \"$@\" 2>&1")
        .arg(env!("CARGO_BIN_EXE_sptdump"))
        .args(args)
        .output()
        .unwrap();
    String::from_utf8(o.stdout).unwrap()
}

/// Several traces are decoded at once and printed in order: what each printed on standard
/// error stays where it was said, before the summary of its trace.
#[cfg(unix)]
#[test]
fn a_mismatched_pdb_is_reported_where_it_is_seen() {
    let dir = fixtures::dir();
    let args = [
        "/summary",
        "/top:1",
        "/pdb:core.pdb",
        "../sample.spt",
        "profile.spt",
    ];
    let all = interleaved(&dir, &args);
    let error = all
        .find("/pdb:core.pdb is")
        .expect("the mismatch is reported");
    let banner = all.find("File: ../sample.spt").unwrap();
    let summary = all.find("Summary of progid 0 (contoso_app.exe)").unwrap();
    assert!(banner < error && error < summary, "{all}");
    assert_eq!(all.matches("/pdb:core.pdb is").count(), 1, "{all}");
}

/// `dump::run` and `dump::identities` flush their printer, as their docs say: a library
/// user's buffered writers hold nothing back once they return, in either format.
#[test]
fn a_run_leaves_nothing_in_its_printer_s_buffers() {
    use std::io::BufWriter;

    use sptdump::dump::{self, Traces};
    use sptdump::image::matching::MatchFile;
    use sptdump::input::Input;
    use sptdump::output::Format;
    use sptdump::views::Plan;

    let trace = sptdump_testkit::samples::sample_trace();
    for format in [Format::Text, Format::Json] {
        let mut plan = Plan::default();
        plan.format = format;
        let paths = ["sample.spt".to_owned()];
        let open = |_: usize| Ok(Input::memory(trace.clone()));
        let mut printer = plan.printer(BufWriter::new(Vec::new()), BufWriter::new(Vec::new()));
        dump::run(&mut printer, &plan, &Traces::new(&paths, &open)).unwrap();
        let (out, _) = printer.into_inner();
        assert!(
            out.buffer().is_empty(),
            "{format:?}: {} bytes held",
            out.buffer().len()
        );
        assert!(out.get_ref().len() > 100, "{format:?}: the dump is written");

        let files = [MatchFile::read(Path::new("no-such-binary.exe"))];
        let mut printer = plan.printer(BufWriter::new(Vec::new()), BufWriter::new(Vec::new()));
        dump::identities(&mut printer, &files).unwrap();
        let (out, err) = printer.into_inner();
        for (stream, w) in [("out", &out), ("err", &err)] {
            let held = w.buffer().len();
            assert_eq!(
                held, 0,
                "{format:?}: {held} bytes held on standard {stream}"
            );
        }
        let written = out.get_ref().len() + err.get_ref().len();
        assert!(written > 0, "{format:?}: the missing binary is said");
    }
}

/// A reader of the output that went away ends a run quietly, and `Ran` says so; a run whose
/// output was all written does not; output that cannot be written is the run's error.
#[test]
fn a_run_says_whether_its_reader_went_away() {
    use std::io::{self, Write};

    use sptdump::dump::{self, RunError, Traces};
    use sptdump::input::Input;
    use sptdump::views::Plan;

    /// Standard output that cannot be written: its reader gone, or its disk full.
    struct Failing(io::ErrorKind);
    impl Write for Failing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(self.0.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(self.0.into())
        }
    }

    let trace = sptdump_testkit::samples::sample_trace();
    let plan = Plan::default();
    let paths = ["sample.spt".to_owned()];
    let open = |_: usize| Ok(Input::memory(trace.clone()));
    let mut printer = plan.printer(Failing(io::ErrorKind::BrokenPipe), Vec::new());
    let ran = dump::run(&mut printer, &plan, &Traces::new(&paths, &open)).unwrap();
    assert!(ran.output_closed());
    let mut printer = plan.printer(Vec::new(), Vec::new());
    let ran = dump::run(&mut printer, &plan, &Traces::new(&paths, &open)).unwrap();
    assert!(!ran.output_closed());

    // A full disk: an error of the run, not a reader gone.
    let mut printer = plan.printer(Failing(io::ErrorKind::StorageFull), Vec::new());
    let failed = dump::run(&mut printer, &plan, &Traces::new(&paths, &open));
    assert!(
        matches!(failed, Err(RunError::Write(e)) if e.kind() == io::ErrorKind::StorageFull),
        "a full disk is the output's error"
    );
}
