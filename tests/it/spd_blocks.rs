//! A trace on an SPD's own blocks (`/compare TRACE SPD`, `/blocks:NAME`): traces sampled
//! over the code of a real SPD of the shared suite, their overlap with it worked out here
//! from what `spddump` prints of its blocks, by a plain reading that shares nothing with
//! the tool's map (every block of a function searched for each range).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;
use sptdump_testkit::builder::SptBuilder;
use sptdump_testkit::fixtures::APP_GUID as GUID;
use sptdump_testkit::shared;
use sptdump_testkit::spd::{SpdBlock, SpdBuilder};

use crate::support::{json_lines, run_in, status, stderr, stdout};

/// The profiled SPD the traces are sampled over.
const SPD: &str = "2025-04-10_EbpfCore_b29b5e08.spd";

/// A block with code: its id, count, instructions and code ranges `[start, end)` as RVAs.
type Block = (u32, u64, u32, Vec<(u32, u32)>);

/// One function of an SPD, as `spddump /symbol` prints it, and its blocks with code.
#[derive(Clone, Debug)]
struct Function {
    hash: String,
    name: String,
    rva: u32,
    size: u32,
    blocks: Vec<Block>,
}

/// What `spddump` prints of an SPD: its binary and its emitted functions.
struct Model {
    binary: String,
    guid: String,
    age: u32,
    functions: Vec<Function>,
}

fn spddump(args: &[&str]) -> Vec<Value> {
    let o = Command::cargo_bin("spddump")
        .unwrap()
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    json_lines(&o)
}

impl Model {
    fn read(spd: &Path) -> Model {
        let path = spd.to_str().unwrap();
        let lines = spddump(&["/json", "/header", "/symbol", "/fg", path]);
        let header = lines.iter().find(|l| l["type"] == "spd_header").unwrap();
        let mut functions: Vec<Function> = Vec::new();
        let mut by_hash = BTreeMap::new();
        for l in lines.iter().filter(|l| l["type"] == "spd_function") {
            let (rva, size) = (n(&l["rva"]) as u32, n(&l["size"]) as u32);
            if rva == 0 || size == 0 {
                continue;
            }
            by_hash.insert(l["hash"].as_str().unwrap().to_owned(), functions.len());
            functions.push(Function {
                hash: l["hash"].as_str().unwrap().to_owned(),
                name: l["name"].as_str().unwrap().to_owned(),
                rva,
                size,
                blocks: Vec::new(),
            });
        }
        for l in lines.iter().filter(|l| l["type"] == "spd_block") {
            let Some(&f) = by_hash.get(l["function"].as_str().unwrap()) else {
                continue;
            };
            let rva = functions[f].rva;
            let ranges: Vec<(u32, u32)> = (l["ranges"].as_array().unwrap().iter())
                .map(|r| {
                    let start = rva + n(&r[0]) as u32;
                    (start, start + n(&r[1]) as u32)
                })
                .collect();
            if !ranges.is_empty() {
                let b = (
                    n(&l["id"]) as u32,
                    n(&l["count"]),
                    n(&l["instructions"]) as u32,
                    ranges,
                );
                functions[f].blocks.push(b);
            }
        }
        Model {
            binary: header["binary"].as_str().unwrap().to_owned(),
            guid: header["guid"].as_str().unwrap().to_owned(),
            age: n(&header["age"]) as u32,
            functions,
        }
    }

    /// The function whose code holds `rva`.
    fn at(&self, rva: u32) -> Option<usize> {
        (self.functions.iter())
            .rposition(|f| f.rva <= rva && u64::from(rva) < u64::from(f.rva) + u64::from(f.size))
    }

    /// A function the profile holds cold (blocks with code, none counted), and an RVA in
    /// its first block.
    fn cold(&self) -> (usize, u32) {
        (0..self.functions.len())
            .find_map(|f| {
                let blocks = &self.functions[f].blocks;
                let rva = blocks.first()?.3[0].0;
                let cold = blocks.iter().all(|b| b.1 == 0);
                (cold && self.at(rva) == Some(f)).then_some((f, rva))
            })
            .expect("the SPD holds a cold function")
    }

    /// The functions the profile counts most, hottest first.
    fn hottest(&self) -> Vec<usize> {
        let mut all: Vec<usize> = (0..self.functions.len())
            .filter(|&f| self.functions[f].blocks.len() >= 3)
            .collect();
        all.sort_by_key(|&f| {
            std::cmp::Reverse(self.functions[f].blocks.iter().map(|b| b.1).sum::<u64>())
        });
        all
    }
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A small deterministic generator (a 64-bit LCG).
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u32) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % u64::from(n.max(1))) as u32
    }
}

/// What a trace puts on each block, and the figures the tool must print of it.
#[derive(Default)]
struct Expected {
    /// Trace count per (function, block id).
    counts: BTreeMap<(usize, u32), u128>,
    /// Whether the trace's side is IP samples (weight = samples), else LBR.
    ip: bool,
}

