//! Property tests: random well-formed traces decode back to exactly what was written, and
//! random or damaged bytes never break the dump's promises.
//!
//! The traces are written by the test-side builder, which shares no code with the decoder,
//! and checked through the output a user sees (`/json` parsed line by line, and text).
//!
//! Every property runs a fixed number of cases from a fixed seed, so `cargo test` is the
//! same on every run and every machine, and a failure comes back by running the test
//! again. To explore further, set other numbers for one run:
//!
//! ```text
//! SPTDUMP_PROPTEST_CASES=20000 SPTDUMP_PROPTEST_SEED=7 cargo test --release --test it properties::
//! ```

use proptest::prelude::*;
use proptest::test_runner::{RngAlgorithm, RngSeed};
use serde::Deserialize;
use serde_json::{Value, json};
use sptdump::dump::{Outcome, Status};
use sptdump_testkit::builder::*;
use sptdump_testkit::dumping::*;
use sptdump_testkit::exports;
use sptdump_testkit::reference::reference_problem;

/// Cases per property.
const CASES: u32 = 256;
/// The seed every property starts from.
const SEED: u64 = 0x5350_543A_0000_0001;

/// `CASES` and `SEED`, unless the environment sets others.
fn config() -> ProptestConfig {
    let env = |name: &str| std::env::var(name).ok().and_then(|v| v.parse().ok());
    ProptestConfig {
        cases: env("SPTDUMP_PROPTEST_CASES").map_or(CASES, |c: u64| c as u32),
        // Nothing is written next to the sources: a fixed seed reproduces any failure.
        failure_persistence: None,
        rng_algorithm: RngAlgorithm::ChaCha,
        rng_seed: RngSeed::Fixed(env("SPTDUMP_PROPTEST_SEED").unwrap_or(SEED)),
        ..ProptestConfig::default()
    }
}

// ----- The model of a well-formed trace.

#[derive(Clone, Debug)]
struct Binary {
    /// The name's bytes: never empty, never NUL, not always UTF-8.
    name: Vec<u8>,
    guid: [u8; 16],
    age: u32,
}

impl Binary {
    /// The name as both outputs show it: invalid UTF-8 replaced by U+FFFD.
    fn lossy_name(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }

    fn is_utf8(&self) -> bool {
        std::str::from_utf8(&self.name).is_ok()
    }
}

/// The file offsets of the names that are not UTF-8: each gets an invalid-utf8 warning.
fn invalid_names(t: &Trace) -> Vec<u64> {
    let mut offset = 0x20;
    let mut invalid = Vec::new();
    for bin in &t.binaries {
        if !bin.is_utf8() {
            invalid.push(offset);
        }
        offset += bin.name.len() as u64 + 1;
    }
    invalid
}

#[derive(Clone, Debug)]
enum Sample {
    /// An IP record: opcode and RVAs.
    Ip(u8, Vec<u32>),
    /// LBR branches as (from, to).
    Lbr(Vec<(u32, u32)>),
    /// Call-stack frames in stream order; fewer than 2 gives a short-callstack warning.
    Stack(Vec<u32>),
}

#[derive(Clone, Debug)]
struct Segment {
    /// Reduced modulo the number of binaries, so that every BINARY_ID is in range.
    progid: usize,
    /// Each sample record, with the count of the REPEAT written right before it, if any.
    /// A REPEAT is therefore never dangling and never overridden.
    records: Vec<(Option<u64>, Sample)>,
}

#[derive(Clone, Debug)]
struct Trace {
    binaries: Vec<Binary>,
    segments: Vec<Segment>,
    /// `Some((string slack, program-ID slack))`: tables just as large as needed plus the
    /// slack, instead of the usual 0x4000 bytes and 0x100 entries.
    compact: Option<(u16, u16)>,
}

/// How many values a record holds: mostly a few, sometimes anything up to 255.
fn count() -> impl Strategy<Value = usize> {
    prop_oneof![12 => 0usize..=6, 1 => 0usize..=255, 1 => Just(255usize)]
}

/// RVAs: any value, a value near 0x1000, or the extremes. Drawn as a u64 and mapped,
/// which is much cheaper than a union of strategies for values that come by the hundred.
fn rva() -> impl Strategy<Value = u32> {
    any::<u64>().prop_map(|x| match x % 8 {
        0 => 0,
        1 => u32::MAX,
        2 | 3 => 0x1000 + (x >> 32) as u32 % 0x100,
        _ => (x >> 32) as u32,
    })
}

fn sample() -> impl Strategy<Value = Sample> {
    prop_oneof![
        (
            prop::sample::select(IP_OPCODES.to_vec()),
            count().prop_flat_map(|n| prop::collection::vec(rva(), n))
        )
            .prop_map(|(op, rvas)| Sample::Ip(op, rvas)),
        count()
            .prop_flat_map(|n| prop::collection::vec((rva(), rva()), n))
            .prop_map(Sample::Lbr),
        count()
            .prop_flat_map(|n| prop::collection::vec(rva(), n))
            .prop_map(Sample::Stack),
    ]
}

fn repeat() -> impl Strategy<Value = Option<u64>> {
    prop::option::weighted(
        0.3,
        prop_oneof![0u64..8, any::<u64>(), Just(u64::MAX), Just(0)],
    )
}

