//! Every view, as its declaration says, run through the command line: each shows something
//! of its own (a line of a type it declares it prints, or a file) of a trace that holds what
//! it reads (call stacks, or LBR records) with its program's PDB and image, of traces merged
//! and of traces compared, or is refused with a usage error naming it. A view that forgets part of its
//! declaration (what the decoder must count for it, what it must not let go of) prints
//! nothing here, and fails.

use std::path::Path;

use serde_json::Value;
use sptdump::views::{Compared, Declaration, Kind, Merged, Reads, Writes};

use crate::support::{json_lines, run, status, stderr};

const TRACE: &str = "testdata/pe/inline.spt";
const PDB: &str = "/pdb:testdata/pe/inline.pdb";
const IMAGE: &str = "/image:testdata/pe/inline.exe";
const LBR_TRACE: &str = "testdata/pe/lbr.spt";
const LBR_PDB: &str = "/pdb:testdata/pe/lbr.pdb";
const LBR_IMAGE: &str = "/image:testdata/pe/lbr.exe";

/// The option that asks for `kind`, writing under `dir` when it writes a file.
fn option(kind: Kind, dir: &Path) -> String {
    let d = kind.declaration();
    match d.writes {
        // The views whose option needs a value that is no path: a function of the trace.
        Writes::Tables if kind == Kind::Annotate => "/annotate:classify".to_owned(),
        Writes::Tables if kind == Kind::Blocks => "/blocks:digest".to_owned(),
        Writes::Tables | Writes::Lines => format!("/{}", d.name),
        Writes::File(_) | Writes::Directory(_) => {
            format!("/{}:{}", d.name, dir.join(d.name).display())
        }
    }
}

/// Whether `kind` showed something: a line of a type it declares it prints, or a file or
/// directory that is not empty. Another view's line (the LBR views' `lbr_ranges` preamble),
/// a note or a verdict is not the view's.
fn shown(kind: Kind, dir: &Path, lines: &[Value]) -> bool {
    let d = kind.declaration();
    match d.writes {
        Writes::Tables | Writes::Lines => lines
            .iter()
            .any(|l| d.prints.contains(&l["type"].as_str().unwrap())),
        Writes::File(_) => std::fs::metadata(dir.join(d.name)).is_ok_and(|m| m.len() > 0),
        Writes::Directory(_) => {
            std::fs::read_dir(dir.join(d.name)).is_ok_and(|mut entries| entries.next().is_some())
        }
    }
}

/// The trace `kind` has something to show of, with the PDB and image of its program: the
/// LBR trace of `lbr.exe` for the views that read LBR records, else `inline.exe`'s call
/// stacks.
fn trace_for(kind: Kind) -> [&'static str; 3] {
    match kind.declaration().reads.any(Reads::LBR_RECORDS) {
        true => [LBR_PDB, LBR_IMAGE, LBR_TRACE],
        false => [PDB, IMAGE, TRACE],
    }
}

