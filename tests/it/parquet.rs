//! `/parquet:DIR`: the tables read back with the parquet crate's own reader, and their sums
//! held against what `/merge /summary` and `/merge /functions` report for the same traces.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::{Field, Row};
use serde_json::Value;
use sptdump_testkit::builder::{Guid, SptBuilder, UNHALT_CYCLE};
use sptdump_testkit::fixtures;

use crate::support::{json_lines, run_in, stderr};

/// Per binary and source: the summed hits and the distinct keys.
type Sums<K> = BTreeMap<(String, String), (u128, BTreeSet<K>)>;

const TRACES: [&str; 3] = ["profile.spt", "trace.spt", "app-only.spt"];

/// Every row of every file of `table` under `dir`, as field name to value.
pub(crate) fn rows(dir: &Path, table: &str) -> Vec<BTreeMap<String, Field>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join(table))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        assert_eq!(path.extension().unwrap(), "parquet", "{}", path.display());
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        for row in reader.get_row_iter(None).unwrap() {
            let row: Row = row.unwrap();
            out.push(
                row.get_column_iter()
                    .map(|(name, field)| (name.clone(), field.clone()))
                    .collect(),
            );
        }
    }
    out
}

fn string(f: &Field) -> String {
    match f {
        Field::Str(s) => s.clone(),
        other => panic!("not a string: {other:?}"),
    }
}

fn uint(f: &Field) -> u32 {
    match f {
        Field::UInt(v) => *v,
        other => panic!("not an unsigned int: {other:?}"),
    }
}

/// A `decimal(38,0)`, exactly.
fn hits(f: &Field) -> u128 {
    match f {
        Field::Decimal(d) => {
            assert_eq!((d.precision(), d.scale()), (38, 0));
            let bytes: [u8; 16] = d.data().try_into().unwrap();
            u128::try_from(i128::from_be_bytes(bytes)).unwrap()
        }
        other => panic!("not a decimal: {other:?}"),
    }
}

fn u128_of(v: &Value) -> u128 {
    v.as_u64().map(u128::from).unwrap()
}

fn write(dir: &Path, extra: &[&str]) -> std::process::Output {
    let arg = format!("/parquet:{}", dir.display());
    let mut args = vec![arg.as_str(), "/pdb:app.pdb,core.pdb"];
    args.extend(extra);
    run_in(&fixtures::dir(), &args)
}

