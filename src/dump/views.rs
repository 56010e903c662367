//! The walk of a profile's views, as the plan asks for them and in the order of
//! [`Kind`]: what each reads is made once, before the walk, and let go of once
//! no view after it reads it, as their declarations (`view.rs`) say. A profile is one trace's
//! counts, or several traces' merged; the views read it the same way.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::kept::Kept;
use super::view::{Kind, Reads, View, Views};
use super::{Out, Plan};
use crate::analysis::Counted;
use crate::analysis::annotate::{self, AnnotateReport};
use crate::analysis::keys::Namers;
use crate::analysis::profile::{BinaryStacks, StackProfile};
use crate::analysis::ranges::{self, RangeReport};
use crate::analysis::stacks::{self, StackCounts};
use crate::analysis::summary::Summary;
use crate::analysis::{callgraph, check, functions, lines, profile, sampled, spdcompare};
use crate::engine::{memory, threads};
use crate::format::error::Error;
use crate::format::record::SampleKind;
use crate::format::stackorder::StackOrder;
use crate::format::tables::Tables;
use crate::image::matching::MatchResult;
#[cfg(feature = "parquet")]
use crate::output::parquet;
use crate::output::{FileInfo, Printer, flamegraph, html, pprof, speedscope};

/// What the caller reads of a profile after its views: what the views may not let go.
#[derive(Clone, Copy, Debug)]
pub(super) struct After {
    /// The summary's tables (`/check`, `/merge`, `/compare`).
    pub summary: bool,
    /// The distinct call stacks as decoded (`/merge`, `/compare`).
    pub stacks: bool,
    /// The distinct LBR records as decoded (`/merge`, `/compare`).
    pub lbr: bool,
}

/// Prints and writes the views of the profile `kept`, named `file`, in the order they are
/// shown ([`Kind`]). What no view after needs and the caller does not read `after` is let go
/// as soon as it can be, as the views' declarations say: the summary's tables once the call
/// stacks are all that is drawn, the call stacks as decoded once they are folded by key.
pub(super) fn show<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    plan: &Plan,
    kept: &mut Kept,
    after: After,
) -> Result<(), Error> {
    let views = &plan.views;
    if views.has(Kind::Summary) {
        summary(out, plan, kept)?;
    }
    if views.iter().all(|v| v.kind() == Kind::Summary) {
        return Ok(());
    }
    let_go_of_samples(views, kept, after);
    let none = StackCounts::default();
    let stacks = kept.stacks.as_ref().unwrap_or(&none);
    // Every address the views name, looked up once per binary.
    let named = views.read(Reads::INLINE_NAMES);
    let namers = stacks::namers(
        stacks,
        kept.summary.as_ref(),
        plan.stack_order,
        &kept.symbols,
        plan.inline && named,
    );
    unread_lines(out, file, &kept.tables, &namers)?;
    let (order, tables) = (plan.stack_order, &kept.tables);
    let report = report_input(plan, file, kept, stacks);
    let_go_of_stack_arcs(views, &mut kept.summary, after);
    // The views that read the call stacks as decoded after the fold, and the caller, keep
    // them; the others read the profile by key.
    let keep = views.read(Reads::STACKS_AFTER) || after.stacks;
    let profiled = views.read(Reads::PROFILE);
    let profile = profile(&mut kept.stacks, tables, order, &namers, profiled, keep);
    let handed = handed_to_pprof(views, &mut kept.stacks, after);
    // The LBR records are read as ranges once; only the caller reads them after.
    let lbr = kept.lbr.take();
    let ranges = lbr
        .as_ref()
        .filter(|_| plan.each_trace_reads(Reads::LBR_RECORDS))
        .map(|lbr| ranges::ranges(lbr, tables, &kept.symbols));
    kept.lbr = lbr.filter(|_| after.lbr);
    let counted = counted(
        kept,
        kept.stacks.as_ref().unwrap_or(&none),
        plan.stack_order,
    );
    let label = report.as_ref().map(|r| r.label.as_str());
    let (flat, drawn) = flat_beside_drawn(plan, &counted, &namers, &profile, label);
    let made = Made {
        counted,
        namers,
        profile,
        handed,
        flat,
        drawn,
        ranges,
    };
    let (functions, drawn) = walk(out, file, plan, made, report.as_ref())?;
    // The report last, once what nothing else reads is let go of, in that room.
    if let (Some(input), Some((title, folded, _))) = (report, drawn) {
        let_go_of_counts(kept, after);
        self::report(out, file, input, (&title, folded), &kept.tables, &functions)?;
    }
    Ok(())
}

