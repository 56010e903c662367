//! SPD files (Sample Profile Databases): their identities read by the checks of
//! docs/format.md, never guessed at; `/match` and `/check` with them; an SPD given as a
//! trace. The synthetic SPDs come from the test kit's writer, which shares no code with the
//! reader; the real ones are read from the shared suite beside the repository.

use std::collections::BTreeMap;
use std::io::{Cursor, Read, Seek, SeekFrom};
use std::path::PathBuf;

use proptest::prelude::*;
use serde_json::Value;
use sptdump::image::ident::{self, IdentError, Kind};
use sptdump::image::spd::{self, Check, SpdError};
use sptdump_testkit::builder::{RETIRE_INSTR, SptBuilder};
use sptdump_testkit::fixtures::{self, APP_GUID as APP, CORE_GUID as CORE};
use sptdump_testkit::golden::blessing;
use sptdump_testkit::shared;
use sptdump_testkit::spd::{SpdBuilder, field, readme_spds};

use crate::support::{json_lines, run_in};

fn crate_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn pe_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/pe")
}

fn read_bytes(bytes: &[u8]) -> Result<spd::Spd, SpdError> {
    spd::read(&mut Cursor::new(bytes), bytes.len() as u64)
}

/// The check a file fails, when it fails one.
fn failed(bytes: &[u8]) -> Option<Check> {
    match read_bytes(bytes) {
        Ok(_) => None,
        Err(SpdError::NotRecognised { check, .. }) => Some(check),
        Err(e) => panic!("reading memory cannot fail: {e}"),
    }
}

#[test]
fn the_readme_spds_are_up_to_date() {
    for (name, built) in readme_spds() {
        let path = pe_dir().join(name);
        if blessing() {
            std::fs::write(&path, &built).unwrap();
            continue;
        }
        let on_disk = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; run SPTDUMP_BLESS=1 cargo test", path.display()));
        assert!(
            on_disk == built,
            "{} differs from the test kit's writer; run SPTDUMP_BLESS=1 cargo test",
            path.display()
        );
    }
}

/// The image and PDB of the build each bundled SPD is of: `app.spd` of `app.exe`, and
/// `app-old.spd` of an older build of it whose code is the same (only its GUID differs);
/// `core.spd` of `core.dll`, `lbr.spd` of `lbr.exe`.
fn build_of(spd: &str) -> &'static str {
    match spd {
        "app.spd" | "app-old.spd" => "app",
        "core.spd" => "core",
        "lbr.spd" => "lbr",
        other => panic!("{other}: which build is it of?"),
    }
}

#[test]
fn the_bundled_spds_place_each_function_where_the_pdb_of_its_build_does() {
    let mut bundled: Vec<String> = std::fs::read_dir(pe_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".spd"))
        .collect();
    bundled.sort();
    let mut written: Vec<&str> = readme_spds().iter().map(|(name, _)| *name).collect();
    // lbr.spd is written from lbr.spt's flow (`parquet_blocks::lbr_spd_is_up_to_date`).
    written.push("lbr.spd");
    written.sort();
    assert_eq!(
        bundled, written,
        "every bundled SPD is written by the test kit"
    );
    for name in &bundled {
        let image = build_of(name);
        let path = format!("testdata/pe/{name}");
        let lines = |view: &str| {
            let o = assert_cmd::Command::cargo_bin("spddump")
                .unwrap()
                .current_dir(crate_root())
                .args(["/json", view, &path])
                .output()
                .unwrap();
            json_lines(&o)
        };
        let header = &lines("/header")[0];
        let (guid, age) = fixtures::codeview(image);
        if name != "app-old.spd" {
            let bytes = spd_guid_bytes(header["guid"].as_str().unwrap());
            assert_eq!(
                (bytes, header["age"].as_u64()),
                (guid, Some(u64::from(age))),
                "{name}"
            );
        }
        let code = fixtures::disassembly_if_any(image);
        let mut checked = 0;
        let functions = lines("/func");
        let blocks = lines("/fg");
        for f in functions.iter().filter(|l| l["type"] == "spd_function") {
            let function = f["name"].as_str().unwrap();
            let (rva, size) = (f["rva"].as_u64().unwrap(), f["size"].as_u64().unwrap());
            if size == 0 {
                // A function of no code of its own (folded, or inlined everywhere): none
                // of the PDB's functions.
                assert!(
                    !fixtures::functions(image)
                        .iter()
                        .any(|p| p.name == function),
                    "{name}: {function} has code in {image}.pdb"
                );
                continue;
            }
            let (want_rva, want_size) = fixtures::placed(image, image, function);
            assert_eq!(
                (rva, size),
                (u64::from(want_rva), u64::from(want_size)),
                "{name}: {function} at 0x{rva:X}, 0x{size:X} bytes; {image}.pdb places it"
            );
            // Its blocks' code ranges lie inside its code, and split it where an instruction
            // starts, where the image has a listing.
            let starts: Vec<u64> = code
                .iter()
                .map(|c| u64::from(c.0))
                .filter(|&at| rva <= at && at < rva + size)
                .chain([rva + size])
                .collect();
            let of_function = |b: &&Value| b["type"] == "spd_block" && b["function"] == f["hash"];
            for b in blocks.iter().filter(of_function) {
                for r in b["ranges"].as_array().unwrap() {
                    let (offset, len) = (r[0].as_u64().unwrap(), r[1].as_u64().unwrap());
                    let what = format!("{name}: {function}'s range +0x{offset:X}, 0x{len:X} bytes");
                    assert!(offset + len <= size, "{what}: past its 0x{size:X} bytes");
                    if !code.is_empty() {
                        for edge in [rva + offset, rva + offset + len] {
                            assert!(
                                starts.contains(&edge),
                                "{what}: 0x{edge:X} is mid-instruction"
                            );
                        }
                    }
                }
            }
            checked += 1;
        }
        assert!(checked >= 2, "{name}: {checked} functions placed");
    }
}

