//! The ETL reader (SPEC section 19) on the public files, read in place: what each must give
//! is in their folder's `expected.json`, counted by a reader of its own; here sptdump's
//! buffers, events and kernel payloads are held to it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use serde_json::Value;
use sptdump::etl::buffer::Buffers;
use sptdump::etl::event::Events;
use sptdump::etl::kernel::{self, Kernel, LogHeader, Read, SampleKind};
use sptdump::etl::recording::Recording;
use sptdump::etl::spt;
use sptdump::input::Input;
use sptdump_testkit::shared;

/// What the format layer reads from a file, counted as `expected.json` counts it.
#[derive(Default)]
struct Read1 {
    header: Option<LogHeader>,
    buffers: u64,
    events: u64,
    kinds: BTreeMap<String, u64>,
    timer: u64,
    pmc: u64,
    images: u64,
    identities: BTreeSet<(u64, u32, String, u32)>,
    threads: BTreeSet<u32>,
    unreadable: u64,
}

fn read(path: &Path) -> Read1 {
    let mut buffers = Buffers::new(BufReader::new(File::open(path).unwrap()));
    let mut r = Read1::default();
    let mut pointer = 8;
    while let Some(b) = buffers.next_buffer().unwrap() {
        r.buffers += 1;
        for e in Events::new(b.events) {
            let Ok(e) = e else {
                r.unreadable += 1;
                continue;
            };
            r.events += 1;
            *r.kinds.entry(format!("0x{:02x}", e.kind)).or_default() += 1;
            match kernel::read(&e, pointer) {
                Read::Known(Kernel::LogHeader(h)) => {
                    assert!(r.header.is_none(), "one log-file header");
                    assert_eq!(r.events, 1, "the log-file header comes first");
                    pointer = h.pointer_size;
                    r.header = Some(h);
                }
                Read::Known(Kernel::Sample(s)) => match s.kind {
                    SampleKind::Timer => r.timer += 1,
                    SampleKind::Pmc(_) => r.pmc += 1,
                },
                Read::Known(Kernel::Image(_)) => r.images += 1,
                Read::Known(Kernel::PdbId(p)) => {
                    r.identities
                        .insert((p.base, p.process, p.guid.to_string(), p.age));
                }
                Read::Known(Kernel::Thread(t)) => {
                    r.threads.insert(t.thread);
                }
                Read::Short => panic!("a short payload in {}", path.display()),
                _ => {}
            }
        }
    }
    r
}

#[test]
fn the_public_files_read_as_expected() {
    let Some(dir) = shared::etl_files("etl::the_public_files_read_as_expected") else {
        return;
    };
    let expected: Value =
        serde_json::from_reader(File::open(dir.join("expected.json")).unwrap()).unwrap();
    let files = expected.as_object().unwrap();
    assert_eq!(files.len(), 3);
    for (name, want) in files {
        let r = read(&dir.join(name));
        let h = r
            .header
            .unwrap_or_else(|| panic!("{name}: no log-file header"));
        let w = &want["header"];
        assert_eq!(u64::from(h.buffer_size), w["buffer_size"], "{name}");
        let (major, minor, build) = h.os;
        assert_eq!(format!("{major}.{minor}.{build}"), w["os"], "{name}");
        assert_eq!(u64::from(h.processors), w["processors"], "{name}");
        assert_eq!(u64::from(h.pointer_size), w["pointer_size"], "{name}");
        assert_eq!(u64::from(h.events_lost), w["events_lost"], "{name}");
        assert_eq!(u64::from(h.buffers_written), w["buffers_written"], "{name}");
        assert_eq!(h.frequency, 10_000_000, "{name}");
        assert!(h.end > h.start, "{name}");
        assert_eq!(r.buffers, want["buffers"], "{name}");
        assert_eq!(r.events, want["events"], "{name}");
        assert_eq!(r.unreadable, 0, "{name}");
        let kinds: BTreeMap<String, u64> =
            serde_json::from_value(want["header_types"].clone()).unwrap();
        assert_eq!(r.kinds, kinds, "{name}");
        assert_eq!(r.timer, want["timer_samples"], "{name}");
        assert_eq!(r.pmc, want["pmc_samples"], "{name}");
        assert_eq!(r.images, want["image_events"], "{name}");
        assert_eq!(r.identities.len() as u64, want["dbgid_rsds"], "{name}");
        assert_eq!(r.threads.len() as u64, want["threads"], "{name}");
    }
}

