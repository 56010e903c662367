//! docs/glossary.md names each quantity's JSON key: every key it names must be one the
//! schemas describe, so that the glossary cannot drift from what `/json` prints.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

/// Every property name the schemas in `schema/` describe, at any depth.
fn schema_keys() -> BTreeSet<String> {
    fn walk(v: &Value, keys: &mut BTreeSet<String>) {
        match v {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = map.get("properties") {
                    keys.extend(props.keys().cloned());
                }
                map.values().for_each(|v| walk(v, keys));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(v, keys)),
            _ => {}
        }
    }
    let mut keys = BTreeSet::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema");
    for entry in std::fs::read_dir(dir).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        walk(&serde_json::from_str(&text).unwrap(), &mut keys);
    }
    keys
}

#[test]
fn every_json_key_the_glossary_names_is_in_a_schema() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/glossary.md");
    let text = std::fs::read_to_string(path).unwrap();
    let keys = schema_keys();
    // The line types (`summary`, `check_binary`, ...) name lines, not keys.
    // sptdump's (line.json) and spddump's (spd_line.json).
    let mut types: Vec<String> = Vec::new();
    for file in ["schema/line.json", "schema/spd_line.json"] {
        let line = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
        let line: Value = serde_json::from_str(&std::fs::read_to_string(line).unwrap()).unwrap();
        types.extend(
            line["properties"]["type"]["enum"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned()),
        );
    }
    let mut named = 0;
    for row in text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| quantity"))
    {
        let cells: Vec<&str> = row.split(" | ").collect();
        let Some(json) = cells.get(3) else { continue };
        // The backquoted words of the JSON column, left of any `:` ("inlined": true).
        for quoted in json.split('`').skip(1).step_by(2) {
            let word = quoted.split(':').next().unwrap().trim_matches('"');
            let is_key = !word.is_empty()
                && word.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                && (!types.iter().any(|t| t == word) || ["ip", "lbr", "callstack"].contains(&word));
            if !is_key {
                continue;
            }
            named += 1;
            assert!(
                keys.contains(word),
                "docs/glossary.md names the JSON key {word:?}: {row}"
            );
        }
    }
    assert!(named > 25, "{named} keys named");
}
