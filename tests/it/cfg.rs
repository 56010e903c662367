//! `/cfg`: a function's graph on the image's blocks with its flow (section 18), on the
//! real `lbr.exe` and the trace recorded from a run of it (`testdata/pe/lbr.spt`).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::support::{json_lines, run, status, stderr, stdout};

const LBR: [&str; 3] = [
    "/pdb:testdata/pe/lbr.pdb",
    "/image:testdata/pe/lbr.exe",
    "testdata/pe/lbr.spt",
];

/// `sptdump /json ARGS... LBR...`'s lines of the types given.
fn lines(args: &[&str], types: &[&str]) -> Vec<Value> {
    let mut all = vec!["/json"];
    all.extend_from_slice(args);
    all.extend_from_slice(&LBR);
    let out = run(&all);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let lines = json_lines(&out);
    let wanted = |l: &Value| types.iter().any(|t| l["type"] == *t);
    lines.into_iter().filter(wanted).collect()
}

/// Each function's `cfg_block` and `cfg_edge` lines, by the function's name.
fn graphs(args: &[&str]) -> BTreeMap<String, (Vec<Value>, Vec<Value>)> {
    let mut graphs: BTreeMap<String, (Vec<Value>, Vec<Value>)> = BTreeMap::new();
    for line in lines(args, &["cfg_block", "cfg_edge"]) {
        let function = line["function"].as_str().unwrap().to_owned();
        let graph = graphs.entry(function).or_default();
        match line["type"].as_str() {
            Some("cfg_block") => graph.0.push(line),
            _ => graph.1.push(line),
        }
    }
    graphs
}

fn count(v: &Value) -> Option<u64> {
    v.as_u64()
}

/// `sptdump /json ARGS /pdb:lbr.pdb /image:lbr.exe TRACE`'s lines.
fn on_lbr(trace: &str, args: &[&str]) -> Vec<Value> {
    let mut all = vec!["/json"];
    all.extend_from_slice(args);
    all.extend_from_slice(&LBR[..2]);
    all.push(trace);
    let out = run(&all);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    json_lines(&out)
}

/// A trace of lbr.exe of `records` (written in a test, not recorded), in a folder of its own.
fn written(records: &[Vec<(u32, u32)>]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("written.spt");
    std::fs::write(
        &path,
        sptdump_testkit::walk::trace("lbr", "lbr.exe", records, false),
    )
    .unwrap();
    let path = path.display().to_string();
    (dir, path)
}

/// Every block of every function that ran conserves exactly: its flow is the sum of its
/// incoming edges' (the entry's included) and of its outgoing edges' (the exits' included).
#[test]
fn every_block_of_every_function_conserves() {
    let graphs = graphs(&["/cfg", "/top:1000"]);
    assert!(graphs.len() >= 4, "{:?}", graphs.keys());
    for (function, (blocks, edges)) in &graphs {
        for block in blocks {
            let id = &block["id"];
            let flow = count(&block["flow"]).expect("every function here has its flow");
            let sum = |end: &str| -> u64 {
                let mine = edges.iter().filter(|e| &e[end] == id);
                mine.map(|e| count(&e["flow"]).unwrap()).sum()
            };
            assert_eq!(sum("to"), flow, "{function}: into block {id}");
            assert_eq!(sum("from"), flow, "{function}: out of block {id}");
        }
    }
}

/// A block's observed count is its instructions' largest count by the ranges, as
/// `/annotate` shows them; a block none of whose instructions counted is unknown (null).
#[test]
fn a_block_is_observed_at_its_largest_instruction_count() {
    let graphs = graphs(&["/cfg:scramble"]);
    let (blocks, _) = &graphs["scramble"];
    let rows = lines(&["/annotate:scramble"], &["annotate"]);
    assert!(!blocks.is_empty() && !rows.is_empty());
    for block in blocks {
        let (rva, end) = (
            block["rva"].as_u64().unwrap(),
            block["end"].as_u64().unwrap(),
        );
        let inside = rows
            .iter()
            .filter(|r| (rva..end).contains(&r["rva"].as_u64().unwrap()));
        let largest = inside.map(|r| r["count"].as_u64().unwrap()).max().unwrap();
        let expected = (largest > 0).then_some(largest);
        assert_eq!(count(&block["observed"]), expected, "block {}", block["id"]);
    }
}