#[test]
fn tables_of_several_traces_sum_to_what_merge_reports() {
    let dir = tempfile::tempdir().unwrap();
    let o = write(dir.path(), &TRACES);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, b"", "nothing on stdout");
    let notes = stderr(&o);
    assert!(
        !notes.contains("could be decoded") && !notes.contains("clamped"),
        "clean traces whose counts fit: nothing said of errors or clamping: {notes}"
    );
    let merged = run_in(
        &fixtures::dir(),
        &[
            &[
                "/merge",
                "/summary",
                "/functions",
                "/json",
                "/pdb:app.pdb,core.pdb",
            ],
            &TRACES[..],
        ]
        .concat(),
    );
    let lines = json_lines(&merged);

    // Samples: per binary and event, the hits and the distinct RVAs; each row's identity.
    let samples = rows(dir.path(), "samples");
    let progids = json_lines(&run_in(
        &fixtures::dir(),
        &["/progid", "/json", "profile.spt"],
    ));
    let mut sums: Sums<u32> = BTreeMap::new();
    for r in &samples {
        let binary = string(&r["binary"]);
        let entry = progids
            .iter()
            .find(|p| p["name"] == binary.as_str())
            .unwrap();
        assert_eq!(string(&r["guid"]), entry["guid"].as_str().unwrap());
        assert_eq!(u64::from(uint(&r["age"])), entry["age"].as_u64().unwrap());
        assert!(TRACES.contains(&string(&r["trace"]).as_str()));
        let sum = sums.entry((binary, string(&r["source"]))).or_default();
        sum.0 += hits(&r["hits"]);
        sum.1.insert(uint(&r["rva"]));
    }
    let mut expected = BTreeMap::new();
    for s in lines.iter().filter(|l| l["type"] == "summary") {
        for ip in s["ip"].as_array().unwrap() {
            let key = (
                s["name"].as_str().unwrap().to_owned(),
                ip["event"].as_str().unwrap().to_owned(),
            );
            expected.insert(
                key,
                (
                    u128_of(&ip["samples"]),
                    ip["unique_rvas"].as_u64().unwrap() as usize,
                ),
            );
            // The hottest addresses: the same hits, and the function /summary /pdb names.
            for top in ip["top"].as_array().unwrap() {
                let rva = top["rva"].as_u64().unwrap() as u32;
                let at: Vec<_> = samples
                    .iter()
                    .filter(|r| {
                        string(&r["binary"]) == s["name"].as_str().unwrap()
                            && string(&r["source"]) == ip["event"].as_str().unwrap()
                            && uint(&r["rva"]) == rva
                    })
                    .collect();
                assert_eq!(
                    at.iter().map(|r| hits(&r["hits"])).sum::<u128>(),
                    u128_of(&top["hits"])
                );
                // Where /summary names no function, neither does the table.
                let function = top["symbol"]
                    .as_str()
                    .map(|s| Field::Str(s.split('+').next().unwrap().to_owned()));
                let function = function.unwrap_or(Field::Null);
                assert!(at.iter().all(|r| r["function"] == function), "{top}");
            }
        }
    }
    let got: BTreeMap<_, _> = sums
        .into_iter()
        .map(|(k, (h, rvas))| (k, (h, rvas.len())))
        .collect();
    assert_eq!(got, expected);

    // Arcs: per binary and source, the hits and the distinct arcs; call-stack arcs go from
    // the caller to the callee, where /summary gives them as stored (callee first).
    let mut sums: Sums<(u32, u32)> = BTreeMap::new();
    for r in rows(dir.path(), "arcs") {
        let sum = sums
            .entry((string(&r["binary"]), string(&r["source"])))
            .or_default();
        sum.0 += hits(&r["hits"]);
        sum.1.insert((uint(&r["from_rva"]), uint(&r["to_rva"])));
    }
    let mut expected = BTreeMap::new();
    for s in lines.iter().filter(|l| l["type"] == "summary") {
        let name = s["name"].as_str().unwrap().to_owned();
        for (source, key, total, swap) in [
            ("LBR", "lbr", "branches", false),
            ("ETW_CALLSTACK", "callstack", "arcs", true),
        ] {
            let t = &s[key];
            if t.is_null() {
                continue;
            }
            let arcs = &sums[&(name.clone(), source.to_owned())].1;
            for top in t["top"].as_array().unwrap() {
                let (from, to) = (
                    top["from"].as_u64().unwrap() as u32,
                    top["to"].as_u64().unwrap() as u32,
                );
                assert!(
                    arcs.contains(&if swap { (to, from) } else { (from, to) }),
                    "{source} {from:#x} {to:#x}"
                );
            }
            expected.insert(
                (name.clone(), source.to_owned()),
                (
                    u128_of(&t[total]),
                    t["unique_arcs"].as_u64().unwrap() as usize,
                ),
            );
        }
    }
    let got: BTreeMap<_, _> = sums
        .into_iter()
        .map(|(k, (h, arcs))| (k, (h, arcs.len())))
        .collect();
    assert_eq!(got, expected);

    // Stacks: per binary, the hits /functions gives its call stacks.
    let mut sums: BTreeMap<String, u128> = BTreeMap::new();
    for r in rows(dir.path(), "stacks") {
        let Field::ListInternal(frames) = &r["frames"] else {
            panic!("frames: {:?}", r["frames"])
        };
        assert!(!frames.elements().is_empty());
        *sums.entry(string(&r["binary"])).or_default() += hits(&r["hits"]);
    }
    let expected: BTreeMap<String, u128> = lines
        .iter()
        .filter(|l| l["type"] == "functions" && l["source"] == "ETW_CALLSTACK")
        .map(|l| (l["name"].as_str().unwrap().to_owned(), u128_of(&l["hits"])))
        .collect();
    assert_eq!(sums, expected);
}

#[test]
fn the_same_traces_give_the_same_bytes() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write(a.path(), &TRACES);
    write(b.path(), &TRACES);
    for table in ["samples", "arcs", "stacks"] {
        for trace in ["profile", "trace", "app-only"] {
            let file = Path::new(table).join(format!("{trace}.parquet"));
            let read = |d: &Path| std::fs::read(d.join(&file)).unwrap();
            assert_eq!(read(a.path()), read(b.path()), "{}", file.display());
        }
    }
}

