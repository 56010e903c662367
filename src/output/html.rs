//! The pages of the HTML report (`/html:FILE`): the page around a report's body, its style
//! and script, the flame graphs inline, and the parts of a report that are of the trace as a
//! whole (docs/output.md, "The HTML report"). The views give their own sections
//! (`views/html.rs` puts the report together):
//!
//! ```text
//! diagnostics   the trace's, first, when it has any
//! identity      the binaries of the program-ID table: GUID, age, symbol-server key
//! match         the /match verdicts, when files are given
//! check         /check's verdicts, and the SPDConvert command line per sampled binary
//! totals        per binary and source: records and hits
//! (the views)   functions, lines, calls, what SPGO learns from LBR, the hottest function
//! spd           each /match SPD beside the binary it is of
//! flame graph   the flame graph inline, with its search, and an icicle toggle
//! ```
//!
//! The report of `/compare BASE NEW` ([`write_compared`]) has both traces' binaries and
//! totals, the overlap table, the keys that moved, and the differential flame graph.
//!
//! Nothing is fetched: the style, the script and both drawings are in the file. The HTML is
//! written with `maud`, whose templates are checked when sptdump is built and escape every
//! string they insert (binary names and paths come from the trace); only the flame graphs'
//! SVG, which inferno writes and escapes itself, goes in as it is. The same input gives the
//! same bytes.

use std::io::{self, Write};

use maud::{Markup, PreEscaped, html};

use super::verdicts::match_row;
use crate::analysis::check::CheckReport;
use crate::analysis::compare::{CompareReport, FunctionsCompared};
use crate::analysis::spd::blocks::{BlockSource, SpdBlocksReport};
use crate::analysis::spd::compare::SpdCompareReport;
use crate::analysis::summary::counted;
use crate::format::diag::{Diagnostic, Tally};
use crate::format::tables::{Tables, base_name};
use crate::image::matching::MatchResult;

