//! Bounded resources and I/O faults: headers that declare the largest tables there can be,
//! files that are not traces (a directory, an unreadable file, one that shrinks while it is
//! read), and an output nobody reads.
//!
//! Nothing here measures time; the resource tests only make sure a run finishes, and on
//! Unix run the binary under an address-space limit far below what trusting the header
//! would take.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
#[cfg(unix)]
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use sptdump::dump::{Outcome, Status};
use sptdump::input::Input;
use sptdump::output::FileInfo;
use sptdump_testkit::builder::*;
use sptdump_testkit::dumping::*;

const APP_GUID: &str = "42AC0098-ADB5-E796-8C0E-161D2814780E";

fn temp_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

/// The binary, on Linux with at most 200 MB of address space (other systems' shells do not
/// all limit it).
fn limited() -> Command {
    let exe = env!("CARGO_BIN_EXE_sptdump");
    if cfg!(target_os = "linux") {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg("ulimit -v 200000 && exec \"$0\" \"$@\"")
            .arg(exe);
        c
    } else {
        Command::new(exe)
    }
}

/// Runs the binary on `path`, limited as [`limited`] says.
fn run_limited(args: &[&str], path: &Path) -> Output {
    limited()
        .args(args)
        .arg(path)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn codes(diagnostics: &[Value]) -> Vec<(String, u64)> {
    diagnostics
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                d["offset"].as_u64().unwrap(),
            )
        })
        .collect()
}

// ----- Bounded resources.

/// Every count and offset at its maximum, in a file of 40 bytes: each part is simply out of
/// bounds, and nothing is allocated from the counts.
#[test]
fn the_largest_header_over_a_tiny_file() {
    let mut b = SptBuilder::new();
    b.string_table_capacity(0)
        .program_id_capacity(0)
        .raw(&[0x81, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]);
    for (field, v) in [
        (field::STRING_TABLE_OFFSET, 0xFFFF_FFFF),
        (field::PROGRAM_ID_TABLE_OFFSET, 0xFFFF_FFFF),
    ] {
        b.patch_u32(field, v);
    }
    for field in [
        field::STRING_TABLE_USED,
        field::STRING_TABLE_CAPACITY,
        field::PROGRAM_IDS_USED,
        field::PROGRAM_ID_CAPACITY,
    ] {
        b.patch_u16(field, 0xFFFF);
    }
    let bytes = b.build();
    assert_eq!(bytes.len(), 40);

    let stream_start = 0xFFFF_FFFF + 0xFFFF * 24;
    let expected = [
        ("tables-overlap".to_owned(), 0x10),
        ("string-table-out-of-bounds".to_owned(), 0xFFFF_FFFF),
        ("progid-table-out-of-bounds".to_owned(), 0xFFFF_FFFF),
        ("stream-out-of-bounds".to_owned(), stream_start),
    ];
    for set in option_sets() {
        for via in [Via::File, Via::Pipe] {
            let d = dump_bytes(&bytes, &set, via);
            match d.outcome {
                Outcome::Done(t, _) => assert_eq!((t.errors, t.warnings), (3, 1), "{}", set.name),
                // /binary:0 names no binary of a file whose program IDs cannot be read.
                Outcome::NoSuchBinary => assert!(set.plan.binaries.is_some()),
                other => panic!("{}: {other:?} {}", set.name, d.err),
            }
            if set.is_json() && d.outcome != Outcome::NoSuchBinary {
                assert_eq!(
                    codes(&d.json_diagnostics()),
                    expected,
                    "{} {via:?}",
                    set.name
                );
            }
        }
    }

    let (_dir, path) = temp_file("huge-header.spt", &bytes);
    let o = run_limited(&["/validate", "/json"], &path);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.lines().count(), 1 + expected.len() + 1, "{out}");
    assert!(
        out.lines()
            .last()
            .unwrap()
            .contains("\"errors\":3,\"warnings\":1"),
        "{out}"
    );
}