/// The samples attributed to binaries by process and address, as `expected.json` gives them.
#[test]
fn the_public_files_samples_fall_in_the_binaries_expected() {
    let Some(dir) =
        shared::etl_files("etl::the_public_files_samples_fall_in_the_binaries_expected")
    else {
        return;
    };
    let expected: Value =
        serde_json::from_reader(File::open(dir.join("expected.json")).unwrap()).unwrap();
    for (name, want) in expected.as_object().unwrap() {
        let mut buffers = Buffers::new(BufReader::new(File::open(dir.join(name)).unwrap()));
        let mut recording = Recording::new();
        while let Some(b) = buffers.next_buffer().unwrap() {
            recording.add(&b);
        }
        assert_eq!(recording.events, want["events"], "{name}");
        assert_eq!(recording.image_events, want["image_events"], "{name}");
        assert_eq!(recording.identities() as u64, want["dbgid_rsds"], "{name}");
        assert_eq!(recording.threads() as u64, want["threads"], "{name}");
        let a = recording.attribute();
        let attributed: u64 = a.binaries.iter().map(|b| b.total()).sum();
        let u = a.unattributed;
        assert_eq!(attributed, want["attributed"], "{name}");
        assert_eq!(u.timer + u.pmc + u.lbr, want["unattributed"], "{name}");
        assert_eq!(
            a.binaries.len() as u64,
            want["binaries_with_samples"],
            "{name}"
        );
        let top = want["top_binaries"].as_array().unwrap();
        for (got, want) in a.binaries.iter().zip(top) {
            let id = got.identity.as_ref().unwrap();
            assert_eq!(got.name, want["name"], "{name}");
            assert_eq!(
                id.guid.hyphenated().to_string().to_uppercase(),
                want["guid"],
                "{name}"
            );
            assert_eq!(u64::from(id.age), want["age"], "{name}");
            assert_eq!(id.pdb, want["pdb"], "{name}");
            assert_eq!(got.timer, want["timer"], "{name}");
            let rvas: u64 = got.samples.values().sum();
            assert_eq!(rvas, got.timer + got.pmc_total(), "{name}");
        }
    }
}

