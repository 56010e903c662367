//! LBR records read as branch sequences (`/dyninst`, `/coverage`, `/annotate`) on two kinds
//! of trace of `lbr.exe` (`testdata/pe/lbr.c`, built -O2). Traces the test kit makes by a
//! random walk over its code as `llvm-objdump` disassembled it (`walk`: paths of the code,
//! not the ones the program takes, but with the walk's own instruction counts as the truth
//! the estimate is held to, and the order the pairs were written in as the one that must be
//! found); and `testdata/pe/lbr.spt`, recorded from a run of the program.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use sptdump_testkit::builder::{Guid, RETIRE_BR_INSTR, SptBuilder};
use sptdump_testkit::fixtures;
use sptdump_testkit::walk::{self, Sampling, Walk};

use crate::support::{json_lines, run_in, status, stderr, stdout};

const SAMPLING: Sampling = Sampling {
    records: 3000,
    depth: 16,
    period: 37,
    seed: 7,
};

fn lbr_walk() -> Walk {
    walk::walk("lbr", "lbr", "main_entry", SAMPLING)
}

/// Writes `records` as a trace in `dir` and runs sptdump on it with `args`, `lbr.exe` and
/// its PDB.
fn run(dir: &Path, records: &[Vec<(u32, u32)>], oldest_first: bool, args: &[&str]) -> Vec<Value> {
    let trace = dir.join("lbr.spt");
    std::fs::write(&trace, walk::trace("lbr", "lbr.exe", records, oldest_first)).unwrap();
    let trace = trace.to_str().unwrap();
    let mut all = vec!["/json", "/pdb:lbr.pdb", "/image:lbr.exe", trace];
    all.extend_from_slice(args);
    let o = run_in(&fixtures::dir(), &all);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    json_lines(&o)
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

#[test]
fn the_order_written_is_the_order_found_and_every_range_of_a_walk_is_consistent() {
    let walk = lbr_walk();
    let dir = tempfile::tempdir().unwrap();
    for (oldest_first, name) in [(false, "newest-first"), (true, "oldest-first")] {
        let lines = run(dir.path(), &walk.records, oldest_first, &["/dyninst"]);
        let ranges = of_type(&lines, "lbr_ranges");
        assert_eq!(ranges.len(), 1, "{lines:?}");
        let r = ranges[0];
        assert_eq!(r["order"], name);
        let expected = (SAMPLING.records * (SAMPLING.depth - 1)) as u64;
        assert_eq!(r["ranges"].as_u64(), Some(expected));
        assert_eq!(
            r["consistent"], r["ranges"],
            "a walk's ranges all run straight"
        );
        let other = if oldest_first {
            "newest_first"
        } else {
            "oldest_first"
        };
        let wrong = r[other].as_u64().unwrap();
        assert!(
            wrong * 2 < expected,
            "the other order is mostly inconsistent: {r}"
        );
    }
}

#[test]
fn dynamic_instructions_by_function_are_within_three_points_of_what_the_walk_ran() {
    let walk = lbr_walk();
    let dir = tempfile::tempdir().unwrap();
    let lines = run(dir.path(), &walk.records, false, &["/dyninst:0"]);
    let estimated: BTreeMap<String, f64> = of_type(&lines, "dyninst")
        .iter()
        .map(|l| {
            let f = l["function"].as_str().unwrap().to_owned();
            (f, l["share"].as_f64().unwrap())
        })
        .collect();
    assert!(
        estimated.len() >= 5,
        "the walk reaches most functions: {estimated:?}"
    );
    for (function, ran) in &walk.instructions {
        let share = walk.share(function);
        let got = estimated.get(function).copied().unwrap_or(0.0);
        assert!(
            (got - share).abs() < 0.03,
            "{function}: estimated {got:.4}, the walk ran {share:.4} ({ran} instructions)"
        );
    }
    let sum: f64 = estimated.values().sum();
    assert!((sum - 1.0).abs() < 1e-9, "shares add up to 1: {sum}");
}

#[test]
fn coverage_counts_the_blocks_of_each_function_that_ran() {
    let walk = lbr_walk();
    let dir = tempfile::tempdir().unwrap();
    let lines = run(dir.path(), &walk.records, false, &["/coverage", "/top:all"]);
    let coverage = of_type(&lines, "coverage");
    let by_name = |name: &str| {
        coverage
            .iter()
            .find(|l| l["function"] == name)
            .unwrap_or_else(|| panic!("{name} in {coverage:?}"))
    };
    // classify, as llvm-objdump lists it: test+je | test+jne | shr+mov+ret | jmp rare_path |
    // lea+inc+mov+ret; the nop after it is padding.
    assert_eq!(by_name("classify")["blocks"], 5);
    // Every function's blocks as the listing gives them.
    let listing = blocks_in_listing();
    for l in &coverage {
        let name = l["function"].as_str().unwrap();
        assert_eq!(l["blocks"].as_u64(), listing.get(name).copied(), "{l}");
        let (blocks, covered) = (
            l["blocks"].as_u64().unwrap(),
            l["covered"].as_u64().unwrap(),
        );
        assert!(covered >= 1 && covered <= blocks, "{l}");
    }
    let ranges = &of_type(&lines, "lbr_ranges")[0];
    let blocks: u64 = coverage.iter().map(|l| l["blocks"].as_u64().unwrap()).sum();
    assert_eq!(ranges["blocks"].as_u64(), Some(blocks));
}

/// The basic blocks of each function of `lbr.exe` by `llvm-objdump`'s listing: leaders are
/// a function's first instruction, the targets of jumps inside it and the instructions after
/// a jump or a return; a block of `nop`s and `int3`s alone is padding.
fn blocks_in_listing() -> BTreeMap<String, u64> {
    let code = fixtures::disassembly("lbr", "lbr");
    let functions = fixtures::functions("lbr");
    let mut blocks = BTreeMap::new();
    for f in functions.iter().filter(|f| f.size.is_some()) {
        let end = f.rva + f.size.unwrap();
        let body: Vec<_> = code.iter().filter(|c| f.rva <= c.0 && c.0 < end).collect();
        let mut leaders = vec![f.rva];
        for (n, (_, mnemonic, target)) in body.iter().enumerate() {
            if mnemonic.starts_with('j') || mnemonic == "ret" {
                leaders.extend(body.get(n + 1).map(|c| c.0));
                leaders.extend(target.filter(|t| (f.rva..end).contains(t)));
            }
        }
        let mut count = 0;
        let mut padding = true;
        for (n, (_, mnemonic, _)) in body.iter().enumerate() {
            padding &= mnemonic == "nop" || mnemonic == "int3";
            if body.get(n + 1).is_none_or(|c| leaders.contains(&c.0)) {
                count += u64::from(!padding);
                padding = true;
            }
        }
        blocks.insert(f.name.clone(), count);
    }
    blocks
}

#[test]
fn pairs_in_no_order_use_no_range_and_say_so() {
    // The walk's pairs shuffled within each record: neither order holds.
    let walk = lbr_walk();
    let shuffled: Vec<Vec<(u32, u32)>> = walk
        .records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.rotate_left(5);
            r.swap(1, 9);
            r.swap(3, 12);
            r
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("lbr.spt");
    std::fs::write(&trace, walk::trace("lbr", "lbr.exe", &shuffled, false)).unwrap();
    let o = run_in(
        &fixtures::dir(),
        &[
            "/dyninst",
            "/pdb:lbr.pdb",
            "/image:lbr.exe",
            trace.to_str().unwrap(),
        ],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("order unknown"), "{}", stdout(&o));
    assert!(stderr(&o).contains("lbr-order-unknown"), "{}", stderr(&o));
    assert!(
        !stdout(&o).contains("Dynamic instructions"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn random_pairs_between_instructions_are_mostly_inconsistent_either_way() {
    let code = fixtures::disassembly("lbr", "lbr");
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut any = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        code[(state % code.len() as u64) as usize].0
    };
    let records: Vec<Vec<(u32, u32)>> = (0..500)
        .map(|_| (0..16).map(|_| (any(), any())).collect())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let lines = run(dir.path(), &records, false, &["/coverage"]);
    let r = of_type(&lines, "lbr_ranges")[0];
    assert_eq!(r["order"], Value::Null, "{r}");
    let ranges = r["ranges"].as_u64().unwrap();
    for order in ["newest_first", "oldest_first"] {
        let consistent = r[order].as_u64().unwrap();
        assert!(consistent * 100 < ranges * 15, "{order}: {r}");
    }
    assert!(of_type(&lines, "coverage").is_empty(), "no range is used");
}

#[test]
fn a_binary_without_its_image_or_pdb_is_told_which_is_missing() {
    let walk = lbr_walk();
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("lbr.spt");
    std::fs::write(
        &trace,
        walk::trace("lbr", "lbr.exe", &walk.records[..10], false),
    )
    .unwrap();
    let trace = trace.to_str().unwrap();
    for (args, missing) in [
        (
            vec!["/coverage", "/pdb:lbr.pdb", trace],
            "/coverage: lbr.exe: LBR ranges need its code: give /image:FILE for it",
        ),
        (
            vec!["/coverage", trace],
            "/coverage: lbr.exe: LBR ranges join functions: give /pdb:FILE for it",
        ),
        (
            vec!["/dyninst", trace],
            "/dyninst: lbr.exe: LBR ranges join functions: give /pdb:FILE for it",
        ),
    ] {
        // Alone, the view cannot run: an error, and the run fails.
        let o = run_in(&fixtures::dir(), &args);
        assert_eq!(status(&o), 1, "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o)
                .lines()
                .any(|l| l.ends_with(&format!(": {missing}"))),
            "{args:?}: {}",
            stderr(&o)
        );
        // Beside a view that shows something, a note, and the run does not fail.
        let mut with = args.clone();
        with.insert(0, "/summary");
        let o = run_in(&fixtures::dir(), &with);
        assert_eq!(status(&o), 0, "{with:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!("note: {missing}")),
            "{with:?}: {}",
            stderr(&o)
        );
    }
    // A trace without LBR records has nothing for the view, whatever is given: a note.
    let o = run_in(&fixtures::dir(), &["/coverage", "app-only.spt"]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "note: /coverage: the profile holds no LBR records, which the ranges are read from"
        ),
        "{}",
        stderr(&o)
    );
}

/// The `annotate` lines of `/annotate:FUNCTION` on `testdata/pe/lbr.spt`, with `more`.
fn annotated(function: &str, more: &[&str]) -> Vec<Value> {
    let option = format!("/annotate:{function}");
    let mut args = vec![
        "/json",
        &option,
        "/pdb:lbr.pdb",
        "/image:lbr.exe",
        "lbr.spt",
    ];
    args.extend_from_slice(more);
    let o = run_in(&fixtures::dir(), &args);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    json_lines(&o)
}

#[test]
fn annotate_lists_the_instructions_llvm_objdump_lists_with_counts_that_add_up() {
    let lines = annotated("scramble", &[]);
    let rows = of_type(&lines, "annotate");
    let scramble = fixtures::function("lbr", "scramble");
    let end = scramble.rva + scramble.size.unwrap();
    let listing: Vec<_> = fixtures::disassembly("lbr", "lbr")
        .into_iter()
        .filter(|c| scramble.rva <= c.0 && c.0 < end)
        .collect();
    let got: Vec<(u64, String)> = rows
        .iter()
        .map(|r| {
            let text = r["text"].as_str().unwrap();
            (
                r["rva"].as_u64().unwrap(),
                text.split(' ').next().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(u64, String)> = listing
        .iter()
        .map(|c| (u64::from(c.0), c.1.clone()))
        .collect();
    assert_eq!(
        got, expected,
        "the RVAs and mnemonics of llvm-objdump's listing"
    );
    // The counts are the function's dynamic instructions; a conditional jump either jumps or
    // falls through to the next instruction, which counts at least that.
    let count = |r: &Value| r["count"].as_u64().unwrap();
    let dyninst = of_type(&run_dyninst(), "dyninst")
        .into_iter()
        .find(|l| l["function"] == "scramble")
        .map(|l| l["instructions"].as_u64().unwrap());
    assert_eq!(Some(rows.iter().map(|r| count(r)).sum()), dyninst);
    let mut conditional = 0;
    for (n, r) in rows.iter().enumerate() {
        let Some(fall) = r["fall_through"].as_u64() else {
            continue;
        };
        conditional += 1;
        assert_eq!(r["taken"].as_u64().unwrap() + fall, count(r), "{r}");
        assert!(count(rows[n + 1]) >= fall, "{r}");
    }
    assert!(
        conditional >= 3,
        "scramble's loops end in conditional jumps"
    );
    // IP samples: the trace's RETIRE_BR_INSTR sample lands where the newest branch went.
    let ip: u64 = rows
        .iter()
        .map(|r| r["ip"]["RETIRE_BR_INSTR"].as_u64().unwrap())
        .sum();
    assert!(ip > 0);
}

fn run_dyninst() -> Vec<Value> {
    let args = [
        "/json",
        "/dyninst:0",
        "/pdb:lbr.pdb",
        "/image:lbr.exe",
        "lbr.spt",
    ];
    json_lines(&run_in(&fixtures::dir(), &args))
}

#[test]
fn annotate_shows_source_lines_and_inlined_code_and_the_text_once_the_path_is_remapped() {
    let source = std::fs::read_to_string(fixtures::dir().join("lbr.c")).unwrap();
    let source: Vec<&str> = source.lines().collect();
    for (more, found) in [(&[][..], false), (&["/srcpath:C:\\src=."][..], true)] {
        let lines = annotated("scramble", more);
        let rows = of_type(&lines, "annotate");
        let mut inlined = 0;
        for r in &rows {
            assert_eq!(r["file"], "C:\\src\\lbr.c", "{r}");
            let line = r["line"].as_u64().unwrap() as usize;
            match r["source"].as_str() {
                Some(text) => assert_eq!(text, source[line - 1], "{r}"),
                None => assert!(!found, "{r}"),
            }
            if r["inlined"] == "rotate" {
                inlined += 1;
                assert!(source[line - 1].contains("return (x << (by & 31))"), "{r}");
            }
        }
        assert!(inlined >= 2, "rotate is inlined into scramble's loops");
        assert_eq!(
            rows.iter().any(|r| r["source"].is_string()),
            found,
            "{more:?}"
        );
    }
}

#[test]
fn annotate_of_a_name_no_binary_has_says_so() {
    let o = run_in(
        &fixtures::dir(),
        &[
            "/annotate:nothing_here",
            "/pdb:lbr.pdb",
            "/image:lbr.exe",
            "lbr.spt",
        ],
    );
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    assert_eq!(
        stderr(&o),
        "sptdump: lbr.spt: /annotate:nothing_here: no function of lbr.exe bears this name; the \
         closest: main_entry, finish, step\n"
    );
    // Without the PDB the name cannot be looked up: the run fails, saying what to give.
    let o = run_in(&fixtures::dir(), &["/annotate:classify", "lbr.spt"]);
    assert_eq!(status(&o), 1);
    assert_eq!(
        stderr(&o),
        "sptdump: lbr.spt: /annotate:classify: functions are named by a binary's PDB: give \
         /pdb:FILE for lbr.exe\n"
    );
    // With the PDB but not the image, the image.
    let o = run_in(
        &fixtures::dir(),
        &["/annotate:classify", "/pdb:lbr.pdb", "lbr.spt"],
    );
    assert_eq!(status(&o), 1);
    assert!(
        stderr(&o).contains(
            "sptdump: lbr.spt: /annotate:classify: lbr.exe: its instructions are read from its \
             image: give /image:FILE for lbr.exe\n"
        ),
        "{}",
        stderr(&o)
    );
    // An inlined function has no code of its own: the error says where it was inlined.
    let o = run_in(
        &fixtures::dir(),
        &[
            "/annotate:rotate",
            "/pdb:inline.pdb",
            "/image:inline.exe",
            "inline.spt",
        ],
    );
    assert_eq!(status(&o), 1);
    assert!(
        stderr(&o).contains(
            "sptdump: inline.spt: /annotate:rotate: rotate is inlined into digest, tally \
             (inline.exe), which hold its code: /annotate:digest shows its instructions\n"
        ),
        "{}",
        stderr(&o)
    );
    // A binary without its PDB is named in the error, with what to give.
    let o = run_in(
        &fixtures::dir(),
        &[
            "/annotate:main",
            "/pdb:app.pdb",
            "/image:app.exe",
            "profile.spt",
        ],
    );
    assert_eq!(status(&o), 1);
    assert!(
        stderr(&o).contains(
            "/annotate:main: no function of app.exe bears this name; the closest: main_entry, \
             mix_round, spin_pause; core.dll not looked in (no PDB): give /pdb:FILE for core.dll\n"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn check_says_lbr_thin_when_the_ranges_cover_under_half_the_sampled_blocks() {
    let walk = lbr_walk();
    let dir = tempfile::tempdir().unwrap();
    // `pairs` of each LBR record are kept.
    let checks = |lbr_records: usize, pairs: usize| -> Vec<Value> {
        // Every sample's IP, and the LBR records of the first few only.
        let mut b = SptBuilder::new();
        let (guid, age) = fixtures::codeview("lbr");
        let name = b.string("lbr.exe");
        b.program_id(Guid(guid), age, name);
        b.binary_id(0);
        for (n, record) in walk.records.iter().enumerate() {
            b.ip(RETIRE_BR_INSTR, &[record[0].1]);
            if n < lbr_records {
                b.lbr(&record[..pairs]);
            }
        }
        let trace = dir.path().join("thin.spt");
        std::fs::write(&trace, b.build()).unwrap();
        let args = [
            "/json",
            "/check",
            "/pdb:lbr.pdb",
            "/image:lbr.exe",
            trace.to_str().unwrap(),
        ];
        let o = run_in(&fixtures::dir(), &args);
        of_type(&json_lines(&o), "check")
            .into_iter()
            .cloned()
            .collect()
    };
    let verdicts = |lbr_records: usize| -> Vec<String> {
        checks(lbr_records, 16)
            .iter()
            .map(|l| l["code"].as_str().unwrap().to_owned())
            .collect()
    };
    // One record's ranges reach a few blocks of the sampled functions; all of them, every one.
    assert!(verdicts(1).contains(&"lbr-thin".to_owned()));
    assert!(!verdicts(walk.records.len()).contains(&"lbr-thin".to_owned()));

    // The blocks counted are every block of the functions with IP samples, those the one
    // record's ranges never reach too (a record of one range reaches one function): as many
    // as /coverage gives each when all ran.
    let functions = fixtures::functions("lbr");
    let sampled: std::collections::BTreeSet<&str> = walk
        .records
        .iter()
        .filter_map(|r| functions.iter().rev().find(|f| f.rva <= r[0].1))
        .map(|f| f.name.as_str())
        .collect();
    let lines = run(dir.path(), &walk.records, false, &["/coverage"]);
    let blocks: u64 = of_type(&lines, "coverage")
        .iter()
        .filter(|l| sampled.contains(l["function"].as_str().unwrap()))
        .map(|l| l["blocks"].as_u64().unwrap())
        .sum();
    let thin = checks(1, 2);
    let message = thin.iter().find(|l| l["code"] == "lbr-thin").unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();
    let said = format!(
        " of the {blocks} blocks of the {} functions with IP samples",
        sampled.len()
    );
    assert!(message.contains(&said), "{said}: {message}");
}

#[test]
fn merged_traces_sum_their_ranges_and_instructions() {
    let one = [
        "/json",
        "/dyninst:0",
        "/pdb:lbr.pdb",
        "/image:lbr.exe",
        "lbr.spt",
    ];
    let two = [&one[..], &["/merge", "lbr.spt"]].concat();
    let figures = |args: &[&str]| {
        let lines = json_lines(&run_in(&fixtures::dir(), args));
        let r = of_type(&lines, "lbr_ranges")[0].clone();
        let scramble = of_type(&lines, "dyninst")
            .into_iter()
            .find(|l| l["function"] == "scramble")
            .map(|l| {
                (
                    l["instructions"].as_u64().unwrap(),
                    l["share"].as_f64().unwrap(),
                )
            })
            .unwrap();
        (
            r["ranges"].as_u64().unwrap(),
            r["instructions"].as_u64().unwrap(),
            scramble,
        )
    };
    let (ranges, instructions, (scramble, share)) = figures(&one);
    let merged = figures(&two);
    assert_eq!(merged.0, 2 * ranges);
    assert_eq!(merged.1, 2 * instructions);
    assert_eq!(merged.2.0, 2 * scramble);
    assert!((merged.2.1 - share).abs() < 1e-12);
}

#[test]
fn records_read_in_batches_add_up_as_read_at_once() {
    // More records than are gathered before a batch is read (65,536), against the same
    // records in two traces merged, each read in one batch.
    // Short records, sampled often: a short walk.
    let sampling = Sampling {
        records: 70_000,
        depth: 3,
        period: 4,
        seed: 3,
    };
    let walk = walk::walk("lbr", "lbr", "main_entry", sampling);
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, records: &[Vec<(u32, u32)>]| {
        let path = dir.path().join(name);
        std::fs::write(&path, walk::trace("lbr", "lbr.exe", records, false)).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let all = write("all.spt", &walk.records);
    let first = write("first.spt", &walk.records[..35_000]);
    let second = write("second.spt", &walk.records[35_000..]);
    let lines = |traces: &[&str]| {
        let mut args = vec!["/json", "/dyninst:0", "/pdb:lbr.pdb", "/image:lbr.exe"];
        args.extend_from_slice(traces);
        let o = run_in(&fixtures::dir(), &args);
        let keep = |l: &&Value| l["type"] == "dyninst" || l["type"] == "lbr_ranges";
        json_lines(&o)
            .iter()
            .filter(keep)
            .map(|l| {
                let mut l = l.clone();
                l["path"] = Value::Null;
                l
            })
            .collect::<Vec<_>>()
    };
    let once = lines(&[&all]);
    assert_eq!(once, lines(&["/merge", &first, &second]));
    assert_eq!(of_type(&once, "lbr_ranges")[0]["records"], 70_000);
}

#[test]
fn a_batch_of_more_distinct_ranges_than_are_held_at_once_adds_up_as_two_smaller_ones() {
    // The distinct ranges of a batch are walked once 2^18 of them are gathered, before the
    // batch is done. A trace whose one batch gathers more than that, against the same
    // records in two traces merged, each under it: the walk's records (each counted a
    // thousand times, by REPEAT, so that their order stays the one found) between records
    // of pairs at random bytes of the code (a range each pair, nearly all inconsistent).
    const HELD: usize = 1 << 18;
    let walked = walk::walk("lbr", "lbr", "main_entry", SAMPLING).records;
    let code = fixtures::disassembly("lbr", "lbr");
    let (low, high) = (code[0].0, code[code.len() - 1].0);
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut any = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        low + (state % u64::from(high - low)) as u32
    };
    let random: Vec<Vec<(u32, u32)>> = (0..12_000)
        .map(|_| (0..16).map(|_| (any(), any())).collect())
        .collect();
    // Each walked record, then four random ones.
    let mut records: Vec<(&[(u32, u32)], u64)> = Vec::new();
    for (i, r) in random.iter().enumerate() {
        if i % 4 == 0 {
            records.push((&walked[i / 4], 999));
        }
        records.push((r, 0));
    }
    // Every range a record gives under both orders, as the batch holds them.
    let distinct = |records: &[(&[(u32, u32)], u64)]| {
        let mut ranges = std::collections::HashSet::new();
        for (pairs, _) in records {
            for w in pairs.windows(2) {
                ranges.insert((0, w[1].1, w[0].0));
                ranges.insert((1, w[0].1, w[1].0));
            }
        }
        ranges.len()
    };
    let half = records.len() / 2;
    assert!(distinct(&records) > HELD, "{}", distinct(&records));
    assert!(
        distinct(&records[..half]) < HELD,
        "{}",
        distinct(&records[..half])
    );
    assert!(
        distinct(&records[half..]) < HELD,
        "{}",
        distinct(&records[half..])
    );

    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, records: &[(&[(u32, u32)], u64)]| {
        let mut b = SptBuilder::new();
        let (guid, age) = fixtures::codeview("lbr");
        let name_at = b.string("lbr.exe");
        b.program_id(Guid(guid), age, name_at);
        b.binary_id(0);
        for &(pairs, repeat) in records {
            b.repeat(repeat).ip(RETIRE_BR_INSTR, &[pairs[0].1]);
            b.repeat(repeat).lbr(pairs);
        }
        let path = dir.path().join(name);
        std::fs::write(&path, b.build()).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let all = write("all.spt", &records);
    let first = write("first.spt", &records[..half]);
    let second = write("second.spt", &records[half..]);
    let lines = |traces: &[&str]| {
        let mut args = vec![
            "/json",
            "/dyninst:0",
            "/coverage",
            "/pdb:lbr.pdb",
            "/image:lbr.exe",
        ];
        args.extend_from_slice(traces);
        let o = run_in(&fixtures::dir(), &args);
        assert_eq!(status(&o), 0, "{}", stderr(&o));
        let keep = |l: &&Value| {
            matches!(
                l["type"].as_str(),
                Some("dyninst" | "coverage" | "lbr_ranges")
            )
        };
        json_lines(&o)
            .iter()
            .filter(keep)
            .map(|l| {
                let mut l = l.clone();
                l["path"] = Value::Null;
                l
            })
            .collect::<Vec<_>>()
    };
    let once = lines(&[&all]);
    assert_eq!(once, lines(&["/merge", &first, &second]));
    let r = of_type(&once, "lbr_ranges")[0];
    assert_eq!(r["order"], "newest-first", "{r}");
    assert_eq!(r["records"], 15_000, "{r}");
    assert!(!of_type(&once, "dyninst").is_empty());
}

#[test]
fn the_report_shows_what_spgo_will_learn_with_the_dyninst_figures() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let option = format!("/html:{}", html.display());
    let o = run_in(
        &fixtures::dir(),
        &[&option, "/pdb:lbr.pdb", "/image:lbr.exe", "lbr.spt"],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let page = scraper::Html::parse_document(&std::fs::read_to_string(&html).unwrap());
    let select = |s: &str| scraper::Selector::parse(s).unwrap();
    assert_eq!(page.select(&select("h2#lbr-ranges")).count(), 1);
    let rows: Vec<Vec<String>> = page
        .select(&select("table.dyninst tbody tr"))
        .map(|r| {
            r.select(&select("td"))
                .map(|c| c.text().collect())
                .collect()
        })
        .collect();
    // The same figures as /dyninst's.
    let dyninst = run_dyninst();
    let expected: Vec<(String, String)> = of_type(&dyninst, "dyninst")
        .iter()
        .map(|l| {
            (
                l["function"].as_str().unwrap().to_owned(),
                l["instructions"].to_string(),
            )
        })
        .collect();
    let got: Vec<(String, String)> = rows.iter().map(|r| (r[4].clone(), r[0].clone())).collect();
    assert_eq!(got, expected);
}

/// What one function's `dyninst` and `coverage` lines give: instructions, share, blocks,
/// covered.
type Figures = (u64, f64, u64, u64);

/// What one trace's `/dyninst:0` and `/coverage` give: its `lbr_ranges` line and each
/// function's figures.
fn standalone(trace: &str) -> (Value, BTreeMap<String, Figures>) {
    let args = [
        "/json",
        "/dyninst:0",
        "/coverage",
        "/top:1000",
        "/pdb:lbr.pdb",
        "/image:lbr.exe",
        trace,
    ];
    let lines = json_lines(&run_in(&fixtures::dir(), &args));
    let mut by_name = BTreeMap::new();
    for l in of_type(&lines, "dyninst") {
        let c = of_type(&lines, "coverage")
            .into_iter()
            .find(|c| c["function"] == l["function"])
            .unwrap();
        let figures = (
            l["instructions"].as_u64().unwrap(),
            l["share"].as_f64().unwrap(),
            c["blocks"].as_u64().unwrap(),
            c["covered"].as_u64().unwrap(),
        );
        by_name.insert(l["function"].as_str().unwrap().to_owned(), figures);
    }
    (of_type(&lines, "lbr_ranges")[0].clone(), by_name)
}

#[test]
fn compared_traces_set_what_each_ones_ranges_give_side_by_side() {
    let walk = lbr_walk();
    let dir = tempfile::tempdir().unwrap();
    // NEW: the records whose newest branch leaves `scramble` dropped, written oldest first.
    let scramble = fixtures::functions("lbr")
        .into_iter()
        .find(|f| f.name == "scramble")
        .unwrap();
    let end = scramble.rva + scramble.size.unwrap();
    let kept: Vec<Vec<(u32, u32)>> = walk
        .records
        .iter()
        .filter(|r| !(scramble.rva..end).contains(&r[0].0))
        .cloned()
        .collect();
    assert!(kept.len() < walk.records.len());
    let base = dir.path().join("base.spt");
    let new = dir.path().join("new.spt");
    std::fs::write(&base, walk::trace("lbr", "lbr.exe", &walk.records, false)).unwrap();
    std::fs::write(&new, walk::trace("lbr", "lbr.exe", &kept, true)).unwrap();
    let (base, new) = (base.to_str().unwrap(), new.to_str().unwrap());
    let (base_ranges, base_functions) = standalone(base);
    let (new_ranges, new_functions) = standalone(new);
    let args = [
        "/json",
        "/compare",
        "/dyninst:0",
        "/pdb:lbr.pdb",
        "/image:lbr.exe",
        base,
        new,
    ];
    let o = run_in(&fixtures::dir(), &args);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    assert!(
        of_type(&lines, "dyninst").is_empty() && of_type(&lines, "lbr_ranges").is_empty(),
        "under /compare the views are of the two together"
    );
    let binary = of_type(&lines, "compare_lbr");
    assert_eq!(binary.len(), 1, "{lines:?}");
    let b = binary[0];
    assert_eq!(
        (&b["base_order"], &b["new_order"]),
        (&"newest-first".into(), &"oldest-first".into())
    );
    for (side, ranges) in [("base", &base_ranges), ("new", &new_ranges)] {
        for figure in ["instructions", "blocks", "covered"] {
            assert_eq!(
                b[format!("{side}_{figure}")],
                ranges[figure],
                "{side} {figure}"
            );
        }
    }
    let moved = of_type(&lines, "compare_lbr_function");
    let names: std::collections::BTreeSet<&String> =
        base_functions.keys().chain(new_functions.keys()).collect();
    assert_eq!(b["functions"].as_u64(), Some(names.len() as u64));
    assert_eq!(moved.len(), names.len(), "/dyninst:0 shows them all");
    let none = (0, 0.0, 0, 0);
    for m in &moved {
        let f = m["function"].as_str().unwrap();
        let p = base_functions.get(f).copied().unwrap_or(none);
        let q = new_functions.get(f).copied().unwrap_or(none);
        assert_eq!(m["base_instructions"].as_u64(), Some(p.0), "{f}");
        assert_eq!(m["new_instructions"].as_u64(), Some(q.0), "{f}");
        assert!(
            (m["base_share"].as_f64().unwrap() - p.1).abs() < 1e-12,
            "{f}"
        );
        assert!(
            (m["new_share"].as_f64().unwrap() - q.1).abs() < 1e-12,
            "{f}"
        );
        let delta = m["delta"].as_f64().unwrap();
        assert!((delta - (q.1 - p.1)).abs() < 1e-12, "{f}");
        let blocks = [
            &m["base_blocks"],
            &m["base_covered"],
            &m["new_blocks"],
            &m["new_covered"],
        ];
        assert_eq!(
            blocks.map(|v| v.as_u64().unwrap()),
            [p.2, p.3, q.2, q.3],
            "{f}"
        );
    }
    let deltas: Vec<f64> = moved
        .iter()
        .map(|m| m["delta"].as_f64().unwrap().abs())
        .collect();
    assert!(deltas.windows(2).all(|w| w[0] >= w[1]), "{deltas:?}");
    assert_eq!(
        moved[0]["function"], "scramble",
        "the function dropped moved most"
    );
    assert!(moved[0]["delta"].as_f64().unwrap() < 0.0);
}

#[test]
fn compared_ranges_in_text_name_both_sides_and_the_function_that_moved_most() {
    let args = [
        "/compare",
        "/coverage",
        "/top:2",
        "/pdb:lbr.pdb",
        "/image:lbr.exe",
        "lbr.spt",
        "lbr.spt",
    ];
    let o = run_in(&fixtures::dir(), &args);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    let block = text
        .split("\n\n")
        .find(|b| b.starts_with("LBR ranges of lbr.exe compared: "))
        .unwrap_or_else(|| panic!("{text}"));
    let lines: Vec<&str> = block.lines().collect();
    assert!(
        lines[1].starts_with("  BASE  newest-first, ")
            && lines[2].starts_with("  NEW   newest-first, ")
    );
    let rows = &lines[3..];
    assert_eq!(rows.len(), 3, "headings and /top:2 rows: {block}");
    assert!(rows[0].contains("covered base") && rows[0].ends_with("function"));
    // The same trace twice: nothing moved.
    assert!(rows[1..].iter().all(|r| r.contains(" +0.00 ")), "{block}");
    assert!(block.lines().next().unwrap().contains(", showing 2"));
}

#[test]
fn the_report_annotates_the_hottest_function_as_annotate_does() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let option = format!("/html:{}", html.display());
    let files = ["/pdb:lbr.pdb", "/image:lbr.exe", "lbr.spt"];
    let o = run_in(&fixtures::dir(), &[&[option.as_str()][..], &files].concat());
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let page = scraper::Html::parse_document(&std::fs::read_to_string(&html).unwrap());
    let select = |s: &str| scraper::Selector::parse(s).unwrap();
    let heading: String = page
        .select(&select("h2#annotated + h3"))
        .next()
        .expect("the section")
        .text()
        .collect();
    // The function that ran the most instructions: /dyninst's first row.
    let dyninst = run_dyninst();
    let hottest = of_type(&dyninst, "dyninst")[0]["function"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        heading.starts_with(&format!("lbr.exe!{hottest} at 0x")),
        "{heading}"
    );
    let cells = |r: scraper::ElementRef<'_>| -> Vec<String> {
        r.select(&select("td"))
            .map(|c| c.text().collect())
            .collect()
    };
    let rows: Vec<(String, String, String)> = page
        .select(&select("table.annotated tbody tr:not(.source)"))
        .map(|r| {
            let c = cells(r);
            (c[c.len() - 2].clone(), c[0].clone(), c[1].clone())
        })
        .collect();
    let option = format!("/annotate:{hottest}");
    let args = [&["/json", option.as_str()][..], &files].concat();
    let lines = json_lines(&run_in(&fixtures::dir(), &args));
    let expected: Vec<(String, String, String)> = of_type(&lines, "annotate")
        .iter()
        .map(|l| {
            (
                format!("0x{:08X}", l["rva"].as_u64().unwrap()),
                l["count"].to_string(),
                l["taken"].to_string(),
            )
        })
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(rows, expected);
    // Source lines above their instructions, as /annotate shows them.
    assert!(page.select(&select("table.annotated tr.source")).count() > 0);
}

#[test]
fn the_report_lists_the_conditional_branches_run_most_as_annotate_counts_them() {
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("r.html");
    let option = format!("/html:{}", html.display());
    let files = ["/pdb:lbr.pdb", "/image:lbr.exe", "lbr.spt"];
    let o = run_in(&fixtures::dir(), &[&[option.as_str()][..], &files].concat());
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let page = scraper::Html::parse_document(&std::fs::read_to_string(&html).unwrap());
    let select = |s: &str| scraper::Selector::parse(s).unwrap();
    let rows: Vec<Vec<String>> = page
        .select(&select("table.branches tbody tr"))
        .map(|r| {
            r.select(&select("td"))
                .map(|c| c.text().collect())
                .collect()
        })
        .collect();
    assert!(rows.len() >= 5, "{rows:?}");
    let ran: Vec<u64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(
        ran.windows(2).all(|w| w[0] >= w[1]),
        "the most run first: {ran:?}"
    );
    // Each row is a conditional jump of its function, with /annotate's count and taken.
    let mut annotated: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for r in &rows {
        let function = &r[4];
        let lines = annotated.entry(function.clone()).or_insert_with(|| {
            let option = format!("/annotate:{function}");
            let args = [&["/json", option.as_str()][..], &files].concat();
            json_lines(&run_in(&fixtures::dir(), &args))
        });
        let line = of_type(lines, "annotate")
            .into_iter()
            .find(|l| format!("0x{:08X}", l["rva"].as_u64().unwrap()) == r[5])
            .unwrap_or_else(|| panic!("{r:?} is an instruction of {function}"));
        let text = line["text"].as_str().unwrap();
        assert!(text.starts_with('j') && !text.starts_with("jmp"), "{text}");
        assert_eq!(
            (line["count"].to_string(), line["taken"].to_string()),
            (r[0].clone(), r[1].clone())
        );
        let fell: u64 = r[3].parse().unwrap();
        assert_eq!(fell, line["fall_through"].as_u64().unwrap());
    }
}

#[test]
fn records_whose_pairs_leave_the_image_are_skipped_and_counted() {
    // The walk's records, and 100 more whose branches lie past the image's end (another
    // module's code, as a real LBR stack holds when a sample spans a call into a DLL).
    let walk = lbr_walk();
    let outside: Vec<(u32, u32)> = (0..16)
        .map(|i| (0x7FFF_0000 + 0x40 * i, 0x7FFF_0020 + 0x40 * i))
        .collect();
    let mut records = walk.records.clone();
    records.extend(std::iter::repeat_n(outside, 100));
    let dir = tempfile::tempdir().unwrap();
    let clean = run(dir.path(), &walk.records, false, &["/dyninst:0"]);
    let mixed = run(dir.path(), &records, false, &["/dyninst:0"]);
    let ranges = |lines: &[Value]| of_type(lines, "lbr_ranges")[0].clone();
    let (c, m) = (ranges(&clean), ranges(&mixed));
    assert_eq!(m["order"], "newest-first", "{m}");
    assert_eq!(
        m["ranges"].as_u64().unwrap(),
        c["ranges"].as_u64().unwrap() + 100 * 15
    );
    assert_eq!(
        m["consistent"], c["consistent"],
        "none of theirs is consistent"
    );
    assert_eq!(m["instructions"], c["instructions"]);
    let shares = |lines: &[Value]| -> Vec<(Value, Value)> {
        of_type(lines, "dyninst")
            .iter()
            .map(|l| (l["function"].clone(), l["instructions"].clone()))
            .collect()
    };
    assert_eq!(shares(&mixed), shares(&clean));
}

#[test]
fn annotate_says_what_taken_counts_under_its_table() {
    let o = run_in(
        &fixtures::dir(),
        &[
            "/annotate:classify",
            "/pdb:lbr.pdb",
            "/image:lbr.exe",
            "lbr.spt",
        ],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Annotated classify"))
        .collect();
    // The legend is the table's last line: taken leaves out each record's oldest branch,
    // and the flow is said to be inferred.
    assert_eq!(
        table.last().copied(),
        Some(
            "  count: runs by the consistent LBR ranges; taken: branches from it that end a \
             consistent range (a record's oldest branch ends none: /callgraph counts it too); \
             fall: count - taken; flow: its block's count by the flow, inferred so that counts \
             add up (-: none)"
        ),
        "{text}"
    );
}

#[test]
fn an_image_of_arm64_code_is_read_and_every_lbr_view_says_it_is_not_decoded() {
    // lbr.exe with its COFF header's machine made ARM64 (0xAA64): the same build, by its
    // CodeView identity, and code this decoder does not read.
    let mut image = std::fs::read(fixtures::dir().join("lbr.exe")).unwrap();
    let pe = u32::from_le_bytes(image[0x3C..0x40].try_into().unwrap()) as usize;
    assert_eq!(&image[pe..pe + 6], b"PE\0\0\x64\x86", "an x64 image");
    image[pe + 4..pe + 6].copy_from_slice(&0xAA64u16.to_le_bytes());
    let dir = tempfile::tempdir().unwrap();
    let arm = dir.path().join("lbr.exe");
    std::fs::write(&arm, image).unwrap();
    let image = format!("/image:{}", arm.display());
    let views: [(&str, &str); 4] = [
        ("/callgraph", "no call edge from LBR"),
        ("/coverage", "no LBR range read"),
        ("/dyninst", "no LBR range read"),
        ("/annotate:scramble", "no instruction shown"),
    ];
    for (view, what) in views {
        let o = run_in(&fixtures::dir(), &[view, "/pdb:lbr.pdb", &image, "lbr.spt"]);
        let err = stderr(&o);
        let said =
            format!("{view}: lbr.exe: its image is ARM64 code, which is not decoded yet: {what}");
        assert!(err.contains(&said), "{view}: {err}");
        assert_eq!(status(&o), 1, "{view} showed nothing: {err}");
    }
    // Its records are counted and no range is read of them; nor without the PDB.
    for files in [vec!["/pdb:lbr.pdb", &image], vec!["/image:lbr.exe"]] {
        let args = [&["/json", "/dyninst"], &files[..], &["lbr.spt"]].concat();
        let lines = json_lines(&run_in(&fixtures::dir(), &args));
        let r = of_type(&lines, "lbr_ranges")[0];
        assert_eq!(
            (&r["records"], &r["ranges"]),
            (&400.into(), &0.into()),
            "{files:?}: {r}"
        );
    }
}

#[test]
fn records_of_two_pairs_or_more_are_read_for_the_binary_that_holds_them() {
    // lbr.exe as the second binary of its trace (progid 1, app.exe before it), its walk's
    // records cut to two pairs (one range) and to one pair (none), and whole.
    let walked = lbr_walk().records;
    let (two, one, whole) = (&walked[..100], &walked[100..150], &walked[150..200]);
    let mut b = SptBuilder::new();
    for image in ["app", "lbr"] {
        let (guid, age) = fixtures::codeview(image);
        let name = b.string(&format!("{image}.exe"));
        b.program_id(Guid(guid), age, name);
    }
    b.binary_id(1);
    for (records, pairs) in [(two, 2), (one, 1), (whole, 16)] {
        for r in records {
            b.ip(RETIRE_BR_INSTR, &[r[0].1]);
            b.lbr(&r[..pairs]);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("second.spt");
    std::fs::write(&trace, b.build()).unwrap();
    let trace = trace.to_str().unwrap();
    let args = [
        "/pdb:lbr.pdb",
        "/image:lbr.exe",
        "/dyninst",
        "/callgraph",
        trace,
    ];
    let o = run_in(&fixtures::dir(), &[&["/json"], &args[..]].concat());
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    let r = of_type(&lines, "lbr_ranges");
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(
        (&r[0]["progid"], &r[0]["name"]),
        (&1.into(), &"lbr.exe".into())
    );
    assert_eq!(r[0]["records"], 150, "{}", r[0]);
    assert_eq!(r[0]["ranges"], 100 + 50 * 15, "{}", r[0]);
    let edges = of_type(&lines, "call_edge");
    assert!(!edges.is_empty());
    assert!(
        edges
            .iter()
            .all(|e| e["progid"] == 1 && e["name"] == "lbr.exe")
    );
    let text = stdout(&run_in(&fixtures::dir(), &args));
    assert!(text.contains("Call graph of progid 1 (lbr.exe):"), "{text}");
}

#[test]
fn x86_code_is_read_as_x64_code_is() {
    // lbr.c built for 32-bit x86 (lbr32.exe, a PE32 image): a walk over its code read in
    // both orders, every range consistent in the order written, the instructions by function
    // within three points of what the walk ran, and its calls made edges.
    let walk = walk::walk("lbr32", "lbr32", "main_entry", SAMPLING);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("lbr32.spt");
    std::fs::write(
        &trace,
        walk::trace("lbr32", "lbr32.exe", &walk.records, false),
    )
    .unwrap();
    let args = [
        "/json",
        "/dyninst:0",
        "/callgraph",
        "/pdb:lbr32.pdb",
        "/image:lbr32.exe",
        trace.to_str().unwrap(),
    ];
    let o = run_in(&fixtures::dir(), &args);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    let r = of_type(&lines, "lbr_ranges")[0];
    assert_eq!(r["order"], "newest-first", "{r}");
    assert_eq!(r["consistent"], r["ranges"], "{r}");
    assert_eq!(
        r["ranges"],
        (SAMPLING.records * (SAMPLING.depth - 1)) as u64,
        "{r}"
    );
    let estimated: BTreeMap<String, f64> = of_type(&lines, "dyninst")
        .iter()
        .map(|l| {
            (
                l["function"].as_str().unwrap().to_owned(),
                l["share"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(estimated.len() >= 5, "{estimated:?}");
    for function in walk.instructions.keys() {
        let (got, ran) = (
            estimated.get(function).copied().unwrap_or(0.0),
            walk.share(function),
        );
        assert!(
            (got - ran).abs() < 0.03,
            "{function}: {got:.4} against {ran:.4}"
        );
    }
    let calls = of_type(&lines, "call_edge");
    assert!(
        calls
            .iter()
            .any(|e| e["caller"] == "main_entry" && e["kind"] == "call"),
        "{calls:?}"
    );
}