/// A valid trace with both tables at their largest (65,535 string bytes, 65,535 program
/// IDs: 1.5 MiB) and a stream of a few MB. It decodes without a diagnostic from a file
/// and from a pipe (which must buffer both tables, and only them), in-process and as the
/// binary under the address-space limit.
#[test]
fn the_largest_tables_and_a_long_stream() {
    let mut b = SptBuilder::new();
    b.string_table_capacity(0xFFFF).program_id_capacity(0xFFFF);
    let mut names = Vec::new();
    for i in 0..5957 {
        names.push(b.string(&format!("m{i:05}.dll")));
    }
    names.push(b.string("end.exe"));
    for i in 0..0xFFFFu32 {
        let name = names[i as usize % names.len()];
        b.program_id(Guid::parse(APP_GUID), i, name);
    }
    let mut records = 0u64;
    for s in 0..6000u32 {
        b.binary_id((s * 11 % 0xFFFF) as u16);
        b.repeat(u64::from(s)).ip(RETIRE_INSTR, &[s; 64]);
        b.lbr(&[(s, s + 1); 32]);
        b.callstack(&[s, s + 4, s + 8]);
        records += 5;
    }
    let bytes = b.build();
    assert_eq!(u16_at(&bytes, 0x18), 0xFFFF);
    assert_eq!(u16_at(&bytes, 0x1C), 0xFFFF);
    assert!(bytes.len() > 4 << 20, "{}", bytes.len());

    for via in [Via::File, Via::Pipe] {
        let d = dump_bytes(&bytes, &validate_json(), via);
        assert_eq!(d.json_diagnostics(), Vec::<Value>::new(), "{via:?}");
        assert_eq!(d.status(), Status::Clean);
    }

    let (_dir, path) = temp_file("largest.spt", &bytes);
    let o = run_limited(&["/validate"], &path);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.stderr, b"");
    let o = run_limited(&["/event", "/json"], &path);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8(o.stdout).unwrap();
    let events = out
        .lines()
        .filter(|l| {
            RECORD_TYPES
                .iter()
                .any(|t| l.contains(&format!("\"type\":\"{t}\"")))
        })
        .count() as u64;
    assert_eq!(events, records);
    // Through standard input, which has to hold both tables.
    let o = limited()
        .args(["/summary", "/top:1", "-"])
        .stdin(std::fs::File::open(&path).unwrap())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.stderr, b"");
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

// ----- Files that are not traces.

/// A small valid trace.
#[cfg(unix)]
fn small_trace() -> Vec<u8> {
    let mut b = SptBuilder::new();
    b.binary("app.exe", APP_GUID, 1);
    b.binary_id(0)
        .ip(RETIRE_INSTR, &[0x1000, 0x1004])
        .repeat(2)
        .lbr(&[(0x2010, 0x2000)])
        .callstack(&[0x3000, 0x3010, 0x3020]);
    b.build()
}

/// A directory handed to the library as a file: it cannot be read, and the dump says so
/// instead of failing or panicking. (Only Unix opens a directory as a file at all.)
#[cfg(unix)]
#[test]
fn a_directory_opened_as_a_file_is_a_read_failure() {
    let dir = tempfile::tempdir().unwrap();
    let file = File::open(dir.path()).unwrap();
    let input = Input::file(file).unwrap();
    let info = FileInfo::new("somedir", input.size());
    for set in [text_all(), validate_json()] {
        let file = File::open(dir.path()).unwrap();
        let input = Input::file(file).unwrap();
        let d = dump_input(input, &info, &set);
        assert_eq!(d.outcome, Outcome::ReadFailed, "{}", set.name);
        assert!(d.err.starts_with("sptdump: somedir: "), "{}", d.err);
        assert!(!d.err.contains("panicked"), "{}", d.err);
    }
}

