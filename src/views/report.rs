//! The parts of a profile's HTML report (`/html`): what the report shows of the trace as a
//! whole (its `/match` verdicts, its check, its totals, the SPDs beside it), and a section
//! of each view that has one ([`Declaration::section`](super::Declaration)), made by the
//! view's module when the report gathers it, shown in the order of the views.

use maud::Markup;

use super::Kind;

/// The parts of the report gathered so far.
#[derive(Default)]
pub(crate) struct Parts {
    /// After the binaries: the `/match` verdicts, the check, the totals.
    pub(crate) head: Vec<Markup>,
    /// Each view's section, with its view.
    pub(crate) sections: Vec<(Kind, Markup)>,
    /// After the views' sections: each `/match` SPD beside the binary it is of.
    pub(crate) tail: Vec<Markup>,
}

impl Parts {
    /// Adds the section of the view of `kind`.
    pub(crate) fn add(&mut self, kind: Kind, section: Markup) {
        self.sections.push((kind, section));
    }

    /// The views' sections, in the order of the views.
    pub(crate) fn sections(&mut self) -> impl Iterator<Item = &Markup> {
        self.sections.sort_by_key(|(kind, _)| *kind);
        self.sections.iter().map(|(_, section)| section)
    }
}
