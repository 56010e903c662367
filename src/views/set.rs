//! The views a run asks for: at most one of each kind, in the order they are shown.

use std::path::Path;

use super::declare::{Reads, When, Writes};
use super::{Declaration, Kind, View};

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
