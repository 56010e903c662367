//! The report's hottest function, instruction by instruction, as `/annotate` shows it: the
//! count of each instruction by the LBR ranges, the branches taken from it and, for a
//! conditional jump, its fall-through, the IP samples at it, and the source lines above.

use maud::{Markup, html};

use crate::analysis::annotate::{AnnotateReport, Annotated, Row};

/// The section, when the report has the hottest function annotated.
pub(super) fn section(report: &AnnotateReport) -> Markup {
    html! {
        @if !report.functions.is_empty() {
            h2 id="annotated" { "The hottest function, instruction by instruction" }
            @for f in &report.functions {
                (function(f))
            }
        }
    }
}

fn function(f: &Annotated) -> Markup {
    let ran = f.rows.iter().fold(0u128, |s, r| s.saturating_add(r.count));
    let columns = 4 + f.events.len();
    // Each source line above the first of its instructions, as perf annotate shows them.
    let mut place = None;
    let rows: Vec<(Option<String>, &Row)> = f
        .rows
        .iter()
        .map(|r| {
            let here = (&r.file, r.line, &r.inlined);
            let shown = (place != Some(here) && r.file.is_some()).then(|| source(r));
            place = Some(here);
            (shown, r)
        })
        .collect();
    html! {
        h3 {
            (f.name) "!" (f.function) " at " code { (format!("0x{:08X}", f.rva)) } ": "
            (f.rows.len()) " instructions, " (ran) " run by the LBR ranges"
        }
        table.annotated {
            thead { tr {
                th.n { "count" } th.n { "taken" } th.n { "fall" }
                @for e in &f.events { th.n { (e.name()) } }
                th { "RVA" } th { "instruction" }
            } }
            tbody {
                @for (shown, r) in &rows {
                    @if let Some(line) = shown {
                        tr.source { td colspan=(columns) {} td.mono { (line) } }
                    }
                    (row(r))
                }
            }
        }
    }
}

/// `file:line`, the function inlined there, and the line's text when the file was found.
fn source(r: &Row) -> String {
    let mut s = r.file.clone().unwrap_or_default();
    if let Some(line) = r.line {
        s.push_str(&format!(":{line}"));
    }
    if let Some(inlined) = &r.inlined {
        s.push_str(&format!(" ({inlined}, inlined)"));
    }
    if let Some(text) = &r.source {
        s.push_str("  ");
        s.push_str(text.trim());
    }
    s
}

fn row(r: &Row) -> Markup {
    html! {
        tr {
            td.n { (r.count) }
            td.n { (r.taken) }
            td.n { @if r.conditional { (r.fall_through()) } }
            @for n in &r.ip { td.n { (n) } }
            td.mono { (format!("0x{:08X}", r.rva)) }
            td.mono { (r.text) }
        }
    }
}
