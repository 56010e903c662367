//! `/pprof` and `/speedscope`: the files the viewers read, read back, on the real PE/PDB
//! fixtures (`testdata/pe/profile.spt`) and on traces with counts past 64 bits.
//!
//! The pprof profile is decoded with the test kit's own reading of the wire format, and,
//! when Go is installed (Debian's `golang-go`), by `go tool pprof` itself. The speedscope file is checked against
//! the JSON Schema the `speedscope` npm package ships (`testdata/speedscope/`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use sptdump::views::Kind;
use sptdump_testkit::builder::{RETIRE_INSTR, SptBuilder, UNHALT_CYCLE};
use sptdump_testkit::fixtures::{self, APP_STACKS, CORE_STACKS};
use sptdump_testkit::pprof::Profile;

use crate::support::run_in;

/// Writes `/pprof` and `/speedscope` of `trace` (in `testdata/pe`) with `extra` options, and
/// returns the decoded profile, the speedscope JSON and the run.
fn export(trace: &Path, extra: &[&str]) -> (Profile, Value, Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let pb = dir.path().join("trace.pb.gz");
    let ss = dir.path().join("trace.speedscope.json");
    let pprof = format!("/pprof:{}", pb.display());
    let speedscope = format!("/speedscope:{}", ss.display());
    let mut args = vec![pprof.as_str(), speedscope.as_str()];
    args.extend(extra);
    args.push(trace.to_str().unwrap());
    let o = run_in(&fixtures::dir(), &args);
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&pb).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    let profile = Profile::decode(bytes.as_slice()).unwrap();
    let json = serde_json::from_slice(&std::fs::read(&ss).unwrap()).unwrap();
    (profile, json, o, dir)
}

fn profile_spt() -> PathBuf {
    fixtures::dir().join("profile.spt")
}

fn string(p: &Profile, i: i64) -> &str {
    &p.string_table[i as usize]
}

/// The total of each sample type, by name.
fn totals(p: &Profile) -> Vec<(String, i64)> {
    p.sample_type
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let total = p.sample.iter().map(|s| s.value[i]).sum();
            (string(p, t.r#type).to_owned(), total)
        })
        .collect()
}

/// `/summary`'s totals of the trace, from its JSON: samples per IP event, branches.
fn summary_totals(trace: &Path) -> Vec<(String, u128)> {
    let o = run_in(
        &fixtures::dir(),
        &["/json", "/summary", trace.to_str().unwrap()],
    );
    let mut out: Vec<(String, u128)> = Vec::new();
    let mut add = |name: &str, n: u128| match out.iter_mut().find(|(k, _)| k == name) {
        Some((_, t)) => *t += n,
        None => out.push((name.to_owned(), n)),
    };
    for line in String::from_utf8(o.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["type"] != "summary" {
            continue;
        }
        for ip in v["ip"].as_array().unwrap() {
            add(
                ip["event"].as_str().unwrap(),
                ip["samples"].as_u64().unwrap().into(),
            );
        }
        if !v["lbr"].is_null() {
            add("branches", v["lbr"]["branches"].as_u64().unwrap().into());
        }
    }
    out
}

