//! The program IDs' string indices end to end, through the library: byte offsets and
//! ordinals, as `/strindex:auto` decides and as `/strindex:offset` and `/strindex:ordinal`
//! force (docs/format.md, "What the description leaves open"). The traces come from the test kit's builder, which
//! writes whatever index it is given.

use serde_json::{Value, json};
use sptdump::dump::{Outcome, Status};
use sptdump::format::tables::StringIndex;
use sptdump::output::Format;
use sptdump_testkit::builder::{Guid, RETIRE_INSTR, SptBuilder};
use sptdump_testkit::dumping::{Dumped, OptionSet, Via, dump_bytes};

const GUIDS: [&str; 3] = [
    "7B3F9C21-5D4E-4A8B-9F12-6C0D3E8A1B57",
    "E1A45D08-92C3-4F6B-B7D2-0A9C5E3F8164",
    "C6E0B2F4-3A71-4D95-8E2B-F4A7D1C09E36",
];

/// Three names of different lengths, at byte offsets 0, 16 and 33.
const NAMES: [&str; 3] = ["contoso_app.exe", "contoso_core.dll", "ucrtbase.dll"];

/// How the trace's program IDs name their binaries.
#[derive(Clone, Copy, Debug)]
enum Layout {
    /// By the byte offset of the name: 0, 16, 33.
    Offsets,
    /// By the ordinal of the name: 0, 1, 2.
    Ordinals,
}

/// A trace with the three binaries, named as `layout` says, and one segment each: binary
/// `i` has one RETIRE_INSTR sample at RVA 0x1000 * (i + 1).
fn trace(layout: Layout) -> (Vec<u8>, u64) {
    let mut b = SptBuilder::new();
    let offsets: Vec<u32> = NAMES.iter().map(|n| b.string(n)).collect();
    assert_eq!(offsets, [0, 16, 33], "the names lie where the tests expect");
    for (i, guid) in GUIDS.iter().enumerate() {
        let index = match layout {
            Layout::Offsets => offsets[i],
            Layout::Ordinals => i as u32,
        };
        b.program_id(Guid::parse(guid), 1, index);
    }
    for i in 0..3u16 {
        b.binary_id(i)
            .ip(RETIRE_INSTR, &[0x1000 * (u32::from(i) + 1)]);
    }
    let progids_at = b.program_id_table_start();
    (b.build(), progids_at)
}

fn options(format: Format, strindex: StringIndex) -> OptionSet {
    let json = if format == Format::Json { " /json" } else { "" };
    OptionSet::parse(&format!("/strindex:{strindex}{json}"))
}

fn json(bytes: &[u8], strindex: StringIndex) -> Dumped {
    dump_bytes(bytes, &options(Format::Json, strindex), Via::File)
}

fn lines_of(d: &Dumped, kind: &str) -> Vec<Value> {
    d.json().into_iter().filter(|v| v["type"] == kind).collect()
}

/// The `name` of each `progid` line.
fn names(d: &Dumped) -> Vec<Value> {
    lines_of(d, "progid")
        .into_iter()
        .map(|v| v["name"].clone())
        .collect()
}

/// The `string_offset` of each `progid` line: the index as stored.
fn stored(d: &Dumped) -> Vec<Value> {
    lines_of(d, "progid")
        .into_iter()
        .map(|v| v["string_offset"].clone())
        .collect()
}

/// Each diagnostic as (code, offset).
fn diagnostics(d: &Dumped) -> Vec<(Value, Value)> {
    d.json_diagnostics()
        .iter()
        .map(|v| (v["code"].clone(), v["offset"].clone()))
        .collect()
}

#[test]
fn byte_offsets_are_read_as_byte_offsets() {
    let (bytes, _) = trace(Layout::Offsets);
    for strindex in [StringIndex::Auto, StringIndex::Offset] {
        let d = json(&bytes, strindex);
        assert_eq!(names(&d), NAMES.map(|n| json!(n)), "{strindex}");
        assert_eq!(stored(&d), [json!(0), json!(16), json!(33)]);
        assert_eq!(diagnostics(&d), [], "{strindex}");
        assert_eq!(d.status(), Status::Clean);
    }
}

#[test]
fn ordinals_are_read_as_ordinals_with_a_warning() {
    let (bytes, progids_at) = trace(Layout::Ordinals);
    for via in [Via::File, Via::Pipe] {
        let d = dump_bytes(&bytes, &options(Format::Json, StringIndex::Auto), via);
        assert_eq!(names(&d), NAMES.map(|n| json!(n)), "{via:?}");
        // The JSON keeps the index as stored.
        assert_eq!(stored(&d), [json!(0), json!(1), json!(2)]);
        // Index 0 starts a name either way; the warning points at program ID 1's index.
        assert_eq!(
            diagnostics(&d),
            [(json!("string-index-ordinal"), json!(progids_at + 24 + 20))],
            "{via:?}"
        );
        let warning = &d.json_diagnostics()[0];
        assert_eq!(warning["severity"], "warning");
        let message = warning["message"].as_str().unwrap();
        assert!(message.contains("/strindex:offset"), "{message}");
        assert_eq!(d.status(), Status::Clean);
    }
    // Forced, the same names without a word.
    let d = json(&bytes, StringIndex::Ordinal);
    assert_eq!(names(&d), NAMES.map(|n| json!(n)));
    assert_eq!(diagnostics(&d), []);
}

