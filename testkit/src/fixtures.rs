//! The real PE and PDB fixtures of `testdata/pe/`, as `llvm-readobj` and `llvm-pdbutil`
//! described them (the `*.readobj.txt` and `*.pdbutil.txt` files beside them), and
//! `testdata/pe/profile.spt`, a trace of those builds whose call stacks run through their
//! real functions.
//!
//! Everything here comes from the tools' dumps, never from sptdump's own reading of the
//! files, so a test can check the one against the other.

use std::path::{Path, PathBuf};

use crate::builder::{Guid, RETIRE_INSTR, SptBuilder, UNHALT_CYCLE};

/// The identity of `app.exe` and `app.pdb`, in the registry form a trace or an SPD of that
/// build names it (`app.readobj.txt`'s `PDBGUID`, read as a GUID).
pub const APP_GUID: &str = "7A76D39E-EF6D-104E-4C4C-44205044422E";

/// The identity of `core.dll` and `core.pdb`, as [`APP_GUID`] is of `app.exe`.
pub const CORE_GUID: &str = "5DFC88D6-05FC-4E3C-4C4C-44205044422E";

/// The folder of the fixtures.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/pe")
}

/// Writes `bytes` to `path`, a file other test processes may be reading: as a new file
/// renamed into place, so that none of them reads it half written (a test runner may run
/// each test in a process of its own, each writing the same input once), and not at all
/// when the file already holds those bytes.
pub fn write_shared(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).is_ok_and(|on_disk| on_disk == bytes) {
        return;
    }
    let mut fresh = path.as_os_str().to_owned();
    fresh.push(format!(".{}.new", std::process::id()));
    let fresh = PathBuf::from(fresh);
    std::fs::write(&fresh, bytes).unwrap_or_else(|e| panic!("{}: {e}", fresh.display()));
    std::fs::rename(&fresh, path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

fn dump(name: &str) -> String {
    let path = dir().join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A function as `llvm-pdbutil` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    /// Its name.
    pub name: String,
    /// The RVA of its first byte.
    pub rva: u32,
    /// Its code size, from its procedure symbol; `None` for a public symbol alone.
    pub size: Option<u32>,
}

/// The functions of a PDB (`app` for `app.pdbutil.txt`), sorted by RVA: its procedures
/// (`S_GPROC32`, `S_LPROC32` with `addr = 0001:OFFSET` and `code size = N`), and the public
/// function symbols (`S_PUB32`) at RVAs no procedure has, placed by the first section's
/// virtual address.
pub fn functions(pdb: &str) -> Vec<Function> {
    let text = dump(&format!("{pdb}.pdbutil.txt"));
    let lines: Vec<&str> = text.lines().collect();
    let text_va = section_one(&text);
    let offset = |line: &str| -> u32 {
        line.split("addr = 0001:").nth(1).expect("addr")[..4]
            .parse()
            .unwrap()
    };
    let mut out: Vec<Function> = Vec::new();
    for pair in lines.windows(2) {
        let name = || pair[0].split('`').nth(1).unwrap().to_owned();
        if pair[0].contains("S_GPROC32") || pair[0].contains("S_LPROC32") {
            let size = pair[1].split("code size = ").nth(1).unwrap().trim();
            out.push(Function {
                name: name(),
                rva: text_va + offset(pair[1]),
                size: Some(size.parse().unwrap()),
            });
        }
    }
    for pair in lines.windows(2) {
        if pair[0].contains("S_PUB32") && pair[1].contains("flags = function") {
            let rva = text_va + offset(pair[1]);
            if !out.iter().any(|f| f.rva == rva) {
                out.push(Function {
                    name: pair[0].split('`').nth(1).unwrap().to_owned(),
                    rva,
                    size: None,
                });
            }
        }
    }
    out.sort_by_key(|f| f.rva);
    out
}

/// One instruction of an image as `llvm-objdump -d -M intel` printed it (`app` for
/// `app.objdump.txt`): its RVA, its mnemonic, and the RVA a direct branch or call goes to.
pub type Disassembled = (u32, String, Option<u32>);

/// Every instruction `llvm-objdump` disassembled of an image's `.text`, in address order.
/// Addresses are made RVAs by the section's start, which the listing's `<.text>` line gives
/// and the PDB's first section header places (`pdb` for `app.pdbutil.txt`).
pub fn disassembly(image: &str, pdb: &str) -> Vec<Disassembled> {
    let text = dump(&format!("{image}.objdump.txt"));
    let text_va = section_one(&dump(&format!("{pdb}.pdbutil.txt")));
    let start = text
        .lines()
        .find_map(|l| l.strip_suffix(" <.text>:"))
        .map(|a| u64::from_str_radix(a, 16).unwrap())
        .expect("a <.text> line");
    let base = start - u64::from(text_va);
    let rva =
        |a: &str| (u64::from_str_radix(a.trim_start_matches("0x"), 16).unwrap() - base) as u32;
    text.lines()
        .filter_map(|l| {
            let (address, rest) = l.split_once(":")?;
            let address = address.trim();
            if address.is_empty() || !address.chars().all(|c| c.is_ascii_hexdigit()) {
                return None;
            }
            let mut words = rest.split_whitespace();
            let mnemonic = words.next()?.to_owned();
            // A branch's target; an immediate operand (x86's `push 0x5`) is none.
            let branch = mnemonic.starts_with('j') || mnemonic == "call";
            let target = words
                .next()
                .filter(|w| branch && w.starts_with("0x"))
                .map(rva);
            Some((rva(address), mnemonic, target))
        })
        .collect()
}

/// Where the code of the function `name` lies in an image: its RVA and code size, from the
/// PDB (`pdb` for `app.pdbutil.txt`). A procedure's symbol gives both; a function the PDB
/// knows only by its public symbol has no size there, and its code is taken to run to the
/// next function, or to the end of the code section (its virtual size), less the padding
/// (`int3`, `nop`) that `llvm-objdump` lists before it (`image` for `app.objdump.txt`).
pub fn placed(image: &str, pdb: &str, name: &str) -> (u32, u32) {
    let functions = functions(pdb);
    let at = functions
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("{pdb}.pdb has no function {name}"));
    let f = &functions[at];
    if let Some(size) = f.size {
        return (f.rva, size);
    }
    let pdbutil = dump(&format!("{pdb}.pdbutil.txt"));
    let end = functions.get(at + 1).map_or_else(
        || section_one(&pdbutil) + section_one_size(&pdbutil),
        |next| next.rva,
    );
    let code = disassembly(image, pdb);
    let listed: Vec<&Disassembled> = code.iter().filter(|c| f.rva <= c.0 && c.0 < end).collect();
    let last = listed
        .iter()
        .rposition(|c| c.1 != "int3" && c.1 != "nop")
        .unwrap_or_else(|| panic!("{image}'s listing has no code of {name}"));
    (
        f.rva,
        listed.get(last + 1).map_or(end, |next| next.0) - f.rva,
    )
}

