//! `/pdb`: addresses named by function, on the real clang/lld fixtures in `testdata/pe/`.
//!
//! The functions and their RVAs come from what `llvm-pdbutil` printed of `app.pdb`
//! (`testdata/pe/app.pdbutil.txt`), and the trace's identities from what `llvm-readobj`
//! printed of the images, so neither side of a check comes from the code under test.

use std::path::PathBuf;
use std::sync::OnceLock;

use assert_cmd::Command;
use serde_json::{Value, json};
use sptdump_testkit::builder::{Guid, RETIRE_INSTR, SptBuilder, UNHALT_CYCLE};
use sptdump_testkit::fixtures;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A procedure of `app.pdb` as llvm-pdbutil shows it, with its size.
#[derive(Debug, Clone)]
struct Function {
    name: String,
    rva: u32,
    size: u32,
}

/// The procedures of `app.pdb` (`S_GPROC32`/`S_LPROC32`, which have sizes), by RVA.
fn procedures() -> Vec<Function> {
    let out: Vec<Function> = fixtures::functions("app")
        .into_iter()
        .filter_map(|f| {
            Some(Function {
                size: f.size?,
                name: f.name,
                rva: f.rva,
            })
        })
        .collect();
    assert!(out.len() >= 5, "{out:?}");
    out
}

fn function(name: &str) -> Function {
    procedures().into_iter().find(|f| f.name == name).unwrap()
}

/// The 16 GUID bytes and age llvm-readobj printed for an image's CodeView record.
fn codeview(image: &str) -> ([u8; 16], u32) {
    fixtures::codeview(image)
}

/// The RVAs the trace samples, each with the name text must give it.
fn probes() -> Vec<(u32, Option<String>)> {
    let mut probes = Vec::new();
    for f in procedures() {
        probes.push((f.rva, Some(format!("{}+0x0", f.name))));
        probes.push((
            f.rva + f.size - 1,
            Some(format!("{}+0x{:X}", f.name, f.size - 1)),
        ));
    }
    // Between mix_round's end and parse_token's start: padding, in no function.
    let gap = function("mix_round");
    let next = function("parse_token");
    assert!(gap.rva + gap.size < next.rva);
    probes.push((gap.rva + gap.size, None));
    // Before the first section, and in the data section.
    probes.push((0x10, None));
    probes.push((0x2010, None));
    probes
}

fn trace() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let mut b = SptBuilder::new();
        let (guid, age) = codeview("app");
        let name = b.string("app.exe");
        let app = b.program_id(Guid(guid), age, name);
        let rvas: Vec<u32> = probes().iter().map(|p| p.0).collect();
        let parse = function("parse_token");
        let hash = function("hash_bytes");
        let main = function("main_entry");
        let sum = function("compute_checksum");
        b.binary_id(app)
            .ip(RETIRE_INSTR, &rvas)
            .repeat(2)
            .ip(UNHALT_CYCLE, &[parse.rva + 5, parse.rva + 5, 0x10])
            .lbr(&[
                (parse.rva + 5, hash.rva),
                (hash.rva + 3, hash.rva + 9),
                (0x10, hash.rva),
            ])
            .callstack(&[main.rva + 4, sum.rva + 0x20, parse.rva + 1]);
        let dir = root().join("target/symbol-inputs");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("app-probes.spt");
        fixtures::write_shared(&path, &b.build());
        path
    })
    .clone()
}

fn sptdump(args: &[&str]) -> (String, String, i32) {
    let out = Command::cargo_bin("sptdump")
        .unwrap()
        .current_dir(root().join("testdata/pe"))
        .args(args)
        .arg(trace())
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap(),
    )
}