#[test]
fn the_pprof_profile_holds_every_hit_of_every_kind() {
    let (p, _, o, _dir) = export(&profile_spt(), &["/pdb:app.pdb,core.pdb"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.stdout, b"", "nothing on stdout");
    assert_eq!(p.string_table[0], "");
    let totals = totals(&p);
    // Stacks last, and the default.
    assert_eq!(totals.last().unwrap().0, "stacks");
    assert_eq!(string(&p, p.default_sample_type), "stacks");
    let stacks: u64 = APP_STACKS.iter().chain(CORE_STACKS).flat_map(|s| s.1).sum();
    assert_eq!(totals.last().unwrap().1, stacks as i64);
    for (name, total) in summary_totals(&profile_spt()) {
        let got = totals.iter().find(|(n, _)| *n == name).unwrap().1;
        assert_eq!(got as u128, total, "{name}");
    }
    for t in &p.sample_type {
        assert_eq!(string(&p, t.unit), "count");
    }
    // A mapping per binary, keyed for the symbol server, starting at 0.
    let (guid, age) = fixtures::codeview("app");
    let key = format!(
        "{:08X}{:04X}{:04X}{}{age:X}",
        u32::from_le_bytes(guid[..4].try_into().unwrap()),
        u16::from_le_bytes(guid[4..6].try_into().unwrap()),
        u16::from_le_bytes(guid[6..8].try_into().unwrap()),
        guid[8..]
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect::<String>()
    );
    let app = &p.mapping[0];
    assert_eq!(
        (string(&p, app.filename), string(&p, app.build_id)),
        ("app.exe", key.as_str())
    );
    assert_eq!(app.memory_start, 0);
    assert_eq!(p.mapping.len(), 2);
    // Every location is an RVA with a function: the PDB's, one byte back for return addresses.
    let mix = fixtures::function("app", "mix_round");
    let loc = p
        .location
        .iter()
        .find(|l| l.address == u64::from(mix.rva + 5))
        .unwrap();
    let f = &p.function[(loc.line[0].function_id - 1) as usize];
    // The function's name alone: the binary is the mapping's.
    assert_eq!(string(&p, f.name), "mix_round");
    assert_eq!(string(&p, f.filename), "C:\\src\\app.c");
    assert!(f.start_line > 0);
    assert!(
        p.location.iter().all(|l| l.line.len() == 1),
        "no inlining in app.exe"
    );
    assert!(app.has_functions && app.has_filenames && app.has_line_numbers);
    // Each sample has a value of one type, and a `source` label naming it.
    for s in &p.sample {
        let nonzero: Vec<usize> = (0..s.value.len()).filter(|&i| s.value[i] != 0).collect();
        assert_eq!(nonzero.len(), 1, "{s:?}");
        let [label] = s.label.as_slice() else {
            panic!("{s:?}")
        };
        assert_eq!(string(&p, label.key), "source");
        assert_eq!(label.str, p.sample_type[nonzero[0]].r#type);
    }
    // Those of the default type first.
    let default = p.sample_type.len() - 1;
    let first_other = p.sample.iter().position(|s| s.value[default] == 0).unwrap();
    assert!(
        p.sample[first_other..]
            .iter()
            .all(|s| s.value[default] == 0)
    );
    // A stack's locations are leaf first: its first is a leaf, its last main_entry's.
    let main = fixtures::function("app", "main_entry");
    let deep = p.sample.iter().find(|s| s.location_id.len() == 5).unwrap();
    let last = &p.location[(deep.location_id[4] - 1) as usize];
    assert_eq!(last.address, u64::from(main.rva + 0x10));
    // The trace's path is in a comment.
    assert!(
        p.comment
            .iter()
            .any(|&c| string(&p, c).contains("profile.spt"))
    );
}

/// A trace without call stacks (the usual one: IP samples and LBR) has no `stacks` sample
/// type in pprof, and opens on its first IP event; speedscope has no profile of stacks and
/// opens on the first.
#[test]
fn a_trace_without_call_stacks_has_no_stacks_type_and_opens_on_its_first_event() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = SptBuilder::new();
    b.binary("app.exe", "42AC0098-ADB5-E796-8C0E-161D2814780E", 1);
    b.binary_id(0)
        .ip(UNHALT_CYCLE, &[0x10, 0x20])
        .ip(RETIRE_INSTR, &[0x10])
        .lbr(&[(0x14, 0x20)]);
    let trace = dir.path().join("ip.spt");
    std::fs::write(&trace, b.build()).unwrap();
    let (p, json, o, _out) = export(&trace, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let types: Vec<&str> = p.sample_type.iter().map(|t| string(&p, t.r#type)).collect();
    assert_eq!(types, ["branches", "RETIRE_INSTR", "UNHALT_CYCLE"]);
    assert_eq!(string(&p, p.default_sample_type), "UNHALT_CYCLE");
    let profiles: Vec<&str> = json["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(profiles, ["app.exe: UNHALT_CYCLE", "app.exe: RETIRE_INSTR"]);
    assert_eq!(json["activeProfileIndex"], 0);
}

#[test]
fn without_symbols_every_location_has_a_function_named_by_its_address() {
    let (p, json, _, _dir) = export(&profile_spt(), &[]);
    assert!(
        p.function
            .iter()
            .all(|f| string(&p, f.name).contains("+0x"))
    );
    assert_eq!(p.function.len(), p.location.len());
    let frames = json["shared"]["frames"].as_array().unwrap();
    assert!(
        frames
            .iter()
            .all(|f| f["name"].as_str().unwrap().contains("+0x"))
    );
    // A frame per name, shared by every profile that has it; without a PDB, each in its
    // binary's file.
    let mut names: Vec<&str> = frames.iter().map(|f| f["name"].as_str().unwrap()).collect();
    let all = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all, "one frame per name");
    let profiles = json["profiles"].as_array().unwrap();
    let used = |p: &Value| -> Vec<u64> {
        let mut frames: Vec<u64> = p["samples"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s.as_array().unwrap().iter().map(|f| f.as_u64().unwrap()))
            .collect();
        frames.sort_unstable();
        frames.dedup();
        frames
    };
    let mut uses: Vec<u64> = profiles.iter().flat_map(used).collect();
    let all = uses.len();
    uses.sort_unstable();
    uses.dedup();
    assert!(uses.len() < all, "a frame shared by two profiles");
    for f in frames {
        let (name, file) = (f["name"].as_str().unwrap(), f["file"].as_str().unwrap());
        assert_eq!(name.split_once('+').unwrap().0, file, "{f}");
    }
    assert!(frames.iter().any(|f| f["file"] == "core.dll"));
}

#[test]
fn counts_past_63_bits_are_clamped_and_said_so() {
    let mut b = SptBuilder::new();
    b.binary("app.exe", "42AC0098-ADB5-E796-8C0E-161D2814780E", 1);
    b.binary_id(0)
        .repeat(u64::MAX)
        .ip(UNHALT_CYCLE, &[0x1000])
        .repeat(u64::MAX)
        .callstack(&[0x1000, 0x2000]);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("huge.spt");
    std::fs::write(&trace, b.build()).unwrap();
    let (p, _, o, d) = export(&trace, &[]);
    assert_eq!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches("clamped").count(), 1, "said once: {err}");
    assert!(totals(&p).iter().all(|(_, t)| *t == i64::MAX));
    // speedscope's file keeps the exact weight.
    let text = std::fs::read_to_string(d.path().join("trace.speedscope.json")).unwrap();
    assert!(text.contains("18446744073709551616"), "{text}");
}

/// The functions pprof gives the locations at `rvas`, by address.
fn functions_at(p: &Profile, rvas: &[u32]) -> Vec<String> {
    rvas.iter()
        .map(|&rva| {
            let location = p
                .location
                .iter()
                .find(|l| l.address == u64::from(rva))
                .unwrap_or_else(|| panic!("no location at {rva:#x}"));
            let function = &p.function[location.line[0].function_id as usize - 1];
            string(p, function.name).to_owned()
        })
        .collect()
}

/// A return address is looked up one byte back, a leaf and an IP sample where
/// they point, in either stack order: `main_entry`'s first byte as the return address of a
/// call at the very end of the code before it is in the padding there, in no function, and
/// as an IP sample or a leaf is `main_entry`. One location per address: where any record
/// looks an address up where it points, so does its location, whichever record comes first.
#[test]
fn pprof_looks_return_addresses_up_one_byte_back_in_either_order() {
    use sptdump_testkit::builder::Guid;

    let leaf = fixtures::function("app", "compute_checksum").rva;
    let ret = fixtures::function("app", "main_entry").rva;
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, stacks: &[&[u32]], ip: &[u32]| {
        let mut b = SptBuilder::new();
        let (guid, age) = fixtures::codeview("app");
        let app = b.string("app.exe");
        b.program_id(Guid(guid), age, app);
        b.binary_id(0);
        for frames in stacks {
            b.callstack(frames);
        }
        if !ip.is_empty() {
            b.ip(UNHALT_CYCLE, ip);
        }
        let path = dir.path().join(name);
        std::fs::write(&path, b.build()).unwrap();
        path
    };
    let pdb = format!("/pdb:{}", fixtures::dir().join("app.pdb").display());
    let leaf_first = write("leaf-first.spt", &[&[leaf, ret]], &[]);
    let root_first = write("root-first.spt", &[&[ret, leaf]], &[]);
    let both = write("both.spt", &[&[leaf, ret]], &[ret]);
    // The return address first, then the same address as a leaf.
    let later = write("later.spt", &[&[leaf, ret], &[ret]], &[]);
    for (trace, order, want_ret) in [
        (&leaf_first, "/stackorder:leaf-first", None),
        (&root_first, "/stackorder:root-first", None),
        (&both, "/stackorder:leaf-first", Some("main_entry")),
        (&later, "/stackorder:leaf-first", Some("main_entry")),
    ] {
        let (p, _, o, _out) = export(trace, &[&pdb, order]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let names = functions_at(&p, &[leaf, ret]);
        assert_eq!(names[0], "compute_checksum", "{order}");
        match want_ret {
            Some(name) => assert_eq!(names[1], name, "{order}"),
            None => assert!(names[1].contains("+0x"), "{order}: {names:?}"),
        }
    }
}

/// A pprof mapping holds every RVA and says what its locations have: with the PDB's inline
/// frames, file names, line numbers and inlined functions; without a PDB, none of them.
#[test]
fn pprof_mappings_say_what_their_locations_have() {
    let inline = fixtures::dir().join("inline.spt");
    let flags = |extra: &[&str]| {
        let (p, _, o, _dir) = export(&inline, extra);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(p.mapping.len(), 1);
        let m = &p.mapping[0];
        assert!(m.has_functions);
        // Addresses are RVAs: the mapping starts at 0 and holds every 32-bit one.
        assert_eq!((m.memory_start, m.memory_limit), (0, 1 << 32));
        assert!(p.location.iter().all(|l| l.address < m.memory_limit));
        (m.has_filenames, m.has_line_numbers, m.has_inline_frames)
    };
    assert_eq!(flags(&["/pdb:inline.pdb"]), (true, true, true));
    assert_eq!(flags(&[]), (false, false, false));
}

#[test]
fn pprof_lists_a_function_once_however_many_addresses_it_holds() {
    let (p, _, o, _dir) = export(&fixtures::dir().join("inline.spt"), &["/pdb:inline.pdb"]);
    assert_eq!(o.status.code(), Some(0));
    let mut functions: Vec<(i64, i64)> = p.function.iter().map(|f| (f.name, f.filename)).collect();
    let listed = functions.len();
    functions.sort_unstable();
    functions.dedup();
    assert_eq!(
        functions.len(),
        listed,
        "a function listed twice: {:?}",
        p.function
    );
    // Some function holds several of the sampled addresses.
    let lines: usize = p.location.iter().map(|l| l.line.len()).sum();
    assert!(listed < lines, "{listed} functions for {lines} lines");
}

/// The JSON Schema the speedscope npm package ships.
fn speedscope_schema() -> (boon::Schemas, boon::SchemaIndex) {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/speedscope/file-format-schema.json");
    let schema: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.add_resource("speedscope.json", schema).unwrap();
    let index = compiler.compile("speedscope.json", &mut schemas).unwrap();
    (schemas, index)
}

#[test]
fn the_speedscope_file_follows_speedscopes_schema_and_loses_no_hit() {
    let (schemas, index) = speedscope_schema();
    let (_, json, _, _dir) = export(&profile_spt(), &["/pdb:app.pdb,core.pdb"]);
    if let Err(e) = schemas.validate(&json, index) {
        panic!("{e:#}");
    }
    let profiles = json["profiles"].as_array().unwrap();
    let total = |name: &str| -> u64 {
        let p = profiles.iter().find(|p| p["name"] == name).unwrap();
        let weights: u64 = p["weights"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_u64().unwrap())
            .sum();
        assert_eq!(p["endValue"].as_u64(), Some(weights), "{name}");
        assert_eq!(p["type"], "sampled");
        weights
    };
    let app: u64 = APP_STACKS.iter().flat_map(|s| s.1).sum();
    assert_eq!(total("app.exe: stacks"), app);
    assert_eq!(total("app.exe: UNHALT_CYCLE"), app);
    // Samples list frames outermost first: main_entry leads every app.exe stack.
    let frames = json["shared"]["frames"].as_array().unwrap();
    let stacks = profiles
        .iter()
        .find(|p| p["name"] == "app.exe: stacks")
        .unwrap();
    for sample in stacks["samples"].as_array().unwrap() {
        let first = sample[0].as_u64().unwrap() as usize;
        assert_eq!(frames[first]["name"], "app.exe!main_entry");
    }
    assert_eq!(
        profiles[json["activeProfileIndex"].as_u64().unwrap() as usize]["name"],
        "app.exe: stacks",
        "opens on the call stacks"
    );
    // And the schema does reject a broken file.
    let mut broken = json.clone();
    broken["profiles"][0]["weights"] = Value::String("many".into());
    assert!(schemas.validate(&broken, index).is_err());
}

#[test]
fn the_exports_are_one_file_per_trace() {
    let o = run_in(
        &fixtures::dir(),
        &["/pprof:x.pb.gz", "profile.spt", "trace.spt"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give it one trace"));
    let o = run_in(
        &fixtures::dir(),
        &["/pprof:/no/such/dir/x.pb.gz", "profile.spt"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot write the pprof profile"));
}

/// A full disk is the deflater's error (pprof is deflated on a second thread), said as the
/// reason the profile could not be written.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_said_when_the_pprof_profile_is_written() {
    let o = run_in(&fixtures::dir(), &["/pprof:/dev/full", "profile.spt"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot write the pprof profile /dev/full: no space left on device"),
        "{err}"
    );
}

/// speedscope's profiles are written on a second thread: a full disk is its error, and the
/// profiles are no longer made.
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_said_when_the_speedscope_file_is_written() {
    let o = run_in(&fixtures::dir(), &["/speedscope:/dev/full", "profile.spt"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("cannot write the speedscope file /dev/full: no space left on device"),
        "{err}"
    );
}

#[test]
fn a_trace_with_nothing_to_read_says_that_its_files_are_not_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.spt"), b"").unwrap();
    let o = run_in(
        dir.path(),
        &[
            "/pprof:x.pb.gz",
            "/speedscope:x.json",
            "/parquet:t",
            "empty.spt",
        ],
    );
    assert_eq!(o.status.code(), Some(1), "the header's error");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "sptdump: empty.spt: note: nothing of the trace could be read: \
             /pprof, /speedscope, /parquet write nothing for it"
        ),
        "{err}"
    );
    for name in ["x.pb.gz", "x.json", "t"] {
        assert!(!dir.path().join(name).exists(), "{name}");
    }
    // A header that reads is enough for files, however little follows it.
    let sample = std::fs::read(crate::support::crate_root().join("testdata/sample.spt")).unwrap();
    std::fs::write(dir.path().join("short.spt"), &sample[..100]).unwrap();
    let o = run_in(dir.path(), &["/pprof:x.pb.gz", "short.spt"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("nothing of the trace"));
    assert!(dir.path().join("x.pb.gz").exists());
}

/// Whether Go is installed; else the test `name` says it skipped, unless
/// `SPTDUMP_REQUIRE_GO=1` makes that a failure.
fn has_go(name: &str) -> bool {
    let has_go = std::process::Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_go {
        assert!(
            std::env::var_os("SPTDUMP_REQUIRE_GO").is_none(),
            "SPTDUMP_REQUIRE_GO is set, but go is not installed"
        );
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: {name}: go is not installed (Debian: golang-go)"
        );
    }
    has_go
}

/// What `go tool pprof ARGS` prints of the profile `export` wrote into `dir`.
fn go_pprof(dir: &tempfile::TempDir, args: &[&str]) -> String {
    let o = std::process::Command::new("go")
        .args(["tool", "pprof"])
        .args(args)
        .arg(dir.path().join("trace.pb.gz"))
        .env("HOME", dir.path())
        .env("PPROF_TMPDIR", dir.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// pprof shows the source lines and the inline frames of the -O2 fixture: `-lines`,
/// `-traces` (opening on the call stacks) and `-list` with the source beside it, as
/// llvm-symbolizer reads them.
#[test]
fn go_tool_pprof_shows_source_lines_and_inline_frames() {
    if !has_go("go_tool_pprof_shows_source_lines_and_inline_frames") {
        return;
    }
    let trace = fixtures::dir().join("inline.spt");
    let (p, _, o, dir) = export(&trace, &["/pdb:inline.pdb"]);
    assert_eq!(o.status.code(), Some(0));
    // rotate's line, inlined in mix, inlined in digest: the hottest sample.
    let rva = fixtures::function("inline", "digest").rva + 0x3F;
    let told = fixtures::symbolized("inline", rva);
    let location = p
        .location
        .iter()
        .find(|l| l.address == u64::from(rva))
        .unwrap();
    let lines: Vec<(String, i64)> = location
        .line
        .iter()
        .map(|l| {
            let f = &p.function[l.function_id as usize - 1];
            (string(&p, f.name).to_owned(), l.line)
        })
        .collect();
    let expected: Vec<(String, i64)> = told
        .iter()
        .map(|(f, _, l)| (f.clone(), i64::from(l.unwrap())))
        .collect();
    assert_eq!(lines, expected, "innermost first, as pprof expects");

    let go = |args: &[&str]| go_pprof(&dir, args);
    let top = go(&["-lines", "-top", "-sample_index=UNHALT_CYCLE"]);
    let (f, file, line) = &told[0];
    let shown = format!(
        "{f} {}:{} (inline)",
        file.as_deref().unwrap(),
        line.unwrap()
    );
    assert!(top.contains(&shown), "{shown}\n{top}");

    let traces = go(&["-traces"]);
    let first = traces.split("-----------+").nth(1).unwrap();
    assert!(
        first.contains("source:  stacks") && first.contains("(inline)"),
        "{traces}"
    );

    // -list finds the source by the path the PDB records (C:\src\inline.c), which on Unix is
    // a file name: put the source there. (On Windows it is that absolute path.)
    if !cfg!(unix) {
        return;
    }
    let source = dir.path().join("source");
    std::fs::create_dir(&source).unwrap();
    let recorded = file.as_deref().unwrap();
    std::fs::copy(fixtures::dir().join("inline.c"), source.join(recorded)).unwrap();
    let path = format!("-source_path={}", source.display());
    let list = go(&["-list", "^digest$", "-sample_index=UNHALT_CYCLE", &path]);
    assert!(list.contains("h = mix(h, p[i]);"), "{list}");
    assert!(
        list.lines()
            .any(|l| l.contains("for (unsigned i = 0; i < n; i++)") && l.contains("50")),
        "{list}"
    );
}

/// `go tool pprof` reads the profile: its totals per sample type and the function names.
/// Skipped, and said so, when Go is not installed; `SPTDUMP_REQUIRE_GO=1` makes that a
/// failure.
#[test]
fn go_tool_pprof_reads_the_profile() {
    if !has_go("go_tool_pprof_reads_the_profile") {
        return;
    }
    let (p, _, _, dir) = export(&profile_spt(), &["/pdb:app.pdb,core.pdb"]);
    let go = |args: &[&str]| go_pprof(&dir, args);
    for (name, total) in totals(&p) {
        let top = go(&["-top", &format!("-sample_index={name}")]);
        assert!(
            top.contains(&format!("of {total} total")),
            "{name}: {total}\n{top}"
        );
    }
    let top = go(&["-top", "-sample_index=stacks"]);
    for name in ["mix_round", "main_entry", "core_add"] {
        assert!(top.contains(name), "{name}\n{top}");
    }
    assert!(!top.contains("app.exe!"), "{top}");
    let raw = go(&["-raw"]);
    assert!(raw.contains("app.exe"), "{raw}");
}

#[test]
fn the_invariants_the_fuzzer_checks_hold_and_catch_a_lost_hit() {
    use sptdump_testkit::dumping::{Via, dump_bytes, option_sets};
    use sptdump_testkit::exports::{check_exports, expected_hits};
    let bytes = std::fs::read(profile_spt()).unwrap();
    let set = option_sets()
        .into_iter()
        .find(|s| s.exports() && s.alone())
        .unwrap();
    for via in [Via::File, Via::Pipe] {
        let d = dump_bytes(&bytes, &set, via);
        let expected = expected_hits(&bytes, &set, via);
        assert_eq!(
            expected[&("app.exe".to_owned(), "ETW_CALLSTACK".to_owned())],
            1120
        );
        assert_eq!(expected.len(), 8, "{expected:?}");
        check_exports(&set, &d, &expected).unwrap();
        // One hit fewer anywhere is seen.
        let mut fewer = expected.clone();
        *fewer.values_mut().next().unwrap() -= 1;
        let e = check_exports(&set, &d, &fewer).unwrap_err();
        assert!(e.starts_with("pprof: totals"), "{e}");
        // A frame index out of range is seen.
        let path = set.plan.views.path(Kind::Speedscope).unwrap();
        let mut json: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        json["profiles"][0]["samples"][0][0] = Value::from(1_000_000);
        std::fs::write(path, json.to_string()).unwrap();
        let e = check_exports(&set, &d, &expected).unwrap_err();
        assert!(e.contains("frame 1000000 of"), "{e}");
    }
}

/// pprof is handed the call stacks when no view after it reads them, and borrows them when
/// `/lines` or `/parquet` does: the profile is the same either way, with the stacks'
/// samples first and the rest after them, and so are the other view's lines and tables.
#[test]
fn pprof_writes_the_same_profile_whether_or_not_a_view_reads_the_stacks_after_it() {
    let pdb = "/pdb:app.pdb,core.pdb";
    let (alone, _, o, _dir) = export(&profile_spt(), &[pdb]);
    let notes = String::from_utf8_lossy(&o.stderr);
    assert!(
        !notes.contains("clamped"),
        "counts that fit are not said clamped: {notes}"
    );
    assert!(alone.sample.len() > 1, "a profile of several samples");
    let stacks = alone.sample_type.len() - 1;
    assert_eq!(string(&alone, alone.sample_type[stacks].r#type), "stacks");
    assert!(
        alone.sample[0].value[stacks] > 0,
        "the stacks' samples first"
    );
    let trace = profile_spt();
    for view in ["/lines", "/parquet"] {
        // The view on its own, then beside pprof: the same lines, the same tables.
        let mut seen = Vec::new();
        for with_pprof in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let tables = dir.path().join("tables");
            let arg = match view {
                "/parquet" => format!("/parquet:{}", tables.display()),
                _ => view.to_owned(),
            };
            let o = if with_pprof {
                let (with, _, o, _) = export(&trace, &[pdb, &arg]);
                assert_eq!(with, alone, "pprof beside {view}");
                o
            } else {
                run_in(&fixtures::dir(), &[pdb, &arg, trace.to_str().unwrap()])
            };
            assert!(o.status.success(), "{view}: {o:?}");
            let stacks = tables.join("stacks").join("profile.parquet");
            seen.push((o.stdout, std::fs::read(stacks).ok()));
        }
        assert_eq!(seen[0], seen[1], "{view} beside pprof");
        assert!(
            !seen[0].0.is_empty() || seen[0].1.is_some(),
            "{view} shows something"
        );
    }
}