/// The fall-through from a conditional jump is seen as the jump's count less its taken
/// branches, as `/annotate` gives them.
#[test]
fn a_fall_through_is_seen_as_its_jumps_count_less_taken() {
    let graphs = graphs(&["/cfg:scramble"]);
    let (blocks, edges) = &graphs["scramble"];
    let rows = lines(&["/annotate:scramble"], &["annotate"]);
    let mut checked = 0;
    for e in edges.iter().filter(|e| e["kind"] == "fall") {
        let from = blocks.iter().find(|b| b["id"] == e["from"]).unwrap();
        let end = from["end"].as_u64().unwrap();
        let last = rows
            .iter()
            .rfind(|r| r["rva"].as_u64().unwrap() < end)
            .unwrap();
        let Some(fall) = last["fall_through"].as_u64() else {
            continue;
        };
        assert_eq!(count(&e["observed"]), (fall > 0).then_some(fall), "{e}");
        checked += 1;
    }
    assert!(checked >= 3, "conditional jumps checked: {checked}");
}

/// The code that runs into alignment `nop`s runs on through them: the edge reaches the block
/// after the padding, which is not a block of the graph (in `scramble`, `je` at 0x1081 falls
/// into the `nop` at 0x1083 and on into the loop at 0x1090).
#[test]
fn code_runs_on_through_alignment_padding() {
    let graphs = graphs(&["/cfg:scramble"]);
    let (blocks, edges) = &graphs["scramble"];
    let id_at = |rva: u64| {
        blocks
            .iter()
            .find(|b| b["rva"] == rva)
            .map(|b| b["id"].clone())
    };
    assert_eq!(id_at(0x1083), None, "padding is no block");
    let (before, after) = (id_at(0x107E).unwrap(), id_at(0x1090).unwrap());
    let fall = edges
        .iter()
        .find(|e| e["from"] == before && e["kind"] == "fall")
        .unwrap();
    assert_eq!(fall["to"], after);
    assert!(count(&fall["flow"]).unwrap() > 0);
}

/// A loop entered from code nobody sampled is entered at least once: its flow reaches it
/// from the function's entry (`main_entry`'s loop, whose entries no pair shows).
#[test]
fn a_loop_whose_entry_nobody_saw_is_entered() {
    let graphs = graphs(&["/cfg:main_entry"]);
    let (blocks, edges) = &graphs["main_entry"];
    let entry = edges.iter().find(|e| e["kind"] == "entry").unwrap();
    assert!(entry["observed"].is_null());
    assert!(count(&entry["flow"]).unwrap() >= 1);
    assert!(blocks.iter().all(|b| count(&b["flow"]).unwrap() >= 1));
}

/// The text names what is seen and what is inferred, and says a name no function that ran
/// bears is an error naming the closest.
#[test]
fn text_labels_the_flow_and_an_unknown_name_is_an_error() {
    let mut args = vec!["/cfg:sum_table"];
    args.extend_from_slice(&LBR);
    let out = run(&args);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("Flow of sum_table in progid 0 (lbr.exe) at 0x00001100"),
        "{text}"
    );
    assert!(text.contains("observed  flow"), "{text}");
    assert!(text.contains("flow: inferred"), "{text}");
    let mut args = vec!["/cfg:sum_tabel"];
    args.extend_from_slice(&LBR);
    let out = run(&args);
    assert_eq!(status(&out), 1);
    assert!(
        stderr(&out).contains("the closest: sum_table"),
        "{}",
        stderr(&out)
    );
}

/// `/check` notes the blocks that ran by the flow but that no range covered, with their
/// share of the binary's flow, as many as `/coverage` counts.
#[test]
fn check_notes_the_falsely_cold_blocks_coverage_counts() {
    let verdicts = lines(&["/check"], &["check"]);
    let note = verdicts
        .iter()
        .find(|v| v["code"] == "lbr-falsely-cold")
        .unwrap();
    assert_eq!(note["severity"], "note");
    let message = note["message"].as_str().unwrap();
    let coverage = lines(&["/coverage", "/top:100"], &["coverage"]);
    let cold: u64 = coverage
        .iter()
        .map(|c| c["falsely_cold"].as_u64().unwrap())
        .sum();
    assert!(cold > 0);
    let said = format!("{cold} blocks ran by the flow but no LBR range covered them");
    assert!(message.starts_with(&said), "{message}");
}

