//! The driver: walks a [`Plan`] over the traces of a run, into a printer
//! ([`Output`](crate::output::Output)).
//!
//! ```text
//! plan.rs      what a run does, decided once: sections, views, verdicts, shape; what the
//!              decoder must count; which combinations conflict
//! view.rs      each view declared once: what it reads, where it writes, what it is
//!              under /merge and /compare
//! run.rs       run(): by the plan's shape,
//!   many.rs      Each: every trace in argument order (on every core when little is printed)
//!   merge.rs     Merged: every trace, then the views of all of them as one profile
//!   compare.rs   Compared: BASE and NEW, then how NEW differs
//! trace.rs     one trace: header and tables, its sections, the stream decoded once into
//!              the printer and the counters the plan needs, its views, its verdicts
//! kept.rs      what a trace's counters counted, kept for its views (and past it)
//! views.rs     the walk of a profile's views, in the order they are shown
//! traces.rs, outcome.rs, out.rs
//!              the traces of a run, how each ended, what was reported of the one at hand
//! ```
//!
//! The plan says what runs; the driver never looks at options. A trace's own problems are
//! reported through the printer and its [`Outcome`]; only output that cannot be written
//! ends a run early, and a reader that went away (a closed pipe) ends it quietly.

mod compare;
mod kept;
mod many;
mod merge;
mod out;
mod outcome;
mod plan;
mod run;
mod spdcompare;
mod spdnames;
mod symbols;
mod trace;
mod traces;
mod view;
mod views;

use out::Out;
pub use out::printer;
pub use outcome::{Outcome, Ran, Status};
pub use plan::{Conflict, DEFAULT_TOP, Plan, Sections, Shape};
pub use run::{RunError, identities, run};
pub use traces::Traces;
pub use view::{Compared, Declaration, Kind, Merged, Reads, View, Views, Writes};