/// What the views of a profile read, made once before they are walked.
struct Made<'k> {
    /// What the counters counted, unless the summary could not be finished (which was said).
    counted: Option<Counted<'k>>,
    /// Every address the views name, looked up once per binary.
    namers: Namers<'k>,
    /// The call stacks by key, for the views that read them.
    profile: StackProfile,
    /// The call stacks as decoded, for pprof to let go of once written.
    handed: Option<StackCounts>,
    /// The samples without call stacks, as the views need them.
    flat: Flat,
    /// What the report's flame graphs draw, when made beside the flat profiles.
    drawn: Option<FlameInput>,
    /// The LBR records read as branch sequences, for the views that read them.
    ranges: Option<RangeReport>,
}

/// Shows each view of the plan but the summary (shown first) and the report (written last,
/// by the caller), in the order they are shown; what the views made lets go as they finish.
/// Returns what the report reads: the `/functions` lines and its flame graphs' input.
fn walk<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    plan: &Plan,
    made: Made<'_>,
    report: Option<&ReportInput<'_>>,
) -> Result<(Vec<functions::FunctionsLine>, Option<FlameInput>), Error> {
    let Made {
        counted,
        namers,
        mut profile,
        mut handed,
        flat: Flat { sampled, functions },
        mut drawn,
        ranges,
    } = made;
    let mut ranges_shown = false;
    for view in plan.views.iter() {
        let kind = view.kind();
        // The report's flame graphs are drawn of what is made here, once pprof (whose peak
        // it would add to) is written and before the profile is handed to speedscope,
        // unless made beside the flat profiles.
        if let Some(report) = report.filter(|_| kind > Kind::Pprof && drawn.is_none()) {
            drawn = Some(flame_input(&report.label, &profile, &sampled));
        }
        if !plan.of_each_trace(kind) {
            continue;
        }
        match (view, &counted) {
            (View::Summary | View::Html(_), _) => {}
            (View::Functions, _) => out.print(|p| p.functions(&functions))?,
            (View::Folded, _) => folded(out, file, &profile, &sampled)?,
            (View::FlameGraph(path), _) => flame_graph(out, file, plan, path, &profile, &sampled)?,
            (View::Lines, Some(counted)) => source_lines(out, file, plan, counted)?,
            (View::CallGraph(function), Some(counted)) => {
                call_graph(out, file, plan, counted, function.as_deref())?;
            }
            (View::Annotate(function), Some(counted)) => {
                if !std::mem::replace(&mut ranges_shown, true)
                    && let Some(ranges) = &ranges
                {
                    lbr_ranges(out, file, ranges)?;
                }
                let report =
                    annotate::annotate(counted, ranges.as_ref(), function, &plan.source_paths);
                annotated(out, file, &report)?;
            }
            (View::Coverage | View::Dyninst(_), _) => {
                // Kept whenever these views are asked for (their declarations read them).
                let Some(ranges) = ranges.as_ref() else {
                    continue;
                };
                if !std::mem::replace(&mut ranges_shown, true) {
                    lbr_ranges(out, file, ranges)?;
                }
                match view {
                    View::Dyninst(n) => out.print(|p| p.dyninst(ranges, *n))?,
                    _ => out.print(|p| p.coverage(ranges, plan.top))?,
                }
            }
            (View::Pprof(path), Some(counted)) => {
                pprof(out, file, path, counted, handed.take(), &namers)?;
            }
            #[cfg(feature = "parquet")]
            (View::Parquet(dir), Some(counted)) => parquet_tables(out, file, counted, dir)?,
            (View::Speedscope(path), Some(counted)) => {
                // The profile is speedscope's to let go of: nothing after reads it.
                let profile = std::mem::take(&mut profile);
                speedscope(out, file, path, counted, &namers, profile)?;
            }
            (_, None) => {}
            #[cfg(not(feature = "parquet"))]
            (View::Parquet(_), Some(_)) => {}
        }
    }
    Ok((functions, drawn))
}

