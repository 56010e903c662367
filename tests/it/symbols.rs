//! `/symbols[:PATH]`: PDBs and images found along a symbol path (local directories and
//! stores), checked against the trace's program IDs, copied into a cache, and never looked
//! up for a binary name that could reach outside the path.

use std::fs;
use std::path::{Path, PathBuf};

use sptdump_testkit::builder::{RETIRE_INSTR, SptBuilder};
use sptdump_testkit::fixtures::APP_GUID;

use crate::support::{crate_root, json_lines, run, status, stderr, stdout};

/// The symbol-store keys of the fixture's binaries (GUID and age, as `/progid` prints them).
pub(crate) const APP_KEY: &str = "7A76D39EEF6D104E4C4C44205044422E1";
pub(crate) const CORE_KEY: &str = "5DFC88D605FC4E3C4C4C44205044422E1";
pub(crate) const TRACE: &str = "testdata/pe/profile.spt";

/// Copies the fixture `from` (under `testdata/pe`) to `to` under `dir`.
pub(crate) fn put(dir: &Path, from: &str, to: &str) -> PathBuf {
    let to = dir.join(to);
    fs::create_dir_all(to.parent().unwrap()).unwrap();
    fs::copy(crate_root().join("testdata/pe").join(from), &to).unwrap();
    to
}

/// Every path under `dir`, sorted.
pub(crate) fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut todo = vec![dir.to_owned()];
    while let Some(d) = todo.pop() {
        for e in fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                todo.push(e.path());
            }
            all.push(e.path());
        }
    }
    all.sort();
    all
}

/// The `symbols` lines of `/json /functions /symbols:PATH` over the fixture trace.
fn symbols_lines(path: &str) -> Vec<serde_json::Value> {
    symbols_lines_beside(&[], path)
}

/// [`symbols_lines`], with the options `given` too.
fn symbols_lines_beside(given: &[&str], path: &str) -> Vec<serde_json::Value> {
    let arg = format!("/symbols:{path}");
    let mut args = vec!["/json", "/functions"];
    args.extend_from_slice(given);
    args.extend_from_slice(&[&arg, TRACE]);
    let o = run(&args);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    json_lines(&o)
        .into_iter()
        .filter(|l| l["type"] == "symbols")
        .collect()
}