/// `/cfg:F /svg:FILE` draws F's graph: a whole SVG picture with a box per block (its id,
/// RVA and flow), the entry and the exit, and every edge's flow; a block that ran by the
/// flow but no range covered has the falsely-cold border. `/svg` without a function named is
/// a usage error.
#[test]
fn svg_draws_a_functions_graph_and_needs_one_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("main_entry.svg");
    let svg = format!("/svg:{}", path.display());
    let mut args = vec!["/cfg:main_entry", svg.as_str()];
    args.extend_from_slice(&LBR);
    let out = run(&args);
    assert_eq!(status(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).contains("the graph of main_entry in lbr.exe is drawn to"));
    let picture = std::fs::read_to_string(&path).unwrap();
    assert!(picture.contains("<svg ") && picture.trim_end().ends_with("</svg>"));
    let graphs = graphs(&["/cfg:main_entry"]);
    let (blocks, edges) = &graphs["main_entry"];
    for b in blocks {
        let label = format!("{}  0x{:X}", b["id"], b["rva"].as_u64().unwrap());
        assert!(picture.contains(&label), "{label} in {picture}");
        assert!(picture.contains(&format!("flow {}", b["flow"])), "{b}");
    }
    assert!(
        picture.contains(">entry<") && picture.contains(">exit<"),
        "{picture}"
    );
    assert_eq!(edges.len(), 5);
    assert!(picture.contains("#1971c2"), "the falsely-cold border");

    let mut args = vec!["/cfg", svg.as_str()];
    args.extend_from_slice(&LBR);
    let out = run(&args);
    assert_eq!(status(&out), 2);
    assert!(
        stderr(&out).contains("give it /cfg:FUNCTION"),
        "{}",
        stderr(&out)
    );
}

