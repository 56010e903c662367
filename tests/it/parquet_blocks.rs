//! `/parquet:DIR`'s blocks and edges (section 13, "Blocks"): read back with the parquet
//! crate's reader, they are what `/cfg` and `/compare TRACE SPD` show of the same trace, the
//! flow conserves at every block, the SPD's rows carry the SPD's own counts, and the overlap
//! the rows give is `/compare`'s `flow_overlap`. The image's graph is the bundled lbr.exe's,
//! recorded by emulation; the SPD's traces are LBR records drawn at random over the SPD's
//! code, as the flow's tests on the SPD draw them (not an execution).

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::record::Field;
use serde_json::Value;
use sptdump::image::spd::{self, table::FunctionTable};
use sptdump::image::spdprofile::SpdProfile;
use sptdump_testkit::fixtures::{self, APP_GUID};
use sptdump_testkit::golden::up_to_date;
use sptdump_testkit::spd::SpdBuilder;
use sptdump_testkit::{onspd, recording};

use crate::support::{crate_root, json_lines, run_in, stderr};

/// A row: its columns by name, nulls as `None`.
type Row = BTreeMap<String, Option<Field>>;

/// Every row of `table`'s files under `dir`, in file and row order, nulls as `None`.
fn rows(dir: &Path, table: &str) -> Vec<Row> {
    let rows = super::parquet::rows(dir, table).into_iter();
    let row = |r: BTreeMap<String, Field>| {
        let fields = r.into_iter();
        fields.map(|(name, f)| (name, (f != Field::Null).then_some(f)))
    };
    rows.map(|r| row(r).collect()).collect()
}

fn text(row: &Row, column: &str) -> Option<String> {
    match &row[column] {
        Some(Field::Str(s)) => Some(s.clone()),
        None => None,
        other => panic!("{column} is not a string: {other:?}"),
    }
}

fn uint(row: &Row, column: &str) -> Option<u32> {
    match &row[column] {
        Some(Field::UInt(v)) => Some(*v),
        None => None,
        other => panic!("{column} is not an unsigned int: {other:?}"),
    }
}

/// A `decimal(38,0)` column, exactly.
fn count(row: &Row, column: &str) -> Option<u128> {
    match &row[column] {
        Some(Field::Decimal(d)) => {
            assert_eq!((d.precision(), d.scale()), (38, 0), "{column}");
            let bytes: [u8; 16] = d.data().try_into().unwrap();
            Some(u128::try_from(i128::from_be_bytes(bytes)).unwrap())
        }
        None => None,
        other => panic!("{column} is not a decimal: {other:?}"),
    }
}

/// A JSON count, or null.
fn json_count(v: &Value) -> Option<u128> {
    v.as_u64().map(u128::from)
}

/// A block's figures as `/cfg` and the table both give them: (instructions, rva, observed,
/// flow).
type BlockFigures = (u32, Option<u32>, Option<u128>, Option<u128>);
/// An edge's: (from, to, kind, observed, flow).
type EdgeFigures = (Option<u32>, Option<u32>, String, Option<u128>, Option<u128>);

/// The rows of each function (by its RVA, or by its hash on the SPD's graph): its blocks by
/// id, and its edges in order.
#[derive(Default, Debug, PartialEq)]
struct Function {
    blocks: BTreeMap<u32, BlockFigures>,
    edges: Vec<EdgeFigures>,
}

fn key(hash: Option<String>, rva: u32) -> String {
    hash.unwrap_or_else(|| format!("{rva:08X}"))
}

fn from_tables(dir: &Path, graph: &str) -> BTreeMap<String, Function> {
    let mut functions: BTreeMap<String, Function> = BTreeMap::new();
    for r in rows(dir, "blocks")
        .iter()
        .filter(|r| text(r, "graph").unwrap() == graph)
    {
        let f = key(text(r, "hash"), uint(r, "function_rva").unwrap());
        let figures = (
            uint(r, "instructions").unwrap(),
            uint(r, "block_rva"),
            count(r, "observed"),
            count(r, "flow"),
        );
        let block = uint(r, "block").unwrap();
        assert!(
            functions
                .entry(f)
                .or_default()
                .blocks
                .insert(block, figures)
                .is_none()
        );
    }
    for r in rows(dir, "edges")
        .iter()
        .filter(|r| text(r, "graph").unwrap() == graph)
    {
        let f = key(text(r, "hash"), uint(r, "function_rva").unwrap());
        functions.entry(f).or_default().edges.push((
            uint(r, "from_block"),
            uint(r, "to_block"),
            text(r, "kind").unwrap(),
            count(r, "observed"),
            count(r, "flow"),
        ));
    }
    functions
}

