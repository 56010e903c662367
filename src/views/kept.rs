//! What a trace's counters counted: a profile the views read, kept past the trace when the
//! traces are merged or compared.
//!
//! Besides the summary (every address and arc, counted on two threads), the decoder keeps
//! whole what the views read of the records themselves ([`Records`]): each kind is declared
//! once, in the `records!` list below, with what it is to the decoder and to `/merge`
//! ([`Keep`]). A view that reads a new kind reads it through its [`Reads`] bit; the decoder
//! keeps it, `/merge` renumbers and absorbs it, and the walk lets it go, without a word
//! more.

use crate::analysis::lbr::reading::RangeCounts;
use crate::analysis::spd::blocks::BlockCounts;
use crate::analysis::stacks::StackCounts;
use crate::analysis::summary::Summary;
use crate::format::record::Samples;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;

use super::declaration::Reads;

/// What a trace's counters counted, with the names its addresses are shown by: a profile
/// the views read, kept past the trace when the traces are merged or compared.
pub(crate) struct Kept {
    /// Every address and arc per binary and source, when the plan counts them.
    pub summary: Option<Summary>,
    /// What is kept of the records themselves, as the plan keeps it.
    pub records: Records,
    /// The binaries' names and identities.
    pub tables: Tables,
    /// The `/pdb` symbols attached to its binaries.
    pub symbols: SymbolMap,
}

/// A kind of record kept whole beside the summary, for the views that read it.
pub(crate) trait Keep: Default + Send {
    /// The reads of a view that need it kept.
    const READ_BY: Reads;

    /// Keeps what it keeps of a sample record; `symbols` are the binaries'.
    fn add(&mut self, s: &Samples<'_>, symbols: &SymbolMap);

    /// Once the stream is decoded.
    fn settle(&mut self, symbols: &SymbolMap);

    /// The binaries it holds something of.
    fn progids(&self) -> Vec<u16>;

    /// Its binaries renumbered, as a merged profile numbers them.
    fn renumber(self, to: &dyn Fn(u16) -> u16) -> Self;

    /// Another trace's, added to it (`/merge`).
    fn absorb(&mut self, other: Self);
}

impl Keep for StackCounts {
    const READ_BY: Reads = Reads::STACKS
        .and(Reads::PROFILE)
        .and(Reads::FUNCTIONS)
        .and(Reads::FLAME);

    fn add(&mut self, s: &Samples<'_>, _: &SymbolMap) {
        self.add_soon(s);
    }

    fn settle(&mut self, _: &SymbolMap) {
        StackCounts::settle(self);
    }

    fn progids(&self) -> Vec<u16> {
        self.totals().map(|(p, ..)| p).collect()
    }

    fn renumber(self, to: &dyn Fn(u16) -> u16) -> Self {
        StackCounts::renumber(self, to)
    }

    fn absorb(&mut self, other: Self) {
        StackCounts::absorb(self, other);
    }
}

impl Keep for RangeCounts {
    const READ_BY: Reads = Reads::LBR_RECORDS;

    fn add(&mut self, s: &Samples<'_>, symbols: &SymbolMap) {
        RangeCounts::add(self, s, symbols);
    }

    fn settle(&mut self, symbols: &SymbolMap) {
        self.flush(symbols);
    }

    fn progids(&self) -> Vec<u16> {
        self.binaries().map(|(p, _)| p).collect()
    }

    fn renumber(self, to: &dyn Fn(u16) -> u16) -> Self {
        RangeCounts::renumber(self, to)
    }

    fn absorb(&mut self, other: Self) {
        RangeCounts::absorb(self, other);
    }
}

impl Keep for BlockCounts {
    const READ_BY: Reads = Reads::SPD_BLOCKS;

    fn add(&mut self, s: &Samples<'_>, symbols: &SymbolMap) {
        BlockCounts::add(self, s, symbols);
    }

    fn settle(&mut self, _: &SymbolMap) {
        self.flush();
    }

    fn progids(&self) -> Vec<u16> {
        BlockCounts::progids(self).collect()
    }

    fn renumber(self, to: &dyn Fn(u16) -> u16) -> Self {
        BlockCounts::renumber(self, to)
    }

    fn absorb(&mut self, other: Self) {
        BlockCounts::absorb(self, other);
    }
}

/// The kinds of records kept whole: each field's type and what it is.
macro_rules! records {
    ($($(#[$doc:meta])* $field:ident: $T:ty,)*) => {
        /// What is kept of the records themselves beside the summary: each kind, when a
        /// view reads it.
        #[derive(Default)]
        pub(crate) struct Records {
            $($(#[$doc])* pub(crate) $field: Option<$T>,)*
        }

        impl Records {
            /// What the views read of every kind.
            pub(crate) const READ_BY: Reads = Reads::NOTHING $(.and(<$T as Keep>::READ_BY))*;

            /// Each kind that a view of `reads` reads, empty, to be filled.
            pub(crate) fn wanted(reads: Reads) -> Records {
                Records {
                    $($field: reads.any(<$T as Keep>::READ_BY).then(<$T>::default),)*
                }
            }

            /// Whether anything is kept.
            pub(crate) fn any(&self) -> bool {
                false $(|| self.$field.is_some())*
            }

            /// Keeps what each kind keeps of a sample record.
            pub(crate) fn add(&mut self, s: &Samples<'_>, symbols: &SymbolMap) {
                $(
                    if let Some(kept) = &mut self.$field {
                        Keep::add(kept, s, symbols);
                    }
                )*
            }

            /// Once the stream is decoded.
            pub(crate) fn settle(&mut self, symbols: &SymbolMap) {
                $(
                    if let Some(kept) = &mut self.$field {
                        Keep::settle(kept, symbols);
                    }
                )*
            }

            /// The binaries any kind holds something of.
            pub(crate) fn progids(&self) -> Vec<u16> {
                let mut all = Vec::new();
                $(all.extend(self.$field.iter().flat_map(Keep::progids));)*
                all
            }

            /// Every kind's binaries renumbered, as a merged profile numbers them.
            pub(crate) fn renumber(self, to: &dyn Fn(u16) -> u16) -> Records {
                Records {
                    $($field: self.$field.map(|kept| Keep::renumber(kept, to)),)*
                }
            }

            /// Another trace's, added kind by kind (`/merge`).
            pub(crate) fn absorb(&mut self, other: Records) {
                $(
                    match (&mut self.$field, other.$field) {
                        (Some(mine), Some(theirs)) => Keep::absorb(mine, theirs),
                        (mine @ None, theirs) => *mine = theirs,
                        (Some(_), None) => {}
                    }
                )*
            }
        }
    };
}

records! {
    /// The distinct call stacks, as decoded.
    stacks: StackCounts,
    /// The distinct LBR records, whole: read as branch sequences.
    lbr: RangeCounts,
    /// The LBR records on the blocks of an SPD set beside the trace.
    blocks: BlockCounts,
}