/// Every observation of every function's graph is what the records say, recomputed here from
/// the LBR pairs as `/event` lists them, the ranges' instruction counts as `/annotate` gives
/// them, and llvm-objdump's listing of lbr.exe, on the dense recording and on the sparse one:
///
/// - a block: its instructions' largest count; unknown (null) when none counted;
/// - an entry: the pairs into the function's first byte from another function, or from a
///   call (a function calling itself);
/// - a conditional jump's taken side and a direct jump: the pairs from the jump to its
///   target;
/// - a fall-through: the count of the block's last instruction less the pairs taken from it;
/// - an exit: never seen (null).
///
/// Every function with an observation is shown, and none without one.
#[test]
fn every_observation_is_the_records_own() {
    use sptdump_testkit::fixtures;

    let code = fixtures::disassembly("lbr", "lbr");
    let pdb = fixtures::functions("lbr");
    let function_of = |rva: u32| {
        pdb.iter()
            .filter(|f| f.rva <= rva && rva < f.rva + f.size.unwrap_or(0))
            .map(|f| f.rva)
            .next()
    };
    let instruction = |rva: u32| code.iter().find(|c| c.0 == rva);
    for trace in ["testdata/pe/lbr.spt", "testdata/pe/lbr-sparse.spt"] {
        let json = |args: &[&str]| on_lbr(trace, args);
        // The pairs, each with its record's hits; and the branches taken from the end of
        // each range that runs straight (the pairs newest first, as lbr.exe's are read: the
        // range from where the older pair went to where the newer left, in one function, no
        // jump, call or return before its end).
        let mut pairs: BTreeMap<(u32, u32), u64> = BTreeMap::new();
        let mut from: BTreeMap<u32, u64> = BTreeMap::new();
        let straight = |start: u32, end: u32| {
            let at = code.iter().position(|c| c.0 == start);
            let run = at.map(|i| code[i..].iter().take_while(|c| c.0 < end));
            function_of(start).is_some_and(|f| function_of(end) == Some(f))
                && start <= end
                && code.iter().any(|c| c.0 == end)
                && run
                    .is_some_and(|mut r| r.all(|c| !matches!(c.1.as_str(), "jmp" | "call" | "ret")))
        };
        for record in json(&["/event"]).iter().filter(|l| l["type"] == "lbr") {
            let hits = record["hits"].as_u64().unwrap();
            let branches: Vec<(u32, u32)> = record["branches"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    (
                        b["from"].as_u64().unwrap() as u32,
                        b["to"].as_u64().unwrap() as u32,
                    )
                })
                .collect();
            for &pair in &branches {
                *pairs.entry(pair).or_default() += hits;
            }
            for w in branches.windows(2) {
                let (newer, older) = (w[0], w[1]);
                if straight(older.1, newer.0) {
                    *from.entry(newer.0).or_default() += hits;
                }
            }
        }
        let seen = |n: u64| (n > 0).then_some(n);
        let lines = json(&["/cfg", "/top:all"]);
        let mut functions: BTreeMap<String, (Vec<&Value>, Vec<&Value>)> = BTreeMap::new();
        for l in &lines {
            let f = functions.entry(l["function"].as_str().unwrap_or("").to_owned());
            match l["type"].as_str() {
                Some("cfg_block") => f.or_default().0.push(l),
                Some("cfg_edge") => f.or_default().1.push(l),
                _ => {}
            }
        }
        assert!(functions.len() >= 5, "{trace}: {:?}", functions.keys());
        for (name, (blocks, edges)) in &functions {
            let what = format!("{trace}: {name}");
            let annotated = json(&[&format!("/annotate:{name}")]);
            let counts: BTreeMap<u32, u64> = annotated
                .iter()
                .filter(|l| l["type"] == "annotate")
                .map(|l| {
                    (
                        l["rva"].as_u64().unwrap() as u32,
                        l["count"].as_u64().unwrap(),
                    )
                })
                .collect();
            let rva = blocks[0]["function_rva"].as_u64().unwrap() as u32;
            let block = |id: &Value| blocks.iter().find(|b| &b["id"] == id).unwrap();
            let span = |b: &Value| {
                (
                    b["rva"].as_u64().unwrap() as u32,
                    b["end"].as_u64().unwrap() as u32,
                )
            };
            // The last instruction of a block.
            let last = |b: &Value| {
                let (start, end) = span(b);
                code.iter().rfind(|c| start <= c.0 && c.0 < end).unwrap()
            };
            let mut observed_any = false;
            for b in blocks {
                let (start, end) = span(b);
                let largest = counts.range(start..end).map(|(_, &n)| n).max().unwrap_or(0);
                assert_eq!(
                    count(&b["observed"]),
                    seen(largest),
                    "{what}: block {}",
                    b["id"]
                );
                observed_any |= largest > 0;
            }
            for e in edges.iter() {
                let expected = match e["kind"].as_str().unwrap() {
                    "entry" => {
                        let into = pairs.range((0, rva)..).filter(|((f, t), _)| {
                            let call = instruction(*f).is_some_and(|c| c.1 == "call");
                            *t == rva && (function_of(*f) != Some(rva) || call)
                        });
                        seen(into.map(|(_, &n)| n).sum())
                    }
                    "taken" | "jump" => {
                        let at = last(block(&e["from"]));
                        let target = at.2.expect("a direct jump");
                        seen(pairs.get(&(at.0, target)).copied().unwrap_or(0))
                    }
                    "fall" => {
                        let at = last(block(&e["from"]));
                        let ran = counts.get(&at.0).copied().unwrap_or(0);
                        seen(ran.saturating_sub(from.get(&at.0).copied().unwrap_or(0)))
                    }
                    _ => None,
                };
                assert_eq!(count(&e["observed"]), expected, "{what}: {e}");
                observed_any |= expected.is_some();
            }
            assert!(observed_any, "{what}: shown without an observation");
        }
    }
}

/// A function as `/cfg` lists it: its RVA, the instructions it ran by the flow, the blocks
/// that ran by the flow and those of them never covered, and its blocks as (start, end,
/// flow).
type Listed = (u64, u64, u64, u64, Vec<(u64, u64, u64)>);