/// `/summary`: what the trace holds, per binary and source.
fn summary<P: Printer>(out: &mut Out<'_, P>, plan: &Plan, kept: &Kept) -> Result<(), Error> {
    let Some(summary) = &kept.summary else {
        return Ok(());
    };
    out.print(|p| p.summary(summary, &kept.tables, &kept.symbols, plan.stack_order))
}

/// What `kept` counted, with the call `stacks` given, when it has a summary.
fn counted<'k>(kept: &'k Kept, stacks: &'k StackCounts, order: StackOrder) -> Option<Counted<'k>> {
    kept.summary.as_ref().map(|summary| Counted {
        summary,
        stacks,
        order,
        tables: &kept.tables,
        symbols: &kept.symbols,
    })
}

/// The call stacks by key when `profiled`; the stacks as decoded are kept when they are to
/// be read (`keep`), and else let go of, as they are folded when `profiled`.
fn profile(
    stacks: &mut Option<StackCounts>,
    tables: &Tables,
    order: StackOrder,
    namers: &Namers<'_>,
    profiled: bool,
    keep: bool,
) -> StackProfile {
    match stacks.take() {
        Some(mut decoded) if keep => {
            decoded.let_go_of_index();
            let profile = profiled.then(|| decoded.profile(order, tables, namers));
            *stacks = Some(decoded);
            profile.unwrap_or_default()
        }
        Some(decoded) if profiled => decoded.into_profile(order, tables, namers),
        _ => StackProfile::default(),
    }
}

/// The call stacks as decoded, taken for pprof when no other view and not the caller reads
/// them after the fold: it lets go of them once it has written their samples.
fn handed_to_pprof(
    views: &Views,
    stacks: &mut Option<StackCounts>,
    after: After,
) -> Option<StackCounts> {
    let read_after = views.read_by_others(Kind::Pprof, Reads::STACKS_AFTER) || after.stacks;
    if views.has(Kind::Pprof) && !read_after {
        stacks.take()
    } else {
        None
    }
}

/// Lets go of the summary's call-stack arcs once the views that read them before the fold
/// have (`/summary`, the report), unless a view or the caller reads them after.
fn let_go_of_stack_arcs(views: &Views, summary: &mut Option<Summary>, after: After) {
    if !views.read(Reads::STACK_ARCS_AFTER)
        && !after.summary
        && let Some(summary) = summary
    {
        summary.let_go_of_stack_arcs();
    }
}

/// Lets go of the summary's tables when no view reads them once the call stacks are drawn,
/// and there are call stacks (a flame graph draws one source of samples only for a trace
/// without), unless the caller reads them `after`.
fn let_go_of_samples(views: &Views, kept: &mut Kept, after: After) {
    let drawn = kept.stacks.as_ref().is_some_and(|s| s.unique() > 0);
    if !views.read(Reads::SAMPLES) && drawn && !after.summary {
        kept.summary = None;
    }
}

/// Notes the binaries whose line and inlinee records could not be read, and why.
fn unread_lines<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    tables: &Tables,
    namers: &Namers<'_>,
) -> Result<(), Error> {
    for (progid, problem) in namers.problems() {
        let binary = tables.binary_name(progid);
        let message =
            format!("{binary}: {problem}: its functions are shown without inline frames or lines");
        out.print(|p| p.note(file, &message))?;
    }
    Ok(())
}

/// The samples without call stacks as the views need them (each a stack of one address):
/// the `/functions` lines of every binary and source (for `/functions` and `/html`), and
/// the source kept whole that a flame graph of a trace without call stacks draws. Each
/// source is made and let go in turn (speedscope makes its own, one at a time).
#[derive(Default)]
struct Flat {
    sampled: Vec<BinaryStacks>,
    functions: Vec<functions::FunctionsLine>,
}

fn flat(plan: &Plan, counted: &Counted<'_>, namers: &Namers<'_>, profile: &StackProfile) -> Flat {
    // Under /compare, the views of the two traces together are made in dump/compare.rs.
    let lines = plan.each_trace_reads(Reads::FUNCTIONS);
    let flame = plan.each_trace_reads(Reads::FLAME) && profile.is_empty();
    let drawn = flame
        .then(|| sampled::busiest(sampled::sources(counted.summary)))
        .flatten();
    let keep = |s: SampleKind| Some(s) == drawn;
    let (mut sampled, mut functions) = (Vec::new(), Vec::new());
    sampled::each_sampled(
        counted,
        namers,
        |s| lines || keep(s),
        |b| {
            if lines {
                functions.push(functions::line(&b, plan.top));
            }
            if keep(b.source) {
                sampled.push(b);
            }
        },
    );
    if lines {
        functions = functions::with_stacks(functions, profile, plan.top);
    }
    Flat { sampled, functions }
}

