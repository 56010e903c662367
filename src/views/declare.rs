//! A view: what its module holds of it, the [`Declared`] trait its type implements: its
//! declaration, its option rows, how it is made of what the options say, how it is shown
//! (of a profile, of two traces together, in the HTML report).

use std::io;
use std::path::Path;

use super::beside::Beside;
use super::compared::Both;
use super::declaration::Declaration;
use super::option::Opt;
use super::profile::Profile;
use super::report::Parts;
use crate::format::error::Error;
use crate::output::{Out, Printer};

/// A view: what one option asks to be shown or written of a profile, declared, parsed,
/// made and shown by its own module. The registry (`views!` in `mod.rs`) lists them, in
/// the order they are shown.
pub(crate) trait Declared: Sized {
    /// What it is.
    const DECLARATION: Declaration;
    /// What its options gather from a command line, before the view is made of them.
    type Asked: Default + std::fmt::Debug + 'static;
    /// Its option rows: its own, and those that change how it is made (`/icicle`).
    const OPTIONS: &'static [Opt<Self::Asked>];

    /// The view its options ask for, if they ask for it; why they do not go together, else.
    fn asked(asked: Self::Asked) -> Result<Option<Self>, String>;

    /// The file or directory it writes, when it writes one.
    fn path(&self) -> Option<&Path> {
        None
    }

    /// How many entries its tables show, when it says itself (`/dyninst:N`).
    fn top(&self) -> Option<usize> {
        None
    }

    /// Shows it, or writes it, of the profile at hand, into `out`.
    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error>;

    /// Its part of how two traces differ, when it is of the two together
    /// ([`Compared::Both`](super::Compared::Both)): tables first, then files, each in the order of the views.
    fn compared<P: Printer>(&self, _both: &mut Both<'_>, _printer: &mut P) -> io::Result<()> {
        Ok(())
    }

    /// Its part of a trace set beside an SPD, when it is one
    /// ([`Compared::BesideSpd`](super::Compared::BesideSpd)). Returns whether it printed an
    /// error.
    fn beside<P: Printer>(&self, _beside: &Beside<'_>, _printer: &mut P) -> io::Result<bool> {
        Ok(false)
    }

    /// When it is the report: its parts, to be gathered.
    fn report(&self) -> Option<Parts> {
        None
    }

    /// Its section of a profile's HTML report, made when the report gathers them
    /// ([`Declaration::section`]), whether or not the view was asked for (`this`, with
    /// its options, when it was); nothing by default.
    fn section(_this: Option<&Self>, _profile: &Profile<'_>, _parts: &mut Parts) {}
}
