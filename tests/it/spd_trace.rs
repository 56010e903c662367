//! An SPD given with `/match` beside a trace: its function records name the trace's
//! addresses where no PDB does. The SPDs are the test kit's writer's, which shares no code
//! with the reader.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sptdump_testkit::spd::{SpdBlock, SpdBuilder, SpdFunction, field};

use crate::support::{json_lines, run_in, stderr};

const APP: &str = "7A76D39E-EF6D-104E-4C4C-44205044422E";
const OLD_APP: &str = "1C0E5B7A-3D2F-4A61-9E84-55C3A0F2B917";

fn pe_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/pe")
}

fn trace() -> String {
    pe_dir().join("trace.spt").display().to_string()
}

/// An SPD of `app.exe` whose functions at 0x1000 and 0x1070 (holding the RVAs `trace.spt` samples)
/// bear names no PDB gives: one decorated, as the linker writes C++ names.
fn renamed(guid: &str) -> SpdBuilder {
    let mut spd = SpdBuilder::new("app.exe", guid, 1);
    for f in &mut spd.functions {
        match f.rva {
            0x1000 => f.name = "?hash_bytes@@YAIPEBE_K@Z".to_owned(),
            0x1070 => f.name = "spd_parse_token".to_owned(),
            _ => {}
        }
    }
    spd
}

fn write(dir: &Path, name: &str, spd: &SpdBuilder) {
    std::fs::write(dir.join(name), spd.build()).unwrap();
}

/// The keys of `/functions` per progid, in order.
fn keys(lines: &[Value]) -> Vec<(u64, Vec<String>)> {
    lines
        .iter()
        .filter(|l| l["type"] == "functions")
        .map(|l| {
            let top = l["top"].as_array().unwrap();
            let keys = top.iter().map(|k| k["key"].as_str().unwrap().to_owned());
            (l["progid"].as_u64().unwrap(), keys.collect())
        })
        .collect()
}