/// What a flame graph draws: its title, folded stacks and note, as [`flame_input`] makes them.
type FlameInput = (String, Vec<(String, u128)>, Option<String>);

/// [`flat`]; and with the report's `label`, what its flame graphs draw when that is the call
/// stacks, made on a second thread meanwhile. Not when pprof is written between, as that
/// would hold the lines through pprof's peak.
fn flat_beside_drawn(
    plan: &Plan,
    counted: &Option<Counted<'_>>,
    namers: &Namers<'_>,
    profile: &StackProfile,
    label: Option<&str>,
) -> (Flat, Option<FlameInput>) {
    let Some(counted) = counted else {
        return (Flat::default(), None);
    };
    let beside = !plan.views.has(Kind::Pprof) && !profile.is_empty() && threads::two_cores();
    let Some(label) = label.filter(|_| beside) else {
        return (flat(plan, counted, namers, profile), None);
    };
    std::thread::scope(|s| {
        let drawn = s.spawn(|| flame_input(label, profile, &[]));
        let flat = flat(plan, counted, namers, profile);
        let drawn = threads::joined(drawn);
        // What the second thread let go of stays in its arena else.
        memory::give_back();
        (flat, Some(drawn))
    })
}

/// `/lines`: the hottest source lines, and what kept a binary from having any.
fn source_lines<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    plan: &Plan,
    counted: &Counted<'_>,
) -> Result<(), Error> {
    let report = lines::lines(counted, plan.top);
    out.print(|p| p.source_lines(&report))?;
    if !report.without_pdb.is_empty() {
        let message = format!(
            "source lines come from a binary's PDB: give /pdb for {}",
            report.without_pdb.join(", ")
        );
        out.print(|p| p.note(file, &message))?;
    }
    for (binary, problem) in &report.problems {
        let message = format!("{binary}: {problem}: some addresses are shown without a line");
        out.print(|p| p.note(file, &message))?;
    }
    Ok(())
}

/// `/callgraph`: who calls whom, per binary (or only the callers and callees of `function`),
/// and what kept a binary from having edges.
fn call_graph<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    plan: &Plan,
    counted: &Counted<'_>,
    function: Option<&str>,
) -> Result<(), Error> {
    let graph = match function {
        None => callgraph::call_graph(counted, plan.top),
        Some(function) => callgraph::around(counted, function, plan.top),
    };
    out.print(|p| p.call_graph(&graph))?;
    if let Some(function) = function
        && graph.binaries.iter().all(|b| b.unique == 0)
    {
        let message = format!("/callgraph:{function}: no edge of the profile calls or leaves it");
        out.print(|p| p.note(file, &message))?;
    }
    for binary in &graph.binaries {
        for why in &binary.missing {
            let message = format!("{}: {why}", binary.name);
            out.print(|p| p.note(file, &message))?;
        }
    }
    Ok(())
}

/// How the LBR records of each binary were read as ranges, before the first view of them:
/// the order used and the share of consistent ranges, or why none could be read.
fn lbr_ranges<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    ranges: &RangeReport,
) -> Result<(), Error> {
    out.print(|p| p.lbr_ranges(ranges))?;
    for b in &ranges.binaries {
        for why in &b.missing {
            let message = format!("{}: {why}", b.name);
            out.print(|p| p.note(file, &message))?;
        }
        if b.missing.is_empty() && b.order.is_none() {
            let message = format!(
                "{}: lbr-order-unknown: of {} ranges, {} are consistent newest first and {} oldest \
                 first; neither reaches {}%, so no range is used",
                b.name,
                b.ranges,
                b.consistent[0],
                b.consistent[1],
                (ranges::ORDER_THRESHOLD * 100.0) as u32,
            );
            out.print(|p| p.note(file, &message))?;
        }
    }
    Ok(())
}