const STYLE: &str = "
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em auto; padding: 0 1.5em; max-width: 1240px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1em; margin-bottom: 0.3em; }
table { border-collapse: collapse; margin: 0.3em 0 1em; }
th, td { padding: 2px 10px; text-align: left; border-bottom: 1px solid #eee; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th:hover { background: #f0f0f0; }
code, .mono { font-family: ui-monospace, monospace; }
.error { color: #b00020; } .warning { color: #a05a00; } .note { color: #444; }
td.grew { color: #b00020; } td.shrank { color: #0040b0; }
pre.cmd { background: #f6f6f6; padding: 6px 10px; }
table.annotated td { padding: 0 10px; border: 0; } tr.source td { color: #555; padding-top: 4px; }
.hidden { display: none; }
figure.cfg { margin: 0.5em 0 1.5em; } figure.cfg svg { max-width: 100%; height: auto; max-height: 720px; }
figure.cfg figcaption { color: #555; font-size: 0.9em; }
";

/// Sorts a table by the clicked column: numbers by their `data-v`, text by itself; a second
/// click reverses.
const SCRIPT: &str = "
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, column) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var down = th.dataset.order !== 'down';
      th.dataset.order = down ? 'down' : 'up';
      rows.sort(function (a, b) {
        var x = a.cells[column], y = b.cells[column];
        var v = x.dataset.v !== undefined
          ? Number(x.dataset.v) - Number(y.dataset.v)
          : x.textContent.localeCompare(y.textContent);
        return down ? -v : v;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
var toggle = document.getElementById('icicle-toggle');
if (toggle) {
  toggle.addEventListener('click', function () {
    document.getElementById('flame-up').classList.toggle('hidden');
    document.getElementById('flame-down').classList.toggle('hidden');
  });
}
";

/// One trace of a comparison.
pub(crate) struct Trace<'a> {
    /// As named on the command line.
    pub label: &'a str,
    pub tables: &'a Tables,
    /// Its `/check` report, for its totals, when it was counted.
    pub check: Option<CheckReport>,
}

/// What the report of `/compare BASE NEW /html:FILE` shows.
pub(crate) struct Compared<'a> {
    /// BASE and NEW.
    pub traces: &'a [Trace<'a>; 2],
    pub report: &'a CompareReport,
    /// The differential flame graph, drawn bottom-up and top-down, and its title.
    pub flame: &'a [u8],
    pub icicle: &'a [u8],
    pub flame_title: &'a str,
}

/// Writes the report of a comparison: both traces, the overlap of their distributions, the
/// keys that moved, and the differential flame graph.
pub(crate) fn write_compared(out: impl Write, c: &Compared<'_>) -> io::Result<()> {
    let [base, new] = c.traces;
    let body = html! {
        h1 { "How " code { (new.label) } " differs from " code { (base.label) } }
        h2 id="traces" { "The traces" }
        @for (side, t) in [("BASE", base), ("NEW", new)] {
            @let id = side.to_lowercase();
            h3 { (side) " " code { (t.label) } }
            (binaries_table(t.tables, &format!("binaries-{id}")))
            @if let Some(check) = &t.check { (totals_table(check, &format!("totals-{id}"))) }
        }
        (overlap(c.report))
        (moved(&c.report.functions))
    };
    let title = format!("{} against {}", new.label, base.label);
    let flame = Flame {
        heading: "Differential flame graph",
        up: c.flame,
        down: c.icicle,
        title: c.flame_title,
    };
    page(out, &title, body, &flame)
}

/// The page around `body` and, after it, the flame graphs: its head, style and script. The
/// drawings, the bulk of a report, are escaped straight into `out`, never held as text a
/// second time.
pub(crate) fn page(
    mut out: impl Write,
    title: &str,
    body: Markup,
    flame: &Flame<'_>,
) -> io::Result<()> {
    let head = html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            meta name="generator" content=(concat!("sptdump ", env!("CARGO_PKG_VERSION")));
            title { "sptdump: " (title) }
            style { (PreEscaped(STYLE)) }
        }
    };
    out.write_all(b"<!DOCTYPE html><html lang=\"en\">")?;
    out.write_all(head.into_string().as_bytes())?;
    out.write_all(b"<body>")?;
    out.write_all(body.into_string().as_bytes())?;
    flame.write(&mut out)?;
    let script = html! { script { (PreEscaped(SCRIPT)) } };
    out.write_all(script.into_string().as_bytes())?;
    out.write_all(b"</body></html>\n")
}

/// The trace's diagnostics, at the top: a report of a damaged trace says so first.
pub(crate) fn diagnostics(tally: Tally, first: &[Diagnostic]) -> Markup {
    let total = tally.errors + tally.warnings;
    html! {
        @if total > 0 || !first.is_empty() {
            h2 id="diagnostics" class="error" {
                "Diagnostics: " (count(tally.errors.into(), "error")) ", "
                (count(tally.warnings.into(), "warning"))
            }
            ul id="diagnostic-list" {
                @for d in first {
                    li class=(d.severity().as_str()) { code { (d.to_string()) } }
                }
            }
            @if (first.len() as u64) < total {
                p { "The first " (first.len()) " of " (total) " are listed; "
                    code { "sptdump /validate" } " lists them all." }
            }
        }
    }
}

/// The `/match` verdicts, when files were given.
pub(crate) fn matches(results: &[MatchResult<'_>], tables: &Tables) -> Markup {
    html! {
        @if !results.is_empty() {
            h2 id="match" { "Files matched against the program IDs" }
            table id="matches" {
                thead { tr { th { "file" } th { "kind" } th { "GUID" } th { "age" } th { "verdict" } } }
                tbody {
                    @for r in results {
                        @let [file, kind, guid, age, verdict] = match_row(r, tables);
                        tr class=(if r.failed() { "error" } else { "" }) {
                            td.mono { (file) } td { (kind) } td.mono { (guid) } td { (age) }
                            td { (verdict.split_whitespace().collect::<Vec<_>>().join(" ")) }
                        }
                    }
                }
            }
        }
    }
}

/// The overlap of each paired binary and source, what NEW samples more, and the binaries
/// in one trace only.
fn overlap(report: &CompareReport) -> Markup {
    let share = |v: f64| format!("{:.1}%", v * 100.0);
    html! {
        h2 id="overlap" { "Overlap" }
        @if report.comparisons.is_empty() { p { "No binary and source in both traces." } }
        @else {
            table id="overlap-table" {
                thead { tr {
                    th { "binary" } th { "source" } th.n { "base" } th.n { "new" } th { "counted" }
                    th.n { "overlap" } th.n { "coverage" }
                } }
                tbody {
                    @for c in &report.comparisons {
                        tr {
                            td { (c.name) } td { (c.source) } td.n { (c.base_hits) } td.n { (c.new_hits) }
                            td { (counted(c.source)) } td.n { (share(c.overlap)) } td.n { (share(c.coverage)) }
                        }
                    }
                }
            }
        }
        @for c in report.comparisons.iter().filter(|c| !c.missing.is_empty()) {
            h3 { (c.name) ", " (c.source) ": what NEW samples more than BASE"
                @if c.missing.len() < c.more_in_new { " (showing " (c.missing.len()) " of " (c.more_in_new) ")" } }
            table.sortable.more-in-new {
                thead { tr { th.n { "base" } th.n { "new" } th { "key" } } }
                tbody {
                    @for m in &c.missing {
                        tr {
                            td.n data-v=(m.base_share) { (share(m.base_share)) }
                            td.n data-v=(m.new_share) { (share(m.new_share)) }
                            td.mono { (m.key) }
                        }
                    }
                }
            }
        }
        @if !report.only_in.is_empty() {
            ul id="only-in" {
                @for o in &report.only_in { li { (o.name) ": only in " (o.only_in) } }
            }
        }
    }
}

/// Per binary and source, the keys whose inclusive share moved most.
fn moved(functions: &[FunctionsCompared]) -> Markup {
    let share = |v: f64| format!("{:.2}%", v * 100.0);
    html! {
        h2 id="moved" { "What moved" }
        @if functions.is_empty() { p { "No binary and source with samples in both traces." } }
        @for f in functions {
            h3 { (f.name) ", " (f.source) ": the keys whose inclusive share moved most" }
            table.sortable.moved {
                thead { tr {
                    th.n { "base incl" } th.n { "new incl" } th.n { "base excl" } th.n { "new excl" }
                    th.n { "delta" } th { "key" }
                } }
                tbody {
                    @for k in &f.keys {
                        tr {
                            td.n data-v=(k.base_inclusive) { (share(k.base_inclusive)) }
                            td.n data-v=(k.new_inclusive) { (share(k.new_inclusive)) }
                            td.n data-v=(k.base_exclusive) { (share(k.base_exclusive)) }
                            td.n data-v=(k.new_exclusive) { (share(k.new_exclusive)) }
                            td.n class=(if k.delta > 0.0 { "grew" } else if k.delta < 0.0 { "shrank" } else { "" })
                                data-v=(k.delta) { (format!("{:+.2}%", k.delta * 100.0)) }
                            td.mono { (k.key) }
                        }
                    }
                }
            }
        }
    }
}

pub(crate) fn identity(tables: &Tables, id: &str) -> Markup {
    html! {
        h2 id="identity" { "Binaries" }
        (binaries_table(tables, id))
    }
}

/// The program-ID table: each binary's identity.
fn binaries_table(tables: &Tables, id: &str) -> Markup {
    let entries = tables.progids.as_ref();
    html! {
        table.binaries id=(id) {
            thead { tr { th.n { "progid" } th { "binary" } th { "GUID" } th.n { "age" } th { "symbol-server key" } } }
            tbody {
                @for progid in 0..tables.progid_count() as u16 {
                    @let entry = entries.and_then(|t| t.get(progid));
                    tr {
                        td.n { (progid) }
                        td { (tables.binary_name(progid)) }
                        td.mono { (entry.map(|e| e.guid_string()).unwrap_or_default()) }
                        td.n { (entry.map(|e| e.age.to_string()).unwrap_or_default()) }
                        td.mono { (entry.map(|e| e.symkey().to_string()).unwrap_or_default()) }
                    }
                }
            }
        }
    }
}

/// `/check`'s verdicts, and the SPDConvert command line per sampled binary of `label`.
pub(crate) fn check(report: &CheckReport, label: &str) -> Markup {
    let mode = report.mode.as_str();
    html! {
        h2 id="check" { "Fit for SPDConvert" }
        @if report.verdicts.is_empty() {
            p { "No verdicts." }
        } @else {
            ul id="verdicts" {
                @for v in &report.verdicts {
                    li class=(v.severity().as_str()) {
                        b { (v.severity().as_str()) "[" (v.code.as_str()) "]" } ": " (v.message)
                    }
                }
            }
        }
        @if let Some(mode) = mode {
            p { "Import it into each sampled binary's SPD with:" }
            pre.cmd id="spdconvert" {
                @for b in report.binaries.iter().filter(|b| b.records > 0) {
                    "SPDConvert /mode:" (mode) " " (spd_name(&b.name)) " " (label) "\n"
                }
            }
        } @else {
            p { "No sample records: SPDConvert can make nothing of this trace." }
        }
    }
}

/// The SPD the linker makes beside a binary: its name with `.spd` for the extension.
fn spd_name(binary: &str) -> String {
    let base = base_name(binary);
    let stem = base.rsplit_once('.').map_or(base, |(stem, _)| stem);
    format!("{stem}.spd")
}

pub(crate) fn totals(check: &CheckReport, id: &str) -> Markup {
    html! {
        h2 id="totals" { "Samples" }
        (totals_table(check, id))
    }
}

/// Per binary and source: records and hits.
fn totals_table(check: &CheckReport, id: &str) -> Markup {
    html! {
        table.totals id=(id) {
            thead { tr { th.n { "progid" } th { "binary" } th { "source" } th.n { "records" } th.n { "hits" } } }
            tbody {
                @for b in &check.binaries {
                    @for (source, records, hits) in &b.events {
                        tr {
                            td.n { (b.progid) }
                            td { (b.name) }
                            td { (source.name()) }
                            td.n { (records) }
                            td.n { (hits) }
                        }
                    }
                }
            }
        }
    }
}

/// A share as a percentage, with two decimals.
fn share_percent(share: f64) -> String {
    format!("{:.2}%", 100.0 * share)
}

/// Each matching SPD beside the binary it is of: the trace's function shares by IP samples,
/// the SPD's by entry count and by estimated dynamic instructions (inferred, marked `*`);
/// then the trace on the SPD's blocks: the overlap, and the functions where the two differ
/// most.
pub(crate) fn beside_spds(reports: &[(SpdCompareReport, SpdBlocksReport)]) -> Markup {
    let or_dash = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    let share_or_dash = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), share_percent);
    html! {
        h2 id="spd" { "Beside the SPD" }
        p { "Each function's share of the binary's IP samples beside its shares in the SPD given with /match. "
            "* inferred: dynamic instructions are the sum of block count × instructions, our estimate; "
            "- the SPD has no record of the function." }
        @for (r, b) in reports {
            h3 { (r.binary) " (progid " (r.progid) ") beside " code { (r.spd) } ": "
                (count(r.trace_total, "IP sample")) "; the SPD: " (r.entry_total) " entries"
                ", " (r.dyninst_total) " dynamic instructions*" }
            table.sortable.spd {
                thead { tr { th.n { "samples" } th.n { "trace" } th.n { "entries" } th.n { "entry" }
                    th.n { "dyninst*" } th.n { "dyninst" } th { "function" } } }
                tbody {
                    @for row in &r.rows {
                        tr {
                            td.n data-v=(row.trace_samples) { (row.trace_samples) }
                            td.n data-v=(row.trace_share) { (share_percent(row.trace_share)) }
                            td.n data-v=(row.spd_entry.unwrap_or(0)) { (or_dash(row.spd_entry)) }
                            td.n data-v=(row.spd_entry_share) { (share_percent(row.spd_entry_share)) }
                            td.n data-v=(row.spd_dyninst.unwrap_or(0)) { (or_dash(row.spd_dyninst)) }
                            td.n data-v=(row.spd_dyninst_share) { (share_percent(row.spd_dyninst_share)) }
                            td.mono { (row.function) }
                        }
                    }
                }
            }
            h3 { (r.binary) " on the SPD's blocks: overlap " (share_or_dash(b.overlap))
                " (" (block_source(b)) ")" }
            p.spd-blocks { "Of " (b.blocks) " blocks with code*, this trace ran " (b.ran)
                "; blocks this trace ran that the SPD holds cold: " (b.ran_cold)
                " (what it would add); blocks the SPD counts that this trace never ran: " (b.cold_ran)
                ". A function's loss is its part of 1 − overlap; its shape, how alike the two are inside it." }
            @if let Some(flow) = &b.flow {
                p.spd-blocks { "By the flow inferred on the SPD's graph from these ranges: overlap "
                    (share_or_dash(flow.overlap)) "; " (flow.ran) " blocks ran, " (flow.ran_cold)
                    " of them held cold by the SPD; " (flow.cold_ran) " the SPD counts did not run." }
            }
            @if !b.rows.is_empty() {
                table.sortable.spd-blocks {
                    thead { tr { th.n { "loss" } th.n { "shape" } th.n { "trace" } th.n { "SPD" }
                        th.n { "blocks" } th.n { "ran cold" } th { "function" } } }
                    tbody {
                        @for f in &b.rows {
                            tr {
                                td.n data-v=(f.loss) { (share_percent(f.loss)) }
                                td.n data-v=(f.shape_overlap.unwrap_or(-1.0)) { (share_or_dash(f.shape_overlap)) }
                                td.n data-v=(f.trace_share) { (share_percent(f.trace_share)) }
                                td.n data-v=(f.spd_share) { (share_percent(f.spd_share)) }
                                td.n data-v=(f.blocks) { (f.blocks) }
                                td.n data-v=(f.ran_cold) { (f.ran_cold) }
                                td.mono { (f.name) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What the trace's side on the SPD's blocks was read from, in words.
fn block_source(b: &SpdBlocksReport) -> String {
    match b.source {
        BlockSource::Lbr(order) => format!("by the LBR ranges, read {}", order.name()),
        BlockSource::Ip(kind) if b.unordered.is_some() => {
            format!(
                "by the {} samples: the LBR ranges have no order",
                kind.name()
            )
        }
        BlockSource::Ip(kind) => format!("by the {} samples", kind.name()),
        BlockSource::Nothing => "nothing of the trace falls on them".to_owned(),
    }
}

/// The flame graph of a report, drawn bottom-up and top-down, and what it draws.
pub(crate) struct Flame<'a> {
    /// What it is: `Flame graph`.
    pub(crate) heading: &'a str,
    /// Its drawing, bottom-up.
    pub(crate) up: &'a [u8],
    /// Its drawing, top-down.
    pub(crate) down: &'a [u8],
    /// What it draws.
    pub(crate) title: &'a str,
}

impl Flame<'_> {
    /// Its heading, its title, and each drawing in an iframe of its own, inline (`srcdoc`):
    /// inferno's script finds its elements by id, which two drawings in one page would share.
    fn write(&self, out: &mut impl Write) -> io::Result<()> {
        let top = html! {
            h2 id="flame-graph" { (self.heading) }
            p {
                (self.title) ". Click a frame to zoom, Ctrl+F or the graph's Search to find one. "
                button id="icicle-toggle" type="button" { "Flame graph / icicle" }
            }
        };
        out.write_all(top.into_string().as_bytes())?;
        out.write_all(b"<div id=\"flame\">")?;
        frame(out, r#"id="flame-up" title="flame graph""#, self.up)?;
        frame(
            out,
            r#"id="flame-down" class="hidden" title="icicle graph""#,
            self.down,
        )?;
        out.write_all(b"</div>")
    }
}

/// An iframe with `attributes` showing `svg` on a page of its own: the drawing without its
/// XML declaration and DOCTYPE, as wide as the frame, escaped as an attribute as it is
/// written.
fn frame(out: &mut impl Write, attributes: &str, svg: &[u8]) -> io::Result<()> {
    let text = String::from_utf8_lossy(svg);
    let drawing = text.find("<svg").map_or(&*text, |at| &text[at..]);
    write!(out, "<iframe {attributes} srcdoc=\"")?;
    escaped(
        out,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>html, body { margin: 0 } \
         svg { display: block; width: 100%; height: auto }</style></head><body>",
    )?;
    escaped(out, drawing)?;
    escaped(out, "</body></html>")?;
    write!(out, "\" style=\"")?;
    escaped(out, &frame_style(svg))?;
    out.write_all(b"\"></iframe>")
}

/// `text` escaped as maud escapes an attribute's value: `&`, `<`, `>` and `"`.
fn escaped(out: &mut impl Write, text: &str) -> io::Result<()> {
    let mut rest = text.as_bytes();
    while let Some(at) = rest
        .iter()
        .position(|b| matches!(b, b'&' | b'<' | b'>' | b'"'))
    {
        out.write_all(&rest[..at])?;
        out.write_all(match rest[at] {
            b'&' => b"&amp;",
            b'<' => b"&lt;",
            b'>' => b"&gt;",
            _ => b"&quot;",
        })?;
        rest = &rest[at + 1..];
    }
    out.write_all(rest)
}

/// `1 hit`, `2 hits`.
pub(crate) fn count(n: u128, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The style of the iframe of an SVG: the page's width, the drawing's height.
fn frame_style(svg: &[u8]) -> String {
    let text = String::from_utf8_lossy(svg);
    let height = text
        .split("height=\"")
        .nth(1)
        .and_then(|h| h.split('"').next())
        .and_then(|h| h.parse::<u32>().ok())
        .unwrap_or(400);
    format!("width: 100%; height: {}px; border: 0", height + 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_drawing_is_escaped_as_maud_escapes_an_attribute() {
        let svg = "<?xml version=\"1.0\"?><!DOCTYPE svg><svg height=\"86\"><text>a&b <c> \"d\" \
                   'e' \u{e9}</text></svg>"
            .as_bytes();
        let mut ours = Vec::new();
        frame(&mut ours, r#"id="x""#, svg).unwrap();
        let page = "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>html, body { \
                    margin: 0 } svg { display: block; width: 100%; height: auto }</style></head>\
                    <body><svg height=\"86\"><text>a&b <c> \"d\" 'e' \u{e9}</text></svg></body>\
                    </html>";
        let maud = html! { iframe id="x" srcdoc=(page) style=(frame_style(svg)) {} };
        assert_eq!(String::from_utf8(ours).unwrap(), maud.into_string());
    }
}