fn from_cfg(lines: &[Value]) -> BTreeMap<String, Function> {
    let mut functions: BTreeMap<String, Function> = BTreeMap::new();
    let graph = lines
        .iter()
        .filter(|l| matches!(l["type"].as_str(), Some("cfg_block" | "cfg_edge")));
    for l in graph {
        let f = key(
            l["hash"].as_str().map(str::to_owned),
            l["function_rva"].as_u64().unwrap() as u32,
        );
        let uint = |v: &Value| v.as_u64().map(|n| n as u32);
        match l["type"].as_str() {
            Some("cfg_block") => {
                let figures = (
                    uint(&l["instructions"]).unwrap(),
                    uint(&l["rva"]),
                    json_count(&l["observed"]),
                    json_count(&l["flow"]),
                );
                let block = uint(&l["id"]).unwrap();
                functions
                    .entry(f)
                    .or_default()
                    .blocks
                    .insert(block, figures);
            }
            Some("cfg_edge") => functions.entry(f).or_default().edges.push((
                uint(&l["from"]),
                uint(&l["to"]),
                l["kind"].as_str().unwrap().to_owned(),
                json_count(&l["observed"]),
                json_count(&l["flow"]),
            )),
            _ => {}
        }
    }
    functions
}

/// Every block's flow is the sum of its incoming edges' and of its outgoing edges'.
fn assert_conserves(functions: &BTreeMap<String, Function>) {
    for (name, f) in functions {
        for (&id, &(_, _, _, flow)) in &f.blocks {
            let flow = flow.expect("every function here has a flow");
            let sum = |pick: fn(&EdgeFigures) -> Option<u32>| -> u128 {
                let at = f.edges.iter().filter(|e| pick(e) == Some(id));
                at.map(|e| e.4.unwrap()).sum()
            };
            assert_eq!(sum(|e| e.1), flow, "{name}: into block {id}");
            assert_eq!(sum(|e| e.0), flow, "{name}: out of block {id}");
        }
    }
}

/// On the image's graph, the rows are `/cfg`'s: every function `/cfg` shows, block for
/// block and edge for edge; the others ran only by the flow their callers sent (nothing
/// seen of them). The flow conserves at every block of every function.
#[test]
fn the_image_graphs_rows_are_what_cfg_shows() {
    let dir = tempfile::tempdir().unwrap();
    let out = format!("/parquet:{}", dir.path().display());
    let code = ["/image:lbr.exe", "/pdb:lbr.pdb"];
    let written = run_in(&fixtures::dir(), &[&out, code[0], code[1], "lbr.spt"]);
    assert!(written.status.success(), "{}", stderr(&written));
    let tables = from_tables(dir.path(), "image");
    let cfg = run_in(
        &fixtures::dir(),
        &["/cfg", "/top:1000", "/json", code[0], code[1], "lbr.spt"],
    );
    let shown = from_cfg(&json_lines(&cfg));
    assert!(shown.len() >= 5, "{shown:?}");
    for (name, f) in &tables {
        match shown.get(name) {
            Some(g) => assert_eq!(f, g, "{name}"),
            None => {
                let seen = f.blocks.values().any(|b| b.2.is_some());
                assert!(!seen && f.edges.iter().all(|e| e.3.is_none()), "{name}");
            }
        }
    }
    assert!(shown.keys().all(|k| tables.contains_key(k)));
    assert_conserves(&tables);
    // Every row is of lbr.exe's identity, of no SPD.
    for r in rows(dir.path(), "blocks") {
        assert_eq!(text(&r, "binary").as_deref(), Some("lbr.exe"));
        assert_eq!(text(&r, "trace").as_deref(), Some("lbr.spt"));
        assert_eq!((text(&r, "hash"), count(&r, "spd_count")), (None, None));
    }
}

/// `spd`'s profile, read as sptdump reads it.
fn profile_of(spd: &Path) -> (spd::Header, SpdProfile) {
    let mut file = File::open(spd).unwrap();
    let len = file.metadata().unwrap().len();
    let header = spd::read_header(&mut file, len).unwrap();
    let table = FunctionTable::read(&mut file, &header).unwrap();
    (header, SpdProfile::from_table(&table))
}

/// Writes a trace of `records` LBR records drawn over `spd`'s code to `dir/NAME`.
fn trace_over(spd: &Path, records: usize, seed: u64, dir: &Path, name: &str) -> PathBuf {
    let (header, profile) = profile_of(spd);
    let path = dir.join(name);
    std::fs::write(&path, onspd::trace(&header, &profile, records, seed)).unwrap();
    path
}

