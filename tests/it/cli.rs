//! The binary end to end: option spellings, files and standard input, exit statuses, usage
//! errors, a reader that goes away, `/validate`, `/json` and `/binary`.
//!
//! Every run has the crate root as its current directory, so `testdata/sample.spt` is the
//! bundled trace.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::Value;
use sptdump_testkit::builder::*;
use sptdump_testkit::samples::{SAMPLE_BINARIES, SampleRecord, sample_records};

const SAMPLE: &str = "testdata/sample.spt";
const SAMPLE_SIZE: u64 = 25_546;
const APP_GUID: &str = "42AC0098-ADB5-E796-8C0E-161D2814780E";
const CORE_GUID: &str = "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0";

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn sptdump() -> Command {
    let mut cmd = Command::cargo_bin("sptdump").unwrap();
    cmd.current_dir(crate_root());
    cmd
}

fn run(args: &[&str]) -> Output {
    sptdump().args(args).output().unwrap()
}

fn run_stdin(args: &[&str], input: Vec<u8>) -> Output {
    sptdump().args(args).write_stdin(input).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("stderr is UTF-8")
}

fn status(o: &Output) -> i32 {
    o.status.code().expect("exited, not killed")
}

fn sample_bytes() -> Vec<u8> {
    std::fs::read(crate_root().join(SAMPLE)).unwrap()
}

/// Writes `bytes` to `name` in a new temporary directory.
fn temp_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

/// Every line of a JSON Lines output, parsed.
fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn kind(v: &Value) -> &str {
    v["type"].as_str().expect("every line has a type")
}

/// A trace with one error (a segment whose length is 20 bytes too long) and no warning.
fn trace_with_an_error() -> Vec<u8> {
    let mut b = SptBuilder::new();
    b.binary("app.exe", APP_GUID, 1);
    b.binary_id_with_length(0, 4 + 6 + 20)
        .ip(RETIRE_INSTR, &[0x1000])
        .binary_id(0)
        .ip(RETIRE_INSTR, &[0x1004, 0x1008, 0x100C, 0x1010, 0x1014]);
    b.build()
}

/// A trace with two warnings (both reserved fields set) and no error.
fn trace_with_warnings() -> Vec<u8> {
    let mut b = SptBuilder::new();
    b.binary("app.exe", APP_GUID, 1);
    b.raw_data_id(7).target_arch(0x8664);
    b.binary_id(0).ip(RETIRE_INSTR, &[0x1000]);
    b.build()
}

// ----- Options.

#[test]
fn section_options_in_every_spelling_give_the_same_dump() {
    let reference = run(&["/header", SAMPLE]);
    assert_eq!(status(&reference), 0);
    let text = stdout(&reference);
    assert!(text.contains("\nSPT header\n"), "{text}");
    assert!(!text.contains("String table"), "{text}");
    assert!(!text.contains("Events"), "{text}");
    for spelling in ["-header", "--header", "/HEADER", "--Header"] {
        let o = run(&[spelling, SAMPLE]);
        assert_eq!(status(&o), 0, "{spelling}");
        assert_eq!(stdout(&o), text, "{spelling}");
        assert_eq!(stderr(&o), "", "{spelling}");
    }
}

#[test]
fn top_value_in_every_spelling_gives_the_same_summary() {
    let reference = run(&["/summary", "/top:3", SAMPLE]);
    assert_eq!(status(&reference), 0);
    let text = stdout(&reference);
    for args in [
        &["/summary", "--top", "3", SAMPLE][..],
        &["/summary", "--top=3", SAMPLE],
        &["--TOP", "3", "-summary", SAMPLE],
    ] {
        let o = run(args);
        assert_eq!(status(&o), 0, "{args:?}");
        assert_eq!(stdout(&o), text, "{args:?}");
    }
    // The value is used: the first table (UNHALT_CYCLE of progid 0, 30 unique RVAs) lists
    // 3 rows instead of the default 10.
    let rows_of_first_table = |text: &str| {
        text.lines()
            .skip_while(|l| !l.starts_with("  UNHALT_CYCLE:"))
            .skip(2)
            .take_while(|l| l.starts_with("    "))
            .count()
    };
    assert_eq!(rows_of_first_table(&text), 3, "{text}");
    let default = stdout(&run(&["/summary", SAMPLE]));
    assert_eq!(rows_of_first_table(&default), 10, "{default}");
}

