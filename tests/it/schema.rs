//! The JSON Schemas in `schema/` against what `sptdump /json` really prints.
//!
//! The binary runs in every mode that prints JSON Lines, over the bundled traces, a trace
//! made here for `/pdb`, and every conformance vector (broken traces included). Each line
//! must validate against `schema/line.json` and against the schema of its own type, print
//! its numbers as plain integers, and use no key its schema does not describe; and every
//! line type must show up at least once, so that a mode that stops printing a type fails.
//! The schemas themselves must be valid draft 2020-12 schemas that say keys are only ever
//! added, and they must reject lines with a key missing or of the wrong type.
//!
//! The conformance vectors are in the shared suite beside the repository; without it the
//! test says it skipped them (`sptdump_testkit::shared`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use assert_cmd::Command;
use boon::{Compiler, Draft, SchemaIndex, Schemas};
use serde_json::{Value, json};
use sptdump_testkit::builder::{RETIRE_INSTR, SptBuilder};
use sptdump_testkit::fixtures::APP_GUID;
use sptdump_testkit::shared;

/// Every line type, in the order `schema/line.json` lists them.
const LINE_TYPES: [&str; 43] = [
    "file",
    "header",
    "string",
    "progid",
    "binary",
    "repeat",
    "ip",
    "lbr",
    "callstack",
    "diagnostic",
    "summary",
    "match",
    "validation",
    "error",
    "note",
    "identity",
    "functions",
    "folded",
    "source_line",
    "check_binary",
    "check",
    "check_summary",
    "compare",
    "compare_binary",
    "compare_function",
    "compare_lbr",
    "compare_lbr_function",
    "compare_spd",
    "call_edge",
    "lbr_ranges",
    "coverage",
    "dyninst",
    "annotate",
    "cfg_block",
    "cfg_edge",
    "symbols",
    "spd_blocks",
    "spd_blocks_function",
    "spd_block_compare",
    "etl_header",
    "etl_binary",
    "etl_unattributed",
    "etl_event",
];

const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// The words every schema's description must hold: the compatibility promise.
const ONLY_ADDED: [&str; 3] = ["only ever added", "never removed or renamed", "ignore"];

/// The PDBs given to `/pdb`.
const PDBS: &str = "/pdb:testdata/pe/app.pdb,testdata/pe/core.pdb";

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn schema_dir() -> PathBuf {
    crate_root().join("schema")
}

fn schema_path(name: &str) -> PathBuf {
    schema_dir().join(format!("{name}.json"))
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

// ----- The validator.

/// The compiled schemas: `line.json` and one per line type.
struct Validator {
    schemas: Schemas,
    line: SchemaIndex,
    by_type: BTreeMap<&'static str, SchemaIndex>,
}

impl Validator {
    /// Compiles every schema from its file. Compiling checks each against the draft
    /// 2020-12 meta-schema, and `line.json`'s references against the files beside it.
    fn new() -> Validator {
        let mut compiler = Compiler::new();
        compiler.set_default_draft(Draft::V2020_12);
        let mut schemas = Schemas::new();
        let mut compile = |name: &str| {
            let path = schema_path(name);
            let loc = path.to_str().expect("the crate's path is UTF-8");
            compiler
                .compile(loc, &mut schemas)
                .unwrap_or_else(|e| panic!("schema/{name}.json does not compile: {e:#}"))
        };
        let line = compile("line");
        let by_type = LINE_TYPES.iter().map(|&t| (t, compile(t))).collect();
        Validator {
            schemas,
            line,
            by_type,
        }
    }

    /// Why `value` fails the schema at `index`, or `None` when it passes.
    fn check(&self, value: &Value, index: SchemaIndex) -> Option<String> {
        self.schemas
            .validate(value, index)
            .err()
            .map(|e| format!("{e:#}"))
    }

    /// Why `value` fails `line.json`.
    fn check_line(&self, value: &Value) -> Option<String> {
        self.check(value, self.line)
    }

    /// Why `value` fails the schema of `kind`.
    fn check_type(&self, kind: &str, value: &Value) -> Option<String> {
        let index = *self
            .by_type
            .get(kind)
            .unwrap_or_else(|| panic!("no schema for line type {kind:?}"));
        self.check(value, index)
    }

    /// Whether `value` is rejected by both `line.json` and the schema of `kind`.
    fn rejects(&self, kind: &str, value: &Value) -> bool {
        self.check_line(value).is_some() && self.check_type(kind, value).is_some()
    }
}

// ----- Checks beyond the schemas.

/// The numbers of a JSON text that are not plain non-negative integers (`12`, never `12.0`,
/// `1.2e1` or `-1`). JSON Schema's "integer" also admits `12.0`, and the parser reads
/// integers above 2^64 as doubles, so this looks at the text itself.
fn non_integers(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if c == '"' {
            // Skip the string, escapes included.
            while let Some((_, c)) = chars.next() {
                match c {
                    '\\' => {
                        chars.next();
                    }
                    '"' => break,
                    _ => {}
                }
            }
        } else if c == '-' || c.is_ascii_digit() {
            let mut end = start + c.len_utf8();
            while let Some(&(i, c)) = chars.peek() {
                if !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')) {
                    break;
                }
                end = i + c.len_utf8();
                chars.next();
            }
            let number = &text[start..end];
            let plain = number.bytes().all(|b| b.is_ascii_digit())
                && (number == "0" || !number.starts_with('0'));
            if !plain {
                found.push(number.to_owned());
            }
        }
    }
    found
}

