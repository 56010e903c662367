//! The files that live beside the repository rather than in it: the real SPD files (`spd/`)
//! of the shared suite, and the shared suite's conformance vectors (of which the repository
//! keeps a copy, [`conformance`]), checked out as `../shared` beside this repository, or
//! wherever `SPTDUMP_SHARED` points.
//!
//! A plain clone has none of them. The tests that need them then say loudly, on standard
//! error past the test harness's capture, that they skipped, and pass; CI sets
//! `SPTDUMP_REQUIRE_SHARED=1`, and there a missing folder fails the test instead.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The variable that names the shared folder, when it is not `../shared`.
pub const SHARED: &str = "SPTDUMP_SHARED";

/// Set to `1`, the variable that makes a missing shared folder a failure, not a skip.
pub const REQUIRE: &str = "SPTDUMP_REQUIRE_SHARED";

/// The shared folder: `$SPTDUMP_SHARED` (a relative path is taken from the current folder,
/// so that tests running commands elsewhere still find it), else `shared` beside the
/// repository.
pub fn root() -> PathBuf {
    if let Some(dir) = std::env::var_os(SHARED) {
        let dir = PathBuf::from(dir);
        return match std::env::current_dir() {
            Ok(here) if dir.is_relative() => here.join(dir),
            _ => dir,
        };
    }
    // This crate is `testkit/` in the repository.
    let repository = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the test kit lies in the repository");
    repository.with_file_name("shared")
}

/// Whether a missing shared folder must fail the test (`SPTDUMP_REQUIRE_SHARED=1`).
pub fn required() -> bool {
    std::env::var_os(REQUIRE).is_some_and(|v| v == "1")
}

/// The folder `sub` of the shared suite (`conformance/vectors`, `spd`), for `test`. When it
/// is missing: `None`, after a `skipped:` line on standard error naming the test, the folder
/// and how to get it; or a panic saying the same when [`required`].
pub fn folder(test: &str, sub: &str) -> Option<PathBuf> {
    let dir = root().join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    let why = format!(
        "{test}: no folder {} (the shared suite is checked out as ../shared beside this \
         repository, or set {SHARED} to it)",
        dir.display()
    );
    assert!(!required(), "{why}; {REQUIRE}=1 asks for it");
    // Straight to standard error, past the harness's capture, so that the skip shows in
    // every run.
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
    None
}

/// The repository's copy of the conformance suite: `cases.json` and the `vectors`
/// folder, in `testdata/conformance`. The vectors are this project's own; a test holds the
/// copy equal to the shared suite's when that is present.
pub fn conformance() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the test kit lies in the repository")
        .join("testdata/conformance")
}

/// The repository's conformance vectors' folder (`testdata/conformance/vectors`).
pub fn conformance_vectors() -> PathBuf {
    conformance().join("vectors")
}

/// The real SPD files' folder, with `expected.json`, for `test`; see [`folder`].
pub fn spd_files(test: &str) -> Option<PathBuf> {
    folder(test, "spd")
}

/// The public ETL files' folder, with `expected.json`, for `test`; see [`folder`].
pub fn etl_files(test: &str) -> Option<PathBuf> {
    folder(test, "etl")
}
