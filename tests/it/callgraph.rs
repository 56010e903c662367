//! `/callgraph` on the real images of `testdata/pe`: LBR pairs from the call instructions
//! and jumps `llvm-objdump` found there (`*.objdump.txt`), joined to the PDB's functions as
//! `llvm-pdbutil` lists them (`*.pdbutil.txt`); call stacks a frame apart; and what a binary
//! without its image or PDB is told.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;
use sptdump_testkit::builder::{Guid, SptBuilder};
use sptdump_testkit::fixtures::{self, Function};

use crate::support::{json_lines, run_in, status, stderr, stdout};

/// The function of `functions` holding `rva`.
fn holding(functions: &[Function], rva: u32) -> Option<&Function> {
    functions
        .iter()
        .rev()
        .find(|f| f.rva <= rva && f.size.is_none_or(|size| rva < f.rva + size))
}

/// `app.exe`'s trace: one LBR record of `pairs` (each `(from, to, hits)` as one record with
/// its REPEAT), and no other record.
fn app_trace(dir: &Path, pairs: &[(u32, u32, u64)]) -> String {
    let mut b = SptBuilder::new();
    let (guid, age) = fixtures::codeview("app");
    let name = b.string("app.exe");
    b.program_id(Guid(guid), age, name);
    b.binary_id(0);
    for &(from, to, hits) in pairs {
        b.repeat(hits - 1).lbr(&[(from, to)]);
    }
    let path = dir.join("lbr.spt");
    std::fs::write(&path, b.build()).unwrap();
    path.to_str().unwrap().to_owned()
}