/// Resolves a `$ref` to a definition of the same document.
fn resolve<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(r) if r.starts_with("#/") => root
            .pointer(&r[1..])
            .unwrap_or_else(|| panic!("dangling $ref {r}")),
        _ => schema,
    }
}

/// The keys of `value`, at any depth, that `schema` does not describe in its `properties`:
/// a key that sptdump prints must be in the schema, so that the schema documents it.
fn undescribed(value: &Value, schema: &Value, root: &Value, at: &str, found: &mut Vec<String>) {
    let schema = resolve(schema, root);
    for branch in schema
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if !value.is_null() && branch.get("type") != Some(&json!("null")) {
            undescribed(value, branch, root, at, found);
        }
    }
    match value {
        Value::Object(map) => {
            let Some(properties) = schema.get("properties") else {
                return;
            };
            for (key, v) in map {
                match properties.get(key) {
                    Some(p) => undescribed(v, p, root, &format!("{at}/{key}"), found),
                    None => found.push(format!("{at}/{key}")),
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    undescribed(v, item, root, &format!("{at}/{i}"), found);
                }
            }
        }
        _ => {}
    }
}

/// The places in `schema` where a described property has no `description` (the conditions
/// of `if`/`then`/`else` only constrain, and need none).
fn undocumented(schema: &Value, at: &str, found: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    for (key, v) in map {
        let here = format!("{at}/{key}");
        match key.as_str() {
            "if" | "then" | "else" => {}
            "properties" => {
                for (name, p) in v.as_object().into_iter().flatten() {
                    if p.get("description").and_then(Value::as_str).is_none() {
                        found.push(format!("{here}/{name}"));
                    }
                    undocumented(p, &format!("{here}/{name}"), found);
                }
            }
            _ => match v {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        undocumented(item, &format!("{here}/{i}"), found);
                    }
                }
                _ => undocumented(v, &here, found),
            },
        }
    }
}

/// Whether a schema's description makes the compatibility promise.
fn promises_only_added(schema: &Value) -> bool {
    schema
        .get("description")
        .and_then(Value::as_str)
        .is_some_and(|d| ONLY_ADDED.iter().all(|words| d.contains(words)))
}

// ----- The runs.

/// One run of the binary and the lines it printed on standard output.
struct Run {
    args: Vec<String>,
    lines: Vec<String>,
}

impl Run {
    fn describe(&self) -> String {
        format!("sptdump {}", self.args.join(" "))
    }
}

/// Runs `sptdump args` from the crate root, with `stdin` as standard input when given.
fn run(args: &[&str], stdin: Option<Vec<u8>>) -> Run {
    let mut cmd = Command::cargo_bin("sptdump").unwrap();
    cmd.current_dir(crate_root()).args(args);
    if let Some(bytes) = stdin {
        cmd.write_stdin(bytes);
    }
    let output = cmd.output().unwrap();
    let described = format!("sptdump {}", args.join(" "));
    let code = output.status.code().expect("exited, not killed");
    assert!(
        matches!(code, 0..=2),
        "{described}: exit status {code}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).expect("stdout is UTF-8");
    let lines: Vec<String> = stdout.lines().map(str::to_owned).collect();
    assert!(!lines.is_empty(), "{described}: printed no line");
    Run {
        args: args.iter().map(|&a| a.to_owned()).collect(),
        lines,
    }
}

/// The conformance vectors (`*.spt`), sorted.
fn conformance_vectors() -> Vec<PathBuf> {
    let dir = shared::conformance_vectors();
    let mut vectors: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "spt"))
        .collect();
    vectors.sort();
    assert!(!vectors.is_empty(), "no *.spt in {}", dir.display());
    vectors
}