/// `/annotate`: the function's instructions, or a note that no binary has it, and what was
/// missing.
fn annotated<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    report: &AnnotateReport,
) -> Result<(), Error> {
    out.print(|p| p.annotate(report))?;
    for why in &report.missing {
        out.print(|p| p.note(file, why))?;
    }
    if report.functions.is_empty() && report.missing.is_empty() {
        let message = format!(
            "/annotate:{}: no function of the binaries with /pdb has that name",
            report.function
        );
        out.print(|p| p.note(file, &message))?;
    }
    Ok(())
}

/// `/folded`: the call stacks folded by key.
fn folded<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    profile: &StackProfile,
    sampled: &[BinaryStacks],
) -> Result<(), Error> {
    if !profile.is_empty() {
        return out.print(|p| p.folded(&profile.folded_lines()));
    }
    // What the flame graph draws of a trace without call stacks: its busiest source of
    // samples, by function, each under its binary.
    let Some(source) = sampled::busiest(sampled.iter().map(|b| (b.source, b.hits))) else {
        let message = "no samples: nothing to fold";
        return out.print(|p| p.note(file, message));
    };
    let message = format!(
        "no call stacks: the folded lines are {}, by function, each under its binary",
        drawn(source)
    );
    out.print(|p| p.note(file, &message))?;
    out.print(|p| p.folded(&profile::folded_of_binaries(sampled, source)))
}

/// `/flamegraph`: always a file. The call stacks when there are any; else one IP event's
/// samples (the one with the most hits) or the LBR branches' targets, each address's
/// function (and what was inlined there) under its binary; else a picture that says there
/// is nothing to draw.
fn flame_graph<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    plan: &Plan,
    path: &Path,
    profile: &StackProfile,
    sampled: &[BinaryStacks],
) -> Result<(), Error> {
    let label = file.label();
    let (title, folded, note) = flame_input(&label, profile, sampled);
    if let Some(note) = note {
        out.print(|p| p.note(file, &note))?;
    }
    let icicle = plan.views.icicle;
    if let Err(e) = write_file(path, |w| flamegraph::write(w, &title, folded, icicle)) {
        cannot_write(out, file, "flame graph", path, &e)?;
    }
    Ok(())
}

/// What a flame graph of the profile draws, and its title: the call stacks when there are
/// any; else one IP event's samples (the one with the most hits) or the LBR branches'
/// targets, each address's function (and what was inlined there) under its binary; else
/// nothing; with a note saying what was drawn when it is not the call stacks.
fn flame_input(label: &str, profile: &StackProfile, sampled: &[BinaryStacks]) -> FlameInput {
    if !profile.is_empty() {
        return (
            label.to_owned(),
            profile.drawn(flamegraph::DRAWN_PARTS),
            None,
        );
    }
    let Some(source) = sampled::busiest(sampled.iter().map(|b| (b.source, b.hits))) else {
        let note = "no samples: the flame graph says so and shows nothing";
        return (label.to_owned(), Vec::new(), Some(note.to_owned()));
    };
    let drawn = drawn(source);
    (
        format!("{label}: {drawn} (no call stacks)"),
        profile::folded_by_binary(sampled, source, Some(flamegraph::DRAWN_PARTS)),
        Some(format!(
            "no call stacks: the flame graph shows {drawn}, by function"
        )),
    )
}

/// A trace's keys named, for `/compare`: its call stacks, and its samples without call
/// stacks (one address each).
pub(super) struct Named {
    pub profile: StackProfile,
    pub sampled: Vec<BinaryStacks>,
}

/// Names the keys of `kept` as the plan asks (functions with `/pdb`, inline frames).
pub(super) fn named(plan: &Plan, kept: &Kept) -> Named {
    let order = plan.stack_order;
    let Some(counted) = kept.stacks.as_ref().and_then(|s| counted(kept, s, order)) else {
        return Named {
            profile: StackProfile::default(),
            sampled: Vec::new(),
        };
    };
    let (stacks, summary) = (counted.stacks, counted.summary);
    let namers = stacks::namers(stacks, Some(summary), order, &kept.symbols, plan.inline);
    Named {
        profile: stacks.profile(order, &kept.tables, &namers),
        sampled: sampled::sampled(&counted, &namers, |_| true),
    }
}

/// What a differential flame graph draws of BASE and NEW.
pub(super) struct DifferentialInput {
    /// What it shows when it is not the call stacks: `UNHALT_CYCLE samples`.
    pub what: Option<String>,
    /// Each side's folded stacks.
    pub base: Vec<(String, u128)>,
    pub new: Vec<(String, u128)>,
}

