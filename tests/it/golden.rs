//! Golden files: the whole output of the binary — standard output, standard error and the
//! exit status — for the bundled sample and for broken traces, pinned in `tests/golden/`.
//!
//! After an intended change of the output, regenerate the files and review the diff:
//!
//! ```text
//! SPTDUMP_BLESS=1 cargo test --test it golden::
//! ```
//!
//! Each golden file holds one run:
//!
//! ```text
//! $ sptdump /header testdata/sample.spt
//! --- stdout
//! ...
//! --- stderr
//! ...
//! --- exit 0
//! ```
//!
//! The broken traces are built here with the test-side writer and written to
//! `target/golden-inputs/`, relative to the crate root (the binary runs there), so that the
//! paths the output prints are the same on every machine.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Once;

use assert_cmd::Command;
use sptdump_testkit::builder::*;
use sptdump_testkit::golden::{self, blessing, describe_difference};

const APP_GUID: &str = "42AC0098-ADB5-E796-8C0E-161D2814780E";
const CORE_GUID: &str = "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0";

/// Where the broken traces go, relative to the crate root.
const INPUTS: &str = "target/golden-inputs";

/// The command that rewrites the golden files.
const BLESS: &str = "SPTDUMP_BLESS=1 cargo test --test it golden::";

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn golden_dir() -> PathBuf {
    crate_root().join("tests/golden")
}

// ----- The broken traces.

/// Two binaries, "app.exe" (progid 0) and "core.dll" (progid 1), and no records yet.
fn two_binaries() -> SptBuilder {
    let mut b = SptBuilder::new();
    b.binary("app.exe", APP_GUID, 1);
    b.binary("core.dll", CORE_GUID, 2);
    b
}

/// A small valid trace, for the cases that break only the header or the tables.
fn small_valid() -> SptBuilder {
    let mut b = two_binaries();
    b.binary_id(0)
        .ip(RETIRE_INSTR, &[0x1000, 0x1004])
        .repeat(2)
        .lbr(&[(0x2010, 0x2000)])
        .binary_id(1)
        .callstack(&[0x3000, 0x3010, 0x3020]);
    b
}

