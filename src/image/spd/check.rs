//! The checks of an SPD's function table, in the order they are made, and the error that
//! names the first one a file fails.

use std::fmt;
use std::io;

/// The checks a module block must pass before its function table is shown, in the order
/// they are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TableCheck {
    /// Header, symbol table, records and string table follow one another, with 0 to 3 pad
    /// bytes to the block's end.
    ModuleAreas,
    /// The symbol table holds exactly the function count of entries.
    SymbolCount,
    /// No two entries share a hash.
    UniqueHashes,
    /// Each entry lies in the chain of its bucket (hash mod bucket count).
    Buckets,
    /// The chains link entries of the table, without loops, and reach every entry.
    Chains,
    /// The records tile their area, one an entry, in the string table's order.
    RecordTiling,
    /// Each record's hash is its entry's.
    RecordHash,
    /// Each record's size is its blocks end plus its tail, with its areas in their places.
    RecordSize,
    /// The words zero in every known record are zero.
    ZeroWords,
    /// Block ids run 1..n and the blocks end exactly at the blocks end.
    BlockIds,
    /// Successors land on block starts and add up to the edge count.
    Successors,
    /// Exactly one block has no successor: the last.
    ExitBlock,
    /// An emitted function's code ranges tile [0, code size).
    Ranges,
    /// Every call site is a block id in 1..n.
    CallSites,
}

impl TableCheck {
    /// Every check, in the order they are made.
    pub const ALL: [TableCheck; 14] = [
        TableCheck::ModuleAreas,
        TableCheck::SymbolCount,
        TableCheck::UniqueHashes,
        TableCheck::Buckets,
        TableCheck::Chains,
        TableCheck::RecordTiling,
        TableCheck::RecordHash,
        TableCheck::RecordSize,
        TableCheck::ZeroWords,
        TableCheck::BlockIds,
        TableCheck::Successors,
        TableCheck::ExitBlock,
        TableCheck::Ranges,
        TableCheck::CallSites,
    ];
}

impl fmt::Display for TableCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TableCheck::ModuleAreas => "module areas",
            TableCheck::SymbolCount => "symbol count",
            TableCheck::UniqueHashes => "unique hashes",
            TableCheck::Buckets => "hash buckets",
            TableCheck::Chains => "bucket chains",
            TableCheck::RecordTiling => "record tiling",
            TableCheck::RecordHash => "record hash",
            TableCheck::RecordSize => "record size",
            TableCheck::ZeroWords => "zero words",
            TableCheck::BlockIds => "block ids",
            TableCheck::Successors => "successors",
            TableCheck::ExitBlock => "exit block",
            TableCheck::Ranges => "code ranges",
            TableCheck::CallSites => "call sites",
        })
    }
}

/// Why an SPD's function table is not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// It failed a check.
    #[error("not a readable SPD function table: {check} failed at {offset:#X}: {why}")]
    Unreadable {
        /// The first check it failed.
        check: TableCheck,
        /// Where in the file: the field or the entry that failed it.
        offset: u64,
        /// What was found, and what was expected.
        why: String,
    },
    /// It could not be read.
    #[error("{}", crate::input::describe(.0))]
    Io(#[from] io::Error),
}