/// The virtual size of section 1 in a PDB's `llvm-pdbutil` dump.
fn section_one_size(pdbutil: &str) -> u32 {
    pdbutil
        .lines()
        .skip_while(|l| !l.contains("SECTION HEADER #1"))
        .find_map(|l| l.trim().strip_suffix(" virtual size"))
        .map(|v| u32::from_str_radix(v.trim(), 16).unwrap())
        .expect("section 1's virtual size")
}

/// [`disassembly`] of an image with a listing (`app` for `app.objdump.txt` and
/// `app.pdbutil.txt`), or nothing for one without.
pub fn disassembly_if_any(image: &str) -> Vec<Disassembled> {
    if dir().join(format!("{image}.objdump.txt")).exists() {
        disassembly(image, image)
    } else {
        Vec::new()
    }
}

/// The virtual address of section 1 in a PDB's `llvm-pdbutil` dump.
fn section_one(pdbutil: &str) -> u32 {
    pdbutil
        .lines()
        .skip_while(|l| !l.contains("SECTION HEADER #1"))
        .find_map(|l| l.trim().strip_suffix(" virtual address"))
        .map(|v| u32::from_str_radix(v.trim(), 16).unwrap())
        .expect("section 1")
}

/// The function named `name` of a PDB.
pub fn function(pdb: &str, name: &str) -> Function {
    functions(pdb)
        .into_iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("{pdb}.pdb has no function {name}"))
}

/// The 16 GUID bytes and the age `llvm-readobj` printed of an image's CodeView record
/// (`app` for `app.readobj.txt`).
pub fn codeview(image: &str) -> ([u8; 16], u32) {
    let text = dump(&format!("{image}.readobj.txt"));
    let guid = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("PDBGUID: ("))
        .expect("PDBGUID line");
    let bytes: Vec<u8> = guid
        .trim_end_matches(')')
        .split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect();
    let age = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("PDBAge: "))
        .expect("PDBAge line");
    (bytes.try_into().unwrap(), age.parse().unwrap())
}

/// One frame of an address as `llvm-symbolizer --inlines --output-style=JSON` printed it:
/// the function, the file (`None` where it printed ""), the line (`None` where it printed 0).
pub type Symbolized = (String, Option<String>, Option<u32>);

