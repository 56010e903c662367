//! `spddump`, the second binary: its views of the synthetic SPDs pinned as golden files
//! (`tests/golden-spddump/`), its exit codes, its error messages, its spellings, a reader
//! that goes away. The golden files are regenerated with
//!
//! ```text
//! SPTDUMP_BLESS=1 cargo test --test it spddump::
//! ```
//!
//! and reviewed against the SPD the test kit writes (`sptdump_testkit::spd`), line by line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::Once;

use assert_cmd::Command;
use serde_json::Value;
use sptdump_testkit::fixtures::APP_GUID as APP;
use sptdump_testkit::golden;
use sptdump_testkit::spd::{SpdBuilder, field};

/// Where the broken SPDs go, relative to the crate root.
const INPUTS: &str = "target/golden-inputs";

const BLESS: &str = "SPTDUMP_BLESS=1 cargo test --test it spddump::";

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `spddump ARGS` at the crate root.
fn spddump(args: &[&str]) -> Output {
    Command::cargo_bin("spddump")
        .unwrap()
        .current_dir(crate_root())
        .args(args)
        .output()
        .unwrap()
}

/// The broken SPDs of the golden files: one whose function table fails a check, one that
/// is not an SPD at all.
fn write_inputs() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let dir = crate_root().join(INPUTS);
        std::fs::create_dir_all(&dir).unwrap();
        let good = SpdBuilder::new("app.exe", APP, 1);
        let l = good.layout();
        let bad_table = good.clone().patch_u32(l.blocks[2][0].successors, 4).build();
        let not_spd = good.patch_u32(field::NAME_HASH, 7).build();
        for (name, bytes) in [("bad-table.spd", bad_table), ("bad-hash.spd", not_spd)] {
            sptdump_testkit::fixtures::write_shared(&dir.join(name), &bytes);
        }
    });
}

/// The golden files' runs: each view of `testdata/pe/app.spd`, JSON, and the failures.
fn cases() -> Vec<(&'static str, Vec<&'static str>)> {
    let app = "testdata/pe/app.spd";
    vec![
        ("header", vec!["/header", app]),
        ("module", vec!["/module", app]),
        ("symbol", vec!["/symbol", app]),
        ("func", vec!["/func", app]),
        ("funcid", vec!["/funcid:parse_token", app]),
        ("cg", vec!["/cg", app]),
        ("fg", vec!["/fg", app]),
        ("coverage", vec!["/coverage", app]),
        ("dyninst", vec!["/dyninst:3", app]),
        (
            "compare",
            vec!["/compare", "/top:3", "testdata/pe/app-old.spd", app],
        ),
        ("all-not-profiled", vec!["testdata/pe/core.spd"]),
        ("json", vec!["/json", app]),
        (
            "bad-table",
            vec!["/func", "target/golden-inputs/bad-table.spd"],
        ),
        (
            "bad-hash",
            vec!["/func", "target/golden-inputs/bad-hash.spd"],
        ),
        ("no-such-function", vec!["/funcid:nosuch", app]),
        ("usage", vec!["/fgg", app]),
    ]
}

fn render(args: &[&str], o: &Output) -> String {
    let mut text = format!("$ spddump {}\n--- stdout\n", args.join(" "));
    text.push_str(&String::from_utf8_lossy(&o.stdout));
    text.push_str("--- stderr\n");
    text.push_str(&String::from_utf8_lossy(&o.stderr));
    writeln!(text, "--- exit {}", o.status.code().unwrap_or(-1)).unwrap();
    text
}

fn golden_path(name: &str) -> PathBuf {
    crate_root().join(format!("tests/golden-spddump/{name}.txt"))
}

