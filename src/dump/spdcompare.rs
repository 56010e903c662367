//! `/compare TRACE SPD`: the trace read as any trace is, its LBR records mapped onto the
//! SPD's blocks as it is decoded; then its function shares beside the SPD's, and its blocks
//! beside the SPD's (with the views of a trace beside an SPD: `/blocks`), for the binary
//! the SPD matches (docs/output.md, "A trace beside an SPD").

use std::io;
use std::path::Path;

use super::many::open_one;
use super::trace::Within;
use super::{Outcome, Status, Traces};
use crate::analysis::spd::blocks::{BlockSource, TraceOnBlocks};
use crate::analysis::spd::compare as spdcompare;
use crate::format::progid::registry_form;
use crate::image::ident::Kind;
use crate::image::matching::{self, MatchFile, MatchStatus};
use crate::image::spdprofile::SpdProfile;
use crate::output::compared::SpdCompared;
use crate::output::spdblocks::SpdBlocksShown;
use crate::output::{FileInfo, Printer};
use crate::views::kept::Kept;
use crate::views::{Beside, Compared, Plan};

/// The second file of `/compare`, read as an SPD when it is one (by its content): then the
/// run sets the first trace beside it instead of comparing two traces.
pub(super) fn spd_given(traces: &Traces<'_>) -> Option<MatchFile> {
    let path = traces.paths.get(1).filter(|p| *p != "-")?;
    let file = MatchFile::read(Path::new(path));
    matches!(&file.identity, Ok(id) if id.kind == Kind::Spd).then_some(file)
}

/// Dumps the trace as the plan asks, then prints its functions beside `spd`'s.
pub(super) fn beside<P: Printer>(
    printer: &mut P,
    plan: &Plan,
    traces: &Traces<'_>,
    spd: &MatchFile,
    min_overlap: Option<f64>,
) -> io::Result<(Vec<Outcome>, Status)> {
    let within = Within {
        last: false,
        alone: false,
    };
    let plan = &Plan {
        beside: Some(spd.clone()),
        ..plan.clone()
    };
    let (outcome, kept) = open_one(printer, traces.paths, 0, traces.open(0), plan, within)?;
    if matches!(outcome, Outcome::OutputClosed(_)) {
        return Ok((vec![outcome], Status::Clean));
    }
    let file = FileInfo {
        path: &traces.paths[0],
        size: None,
    };
    let unmade = plan
        .views
        .declarations()
        .filter(|d| d.compared.together() && d.compared != Compared::BesideSpd)
        .map(|d| format!("/{}", d.name))
        .chain(min_overlap.map(|_| "/min-overlap".to_owned()))
        .collect::<Vec<_>>();
    if !unmade.is_empty() {
        let message = format!(
            "{} (of two traces) not made against the SPD {}",
            unmade.join(", "),
            spd.path
        );
        printer.note(&file, &message)?;
    }
    let status = match kept {
        Some(kept) => set_beside(printer, plan, &file, &kept, spd)?,
        None => Status::Clean,
    };
    Ok((vec![outcome], status))
}

/// Prints the trace's functions beside the SPD's, or the error that says why it cannot.
fn set_beside<P: Printer>(
    printer: &mut P,
    plan: &Plan,
    file: &FileInfo<'_>,
    kept: &Kept,
    spd: &MatchFile,
) -> io::Result<Status> {
    let fail =
        |printer: &mut P, message: String| printer.error(file, &message).map(|()| Status::Errors);
    let (Ok(id), Some(read)) = (&spd.identity, &spd.spd) else {
        return Ok(Status::Clean);
    };
    let profile = match read {
        Ok(profile) => profile,
        Err(e) => return fail(printer, format!("{}: {e}", spd.path)),
    };
    let verdict = matching::judge(id, &kept.tables);
    let progid = match (verdict.status, verdict.progid) {
        (MatchStatus::Match, Some(progid)) => progid,
        (status, _) => {
            let message = format!(
                "{} is for {} {{{}}} age {} (inferred), which matches no program ID of this \
                 trace ({status}): nothing to set beside it",
                spd.path,
                id.binary(),
                registry_form(&id.guid),
                id.age
            );
            return fail(printer, message);
        }
    };
    let Some(summary) = &kept.summary else {
        return Ok(Status::Clean);
    };
    let symbols = match kept.symbols.get(Some(progid)) {
        Some(symbols) => symbols,
        None => &profile.symbols,
    };
    let mut report = spdcompare::compare(summary, symbols, progid, profile, plan.top);
    report.spd = spd.path.clone();
    report.binary = kept.tables.binary_name(progid);
    printer.show(&SpdCompared {
        file,
        report: &report,
    })?;
    on_blocks(printer, plan, file, kept, (progid, spd, profile))
}

/// The trace's samples on the SPD's blocks, beside the SPD's, then each view of a trace
/// beside an SPD.
fn on_blocks<P: Printer>(
    printer: &mut P,
    plan: &Plan,
    file: &FileInfo<'_>,
    kept: &Kept,
    (progid, spd, profile): (u16, &MatchFile, &SpdProfile),
) -> io::Result<Status> {
    if let Some((a, b, at)) = profile.blocks.overlap() {
        let name = |i: usize| profile.functions[i].name.as_str();
        let message = format!(
            "{}: the code of {} and of {} overlap at RVA {at:#X}: its blocks are no map of \
             the binary's code, and the trace is not set beside them",
            spd.path,
            name(a),
            name(b)
        );
        printer.error(file, &message)?;
        return Ok(Status::Errors);
    }
    let on = TraceOnBlocks::new(
        kept.summary.as_ref(),
        kept.records.blocks.as_ref(),
        progid,
        profile,
    );
    let mut report = on.report(plan.top);
    report.spd = spd.path.clone();
    report.progid = progid;
    report.name = kept.tables.binary_name(progid);
    if let Some((ranges, [newest, oldest])) = report.unordered {
        let message = format!(
            "lbr-order-unknown: of {ranges} LBR ranges of progid {progid}, {newest} are \
             consistent on the SPD's blocks newest first and {oldest} oldest first (90% needed); \
             {}",
            match report.source {
                BlockSource::Ip(kind) => format!("its {} samples are used", kind.name()),
                _ => "it has no IP samples to use instead".to_owned(),
            }
        );
        printer.note(file, &message)?;
    }
    printer.show(&SpdBlocksShown {
        file,
        report: &report,
    })?;
    let beside = Beside {
        file,
        spd_path: &spd.path,
        spd: profile,
        on: &on,
    };
    let mut status = Status::Clean;
    let views = plan.views.iter();
    for view in views.filter(|v| v.kind().declaration().compared == Compared::BesideSpd) {
        if view.beside(&beside, printer)? {
            status = Status::Errors;
        }
    }
    Ok(status)
}
