//! The walk of a profile's views, in the order of the registry ([`Kind`]): what the views
//! read is made once, before the first view that reads it, and let go of once no view
//! still to come reads it, as their declarations say. A profile is one trace's counts, or
//! several traces' merged; the views read it the same way.
//!
//! ```text
//! first       the views that read the counts before anything is let go of (/summary)
//! names       every address the views name, looked up once per binary
//! ranges      the LBR records read as branch sequences
//! report      the sections of the HTML report made of the counts as they are
//! fold        the call stacks folded by key; the decoded ones kept only when read after
//! flat        the samples without call stacks, and the report's flame graph beside them
//! in order    every other view; the report last, in the room the others gave back
//! ```

use crate::analysis::keys::Namers;
use crate::analysis::profile::StackProfile;
use crate::analysis::stacks::{self, StackCounts};
use crate::analysis::{functions, lbr::ranges, sampled};
use crate::engine::{memory, threads};
use crate::format::error::Error;
use crate::format::record::SampleKind;
use crate::format::stackorder::StackOrder;
use crate::format::tables::Tables;
use crate::output::{FileInfo, Out, Printer};
use crate::views::flamegraph::flame_input;
use crate::views::kept::Kept;
use crate::views::profile::{After, FlameInput, Flat};
use crate::views::{Kind, Plan, Profile, Reads, Section, View, When};

/// Prints and writes the views of the profile `kept`, named `file`, in the order they are
/// shown. What no view after needs and the caller does not read `after` is let go of as
/// soon as it can be.
pub(super) fn show<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    plan: &Plan,
    kept: &mut Kept,
    after: After,
) -> Result<(), Error> {
    let counts = (kept.summary.take(), std::mem::take(&mut kept.records));
    let tables = (&kept.tables, &kept.symbols);
    let mut profile = Profile::new(file, plan.settings(), tables, counts, after);
    let walked = walk(out, plan, &mut profile);
    // What the views did not let go of is the caller's.
    kept.summary = profile.summary.take();
    kept.records = std::mem::take(&mut profile.records);
    unable(out, file, plan, walked?)
}

/// Says what kept views from running (an input not given): as errors when no other view
/// of the profile, and nothing else the plan prints of it, showed anything (`shown` views
/// ran); else as notes, as what the others show is the answer.
fn unable<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    plan: &Plan,
    shown: usize,
) -> Result<(), Error> {
    let alone = shown == 0 && !plan.shows_besides_views();
    for message in std::mem::take(&mut out.unable) {
        match alone {
            true => out.fail(file, &message)?,
            false => out.print(|p| p.note(file, &message))?,
        }
    }
    Ok(())
}

/// Shows `view` of `profile`; whether it ran (it kept no reason it could not).
fn ran<P: Printer>(
    view: &View,
    profile: &mut Profile<'_>,
    out: &mut Out<'_, P>,
) -> Result<bool, Error> {
    let before = out.unable.len();
    view.show(profile, out)?;
    Ok(out.unable.len() == before)
}

/// The steps of [`show`] on `profile`; how many views ran.
fn walk<P: Printer>(
    out: &mut Out<'_, P>,
    plan: &Plan,
    profile: &mut Profile<'_>,
) -> Result<usize, Error> {
    let views = &plan.views;
    let first = |when: When| when == When::First;
    let mut shown = 0;
    for view in views.iter().filter(|v| first(v.kind().declaration().when)) {
        shown += usize::from(ran(view, profile, out)?);
    }
    if views.declarations().all(|d| first(d.when)) {
        return Ok(shown);
    }
    let_go_of_samples(plan, profile);
    profile.namers = namers(plan, profile);
    unread_lines(out, profile)?;
    let (tables, symbols) = (profile.tables, profile.symbols);
    let lbr = &mut profile.records.lbr;
    profile.ranges = lbr
        .as_ref()
        .filter(|_| plan.each_trace_reads(Reads::LBR_RECORDS))
        .map(|lbr| ranges::ranges(lbr, tables, symbols));
    // Read as ranges once; only the caller reads the records after.
    if !profile.after.reads(Reads::LBR_RECORDS) {
        *lbr = None;
    }
    gather(plan, profile, Section::BeforeFold);
    if !views.read_from(When::InOrder, Reads::STACK_ARCS)
        && !profile.after.summary
        && let Some(summary) = &mut profile.summary
    {
        summary.let_go_of_stack_arcs();
    }
    // The views that read the call stacks as decoded after the fold, and the caller, keep
    // them; the others read the profile by key.
    let keep = views.read_from(When::InOrder, Reads::STACKS) || profile.after.reads(Reads::STACKS);
    let profiled = views.read(Reads::PROFILE);
    profile.folded = fold(
        &mut profile.records.stacks,
        (tables, plan.stack_order),
        &profile.namers,
        profiled,
        keep,
    );
    let label = profile.parts.is_some().then(|| profile.file.label());
    let (flat, drawn) = flat_beside_drawn(plan, profile, label.as_deref());
    (profile.flat, profile.drawn) = (flat, drawn);
    gather(plan, profile, Section::Walked);
    // The report's flame graphs are drawn of what is made here once the views that are a
    // run's memory peak are done (pprof), before the profile is handed to speedscope,
    // unless made beside the flat profiles.
    let peak = Kind::ALL.into_iter().filter(|k| k.declaration().peak).max();
    for view in views.iter().filter(|v| !first(v.kind().declaration().when)) {
        let kind = view.kind();
        if profile.parts.is_some() && profile.drawn.is_none() && Some(kind) > peak {
            let label = profile.file.label();
            profile.drawn = Some(flame_input(&label, &profile.folded, &profile.flat.sampled));
        }
        if plan.of_each_trace(kind) {
            profile.stacks_last = !profile.after.reads(Reads::STACKS)
                && !views.iter().any(|v| {
                    let d = v.kind().declaration();
                    v.kind() > kind && d.when >= When::InOrder && d.reads.any(Reads::STACKS)
                });
            shown += usize::from(ran(view, profile, out)?);
        }
    }
    Ok(shown)
}

