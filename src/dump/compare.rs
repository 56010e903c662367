//! `/compare BASE NEW`: two traces read apart, then how NEW differs from BASE
//! (docs/output.md, "How two traces differ"), and the views of the two together, each its
//! part, as the registry lists them; a NEW that is an SPD is set beside BASE instead
//! (`spdcompare.rs`).

use std::io;

use super::many::open_one;
use super::trace::Within;
use super::{Outcome, Status, Traces};
use crate::analysis::compare::{self, Side};
use crate::analysis::functions::{self, FunctionsLine};
use crate::output::compared::Compared as Comparison;
use crate::output::{FileInfo, Printer};
use crate::views::compared::Named;
use crate::views::kept::Kept;
use crate::views::{Both, Compared, Plan, Reads, Writes};

/// `/compare BASE NEW`: dumps both traces (their sections, views and verdicts as asked),
/// then prints how NEW differs from BASE. Returns the traces' outcomes, and `Errors` when,
/// with `/min-overlap:F`, a paired source's overlap is below F.
pub(super) fn compare<P: Printer>(
    printer: &mut P,
    plan: &Plan,
    traces: &Traces<'_>,
    min_overlap: Option<f64>,
) -> io::Result<(Vec<Outcome>, Status)> {
    if let Some(spd) = super::spdcompare::spd_given(traces) {
        return super::spdcompare::beside(printer, plan, traces, &spd, min_overlap);
    }
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
    let beside = plan.views.declarations();
    for d in beside.filter(|d| d.compared == Compared::BesideSpd) {
        let file = FileInfo::new(&traces.paths[1], None);
        let message = format!(
            "/{} sets a trace beside an SPD's blocks, and NEW is a trace: not made",
            d.name
        );
        printer.note(&file, &message)?;
    }
    let status = match &sides[..] {
        [Some(base), Some(new)] => compared(printer, plan, traces, [base, new], min_overlap)?,
        _ => Status::Clean,
    };
    Ok((outcomes, status))
}

/// How NEW differs from BASE, both read: the comparison printed, then each view of the two
/// together, its tables first and its files after.
fn compared<P: Printer>(
    printer: &mut P,
    plan: &Plan,
    traces: &Traces<'_>,
    sides: [&Kept; 2],
    min_overlap: Option<f64>,
) -> io::Result<Status> {
    let views = &plan.views;
    let new_file = FileInfo::new(&traces.paths[1], None);
    let mut status = Status::Clean;
    // The views of the two together that read the traces' keys named (all but the LBR
    // views, which read each trace's ranges).
    let named = views
        .declarations()
        .any(|d| d.compared.together() && d.reads.any(Reads::PROFILE));
    let ranges_top = views.top().unwrap_or(plan.top);
    let mut both = Both::new(
        (plan.settings(), ranges_top),
        traces.paths,
        &new_file,
        sides,
        named,
    );
    if let (Some(b), Some(n)) = (side(sides[0], plan), side(sides[1], plan)) {
        let mut r = compare::compare(&b, &n, plan.top);
        r.base = traces.paths[0].clone();
        if let Some([p, q]) = both.named() {
            r.functions = compare::functions(&functions_of(p), &functions_of(q), plan.top);
        }
        // The keys that moved are printed when a view sets them in the comparison
        // (/functions); the report shows them anyway.
        let printed = views
            .declarations()
            .any(|d| d.compared == Compared::InComparison);
        let moved = match printed {
            true => Vec::new(),
            false => std::mem::take(&mut r.functions),
        };
        printer.show(&Comparison {
            file: &new_file,
            report: &r,
        })?;
        if !printed {
            r.functions = moved;
        }
        if let Some(min) = min_overlap {
            // Each pair below the threshold says so: a CI log shows why the run failed.
            for c in r.comparisons.iter().filter(|c| c.overlap < min) {
                let message = format!(
                    "{} {}: overlap {:.4} is below /min-overlap:{min} (coverage {:.4}; {} hits \
                     in BASE, {} in NEW)",
                    c.name, c.source, c.overlap, c.coverage, c.base_hits, c.new_hits
                );
                printer.error(&new_file, &message)?;
                status = Status::Errors;
            }
        }
        both.report = Some(r);
    }
    let together = |tables: bool| {
        views.iter().filter(move |v| {
            let d = v.kind().declaration();
            d.compared == Compared::Both && (d.writes == Writes::Tables) == tables
        })
    };
    for view in together(true) {
        view.compared(&mut both, printer)?;
    }
    // What the differential views show, said once, before the files that draw it.
    if both.named().is_some() {
        both.drawing(printer)?;
    }
    for view in together(false) {
        view.compared(&mut both, printer)?;
    }
    if both.failed {
        status = Status::Errors;
    }
    Ok(status)
}

/// A side of the comparison, when its trace was counted.
fn side<'k>(k: &'k Kept, plan: &Plan) -> Option<Side<'k>> {
    Some(Side {
        summary: k.summary.as_ref()?,
        tables: &k.tables,
        symbols: &k.symbols,
        inline: plan.inline,
        order: plan.stack_order,
    })
}

/// The `/functions` lines of a trace, every key of each binary and source.
fn functions_of(named: &Named) -> Vec<FunctionsLine> {
    functions::functions(&named.sampled, &named.profile, usize::MAX)
}