/// A trace of `testdata/pe/app.exe` with every kind of sample record, for `/pdb` to name:
/// some addresses in functions of `app.pdb`, one (1) in none.
fn app_trace() -> Vec<u8> {
    let mut b = SptBuilder::new();
    b.binary("app.exe", APP_GUID, 1);
    b.binary_id(0);
    b.ip(RETIRE_INSTR, &[4096, 4213, 1]);
    b.repeat(u64::MAX);
    b.lbr(&[(4096, 4213), (4213, 1)]);
    b.callstack(&[4096, 4213, 1]);
    b.build()
}

/// A broken trace of `app.exe`, so that diagnostics show without the conformance vectors: a
/// record before any BINARY_ID (its `progid` null), a short call stack, a REPEAT left
/// dangling, and a segment length 3 bytes too small.
fn broken_trace() -> Vec<u8> {
    let mut b = SptBuilder::new();
    b.binary("app.exe", APP_GUID, 1);
    b.ip(RETIRE_INSTR, &[4096]);
    b.binary_id(0);
    b.callstack(&[4096]);
    b.repeat(7);
    b.binary_id_with_length(0, 4 + 6 - 3);
    b.ip(RETIRE_INSTR, &[4213]);
    b.build()
}

/// The modes run over every trace.
const MODES: &[&[&str]] = &[
    &["/json"],
    &["/json", "/validate"],
    &["/json", "/validate", "/strict"],
    &["/json", "/summary", "/top:3"],
    &["/json", "/event", "/binary:0"],
    &["/json", "/strtab"],
    &["/json", "/progid", "/header"],
    &["/json", "/functions", "/top:3", "/folded"],
    &["/json", "/check"],
];

