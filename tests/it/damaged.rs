//! A PDB or an image cut short or with bytes overwritten is refused in the project's words:
//! where it ends against what its headers say, or which part is damaged; never the words of
//! the libraries that read those formats.

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use sptdump_testkit::fixtures;

/// What the libraries say, which no message may repeat.
const LIBRARY_WORDS: &[&str] = &[
    "UnrecognizedFileFormat",
    "failed to fill whole buffer",
    "UnexpectedEof",
    "Error(",
    "IoError",
    "IO error while reading PDB",
    "Could not read",
    "Unknown MS-DOS file",
    "Invalid PE",
    "Invalid COFF",
    "Invalid data dir",
    "MSF referred to page",
];

fn run(program: &str, dir: &Path, args: &[&str]) -> Output {
    Command::cargo_bin(program)
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Each of `variants` of a file written to `name` in `dir` and given by `option` beside
/// `profile.spt`, and to spddump beside `app.spd` when it is an image: refused (exit 1),
/// the file named, no library's words; the messages, in order.
fn messages(dir: &Path, name: &str, variants: &[Vec<u8>], image: bool) -> Vec<String> {
    let pe = fixtures::dir();
    let path = dir.join(name);
    let path = path.to_str().unwrap();
    let trace = pe.join("profile.spt");
    let trace = trace.to_str().unwrap();
    let spd = pe.join("app.spd");
    let mut said = Vec::new();
    for bytes in variants {
        std::fs::write(path, bytes).unwrap();
        let given = match image {
            true => format!("/image:{path}"),
            false => format!("/pdb:{path}"),
        };
        let mut runs = vec![
            run("sptdump", dir, &["/functions", &given, trace]),
            run("sptdump", dir, &[&format!("/match:{path}")]),
        ];
        if image {
            let image = format!("/image:{path}");
            runs.push(run("spddump", dir, &["/cg", &image, spd.to_str().unwrap()]));
        }
        for o in runs {
            let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
            if o.status.code() == Some(0) {
                // What the readers still read (a cut in bytes nothing needs) is no failure.
                continue;
            }
            assert_eq!(o.status.code(), Some(1), "{} bytes: {stderr}", bytes.len());
            assert!(stderr.contains(path), "{} bytes: {stderr}", bytes.len());
            for words in LIBRARY_WORDS {
                assert!(!stderr.contains(words), "{} bytes: {stderr}", bytes.len());
            }
            said.push(stderr);
        }
    }
    said
}

/// `whole` cut short at several lengths, and with stretches of it overwritten.
fn variants(whole: &[u8], step: usize) -> Vec<Vec<u8>> {
    let mut all: Vec<Vec<u8>> = (1..whole.len())
        .step_by(step)
        .map(|n| whole[..n].to_vec())
        .collect();
    for at in (0..whole.len()).step_by(step * 2) {
        for fill in [0x00, 0xFF] {
            let mut v = whole.to_vec();
            let end = (at + 64).min(v.len());
            v[at..end].fill(fill);
            all.push(v);
        }
    }
    all
}

#[test]
fn a_damaged_pdb_is_refused_in_our_words() {
    let whole = std::fs::read(fixtures::dir().join("app.pdb")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let said = messages(dir.path(), "cut.pdb", &variants(&whole, 2311), false);
    assert!(!said.is_empty());
    // Cut inside its first block: where, against what its header gives.
    let cut = messages(dir.path(), "cut.pdb", &[whole[..3000].to_vec()], false);
    assert!(
        cut[0].contains(&format!(
            "the PDB ends at byte 3000 (in block 0), before its stream directory's block map \
             (block 3), where its MSF header gives 18 blocks of 4096 bytes ({} bytes): it was \
             cut short",
            whole.len()
        )),
        "{}",
        cut[0]
    );
    // Inside its MSF header.
    let cut = messages(dir.path(), "cut.pdb", &[whole[..40].to_vec()], false);
    assert!(
        cut[0].contains("the PDB ends at byte 40 inside its MSF header (56 bytes)"),
        "{}",
        cut[0]
    );
    // A block size no PDB has.
    let mut odd = whole.clone();
    odd[32..36].copy_from_slice(&7u32.to_le_bytes());
    let said = messages(dir.path(), "odd.pdb", &[odd], false);
    assert!(
        said[0].contains("its MSF header gives a block size of 7 bytes"),
        "{}",
        said[0]
    );
}

#[test]
fn a_damaged_image_is_refused_in_our_words() {
    let whole = std::fs::read(fixtures::dir().join("app.exe")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let said = messages(dir.path(), "cut.exe", &variants(&whole, 97), true);
    assert!(!said.is_empty());
    let cut = messages(dir.path(), "cut.exe", &[whole[..300].to_vec()], true);
    assert!(
        cut.iter()
            .all(|m| m
                .contains("the image ends at byte 300 inside its PE headers, which end at byte")),
        "{cut:?}"
    );
    let cut = messages(dir.path(), "cut.exe", &[whole[..40].to_vec()], true);
    assert!(
        cut.iter()
            .all(|m| m.contains("the image ends at byte 40 inside its DOS header (64 bytes)")),
        "{cut:?}"
    );
}
