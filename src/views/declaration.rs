//! What a view declares of itself, once, in its module: its option, what it reads of a
//! profile and when, where it writes, and what it is when the traces are merged or
//! compared. The driver derives the rest from it: what the decoder counts
//! ([`Plan::needs`](super::Plan)), which combinations are refused
//! ([`Plan::conflict`](super::Plan::conflict)), when what the views read is let go of.

/// What a view is: its option, what it reads, where it writes, and what it is under
/// `/merge` and `/compare`.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Declaration {
    /// The option's name: `summary` for `/summary`.
    pub name: &'static str,
    /// Where `/help` lists it among the views, from 0.
    pub listed: u8,
    /// Where it writes.
    pub writes: Writes,
    /// What it reads of a profile.
    pub reads: Reads,
    /// When, in the walk of a profile's views, it reads it.
    pub when: When,
    /// What it lets go of once it has read it, when no view after it reads it: the
    /// structure it is the last to read, and reads whole.
    pub lets_go: Reads,
    /// Whether writing it is the peak of a run's memory: nothing is held through it that
    /// can be made after it.
    pub peak: bool,
    /// What the HTML report shows of it, and when that is made.
    pub section: Section,
    /// What it is of traces merged (`/merge`).
    pub merged: Merged,
    /// What it is of two traces compared (`/compare BASE NEW`).
    pub compared: Compared,
    /// Why this build cannot make it, when it cannot (a cargo feature left out).
    pub missing: Option<&'static str>,
    /// The types of the JSON lines it prints of a trace (`schema/line.json`): what is its
    /// own on standard output, beside a trace's `file` line and the notes.
    pub prints: &'static [&'static str],
}

impl Declaration {
    /// A view listed `listed`th in the help, that reads `reads` in the order of the views,
    /// writes `writes`, is of the merged profile under `/merge` and of each trace under
    /// `/compare`, has no section of the report and lets go of nothing.
    pub(crate) const fn new(name: &'static str, listed: u8, writes: Writes, reads: Reads) -> Self {
        Declaration {
            name,
            listed,
            writes,
            reads,
            when: When::InOrder,
            lets_go: Reads::NOTHING,
            peak: false,
            section: Section::None,
            merged: Merged::Merged,
            compared: Compared::EachTrace,
            missing: None,
            prints: &[],
        }
    }
}

/// Where a view writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    /// Tables of the top entries (`/top`) on standard output, under the trace's `File:`
    /// line.
    Tables,
    /// Lines for another tool on standard output, and nothing else.
    Lines,
    /// One file: what it holds (`flame graph`), for messages.
    File(&'static str),
    /// Files under one directory: what they are, for messages.
    Directory(&'static str),
}

/// When, in the walk of a profile's views, a view reads what it reads. The walk lets go
/// of each structure once no view that reads it is still to come.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum When {
    /// First, before anything is let go of (`/summary`).
    First,
    /// Before the call stacks are folded by key (what the report gathers).
    BeforeFold,
    /// In the order of the views, once the call stacks are folded.
    InOrder,
}

/// What the HTML report shows of a view, and when that part is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// Nothing.
    None,
    /// A section made of the profile as counted, before the call stacks are folded.
    BeforeFold,
    /// A section made of what the views' walk made (the `/functions` lines).
    Walked,
}

/// What a view is of traces merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merged {
    /// The view of the merged profile, once.
    Merged,
    /// Refused: why, as `/NAME WHY: it does not go with /merge`.
    Refused(&'static str),
}

/// What a view is of two traces compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compared {
    /// Each trace's own, as without `/compare`.
    EachTrace,
    /// Of the two together, made by the view's module (`Declared::compared`); not shown
    /// per trace.
    Both,
    /// Of the two together, as a part of the comparison itself: the keys of each binary
    /// whose share moved most (`/functions`); not shown per trace.
    InComparison,
    /// Refused: why, as `/NAME WHY: it does not go with ...`, and what follows the option.
    Refused(&'static str, &'static str),
    /// Of a trace set beside an SPD (`/compare TRACE SPD`), as a part of that comparison
    /// (`Declared::beside`); refused without it.
    BesideSpd,
}

impl Compared {
    /// Whether the view is made of the two traces together, not of each.
    pub const fn together(self) -> bool {
        matches!(
            self,
            Compared::Both | Compared::InComparison | Compared::BesideSpd
        )
    }
}

/// What a view reads of a profile: a set of the structures the decoder fills and the views
/// derive. When it reads them is [`When`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reads(u16);

impl Reads {
    /// Nothing.
    pub const NOTHING: Reads = Reads(0);
    /// The summary's tables of addresses and LBR arcs per binary and source.
    pub const SAMPLES: Reads = Reads(1);
    /// The summary's call-stack arcs.
    pub const STACK_ARCS: Reads = Reads(1 << 1);
    /// The distinct call stacks as decoded.
    pub const STACKS: Reads = Reads(1 << 2);
    /// The call stacks folded by key, their frames named.
    pub const PROFILE: Reads = Reads(1 << 3);
    /// Addresses named with what was inlined there (with `/pdb`).
    pub const INLINE_NAMES: Reads = Reads(1 << 4);
    /// The `/functions` lines of every binary and source.
    pub const FUNCTIONS: Reads = Reads(1 << 5);
    /// A flame graph's input: the call stacks, or the samples of a trace without any.
    pub const FLAME: Reads = Reads(1 << 6);
    /// The distinct LBR records, whole: read as branch sequences.
    pub const LBR_RECORDS: Reads = Reads(1 << 7);
    /// The LBR records mapped onto the blocks of an SPD set beside the trace.
    pub const SPD_BLOCKS: Reads = Reads(1 << 8);

    /// Both sets.
    pub const fn and(self, other: Reads) -> Reads {
        Reads(self.0 | other.0)
    }

    /// Whether this set holds anything of `other`.
    pub const fn any(self, other: Reads) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether the decoder must count the summary's tables for these.
    pub const fn counts(self) -> bool {
        self.any(
            Reads::SAMPLES
                .and(Reads::STACK_ARCS)
                .and(Reads::FUNCTIONS)
                .and(Reads::FLAME),
        )
    }

    /// Whether the summary must count the call-stack arcs for these.
    pub const fn stack_arcs(self) -> bool {
        self.any(Reads::STACK_ARCS)
    }

    /// Whether the decoder must keep the distinct LBR records for these.
    pub const fn lbr_records(self) -> bool {
        self.any(Reads::LBR_RECORDS)
    }

    /// Whether the decoder must keep the distinct call stacks for these.
    pub const fn stacks(self) -> bool {
        self.any(
            Reads::STACKS
                .and(Reads::PROFILE)
                .and(Reads::FUNCTIONS)
                .and(Reads::FLAME),
        )
    }
}
