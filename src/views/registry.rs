//! The registry: every view, in the order the views of a profile are shown. It makes
//! [`View`] (a view asked for, with what its options say), [`Kind`] (which view),
//! [`Kind::ALL`], what the views' options gather ([`Asked`]), every view's option rows
//! ([`rows`]), and the set of views a run asks for ([`Views`]). A view missing a piece of
//! its declaration does not compile; a view left out of the list is not a view.

use std::path::Path;

use super::declaration::{Declaration, Reads, When, Writes};
use super::declare::Declared;
use super::option::{About, Group, Opt};
use super::report::Parts;
use super::{Beside, Both, Profile};
use crate::format::error::Error;
use crate::output::{Out, Printer};

/// How a command line applies an option row to what it gathers: the parser's, for every
/// row's own kind of gathered value.
pub(crate) trait Apply {
    /// Why a value is refused.
    type Error;
    /// Applies `opt` to `target`.
    fn apply<T>(self, target: &mut T, opt: &'static Opt<T>) -> Result<(), Self::Error>;
}

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
        /// A view of a profile: what one option asks to be shown or written, with what the
        /// option says of it.
        #[non_exhaustive]
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum View {
            $($(#[$doc])* $Name(super::$module::$Name),)*
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
                    $(Kind::$Name => <super::$module::$Name as Declared>::DECLARATION,)*
                }
            }

            /// Adds this view's section of the HTML report to `parts`, as its declaration
            /// says it has one; `views` are those asked for, with their options.
            pub(crate) fn section(self, views: &Views, profile: &Profile<'_>, parts: &mut Parts) {
                parts.at = self as usize;
                match self {
                    $(Kind::$Name => {
                        let this = views.get(self).and_then(|v| match v {
                            View::$Name(this) => Some(this),
                            #[allow(unreachable_patterns)]
                            _ => None,
                        });
                        <super::$module::$Name as Declared>::section(this, profile, parts)
                    })*
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

            /// When it is the report: its parts, to be gathered.
            pub(crate) fn report(&self) -> Option<Parts> {
                match self {
                    $(View::$Name(v) => v.report(),)*
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

            /// Its part of a trace set beside an SPD, when it is one; whether it printed an
            /// error.
            pub(crate) fn beside<P: Printer>(
                &self,
                beside: &Beside<'_>,
                printer: &mut P,
            ) -> std::io::Result<bool> {
                match self {
                    $(View::$Name(v) => v.beside(beside, printer),)*
                }
            }
        }

        /// What the views' options gather from a command line: each view's own, made into
        /// the view by [`Asked::views`].
        #[derive(Debug, Default)]
        pub(crate) struct Asked {
            $($module: <super::$module::$Name as Declared>::Asked,)*
        }

        impl Asked {
            /// The views asked for; why two options of a view do not go together, when
            /// they do not.
            pub(crate) fn views(self) -> Result<Views, String> {
                let mut views = Views::default();
                $(
                    if let Some(v) = <super::$module::$Name as Declared>::asked(self.$module)? {
                        views.add(View::$Name(v));
                    }
                )*
                Ok(views)
            }
        }

        /// One of a view's option rows.
        #[derive(Clone, Copy)]
        pub(crate) enum Row {
            $(
                #[allow(missing_docs)]
                $Name(&'static Opt<<super::$module::$Name as Declared>::Asked>),
            )*
        }

        impl Row {
            /// What the option is.
            pub(crate) fn about(self) -> &'static About {
                match self {
                    $(Row::$Name(o) => &o.about,)*
                }
            }

            /// Applies the option to its view's part of `asked`, as `apply` applies a row.
            pub(crate) fn apply<A: Apply>(self, asked: &mut Asked, apply: A) -> Result<(), A::Error> {
                match self {
                    $(Row::$Name(o) => apply.apply(&mut asked.$module, o),)*
                }
            }
        }

        /// Every view's option rows, in the order `/help` lists them: the rows that name a
        /// view in the order of [`Declaration::listed`], those that change how a view is
        /// made (listed with how to print) in the order of the views.
        pub(crate) fn rows() -> Vec<Row> {
            let mut rows: Vec<(u8, Row)> = Vec::new();
            $(
                let listed = <super::$module::$Name as Declared>::DECLARATION.listed;
                rows.extend(<super::$module::$Name as Declared>::OPTIONS.iter().map(|o| (listed, Row::$Name(o))));
            )*
            rows.sort_by_key(|(listed, o)| match o.about().group {
                Group::Sections => (false, *listed),
                Group::Output => (true, 0),
            });
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
    /// One function's graph with what the LBR ranges saw and the flow inferred from it
    /// (`/cfg[:FUNCTION]`).
    cfg::Cfg,
    /// One function's blocks beside an SPD's (`/blocks:NAME`, with `/compare TRACE SPD`).
    blocks::Blocks,
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

/// The analyses and exports of a profile, of each trace or of all of them merged: at most
/// one of each kind, in the order they are shown.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Views {
    list: Vec<View>,
}

impl Views {
    /// Asks for `view`, in place of one of its kind asked for before.
    pub fn add(&mut self, view: View) {
        let kind = view.kind();
        match self.list.binary_search_by_key(&kind, View::kind) {
            Ok(at) => self.list[at] = view,
            Err(at) => self.list.insert(at, view),
        }
    }

    /// The views asked for, in the order they are shown.
    pub fn iter(&self) -> impl Iterator<Item = &View> {
        self.list.iter()
    }

    /// Whether no view is asked for.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether `kind` is asked for.
    pub fn has(&self, kind: Kind) -> bool {
        self.get(kind).is_some()
    }

    /// The view of `kind`, when asked for.
    pub fn get(&self, kind: Kind) -> Option<&View> {
        let at = self.list.binary_search_by_key(&kind, View::kind).ok()?;
        Some(&self.list[at])
    }

    /// The file or directory the view of `kind` writes, when it is asked for.
    pub fn path(&self, kind: Kind) -> Option<&Path> {
        self.get(kind)?.path()
    }

    /// The declarations of the views asked for, in the order they are shown.
    pub fn declarations(&self) -> impl Iterator<Item = Declaration> + '_ {
        self.list.iter().map(|v| v.kind().declaration())
    }

    /// Whether a view asked for reads any of `reads`.
    pub fn read(&self, reads: Reads) -> bool {
        self.declarations().any(|d| d.reads.any(reads))
    }

    /// Whether a view asked for reads any of `reads` at `when` or after it in the walk.
    pub fn read_from(&self, when: When, reads: Reads) -> bool {
        self.declarations()
            .any(|d| d.when >= when && d.reads.any(reads))
    }

    /// Whether a view asked for, other than those that let go of `reads` themselves, reads
    /// any of them at `when` or after it.
    pub fn kept_from(&self, when: When, reads: Reads) -> bool {
        self.declarations()
            .any(|d| d.when >= when && d.reads.any(reads) && !d.lets_go.any(reads))
    }

    /// Everything the views asked for read.
    pub fn reads(&self) -> Reads {
        self.declarations()
            .fold(Reads::NOTHING, |all, d| all.and(d.reads))
    }

    /// Whether a view asked for is the peak of a run's memory ([`Declaration::peak`]).
    pub fn peak(&self) -> bool {
        self.declarations().any(|d| d.peak)
    }

    /// The single files the views write, each with its option's name.
    pub fn files(&self) -> impl Iterator<Item = (&'static str, &Path)> {
        self.written()
            .filter(|(d, _)| matches!(d.writes, Writes::File(_)))
            .map(|(d, path)| (d.name, path))
    }

    /// Every file and directory the views write, with their declarations.
    pub fn written(&self) -> impl Iterator<Item = (Declaration, &Path)> {
        self.list
            .iter()
            .filter_map(|v| Some((v.kind().declaration(), v.path()?)))
    }

    /// Whether a view prints tables of the top entries (`/top`) on standard output:
    /// `/summary`, `/functions`, `/lines`. Text shows them under the trace's `File:` line.
    pub fn tables(&self) -> bool {
        self.declarations().any(|d| d.writes == Writes::Tables)
    }

    /// How many entries the tables of a view that says so itself show (`/dyninst:N`).
    pub(crate) fn top(&self) -> Option<usize> {
        self.list.iter().find_map(View::top)
    }
}

impl FromIterator<View> for Views {
    fn from_iter<I: IntoIterator<Item = View>>(views: I) -> Self {
        let mut all = Views::default();
        views.into_iter().for_each(|v| all.add(v));
        all
    }
}
