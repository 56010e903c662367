//! The driver: walks a [`Plan`] over the traces of a run, into a printer
//! ([`Output`](crate::output::Output)).
//!
//! ```text
//! run.rs       run(): by the plan's shape,
//!   many.rs      Each: every trace in argument order (on every core when little is printed)
//!   merge.rs     Merged: every trace, then the views of all of them as one profile
//!   compare.rs   Compared: BASE and NEW, then how NEW differs, each view of the two its part
//!   spdcompare.rs  Compared with an SPD as NEW: the trace's functions beside the SPD's
//! trace.rs     one trace: header and tables, its sections, the stream decoded once into
//!              the printer and the counters the plan needs, its views, its verdicts
//! build.rs     the /pdb and /image files, attached to the binaries they fit
//! symbols.rs   what the /symbols path finds; spdnames.rs: names from a /match SPD
//! views.rs     the walk of a profile's views, in the order of the registry
//! traces.rs, outcome.rs
//!              the traces of a run, how each ended
//! ```
//!
//! The plan says what runs; the driver never looks at options. A trace's own problems are
//! reported through the printer and its [`Outcome`]; only output that cannot be written
//! ends a run early, and a reader that went away (a closed pipe) ends it quietly.

mod build;
mod compare;
mod etl;
mod many;
mod merge;
mod outcome;
mod run;
mod spd;
mod spdcompare;
mod spdnames;
mod symbols;
mod trace;
mod traces;
mod views;

use crate::output::Out;
use crate::views::Plan;
pub use outcome::{Outcome, Ran, Status};
pub use run::{RunError, identities, run};
pub use spd::{compare_spds, show as show_spd};
pub use traces::Traces;
