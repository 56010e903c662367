//! Every view, as its declaration says, run through the command line: each shows something
//! of a trace with call stacks and symbols, of each trace, of traces merged and of traces
//! compared, or is refused with a usage error naming it. A view that forgets part of its
//! declaration (what the decoder must count for it, what it must not let go of) prints
//! nothing here, and fails.

use std::path::Path;

use serde_json::Value;
use sptdump::dump::{Compared, Kind, Merged, Writes};

use crate::support::{json_lines, run, status, stderr};

const TRACE: &str = "testdata/pe/inline.spt";
const PDB: &str = "/pdb:testdata/pe/inline.pdb";

/// The option that asks for `kind`, writing under `dir` when it writes a file.
fn option(kind: Kind, dir: &Path) -> String {
    let d = kind.declaration();
    match d.writes {
        Writes::Tables | Writes::Lines => format!("/{}", d.name),
        Writes::File(_) | Writes::Directory(_) => {
            format!("/{}:{}", d.name, dir.join(d.name).display())
        }
    }
}

/// Whether `kind` showed something: a line of its own on standard output (one that is not
/// a trace's `file` line, a note, a verdict or a comparison), or a file or directory that
/// is not empty.
fn shown(kind: Kind, dir: &Path, lines: &[Value]) -> bool {
    let d = kind.declaration();
    match d.writes {
        Writes::Tables | Writes::Lines => lines.iter().any(|l| {
            !["file", "note", "validation", "compare"].contains(&l["type"].as_str().unwrap())
        }),
        Writes::File(_) => std::fs::metadata(dir.join(d.name)).is_ok_and(|m| m.len() > 0),
        Writes::Directory(_) => {
            std::fs::read_dir(dir.join(d.name)).is_ok_and(|mut entries| entries.next().is_some())
        }
    }
}

#[test]
fn every_view_shows_something_of_a_trace() {
    for kind in Kind::ALL {
        if kind.declaration().missing.is_some() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let option = option(kind, dir.path());
        let o = run(&["/json", &option, PDB, TRACE]);
        assert_eq!(status(&o), 0, "{option}: {}", stderr(&o));
        assert!(
            shown(kind, dir.path(), &json_lines(&o)),
            "{option} showed nothing: {}",
            stderr(&o)
        );
    }
}

#[test]
fn every_view_shows_something_of_traces_merged_or_is_refused() {
    for kind in Kind::ALL {
        let d = kind.declaration();
        if d.missing.is_some() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let option = option(kind, dir.path());
        let o = run(&["/json", "/merge", &option, PDB, TRACE, TRACE]);
        match d.merged {
            Merged::Merged => {
                assert_eq!(status(&o), 0, "{option}: {}", stderr(&o));
                let lines = json_lines(&o);
                let merged = lines.iter().any(|l| l["path"] == "2 traces merged");
                assert!(merged, "{option}: no line of the merged profile");
                assert!(shown(kind, dir.path(), &lines), "{option} showed nothing");
            }
            Merged::Refused(why) => {
                assert_eq!(status(&o), 2, "{option}");
                let says = format!("sptdump: /{} {why}: it does not go with /merge", d.name);
                assert!(stderr(&o).starts_with(&says), "{option}: {}", stderr(&o));
            }
        }
    }
}

#[test]
fn every_view_shows_something_of_traces_compared_or_is_refused() {
    for kind in Kind::ALL {
        let d = kind.declaration();
        if d.missing.is_some() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let option = option(kind, dir.path());
        let o = run(&["/json", "/compare", &option, PDB, TRACE, TRACE]);
        match d.compared {
            Compared::EachTrace | Compared::Both => {
                assert_eq!(status(&o), 0, "{option}: {}", stderr(&o));
                let lines = json_lines(&o);
                assert!(lines.iter().any(|l| l["type"] == "compare"), "{option}");
                // /functions of the two together is `compare_function` lines.
                assert!(shown(kind, dir.path(), &lines), "{option} showed nothing");
            }
            Compared::Refused(why, more) => {
                assert_eq!(status(&o), 2, "{option}");
                let says = format!(
                    "sptdump: /{} {why}: it does not go with /compare{more}",
                    d.name
                );
                assert!(stderr(&o).starts_with(&says), "{option}: {}", stderr(&o));
            }
        }
    }
}
