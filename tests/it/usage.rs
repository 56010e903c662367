//! No surprises for a typo, a script or a file that is not a trace: the binary end to end on
//! mistyped options, file names that are not UTF-8, lists with spaces, files of other
//! formats, `/binary` over several traces, `/strict`, what JSON consumers get for every file,
//! `/match` without a trace, and `/progid` columns that `diff` can compare.

use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;
use sptdump_testkit::builder::*;

use crate::support::{crate_root, json_lines, run, status, stderr, stdout};

const SAMPLE: &str = "testdata/sample.spt";

#[test]
fn a_mistyped_option_is_a_usage_error_that_dumps_nothing() {
    for (typo, meant) in [
        ("/sumary", Some("/summary")),
        ("/hedaer", Some("/header")),
        ("/evnt", Some("/event")),
        ("/progidd", Some("/progid")),
        ("/validat", Some("/validate")),
        ("/binry:app.exe", Some("/binary")),
        // In the spelling the user typed.
        ("--evnt", Some("--event")),
        ("--summry", Some("--summary")),
        ("-sumary", Some("-summary")),
        ("/xyzzy", None),
    ] {
        let o = run(&[typo, SAMPLE]);
        assert_eq!(status(&o), 2, "{typo}");
        assert_eq!(stdout(&o), "", "{typo}: nothing on stdout");
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{typo}: {err}");
        let shown = typo.split(':').next().unwrap();
        assert!(err.contains(&format!("unknown option '{shown}'")), "{err}");
        match meant {
            Some(m) => assert!(err.contains(&format!("(did you mean {m}?)")), "{err}"),
            None => assert!(!err.contains("did you mean"), "{err}"),
        }
    }
    // Checked before any file is read: the typo after a file still dumps nothing.
    let o = run(&["/json", SAMPLE, "/validat"]);
    assert_eq!((status(&o), stdout(&o).as_str()), (2, ""));
}