/// Every run, once for all the tests of this file.
fn runs() -> &'static [Run] {
    static RUNS: OnceLock<Vec<Run>> = OnceLock::new();
    RUNS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let app = dir.path().join("app.spt");
        std::fs::write(&app, app_trace()).unwrap();
        let app = app.to_str().expect("UTF-8 path");
        let broken = dir.path().join("broken.spt");
        std::fs::write(&broken, broken_trace()).unwrap();

        let mut traces: Vec<String> = vec![
            "testdata/sample.spt".into(),
            "testdata/pe/trace.spt".into(),
            broken.to_str().expect("UTF-8 path").into(),
        ];
        traces.extend(
            conformance_vectors()
                .iter()
                .map(|p| p.to_str().expect("UTF-8 path").to_owned()),
        );
        let mut runs = Vec::new();
        for trace in &traces {
            for mode in MODES {
                let mut args = mode.to_vec();
                args.push(trace);
                runs.push(run(&args, None));
            }
        }

        let sample = std::fs::read(crate_root().join("testdata/sample.spt")).unwrap();
        // A synthetic ETL: a binary with a PDB identity and one without, PMC and LBR.
        let etl = dir.path().join("synthetic.etl");
        std::fs::write(&etl, crate::etl::synthetic(8, 26)).unwrap();
        let etl = etl.to_str().expect("UTF-8 path").to_owned();

        let pe = "testdata/pe/trace.spt";
        let special: &[&[&str]] = &[
            &["/json", "/summary", PDBS, pe],
            &["/json", "/event", PDBS, pe],
            &["/json", "/lines", PDBS, "testdata/pe/profile.spt"],
            &[
                "/json",
                "/callgraph",
                "/pdb:testdata/pe/inline.pdb",
                "testdata/pe/inline.spt",
            ],
            &[
                "/json",
                "/coverage",
                "/dyninst",
                "/cfg",
                "/pdb:testdata/pe/lbr.pdb",
                "/image:testdata/pe/lbr.exe",
                "testdata/pe/lbr.spt",
            ],
            &["/json", "/coverage", "testdata/pe/lbr.spt"],
            &[
                "/json",
                "/compare",
                "/dyninst:3",
                "/pdb:testdata/pe/lbr.pdb",
                "/image:testdata/pe/lbr.exe",
                "testdata/pe/lbr.spt",
                "testdata/pe/lbr.spt",
            ],
            &[
                "/json",
                "/annotate:scramble",
                "/srcpath:C:\\src=testdata/pe",
                "/pdb:testdata/pe/lbr.pdb",
                "/image:testdata/pe/lbr.exe",
                "testdata/pe/lbr.spt",
            ],
            &[
                "/json",
                "/compare",
                "/functions",
                "/pdb:testdata/pe/app.pdb",
                "testdata/pe/profile.spt",
                "testdata/pe/profile.spt",
            ],
            &[
                "/json",
                "/lines",
                "/functions",
                "/pdb:testdata/pe/inline.pdb",
                "testdata/pe/inline.spt",
            ],
            &["/json", "/summary", "/top:2", PDBS, app],
            &["/json", "/all", "/check", "/top:2", &etl],
            &["/json", "/event", PDBS, app],
            &["/json", "/all", "/summary", "/top:0", app],
            &[
                "/json",
                "/match:testdata/pe/app.exe,testdata/pe/core.pdb,testdata/pe/nodebug.exe",
                pe,
            ],
            &[
                "/json",
                "/match:testdata/pe/age2/core.dll,testdata/pe/v2/core.dll,testdata/pe/core.dll",
                pe,
            ],
            &["/json", "/summary", PDBS, "testdata/sample.spt"],
            &[
                "/json",
                "/functions",
                "/symbols:testdata/pe",
                "testdata/pe/profile.spt",
            ],
            &["/json", "/match:testdata/pe/app.exe", "testdata/sample.spt"],
            &[
                "/json",
                "/check",
                "/match:testdata/pe/app-old.spd,testdata/pe/core.spd",
                pe,
            ],
            &[
                "/json",
                "/match:testdata/pe/app.spd,testdata/pe/core.spd,testdata/pe/app.exe",
            ],
            &[
                "/json",
                "/match:testdata/pe/app.exe,testdata/pe/app.pdb,missing.exe",
            ],
            &["/json", "missing.spt"],
            &[
                "/json",
                "/compare",
                "/pdb:testdata/pe/app.pdb",
                "testdata/pe/profile.spt",
                "testdata/pe/app-only.spt",
            ],
            &["/json", "/compare", "testdata/sample.spt", pe],
            &["/json", "/compare", pe, "testdata/pe/app.spd"],
            // On the SPD's blocks by IP samples, and by LBR ranges.
            &[
                "/json",
                "/compare",
                "/blocks:parse_token",
                pe,
                "testdata/pe/app.spd",
            ],
            &[
                "/json",
                "/compare",
                "/blocks:parse_token",
                app,
                "testdata/pe/app.spd",
            ],
            &[
                "/json",
                "/compare",
                "/pdb:testdata/pe/core.pdb",
                pe,
                "testdata/pe/core.spd",
            ],
            &["/json", "/validate", "missing.spt", "testdata/sample.spt"],
            &[
                "/json",
                "/binary:nosuch.dll",
                "testdata/sample.spt",
                "testdata/pe/trace.spt",
            ],
        ];
        for args in special {
            runs.push(run(args, None));
        }
        runs.push(run(&["/json", "-"], Some(sample.clone())));
        runs.push(run(&["/json", "/summary", "-"], Some(sample)));
        runs
    })
}

// ----- The tests.