#[test]
fn each_view_prints_its_golden_file() {
    write_inputs();
    let mut failures = Vec::new();
    for (name, args) in cases() {
        let o = spddump(&args);
        let what = format!("the output of `spddump {}`", args.join(" "));
        if let Err(e) = golden::check(&golden_path(name), &render(&args, &o), &what, BLESS) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every golden file is some case's: none is left behind by a case renamed or removed.
#[test]
fn every_spddump_golden_file_has_a_case() {
    let names: Vec<String> = cases().iter().map(|c| format!("{}.txt", c.0)).collect();
    let dir = crate_root().join("tests/golden-spddump");
    let mut found = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(names.contains(&name), "{name} has no case (delete it)");
        found += 1;
    }
    assert_eq!(found, names.len());
}

/// The exit codes: 0 when every file is shown, 1 when one is not an SPD or fails a check,
/// 2 for a wrong command line; a failing file does not stop the others.
#[test]
fn exit_codes_and_files_after_a_failure() {
    write_inputs();
    let o = spddump(&[
        "/header",
        "target/golden-inputs/bad-hash.spd",
        "testdata/pe/app.spd",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("binary        app.exe"), "{out}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(
            "spddump: target/golden-inputs/bad-hash.spd: not a recognised SPD: check 3"
        ),
        "{err}"
    );
    assert_eq!(spddump(&["/func", "missing.spd"]).status.code(), Some(1));
    assert_eq!(spddump(&["/func"]).status.code(), Some(2));
    assert_eq!(spddump(&[]).status.code(), Some(2));
    assert_eq!(
        spddump(&["/dyninst:none", "testdata/pe/app.spd"])
            .status
            .code(),
        Some(2)
    );
    let zero = spddump(&["/dyninst:0", "testdata/pe/app.spd"]);
    assert_eq!(zero.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&zero.stderr)
            .contains("invalid value '0' for /dyninst: expected a number of functions, 1 or more")
    );
    // The header is shown without the function table: one that fails a check is not read.
    let header = spddump(&["/header", "target/golden-inputs/bad-table.spd"]);
    assert_eq!(header.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&header.stdout).contains("binary        app.exe"));
    let help = spddump(&["-?"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("/funcid:FID"));
}

/// A table that fails a check still shows the identity, in JSON too; then the error.
#[test]
fn a_failing_table_shows_the_identity_then_the_error() {
    write_inputs();
    let o = spddump(&["/json", "/cg", "target/golden-inputs/bad-table.spd"]);
    assert_eq!(o.status.code(), Some(1));
    let lines: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["type"], "spd_header");
    assert_eq!(lines[0]["binary"], "app.exe");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("not a readable SPD function table: successors failed at 0x"),
        "{err}"
    );
}

/// `/funcid` finds functions by id, by hash and by name; JSON marks inferred keys.
#[test]
fn funcid_by_id_hash_or_name() {
    let app = "testdata/pe/app.spd";
    let json = |q: &str| -> Vec<Value> {
        let o = spddump(&["/json", &format!("/funcid:{q}"), app]);
        assert_eq!(o.status.code(), Some(0), "{q}");
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|v: &Value| v["type"] == "spd_function")
            .collect()
    };
    let by_name = json("mix_round");
    assert_eq!(by_name.len(), 1);
    let f = &by_name[0];
    assert_eq!(f["hash"], "3C8D5A1F0E7B9246");
    assert_eq!(f["static"], true);
    assert_eq!(
        (f["entry"].as_u64(), f["dyninst"].as_u64()),
        (Some(80), Some(560))
    );
    assert!(
        f["inferred"]
            .as_array()
            .unwrap()
            .contains(&Value::from("id"))
    );
    let id = f["id"].as_u64().unwrap().to_string();
    assert_eq!(json(&id)[0]["name"], "mix_round");
    assert_eq!(json("3C8D5A1F0E7B9246")[0]["name"], "mix_round");
    assert_eq!(json("3c8d5a1f0e7b9246")[0]["name"], "mix_round");
}

