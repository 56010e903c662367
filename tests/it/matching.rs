//! `/match` end to end, on real images and PDBs built by clang and lld (`testdata/pe/`).
//!
//! The traces are built from the identities `llvm-readobj` printed for those images (the
//! committed `*.readobj.txt`): the 16 GUID bytes exactly as the CodeView record holds them,
//! which is how SPTAggregate copies them into a trace. So the trace side of every check comes
//! from the linker's own output, not from the reader under test.
//!
//! `testdata/pe/trace.spt` (app.exe and core.dll) is written by this test with
//! `SPTDUMP_BLESS=1 cargo test --test it matching::`; the guide walks through it.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

use assert_cmd::Command;
use serde_json::{Value, json};
use sptdump_testkit::builder::{Guid, RETIRE_INSTR, SptBuilder};
use sptdump_testkit::fixtures;
use sptdump_testkit::golden::blessing;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The CodeView GUID bytes and age `llvm-readobj` printed for an image, and the GUID in
/// registry form.
fn codeview(image: &str) -> ([u8; 16], u32, String) {
    let (bytes, age) = fixtures::codeview(image);
    // The registry form, to compare with what sptdump prints: first three groups
    // little-endian, the rest as stored.
    let b = &bytes;
    let registry = format!(
        "{:02X}{:02X}{:02X}{:02X}-{:02X}{:02X}-{:02X}{:02X}-{:02X}{:02X}-{}",
        b[3],
        b[2],
        b[1],
        b[0],
        b[5],
        b[4],
        b[7],
        b[6],
        b[8],
        b[9],
        b[10..]
            .iter()
            .map(|x| format!("{x:02X}"))
            .collect::<String>()
    );
    (bytes, age, registry)
}

/// A trace of the given binaries, each with one segment of samples.
fn trace(binaries: &[(&str, &str)]) -> Vec<u8> {
    let mut b = SptBuilder::new();
    let mut ids = Vec::new();
    for (name, image) in binaries {
        let (guid, age, _) = codeview(image);
        let s = b.string(name);
        ids.push(b.program_id(Guid(guid), age, s));
    }
    for id in ids {
        b.binary_id(id).ip(RETIRE_INSTR, &[0x1000, 0x1075]);
    }
    b.build()
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = root().join("target/match-inputs");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    fixtures::write_shared(&path, bytes);
    path
}

/// Written once per test process, and never over a file another test is reading
/// ([`fixtures::write_shared`]).
fn app_core() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        write(
            "app-core.spt",
            &trace(&[("app.exe", "app"), ("core.dll", "core")]),
        )
    })
    .clone()
}

fn app_only() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| write("app-only.spt", &trace(&[("app.exe", "app")])))
        .clone()
}

fn run(args: &[&str], trace: &Path) -> Output {
    Command::cargo_bin("sptdump")
        .unwrap()
        .current_dir(root().join("testdata/pe"))
        .args(args)
        .arg(trace)
        .output()
        .unwrap()
}

fn json(args: &[&str], trace: &Path) -> (Vec<Value>, i32) {
    let mut all = vec!["/json"];
    all.extend(args);
    let out = run(&all, trace);
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "match")
        .map(|mut v| {
            // Each line names the trace it was matched against, as given.
            let path = v.as_object_mut().unwrap().remove("path");
            assert_eq!(path.as_ref().and_then(Value::as_str), trace.to_str());
            v
        })
        .collect();
    (lines, out.status.code().unwrap())
}

#[test]
fn the_committed_trace_is_up_to_date() {
    let built = trace(&[("app.exe", "app"), ("core.dll", "core")]);
    let path = root().join("testdata/pe/trace.spt");
    if blessing() {
        std::fs::write(&path, &built).unwrap();
        return;
    }
    assert!(
        std::fs::read(&path).unwrap() == built,
        "{} is stale: run SPTDUMP_BLESS=1 cargo test --test it matching::",
        path.display()
    );
}

#[test]
fn images_and_pdbs_of_the_traced_build_match() {
    let (app_guid, _, app) = codeview("app");
    let (_, _, core) = codeview("core");
    let (lines, status) = json(&["/match:app.exe,app.pdb,core.dll,core.pdb"], &app_core());
    assert_eq!(status, 0);
    assert_eq!(
        lines,
        [
            json!({"type": "match", "file": "app.exe", "kind": "pe", "guid": app, "age": 1, "status": "match", "progid": 0}),
            json!({"type": "match", "file": "app.pdb", "kind": "pdb", "guid": app, "age": 1, "status": "match", "progid": 0}),
            json!({"type": "match", "file": "core.dll", "kind": "pe", "guid": core, "age": 1, "status": "match", "progid": 1}),
            json!({"type": "match", "file": "core.pdb", "kind": "pdb", "guid": core, "age": 1, "status": "match", "progid": 1}),
        ]
    );
    assert_ne!(app_guid, [0; 16]);
}