/// Section 17's overlap on the rows: each emitted block's share of the flow's weight (count
/// times instructions) beside its share of the SPD's.
fn overlap(rows: &[Row]) -> f64 {
    let emitted = rows.iter().filter(|r| uint(r, "function_rva") != Some(0));
    let weights: Vec<(u128, u128)> = emitted
        .map(|r| {
            let n = u128::from(uint(r, "instructions").unwrap());
            let flow = count(r, "flow").unwrap();
            (flow * n, count(r, "spd_count").unwrap() * n)
        })
        .collect();
    let (p, q): (u128, u128) = weights.iter().fold((0, 0), |(a, b), w| (a + w.0, b + w.1));
    let shares = weights.iter().map(|&(x, y)| {
        let (x, y) = (x as f64 / p as f64, y as f64 / q as f64);
        x.min(y)
    });
    shares.sum()
}

/// On the SPD's graph, with the SPD matched: the rows of every function `/compare TRACE SPD`
/// shows with `/cfg` are its lines; every block's `spd_count` is the SPD's; every function
/// the SPD counts has rows, those the trace never reached with no observation and no flow;
/// the flow conserves; and the overlap of the rows is `/compare`'s `flow_overlap`.
#[test]
fn the_spd_graphs_rows_are_what_compare_shows() {
    let spd = crate_root().join("testdata/pe/app.spd");
    let dir = tempfile::tempdir().unwrap();
    // The records are drawn over the code of all of it but main_entry, which no function
    // calls: the SPD counts it, and the trace neither sees it nor sends it flow.
    let mut drawn = SpdBuilder::new("app.exe", APP_GUID, 1);
    let main = drawn.functions.iter_mut().find(|f| f.name == "main_entry");
    main.unwrap().blocks.iter_mut().for_each(|b| b.count = 0);
    let drawn_spd = dir.path().join("drawn.spd");
    std::fs::write(&drawn_spd, drawn.build()).unwrap();
    let trace = trace_over(&drawn_spd, 1_000, 7, dir.path(), "over.spt");
    let out = dir.path().join("tables");
    let (trace, spd_arg) = (trace.display().to_string(), spd.display().to_string());
    let written = run_in(
        dir.path(),
        &[
            &format!("/parquet:{}", out.display()),
            &format!("/match:{spd_arg}"),
            &trace,
        ],
    );
    assert!(written.status.success(), "{}", stderr(&written));
    let compared = run_in(
        dir.path(),
        &["/compare", "/json", "/cfg", "/top:100000", &trace, &spd_arg],
    );
    let lines = json_lines(&compared);
    let tables = from_tables(&out, "spd");
    let shown = from_cfg(&lines);
    assert!(!shown.is_empty());
    for (hash, g) in &shown {
        assert_eq!(tables.get(hash), Some(g), "{hash}");
    }
    assert_conserves(&tables);

    // The SPD's own counts, and every function it counts.
    let (_, profile) = profile_of(&spd);
    let blocks = rows(&out, "blocks");
    let edges = rows(&out, "edges");
    let mut unreached = Vec::new();
    for (f, function) in profile.functions.iter().enumerate() {
        let hash = format!("{:016X}", function.hash);
        let mine: Vec<&Row> = blocks
            .iter()
            .filter(|r| text(r, "hash").as_deref() == Some(&hash))
            .collect();
        if !function.counted && !shown.contains_key(&hash) {
            continue;
        }
        let nodes = &profile.graphs.nodes()[profile.graphs.of_function(f)];
        let counts: Vec<(u32, Option<u128>)> = nodes
            .iter()
            .map(|n| (n.id, Some(u128::from(n.count))))
            .collect();
        let theirs: Vec<(u32, Option<u128>)> = mine
            .iter()
            .map(|r| (uint(r, "block").unwrap(), count(r, "spd_count")))
            .collect();
        assert_eq!(theirs, counts, "{}", function.name);
        if !shown.contains_key(&hash) {
            assert!(mine.iter().all(|r| count(r, "observed").is_none()));
            assert!(mine.iter().all(|r| count(r, "flow") == Some(0)));
            unreached.push(function.name.as_str());
        }
    }
    assert_eq!(unreached, ["main_entry"]);
    // And no other function: one the SPD does not count and the trace never ran has no row.
    let counted = profile.functions.iter().filter(|f| f.counted);
    let mut expected: Vec<String> = counted.map(|f| format!("{:016X}", f.hash)).collect();
    expected.extend(shown.keys().cloned());
    expected.sort();
    expected.dedup();
    let mut hashes: Vec<String> = blocks.iter().filter_map(|r| text(r, "hash")).collect();
    hashes.sort();
    hashes.dedup();
    assert!(
        profile.functions.iter().any(|f| !f.counted && f.emitted()),
        "spin_pause"
    );
    assert_eq!(hashes, expected);
    // An edge the SPD stores carries its count; an entry or an exit has none.
    for r in &edges {
        let stored = text(r, "kind").as_deref() == Some("edge");
        assert_eq!(count(r, "spd_count").is_some(), stored, "{r:?}");
    }

    let summary = lines.iter().find(|l| l["type"] == "spd_blocks").unwrap();
    let expected = summary["flow_overlap"].as_f64().unwrap();
    let got = overlap(&blocks);
    assert!((got - expected).abs() < 1e-6, "{got} against {expected}");
}