#[test]
fn help_in_every_spelling() {
    let reference = run(&["/?"]);
    assert_eq!(status(&reference), 0);
    let text = stdout(&reference);
    assert!(text.starts_with("sptdump: "), "{text}");
    assert!(
        text.contains("\nUsage: sptdump [options] sptfile...\n"),
        "{text}"
    );
    for spelling in ["-h", "--help", "/help", "/HELP"] {
        let o = run(&[spelling]);
        assert_eq!(status(&o), 0, "{spelling}");
        assert_eq!(stdout(&o), text, "{spelling}");
        assert_eq!(stderr(&o), "", "{spelling}");
    }
    // Help wins over the rest of the command line.
    let o = run(&["/header", "/help", SAMPLE]);
    assert_eq!((status(&o), stdout(&o)), (0, text));
}

#[test]
fn version() {
    let o = run(&["/version"]);
    assert_eq!(status(&o), 0);
    assert_eq!(
        stdout(&o),
        format!("sptdump {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(stderr(&o), "");
}

/// `/tmp/.../sample.spt` names no option, so it is a file.
#[cfg(unix)]
#[test]
fn an_absolute_path_is_a_file_not_an_option() {
    let (_dir, path) = temp_file("sample.spt", &sample_bytes());
    let path = path.to_str().unwrap();
    assert!(path.starts_with('/'));
    let o = run(&["/header", path]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    let (banner, rest) = text.split_once('\n').unwrap();
    assert_eq!(banner, format!("File: {path} (25,546 bytes)"));
    let reference = stdout(&run(&["/header", SAMPLE]));
    assert_eq!(rest, reference.split_once('\n').unwrap().1);
}

#[test]
fn double_dash_ends_the_options() {
    let (dir, _path) = temp_file("-header", &sample_bytes());
    let o = sptdump()
        .current_dir(dir.path())
        .args(["/progid", "--", "-header"])
        .output()
        .unwrap();
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("File: -header (25,546 bytes)\n"), "{text}");
    assert!(text.contains("\nProgram IDs (3 of 256 used)\n"), "{text}");
    assert!(!text.contains("SPT header"), "{text}");

    // Without `--` it is the option, and no file is left.
    let o = sptdump()
        .current_dir(dir.path())
        .args(["/progid", "-header"])
        .output()
        .unwrap();
    assert_eq!(status(&o), 2);
    assert_eq!(stdout(&o), "");
}

// ----- Standard input.

#[test]
fn stdin_gives_the_same_events_as_the_file() {
    let from_file = json_lines(&run(&["/json", "/event", SAMPLE]));
    let piped = run_stdin(&["/json", "/event", "-"], sample_bytes());
    assert_eq!(status(&piped), 0, "{}", stderr(&piped));
    let from_pipe = json_lines(&piped);
    assert_eq!(
        from_pipe[0],
        serde_json::json!({"type": "file", "path": "-", "size": null})
    );
    assert_eq!(from_file[0]["size"], SAMPLE_SIZE);
    assert!(from_file.len() > 100);
    assert_eq!(from_pipe[1..], from_file[1..]);

    let text = run_stdin(&["/header", "-"], sample_bytes());
    assert_eq!(status(&text), 0);
    assert_eq!(stdout(&text).lines().next(), Some("File: standard input"));
}

/// The string table placed after the stream start, inside a segment that an unknown opcode
/// makes the decoder skip: a pipe must hold the stream back while it reads the table.
fn trace_with_strings_after_the_stream_start() -> Vec<u8> {
    let mut b = SptBuilder::new();
    b.program_id_table_offset(0x20).program_id_capacity(2);
    b.binary_id(0).ip(RETIRE_INSTR, &[0x1000]).raw(&[0xEE]);
    let names = b"app.exe\0core.dll\0";
    b.string_table_offset(b.next_record_offset() as u32)
        .string_table_capacity(names.len() as u16);
    let app = b.string("app.exe");
    let core = b.string("core.dll");
    b.raw(names);
    b.program_id(Guid::parse(APP_GUID), 1, app);
    b.program_id(Guid::parse(CORE_GUID), 2, core);
    b.binary_id(1)
        .lbr(&[(0x2010, 0x2000)])
        .callstack(&[0x3000, 0x3010]);
    b.build()
}

#[test]
fn stdin_reaches_tables_that_lie_after_the_stream_start() {
    let trace = trace_with_strings_after_the_stream_start();
    let (_dir, path) = temp_file("late-strings.spt", &trace);
    let file = run(&["/json", path.to_str().unwrap()]);
    let pipe = run_stdin(&["/json", "-"], trace);
    assert_eq!(status(&pipe), status(&file));
    assert_eq!(stderr(&pipe), "");
    let (file, pipe) = (json_lines(&file), json_lines(&pipe));

    let strings: Vec<&Value> = pipe.iter().filter(|v| kind(v) == "string").collect();
    assert_eq!(strings.len(), 2, "{pipe:#?}");
    assert_eq!(strings[0]["value"], "app.exe");
    assert_eq!(strings[1]["value"], "core.dll");
    let names: Vec<&Value> = pipe
        .iter()
        .filter(|v| kind(v) == "progid")
        .map(|v| &v["name"])
        .collect();
    assert_eq!(names, ["app.exe", "core.dll"]);
    assert!(pipe.iter().any(|v| v["code"] == "tables-overlap"));
    assert!(pipe.iter().any(|v| kind(v) == "callstack"));

    // Everything after the `file` line is the same; a diagnostic's message may name the
    // end of the input instead of the file size.
    let comparable = |lines: &[Value]| -> Vec<Value> {
        lines[1..]
            .iter()
            .map(|v| {
                let mut v = v.clone();
                if kind(&v) == "diagnostic" {
                    // The words, and the path ("-" or the file's), may differ.
                    v.as_object_mut().unwrap().remove("message");
                    v.as_object_mut().unwrap().remove("path");
                }
                v
            })
            .collect()
    };
    assert_eq!(comparable(&pipe), comparable(&file));
}

// ----- Several files, missing files.

#[test]
fn several_files_are_dumped_in_order_with_the_worst_status() {
    let (_dir, broken) = temp_file("broken.spt", &trace_with_an_error());
    let broken = broken.to_str().unwrap();
    let o = run(&[SAMPLE, broken]);
    assert_eq!(status(&o), 1);
    let text = stdout(&o);
    let banners: Vec<&str> = text.lines().filter(|l| l.starts_with("File: ")).collect();
    assert_eq!(
        banners,
        [
            "File: testdata/sample.spt (25,546 bytes)".to_owned(),
            format!("File: {broken} (22,604 bytes)")
        ]
    );
    // Each file's sections follow its own banner.
    let second = text.find(banners[1]).unwrap();
    assert!(text[..second].contains("contoso_app.exe"));
    assert!(!text[second..].contains("contoso_app.exe"));
    assert!(text[second..].contains("app.exe"));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "{broken}: error[segment-length-mismatch] at 0x00005820: "
        )),
        "{err}"
    );

    // The status is the worst whatever the order.
    assert_eq!(status(&run(&[broken, SAMPLE])), 1);
    assert_eq!(status(&run(&[SAMPLE, SAMPLE])), 0);
}

