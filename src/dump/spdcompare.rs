//! `/compare TRACE SPD`: the trace read as any trace is, then its function shares beside the
//! SPD's, for the binary the SPD matches (docs/output.md, "A trace beside an SPD").

use std::io;
use std::path::Path;

use super::many::open_one;
use super::trace::Within;
use super::{Outcome, Status, Traces};
use crate::analysis::spdcompare;
use crate::format::progid::registry_form;
use crate::image::ident::Kind;
use crate::image::matching::{self, MatchFile, MatchStatus};
use crate::output::compared::SpdCompared;
use crate::output::{FileInfo, Printer};
use crate::views::Plan;
use crate::views::kept::Kept;

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
        .filter(|d| d.compared.together())
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
    Ok(Status::Clean)
}