/// sptdump's aggregation of the large public file, written as an SPT and read back by the
/// command: one program ID per binary with samples and an identity, and every timer sample
/// of each as an ETW_INSTR hit.
#[test]
fn the_public_recording_aggregates_into_an_spt_that_reads_back() {
    let Some(dir) =
        shared::etl_files("etl::the_public_recording_aggregates_into_an_spt_that_reads_back")
    else {
        return;
    };
    let path = dir.join("net.4.5.2.x64.etl");
    let mut input = Input::open(&path).unwrap();
    assert!(input.is_etl().unwrap());
    let mut buffers = 0;
    let recording = input.recording(|_| buffers += 1).unwrap();
    assert_eq!(buffers, 360);
    let attributed = recording.attribute();
    let aggregated = spt::aggregate(&attributed).unwrap();
    assert!(aggregated.left_out.is_empty(), "{:?}", aggregated.left_out);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("net.spt");
    aggregated
        .spt
        .write_to(File::create(&out).unwrap())
        .unwrap();
    let run = assert_cmd::Command::cargo_bin("sptdump")
        .unwrap()
        .args(["/json", "/progid", "/summary", "/top:0"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let lines: Vec<Value> = String::from_utf8(run.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let progids: Vec<&Value> = lines.iter().filter(|l| l["type"] == "progid").collect();
    assert_eq!(progids.len(), attributed.binaries.len());
    for (line, binary) in progids.iter().zip(&attributed.binaries) {
        let id = binary.identity.as_ref().unwrap();
        assert_eq!(line["name"], binary.name.as_str());
        assert_eq!(line["age"], id.age);
        assert_eq!(
            line["guid"].as_str().unwrap(),
            id.guid.hyphenated().to_string().to_uppercase()
        );
    }
    // Each binary's summary: its timer samples as ETW_INSTR hits, its stacks' arcs.
    let summaries: Vec<&Value> = lines.iter().filter(|l| l["type"] == "summary").collect();
    assert_eq!(summaries.len(), attributed.binaries.len());
    for (summary, binary) in summaries.iter().zip(&attributed.binaries) {
        assert_eq!(summary["name"], binary.name.as_str());
        assert_eq!(summary["ip"][0]["event"], "ETW_INSTR");
        assert_eq!(summary["ip"][0]["samples"], binary.timer, "{}", binary.name);
    }
    let arcs: u64 = attributed
        .stacks
        .iter()
        .map(|s| (s.frames.len() as u64 - 1) * s.hits)
        .sum();
    let shown: u64 = summaries
        .iter()
        .filter_map(|s| s["callstack"]["arcs"].as_u64())
        .sum();
    assert!(arcs > 0);
    assert_eq!(shown, arcs);
}

/// An ETL is known by its first bytes, on a file and on a pipe, and those bytes are put
/// back: the ETL reads whole, and an SPT still reads from its header.
#[test]
fn an_etl_is_known_by_its_first_bytes_which_are_put_back() {
    let spt = crate::support::crate_root().join("testdata/sample.spt");
    let bytes = std::fs::read(&spt).unwrap();
    let mut file = Input::open(&spt).unwrap();
    let mut pipe = Input::pipe(Box::new(std::io::Cursor::new(bytes.clone())));
    for input in [&mut file, &mut pipe] {
        assert!(!input.is_etl().unwrap());
        assert_eq!(input.header().unwrap().unwrap()[..], bytes[..32]);
    }
    let Some(dir) = shared::etl_files("etl::an_etl_is_known_by_its_first_bytes_which_are_put_back")
    else {
        return;
    };
    let etl = std::fs::read(dir.join("SelfDescribingSingleEvent.etl")).unwrap();
    let mut pipe = Input::pipe(Box::new(std::io::Cursor::new(etl)));
    assert!(pipe.is_etl().unwrap());
    let recording = pipe.recording(|_| {}).unwrap();
    assert_eq!((recording.buffers, recording.events), (3, 22));
    // Cut inside its second buffer, it is refused at that buffer's offset.
    let etl = std::fs::read(dir.join("net.4.5.2.x64.etl")).unwrap();
    let mut cut = Input::pipe(Box::new(std::io::Cursor::new(etl[..1000].to_vec())));
    assert!(cut.is_etl().unwrap());
    let refused = cut.recording(|_| {}).err().unwrap();
    assert_eq!(refused.offset(), 512);
    assert!(
        refused
            .to_string()
            .starts_with("buffer 1 at offset 0x00000200: its size is"),
        "{refused}"
    );
}

/// The GUID of the synthetic recording's application.
const APP_GUID: u128 = 0x1234_5678_9ABC_4DEF_8123_4567_89AB_CDEF;

/// A synthetic ETL, for what no public recording holds (written by the test kit, from
/// SPEC 19): a recording with `pointer`-byte addresses and 3 lost events; App.exe with a
/// PDB identity and jit.dll without, the kernel; in a compressed buffer, timer samples, PMC
/// samples of `source`, LBR records (one of them crossing into jit.dll) and stack walks,
/// and samples in no image and of a thread no event names.
pub(crate) fn synthetic(pointer: u8, source: u16) -> Vec<u8> {
    synthetic_of(pointer, source, APP_GUID, 3, &[])
}

/// [`synthetic`] with App.exe's PDB identity `guid` and `age`, and `more` events in its
/// second buffer.
fn synthetic_of(pointer: u8, source: u16, guid: u128, age: u32, more: &[Vec<u8>]) -> Vec<u8> {
    use sptdump_testkit::etl::{self, LogHeader};
    let kernel = if pointer == 8 {
        0xFFFF_F800_0000_0000
    } else {
        0x8040_0000
    };
    let first = vec![
        LogHeader {
            pointer,
            lost: 3,
            buffers: 2,
            ..LogHeader::default()
        }
        .event(),
        etl::thread(7, 70),
        etl::thread(7, 71),
        etl::image(
            pointer,
            7,
            0x40_0000,
            0x1_0000,
            "\\Device\\HarddiskVolume2\\app\\App.exe",
        ),
        etl::pdb_id(7, 0x40_0000, guid, age, "app.pdb"),
        etl::image(
            pointer,
            7,
            0x50_0000,
            0x1000,
            "\\Device\\HarddiskVolume2\\jit.dll",
        ),
        etl::image(
            pointer,
            0,
            kernel,
            0x10_0000,
            "\\SystemRoot\\system32\\ntoskrnl.exe",
        ),
        etl::pdb_id(0, kernel, 0xAB, 1, "ntkrnlmp.pdb"),
    ];
    let mut second = Vec::new();
    for _ in 0..5 {
        second.push(etl::sample(pointer, 70, 0x40_1000, None));
    }
    for _ in 0..3 {
        second.push(etl::sample(pointer, 71, 0x40_1004, Some(source)));
    }
    second.push(etl::sample(pointer, 70, 0x50_0010, None));
    second.push(etl::sample(pointer, 70, 0x50_0020, None));
    second.push(etl::sample(pointer, 70, 0x60_0000, None));
    second.push(etl::sample(pointer, 99, 0x40_1000, None));
    second.push(etl::sample(pointer, 70, kernel + 0x100, None));
    second.push(etl::sample(pointer, 70, kernel + 0x100, None));
    let pairs = [(0x40_2010, 0x40_2100), (0x40_2000, 0x40_1F00)];
    for _ in 0..4 {
        second.push(etl::lbr(pointer, 7, 70, &pairs));
    }
    second.push(etl::lbr(
        pointer,
        7,
        70,
        &[(0x40_3000, 0x50_0000), (0x40_2000, 0x40_1F00)],
    ));
    second.push(etl::stack(
        pointer,
        7,
        70,
        &[kernel + 0x100, kernel + 0x200, 0x40_1000, 0x40_1100],
    ));
    second.extend_from_slice(more);
    etl::file(&[first, second], true)
}

fn run_on(bytes: &[u8], args: &[&str]) -> (std::process::Output, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.etl"), bytes).unwrap();
    let mut all = args.to_vec();
    all.push("r.etl");
    (crate::support::run_in(dir.path(), &all), dir)
}

fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

/// A synthetic recording of either pointer size: its header, its binaries with PMC and LBR
/// samples, and what `/check` says of it.
#[test]
fn a_synthetic_recording_shows_its_binaries_samples_and_verdicts() {
    use crate::support::{json_lines, status};
    for pointer in [4, 8] {
        let (run, _dir) = run_on(
            &synthetic(pointer, 26),
            &["/json", "/header", "/progid", "/check"],
        );
        let lines = json_lines(&run);
        let header = of_type(&lines, "etl_header");
        assert_eq!(header.len(), 1);
        let h = header[0];
        assert_eq!(h["pointer_size"], pointer);
        assert_eq!(
            (h["buffers"].as_u64(), h["events_lost"].as_u64()),
            (Some(2), Some(3))
        );
        assert_eq!(
            (h["timer"].as_u64(), h["pmc"].as_u64(), h["lbr"].as_u64()),
            (Some(11), Some(3), Some(5))
        );
        let binaries = of_type(&lines, "etl_binary");
        let names: Vec<&str> = binaries
            .iter()
            .map(|b| b["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["app.exe", "jit.dll", "ntoskrnl.exe"],
            "pointer {pointer}"
        );
        let app = binaries[0];
        assert_eq!(app["guid"], "12345678-9ABC-4DEF-8123-456789ABCDEF");
        assert_eq!(
            (app["age"].as_u64(), app["pdb"].as_str()),
            (Some(3), Some("app.pdb"))
        );
        assert_eq!(
            (
                app["timer"].as_u64(),
                app["pmc"].as_u64(),
                app["lbr"].as_u64()
            ),
            (Some(5), Some(3), Some(5))
        );
        assert_eq!(app["processes"], serde_json::json!([7]));
        assert!(binaries[1]["guid"].is_null());
        let un = of_type(&lines, "etl_unattributed");
        assert_eq!(
            (un[0]["timer"].as_u64(), un[0]["lbr"].as_u64()),
            (Some(2), Some(0))
        );
        let codes: Vec<&str> = of_type(&lines, "check")
            .iter()
            .map(|c| c["code"].as_str().unwrap())
            .collect();
        assert!(codes.contains(&"etl-no-identity"), "{codes:?}");
        assert!(codes.contains(&"etl-events-lost"), "{codes:?}");
        assert!(!codes.contains(&"etl-no-spgo-samples"), "{codes:?}");
        assert_eq!(status(&run), 0, "warnings alone");
    }
}

/// `/spt` writes sptdump's aggregation, and what sptdump shows of it equals what it shows
/// of the ETL: the summaries (of every kind of record), and `/check`'s binaries.
#[test]
fn the_aggregation_written_reads_as_the_recording_does() {
    use crate::support::{json_lines, run_in, status, stderr};
    let (run, dir) = run_on(&synthetic(8, 26), &["/spt:out.spt", "/json"]);
    assert_eq!(status(&run), 0, "{}", stderr(&run));
    let notes = json_lines(&run);
    assert!(notes.iter().any(|l| {
        l["type"] == "note"
            && l["message"]
                .as_str()
                .unwrap()
                .starts_with("wrote out.spt: sptdump's aggregation")
    }));
    let shown = |file: &str| {
        let run = run_in(dir.path(), &["/json", "/summary", "/check", "/top:0", file]);
        assert_eq!(status(&run), 0, "{}", stderr(&run));
        json_lines(&run)
            .into_iter()
            .filter(|l| ["summary", "check_binary"].contains(&l["type"].as_str().unwrap()))
            .map(|mut l| {
                l.as_object_mut().unwrap().remove("path");
                l
            })
            .collect::<Vec<_>>()
    };
    let (etl, spt) = (shown("r.etl"), shown("out.spt"));
    assert_eq!(etl.len(), 4, "{etl:?}");
    assert_eq!(etl, spt);
    // The PMC samples of source 26 are RETIRE_INSTR; the LBR record crossing binaries keeps
    // its pair inside App.exe.
    let app = &etl[0];
    assert_eq!(app["ip"][0]["event"], "RETIRE_INSTR");
    assert_eq!(app["lbr"]["branches"], 9);
}

/// What cannot be aggregated, and a damaged recording, end the file with a message that
/// says why and where; the exit status is 1.
#[test]
fn an_unknown_pmc_source_and_a_damaged_recording_are_refused() {
    use crate::support::{status, stderr};
    let (run, _dir) = run_on(&synthetic(8, 29), &["/summary"]);
    assert_eq!(status(&run), 1);
    assert!(
        stderr(&run).contains("3 PMC samples in app.exe are of profile source 29"),
        "{}",
        stderr(&run)
    );
    let whole = synthetic(4, 26);
    let first = u32::from_le_bytes(whole[..4].try_into().unwrap()) as usize;
    let (run, _dir) = run_on(&whole[..whole.len() - 5], &["/summary"]);
    assert_eq!(status(&run), 1);
    assert!(
        stderr(&run).contains(&format!("buffer 1 at offset {first:#010X}: its size is")),
        "{}",
        stderr(&run)
    );
}

/// `/event` of an ETL lists its samples and LBR records in the order of the file, placed by
/// the whole recording's images; a pipe, read once, gets a note instead.
#[test]
fn the_samples_of_a_recording_are_listed_one_per_line() {
    use crate::support::{json_lines, status, stderr};
    let (run, dir) = run_on(&synthetic(4, 26), &["/json", "/event"]);
    assert_eq!(status(&run), 0, "{}", stderr(&run));
    let lines = json_lines(&run);
    let events = of_type(&lines, "etl_event");
    assert_eq!(events.len(), 11 + 3 + 5, "samples and LBR records");
    let first = events[0];
    assert_eq!(
        (first["kind"].as_str(), first["binary"].as_str()),
        (Some("timer"), Some("app.exe"))
    );
    assert_eq!(
        (first["rva"].as_u64(), first["process"].as_u64()),
        (Some(0x1000), Some(7))
    );
    let pmc: Vec<_> = events.iter().filter(|e| e["kind"] == "pmc").collect();
    assert_eq!(pmc.len(), 3);
    assert_eq!(
        (pmc[0]["source"].as_u64(), pmc[0]["rva"].as_u64()),
        (Some(26), Some(0x1004))
    );
    let unknown = events.iter().find(|e| e["thread"] == 99).unwrap();
    assert!(unknown["process"].is_null() && unknown["binary"].is_null());
    let lbr: Vec<_> = events.iter().filter(|e| e["kind"] == "lbr").collect();
    assert_eq!((lbr.len(), lbr[0]["pairs"].as_u64()), (5, Some(2)));
    assert!(
        of_type(&lines, "lbr").is_empty(),
        "not the aggregation's records"
    );
    let piped = std::process::Command::new(env!("CARGO_BIN_EXE_sptdump"))
        .args(["/event", "-"])
        .stdin(std::fs::File::open(dir.path().join("r.etl")).unwrap())
        .output()
        .unwrap();
    assert_eq!(status(&piped), 0);
    assert!(stderr(&piped).contains("/event of an ETL reads it a second time"));
}

/// The build of `testdata/pe/app.exe`: its PDB's GUID and age.
const PE_APP_GUID: u128 = 0x7A76D39E_EF6D_104E_4C4C_44205044422E;

/// A recording of the real app.exe's build: `/match` says its SPD fits the binary the
/// samples fall in, and `/functions` names them with its PDB, as for a trace.
#[test]
fn a_recording_is_matched_and_named_as_a_trace_is() {
    use crate::support::{crate_root, json_lines, status, stderr};
    use sptdump_testkit::etl;
    // Timer samples in mix_round (0x1055) and hash_bytes (0x1018).
    let more: Vec<Vec<u8>> = [0x40_1055u64, 0x40_1055, 0x40_1018]
        .iter()
        .map(|&ip| etl::sample(8, 70, ip, None))
        .collect();
    let bytes = synthetic_of(8, 26, PE_APP_GUID, 1, &more);
    let pe = crate_root().join("testdata/pe");
    let (run, _dir) = run_on(
        &bytes,
        &[
            "/json",
            &format!("/match:{}", pe.join("app.spd").display()),
            &format!("/pdb:{}", pe.join("app.pdb").display()),
            "/functions",
            "/top:0",
        ],
    );
    assert_eq!(status(&run), 0, "{}", stderr(&run));
    let lines = json_lines(&run);
    let matched = of_type(&lines, "match");
    assert_eq!(matched.len(), 1);
    assert_eq!(matched[0]["status"], "match", "{}", matched[0]);
    let named: Vec<&str> = of_type(&lines, "functions")
        .iter()
        .filter(|f| f["source"] == "ETW_INSTR")
        .flat_map(|f| f["top"].as_array().unwrap())
        .filter_map(|t| t["key"].as_str())
        .collect();
    assert!(named.contains(&"app.exe!mix_round"), "{named:?}");
    assert!(named.contains(&"app.exe!hash_bytes"), "{named:?}");
}

/// An event of a header type no reader knows ends its buffer's events with a warning at its
/// offset; the buffers after it are read, and the run succeeds.
#[test]
fn an_unknown_event_skips_the_rest_of_its_buffer_with_a_warning() {
    use crate::support::{json_lines, status, stderr};
    use sptdump_testkit::etl::{self, LogHeader};
    let mut unknown = etl::sample(8, 70, 0x40_1000, None);
    unknown[2] = 0x07;
    let first = vec![LogHeader::default().event(), etl::thread(7, 70)];
    let second = vec![
        etl::sample(8, 70, 0x40_1000, None),
        unknown,
        etl::sample(8, 70, 0x40_1000, None),
    ];
    let third = vec![etl::sample(8, 70, 0x40_1000, None)];
    let bytes = etl::file(&[first, second, third], false);
    let second_at = u32::from_le_bytes(bytes[..4].try_into().unwrap()) as u64;
    let (run, _dir) = run_on(&bytes, &["/json", "/header"]);
    assert_eq!(status(&run), 0, "{}", stderr(&run));
    let lines = json_lines(&run);
    let d = of_type(&lines, "diagnostic");
    assert_eq!(d.len(), 1, "{lines:?}");
    assert_eq!(d[0]["code"], "etl-unknown-header");
    // The buffer's header, then the first sample's 32 bytes (16 of header, 16 of payload).
    assert_eq!(d[0]["offset"], second_at + 72 + 32);
    assert_eq!(
        of_type(&lines, "etl_header")[0]["timer"],
        2,
        "the sample after it is skipped, the next buffer's read"
    );
}

/// Names from a recording are data: a file name with terminal controls is shown escaped.
#[test]
fn names_from_a_recording_never_reach_the_terminal_as_controls() {
    use crate::support::{status, stdout};
    use sptdump_testkit::etl::{self, LogHeader};
    let first = vec![
        LogHeader::default().event(),
        etl::thread(7, 70),
        etl::image(8, 7, 0x40_0000, 0x1000, "\\Device\\x\\evil\u{1b}[2J.dll"),
        etl::pdb_id(7, 0x40_0000, 5, 1, "e\u{1b}vil.pdb"),
    ];
    let second = vec![etl::sample(8, 70, 0x40_0010, None)];
    let (run, _dir) = run_on(&etl::file(&[first, second], false), &["/progid"]);
    assert_eq!(status(&run), 0);
    let out = stdout(&run);
    assert!(!out.contains('\u{1b}'), "{out}");
    assert!(
        out.contains("evil\\u{1b}[2j.dll (e\\u{1b}vil.pdb)"),
        "{out}"
    );
}
