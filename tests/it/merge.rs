//! `/merge` and `/sptlist`: several traces as one profile, as SPDConvert takes them.

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;
use sptdump_testkit::builder::{SptBuilder, UNHALT_CYCLE};
use sptdump_testkit::fixtures;

fn run_in(dir: &Path, args: &[&str], stdin: Option<Vec<u8>>) -> Output {
    let mut cmd = Command::cargo_bin("sptdump").unwrap();
    cmd.current_dir(dir).args(args);
    if let Some(bytes) = stdin {
        cmd.write_stdin(bytes);
    }
    cmd.output().unwrap()
}

fn lines(o: &Output) -> Vec<Value> {
    String::from_utf8(o.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Asserts that the run exited 0, showing its standard error when not.
fn succeeded(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The summary lines of a run, by binary name, without their path.
fn summaries(o: &Output) -> Vec<Value> {
    lines(o)
        .into_iter()
        .filter(|l| l["type"] == "summary")
        .map(|mut l| {
            l.as_object_mut().unwrap().remove("path");
            l
        })
        .collect()
}

/// The binaries of a run's summaries: (progid, name, records).
fn binaries(o: &Output) -> Vec<(Value, Value, u64)> {
    summaries(o)
        .into_iter()
        .map(|s| {
            (
                s["progid"].clone(),
                s["name"].clone(),
                s["records"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_b_a_counts_a_twice_and_b_once() {
    let dir = fixtures::dir();
    let o = run_in(
        &dir,
        &[
            "/json",
            "/merge",
            "/summary",
            "/top:0",
            "profile.spt",
            "app-only.spt",
            "profile.spt",
        ],
        None,
    );
    succeeded(&o);
    let merged = summaries(&o);
    let single =
        |trace: &str| summaries(&run_in(&dir, &["/json", "/summary", "/top:0", trace], None));
    let (a, b) = (single("profile.spt"), single("app-only.spt"));
    // app.exe: progid 0 in both traces (same build), so merged it is 2a + b.
    let samples = |v: &Value, event: &str| -> u64 {
        v["ip"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["event"] == event)
            .map_or(0, |e| e["samples"].as_u64().unwrap())
    };
    assert_eq!(
        samples(&merged[0], "UNHALT_CYCLE"),
        2 * samples(&a[0], "UNHALT_CYCLE") + samples(&b[0], "UNHALT_CYCLE")
    );
    assert_eq!(
        merged[0]["records"],
        2 * a[0]["records"].as_u64().unwrap() + b[0]["records"].as_u64().unwrap()
    );
    assert_eq!(
        merged[0]["callstack"]["arcs"],
        2 * a[0]["callstack"]["arcs"].as_u64().unwrap()
    );
    assert_eq!(merged[1]["name"], "core.dll");
    assert_eq!(merged[1]["records"], 2 * a[1]["records"].as_u64().unwrap());
    // The per-file dump is still there: a file line per trace, then the merged one.
    let files: Vec<Value> = lines(&o)
        .into_iter()
        .filter(|l| l["type"] == "file")
        .map(|l| l["path"].clone())
        .collect();
    assert_eq!(
        files,
        [
            "profile.spt",
            "app-only.spt",
            "profile.spt",
            "3 traces merged"
        ]
        .map(Value::from)
    );
}

#[test]
fn binaries_merge_by_guid_and_age_not_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, binaries: &[(&str, &str, u32)], rva: u32| {
        let mut b = SptBuilder::new();
        for &(n, guid, age) in binaries {
            b.binary(n, guid, age);
        }
        b.binary_id(binaries.len() as u16 - 1)
            .ip(UNHALT_CYCLE, &[rva]);
        let path = dir.path().join(name);
        std::fs::write(&path, b.build()).unwrap();
        path.to_str().unwrap().to_owned()
    };
    const G1: &str = "42AC0098-ADB5-E796-8C0E-161D2814780E";
    const G2: &str = "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0";
    // The same build as progid 0 here and progid 1 there; another age is another binary.
    let one = write("one.spt", &[("app.exe", G1, 1)], 0x10);
    let two = write("two.spt", &[("x.dll", G2, 1), ("APP.EXE", G1, 1)], 0x20);
    let three = write("three.spt", &[("app.exe", G1, 2)], 0x30);
    let o = run_in(
        Path::new("."),
        &["/json", "/merge", "/summary", &one, &two, &three],
        None,
    );
    let names = binaries(&o);
    assert_eq!(
        names,
        [
            (Value::from(0), Value::from("app.exe"), 2),
            (Value::from(2), Value::from("app.exe"), 1),
        ],
        "progids in order of first appearance; x.dll has no samples"
    );
}

#[test]
fn both_cores_give_the_bytes_one_gives() {
    let dir = fixtures::dir();
    let args = ["/json", "/merge", "/summary", "/functions", "/folded"];
    let parallel = run_in(
        &dir,
        &[&args[..], &["profile.spt", "app-only.spt", "profile.spt"]].concat(),
        None,
    );
    // Standard input is read on this thread: the same traces, one after another.
    let sequential = run_in(
        &dir,
        &[&args[..], &["-", "app-only.spt", "profile.spt"]].concat(),
        Some(std::fs::read(dir.join("profile.spt")).unwrap()),
    );
    let out = |o: &Output| String::from_utf8(o.stdout.clone()).unwrap();
    let sequential = out(&sequential).replacen(
        r#"{"type":"file","path":"-","size":null}"#,
        r#"{"type":"file","path":"profile.spt","size":23120}"#,
        1,
    );
    assert_eq!(out(&parallel), sequential);
}

#[test]
fn sptlist_adds_the_traces_it_lists() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("traces.txt");
    let pe = fixtures::dir();
    let profile = pe.join("profile.spt");
    std::fs::write(
        &list,
        format!("{}\r\n\n  {}  \n", profile.display(), profile.display()),
    )
    .unwrap();
    let arg = format!("/sptlist:{}", list.display());
    let o = run_in(Path::new("."), &["/json", "/merge", "/summary", &arg], None);
    succeeded(&o);
    let merged = summaries(&o);
    let one = summaries(&run_in(&pe, &["/json", "/summary", "profile.spt"], None));
    assert_eq!(
        merged[0]["records"],
        2 * one[0]["records"].as_u64().unwrap()
    );
    // A list that cannot be read is a usage error.
    let o = run_in(
        Path::new("."),
        &["/merge", "/sptlist:no/such/list.txt"],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("/sptlist:no/such/list.txt"));
}

#[test]
fn a_merged_flame_graph_is_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("merged.svg");
    let arg = format!("/flamegraph:{}", svg.display());
    let o = run_in(
        &fixtures::dir(),
        &["/merge", &arg, "/pdb:app.pdb", "profile.spt", "profile.spt"],
        None,
    );
    succeeded(&o);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("app.exe!main_entry (2,240 hits"),
        "twice the hits"
    );
    // Without /merge, one trace only.
    let o = run_in(
        &fixtures::dir(),
        &[&arg, "profile.spt", "profile.spt"],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn call_stacks_alone_merge_by_binary_too() {
    // /folded keeps no summary: the binaries of the call stacks are renumbered from the
    // stacks' own totals. b.dll is progid 1 in the first trace, 0 in the second.
    let dir = tempfile::tempdir().unwrap();
    const A: &str = "42AC0098-ADB5-E796-8C0E-161D2814780E";
    const B: &str = "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0";
    let mut one = SptBuilder::new();
    one.binary("a.exe", A, 1);
    one.binary("b.dll", B, 1);
    one.binary_id(1).callstack(&[0x10, 0x20]);
    std::fs::write(dir.path().join("one.spt"), one.build()).unwrap();
    let mut two = SptBuilder::new();
    two.binary("b.dll", B, 1);
    two.binary_id(0).callstack(&[0x10, 0x20]).callstack(&[0x30]);
    std::fs::write(dir.path().join("two.spt"), two.build()).unwrap();
    // Either way round: with two.spt first, b.dll is merged binary 0 and a.exe 1, so
    // one.spt's progid 1 (b.dll) becomes 0, not 1.
    for order in [["one.spt", "two.spt"], ["two.spt", "one.spt"]] {
        let o = run_in(dir.path(), &["/merge", "/folded", order[0], order[1]], None);
        succeeded(&o);
        assert_eq!(
            String::from_utf8(o.stdout).unwrap(),
            "b.dll+0x20;b.dll+0x10 2\nb.dll+0x30 1\n",
            "both traces' stacks under b.dll, {order:?}"
        );
    }
}

/// A progid past a trace's table (an error of that trace, reported) keeps a binary of its
/// own in the merged profile, numbered after the others and named by its progid.
#[test]
fn a_progid_past_the_table_keeps_a_binary_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = SptBuilder::new();
    b.binary("app.exe", "42AC0098-ADB5-E796-8C0E-161D2814780E", 1);
    b.binary_id(0).ip(UNHALT_CYCLE, &[0x10]);
    b.binary_id(7).ip(UNHALT_CYCLE, &[0x20, 0x30]);
    let path = dir.path().join("beyond.spt");
    std::fs::write(&path, b.build()).unwrap();
    let path = path.to_str().unwrap();
    let o = run_in(Path::new("."), &["/json", "/merge", "/summary", path], None);
    let names = binaries(&o);
    assert_eq!(
        names,
        [
            (Value::from(0), Value::from("app.exe"), 1),
            (Value::from(1), Value::from("progid 7"), 1)
        ],
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}