/// A query shorter than 16 hex digits is an id or a name, never a hash: `/funcid:N` finds
/// the function of id N alone, even beside a function whose hash reads as N in hex.
#[test]
fn funcid_of_a_few_digits_is_an_id_not_a_hash() {
    let mut b = SpdBuilder::new("app.exe", APP, 1);
    let id = b
        .functions
        .iter()
        .find(|f| f.name == "parse_token")
        .unwrap()
        .id;
    let mix = b
        .functions
        .iter_mut()
        .find(|f| f.name == "mix_round")
        .unwrap();
    // A static function's hash is the compiler's choice: this one reads as the id in hex.
    mix.hash = u64::from_str_radix(&id.to_string(), 16).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.spd");
    std::fs::write(&path, b.build()).unwrap();
    let o = spddump(&["/json", &format!("/funcid:{id}"), path.to_str().unwrap()]);
    assert!(o.status.success(), "{o:?}");
    let lines = crate::support::json_lines(&o);
    let functions = lines.iter().filter(|v| v["type"] == "spd_function");
    let names: Vec<&Value> = functions.map(|v| &v["name"]).collect();
    assert_eq!(names, ["parse_token"]);
}

/// A trace given to spddump is named as one, alone or as a side of `/compare`; a file that is
/// neither an SPD nor a trace is no SPD, by the check it failed.
#[test]
fn a_trace_is_named_as_one_and_any_other_file_by_the_check_it_failed() {
    write_inputs();
    let (app, trace) = ("testdata/pe/app.spd", "testdata/sample.spt");
    let not_spd = "target/golden-inputs/bad-hash.spd";
    let (a_trace, no_spd) = (
        "this is an SPT trace, not an SPD",
        "not a recognised SPD: check 3",
    );
    let cases = [
        (vec!["/func", trace], trace, a_trace),
        (vec!["/compare", app, trace], trace, a_trace),
        (vec!["/func", not_spd], not_spd, no_spd),
        (vec!["/compare", not_spd, app], not_spd, no_spd),
    ];
    for (args, file, says) in cases {
        let o = spddump(&args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.starts_with(&format!("spddump: {file}: {says}")),
            "{args:?}: {err}"
        );
    }
}

/// Every spelling of an option does the same.
#[test]
fn options_in_every_spelling() {
    let app = "testdata/pe/app.spd";
    let slash = spddump(&["/Func", app]).stdout;
    for spelled in ["-func", "--func", "/FUNC"] {
        assert_eq!(spddump(&[spelled, app]).stdout, slash, "{spelled}");
    }
    let dyninst = spddump(&["/dyninst:2", app]).stdout;
    assert_eq!(spddump(&["--dyninst=2", app]).stdout, dyninst);
}

/// A reader that stops early ends spddump quietly, with status 0.
#[test]
fn a_reader_that_goes_away_ends_it_quietly() {
    for view in [&["/fg"][..], &["/json", "/fg"]] {
        reader_goes_away(view);
    }
}

fn reader_goes_away(view: &[&str]) {
    let path = crate_root().join("testdata/pe/app.spd");
    let many: Vec<String> = (0..3000).map(|_| path.display().to_string()).collect();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("spddump"))
        .args(view)
        .args(&many)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 64];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    drop(out);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{view:?}");
    assert!(
        o.stderr.is_empty(),
        "{view:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The `spd_call` lines of `spddump /json /cg ARGS SPD` whose callees are imports: callee
/// hash and name.
fn import_calls(args: &[&str], spd: &Path) -> Vec<(String, Value)> {
    let mut all = vec!["/json", "/cg"];
    all.extend_from_slice(args);
    let spd = spd.to_str().unwrap();
    all.push(spd);
    let o = spddump(&all);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["type"] == "spd_call" && l["import"] == true)
        .map(|l| {
            (
                l["callee"].as_str().unwrap().to_owned(),
                l["callee_name"].clone(),
            )
        })
        .collect()
}

