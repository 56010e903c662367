//! `/html:FILE`: the self-contained report, parsed back with an HTML parser and checked
//! against what the other modes print; and, where Debian's `chromium` is installed, loaded
//! by it headless.

use std::path::{Path, PathBuf};

use scraper::{Html, Selector};
use serde_json::Value;
use sptdump_testkit::fixtures;

use crate::support::{json_lines, run_in};

/// Writes the report of `trace` (in `testdata/pe`) with `extra` options; its text.
fn report(dir: &Path, name: &str, extra: &[&str]) -> String {
    let path = dir.join(name);
    let arg = format!("/html:{}", path.display());
    let mut args = vec![arg.as_str()];
    args.extend(extra);
    let o = run_in(&fixtures::dir(), &args);
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    assert_eq!(o.stdout, b"", "nothing else on stdout");
    std::fs::read_to_string(path).unwrap()
}

fn select<'a>(doc: &'a Html, css: &str) -> Vec<scraper::ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

fn text(e: &scraper::ElementRef<'_>) -> String {
    e.text().collect::<String>()
}

/// The last column (the keys) of each table `css` selects.
fn keys(doc: &Html, css: &str) -> Vec<Vec<String>> {
    let cell = Selector::parse("tbody tr td:last-child").unwrap();
    select(doc, css)
        .iter()
        .map(|t| t.select(&cell).map(|td| text(&td)).collect())
        .collect()
}

#[test]
fn the_report_holds_the_identity_the_check_the_functions_and_the_flame_graph() {
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "r.html", &["/pdb:inline.pdb", "inline.spt"]);
    let doc = Html::parse_document(&page);

    // The binary's identity, as llvm-readobj read its CodeView record.
    let (guid, age) = fixtures::codeview("inline");
    let d1 = u32::from_le_bytes(guid[..4].try_into().unwrap());
    let row = text(&select(&doc, "#binaries tbody tr")[0]);
    assert!(row.contains(&format!("{d1:08X}-")), "{row}");
    assert!(
        row.contains("inline.exe") && row.contains(&age.to_string()),
        "{row}"
    );

    // /check's verdicts and the command line.
    let verdicts: Vec<String> = select(&doc, "#verdicts li").iter().map(text).collect();
    assert_eq!(verdicts.len(), 1);
    assert!(verdicts[0].starts_with("note[lbr-sparse]"), "{verdicts:?}");
    let cmd = text(&select(&doc, "#spdconvert")[0]);
    assert_eq!(cmd, "SPDConvert /mode:IP inline.spd inline.spt\n");

    // Every functions table row is a row /functions prints, in its order.
    let o = run_in(
        &fixtures::dir(),
        &["/functions", "/json", "/pdb:inline.pdb", "inline.spt"],
    );
    let expected: Vec<Vec<String>> = json_lines(&o)
        .into_iter()
        .filter(|v| v["type"] == "functions")
        .map(|line| {
            line["top"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r: &Value| {
                    let inlined = if r["inlined"] == true {
                        " (inlined)"
                    } else {
                        ""
                    };
                    format!("{}{inlined}", r["key"].as_str().unwrap())
                })
                .collect()
        })
        .collect();
    let tables = keys(&doc, "table.functions");
    assert_eq!(tables, expected);

    // /lines, and both drawings inline.
    assert!(page.contains("C:\\src\\inline.c:20"));
    for id in ["#flame-up", "#flame-down"] {
        let frame = &select(&doc, &format!("iframe{id}"))[0];
        let svg = frame.value().attr("srcdoc").unwrap();
        assert!(
            svg.contains("<svg") && svg.contains("inline.exe!rotate"),
            "{id}"
        );
    }
}