/// What llvm-symbolizer said of every byte of an image's code (`inline` for
/// `inline.symbolizer.txt`), by RVA: each address's frames, innermost first.
pub fn symbolizer(image: &str) -> Vec<(u32, Vec<Symbolized>)> {
    let text = dump(&format!("{image}.symbolizer.txt"));
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let address = v["Address"].as_str().unwrap().trim_start_matches("0x");
            let rva = u32::from_str_radix(address, 16).unwrap();
            let frames = v["Symbol"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    let file = f["FileName"].as_str().unwrap();
                    let line = f["Line"].as_u64().unwrap() as u32;
                    (
                        f["FunctionName"].as_str().unwrap().to_owned(),
                        (!file.is_empty()).then(|| file.to_owned()),
                        (line > 0).then_some(line),
                    )
                })
                .collect();
            (rva, frames)
        })
        .collect()
}

/// The frames llvm-symbolizer gave the address `rva` of an image, innermost first.
pub fn symbolized(image: &str, rva: u32) -> Vec<Symbolized> {
    symbolizer(image)
        .into_iter()
        .find(|&(at, _)| at == rva)
        .unwrap_or_else(|| panic!("{image}.symbolizer.txt has no {rva:#X}"))
        .1
}

/// One call stack of [`profile_trace`]: the frames leaf first, as (function, offset into
/// it), and the hits of each of its records.
pub type Stack = (&'static [(&'static str, u32)], &'static [u64]);

/// The call stacks of `app.exe` in [`profile_trace`]: the real call graph of `app.c`
/// (`main_entry` calls `compute_checksum`, which calls `parse_token` and `hash_bytes` and
/// `mix_round`, ...). Return addresses sit inside their callers. Several records of one
/// function stack differ in their addresses, so that folding by function has work to do.
pub const APP_STACKS: &[Stack] = &[
    (
        &[
            ("mix_round", 5),
            ("hash_bytes", 0x20),
            ("parse_token", 0x40),
            ("compute_checksum", 0x30),
            ("main_entry", 0x10),
        ],
        &[240, 160],
    ),
    (
        &[
            ("hash_bytes", 0x18),
            ("parse_token", 0x40),
            ("compute_checksum", 0x30),
            ("main_entry", 0x10),
        ],
        &[150, 100],
    ),
    (
        &[
            ("parse_token", 0x10),
            ("compute_checksum", 0x30),
            ("main_entry", 0x10),
        ],
        &[120, 60],
    ),
    (
        &[
            ("mix_round", 3),
            ("compute_checksum", 0x60),
            ("main_entry", 0x10),
        ],
        &[120],
    ),
    (
        &[
            ("hash_bytes", 0x30),
            ("compute_checksum", 0x80),
            ("main_entry", 0x10),
        ],
        &[90],
    ),
    (&[("compute_checksum", 0x50), ("main_entry", 0x10)], &[60]),
    (&[("spin_pause", 0), ("main_entry", 0x8)], &[20]),
];

/// The call stacks of `core.dll` in [`profile_trace`].
pub const CORE_STACKS: &[Stack] = &[(&[("core_add", 1), ("core_scale", 0x10)], &[70, 30])];

/// A trace builder whose program IDs are `app.exe` (0) and `core.dll` (1) as built here.
fn builds() -> SptBuilder {
    let mut b = SptBuilder::new();
    for (image, name) in [("app", "app.exe"), ("core", "core.dll")] {
        let (guid, age) = codeview(image);
        let name = b.string(name);
        b.program_id(Guid(guid), age, name);
    }
    b
}

/// `testdata/pe/profile.spt`: `app.exe` and `core.dll` as built in `testdata/pe/`, with
/// their GUIDs and ages, each with the call stacks of [`APP_STACKS`] and [`CORE_STACKS`]
/// (a REPEAT gives each record its hits), the leaf of each stack as an IP sample, and a few
/// LBR branches.
pub fn profile_trace() -> Vec<u8> {
    let mut b = builds();
    for (progid, pdb, stacks) in [(0u16, "app", APP_STACKS), (1, "core", CORE_STACKS)] {
        b.binary_id(progid);
        let rva = |name: &str, offset: u32| function(pdb, name).rva + offset;
        for (frames, records) in stacks {
            let rvas: Vec<u32> = frames.iter().map(|&(f, o)| rva(f, o)).collect();
            for (i, &hits) in records.iter().enumerate() {
                // Records of one stack differ in their leaf address.
                let mut rvas = rvas.clone();
                rvas[0] += i as u32 % 2;
                b.repeat(hits - 1).callstack(&rvas);
                b.repeat(hits - 1).ip(UNHALT_CYCLE, &rvas[..1]);
            }
        }
        let first = rva(stacks[0].0[0].0, 0);
        let second = rva(stacks[0].0[1].0, 0);
        b.ip(RETIRE_INSTR, &[first, second])
            .lbr(&[(second + 4, first), (first + 2, second + 8)]);
    }
    b.build()
}

