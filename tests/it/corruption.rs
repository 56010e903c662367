//! Corruption sweeps over the bundled sample: every truncation, and single-byte changes at
//! every byte that means something (the header, the used string-table and program-ID
//! bytes, the whole event stream). Run in-process through the library, so they take a
//! second or two.
//!
//! What is asserted, besides "no panic" and "the outcome is clean or an error, never a
//! usage error":
//!
//! - `/json` output is always JSON Lines;
//! - **a damaged trace is reported exactly when the diagnostics table says there is something
//!   to report.** Which changes must be reported is decided by `reference_problem`
//!   (`sptdump_testkit::reference`), a short reading of the spec that shares nothing with
//!   `src/`: it walks the
//!   header, the tables and the stream, and names the first thing the spec asks to report.
//!   Changes it finds nothing wrong with are the legitimately undetectable ones: an RVA, a
//!   GUID byte, an age, a REPEAT count, a pad byte, a name byte that stays valid UTF-8, an
//!   opcode swapped for one of the same size (IP <-> ETW_CALLSTACK with n >= 2, an empty IP
//!   record <-> an empty LBR, an IP record of 2 RVAs <-> a REPEAT followed by a sample), a
//!   larger StringTableUsed that takes in padding NULs, and so on. Everything else (an
//!   opcode, an `n` or a segment length that breaks the framing, a table moved out of the
//!   file, ...) must produce at least one diagnostic, and a damaged file with no problem
//!   must produce none.

use serde_json::Value;
use sptdump::dump::Status;
use sptdump_testkit::builder::DEFAULT_STREAM_START;
use sptdump_testkit::dumping::*;
use sptdump_testkit::reference::{reference_problem, u16_at};
use sptdump_testkit::samples::{SAMPLE_BINARIES, SampleRecord, sample_records};

fn sample() -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/sample.spt");
    std::fs::read(path).unwrap()
}

// ----- What a dump said.

/// The `diagnostic` lines and the rest of a `/json` dump, minus the `file` line.
fn split(values: Vec<Value>) -> (Vec<Value>, Vec<Value>) {
    values
        .into_iter()
        .skip(1)
        .partition(|v| v["type"] == "diagnostic")
}

/// Dumps `bytes` as `/validate /json` from a file: checks the outcome and returns the
/// diagnostics.
fn validate(bytes: &[u8]) -> Vec<Value> {
    let d = dump_bytes(bytes, &validate_json(), Via::File);
    let status = d.status();
    assert!(status <= Status::Errors, "status {status:?}");
    let (diagnostics, rest) = split(d.json());
    let errors = diagnostics
        .iter()
        .filter(|v| v["severity"] == "error")
        .count();
    assert_eq!(status == Status::Errors, errors > 0, "{diagnostics:?}");
    assert_eq!(
        rest.len(),
        1,
        "only the verdict besides the diagnostics: {rest:?}"
    );
    diagnostics
}

/// The end of each record of the sample, as file offsets, and the offsets of its
/// BINARY_IDs.
fn sample_layout() -> (Vec<u64>, Vec<u64>) {
    let mut at = DEFAULT_STREAM_START;
    let mut ends = Vec::new();
    let mut binary_ids = Vec::new();
    for r in sample_records() {
        let size = match &r {
            SampleRecord::BinaryId(_) => {
                binary_ids.push(at);
                8
            }
            SampleRecord::Repeat(_) => 10,
            SampleRecord::Ip(_, v) | SampleRecord::Callstack(v) => 2 + 4 * v.len() as u64,
            SampleRecord::Lbr(v) => 2 + 8 * v.len() as u64,
        };
        at += size;
        ends.push(at);
    }
    (ends, binary_ids)
}

#[test]
fn the_reference_finds_nothing_in_the_sample() {
    let file = sample();
    assert_eq!(reference_problem(&file), None);
    assert_eq!(validate(&file), Vec::<Value>::new());
    let (ends, _) = sample_layout();
    assert_eq!(*ends.last().unwrap(), file.len() as u64);
}

// ----- Truncation.

/// Every prefix of the sample. A cut trace must never look clean: the only cuts that give
/// no diagnostic are those that leave a shorter valid trace, namely a cut exactly at the
/// stream start (an empty stream) or exactly at the end of a complete segment (where the
/// next BINARY_ID would have started). The format cannot tell those from a trace that was
/// written that short, and neither can any reader.
#[test]
fn every_truncation_is_reported_unless_it_leaves_a_valid_trace() {
    let file = sample();
    let (_, binary_ids) = sample_layout();
    let mut clean = Vec::new();
    for len in 0..file.len() {
        let cut = &file[..len];
        let diagnostics = validate(cut);
        let expected = reference_problem(cut);
        assert_eq!(
            diagnostics.is_empty(),
            expected.is_none(),
            "cut at {len:#X}: reference says {expected:?}, the dump said {diagnostics:?}"
        );
        if diagnostics.is_empty() {
            clean.push(len as u64);
        } else {
            // Every cut that is reported is an error: Status::Errors, exit status 1.
            assert!(
                diagnostics.iter().any(|d| d["severity"] == "error"),
                "cut at {len:#X}: {diagnostics:?}"
            );
        }
    }
    // The segment starts: the first one is the stream start.
    assert_eq!(clean, binary_ids);
    assert_eq!(clean[0], DEFAULT_STREAM_START);
}

