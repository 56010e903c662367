//! spddump's views of an SPD (a Sample Profile Database): SPDDump's `/header`, `/module`,
//! `/symbol`, `/func`, `/funcid`, `/cg`, `/fg`, `/coverage` and `/dyninst`, and `/compare` of two, each in a module
//! of its own that declares it, holds its option rows and shows it, in text and in JSON
//! Lines, listed once in the registry.
//!
//! ```text
//! registry.rs   every view, in the order they are shown: SpdView, SpdKind, the option rows
//! declare.rs    what a view declares of itself
//! shown.rs      where the views of one SPD write, and what they read
//! lines.rs      what the views share: a function's line, its callees, its flow graph
//! header.rs ... funcid.rs
//!               the views of one SPD
//! compare.rs    the view of two: OLD and NEW compared
//! ```
//!
//! Nothing of the function table is shown before all its checks passed; the identity
//! (section 10's checks) is shown first, so that a file whose table fails still says whose
//! it is. The module block is read once; each view walks the functions it needs, one at a
//! time, and `/fg` writes each block's line as it reads it.

pub mod cg;
pub mod compare;
pub mod coverage;
mod declare;
pub mod dyninst;
pub mod fg;
pub mod func;
pub mod funcid;
pub mod header;
mod lines;
pub mod module;
mod registry;
mod shown;
pub mod symbol;

pub use declare::SpdDeclaration;
pub(crate) use lines::list_functions;
pub(crate) use registry::{SpdAsked, SpdRow, rows};
pub use registry::{SpdKind, SpdView, SpdViews};
pub use shown::SpdFailure;
pub(crate) use shown::{Paired, Shown};