fn segment() -> impl Strategy<Value = Segment> {
    (
        any::<usize>(),
        prop::collection::vec((repeat(), sample()), 0..10),
    )
        .prop_map(|(progid, records)| Segment { progid, records })
}

fn binary() -> impl Strategy<Value = Binary> {
    (
        // Non-empty (an empty name is padding and not listed): any printable text, any
        // text but NUL (control characters, quotes and backslashes, which both outputs
        // must escape), plain ASCII or a path, or any bytes but NUL (mostly not UTF-8).
        prop_oneof![
            4 => "\\PC{1,12}".prop_map(String::into_bytes),
            1 => "[^\\x00]{1,12}".prop_map(String::into_bytes),
            1 => "[a-z_]{1,8}\\.(exe|dll)".prop_map(String::into_bytes),
            1 => "[A-Z]:\\\\[a-z]{1,6}\\.dll".prop_map(String::into_bytes),
            1 => prop::collection::vec(1u8..=255, 1..12),
        ],
        any::<[u8; 16]>(),
        prop_oneof![Just(1u32), any::<u32>()],
    )
        .prop_map(|(name, guid, age)| Binary { name, guid, age })
}

fn trace() -> impl Strategy<Value = Trace> {
    (
        prop::collection::vec(binary(), 1..=4),
        prop::collection::vec(segment(), 0..6),
        prop::option::of((0u16..16, 0u16..4)),
    )
        .prop_map(|(binaries, segments, compact)| Trace {
            binaries,
            segments,
            compact,
        })
}

// ----- What the dump must print for a model.

/// The record lines of `/json`, all kinds in one shape; absent fields are `None`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordLine {
    #[serde(rename = "type")]
    kind: String,
    offset: u64,
    progid: Option<u16>,
    #[serde(default)]
    length: Option<u32>,
    #[serde(default)]
    count: Option<u64>,
    #[serde(default)]
    event: Option<String>,
    // Exact: 1 + u64::MAX does not fit a u64, nor a JSON value as serde_json holds it.
    #[serde(default)]
    hits: Option<u128>,
    #[serde(default)]
    rvas: Option<Vec<u32>>,
    #[serde(default)]
    branches: Option<Vec<Arc>>,
    #[serde(default)]
    frames: Option<Vec<u32>>,
}

#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Arc {
    from: u32,
    to: u32,
}

impl RecordLine {
    fn new(kind: &str, offset: u64, progid: u16) -> Self {
        RecordLine {
            kind: kind.to_owned(),
            offset,
            progid: Some(progid),
            length: None,
            count: None,
            event: None,
            hits: None,
            rvas: None,
            branches: None,
            frames: None,
        }
    }
}

/// One record as the model says it must be printed.
#[derive(Clone, Debug)]
struct Expected {
    line: RecordLine,
    /// The text dump's line: its start, and its end (the values).
    text_start: String,
    text_end: String,
    /// Whether it is an ETW_CALLSTACK with fewer than 2 frames.
    short: bool,
    /// The program ID of the segment it belongs to.
    segment: u16,
}

fn ip_name(op: u8) -> &'static str {
    match op {
        UNHALT_CYCLE => "UNHALT_CYCLE",
        RETIRE_INSTR => "RETIRE_INSTR",
        RETIRE_BR_INSTR => "RETIRE_BR_INSTR",
        L1_ICACHE_MISS => "L1_ICACHE_MISS",
        L1_DCACHE_MISS => "L1_DCACHE_MISS",
        ETW_INSTR => "ETW_INSTR",
        _ => unreachable!(),
    }
}

fn hex(v: u32) -> String {
    format!("{v:#010X}")
}

