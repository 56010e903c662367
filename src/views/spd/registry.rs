//! The registry of spddump's views: each view's module and type, in the order the views of
//! an SPD are shown. It makes [`SpdView`], [`SpdKind`], what the views' options gather
//! ([`SpdAsked`]), their option rows ([`rows`]) and the set a command line asks for
//! ([`SpdViews`]).

use std::io;

use super::declare::{SpdDeclaration, SpdDeclared};
use super::shown::{Paired, Shown, SpdFailure};
use crate::views::{About, Apply, Group, Opt};

/// The registry: each view's module and type, in the order they are shown.
macro_rules! spd_views {
    ($($(#[$doc:meta])* $module:ident :: $Name:ident,)*) => {
        /// One of spddump's views, with what its options say.
        #[non_exhaustive]
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum SpdView {
            $($(#[$doc])* $Name(super::$module::$Name),)*
        }

        /// Which of spddump's views an [`SpdView`] is: the order in which they are shown.
        #[non_exhaustive]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum SpdKind {
            $($(#[$doc])* $Name,)*
        }

        impl SpdKind {
            /// Every view, in the order they are shown.
            pub const ALL: &[SpdKind] = &[$(SpdKind::$Name,)*];

            /// The view of this kind as `/all` shows it, when it does.
            pub fn of_all(self) -> Option<SpdView> {
                match self {
                    $(SpdKind::$Name => <super::$module::$Name as SpdDeclared>::of_all().map(SpdView::$Name),)*
                }
            }

            /// What this view is.
            pub const fn declaration(self) -> SpdDeclaration {
                match self {
                    $(SpdKind::$Name => <super::$module::$Name as SpdDeclared>::DECLARATION,)*
                }
            }
        }

        impl SpdView {
            /// Which view this is.
            pub const fn kind(&self) -> SpdKind {
                match self {
                    $(SpdView::$Name(_) => SpdKind::$Name,)*
                }
            }

            /// Shows it of the SPD at hand.
            pub(crate) fn show(&self, s: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>> {
                match self {
                    $(SpdView::$Name(v) => v.show(s),)*
                }
            }

            /// Shows it of two SPDs, when it is of two.
            pub(crate) fn pair(&self, p: &mut Paired<'_>) -> io::Result<()> {
                match self {
                    $(SpdView::$Name(v) => v.pair(p),)*
                }
            }
        }

        /// What the views' options gather from a command line.
        #[derive(Debug, Default)]
        pub(crate) struct SpdAsked {
            $($module: <super::$module::$Name as SpdDeclared>::Asked,)*
        }

        impl SpdAsked {
            /// The views asked for; why a view's options do not go together, when they do
            /// not.
            pub(crate) fn views(self) -> Result<SpdViews, String> {
                let mut views = SpdViews::default();
                $(
                    if let Some(v) = <super::$module::$Name as SpdDeclared>::asked(self.$module)? {
                        views.add(SpdView::$Name(v));
                    }
                )*
                Ok(views)
            }
        }

        /// One of a view's option rows.
        #[derive(Clone, Copy)]
        pub(crate) enum SpdRow {
            $(
                #[allow(missing_docs)]
                $Name(&'static Opt<<super::$module::$Name as SpdDeclared>::Asked>),
            )*
        }

        impl SpdRow {
            /// What the option is.
            pub(crate) fn about(self) -> &'static About {
                match self {
                    $(SpdRow::$Name(o) => &o.about,)*
                }
            }

            /// Applies the option to its view's part of `asked`.
            pub(crate) fn apply<A: Apply>(self, asked: &mut SpdAsked, apply: A) -> Result<(), A::Error> {
                match self {
                    $(SpdRow::$Name(o) => apply.apply(&mut asked.$module, o),)*
                }
            }
        }

        /// Every view's option rows, in the order `/help` lists them
        /// ([`SpdDeclaration::listed`]).
        pub(crate) fn rows() -> Vec<SpdRow> {
            let mut rows: Vec<(bool, u8, SpdRow)> = Vec::new();
            $(
                let listed = <super::$module::$Name as SpdDeclared>::DECLARATION.listed;
                rows.extend(
                    <super::$module::$Name as SpdDeclared>::OPTIONS
                        .iter()
                        .map(|o| (o.group == Group::Output, listed, SpdRow::$Name(o))),
                );
            )*
            rows.sort_by_key(|(output, listed, _)| (*output, *listed));
            rows.into_iter().map(|(.., o)| o).collect()
        }
    };
}

spd_views! {
    /// The identity, the version, the raw totals (`/header`).
    header::Header,
    /// The module block's header (`/module`).
    module::Module,
    /// The symbol table (`/symbol`).
    symbol::Symbol,
    /// The function profiles (`/func`).
    func::Func,
    /// The callees of each function (`/cg`).
    cg::Cg,
    /// The flow graphs (`/fg`).
    fg::Fg,
    /// Blocks with a count (`/coverage`).
    coverage::Coverage,
    /// The top functions by estimated dynamic instructions (`/dyninst[:N]`).
    dyninst::Dyninst,
    /// The functions of an id, a hash or a name, in detail (`/funcid:FID`).
    funcid::Funcid,
    /// Two SPDs of one binary, OLD and NEW, compared (`/compare`).
    compare::Compare,
}

/// The views of an SPD a command line asks for: at most one of each kind, in the order they
/// are shown.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpdViews {
    list: Vec<SpdView>,
}

impl SpdViews {
    /// Asks for `view`, in place of one of its kind asked for before.
    pub fn add(&mut self, view: SpdView) {
        let kind = view.kind();
        match self.list.binary_search_by_key(&kind, SpdView::kind) {
            Ok(at) => self.list[at] = view,
            Err(at) => self.list.insert(at, view),
        }
    }

    /// The views asked for, in the order they are shown.
    pub fn iter(&self) -> impl Iterator<Item = &SpdView> {
        self.list.iter()
    }

    /// The views asked for, in the order they are shown.
    pub fn as_slice(&self) -> &[SpdView] {
        &self.list
    }

    /// How many views are asked for.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether no view is asked for.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether `kind` is asked for.
    pub fn has(&self, kind: SpdKind) -> bool {
        self.list.iter().any(|v| v.kind() == kind)
    }

    /// Whether a view of two SPDs is asked for (`/compare`): the command line then takes
    /// two, OLD and NEW.
    pub fn of_two(&self) -> bool {
        self.list.iter().any(|v| v.kind().declaration().pair)
    }

    /// Whether a view of each SPD is asked for.
    pub fn of_each(&self) -> bool {
        self.list.iter().any(|v| !v.kind().declaration().pair)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::spd::{cg::Cg, dyninst::Dyninst, header::Header};

    #[test]
    fn views_are_held_one_of_a_kind_in_the_order_they_are_shown() {
        let mut v = SpdViews::default();
        assert!(v.is_empty());
        assert_eq!(v.len(), 0);
        v.add(SpdView::Dyninst(Dyninst(3)));
        v.add(SpdView::Header(Header));
        v.add(SpdView::Dyninst(Dyninst(5)));
        assert_eq!(v.len(), 2);
        assert!(v.has(SpdKind::Header) && !v.has(SpdKind::Cg));
        let kinds: Vec<SpdKind> = v.iter().map(SpdView::kind).collect();
        assert_eq!(kinds, [SpdKind::Header, SpdKind::Dyninst]);
        assert_eq!(v.as_slice()[1], SpdView::Dyninst(Dyninst(5)));
        v.add(SpdView::Cg(Cg));
        assert_eq!(v.len(), 3);
    }
}