/// A cut inside the stream decodes and prints every record that is whole, and nothing
/// after the first one that is not, which is reported as truncated; from a pipe as well.
#[test]
fn a_truncated_stream_prints_every_whole_record() {
    let file = sample();
    let (ends, _) = sample_layout();
    let prefixes: Vec<String> = RECORD_TYPES
        .iter()
        .map(|t| format!("{{\"type\":\"{t}\","))
        .collect();
    let record_lines = |out: &str| -> Vec<String> {
        out.lines()
            .filter(|l| prefixes.iter().any(|p| l.starts_with(p.as_str())))
            .map(str::to_owned)
            .collect()
    };
    let full = dump_bytes(&file, &json_all(), Via::File);
    full.json();
    let records = record_lines(&full.out);
    assert_eq!(records.len(), ends.len());

    for len in DEFAULT_STREAM_START as usize..file.len() {
        let whole = ends.iter().filter(|&&e| e <= len as u64).count();
        let at_a_record_end = len == DEFAULT_STREAM_START as usize || ends.contains(&(len as u64));
        for via in [Via::File, Via::Pipe] {
            let d = dump_bytes(&file[..len], &json_all(), via);
            assert!(d.status() <= Status::Errors);
            assert_eq!(
                record_lines(&d.out),
                records[..whole],
                "cut at {len:#X} via {via:?}"
            );
            let diagnostics: Vec<Brief> = d
                .out
                .lines()
                .filter(|l| l.starts_with("{\"type\":\"diagnostic\","))
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            if !at_a_record_end {
                let offset = match whole {
                    0 => DEFAULT_STREAM_START,
                    _ => ends[whole - 1],
                };
                let truncated = Brief {
                    kind: "diagnostic".into(),
                    offset: Some(offset),
                    code: Some("truncated-record".into()),
                    severity: Some("error".into()),
                };
                assert!(
                    diagnostics.contains(&truncated),
                    "cut at {len:#X} via {via:?}: {diagnostics:?}"
                );
            }
        }
    }
}

// ----- Single-byte changes.

/// The bytes that mean something in the sample: the header, the used string-table bytes,
/// the used program-ID entries and the whole stream.
fn meaningful_bytes(file: &[u8]) -> Vec<usize> {
    let used_strings: usize = SAMPLE_BINARIES.iter().map(|b| b.name.len() + 1).sum();
    let mut at: Vec<usize> = (0..32).collect();
    at.extend(0x20..0x20 + used_strings);
    at.extend(0x4020..0x4020 + SAMPLE_BINARIES.len() * 24);
    at.extend(DEFAULT_STREAM_START as usize..file.len());
    assert_eq!(u16_at(file, 0x18) as usize, used_strings);
    at
}

/// The changes tried at each byte: all bits flipped, zero, and the two opcodes that start
/// framing records of their own.
fn changes(old: u8) -> impl Iterator<Item = u8> {
    [old ^ 0xFF, 0x00, 0x81, 0x82]
        .into_iter()
        .filter(move |&new| new != old)
}

#[test]
fn every_single_byte_change_is_reported_exactly_when_the_spec_says() {
    let file = sample();
    let mut reported = 0;
    let mut undetectable = 0;
    for at in meaningful_bytes(&file) {
        for new in changes(file[at]) {
            let mut bad = file.clone();
            bad[at] = new;
            let diagnostics = validate(&bad);
            let expected = reference_problem(&bad);
            assert_eq!(
                diagnostics.is_empty(),
                expected.is_none(),
                "byte {at:#X} {:#04X} -> {new:#04X}: reference says {expected:?}, the dump said {diagnostics:?}",
                file[at]
            );
            if expected.is_some() {
                reported += 1;
            } else {
                undetectable += 1;
            }
        }
    }
    // Both kinds occur, so the rule is exercised both ways.
    assert!(
        reported > 1000 && undetectable > 1000,
        "{reported} {undetectable}"
    );
}

/// The same changes dumped in full, from a file and from a pipe: the output is JSON Lines,
/// every record and diagnostic offset lies inside the file, and a change the spec cannot
/// see leaves the dump free of diagnostics. Every 31st stream byte, to stay fast (the sweep above
/// covers every one of them through `/validate`).
#[test]
fn single_byte_changes_dump_as_valid_json() {
    let file = sample();
    let positions = meaningful_bytes(&file);
    let positions = positions
        .iter()
        .enumerate()
        .filter(|&(i, &at)| at < DEFAULT_STREAM_START as usize || i % 31 == 0)
        .map(|(_, &at)| at);
    for at in positions {
        for new in changes(file[at]) {
            let mut bad = file.clone();
            bad[at] = new;
            let clean = reference_problem(&bad).is_none();
            for via in [Via::File, Via::Pipe] {
                let d = dump_bytes(&bad, &json_all(), via);
                let context = format!("byte {at:#X} -> {new:#04X} via {via:?}");
                assert!(d.status() <= Status::Errors, "{context}");
                let lines = d.json_brief();
                assert_eq!(lines[0].kind, "file", "{context}");
                for line in &lines {
                    if let Some(offset) = line.offset_inside() {
                        assert!(offset < bad.len() as u64, "{context}: {line:?}");
                    }
                }
                if clean {
                    assert!(
                        lines.iter().all(|l| l.kind != "diagnostic"),
                        "{context}: {}",
                        d.out
                    );
                }
            }
        }
    }
}