#[test]
fn a_missing_file_is_reported_and_the_others_are_still_dumped() {
    let o = run(&["no-such-trace.spt", SAMPLE]);
    assert_eq!(status(&o), 1);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("sptdump: no-such-trace.spt: "), "{err}");
    let text = stdout(&o);
    assert!(
        text.starts_with("File: testdata/sample.spt (25,546 bytes)\n"),
        "{text}"
    );
    assert!(!text.contains("no-such-trace"), "{text}");
    assert!(text.contains("\nEvents\n"));
}

#[test]
fn a_directory_is_reported_as_not_a_trace() {
    let o = run(&["testdata"]);
    assert_eq!(status(&o), 1);
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("testdata"), "{err}");
    assert!(err.contains("directory"), "{err}");
}

// ----- Usage errors.

#[test]
fn usage_errors_are_one_line_pointing_to_help() {
    for args in [
        &["-bogus", SAMPLE][..],
        &["/header"],
        &["/summary", "/top:x", SAMPLE],
        &["/summary", "/top:-1", SAMPLE],
        &["/summary", "--top", SAMPLE],
    ] {
        let o = run(args);
        assert_eq!(status(&o), 2, "{args:?}");
        assert_eq!(stdout(&o), "", "{args:?}");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.ends_with('\n'), "{args:?}: {err}");
        assert!(err.contains("/help"), "{args:?}: {err}");
    }
    let err = stderr(&run(&["-bogus", SAMPLE]));
    assert!(err.contains("-bogus"), "{err}");
}