/// A directory given to the binary: a verdict that counts it as an error, on every platform.
#[test]
fn a_directory_is_a_read_failure() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_limited(&["/validate", "/json"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("\"type\":\"validation\""), "{out}");
    assert!(out.contains("\"errors\":1"), "{out}");
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("it is a directory"), "{err}");
}

#[cfg(unix)]
#[test]
fn an_unreadable_file_is_reported() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path) = temp_file("secret.spt", &small_trace());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    if File::open(&path).is_ok() {
        // Root (and some sandboxes) read a file whatever its mode. Said straight to standard
        // error, past the test harness's capture, so that the skip shows in every run.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: an_unreadable_file_is_reported: mode 000 does not keep this user from \
             reading a file"
        );
        return;
    }
    let o = run_limited(&["/header"], &path);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("secret.spt"), "{err}");
    assert!(err.contains("cannot open"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// A trace of a few hundred KB, so that a cut can fall after the tables, in the stream.
fn long_trace() -> Vec<u8> {
    let mut b = SptBuilder::new();
    b.binary("app.exe", APP_GUID, 1);
    for s in 0..2000u32 {
        b.binary_id(0)
            .ip(RETIRE_INSTR, &[s; 20])
            .lbr(&[(s, s + 1); 4]);
    }
    b.build()
}

/// Opens the trace as a file (its size is taken then), cuts it to `len` through another
/// handle, and dumps it with `/validate /json`.
fn dump_shrunk(bytes: &[u8], len: u64) -> Dumped {
    let (_dir, path) = temp_file("shrinking.spt", bytes);
    let file = File::open(&path).unwrap();
    let input = Input::file(file).unwrap();
    let size = input.size();
    assert_eq!(size, Some(bytes.len() as u64));
    OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len)
        .unwrap();
    let info = FileInfo::new("shrinking.spt", size);
    dump_input(input, &info, &validate_json())
}

/// A file that loses its tables after it was opened: a read failure that says the file
/// changed, counted as an error by the verdict.
#[test]
fn a_file_that_shrinks_inside_its_tables() {
    let bytes = long_trace();
    for len in [0x30, 0x4030] {
        let d = dump_shrunk(&bytes, len);
        assert_eq!(d.outcome, Outcome::ReadFailed, "cut at {len:#X}");
        assert!(d.err.contains("changed while being read"), "{}", d.err);
        let verdict = d.json().pop().unwrap();
        assert_eq!(verdict["type"], "validation");
        assert_eq!(verdict["errors"], 1);
    }
    // Cut inside the header: the header itself cannot be read.
    let d = dump_shrunk(&bytes, 10);
    assert_ne!(d.status(), Status::Clean, "{} {}", d.out, d.err);
}

/// A file that loses the end of its stream after it was opened: decoding stops where the
/// bytes end with a read failure that says the file changed, without a panic.
#[test]
fn a_file_that_shrinks_inside_its_stream() {
    let bytes = long_trace();
    // Inside a record, between records of a segment.
    for len in [DEFAULT_STREAM_START + 1000 + 3, DEFAULT_STREAM_START + 8] {
        let d = dump_shrunk(&bytes, len);
        assert_eq!(
            d.outcome,
            Outcome::ReadFailed,
            "cut at {len:#X}: {} {}",
            d.out,
            d.err
        );
        assert!(d.err.contains("changed while being read"), "{}", d.err);
    }
}

/// The same, cut exactly where a segment ends. The header cannot tell (the format has no
/// field for the stream's length), but the size the file had when it was opened can: the
/// stream ends before it, so the dump must not call the trace valid.
#[test]
fn a_file_that_shrinks_at_a_segment_boundary() {
    let bytes = long_trace();
    let segment = 8 + (2 + 20 * 4) + (2 + 4 * 8);
    let len = DEFAULT_STREAM_START + 10 * segment;
    assert_eq!(bytes[len as usize], BINARY_ID);
    let d = dump_shrunk(&bytes, len);
    assert_ne!(d.status(), Status::Clean, "{}{}", d.out, d.err);
}

// ----- Output nobody reads.

/// Spawns the binary with its standard output a pipe whose read end was closed before
/// the binary started; returns the exit status and standard error.
#[cfg(unix)]
fn run_into_closed_pipe(args: &[&str], path: &Path) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let mut child = Command::new(env!("CARGO_BIN_EXE_sptdump"))
        .args(args)
        .arg(path)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code(), err)
}