/// What the other LBR views say of the flow is what `/cfg`'s blocks add up to: `/coverage`'s
/// `ran` (blocks with flow), `falsely_cold` (with flow, never covered) and
/// `flow_instructions` (flow times instructions), `/dyninst`'s `flow_instructions`, and
/// `/annotate`'s `flow` (the flow of the instruction's block); `/cfg` lists the functions
/// that ran the most instructions by the flow first (then by RVA).
#[test]
fn the_views_figures_of_the_flow_are_cfgs_blocks() {
    for trace in ["testdata/pe/lbr.spt", "testdata/pe/lbr-sparse.spt"] {
        let json = |args: &[&str], kind: &str| {
            let lines = on_lbr(trace, args).into_iter();
            lines.filter(|l| l["type"] == kind).collect::<Vec<_>>()
        };
        // Per function, in the order /cfg lists them: (rva, flow instructions, ran, falsely
        // cold, its blocks as (start, end, flow)).
        let mut listed: Vec<Listed> = Vec::new();
        for b in json(&["/cfg", "/top:all"], "cfg_block") {
            let rva = b["function_rva"].as_u64().unwrap();
            if listed.last().is_none_or(|f| f.0 != rva) {
                listed.push((rva, 0, 0, 0, Vec::new()));
            }
            let f = listed.last_mut().unwrap();
            let flow = b["flow"].as_u64().unwrap();
            f.1 += flow * b["instructions"].as_u64().unwrap();
            f.2 += u64::from(flow > 0);
            f.3 += u64::from(flow > 0 && b["observed"].is_null());
            f.4.push((b["rva"].as_u64().unwrap(), b["end"].as_u64().unwrap(), flow));
        }
        assert!(listed.len() >= 5, "{trace}");
        let order: Vec<(std::cmp::Reverse<u64>, u64)> = listed
            .iter()
            .map(|f| (std::cmp::Reverse(f.1), f.0))
            .collect();
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(
            order, sorted,
            "{trace}: /cfg lists the hottest by the flow first"
        );
        let of = |rva: &Value| {
            listed
                .iter()
                .find(|f| f.0 == rva.as_u64().unwrap())
                .unwrap()
        };
        let coverage = json(&["/coverage", "/top:all"], "coverage");
        assert_eq!(coverage.len(), listed.len(), "{trace}");
        for c in &coverage {
            let f = of(&c["rva"]);
            let figures = [&c["flow_instructions"], &c["ran"], &c["falsely_cold"]];
            let figures = figures.map(|v| v.as_u64().unwrap());
            assert_eq!(figures, [f.1, f.2, f.3], "{trace}: {c}");
        }
        for d in json(&["/dyninst", "/top:all"], "dyninst") {
            assert_eq!(
                d["flow_instructions"].as_u64(),
                Some(of(&d["rva"]).1),
                "{d}"
            );
        }
        for f in &listed {
            let name = coverage
                .iter()
                .find(|c| c["rva"].as_u64() == Some(f.0))
                .unwrap();
            let wanted = format!("/annotate:{}", name["function"].as_str().unwrap());
            for row in json(&[&wanted], "annotate") {
                let at = row["rva"].as_u64().unwrap();
                let block = f.4.iter().find(|b| b.0 <= at && at < b.1);
                assert_eq!(row["flow"].as_u64(), block.map(|b| b.2), "{trace}: {row}");
            }
        }
    }
}