// ----- A reader that goes away.

#[test]
fn a_closed_pipe_ends_the_dump_quietly() {
    // 200,000 records of 4 RVAs: 3.6 MB of trace, far more text than a pipe buffers.
    let mut b = SptBuilder::new();
    b.binary("app.exe", APP_GUID, 1);
    b.binary_id(0);
    for i in 0..200_000u32 {
        let rva = 0x1000 + 16 * (i % 4096);
        b.ip(RETIRE_INSTR, &[rva, rva + 4, rva + 8, rva + 12]);
    }
    let (_dir, path) = temp_file("big.spt", &b.build());

    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sptdump"))
        .arg("/event")
        .arg(&path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let errors = std::thread::spawn(move || {
        let mut text = String::new();
        err_pipe.read_to_string(&mut text).unwrap();
        text
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    for _ in 0..10 {
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        lines.push(line);
    }
    drop(out);
    assert!(lines[0].starts_with("File: "), "{lines:?}");
    assert!(lines[9].contains("RETIRE_INSTR"), "{lines:?}");

    let deadline = Instant::now() + Duration::from_secs(20);
    let exit = loop {
        if let Some(exit) = child.try_wait().unwrap() {
            break exit;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("sptdump still runs 20 s after its reader went away");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let errors = errors.join().unwrap();
    assert!(!errors.contains("panicked"), "{errors}");
    assert_eq!(errors, "");
    assert_eq!(exit.code(), Some(0), "{exit}");
}

// ----- /validate.

/// `/validate` alone prints only the diagnostics (on stderr) and one verdict
/// line per file (on stdout).
#[test]
fn validate_gives_a_verdict_per_file_and_the_status() {
    let o = run(&["/validate", SAMPLE]);
    assert_eq!(status(&o), 0);
    assert_eq!(
        stdout(&o),
        "testdata/sample.spt: valid (0 errors, 0 warnings)\n"
    );
    assert_eq!(stderr(&o), "");

    let (_dir, warned) = temp_file("warned.spt", &trace_with_warnings());
    let warned = warned.to_str().unwrap();
    let o = run(&["/validate", warned]);
    assert_eq!(status(&o), 0, "warnings alone leave the status 0");
    assert_eq!(
        stdout(&o),
        format!("{warned}: valid (0 errors, 2 warnings)\n")
    );
    assert_eq!(
        stderr(&o),
        format!(
            "{warned}: warning[reserved-nonzero] at 0x00000008: reserved field RawDataId is 7 (0x7), expected 0\n\
             {warned}: warning[reserved-nonzero] at 0x0000000C: reserved field TargetArch is 34404 (0x8664), expected 0\n"
        )
    );

    let (_dir2, broken) = temp_file("broken.spt", &trace_with_an_error());
    let broken = broken.to_str().unwrap();
    let o = run(&["/validate", SAMPLE, broken, warned]);
    assert_eq!(status(&o), 1);
    assert_eq!(
        stdout(&o),
        format!(
            "testdata/sample.spt: valid (0 errors, 0 warnings)\n\
             {broken}: INVALID (1 error, 0 warnings)\n\
             {warned}: valid (0 errors, 2 warnings)\n"
        )
    );
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].starts_with(&format!(
            "{broken}: error[segment-length-mismatch] at 0x00005820: "
        )),
        "{err}"
    );
    assert!(
        lines[1..]
            .iter()
            .all(|l| l.starts_with(&format!("{warned}: warning[reserved-nonzero] at "))),
        "{err}"
    );
}

/// A file that cannot be opened is a file with an error: a pipeline that counts verdicts
/// must not lose it.
#[test]
fn validate_gives_a_verdict_for_a_file_that_cannot_be_opened() {
    let o = run(&["/validate", "no-such-trace.spt", SAMPLE]);
    assert_eq!(status(&o), 1);
    let text = stdout(&o);
    let verdicts: Vec<&str> = text.lines().collect();
    assert_eq!(verdicts.len(), 2, "{text}");
    assert!(
        verdicts[0].starts_with("no-such-trace.spt: INVALID"),
        "{text}"
    );
    assert_eq!(
        verdicts[1],
        "testdata/sample.spt: valid (0 errors, 0 warnings)"
    );

    let o = run(&["/validate", "/json", "no-such-trace.spt"]);
    let lines = json_lines(&o);
    assert!(
        lines
            .iter()
            .any(|v| kind(v) == "validation" && v["path"] == "no-such-trace.spt"),
        "{lines:?}"
    );
}

#[test]
fn validate_json_has_a_verdict_line_per_file() {
    let (_dir, broken) = temp_file("broken.spt", &trace_with_an_error());
    let broken = broken.to_str().unwrap();
    let o = run(&["/validate", "/json", SAMPLE, broken]);
    assert_eq!(status(&o), 1);
    assert_eq!(stderr(&o), "");
    let lines = json_lines(&o);
    let kinds: Vec<&str> = lines.iter().map(kind).collect();
    assert_eq!(
        kinds,
        ["file", "validation", "file", "diagnostic", "validation"]
    );
    assert_eq!(
        lines[1],
        serde_json::json!({"type": "validation", "path": SAMPLE, "errors": 0, "warnings": 0, "valid": true})
    );
    assert_eq!(lines[3]["code"], "segment-length-mismatch");
    assert_eq!(lines[3]["offset"], 0x5820);
    assert_eq!(lines[3]["severity"], "error");
    assert_eq!(
        lines[4],
        serde_json::json!({"type": "validation", "path": broken, "errors": 1, "warnings": 0, "valid": false})
    );
}

// ----- /json.

/// `hits` can exceed 2^64, beyond what a `serde_json::Value` holds exactly.
#[derive(serde::Deserialize)]
struct Hits {
    hits: u128,
}

fn opcode_of(event: &str) -> u8 {
    match event {
        "UNHALT_CYCLE" => UNHALT_CYCLE,
        "RETIRE_INSTR" => RETIRE_INSTR,
        "RETIRE_BR_INSTR" => RETIRE_BR_INSTR,
        "L1_ICACHE_MISS" => L1_ICACHE_MISS,
        "L1_DCACHE_MISS" => L1_DCACHE_MISS,
        "ETW_INSTR" => ETW_INSTR,
        other => panic!("unknown event {other}"),
    }
}

fn u32s(v: &Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| u32::try_from(x.as_u64().unwrap()).unwrap())
        .collect()
}

#[test]
fn json_of_the_sample_has_every_record() {
    let o = run(&["/json", SAMPLE]);
    assert_eq!(status(&o), 0);
    assert_eq!(stderr(&o), "");
    let text = stdout(&o);
    let lines = json_lines(&o);
    assert_eq!(
        lines[0],
        serde_json::json!({"type": "file", "path": SAMPLE, "size": SAMPLE_SIZE})
    );
    assert!(
        text.lines().all(|l| l.starts_with(r#"{"type":""#)),
        "\"type\" comes first"
    );

    let expected = sample_records();
    let is_sample = |k: &str| matches!(k, "ip" | "lbr" | "callstack");
    let sample_lines = lines.iter().filter(|v| is_sample(kind(v))).count();
    let sample_records = expected
        .iter()
        .filter(|r| !matches!(r, SampleRecord::BinaryId(_) | SampleRecord::Repeat(_)))
        .count();
    assert_eq!(sample_lines, sample_records);

    // Record by record, with each sample record's hits and progid.
    let mut progid = None;
    let mut pending = 0u128;
    let mut records = Vec::new();
    for (line, v) in text.lines().zip(&lines) {
        let record = match kind(v) {
            "binary" => {
                let p = v["progid"].as_u64().unwrap() as u16;
                progid = Some(p);
                SampleRecord::BinaryId(p)
            }
            "repeat" => {
                let count = v["count"].as_u64().unwrap();
                pending = u128::from(count);
                SampleRecord::Repeat(count)
            }
            "ip" => SampleRecord::Ip(opcode_of(v["event"].as_str().unwrap()), u32s(&v["rvas"])),
            "lbr" => SampleRecord::Lbr(
                v["branches"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| {
                        let from = b["from"].as_u64().unwrap() as u32;
                        let to = b["to"].as_u64().unwrap() as u32;
                        (from, to)
                    })
                    .collect(),
            ),
            "callstack" => SampleRecord::Callstack(u32s(&v["frames"])),
            _ => continue,
        };
        if is_sample(kind(v)) {
            let hits = serde_json::from_str::<Hits>(line).unwrap().hits;
            assert_eq!(hits, 1 + pending, "{line}");
            pending = 0;
            assert_eq!(v["progid"].as_u64().map(|p| p as u16), progid, "{line}");
        }
        records.push(record);
    }
    assert_eq!(records, expected);
    assert!(text.contains(r#""hits":18446744073709551616"#));

    let names: Vec<&str> = lines
        .iter()
        .filter(|v| kind(v) == "progid")
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    let expected_names: Vec<&str> = SAMPLE_BINARIES.iter().map(|b| b.name).collect();
    assert_eq!(names, expected_names);
}

// ----- /binary.

#[test]
fn binary_keeps_only_the_named_segments() {
    let o = run(&["/json", "/event", "/binary:CONTOSO_CORE.DLL,2", SAMPLE]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    let progids: Vec<u64> = lines
        .iter()
        .filter(|v| kind(v) == "binary")
        .map(|v| v["progid"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = sample_records()
        .iter()
        .filter_map(|r| match r {
            SampleRecord::BinaryId(p @ (1 | 2)) => Some(u64::from(*p)),
            _ => None,
        })
        .collect();
    assert_eq!(progids, expected);
    assert!(
        lines
            .iter()
            .filter(|v| matches!(kind(v), "ip" | "lbr" | "callstack"))
            .all(|v| matches!(v["progid"].as_u64(), Some(1 | 2)))
    );
}

#[test]
fn binary_naming_nothing_in_the_file_is_a_usage_error() {
    let o = run(&["/binary:nosuch.dll", SAMPLE]);
    assert_eq!(status(&o), 2);
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    // A note for the file, then the usage error: no trace has it.
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(
        err.lines().nth(1).unwrap().ends_with("see 'sptdump /help'"),
        "{err}"
    );
    assert!(err.contains("nosuch.dll"), "{err}");
    assert!(
        err.contains("0 (contoso_app.exe), 1 (contoso_core.dll), 2 (ucrtbase.dll)"),
        "{err}"
    );
}

/// The sample has progids 0 to 2, so index 3, one past its table, and 9 name nothing in it
/// either.
#[test]
fn binary_index_naming_nothing_in_the_file_is_a_usage_error() {
    for index in ["/binary:3", "/binary:9"] {
        let o = run(&[index, SAMPLE]);
        assert_eq!(status(&o), 2, "{index}");
        assert_eq!(stdout(&o), "");
        assert!(stderr(&o).contains("contoso_app.exe"), "{}", stderr(&o));
    }
}

/// A binary recorded with its path is named by the whole path or by its last component,
/// in any case.
#[test]
fn binary_names_a_binary_by_its_path_or_its_file_name() {
    let mut b = SptBuilder::new();
    b.binary("C:\\build\\App.exe", APP_GUID, 1);
    b.binary_id(0).ip(RETIRE_INSTR, &[0x1000]);
    let (_dir, path) = temp_file("path.spt", &b.build());
    let path = path.to_str().unwrap();
    for name in ["/binary:app.exe", "/binary:c:\\build\\app.exe", "/binary:0"] {
        let o = run(&["/json", "/event", name, path]);
        assert_eq!(status(&o), 0, "{name}: {}", stderr(&o));
        let ips = json_lines(&o).iter().filter(|v| kind(v) == "ip").count();
        assert_eq!(ips, 1, "{name}");
    }
    assert_eq!(status(&run(&["/binary:build", path])), 2);
}

/// `/summary` over several files: each file's summaries follow its own `file` line, and
/// `/binary` applies to every file.
#[test]
fn summaries_of_several_files_stay_apart() {
    let (_dir, second) = temp_file("second.spt", &trace_with_warnings());
    let o = run(&[
        "/json",
        "/summary",
        "/top:1",
        SAMPLE,
        second.to_str().unwrap(),
    ]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    let files: Vec<usize> = (0..lines.len())
        .filter(|&i| kind(&lines[i]) == "file")
        .collect();
    assert_eq!(files.len(), 2);
    let first: Vec<_> = lines[files[0]..files[1]]
        .iter()
        .filter(|l| kind(l) == "summary")
        .collect();
    let after: Vec<_> = lines[files[1]..]
        .iter()
        .filter(|l| kind(l) == "summary")
        .collect();
    // The sample has three binaries with samples; each summary shows one top entry.
    assert_eq!(first.len(), SAMPLE_BINARIES.len());
    assert!(!after.is_empty());
    for s in first.iter().chain(&after) {
        for ip in s["ip"].as_array().unwrap() {
            assert!(ip["top"].as_array().unwrap().len() <= 1, "{ip}");
        }
    }
    // /binary by index selects progid 0 in each file.
    let o = run(&[
        "/json",
        "/summary",
        "/binary:0",
        SAMPLE,
        second.to_str().unwrap(),
    ]);
    let progids: Vec<Value> = json_lines(&o)
        .iter()
        .filter(|l| kind(l) == "summary")
        .map(|l| l["progid"].clone())
        .collect();
    assert_eq!(progids, [Value::from(0), Value::from(0)]);
}

#[test]
fn nothing_given_prints_the_short_usage_on_standard_error() {
    let o = run(&[]);
    assert_eq!(status(&o), 2);
    assert_eq!(stdout(&o), "", "nothing on standard output");
    let err = stderr(&o);
    assert!(err.starts_with("sptdump: show what is inside SPT"), "{err}");
    assert!(
        err.contains("\nUsage: sptdump [options] sptfile...\n"),
        "{err}"
    );
    assert!(
        err.ends_with("'sptdump /help' lists every option.\n"),
        "{err}"
    );
    // Something given but no trace is still the one-line usage error.
    let o = run(&["/json"]);
    assert_eq!(status(&o), 2);
    assert_eq!(
        stderr(&o),
        "sptdump: no SPT file given; see 'sptdump /help'\n"
    );
}

/// The options `program /help` lists, by name.
fn listed_options(program: &str) -> Vec<String> {
    let help = Command::cargo_bin(program)
        .unwrap()
        .arg("/help")
        .output()
        .unwrap();
    let help = String::from_utf8(help.stdout).unwrap();
    let names: Vec<String> = help
        .lines()
        .filter_map(|l| l.strip_prefix("  /"))
        .map(|l| {
            l.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect()
        })
        .collect();
    assert!(names.len() > 10, "{program} /help lists {names:?}");
    names
}

#[test]
fn completions_and_the_manual_page_offer_every_option_the_help_lists() {
    for program in ["sptdump", "spddump"] {
        let options = listed_options(program);
        for shell in ["bash", "zsh", "fish", "powershell", "elvish", "BASH"] {
            let out = Command::cargo_bin(program)
                .unwrap()
                .arg(format!("/completions:{shell}"))
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{program} {shell}");
            let script = String::from_utf8(out.stdout).unwrap();
            for name in &options {
                // fish names a long option without its dashes (`-l name`).
                let offered = match shell {
                    "fish" => script.contains(&format!("-l {name} ")),
                    _ => script.contains(&format!("--{name}")),
                };
                assert!(offered, "{program} /completions:{shell} leaves out /{name}");
            }
        }
        let out = Command::cargo_bin(program)
            .unwrap()
            .arg("/manual")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let page = String::from_utf8(out.stdout).unwrap();
        assert!(page.contains(&format!(".TH {program} 1")), "{page}");
        for name in &options {
            let roff = format!("\\fB\\-\\-{}\\fR", name.replace('-', "\\-"));
            assert!(
                page.contains(&format!(".TP\n{roff}")),
                "{program} /manual leaves out /{name}"
            );
        }
    }
}

#[test]
fn a_shell_without_completions_is_a_usage_error() {
    let out = sptdump().arg("/completions:tcsh").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "sptdump: invalid value 'tcsh' for /completions: expected bash, zsh, fish, powershell \
         or elvish; see 'sptdump /help'\n"
    );
}