/// The call stacks of `inline.exe` in [`inline_trace`], leaf first. Every leaf but the last
/// sits in code the compiler inlined: `rotate` in `mix` in `digest` (+0x3F), `mix` in
/// `digest` (+0x35), and `checksum` returns (+0x30) right after its call to `digest`, which
/// lies in `step`, inlined into it. `main_entry` returns at +0x15, after its call.
pub const INLINE_STACKS: &[Stack] = &[
    (
        &[("digest", 0x3F), ("checksum", 0x30), ("main_entry", 0x15)],
        &[300],
    ),
    (
        &[("digest", 0x35), ("checksum", 0x30), ("main_entry", 0x15)],
        &[200],
    ),
    (
        &[("digest", 0x01), ("checksum", 0x30), ("main_entry", 0x15)],
        &[50],
    ),
    (&[("checksum", 0x30), ("main_entry", 0x15)], &[100]),
    (&[("checksum", 0x45), ("main_entry", 0x15)], &[40]),
];

/// `testdata/pe/inline.spt`: `inline.exe` as built in `testdata/pe/` (progid 0), with the
/// call stacks of [`INLINE_STACKS`], the leaf of each as an IP sample, and an LBR record
/// whose branches end in inlined code.
pub fn inline_trace() -> Vec<u8> {
    let records: Vec<&[u64]> = INLINE_STACKS.iter().map(|(_, r)| *r).collect();
    inline_sampled(&records)
}

/// `testdata/pe/inline-new.spt`: a later run of the same build as [`inline_trace`], NEW to
/// its BASE in the `/compare` examples: the same stacks with other counts, `rotate`'s (the first)
/// and `checksum`'s own code (the last) much hotter, `mix`'s and `checksum`'s call of
/// `digest` cooler.
pub fn inline_new_trace() -> Vec<u8> {
    inline_sampled(&[&[600, 300], &[60], &[50], &[30], &[240]])
}

/// `inline.exe` sampled with [`INLINE_STACKS`]' frames, each stack's records as given.
fn inline_sampled(records: &[&[u64]]) -> Vec<u8> {
    let mut b = SptBuilder::new();
    let (guid, age) = codeview("inline");
    let name = b.string("inline.exe");
    b.program_id(Guid(guid), age, name);
    b.binary_id(0);
    let rva = |name: &str, offset: u32| function("inline", name).rva + offset;
    for ((frames, _), records) in INLINE_STACKS.iter().zip(records) {
        let rvas: Vec<u32> = frames.iter().map(|&(f, o)| rva(f, o)).collect();
        for &hits in records.iter() {
            b.repeat(hits - 1).callstack(&rvas);
            b.repeat(hits - 1).ip(UNHALT_CYCLE, &rvas[..1]);
        }
    }
    b.lbr(&[
        (rva("checksum", 0x2B), rva("digest", 0)),
        (rva("digest", 0x52), rva("digest", 0x30)),
    ]);
    b.build()
}

/// `testdata/pe/huge.spt`: the same builds as [`profile_trace`], `app.exe` sampled with
/// counts past 64 bits: two IP records and a call stack, each repeated 2^64 times (a REPEAT
/// of 2^64 - 1), so that one key holds 2^65 hits: what engines must sum exactly.
pub fn huge_trace() -> Vec<u8> {
    let mut b = builds();
    let mix = function("app", "mix_round").rva;
    let caller = function("app", "hash_bytes").rva + 0x20;
    b.binary_id(0);
    for _ in 0..2 {
        b.repeat(u64::MAX).ip(UNHALT_CYCLE, &[mix]);
    }
    b.repeat(u64::MAX).callstack(&[mix, caller]);
    b.build()
}

/// `testdata/pe/app-only.spt`: the same builds as [`profile_trace`], but only `app.exe` was
/// sampled, and only once (an IP sample, no LBR): `core.dll` is in the program-ID table with
/// no sample records, as when SPTAggregate's `/binary` left it out.
pub fn app_only_trace() -> Vec<u8> {
    let mut b = builds();
    // One hit in compute_checksum's 148 bytes: fewer than 1 per 100 bytes of code.
    let sum = function("app", "compute_checksum");
    b.binary_id(0).ip(UNHALT_CYCLE, &[sum.rva + 0x30]);
    b.build()
}