/// The `call_edge` lines of a run: (caller, callee, kind) to calls.
fn edges(lines: &[Value]) -> BTreeMap<(String, String, String), u64> {
    lines
        .iter()
        .filter(|l| l["type"] == "call_edge")
        .map(|l| {
            let s = |k: &str| l[k].as_str().unwrap().to_owned();
            (
                (s("caller"), s("callee"), s("kind")),
                l["calls"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn lbr_pairs_from_calls_and_tail_jumps_are_edges_and_other_branches_are_not() {
    let functions = fixtures::functions("app");
    let code = fixtures::disassembly("app", "app");
    let mut pairs = Vec::new();
    let mut expected = BTreeMap::new();
    for (i, (rva, mnemonic, target)) in code.iter().enumerate() {
        let Some(to) = *target else { continue };
        let (Some(caller), Some(callee)) = (holding(&functions, *rva), holding(&functions, to))
        else {
            continue;
        };
        // A different count for each pair, so that each edge's calls say which pairs it has.
        let hits = 1 + i as u64;
        pairs.push((*rva, to, hits));
        let kind = match mnemonic.as_str() {
            "call" => "call",
            "jmp" if callee.rva == to && callee.rva != caller.rva => "tail",
            // A jump within a function, or a conditional one: no edge.
            _ => continue,
        };
        let key = (caller.name.clone(), callee.name.clone(), kind.to_owned());
        *expected.entry(key).or_default() += hits;
    }
    assert!(
        expected.keys().filter(|(_, _, k)| k == "call").count() >= 5,
        "the image has calls: {expected:?}"
    );
    assert!(
        pairs.len() > expected.len(),
        "and branches that are no call"
    );
    // Jumps recorded landing past another function's first byte, or on their own
    // function's: no edge either (a tail call goes to another function's first byte).
    let jumps = pairs.len();
    for (rva, mnemonic, _) in &code {
        let Some(caller) = holding(&functions, *rva).filter(|_| mnemonic == "jmp") else {
            continue;
        };
        let other = functions
            .iter()
            .find(|f| f.rva != caller.rva && f.size.is_some_and(|size| size > 1))
            .expect("another function");
        pairs.extend([(*rva, other.rva + 1, 1), (*rva, caller.rva, 1)]);
    }
    assert!(pairs.len() > jumps, "the image has jumps");
    let dir = tempfile::tempdir().unwrap();
    let trace = app_trace(dir.path(), &pairs);
    let root = fixtures::dir();
    let o = run_in(
        &root,
        &[
            "/json",
            "/callgraph",
            "/top:all",
            "/pdb:app.pdb",
            "/image:app.exe",
            &trace,
        ],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(edges(&json_lines(&o)), expected);
    assert_eq!(stderr(&o), "", "nothing missing");
}

#[test]
fn call_stacks_give_stack_edges_a_frame_apart() {
    let root = fixtures::dir();
    let o = run_in(
        &root,
        &["/json", "/callgraph", "/pdb:inline.pdb", "inline.spt"],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let found = edges(&json_lines(&o));
    // INLINE_STACKS: main_entry calls checksum, which calls digest; their hits as /summary's
    // function arcs count them.
    let stack = |caller: &str, callee: &str| {
        found
            .get(&(caller.to_owned(), callee.to_owned(), "stack".to_owned()))
            .copied()
    };
    assert_eq!(stack("main_entry", "checksum"), Some(690));
    assert_eq!(stack("checksum", "digest"), Some(550));
    // The LBR record needs the image, and says so.
    assert!(
        stderr(&o).contains("inline.exe: LBR call edges need its code: give /image:FILE for it"),
        "{}",
        stderr(&o)
    );
    // Root first, the caller is the first frame: the same edges.
    let o = run_in(
        &root,
        &[
            "/json",
            "/callgraph",
            "/stackorder:root-first",
            "/pdb:inline.pdb",
            "inline.spt",
        ],
    );
    let reversed = edges(&json_lines(&o));
    assert!(reversed.keys().all(|(_, _, kind)| kind == "stack"));
    assert_ne!(reversed, found, "the frames are read the other way round");
}

#[test]
fn without_a_pdb_or_with_another_build_s_image_it_says_why() {
    let root = fixtures::dir();
    // Without the PDB the view cannot run: the run fails, saying which input is missing.
    let o = run_in(&root, &["/callgraph", "inline.spt"]);
    assert_eq!(status(&o), 1);
    assert_eq!(
        stderr(&o),
        "sptdump: inline.spt: /callgraph: inline.exe: call edges join functions: give \
         /pdb:FILE for it\n"
    );
    // Beside a view that shows something, it is a note.
    let o = run_in(&root, &["/callgraph", "/summary", "inline.spt"]);
    assert_eq!(status(&o), 0);
    assert!(
        stderr(&o).contains(
            "note: /callgraph: inline.exe: call edges join functions: give /pdb:FILE for it"
        ),
        "{}",
        stderr(&o)
    );
    // An image of another build is not used, and that is an error of the run.
    let o = run_in(
        &root,
        &[
            "/callgraph",
            "/pdb:inline.pdb",
            "/image:app.exe",
            "inline.spt",
        ],
    );
    assert_eq!(status(&o), 1);
    assert!(stderr(&o).contains("/image:app.exe is {"), "{}", stderr(&o));
    // A PDB is no image.
    let o = run_in(&root, &["/callgraph", "/image:inline.pdb", "inline.spt"]);
    assert_eq!(status(&o), 1);
    assert!(
        stderr(&o).contains("this is a PDB, not an image"),
        "{}",
        stderr(&o)
    );
}

/// A damaged image is refused with its path and why, never a panic: cut short anywhere, or
/// with its sections' sizes made to lie.
#[test]
fn a_damaged_image_is_refused_with_why() {
    let root = fixtures::dir();
    let image = std::fs::read(root.join("app.exe")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let trace = app_trace(dir.path(), &[(0x1026, 0x1050, 1)]);
    let cut = dir.path().join("cut.exe");
    let pe = u32::from_le_bytes(image[0x3C..0x40].try_into().unwrap()) as usize;
    let sections = pe + 24 + usize::from(u16::from_le_bytes([image[pe + 20], image[pe + 21]]));
    // The first section is .text: its raw data starts at the pointer 20 bytes in.
    let text = u32::from_le_bytes(image[sections + 20..sections + 24].try_into().unwrap()) as usize;
    assert_eq!(&image[sections..sections + 5], b".text");
    for len in [0, 2, 64, sections + 10, text + 16] {
        std::fs::write(&cut, &image[..len]).unwrap();
        let arg = format!("/image:{}", cut.display());
        let o = run_in(&root, &["/callgraph", "/pdb:app.pdb", &arg, &trace]);
        assert_eq!(status(&o), 1, "cut at {len}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("cut.exe"),
            "cut at {len}: {}",
            stderr(&o)
        );
        assert!(
            !stderr(&o).contains("panicked"),
            "cut at {len}: {}",
            stderr(&o)
        );
    }
    // Every byte of the section table set to 0xFF in turn: read or refused, never a panic.
    let lying = dir.path().join("lying.exe");
    for at in sections..sections + 80 {
        let mut bytes = image.clone();
        bytes[at] = 0xFF;
        std::fs::write(&lying, &bytes).unwrap();
        let arg = format!("/image:{}", lying.display());
        let o = run_in(
            &root,
            &["/json", "/callgraph", "/pdb:app.pdb", &arg, &trace],
        );
        assert!(matches!(status(&o), 0 | 1), "byte {at:#X}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("panicked"),
            "byte {at:#X}: {}",
            stderr(&o)
        );
    }
}

/// `/callgraph:FUNCTION`: only the edges that call the function or leave it, named as
/// `/functions` names it or by its name alone.
#[test]
fn one_function_s_callers_and_callees() {
    let root = fixtures::dir();
    let args = |f: &'static str| {
        [
            "/json",
            f,
            "/pdb:inline.pdb",
            "/image:inline.exe",
            "inline.spt",
        ]
    };
    let all = edges(&json_lines(&run_in(&root, &args("/callgraph"))));
    for spelled in [
        "/callgraph:digest",
        "/callgraph:INLINE.exe!digest",
        "--callgraph=digest",
    ] {
        let o = run_in(&root, &args(spelled));
        assert_eq!(status(&o), 0, "{spelled}: {}", stderr(&o));
        let around = edges(&json_lines(&o));
        let expected: BTreeMap<_, _> = all
            .iter()
            .filter(|((caller, callee, _), _)| caller == "digest" || callee == "digest")
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        assert_eq!(around, expected, "{spelled}");
        assert_eq!(around.len(), 2, "the call stacks' and the LBR call's");
    }
    let o = run_in(
        &root,
        &["/callgraph:checksum", "/pdb:inline.pdb", "inline.spt"],
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("Callers and callees of checksum in progid 0 (inline.exe): 1240 calls"),
        "{text}"
    );
    // A function no edge touches is said so, and that is no error.
    let o = run_in(
        &root,
        &["/callgraph:tally", "/pdb:inline.pdb", "inline.spt"],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("note: /callgraph:tally: no edge of the profile calls or leaves it"),
        "{}",
        stderr(&o)
    );
    // A name no function bears is an error naming the closest names.
    let o = run_in(
        &root,
        &["/callgraph:checksun", "/pdb:inline.pdb", "inline.spt"],
    );
    assert_eq!(status(&o), 1);
    assert_eq!(stdout(&o), "File: inline.spt (22,778 bytes)\n");
    assert!(
        stderr(&o).contains(
            "sptdump: inline.spt: /callgraph:checksun: no function of inline.exe bears this \
             name; the closest: checksum,"
        ),
        "{}",
        stderr(&o)
    );
    // An inlined function's calls are those of the function it was inlined into.
    let o = run_in(
        &root,
        &["/callgraph:rotate", "/pdb:inline.pdb", "inline.spt"],
    );
    assert_eq!(status(&o), 1);
    assert!(
        stderr(&o).contains(
            "/callgraph:rotate: rotate is inlined into digest, tally (inline.exe), which hold \
             its code: /callgraph:digest shows its calls"
        ),
        "{}",
        stderr(&o)
    );
    // An empty name is a usage error.
    let o = run_in(&root, &["/callgraph:", "inline.spt"]);
    assert_eq!(status(&o), 2);
    assert_eq!(
        stderr(&o),
        "sptdump: invalid value '' for /callgraph: expected a function's name; see 'sptdump /help'\n"
    );
}

/// Counts past 64 bits stay exact: `huge.spt` repeats a call stack 2^64 times.
#[test]
fn calls_past_64_bits_are_exact() {
    let o = run_in(
        &fixtures::dir(),
        &["/json", "/callgraph", "/pdb:app.pdb", "huge.spt"],
    );
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains(r#""caller":"hash_bytes","callee":"mix_round","calls":18446744073709551616,"kind":"stack""#),
        "{text}"
    );
}
