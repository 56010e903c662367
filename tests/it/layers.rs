//! The library's layers, checked on its source: each module uses only the layers below it,
//! no file of the library uses a file that uses it back (no circle of files, however
//! long), the format layers (SPT's and ETL's) do no I/O beyond `std::io::Read` and know
//! nothing of PE or PDB files, and the command line's crates stay in the binary.
//!
//! ```text
//! cli > dump > output > analysis > image > input > etl > format
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first.
const LAYERS: &[&str] = &[
    "format", "etl", "input", "image", "engine", "flow", "analysis", "output", "views", "dump",
    "cli",
];

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
        // The crate root, and the binaries: main.rs (sptdump) and bin/ (spddump).
        if ["lib.rs", "main.rs"].contains(&name.as_str()) || name.starts_with("bin/") {
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
    let files = [
        rust_files(&src().join("format")),
        rust_files(&src().join("etl")),
    ]
    .concat();
    assert!(files.len() >= 12, "{files:?}");
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

/// A module of the library, by its path from the crate root (`["dump", "views"]`).
type Module = Vec<String>;

/// Every module of the crate whose sources are under `root`, by its path, with the code of
/// its file (without its tests and comments).
fn modules_in(root: &Path) -> BTreeMap<Module, String> {
    let mut modules = BTreeMap::new();
    for file in rust_files(root) {
        let relative = file.strip_prefix(root).unwrap().with_extension("");
        let mut module: Module = relative
            .components()
            .map(|c| c.as_os_str().to_str().unwrap().to_owned())
            .collect();
        if module == ["main"] {
            continue;
        }
        if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
            module.pop();
        }
        modules.insert(module, code(&file));
    }
    modules
}