fn notes(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| l["type"] == "note")
        .map(|l| l["message"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_matching_spd_names_the_functions_as_it_has_them() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app.spd", &renamed(APP));
    let core = pe_dir().join("core.spd").display().to_string();
    let matches = format!("/match:app.spd,{core}");
    let o = run_in(dir.path(), &["/json", "/functions", &matches, &trace()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json_lines(&o);
    assert_eq!(
        keys(&lines),
        [
            (
                0,
                vec![
                    "app.exe!?hash_bytes@@YAIPEBE_K@Z".into(),
                    "app.exe!spd_parse_token".into()
                ]
            ),
            // core.spd names core_add at 0x1000; nothing of its covers 0x1075.
            (
                1,
                vec!["core.dll!core_add".into(), "core.dll+0x1075".into()]
            ),
        ]
    );
    let notes = notes(&lines);
    assert!(
        notes.iter().any(|n| n.starts_with(
            "functions of progid 0 (app.exe) named from the SPD app.spd (no PDB): 6 functions"
        )),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("functions of progid 1 (core.dll) named from the SPD")),
        "{notes:?}"
    );
}

#[test]
fn the_text_says_where_the_names_came_from() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app.spd", &renamed(APP));
    let o = run_in(dir.path(), &["/functions", "/match:app.spd", &trace()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("app.exe!spd_parse_token"), "{text}");
    assert!(
        stderr(&o)
            .contains("note: functions of progid 0 (app.exe) named from the SPD app.spd (no PDB)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_mismatching_spd_names_nothing_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "old.spd", &renamed(OLD_APP));
    let o = run_in(
        dir.path(),
        &["/json", "/functions", "/match:old.spd", &trace()],
    );
    assert_eq!(o.status.code(), Some(1), "a /match that does not fit fails");
    let lines = json_lines(&o);
    assert_eq!(keys(&lines)[0].1, ["app.exe+0x1000", "app.exe+0x1075"]);
    let notes = notes(&lines);
    assert!(
        notes.iter().any(|n| n.contains(
            "the SPD old.spd names no function of this trace: it is \
             {1C0E5B7A-3D2F-4A61-9E84-55C3A0F2B917} age 1 (inferred), which matches no \
             program ID (guid-mismatch)"
        )),
        "{notes:?}"
    );
}

#[test]
fn a_pdb_given_for_the_binary_wins() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app.spd", &renamed(APP));
    let pdb = format!("/pdb:{}", pe_dir().join("app.pdb").display());
    let o = run_in(
        dir.path(),
        &["/json", "/functions", "/match:app.spd", &pdb, &trace()],
    );
    let lines = json_lines(&o);
    assert_eq!(
        keys(&lines)[0].1,
        ["app.exe!hash_bytes", "app.exe!parse_token"]
    );
    assert!(
        notes(&lines).contains(
            &"the SPD app.spd names no function of progid 0 (app.exe): a PDB names them".into()
        ),
        "{:?}",
        notes(&lines)
    );
}

#[test]
fn an_spd_whose_table_fails_a_check_names_nothing_and_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let good = renamed(APP);
    let at = good.layout().records[2] + field::RECORD_ZERO;
    write(dir.path(), "bad.spd", &good.patch_u32(at, 1));
    let o = run_in(
        dir.path(),
        &["/json", "/functions", "/match:bad.spd", &trace()],
    );
    let lines = json_lines(&o);
    assert_eq!(keys(&lines)[0].1, ["app.exe+0x1000", "app.exe+0x1075"]);
    let notes = notes(&lines);
    assert!(
        notes.iter().any(|n| n.starts_with(
            "the SPD bad.spd names no function of progid 0 (app.exe): not a readable SPD \
             function table"
        )),
        "{notes:?}"
    );
}

#[test]
fn merged_traces_are_named_by_the_spd_too() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app.spd", &renamed(APP));
    let o = run_in(
        dir.path(),
        &[
            "/json",
            "/merge",
            "/functions",
            "/match:app.spd",
            &trace(),
            &trace(),
        ],
    );
    let lines = json_lines(&o);
    let app = keys(&lines).into_iter().find(|(p, _)| *p == 0).unwrap();
    assert_eq!(
        app.1,
        [
            "app.exe!?hash_bytes@@YAIPEBE_K@Z",
            "app.exe!spd_parse_token"
        ]
    );
}

/// `spd` with every count of its functions at `rvas` set to 0, as if they never ran while
/// the SPD's traces were recorded.
fn uncounted(mut spd: SpdBuilder, rvas: &[u32]) -> SpdBuilder {
    for f in spd.functions.iter_mut().filter(|f| rvas.contains(&f.rva)) {
        for b in &mut f.blocks {
            b.count = 0;
            b.successors.iter_mut().for_each(|s| s.1 = 0);
        }
        f.callees.iter_mut().for_each(|c| c.calls = 0);
    }
    spd
}

/// The `/check` verdicts of `args`, as (code, progid, message).
fn verdicts(dir: &Path, args: &[&str]) -> Vec<(String, Value, String)> {
    let mut all = vec!["/json", "/check"];
    all.extend(args);
    let o = run_in(dir, &all);
    json_lines(&o)
        .into_iter()
        .filter(|l| l["type"] == "check")
        .map(|l| {
            let code = l["code"].as_str().unwrap().to_owned();
            (
                code,
                l["progid"].clone(),
                l["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn stale(verdicts: &[(String, Value, String)]) -> Vec<&(String, Value, String)> {
    verdicts.iter().filter(|v| v.0 == "spd-stale").collect()
}

#[test]
fn check_warns_when_the_hottest_functions_hold_no_counts_in_the_spd() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "app.spd",
        &uncounted(renamed(APP), &[0x1000, 0x1070]),
    );
    let v = verdicts(dir.path(), &["/match:app.spd", &trace()]);
    let stale = stale(&v);
    assert_eq!(stale.len(), 1, "{v:?}");
    assert_eq!(stale[0].1, Value::from(0));
    assert!(
        stale[0].2.starts_with(
            "app.spd holds no counts for 2 of the 2 hottest functions by IP samples (0 of \
             them not in it at all): more than half"
        ),
        "{}",
        stale[0].2
    );
    // A warning: the exit status stays 0, unless /strict.
    let o = run_in(dir.path(), &["/check", "/match:app.spd", &trace()]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("warning[spd-stale] progid 0: app.spd"));
}

#[test]
fn check_is_quiet_when_the_spd_counted_the_hottest_functions() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app.spd", &renamed(APP));
    // Half without counts is not more than half.
    write(dir.path(), "half.spd", &uncounted(renamed(APP), &[0x1000]));
    for spd in ["/match:app.spd", "/match:half.spd"] {
        let v = verdicts(dir.path(), &[spd, &trace()]);
        assert!(stale(&v).is_empty(), "{spd}: {v:?}");
    }
    // Not profiled at all is spd-not-profiled, not also spd-stale.
    write(dir.path(), "empty.spd", &renamed(APP).not_profiled());
    let v = verdicts(dir.path(), &["/match:empty.spd", &trace()]);
    assert!(stale(&v).is_empty(), "{v:?}");
    assert!(v.iter().any(|v| v.0 == "spd-not-profiled"), "{v:?}");
}

#[test]
fn a_hot_function_the_spd_has_no_record_of_holds_no_counts() {
    let dir = tempfile::tempdir().unwrap();
    // app.exe's samples fall in hash_bytes (0x1000) and parse_token (0x1070); this SPD has
    // a record for the first only, never run; the PDB names both.
    let mut app = SpdBuilder::new("app.exe", APP, 1);
    let b = SpdBlock::new;
    app.functions = vec![SpdFunction::new(
        "hash_bytes",
        0x1000,
        0x42,
        vec![b(0, 3, &[(0, 0x42)], &[])],
    )];
    app.buckets = 1;
    write(dir.path(), "app.spd", &app);
    let pdb = format!("/pdb:{}", pe_dir().join("app.pdb").display());
    let v = verdicts(dir.path(), &["/match:app.spd", &pdb, &trace()]);
    let found = stale(&v);
    assert_eq!(found.len(), 1, "{v:?}");
    assert_eq!(found[0].1, Value::from(0));
    assert!(
        found[0].2.starts_with(
            "app.spd holds no counts for 2 of the 2 hottest functions by IP samples (1 of \
             them not in it at all)"
        ),
        "{}",
        found[0].2
    );
    // Without the PDB the SPD names 0x1000 only: one function ranked, uncounted.
    let v = verdicts(dir.path(), &["/match:app.spd", &trace()]);
    let found = stale(&v);
    assert_eq!(found.len(), 1, "{v:?}");
    assert!(found[0].2.contains("1 of the 1 hottest"), "{v:?}");
}
