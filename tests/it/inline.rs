//! Inline frames end to end: `/functions`, `/folded` and `/flamegraph` on `inline.spt`, a
//! trace of the -O2 fixture `inline.exe`, checked against what llvm-symbolizer said of every
//! address (`testdata/pe/inline.symbolizer.txt`), never against sptdump's own reading.

use std::collections::BTreeMap;

use serde_json::Value;
use sptdump_testkit::fixtures::{self, INLINE_STACKS};

use crate::support::{json_lines, run_in, stdout};

fn run(args: &[&str]) -> std::process::Output {
    let o = run_in(&fixtures::dir(), args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The folded stacks `inline.spt` must give: each frame's address looked up (return
/// addresses one byte back) in llvm-symbolizer's output, its chain outermost first, every
/// inlined frame with FlameGraph's `_[i]`; without inline frames, the outermost function of
/// each chain alone.
fn expected_folded(inline: bool) -> BTreeMap<String, u128> {
    let mut out = BTreeMap::new();
    for (frames, records) in INLINE_STACKS {
        let mut names: Vec<String> = Vec::new();
        for (i, &(name, offset)) in frames.iter().enumerate().rev() {
            let rva = fixtures::function("inline", name).rva + offset;
            let at = if i == 0 { rva } else { rva - 1 };
            let chain = fixtures::symbolized("inline", at);
            let outermost = chain.len() - 1;
            for (depth, (function, _, _)) in chain.iter().enumerate().rev() {
                if depth == outermost {
                    names.push(format!("inline.exe!{function}"));
                } else if inline {
                    names.push(format!("inline.exe!{function}_[i]"));
                }
            }
        }
        *out.entry(names.join(";")).or_default() +=
            records.iter().map(|&h| u128::from(h)).sum::<u128>();
    }
    out
}

fn folded_of(text: &str) -> BTreeMap<String, u128> {
    text.lines()
        .map(|l| {
            let (stack, hits) = l.rsplit_once(' ').unwrap();
            (stack.to_owned(), hits.parse().unwrap())
        })
        .collect()
}

#[test]
fn folded_stacks_carry_the_inline_chains_llvm_symbolizer_reads() {
    let o = run(&["/folded", "/pdb:inline.pdb", "inline.spt"]);
    let expected = expected_folded(true);
    assert!(
        expected
            .keys()
            .any(|s| s.contains("_[i];inline.exe!digest;")),
        "a call in inlined code: {expected:?}"
    );
    assert!(expected.keys().any(|s| s.matches("_[i]").count() == 3));
    assert_eq!(folded_of(&stdout(&o)), expected);

    let o = run(&["/folded", "/noinline", "/pdb:inline.pdb", "inline.spt"]);
    assert_eq!(folded_of(&stdout(&o)), expected_folded(false));
}

#[test]
fn an_inlined_function_has_its_own_inclusive_and_exclusive_hits() {
    let o = run(&["/functions", "/json", "/pdb:inline.pdb", "inline.spt"]);
    let line: Value = json_lines(&o)
        .into_iter()
        .find(|v| v["type"] == "functions" && v["source"] == "ETW_CALLSTACK")
        .unwrap();
    // Inclusive and exclusive from the expected folded stacks, by function.
    let mut inclusive: BTreeMap<String, u128> = BTreeMap::new();
    let mut exclusive: BTreeMap<String, u128> = BTreeMap::new();
    for (stack, hits) in expected_folded(true) {
        let frames: Vec<&str> = stack
            .split(';')
            .map(|f| f.trim_end_matches("_[i]"))
            .collect();
        *exclusive
            .entry(frames.last().unwrap().to_string())
            .or_default() += hits;
        let mut seen: Vec<&str> = frames.clone();
        seen.sort_unstable();
        seen.dedup();
        for f in seen {
            *inclusive.entry(f.to_owned()).or_default() += hits;
        }
    }
    let rows = line["top"].as_array().unwrap();
    assert_eq!(rows.len(), inclusive.len());
    for row in rows {
        let key = row["key"].as_str().unwrap();
        assert_eq!(
            row["inclusive"].as_u64().map(u128::from),
            Some(inclusive[key]),
            "{key}"
        );
        assert_eq!(
            row["exclusive"].as_u64().map(u128::from),
            Some(exclusive.get(key).copied().unwrap_or(0)),
            "{key}"
        );
        let inlined = ["inline.exe!rotate", "inline.exe!mix", "inline.exe!step"].contains(&key);
        assert_eq!(row["inlined"], inlined, "{key}");
    }
    // rotate is where the time goes, inlined two deep.
    assert_eq!(
        rows.iter()
            .find(|r| r["key"] == "inline.exe!rotate")
            .unwrap()["exclusive"],
        300
    );

    let o = run(&["/functions", "/noinline", "/pdb:inline.pdb", "inline.spt"]);
    let text = stdout(&o);
    assert!(
        !text.contains("rotate") && !text.contains("(inlined)"),
        "{text}"
    );
}

#[test]
fn the_flame_graph_colours_inlined_frames_apart() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("inline.svg");
    let arg = format!("/flamegraph:{}", svg.display());
    run(&[&arg, "/pdb:inline.pdb", "inline.spt"]);
    let text = std::fs::read_to_string(&svg).unwrap();
    // FlameGraph's convention, which inferno keeps: an `_[i]` frame is drawn in the inline
    // palette (aqua), the others in the hot palette (red to yellow).
    let fill = |frame: &str| {
        let at = text
            .find(&format!("<title>{frame} ("))
            .unwrap_or_else(|| panic!("{frame}"));
        let rect = &text[at..];
        let fill = rect.split("fill=\"").nth(1).unwrap();
        fill[..fill.find('"').unwrap()].to_owned()
    };
    // (Titles show the names without the suffix.)
    assert!(!text.contains("_[i]"));
    let (inlined, outer) = (fill("inline.exe!rotate"), fill("inline.exe!digest"));
    assert_ne!(inlined, outer);
    let rgb = |c: &str| -> Vec<u32> {
        c.trim_start_matches("rgb(")
            .trim_end_matches(')')
            .split(',')
            .map(|v| v.trim().parse().unwrap())
            .collect()
    };
    let (i, o) = (rgb(&inlined), rgb(&outer));
    assert!(i[2] > i[0], "inlined frames bluish: {inlined}");
    assert!(o[0] > o[2], "other frames reddish: {outer}");
}

#[test]
fn hot_lines_are_the_lines_llvm_symbolizer_reads_at_the_samples() {
    // Each leaf is an UNHALT_CYCLE sample and a call stack's leaf, with the same hits.
    let mut expected: BTreeMap<(String, u32, String), u64> = BTreeMap::new();
    for (frames, records) in INLINE_STACKS {
        let (name, offset) = frames[0];
        let rva = fixtures::function("inline", name).rva + offset;
        let (function, file, line) = fixtures::symbolized("inline", rva).remove(0);
        let key = (
            file.unwrap(),
            line.unwrap(),
            format!("inline.exe!{function}"),
        );
        *expected.entry(key).or_default() += records.iter().sum::<u64>();
    }
    let total: u64 = expected.values().sum();
    let o = run(&["/lines", "/json", "/pdb:inline.pdb", "inline.spt"]);
    for source in ["UNHALT_CYCLE", "ETW_CALLSTACK"] {
        let mut got: BTreeMap<(String, u32, String), u64> = BTreeMap::new();
        let mut previous = u64::MAX;
        for v in json_lines(&o) {
            if v["type"] != "source_line" || v["source"] != source {
                continue;
            }
            let hits = v["hits"].as_u64().unwrap();
            assert!(hits <= previous, "hottest first");
            previous = hits;
            assert_eq!(v["share"].as_f64().unwrap(), hits as f64 / total as f64);
            let key = (
                v["file"].as_str().unwrap().to_owned(),
                v["line"].as_u64().unwrap() as u32,
                v["function"].as_str().unwrap().to_owned(),
            );
            got.insert(key, hits);
        }
        assert_eq!(got, expected, "{source}");
    }

    // /top cuts each table, and the text says how many it shows.
    let o = run(&["/lines", "/top:2", "/pdb:inline.pdb", "inline.spt"]);
    let text = stdout(&o);
    assert!(
        text.contains(
            "Lines of progid 0 (inline.exe), UNHALT_CYCLE: 690 hits, 5 lines, showing 2\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("C:\\src\\inline.c:20  inline.exe!rotate\n"),
        "{text}"
    );
}

#[test]
fn lines_without_a_pdb_say_where_they_come_from() {
    // Alone, the view cannot run: the run fails, saying which input is missing.
    let o = run_in(&fixtures::dir(), &["/lines", "inline.spt"]);
    assert_eq!(stdout(&o), "File: inline.spt (22,778 bytes)\n");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        crate::support::stderr(&o),
        "sptdump: inline.spt: /lines: source lines come from a binary's PDB: give /pdb:FILE for \
         inline.exe\n"
    );
    // Beside a view that shows something, it is a note.
    let o = run(&["/lines", "/functions", "inline.spt"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        crate::support::stderr(&o).contains(
            "note: /lines: source lines come from a binary's PDB: give /pdb:FILE for inline.exe"
        ),
        "{}",
        crate::support::stderr(&o)
    );
}

#[test]
fn speedscope_frames_carry_their_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inline.speedscope.json");
    let arg = format!("/speedscope:{}", path.display());
    run(&[&arg, "/pdb:inline.pdb", "inline.spt"]);
    let file: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let frames = file["shared"]["frames"].as_array().unwrap();
    let frame = |name: &str| {
        frames
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("{name}: {frames:?}"))
    };
    // digest's first line record is its opening brace, as llvm-symbolizer reads its first
    // byte; an inlined function's file is that of its code.
    let digest = fixtures::function("inline", "digest").rva;
    let (_, file_name, opening) = fixtures::symbolized("inline", digest).remove(0);
    assert_eq!(
        frame("inline.exe!digest")["file"],
        file_name.clone().unwrap()
    );
    assert_eq!(frame("inline.exe!digest")["line"], opening.unwrap());
    assert_eq!(frame("inline.exe!rotate")["file"], file_name.unwrap());
    // The IP samples have their inline chains too: rotate above mix above digest.
    let profiles = file["profiles"].as_array().unwrap();
    let ip = profiles
        .iter()
        .find(|p| p["name"] == "inline.exe: UNHALT_CYCLE")
        .unwrap();
    let names: Vec<Vec<&str>> = ip["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            s.as_array()
                .unwrap()
                .iter()
                .map(|i| {
                    frames[i.as_u64().unwrap() as usize]["name"]
                        .as_str()
                        .unwrap()
                })
                .collect()
        })
        .collect();
    assert!(
        names.contains(&vec![
            "inline.exe!digest",
            "inline.exe!mix",
            "inline.exe!rotate"
        ]),
        "{names:?}"
    );
}

