//! The views of a profile: what each option asks to be shown or written of a trace, each
//! in a module of its own that declares it, holds its option rows, makes its report of what
//! was counted and renders it (text, JSON Lines, its section of the HTML report).
//!
//! ```text
//! registry.rs   every view, in the order they are shown: View, Kind, the option rows
//! declare.rs    what a view declares of itself (the Declared trait, Declaration)
//! option.rs     an option row: name, value, help, what it sets
//! settings.rs   what the views read of the run's options besides their own
//! plan.rs       what a run does: sections, views, verdicts, shape; what the decoder counts
//!               for it, and which combinations are refused, derived from the declarations
//! profile.rs    what the views of one profile read while they are shown
//! compared.rs   what the views of two traces together read
//! beside.rs     what the views of a trace beside an SPD read
//! report.rs     the parts of the HTML report the views give
//! summary.rs ... html.rs
//!               the views, one module each; ranges.rs is what the LBR views share,
//!               unnamed.rs what those that take a function's name say of a name no
//!               function bears
//! ```
//!
//! A new view is its module, its line in the registry (`views!` in `registry.rs`) (a view without its declaration,
//! its options or its `show` does not compile), its JSON lines' schema and glossary rows,
//! and its tests. The walk of a profile's views, `/merge`, `/compare`, the HTML report,
//! the command line and `/help` take it from the registry.

pub mod annotate;
pub(crate) mod beside;
pub mod blocks;
pub mod callgraph;
pub mod cfg;
pub(crate) mod compared;
pub mod coverage;
mod declaration;
mod declare;
pub mod dyninst;
mod file;
pub mod flamegraph;
pub mod folded;
pub mod functions;
pub mod html;
pub(crate) mod kept;
pub mod lines;
mod option;
pub mod parquet;
mod plan;
pub mod pprof;
pub(crate) mod profile;
mod ranges;
mod registry;
mod report;
mod settings;
pub mod spd;
pub mod speedscope;
pub mod summary;
mod unnamed;

pub(crate) use beside::Beside;
pub(crate) use compared::Both;
pub use declaration::{Compared, Declaration, Merged, Reads, Section, When, Writes};
pub(crate) use declare::Declared;
pub(crate) use option::{About, Group, Opt, Set, Takes, text};
pub use plan::{Conflict, DEFAULT_TOP, Files, Plan, Sections, Shape, Unreadable};
pub(crate) use profile::Profile;
pub(crate) use registry::{Apply, Asked, Row, rows};
pub use registry::{Kind, View, Views};
pub(crate) use report::Parts;
pub(crate) use settings::Settings;
