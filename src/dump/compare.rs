//! `/compare BASE NEW`: two traces read apart, then how NEW differs from BASE (SPEC 9.6).

use std::io;

use super::{Collected, Options, Outcome, RunStatus, Status, dump_file, dump_keeping};
use crate::analysis::compare::{self, Side};
use crate::input::Input;
use crate::output::{FileInfo, Printer};

/// `/compare BASE NEW`: reads both traces (their sections and diagnostics as asked), then
/// prints how NEW differs from BASE. Returns the run's status: with `/min-overlap:F`, a
/// paired source whose overlap is below F makes it `Errors`.
pub fn compare<P: Printer>(
    printer: &mut P,
    base: (&FileInfo<'_>, Result<Input, String>),
    new: (&FileInfo<'_>, Result<Input, String>),
    opts: &Options,
) -> io::Result<Status> {
    let mut status = RunStatus::default();
    let mut sides = Vec::new();
    let new_file = new.0;
    for (i, (file, input)) in [base, new].into_iter().enumerate() {
        let (outcome, collected) = match input {
            Ok(input) => dump_keeping(printer, file, input, opts)?,
            Err(message) => (dump_file(printer, file, Err(message), opts, false)?, None),
        };
        if i == 0 {
            printer.end_file(false)?;
        }
        status.add(&outcome, opts);
        if let Outcome::OutputClosed(_) = outcome {
            return Ok(status.status());
        }
        sides.push(collected);
    }
    if let [Some(base), Some(new)] = &sides[..] {
        fn side(c: &Collected) -> Side<'_> {
            Side {
                summary: &c.summary,
                tables: &c.tables,
                symbols: &c.symbols,
            }
        }
        let top = opts.summary.unwrap_or(10);
        let report = compare::compare(&side(base), &side(new), top);
        printer.compare(new_file, &report)?;
        if opts.min_overlap.is_some_and(|min| report.below(min)) {
            status.add_status(Status::Errors);
        }
    }
    printer.end_file(true)?;
    Ok(status.status())
}