/// A PDB whose line records are damaged so that the PDB reader gives up on them (a line
/// block whose sizes run past its data): `/lines` still shows the functions, without
/// lines, one note says why, and nothing panics on standard error; `/functions` says its
/// functions are shown without inline frames.
#[test]
fn a_pdb_with_damaged_line_records_gives_functions_without_lines() {
    use sptdump::image::lines::SourceLines;
    use sptdump::image::symbols::Symbols;

    let original = std::fs::read(fixtures::dir().join("inline.pdb")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let damaged = dir.path().join("inline.pdb");
    let trace = fixtures::dir().join("inline.spt");
    let rva = fixtures::function("inline", "digest").rva + 0x3F;
    // A byte whose damage leaves the symbols readable but not the lines (every 16th is
    // tried: the search stays short).
    let found = (0..original.len()).step_by(16).find(|&at| {
        let mut bytes = original.clone();
        bytes[at] = 0xFF;
        std::fs::write(&damaged, &bytes).unwrap();
        Symbols::from_pdb(&damaged).is_ok_and(|s| {
            SourceLines::read(&s, [rva])
                .problem()
                .is_some_and(|p| p.contains("inconsistent records"))
        })
    });
    assert!(found.is_some(), "some damage makes the reader give up");
    let o = run_in(
        dir.path(),
        &["/lines", "/pdb:inline.pdb", trace.to_str().unwrap()],
    );
    let err = crate::support::stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(err.contains("inconsistent records"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // `/lines` names no frame by key: the note about functions shown without inline
    // frames is `/functions`' (below), not its.
    assert!(!err.contains("functions are shown without"), "{err}");
    let out = stdout(&o);
    assert!(
        out.lines()
            .any(|l| l.contains("(no line)") && l.ends_with("inline.exe!digest")),
        "{out}"
    );
    // `/functions` says the same of the binary's inline frames, and still shows its
    // functions.
    let o = run_in(
        dir.path(),
        &["/functions", "/pdb:inline.pdb", trace.to_str().unwrap()],
    );
    let err = crate::support::stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.lines().any(|l| l.contains(": note: inline.exe: ")
            && l.contains("inconsistent records")
            && l.ends_with(": its functions are shown without inline frames or lines")),
        "{err}"
    );
    assert!(stdout(&o).contains("inline.exe!digest"), "{}", stdout(&o));
    // `/event` names each address by its function and line: one note says why some have
    // no line.
    let o = run_in(
        dir.path(),
        &["/event", "/pdb:inline.pdb", trace.to_str().unwrap()],
    );
    let err = crate::support::stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let notes: Vec<&str> = err
        .lines()
        .filter(|l| l.ends_with(": some addresses are shown without a line"))
        .collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(notes[0].contains("inconsistent records"), "{err}");
}

/// inline.pdb, and a copy of it damaged one byte at a time.
struct Damaged {
    original: Vec<u8>,
    path: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Damaged {
    fn new() -> Damaged {
        let dir = tempfile::tempdir().unwrap();
        Damaged {
            original: std::fs::read(fixtures::dir().join("inline.pdb")).unwrap(),
            path: dir.path().join("inline.pdb"),
            _dir: dir,
        }
    }

    /// The symbols of the copy with byte `at` set to `value`, if they can still be read.
    fn symbols(&self, at: usize, value: u8) -> Option<sptdump::image::symbols::Symbols> {
        let mut bytes = self.original.clone();
        bytes[at] = value;
        std::fs::write(&self.path, &bytes).unwrap();
        sptdump::image::symbols::Symbols::from_pdb(&self.path).ok()
    }
}

/// An address of `rotate`, inlined two deep into `digest`, and the first of `step`, inlined
/// into the entry point.
fn rotate_and_step() -> (u32, u32) {
    let rotate = fixtures::function("inline", "digest").rva + 0x3F;
    let step = fixtures::symbolizer("inline")
        .into_iter()
        .find(|(_, chain)| chain[0].0 == "step")
        .map(|(rva, _)| rva)
        .unwrap();
    (rotate, step)
}

/// A procedure whose line or inlinee records fail takes back what it added, and only that:
/// the chains of the procedures read before it stay. In inline.pdb `digest` (with `mix` and
/// `rotate` inlined) is read before the entry point (with `step` inlined); some damage breaks
/// the entry point's records alone.
#[test]
fn a_procedure_whose_records_fail_leaves_the_chains_read_before_it() {
    use sptdump::image::lines::SourceLines;

    let damaged = Damaged::new();
    let (rotate, step) = rotate_and_step();
    // The damage that breaks such records falls 4 bytes past a multiple of 16 in this
    // PDB: every 16th byte from there is tried, to keep the search short.
    let found = (4..damaged.original.len()).step_by(16).find(|&at| {
        damaged.symbols(at, 0xFF).is_some_and(|s| {
            let lines = SourceLines::read(&s, [rotate, step]);
            let frames = |rva| lines.chain(rva).map(|c| c.map(|f| f.function.to_owned()));
            lines.problem().is_some()
                && frames(step).is_none()
                && frames(rotate)
                    .is_some_and(|c| c.collect::<Vec<_>>() == ["rotate", "mix", "digest"])
        })
    });
    assert!(
        found.is_some(),
        "some damage breaks the entry point's records and leaves digest's"
    );
}

/// Every address of inline.exe's code, read as `/lines` and inline frames read it: the same
/// chain of functions and lines llvm-symbolizer gives. The addresses it gives a line 0 (the
/// padding after `digest`, which its procedure record does not cover) have no chain.
#[test]
fn every_address_has_the_chain_and_lines_llvm_symbolizer_reads() {
    use sptdump::image::lines::SourceLines;
    use sptdump::image::symbols::Symbols;

    let symbols = Symbols::from_pdb(&fixtures::dir().join("inline.pdb")).unwrap();
    let want = fixtures::symbolizer("inline");
    let lines = SourceLines::read(&symbols, want.iter().map(|&(rva, _)| rva));
    assert_eq!(lines.problem(), None);
    let mut without_line = 0;
    for (rva, frames) in &want {
        let want: Vec<(&str, Option<u32>)> =
            frames.iter().map(|(f, _, l)| (f.as_str(), *l)).collect();
        let got: Option<Vec<(&str, Option<u32>)>> = lines
            .chain(*rva)
            .map(|chain| chain.map(|f| (f.function, f.line)).collect());
        if want.iter().any(|(_, l)| l.is_none()) {
            assert_eq!(got, None, "{rva:#X}: {want:?}");
            without_line += 1;
        } else {
            assert_eq!(got, Some(want), "{rva:#X}");
        }
    }
    assert_eq!(without_line, 23);
}

/// No damage loses lines silently: wherever one byte of inline.pdb is damaged and its symbols
/// are still read, the addresses keep their chains or the problem is said, however deep in
/// the reader it was met (a panic of the reader outside any one module or procedure drops
/// all that was read). The last 8 KiB are tried, every other byte: the streams read last,
/// and a short test.
#[test]
fn no_damage_to_a_pdb_loses_lines_silently() {
    use sptdump::image::lines::SourceLines;

    let damaged = Damaged::new();
    let (rotate, step) = rotate_and_step();
    let len = damaged.original.len();
    let mut said = 0;
    for at in (len - 8192..len).step_by(2) {
        let Some(symbols) = damaged.symbols(at, !damaged.original[at]) else {
            continue;
        };
        let lines = SourceLines::read(&symbols, [rotate, step]);
        let kept = lines.chain(rotate).is_some() && lines.chain(step).is_some();
        assert!(kept || lines.problem().is_some(), "damage at {at}");
        said += usize::from(!kept);
    }
    assert!(said > 0, "some damage loses lines");
}

/// When the inlined functions' names cannot be read (the PDB's IPI stream), the chains keep
/// their frames under placeholder names, and the problem is said.
#[test]
fn inlined_functions_whose_names_cannot_be_read_keep_their_frames_and_say_why() {
    use sptdump::image::lines::SourceLines;

    let damaged = Damaged::new();
    let (rotate, _) = rotate_and_step();
    // The damage falls 8 bytes past a multiple of 16 in this PDB: every 16th byte from
    // there is tried, to keep the search short.
    let found = (8..damaged.original.len()).step_by(16).find_map(|at| {
        let symbols = damaged.symbols(at, 0xFF)?;
        let lines = SourceLines::read(&symbols, [rotate]);
        let names: Vec<String> = lines
            .chain(rotate)?
            .map(|f| f.function.to_owned())
            .collect();
        let problem = lines.problem()?.to_owned();
        (names.len() == 3 && names[2] == "digest" && names[..2] != ["rotate", "mix"])
            .then_some((names, problem))
    });
    let (names, problem) = found.expect("some damage loses the inlined functions' names");
    assert!(problem.starts_with("cannot read the PDB"), "{problem}");
    assert!(
        names[0].starts_with("inlinee 0x") && names[0] != names[1],
        "{names:?}"
    );
}

/// `/compare` by function: an IP sample in inlined code is the innermost function inlined
/// there, so a NEW trace that spends its time in `rotate` (inlined two deep into `digest`)
/// says `rotate` is what it samples more; with `/noinline`, `digest`.
#[test]
fn compare_names_the_inlined_function_that_got_hotter() {
    use sptdump_testkit::builder::{Guid, SptBuilder, UNHALT_CYCLE};
    let mut b = SptBuilder::new();
    let (guid, age) = fixtures::codeview("inline");
    let name = b.string("inline.exe");
    b.program_id(Guid(guid), age, name);
    let rotate = fixtures::function("inline", "digest").rva + 0x3F;
    assert_eq!(fixtures::symbolized("inline", rotate)[0].0, "rotate");
    b.binary_id(0).repeat(999).ip(UNHALT_CYCLE, &[rotate]);
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("hot.spt");
    std::fs::write(&new, b.build()).unwrap();
    let new = new.to_str().unwrap();
    let missing = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["/compare", "/json", "/pdb:inline.pdb", "inline.spt", new];
        args.splice(3..3, extra.iter().copied());
        let o = run_in(&fixtures::dir(), &args);
        json_lines(&o)
            .into_iter()
            .find(|v| v["type"] == "compare" && v["source"] == "UNHALT_CYCLE")
            .unwrap()["missing"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["key"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(missing(&[]), ["inline.exe!rotate"]);
    assert_eq!(missing(&["/noinline"]), ["inline.exe!digest"]);
}

#[test]
fn icicle_draws_the_outermost_frame_at_the_top() {
    let dir = tempfile::tempdir().unwrap();
    let y_of = |icicle: bool, frame: &str| -> u32 {
        let svg = dir.path().join(format!("{icicle}.svg"));
        let arg = format!("/flamegraph:{}", svg.display());
        let mut args = vec![arg.as_str(), "/pdb:inline.pdb", "inline.spt"];
        if icicle {
            args.insert(0, "/icicle");
        }
        run(&args);
        let text = std::fs::read_to_string(&svg).unwrap();
        let at = text.find(&format!("<title>{frame} (")).unwrap();
        let y = text[at..].split("y=\"").nth(1).unwrap();
        y[..y.find('"').unwrap()].parse().unwrap()
    };
    // A flame graph grows up from its root; an icicle hangs down from it.
    assert!(y_of(false, "inline.exe!main_entry") > y_of(false, "inline.exe!rotate"));
    assert!(y_of(true, "inline.exe!main_entry") < y_of(true, "inline.exe!rotate"));
}

/// NEW for the comparisons: only the stack that ends in rotate (inlined in mix in digest),
/// 900 hits, and the one that ends in checksum's own code, 10.
fn hot_trace(dir: &tempfile::TempDir) -> std::path::PathBuf {
    use sptdump_testkit::builder::{Guid, SptBuilder};
    let mut b = SptBuilder::new();
    let (guid, age) = fixtures::codeview("inline");
    let name = b.string("inline.exe");
    b.program_id(Guid(guid), age, name);
    b.binary_id(0);
    for (frames, hits) in [(INLINE_STACKS[0].0, 900u64), (INLINE_STACKS[4].0, 10)] {
        let rvas: Vec<u32> = frames
            .iter()
            .map(|&(f, o)| fixtures::function("inline", f).rva + o)
            .collect();
        b.repeat(hits - 1).callstack(&rvas);
    }
    let new = dir.path().join("hot.spt");
    std::fs::write(&new, b.build()).unwrap();
    new
}

/// `/compare BASE NEW /flamegraph:FILE`: NEW's stacks, each frame red where its share grew
/// from BASE and blue where it shrank, titled with both traces.
#[test]
fn a_differential_flame_graph_shows_what_grew_in_red() {
    let dir = tempfile::tempdir().unwrap();
    let new = hot_trace(&dir);
    let svg = dir.path().join("diff.svg");
    let arg = format!("/flamegraph:{}", svg.display());
    let o = run_in(
        &fixtures::dir(),
        &[
            "/compare",
            &arg,
            "/pdb:inline.pdb",
            "inline.spt",
            new.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("against inline.spt"),
        "titled with both traces"
    );
    let fill = |frame: &str| -> (u32, u32, u32) {
        let at = text
            .find(&format!("<title>{frame} ("))
            .unwrap_or_else(|| panic!("{frame}"));
        let fill = text[at..].split("fill=\"rgb(").nth(1).unwrap();
        let rgb: Vec<u32> = fill[..fill.find(')').unwrap()]
            .split(',')
            .map(|v| v.trim().parse().unwrap())
            .collect();
        (rgb[0], rgb[1], rgb[2])
    };
    // rotate: 300 of 690 in BASE, 900 of 910 in NEW: grew, red.
    let (r, g, b) = fill("inline.exe!rotate");
    assert!(
        r == 255 && g < 250 && g == b,
        "rotate grew: rgb({r},{g},{b})"
    );
    // checksum's own code: 40 of 690 in BASE, 10 of 910 in NEW: the frames above it grew,
    // but main_entry's whole stack stayed 100%, neither red nor blue.
    let (r, g, b) = fill("inline.exe!main_entry");
    assert_eq!((r, g, b), (250, 250, 250), "main_entry is all of both");
}

/// `/compare BASE NEW /functions`: the keys whose inclusive share of the call stacks moved
/// most, with both traces' inclusive and exclusive shares as `/functions` gives them.
#[test]
fn compare_functions_says_which_functions_moved() {
    let dir = tempfile::tempdir().unwrap();
    let new = hot_trace(&dir);
    let new = new.to_str().unwrap();
    let base = fixtures::dir().join("inline.spt");
    let base = base.to_str().unwrap();
    // Each side's shares, from its own /functions.
    let shares = |trace: &str| -> BTreeMap<String, (f64, f64)> {
        let o = run(&["/functions", "/json", "/top:0", "/pdb:inline.pdb", trace]);
        let line = json_lines(&o)
            .into_iter()
            .find(|v| v["type"] == "functions" && v["source"] == "ETW_CALLSTACK")
            .unwrap();
        let hits = line["hits"].as_f64().unwrap();
        line["top"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let share = |k: &str| r[k].as_f64().unwrap() / hits;
                (
                    r["key"].as_str().unwrap().to_owned(),
                    (share("inclusive"), share("exclusive")),
                )
            })
            .collect()
    };
    let (p, q) = (shares(base), shares(new));
    let o = run(&[
        "/compare",
        "/functions",
        "/json",
        "/pdb:inline.pdb",
        base,
        new,
    ]);
    let rows: Vec<Value> = json_lines(&o)
        .into_iter()
        .filter(|v| v["type"] == "compare_function")
        .collect();
    assert_eq!(
        rows.len(),
        p.len().max(q.len()),
        "every key, fewer than /top"
    );
    let mut previous = f64::MAX;
    for r in &rows {
        let key = r["key"].as_str().unwrap();
        let (bi, be) = p.get(key).copied().unwrap_or_default();
        let (ni, ne) = q.get(key).copied().unwrap_or_default();
        let got = |k: &str| r[k].as_f64().unwrap();
        let near = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(
            near(got("base_inclusive"), bi) && near(got("new_inclusive"), ni),
            "{key}"
        );
        assert!(
            near(got("base_exclusive"), be) && near(got("new_exclusive"), ne),
            "{key}"
        );
        assert!((got("delta") - (ni - bi)).abs() < 1e-12, "{key}");
        assert!(got("delta").abs() <= previous, "most moved first");
        previous = got("delta").abs();
        assert_eq!(r["name"], "inline.exe");
        // NEW has call stacks only: the sources both traces have.
        assert_eq!(r["source"], "ETW_CALLSTACK");
    }
    // rotate moved most: 300/690 to 900/910.
    assert_eq!(rows[0]["key"], "inline.exe!rotate");
    // The text says so too, and /functions alone is not printed per trace.
    let o = run(&["/compare", "/functions", "/pdb:inline.pdb", base, new]);
    let text = stdout(&o);
    assert!(
        text.contains("inline.exe ETW_CALLSTACK: the keys whose inclusive share moved most"),
        "{text}"
    );
    assert!(!text.contains("Functions of progid"), "{text}");
}

/// A differential flame graph of traces without call stacks draws the IP event NEW has most
/// of, by function, in both: what the field's traces hold still compares.
#[test]
fn a_differential_flame_graph_without_call_stacks_draws_the_samples() {
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("diff.svg");
    let o = run_in(
        &fixtures::dir(),
        &[
            "/compare",
            "/pdb:app.pdb,core.pdb",
            &format!("/flamegraph:{}", svg.display()),
            "profile.spt",
            "app-only.spt",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    let err = crate::support::stderr(&o);
    assert!(
        err.contains("NEW has no call stacks: the differential views show UNHALT_CYCLE samples"),
        "{err}"
    );
    let svg = std::fs::read_to_string(svg).unwrap();
    assert!(
        svg.contains("app-only.spt against profile.spt: UNHALT_CYCLE samples (no call stacks)")
    );
    // app-only.spt's one sample, in compute_checksum: all of NEW, 5.36% of BASE's.
    assert!(
        svg.contains("app.exe!compute_checksum (1 hits, 100.00%; +"),
        "{svg}"
    );
}

/// `mix` is inlined into `digest` and into `tally`, which lies after it. An inlined function
/// is one key wherever it was inlined, shown at the lowest start of the functions holding it:
/// `digest`'s, even when `tally`'s samples come first and `digest`'s are not at its start.
#[test]
fn a_function_inlined_into_two_is_one_key_at_the_lower_start() {
    use sptdump_testkit::builder::{Guid, SptBuilder, UNHALT_CYCLE};

    let digest = fixtures::function("inline", "digest");
    let tally = fixtures::function("inline", "tally");
    assert!(digest.rva < tally.rva);
    // The first address of tally's code that llvm-symbolizer places in mix, inlined.
    let in_tally = fixtures::symbolizer("inline")
        .into_iter()
        .find(|(rva, frames)| {
            *rva > tally.rva
                && frames.last().is_some_and(|f| f.0 == "tally")
                && frames.iter().any(|f| f.0 == "mix")
        })
        .expect("mix inlined into tally")
        .0;
    let in_digest = digest.rva + 0x35;
    assert!(fixtures::symbolized("inline", in_digest)[0].0 == "mix");

    let mut b = SptBuilder::new();
    let (guid, age) = fixtures::codeview("inline");
    let name = b.string("inline.exe");
    b.program_id(Guid(guid), age, name);
    b.binary_id(0)
        .ip(UNHALT_CYCLE, &[in_tally])
        .ip(UNHALT_CYCLE, &[in_digest])
        .callstack(&[in_tally])
        .callstack(&[in_digest]);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("two.spt");
    std::fs::write(&trace, b.build()).unwrap();
    let o = run(&[
        "/functions",
        "/json",
        "/pdb:inline.pdb",
        trace.to_str().unwrap(),
    ]);
    let lines: Vec<Value> = json_lines(&o)
        .into_iter()
        .filter(|v| v["type"] == "functions")
        .collect();
    assert_eq!(lines.len(), 2, "the IP samples and the call stacks");
    for line in lines {
        let mix: Vec<&Value> = line["top"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["key"] == "inline.exe!mix")
            .collect();
        assert_eq!(mix.len(), 1, "one key: {line}");
        assert_eq!(mix[0]["rva"], digest.rva, "{line}");
        assert_eq!(mix[0]["inclusive"], 2, "{line}");
        assert_eq!(mix[0]["inlined"], true, "{line}");
    }
}