/// NEW's call stacks when it has any; else the source without call stacks NEW has most hits
/// of (an IP event or LBR targets), in both traces; else nothing.
pub(super) fn differential_input(base: &Named, new: &Named) -> DifferentialInput {
    if !new.profile.is_empty() {
        return DifferentialInput {
            what: None,
            base: base.profile.folded(),
            new: new.profile.folded(),
        };
    }
    let Some(source) = sampled::busiest(new.sampled.iter().map(|b| (b.source, b.hits))) else {
        return DifferentialInput {
            what: None,
            base: Vec::new(),
            new: Vec::new(),
        };
    };
    DifferentialInput {
        what: Some(drawn(source)),
        // A differential flame graph colours NEW's frames by BASE's: every frame of both.
        base: profile::folded_by_binary(&base.sampled, source, None),
        new: profile::folded_by_binary(&new.sampled, source, None),
    }
}

/// What a flame graph of a source without call stacks shows.
fn drawn(source: SampleKind) -> String {
    match source {
        SampleKind::Lbr => "LBR branch targets".to_owned(),
        other => format!("{} samples", other.name()),
    }
}

/// `/pprof`: the profile written to `path`, its call stacks `handed` over, or else those
/// of `counted`.
fn pprof<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    path: &Path,
    counted: &Counted<'_>,
    handed: Option<StackCounts>,
    namers: &Namers<'_>,
) -> Result<(), Error> {
    let stacks = match handed {
        Some(stacks) => pprof::Stacks::Handed(stacks),
        None => pprof::Stacks::Borrowed(counted.stacks),
    };
    match write_file(path, |w| {
        pprof::write(w, counted, stacks, namers, &file.label())
    }) {
        Ok(written) if written.clamped => {
            let message = "a count above 2^63 - 1, more than a pprof value holds, was \
                           clamped to it in the pprof profile";
            out.print(|p| p.note(file, message))
        }
        Ok(_) => Ok(()),
        Err(e) => cannot_write(out, file, "pprof profile", path, &e),
    }
}

/// Lets go of the summary's tables and the call stacks as decoded, unless the caller reads
/// them `after`: memory alone.
fn let_go_of_counts(kept: &mut Kept, after: After) {
    kept.summary = kept.summary.take().filter(|_| after.summary);
    kept.stacks = kept.stacks.take().filter(|_| after.stacks);
}

/// `/speedscope`: the profile written to `path`; speedscope lets go of each binary's call
/// stacks of `profile` once it has written them.
fn speedscope<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    path: &Path,
    counted: &Counted<'_>,
    namers: &Namers<'_>,
    profile: StackProfile,
) -> Result<(), Error> {
    let written = write_file(path, |w| {
        speedscope::write(w, counted, namers, profile, &file.label())
    });
    if let Err(e) = written {
        cannot_write(out, file, "speedscope file", path, &e)?;
    }
    Ok(())
}

/// `/parquet`: the trace's tables, written under `dir`.
#[cfg(feature = "parquet")]
fn parquet_tables<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    counted: &Counted<'_>,
    dir: &Path,
) -> Result<(), Error> {
    match parquet::write(dir, file.path, counted) {
        Ok(written) => {
            if written.clamped {
                let message = "a count above 10^38 - 1, more than decimal(38,0) holds, was \
                               clamped to it in the Parquet tables";
                out.print(|p| p.note(file, message))?;
            }
            if out.tally.errors > 0 {
                let message = "the trace has errors: its Parquet tables hold what could be decoded";
                out.print(|p| p.note(file, message))?;
            }
            Ok(())
        }
        Err(failed) => cannot_write(out, file, "Parquet table", &failed.path, &failed.error),
    }
}

/// What the report of a profile reads of it but its flame graphs: read of the profile as
/// counted, its call stacks as decoded (their leaves among the source lines), before they
/// are folded and let go of.
struct ReportInput<'p> {
    path: &'p Path,
    label: String,
    matches: Vec<MatchResult<'p>>,
    check: check::CheckReport,
    lines: Option<lines::LinesReport>,
    calls: callgraph::CallGraph,
    ranges: Option<RangeReport>,
    annotated: Option<AnnotateReport>,
    spds: Vec<spdcompare::SpdCompareReport>,
}