/// The 16 bytes of a GUID as `{...}` text gives it, in the order the image's CodeView
/// record stores them (its first three fields little-endian).
fn spd_guid_bytes(text: &str) -> [u8; 16] {
    let hex: String = text.chars().filter(char::is_ascii_hexdigit).collect();
    let mut b: Vec<u8> = (0..32)
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    b[0..4].reverse();
    b[4..6].reverse();
    b[6..8].reverse();
    b.try_into().unwrap()
}

#[test]
fn a_written_spd_reads_back() {
    let bytes = SpdBuilder::new("EbpfCore.sys", APP, 4).build();
    let spd = read_bytes(&bytes).unwrap();
    assert_eq!(spd.binary, "EbpfCore.sys");
    assert_eq!(spd.guid.to_string().to_uppercase(), APP);
    assert_eq!((spd.age, spd.functions, spd.profiled), (4, 8, true));
    assert!(!spd.new_version());
    let not_yet = SpdBuilder::new("map.sys", CORE, 17).not_profiled().build();
    assert!(!read_bytes(&not_yet).unwrap().profiled);
    // A version not seen before is read, and said.
    let newer = SpdBuilder::new("map.sys", CORE, 17)
        .patch_u32(field::VERSION, 0x100D)
        .build();
    assert!(read_bytes(&newer).unwrap().new_version());
}

#[test]
fn each_check_refuses_what_breaks_it() {
    let good = SpdBuilder::new("app.exe", APP, 1);
    let module = good.module_offset();
    let len = good.build().len();
    for (name, b, check) in [
        ("short", good.clone().truncate(0x7F), Check::Signature),
        (
            "signature",
            good.clone().patch(0, b"H_Q!"),
            Check::Signature,
        ),
        (
            "names before the header's end",
            good.clone().patch_u32(field::NAMES_OFFSET, 0x40),
            Check::NamesArea,
        ),
        (
            "names past the end",
            good.clone().patch_u32(field::NAMES_SIZE, 0xFFFF_FFFF),
            Check::NamesArea,
        ),
        (
            "empty name",
            good.clone().patch(0x80, &[0, 0]),
            Check::NamesArea,
        ),
        (
            "hash",
            good.clone().patch_u32(field::NAME_HASH, 0x1234_5678),
            Check::NameHash,
        ),
        (
            "non-ASCII name",
            good.clone().patch(0x80, &[0xE9, 0x00]),
            Check::NameHash,
        ),
        (
            "module before the names' end",
            good.clone().patch_u32(field::MODULE_OFFSET, 0x84),
            Check::ModuleBlock,
        ),
        (
            "module not ending with the file",
            good.clone().patch_u32(module + field::MODULE_SIZE, 0x38),
            Check::ModuleBlock,
        ),
        (
            "file cut",
            good.clone().truncate(len - 1),
            Check::ModuleBlock,
        ),
        (
            "profiles past the block",
            good.clone()
                .patch_u32(module + field::PROFILES_OFFSET, 0x7FFF_FFFF),
            Check::ModuleParts,
        ),
        (
            "function names past the block",
            good.clone()
                .patch_u32(module + field::FUNCTION_NAMES_OFFSET, (len - module) as u32),
            Check::ModuleParts,
        ),
    ] {
        assert_eq!(failed(&b.build()), Some(check), "{name}");
    }
    assert_eq!(failed(&good.build()), None);
}