#[test]
fn the_report_is_self_contained_and_the_same_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["/pdb:app.pdb,core.pdb", "profile.spt"];
    let page = report(dir.path(), "a.html", &args);
    assert_eq!(page, report(dir.path(), "b.html", &args), "deterministic");
    let doc = Html::parse_document(&page);
    // Nothing to fetch: no external script, style sheet, image or font.
    for css in [
        "script[src]",
        "link",
        "img",
        "iframe[src]",
        "object",
        "embed",
    ] {
        assert!(select(&doc, css).is_empty(), "{css}");
    }
    assert!(!page.contains("@import") && !page.contains("url(http"));
    // A binary name from the trace is escaped, not markup.
    assert!(
        select(&doc, "h1 code")
            .iter()
            .any(|c| text(c) == "profile.spt")
    );
}

/// The report is the same whether its flame graphs' stacks are made beside the functions
/// (alone) or after pprof is written (with `/pprof`, whose peak they would add to).
#[test]
fn the_report_beside_pprof_is_the_report_alone() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["/pdb:app.pdb,core.pdb", "profile.spt"];
    let alone = report(dir.path(), "a.html", &args);
    let pprof = format!("/pprof:{}", dir.path().join("p.pb.gz").display());
    let beside = report(dir.path(), "b.html", &[args[0], &pprof, args[1]]);
    assert!(alone == beside, "the reports differ");
    assert!(alone.contains("&lt;svg"), "flame graphs drawn");
    assert!(!alone.contains("no call stacks"), "of the call stacks");
}

/// Without call stacks, the report's flame graphs draw the busiest IP event by function,
/// and say so.
#[test]
fn a_report_without_call_stacks_draws_the_busiest_event_s_functions() {
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "a.html", &["/pdb:app.pdb", "app-only.spt"]);
    assert!(page.contains("samples (no call stacks)"), "titled so");
    assert!(page.contains("app.exe!compute_checksum"), "by function");
    assert!(!page.contains("nothing to draw"), "something drawn");
}

/// Debian's `chromium`, if installed.
fn chromium() -> Option<PathBuf> {
    let path = PathBuf::from("/usr/bin/chromium");
    path.exists().then_some(path)
}