/// Lets go of the summary's tables when no view reads them once the call stacks are drawn,
/// and there are call stacks (a flame graph draws one source of samples only for a trace
/// without), unless the caller reads them after.
fn let_go_of_samples(plan: &Plan, profile: &mut Profile<'_>) {
    let drawn = profile
        .records
        .stacks
        .as_ref()
        .is_some_and(|s| s.unique() > 0);
    if !plan.views.read_from(When::BeforeFold, Reads::SAMPLES) && drawn && !profile.after.summary {
        profile.summary = None;
    }
}

/// Every address the views name, looked up once per binary.
fn namers<'w>(plan: &Plan, profile: &Profile<'w>) -> Namers<'w> {
    let none = StackCounts::default();
    let named = plan.views.read(Reads::INLINE_NAMES);
    stacks::namers(
        profile.records.stacks.as_ref().unwrap_or(&none),
        profile.summary.as_ref(),
        plan.stack_order,
        profile.symbols,
        plan.inline && named,
    )
}

/// Notes the binaries whose line and inlinee records could not be read, and why.
fn unread_lines<P: Printer>(out: &mut Out<'_, P>, profile: &Profile<'_>) -> Result<(), Error> {
    for (progid, problem) in profile.namers.problems() {
        let binary = profile.tables.binary_name(progid);
        let message =
            format!("{binary}: {problem}: its functions are shown without inline frames or lines");
        out.print(|p| p.note(profile.file, &message))?;
    }
    Ok(())
}

/// Adds each view's section of the report made at `when` to the report's parts, when the
/// report is asked for of this profile: the view that writes it starts them, before the
/// fold.
fn gather(plan: &Plan, profile: &mut Profile<'_>, when: Section) {
    if when == Section::BeforeFold && profile.counted().is_some() {
        profile.parts = plan
            .views
            .iter()
            .filter(|v| plan.of_each_trace(v.kind()))
            .find_map(View::report);
    }
    let Some(mut parts) = profile.parts.take() else {
        return;
    };
    for kind in Kind::ALL
        .into_iter()
        .filter(|k| k.declaration().section == when)
    {
        kind.section(&plan.views, profile, &mut parts);
    }
    profile.parts = Some(parts);
}

/// The call stacks by key when `profiled`; the stacks as decoded are kept when they are to
/// be read (`keep`), and else let go of, as they are folded when `profiled`.
fn fold(
    stacks: &mut Option<StackCounts>,
    (tables, order): (&Tables, StackOrder),
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

/// The samples without call stacks as the views need them (each a stack of one address):
/// the `/functions` lines of every binary and source (for `/functions` and the report), and
/// the source kept whole that a flame graph of a trace without call stacks draws. Each
/// source is made and let go in turn (speedscope makes its own, one at a time).
fn flat(plan: &Plan, profile: &Profile<'_>) -> Flat {
    let Some(counted) = profile.counted() else {
        return Flat::default();
    };
    // Under /compare, the views of the two traces together are made in dump/compare.rs.
    let lines = plan.each_trace_reads(Reads::FUNCTIONS);
    let flame = plan.each_trace_reads(Reads::FLAME) && profile.folded.is_empty();
    let drawn = flame
        .then(|| sampled::busiest(sampled::sources(counted.summary)))
        .flatten();
    let keep = |s: SampleKind| Some(s) == drawn;
    let (mut sampled, mut functions) = (Vec::new(), Vec::new());
    sampled::each_sampled(
        &counted,
        &profile.namers,
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
        functions = functions::with_stacks(functions, &profile.folded, plan.top);
    }
    Flat { sampled, functions }
}

/// [`flat`]; and with the report's `label`, what its flame graphs draw when that is the call
/// stacks, made on a second thread meanwhile. Not when a view that is a run's memory peak
/// is written between, as that would hold the lines through its peak.
fn flat_beside_drawn(
    plan: &Plan,
    profile: &Profile<'_>,
    label: Option<&str>,
) -> (Flat, Option<FlameInput>) {
    if profile.counted().is_none() {
        return (Flat::default(), None);
    }
    let beside = !plan.views.peak() && !profile.folded.is_empty() && threads::two_cores();
    let Some(label) = label.filter(|_| beside) else {
        return (flat(plan, profile), None);
    };
    std::thread::scope(|s| {
        let drawn = s.spawn(|| flame_input(label, &profile.folded, &[]));
        let flat = flat(plan, profile);
        let drawn = threads::joined(drawn);
        // What the second thread let go of stays in its arena else.
        memory::give_back();
        (flat, Some(drawn))
    })
}
