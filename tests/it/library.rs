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

#[test]
fn the_typed_annotate_report_holds_what_annotate_prints() {
    use sptdump::dump::{self, Traces};
    use sptdump::input::Input;
    use sptdump::output::{Collected, Reported};
    use sptdump::views::annotate::Annotate;
    use sptdump::views::{Plan, Sections, View};

    let pe = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe");
    let mut plan = Plan::default();
    plan.sections = Sections::NONE;
    plan.views.add(View::Annotate(Annotate {
        function: "scramble".to_owned(),
        ..Annotate::default()
    }));
    plan.files.pdbs.push(pe.join("lbr.pdb"));
    plan.files.images.push(pe.join("lbr.exe"));
    assert!(plan.load().is_empty());
    let trace = pe.join("lbr.spt");
    let paths = [trace.to_str().unwrap().to_owned()];
    let open = |_: usize| Input::open(&trace);
    let mut collected = Collected::default();
    dump::run(&mut collected, &plan, &Traces::new(&paths, &open)).unwrap();
    let report = collected
        .reports
        .iter()
        .find_map(|(_, report)| match report {
            Reported::Annotate(report) => Some(report),
            _ => None,
        })
        .expect("an annotate report");
    assert_eq!(report.function, "scramble");
    assert_eq!(report.functions.len(), 1);
    let f = &report.functions[0];
    assert_eq!(
        (f.name.as_str(), f.function.as_str()),
        ("lbr.exe", "scramble")
    );

    // Each row is an `annotate` line of `sptdump /json /annotate:scramble`, in its order.
    let printed = run(&[
        "/json",
        "/annotate:scramble",
        "/pdb:testdata/pe/lbr.pdb",
        "/image:testdata/pe/lbr.exe",
        "testdata/pe/lbr.spt",
    ]);
    let lines: Vec<serde_json::Value> = crate::support::json_lines(&printed)
        .into_iter()
        .filter(|l| l["type"] == "annotate")
        .collect();
    let rows: Vec<(u64, String, u64)> = f
        .rows
        .iter()
        .map(|r| {
            (
                u64::from(r.rva),
                r.text.clone(),
                u64::try_from(r.count).unwrap(),
            )
        })
        .collect();
    let printed: Vec<(u64, String, u64)> = lines
        .iter()
        .map(|l| {
            (
                l["rva"].as_u64().unwrap(),
                l["text"].as_str().unwrap().to_owned(),
                l["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows, printed);
    assert!(rows.iter().any(|r| r.2 > 0), "the ranges were read");
}

#[test]
fn the_typed_blocks_report_counts_the_records_mapped() {
    use sptdump::cli::{self, Command as Cli};
    use sptdump::dump::{self, Traces};
    use sptdump::image::spd;
    use sptdump::image::spdprofile::SpdProfile;
    use sptdump::input::Input;
    use sptdump::output::{Collected, Reported};

    // 12 LBR records drawn over app.spd's code, for the build it profiles.
    let spd_path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe/app.spd");
    let bytes = std::fs::read(&spd_path).unwrap();
    let header = spd::read_header(&mut std::io::Cursor::new(&bytes), bytes.len() as u64).unwrap();
    let profile = SpdProfile::read(&spd_path).unwrap();
    let trace = sptdump_testkit::onspd::trace(&header, &profile, 12, 3);
    let dir = tempfile::tempdir().unwrap();
    let trace_path = dir.path().join("drawn.spt");
    std::fs::write(&trace_path, trace).unwrap();

    let paths = [
        trace_path.to_str().unwrap().to_owned(),
        spd_path.to_str().unwrap().to_owned(),
    ];
    let args = ["/compare", &paths[0], &paths[1]].map(std::ffi::OsString::from);
    let Ok(Cli::Run { plan, .. }) = cli::parse(args) else {
        panic!("a run");
    };
    let open = |i: usize| Input::open(paths[i].as_ref());
    let mut collected = Collected::default();
    dump::run(&mut collected, &plan, &Traces::new(&paths, &open)).unwrap();
    let report = collected
        .reports
        .iter()
        .find_map(|(_, r)| match r {
            Reported::SpdBlocks(report) => Some(report),
            _ => None,
        })
        .expect("a blocks report");
    assert_eq!(report.records, 12);
    assert_eq!(report.name, "app.exe");
}
