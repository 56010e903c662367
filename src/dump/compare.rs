//! `/compare BASE NEW`: two traces read apart, then how NEW differs from BASE
//! (docs/output.md, "How two traces differ"); a NEW that is an SPD is set beside BASE
//! instead (`spdcompare.rs`).

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::kept::Kept;
use super::many::open_one;
use super::trace::Within;
use super::view::{Compared, Kind, Reads, View};
use super::views::{self, Named};
use super::{Outcome, Plan, Status, Traces};
use crate::analysis::check;
use crate::analysis::compare::{self, Side};
use crate::analysis::functions::{self, FunctionsLine};
use crate::analysis::{rangediff, ranges};
use crate::output::{FileInfo, Printer, flamegraph, html};

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
    let status = match &sides[..] {
        [Some(base), Some(new)] => compared(printer, plan, traces, [base, new], min_overlap)?,
        _ => Status::Clean,
    };
    Ok((outcomes, status))
}

/// How NEW differs from BASE, both read: printed, drawn, and reported as the plan asks.
fn compared<P: Printer>(
    printer: &mut P,
    plan: &Plan,
    traces: &Traces<'_>,
    [base, new]: [&Kept; 2],
    min_overlap: Option<f64>,
) -> io::Result<Status> {
    let views = &plan.views;
    let new_file = FileInfo {
        path: &traces.paths[1],
        size: None,
    };
    let mut status = Status::Clean;
    // The views of the two together read both traces' keys named, but for the LBR views,
    // which read each trace's ranges.
    let drawn = views.iter().any(|v| {
        let d = v.declaration();
        d.compared == Compared::Both && d.reads != Reads::LBR_RECORDS
    });
    let named = drawn.then(|| [views::named(plan, base), views::named(plan, new)]);
    let mut report = None;
    if let (Some(b), Some(n)) = (side(base, plan), side(new, plan)) {
        let mut r = compare::compare(&b, &n, plan.top);
        r.base = traces.paths[0].clone();
        if let Some([p, q]) = &named {
            r.functions = compare::functions(&functions_of(p), &functions_of(q), plan.top);
        }
        // The keys that moved are printed when asked; the report shows them anyway.
        let moved = if views.has(Kind::Functions) {
            Vec::new()
        } else {
            std::mem::take(&mut r.functions)
        };
        printer.compare(&new_file, &r)?;
        if !views.has(Kind::Functions) {
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
        report = Some(r);
    }
    if views.has(Kind::Coverage) || views.has(Kind::Dyninst) {
        ranges_compared(printer, plan, &new_file, [base, new])?;
    }
    let Some([p, q]) = &named else {
        return Ok(status);
    };
    let drawing = differential(printer, traces, &new_file, p, q)?;
    if let Some(path) = views.path(Kind::FlameGraph)
        && !write(printer, &new_file, "flame graph", path, |w| {
            drawing.draw(w, views.icicle)
        })?
    {
        status = Status::Errors;
    }
    if let (Some(path), Some(report)) = (views.path(Kind::Html), &report) {
        let page = |w: &mut BufWriter<File>| {
            let sides = [(0, base), (1, new)].map(|(i, k)| html::Trace {
                label: traces.paths[i].as_str(),
                tables: &k.tables,
                check: k
                    .summary
                    .as_ref()
                    .map(|summary| check::check(summary, &k.tables, &k.symbols, &[])),
            });
            let (flame, icicle) = flamegraph::both_ways(|svg, icicle| drawing.draw(svg, icicle))?;
            let page = html::Compared {
                traces: &sides,
                report,
                flame: &flame,
                icicle: &icicle,
                flame_title: &drawing.title,
            };
            html::write_compared(w, &page)
        };
        if !write(printer, &new_file, "HTML report", path, page)? {
            status = Status::Errors;
        }
    }
    Ok(status)
}

/// `/coverage` and `/dyninst` of the two traces: what each one's LBR ranges give, per
/// binary of both and per function, as many as `/dyninst:N` asks (else `/top`).
fn ranges_compared<P: Printer>(
    printer: &mut P,
    plan: &Plan,
    new_file: &FileInfo<'_>,
    sides: [&Kept; 2],
) -> io::Result<()> {
    let read = sides.map(|k| {
        k.lbr
            .as_ref()
            .map(|lbr| ranges::ranges(lbr, &k.tables, &k.symbols))
    });
    let [Some(base), Some(new)] = &read else {
        return Ok(());
    };
    let top = plan
        .views
        .iter()
        .find_map(|v| match v {
            View::Dyninst(n) => Some(*n),
            _ => None,
        })
        .unwrap_or(plan.top);
    let moved = rangediff::compare(base, new, top);
    // Each binary whose records could not be read says why, as without /compare, once
    // when both traces lack the same file.
    let mut said = std::collections::BTreeSet::new();
    for b in read.iter().flatten().flat_map(|r| &r.binaries) {
        for why in &b.missing {
            let note = format!("{}: {why}", b.name);
            if said.insert(note.clone()) {
                printer.note(new_file, &note)?;
            }
        }
    }
    printer.ranges_compared(new_file, &moved)
}

/// What the differential flame graph draws, and the note that says what it is when it is
/// not the call stacks.
fn differential<P: Printer>(
    printer: &mut P,
    traces: &Traces<'_>,
    new_file: &FileInfo<'_>,
    base: &Named,
    new: &Named,
) -> io::Result<Differential> {
    let input = views::differential_input(base, new);
    let mut title = format!("{} against {}", traces.paths[1], traces.paths[0]);
    match &input.what {
        Some(what) => {
            title = format!("{title}: {what} (no call stacks)");
            let message =
                format!("NEW has no call stacks: the differential views show {what}, by function");
            printer.note(new_file, &message)?;
        }
        None if input.new.is_empty() => {
            let message = "NEW has no samples: the differential flame graph says so";
            printer.note(new_file, message)?;
        }
        None => {}
    }
    Ok(Differential {
        title,
        base: input.base,
        new: input.new,
    })
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

/// The differential flame graph of NEW against BASE: its title and both sides' folded stacks.
struct Differential {
    title: String,
    base: Vec<(String, u128)>,
    new: Vec<(String, u128)>,
}

impl Differential {
    fn draw(&self, w: impl Write, icicle: bool) -> io::Result<()> {
        flamegraph::write_differential(w, &self.title, &self.base, &self.new, icicle).map(|_| ())
    }
}

/// Writes `path` with `write`; an error naming it when it cannot be. Whether it was written.
fn write<P: Printer>(
    printer: &mut P,
    new_file: &FileInfo<'_>,
    what: &str,
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<bool> {
    match views::write_file(path, write) {
        Ok(()) => Ok(true),
        Err(e) => {
            printer.error(new_file, &views::cannot_write_message(what, path, &e))?;
            Ok(false)
        }
    }
}
