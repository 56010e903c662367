//! The library's layers, checked on its source: each module uses only the layers below it,
//! the format layer does no I/O beyond `std::io::Read` and knows nothing of PE or PDB files,
//! and the command line's crates stay in the binary.
//!
//! ```text
//! dump > output > analysis > image > input > format
//! ```

use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first.
const LAYERS: &[&str] = &["format", "input", "image", "analysis", "output", "dump"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The code of a file without its unit tests and comments.
fn code(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => &text,
    };
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The layer a library file belongs to, by its first path component under `src/`.
fn layer_of(path: &Path) -> Option<usize> {
    let first = path.strip_prefix(src()).ok()?.components().next()?;
    let name = first.as_os_str().to_str()?.trim_end_matches(".rs");
    LAYERS.iter().position(|l| *l == name)
}

/// The top-level modules a piece of code names as `crate::x`.
fn uses(code: &str) -> Vec<String> {
    code.match_indices("crate::")
        .map(|(at, m)| {
            code[at + m.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn every_library_file_has_a_layer() {
    for file in rust_files(&src()) {
        let name = file
            .strip_prefix(src())
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        // The crate root, and the binary: main.rs and the command line in cli/.
        if ["lib.rs", "main.rs"].contains(&name.as_str()) || name.starts_with("cli") {
            continue;
        }
        assert!(layer_of(&file).is_some(), "{name} belongs to no layer");
    }
}

#[test]
fn each_layer_uses_only_the_layers_below_it() {
    let mut checked = 0;
    for file in rust_files(&src()) {
        let Some(own) = layer_of(&file) else { continue };
        for used in uses(&code(&file)) {
            if let Some(theirs) = LAYERS.iter().position(|l| *l == used) {
                assert!(
                    theirs <= own,
                    "{} ({}) uses crate::{used}, a layer above it",
                    file.display(),
                    LAYERS[own]
                );
                checked += 1;
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} uses were found: is the source where expected?"
    );
}

#[test]
fn the_format_layer_does_no_io_beyond_read() {
    let dir = src().join("format");
    let files = rust_files(&dir);
    assert!(files.len() >= 8, "{files:?}");
    for file in files {
        let code = code(&file);
        for banned in [
            "std::fs",
            "std::path",
            "std::net",
            "std::process",
            "std::thread",
            "pdb2",
            "object::",
            "io::stdin",
            "io::stdout",
            "io::stderr",
            "println!",
            "eprintln!",
            "Seek",
        ] {
            assert!(!code.contains(banned), "{} uses {banned}", file.display());
        }
    }
}

#[test]
fn the_command_line_crates_stay_in_the_binary() {
    for file in rust_files(&src()) {
        if layer_of(&file).is_none() && !file.ends_with("lib.rs") {
            continue;
        }
        let code = code(&file);
        for banned in [
            "anyhow",
            "indicatif",
            "wild::",
            "std::env::args",
            "std::process::exit",
        ] {
            assert!(
                !code.contains(banned),
                "{} (library) uses {banned}",
                file.display()
            );
        }
    }
}