/// The broken traces by name: each breaks one rule of the format (a few break two that
/// always come together).
fn broken_inputs() -> Vec<(&'static str, Vec<u8>)> {
    let mut inputs = Vec::new();
    let mut add = |name: &'static str, b: &SptBuilder| inputs.push((name, b.build()));

    add("empty", small_valid().truncate(0));
    add("truncated-header", small_valid().truncate(10));
    add(
        "signature-byte-order",
        small_valid().patch(field::SIGNATURE, b"SPT:"),
    );
    add(
        "not-an-spt-file",
        small_valid().patch(field::SIGNATURE, b"MZ\x90\x00"),
    );
    add("unsupported-version", small_valid().version(2));
    add(
        "reserved-nonzero",
        small_valid().raw_data_id(7).target_arch(0x8664),
    );
    add(
        "string-table-overflow",
        small_valid().string_table_used(0x4100),
    );
    add(
        "string-table-out-of-bounds",
        small_valid().patch_u32(field::STRING_TABLE_OFFSET, 0x0010_0000),
    );
    {
        let mut b = SptBuilder::new();
        let app = b.string("app.exe");
        let cafe = b.raw_string_bytes(b"caf\xE9.dll\0");
        let tail = b.raw_string_bytes(b"tail.dll");
        b.program_id(Guid::parse(APP_GUID), 1, app);
        b.program_id(Guid::parse(CORE_GUID), 2, cafe);
        b.program_id(Guid::parse(CORE_GUID), 3, tail);
        b.binary_id(1).ip(RETIRE_INSTR, &[0x1000]);
        add("bad-strings", &b);
    }
    {
        let mut b = SptBuilder::new();
        let app = b.string("app.exe");
        b.program_id(Guid::parse(APP_GUID), 1, app);
        b.program_id(Guid::parse(CORE_GUID), 2, 500);
        b.binary_id(1).ip(RETIRE_INSTR, &[0x1000]);
        add("string-offset-out-of-range", &b);
    }
    add(
        "progid-table-out-of-bounds",
        small_valid().patch_u16(field::PROGRAM_IDS_USED, 0x300),
    );
    add(
        "stream-out-of-bounds",
        small_valid().patch_u16(field::PROGRAM_ID_CAPACITY, 0xFFFF),
    );
    {
        // The string table lies inside the stream, in a part of a segment that an unknown
        // opcode makes the decoder skip.
        let mut b = SptBuilder::new();
        b.program_id_table_offset(0x20).program_id_capacity(2);
        b.binary_id(0).ip(RETIRE_INSTR, &[0x1000]).raw(&[0xEE]);
        b.string_table_offset(b.next_record_offset() as u32)
            .string_table_capacity(8);
        let app = b.string("app.exe");
        b.raw(b"app.exe\0");
        b.program_id(Guid::parse(APP_GUID), 1, app);
        add("tables-overlap", &b);
    }
    {
        let mut b = two_binaries();
        b.binary_id(0)
            .ip(RETIRE_INSTR, &[0x1000])
            .repeat(4)
            .raw(&[0xEE, 0x01, 0x02, 0x03])
            .ip(RETIRE_INSTR, &[0x1004])
            .binary_id(1)
            .ip(RETIRE_INSTR, &[0x2000]);
        add("unknown-opcode-skipped", &b);
    }
    {
        let mut b = two_binaries();
        b.raw(&[0xEE, 0x00])
            .binary_id(0)
            .ip(RETIRE_INSTR, &[0x1000]);
        add("unknown-opcode-stops", &b);
    }
    {
        let mut b = two_binaries();
        b.binary_id(0)
            .ip(RETIRE_INSTR, &[0x1000, 0x1004, 0x1008])
            .lbr(&[(0x2010, 0x2000), (0x2030, 0x2020)]);
        let len = b.next_record_offset();
        add("truncated-record", b.truncate(len - 5));
    }
    {
        let mut b = two_binaries();
        b.binary_id(0).ip(RETIRE_INSTR, &[0x1000]).repeat(6);
        let len = b.next_record_offset();
        add("truncated-repeat", b.truncate(len - 3));
    }
    {
        let mut b = two_binaries();
        b.binary_id(0)
            .repeat(5)
            .repeat(7)
            .ip(RETIRE_INSTR, &[0x1000])
            .repeat(3)
            .binary_id(1)
            .ip(UNHALT_CYCLE, &[0x2000])
            .repeat(9);
        add("repeats", &b);
    }
    {
        let mut b = two_binaries();
        b.binary_id(0)
            .callstack(&[0x3000])
            .callstack(&[])
            .callstack(&[0x3000, 0x3010]);
        add("short-callstack", &b);
    }
    {
        let mut b = two_binaries();
        b.repeat(2)
            .ip(RETIRE_INSTR, &[0x1000])
            .lbr(&[(0x2010, 0x2000)])
            .binary_id(0)
            .ip(RETIRE_INSTR, &[0x1004]);
        add("event-before-binary-id", &b);
    }
    {
        let mut b = two_binaries();
        b.binary_id(0)
            .ip(RETIRE_INSTR, &[0x1000])
            .binary_id(5)
            .ip(RETIRE_INSTR, &[0x1004]);
        add("progid-out-of-range", &b);
    }
    {
        let mut b = two_binaries();
        b.binary_id_with_length(0, 2)
            .ip(RETIRE_INSTR, &[0x1000])
            .binary_id_with_length(1, 0x0001_0000)
            .ip(RETIRE_INSTR, &[0x2000]);
        add("bad-segment-length", &b);
    }
    {
        let mut b = two_binaries();
        // The first segment is declared 20 bytes longer than its records, the second
        // 4 bytes shorter; the third is right.
        b.binary_id_with_length(0, 4 + 6 + 20)
            .ip(RETIRE_INSTR, &[0x1000])
            .binary_id_with_length(1, 4 + 10 - 4)
            .ip(RETIRE_INSTR, &[0x2000, 0x2004])
            .binary_id(0)
            .ip(RETIRE_INSTR, &[0x1004, 0x1008, 0x100C, 0x1010]);
        add("segment-length-mismatch", &b);
    }
    inputs
}

/// Writes the broken traces to [`INPUTS`], once per test process.
fn write_inputs() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let dir = crate_root().join(INPUTS);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in broken_inputs() {
            let path = dir.join(format!("{name}.spt"));
            sptdump_testkit::fixtures::write_shared(&path, &bytes);
        }
    });
}

// ----- The cases.

/// One run of the binary and the golden file that pins it.
struct Case {
    /// The golden file is `tests/golden/NAME.txt`.
    name: String,
    args: Vec<String>,
    /// A file, relative to the crate root, to feed to standard input.
    stdin: Option<&'static str>,
}

impl Case {
    fn new(name: impl Into<String>, args: &[&str]) -> Case {
        Case {
            name: name.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            stdin: None,
        }
    }

    fn command_line(&self) -> String {
        let mut line = String::from("$ sptdump");
        for arg in &self.args {
            line.push(' ');
            line.push_str(arg);
        }
        if let Some(file) = self.stdin {
            write!(line, " < {file}").unwrap();
        }
        line
    }

    fn golden_path(&self) -> PathBuf {
        golden_dir().join(format!("{}.txt", self.name))
    }
}

const SAMPLE: &str = "testdata/sample.spt";

