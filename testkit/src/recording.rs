//! `testdata/pe/lbr.run.txt`: LBR records of `lbr.exe` as it ran, and `testdata/pe/lbr.spt`,
//! the trace made of them.
//!
//! `scripts/record-lbr.py` recorded them by running `lbr.exe` (`testdata/pe/lbr.c`) under a
//! CPU emulator from its entry point until `main_entry` returned, again from a fresh state
//! until enough records were taken: every taken branch entered a last-branch stack, and
//! every `period` taken branches the stack was read into one record. The file's header says
//! how; each line after it is one record, its pairs newest first as `FROM>TO` hexadecimal
//! RVAs. The tests need only the file, not the recorder.

use crate::fixtures;
use crate::walk;

/// LBR records of a recorded run, and how they were taken.
#[derive(Clone, Debug)]
pub struct Recording {
    /// The records, each as `(from, to)` pairs, the most recent first.
    pub records: Vec<Vec<(u32, u32)>>,
    /// The pairs of each record: the last-branch stack's depth.
    pub depth: usize,
    /// How many taken branches lie between two records.
    pub period: usize,
    /// How many times the program was run (the last run cut short at the last record).
    pub runs: usize,
    /// The image's CodeView identity as the recorder read it: the 16 GUID bytes as the file
    /// stores them, and the age.
    pub codeview: ([u8; 16], u32),
}

/// The value after `key: ` in a header line, up to the next comma or space.
fn field<'a>(header: &'a str, key: &str) -> &'a str {
    let at = header
        .find(&format!("{key}: "))
        .unwrap_or_else(|| panic!("the recording's header has no {key:?}"));
    let rest = &header[at + key.len() + 2..];
    rest.split([',', ' ', '\n']).next().unwrap()
}

/// Reads a recording in the form `scripts/record-lbr.py` writes.
pub fn parse(text: &str) -> Recording {
    let header: String = text
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| format!("{}\n", l.trim_start_matches('#').trim()))
        .collect();
    let number = |key: &str| -> usize { field(&header, key).parse().unwrap() };
    // "image: lbr.exe, CodeView GUID bytes HEX, age N"
    let (guid, age) = header
        .split("CodeView GUID bytes ")
        .nth(1)
        .and_then(|rest| rest.split_once(", age "))
        .expect("the image's CodeView GUID and age");
    let guid: Vec<u8> = (0..guid.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&guid[i..i + 2], 16).unwrap())
        .collect();
    let age = age.split_whitespace().next().unwrap().parse().unwrap();
    let pair = |p: &str| -> (u32, u32) {
        let (from, to) = p.split_once('>').expect("FROM>TO");
        let hex = |v: &str| u32::from_str_radix(v, 16).unwrap();
        (hex(from), hex(to))
    };
    let records: Vec<Vec<(u32, u32)>> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().map(pair).collect())
        .collect();
    let recording = Recording {
        depth: number("pairs"),
        period: number("period"),
        runs: number("runs"),
        codeview: (guid.try_into().expect("16 GUID bytes"), age),
        records,
    };
    assert_eq!(recording.records.len(), number("records"));
    assert!(
        recording.records.iter().all(|r| r.len() == recording.depth),
        "every record holds {} pairs",
        recording.depth
    );
    recording
}

/// `testdata/pe/lbr.run.txt`, read; it must be of `lbr.exe` as built in `testdata/pe/`
/// (the same CodeView identity), else it is to be recorded again.
pub fn lbr_run() -> Recording {
    read_run(&fixtures::dir().join("lbr.run.txt"))
}

/// A recording of `lbr.exe`, read from `path`; it must be of `lbr.exe` as built in
/// `testdata/pe/` (the same CodeView identity), else it is to be recorded again.
fn read_run(path: &std::path::Path) -> Recording {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let recording = parse(&text);
    assert_eq!(
        recording.codeview,
        fixtures::codeview("lbr"),
        "{} was recorded of another build of lbr.exe: run scripts/record-lbr.py",
        path.display()
    );
    recording
}

/// `testdata/pe/lbr.spt`: [`lbr_run`]'s records as the SPGO tutorial records a trace: an
/// IP sample and an LBR record (newest first) per sample, no call stacks.
pub fn lbr_trace() -> Vec<u8> {
    walk::trace("lbr", "lbr.exe", &lbr_run().records, false)
}

/// How many of [`lbr_run`]'s records [`lbr_sparse_trace`] keeps one of.
pub const SPARSE: usize = 50;

/// `testdata/pe/lbr-sparse.spt`: one in [`SPARSE`] of [`lbr_run`]'s records (the first, then
/// every fiftieth), as the field records a trace: one record per tens of thousands of
/// branches. The same run, sampled more sparsely.
pub fn lbr_sparse_trace() -> Vec<u8> {
    let records: Vec<_> = lbr_run().records.into_iter().step_by(SPARSE).collect();
    walk::trace("lbr", "lbr.exe", &records, false)
}

/// The machines of the small fleet in `testdata/pe/fleet/`: runs of `lbr.exe`, each with
/// another input (its table, said in the recording's header), recorded as [`lbr_run`] was.
pub const FLEET: [&str; 4] = ["web01", "web02", "web03", "web04"];

/// `testdata/pe/fleet/NAME.run.txt`, read; of `lbr.exe` as built, as [`lbr_run`] must be.
pub fn fleet_run(name: &str) -> Recording {
    read_run(
        &fixtures::dir()
            .join("fleet")
            .join(format!("{name}.run.txt")),
    )
}

/// `testdata/pe/fleet/NAME.spt`: [`fleet_run`]'s records as [`lbr_trace`] makes a trace.
pub fn fleet_trace(name: &str) -> Vec<u8> {
    walk::trace("lbr", "lbr.exe", &fleet_run(name).records, false)
}