/// What `/html` reports of `kept` and its call `stacks`, when it is asked for; under
/// `/compare` the report is of the two traces (dump/compare.rs).
fn report_input<'p>(
    plan: &'p Plan,
    file: &FileInfo<'_>,
    kept: &Kept,
    stacks: &StackCounts,
) -> Option<ReportInput<'p>> {
    let path = plan
        .views
        .path(Kind::Html)
        .filter(|_| plan.of_each_trace(Kind::Html))?;
    let counted = counted(kept, stacks, plan.stack_order)?;
    let matches = super::kept::match_results(plan, &kept.tables);
    let check = check::check(counted.summary, &kept.tables, &kept.symbols, &matches);
    let lines = (!kept.symbols.is_empty()).then(|| lines::lines(&counted, plan.top));
    let calls = callgraph::call_graph(&counted, plan.top);
    let ranges = kept
        .lbr
        .as_ref()
        .map(|lbr| ranges::ranges(lbr, &kept.tables, &kept.symbols));
    let annotated = ranges
        .as_ref()
        .and_then(|r| hottest_annotated(plan, &counted, r));
    let spds = spdcompare::of_matches(
        counted.summary,
        &kept.tables,
        &kept.symbols,
        &plan.matches,
        plan.top,
    );
    Some(ReportInput {
        path,
        label: file.label().into_owned(),
        matches,
        check,
        lines,
        calls,
        ranges,
        annotated,
        spds,
    })
}

/// The most instructions a function may have for the report to show it annotated: a page's
/// worth.
const ANNOTATED_AT_MOST: usize = 200;

/// The hottest function by the LBR ranges (of the first binary read under an order),
/// annotated as `/annotate` does, when it is short enough to read on the report's page.
fn hottest_annotated(
    plan: &Plan,
    counted: &Counted<'_>,
    ranges: &RangeReport,
) -> Option<AnnotateReport> {
    let (binary, hottest) = ranges
        .binaries
        .iter()
        .filter(|b| b.order.is_some())
        .find_map(|b| Some((b, b.functions.first()?)))?;
    let name = format!("{}!{}", binary.name, hottest.name);
    let report = annotate::annotate(counted, Some(ranges), &name, &plan.source_paths);
    let short = report.functions.iter().map(|f| f.rows.len()).sum::<usize>() <= ANNOTATED_AT_MOST;
    (short && !report.functions.is_empty()).then_some(report)
}

/// `/html`: the report of the profile, its flame graphs drawn of the `(title, folded)`
/// stacks, written to its path.
fn report<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    input: ReportInput<'_>,
    (flame_title, folded): (&str, Vec<(String, u128)>),
    tables: &Tables,
    functions: &[functions::FunctionsLine],
) -> Result<(), Error> {
    let written = write_file(input.path, |w| {
        let (flame, icicle) = flamegraph::both(flame_title, folded)?;
        let report = html::Report {
            label: &input.label,
            tables,
            tally: out.tally,
            diagnostics: &out.first,
            matches: &input.matches,
            check: &input.check,
            functions,
            lines: input.lines.as_ref(),
            calls: &input.calls,
            ranges: input.ranges.as_ref(),
            annotated: input.annotated.as_ref(),
            spds: &input.spds,
            flame: &flame,
            icicle: &icicle,
            flame_title,
        };
        html::write(w, &report)
    });
    if let Err(e) = written {
        cannot_write(out, file, "HTML report", input.path, &e)?;
    }
    Ok(())
}

/// Creates `path` and writes it with `write`, through a buffer.
pub(super) fn write_file<T>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<T>,
) -> io::Result<T> {
    let mut w = BufWriter::new(File::create(path)?);
    let t = write(&mut w)?;
    w.flush()?;
    Ok(t)
}

/// Reports a file of ours that could not be written: an error of the run.
fn cannot_write<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    what: &str,
    path: &Path,
    e: &io::Error,
) -> Result<(), Error> {
    out.fail(file, &cannot_write_message(what, path, e))
}

/// `cannot write the flame graph PATH: why`.
pub(super) fn cannot_write_message(what: &str, path: &Path, e: &io::Error) -> String {
    format!(
        "cannot write the {what} {}: {}",
        path.display(),
        crate::input::describe(e)
    )
}
