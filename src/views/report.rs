//! The parts of a profile's HTML report (`/html`): what the report shows of the trace as a
//! whole (its `/match` verdicts, its check, its totals, the SPDs beside it), and a section
//! of each view that has one ([`Declaration::section`](super::Declaration)), made by the
//! view's module when the report gathers it, shown in the order of the views. The view
//! that writes the report starts them ([`Declared::report`](super::Declared)).

use maud::Markup;

use crate::analysis::lbr::annotate::SourcePath;

/// The parts of the report gathered so far.
#[derive(Default)]
pub(crate) struct Parts {
    /// After the binaries: the `/match` verdicts, the check, the totals.
    pub(crate) head: Vec<Markup>,
    /// Each view's section, with its view's place in the registry.
    sections: Vec<(usize, Markup)>,
    /// After the views' sections: each `/match` SPD beside the binary it is of.
    pub(crate) tail: Vec<Markup>,
    /// The place in the registry of the view whose section is being made.
    pub(crate) at: usize,
    /// Where the PDB's source files are on this machine (`/srcpath`), for the hottest
    /// function annotated.
    pub(crate) sources: Vec<SourcePath>,
}

impl Parts {
    /// The parts of a report whose hottest function finds its sources under `sources`.
    pub(crate) fn new(sources: Vec<SourcePath>) -> Self {
        Parts {
            sources,
            ..Parts::default()
        }
    }

    /// Adds the section of the view at hand.
    pub(crate) fn add(&mut self, section: Markup) {
        self.sections.push((self.at, section));
    }

    /// The views' sections, in the order of the views.
    pub(crate) fn sections(&mut self) -> impl Iterator<Item = &Markup> {
        self.sections.sort_by_key(|(at, _)| *at);
        self.sections.iter().map(|(_, section)| section)
    }
}