/// A binary's name from a trace is data: an SPD and its trace for a binary named like a
/// path write their rows under the name given, and every file stays in the directory named,
/// called after the trace's file.
#[test]
fn a_binary_named_like_a_path_stays_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = "../../escaped\u{1b}[31m.exe";
    let spd = dir.path().join("hostile.spd");
    std::fs::write(&spd, SpdBuilder::new(hostile, APP_GUID, 1).build()).unwrap();
    let trace = trace_over(&spd, 200, 3, dir.path(), "run.spt");
    let out = dir.path().join("out").join("tables");
    let written = run_in(
        dir.path(),
        &[
            &format!("/parquet:{}", out.display()),
            &format!("/match:{}", spd.display()),
            &trace.display().to_string(),
        ],
    );
    assert!(written.status.success(), "{}", stderr(&written));
    let blocks = rows(&out, "blocks");
    assert!(!blocks.is_empty());
    assert!(
        blocks
            .iter()
            .all(|r| text(r, "binary").as_deref() == Some(hostile))
    );
    let mut files: Vec<String> = walk(&dir.path().join("out"));
    files.sort();
    let tables = ["arcs", "blocks", "edges", "samples", "stacks"];
    let expected: Vec<String> = tables
        .iter()
        .map(|t| format!("tables/{t}/run.parquet"))
        .collect();
    assert_eq!(files, expected);
    let beside: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(beside.len(), 3, "{beside:?}");
}

/// The files under `dir`, as paths relative to it.
fn walk(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(dir).unwrap();
                found.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found
}

/// A trace without a graph (no image, no SPD) writes no blocks or edges.
#[test]
fn without_a_graph_there_are_no_block_tables() {
    let dir = tempfile::tempdir().unwrap();
    let out = format!("/parquet:{}", dir.path().display());
    let written = run_in(&fixtures::dir(), &[&out, "lbr.spt"]);
    assert!(written.status.success(), "{}", stderr(&written));
    for table in ["blocks", "edges"] {
        assert!(!dir.path().join(table).exists(), "{table}");
    }
    assert!(dir.path().join("samples/lbr.parquet").exists());
}

