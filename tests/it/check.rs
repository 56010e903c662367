//! `/check`: is a trace fit for SPDConvert? Each verdict on a trace made to call for it, on
//! the real PE/PDB fixtures where the verdict needs a build (`/match`, `/pdb`).

use std::path::Path;

use serde_json::Value;
use sptdump_testkit::builder::{RETIRE_INSTR, SptBuilder};
use sptdump_testkit::fixtures;

use crate::support::run_in;

/// The JSON lines of `/json /check ARGS`, and the exit status.
fn check(dir: &Path, args: &[&str]) -> (Vec<Value>, i32) {
    let mut all = vec!["/json", "/check"];
    all.extend(args);
    let o = run_in(dir, &all);
    let lines = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (lines, o.status.code().unwrap())
}

/// The (severity, code, progid) of each check line.
fn verdicts(lines: &[Value]) -> Vec<(String, String, Value)> {
    lines
        .iter()
        .filter(|l| l["type"] == "check")
        .map(|l| {
            (
                l["severity"].as_str().unwrap().to_owned(),
                l["code"].as_str().unwrap().to_owned(),
                l["progid"].clone(),
            )
        })
        .collect()
}

fn v(severity: &str, code: &str, progid: Value) -> (String, String, Value) {
    (severity.to_owned(), code.to_owned(), progid)
}

fn built(dir: &tempfile::TempDir, name: &str, b: &SptBuilder) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, b.build()).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn a_few_lbr_records_beside_ip_samples_call_for_ip_mode() {
    // profile.spt: one LBR record (2 branches) per binary beside 1,224 IP samples.
    let (lines, status) = check(&fixtures::dir(), &["profile.spt"]);
    assert_eq!(status, 0);
    assert_eq!(verdicts(&lines), [v("note", "lbr-sparse", Value::Null)]);
    let sparse = lines.iter().find(|l| l["code"] == "lbr-sparse").unwrap();
    let message = sparse["message"].as_str().unwrap();
    assert!(
        message.starts_with("LBR: 4 branches in 2 LBR samples: too few")
            && message.contains("use SPDConvert /mode:IP"),
        "{message}"
    );
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "check_summary", "the closing line is last");
    assert_eq!(
        (&last["mode"], &last["errors"]),
        (&Value::from("IP"), &Value::from(0))
    );
    let app = &lines[1];
    assert_eq!(app["type"], "check_binary");
    assert_eq!(app["lbr"], true);
    assert_eq!(app["hits"]["ETW_CALLSTACK"], 1120);
}

/// The mode at each side of the threshold: LBR_ENOUGH - 1 LBR samples beside IP samples call
/// for /mode:IP, LBR_ENOUGH for /mode:LBR; LBR samples alone for /mode:LBR however few.
#[test]
fn the_lbr_mode_needs_enough_lbr_samples() {
    let enough = sptdump::analysis::check::LBR_ENOUGH;
    let dir = tempfile::tempdir().unwrap();
    let trace = |lbr: u64, ip: bool| {
        let mut b = SptBuilder::new();
        let name = b.string("app.exe");
        b.program_id(sptdump_testkit::builder::Guid([1; 16]), 1, name);
        b.binary_id(0);
        if ip {
            b.ip(RETIRE_INSTR, &[0x1000, 0x1010]);
        }
        for i in 0..lbr {
            b.lbr(&[(0x1000 + i as u32 % 64, 0x2000)]);
        }
        built(&dir, &format!("lbr-{lbr}-{ip}.spt"), &b)
    };
    let thin = "though fewer than 1000 samples make a thin profile";
    for (lbr, ip, code, mode, says) in [
        (
            enough - 1,
            true,
            "lbr-sparse",
            "IP",
            "too few beside 2 IP samples",
        ),
        (
            enough,
            true,
            "lbr-present",
            "LBR",
            "1000 branches in 1000 LBR samples: use",
        ),
        (
            enough,
            false,
            "lbr-present",
            "LBR",
            "1000 LBR samples: use SPDConvert /mode:LBR",
        ),
        (3, false, "lbr-present", "LBR", thin),
        (0, true, "no-lbr", "IP", "no LBR records"),
    ] {
        let (lines, _) = check(Path::new("."), &[&trace(lbr, ip)]);
        assert_eq!(
            verdicts(&lines),
            [v("note", code, Value::Null)],
            "{lbr} LBR records, IP samples: {ip}"
        );
        assert_eq!(lines.last().unwrap()["mode"], mode, "{lbr} {ip}");
        let message = lines.iter().find(|l| l["code"] == code).unwrap()["message"]
            .as_str()
            .unwrap();
        assert!(message.contains(says), "{lbr} {ip}: {message}");
        assert_eq!(
            message.contains(thin),
            says == thin,
            "{lbr} {ip}: {message}"
        );
    }
}

