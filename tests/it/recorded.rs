//! `testdata/pe/lbr.spt` held to the program it was recorded of, `lbr.exe`
//! (`testdata/pe/lbr.c`, built -O2): every record is one path through the code as
//! `llvm-objdump` disassembled it, and the branches the trace shows taken are taken as
//! often as the program takes them, computed here from `lbr.c` itself.
//!
//! The trace is built by the test kit from `testdata/pe/lbr.run.txt`, which
//! `scripts/record-lbr.py` recorded by running `lbr.exe` under a CPU emulator; the
//! `stacks::` tests keep the two in step.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;
use sptdump_testkit::fixtures::{self, Disassembled};
use sptdump_testkit::recording;

use crate::support::{json_lines, run_in, status, stderr};

/// The LBR records of `lbr.spt` as `/event` shows them stored (newest pair first).
fn records() -> Vec<Vec<(u32, u32)>> {
    records_of("lbr.spt")
}

/// The LBR records of a trace of `testdata/pe/`, as [`records`] reads `lbr.spt`'s.
fn records_of(trace: &str) -> Vec<Vec<(u32, u32)>> {
    let o = run_in(&fixtures::dir(), &["/json", "/event", trace]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let records: Vec<Vec<(u32, u32)>> = json_lines(&o)
        .iter()
        .filter(|l| l["type"] == "lbr")
        .map(|l| {
            let rva = |v: &Value| u32::try_from(v.as_u64().unwrap()).unwrap();
            let pairs = l["branches"].as_array().unwrap();
            pairs
                .iter()
                .map(|p| (rva(&p["from"]), rva(&p["to"])))
                .collect()
        })
        .collect();
    assert!(!records.is_empty(), "{trace} holds LBR records");
    records
}

fn conditional(mnemonic: &str) -> bool {
    mnemonic.starts_with('j') && mnemonic != "jmp"
}

/// The same of the fleet's runs (`testdata/pe/fleet/`), each recorded with another input.
#[test]
fn every_record_of_the_fleets_traces_is_one_path_through_lbr_exe() {
    for name in recording::FLEET {
        assert_paths(&records_of(&format!("fleet/{name}.spt")));
    }
}

#[test]
fn every_record_of_lbr_spt_is_one_path_through_lbr_exe() {
    assert_paths(&records());
}

/// Each record is a path through lbr.exe's code: every pair a branch and where it goes, and
/// the code between two pairs straight on.
fn assert_paths(records: &[Vec<(u32, u32)>]) {
    let code = fixtures::disassembly("lbr", "lbr");
    let at: HashMap<u32, usize> = code.iter().enumerate().map(|(i, c)| (c.0, i)).collect();
    let after_call = |rva: u32| {
        at.get(&rva)
            .is_some_and(|&i| i > 0 && code[i - 1].1 == "call")
    };
    for (n, record) in records.iter().enumerate() {
        // Each pair is a branch instruction and one of the places it goes.
        for &(from, to) in record {
            let Some(&i) = at.get(&from) else {
                panic!("record {n}: 0x{from:X} is no instruction of lbr.exe: {record:X?}")
            };
            let (_, mnemonic, target) = &code[i];
            let fits = match mnemonic.as_str() {
                "ret" => after_call(to),
                "call" | "jmp" => *target == Some(to),
                m if conditional(m) => *target == Some(to),
                _ => false,
            };
            assert!(
                fits,
                "record {n}: {mnemonic} at 0x{from:X} does not go to 0x{to:X}: {record:X?}"
            );
        }
        // From where each branch went, straight on to the next branch taken: past
        // conditional jumps (not taken), never past a jump, a call or a return.
        for pair in record.windows(2) {
            let (newer, older) = (pair[0], pair[1]);
            let mut i = at[&older.1];
            while code[i].0 != newer.0 {
                let (rva, mnemonic, _) = &code[i];
                assert!(
                    !matches!(mnemonic.as_str(), "jmp" | "call" | "ret") && *rva < newer.0,
                    "record {n}: from 0x{:X} the code does not run straight to 0x{:X} \
                     ({mnemonic} at 0x{rva:X}): {record:X?}",
                    older.1,
                    newer.0
                );
                i += 1;
            }
        }
    }
}

/// What `lbr.c`'s code does in one run of `main_entry`: the calls between functions, and
/// each conditional jump of the compiled code, as how often it runs and how often it jumps.
#[derive(Default)]
struct Program {
    /// (caller, callee) to calls, tail calls included.
    calls: BTreeMap<(&'static str, &'static str), u64>,
    /// (function, n) to (runs, taken): the function's n-th conditional jump in address order.
    jumps: BTreeMap<(&'static str, usize), (u64, u64)>,
}

const TABLE: [u32; 8] = [3, 1400, 15, 9, 2000, 7, 11, 5000];

impl Program {
    fn call(&mut self, caller: &'static str, callee: &'static str) {
        *self.calls.entry((caller, callee)).or_default() += 1;
    }

    /// The `n`-th conditional jump of `function` ran `runs` times and jumped `taken` of them.
    fn jump(&mut self, function: &'static str, n: usize, runs: u64, taken: u64) {
        let e = self.jumps.entry((function, n)).or_default();
        e.0 += runs;
        e.1 += taken;
    }

    fn rotate(x: u32, by: u32) -> u32 {
        (x << (by & 31)) | (x >> (32u32.wrapping_sub(by) & 31))
    }

    /// The loop runs four rounds a pass while four are left (a jump back after each pass
    /// but the last), then one a pass; `rounds == 0` returns at once.
    fn scramble(&mut self, mut x: u32, rounds: u32) -> u32 {
        let (passes, rest) = (u64::from(rounds / 4), u64::from(rounds % 4));
        let any = u64::from(rounds > 0);
        self.jump("scramble", 0, 1, 1 - any); // if rounds == 0: return
        self.jump("scramble", 1, any, u64::from(rounds >= 4)); // four rounds a pass?
        self.jump("scramble", 2, passes, passes.saturating_sub(1)); // the next four
        self.jump("scramble", 3, any, any * u64::from(rest == 0)); // no single rounds left
        self.jump("scramble", 4, rest, rest.saturating_sub(1)); // the next single round
        for i in 0..rounds {
            x = Self::rotate(x.wrapping_mul(2_654_435_761), i + 7) ^ i;
        }
        x
    }

    fn rare_path(&mut self, x: u32) -> u32 {
        let mut h = x;
        for i in 0..3 {
            self.call("rare_path", "scramble");
            h = self.scramble(h.wrapping_add(i), i + 2);
        }
        h
    }

    fn classify(&mut self, x: u32) -> u32 {
        let rare = x & 15 == 0;
        self.jump("classify", 0, 1, u64::from(rare)); // if ((x & 15) == 0)
        if rare {
            self.call("classify", "rare_path");
            return self.rare_path(x);
        }
        self.jump("classify", 1, 1, u64::from(x & 1 == 1)); // if (x & 1)
        if x & 1 == 1 {
            x.wrapping_mul(3).wrapping_add(1)
        } else {
            x >> 1
        }
    }

    /// The loop sums eight entries a pass with vector instructions while eight are left,
    /// then one a pass.
    fn sum_table(&mut self, t: &[u32], n: u64) -> u32 {
        let (passes, rest) = (n / 8, n % 8);
        let any = u64::from(n > 0);
        let vector = u64::from(passes > 0);
        self.jump("sum_table", 0, 1, 1 - any); // n == 0: return 0
        self.jump("sum_table", 1, any, vector); // eight at a pass?
        self.jump("sum_table", 2, passes, passes.saturating_sub(1)); // the next eight
        self.jump("sum_table", 3, vector, vector * u64::from(rest == 0)); // none left
        self.jump("sum_table", 4, rest, rest.saturating_sub(1)); // the next one
        t.iter()
            .take(n as usize)
            .map(|&v| if v > 1000 { Self::rotate(v, 3) } else { v })
            .fold(0, u32::wrapping_add)
    }

    fn finish(&mut self, x: u32) -> u32 {
        self.call("finish", "scramble");
        self.scramble(x ^ 0x5A5A_5A5A, (x & 3) + 1)
    }

    fn step(&mut self, x: u32) -> u32 {
        self.call("step", "classify");
        let mut x = self.classify(x);
        self.call("step", "sum_table");
        x = x.wrapping_add(self.sum_table(&TABLE, 8));
        self.call("step", "finish");
        self.finish(x)
    }

    /// One run of `main_entry`.
    fn run() -> Program {
        let mut p = Program::default();
        let mut x: u32 = 12345;
        for round in 0..100 {
            p.call("main_entry", "step");
            x = p.step(x.wrapping_add(round));
        }
        p.jump("main_entry", 0, 100, 99); // round < 100: again
        p
    }
}

/// Whether `k` of `n` sampled is as near a share `p` as sampling leaves it: within four
/// standard deviations of a binomial draw, and two in `n` for rounding.
fn near(k: u64, n: u64, p: f64) -> bool {
    let n = n.max(1) as f64;
    (k as f64 / n - p).abs() <= 4.0 * (p * (1.0 - p) / n).sqrt() + 2.0 / n
}

#[test]
fn lbr_spt_takes_each_branch_as_often_as_lbr_c_does() {
    let truth = Program::run();
    // classify's rare path is rare: 3 of 100 calls in a run.
    assert_eq!(truth.jumps[&("classify", 0)], (100, 3));
    let code: Vec<Disassembled> = fixtures::disassembly("lbr", "lbr");
    for function in ["main_entry", "classify", "scramble", "sum_table"] {
        let f = fixtures::function("lbr", function);
        let in_function = |c: &&Disassembled| f.rva <= c.0 && c.0 < f.rva + f.size.unwrap();
        let jumps: Vec<u32> = code
            .iter()
            .filter(in_function)
            .filter(|c| conditional(&c.1))
            .map(|c| c.0)
            .collect();
        let modelled = truth.jumps.keys().filter(|k| k.0 == function).count();
        assert_eq!(
            jumps.len(),
            modelled,
            "{function}'s conditional jumps are those lbr.c's model knows of: {jumps:X?}"
        );
        let option = format!("/annotate:{function}");
        let o = run_in(
            &fixtures::dir(),
            &[
                "/json",
                &option,
                "/pdb:lbr.pdb",
                "/image:lbr.exe",
                "lbr.spt",
            ],
        );
        assert_eq!(status(&o), 0, "{}", stderr(&o));
        let rows: HashMap<u64, Value> = json_lines(&o)
            .into_iter()
            .filter(|l| l["type"] == "annotate")
            .map(|l| (l["rva"].as_u64().unwrap(), l))
            .collect();
        for (n, rva) in jumps.iter().enumerate() {
            let (runs, taken) = truth.jumps[&(function, n)];
            let row = &rows[&u64::from(*rva)];
            let count = row["count"].as_u64().unwrap();
            let jumped = row["taken"].as_u64().unwrap();
            let fell = row["fall_through"].as_u64().unwrap();
            let what = format!("{function}'s jump at 0x{rva:X} jumps {taken} of {runs}: {row}");
            if runs == 0 {
                assert_eq!(count, 0, "never runs: {what}");
            } else if taken == 0 {
                assert!(jumped == 0 && fell > 0, "never jumps: {what}");
            } else if taken == runs {
                assert!(jumped > 0 && fell == 0, "always jumps: {what}");
            } else {
                let share = taken as f64 / runs as f64;
                assert!(near(jumped, jumped + fell, share), "{what}");
            }
        }
    }
}

#[test]
fn lbr_spt_calls_each_function_as_often_as_lbr_c_does() {
    let truth = Program::run();
    assert_eq!(truth.calls[&("main_entry", "step")], 100);
    let o = run_in(
        &fixtures::dir(),
        &[
            "/json",
            "/callgraph",
            "/pdb:lbr.pdb",
            "/image:lbr.exe",
            "lbr.spt",
        ],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    // Calls and tail calls (jumps to a function's start) together, as lbr.c counts them.
    let mut found: BTreeMap<(String, String), u64> = BTreeMap::new();
    for l in json_lines(&o).iter().filter(|l| l["type"] == "call_edge") {
        let s = |k: &str| l[k].as_str().unwrap().to_owned();
        *found.entry((s("caller"), s("callee"))).or_default() += l["calls"].as_u64().unwrap();
    }
    let edges: Vec<(&str, &str)> = found
        .keys()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let expected: Vec<(&str, &str)> = truth.calls.keys().copied().collect();
    assert_eq!(
        edges
            .iter()
            .copied()
            .collect::<std::collections::BTreeSet<_>>(),
        expected.iter().copied().collect(),
        "the call edges of lbr.c"
    );
    // Each edge's calls against main_entry's calls of step, 100 a run: as many as lbr.c
    // makes per call of step, within what sampling leaves (four standard deviations of a
    // count drawn at random, and two calls).
    let steps = found[&("main_entry".to_owned(), "step".to_owned())];
    for ((caller, callee), &calls) in &truth.calls {
        let got = found[&((*caller).to_owned(), (*callee).to_owned())] as f64;
        let want = steps as f64 * calls as f64 / 100.0;
        assert!(
            (got - want).abs() <= 4.0 * want.sqrt() + 2.0,
            "{caller} calls {callee} {calls} times a run, {want:.1} for {steps} calls of \
             step: the trace shows {got}"
        );
    }
}

#[test]
fn the_recording_is_of_the_committed_lbr_exe_and_says_how_it_was_taken() {
    let run = recording::lbr_run();
    assert_eq!(run.records.len(), 400);
    assert_eq!(run.depth, 16);
    assert!(run.runs > 1, "the program ran again for more records");
    // A record is read every `period` taken branches: no two records share a branch.
    assert!(run.period > run.depth);
    assert_eq!(
        records(),
        run.records,
        "lbr.spt holds the recording's records"
    );
}