#[test]
fn a_value_after_an_equals_sign_points_to_the_colon() {
    let o = run(&["/top=3", SAMPLE]);
    assert_eq!(status(&o), 2);
    assert!(stderr(&o).contains("as in /top:3"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    // The dash forms take `=`.
    assert_eq!(status(&run(&["--top=3", SAMPLE])), 0);
}

#[test]
fn slash_words_that_are_files_stay_files() {
    // An existing file whose name is a word is a file, not a typo.
    let dir = tempfile::tempdir().unwrap();
    let word = dir.path().join("trace");
    std::fs::copy(crate_root().join(SAMPLE), &word).unwrap();
    let o = run(&["/progid", word.to_str().unwrap()]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("Program IDs (3 of 256 used)"));
    // A path with a dot or a second slash is a file: not found, not a typo.
    let o = run(&["/no/such/trace.spt"]);
    assert_eq!(status(&o), 1);
    assert!(stderr(&o).contains("cannot open"), "{}", stderr(&o));
}

#[test]
fn short_help_and_version() {
    let help = stdout(&run(&["/help"]));
    assert_eq!(stdout(&run(&["/h"])), help);
    assert_eq!(stdout(&run(&["/H"])), help);
    let version = format!("sptdump {}\n", env!("CARGO_PKG_VERSION"));
    for v in ["/V", "-V", "/version", "--version"] {
        assert_eq!(stdout(&run(&[v])), version, "{v}");
    }
    assert!(
        help.contains("leaf first"),
        "the help says how stacks are stored"
    );
}

#[cfg(unix)]
#[test]
fn file_names_need_not_be_utf8() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let dir = tempfile::tempdir().unwrap();
    let name = dir.path().join(OsStr::from_bytes(b"a\xFFb.spt"));
    std::fs::copy(crate_root().join(SAMPLE), &name).unwrap();
    let o = Command::cargo_bin("sptdump")
        .unwrap()
        .arg("/json")
        .arg("/validate")
        .arg(&name)
        .output()
        .unwrap();
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    let path = lines[0]["path"].as_str().unwrap();
    assert!(path.ends_with("a\u{FFFD}b.spt"), "{path}");
    assert_eq!(lines[1]["valid"], true);
    // The same file given to /match is read too (it is no image, and says so).
    let mut arg = b"/match:".to_vec();
    arg.extend_from_slice(name.as_os_str().as_bytes());
    let o = Command::cargo_bin("sptdump")
        .unwrap()
        .arg(OsStr::from_bytes(&arg))
        .output()
        .unwrap();
    assert_eq!(status(&o), 1);
    assert!(stderr(&o).contains("neither a PE image"), "{}", stderr(&o));
}

#[test]
fn list_items_are_trimmed() {
    let o = run(&[
        "/match:testdata/pe/app.exe, testdata/pe/app.pdb ",
        "testdata/pe/trace.spt",
    ]);
    assert_eq!(status(&o), 0, "{}{}", stdout(&o), stderr(&o));
    assert_eq!(stdout(&o).matches(" match ").count(), 2, "{}", stdout(&o));
    let o = run(&[
        "/json",
        "/pdb: testdata/pe/app.pdb",
        "/event",
        "testdata/pe/trace.spt",
    ]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("\"symbols\":"));
}

#[test]
fn files_of_other_formats_are_named_for_what_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let mut elf = b"\x7FELF\x02\x01\x01\0".to_vec();
    elf.resize(64, 0);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.resize(64, 0);
    let mut gz = vec![0x1F, 0x8B, 8, 0];
    gz.resize(64, 0);
    let text = "RVA,hits\n0x1000,3\n0x1004,1\n0x1010,7\n".to_owned();
    for (path, what, hint) in [
        (
            "testdata/pe/app.pdb".to_owned(),
            "this is a PDB",
            Some("did you mean /pdb: or /match:?"),
        ),
        (
            "testdata/pe/app.exe".to_owned(),
            "this is a PE image",
            Some("did you mean /match:?"),
        ),
        (write("a.elf", &elf), "this is an ELF file", None),
        (write("a.png", &png), "this is a PNG picture", None),
        (
            write("a.gz", &gz),
            "this is a gzip file",
            Some("unpack it first"),
        ),
        (write("a.csv", text.as_bytes()), "this is a text file", None),
    ] {
        let o = run(&[&path]);
        assert_eq!(status(&o), 1, "{path}");
        let (out, err) = (stdout(&o), stderr(&o));
        assert!(
            !out.contains("SPT header"),
            "{path}: no header full of junk:\n{out}"
        );
        assert!(out.starts_with("File: "), "{out}");
        assert!(
            err.contains("error[bad-signature] at 0x00000000: "),
            "{err}"
        );
        assert!(err.contains(what), "{path}: {err}");
        if let Some(hint) = hint {
            assert!(err.contains(hint), "{path}: {err}");
        }
    }
    // An empty file is said to be empty.
    let o = run(&[&write("empty.spt", b"")]);
    assert_eq!(status(&o), 1);
    assert!(stderr(&o).contains("the file is empty"), "{}", stderr(&o));
    // A damaged trace still shows its header: it is an SPT file with a bad signature.
    let o = run(&["/header", "testdata/swapped.spt"]);
    assert!(stdout(&o).contains("SPT header"), "{}", stdout(&o));
}

#[test]
fn binary_over_several_traces_is_a_usage_error_only_when_no_trace_has_it() {
    // contoso_core.dll is in the sample, not in the PE fixtures' trace.
    let o = run(&[
        "/summary",
        "/top:0",
        "/binary:contoso_core.dll",
        SAMPLE,
        "testdata/pe/trace.spt",
    ]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(stdout(&o).contains("Summary of progid 1 (contoso_core.dll)"));
    let err = stderr(&o);
    assert!(
        err.contains("testdata/pe/trace.spt: note: /binary:contoso_core.dll names no binary"),
        "{err}"
    );
    // Named by no trace: a usage error, after a note for each.
    let o = run(&["/binary:nothing.dll", SAMPLE, "testdata/pe/trace.spt"]);
    assert_eq!(status(&o), 2);
    assert_eq!(stdout(&o), "");
    let err = stderr(&o);
    assert_eq!(err.matches("note: /binary:nothing.dll").count(), 2, "{err}");
    assert!(err.contains("names no binary of any trace given"), "{err}");
    // JSON consumers get the notes as lines.
    let o = run(&["/json", "/binary:app.exe", SAMPLE, "testdata/pe/trace.spt"]);
    assert_eq!(status(&o), 0);
    let notes: Vec<_> = json_lines(&o)
        .into_iter()
        .filter(|l| l["type"] == "note")
        .collect();
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0]["path"], SAMPLE);
}