impl Expected {
    /// A consistent range [start, end] of `hits`.
    fn range(&mut self, model: &Model, start: u32, end: u32, hits: u128) {
        let f = model.at(start).unwrap();
        for (id, _, _, ranges) in &model.functions[f].blocks {
            if ranges.iter().any(|&(s, e)| s <= end && e > start) {
                *self.counts.entry((f, *id)).or_default() += hits;
            }
        }
    }

    /// An IP sample.
    fn ip(&mut self, model: &Model, rva: u32, hits: u128) {
        let f = model.at(rva).unwrap();
        for (id, _, _, ranges) in &model.functions[f].blocks {
            if ranges.iter().any(|&(s, e)| s <= rva && rva < e) {
                *self.counts.entry((f, *id)).or_default() += hits;
            }
        }
    }

    /// The overlap (none when the trace or the SPD counts nothing), and each function's
    /// figures, by hash.
    fn overlap(&self, model: &Model) -> (Option<f64>, BTreeMap<String, Shares>) {
        let mut trace = BTreeMap::new();
        let mut spd = BTreeMap::new();
        for (fi, function) in model.functions.iter().enumerate() {
            for (id, count, instructions, _) in &function.blocks {
                let c = self.counts.get(&(fi, *id)).copied().unwrap_or(0);
                let w = if self.ip {
                    c
                } else {
                    c * u128::from(*instructions)
                };
                trace.insert((fi, *id), w);
                spd.insert((fi, *id), u128::from(*count) * u128::from(*instructions));
            }
        }
        let (tt, st) = (
            trace.values().sum::<u128>() as f64,
            spd.values().sum::<u128>() as f64,
        );
        let share = |w: u128, total: f64| if total > 0.0 { w as f64 / total } else { 0.0 };
        let mut overlap = 0.0;
        let mut functions: BTreeMap<String, Shares> = BTreeMap::new();
        for (key, &w) in &trace {
            let (p, q) = (share(w, tt), share(spd[key], st));
            overlap += p.min(q);
            let shares = functions
                .entry(model.functions[key.0].hash.clone())
                .or_default();
            shares.loss += (p - q).abs() / 2.0;
            shares.trace += p;
            shares.spd += q;
            shares.blocks.push((p, q));
        }
        ((tt > 0.0 && st > 0.0).then_some(overlap), functions)
    }
}

/// One function's figures in the plain reading: its loss, its shares of the trace and of
/// the SPD, and its blocks' shares, from which the shape of its profile is compared.
#[derive(Default)]
struct Shares {
    loss: f64,
    trace: f64,
    spd: f64,
    blocks: Vec<(f64, f64)>,
}

impl Shares {
    /// The overlap of the function's two profiles, each scaled to 1; none when either is
    /// empty.
    fn shape(&self) -> Option<f64> {
        (self.trace > 0.0 && self.spd > 0.0).then(|| {
            self.blocks
                .iter()
                .map(|(p, q)| (p / self.trace).min(q / self.spd))
                .sum()
        })
    }
}

/// A chain of `pairs` branches in time over function `fi`'s code: each range between two
/// of them runs forward inside it. The branches oldest first, and the ranges they make.
fn chain(model: &Model, fi: usize, pairs: usize, rng: &mut Lcg) -> Vec<(u32, u32)> {
    let function = &model.functions[fi];
    let (lo, hi) = (function.rva, function.rva + function.size - 1);
    let mut branches = Vec::new();
    let mut to = lo + rng.below(function.size);
    branches.push((lo + rng.below(function.size), to));
    for _ in 1..pairs {
        let from = to + rng.below(hi - to + 1);
        to = lo + rng.below(function.size);
        branches.push((from, to));
    }
    branches
}

struct Trace {
    bytes: Vec<u8>,
    expected: Expected,
}

/// LBR records over the hottest functions, stored newest first unless `oldest_first`,
/// every third under a REPEAT; an IP sample or two besides.
fn lbr_trace(model: &Model, oldest_first: bool, seed: u64) -> Trace {
    let mut rng = Lcg(seed);
    let mut b = SptBuilder::new();
    let progid = b.binary(&model.binary, &model.guid, model.age);
    b.binary_id(progid);
    let mut expected = Expected::default();
    let hottest = model.hottest();
    for r in 0..600u32 {
        let fi = hottest[(rng.below(12) as usize) % hottest.len()];
        let oldest = chain(model, fi, 2 + rng.below(15) as usize, &mut rng);
        let hits: u128 = if r % 3 == 0 { 1 + u128::from(r % 7) } else { 1 };
        for w in oldest.windows(2) {
            expected.range(model, w[0].1, w[1].0, hits);
        }
        let stored: Vec<(u32, u32)> = match oldest_first {
            true => oldest,
            false => oldest.into_iter().rev().collect(),
        };
        if hits > 1 {
            b.repeat((hits - 1) as u64);
        }
        b.lbr(&stored);
    }
    b.ip(0x01, &[model.functions[hottest[0]].rva]);
    Trace {
        bytes: b.build(),
        expected,
    }
}

fn shared_spd(test: &str) -> Option<PathBuf> {
    Some(shared::spd_files(test)?.join(SPD))
}