#[test]
fn headless_chromium_loads_the_report() {
    let Some(chromium) = chromium() else {
        // Where CI installed it, a missing browser is a failure, not a skip.
        assert!(
            std::env::var_os("SPTDUMP_REQUIRE_CHROMIUM").is_none(),
            "SPTDUMP_REQUIRE_CHROMIUM is set and /usr/bin/chromium is missing"
        );
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "skipped: headless_chromium_loads_the_report: no /usr/bin/chromium (Debian: chromium)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    report(dir.path(), "r.html", &["/pdb:inline.pdb", "inline.spt"]);
    let profile = dir.path().join("chromium");
    let o = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", dir.path().join("r.html").display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&o.stdout);
    let (guid, _) = fixtures::codeview("inline");
    let d1 = u32::from_le_bytes(guid[..4].try_into().unwrap());
    assert!(dom.contains(&format!("{d1:08X}-")), "the identity: {dom}");
    assert!(
        dom.contains("inline.exe!rotate"),
        "the functions and the flame graph"
    );
    // The flame graph's own script ran: inferno's init fills in its details line.
    assert!(dom.contains("id=\"flame-up\""));
}

/// Runs sptdump in `testdata/pe`; its output.
fn sptdump(args: &[&str]) -> std::process::Output {
    run_in(&fixtures::dir(), args)
}

#[test]
fn the_report_of_a_comparison_holds_both_traces_the_overlap_and_what_moved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.html");
    let html = format!("/html:{}", path.display());
    let args = [
        "/compare",
        "/pdb:inline.pdb",
        "inline.spt",
        "inline-new.spt",
    ];
    let o = sptdump(&[&args[..], &[&html]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    let page = std::fs::read_to_string(&path).unwrap();
    let doc = Html::parse_document(&page);

    // Both traces, each with its binaries and totals.
    for side in ["base", "new"] {
        let rows = select(&doc, &format!("#binaries-{side} tbody tr"));
        assert_eq!(rows.len(), 1, "{side}");
        assert!(text(&rows[0]).contains("inline.exe"), "{side}");
        assert_eq!(select(&doc, &format!("#totals-{side} tbody tr")).len(), 3);
    }
    let heading = text(&select(&doc, "h1")[0]);
    assert_eq!(heading, "How inline-new.spt differs from inline.spt");

    // The overlap table and what moved are what /compare /functions /json says.
    let o = sptdump(&[&args[..], &["/functions", "/json"]].concat());
    let lines = json_lines(&o);
    let expected: Vec<String> = lines
        .iter()
        .filter(|v| v["type"] == "compare")
        .map(|v| {
            let overlap = v["overlap"].as_f64().unwrap() * 100.0;
            format!("{} {} {overlap:.1}%", v["source"], v["new_hits"])
        })
        .collect();
    let got: Vec<String> = select(&doc, "#overlap-table tbody tr")
        .iter()
        .map(|tr| {
            let cells: Vec<String> = tr
                .children()
                .filter_map(scraper::ElementRef::wrap)
                .map(|c| text(&c))
                .collect();
            format!("\"{}\" {} {}", cells[1], cells[3], cells[5])
        })
        .collect();
    assert_eq!(got, expected);
    let moved = keys(&doc, "table.moved");
    let mut expected: Vec<Vec<String>> = Vec::new();
    let mut last_source = None;
    for v in lines.iter().filter(|v| v["type"] == "compare_function") {
        if last_source != Some(&v["source"]) {
            expected.push(Vec::new());
            last_source = Some(&v["source"]);
        }
        expected
            .last_mut()
            .unwrap()
            .push(v["key"].as_str().unwrap().to_owned());
    }
    assert_eq!(moved, expected);
    assert_eq!(moved.len(), 3, "UNHALT_CYCLE, LBR, call stacks");

    // The differential flame graph, in both directions.
    for id in ["#flame-up", "#flame-down"] {
        let svg = select(&doc, &format!("iframe{id}"))[0]
            .value()
            .attr("srcdoc")
            .unwrap()
            .to_owned();
        assert!(svg.contains("inline-new.spt against inline.spt"), "{id}");
        assert!(svg.contains("inline.exe!rotate"), "{id}");
    }
    // The same bytes every time.
    let again = dir.path().join("d.html");
    sptdump(&[&args[..], &[&format!("/html:{}", again.display())]].concat());
    assert_eq!(page, std::fs::read_to_string(again).unwrap());
}

#[test]
fn a_damaged_trace_gets_a_report_with_its_diagnostics_first() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("cut.spt");
    let whole = std::fs::read(fixtures::dir().join("profile.spt")).unwrap();
    std::fs::write(&trace, &whole[..15_000]).unwrap();
    let trace = trace.to_str().unwrap();
    let path = dir.path().join("r.html");
    let o = sptdump(&[&format!("/html:{}", path.display()), trace]);
    assert_eq!(o.status.code(), Some(1), "the errors' exit status");
    let doc = Html::parse_document(&std::fs::read_to_string(&path).unwrap());
    let o = sptdump(&["/validate", "/json", trace]);
    let expected: Vec<String> = json_lines(&o)
        .iter()
        .filter(|v| v["type"] == "diagnostic")
        .map(|v| {
            format!(
                "{}[{}]",
                v["severity"].as_str().unwrap(),
                v["code"].as_str().unwrap()
            )
        })
        .collect();
    assert!(!expected.is_empty());
    let listed: Vec<String> = select(&doc, "#diagnostic-list li")
        .iter()
        .map(|li| text(li).split(" at ").next().unwrap().to_owned())
        .collect();
    assert_eq!(listed, expected);
    let first = text(&select(&doc, "h2")[0]);
    assert_eq!(
        first,
        format!("Diagnostics: {} errors, 0 warnings", expected.len())
    );
}

#[test]
fn the_report_shows_the_match_verdicts() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "/match:app.pdb,core.pdb,inline.pdb",
        "/pdb:app.pdb,core.pdb",
        "profile.spt",
    ];
    let path = dir.path().join("r.html");
    let o = sptdump(&[&args[..], &[&format!("/html:{}", path.display())]].concat());
    assert_eq!(o.status.code(), Some(1), "inline.pdb is not in the trace");
    let doc = Html::parse_document(&std::fs::read_to_string(&path).unwrap());
    let rows: Vec<(String, Option<String>)> = select(&doc, "#matches tbody tr")
        .iter()
        .map(|tr| (text(tr), tr.value().attr("class").map(str::to_owned)))
        .collect();
    assert_eq!(rows.len(), 3);
    assert!(
        rows[0].0.starts_with("app.pdbPDB") && rows[0].0.ends_with("match progid 0 (app.exe)"),
        "{rows:?}"
    );
    assert!(
        rows[2].0.ends_with("absent") && rows[2].1.as_deref() == Some("error"),
        "{rows:?}"
    );
    // /check counts the absent PDB as an error, as /check /match does.
    let verdicts: Vec<String> = select(&doc, "#verdicts li").iter().map(text).collect();
    assert!(
        verdicts
            .iter()
            .any(|v| v.starts_with("error[binary-not-in-trace]")),
        "{verdicts:?}"
    );
}

