//! An SPD given with `/match` beside a trace: its function records name the trace's
//! addresses where no PDB does. The SPDs are the test kit's writer's, which shares no code
//! with the reader.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sptdump_testkit::spd::{SpdBuilder, field};

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
