//! The library used as a library: a program that runs a plan and reads its reports as
//! values (`examples/report.rs`) gets what the command line prints.

use std::path::PathBuf;
use std::process::Command;

use crate::support::run;

/// The example program `name`, as `cargo test` builds it beside the tests.
fn example(name: &str) -> PathBuf {
    let tests = std::env::current_exe().expect("the test binary");
    let profile = tests
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/PROFILE/deps");
    profile
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

/// The keys of the first table `sptdump /functions /top:3` prints, in its order.
fn first_table_keys(stdout: &str) -> Vec<String> {
    let table = stdout
        .split("\n\n")
        .nth(1)
        .expect("a table after the File line");
    table
        .lines()
        .skip(2)
        .map(|row| row.split_whitespace().last().unwrap().to_owned())
        .collect()
}

#[test]
fn the_report_example_prints_the_hottest_functions_as_sptdump_does_from_typed_values() {
    let o = Command::new(example("report"))
        .output()
        .expect("the example runs");
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let theirs: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|row| row.split_whitespace().last().unwrap())
        .collect();
    let printed = run(&[
        "/functions",
        "/top:3",
        "/pdb:testdata/pe/app.pdb",
        "testdata/pe/profile.spt",
    ]);
    let ours = first_table_keys(&String::from_utf8(printed.stdout).unwrap());
    assert_eq!(theirs.len(), 3, "{out}");
    assert_eq!(theirs, ours, "{out}");
    assert!(
        out.starts_with("app.exe (0), UNHALT_CYCLE: 1120 hits\n"),
        "{out}"
    );
}