fn compare(dir: &Path, trace: &[u8], spd: &Path, more: &[&str]) -> std::process::Output {
    std::fs::write(dir.join("t.spt"), trace).unwrap();
    let spd = spd.to_str().unwrap();
    let mut args = vec!["/json", "/compare", "/top:0", "t.spt", spd];
    args.extend_from_slice(more);
    run_in(dir, &args)
}

fn the(lines: &[Value], kind: &str) -> Value {
    let mut of = lines.iter().filter(|l| l["type"] == kind);
    let one = of.next().unwrap_or_else(|| panic!("no {kind} line"));
    assert!(of.next().is_none(), "two {kind} lines");
    one.clone()
}

/// The figures of `spd_blocks` and of each `spd_blocks_function` against the plain
/// reading's.
fn check_against(lines: &[Value], model: &Model, expected: &Expected) {
    let (overlap, functions) = expected.overlap(model);
    let blocks = the(lines, "spd_blocks");
    match overlap {
        Some(overlap) => assert!(
            (f(&blocks["overlap"]) - overlap).abs() < 1e-9,
            "{blocks} vs {overlap}"
        ),
        None => assert!(blocks["overlap"].is_null(), "{blocks}"),
    }
    let rows: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "spd_blocks_function")
        .collect();
    // Every function the trace or the SPD holds any share of has its row (`/top:0`).
    let shared = functions.values().filter(|s| s.trace > 0.0 || s.spd > 0.0);
    assert_eq!(rows.len(), shared.count());
    let mut sum = 0.0;
    for row in &rows {
        let hash = row["hash"].as_str().unwrap();
        let want = &functions[hash];
        assert!(
            (f(&row["loss"]) - want.loss).abs() < 1e-9,
            "{row}: {}",
            want.loss
        );
        assert!(
            (f(&row["trace_share"]) - want.trace).abs() < 1e-9,
            "{row}: {}",
            want.trace
        );
        assert!(
            (f(&row["spd_share"]) - want.spd).abs() < 1e-9,
            "{row}: {}",
            want.spd
        );
        match want.shape() {
            Some(shape) => assert!(
                (f(&row["shape_overlap"]) - shape).abs() < 1e-9,
                "{row}: {shape}"
            ),
            None => assert!(row["shape_overlap"].is_null(), "{row}"),
        }
        sum += f(&row["loss"]);
    }
    if let Some(overlap) = overlap {
        assert!(
            (sum - (1.0 - overlap)).abs() < 1e-9,
            "losses {sum}, overlap {overlap}"
        );
    }
    let by_loss: Vec<f64> = rows.iter().map(|r| f(&r["loss"])).collect();
    assert!(by_loss.windows(2).all(|w| w[0] >= w[1]), "{by_loss:?}");
    // The blocks the trace ran, those of them the SPD holds cold, and the SPD's counted
    // blocks the trace never ran; per function, its blocks ran cold.
    let (mut ran, mut ran_cold, mut cold_ran) = (0, 0, 0);
    let mut ran_cold_of: BTreeMap<&str, u64> = BTreeMap::new();
    for (fi, function) in model.functions.iter().enumerate() {
        for (id, count, instructions, _) in &function.blocks {
            let c = expected.counts.get(&(fi, *id)).copied().unwrap_or(0);
            let trace = if expected.ip {
                c
            } else {
                c * u128::from(*instructions)
            };
            let (r, counted) = (trace > 0, *count > 0);
            ran += u64::from(r);
            ran_cold += u64::from(r && !counted);
            cold_ran += u64::from(counted && !r);
            *ran_cold_of.entry(&function.hash).or_default() += u64::from(r && !counted);
        }
    }
    assert_eq!(
        (
            n(&blocks["ran"]),
            n(&blocks["ran_cold"]),
            n(&blocks["cold_ran"])
        ),
        (ran, ran_cold, cold_ran),
        "{blocks}"
    );
    for row in &rows {
        let hash = row["hash"].as_str().unwrap();
        assert_eq!(n(&row["ran_cold"]), ran_cold_of[hash], "{row}");
    }
}

#[test]
fn lbr_ranges_land_on_the_spds_blocks_in_either_order() {
    let Some(spd) = shared_spd("lbr_ranges_land_on_the_spds_blocks_in_either_order") else {
        return;
    };
    let model = Model::read(&spd);
    let dir = tempfile::tempdir().unwrap();
    for (oldest_first, order) in [(false, "newest-first"), (true, "oldest-first")] {
        let trace = lbr_trace(&model, oldest_first, 7);
        let o = compare(dir.path(), &trace.bytes, &spd, &[]);
        assert_eq!(status(&o), 0, "{}", stderr(&o));
        let lines = json_lines(&o);
        let blocks = the(&lines, "spd_blocks");
        assert_eq!(blocks["source"], "LBR", "{blocks}");
        assert_eq!(blocks["order"], order, "{blocks}");
        assert_eq!(blocks["outside"], 0, "{blocks}");
        assert_eq!(blocks["consistent"], blocks["ranges"], "{blocks}");
        check_against(&lines, &model, &trace.expected);
    }
}

