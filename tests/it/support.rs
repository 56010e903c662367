//! What the test modules share: running the binary and reading what it printed.

use std::path::Path;
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;

/// The crate root: commands run there unless a test says otherwise, so `testdata/` paths
/// work as the README writes them.
pub fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `sptdump ARGS` in `dir`.
pub fn run_in(dir: &Path, args: &[&str]) -> Output {
    Command::cargo_bin("sptdump")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

/// Runs `sptdump ARGS` at the crate root.
pub fn run(args: &[&str]) -> Output {
    run_in(crate_root(), args)
}

/// Standard output, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Standard error, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The exit status.
pub fn status(o: &Output) -> i32 {
    o.status.code().expect("exited")
}

/// Every line of standard output, parsed as JSON.
pub fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}