/// Writes `t` with the builder; returns the file and every record it must decode to.
fn write(t: &Trace) -> (Vec<u8>, Vec<Expected>) {
    let mut b = SptBuilder::new();
    let mut string_bytes = 0;
    for bin in &t.binaries {
        let offset = b.raw_string_bytes(&bin.name);
        b.raw_string_bytes(&[0]);
        string_bytes += bin.name.len() + 1;
        b.program_id(Guid(bin.guid), bin.age, offset);
    }
    if let Some((string_slack, id_slack)) = t.compact {
        b.string_table_capacity(string_bytes as u16 + string_slack);
        b.program_id_capacity(t.binaries.len() as u16 + id_slack);
    }
    let mut expected = Vec::new();
    let mut binary_ids = Vec::new();
    for seg in &t.segments {
        let progid = (seg.progid % t.binaries.len()) as u16;
        binary_ids.push(expected.len());
        let offset = b.next_record_offset();
        b.binary_id(progid);
        let mut line = RecordLine::new("binary", offset, progid);
        line.length = Some(0); // known once the segment is complete
        expected.push(Expected {
            line,
            text_start: format!("  {}  BINARY_ID ", hex(offset as u32)),
            text_end: String::new(),
            short: false,
            segment: progid,
        });
        for (repeat, sample) in &seg.records {
            if let Some(count) = *repeat {
                let offset = b.next_record_offset();
                b.repeat(count);
                let mut line = RecordLine::new("repeat", offset, progid);
                line.progid = None;
                line.count = Some(count);
                expected.push(Expected {
                    line,
                    text_start: format!("  {}  REPEAT ", hex(offset as u32)),
                    text_end: format!("count {count}"),
                    short: false,
                    segment: progid,
                });
            }
            let hits = 1 + u128::from(repeat.unwrap_or(0));
            let offset = b.next_record_offset();
            let (line, name, values, short) = match sample {
                Sample::Ip(op, rvas) => {
                    b.ip(*op, rvas);
                    let mut line = RecordLine::new("ip", offset, progid);
                    line.event = Some(ip_name(*op).to_owned());
                    line.rvas = Some(rvas.clone());
                    let values: Vec<_> = rvas.iter().map(|&v| hex(v)).collect();
                    (line, ip_name(*op), values.join(" "), false)
                }
                Sample::Lbr(branches) => {
                    b.lbr(branches);
                    let mut line = RecordLine::new("lbr", offset, progid);
                    line.branches = Some(
                        branches
                            .iter()
                            .map(|&(from, to)| Arc { from, to })
                            .collect(),
                    );
                    let values: Vec<_> = branches
                        .iter()
                        .map(|&(from, to)| format!("{}->{}", hex(from), hex(to)))
                        .collect();
                    (line, "LBR", values.join(" "), false)
                }
                Sample::Stack(frames) => {
                    b.callstack(frames);
                    let mut line = RecordLine::new("callstack", offset, progid);
                    line.frames = Some(frames.clone());
                    let values: Vec<_> = frames.iter().map(|&v| hex(v)).collect();
                    (line, "ETW_CALLSTACK", values.join("->"), frames.len() < 2)
                }
            };
            let mut line = line;
            line.hits = Some(hits);
            let text_end = if values.is_empty() {
                "(none)".to_owned()
            } else {
                values
            };
            expected.push(Expected {
                line,
                text_start: format!("  {}  {name} ", hex(offset as u32)),
                text_end,
                short,
                segment: progid,
            });
        }
    }
    let file = b.build();
    // Each segment ends where the next BINARY_ID starts, or at the end of the file; its
    // length counts from its length field.
    for (i, &at) in binary_ids.iter().enumerate() {
        let end = binary_ids
            .get(i + 1)
            .map_or(file.len() as u64, |&next| expected[next].line.offset);
        let start = expected[at].line.offset;
        expected[at].line.length = Some((end - start - 4) as u32);
    }
    (file, expected)
}

/// The header, string and program-ID lines `/json` must print for `t` written as `file`.
fn table_lines(t: &Trace, file: &[u8]) -> Vec<Value> {
    let u32_at = |at: usize| u32::from_le_bytes(file[at..at + 4].try_into().unwrap());
    let u16_at = |at: usize| u16::from_le_bytes(file[at..at + 2].try_into().unwrap());
    let string_bytes: usize = t.binaries.iter().map(|b| b.name.len() + 1).sum();
    let (string_capacity, id_capacity) = match t.compact {
        Some((s, p)) => (string_bytes as u16 + s, t.binaries.len() as u16 + p),
        None => (0x4000, 0x100),
    };
    let mut lines = vec![json!({
        "type": "header",
        "signature": 0x5350_543A,
        "version": 1,
        "raw_data_id": 0,
        "target_arch": 0,
        "string_table_offset": 0x20,
        "program_id_table_offset": 0x20 + u32::from(string_capacity),
        "string_table_used": string_bytes,
        "string_table_capacity": string_capacity,
        "program_ids_used": t.binaries.len(),
        "program_id_capacity": id_capacity,
    })];
    // The header as written agrees with the model.
    assert_eq!(u32_at(0x14), 0x20 + u32::from(string_capacity));
    assert_eq!(u16_at(0x1E), id_capacity);
    let mut offset = 0;
    let mut offsets = Vec::new();
    for bin in &t.binaries {
        lines.push(json!({"type": "string", "offset": offset, "value": bin.lossy_name()}));
        offsets.push(offset);
        offset += bin.name.len() + 1;
    }
    for (i, bin) in t.binaries.iter().enumerate() {
        let guid = Guid(bin.guid).to_string();
        lines.push(json!({
            "type": "progid",
            "index": i,
            "guid": guid,
            "age": bin.age,
            "symkey": format!("{}{:X}", guid.replace('-', ""), bin.age),
            "string_offset": offsets[i],
            "name": bin.lossy_name(),
        }));
    }
    lines
}

