//! Analysis: what a trace's samples add up to.
//!
//! Each analysis takes the decoded records one at a time and keeps a table per unique key
//! (an RVA, an arc, a stack), never anything per sample: [`summary`] counts per binary and
//! event kind, with `counts` as its hash tables and `collect` spreading the work over two
//! threads; [`stacks`] keeps the unique call stacks and folds them by function, which
//! [`functions`] turns into inclusive and exclusive hits; [`check`] judges whether a trace is
//! fit for SPDConvert, and [`compare`] how two traces differ.
//! An analysis produces a report of plain values; printing it is the output layer's work.

pub mod check;
pub(crate) mod collect;
pub mod compare;
pub(crate) mod counts;
pub mod functions;
pub mod stacks;
pub mod summary;
