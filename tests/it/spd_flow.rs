//! The flow on the SPD's own graph (`/compare TRACE SPD`, section 18): on the bundled SPD
//! and every shared real one, beside LBR records drawn over its code (a random draw, not an
//! execution), every block of every function shown conserves exactly, blocks without code
//! are never observed, and what `/cfg` shows of a block is what `/blocks` shows of it;
//! `flow_overlap` is section 17's overlap recomputed from the flow's counts.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;
use sptdump::image::spd::{self, table::FunctionTable};
use sptdump::image::spdprofile::SpdProfile;
use sptdump_testkit::{onspd, shared};

use crate::support::crate_root;

/// A trace of `records` LBR records drawn over `spd`'s code, of its binary.
fn trace_over(spd: &Path, records: usize) -> Vec<u8> {
    let mut file = File::open(spd).unwrap();
    let len = file.metadata().unwrap().len();
    let header = spd::read_header(&mut file, len).unwrap();
    let table = FunctionTable::read(&mut file, &header).unwrap();
    onspd::trace(&header, &SpdProfile::from_table(&table), records, 7)
}

/// `sptdump /compare /json ARGS TRACE SPD`'s lines.
fn compare(trace: &[u8], spd: &Path, args: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("over.spt");
    std::fs::write(&path, trace).unwrap();
    let out = Command::cargo_bin("sptdump")
        .unwrap()
        .arg("/compare")
        .arg("/json")
        .args(args)
        .arg(&path)
        .arg(spd)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn n(v: &Value) -> u128 {
    v.as_u64().map(u128::from).unwrap_or_else(|| panic!("{v}"))
}

/// Each function's `cfg_block` and `cfg_edge` lines, by hash.
type Graphs<'a> = BTreeMap<String, (Vec<&'a Value>, Vec<&'a Value>)>;

fn graphs(lines: &[Value]) -> Graphs<'_> {
    let mut graphs: Graphs<'_> = BTreeMap::new();
    for l in lines {
        let kind = l["type"].as_str().unwrap_or("");
        if kind == "cfg_block" || kind == "cfg_edge" {
            assert_eq!(l["graph"], "spd", "{l}");
            let g = graphs
                .entry(l["hash"].as_str().unwrap().to_owned())
                .or_default();
            match kind {
                "cfg_block" => g.0.push(l),
                _ => g.1.push(l),
            }
        }
    }
    graphs
}

/// Every block's flow is the sum of its incoming edges' (the entry's among them) and of its
/// outgoing edges' (the exit's among them); a block without code is never observed.
fn assert_conserves(hash: &str, blocks: &[&Value], edges: &[&Value]) {
    let mut into: BTreeMap<u64, u128> = BTreeMap::new();
    let mut out: BTreeMap<u64, u128> = BTreeMap::new();
    for e in edges {
        let flow = n(&e["flow"]);
        if let Some(to) = e["to"].as_u64() {
            *into.entry(to).or_default() += flow;
        }
        if let Some(from) = e["from"].as_u64() {
            *out.entry(from).or_default() += flow;
        }
        let kind = e["kind"].as_str().unwrap();
        assert!(["entry", "edge", "exit"].contains(&kind), "{e}");
    }
    for b in blocks {
        let (id, flow) = (b["id"].as_u64().unwrap(), n(&b["flow"]));
        let into = into.get(&id).copied().unwrap_or(0);
        let out = out.get(&id).copied().unwrap_or(0);
        assert_eq!((into, out), (flow, flow), "{hash} block {id}: {b}");
        if b["rva"].is_null() {
            assert!(b["observed"].is_null(), "{b}");
        }
    }
}