/// Checks the `/json` and text dumps of a well-formed trace against its model.
fn check_round_trip(t: &Trace) -> Result<(), TestCaseError> {
    let (file, expected) = write(t);
    let shorts: Vec<u64> = expected
        .iter()
        .filter(|e| e.short)
        .map(|e| e.line.offset)
        .collect();
    let invalid = invalid_names(t);

    for via in [Via::File, Via::Pipe] {
        let d = dump_bytes(&file, &json_all(), via);
        prop_assert_eq!(d.outcome, Outcome::Done(d.tally(), 0));
        prop_assert_eq!(d.tally().errors, 0, "{:?}: {}", via, d.out);
        prop_assert_eq!(d.tally().warnings, (invalid.len() + shorts.len()) as u64);
        prop_assert_eq!(d.err.as_str(), "");

        let lines: Vec<&str> = d.out.lines().collect();
        prop_assert!(
            lines.iter().all(|l| l.starts_with("{\"type\":")),
            "\"type\" comes first"
        );
        let is_diagnostic = |l: &&str| l.starts_with("{\"type\":\"diagnostic\",");
        let parse = |l: &str| -> Result<Value, TestCaseError> {
            serde_json::from_str(l).map_err(|e| TestCaseError::fail(format!("{e}: {l}")))
        };
        let size = match via {
            Via::File => json!(file.len()),
            Via::Pipe => Value::Null,
        };
        let path = if via == Via::File { "trace.spt" } else { "-" };
        prop_assert_eq!(
            parse(lines[0])?,
            json!({"type": "file", "path": path, "size": size})
        );

        // The diagnostics: an invalid-utf8 warning per name that is not UTF-8, then a
        // short-callstack warning per call stack of fewer than 2 frames.
        let mut diagnostics = Vec::new();
        for line in lines.iter().copied().filter(is_diagnostic) {
            let v = parse(line)?;
            diagnostics.push((
                v["severity"].clone(),
                v["code"].clone(),
                v["offset"].clone(),
            ));
        }
        let want: Vec<_> = invalid
            .iter()
            .map(|&o| (json!("warning"), json!("invalid-utf8"), json!(o)))
            .chain(
                shorts
                    .iter()
                    .map(|&o| (json!("warning"), json!("short-callstack"), json!(o))),
            )
            .collect();
        prop_assert_eq!(diagnostics, want);

        // Then the tables, then one line per record, in file order. Record lines are read
        // into a struct of their own, which holds `hits` exactly.
        let tables = table_lines(t, &file);
        let rest: Vec<&str> = lines[1..]
            .iter()
            .copied()
            .filter(|l| !is_diagnostic(l))
            .collect();
        prop_assert_eq!(rest.len(), tables.len() + expected.len());
        for (line, want) in rest.iter().zip(&tables) {
            prop_assert_eq!(&parse(line)?, want);
        }
        for (line, want) in rest[tables.len()..].iter().zip(&expected) {
            let got: RecordLine = serde_json::from_str(line)
                .map_err(|e| TestCaseError::fail(format!("{e}: {line}")))?;
            prop_assert_eq!(&got, &want.line, "{}", line);
        }
    }

    // Text: one line per record in the events section, each starting with its offset and
    // name and ending with its values; the warnings on standard error.
    let d = dump_bytes(&file, &text_all(), Via::File);
    prop_assert_eq!(d.status(), Status::Clean);
    let events: Vec<&str> = d
        .out
        .lines()
        .skip_while(|l| *l != "Events")
        .skip(1)
        .collect();
    if expected.is_empty() {
        prop_assert_eq!(events, vec!["  (no records)"]);
    } else {
        prop_assert_eq!(events.len(), expected.len(), "{}", d.out);
        for (line, want) in events.iter().zip(&expected) {
            prop_assert!(line.starts_with(&want.text_start), "{} / {:?}", line, want);
            prop_assert!(line.ends_with(&want.text_end), "{} / {:?}", line, want);
            if let Some(hits) = want.line.hits {
                let hits = format!("  hits {hits}  ");
                prop_assert!(line.contains(&hits), "{}", line);
            }
        }
    }
    let err_lines: Vec<&str> = d.err.lines().collect();
    let want: Vec<String> = invalid
        .iter()
        .map(|o| format!("trace.spt: warning[invalid-utf8] at {o:#010X}: "))
        .chain(
            shorts
                .iter()
                .map(|o| format!("trace.spt: warning[short-callstack] at {o:#010X}: ")),
        )
        .collect();
    prop_assert_eq!(err_lines.len(), want.len(), "{}", d.err);
    for (line, want) in err_lines.iter().zip(&want) {
        prop_assert!(line.starts_with(want), "{}", line);
    }
    Ok(())
}

/// Checks `/json /event /binary:pick` of a well-formed trace against its model: the
/// records of the other segments are skipped by their length, unseen, so neither they nor
/// their warnings appear; the warnings of the string table still do.
fn check_selection(t: &Trace, pick: u16) -> Result<(), TestCaseError> {
    let (file, expected) = write(t);
    let set = OptionSet::parse(&format!("/json /event /binary:{pick}"));
    let kept: Vec<&Expected> = expected.iter().filter(|e| e.segment == pick).collect();
    let want_diagnostics: Vec<(Value, u64)> = invalid_names(t)
        .into_iter()
        .map(|o| (json!("invalid-utf8"), o))
        .chain(
            kept.iter()
                .filter(|e| e.short)
                .map(|e| (json!("short-callstack"), e.line.offset)),
        )
        .collect();
    for via in [Via::File, Via::Pipe] {
        let d = dump_bytes(&file, &set, via);
        prop_assert_eq!(d.tally().errors, 0);
        let mut records = Vec::new();
        let mut diagnostics = Vec::new();
        for line in d.out.lines().skip(1) {
            if line.starts_with("{\"type\":\"diagnostic\",") {
                let v: Value = serde_json::from_str(line).unwrap();
                diagnostics.push((v["code"].clone(), v["offset"].as_u64().unwrap()));
            } else {
                let r: RecordLine = serde_json::from_str(line)
                    .map_err(|e| TestCaseError::fail(format!("{e}: {line}")))?;
                records.push(r);
            }
        }
        let want: Vec<RecordLine> = kept.iter().map(|e| e.line.clone()).collect();
        prop_assert_eq!(records, want, "{:?}", via);
        prop_assert_eq!(&diagnostics, &want_diagnostics, "{:?}", via);
    }
    Ok(())
}