#[test]
fn every_schema_is_a_valid_schema_that_says_keys_are_only_added() {
    // Compiling checks every file against the draft 2020-12 meta-schema.
    let _ = Validator::new();

    let mut expected: BTreeSet<String> = LINE_TYPES.iter().map(|t| format!("{t}.json")).collect();
    expected.insert("line.json".into());
    // spddump's lines, checked by spd_schema.rs.
    expected.extend(crate::spd_schema::FILES.iter().map(|f| format!("{f}.json")));
    let present: BTreeSet<String> = std::fs::read_dir(schema_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(present, expected, "the files in schema/");

    for name in expected {
        let schema = read_json(&schema_dir().join(&name));
        assert_eq!(schema["$schema"], DRAFT_2020_12, "{name}: $schema");
        assert!(
            promises_only_added(&schema),
            "{name}: the description must say that keys are {ONLY_ADDED:?}"
        );
        let mut missing = Vec::new();
        undocumented(&schema, "", &mut missing);
        assert!(missing.is_empty(), "{name}: no description at {missing:?}");
    }

    for kind in LINE_TYPES {
        let schema = read_json(&schema_path(kind));
        let name = format!("{kind}.json");
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], true, "{name}");
        assert_eq!(schema["properties"]["type"]["const"], kind, "{name}");
        let required = schema["required"].as_array().expect("required");
        assert_eq!(required.first(), Some(&json!("type")), "{name}: type first");
        for key in required {
            let key = key.as_str().unwrap();
            assert!(
                schema["properties"].get(key).is_some(),
                "{name}: required key {key} is not described"
            );
        }
    }

    let line = read_json(&schema_path("line"));
    let refs: Vec<&str> = line["oneOf"]
        .as_array()
        .expect("oneOf")
        .iter()
        .map(|r| r["$ref"].as_str().expect("$ref"))
        .collect();
    let expected: Vec<String> = LINE_TYPES.iter().map(|t| format!("{t}.json")).collect();
    assert_eq!(refs, expected, "line.json refers to every line type once");
    assert_eq!(line["properties"]["type"]["enum"], json!(LINE_TYPES[..]));
}

#[test]
fn the_checks_on_the_schemas_themselves_can_fail() {
    // A schema that breaks the meta-schema does not compile.
    let mut compiler = Compiler::new();
    compiler.set_default_draft(Draft::V2020_12);
    let broken = "file:///broken.json";
    compiler
        .add_resource(
            broken,
            json!({"$schema": DRAFT_2020_12, "type": "integr", "minimum": "0"}),
        )
        .unwrap();
    assert!(compiler.compile(broken, &mut Schemas::new()).is_err());

    // A description without the promise, or with only part of it, is caught.
    assert!(!promises_only_added(&json!({"description": "A line."})));
    assert!(!promises_only_added(
        &json!({"description": "Keys are only ever added."})
    ));
    assert!(!promises_only_added(&json!({})));

    // A property without a description is caught, at any depth.
    let mut missing = Vec::new();
    undocumented(
        &json!({"properties": {"a": {"description": "A.", "items": {"properties": {"b": {}}}}}}),
        "",
        &mut missing,
    );
    assert_eq!(missing, ["/properties/a/items/properties/b"]);
}

