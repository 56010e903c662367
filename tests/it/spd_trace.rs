//! An SPD given with `/match` beside a trace: its function records name the trace's
//! addresses where no PDB does. The SPDs are the test kit's writer's, which shares no code
//! with the reader.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sptdump_testkit::builder::SptBuilder;
use sptdump_testkit::fixtures::{self, APP_GUID as APP};
use sptdump_testkit::spd::{SpdBlock, SpdBuilder, SpdFunction, field};

use crate::support::{json_lines, run_in, stderr};

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
    // core.spd places its functions where core.pdb does: a sampled RVA is named by the one
    // whose code holds it, and is left an address outside them.
    let named_by_core_spd = |rva: u32| -> String {
        ["core_add", "core_scale"]
            .into_iter()
            .find(|name| {
                let (at, size) = fixtures::placed("core", "core", name);
                at <= rva && rva < at + size
            })
            .map_or(format!("core.dll+0x{rva:X}"), |name| {
                format!("core.dll!{name}")
            })
    };
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
            (
                1,
                vec![named_by_core_spd(0x1000), named_by_core_spd(0x1075)]
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
        stderr(&o).contains(
            "note: functions of progid 0 (app.exe) named from the SPD app.spd (no PDB): 6 \
             functions with code (RVA and size inferred), linker-level names"
        ),
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
    // A record whose code ends where parse_token starts does not hold parse_token.
    app.functions = vec![SpdFunction::new(
        "hash_bytes",
        0x1000,
        0x70,
        vec![b(0, 3, &[(0, 0x70)], &[])],
    )];
    write(dir.path(), "up_to.spd", &app);
    let v = verdicts(dir.path(), &["/match:up_to.spd", &pdb, &trace()]);
    let found = stale(&v);
    assert_eq!(found.len(), 1, "{v:?}");
    assert!(found[0].2.contains("(1 of them not in it at all)"), "{v:?}");
}

/// The `compare_spd` lines of `/compare TRACE SPD`, as (function, trace samples, entry,
/// dyninst), in order.
fn beside(lines: &[Value]) -> Vec<(String, u64, Value, Value)> {
    lines
        .iter()
        .filter(|l| l["type"] == "compare_spd")
        .map(|l| {
            (
                l["function"].as_str().unwrap().to_owned(),
                l["trace_samples"].as_u64().unwrap(),
                l["spd_entry"].clone(),
                l["spd_dyninst"].clone(),
            )
        })
        .collect()
}

/// What the writer put in `spd` for each function: (name, entry, dyninst), by the layout's
/// own definitions (block 1's count; Σ count × instructions).
fn written(spd: &SpdBuilder) -> Vec<(String, u64, u64)> {
    spd.functions
        .iter()
        .map(|f| {
            let entry = f.blocks.first().map_or(0, |b| b.count);
            let dyninst = f
                .blocks
                .iter()
                .map(|b| b.count * u64::from(b.instructions))
                .sum();
            (f.name.clone(), entry, dyninst)
        })
        .collect()
}

