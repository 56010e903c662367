//! What the views of one profile read while they are shown: a trace's counts, or several
//! traces' merged, and what the walk of the views (`dump/views.rs`) makes of them once,
//! before the views that read it. The walk lets go of each part once no view still to come
//! reads it, as the views' declarations say; a view that is the last to read a part whole
//! may take it ([`Profile::take_stacks`]).

use crate::analysis::Counted;
use crate::analysis::functions::FunctionsLine;
use crate::analysis::keys::Namers;
use crate::analysis::lbr::ranges::RangeReport;
use crate::analysis::profile::{BinaryStacks, StackProfile};
use crate::analysis::stacks::StackCounts;
use crate::analysis::summary::Summary;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;
use crate::output::FileInfo;

use super::declaration::Reads;
use super::kept::Records;
use super::report::Parts;
use super::settings::Settings;

/// What the views of one profile read while they are shown.
pub(crate) struct Profile<'w> {
    /// The trace, or the first of the traces merged, as the output names it.
    pub(crate) file: &'w FileInfo<'w>,
    /// What the views read of the run's options besides their own.
    pub(crate) settings: Settings<'w>,
    /// The binaries' names and identities.
    pub(crate) tables: &'w Tables,
    /// The symbols and code attached to its binaries.
    pub(crate) symbols: &'w SymbolMap,
    /// Every address and arc per binary and source, while a view still to come reads them,
    /// unless the summary could not be finished (which was said).
    pub(crate) summary: Option<Summary>,
    /// What was kept of the records themselves (the distinct call stacks as decoded, the
    /// LBR records), while a view still to come or the caller reads it.
    pub(crate) records: Records,
    /// Every address the views name, looked up once per binary.
    pub(crate) namers: Namers<'w>,
    /// The call stacks by key, for the views that read them.
    pub(crate) folded: StackProfile,
    /// The samples without call stacks, as the views need them.
    pub(crate) flat: Flat,
    /// What the report's flame graphs draw, once made.
    pub(crate) drawn: Option<FlameInput>,
    /// The LBR records read as branch sequences, for the views that read them.
    pub(crate) ranges: Option<RangeReport>,
    /// The parts of the HTML report gathered so far, when the report is asked for.
    pub(crate) parts: Option<Parts>,
    /// What the caller reads of the profile after its views: what the views may not let go.
    pub(crate) after: After,
    /// Whether how the LBR records were read has been shown (before the first LBR view).
    pub(crate) ranges_shown: bool,
    /// Whether the view at hand may take the call stacks as decoded: no view after it and
    /// not the caller reads them.
    pub(crate) stacks_last: bool,
    /// The call stacks of a profile without any.
    empty: StackCounts,
}

/// What the caller reads of a profile after its views: what the views may not let go.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct After {
    /// The summary's tables (`/check`, `/merge`, `/compare`).
    pub summary: bool,
    /// The kinds of records kept whole that these read (every kind for `/merge` and
    /// `/compare`, the LBR records for `/check`).
    pub records: Reads,
}

impl After {
    /// Whether the caller reads the kind of record kept for `reads`.
    pub(crate) fn reads(&self, reads: Reads) -> bool {
        self.records.any(reads)
    }
}

/// The samples without call stacks as the views need them (each a stack of one address):
/// the `/functions` lines of every binary and source (for `/functions` and the report), and
/// the source kept whole that a flame graph of a trace without call stacks draws.
#[derive(Default)]
pub(crate) struct Flat {
    /// The samples of the source a flame graph draws, per binary.
    pub(crate) sampled: Vec<BinaryStacks>,
    /// The `/functions` lines.
    pub(crate) functions: Vec<FunctionsLine>,
}

/// What a flame graph draws: its title, folded stacks and the note that says what it shows
/// when that is not the call stacks.
pub(crate) type FlameInput = (String, Vec<(String, u128)>, Option<String>);

impl<'w> Profile<'w> {
    /// The profile of `summary`, `stacks` and `lbr`, named by `tables` and `symbols`, before
    /// anything is made of it.
    pub(crate) fn new(
        file: &'w FileInfo<'w>,
        settings: Settings<'w>,
        (tables, symbols): (&'w Tables, &'w SymbolMap),
        (summary, records): (Option<Summary>, Records),
        after: After,
    ) -> Self {
        Profile {
            file,
            settings,
            tables,
            symbols,
            summary,
            records,
            namers: Namers::plain(),
            folded: StackProfile::default(),
            flat: Flat::default(),
            drawn: None,
            ranges: None,
            parts: None,
            after,
            ranges_shown: false,
            stacks_last: false,
            empty: StackCounts::default(),
        }
    }

    /// What was counted, when the summary could be finished: the views read it whole.
    pub(crate) fn counted(&self) -> Option<Counted<'_>> {
        Some(Counted {
            summary: self.summary.as_ref()?,
            stacks: self.records.stacks.as_ref().unwrap_or(&self.empty),
            order: self.settings.order,
            tables: self.tables,
            symbols: self.symbols,
        })
    }

    /// The call stacks as decoded, for the view at hand to let go of once it has read them,
    /// when no view after it and not the caller reads them.
    pub(crate) fn take_stacks(&mut self) -> Option<StackCounts> {
        match self.stacks_last {
            true => self.records.stacks.take(),
            false => None,
        }
    }
}
