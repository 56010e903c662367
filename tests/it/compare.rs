//! `/compare BASE NEW`: traces built so that the overlap is known exactly, and the real
//! fixtures with `/pdb`.

use std::path::Path;

use serde_json::Value;
use sptdump_testkit::builder::{LBR, SptBuilder, UNHALT_CYCLE};
use sptdump_testkit::fixtures;

use crate::support::run_in;

const APP: &str = "42AC0098-ADB5-E796-8C0E-161D2814780E";
const CORE: &str = "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0";

/// A trace of `app.exe` (and `core.dll` when `core`) whose UNHALT_CYCLE samples are `rvas`
/// with their hits, named `name`.
fn trace(dir: &tempfile::TempDir, name: &str, rvas: &[(u32, u64)], core: bool) -> String {
    let mut b = SptBuilder::new();
    b.binary("App.exe", APP, 1);
    if core {
        b.binary("core.dll", CORE, 1);
    }
    b.binary_id(0);
    for &(rva, hits) in rvas {
        b.repeat(hits - 1).ip(UNHALT_CYCLE, &[rva]);
    }
    let path = dir.path().join(name);
    std::fs::write(&path, b.build()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn compare(args: &[&str]) -> (Vec<Value>, i32) {
    let mut all = vec!["/json", "/compare"];
    all.extend(args);
    let o = run_in(Path::new("."), &all);
    let lines = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|l: &Value| l["type"] != "file")
        .collect();
    (lines, o.status.code().unwrap())
}

#[test]
fn identical_disjoint_half_and_empty() {
    let dir = tempfile::tempdir().unwrap();
    let base = trace(&dir, "base.spt", &[(0x10, 4)], false);
    for (new, overlap, coverage) in [
        (vec![(0x10, 7)], 1.0, 1.0),
        (vec![(0x20, 7)], 0.0, 0.0),
        (vec![(0x10, 2), (0x20, 2)], 0.5, 0.5),
        (vec![], 0.0, 0.0),
    ] {
        let new = trace(&dir, "new.spt", &new, false);
        let (lines, status) = compare(&[&base, &new]);
        assert_eq!(status, 0);
        let c = &lines[0];
        assert_eq!(c["type"], "compare");
        assert_eq!(c["path"], new.as_str(), "NEW's path");
        assert_eq!(c["name"], "App.exe");
        assert_eq!(c["source"], "UNHALT_CYCLE");
        assert_eq!(c["base_hits"], 4);
        assert_eq!(
            (c["overlap"].as_f64(), c["coverage"].as_f64()),
            (Some(overlap), Some(coverage))
        );
    }
}

#[test]
fn missing_keys_and_binaries_in_one_trace() {
    let dir = tempfile::tempdir().unwrap();
    let base = trace(&dir, "base.spt", &[(0x10, 6), (0x20, 2)], false);
    let new = trace(&dir, "new.spt", &[(0x10, 2), (0x30, 4), (0x20, 2)], true);
    let (lines, _) = compare(&[&base, &new]);
    let missing = lines[0]["missing"].as_array().unwrap();
    assert_eq!(missing.len(), 1, "{missing:?}");
    // 0x30 is new (0 -> 1/2), 0x20 grew (1/4 -> 1/4: not missing), 0x10 shrank.
    assert_eq!(missing[0]["key"], "App.exe+0x30");
    assert_eq!(missing[0]["base_share"], 0.0);
    assert_eq!(missing[0]["new_share"], 0.5);
    let only: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "compare_binary")
        .collect();
    assert_eq!(only.len(), 1);
    assert_eq!(
        (&only[0]["name"], &only[0]["only_in"]),
        (&Value::from("core.dll"), &Value::from("new"))
    );
}