/// Calls tie functions together on the image's graph: a function no record saw gets the flow
/// its callers' call sites ran. Five records (written here, not recorded: each is one return
/// into `main_entry`'s loop and the loop's jump back) observe the loop and nothing of `step`,
/// which the loop calls; `step` then enters as often as the loop's block ran by the flow, and
/// `classify` and `sum_table`, which `step` calls, as often as `step`'s block. None of the
/// three is shown without its name (nothing saw them), and each is with it.
#[test]
fn a_callee_no_record_saw_gets_the_flow_its_callers_call_sites_ran() {
    // scramble's `ret` into main_entry after its call of step, then the loop's `jne` back.
    let record = vec![(0x12F1, 0x12E0), (0x10A7, 0x12EC)];
    let (_dir, path) = written(&vec![record; 5]);
    let graph = |args: &[&str]| {
        let lines = on_lbr(&path, args).into_iter();
        let graph = |l: &Value| l["type"] == "cfg_block" || l["type"] == "cfg_edge";
        lines.filter(graph).collect::<Vec<_>>()
    };
    let shown = graph(&["/cfg", "/top:all"]);
    let names: std::collections::BTreeSet<&str> = shown
        .iter()
        .map(|l| l["function"].as_str().unwrap())
        .collect();
    assert_eq!(names.into_iter().collect::<Vec<_>>(), ["main_entry"]);
    // The flow of the block of `caller` that holds `site`, and what enters `callee`.
    let block_flow = |lines: &[Value], site: u64| {
        let b = lines.iter().find(|l| {
            l["type"] == "cfg_block"
                && l["rva"].as_u64().unwrap() <= site
                && site < l["end"].as_u64().unwrap()
        });
        count(&b.unwrap()["flow"]).unwrap()
    };
    let entered = |lines: &[Value]| {
        let entry = lines.iter().find(|l| l["kind"] == "entry").unwrap();
        assert!(entry["observed"].is_null(), "{entry}");
        count(&entry["flow"]).unwrap()
    };
    let sent = block_flow(&shown, 0x12E7);
    assert!(
        sent >= 5,
        "the loop ran at least as often as it was seen: {sent}"
    );
    let step = graph(&["/cfg:step"]);
    assert!(
        step.iter().all(|l| l["observed"].is_null()),
        "nothing saw step"
    );
    assert_eq!(
        entered(&step),
        sent,
        "step enters as often as main_entry calls it"
    );
    let at_step = block_flow(&step, 0x1299);
    assert_eq!(block_flow(&step, 0x12A8), at_step);
    for callee in ["classify", "sum_table"] {
        let lines = graph(&[&format!("/cfg:{callee}")]);
        assert_eq!(
            entered(&lines),
            at_step,
            "{callee} enters as often as step calls it"
        );
    }
}

/// Callers are solved before their callees, even where a record saw both: one more record,
/// of `step` between its calls of `classify` and `sum_table`, sees `step` once, and `step`,
/// the lower RVA, still waits for `main_entry`, whose loop sends it what it ran. Its entry
/// is then seen as often as the loop ran (6), its one block once: meeting anywhere between
/// costs the same, and the flow enters it more than once, never more than it was sent.
/// Solved before its caller, nothing would raise its entry, and it would enter once.
#[test]
fn a_callee_seen_too_is_solved_after_its_callers() {
    let mut records = vec![vec![(0x12F1, 0x12E0), (0x10A7, 0x12EC)]; 5];
    // step's call of sum_table, after classify's `ret` into step.
    records.push(vec![(0x12A8, 0x1100), (0x10FB, 0x129E)]);
    let (_dir, path) = written(&records);
    let lines = on_lbr(&path, &["/cfg", "/top:all"]);
    let of = |f: &'static str| lines.iter().filter(move |l| l["function"] == f);
    let step_block = of("step").find(|l| l["type"] == "cfg_block").unwrap();
    assert_eq!(
        count(&step_block["observed"]),
        Some(1),
        "one record saw step"
    );
    let loop_block = of("main_entry")
        .find(|l| l["type"] == "cfg_block" && l["rva"] == 0x12E0)
        .unwrap();
    let sent = count(&loop_block["flow"]).unwrap();
    assert!(sent >= 5, "{sent}");
    let entry = of("step").find(|l| l["kind"] == "entry").unwrap();
    let entered = count(&entry["flow"]).unwrap();
    assert!(
        1 < entered && entered <= sent,
        "step enters {entered} times, main_entry calls it {sent} times"
    );
}

/// An entry nobody saw is unknown, not zero, when no caller sends flow either: three records
/// see `classify`'s odd path (its `jne` taken, on to its `ret`) and neither its entry nor a
/// caller, and the flow enters it three times. Were the entry seen as zero, raising it
/// would cost more than lowering what was seen, and `classify` would not run at all.
#[test]
fn an_entry_nobody_saw_is_raised_to_what_ran() {
    let record = vec![(0x10FB, 0x129E), (0x10E8, 0x10F4)];
    let (_dir, path) = written(&vec![record; 3]);
    let lines = on_lbr(&path, &["/cfg:classify"]);
    let entry = lines.iter().find(|l| l["kind"] == "entry").unwrap();
    assert!(entry["observed"].is_null(), "{entry}");
    assert_eq!(count(&entry["flow"]), Some(3), "{entry}");
    let odd = lines.iter().find(|l| l["rva"] == 0x10F4).unwrap();
    assert_eq!(
        (count(&odd["observed"]), count(&odd["flow"])),
        (Some(3), Some(3))
    );
}
