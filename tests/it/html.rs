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
    let tables: Vec<Vec<String>> = select(&doc, "table.functions")
        .iter()
        .map(|t| {
            t.select(&Selector::parse("tbody tr td:last-child").unwrap())
                .map(|td| text(&td))
                .collect()
        })
        .collect();
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

/// Debian's `chromium`, if installed.
fn chromium() -> Option<PathBuf> {
    let path = PathBuf::from("/usr/bin/chromium");
    path.exists().then_some(path)
}

#[test]
fn headless_chromium_loads_the_report() {
    let Some(chromium) = chromium() else {
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