// ----- Hostile bytes.

/// A header whose fields describe small tables right behind it, so that random bytes
/// after it land in the tables and the stream.
fn small_header() -> impl Strategy<Value = Vec<u8>> {
    (0u16..48, 0u16..48, 0u16..4, 0u16..4).prop_map(|(used, capacity, ids, id_capacity)| {
        let mut b = SptBuilder::new();
        b.string_table_used(used)
            .string_table_capacity(capacity)
            .program_ids_used(ids)
            .program_id_capacity(id_capacity);
        b.header().to_vec()
    })
}

/// Bytes that are anything from noise to a well-formed trace with a few bytes changed.
fn hostile() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..600),
        (small_header(), prop::collection::vec(any::<u8>(), 0..600)).prop_map(|(mut h, tail)| {
            h.extend(tail);
            h
        }),
        (
            trace(),
            prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
            prop::option::weighted(0.3, any::<prop::sample::Index>()),
        )
            .prop_map(|(t, changes, cut)| {
                let (mut file, _) = write(&t);
                for (at, byte) in changes {
                    let at = at.index(file.len());
                    file[at] = byte;
                }
                if let Some(cut) = cut {
                    let len = cut.index(file.len() + 1);
                    file.truncate(len);
                }
                file
            }),
    ]
}

/// One record's bytes, right or wrong: a BINARY_ID with any progid (the segment's length is
/// set later), a REPEAT, a sample record of any opcode and a small `n`, or a single byte.
fn token() -> impl Strategy<Value = Vec<u8>> {
    let opcode = prop_oneof![
        12 => prop::sample::select(vec![0x01u8, 0x02, 0x03, 0x04, 0x05, 0x41, 0x42, 0x10]),
        1 => any::<u8>(),
    ];
    let sample = (opcode, 0u8..4).prop_flat_map(|(op, n)| {
        let width = if op == LBR { 8 } else { 4 };
        prop::collection::vec(any::<u8>(), usize::from(n) * width).prop_map(move |p| {
            let mut v = vec![op, n];
            v.extend(p);
            v
        })
    });
    prop_oneof![
        4 => sample,
        2 => prop_oneof![Just(0u64), any::<u64>()].prop_map(|c| {
            let mut v = vec![REPEAT, 0];
            v.extend(c.to_le_bytes());
            v
        }),
        1 => (0u16..4, any::<u32>()).prop_map(|(p, len)| {
            let mut v = vec![BINARY_ID, 0];
            v.extend(p.to_le_bytes());
            v.extend(len.to_le_bytes());
            v
        }),
        1 => any::<u8>().prop_map(|b| vec![b]),
    ]
}

/// A trace whose tables are well formed (four binaries) and whose stream is made of
/// segments of random records: most segments get the length that matches them, some a
/// wrong one; most name a binary of the table, some not.
fn structured() -> impl Strategy<Value = Vec<u8>> {
    let segment = (
        prop_oneof![12 => 0u16..4, 1 => 4u16..6],
        prop_oneof![4 => Just(None), 1 => any::<u32>().prop_map(Some)],
        prop::collection::vec(token(), 0..8),
    );
    let name = "[a-z]{1,8}\\.dll".prop_map(String::into_bytes);
    let binary = (name, any::<[u8; 16]>(), any::<u32>()).prop_map(|(name, guid, age)| Binary {
        name,
        guid,
        age,
    });
    (
        prop::collection::vec(binary, 4),
        prop::option::weighted(0.1, token()),
        prop::collection::vec(segment, 0..5),
        prop::option::weighted(0.2, any::<prop::sample::Index>()),
    )
        .prop_map(|(binaries, before, segments, cut)| {
            let t = Trace {
                binaries,
                segments: Vec::new(),
                compact: Some((0, 0)),
            };
            let (mut file, _) = write(&t);
            // Something before the first BINARY_ID, now and then.
            file.extend(before.unwrap_or_default());
            for (progid, length, tokens) in segments {
                let body = tokens.concat();
                let length = length.unwrap_or(4 + body.len() as u32);
                file.push(BINARY_ID);
                file.push(0);
                file.extend(progid.to_le_bytes());
                file.extend(length.to_le_bytes());
                file.extend(body);
            }
            if let Some(cut) = cut {
                let len = cut.index(file.len() + 1);
                file.truncate(len);
            }
            file
        })
}