#[test]
fn an_existing_table_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(write(dir.path(), &["profile.spt"]).status.code(), Some(0));
    let path = dir.path().join("samples").join("profile.parquet");
    let before = std::fs::read(&path).unwrap();
    let o = write(dir.path(), &["trace.spt", "profile.spt"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "cannot write the Parquet table {}: it exists",
            path.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // The other trace's tables were written; nothing partial is left.
    assert!(dir.path().join("stacks").join("trace.parquet").exists());
    for table in ["samples", "arcs", "stacks"] {
        for e in std::fs::read_dir(dir.path().join(table)).unwrap() {
            let name = e.unwrap().file_name();
            assert!(!name.to_string_lossy().ends_with(".partial"), "{name:?}");
        }
    }
}

#[test]
fn a_trace_whose_last_table_exists_writes_none_of_its_tables() {
    let dir = tempfile::tempdir().unwrap();
    let stacks = dir.path().join("stacks");
    std::fs::create_dir_all(&stacks).unwrap();
    let existing = stacks.join("profile.parquet");
    std::fs::write(&existing, b"not ours").unwrap();
    let o = write(dir.path(), &["profile.spt"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&format!(
            "cannot write the Parquet table {}: it exists",
            existing.display()
        )),
        "{err}"
    );
    assert_eq!(std::fs::read(&existing).unwrap(), b"not ours");
    // Checked before any was written: no samples or arcs of the trace, whole or partial.
    for table in ["samples", "arcs"] {
        let folder = dir.path().join(table);
        let names: Vec<_> = std::fs::read_dir(&folder)
            .map(|entries| entries.map(|e| e.unwrap().file_name()).collect())
            .unwrap_or_default();
        assert!(names.is_empty(), "{table}: {names:?}");
    }
}

#[test]
fn a_directory_that_cannot_be_made_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let o = write(&file.join("tables"), &["profile.spt"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let folder = file.join("tables").join("samples");
    assert!(
        err.contains(&format!(
            "cannot write the Parquet table {}",
            folder.display()
        )),
        "{err}"
    );
}

#[test]
fn parquet_does_not_go_with_merge_or_compare() {
    for shape in [&["/merge"][..], &["/compare"][..]] {
        let args = [shape, &["/parquet:out", "profile.spt", "trace.spt"][..]].concat();
        let o = run_in(&fixtures::dir(), &args);
        assert_eq!(o.status.code(), Some(2));
        assert!(
            stderr(&o).contains("/parquet writes each trace's tables"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn counts_past_64_bits_are_exact() {
    let mut b = SptBuilder::new();
    b.binary("app.exe", "42AC0098-ADB5-E796-8C0E-161D2814780E", 1);
    b.binary_id(0)
        .repeat(u64::MAX)
        .ip(UNHALT_CYCLE, &[0x1000])
        .repeat(u64::MAX)
        .ip(UNHALT_CYCLE, &[0x1000])
        .repeat(u64::MAX)
        .callstack(&[0x1000, 0x2000]);
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("huge.spt");
    std::fs::write(&trace, b.build()).unwrap();
    let out = dir.path().join("tables");
    let o = run_in(
        dir.path(),
        &[&format!("/parquet:{}", out.display()), "huge.spt"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let samples = rows(&out, "samples");
    assert_eq!(samples.len(), 1);
    assert_eq!(hits(&samples[0]["hits"]), 2u128 << 64);
    assert!(
        samples[0]["function"] == Field::Null,
        "no /pdb: no function"
    );
    let stacks = rows(&out, "stacks");
    assert_eq!(hits(&stacks[0]["hits"]), 1u128 << 64);
    let Field::ListInternal(frames) = &stacks[0]["frames"] else {
        panic!()
    };
    assert_eq!(
        frames.elements(),
        &[Field::UInt(0x1000), Field::UInt(0x2000)],
        "leaf first"
    );
}

#[test]
fn a_damaged_trace_writes_what_was_decoded_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let whole = std::fs::read(fixtures::dir().join("profile.spt")).unwrap();
    // Cut inside the event stream: the records before the cut are kept.
    let trace = dir.path().join("cut.spt");
    std::fs::write(&trace, &whole[..whole.len() - 7]).unwrap();
    let out = dir.path().join("tables");
    let o = run_in(
        dir.path(),
        &[&format!("/parquet:{}", out.display()), "cut.spt"],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("its Parquet tables hold what could be decoded"),
        "{}",
        stderr(&o)
    );
    let summary = json_lines(&run_in(dir.path(), &["/summary", "/json", "cut.spt"]));
    let total: u128 = summary
        .iter()
        .filter(|l| l["type"] == "summary")
        .flat_map(|s| {
            s["ip"]
                .as_array()
                .unwrap()
                .iter()
                .map(|ip| u128_of(&ip["samples"]))
        })
        .sum();
    let written: u128 = rows(&out, "samples").iter().map(|r| hits(&r["hits"])).sum();
    assert_eq!(written, total);
    assert!(total > 0);
}

/// An arc's source is named as the views name it: a call stack's caller is a
/// return address, looked up a byte back, a branch's source where it points. One address
/// past `mix_round`'s end, in the padding before `parse_token`, is both here.
#[test]
fn a_caller_is_named_a_byte_back_and_a_branch_source_where_it_points() {
    let functions = fixtures::functions("app");
    let of = |name: &str| functions.iter().find(|f| f.name == name).unwrap();
    let (mix, parse) = (of("mix_round"), of("parse_token"));
    let past_mix = mix.rva + mix.size.unwrap();
    assert!(past_mix < parse.rva, "padding between them");
    let (guid, age) = fixtures::codeview("app");
    let mut b = SptBuilder::new();
    let name = b.string("app.exe");
    let app = b.program_id(Guid(guid), age, name);
    b.binary_id(app)
        .callstack(&[parse.rva, past_mix])
        .lbr(&[(past_mix, parse.rva)]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.spt"), b.build()).unwrap();
    let out = dir.path().join("tables");
    let pdb = format!("/pdb:{}", fixtures::dir().join("app.pdb").display());
    let o = run_in(
        dir.path(),
        &[&format!("/parquet:{}", out.display()), &pdb, "t.spt"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let named = |f: &Field| match f {
        Field::Null => None,
        f => Some(string(f)),
    };
    let mut arcs: Vec<(String, u32, Option<String>, Option<String>)> = rows(&out, "arcs")
        .iter()
        .map(|r| {
            (
                string(&r["source"]),
                uint(&r["from_rva"]),
                named(&r["from_function"]),
                named(&r["to_function"]),
            )
        })
        .collect();
    arcs.sort();
    assert_eq!(
        arcs,
        [
            (
                "ETW_CALLSTACK".to_owned(),
                past_mix,
                Some("mix_round".to_owned()),
                Some("parse_token".to_owned())
            ),
            (
                "LBR".to_owned(),
                past_mix,
                None,
                Some("parse_token".to_owned())
            ),
        ]
    );
}

/// Each file says what wrote it and is Snappy-compressed, column by column, as
/// docs/output.md says; the hits, distinct per row, are not dictionary-encoded.
#[test]
fn the_tables_are_snappy_compressed_and_say_what_wrote_them() {
    use parquet::basic::{Compression, Encoding};

    let dir = tempfile::tempdir().unwrap();
    let o = write(dir.path(), &["profile.spt"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for table in ["samples", "arcs", "stacks"] {
        let path = dir.path().join(table).join("profile.parquet");
        let reader = SerializedFileReader::new(File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata();
        let by = meta.file_metadata().created_by();
        assert_eq!(by, Some(concat!("sptdump ", env!("CARGO_PKG_VERSION"))));
        assert!(meta.num_row_groups() > 0, "{table}");
        for group in meta.row_groups() {
            for column in group.columns() {
                assert_eq!(column.compression(), Compression::SNAPPY, "{table}");
                if column.column_path().string() == "hits" {
                    let dictionary = column.encodings().any(|e| e == Encoding::RLE_DICTIONARY);
                    assert!(
                        !dictionary,
                        "{table}: {:?}",
                        column.encodings().collect::<Vec<_>>()
                    );
                }
            }
        }
    }
}

/// The columns every row starts with are the same on every row of a row group: a binary
/// with a program-ID entry has its GUID and age on each, one without has nulls, over more
/// rows than go to the writer at once.
#[test]
fn every_row_has_its_binary_identity_or_nulls_where_it_has_none() {
    let guid = "{6E3A7B1C-2D4F-4A5B-9C8D-7E6F5A4B3C2D}";
    let mut b = SptBuilder::new();
    let app = b.binary("app.exe", guid, 7);
    // Program ID 5 has no entry.
    let (named, unnamed) = (5_000u32, 4_500u32);
    for (progid, rows) in [(app, named), (5, unnamed)] {
        b.binary_id(progid);
        let rvas: Vec<u32> = (0..rows).map(|i| 0x1000 + 4 * i).collect();
        for chunk in rvas.chunks(250) {
            b.ip(UNHALT_CYCLE, chunk);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("t.spt"), b.build()).unwrap();
    let out = dir.path().join("tables");
    run_in(
        dir.path(),
        &[&format!("/parquet:{}", out.display()), "t.spt"],
    );
    let samples = rows(&out, "samples");
    let mut seen: BTreeMap<(String, Option<String>, Option<u32>), u32> = BTreeMap::new();
    for r in &samples {
        assert_eq!(string(&r["trace"]), "t.spt");
        assert_eq!(string(&r["source"]), "UNHALT_CYCLE");
        let guid = match &r["guid"] {
            Field::Null => None,
            f => Some(string(f)),
        };
        let age = match &r["age"] {
            Field::Null => None,
            f => Some(uint(f)),
        };
        *seen.entry((string(&r["binary"]), guid, age)).or_default() += 1;
    }
    let app_row = (
        "app.exe".to_owned(),
        Some(guid.trim_matches(['{', '}']).to_owned()),
        Some(7),
    );
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen.get(&app_row), Some(&named), "{seen:?}");
    let other = seen.iter().find(|(k, _)| k.0 != "app.exe").unwrap();
    assert_eq!((&other.0.1, &other.0.2, *other.1), (&None, &None, unnamed));
}
