//! A run: the plan walked over the traces by its shape, into a printer.

use std::io;

use super::outcome::{Ran, Status};
use super::traces::Traces;
use super::{compare, many, merge};
use crate::image::matching::MatchFile;
use crate::output::Printer;
use crate::output::verdicts::Identities;
use crate::views::{Conflict, Plan, Shape};

/// Why a run could not be carried out.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The plan conflicts with itself or with the number of traces ([`Plan::conflict`]):
    /// nothing was read.
    #[error(transparent)]
    Conflict(#[from] Conflict),
    /// The output could not be written (a reader that went away is no error:
    /// [`Ran::output_closed`]).
    #[error(transparent)]
    Write(#[from] io::Error),
}

/// Runs `plan` over `traces` into `printer`, and flushes it.
///
/// # Errors
///
/// Only output that cannot be written ends a run early ([`RunError::Write`]); a reader that
/// went away ends it quietly ([`Ran::output_closed`]). A plan that conflicts with itself or
/// with the number of traces is refused before anything is read ([`RunError::Conflict`]).
pub fn run<P: Printer>(printer: &mut P, plan: &Plan, traces: &Traces<'_>) -> Result<Ran, RunError> {
    if let Some(conflict) = plan.conflict(traces.len()) {
        return Err(conflict.into());
    }
    let mut ran = Ran::new(plan);
    let done = match plan.shape {
        Shape::Each => {
            many::each(printer, plan, traces, true, |outcome, _| ran.add(outcome)).map(drop)
        }
        Shape::Merged => merge::merge(printer, plan, traces, &mut ran),
        Shape::Compared { min_overlap } => compare::compare(printer, plan, traces, min_overlap)
            .map(|(outcomes, status)| {
                outcomes.into_iter().for_each(|o| ran.add(o));
                ran.add_status(status);
            }),
    }
    .and_then(|()| printer.flush());
    match done {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ran.closed = true,
        done => done?,
    }
    Ok(ran)
}

/// Prints the identities of the files given to `/match` when no trace is: what a user
/// compares with `SPDDump /header`. The status is `Errors` when one has no identity.
pub fn identities<P: Printer>(printer: &mut P, files: &[MatchFile]) -> io::Result<Status> {
    printer.show(&Identities(files))?;
    printer.flush()?;
    Ok(if files.iter().all(|f| f.identity.is_ok()) {
        Status::Clean
    } else {
        Status::Errors
    })
}