#[test]
fn an_unwritable_comparison_report_is_an_error_naming_it_and_the_rest_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("no-such-dir").join("c.html");
    let svg = dir.path().join("d.svg");
    let o = sptdump(&[
        "/compare",
        &format!("/html:{}", bad.display()),
        &format!("/flamegraph:{}", svg.display()),
        "inline.spt",
        "inline-new.spt",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = crate::support::stderr(&o);
    assert!(
        err.contains(&format!("cannot write the HTML report {}", bad.display())),
        "{err}"
    );
    assert!(std::fs::read_to_string(svg).unwrap().contains("<svg"));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Compared with NEW inline-new.spt"));
}

/// The report's source lines are `/lines`' rows, table by table, the lines of the call
/// stacks' leaves among them.
#[test]
fn the_report_holds_the_source_lines_of_lines_call_stacks_included() {
    let dir = tempfile::tempdir().unwrap();
    let pdb = "/pdb:app.pdb,core.pdb";
    let page = report(dir.path(), "r.html", &[pdb, "profile.spt"]);
    let doc = Html::parse_document(&page);
    let cell = Selector::parse("tbody tr").unwrap();
    let td = Selector::parse("td").unwrap();
    let shown: Vec<Vec<String>> = select(&doc, "table.lines")
        .iter()
        .flat_map(|t| t.select(&cell).collect::<Vec<_>>())
        .map(|row| {
            let cells: Vec<String> = row.select(&td).map(|c| text(&c)).collect();
            vec![cells[0].clone(), cells[2].clone(), cells[3].clone()]
        })
        .collect();
    let o = run_in(&fixtures::dir(), &["/lines", "/json", pdb, "profile.spt"]);
    let lines: Vec<Value> = json_lines(&o)
        .into_iter()
        .filter(|v| v["type"] == "source_line")
        .collect();
    assert!(
        lines.iter().any(|v| v["source"] == "ETW_CALLSTACK"),
        "the trace has call stacks"
    );
    let expected: Vec<Vec<String>> = lines
        .iter()
        .map(|v| {
            let line = match (v["file"].as_str(), v["line"].as_u64()) {
                (Some(file), Some(line)) => format!("{file}:{line}"),
                (Some(file), None) => file.to_owned(),
                (None, _) => "(no line)".to_owned(),
            };
            vec![
                v["hits"].to_string(),
                line,
                v["function"].as_str().unwrap().to_owned(),
            ]
        })
        .collect();
    assert_eq!(shown, expected);
}

/// Source lines come of PDBs: without `/pdb` the report has no section of them.
#[test]
fn a_report_without_pdbs_has_no_source_lines() {
    let dir = tempfile::tempdir().unwrap();
    let without = report(dir.path(), "r.html", &["profile.spt"]);
    assert!(!without.contains("Source lines"));
    let with = report(
        dir.path(),
        "p.html",
        &["/pdb:app.pdb,core.pdb", "profile.spt"],
    );
    assert!(with.contains("Source lines"));
}

/// The report lets go of the counts before it draws its flame graphs, but not of what
/// `/check` reads after it: beside `/html`, `/check` says what it says alone, the call-stack
/// arcs among its totals.
#[test]
fn check_beside_the_report_says_what_it_says_alone() {
    let dir = tempfile::tempdir().unwrap();
    let html = format!("/html:{}", dir.path().join("r.html").display());
    let alone = run_in(&fixtures::dir(), &["/check", "/json", "profile.spt"]);
    let beside = run_in(&fixtures::dir(), &["/check", "/json", &html, "profile.spt"]);
    let check = |o: &std::process::Output| -> Vec<Value> {
        json_lines(o)
            .into_iter()
            .filter(|v| v["type"].as_str().unwrap().starts_with("check"))
            .collect()
    };
    let said = check(&alone);
    assert_eq!(
        said.len(),
        4,
        "two binaries, a verdict, the summary: {said:?}"
    );
    assert!(
        said[0]["hits"]["ETW_CALLSTACK"].as_u64() > Some(0),
        "the totals hold the call stacks: {}",
        said[0]
    );
    assert_eq!(check(&beside), said);
    assert_eq!(beside.status.code(), alone.status.code());
}

/// The report's samples table is `/check`'s records and hits per binary and source, and each
/// drawing's frame is as tall as the drawing.
#[test]
fn the_report_holds_the_totals_and_frames_its_drawings_whole() {
    let dir = tempfile::tempdir().unwrap();
    let page = report(dir.path(), "r.html", &["profile.spt"]);
    let doc = Html::parse_document(&page);
    let row = Selector::parse("tbody tr").unwrap();
    let td = Selector::parse("td").unwrap();
    let shown: Vec<Vec<String>> = select(&doc, "#totals ~ table.totals")[0]
        .select(&row)
        .map(|r| r.select(&td).map(|c| text(&c)).collect())
        .collect();
    let o = run_in(&fixtures::dir(), &["/check", "/json", "profile.spt"]);
    let expected: Vec<Vec<String>> = json_lines(&o)
        .into_iter()
        .filter(|v| v["type"] == "check_binary")
        .flat_map(|b| {
            let events = b["events"].as_array().unwrap().clone();
            events.into_iter().map(move |e| {
                vec![
                    b["progid"].to_string(),
                    b["name"].as_str().unwrap().to_owned(),
                    e["event"].as_str().unwrap().to_owned(),
                    e["records"].to_string(),
                    e["hits"].to_string(),
                ]
            })
        })
        .collect();
    assert!(expected.len() > 2, "{expected:?}");
    assert_eq!(shown, expected);
    for id in ["#flame-up", "#flame-down"] {
        let frame = &select(&doc, &format!("iframe{id}"))[0];
        let svg = frame.value().attr("srcdoc").unwrap();
        let height: u32 = svg
            .split("height=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let style = frame.value().attr("style").unwrap();
        assert!(
            style.contains(&format!("height: {}px", height + 8)),
            "{id}: {style}"
        );
    }
}

/// More diagnostics than the report lists, all of one severity: it lists the first hundred
/// and says how many there are, as `/validate` counts them.
#[test]
fn a_report_of_many_diagnostics_lists_the_first_and_counts_them_all() {
    use sptdump_testkit::builder::{RETIRE_INSTR, SptBuilder};

    let mut b = SptBuilder::new();
    b.binary("app.exe", "42AC0098-ADB5-E796-8C0E-161D2814780E", 1);
    for _ in 0..150 {
        b.binary_id(5).ip(RETIRE_INSTR, &[0x2000]);
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("many.spt");
    std::fs::write(&trace, b.build()).unwrap();
    let trace = trace.to_str().unwrap();
    let o = sptdump(&["/validate", "/json", trace]);
    let severities: Vec<String> = json_lines(&o)
        .iter()
        .filter(|v| v["type"] == "diagnostic")
        .map(|v| v["severity"].as_str().unwrap().to_owned())
        .collect();
    assert!(severities.len() > 100, "{} diagnostics", severities.len());
    assert!(severities.iter().all(|s| s == "error"), "{severities:?}");

    let path = dir.path().join("r.html");
    sptdump(&[&format!("/html:{}", path.display()), trace]);
    let doc = Html::parse_document(&std::fs::read_to_string(&path).unwrap());
    assert_eq!(select(&doc, "#diagnostic-list li").len(), 100);
    let said = format!(
        "The first 100 of {} are listed; sptdump /validate lists them all.",
        severities.len()
    );
    let notes: Vec<String> = select(&doc, "p").iter().map(text).collect();
    assert!(notes.contains(&said), "{notes:?}");
}

#[test]
fn the_report_shows_the_hottest_call_edges_where_the_pdb_and_image_are_given() {
    let dir = tempfile::tempdir().unwrap();
    let page = report(
        dir.path(),
        "calls.html",
        &["/pdb:inline.pdb", "/image:inline.exe", "inline.spt"],
    );
    let doc = Html::parse_document(&page);
    assert_eq!(select(&doc, "h2#calls").len(), 1);
    let rows: Vec<Vec<String>> = select(&doc, "table.calls tbody tr")
        .iter()
        .map(|tr| {
            tr.children()
                .filter_map(scraper::ElementRef::wrap)
                .map(|td| text(&td))
                .collect()
        })
        .collect();
    // /callgraph's edges, most calls first: the call stacks' and the LBR call's.
    let edges: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .map(|r| (r[0].as_str(), r[2].as_str(), r[3].as_str(), r[4].as_str()))
        .collect();
    assert_eq!(
        edges,
        [
            ("690", "stack", "main_entry", "checksum"),
            ("550", "stack", "checksum", "digest"),
            ("1", "call", "checksum", "digest"),
        ]
    );
    // Without a PDB there are no functions to join: no table.
    let page = report(dir.path(), "plain.html", &["inline.spt"]);
    assert!(select(&Html::parse_document(&page), "h2#calls").is_empty());
}

/// A `/match` SPD: the report sets the trace beside it by function and on its blocks, with
/// the figures `/compare TRACE SPD` prints.
#[test]
fn the_report_sets_the_trace_beside_a_matching_spds_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.html");
    let html = format!("/html:{}", path.display());
    // /match prints its verdicts beside the report.
    let o = run_in(&fixtures::dir(), &[&html, "/match:app.spd", "trace.spt"]);
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    let doc = Html::parse_document(&std::fs::read_to_string(path).unwrap());
    let o = run_in(
        &fixtures::dir(),
        &["/json", "/compare", "trace.spt", "app.spd"],
    );
    let lines = json_lines(&o);
    let blocks = lines.iter().find(|l| l["type"] == "spd_blocks").unwrap();
    let overlap = format!("{:.2}%", blocks["overlap"].as_f64().unwrap() * 100.0);
    let headings: Vec<String> = select(&doc, "h3").iter().map(text).collect();
    let on = headings
        .iter()
        .find(|h| h.contains("on the SPD's blocks"))
        .expect("a heading on the SPD's blocks");
    assert!(on.contains(&format!("overlap {overlap}")), "{on}");
    let functions: Vec<String> = lines
        .iter()
        .filter(|l| l["type"] == "spd_blocks_function")
        .map(|l| l["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(keys(&doc, "table.spd-blocks"), [functions]);
}