#[test]
fn a_relinked_image_is_an_age_mismatch() {
    let (_, age, core) = codeview("age2/core");
    assert_eq!(age, 2);
    let (lines, status) = json(&["/match:age2/core.dll"], &app_core());
    assert_eq!(status, 1);
    assert_eq!(
        lines,
        [
            json!({"type": "match", "file": "age2/core.dll", "kind": "pe", "guid": core, "age": 2,
                "status": "age-mismatch", "progid": 1, "trace_guid": core, "trace_age": 1})
        ]
    );
}

#[test]
fn another_build_is_a_guid_mismatch_for_image_and_pdb() {
    let (_, _, v2) = codeview("v2/core");
    let (_, _, core) = codeview("core");
    assert_ne!(v2, core);
    let (lines, status) = json(&["--match", "v2/core.dll,v2/core.pdb"], &app_core());
    assert_eq!(status, 1);
    for (line, (file, kind)) in lines
        .iter()
        .zip([("v2/core.dll", "pe"), ("v2/core.pdb", "pdb")])
    {
        assert_eq!(
            line,
            &json!({"type": "match", "file": file, "kind": kind, "guid": v2, "age": 1,
                    "status": "guid-mismatch", "progid": 1, "trace_guid": core, "trace_age": 1})
        );
    }
}

#[test]
fn a_binary_the_trace_does_not_know_is_absent() {
    let (lines, status) = json(&["/match:core.dll,core.pdb,app.exe"], &app_only());
    assert_eq!(status, 1);
    let statuses: Vec<_> = lines
        .iter()
        .map(|l| (l["status"].clone(), l["progid"].clone()))
        .collect();
    assert_eq!(
        statuses,
        [
            (json!("absent"), Value::Null),
            (json!("absent"), Value::Null),
            (json!("match"), json!(0))
        ]
    );
    assert!(lines[0].get("trace_guid").is_none());
}

#[test]
fn files_without_an_identity_are_named_with_what_is_missing() {
    let (lines, status) = json(
        &["/match:nodebug.exe,app.c,missing.dll,app.exe"],
        &app_core(),
    );
    assert_eq!(status, 1);
    assert_eq!(lines.len(), 4);
    for (line, needle) in lines
        .iter()
        .zip(["CodeView", "neither a PE image", "missing.dll"])
    {
        assert_eq!(line["status"], "error");
        let message = line["message"].as_str().unwrap();
        assert!(message.contains(needle), "{message}");
    }
    assert_eq!(lines[3]["status"], "match");
}

#[test]
fn text_lines_are_aligned_and_name_both_identities() {
    let out = run(
        &["/match:app.exe,v2/core.dll,age2/core.dll,nodebug.exe"],
        &app_core(),
    );
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let (_, _, app) = codeview("app");
    let (_, _, core) = codeview("core");
    let lines: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Matches"))
        .skip(1)
        .collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[0].contains(&format!(
            "{{{app}}}  age 1  match          progid 0 (app.exe)"
        )),
        "{text}"
    );
    assert!(
        lines[1].contains(&format!(
            "guid-mismatch  progid 1 (core.dll) is {{{core}}} age 1"
        )),
        "{text}"
    );
    assert!(
        lines[2].contains("age 2  age-mismatch   progid 1 (core.dll) has age 1"),
        "{text}"
    );
    assert!(
        lines[3].contains("error: ") && lines[3].contains("CodeView"),
        "{text}"
    );
    // The GUID column starts at the same place on every line with an identity.
    let column: Vec<_> = lines[..3].iter().map(|l| l.find('{').unwrap()).collect();
    assert!(column.windows(2).all(|w| w[0] == w[1]), "{text}");
}

#[test]
fn several_traces_are_each_checked() {
    let out = Command::cargo_bin("sptdump")
        .unwrap()
        .current_dir(root().join("testdata/pe"))
        .args(["/json", "/match:core.dll"])
        .arg(app_core())
        .arg(app_only())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let statuses: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["type"] == "match")
        .map(|v| v["status"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(statuses, ["match", "absent"]);
}