#[test]
fn strict_counts_warnings_as_errors() {
    let mut b = SptBuilder::new();
    b.binary("app.exe", "42AC0098-ADB5-E796-8C0E-161D2814780E", 1);
    b.binary_id(0).ip(RETIRE_INSTR, &[0x1000]).repeat(5);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dangling.spt");
    std::fs::write(&path, b.build()).unwrap();
    let path = path.to_str().unwrap();

    let o = run(&["/validate", path]);
    assert_eq!(status(&o), 0);
    assert!(
        stdout(&o).ends_with(": valid (0 errors, 1 warning)\n"),
        "{}",
        stdout(&o)
    );
    let o = run(&["/validate", "/strict", path]);
    assert_eq!(status(&o), 1);
    assert!(
        stdout(&o).ends_with(": INVALID (0 errors, 1 warning; /strict fails warnings)\n"),
        "{}",
        stdout(&o)
    );
    let o = run(&["/json", "/validate", "/strict", path]);
    assert_eq!(status(&o), 1);
    let last = json_lines(&o).pop().unwrap();
    assert_eq!(
        (last["warnings"].as_u64(), &last["valid"]),
        (Some(1), &Value::Bool(false))
    );
    // Without /validate too: the exit status follows.
    assert_eq!(
        status(&run(&["/strict", "/header", path])),
        0,
        "the stream is not read"
    );
    assert_eq!(status(&run(&["/strict", path])), 1);
    assert_eq!(status(&run(&["/strict", SAMPLE])), 0);
    // A trace without warnings is valid under /strict.
    let o = run(&["/validate", "/strict", SAMPLE]);
    assert_eq!(status(&o), 0);
    assert!(
        stdout(&o).ends_with(": valid (0 errors, 0 warnings)\n"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn json_consumers_know_the_file_of_every_line() {
    let o = run(&[
        "/json",
        "/summary",
        "/top:1",
        "/match:testdata/pe/app.exe",
        "testdata/broken.spt",
        "missing.spt",
        "testdata/pe/trace.spt",
    ]);
    assert_eq!(status(&o), 1);
    let lines = json_lines(&o);
    let mut current = None;
    let mut seen = std::collections::BTreeSet::new();
    for (text, line) in stdout(&o).lines().zip(&lines) {
        let kind = line["type"].as_str().unwrap();
        seen.insert(kind.to_owned());
        match kind {
            "file" => current = line["path"].as_str().map(str::to_owned),
            "diagnostic" | "match" | "summary" | "validation" | "error" | "note" => {
                let start = format!("{{\"type\":\"{kind}\",\"path\":");
                assert!(text.starts_with(&start), "{text}");
                if kind == "error" {
                    assert_eq!(line["path"], "missing.spt");
                    assert_eq!(line["message"], "cannot open: no such file or directory");
                } else {
                    assert_eq!(line["path"].as_str(), current.as_deref(), "{line}");
                }
            }
            _ => {}
        }
    }
    for kind in ["diagnostic", "match", "summary", "error"] {
        assert!(seen.contains(kind), "no {kind} line in {lines:?}");
    }
}

#[test]
fn match_without_a_trace_prints_identities() {
    let o = run(&["/match:testdata/pe/app.exe,testdata/pe/core.pdb"]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 2, "{out}");
    let cells: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(cells[..2], ["testdata/pe/app.exe", "PE"], "{out}");
    assert!(
        rows[0].contains("{7A76D39E-EF6D-104E-4C4C-44205044422E}  age 1"),
        "{out}"
    );
    assert!(
        rows[0].contains("key 7A76D39EEF6D104E4C4C44205044422E1"),
        "{out}"
    );
    assert!(rows[0].ends_with("pdb app.pdb"), "{out}");
    assert!(
        rows[1].contains("PDB  {5DFC88D6-05FC-4E3C-4C4C-44205044422E}"),
        "{out}"
    );

    let o = run(&["/json", "/match:testdata/pe/core.dll,nothing.exe"]);
    assert_eq!(status(&o), 1, "a file without an identity is an error");
    let lines = json_lines(&o);
    assert_eq!(lines[0]["type"], "identity");
    assert_eq!(lines[0]["kind"], "pe");
    assert_eq!(lines[0]["symkey"], "5DFC88D605FC4E3C4C4C44205044422E1");
    assert_eq!(lines[0]["pdb_path"], "core.pdb");
    assert_eq!(lines[1]["type"], "error");
    assert_eq!(lines[1]["path"], "nothing.exe");
}

#[test]
fn progid_columns_do_not_depend_on_other_rows() {
    let mut b = SptBuilder::new();
    b.binary("a.exe", "42AC0098-ADB5-E796-8C0E-161D2814780E", 1);
    b.binary("b.dll", "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", u32::MAX);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ages.spt");
    std::fs::write(&path, b.build()).unwrap();
    let o = run(&["/progid", path.to_str().unwrap()]);
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("  [")).collect();
    assert_eq!(rows.len(), 2, "{out}");
    for column in ["{", "age ", "key "] {
        let at: Vec<_> = rows.iter().map(|r| r.find(column).unwrap()).collect();
        assert_eq!(at[0], at[1], "{column:?} at the same place:\n{out}");
    }
    // The names start where they would with no other row at all.
    let name_at = |r: &str| r.find(".exe").or_else(|| r.find(".dll")).unwrap();
    assert_eq!(name_at(rows[0]), name_at(rows[1]));
    assert_eq!(
        name_at(rows[0]),
        2 + 5 + 2 + 38 + 2 + 4 + 10 + 2 + 4 + 40 + 2 + 1
    );
}

#[test]
fn strindex_is_an_option() {
    assert_eq!(status(&run(&["/strindex:offset", "/progid", SAMPLE])), 0);
    // The sample's indices are offsets: read as ordinals, they name nothing.
    let o = run(&["/strindex:ordinal", "/progid", SAMPLE]);
    assert_eq!(status(&o), 1);
    assert!(
        stderr(&o).contains("string-offset-out-of-range"),
        "{}",
        stderr(&o)
    );
    let o = run(&["/strindex:bogus", SAMPLE]);
    assert_eq!(status(&o), 2);
    assert!(
        stderr(&o).contains("expected auto, offset or ordinal"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn several_traces_on_both_cores_print_what_one_after_another_prints() {
    let traces = [
        SAMPLE,
        "testdata/broken.spt",
        "testdata/pe/trace.spt",
        SAMPLE,
    ];
    for mode in [
        &["/validate"][..],
        &["/json", "/validate"],
        &["/summary", "/top:2"],
    ] {
        let parallel = run(&[mode, &traces[..]].concat());
        // Standard input is read on this thread: the same traces, one after another.
        let sequential = Command::cargo_bin("sptdump")
            .unwrap()
            .current_dir(crate_root())
            .args(mode)
            .arg("-")
            .args(&traces[1..])
            .write_stdin(std::fs::read(crate_root().join(SAMPLE)).unwrap())
            .output()
            .unwrap();
        let named = |o: &Output| {
            stdout(o)
                .replace(
                    "File: standard input\n",
                    "File: testdata/sample.spt (25,546 bytes)\n",
                )
                .replace("standard input", SAMPLE)
                .replace(
                    r#""path":"-","size":null"#,
                    r#""path":"testdata/sample.spt","size":25546"#,
                )
                .replace(r#""path":"-""#, r#""path":"testdata/sample.spt""#)
        };
        assert_eq!(named(&parallel), named(&sequential), "{mode:?}");
        assert_eq!(status(&parallel), status(&sequential), "{mode:?}");
        assert_eq!(status(&parallel), 1, "broken.spt has errors");
    }
}