#[test]
fn the_text_dump_names_the_binaries_the_same_way() {
    let (bytes, _) = trace(Layout::Ordinals);
    let d = dump_bytes(&bytes, &options(Format::Text, StringIndex::Auto), Via::File);
    let progids: Vec<&str> = d
        .out
        .lines()
        .filter(|l| l.trim_start().starts_with('['))
        .collect();
    assert_eq!(progids.len(), 3, "{}", d.out);
    for (line, name) in progids.iter().zip(NAMES) {
        assert!(line.ends_with(&format!("  {name}")), "{line}");
    }
    assert!(
        d.out.contains(&format!("progid 1 ({})", NAMES[1])),
        "{}",
        d.out
    );
    assert!(d.err.contains("warning[string-index-ordinal]"), "{}", d.err);
}

#[test]
fn forced_offsets_read_ordinals_as_offsets() {
    let (bytes, _) = trace(Layout::Ordinals);
    let d = json(&bytes, StringIndex::Offset);
    // Indices 1 and 2 fall inside the first name.
    assert_eq!(
        names(&d),
        [
            json!("contoso_app.exe"),
            json!("ontoso_app.exe"),
            json!("ntoso_app.exe")
        ]
    );
    assert_eq!(diagnostics(&d), []);
}

#[test]
fn forced_ordinals_past_the_names_are_out_of_range() {
    let (bytes, progids_at) = trace(Layout::Offsets);
    let d = json(&bytes, StringIndex::Ordinal);
    assert_eq!(
        names(&d),
        [json!("contoso_app.exe"), Value::Null, Value::Null]
    );
    assert_eq!(stored(&d), [json!(0), json!(16), json!(33)]);
    assert_eq!(
        diagnostics(&d),
        [
            (
                json!("string-offset-out-of-range"),
                json!(progids_at + 24 + 20)
            ),
            (
                json!("string-offset-out-of-range"),
                json!(progids_at + 48 + 20)
            ),
        ]
    );
    let message = d.json_diagnostics()[0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("ordinal 16") && message.contains("3 names"),
        "{message}"
    );
    assert_eq!(d.status(), Status::Errors);

    let text = dump_bytes(
        &bytes,
        &options(Format::Text, StringIndex::Ordinal),
        Via::File,
    );
    assert!(
        text.out.contains("(no name: string index 16)"),
        "{}",
        text.out
    );
    assert!(
        text.out.contains("(no name: string index 33)"),
        "{}",
        text.out
    );
}

/// `/json /event /binary:LIST` with `strindex`: the progid of every record line printed, or
/// the outcome when the list names nothing.
fn selected(bytes: &[u8], list: &str, strindex: StringIndex) -> Result<Vec<Value>, Outcome> {
    let set = OptionSet::parse(&format!("/json /event /binary:{list} /strindex:{strindex}"));
    let d = dump_bytes(bytes, &set, Via::File);
    if d.outcome == Outcome::NoSuchBinary {
        return Err(d.outcome);
    }
    Ok(d.json()
        .into_iter()
        .filter(|v| v["type"] == "binary" || v["type"] == "ip")
        .map(|v| json!([v["type"], v["progid"]]))
        .collect())
}

#[test]
fn binary_selects_by_the_names_ordinals_give() {
    let (bytes, _) = trace(Layout::Ordinals);
    let core = [json!(["binary", 1]), json!(["ip", 1])];
    assert_eq!(
        selected(&bytes, "contoso_core.dll", StringIndex::Auto),
        Ok(core.to_vec())
    );
    assert_eq!(
        selected(&bytes, "UCRTBASE.DLL", StringIndex::Auto),
        Ok(vec![json!(["binary", 2]), json!(["ip", 2])])
    );
    assert_eq!(
        selected(&bytes, "contoso_core.dll", StringIndex::Ordinal),
        Ok(core.to_vec())
    );
    // Read as byte offsets, no program ID is called contoso_core.dll.
    assert_eq!(
        selected(&bytes, "contoso_core.dll", StringIndex::Offset),
        Err(Outcome::NoSuchBinary)
    );
    // And in the byte-offset layout, the same name selects the same segment.
    let (offsets, _) = trace(Layout::Offsets);
    assert_eq!(
        selected(&offsets, "contoso_core.dll", StringIndex::Auto),
        Ok(core.to_vec())
    );
}