#[test]
fn an_image_names_the_callees_it_imports() {
    // main_entry calls core.dll's three exports through imports.exe's import table, and
    // ExitProcess, which imports.exe does not import.
    let mut spd = SpdBuilder::new("imports.exe", APP, 1);
    let main = spd
        .functions
        .iter_mut()
        .find(|f| f.name == "main_entry")
        .unwrap();
    let with = std::mem::replace(main, main.clone());
    *main = with
        .imports("core_add", 3, &[1])
        .imports("core_scale", 2, &[1])
        .imports("core_version", 1, &[2]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("imports.spd");
    std::fs::write(&path, spd.build()).unwrap();
    let hash = |name: &str| format!("{:016X}", sptdump_testkit::spd::function_hash(name));
    let named = import_calls(&["/image:testdata/pe/imports.exe"], &path);
    let expected: Vec<(String, Value)> = [
        ("__imp_ExitProcess", Value::Null),
        ("__imp_core_add", "core_add".into()),
        ("__imp_core_scale", "core_scale".into()),
        ("__imp_core_version", "core_version".into()),
    ]
    .into_iter()
    .map(|(key, name)| (hash(key), name))
    .collect();
    assert_eq!(named, expected);
    // Without the image, the hash alone.
    let bare = import_calls(&[], &path);
    assert!(bare.iter().all(|(_, name)| name.is_null()), "{bare:?}");
    // In text, the name where the hash was.
    let o = spddump(&[
        "/cg",
        "/image:testdata/pe/imports.exe",
        path.to_str().unwrap(),
    ]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.contains(&hash("__imp_core_scale")) && l.trim_end().ends_with("core_scale")),
        "{text}"
    );
}