/// SPTAggregate folds identical LBR records into one with a REPEAT: 5,000 samples stored as
/// one record are 5,000 samples, enough for /mode:LBR.
#[test]
fn lbr_samples_count_each_repeat_of_a_record() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = SptBuilder::new();
    let name = b.string("app.exe");
    b.program_id(sptdump_testkit::builder::Guid([1; 16]), 1, name);
    b.binary_id(0);
    for _ in 0..1000 {
        b.ip(RETIRE_INSTR, &[0x1000, 0x1010]);
    }
    let pairs: Vec<(u32, u32)> = (0..16).map(|i| (0x1000 + i, 0x2000 + i)).collect();
    b.repeat(4999).lbr(&pairs);
    let trace = built(&dir, "folded.spt", &b);
    let (lines, status) = check(Path::new("."), &[&trace]);
    assert_eq!(status, 0);
    assert_eq!(verdicts(&lines), [v("note", "lbr-present", Value::Null)]);
    let message = lines.iter().find(|l| l["code"] == "lbr-present").unwrap()["message"]
        .as_str()
        .unwrap();
    assert_eq!(
        message,
        "80000 branches in 5000 LBR samples (1 record as stored, with their REPEATs): use \
         SPDConvert /mode:LBR"
    );
    assert_eq!(lines.last().unwrap()["mode"], "LBR");
}

#[test]
fn a_binary_left_out_and_sparse_samples() {
    let (lines, status) = check(
        &fixtures::dir(),
        &["/match:app.exe,core.dll", "/pdb:app.pdb", "app-only.spt"],
    );
    assert_eq!(status, 1, "binary-without-samples is an error");
    assert_eq!(
        verdicts(&lines),
        [
            v("error", "binary-without-samples", Value::from(1)),
            v("warning", "sparse", Value::from(0)),
            v("note", "no-lbr", Value::Null),
        ]
    );
    let last = lines.last().unwrap();
    assert_eq!(
        (&last["mode"], &last["errors"], &last["warnings"]),
        (&Value::from("IP"), &Value::from(1), &Value::from(1))
    );
    let sparse = lines.iter().find(|l| l["code"] == "sparse").unwrap();
    assert!(
        sparse["message"]
            .as_str()
            .unwrap()
            .contains("1 IP hit over 148 bytes"),
        "{sparse}"
    );
    // Without /pdb there is no density to judge.
    let (lines, _) = check(&fixtures::dir(), &["app-only.spt"]);
    assert!(!verdicts(&lines).iter().any(|v| v.1 == "sparse"));
}

/// `sparse` is fewer IP hits than one per 100 bytes of the sampled functions' code, and the
/// advice scales with how far below: one hit at each of app.exe's five functions (355 bytes)
/// is dense enough; one at each of its two largest (241 bytes) is not, by a factor of 2.
#[test]
fn density_is_hits_per_100_bytes_of_the_sampled_functions() {
    let dir = tempfile::tempdir().unwrap();
    let (guid, age) = fixtures::codeview("app");
    let pdb = format!("/pdb:{}", fixtures::dir().join("app.pdb").display());
    let sparse = |functions: &[&str]| {
        let mut b = SptBuilder::new();
        let name = b.string("app.exe");
        b.program_id(sptdump_testkit::builder::Guid(guid), age, name);
        let rvas: Vec<u32> = functions
            .iter()
            .map(|f| fixtures::function("app", f).rva)
            .collect();
        b.binary_id(0).ip(RETIRE_INSTR, &rvas);
        let trace = built(&dir, &format!("{}.spt", functions.len()), &b);
        let (lines, _) = check(Path::new("."), &[&pdb, &trace]);
        lines
            .iter()
            .find(|l| l["code"] == "sparse")
            .map(|l| l["message"].as_str().unwrap().to_owned())
    };
    let all = [
        "hash_bytes",
        "mix_round",
        "parse_token",
        "compute_checksum",
        "main_entry",
    ];
    assert_eq!(sparse(&all), None, "5 hits over 355 bytes");
    assert_eq!(
        sparse(&["parse_token", "compute_checksum"]).as_deref(),
        Some(
            "app.exe: 2 IP hits over 241 bytes of code in 2 sampled functions, fewer than 1 \
             per 100 bytes; sample about 2 times longer"
        )
    );
}