#[test]
fn every_line_of_every_json_mode_validates() {
    let validator = Validator::new();
    let roots: BTreeMap<&str, Value> = LINE_TYPES
        .iter()
        .map(|&t| (t, read_json(&schema_path(t))))
        .collect();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures = Vec::new();
    for run in runs() {
        for line in &run.lines {
            let mut fail =
                |why: String| failures.push(format!("{}\n  {line}\n  {why}", run.describe()));
            let value: Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(e) => {
                    fail(format!("not JSON: {e}"));
                    continue;
                }
            };
            let Some(kind) = value.get("type").and_then(Value::as_str) else {
                fail("no \"type\"".into());
                continue;
            };
            if !line.starts_with(&format!("{{\"type\":\"{kind}\"")) {
                fail("\"type\" is not the first key".into());
            }
            *seen.entry(kind.to_owned()).or_default() += 1;
            if let Some(why) = validator.check_line(&value) {
                fail(format!("fails line.json: {why}"));
            }
            let Some(root) = roots.get(kind) else {
                fail(format!("unknown line type {kind:?}"));
                continue;
            };
            if let Some(why) = validator.check_type(kind, &value) {
                fail(format!("fails {kind}.json: {why}"));
            }
            // Shares (compare, source_line and dyninst lines) are fractions; every other
            // number is a count or an offset, a plain integer.
            let shares = [
                "etl_event",
                "compare",
                "source_line",
                "compare_function",
                "compare_lbr_function",
                "compare_spd",
                "dyninst",
                "spd_blocks",
                "spd_blocks_function",
                "spd_block_compare",
            ];
            let numbers = if shares.contains(&kind) {
                Vec::new()
            } else {
                non_integers(line)
            };
            if !numbers.is_empty() {
                fail(format!("numbers that are not plain integers: {numbers:?}"));
            }
            let mut keys = Vec::new();
            undescribed(&value, root, root, "", &mut keys);
            if !keys.is_empty() {
                fail(format!("keys that {kind}.json does not describe: {keys:?}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} lines fail their schemas:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let unseen: Vec<&str> = LINE_TYPES
        .iter()
        .copied()
        .filter(|t| !seen.contains_key(*t))
        .collect();
    assert!(
        unseen.is_empty(),
        "no run printed a line of type {unseen:?}; seen: {seen:?}"
    );
}

/// The optional keys the runs must show, so that their schemas are tried on real lines.
#[test]
fn the_runs_show_the_optional_keys() {
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    let mut big = false;
    for run in runs() {
        for line in &run.lines {
            let value: Value = serde_json::from_str(line).unwrap();
            let kind = value["type"].as_str().unwrap_or_default().to_owned();
            for key in value.as_object().into_iter().flatten().map(|(k, _)| k) {
                seen.insert((kind.clone(), key.clone()));
            }
            if kind == "summary" {
                for ip in value["ip"].as_array().into_iter().flatten() {
                    if ip.get("functions").is_some() {
                        seen.insert((kind.clone(), "ip.functions".into()));
                    }
                }
                for table in ["lbr", "callstack"] {
                    if value[table].get("function_arcs").is_some() {
                        seen.insert((kind.clone(), format!("{table}.function_arcs")));
                    }
                }
            }
            big |= line.contains("18446744073709551616");
        }
    }
    let wanted = [
        ("ip", "symbols"),
        ("lbr", "symbols"),
        ("callstack", "symbols"),
        ("summary", "ip.functions"),
        ("summary", "lbr.function_arcs"),
        ("summary", "callstack.function_arcs"),
        ("match", "trace_guid"),
        ("match", "trace_age"),
        ("match", "message"),
        ("match", "age_inferred"),
        ("identity", "binary"),
        ("identity", "age_inferred"),
        ("identity", "functions"),
        ("identity", "profiled"),
        ("spd_block_compare", "trace_count"),
        ("spd_block_compare", "trace_hits"),
    ];
    for (kind, key) in wanted {
        assert!(
            seen.contains(&(kind.to_owned(), key.to_owned())),
            "no {kind} line with {key}"
        );
    }
    assert!(big, "no line with hits of 2^64");
}

/// Real lines, one of each type, each with a required key dropped or a number turned into a
/// string, are rejected; a line with a key added is not.
#[test]
fn lines_with_a_key_missing_or_of_the_wrong_type_are_rejected() {
    let validator = Validator::new();
    let mut first: BTreeMap<String, Value> = BTreeMap::new();
    for run in runs() {
        for line in &run.lines {
            let value: Value = serde_json::from_str(line).unwrap();
            let kind = value["type"].as_str().unwrap_or_default().to_owned();
            first.entry(kind).or_insert(value);
        }
    }
    let mut failures = Vec::new();
    for (kind, value) in &first {
        let schema = read_json(&schema_path(kind));
        for key in schema["required"].as_array().unwrap() {
            let key = key.as_str().unwrap();
            let mut broken = value.clone();
            broken.as_object_mut().unwrap().remove(key);
            if !validator.rejects(kind, &broken) {
                failures.push(format!("{kind} without {key} passes: {broken}"));
            }
        }
        for (key, v) in value.as_object().unwrap() {
            if let Value::Number(n) = v {
                let mut broken = value.clone();
                broken[key] = Value::String(n.to_string());
                if !validator.rejects(kind, &broken) {
                    failures.push(format!("{kind} with {key} a string passes: {broken}"));
                }
            }
        }
        let mut added = value.clone();
        added["a_key_added_later"] = json!({"any": ["value"]});
        if let Some(why) = validator
            .check_line(&added)
            .or_else(|| validator.check_type(kind, &added))
        {
            failures.push(format!("{kind} with a key added fails: {why}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    let rejected = [
        (
            "string",
            json!({"type": "string", "offset": "12", "value": "app.exe"}),
        ),
        ("string", json!({"type": "string", "offset": 12})),
        (
            "string",
            json!({"type": "string", "offset": 12.5, "value": "app.exe"}),
        ),
        (
            "string",
            json!({"type": "string", "offset": -1, "value": "app.exe"}),
        ),
        (
            "file",
            json!({"type": "file", "path": "a.spt", "size": "12"}),
        ),
        ("file", json!({"type": "file", "path": "a.spt"})),
        (
            "ip",
            json!({"type": "ip", "offset": 1, "event": "LBR", "progid": 0, "hits": 1, "rvas": []}),
        ),
        (
            "ip",
            json!({"type": "ip", "offset": 1, "event": "RETIRE_INSTR", "progid": 0, "hits": 0, "rvas": []}),
        ),
        (
            "ip",
            json!({"type": "ip", "offset": 1, "event": "RETIRE_INSTR", "progid": 0, "hits": 1, "rvas": ["4096"]}),
        ),
        (
            "lbr",
            json!({"type": "lbr", "offset": 1, "progid": 0, "hits": 1, "branches": [{"from": 1}]}),
        ),
        (
            "progid",
            json!({"type": "progid", "index": 0, "guid": "{42AC0098-ADB5-E796-8C0E-161D2814780E}", "age": 1, "symkey": "42AC0098ADB5E7968C0E161D2814780E1", "string_offset": 0, "name": null}),
        ),
        (
            "match",
            json!({"type": "match", "path": "a.spt", "file": "a.exe", "kind": null, "guid": null, "age": null, "status": "error", "progid": null}),
        ),
        (
            "match",
            json!({"type": "match", "path": "a.spt", "file": "a.exe", "kind": "elf", "guid": null, "age": null, "status": "absent", "progid": null}),
        ),
        (
            "validation",
            json!({"type": "validation", "path": "a.spt", "errors": 0, "warnings": 0, "valid": "true"}),
        ),
        (
            "summary",
            json!({"type": "summary", "path": "a.spt", "progid": 0, "name": "a.exe", "records": 1, "ip": [{"event": "RETIRE_INSTR", "records": 1, "samples": 2, "unique_rvas": 2, "top": [{"rva": 1, "hits": "1"}]}], "lbr": null, "callstack": null}),
        ),
        ("error", json!({"type": "error", "path": "a.spt"})),
        ("note", json!({"type": "note", "message": "m"})),
    ];
    for (kind, value) in &rejected {
        assert!(validator.rejects(kind, value), "{kind} passes: {value}");
    }
    assert!(
        validator
            .check_line(&json!({"type": "nosuch", "path": "a.spt"}))
            .is_some(),
        "a line of no known type passes line.json"
    );
    assert!(
        validator.check_line(&json!({"path": "a.spt"})).is_some(),
        "a line without a type passes line.json"
    );
    // The other way round: integers of any size, which is what sptdump prints.
    let big = json!({"type": "repeat", "offset": 22568, "count": 0});
    assert!(validator.check_line(&big).is_none());
    let big: Value = serde_json::from_str(
        r#"{"type":"callstack","offset":1,"progid":null,"hits":18446744073709551616,"frames":[]}"#,
    )
    .unwrap();
    assert!(validator.check_line(&big).is_none(), "{big}");
}

#[test]
fn numbers_that_are_not_plain_integers_are_caught() {
    assert!(non_integers(r#"{"a":0,"b":[12,18446744073709551616],"c":"1.5 -2 1e3"}"#).is_empty());
    assert_eq!(
        non_integers(r#"{"a":12.0,"b":-1,"c":1e3,"d":012,"e":"\"9.5"}"#),
        ["12.0", "-1", "1e3", "012"]
    );
}

#[test]
fn keys_a_schema_does_not_describe_are_caught() {
    let root = read_json(&schema_path("summary"));
    let line = json!({"type": "summary", "path": "a.spt", "progid": 0, "name": "a.exe", "records": 1,
        "ip": [{"event": "RETIRE_INSTR", "records": 1, "samples": 2, "unique_rvas": 2,
                "top": [{"rva": 1, "hits": 2, "share": 1}]}],
        "lbr": {"records": 1, "branches": 1, "unique_arcs": 1, "top": [], "extra": 0},
        "callstack": null, "new": true});
    let mut found = Vec::new();
    undescribed(&line, &root, &root, "", &mut found);
    found.sort();
    assert_eq!(found, ["/ip/0/top/0/share", "/lbr/extra", "/new"]);
}