/// A reader that counts the bytes it gives.
struct Counting<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

impl<R: Seek> Seek for Counting<R> {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// An SPD of 2 GiB reads as few bytes as one of a few hundred: the header, the binary's
/// name and the module block's header. (The file is sparse: its module block, all zeros
/// but its header, takes no disk space.)
#[test]
fn the_identity_reads_the_same_few_bytes_of_any_size() {
    let small = SpdBuilder::new("EbpfCore.sys", APP, 1).build();
    let mut counted = Counting {
        inner: Cursor::new(&small),
        read: 0,
    };
    spd::read(&mut counted, small.len() as u64).unwrap();
    let few = counted.read;
    assert!(few <= 0x80 + 522 + 0x38, "{few} bytes read");

    let b = SpdBuilder::new("EbpfCore.sys", APP, 1);
    let module = b.module_offset();
    let huge: u64 = 2 << 30;
    let header = b
        .patch_u32(module + field::MODULE_SIZE, (huge - module as u64) as u32)
        .build();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.spd");
    let file = std::fs::File::create(&path).unwrap();
    std::io::Write::write_all(&mut &file, &header).unwrap();
    file.set_len(huge).unwrap();
    let mut counted = Counting {
        inner: std::fs::File::open(&path).unwrap(),
        read: 0,
    };
    let spd = spd::read(&mut counted, huge).unwrap();
    assert_eq!(spd.binary, "EbpfCore.sys");
    assert_eq!(counted.read, few, "the same bytes, whatever the size");
}

#[test]
fn the_real_spds_give_what_they_hold() {
    let Some(dir) = shared::spd_files("the_real_spds_give_what_they_hold") else {
        return;
    };
    let expected: BTreeMap<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    assert_eq!(expected.len(), 6);
    let mut identities = BTreeMap::new();
    for (file, want) in &expected {
        let id = ident::read(&dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let spd = id.spd.clone().expect("an SPD's identity");
        assert_eq!(id.kind, Kind::Spd);
        assert!(id.age_inferred());
        let got = serde_json::json!({
            "name": spd.binary,
            "guid": id.guid.hyphenated().to_string().to_uppercase(),
            "age": id.age,
            "functions": spd.functions,
            "profiled": spd.profiled,
        });
        assert_eq!(&got, want, "{file}");
        assert!(!spd.new_version(), "{file}");
        identities.insert(file.clone(), (id.guid, id.age, spd.binary));
    }
    // The same build profiled again: the same identity.
    assert_eq!(
        identities["2025-04-10_EbpfCore_b29b5e08.spd"],
        identities["2026-05-18_EbpfCore_8f1fae3b.spd"]
    );
    // And the command line says the same, in JSON.
    let paths: Vec<String> = expected
        .keys()
        .map(|f| dir.join(f).display().to_string())
        .collect();
    let o = run_in(
        &pe_dir(),
        &["/json", &format!("/match:{}", paths.join(","))],
    );
    assert_eq!(o.status.code(), Some(0));
    for (line, want) in json_lines(&o).iter().zip(expected.values()) {
        assert_eq!(line["kind"], "spd");
        assert_eq!(line["binary"], want["name"]);
        assert_eq!(line["guid"], want["guid"]);
        assert_eq!(line["age"], want["age"]);
        assert_eq!(line["age_inferred"], true);
        assert_eq!(line["functions"], want["functions"]);
        assert_eq!(line["profiled"], want["profiled"]);
    }
}

#[test]
fn match_judges_an_spd_by_the_binary_it_names() {
    let o = run_in(
        &pe_dir(),
        &["/json", "/match:app.spd,app-old.spd,core.spd", "trace.spt"],
    );
    assert_eq!(o.status.code(), Some(1), "app-old.spd does not match");
    let lines: Vec<Value> = json_lines(&o)
        .into_iter()
        .filter(|l| l["type"] == "match")
        .collect();
    let got: Vec<(&str, &str, &Value, &Value)> = lines
        .iter()
        .map(|l| {
            (
                l["file"].as_str().unwrap(),
                l["status"].as_str().unwrap(),
                &l["progid"],
                &l["age_inferred"],
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("app.spd", "match", &Value::from(0), &Value::Bool(true)),
            (
                "app-old.spd",
                "guid-mismatch",
                &Value::from(0),
                &Value::Bool(true)
            ),
            ("core.spd", "match", &Value::from(1), &Value::Bool(true)),
        ]
    );
    // An image's line has no age_inferred.
    let o = run_in(&pe_dir(), &["/json", "/match:app.exe", "trace.spt"]);
    let line = json_lines(&o)
        .into_iter()
        .find(|l| l["type"] == "match")
        .unwrap();
    assert!(line.get("age_inferred").is_none(), "{line}");
}

#[test]
fn an_age_mismatch_says_the_spd_age_is_inferred() {
    let dir = tempfile::tempdir().unwrap();
    let spd = dir.path().join("app.spd");
    std::fs::write(&spd, SpdBuilder::new("app.exe", APP, 2).build()).unwrap();
    let trace = pe_dir().join("trace.spt");
    let o = run_in(dir.path(), &["/match:app.spd", trace.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("age 2 (inferred)  age-mismatch   progid 0 (app.exe) has age 1 (the SPD's age is inferred"),
        "{text}"
    );
}

#[test]
fn check_says_spd_version_incompatible_and_not_yet_profiled() {
    let o = run_in(
        &pe_dir(),
        &[
            "/json",
            "/check",
            "/match:app-old.spd,core.spd",
            "trace.spt",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let verdicts: Vec<(String, String, Value)> = json_lines(&o)
        .into_iter()
        .filter(|l| l["type"] == "check")
        .map(|l| {
            (
                l["code"].as_str().unwrap().to_owned(),
                l["message"].as_str().unwrap().to_owned(),
                l["progid"].clone(),
            )
        })
        .collect();
    let mismatch = verdicts.iter().find(|v| v.0 == "spd-mismatch").unwrap();
    assert!(
        mismatch.1.contains("SPD version incompatible"),
        "{}",
        mismatch.1
    );
    assert!(
        mismatch
            .1
            .contains("{1C0E5B7A-3D2F-4A61-9E84-55C3A0F2B917} age 1 (inferred)")
    );
    assert!(
        mismatch
            .1
            .contains("progid 0 (app.exe) is {7A76D39E-EF6D-104E-4C4C-44205044422E}")
    );
    assert_eq!(mismatch.2, Value::from(0));
    assert!(
        !verdicts.iter().any(|v| v.0 == "binary-not-in-trace"),
        "one error for one fact: {verdicts:?}"
    );
    let not_profiled = verdicts.iter().find(|v| v.0 == "spd-not-profiled").unwrap();
    assert_eq!(not_profiled.2, Value::from(1));
}

#[test]
fn an_spd_given_as_a_trace_says_whose_it_is() {
    let o = run_in(&pe_dir(), &["/validate", "app.spd"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "this is an SPD (a Sample Profile Database) for app.exe, \
             {7A76D39E-EF6D-104E-4C4C-44205044422E} age 1 (inferred), not an SPT trace"
        ),
        "{err}"
    );
    assert!(err.contains("sptdump /match:app.spd TRACE"), "{err}");
}

#[test]
fn a_refused_spd_given_as_a_trace_says_which_check_it_fails() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = SpdBuilder::new("app.exe", APP, 1)
        .patch_u32(field::NAME_HASH, 7)
        .build();
    std::fs::write(dir.path().join("bad.spd"), bytes).unwrap();
    let o = run_in(dir.path(), &["/validate", "bad.spd"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "this is a file that starts like an SPD (a Sample Profile Database) but fails its \
             check 3 (name hash: "
        ),
        "{err}"
    );
    assert!(err.contains("it is not a recognised SPD either"), "{err}");
    assert!(!err.contains("/match:bad.spd"), "{err}");
}

/// A binary's name of 260 characters, the longest a path may be, is read whole; one of 261
/// is refused.
#[test]
fn a_binary_name_of_260_characters_is_the_longest_read() {
    let read = |bytes: Vec<u8>| spd::read(&mut Cursor::new(&bytes), bytes.len() as u64);
    let longest = format!("{}.exe", "a".repeat(256));
    let spd = read(SpdBuilder::new(&longest, APP, 1).build()).unwrap();
    assert_eq!(spd.binary, longest);
    let longer = format!("a{longest}");
    let e = read(SpdBuilder::new(&longer, APP, 1).build()).unwrap_err();
    assert!(
        matches!(
            e,
            SpdError::NotRecognised {
                check: Check::NamesArea,
                ..
            }
        ),
        "{e}"
    );
}

/// Check 3's ASCII bound: U+007F is the last character a name may hold, U+0080 the first it
/// may not.
#[test]
fn a_name_is_ascii_up_to_u_007f() {
    let last = SpdBuilder::new("app\u{7f}.exe", APP, 1).build();
    assert_eq!(read_bytes(&last).unwrap().binary, "app\u{7f}.exe");
    let first = SpdBuilder::new("app\u{80}.exe", APP, 1).build();
    let e = read_bytes(&first).unwrap_err();
    assert!(e.to_string().contains("is not ASCII"), "{e}");
}

/// Check 4's bound: a module block of its header alone, ending where the file does, passes.
#[test]
fn a_module_block_may_end_with_its_header_at_the_file_s_end() {
    let good = SpdBuilder::new("app.exe", APP, 1);
    let module = good.module_offset();
    let header_only = good
        .patch_u32(module + field::MODULE_SIZE, 0x38)
        .patch_u32(module + field::PROFILES_OFFSET, 0x38)
        .patch_u32(module + 0x10, 0) // the profiles' size
        .patch_u32(module + field::FUNCTION_NAMES_OFFSET, 0x38)
        .patch_u32(module + 0x34, 0) // the function names' size
        .truncate(module + 0x38);
    assert_eq!(failed(&header_only.build()), None);
}

/// Check 2's bounds: a names area that starts inside the header is refused for that; one
/// that ends where the file does passes it.
#[test]
fn the_names_area_lies_between_the_header_and_the_file_s_end() {
    let built = SpdBuilder::new("app.exe", APP, 1).build();
    let u32_at = |at: usize| u32::from_le_bytes(built[at..at + 4].try_into().unwrap());
    let (offset, len) = (u32_at(field::NAMES_OFFSET), built.len() as u32);
    let read = |bytes: Vec<u8>| spd::read(&mut Cursor::new(&bytes), bytes.len() as u64);
    let inside = SpdBuilder::new("app.exe", APP, 1)
        .patch_u32(field::NAMES_OFFSET, 0x7F)
        .build();
    let e = read(inside).unwrap_err();
    assert!(e.to_string().contains("does not lie between"), "{e}");
    let to_the_end = SpdBuilder::new("app.exe", APP, 1)
        .patch_u32(field::NAMES_SIZE, len - offset)
        .build();
    match read(to_the_end) {
        Ok(_) => {}
        Err(e) => assert!(
            !matches!(
                e,
                SpdError::NotRecognised {
                    check: Check::NamesArea,
                    ..
                }
            ),
            "{e}"
        ),
    }
}

#[test]
fn a_refused_spd_has_no_identity_and_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.spd");
    let bytes = SpdBuilder::new("app.exe", APP, 1)
        .patch_u32(field::NAME_HASH, 7)
        .build();
    std::fs::write(&path, bytes).unwrap();
    let e = ident::read(&path).unwrap_err();
    assert!(
        matches!(
            &e,
            IdentError::Spd {
                source: SpdError::NotRecognised {
                    check: Check::NameHash,
                    ..
                },
                ..
            }
        ),
        "{e}"
    );
    let o = run_in(dir.path(), &["/match:bad.spd"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("bad.spd is not a recognised SPD: check 3 (name hash) failed"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// An SPT trace named like an SPD is still a trace: recognition is by content.
#[test]
fn recognition_is_by_content_not_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = SptBuilder::new();
    b.binary("app.exe", APP, 1);
    b.binary_id(0).ip(RETIRE_INSTR, &[0x1000]);
    std::fs::write(dir.path().join("trace.spd"), b.build()).unwrap();
    let o = run_in(dir.path(), &["/validate", "trace.spd"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(
        dir.path().join("profile.dat"),
        SpdBuilder::new("app.exe", APP, 1).build(),
    )
    .unwrap();
    let o = run_in(dir.path(), &["/json", "/match:profile.dat"]);
    assert_eq!(json_lines(&o)[0]["kind"], "spd");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any change of a valid SPD's bytes, or any cut, is read or refused by a named check:
    /// never a panic, and what is read keeps what the checks promise.
    #[test]
    fn corrupted_spds_are_read_or_refused(
        changes in proptest::collection::vec((0usize..600, any::<u8>()), 1..8),
        cut in proptest::option::of(0usize..600),
    ) {
        let mut bytes = SpdBuilder::new("EbpfCore.sys", APP, 1).build();
        for (at, b) in changes {
            let at = at % bytes.len();
            bytes[at] = b;
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.min(bytes.len()));
        }
        match read_bytes(&bytes) {
            Ok(spd) => {
                prop_assert!(!spd.binary.is_empty() && spd.binary.len() <= 260);
                prop_assert!(spd.binary.is_ascii());
                prop_assert!(bytes.starts_with(b"H_Q_"));
            }
            Err(SpdError::NotRecognised { .. }) => {}
            Err(e) => prop_assert!(false, "reading memory cannot fail: {}", e),
        }
    }
}
