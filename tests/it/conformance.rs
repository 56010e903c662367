//! The shared conformance suite, run by `cargo test` too (CI runs it on the release binary):
//! a change that breaks a vector's answer fails here first, not only in CI. Skipped, and
//! said so, without the shared suite beside the repository.

use sptdump_testkit::shared;

#[test]
fn the_conformance_vectors_pass() {
    let Some(folder) = shared::folder("the_conformance_vectors_pass", "conformance") else {
        return;
    };
    let check = folder.join("check");
    let binary = assert_cmd::cargo::cargo_bin("sptdump");
    let o = std::process::Command::new("python3")
        .arg(&check)
        .arg(&binary)
        .output()
        .expect("python3 runs the conformance check");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains(", 0 failed"), "{out}");
}