fn json_lines(args: &[&str]) -> Vec<Value> {
    let mut all = vec!["/json"];
    all.extend(args);
    let (out, err, status) = sptdump(&all);
    assert_eq!(status, 0, "{err}");
    out.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn known_rvas_resolve_to_their_functions_and_gaps_stay_bare() {
    let lines = json_lines(&["/event", "/pdb:app.pdb"]);
    let ip = lines.iter().find(|l| l["event"] == "RETIRE_INSTR").unwrap();
    let expected: Vec<Value> = probes()
        .into_iter()
        .map(|(_, name)| name.map_or(Value::Null, Value::from))
        .collect();
    assert_eq!(ip["symbols"], Value::from(expected));
    assert_eq!(
        ip["rvas"].as_array().unwrap().len(),
        ip["symbols"].as_array().unwrap().len()
    );
}

#[test]
fn branches_and_frames_get_parallel_symbols() {
    let lines = json_lines(&["/event", "/pdb:app.pdb"]);
    let lbr = lines.iter().find(|l| l["type"] == "lbr").unwrap();
    assert_eq!(
        lbr["symbols"],
        json!([
            {"from": "parse_token+0x5", "to": "hash_bytes+0x0"},
            {"from": "hash_bytes+0x3", "to": "hash_bytes+0x9"},
            {"from": null, "to": "hash_bytes+0x0"}
        ])
    );
    let stack = lines.iter().find(|l| l["type"] == "callstack").unwrap();
    assert_eq!(
        stack["symbols"],
        json!(["main_entry+0x4", "compute_checksum+0x20", "parse_token+0x1"])
    );
}

#[test]
fn without_pdb_there_are_no_symbols() {
    let lines = json_lines(&["/event"]);
    assert!(lines.iter().all(|l| l.get("symbols").is_none()));
}

#[test]
fn text_names_each_address_beside_it() {
    let (out, _, status) = sptdump(&["/event", "/pdb:app.pdb"]);
    assert_eq!(status, 0);
    let parse = function("parse_token");
    let hash = function("hash_bytes");
    // Each with the source line llvm-symbolizer reads there.
    let at = |rva: u32| {
        let (_, file, line) = sptdump_testkit::fixtures::symbolized("app", rva).remove(0);
        format!("{}:{}", file.unwrap(), line.unwrap())
    };
    assert!(
        out.contains(&format!(
            "0x{:08X}(parse_token+0x5 {})->0x{:08X}(hash_bytes+0x0 {}) ",
            parse.rva + 5,
            at(parse.rva + 5),
            hash.rva,
            at(hash.rva)
        )),
        "{out}"
    );
    // An address in no function is shown bare.
    assert!(out.contains(" 0x00000010->"), "{out}");
    // A call stack's frames, joined by arrows, none before the first nor after the last.
    let stack = out
        .lines()
        .find(|l| l.contains("ETW_CALLSTACK"))
        .expect("the call stack's line");
    let frames = stack.split("hits 1  ").nth(1).expect("its frames");
    let names: Vec<&str> = frames
        .split("->")
        .map(|f| f.split(['(', ' ']).nth(1).unwrap_or(f))
        .collect();
    assert_eq!(
        names,
        ["main_entry+0x4", "compute_checksum+0x20", "parse_token+0x1"],
        "{stack}"
    );
}

#[test]
fn a_pdb_of_another_build_is_refused() {
    for pdb in ["/pdb:v2/core.pdb", "/pdb:core.pdb"] {
        let (out, err, status) = sptdump(&["/json", "/event", pdb]);
        assert_eq!(status, 1, "{pdb}");
        assert!(err.contains("matches no program ID"), "{err}");
        assert!(err.contains("symbols would be wrong"), "{err}");
        assert!(!out.contains("\"symbols\""), "{out}");
    }
}

#[test]
fn an_image_is_not_a_pdb() {
    let (_, err, status) = sptdump(&["/event", "/pdb:app.exe"]);
    assert_eq!(status, 1);
    assert!(
        err.contains("/pdb:app.exe") && err.contains("not a PDB"),
        "{err}"
    );
}

#[test]
fn function_tables_add_up_to_the_rva_tables() {
    let lines = json_lines(&["/summary", "/top:100", "/pdb:app.pdb"]);
    let summary = lines.iter().find(|l| l["type"] == "summary").unwrap();
    let n = |v: &Value| v.as_u64().unwrap();
    for ip in summary["ip"].as_array().unwrap() {
        let f = &ip["functions"];
        let listed: u64 = f["top"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| n(&t["samples"]))
            .sum();
        assert_eq!(listed + n(&f["unresolved"]), n(&ip["samples"]), "{ip}");
    }
    for (table, total) in [("lbr", "branches"), ("callstack", "arcs")] {
        let t = &summary[table];
        let f = &t["function_arcs"];
        let listed: u64 = f["top"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| n(&t["hits"]))
            .sum();
        assert_eq!(listed + n(&f["unresolved"]), n(&t[total]), "{t}");
    }
    // The UNHALT_CYCLE record counted parse_token+5 twice with hits 3, and 0x10 (in no
    // function) once.
    let unhalt = summary["ip"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["event"] == "UNHALT_CYCLE")
        .unwrap();
    assert_eq!(
        unhalt["functions"],
        json!({"unique": 1, "unresolved": 3,
               "top": [{"function": "parse_token", "rva": function("parse_token").rva, "hits": 6, "samples": 6}]})
    );
    assert_eq!(
        summary["lbr"]["function_arcs"]["top"],
        json!([{"from": "hash_bytes", "to": "hash_bytes", "hits": 1},
               {"from": "parse_token", "to": "hash_bytes", "hits": 1}])
    );
    assert_eq!(
        summary["callstack"]["function_arcs"]["top"],
        json!([{"from": "compute_checksum", "to": "parse_token", "hits": 1},
               {"from": "main_entry", "to": "compute_checksum", "hits": 1}])
    );
}

/// A caller's frame is a return address, looked up a byte back, at its call. One
/// just past a function's last byte is that function's; one at a function's first byte is
/// the function before it (here the padding before it: no function, the address as stored).
/// The leaf is where the sample was taken, looked up where it points. In either stored order.
#[test]
fn return_addresses_are_looked_up_a_byte_back_at_either_end_of_a_function() {
    let mix = function("mix_round");
    let parse = function("parse_token");
    assert!(mix.rva + mix.size < parse.rva, "padding between them");
    let (guid, age) = codeview("app");
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, frames: &[u32]| {
        let mut b = SptBuilder::new();
        let s = b.string("app.exe");
        let app = b.program_id(Guid(guid), age, s);
        b.binary_id(app).callstack(frames);
        let path = dir.path().join(name);
        std::fs::write(&path, b.build()).unwrap();
        path
    };
    let leaf_first = [parse.rva, mix.rva + mix.size, parse.rva];
    let root_first: Vec<u32> = leaf_first.iter().rev().copied().collect();
    let expected = format!(
        "app.exe+0x{:X};app.exe!mix_round;app.exe!parse_token 1\n",
        parse.rva
    );
    for (name, frames, order) in [
        ("leaf.spt", &leaf_first[..], "/stackorder:leaf-first"),
        ("root.spt", &root_first[..], "/stackorder:root-first"),
    ] {
        let path = write(name, frames);
        let o = Command::cargo_bin("sptdump")
            .unwrap()
            .current_dir(root().join("testdata/pe"))
            .args(["/folded", "/pdb:app.pdb", order])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(o.stdout).unwrap(), expected, "{order}");
    }
}