#[test]
fn every_view_that_prints_lines_declares_their_types_as_the_schema_names_them() {
    let schema =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/line.json"))
            .unwrap();
    for kind in Kind::ALL {
        let d = kind.declaration();
        if matches!(d.writes, Writes::Tables | Writes::Lines) {
            assert!(!d.prints.is_empty(), "/{} declares no line type", d.name);
        }
        for line in d.prints {
            assert!(
                schema.contains(&format!("\"{line}\"")),
                "/{}: schema/line.json has no type {line}",
                d.name
            );
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
        let [pdb, image, trace] = trace_for(kind);
        let o = run(&["/json", &option, pdb, image, trace]);
        if kind.declaration().compared == Compared::BesideSpd {
            let says = format!(
                "sptdump: /{} sets a trace beside an SPD",
                kind.declaration().name
            );
            assert_eq!(status(&o), 2, "{option}");
            assert!(stderr(&o).starts_with(&says), "{option}: {}", stderr(&o));
            continue;
        }
        assert_eq!(status(&o), 0, "{option}: {}", stderr(&o));
        assert!(
            shown(kind, dir.path(), &json_lines(&o)),
            "{option} showed nothing: {}",
            stderr(&o)
        );
    }
}

/// Runs every view this build makes under `shape` (`/merge` or `/compare`) over two traces,
/// and checks each: when the declaration `refused` gives a reason and what follows the
/// option, the usage error naming it; else what `made` checks of the lines, and that the
/// view showed something.
fn under(
    shape: &str,
    refused: impl Fn(&Declaration) -> Option<(&'static str, &'static str)>,
    made: impl Fn(&str, &[Value]),
) {
    for kind in Kind::ALL {
        let d = kind.declaration();
        if d.missing.is_some() {
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let option = option(kind, dir.path());
        let [pdb, image, trace] = trace_for(kind);
        let o = run(&["/json", shape, &option, pdb, image, trace, trace]);
        match refused(&d) {
            Some((why, more)) => {
                assert_eq!(status(&o), 2, "{option}");
                let says = format!(
                    "sptdump: /{} {why}: it does not go with {shape}{more}",
                    d.name
                );
                assert!(stderr(&o).starts_with(&says), "{option}: {}", stderr(&o));
            }
            None if d.compared == Compared::BesideSpd => {
                // Two traces: nothing to set beside an SPD, and a note that says so.
                assert_eq!(status(&o), 0, "{option}: {}", stderr(&o));
                let lines = json_lines(&o);
                let note = |l: &Value| {
                    l["type"] == "note"
                        && l["message"]
                            .as_str()
                            .unwrap()
                            .contains("NEW is a trace: not made")
                };
                assert!(lines.iter().any(note), "{option}");
            }
            None => {
                assert_eq!(status(&o), 0, "{option}: {}", stderr(&o));
                let lines = json_lines(&o);
                made(&option, &lines);
                // Of two traces together, a view's own lines are those of the comparison
                // (`compare_lbr`, `compare_function`), not the trace's kind.
                let together = matches!(d.compared, Compared::Both | Compared::InComparison)
                    && matches!(d.writes, Writes::Tables | Writes::Lines);
                let own = match shape == "/compare" && together {
                    true => lines
                        .iter()
                        .any(|l| l["type"].as_str().unwrap().starts_with("compare_")),
                    false => shown(kind, dir.path(), &lines),
                };
                assert!(own, "{option} showed nothing");
            }
        }
    }
}

#[test]
fn every_view_shows_something_of_traces_merged_or_is_refused() {
    let refused = |d: &Declaration| match d.merged {
        Merged::Refused(why) => Some((why, "")),
        _ => None,
    };
    under("/merge", refused, |option, lines| {
        let merged = lines.iter().any(|l| l["path"] == "2 traces merged");
        assert!(merged, "{option}: no line of the merged profile");
    });
}

#[test]
fn every_view_shows_something_of_traces_compared_or_is_refused() {
    let refused = |d: &Declaration| match d.compared {
        Compared::Refused(why, more) => Some((why, more)),
        _ => None,
    };
    // /functions of the two together is `compare_function` lines.
    under("/compare", refused, |option, lines| {
        assert!(lines.iter().any(|l| l["type"] == "compare"), "{option}");
    });
}

/// The views of a trace beside an SPD show something of `/compare TRACE SPD`.
#[test]
fn every_view_of_a_trace_beside_an_spd_shows_something() {
    for kind in Kind::ALL {
        let d = kind.declaration();
        if d.compared != Compared::BesideSpd {
            continue;
        }
        let option = format!("/{}:parse_token", d.name);
        let o = run(&[
            "/json",
            "/compare",
            &option,
            "testdata/pe/trace.spt",
            "testdata/pe/app.spd",
        ]);
        assert_eq!(status(&o), 0, "{option}: {}", stderr(&o));
        let before = [
            "file",
            "note",
            "compare_spd",
            "spd_blocks",
            "spd_blocks_function",
        ];
        let own = |l: &Value| !before.contains(&l["type"].as_str().unwrap());
        assert!(json_lines(&o).iter().any(own), "{option} showed nothing");
    }
}

/// The views that implement `trait` in the files of `dir`, by the names of their types.
fn implemented(dir: &str, trait_name: &str) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let needle = format!("impl {trait_name} for ");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for at in text.match_indices(&needle).map(|(at, _)| at + needle.len()) {
            let name: String = text[at..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            found.push(name);
        }
    }
    found.sort();
    found
}

/// A view's module that the registry leaves out would compile and never be shown: every type
/// that declares itself a view is a variant of the registry's, and the other way round.
#[test]
fn every_view_that_declares_itself_is_in_the_registry() {
    let mut registered: Vec<String> = Kind::ALL.iter().map(|k| format!("{k:?}")).collect();
    registered.sort();
    assert_eq!(implemented("src/views", "Declared"), registered);
    let mut spd: Vec<String> = sptdump::views::spd::SpdKind::ALL
        .iter()
        .map(|k| format!("{k:?}"))
        .collect();
    spd.sort();
    assert_eq!(implemented("src/views/spd", "SpdDeclared"), spd);
    assert!(registered.len() >= 13 && spd.len() >= 9);
}