/// A reader that went away before the first byte: every format ends quietly, with the
/// status the trace deserves (0 for a valid one), and never a panic. The dump is a few MB,
/// far more than a pipe buffers.
#[cfg(unix)]
#[test]
fn a_closed_output_ends_every_format_quietly() {
    let (_dir, path) = temp_file("long.spt", &long_trace());
    for args in [
        &[][..],
        &["/json"],
        &["/validate"],
        &["/validate", "/json"],
        &["/summary", "/top:3"],
        &["/event", "/json", "/binary:0"],
    ] {
        let (status, err) = run_into_closed_pipe(args, &path);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(err, "", "{args:?}");
        assert_eq!(status, Some(0), "{args:?}");
    }
}

/// A trace whose only problem is an error in its stream.
#[cfg(unix)]
fn trace_with_an_error() -> Vec<u8> {
    let mut b = SptBuilder::new();
    b.binary("app.exe", APP_GUID, 1);
    b.binary_id(7).ip(RETIRE_INSTR, &[0x1000]); // progid-out-of-range
    b.build()
}

/// The same with a trace that has an error: the status stays 1 and, where diagnostics go
/// to standard error, they still get there.
#[cfg(unix)]
#[test]
fn a_closed_output_keeps_the_errors_found() {
    let (_dir, path) = temp_file("bad.spt", &trace_with_an_error());
    for args in [&["/validate"][..], &["/validate", "/json"], &["/json"]] {
        let (status, err) = run_into_closed_pipe(args, &path);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(status, Some(1), "{args:?}: {err}");
        if !args.contains(&"/json") {
            assert!(
                err.contains("error[progid-out-of-range]"),
                "{args:?}: {err}"
            );
        }
    }
    // With standard output closed outright, writes fail with EBADF rather than EPIPE.
    let o = Command::new("sh")
        .arg("-c")
        .arg("exec \"$0\" /json \"$1\" >&-")
        .arg(env!("CARGO_BIN_EXE_sptdump"))
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(1), "{err}");
}

/// The default text dump of the same trace into a closed pipe: the text printer flushes
/// standard output before each diagnostic, and that flush fails; the diagnostic must still
/// reach standard error, which is open, and the exit status must still say the trace has an
/// error (exit status 1 "when any error diagnostic was found").
#[cfg(unix)]
#[test]
fn a_closed_output_does_not_hide_the_diagnostics_of_a_text_dump() {
    let (_dir, path) = temp_file("bad.spt", &trace_with_an_error());
    let (status, err) = run_into_closed_pipe(&[], &path);
    assert!(err.contains("error[progid-out-of-range]"), "{err:?}");
    assert_eq!(status, Some(1), "{err}");
}

