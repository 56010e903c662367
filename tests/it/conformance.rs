//! The conformance suite, run by `cargo test` on every clone: `testdata/conformance` holds the
//! cases (`cases.json`: arguments, exit status, the JSON Lines expected) and their vectors.
//! They are this project's own; the shared suite beside the repository holds the same files,
//! and when it is there a test holds the copy equal to it. CI also runs the shared suite's own
//! checker on the release binary.
//!
//! A case passes as the checker judges it: the exit status is the one expected; standard
//! output is JSON Lines; `diagnostic` lines compare as a multiset of (severity, code, offset),
//! each with a message; the other lines compare in order, a line allowed keys the expected
//! line lacks (keys are only ever added).

use std::path::Path;

use serde_json::Value;
use sptdump_testkit::shared;

/// One case of `cases.json`.
struct Case {
    name: String,
    args: Vec<String>,
    exit: i32,
    diags: bool,
    expect: Vec<Value>,
}

fn cases() -> Vec<Case> {
    let path = shared::conformance().join("cases.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let cases: Vec<Value> = serde_json::from_str(&text).unwrap();
    cases
        .into_iter()
        .map(|c| Case {
            name: c["name"].as_str().unwrap().to_owned(),
            args: c["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_owned())
                .collect(),
            exit: c["exit"].as_i64().unwrap() as i32,
            diags: c["diags"].as_bool().unwrap(),
            expect: c["expect"].as_array().unwrap().clone(),
        })
        .collect()
}

/// The diagnostics of `lines` as sorted (severity, code, offset), and the other lines.
fn split(lines: &[Value]) -> (Vec<Value>, Vec<String>) {
    let mut diags: Vec<String> = lines
        .iter()
        .filter(|l| l["type"] == "diagnostic")
        .map(|d| format!("{} {} {}", d["severity"], d["code"], d["offset"]))
        .collect();
    diags.sort();
    let rest = lines
        .iter()
        .filter(|l| l["type"] != "diagnostic")
        .cloned()
        .collect();
    (rest, diags)
}

/// What differs between a run of `case` and its answer.
fn problems(case: &Case, dir: &Path) -> Vec<String> {
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("sptdump"))
        .args(&case.args)
        .current_dir(dir)
        .output()
        .unwrap();
    let mut problems = Vec::new();
    if o.status.code() != Some(case.exit) {
        problems.push(format!(
            "exit status {:?}, expected {}",
            o.status.code(),
            case.exit
        ));
    }
    let Ok(text) = String::from_utf8(o.stdout) else {
        return [problems, vec!["standard output is not UTF-8".into()]].concat();
    };
    let mut got = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(v) => got.push(v),
            Err(e) => return [problems, vec![format!("not JSON Lines: {e}: {line}")]].concat(),
        }
    }
    for line in &mut got {
        let message = line.as_object_mut().and_then(|o| o.remove("message"));
        if line["type"] == "diagnostic" && !message.is_some_and(|m| m != "") {
            problems.push(format!("a diagnostic without a message: {line}"));
        }
    }
    let (got, got_diags) = split(&got);
    let (expected, expected_diags) = split(&case.expect);
    if case.diags && got_diags != expected_diags {
        problems.push(format!(
            "diagnostics {got_diags:?}, expected {expected_diags:?}"
        ));
    }
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        // Keys added since the answer was written are allowed.
        let kept: serde_json::Map<String, Value> = g
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| e.get(k.as_str()).is_some())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if Value::Object(kept.clone()) != *e {
            problems.push(format!(
                "line {} (diagnostics aside): got {}, expected {e}",
                i + 1,
                Value::Object(kept)
            ));
            break;
        }
    }
    if got.len() != expected.len() {
        problems.push(format!(
            "{} lines (diagnostics aside), expected {}",
            got.len(),
            expected.len()
        ));
    }
    problems
}

#[test]
fn the_conformance_vectors_pass() {
    let dir = shared::conformance_vectors();
    let cases = cases();
    assert!(cases.len() >= 90, "only {} cases", cases.len());
    let failed: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let problems = problems(case, &dir);
            (!problems.is_empty())
                .then(|| format!("{}:\n    {}", case.name, problems.join("\n    ")))
        })
        .collect();
    assert!(
        failed.is_empty(),
        "{} failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

#[test]
fn the_checker_sees_a_wrong_exit_a_wrong_line_and_a_missing_diagnostic() {
    let dir = shared::conformance_vectors();
    let case = cases()
        .into_iter()
        .find(|c| c.name == "minimal /json")
        .unwrap();
    assert_eq!(problems(&case, &dir), Vec::<String>::new());
    let wrong_exit = Case { exit: 1, ..case };
    assert_eq!(problems(&wrong_exit, &dir).len(), 1);
    let mut wrong_line = Case {
        exit: 0,
        ..wrong_exit
    };
    wrong_line.expect[1]["version"] = Value::from(2);
    assert!(problems(&wrong_line, &dir)[0].starts_with("line 2 "));
    let mut diagnosed = cases()
        .into_iter()
        .find(|c| c.expect.iter().any(|l| l["type"] == "diagnostic"))
        .unwrap();
    assert_eq!(
        problems(&diagnosed, &dir),
        Vec::<String>::new(),
        "{}",
        diagnosed.name
    );
    diagnosed.expect.retain(|l| l["type"] != "diagnostic");
    assert!(problems(&diagnosed, &dir)[0].starts_with("diagnostics "));
}

#[test]
fn the_repository_s_suite_is_the_shared_suite_s() {
    let Some(shared) = shared::folder(
        "the_repository_s_suite_is_the_shared_suite_s",
        "conformance",
    ) else {
        return;
    };
    let ours = shared::conformance();
    let mut names = vec!["cases.json".to_owned()];
    for entry in std::fs::read_dir(shared.join("vectors")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        names.push(format!("vectors/{name}"));
    }
    let copied = std::fs::read_dir(ours.join("vectors")).unwrap().count();
    assert_eq!(
        copied + 1,
        names.len(),
        "the same files in both vectors folders"
    );
    for name in names {
        let theirs = std::fs::read(shared.join(&name)).unwrap();
        let mine = std::fs::read(ours.join(&name))
            .unwrap_or_else(|e| panic!("testdata/conformance/{name}: {e}"));
        assert!(
            theirs == mine,
            "testdata/conformance/{name} differs from the shared suite's: copy it again"
        );
    }
}
