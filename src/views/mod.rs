//! The views of a profile: what each option asks to be shown or written of a trace, each
//! in a module of its own that declares it, holds its option rows, makes its report of what
//! was counted and renders it (text, JSON Lines, its section of the HTML report).
//!
//! ```text
//! mod.rs        the registry: every view, in the order they are shown
//! declare.rs    what a view declares of itself (the Declared trait, Declaration)
//! option.rs     an option row: name, value, help, what it sets
//! set.rs        the views a run asks for
//! plan.rs       what a run does: sections, views, verdicts, shape; what the decoder counts
//!               for it, and which combinations are refused, derived from the declarations
//! profile.rs    what the views of one profile read while they are shown
//! compared.rs   what the views of two traces together read
//! report.rs     the parts of the HTML report the views give
//! summary.rs ... html.rs
//!               the views, one module each; ranges.rs is what the LBR views share
//! ```
//!
//! A new view is its module, its line in [`views!`] below (a view without its declaration,
//! its options or its `show` does not compile), its JSON lines' schema and glossary rows,
//! and its tests. The walk of a profile's views, `/merge`, `/compare`, the HTML report,
//! the command line and `/help` take it from the registry.

use std::path::Path;

use crate::format::error::Error;
use crate::output::{Out, Printer};

pub(crate) mod compared;
mod declare;
mod file;
pub(crate) mod kept;
mod option;
mod plan;
pub(crate) mod profile;
mod ranges;
mod report;
mod set;

pub(crate) use compared::Both;
pub(crate) use declare::Declared;
pub use declare::{Compared, Declaration, Merged, Reads, Section, When, Writes};
pub(crate) use option::{About, Group, Opt, Set, text};
pub use plan::{Conflict, DEFAULT_TOP, Plan, Sections, Shape};
pub(crate) use profile::Profile;
pub(crate) use report::Parts;
pub use set::Views;

/// Counts the views of the registry.
macro_rules! count {
    () => { 0 };
    ($head:ident $($tail:ident)*) => { 1 + count!($($tail)*) };
}

/// The registry: each view's module and type, in the order the views of a profile are
/// shown. It makes [`View`], [`Kind`], [`Kind::ALL`], what the options gather
/// ([`Asked`]) and every view's option rows ([`rows`]).
macro_rules! views {
    ($($(#[$doc:meta])* $module:ident :: $Name:ident,)*) => {
        $(pub mod $module;)*

        /// A view of a profile: what one option asks to be shown or written, with what the
        /// option says of it.
        #[non_exhaustive]
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum View {
            $($(#[$doc])* $Name($module::$Name),)*
        }

        /// Which view a [`View`] is: the order in which they are shown.
        #[non_exhaustive]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Kind {
            $($(#[$doc])* $Name,)*
        }

        impl Kind {
            /// Every view, in the order they are shown.
            pub const ALL: [Kind; count!($($Name)*)] = [$(Kind::$Name,)*];

            /// What this view is.
            pub const fn declaration(self) -> Declaration {
                match self {
                    $(Kind::$Name => <$module::$Name as Declared>::DECLARATION,)*
                }
            }

            /// Adds this view's section of the HTML report to `parts`, as its declaration
            /// says it has one.
            pub(crate) fn section(self, profile: &Profile<'_>, parts: &mut Parts) {
                match self {
                    $(Kind::$Name => <$module::$Name as Declared>::section(profile, parts),)*
                }
            }
        }

        impl View {
            /// Which view this is.
            pub const fn kind(&self) -> Kind {
                match self {
                    $(View::$Name(_) => Kind::$Name,)*
                }
            }

            /// The file or directory it writes, when it writes one.
            pub fn path(&self) -> Option<&Path> {
                match self {
                    $(View::$Name(v) => v.path(),)*
                }
            }

            /// How many entries its tables show, when it says itself (`/dyninst:N`).
            pub(crate) fn top(&self) -> Option<usize> {
                match self {
                    $(View::$Name(v) => v.top(),)*
                }
            }

            /// Shows it, or writes it, of the profile at hand.
            pub(crate) fn show<P: Printer>(
                &self,
                profile: &mut Profile<'_>,
                out: &mut Out<'_, P>,
            ) -> Result<(), Error> {
                match self {
                    $(View::$Name(v) => v.show(profile, out),)*
                }
            }

            /// Its part of how two traces differ, when it is of the two together.
            pub(crate) fn compared<P: Printer>(
                &self,
                both: &mut Both<'_>,
                printer: &mut P,
            ) -> std::io::Result<()> {
                match self {
                    $(View::$Name(v) => v.compared(both, printer),)*
                }
            }
        }

        /// What the views' options gather from a command line: each view's field, set by
        /// its option rows, made into the view by [`Asked::views`].
        #[derive(Debug, Default)]
        pub(crate) struct Asked {
            $(pub(crate) $module: <$module::$Name as Declared>::Asked,)*
        }

        impl Asked {
            /// The views asked for; why two options of a view do not go together, when
            /// they do not.
            pub(crate) fn views(self) -> Result<Views, String> {
                let mut views = Views::default();
                $(
                    if let Some(v) = <$module::$Name as Declared>::asked(self.$module)? {
                        views.add(View::$Name(v));
                    }
                )*
                Ok(views)
            }
        }

        /// Every view's option rows, in the order `/help` lists them: the rows that name a
        /// view in the order of [`Declaration::listed`], those that change how a view is
        /// made (listed with how to print) in the order of the views.
        pub(crate) fn rows() -> Vec<&'static Opt<Asked>> {
            let mut rows: Vec<(u8, &'static Opt<Asked>)> = Vec::new();
            $(
                let listed = <$module::$Name as Declared>::DECLARATION.listed;
                rows.extend(<$module::$Name as Declared>::OPTIONS.iter().map(|o| (listed, o)));
            )*
            rows.sort_by_key(|(listed, o)| (o.group == Group::Output, match o.group {
                Group::Sections => *listed,
                Group::Output => 0,
            }));
            rows.into_iter().map(|(_, o)| o).collect()
        }
    };
}

views! {
    /// Per binary: totals per event kind and the top entries (`/summary`).
    summary::Summary,
    /// Inclusive and exclusive call-stack hits per function (`/functions`).
    functions::Functions,
    /// The call stacks, folded (`/folded`).
    folded::Folded,
    /// An SVG flame graph of the call stacks (`/flamegraph:FILE`).
    flamegraph::FlameGraph,
    /// The hottest source lines per binary and source (`/lines`).
    lines::Lines,
    /// Who calls whom, per binary, from LBR and call stacks (`/callgraph[:FUNCTION]`).
    callgraph::CallGraph,
    /// Per function with any count, its basic blocks and those the LBR ranges cover
    /// (`/coverage`).
    coverage::Coverage,
    /// The functions that ran the most instructions by the LBR ranges (`/dyninst[:N]`).
    dyninst::Dyninst,
    /// One function's instructions with their counts, taken branches, IP samples and source
    /// lines (`/annotate:FUNCTION`).
    annotate::Annotate,
    /// A gzipped pprof profile (`/pprof:FILE`).
    pprof::Pprof,
    /// The counts as Parquet tables under a directory, a file per trace and table
    /// (`/parquet:DIR`).
    parquet::Parquet,
    /// A speedscope file (`/speedscope:FILE`).
    speedscope::Speedscope,
    /// A self-contained HTML report (`/html:FILE`).
    html::Html,
}