/// IP samples only: each falls in the block whose code holds it.
#[test]
fn ip_samples_alone_land_in_the_block_that_holds_them() {
    let Some(spd) = shared_spd("ip_samples_alone_land_in_the_block_that_holds_them") else {
        return;
    };
    let model = Model::read(&spd);
    let mut rng = Lcg(11);
    let mut b = SptBuilder::new();
    let progid = b.binary(&model.binary, &model.guid, model.age);
    b.binary_id(progid);
    let mut expected = Expected {
        ip: true,
        ..Expected::default()
    };
    let hottest = model.hottest();
    for i in 0..400u32 {
        let function = &model.functions[hottest[(i % 9) as usize]];
        let rvas: Vec<u32> = (0..1 + rng.below(4))
            .map(|_| function.rva + rng.below(function.size))
            .collect();
        for &rva in &rvas {
            expected.ip(&model, rva, 1);
        }
        b.ip(0x01, &rvas);
    }
    // A sample in a function the SPD holds cold: a share of the trace, none of the SPD,
    // and no shape to compare.
    let (cold, rva) = model.cold();
    expected.ip(&model, rva, 1);
    b.ip(0x01, &[rva]);
    // Two samples outside every function: counted apart, not compared.
    b.ip(0x01, &[0x10, 0xFFFF_FFF0]);
    let dir = tempfile::tempdir().unwrap();
    let o = compare(dir.path(), &b.build(), &spd, &[]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    let blocks = the(&lines, "spd_blocks");
    assert_eq!(blocks["source"], "UNHALT_CYCLE", "{blocks}");
    assert_eq!(blocks["order"], Value::Null, "{blocks}");
    assert_eq!(blocks["outside"], 2, "{blocks}");
    assert_eq!(
        n(&blocks["ranges"]),
        n(&blocks["consistent"]) + 2,
        "{blocks}"
    );
    check_against(&lines, &model, &expected);
    let hash = model.functions[cold].hash.as_str();
    let row = (lines.iter())
        .find(|l| l["type"] == "spd_blocks_function" && l["hash"] == hash)
        .expect("the cold function's row");
    assert!(f(&row["trace_share"]) > 0.0, "{row}");
    assert_eq!(f(&row["spd_share"]), 0.0, "{row}");
    assert!(row["shape_overlap"].is_null(), "{row}");
    assert!(n(&row["ran_cold"]) >= 1, "{row}");
}

/// Pairs drawn at random over the binary fit neither order: the note says so with both
/// figures, and the IP samples are used.
#[test]
fn random_pairs_leave_the_order_unknown_and_the_ip_samples_are_used() {
    let Some(spd) = shared_spd("random_pairs_leave_the_order_unknown") else {
        return;
    };
    let model = Model::read(&spd);
    let mut rng = Lcg(3);
    let mut b = SptBuilder::new();
    let progid = b.binary(&model.binary, &model.guid, model.age);
    b.binary_id(progid);
    let anywhere = |rng: &mut Lcg| {
        let function = &model.functions[rng.below(model.functions.len() as u32) as usize];
        function.rva + rng.below(function.size)
    };
    for _ in 0..300 {
        let pairs: Vec<(u32, u32)> = (0..8)
            .map(|_| (anywhere(&mut rng), anywhere(&mut rng)))
            .collect();
        b.lbr(&pairs);
    }
    let hot = &model.functions[model.hottest()[0]];
    let mut expected = Expected {
        ip: true,
        ..Expected::default()
    };
    for i in 0..50 {
        let rva = hot.rva + (i * 7) % hot.size;
        expected.ip(&model, rva, 1);
        b.ip(0x01, &[rva]);
    }
    let dir = tempfile::tempdir().unwrap();
    let o = compare(dir.path(), &b.build(), &spd, &[]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    let blocks = the(&lines, "spd_blocks");
    assert_eq!(blocks["source"], "UNHALT_CYCLE", "{blocks}");
    assert_eq!(blocks["order"], Value::Null, "{blocks}");
    let note = lines
        .iter()
        .find(|l| {
            l["type"] == "note" && l["message"].as_str().unwrap().contains("lbr-order-unknown")
        })
        .expect("the note lbr-order-unknown");
    assert!(
        note["message"]
            .as_str()
            .unwrap()
            .contains("of 2100 LBR ranges"),
        "{note}"
    );
    check_against(&lines, &model, &expected);
}

/// LBR ranges with an end outside every function are counted apart; a range across two
/// functions is inconsistent, neither outside nor mapped.
#[test]
fn ranges_outside_every_function_are_counted_apart() {
    let Some(spd) = shared_spd("ranges_outside_every_function_are_counted_apart") else {
        return;
    };
    let model = Model::read(&spd);
    let hottest = model.hottest();
    let (a, c) = (&model.functions[hottest[0]], &model.functions[hottest[1]]);
    let mut b = SptBuilder::new();
    let progid = b.binary(&model.binary, &model.guid, model.age);
    b.binary_id(progid);
    let mut expected = Expected::default();
    // Newest first, the range is [older to, newer from]; oldest first, [a + 3, a + 2],
    // which runs backwards.
    for _ in 0..30 {
        b.lbr(&[(a.rva + 4, a.rva + 3), (a.rva + 2, a.rva + 1)]);
        expected.range(&model, a.rva + 1, a.rva + 4, 1);
    }
    b.lbr(&[(0x20, a.rva + 3), (a.rva + 2, 0x10)]);
    b.lbr(&[(c.rva + 1, a.rva + 3), (a.rva + 2, a.rva + 1)]);
    // A range that runs backwards to an end outside: [a + 5, 0x10], outside all the same.
    b.lbr(&[(0x10, a.rva + 1), (a.rva + 2, a.rva + 5)]);
    let dir = tempfile::tempdir().unwrap();
    let o = compare(dir.path(), &b.build(), &spd, &[]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    let blocks = the(&lines, "spd_blocks");
    assert_eq!(blocks["order"], "newest-first", "{blocks}");
    assert_eq!(
        (
            n(&blocks["ranges"]),
            n(&blocks["consistent"]),
            n(&blocks["outside"])
        ),
        (33, 30, 2),
        "{blocks}"
    );
    check_against(&lines, &model, &expected);
}

/// A trace none of whose samples lands on the SPD's code: no overlap, and every function
/// the SPD counts is shown with its share and nothing of the trace's.
#[test]
fn a_trace_with_nothing_on_the_spds_code_overlaps_nothing() {
    let Some(spd) = shared_spd("a_trace_with_nothing_on_the_spds_code_overlaps_nothing") else {
        return;
    };
    let model = Model::read(&spd);
    let mut b = SptBuilder::new();
    let progid = b.binary(&model.binary, &model.guid, model.age);
    b.binary_id(progid);
    b.ip(0x01, &[0x10, 0xFFFF_FFF0]);
    let dir = tempfile::tempdir().unwrap();
    let o = compare(dir.path(), &b.build(), &spd, &[]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    let blocks = the(&lines, "spd_blocks");
    assert_eq!(
        (n(&blocks["ran"]), n(&blocks["outside"])),
        (0, 2),
        "{blocks}"
    );
    assert!(blocks["overlap"].is_null(), "{blocks}");
    let expected = Expected {
        ip: true,
        ..Expected::default()
    };
    check_against(&lines, &model, &expected);
    let rows = lines.iter().filter(|l| l["type"] == "spd_blocks_function");
    let counted = (model.functions.iter())
        .filter(|f| f.blocks.iter().any(|b| b.1 > 0 && b.2 > 0))
        .count();
    assert!(counted > 0);
    assert_eq!(rows.count(), counted);
}

/// `/blocks:NAME`: every block with code of the function, in id order, both sides; a name
/// no function bears is an error that names the closest.
#[test]
fn blocks_names_a_functions_blocks_or_the_closest_names() {
    let Some(spd) = shared_spd("blocks_names_a_functions_blocks") else {
        return;
    };
    let model = Model::read(&spd);
    let trace = lbr_trace(&model, false, 5);
    let hot = &model.functions[model.hottest()[0]];
    let dir = tempfile::tempdir().unwrap();
    let by_name = format!("/blocks:{}", hot.name);
    let o = compare(dir.path(), &trace.bytes, &spd, &[&by_name]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let rows: Vec<Value> = json_lines(&o)
        .into_iter()
        .filter(|l| l["type"] == "spd_block_compare")
        .collect();
    let ids: Vec<u32> = rows.iter().map(|r| n(&r["id"]) as u32).collect();
    let want: Vec<u32> = hot.blocks.iter().map(|b| b.0).collect();
    assert_eq!(ids, want);
    let fi = model.at(hot.rva).unwrap();
    for (row, block) in rows.iter().zip(&hot.blocks) {
        assert_eq!(row["hash"], hot.hash.as_str());
        assert_eq!(n(&row["spd_count"]), block.1, "{row}");
        assert_eq!(n(&row["instructions"]) as u32, block.2, "{row}");
        let count = trace
            .expected
            .counts
            .get(&(fi, block.0))
            .copied()
            .unwrap_or(0);
        assert_eq!(u128::from(n(&row["trace_count"])), count, "{row}");
        let ranges: Vec<(u32, u32)> = (row["ranges"].as_array().unwrap().iter())
            .map(|r| (n(&r[0]) as u32, (n(&r[0]) + n(&r[1])) as u32))
            .collect();
        assert_eq!(ranges, block.3, "{row}");
    }
    // The same function by its hash, as text.
    std::fs::write(dir.path().join("t.spt"), &trace.bytes).unwrap();
    let by_hash = format!("/blocks:{}", hot.hash);
    let spd_path = spd.to_str().unwrap();
    let o = run_in(dir.path(), &["/compare", "t.spt", spd_path, &by_hash]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    let heading = format!("Blocks of {} (hash {}", hot.name, hot.hash);
    assert!(text.contains(&heading), "{text}");
    assert!(
        text.contains("blocks this trace ran that the SPD holds cold: "),
        "{text}"
    );
    // A near miss: exit 1, the closest names given.
    let near = format!("/blocks:{}x", hot.name);
    let o = run_in(dir.path(), &["/compare", "t.spt", spd_path, &near]);
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    let err = stderr(&o);
    // The option itself names the function too: the closest names are read past it.
    let (_, closest) = (err.split_once("bears this name or hash; the closest: "))
        .unwrap_or_else(|| panic!("{err}"));
    let first = closest.split([',', '\n']).next().unwrap();
    assert_eq!(first, hot.name, "{err}");
}

/// `/blocks` sets a trace beside an SPD: without `/compare TRACE SPD` it is refused, and
/// with two traces it is not made, with a note.
#[test]
fn blocks_goes_with_a_trace_beside_an_spd_only() {
    let o = crate::support::run(&["/blocks:main", "testdata/sample.spt"]);
    assert_eq!(status(&o), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("/blocks sets a trace beside an SPD's blocks"));
    let o = crate::support::run(&["/merge", "/blocks:main", "testdata/sample.spt"]);
    assert_eq!(status(&o), 2, "{}", stderr(&o));
    let two = [
        "/compare",
        "/blocks:main",
        "testdata/sample.spt",
        "testdata/sample.spt",
    ];
    let o = crate::support::run(&two);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("NEW is a trace: not made"),
        "{}",
        stderr(&o)
    );
}

/// An SPD whose function table fails a check is refused beside a trace that matches it:
/// exit 1, the check named, nothing of its blocks shown.
#[test]
fn a_damaged_spd_is_refused_beside_a_trace() {
    let spd = SpdBuilder::new("app.exe", GUID, 1);
    let at = spd.layout().records[0] + 0x34;
    let damaged = spd.patch_u32(at, 99);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.spd"), damaged.build()).unwrap();
    let mut b = SptBuilder::new();
    let progid = b.binary("app.exe", GUID, 1);
    b.binary_id(progid);
    b.lbr(&[(0x1010, 0x1000), (0x1004, 0x1002)]);
    std::fs::write(dir.path().join("t.spt"), b.build()).unwrap();
    let o = run_in(dir.path(), &["/json", "/compare", "t.spt", "app.spd"]);
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    let lines = json_lines(&o);
    assert!(lines.iter().all(|l| l["type"] != "spd_blocks"));
    let error = lines
        .iter()
        .find(|l| l["type"] == "error")
        .expect("an error line");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("block ids failed at"), "{message}");
}

/// A function record, for two SPDs compared: its hash, its checksum, and (emitted ones) its
/// blocks with code as (id, weight).
type Record = (String, u64, Vec<(u64, u128)>);

/// What `spddump` prints of an SPD's functions, for two SPDs compared.
fn records(spd: &Path) -> Vec<Record> {
    let lines = spddump(&["/json", "/func", "/fg", spd.to_str().unwrap()]);
    let mut functions: Vec<Record> = Vec::new();
    let mut emitted = BTreeMap::new();
    for l in lines.iter().filter(|l| l["type"] == "spd_function") {
        let hash = l["hash"].as_str().unwrap().to_owned();
        emitted.insert(hash.clone(), n(&l["rva"]) != 0 && n(&l["size"]) != 0);
        functions.push((hash, n(&l["checksum"]), Vec::new()));
    }
    let at: BTreeMap<String, usize> = (functions.iter().enumerate())
        .map(|(i, f)| (f.0.clone(), i))
        .collect();
    for l in lines.iter().filter(|l| l["type"] == "spd_block") {
        let hash = l["function"].as_str().unwrap();
        let with_code = l["ranges"].as_array().unwrap().iter().any(|r| n(&r[1]) > 0);
        if emitted[hash] && with_code {
            let weight = u128::from(n(&l["count"])) * u128::from(n(&l["instructions"]));
            functions[at[hash]].2.push((n(&l["id"]), weight));
        }
    }
    functions
}

/// The figures of `spd_compare` worked out from two SPDs' records.
#[derive(Default)]
struct PairFigures {
    /// Functions in both, of the same shape, changed, only in OLD, only in NEW.
    counts: (usize, usize, usize, usize, usize),
    function_overlap: f64,
    block_overlap: f64,
    changed_share: f64,
    /// By hash, the overlap of a same-shape function's blocks within it, when both sides
    /// weigh something in it.
    shapes: BTreeMap<String, Option<f64>>,
}

fn pair_figures(old: &Path, new: &Path) -> PairFigures {
    let (a, b) = (records(old), records(new));
    let total = |fs: &[Record]| {
        fs.iter()
            .flat_map(|f| f.2.iter().map(|x| x.1))
            .sum::<u128>() as f64
    };
    let (ta, tb) = (total(&a), total(&b));
    let in_b: BTreeMap<&str, &Record> = b.iter().map(|f| (f.0.as_str(), f)).collect();
    let (mut both, mut same, mut changed) = (0, 0, 0);
    let mut figures = PairFigures::default();
    for f in &a {
        let weight = |r: &Record| r.2.iter().map(|x| x.1).sum::<u128>() as f64;
        let p = weight(f) / ta;
        let Some(g) = in_b.get(f.0.as_str()) else {
            continue;
        };
        both += 1;
        let q = weight(g) / tb;
        figures.function_overlap += p.min(q);
        if f.1 == g.1 {
            same += 1;
            let theirs: BTreeMap<u64, u128> = g.2.iter().copied().collect();
            let (pf, qf) = (weight(f), weight(g));
            let mut within = 0.0;
            for (id, w) in &f.2 {
                if let Some(v) = theirs.get(id) {
                    figures.block_overlap += (*w as f64 / ta).min(*v as f64 / tb);
                    if pf > 0.0 && qf > 0.0 {
                        within += (*w as f64 / pf).min(*v as f64 / qf);
                    }
                }
            }
            let shape = (pf > 0.0 && qf > 0.0).then_some(within);
            figures.shapes.insert(f.0.clone(), shape);
        } else {
            changed += 1;
            figures.changed_share += p;
        }
    }
    figures.counts = (both, same, changed, a.len() - both, b.len() - both);
    figures
}

/// Every consecutive pair of the shared SPDs of one binary, and the pair of one build
/// retired, compared as a plain reading of their records compares them.
#[test]
fn two_real_spds_compare_as_their_records_say() {
    let Some(dir) = shared::spd_files("two_real_spds_compare_as_their_records_say") else {
        return;
    };
    let mut ebpf: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().contains("_EbpfCore_"))
        .collect();
    ebpf.sort();
    assert!(ebpf.len() >= 5, "{ebpf:?}");
    let mut pairs: Vec<(PathBuf, PathBuf)> = ebpf
        .windows(2)
        .map(|w| (w[0].clone(), w[1].clone()))
        .collect();
    let retired = (
        dir.join("2025-04-10_EbpfCore_b29b5e08.spd"),
        dir.join("2026-05-18_EbpfCore_8f1fae3b.spd"),
    );
    pairs.push(retired.clone());
    let mut one_sides = 0;
    for (old, new) in &pairs {
        let lines = spddump(&[
            "/json",
            "/compare",
            "/top:0",
            old.to_str().unwrap(),
            new.to_str().unwrap(),
        ]);
        let c = the(&lines, "spd_compare");
        let want = pair_figures(old, new);
        let got = (
            n(&c["both"]) as usize,
            n(&c["same_shape"]) as usize,
            n(&c["changed"]) as usize,
            n(&c["only_old"]) as usize,
            n(&c["only_new"]) as usize,
        );
        assert_eq!(got, want.counts, "{c}");
        for (key, value) in [
            ("function_overlap", want.function_overlap),
            ("block_overlap", want.block_overlap),
            ("changed_share_old", want.changed_share),
        ] {
            assert!((f(&c[key]) - value).abs() < 1e-9, "{key}: {c} vs {value}");
        }
        assert!(
            f(&c["block_overlap"]) <= f(&c["function_overlap"]) + 1e-12,
            "{c}"
        );
        // The rows: every function with weight, by |delta|, their deltas adding up to 0.
        let rows: Vec<&Value> = lines
            .iter()
            .filter(|l| l["type"] == "spd_compare_function")
            .collect();
        let deltas: Vec<f64> = rows.iter().map(|r| f(&r["delta"]).abs()).collect();
        assert!(deltas.windows(2).all(|w| w[0] >= w[1]));
        let sum: f64 = rows.iter().map(|r| f(&r["delta"])).sum();
        assert!(sum.abs() < 1e-9, "{sum}");
        // A same-shape function's blocks overlap within it as the records say; any other
        // has no shape to compare.
        for row in &rows {
            let shape = want.shapes.get(row["hash"].as_str().unwrap()).copied();
            match shape.flatten() {
                Some(shape) => assert!((f(&row["shape_overlap"]) - shape).abs() < 1e-9, "{row}"),
                None => assert!(row["shape_overlap"].is_null(), "{row}"),
            }
            assert_eq!(row["status"] == "same", shape.is_some(), "{row}");
        }
        let one_sided = (rows.iter())
            .filter(|r| r["status"] == "same" && r["shape_overlap"].is_null())
            .count();
        one_sides += one_sided;
    }
    // Some same-shape function weighs nothing on one side of some pair.
    assert!(one_sides > 0);
    // The same build, counters halved: next to 1, and said to be the same build.
    let lines = spddump(&[
        "/json",
        "/compare",
        retired.0.to_str().unwrap(),
        retired.1.to_str().unwrap(),
    ]);
    let c = the(&lines, "spd_compare");
    assert_eq!(c["same_build"], true);
    assert_eq!(
        (n(&c["changed"]), n(&c["only_old"]), n(&c["only_new"])),
        (0, 0, 0)
    );
    assert!(
        f(&c["function_overlap"]) > 0.97 && f(&c["block_overlap"]) > 0.97,
        "{c}"
    );
}

/// `spddump /compare` takes two SPDs; a damaged one is refused with its check named.
#[test]
fn spddump_compare_takes_two_readable_spds() {
    let app = "testdata/pe/app.spd";
    let o = Command::cargo_bin("spddump")
        .unwrap()
        .current_dir(crate::support::crate_root())
        .args(["/compare", app])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/compare takes exactly two SPDs, OLD and NEW (1 given)"));
    let spd = SpdBuilder::new("app.exe", GUID, 1);
    let at = spd.layout().records[0] + 0x34;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.spd"), spd.patch_u32(at, 99).build()).unwrap();
    let app = crate::support::crate_root().join(app);
    let o = Command::cargo_bin("spddump")
        .unwrap()
        .current_dir(dir.path())
        .args(["/compare", app.to_str().unwrap(), "bad.spd"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o)
            .starts_with("spddump: bad.spd: not a readable SPD function table: block ids failed"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
}

/// An SPD whose functions' code overlaps maps no address to one block: beside a trace, its
/// blocks are refused (exit 1, the two functions named), its function table still shown.
#[test]
fn an_spd_whose_functions_overlap_is_no_map_of_the_code() {
    let mut spd = SpdBuilder::new("app.exe", GUID, 1);
    let mix = spd
        .functions
        .iter_mut()
        .find(|f| f.name == "mix_round")
        .unwrap();
    mix.rva = 0x1040;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.spd"), spd.build()).unwrap();
    let trace = crate::support::crate_root().join("testdata/pe/trace.spt");
    let o = run_in(
        dir.path(),
        &["/json", "/compare", trace.to_str().unwrap(), "app.spd"],
    );
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    let lines = json_lines(&o);
    assert!(lines.iter().any(|l| l["type"] == "compare_spd"));
    assert!(lines.iter().all(|l| l["type"] != "spd_blocks"));
    let error = lines
        .iter()
        .find(|l| l["type"] == "error")
        .expect("an error line");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("the code of hash_bytes and of mix_round overlap at RVA 0x1040"),
        "{message}"
    );
}

/// An SPD no trace was imported into yet (every count 0) beside a trace of its binary: no
/// overlap, and each function the trace runs is shown with its share, no shape, and every
/// block it ran cold.
#[test]
fn an_spd_not_yet_profiled_overlaps_nothing_and_every_block_ran_is_cold() {
    let spd = SpdBuilder::new("app.exe", GUID, 1).not_profiled();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.spd"), spd.build()).unwrap();
    let trace = crate::support::crate_root().join("testdata/pe/trace.spt");
    let o = run_in(
        dir.path(),
        &[
            "/json",
            "/compare",
            "/top:0",
            trace.to_str().unwrap(),
            "app.spd",
        ],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    let blocks = the(&lines, "spd_blocks");
    assert!(blocks["overlap"].is_null(), "{blocks}");
    assert!(n(&blocks["ran"]) > 0, "{blocks}");
    assert_eq!(blocks["ran_cold"], blocks["ran"], "{blocks}");
    assert_eq!(blocks["cold_ran"], 0, "{blocks}");
    let rows: Vec<&Value> = (lines.iter())
        .filter(|l| l["type"] == "spd_blocks_function")
        .collect();
    assert!(!rows.is_empty());
    for row in &rows {
        assert!(f(&row["trace_share"]) > 0.0, "{row}");
        assert_eq!(f(&row["spd_share"]), 0.0, "{row}");
        assert!(row["shape_overlap"].is_null(), "{row}");
        assert!(n(&row["ran_cold"]) > 0, "{row}");
    }
    let shares: f64 = rows.iter().map(|r| f(&r["trace_share"])).sum();
    assert!((shares - 1.0).abs() < 1e-9, "{shares}");
}

/// What the map holds of an SPD's code: the blocks with bytes of code of functions with an
/// RVA. A function recorded at RVA 0 (none is: it would be the image's headers) and a
/// block whose only range holds no bytes are left off it; neither the map nor the function
/// comparison holds an address at RVA 0 or one past a function's last byte.
#[test]
fn a_function_at_rva_0_and_a_block_of_no_bytes_are_not_on_the_map() {
    let mut spd = SpdBuilder::new("app.exe", GUID, 1);
    let by_name = |spd: &mut SpdBuilder, name: &str| {
        spd.functions.iter().position(|f| f.name == name).unwrap()
    };
    let mix = by_name(&mut spd, "mix_round");
    spd.functions[mix].rva = 0;
    let spin = by_name(&mut spd, "spin_pause");
    let size = spd.functions[spin].size;
    // Its one block goes on to the new one, the exit.
    spd.functions[spin].blocks[0].successors.push((2, 0));
    (spd.functions[spin].blocks).push(SpdBlock::new(0, 1, &[(size, 0)], &[]));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.spd"), spd.build()).unwrap();
    let mut b = SptBuilder::new();
    let progid = b.binary("app.exe", GUID, 1);
    b.binary_id(progid);
    // 0x1042 is one past hash_bytes' last byte; mix_round starts at 0x1050.
    b.ip(0x01, &[0x4, 0x1000, 0x1042]);
    let o = compare(dir.path(), &b.build(), &dir.path().join("app.spd"), &[]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let blocks = the(&json_lines(&o), "spd_blocks");
    // app.spd's 15 blocks with code, less mix_round's one.
    assert_eq!(
        (
            n(&blocks["blocks"]),
            n(&blocks["outside"]),
            n(&blocks["ran"])
        ),
        (14, 2, 1),
        "{blocks}"
    );
    let o = run_in(dir.path(), &["/compare", "t.spt", "app.spd"]);
    let text = stdout(&o);
    assert!(text.contains("3 IP samples (2 in no function)"), "{text}");
}