#[test]
fn binaries_pair_by_name_whatever_the_case_and_lbr_by_arc() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = SptBuilder::new();
    b.binary("app.EXE", APP, 2);
    b.binary_id(0)
        .raw(&[LBR, 1])
        .raw(&0x20u32.to_le_bytes())
        .raw(&0x10u32.to_le_bytes());
    let new = dir.path().join("new.spt");
    std::fs::write(&new, b.build()).unwrap();
    let base = trace(&dir, "base.spt", &[(0x10, 1)], false);
    let (lines, _) = compare(&[&base, new.to_str().unwrap()]);
    let sources: Vec<&str> = lines
        .iter()
        .map(|l| l["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, ["UNHALT_CYCLE", "LBR"]);
    assert_eq!(lines[1]["name"], "App.exe", "shown as BASE spells it");
    assert_eq!(lines[1]["base_hits"], 0);
    assert_eq!(lines[1]["missing"][0]["key"], "0x10->0x20");
}

#[test]
fn min_overlap_fails_an_unrepresentative_training_run() {
    let dir = tempfile::tempdir().unwrap();
    let base = trace(&dir, "base.spt", &[(0x10, 4)], false);
    let new = trace(&dir, "new.spt", &[(0x10, 2), (0x20, 2)], false);
    assert_eq!(compare(&["/min-overlap:0.5", &base, &new]).1, 0);
    assert_eq!(compare(&["/min-overlap:0.6", &base, &new]).1, 1);
    // The failure says which binary and source fell below, on standard error and in JSON.
    let o = run_in(
        Path::new("."),
        &["/compare", "/min-overlap:0.6", &base, &new],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("new.spt: App.exe UNHALT_CYCLE: overlap 0.5000 is below /min-overlap:0.6"),
        "{err}"
    );
    let o = run_in(
        Path::new("."),
        &["/json", "/compare", "/min-overlap:0.6", &base, &new],
    );
    let errors: Vec<Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let message = errors[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("App.exe UNHALT_CYCLE: overlap 0.5000 is below"),
        "{message}"
    );
    let o = run_in(Path::new("."), &["/compare", &base]);
    assert_eq!(o.status.code(), Some(2), "exactly two traces");
    let o = run_in(Path::new("."), &["/min-overlap:2", "/compare", &base, &new]);
    assert_eq!(o.status.code(), Some(2), "from 0 to 1");
}

#[test]
fn with_symbols_keys_are_functions() {
    let (lines, status) = {
        let o = run_in(
            &fixtures::dir(),
            &[
                "/json",
                "/compare",
                "/pdb:app.pdb",
                "profile.spt",
                "app-only.spt",
            ],
        );
        let lines: Vec<Value> = String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (lines, o.status.code().unwrap())
    };
    assert_eq!(status, 0);
    let ip = lines
        .iter()
        .find(|l| l["type"] == "compare" && l["name"] == "app.exe" && l["source"] == "UNHALT_CYCLE")
        .unwrap();
    // app-only.spt samples compute_checksum alone; profile.spt gives it 60 of 1120.
    let expected = 60.0 / 1120.0;
    assert!(
        (ip["overlap"].as_f64().unwrap() - expected).abs() < 1e-12,
        "{ip}"
    );
    assert_eq!(ip["coverage"], 1.0);
    assert_eq!(ip["missing"][0]["key"], "app.exe!compute_checksum");
}

#[test]
fn text_has_a_row_per_pair_and_source() {
    let dir = tempfile::tempdir().unwrap();
    let base = trace(&dir, "base.spt", &[(0x10, 4)], true);
    let new = trace(&dir, "new.spt", &[(0x10, 2), (0x20, 2)], false);
    let o = run_in(Path::new("."), &["/compare", &base, &new]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("  binary   source           base  new  counted   overlap  coverage\n"),
        "{out}"
    );
    assert!(
        out.contains("  App.exe  UNHALT_CYCLE        4    4  samples     50.0%     50.0%\n"),
        "{out}"
    );
    assert!(
        out.contains("  App.exe UNHALT_CYCLE: what NEW samples more than BASE\n"),
        "{out}"
    );
    assert!(out.contains("     0.00%   50.00%  App.exe+0x20\n"), "{out}");
    assert!(out.ends_with("  core.dll: only in base\n"), "{out}");
}

/// A NEW without samples still gets its differential flame graph, which says so, and a
/// note; a NEW with call stacks gets no such note.
#[test]
fn a_differential_flame_graph_of_an_empty_new_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let base = trace(&dir, "base.spt", &[(0x10, 4)], false);
    let svg = dir.path().join("diff.svg");
    let flame = format!("/flamegraph:{}", svg.display());
    let said = "NEW has no samples: the differential flame graph says so";
    let empty = trace(&dir, "empty.spt", &[], false);
    let stacks = dir.path().join("stacks.spt");
    let mut b = SptBuilder::new();
    b.binary("App.exe", APP, 1);
    b.binary_id(0).callstack(&[0x10, 0x20]);
    std::fs::write(&stacks, b.build()).unwrap();
    for (new, empty) in [(empty, true), (stacks.to_str().unwrap().to_owned(), false)] {
        let o = run_in(Path::new("."), &["/compare", &flame, &base, &new]);
        assert_eq!(o.status.code(), Some(0));
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(err.contains(said), empty, "{err}");
        assert!(svg.exists(), "the flame graph is written either way");
        std::fs::remove_file(&svg).unwrap();
    }
}

#[test]
fn with_symbols_arcs_are_named_by_their_functions() {
    let dir = fixtures::dir();
    let args = [
        "/json",
        "/compare",
        "/pdb:inline.pdb",
        "inline.spt",
        "inline-new.spt",
    ];
    let o = run_in(&dir, &args);
    assert_eq!(o.status.code(), Some(0));
    let lines: Vec<Value> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let stacks = lines
        .iter()
        .find(|l| l["type"] == "compare" && l["source"] == "ETW_CALLSTACK")
        .unwrap();
    // Stored leaf first, an arc is callee then caller, as /summary names it.
    assert_eq!(stacks["missing"][0]["key"], "checksum<-main_entry");
    // Without symbols, the stored addresses.
    let o = run_in(&dir, &["/json", "/compare", "inline.spt", "inline-new.spt"]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains(r#""key":"0x103F->0x10E0""#), "{text}");
    // Root first, the caller comes first and the arc reads forward.
    let o = run_in(
        &dir,
        &[
            "/compare",
            "/pdb:inline.pdb",
            "/stackorder:root-first",
            "inline.spt",
            "inline-new.spt",
        ],
    );
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(!text.contains("<-"), "{text}");
    // The report shows the same names.
    let out = tempfile::tempdir().unwrap();
    let page = out.path().join("compare.html");
    let html = format!("/html:{}", page.display());
    let o = run_in(
        &dir,
        &[
            "/compare",
            "/pdb:inline.pdb",
            &html,
            "inline.spt",
            "inline-new.spt",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let page = std::fs::read_to_string(page).unwrap();
    assert!(
        page.contains("checksum&lt;-main_entry"),
        "the report names the arc"
    );
    assert!(
        !page.contains("0x103F-&gt;0x10E0"),
        "and not by its addresses"
    );
}