/// `lbr.spt` cut short and overwritten, run through the LBR views with `lbr.exe`'s PDB and
/// image at hand: every run ends with its output whole (JSON that parses), a cut never
/// reads more LBR records than the whole trace holds, and no range is made of records that
/// are not there.
#[test]
fn damaged_lbr_traces_meet_the_lbr_views_with_their_files() {
    let whole =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe/lbr.spt")).unwrap();
    let records = |d: &Dumped| -> Option<u64> {
        d.json()
            .iter()
            .find(|l| l["type"] == "lbr_ranges")
            .map(|l| l["records"].as_u64().unwrap())
    };
    let sets = option_sets_with_files();
    let intact = dump_bytes(&whole, &sets[0], Via::File);
    assert_eq!(records(&intact), Some(400), "{}", intact.err);
    let mut damaged: Vec<(String, Vec<u8>)> = Vec::new();
    // Cut short: in the header, the tables, and all along the stream.
    for at in (0..whole.len())
        .step_by(whole.len() / 23)
        .chain([16, 0x4021, 0x5823])
    {
        damaged.push((format!("cut at {at}"), whole[..at].to_vec()));
    }
    // Overwritten: 24 bytes of 0xFF, then of 0x00, at places along the stream.
    for at in (0x5820..whole.len()).step_by(whole.len() / 11) {
        for fill in [0xFF, 0x00] {
            let mut bytes = whole.clone();
            let end = (at + 24).min(bytes.len());
            bytes[at..end].fill(fill);
            damaged.push((format!("{fill:#04X} at {at}"), bytes));
        }
    }
    for (how, bytes) in &damaged {
        for set in &sets {
            let d = dump_bytes(bytes, set, Via::File);
            if set.is_json() {
                let lines = d.json();
                assert!(
                    lines.iter().all(|l| l["type"].is_string()),
                    "{how}, {}",
                    set.name
                );
            }
            if how.starts_with("cut") && set.name.starts_with("/coverage") {
                assert!(records(&d).unwrap_or(0) <= 400, "{how}: {}", d.err);
            }
        }
    }
}

/// `profile.spt` (a trace of `app.exe`) cut short and overwritten, beside `app.spd`, the
/// profile of its build (`/compare TRACE SPD`, the set of the sweeps): every line is a
/// line, the overlaps stay shares, and a trace cut short never gives a function more
/// samples than the whole trace does.
#[test]
fn damaged_traces_beside_their_spd_keep_the_comparisons_promises() {
    let whole =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe/profile.spt"))
            .unwrap();
    let set = option_sets()
        .into_iter()
        .find(|s| s.company == Company::BesideSpd)
        .expect("a set beside an SPD");
    let samples = |d: &Dumped| -> BTreeMap<String, u64> {
        d.json()
            .iter()
            .filter(|l| l["type"] == "compare_spd")
            .map(|l| {
                let name = l["function"].as_str().unwrap().to_owned();
                (name, l["trace_samples"].as_u64().unwrap())
            })
            .collect()
    };
    let intact = dump_bytes(&whole, &set, Via::File);
    let all = samples(&intact);
    assert_eq!(all.values().sum::<u64>(), 1122, "{}", intact.out);
    let mut damaged: Vec<(String, Vec<u8>)> = Vec::new();
    for at in (0..whole.len())
        .step_by(whole.len() / 23)
        .chain([16, 31, 33])
    {
        damaged.push((format!("cut at {at}"), whole[..at].to_vec()));
    }
    for at in (40..whole.len()).step_by(whole.len() / 11) {
        for fill in [0xFF, 0x00] {
            let mut bytes = whole.clone();
            let end = (at + 24).min(bytes.len());
            bytes[at..end].fill(fill);
            damaged.push((format!("{fill:#04X} at {at}"), bytes));
        }
    }
    let share = |v: &Value| v.as_f64().is_none_or(|x| (0.0..=1.0 + 1e-9).contains(&x));
    for (how, bytes) in &damaged {
        for via in [Via::File, Via::Pipe] {
            let d = dump_bytes(bytes, &set, via);
            for l in d.json() {
                assert!(l["type"].is_string(), "{how}: {l}");
                for key in ["overlap", "trace_share", "spd_share", "shape_overlap"] {
                    assert!(share(&l[key]), "{how}: {key} in {l}");
                }
            }
            if how.starts_with("cut") {
                for (name, n) in samples(&d) {
                    assert!(
                        n <= all.get(&name).copied().unwrap_or(0),
                        "{how}: {name} {n}"
                    );
                }
            }
        }
    }
}
