//! The JSON Schemas of `spddump /json`'s lines (`schema/spd_*.json`) against what it really
//! prints: every view over the synthetic SPDs of `testdata/pe/` and, when the shared suite is
//! beside the repository, the real ones. Each line validates against `spd_line.json` and the
//! schema of its type, uses no key its schema does not describe, and every type shows up;
//! a line with a required key dropped is rejected.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use boon::{Compiler, Draft, SchemaIndex, Schemas};
use serde_json::Value;
use sptdump_testkit::shared;

/// spddump's line types, in the order `schema/spd_line.json` lists them.
const TYPES: [&str; 10] = [
    "spd_header",
    "spd_module",
    "spd_function",
    "spd_call",
    "spd_block",
    "spd_tail",
    "spd_coverage",
    "spd_dyninst",
    "spd_compare",
    "spd_compare_function",
];

/// The schema files of spddump's lines, without `.json`.
pub(crate) const FILES: [&str; 11] = [
    "spd_line",
    "spd_header",
    "spd_module",
    "spd_function",
    "spd_call",
    "spd_block",
    "spd_tail",
    "spd_coverage",
    "spd_dyninst",
    "spd_compare",
    "spd_compare_function",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn schema_path(name: &str) -> PathBuf {
    root().join("schema").join(format!("{name}.json"))
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The compiled schemas: `spd_line.json` and one per type.
struct Validator {
    schemas: Schemas,
    by_name: BTreeMap<&'static str, SchemaIndex>,
}

impl Validator {
    fn new() -> Validator {
        let mut compiler = Compiler::new();
        compiler.set_default_draft(Draft::V2020_12);
        let mut schemas = Schemas::new();
        let by_name = FILES
            .iter()
            .map(|&name| {
                let path = schema_path(name);
                let index = compiler
                    .compile(path.to_str().unwrap(), &mut schemas)
                    .unwrap_or_else(|e| panic!("schema/{name}.json does not compile: {e:#}"));
                (name, index)
            })
            .collect();
        Validator { schemas, by_name }
    }

    /// Why `value` fails the schema `name`, if it does.
    fn check(&self, name: &str, value: &Value) -> Option<String> {
        self.schemas
            .validate(value, self.by_name[name])
            .err()
            .map(|e| format!("{e:#}"))
    }
}

/// The keys of `value`, at any depth, that `schema` does not describe.
fn undescribed(value: &Value, schema: &Value, at: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            if let Some(props) = schema.get("properties") {
                for (key, v) in map {
                    match props.get(key) {
                        Some(p) => undescribed(v, p, &format!("{at}/{key}"), found),
                        None => found.push(format!("{at}/{key}")),
                    }
                }
            } else if schema.get("additionalProperties").is_none() {
                found.push(at.to_owned());
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    undescribed(v, item, &format!("{at}/{i}"), found);
                }
            }
        }
        _ => {}
    }
}

/// The lines of `spddump /json ARGS` run at the crate root, whatever its exit status.
fn lines(args: &[&str]) -> Vec<Value> {
    let o = Command::cargo_bin("spddump")
        .unwrap()
        .current_dir(root())
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Every line of every view, over the synthetic SPDs and the real ones when present.
fn all_lines() -> Vec<Value> {
    let synthetic = ["testdata/pe/app.spd", "testdata/pe/core.spd"];
    let mut out = lines(&[&["/json"], &synthetic[..]].concat());
    out.extend(lines(&["/json", "/funcid:parse_token", synthetic[0]]));
    out.extend(lines(&[
        "/json",
        "/compare",
        "/top:0",
        synthetic[1],
        synthetic[0],
    ]));
    if let Some(dir) = shared::spd_files("every_line_of_spddump_validates") {
        let real = dir.join("2026-03-16_map_9ad16a75.spd");
        out.extend(lines(&["/json", real.to_str().unwrap()]));
    }
    out
}

#[test]
fn every_spd_schema_is_valid_and_lists_its_types() {
    let _ = Validator::new();
    let line = read_json(&schema_path("spd_line"));
    assert_eq!(line["properties"]["type"]["enum"], serde_json::json!(TYPES));
    for kind in TYPES {
        let schema = read_json(&schema_path(kind));
        assert_eq!(schema["properties"]["type"]["const"], kind);
        assert_eq!(schema["required"][0], "type");
        assert_eq!(schema["required"][1], "file");
        let description = schema["description"].as_str().unwrap();
        assert!(description.contains("only ever added"), "{kind}");
    }
}

#[test]
fn every_line_of_spddump_validates() {
    let validator = Validator::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut failures = Vec::new();
    for value in all_lines() {
        let kind = value["type"].as_str().unwrap_or_default().to_owned();
        if !TYPES.contains(&kind.as_str()) {
            failures.push(format!("unknown type: {value}"));
            continue;
        }
        for name in ["spd_line", kind.as_str()] {
            if let Some(why) = validator.check(name, &value) {
                failures.push(format!("{value}\n  fails {name}.json: {why}"));
            }
        }
        let mut keys = Vec::new();
        undescribed(&value, &read_json(&schema_path(&kind)), "", &mut keys);
        if !keys.is_empty() {
            failures.push(format!("{value}\n  keys not described: {keys:?}"));
        }
        seen.insert(kind);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let unseen: Vec<&str> = TYPES.into_iter().filter(|t| !seen.contains(*t)).collect();
    assert!(unseen.is_empty(), "no line of type {unseen:?}");
}

#[test]
fn spd_lines_with_a_required_key_missing_are_rejected() {
    let validator = Validator::new();
    let mut first: BTreeMap<String, Value> = BTreeMap::new();
    for value in all_lines() {
        first
            .entry(value["type"].as_str().unwrap().to_owned())
            .or_insert(value);
    }
    for (kind, value) in &first {
        assert_eq!(validator.check(kind, value), None, "{value}");
        let schema = read_json(&schema_path(kind));
        for key in schema["required"].as_array().unwrap() {
            let mut broken = value.clone();
            broken
                .as_object_mut()
                .unwrap()
                .remove(key.as_str().unwrap());
            assert!(
                validator.check(kind, &broken).is_some(),
                "{kind} without {key} passes"
            );
        }
    }
    // A hash of lower-case digits is not one spddump prints.
    let mut call = first["spd_call"].clone();
    call["callee"] = Value::String("00000000deadbeef".into());
    assert!(validator.check("spd_call", &call).is_some());
}