/// `testdata/pe/lbr.spd`, an SPD of lbr.exe as a training run would give it: each function
/// that lbr.spt's records saw, placed where lbr.pdb places it, its blocks the image's
/// (section 14, as `/cfg` shows them), each block's count and each successor's the flow
/// sptdump infers from lbr.spt. A stand-in for what SPDConvert makes of a trace (its method
/// is not published), built from an execution and the PDB's addresses; the fleet's queries
/// set other runs of lbr.exe beside it. Each block's range runs on over the padding after
/// it, so that the ranges tile the code; every exit leads to one last block without code,
/// the function's exit, as an SPD has one; no call sites are stored.
fn lbr_spd() -> Vec<u8> {
    let cfg = run_in(
        &fixtures::dir(),
        &[
            "/cfg",
            "/top:all",
            "/json",
            "/image:lbr.exe",
            "/pdb:lbr.pdb",
            "lbr.spt",
        ],
    );
    assert!(cfg.status.success(), "{}", stderr(&cfg));
    let lines = json_lines(&cfg);
    let mut by_rva: BTreeMap<u64, (String, Vec<&Value>, Vec<&Value>)> = BTreeMap::new();
    for l in &lines {
        let kind = l["type"].as_str();
        if !matches!(kind, Some("cfg_block" | "cfg_edge")) {
            continue;
        }
        let rva = l["function_rva"].as_u64().unwrap();
        let name = l["function"].as_str().unwrap().to_owned();
        let f = by_rva.entry(rva).or_insert((name, Vec::new(), Vec::new()));
        match kind {
            Some("cfg_block") => f.1.push(l),
            _ => f.2.push(l),
        }
    }
    let (guid, age) = {
        let (bytes, age) = fixtures::codeview("lbr");
        (sptdump_testkit::builder::Guid(bytes).to_string(), age)
    };
    let mut spd = SpdBuilder::new("lbr.exe", &guid, age);
    spd.functions = by_rva
        .into_iter()
        .map(|(rva, (name, blocks, edges))| {
            let rva = rva as u32;
            let (placed, size) = fixtures::placed("lbr", "lbr", &name);
            assert_eq!(placed, rva, "{name}");
            // The SPD's ranges tile the function's code: the padding the image's blocks
            // leave out goes to the block before it.
            let starts: Vec<u32> = blocks
                .iter()
                .map(|b| b["rva"].as_u64().unwrap() as u32)
                .collect();
            let blocks = blocks.iter().enumerate().map(|(i, b)| {
                let id = b["id"].as_u64().unwrap();
                // An exit leads to the block after the last, which holds no code.
                let exit = starts.len() as u32 + 1;
                let successors: Vec<(u32, u64)> = edges
                    .iter()
                    .filter(|e| e["from"].as_u64() == Some(id))
                    .map(|e| {
                        let to = e["to"].as_u64().map_or(exit, |to| to as u32);
                        (to, e["flow"].as_u64().unwrap())
                    })
                    .collect();
                let start = starts[i];
                let end = starts.get(i + 1).copied().unwrap_or(rva + size);
                sptdump_testkit::spd::SpdBlock::new(
                    b["flow"].as_u64().unwrap(),
                    b["instructions"].as_u64().unwrap() as u32,
                    &[(start - rva, end - start)],
                    &successors,
                )
            });
            let exits = edges.iter().filter(|e| e["to"].is_null());
            let left: u64 = exits.map(|e| e["flow"].as_u64().unwrap()).sum();
            let mut blocks: Vec<_> = blocks.collect();
            blocks.push(sptdump_testkit::spd::SpdBlock::new(left, 0, &[], &[]));
            sptdump_testkit::spd::SpdFunction::new(&name, rva, size, blocks)
        })
        .collect();
    spd.build()
}

/// How the generated files of this module are made again.
const BLESS: &str = "SPTDUMP_BLESS=1 cargo test --test it parquet_blocks::";

#[test]
fn lbr_spd_is_up_to_date() {
    up_to_date(&fixtures::dir().join("lbr.spd"), &lbr_spd(), BLESS);
}

/// The fleet's traces are those of their recordings.
#[test]
fn the_fleets_traces_are_up_to_date() {
    for name in recording::FLEET {
        let path = fixtures::dir().join("fleet").join(format!("{name}.spt"));
        up_to_date(&path, &recording::fleet_trace(name), BLESS);
    }
}

/// On the image's graph, a function no record saw but whose callers' call sites ran has rows
/// too, with the flow they send it: five records (written here, not recorded) each see a
/// return into `main_entry`'s loop and the loop's jump back, and nothing of `step`, which the
/// loop calls, nor of `classify` and `sum_table`, which `step` calls.
#[test]
fn a_function_only_its_callers_ran_has_rows() {
    let record = vec![(0x12F1, 0x12E0), (0x10A7, 0x12EC)];
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("calls.spt");
    let built = sptdump_testkit::walk::trace("lbr", "lbr.exe", &vec![record; 5], false);
    std::fs::write(&trace, built).unwrap();
    let out = dir.path().join("tables");
    let code = ["/image:lbr.exe", "/pdb:lbr.pdb"];
    let written = run_in(
        &fixtures::dir(),
        &[
            &format!("/parquet:{}", out.display()),
            code[0],
            code[1],
            &trace.display().to_string(),
        ],
    );
    assert!(written.status.success(), "{}", stderr(&written));
    let tables = from_tables(&out, "image");
    let rows = rows(&out, "blocks");
    let mut names: Vec<String> = rows.iter().filter_map(|r| text(r, "function")).collect();
    names.sort();
    names.dedup();
    assert_eq!(names, ["classify", "main_entry", "step", "sum_table"]);
    for name in ["classify", "step", "sum_table"] {
        let rva = rows
            .iter()
            .find(|r| text(r, "function").as_deref() == Some(name));
        let f = &tables[&key(None, uint(rva.unwrap(), "function_rva").unwrap())];
        assert!(
            f.blocks.values().all(|b| b.2.is_none()),
            "{name}: nothing saw it"
        );
        let entry = f.edges.iter().find(|e| e.2 == "entry").unwrap();
        assert!(entry.4.unwrap() > 0, "{name}: its callers send it flow");
    }
    assert_conserves(&tables);
}