/// (severity, code, offset) of each diagnostic line of a JSON dump.
fn diagnostics_of(values: &[Value]) -> Vec<(String, String, u64)> {
    values
        .iter()
        .filter(|v| v["type"] == "diagnostic")
        .map(|v| {
            (
                v["severity"].as_str().unwrap().to_owned(),
                v["code"].as_str().unwrap().to_owned(),
                v["offset"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// What holds for any bytes, under every option set, from a file and from a pipe.
fn check_hostile(bytes: &[u8]) -> Result<(), TestCaseError> {
    let size = bytes.len() as u64;
    for set in option_sets() {
        for via in [Via::File, Via::Pipe] {
            let d = dump_bytes(bytes, &set, via);
            let context = format!("{} via {via:?}", set.name);
            if set.exports() && matches!(d.outcome, Outcome::Done(..)) {
                let expected = exports::expected_hits(bytes, &set, via);
                if let Err(e) = exports::check_exports(&set, &d, &expected) {
                    return Err(TestCaseError::fail(format!("{context}: {e}")));
                }
            }
            let tally = match d.outcome {
                Outcome::Done(t, _) => t,
                Outcome::NoSuchBinary => {
                    prop_assert!(set.plan.binaries.is_some(), "{}", context);
                    prop_assert!(d.err.contains("/binary:0"), "{}: {}", context, d.err);
                    continue;
                }
                other => {
                    return Err(TestCaseError::fail(format!(
                        "{context}: reading from memory failed ({other:?}): {}",
                        d.err
                    )));
                }
            };
            if set.is_json() {
                let values = d.json();
                prop_assert_eq!(&values[0]["type"], "file", "{}", context);
                for v in &values {
                    let kind = v["type"].as_str().unwrap_or_default();
                    let inside = if RECORD_TYPES.contains(&kind) {
                        true
                    } else if kind == "diagnostic" {
                        !OFFSET_MAY_LIE_OUTSIDE.contains(&v["code"].as_str().unwrap())
                    } else {
                        false
                    };
                    if inside {
                        let offset = v["offset"].as_u64().unwrap();
                        prop_assert!(offset < size, "{}: offset past the end: {}", context, v);
                    }
                }
                let diags = diagnostics_of(&values);
                let errors = diags.iter().filter(|d| d.0 == "error").count() as u64;
                let warnings = diags.iter().filter(|d| d.0 == "warning").count() as u64;
                prop_assert_eq!(
                    (tally.errors, tally.warnings),
                    (errors, warnings),
                    "{}",
                    context
                );
                if set.plan.validate {
                    let last = values.last().unwrap();
                    prop_assert_eq!(&last["type"], "validation");
                    prop_assert_eq!(&last["errors"], &json!(errors));
                    prop_assert_eq!(&last["warnings"], &json!(warnings));
                }
                // Standard error only repeats, for the person watching, the note and error
                // lines that JSON consumers get on standard output (a view that could not
                // run for an input missing is an error).
                let notes: String = values
                    .iter()
                    .filter(|v| v["type"] == "note" || v["type"] == "error")
                    .map(|v| {
                        let note = if v["type"] == "note" { "note: " } else { "" };
                        format!(
                            "sptdump: trace.spt: {note}{}\n",
                            v["message"].as_str().unwrap()
                        )
                    })
                    .collect();
                let notes = if via == Via::File {
                    notes
                } else {
                    notes.replace("sptdump: trace.spt: ", "sptdump: standard input: ")
                };
                prop_assert_eq!(d.err.as_str(), notes.as_str(), "{}", context);
            } else {
                let label = if via == Via::File {
                    "trace.spt: "
                } else {
                    "standard input: "
                };
                let count = |severity: &str| {
                    d.err
                        .lines()
                        .filter(|l| {
                            l.strip_prefix(label)
                                .is_some_and(|r| r.starts_with(severity))
                        })
                        .count() as u64
                };
                prop_assert_eq!(
                    (tally.errors, tally.warnings),
                    (count("error["), count("warning[")),
                    "{}: {}",
                    context,
                    d.err
                );
            }
        }
    }

    // A pipe reports what a file does, save where the size was needed up front (a segment
    // running past the end). Compared where that cannot arise.
    let file = dump_bytes(bytes, &json_all(), Via::File);
    let pipe = dump_bytes(bytes, &json_all(), Via::Pipe);
    let file_values = file.json();
    if !diagnostics_of(&file_values)
        .iter()
        .any(|d| d.1 == "bad-segment-length")
    {
        // Diagnostics by code and offset (messages may say "file" or "input"); everything
        // else whole; the `file` line differs by design.
        let key = |v: &Value| {
            if v["type"] == "diagnostic" {
                json!([v["code"], v["offset"]])
            } else {
                v.clone()
            }
        };
        let f: Vec<Value> = file_values.iter().skip(1).map(key).collect();
        let p: Vec<Value> = pipe.json().iter().skip(1).map(key).collect();
        prop_assert_eq!(f, p, "file and pipe differ");
        prop_assert_eq!(file.status(), pipe.status());
    }
    Ok(())
}

// ----- The summary, against a naive count.

/// One `summary` line of `/summary /json`, read exactly (totals can pass 2^64).
#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct SummaryLine {
    #[serde(rename = "type")]
    kind: String,
    /// The trace the summary is of.
    path: String,
    progid: Option<u16>,
    name: Option<String>,
    records: u64,
    ip: Vec<IpSummary>,
    lbr: Option<LbrSummary>,
    callstack: Option<CallstackSummary>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct IpSummary {
    event: String,
    records: u64,
    samples: u128,
    unique_rvas: usize,
    top: Vec<TopRva>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct TopRva {
    rva: u32,
    hits: u128,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct LbrSummary {
    records: u64,
    branches: u128,
    unique_arcs: usize,
    top: Vec<TopArc>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallstackSummary {
    records: u64,
    arcs: u128,
    unique_arcs: usize,
    top: Vec<TopArc>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct TopArc {
    from: u32,
    to: u32,
    hits: u128,
}

/// Hits per key of one table, with its record count.
#[derive(Default)]
struct Count<K> {
    records: u64,
    hits: std::collections::BTreeMap<K, u128>,
}

impl<K: Ord + Copy> Count<K> {
    fn add(&mut self, keys: impl IntoIterator<Item = K>, hits: u128) {
        self.records += 1;
        for k in keys {
            *self.hits.entry(k).or_default() += hits;
        }
    }

    fn total(&self) -> u128 {
        self.hits.values().sum()
    }

    /// The `n` keys with the most hits, ties by the smaller key.
    fn top(&self, n: usize) -> Vec<(K, u128)> {
        let mut all: Vec<(K, u128)> = self.hits.iter().map(|(&k, &h)| (k, h)).collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        all.truncate(n);
        all
    }
}

/// One binary's counts: sample records, then the tables of each IP event (in opcode
/// order), of LBR branches and of call-stack arcs.
type Counts = (
    u64,
    [Option<Count<u32>>; 6],
    Option<Count<(u32, u32)>>,
    Option<Count<(u32, u32)>>,
);

/// What `/summary /top:top /json` must print for the model, by a plain count.
fn expected_summary(t: &Trace, top: usize) -> Vec<SummaryLine> {
    let mut per_binary: std::collections::BTreeMap<u16, Counts> = Default::default();
    for seg in &t.segments {
        let progid = (seg.progid % t.binaries.len()) as u16;
        for (repeat, sample) in &seg.records {
            let hits = 1 + u128::from(repeat.unwrap_or(0));
            let b = per_binary
                .entry(progid)
                .or_insert_with(|| (0, [const { None }; 6], None, None));
            b.0 += 1;
            match sample {
                Sample::Ip(op, rvas) => {
                    let i = IP_OPCODES.iter().position(|o| o == op).unwrap();
                    b.1[i]
                        .get_or_insert_with(Count::default)
                        .add(rvas.iter().copied(), hits);
                }
                Sample::Lbr(branches) => {
                    b.2.get_or_insert_with(Count::default)
                        .add(branches.iter().copied(), hits);
                }
                Sample::Stack(frames) => {
                    let arcs = frames.windows(2).map(|w| (w[0], w[1]));
                    b.3.get_or_insert_with(Count::default).add(arcs, hits);
                }
            }
        }
    }
    let arcs = |c: &Count<(u32, u32)>| -> Vec<TopArc> {
        c.top(top)
            .into_iter()
            .map(|((from, to), hits)| TopArc { from, to, hits })
            .collect()
    };
    per_binary
        .into_iter()
        .map(|(progid, (records, ip, lbr, stack))| SummaryLine {
            kind: "summary".into(),
            path: "trace.spt".into(),
            progid: Some(progid),
            name: Some(t.binaries[usize::from(progid)].lossy_name()),
            records,
            ip: ip
                .iter()
                .zip(IP_OPCODES)
                .filter_map(|(c, op)| {
                    let c = c.as_ref()?;
                    Some(IpSummary {
                        event: ip_name(op).into(),
                        records: c.records,
                        samples: c.total(),
                        unique_rvas: c.hits.len(),
                        top: c
                            .top(top)
                            .into_iter()
                            .map(|(rva, hits)| TopRva { rva, hits })
                            .collect(),
                    })
                })
                .collect(),
            lbr: lbr.as_ref().map(|c| LbrSummary {
                records: c.records,
                branches: c.total(),
                unique_arcs: c.hits.len(),
                top: arcs(c),
            }),
            callstack: stack.as_ref().map(|c| CallstackSummary {
                records: c.records,
                arcs: c.total(),
                unique_arcs: c.hits.len(),
                top: arcs(c),
            }),
        })
        .collect()
}

fn check_summary(t: &Trace, top: usize) -> Result<(), TestCaseError> {
    let (file, _) = write(t);
    let set = OptionSet::parse(&format!("/summary /json /top:{top}"));
    let d = dump_bytes(&file, &set, Via::File);
    prop_assert_eq!(d.tally().errors, 0);
    let mut got = Vec::new();
    for line in d
        .out
        .lines()
        .filter(|l| l.starts_with("{\"type\":\"summary\","))
    {
        let s: SummaryLine =
            serde_json::from_str(line).map_err(|e| TestCaseError::fail(format!("{e}: {line}")))?;
        got.push(s);
    }
    // `/top:0` shows every entry.
    let shown = if top == 0 { usize::MAX } else { top };
    prop_assert_eq!(got, expected_summary(t, shown));
    // The text summary has a section per binary with sample records.
    let text = OptionSet::parse(&format!("/summary /top:{top}"));
    let text = dump_bytes(&file, &text, Via::File);
    let sections = text
        .out
        .lines()
        .filter(|l| l.starts_with("Summary of progid "))
        .count();
    prop_assert_eq!(sections, expected_summary(t, 0).len(), "{}", text.out);
    Ok(())
}

proptest! {
    #![proptest_config(config())]

    /// A random well-formed trace decodes back to exactly the records written.
    #[test]
    fn well_formed_traces_round_trip(t in trace()) {
        check_round_trip(&t)?;
    }

    /// `/binary:N` prints exactly the records of the segments of program ID N.
    #[test]
    fn binary_keeps_exactly_the_segments_of_its_progid(t in trace(), pick in any::<usize>()) {
        check_selection(&t, (pick % t.binaries.len()) as u16)?;
    }

    /// Any bytes dump without panic through every option set and from both kinds of
    /// input, with offsets inside the file, valid JSON Lines and a consistent tally.
    /// `/summary` totals, unique counts and top entries match a plain count of the
    /// records written, with segments of a binary merged.
    #[test]
    fn summaries_match_a_plain_count(t in trace(), top in 0usize..6) {
        check_summary(&t, top)?;
    }

    #[test]
    fn hostile_bytes_keep_the_promises(bytes in hostile()) {
        check_hostile(&bytes)?;
    }

    /// Streams of random records behind good tables: the dump keeps its promises, and it
    /// reports a problem exactly when a second, independent reading of the spec
    /// (`sptdump_testkit::reference`) finds one, from a file and from a pipe.
    #[test]
    fn random_records_are_reported_exactly_when_the_spec_says(bytes in structured()) {
        check_hostile(&bytes)?;
        let expected = reference_problem(&bytes);
        for via in [Via::File, Via::Pipe] {
            let d = dump_bytes(&bytes, &validate_json(), via);
            let diagnostics = d.json_diagnostics();
            prop_assert_eq!(
                diagnostics.is_empty(),
                expected.is_none(),
                "{:?}: the reference says {:?}, the dump said {:?}",
                via,
                expected,
                diagnostics
            );
        }
    }
}

// ----- Findings, kept as tests.

/// From a pipe, "the diagnostics are those the same bytes give in a
/// file, save where the size was needed up front". A string table with 0 bytes used
/// cannot run past the end of anything, wherever it is placed: a pipe finds nothing wrong
/// with this 32-byte file (StringTableOffset 0x100000, StringTableUsed 0, empty tables and
/// stream), and neither may a file (it once reported string-table-out-of-bounds).
#[test]
fn an_empty_table_past_the_end_is_judged_alike_from_a_file_and_a_pipe() {
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/regressions/empty-string-table-past-eof.spt"),
    )
    .unwrap();
    let mut b = SptBuilder::new();
    b.string_table_capacity(0)
        .program_id_capacity(0)
        .patch_u32(field::STRING_TABLE_OFFSET, 0x10_0000);
    assert_eq!(
        b.build(),
        bytes,
        "the reproducer is this header and nothing else"
    );
    let set = validate_json();
    let pipe = dump_bytes(&bytes, &set, Via::Pipe);
    let file = dump_bytes(&bytes, &set, Via::File);
    assert_eq!(pipe.json_diagnostics(), Vec::<Value>::new());
    assert_eq!(file.json_diagnostics(), pipe.json_diagnostics());
    assert_eq!(
        (file.status(), pipe.status()),
        (Status::Clean, Status::Clean)
    );
}

/// The same promise, for the overlap check. The string table below reserves 16 bytes at
/// 0x46, the end of the file, and uses none of them; the stream runs from 0x38 to 0x46. A
/// file sees no overlap, and neither may a pipe, though it reads only up to one byte past
/// the stream start before the tables are judged (no used table bytes lie further) and so
/// does not yet know where the input ends; it once took the stream to run on forever and
/// warned that it overlaps the string table. The error the trace has
/// (string-offset-out-of-range: program ID 0 names offset 0 of an empty table) is there
/// both ways.
#[test]
fn a_table_reserved_past_the_end_overlaps_nothing_from_a_pipe_either() {
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/regressions/empty-string-table-at-eof-pipe-overlap.spt"),
    )
    .unwrap();
    let mut b = SptBuilder::new();
    b.string_table_offset(0x46)
        .string_table_capacity(16)
        .program_id_table_offset(0x20)
        .program_id_capacity(1);
    b.program_id(Guid::nil(), 1, 0);
    b.binary_id(0).ip(RETIRE_INSTR, &[0x1000]);
    assert_eq!(b.build(), bytes, "the reproducer is this trace");

    let codes = |via| -> Vec<(Value, Value)> {
        dump_bytes(&bytes, &validate_json(), via)
            .json_diagnostics()
            .iter()
            .map(|d| (d["code"].clone(), d["offset"].clone()))
            .collect()
    };
    assert_eq!(
        codes(Via::File),
        [(json!("string-offset-out-of-range"), json!(0x34))]
    );
    assert_eq!(codes(Via::Pipe), codes(Via::File));
}
