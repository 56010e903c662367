//! `/callgraph[:FUNCTION]`: per binary, who calls whom and how often: from every LBR pair
//! whose source is a call or a jump into another function's first byte (with `/image` and
//! `/pdb`), and from call stacks a frame apart; with a function named, only its callers and
//! callees, as pprof's `-peek`.
//!
//! ```text
//! Call graph of progid 0 (lbr.exe): 2353 calls on 8 edges    {"type":"call_edge",...,
//!     hits    share  kind   caller -> callee                   "caller":"main_entry",
//!      462   19.63%  call   main_entry -> step                 "callee":"step",...}
//! ```

use std::io::{self, Write};

use maud::html;
use serde::Serialize;

use super::option::text;
use super::unnamed::unnamed;
use super::{Declaration, Declared, Opt, Parts, Profile, Reads, Section, Writes};
use crate::analysis::Counted;
use crate::analysis::lbr::callgraph::{self, CallGraph as Graph};
use crate::analysis::named;
use crate::format::error::Error;
use crate::output::html::count;
use crate::output::text::clean;
use crate::output::text::tables::{plural, showing, table};
use crate::output::{Json, Out, Printer, Render, Reported, Text, percent};

/// `/callgraph[:FUNCTION]`: the function whose callers and callees alone are shown, when
/// one is named.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallGraph(pub Option<String>);

impl Declared for CallGraph {
    const DECLARATION: Declaration = Declaration {
        prints: &["call_edge"],
        section: Section::BeforeFold,
        ..Declaration::new(
            "callgraph",
            3,
            Writes::Tables,
            Reads::SAMPLES.and(Reads::STACK_ARCS),
        )
    };
    type Asked = Option<CallGraph>;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::optional(
        "callgraph",
        "/callgraph[:NAME]",
        "per binary: who calls whom and how often, from LBR (with /image) and call\n\
         stacks; functions from /pdb. With NAME, that function's callers and callees",
        |a, function| {
            let function = match function.map(text) {
                Some(f) if f.is_empty() => return Err("expected a function's name".to_owned()),
                f => f,
            };
            *a = Some(CallGraph(function));
            Ok(())
        },
    )];

    fn asked(asked: Option<CallGraph>) -> Result<Option<Self>, String> {
        Ok(asked)
    }

    /// Who calls whom, per binary (or only the callers and callees of the function named),
    /// and what kept a binary from having edges.
    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        let Some(counted) = profile.counted() else {
            return Ok(());
        };
        let top = profile.settings.top;
        let graph = match &self.0 {
            None => callgraph::call_graph(&counted, top),
            Some(function) => callgraph::around(&counted, function, top),
        };
        let file = profile.file;
        out.print(|p| p.show(&graph))?;
        let option = match &self.0 {
            Some(function) => format!("callgraph:{function}"),
            None => "callgraph".to_owned(),
        };
        let edgeless = graph.binaries.iter().all(|b| b.unique == 0);
        if let Some(function) = &self.0
            && edgeless
        {
            if !borne(&counted, function) {
                let shows = |f: &str| format!("/callgraph:{f} shows its calls");
                return unnamed(profile, out, "callgraph", function, shows);
            }
            let message = format!("/{option}: no edge of the profile calls or leaves it");
            out.print(|p| p.note(file, &message))?;
        }
        if graph.binaries.is_empty() {
            let message = format!(
                "/{option}: the profile holds no LBR records or call stacks, which calls are \
                 read from"
            );
            out.print(|p| p.note(file, &message))?;
        }
        // No binary's records could be read as edges for an input missing: the view could
        // not run.
        let unable = edgeless && graph.binaries.iter().all(|b| !b.read);
        for binary in &graph.binaries {
            for why in &binary.missing {
                let message = format!("{}: {why}", binary.name);
                match unable {
                    true => out.unable(format!("/{option}: {message}")),
                    false => out.print(|p| p.note(file, &message))?,
                }
            }
        }
        Ok(())
    }

    /// The hottest call edges of each binary that has any.
    fn section(_: Option<&Self>, profile: &Profile<'_>, parts: &mut Parts) {
        let Some(counted) = profile.counted() else {
            return;
        };
        let graph = callgraph::call_graph(&counted, profile.settings.top);
        let with_edges: Vec<_> = graph.binaries.iter().filter(|b| b.unique > 0).collect();
        let section = html! {
            @if !with_edges.is_empty() {
                h2 id="calls" { "Calls" }
                @for b in with_edges {
                    h3 { (b.name) ": " (count(b.calls, "call")) ", " (count(b.unique as u128, "edge")) }
                    table.sortable.calls {
                        thead { tr { th.n { "calls" } th.n { "share" } th { "kind" } th { "caller" } th { "callee" } } }
                        tbody {
                            @for e in &b.edges {
                                tr {
                                    td.n data-v=(e.calls) { (e.calls) }
                                    td.n data-v=(e.calls) { (percent(e.calls, b.calls)) }
                                    td { (e.kind.name()) }
                                    td.mono { (e.caller) }
                                    td.mono { (e.callee) }
                                }
                            }
                        }
                    }
                }
            }
        };
        parts.add(section);
    }
}

/// Whether a function of a binary with its PDB bears `function` (a name, or `binary!name`).
fn borne(counted: &Counted<'_>, function: &str) -> bool {
    counted.summary.progids().any(|progid| {
        let binary = counted.tables.binary_name(progid);
        counted
            .symbols
            .get(Some(progid))
            .is_some_and(|s| s.iter().any(|f| named::names(function, &binary, f.name)))
    })
}

impl Render for Graph {
    /// A table per binary with edges, the most calls first.
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        for b in self.binaries.iter().filter(|b| b.unique > 0) {
            let o = t.block()?;
            let shown = showing(b.edges.len(), b.unique);
            let what = match &self.around {
                Some(f) => format!("Callers and callees of {} in", clean(f)),
                None => "Call graph of".to_owned(),
            };
            writeln!(
                o,
                "{what} progid {} ({}): {} call{} on {} edge{}{shown}",
                b.progid,
                clean(&b.name),
                b.calls,
                plural(b.calls),
                b.unique,
                plural(b.unique as u64),
            )?;
            let rows: Vec<(u128, String, String)> = b
                .edges
                .iter()
                .map(|e| {
                    let edge = format!(
                        "{:<5}  {} -> {}",
                        e.kind.name(),
                        clean(&e.caller),
                        clean(&e.callee)
                    );
                    (e.calls, percent(e.calls, b.calls), edge)
                })
                .collect();
            table(o, "kind   caller -> callee", &rows)?;
        }
        Ok(())
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for b in &self.binaries {
            for edge in &b.edges {
                let line = CallEdgeOf {
                    path: j.path,
                    progid: b.progid,
                    name: &b.name,
                    caller: &edge.caller,
                    callee: &edge.callee,
                    calls: edge.calls,
                    kind: edge.kind.name(),
                };
                j.line(&line)?;
            }
        }
        Ok(())
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::CallGraph(self.clone()))
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "call_edge")]
struct CallEdgeOf<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    caller: &'a str,
    callee: &'a str,
    calls: u128,
    kind: &'a str,
}