/// Whether `c` may be part of a Rust name.
fn is_name(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The paths written at `at` in `code`: `a::b::c`, or `a::{b, c::{d, e}}` as each of its
/// paths. A path ends at anything that is not a name, `::` or a group.
fn paths_at(code: &[u8], at: usize) -> (Vec<Vec<String>>, usize) {
    let mut i = at;
    let mut segments = Vec::new();
    loop {
        let start = i;
        while i < code.len() && is_name(code[i]) {
            i += 1;
        }
        if i > start {
            segments.push(String::from_utf8_lossy(&code[start..i]).into_owned());
            if code[i..].starts_with(b"::") {
                i += 2;
                continue;
            }
            return (vec![segments], i);
        }
        if code.get(i) != Some(&b'{') {
            return (vec![segments], i);
        }
        i += 1;
        let mut all = Vec::new();
        loop {
            while i < code.len() && matches!(code[i], b' ' | b'\n' | b'\t' | b',' | b'\r') {
                i += 1;
            }
            if i >= code.len() || code[i] == b'}' {
                return (all, i + 1);
            }
            let (inner, next) = paths_at(code, i);
            all.extend(inner.into_iter().map(|p| [segments.clone(), p].concat()));
            // Past an `as` rename or anything else up to the next item.
            i = next;
            while i < code.len() && !matches!(code[i], b',' | b'}') {
                i += 1;
            }
        }
    }
}

/// Every path in `code` that starts at `crate`, `super`, `self` or one of `children` (the
/// modules the file declares), with where it starts.
fn paths(code: &str, children: &BTreeSet<String>) -> Vec<(Vec<String>, usize)> {
    let bytes = code.as_bytes();
    let mut found = Vec::new();
    for (at, _) in code.match_indices("::") {
        // The first segment of the path this `::` follows.
        let mut start = at;
        while start > 0 && is_name(bytes[start - 1]) {
            start -= 1;
        }
        if start > 1 && &bytes[start - 2..start] == b"::" {
            continue;
        }
        let first = &code[start..at];
        let rooted = ["crate", "super", "self"].contains(&first);
        if !rooted && !children.contains(first) {
            continue;
        }
        if start > 0 && (is_name(bytes[start - 1]) || bytes[start - 1] == b'$') {
            continue;
        }
        let (paths, _) = paths_at(bytes, start);
        for path in paths {
            let path = if rooted {
                path
            } else {
                [vec!["self".to_owned()], path].concat()
            };
            found.push((path, start));
        }
    }
    found
}

/// The full path of `path` written in `module`, when it starts at the crate.
fn absolute(module: &Module, path: &[String]) -> Option<Vec<String>> {
    let mut full = module.clone();
    let mut rest = path;
    match path.first().map(String::as_str) {
        Some("crate") => {
            full.clear();
            rest = &path[1..];
        }
        Some("super" | "self") => {
            while let Some(first) = rest.first() {
                match first.as_str() {
                    "super" => {
                        full.pop();
                    }
                    "self" => {}
                    _ => break,
                }
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    full.extend(rest.iter().cloned());
    Some(full)
}

/// The module of `full` (its longest prefix that is a module) and what follows it.
fn module_of<'p>(
    modules: &BTreeMap<Module, String>,
    full: &'p [String],
) -> Option<(Module, &'p [String])> {
    (0..=full.len())
        .rev()
        .find(|&k| modules.contains_key(&full[..k]))
        .map(|k| (full[..k].to_vec(), &full[k..]))
}

/// Where the statements `pub use ...;` lie in `code`.
fn reexports(code: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for (at, _) in code.match_indices("pub") {
        let rest = &code[at..];
        let after = match rest.strip_prefix("pub(") {
            Some(r) => r.find(')').map(|c| &r[c + 1..]),
            None => rest.strip_prefix("pub"),
        };
        if after.is_some_and(|a| a.trim_start().starts_with("use ")) {
            let end = code[at..].find(';').map_or(code.len(), |e| at + e);
            spans.push((at, end));
        }
    }
    spans
}

/// The files each library file uses, by module: a name used through a module that
/// re-exports it (`pub use`) is the re-exported module's.
fn uses_of_files() -> BTreeMap<Module, BTreeSet<Module>> {
    uses_of_files_in(&src())
}

/// What each file of the crate under `root` uses of the others.
fn uses_of_files_in(root: &Path) -> BTreeMap<Module, BTreeSet<Module>> {
    let modules = modules_in(root);
    let children = |code: &str| -> BTreeSet<String> {
        code.lines()
            .filter_map(|l| {
                let l = l.trim();
                let l = l
                    .strip_prefix("pub(crate) ")
                    .or(l.strip_prefix("pub "))
                    .unwrap_or(l);
                let name = l.strip_prefix("mod ")?.strip_suffix(';')?;
                Some(name.to_owned())
            })
            .collect()
    };
    // What each module re-exports: a name to the module it comes from.
    let mut exported: BTreeMap<Module, BTreeMap<String, Module>> = BTreeMap::new();
    for (module, code) in &modules {
        let kids = children(code);
        for (start, end) in reexports(code) {
            for (path, at) in paths(code, &kids) {
                if !(start..end).contains(&at) {
                    continue;
                }
                let Some(full) = absolute(module, &path) else {
                    continue;
                };
                let (name, from) = full.split_last().unwrap();
                if let Some((from, _)) = module_of(&modules, from) {
                    exported
                        .entry(module.clone())
                        .or_default()
                        .insert(name.clone(), from);
                }
            }
        }
    }
    let mut uses = BTreeMap::new();
    for (module, code) in &modules {
        let spans = reexports(code);
        let mut used = BTreeSet::new();
        for (path, at) in paths(code, &children(code)) {
            if spans.iter().any(|(s, e)| (*s..*e).contains(&at)) {
                continue;
            }
            let Some(full) = absolute(module, &path) else {
                continue;
            };
            let Some((mut target, rest)) = module_of(&modules, &full) else {
                continue;
            };
            if let Some(from) = rest.first().and_then(|n| exported.get(&target)?.get(n)) {
                target = from.clone();
            }
            if &target != module {
                used.insert(target);
            }
        }
        uses.insert(module.clone(), used);
    }
    uses
}

/// The circles among `uses`: each a list of modules, each using the next and the last the
/// first.
fn circles(uses: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    let mut found = Vec::new();
    for start in uses.keys() {
        // A path back to `start` through modules ordered after it: each circle once.
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        let mut seen = BTreeSet::new();
        while let Some((at, path)) = stack.pop() {
            for next in uses.get(&at).into_iter().flatten() {
                if next == start {
                    found.push(path.clone());
                } else if next > start && seen.insert(next.clone()) {
                    stack.push((next.clone(), [path.clone(), vec![next.clone()]].concat()));
                }
            }
        }
    }
    found
}

#[test]
fn no_file_uses_a_file_that_uses_it_back() {
    no_circle(&uses_of_files(), 150);
}

/// The test kit too: its files are a library of their own.
#[test]
fn no_file_of_the_test_kit_uses_a_file_that_uses_it_back() {
    let testkit = Path::new(env!("CARGO_MANIFEST_DIR")).join("testkit/src");
    no_circle(&uses_of_files_in(&testkit), 5);
}

/// Fails on a circle of `uses`, which must have at least `least` uses between files.
fn no_circle(uses: &BTreeMap<Module, BTreeSet<Module>>, least: usize) {
    let edges: usize = uses.values().map(BTreeSet::len).sum();
    assert!(
        edges > least,
        "only {edges} uses between files: is the source where expected?"
    );
    let shown = |m: &Module| {
        if m.is_empty() {
            "lib".to_owned()
        } else {
            m.join("::")
        }
    };
    let circles: Vec<String> = circles(uses)
        .iter()
        .map(|c| {
            c.iter()
                .chain(c.first())
                .map(shown)
                .collect::<Vec<_>>()
                .join(" -> ")
        })
        .collect();
    assert!(
        circles.is_empty(),
        "circles of files:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_circle_finder_finds_a_circle_through_a_reexport_and_a_group() {
    let module = |m: &str| -> Module { m.split("::").map(str::to_owned).collect() };
    let (grouped, _) = paths_at(b"crate::a::{b, c::{d, e as f}}; x", 0);
    let expected: Vec<Vec<String>> = ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]
        .iter()
        .map(|p| module(p))
        .collect();
    assert_eq!(grouped, expected);
    let kids = BTreeSet::from(["views".to_owned()]);
    let found: Vec<Vec<String>> = paths("use super::Out; views::show(x);", &kids)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(found, [module("super::Out"), module("self::views::show")]);
    assert_eq!(
        absolute(&module("dump::views"), &module("super::super::format::x")),
        Some(module("format::x"))
    );
    let uses = BTreeMap::from([
        (module("a"), BTreeSet::from([module("b")])),
        (module("b"), BTreeSet::from([module("c")])),
        (module("c"), BTreeSet::from([module("a")])),
        (module("d"), BTreeSet::from([module("a")])),
    ]);
    assert_eq!(
        circles(&uses),
        [vec![module("a"), module("b"), module("c")]]
    );
    // The library's own: the driver's trace uses its walk of the views, which uses what a
    // trace keeps and the plan.
    let real = uses_of_files();
    assert!(real[&module("dump::trace")].contains(&module("dump::views")));
    assert!(real[&module("dump::views")].contains(&module("views::kept")));
    assert!(
        real[&module("dump::views")].contains(&module("views::plan")),
        "through views' pub use"
    );
}
