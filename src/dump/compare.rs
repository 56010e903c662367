//! `/compare BASE NEW`: two traces read apart, then how NEW differs from BASE
//! (docs/output.md, "How two traces differ").

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::many::open_one;
use super::trace::{Kept, Within};
use super::{Outcome, Plan, Status, Traces};
use crate::analysis::compare::{self, Side};
use crate::analysis::functions::{self, FunctionsLine};
use crate::analysis::stacks;
use crate::output::{FileInfo, Printer, flamegraph};

/// `/compare BASE NEW`: dumps both traces (their sections, views and verdicts as asked),
/// then prints how NEW differs from BASE. Returns the traces' outcomes, and `Errors` when,
/// with `/min-overlap:F`, a paired source's overlap is below F.
pub(super) fn compare<P: Printer>(
    printer: &mut P,
    plan: &Plan,
    traces: &Traces<'_>,
    min_overlap: Option<f64>,
) -> io::Result<(Vec<Outcome>, Status)> {
    let mut outcomes = Vec::new();
    let mut sides = Vec::new();
    for i in 0..2 {
        let within = Within {
            last: false,
            alone: false,
        };
        let (outcome, kept) = open_one(printer, traces.paths, i, traces.open(i), plan, within)?;
        let closed = matches!(outcome, Outcome::OutputClosed(_));
        outcomes.push(outcome);
        if closed {
            return Ok((outcomes, Status::Clean));
        }
        sides.push(kept);
    }
    let mut status = Status::Clean;
    if let [Some(base), Some(new)] = &sides[..] {
        fn side(k: &Kept, inline: bool) -> Option<Side<'_>> {
            Some(Side {
                summary: k.summary.as_ref()?,
                tables: &k.tables,
                symbols: &k.symbols,
                inline,
            })
        }
        if let (Some(base), Some(new)) = (side(base, plan.inline), side(new, plan.inline)) {
            let mut report = compare::compare(&base, &new, plan.top);
            report.base = traces.paths[0].clone();
            if plan.views.functions {
                let [p, q] = [sides[0].as_ref(), sides[1].as_ref()]
                    .map(|k| k.map(|k| stack_functions(plan, k)).unwrap_or_default());
                report.functions = compare::functions(&p, &q, plan.top);
            }
            let new_file = FileInfo {
                path: &traces.paths[1],
                size: None,
            };
            printer.compare(&new_file, &report)?;
            if min_overlap.is_some_and(|min| report.below(min)) {
                status = Status::Errors;
            }
        }
        if let Some(path) = &plan.views.flamegraph
            && !differential(printer, plan, traces, [base, new], path)?
        {
            status = Status::Errors;
        }
    }
    Ok((outcomes, status))
}

/// The `/functions` lines of a trace's call stacks, every key of each binary.
fn stack_functions(plan: &Plan, k: &Kept) -> Vec<FunctionsLine> {
    let Some(counts) = &k.stacks else {
        return Vec::new();
    };
    let summary = k.summary.as_ref();
    let namers = stacks::namers(counts, summary, plan.stack_order, &k.symbols, plan.inline);
    let profile = counts.profile(plan.stack_order, &k.tables, &namers);
    functions::functions(&[], &profile, usize::MAX)
}

/// `/compare BASE NEW /flamegraph:FILE`: NEW's call stacks coloured by how each frame's
/// share changed from BASE. Whether the file was written.
fn differential<P: Printer>(
    printer: &mut P,
    plan: &Plan,
    traces: &Traces<'_>,
    sides: [&Kept; 2],
    path: &Path,
) -> io::Result<bool> {
    let folded = |k: &Kept| -> Vec<(String, u128)> {
        let Some(counts) = &k.stacks else {
            return Vec::new();
        };
        let summary = k.summary.as_ref();
        let namers = stacks::namers(counts, summary, plan.stack_order, &k.symbols, plan.inline);
        counts
            .profile(plan.stack_order, &k.tables, &namers)
            .folded()
    };
    let (base, new) = (folded(sides[0]), folded(sides[1]));
    let new_file = FileInfo {
        path: &traces.paths[1],
        size: None,
    };
    if new.is_empty() {
        let message = "NEW has no call stacks: the differential flame graph says so";
        printer.note(&new_file, message)?;
    }
    let title = format!("{} against {}", traces.paths[1], traces.paths[0]);
    let written = File::create(path).and_then(|file| {
        let mut w = BufWriter::new(file);
        flamegraph::write_differential(&mut w, &title, &base, &new, plan.views.icicle)?;
        w.flush()
    });
    match written {
        Ok(()) => Ok(true),
        Err(e) => {
            let message = format!(
                "cannot write the flame graph {}: {}",
                path.display(),
                crate::input::describe(&e)
            );
            printer.error(&new_file, &message)?;
            Ok(false)
        }
    }
}