fn cases() -> Vec<Case> {
    let mut cases = vec![
        Case::new("sample-all", &[SAMPLE]),
        Case::new("sample-header", &["/header", SAMPLE]),
        Case::new("sample-strtab", &["/strtab", SAMPLE]),
        Case::new("sample-progid", &["/progid", SAMPLE]),
        Case::new("sample-event", &["/event", SAMPLE]),
        Case::new("sample-summary", &["/summary", SAMPLE]),
        Case::new("sample-summary-top3", &["/summary", "/top:3", SAMPLE]),
        Case::new("sample-validate", &["/validate", SAMPLE]),
        Case::new("sample-json", &["/json", SAMPLE]),
        Case::new("sample-json-summary", &["/json", "/summary", SAMPLE]),
        Case::new(
            "sample-binary-event",
            &["/binary:contoso_core.dll", "/event", SAMPLE],
        ),
        Case::new("sample-progid-header", &["/progid", "/header", SAMPLE]),
        Case {
            stdin: Some(SAMPLE),
            ..Case::new("sample-stdin-header-strtab", &["/header", "/strtab", "-"])
        },
    ];
    for (name, _) in broken_inputs() {
        let path = format!("{INPUTS}/{name}.spt");
        cases.push(Case::new(format!("broken-{name}"), &[&path]));
        cases.push(Case::new(
            format!("broken-{name}-validate"),
            &["/validate", &path],
        ));
    }
    let broken = format!("{INPUTS}/segment-length-mismatch.spt");
    cases.push(Case::new("several-files", &[SAMPLE, &broken]));
    cases.push(Case::new(
        "several-files-validate-json",
        &["/validate", "/json", SAMPLE, &broken],
    ));
    cases.push(Case::new("usage-unknown-option", &["-bogus", SAMPLE]));
    cases.push(Case::new(
        "binary-not-in-file",
        &["/binary:nosuch.dll", SAMPLE],
    ));
    cases.push(Case::new(
        "binary-index-not-in-file",
        &["/binary:9", SAMPLE],
    ));
    cases.push(Case::new("help", &["/help"]));
    cases
}

// ----- Running and comparing.

fn run(case: &Case) -> Output {
    let mut cmd = Command::cargo_bin("sptdump").unwrap();
    cmd.current_dir(crate_root()).args(&case.args);
    if let Some(file) = case.stdin {
        cmd.pipe_stdin(crate_root().join(file)).unwrap();
    }
    cmd.output().unwrap()
}

/// The golden text of a run.
fn render(case: &Case, output: &Output) -> String {
    let mut text = case.command_line();
    text.push_str("\n--- stdout\n");
    push_stream(&mut text, &output.stdout);
    text.push_str("--- stderr\n");
    push_stream(&mut text, &output.stderr);
    match output.status.code() {
        Some(code) => writeln!(text, "--- exit {code}").unwrap(),
        None => writeln!(text, "--- exit: killed by a signal ({})", output.status).unwrap(),
    }
    text
}

fn push_stream(text: &mut String, bytes: &[u8]) {
    let s = String::from_utf8_lossy(bytes);
    text.push_str(&s);
    if !s.is_empty() && !s.ends_with('\n') {
        text.push_str("\n\\ no newline at the end\n");
    }
}

/// Compares one case with its golden file, or writes the file when blessing. Returns what
/// is wrong.
fn check(case: &Case) -> Result<(), String> {
    let actual = render(case, &run(case));
    let what = format!("the output of `{}`", case.command_line());
    golden::check(&case.golden_path(), &actual, &what, BLESS)
}

#[test]
fn outputs_match_the_golden_files() {
    write_inputs();
    let cases = cases();
    let failures: Vec<String> = cases.iter().filter_map(|c| check(c).err()).collect();
    if blessing() {
        assert!(
            failures.is_empty(),
            "cannot write the golden files:\n{}",
            failures.join("\n")
        );
        eprintln!("wrote {} golden files to tests/golden/", cases.len());
        return;
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n\n{}\n\
         If the new output is right, regenerate the golden files with\n\
         {BLESS}\n\
         and review the diff.",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// A golden file whose case is gone would otherwise never be looked at again.
#[test]
fn every_golden_file_has_a_case() {
    let names: Vec<String> = cases().into_iter().map(|c| c.name).collect();
    let dir = match std::fs::read_dir(golden_dir()) {
        Ok(dir) => dir,
        // Blessing writes the folder; until then there is nothing stale in it.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && blessing() => return,
        Err(e) => panic!(
            "the golden files are missing: {}: {e} (they are part of the repository; \
             {BLESS} writes them)",
            golden_dir().display()
        ),
    };
    let mut stale = Vec::new();
    let mut found = 0;
    for entry in dir {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if path.extension().is_none_or(|e| e != "txt") || !names.contains(&stem) {
            stale.push(path.display().to_string());
        } else {
            found += 1;
        }
    }
    assert!(
        stale.is_empty(),
        "golden files without a case (delete them): {stale:?}"
    );
    assert!(
        found > 0 || blessing(),
        "no golden files in {} ({BLESS} writes them)",
        golden_dir().display()
    );
}

/// The comparison itself: a golden file that differs must be caught, at the right line.
#[test]
fn a_difference_is_reported_with_both_lines() {
    let message = describe_difference("a\nb\nc\n", "a\nB\nc\n");
    assert!(message.contains("line 2"), "{message}");
    assert!(message.contains(r#"expected: "b""#), "{message}");
    assert!(message.contains(r#"actual:   "B""#), "{message}");
    let message = describe_difference("a\n", "a\nextra\n");
    assert!(message.contains("line 2"), "{message}");
    assert!(message.contains("expected: (end of output)"), "{message}");
}