#[test]
fn an_image_of_another_build_is_refused_with_both_identities() {
    // imports.exe has no CodeView record: beside app.exe's SPD its name does not fit.
    let o = spddump(&[
        "/cg",
        "/image:testdata/pe/imports.exe",
        "testdata/pe/app.spd",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(
        stderr,
        "spddump: testdata/pe/app.spd: /image:testdata/pe/imports.exe is not the build this SPD \
         profiles, and its import names were not used: the image is imports.exe without a \
         CodeView record (no GUID or age), the SPD's binary app.exe \
         {7A76D39E-EF6D-104E-4C4C-44205044422E} age 1 (inferred)\n"
    );
    // What the SPD holds is shown all the same.
    assert!(String::from_utf8_lossy(&o.stdout).contains("Call graph"));
    // Another binary's image, with its CodeView identity.
    let o = spddump(&["/cg", "/image:testdata/pe/core.dll", "testdata/pe/app.spd"]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let core = sptdump_testkit::fixtures::codeview("core");
    let guid = uuid::Uuid::from_bytes_le(core.0)
        .hyphenated()
        .to_string()
        .to_uppercase();
    assert!(
        stderr.contains(&format!(
            "the image is core.dll {{{guid}}} age {}, the SPD's binary app.exe",
            core.1
        )),
        "{stderr}"
    );
    // Two images of other builds: each said, in the order given, one line.
    let o = spddump(&[
        "/cg",
        "/image:testdata/pe/imports.exe",
        "/image:testdata/pe/core.dll",
        "testdata/pe/app.spd",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let said: Vec<&str> = stderr
        .trim_end()
        .split("; ")
        .map(|s| s.split(" is not the build").next().unwrap())
        .collect();
    assert_eq!(
        said,
        [
            "spddump: testdata/pe/app.spd: /image:testdata/pe/imports.exe",
            "/image:testdata/pe/core.dll"
        ],
        "{stderr}"
    );
    // The image of the SPD's own build is taken.
    let o = spddump(&["/cg", "/image:testdata/pe/app.exe", "testdata/pe/app.spd"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stderr.is_empty());
}

#[test]
fn an_image_that_cannot_be_read_is_said_and_the_spd_still_shown() {
    let o = spddump(&["/cg", "/image:testdata/pe/app.pdb", "testdata/pe/app.spd"]);
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.starts_with("spddump: testdata/pe/app.pdb: not an image"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("Call graph"));
    let o = spddump(&["/cg", "/image:", "testdata/pe/app.spd"]);
    assert_eq!(o.status.code(), Some(2));
}

/// In JSON the functions' `spd_function` lines are listed once, before the first view asked
/// for at or past the first view that declares them (`/symbol`), whichever views declare
/// them; a view that does not declare them shows none.
#[test]
fn json_lists_the_functions_once_where_the_first_view_that_declares_them_would_be() {
    // The views asked for, and the runs of lines by type they show.
    type Run = (&'static [&'static str], &'static [(&'static str, usize)]);
    let runs: [Run; 6] = [
        (&["/func"], &[("spd_function", 8)]),
        (&["/symbol"], &[("spd_function", 8)]),
        (&["/coverage"], &[("spd_function", 8), ("spd_coverage", 1)]),
        (
            &["/cg", "/coverage"],
            &[("spd_function", 8), ("spd_call", 5), ("spd_coverage", 1)],
        ),
        (
            &["/coverage", "/func", "/symbol", "/module"],
            &[("spd_module", 1), ("spd_function", 8), ("spd_coverage", 1)],
        ),
        (&["/cg"], &[("spd_call", 5)]),
    ];
    for (views, want) in runs {
        let mut args = vec!["/json"];
        args.extend(views);
        args.push("testdata/pe/app.spd");
        let o = spddump(&args);
        assert!(o.status.success(), "{args:?}");
        let mut runs: Vec<(String, usize)> = Vec::new();
        for line in String::from_utf8(o.stdout).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let kind = v["type"].as_str().unwrap().to_owned();
            match runs.last_mut() {
                Some((last, n)) if *last == kind => *n += 1,
                _ => runs.push((kind, 1)),
            }
        }
        let want: Vec<(String, usize)> = want.iter().map(|&(k, n)| (k.to_owned(), n)).collect();
        assert_eq!(runs, want, "{args:?}");
    }
}

/// `/fg` says what of a block is left undecoded: value profiles, inline bytes, either alone.
#[test]
fn fg_names_a_blocks_value_profiles_and_inline_bytes_each_alone() {
    let mut b = SpdBuilder::new("app.exe", APP, 1);
    // parse_token's block 4 has both; block 3 only inline bytes, block 5 only a value profile.
    let parse_token = &mut b.functions[2];
    parse_token.blocks[2].inline = vec![7, 8];
    parse_token.blocks[4].value_profiles = 2;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.spd");
    std::fs::write(&path, b.build()).unwrap();
    let o = spddump(&["/fg", path.to_str().unwrap()]);
    assert!(o.status.success());
    let out = String::from_utf8(o.stdout).unwrap();
    let undecoded: Vec<(&str, &str)> = out
        .lines()
        .filter_map(|l| {
            let (block, rest) = l.trim_start().strip_prefix("block")?.split_once("count")?;
            Some((block.trim(), rest.split_once("  (")?.1))
        })
        .collect();
    assert_eq!(
        undecoded,
        [
            ("3", "0 value profiles, 2 inline bytes: undecoded)"),
            ("4", "1 value profiles, 3 inline bytes: undecoded)"),
            ("5", "2 value profiles, 0 inline bytes: undecoded)"),
        ],
        "{out}"
    );
}

/// A view named beside `/all` keeps what its option says, and a header asked for is shown
/// once when the table then fails a check.
#[test]
fn views_named_beside_all_or_the_header_are_shown_once_as_asked() {
    write_inputs();
    let o = spddump(&["/json", "/all", "/dyninst:2", "testdata/pe/app.spd"]);
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.matches("\"spd_dyninst\"").count(), 2, "{out}");
    let o = spddump(&["/header", "/func", "target/golden-inputs/bad-table.spd"]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8(o.stdout).unwrap();
    assert_eq!(out.matches("SPD header").count(), 1, "{out}");
}