#[test]
fn compare_sets_the_trace_beside_the_spd() {
    let dir = tempfile::tempdir().unwrap();
    let spd = renamed(APP);
    write(dir.path(), "app.spd", &spd);
    let o = run_in(dir.path(), &["/json", "/compare", &trace(), "app.spd"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = json_lines(&o);
    let got = beside(&lines);
    let written = written(&spd);
    let (entries, dyninsts): (u64, u64) =
        written.iter().fold((0, 0), |(e, d), f| (e + f.1, d + f.2));
    // Every function the SPD counted is a row; the two sampled ones hold one sample each.
    let counted: Vec<&(String, u64, u64)> = written.iter().filter(|f| f.2 > 0).collect();
    assert_eq!(got.len(), counted.len(), "{got:?}");
    for (name, entry, dyninst) in counted {
        let row = got.iter().find(|r| &r.0 == name).unwrap();
        let sampled = ["?hash_bytes@@YAIPEBE_K@Z", "spd_parse_token"].contains(&name.as_str());
        assert_eq!(row.1, u64::from(sampled), "{name}");
        assert_eq!(
            (&row.2, &row.3),
            (&Value::from(*entry), &Value::from(*dyninst))
        );
    }
    let line = lines
        .iter()
        .find(|l| l["function"] == "spd_parse_token")
        .unwrap();
    let parse = written.iter().find(|f| f.0 == "spd_parse_token").unwrap();
    assert_eq!(line["trace_share"], 0.5);
    assert_eq!(line["spd_entry_share"], parse.1 as f64 / entries as f64);
    assert_eq!(line["spd_dyninst_share"], parse.2 as f64 / dyninsts as f64);
    assert_eq!(
        (&line["progid"], &line["name"]),
        (&Value::from(0), &Value::from("app.exe"))
    );
    assert_eq!(line["dyninst_inferred"], true);
    // The larger share on either side first.
    let larger = |l: &Value| {
        let t = l["trace_share"].as_f64().unwrap();
        t.max(l["spd_dyninst_share"].as_f64().unwrap())
    };
    let order: Vec<f64> = (lines.iter())
        .filter(|l| l["type"] == "compare_spd")
        .map(larger)
        .collect();
    assert!(order.windows(2).all(|w| w[0] >= w[1]), "{order:?}");
}

/// A sample no function holds counts in the trace's total and apart, as in no function.
#[test]
fn compare_counts_the_samples_in_no_function_apart() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app.spd", &renamed(APP));
    let mut b = SptBuilder::new();
    let progid = b.binary("app.exe", APP, 1);
    b.binary_id(progid);
    b.ip(0x01, &[0x1000, 0x1070, 0x10]);
    b.ip(0x01, &[0xFFFF_FFF0]);
    std::fs::write(dir.path().join("t.spt"), b.build()).unwrap();
    let o = run_in(dir.path(), &["/compare", "t.spt", "app.spd"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("progid 0 (app.exe), 4 IP samples (2 in no function); the SPD: "),
        "{text}"
    );
    let o = run_in(dir.path(), &["/json", "/compare", "t.spt", "app.spd"]);
    let lines = json_lines(&o);
    let sampled = (lines.iter())
        .filter(|l| l["type"] == "compare_spd" && l["trace_samples"] == 1)
        .map(|l| l["trace_share"].as_f64().unwrap());
    assert_eq!(sampled.collect::<Vec<_>>(), [0.25, 0.25]);
}

#[test]
fn compare_text_labels_the_inferred_figures_and_obeys_top() {
    let o = run_in(&pe_dir(), &["/compare", "/top:2", "trace.spt", "app.spd"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(
            "trace.spt beside the SPD app.spd: progid 0 (app.exe), 2 IP samples (0 in no \
             function); the SPD: "
        ),
        "{text}"
    );
    assert!(text.contains("5 functions, showing 2"), "{text}");
    assert!(text.contains("dyninst*"), "{text}");
    assert!(
        text.contains("* inferred: the sum of block count x instructions"),
        "{text}"
    );
    // The function table's rows (the table of blocks follows it, a blank line between).
    let table = text
        .split("\n\n")
        .find(|t| t.contains("beside the SPD"))
        .unwrap();
    let rows = table
        .lines()
        .filter(|l| l.ends_with("parse_token") || l.ends_with("hash_bytes"));
    assert_eq!(rows.count(), 2, "{text}");
}

#[test]
fn a_sampled_function_the_spd_has_no_record_of_is_a_row_without_spd_figures() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = SpdBuilder::new("app.exe", APP, 1);
    let b = SpdBlock::new;
    app.functions = vec![SpdFunction::new(
        "hash_bytes",
        0x1000,
        0x42,
        vec![b(7, 3, &[(0, 0x42)], &[])],
    )];
    app.buckets = 1;
    write(dir.path(), "app.spd", &app);
    let pdb = format!("/pdb:{}", pe_dir().join("app.pdb").display());
    let o = run_in(
        dir.path(),
        &["/json", "/compare", &pdb, &trace(), "app.spd"],
    );
    let lines = json_lines(&o);
    let parse = lines
        .iter()
        .find(|l| l["function"] == "parse_token")
        .unwrap();
    assert_eq!(
        (&parse["hash"], &parse["spd_entry"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(parse["spd_entry_share"], 0.0);
    let hash = lines
        .iter()
        .find(|l| l["function"] == "hash_bytes")
        .unwrap();
    assert_eq!(
        (&hash["spd_entry"], &hash["spd_dyninst"]),
        (&Value::from(7), &Value::from(21))
    );
    assert_eq!(hash["spd_entry_share"], 1.0);
}

#[test]
fn compare_with_an_spd_of_another_build_fails_and_says_why() {
    let o = run_in(&pe_dir(), &["/compare", "trace.spt", "app-old.spd"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains(
            "app-old.spd is for app.exe {1C0E5B7A-3D2F-4A61-9E84-55C3A0F2B917} age 1 \
             (inferred), which matches no program ID of this trace (guid-mismatch)"
        ),
        "{}",
        stderr(&o)
    );
    assert!(!String::from_utf8_lossy(&o.stdout).contains("beside the SPD"));
}

#[test]
fn compare_views_of_two_traces_are_not_made_against_an_spd() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("diff.svg");
    let flame = format!("/flamegraph:{}", svg.display());
    // Beside `/blocks` (of a trace beside an SPD) and `/summary` (of each trace), which are
    // made: only the view of two traces is named.
    let args = [
        "/compare",
        "/blocks:mix_round",
        "/summary",
        &flame,
        "trace.spt",
        "app.spd",
    ];
    let o = run_in(&pe_dir(), &args);
    let err = stderr(&o);
    let notes: Vec<&str> = err.lines().filter(|l| l.contains("not made")).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(
        notes[0].ends_with(": /flamegraph (of two traces) not made against the SPD app.spd"),
        "{err}"
    );
    assert!(!svg.exists());
}

#[test]
fn the_report_shows_the_spd_side_of_a_matching_spd() {
    let dir = tempfile::tempdir().unwrap();
    let spd = renamed(APP);
    write(dir.path(), "app.spd", &spd);
    let o = run_in(dir.path(), &["/html:with.html", "/match:app.spd", &trace()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = std::fs::read_to_string(dir.path().join("with.html")).unwrap();
    let at = page
        .find("<h2 id=\"spd\">Beside the SPD</h2>")
        .expect("the SPD section");
    let section = &page[at..];
    assert!(
        section.contains("app.exe (progid 0) beside <code>app.spd</code>: 2 IP samples"),
        "{section}"
    );
    let parse = written(&spd)
        .into_iter()
        .find(|f| f.0 == "spd_parse_token")
        .unwrap();
    let row = format!("<td class=\"n\" data-v=\"{0}\">{0}</td>", parse.2);
    let named = section.find("spd_parse_token").unwrap();
    assert!(section[..named].contains(&row), "{section}");
    // Without an SPD, or with one of another build, there is no such section.
    write(dir.path(), "old.spd", &renamed(OLD_APP));
    for (html, args) in [("none.html", None), ("old.html", Some("/match:old.spd"))] {
        let flag = format!("/html:{html}");
        let mut all = vec![flag.as_str()];
        all.extend(args);
        let t = trace();
        all.push(&t);
        run_in(dir.path(), &all);
        let page = std::fs::read_to_string(dir.path().join(html)).unwrap();
        assert!(!page.contains("id=\"spd\""), "{html}");
    }
}

// ----- A real SPD: the shared suite's, read in place beside the repository.

/// `spddump /func /json` of `spd`: its functions as spddump's own reading gives them.
fn spddump_functions(spd: &Path) -> Vec<Value> {
    let o = assert_cmd::Command::cargo_bin("spddump")
        .unwrap()
        .args(["/func", "/json"])
        .arg(spd)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    json_lines(&o)
        .into_iter()
        .filter(|l| l["type"] == "spd_function")
        .collect()
}

/// A trace of the SPD's binary (identity from the suite's expected.json) with IP samples in
/// the middle of each of `functions`, the first weighing most.
fn trace_of(dir: &Path, identity: &Value, functions: &[&Value]) -> String {
    let mut b = sptdump_testkit::builder::SptBuilder::new();
    let guid = identity["guid"].as_str().unwrap();
    let age = u32::try_from(identity["age"].as_u64().unwrap()).unwrap();
    b.binary(identity["name"].as_str().unwrap(), guid, age);
    b.binary_id(0);
    for (i, f) in functions.iter().enumerate() {
        let rva = f["rva"].as_u64().unwrap() + f["size"].as_u64().unwrap() / 2;
        let weight = (functions.len() - i) as u64;
        b.repeat(weight - 1).ip(
            sptdump_testkit::builder::RETIRE_INSTR,
            &[u32::try_from(rva).unwrap()],
        );
    }
    let path = dir.join("real.spt");
    std::fs::write(&path, b.build()).unwrap();
    path.display().to_string()
}

#[test]
fn a_real_spd_names_a_trace_of_its_build_and_sets_it_beside_its_counts() {
    let Some(suite) = sptdump_testkit::shared::spd_files(
        "a_real_spd_names_a_trace_of_its_build_and_sets_it_beside_its_counts",
    ) else {
        return;
    };
    let file = "2026-05-18_EbpfCore_8f1fae3b.spd";
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(suite.join("expected.json")).unwrap())
            .unwrap();
    let spd = suite.join(file);
    let all = spddump_functions(&spd);
    let mut hot: Vec<&Value> = all
        .iter()
        .filter(|f| f["size"].as_u64() > Some(0) && f["dyninst"].as_u64() > Some(0))
        .collect();
    hot.sort_by_key(|f| std::cmp::Reverse(f["dyninst"].as_u64()));
    hot.truncate(5);
    assert_eq!(hot.len(), 5);
    let dir = tempfile::tempdir().unwrap();
    let trace = trace_of(dir.path(), &expected[file], &hot);
    let matched = format!("/match:{}", spd.display());

    let o = run_in(dir.path(), &["/json", "/functions", &matched, &trace]);
    let named: Vec<String> = hot
        .iter()
        .map(|f| format!("EbpfCore.sys!{}", f["name"].as_str().unwrap()))
        .collect();
    assert_eq!(keys(&json_lines(&o))[0].1, named);

    let o = run_in(
        dir.path(),
        &[
            "/json",
            "/compare",
            "/top:50",
            &trace,
            &spd.display().to_string(),
        ],
    );
    let lines = json_lines(&o);
    for (i, f) in hot.iter().enumerate() {
        let row = lines
            .iter()
            .find(|l| l["type"] == "compare_spd" && l["hash"] == f["hash"])
            .unwrap_or_else(|| panic!("no row for {f}"));
        assert_eq!(row["trace_samples"], Value::from(5 - i as u64), "{row}");
        assert_eq!(
            (&row["spd_entry"], &row["spd_dyninst"]),
            (&f["entry"], &f["dyninst"])
        );
    }

    let v = verdicts(dir.path(), &[&matched, &trace]);
    assert!(stale(&v).is_empty(), "{v:?}");
    // The same trace in functions the SPD never counted.
    let cold: Vec<&Value> = all
        .iter()
        .filter(|f| f["size"].as_u64() > Some(0) && f["covered"] == 0)
        .take(5)
        .collect();
    let trace = trace_of(dir.path(), &expected[file], &cold);
    let v = verdicts(dir.path(), &[&matched, &trace]);
    let found = stale(&v);
    assert_eq!(found.len(), 1, "{v:?}");
    assert!(
        found[0].2.contains("no counts for 5 of the 5 hottest"),
        "{v:?}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// A matching SPD damaged past its identity (its function table, its records, its
    /// blocks) names what it can or nothing, and is set beside a trace or refused: never a
    /// panic, never an exit status but 0 or 1.
    #[test]
    fn a_damaged_spd_beside_a_trace_is_read_or_refused(
        changes in proptest::collection::vec((0usize..4096, proptest::prelude::any::<u8>()), 1..8),
    ) {
        let good = renamed(APP);
        let module = good.module_offset();
        let mut bytes = good.build();
        for (at, b) in changes {
            let at = module + at % (bytes.len() - module);
            bytes[at] = b;
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bad.spd"), &bytes).unwrap();
        let runs: [&[&str]; 2] = [
            &["/json", "/check", "/functions", "/html:r.html", "/match:bad.spd", &trace()],
            &["/json", "/compare", &trace(), "bad.spd"],
        ];
        for args in runs {
            let o = run_in(dir.path(), args);
            let err = stderr(&o);
            proptest::prop_assert!(matches!(o.status.code(), Some(0 | 1)), "{args:?}: {err}");
            proptest::prop_assert!(!err.contains("panicked"), "{args:?}: {err}");
        }
    }
}

#[test]
fn an_spd_given_first_says_which_order_compare_takes() {
    let o = run_in(&pe_dir(), &["/compare", "app.spd", "trace.spt"]);
    assert_eq!(o.status.code(), Some(1));
    let out = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(
        out.contains("to set a trace beside it: sptdump /compare TRACE app.spd"),
        "{out}"
    );
}

#[test]
fn with_the_lbr_ranges_read_the_hottest_functions_are_ranked_by_them() {
    let pe = pe_dir();
    let (pdb, image) = (
        format!("/pdb:{}", pe.join("lbr.pdb").display()),
        format!("/image:{}", pe.join("lbr.exe").display()),
    );
    let lbr = pe.join("lbr.spt").display().to_string();
    // The functions the ranges ran, as /dyninst gives them, each up to the next.
    let o = run_in(&pe, &["/json", "/dyninst", &pdb, &image, &lbr]);
    let mut ran: Vec<(u32, String)> = json_lines(&o)
        .iter()
        .filter(|l| l["type"] == "dyninst")
        .map(|l| {
            let rva = u32::try_from(l["rva"].as_u64().unwrap()).unwrap();
            (rva, l["function"].as_str().unwrap().to_owned())
        })
        .collect();
    ran.sort();
    assert!(ran.len() >= 5, "{ran:?}");
    let mut spd = SpdBuilder::new("lbr.exe", "F37798E3-E1C8-0BD6-4C4C-44205044422E", 1);
    spd.functions = (0..ran.len())
        .map(|i| {
            let (rva, name) = &ran[i];
            let size = ran.get(i + 1).map_or(0x40, |next| next.0 - rva);
            let block = SpdBlock::new(0, 3, &[(0, size)], &[]);
            SpdFunction::new(name, *rva, size, vec![block])
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "lbr.spd", &spd);
    let n = ran.len();
    let by_ranges = verdicts(dir.path(), &["/match:lbr.spd", &pdb, &image, &lbr]);
    let found = stale(&by_ranges);
    assert_eq!(
        found.len(),
        1,
        "one verdict, ranked by the ranges: {by_ranges:?}"
    );
    let want = format!("no counts for {n} of the {n} hottest functions by LBR ranges");
    assert!(found[0].2.contains(&want), "{by_ranges:?}");
    // Without the image the ranges are not read: ranked by IP samples.
    let by_ip = verdicts(dir.path(), &["/match:lbr.spd", &pdb, &lbr]);
    let found = stale(&by_ip);
    assert_eq!(found.len(), 1, "{by_ip:?}");
    assert!(
        found[0].2.contains("hottest functions by IP samples"),
        "{by_ip:?}"
    );
}

#[test]
fn the_records_are_named_by_the_spd_too_and_a_verdict_alone_attaches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app.spd", &renamed(APP));
    let o = run_in(dir.path(), &["/event", "/match:app.spd", &trace()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("0x00001000(?hash_bytes@@YAIPEBE_K@Z+0x0) 0x00001075(spd_parse_token+0x5)"),
        "{text}"
    );
    assert!(
        stderr(&o).contains("named from the SPD app.spd"),
        "{}",
        stderr(&o)
    );
    // /match alone prints verdicts, which name no address: no note.
    let o = run_in(dir.path(), &["/match:app.spd", &trace()]);
    assert!(!stderr(&o).contains("named from the SPD"), "{}", stderr(&o));
}

/// `app.exe`'s SPD with every function `by` bytes further on than app.exe's PDB places it:
/// the same build by GUID and age, but not the same link.
fn displaced(by: u32) -> SpdBuilder {
    let mut spd = SpdBuilder::new("app.exe", APP, 1);
    for f in spd.functions.iter_mut().filter(|f| f.size > 0) {
        f.rva += by;
    }
    spd
}

fn disagree(verdicts: &[(String, Value, String)]) -> Vec<&(String, Value, String)> {
    verdicts
        .iter()
        .filter(|v| v.0 == "spd-pdb-disagree")
        .collect()
}

#[test]
fn check_warns_when_the_spd_and_the_pdb_of_one_build_place_functions_apart() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "moved.spd", &displaced(0x2000));
    let pdb = format!("/pdb:{}", pe_dir().join("app.pdb").display());
    let v = verdicts(dir.path(), &["/match:moved.spd", &pdb, &trace()]);
    let found = disagree(&v);
    assert_eq!(found.len(), 1, "{v:?}");
    assert_eq!(found[0].1, Value::from(0));
    let message = &found[0].2;
    // Examples, the hottest first: the trace samples hash_bytes (0x1000) most.
    assert!(message.starts_with("moved.spd and the PDB "), "{message}");
    assert!(
        message.contains(
            ": hash_bytes at 0x00003000 in the SPD, 0x00001000 in the PDB; parse_token at \
             0x00003070 in the SPD, 0x00001070 in the PDB;"
        ),
        "{message}"
    );
    // A warning: the exit status stays 0; the text names the code.
    let o = run_in(dir.path(), &["/check", "/match:moved.spd", &pdb, &trace()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .contains("warning[spd-pdb-disagree] progid 0: moved.spd")
    );
    // Names come from the PDB, not the SPD that disagrees with it.
    let o = run_in(
        dir.path(),
        &["/json", "/functions", "/match:moved.spd", &pdb, &trace()],
    );
    let lines = json_lines(&o);
    assert_eq!(keys(&lines)[0].1[0], "app.exe!hash_bytes", "{lines:?}");
    // An SPD that places each function where the PDB does draws no such verdict.
    write(dir.path(), "same.spd", &displaced(0));
    let v = verdicts(dir.path(), &["/match:same.spd", &pdb, &trace()]);
    assert!(disagree(&v).is_empty(), "{v:?}");
    // Without a PDB there is nothing to compare with.
    let v = verdicts(dir.path(), &["/match:moved.spd", &trace()]);
    assert!(disagree(&v).is_empty(), "{v:?}");
}
