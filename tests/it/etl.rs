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