/// The text of `/functions` with `extra`, without the lines that say where symbols came
/// from.
fn functions(extra: &[&str]) -> String {
    let mut args = vec!["/functions"];
    args.extend_from_slice(extra);
    args.push(TRACE);
    let o = run(&args);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let text = stdout(&o);
    text.lines()
        .filter(|l| !l.starts_with("Symbols of "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A trace in `dir` of a binary of each of `names`, all of app.exe's GUID and age, with an IP
/// sample each.
pub(crate) fn named_trace(dir: &Path, names: &[&str]) -> PathBuf {
    let mut b = SptBuilder::new();
    let ids: Vec<u16> = names.iter().map(|n| b.binary(n, APP_GUID, 1)).collect();
    for id in ids {
        b.binary_id(id).ip(RETIRE_INSTR, &[0x1000]);
    }
    let trace = dir.join("hostile.spt");
    fs::write(&trace, b.build()).unwrap();
    trace
}

pub(crate) fn s(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn a_plain_directory_names_functions_as_pdb_does() {
    let d = tempfile::tempdir().unwrap();
    put(d.path(), "app.pdb", "plain/app.pdb");
    let by_path = functions(&[&format!("/symbols:{}", s(&d.path().join("plain")))]);
    let by_pdb = functions(&["/pdb:testdata/pe/app.pdb"]);
    assert_eq!(by_path, by_pdb);
    assert_ne!(by_path, functions(&[]), "the PDB names something");
}

#[test]
fn store_layouts_and_the_line_of_each_binary() {
    let d = tempfile::tempdir().unwrap();
    let app = put(d.path(), "app.pdb", &format!("s/app.pdb/{APP_KEY}/app.pdb"));
    put(d.path(), "app.exe", "s/app.exe/5F3A1000/app.exe");
    put(
        d.path(),
        "core.pdb",
        &format!("t/co/core.pdb/{CORE_KEY}/core.pdb"),
    );
    fs::write(d.path().join("t/index2.txt"), "").unwrap();
    let path = format!(
        "srv*{};srv*{}",
        s(&d.path().join("s")),
        s(&d.path().join("t"))
    );
    let lines = symbols_lines(&path);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["name"], "app.exe");
    assert_eq!(lines[0]["pdb"], s(&app));
    assert!(lines[0]["image"].as_str().unwrap().ends_with("app.exe"));
    assert_eq!(lines[0]["from"], format!("srv*{}", s(&d.path().join("s"))));
    assert_eq!(lines[0]["fetched"], false);
    assert_eq!(lines[1]["name"], "core.dll");
    assert_eq!(lines[1]["image"], serde_json::Value::Null);
}

/// A binary given its PDB (`/pdb`) has its image looked up along the path, and one given
/// both (`/pdb`, `/image`) is not looked up at all.
#[test]
fn what_was_given_is_not_looked_up_and_what_was_not_is() {
    let d = tempfile::tempdir().unwrap();
    put(d.path(), "app.pdb", &format!("s/app.pdb/{APP_KEY}/app.pdb"));
    let image = put(d.path(), "app.exe", "s/app.exe/5F3A1000/app.exe");
    let path = format!("srv*{}", s(&d.path().join("s")));
    let pdb = "/pdb:testdata/pe/app.pdb";
    let app = symbols_lines_beside(&[pdb], &path);
    let app: Vec<_> = app.iter().filter(|l| l["name"] == "app.exe").collect();
    assert_eq!(app.len(), 1, "{app:?}");
    assert_eq!(
        app[0]["pdb"],
        serde_json::Value::Null,
        "given, not looked up"
    );
    assert_eq!(app[0]["image"], s(&image));
    let both = symbols_lines_beside(&[pdb, "/image:testdata/pe/app.exe"], &path);
    assert!(both.iter().all(|l| l["name"] != "app.exe"), "{both:?}");
}

#[test]
fn file_ptr_paths_and_messages() {
    let d = tempfile::tempdir().unwrap();
    let elsewhere = put(d.path(), "app.pdb", "elsewhere/app.pdb");
    let ptr = d.path().join(format!("s/app.pdb/{APP_KEY}/file.ptr"));
    fs::create_dir_all(ptr.parent().unwrap()).unwrap();
    fs::write(&ptr, format!("PATH:{}", s(&elsewhere))).unwrap();
    let core_ptr = d.path().join(format!("s/core.pdb/{CORE_KEY}/file.ptr"));
    fs::create_dir_all(core_ptr.parent().unwrap()).unwrap();
    fs::write(&core_ptr, "MSG:withdrawn by the build lab").unwrap();
    let arg = format!("/symbols:srv*{}", s(&d.path().join("s")));
    let o = run(&["/functions", &arg, TRACE]);
    assert_eq!(status(&o), 0);
    assert!(stdout(&o).contains(&format!("Symbols of progid 0 (app.exe): {}", s(&elsewhere))));
    assert!(
        stderr(&o).contains("withdrawn by the build lab"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn the_cache_gets_a_copy_that_a_second_run_finds_alone() {
    let d = tempfile::tempdir().unwrap();
    put(d.path(), "app.pdb", &format!("s/app.pdb/{APP_KEY}/app.pdb"));
    let (cache, store) = (d.path().join("c"), d.path().join("s"));
    let path = format!(
        "srv*{}*{}*https://example.invalid/symbols",
        s(&cache),
        s(&store)
    );
    let first = symbols_lines(&path);
    let cached = cache.join(format!("app.pdb/{APP_KEY}/app.pdb"));
    assert_eq!(first[0]["pdb"], s(&cached));
    assert_eq!(first[0]["fetched"], true);
    fs::remove_dir_all(&store).unwrap();
    let second = symbols_lines(&path);
    assert_eq!(
        (&second[0]["pdb"], &second[0]["fetched"]),
        (&first[0]["pdb"], &false.into())
    );
    // The URL after the stores is never asked: a build without the network feature says
    // it does not fetch.
    let o = run(&["/functions", &format!("/symbols:{path}"), TRACE]);
    assert_eq!(
        stderr(&o).contains("built without fetching from symbol servers"),
        !cfg!(feature = "network"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn a_pdb_of_another_build_is_named_and_not_used() {
    let d = tempfile::tempdir().unwrap();
    let other = put(d.path(), "v2/core.pdb", "plain/core.pdb");
    let o = run(&[
        "/json",
        "/functions",
        &format!("/symbols:{}", s(other.parent().unwrap())),
        TRACE,
    ]);
    assert_eq!(status(&o), 0);
    let lines = json_lines(&o);
    assert!(lines.iter().all(|l| l["type"] != "symbols"), "{lines:?}");
    let notes: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "note")
        .filter_map(|l| l["message"].as_str())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains(&s(&other)) && n.contains("is not used")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("no PDB found for core.dll")),
        "{notes:?}"
    );
}

#[test]
fn merged_traces_look_their_binaries_up_once() {
    let d = tempfile::tempdir().unwrap();
    put(d.path(), "app.pdb", "app.pdb");
    let arg = format!("/symbols:{}", s(d.path()));
    let o = run(&["/json", "/merge", "/functions", &arg, TRACE, TRACE]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    let lines = json_lines(&o);
    let found: Vec<_> = lines.iter().filter(|l| l["type"] == "symbols").collect();
    assert_eq!(found.len(), 1, "{lines:?}");
    assert_eq!(found[0]["name"], "app.exe");
    let merged = functions(&["/merge", "/pdb:testdata/pe/app.pdb", TRACE]);
    let by_path = functions(&["/merge", &arg, TRACE]);
    assert_eq!(by_path, merged);
}

#[test]
fn strict_makes_a_binary_without_symbols_an_error() {
    let d = tempfile::tempdir().unwrap();
    let arg = format!("/symbols:{}", s(d.path()));
    assert_eq!(status(&run(&["/functions", &arg, TRACE])), 0);
    assert_eq!(status(&run(&["/functions", "/strict", &arg, TRACE])), 1);
}

#[test]
fn symbols_alone_needs_the_variable() {
    let o = assert_cmd::Command::cargo_bin("sptdump")
        .unwrap()
        .current_dir(crate_root())
        .env_remove("_NT_SYMBOL_PATH")
        .args(["/functions", "/symbols", TRACE])
        .output()
        .unwrap();
    assert_eq!(status(&o), 2, "{}", stderr(&o));
    let d = tempfile::tempdir().unwrap();
    put(d.path(), "app.pdb", "app.pdb");
    let o = assert_cmd::Command::cargo_bin("sptdump")
        .unwrap()
        .current_dir(crate_root())
        .env("_NT_SYMBOL_PATH", d.path())
        .args(["/functions", "/symbols", TRACE])
        .output()
        .unwrap();
    assert_eq!(status(&o), 0);
    assert!(stdout(&o).contains("Symbols of progid 0 (app.exe)"));
}

#[test]
fn hostile_names_are_never_looked_up_nor_written_outside_the_cache() {
    let d = tempfile::tempdir().unwrap();
    let names = [
        "../app.exe",
        "a\\app.exe",
        "x/app.exe",
        "C:app.exe",
        "CON.exe",
        "lpt1",
        ".exe",
        "ap\u{7}p.exe",
    ];
    let trace = named_trace(d.path(), &names);
    // A store that would answer `app.pdb`, one level up from where the names point.
    put(
        d.path(),
        "app.pdb",
        &format!("store/app.pdb/{APP_KEY}/app.pdb"),
    );
    put(d.path(), "app.pdb", "app.pdb");
    let before = listing(d.path());
    let path = format!(
        "srv*{}*{}",
        s(&d.path().join("cache")),
        s(&d.path().join("store"))
    );
    let o = run(&[
        "/json",
        "/functions",
        &format!("/symbols:{path}"),
        &s(&trace),
    ]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(listing(d.path()), before, "nothing is written");
    let lines = json_lines(&o);
    assert!(lines.iter().all(|l| l["type"] != "symbols"), "{lines:?}");
    let refused = lines
        .iter()
        .filter(|l| {
            l["type"] == "note" && l["message"].as_str().unwrap().contains("is not looked up")
        })
        .count();
    assert_eq!(refused, names.len(), "{lines:?}");
}

#[test]
fn match_alone_asks_whether_the_path_holds_each_pdb() {
    let o = run(&["/match", "/symbols:testdata/pe", TRACE]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o).matches("Symbols of progid").count(), 2);
    let o = run(&["/match", "/symbols:testdata/pe/v2", TRACE]);
    assert_eq!(status(&o), 1);
    for name in ["app.exe (progid 0)", "core.dll (progid 1)"] {
        let said = format!("the symbol path holds no PDB of {name}");
        assert!(stderr(&o).contains(&said), "{}", stderr(&o));
    }
    // Without /symbols, /match still needs its files.
    let o = run(&["/match", TRACE]);
    assert_eq!(status(&o), 2);
    assert!(stderr(&o).contains("/match needs FILES"), "{}", stderr(&o));
}

#[test]
fn a_compressed_pdb_is_expanded_into_the_cache_and_names_functions_as_pdb_does() {
    // app.pd_ is app.pdb in a cabinet (MSZIP), written by gcab (testdata/pe/build.sh).
    let d = tempfile::tempdir().unwrap();
    put(d.path(), "app.pd_", &format!("s/app.pdb/{APP_KEY}/app.pd_"));
    let (cache, store) = (d.path().join("c"), d.path().join("s"));
    let path = format!("srv*{}*{}", s(&cache), s(&store));
    let lines = symbols_lines(&path);
    let app = lines.iter().find(|l| l["name"] == "app.exe").unwrap();
    let cached = cache.join(format!("app.pdb/{APP_KEY}/app.pdb"));
    assert_eq!(
        (&app["pdb"], &app["fetched"]),
        (&s(&cached).into(), &true.into())
    );
    assert_eq!(
        fs::read(&cached).unwrap(),
        fs::read(crate_root().join("testdata/pe/app.pdb")).unwrap(),
        "expanded whole"
    );
    let by_path = functions(&[&format!("/symbols:{}", s(&store))]);
    assert_eq!(by_path, functions(&["/pdb:testdata/pe/app.pdb"]));
    // Without a cache, it is expanded into a scratch file the run deletes.
    let scratch = || {
        fs::read_dir(std::env::temp_dir())
            .unwrap()
            .flatten()
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.starts_with("sptdump-") && name.ends_with("-app.pdb")
            })
            .count()
    };
    let before = scratch();
    let plain = symbols_lines(&s(&store));
    let app = plain.iter().find(|l| l["name"] == "app.exe").unwrap();
    assert_eq!(app["fetched"], false);
    assert!(app["pdb"].as_str().unwrap().ends_with("app.pd_"), "{app}");
    assert_eq!(listing(&store).len(), 3, "the store is left as it was");
    assert!(scratch() <= before, "no scratch file is left behind");
}

#[test]
fn a_damaged_compressed_pdb_is_named_and_not_used() {
    let d = tempfile::tempdir().unwrap();
    let cab = put(d.path(), "app.pd_", &format!("s/app.pdb/{APP_KEY}/app.pd_"));
    let mut bytes = fs::read(&cab).unwrap();
    bytes.truncate(bytes.len() / 2);
    fs::write(&cab, bytes).unwrap();
    let cache = d.path().join("c");
    let arg = format!("/symbols:srv*{}*{}", s(&cache), s(&d.path().join("s")));
    let o = run(&["/functions", &arg, TRACE]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("app.pd_ (found by srv*")
            && stderr(&o).contains("could not be expanded"),
        "{}",
        stderr(&o)
    );
    assert!(
        !listing(&cache).iter().any(|p| p.is_file()),
        "nothing is left in the cache: {:?}",
        listing(&cache)
    );
}