#[test]
fn another_build_is_not_in_the_trace() {
    let (lines, status) = check(&fixtures::dir(), &["/match:v2/core.dll", "trace.spt"]);
    assert_eq!(status, 1);
    assert_eq!(
        verdicts(&lines),
        [
            v("error", "binary-not-in-trace", Value::from(1)),
            v("note", "no-lbr", Value::Null),
        ]
    );
}

#[test]
fn no_samples_and_kernel_images() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = SptBuilder::new();
    b.binary("ntoskrnl.exe", "42AC0098-ADB5-E796-8C0E-161D2814780E", 1);
    b.binary(
        "C:\\drivers\\tcpip.sys",
        "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0",
        1,
    );
    b.binary_id(0);
    let empty = built(&dir, "empty.spt", &b);
    let (lines, status) = check(Path::new("."), &[&empty]);
    assert_eq!(status, 1);
    assert_eq!(
        verdicts(&lines),
        [
            v("error", "no-samples", Value::Null),
            v("note", "kernel-image", Value::from(0)),
            v("note", "kernel-image", Value::from(1)),
        ]
    );
    // No mode: SPDConvert can make nothing of it.
    assert_eq!(lines.last().unwrap()["mode"], Value::Null);
    let o = run_in(Path::new("."), &["/check", &empty]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.ends_with(": no SPDConvert mode: the trace is not usable (1 error, 0 warnings)\n"),
        "{text}"
    );
}

#[test]
fn format_errors_count_in_the_closing_line_and_the_status() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = SptBuilder::new();
    b.binary("app.exe", "42AC0098-ADB5-E796-8C0E-161D2814780E", 1);
    b.binary_id_with_length(0, 40).ip(RETIRE_INSTR, &[0x1000]);
    let broken = built(&dir, "broken.spt", &b);
    let (lines, status) = check(Path::new("."), &[&broken]);
    assert_eq!(status, 1);
    assert!(lines.iter().any(|l| l["type"] == "diagnostic"));
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "check_summary");
    assert_eq!(last["errors"], 1, "the segment-length error: {last}");
    assert!(verdicts(&lines).iter().all(|v| v.0 != "error"));
}

#[test]
fn text_ends_with_the_mode_to_use() {
    let o = run_in(&fixtures::dir(), &["/check", "trace.spt"]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("Check of trace.spt for SPDConvert\n"), "{out}");
    assert!(
        out.contains("  progid 0 (app.exe): 1 sample record, no LBR\n"),
        "{out}"
    );
    assert!(out.contains("  note[no-lbr]: no LBR records"), "{out}");
    assert!(
        out.ends_with("trace.spt: use SPDConvert /mode:IP (0 errors, 0 warnings)\n"),
        "{out}"
    );
}

/// A flame graph of call stacks needs none of the summary's tables, which are let go before
/// the stacks are folded, unless `/check` reads them after: its report is the same beside it.
#[test]
fn the_check_is_the_same_beside_a_flame_graph_of_call_stacks() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("f.svg");
    let trace = fixtures::dir().join("profile.spt");
    let trace = trace.to_str().unwrap();
    let alone = run_in(dir.path(), &["/check", trace]);
    let beside = run_in(
        dir.path(),
        &["/check", &format!("/flamegraph:{}", svg.display()), trace],
    );
    assert_eq!(alone.status.code(), beside.status.code());
    assert!(String::from_utf8_lossy(&alone.stdout).contains("ETW_CALLSTACK  10 records"));
    assert_eq!(
        String::from_utf8_lossy(&alone.stdout),
        String::from_utf8_lossy(&beside.stdout)
    );
    assert!(std::fs::read_to_string(&svg).unwrap().contains("app.exe"));
}