/// The bundled SPD: every function's graph conserves; each block with code shows in `/cfg`
/// what `/blocks` shows of it (observed = the trace's count, flow = `flow_count`); and
/// `flow_overlap` is the overlap of the flow's weights with the SPD's.
#[test]
fn the_flow_on_the_bundled_spds_graph_conserves_and_agrees_with_blocks() {
    let spd = crate_root().join("testdata/pe/app.spd");
    let trace = trace_over(&spd, 3_000);
    let names = [
        "parse_token",
        "compute_checksum",
        "hash_bytes",
        "mix_round",
        "main_entry",
    ];
    let mut args = vec!["/cfg".to_owned(), "/top:0".to_owned()];
    args.extend(names.iter().map(|f| format!("/blocks:{f}")));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let lines = compare(&trace, &spd, &args);
    let graphs = graphs(&lines);
    assert_eq!(graphs.len(), names.len(), "{graphs:?}");
    let mut rows: BTreeMap<(String, u64), &Value> = BTreeMap::new();
    for r in lines.iter().filter(|l| l["type"] == "spd_block_compare") {
        let key = (
            r["hash"].as_str().unwrap().to_owned(),
            r["id"].as_u64().unwrap(),
        );
        rows.insert(key, r);
    }
    // Flow and SPD weights per block with code, for the overlap.
    let (mut flow, mut theirs) = (Vec::new(), Vec::new());
    for (hash, (blocks, edges)) in &graphs {
        assert_conserves(hash, blocks, edges);
        for b in blocks.iter().filter(|b| !b["rva"].is_null()) {
            let row = rows[&(hash.clone(), b["id"].as_u64().unwrap())];
            let count = n(&row["trace_count"]);
            match &b["observed"] {
                Value::Null => assert_eq!(count, 0, "{b} {row}"),
                seen => assert_eq!(n(seen), count, "{b} {row}"),
            }
            assert_eq!(b["flow"], row["flow_count"], "{b} {row}");
            let instructions = n(&b["instructions"]);
            flow.push(n(&b["flow"]) * instructions);
            theirs.push(n(&row["spd_count"]) * instructions);
        }
    }
    let total = |w: &[u128]| w.iter().sum::<u128>() as f64;
    let (ft, st) = (total(&flow), total(&theirs));
    let overlap: f64 = (flow.iter().zip(&theirs))
        .map(|(&p, &q)| (p as f64 / ft).min(q as f64 / st))
        .sum();
    let summary = lines.iter().find(|l| l["type"] == "spd_blocks").unwrap();
    let said = summary["flow_overlap"].as_f64().unwrap();
    assert!((said - overlap).abs() < 1e-9, "{said} vs {overlap}");
    assert!(summary["flow_ran_cold"].is_u64() && summary["flow_cold_ran"].is_u64());
}

/// Every shared real SPD beside LBR records drawn over its code: every block of every
/// function with an observation conserves under the flow, and blocks without code (which
/// every profiled real SPD has) carry flow where the graph sends it through them.
#[test]
fn the_flow_on_every_shared_spds_graph_conserves() {
    let Some(dir) = shared::spd_files("the_flow_on_every_shared_spds_graph_conserves") else {
        return;
    };
    let mut spds: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "spd"))
        .collect();
    spds.sort();
    let (mut functions, mut codeless) = (0, 0);
    for spd in &spds {
        let trace = trace_over(spd, 2_000);
        let lines = compare(&trace, spd, &["/cfg", "/top:100000"]);
        let graphs = graphs(&lines);
        for (hash, (blocks, edges)) in &graphs {
            assert_conserves(hash, blocks, edges);
            let without_code = blocks.iter().filter(|b| b["rva"].is_null());
            codeless += without_code.filter(|b| n(&b["flow"]) > 0).count();
        }
        functions += graphs.len();
    }
    assert!(spds.is_empty() || functions > 0, "no function was shown");
    assert!(
        spds.is_empty() || codeless > 0,
        "no block without code carries flow"
    );
}

/// The HTML report with a `/match` SPD gives the flow's overlap `/compare TRACE SPD` gives.
#[test]
fn the_report_gives_the_flows_overlap_with_the_spd() {
    let spd = crate_root().join("testdata/pe/app.spd");
    let trace = trace_over(&spd, 1_000);
    let lines = compare(&trace, &spd, &[]);
    let blocks = lines.iter().find(|l| l["type"] == "spd_blocks").unwrap();
    let overlap = format!("{:.2}%", blocks["flow_overlap"].as_f64().unwrap() * 100.0);
    let dir = tempfile::tempdir().unwrap();
    let (path, page) = (dir.path().join("over.spt"), dir.path().join("r.html"));
    std::fs::write(&path, &trace).unwrap();
    let out = Command::cargo_bin("sptdump")
        .unwrap()
        .arg(format!("/html:{}", page.display()))
        .arg(format!("/match:{}", spd.display()))
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(page).unwrap();
    let said =
        format!("By the flow inferred on the SPD's graph from these ranges: overlap {overlap};");
    assert!(html.contains(&said), "{said}");
}

/// `/cfg` with a `/match` SPD and no image shows the SPD's graphs as `/compare TRACE SPD`
/// does: the same lines, the same counts.
#[test]
fn cfg_with_a_matched_spd_shows_what_compare_shows() {
    let spd = crate_root().join("testdata/pe/app.spd");
    let trace = trace_over(&spd, 1_000);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("over.spt");
    std::fs::write(&path, &trace).unwrap();
    let cfg_lines = |args: Vec<String>| -> Vec<Value> {
        let out = Command::cargo_bin("sptdump")
            .unwrap()
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let lines = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap());
        lines
            .filter(|l| l["type"] == "cfg_block" || l["type"] == "cfg_edge")
            .collect()
    };
    let (trace, spd) = (path.display().to_string(), spd.display().to_string());
    let matched = cfg_lines(vec![
        "/json".into(),
        "/cfg".into(),
        format!("/match:{spd}"),
        trace.clone(),
    ]);
    let compared = cfg_lines(vec![
        "/json".into(),
        "/cfg".into(),
        "/compare".into(),
        trace,
        spd,
    ]);
    assert!(!matched.is_empty());
    assert_eq!(matched, compared);
}
