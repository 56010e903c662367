//! Analysis: what a trace's samples add up to.
//!
//! Each analysis takes the decoded records one at a time and keeps a table per unique key
//! (an RVA, an arc, a stack), never anything per sample: [`summary`] counts per binary and
//! source, with `counts` as its hash tables and `collect` spreading the work over two
//! threads; `stacks` keeps the unique call stacks (one after another, in `slices`), `fold`
//! folds them by key into a `profile`, which `functions` turns into inclusive and exclusive
//! hits, and `sampled` makes stacks of one address of the samples without any; [`check`]
//! judges whether a trace is fit for SPDConvert, and `compare` how two traces differ;
//! `lines` finds the hottest source lines; `graphs` lays the image's and the SPD's graphs
//! out as the rows of `/parquet`'s blocks and edges; [`lbr`] is LBR as SPGO reads it, as branch
//! sequences, into instruction counts and coverage, and [`spd`] a trace beside an SPD and
//! an SPD alone. `keys` is the one rule for what an address is
//! attributed to and how that is named. `share` splits a profile's binaries between two
//! threads, and `memory` hands back what a helper thread freed.
//!
//! An analysis produces a report of plain values; printing it is the output layer's work.

pub mod check;
pub mod compare;
mod counted;
pub(crate) mod fold;
pub mod functions;
pub(crate) mod graphs;
pub(crate) mod joined;
pub(crate) mod keys;
pub mod lbr;
pub mod lines;
pub mod named;
pub(crate) mod profile;
pub(crate) mod sampled;
pub mod spd;
pub(crate) mod stacks;
pub mod summary;

pub(crate) use counted::{Counted, share};
