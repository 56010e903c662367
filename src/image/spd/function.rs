//! One function's record in an SPD's module block: its profile as blocks (counts, code
//! ranges, successors), its callees and its tail entries. Offsets from the record's start
//! (`rec+`), all little-endian; docs/format.md gives the evidence for each field.
//!
//! ```text
//! rec+00 u64 hash (= its symbol entry's)    +10 record size         +14 unknown
//!    +18 checksum of the flow graph's shape (inferred)               +1C blocks offset
//!    +20 RVA  +24 code size (0 and 0: not emitted; inferred)         +30 blocks length
//!    +34 block count  +38 edge count  +3C callee area offset (0x54)  +40 its size
//!    +44 blocks end   +48 tail size (24 a tail entry)
//!    +08 +28 +4C +50 zero; +0C +2C unknown (zero in every known file)
//! rec+54 callee entries: u64 callee hash, u32 type (1 this SPD's, 3 an import),
//!        u64 calls, u32 n, n x u32 calling block ids
//!        blocks: u32 id (1..n), u32 flags (unknown), u64 count, u32 instructions,
//!        u32 successors, u32 ranges, u32 value profiles, u32 inline bytes, then the
//!        ranges {u32 offset from the RVA, u32 length x 2}, the inline bytes, the value
//!        profiles (64 bytes each), the successors {u32 target's offset in the blocks
//!        area, u64 edge count, u32 unknown}
//!        tail entries: u64 hash, u32 flags, u64 count, u32 zero (meaning unknown)
//! ```
//!
//! The checks of the table ([`super::table`]) are made on every record before any is shown;
//! the iterators here read the same bytes with the same parsers, and on a record that passed
//! them cannot fail (they stop rather than panic if they ever did).

use std::borrow::Cow;

use super::bytes::{sized, slice_at, u32_at, u64_at};
use super::check::TableCheck;

/// The size of a record's fixed part; the callee area follows it.
pub(super) const RECORD_HEADER: usize = 0x54;
/// The fixed part of a block.
const BLOCK_HEADER: usize = 36;
/// A code range: offset and length x 2.
const RANGE: usize = 8;
/// A value profile, not decoded.
const VALUE_PROFILE: usize = 64;
/// A successor: target, edge count, unknown.
pub(super) const SUCCESSOR: usize = 16;
/// The fixed part of a callee entry.
pub(super) const CALLEE_HEADER: usize = 24;
/// A tail entry.
pub(super) const TAIL_ENTRY: usize = 24;

/// Offsets of a record's fields.
pub(super) mod rec {
    pub(crate) const HASH: usize = 0x00;
    pub(crate) const SIZE: usize = 0x10;
    pub(crate) const CHECKSUM: usize = 0x18;
    pub(crate) const BLOCKS_OFFSET: usize = 0x1C;
    pub(crate) const RVA: usize = 0x20;
    pub(crate) const CODE_SIZE: usize = 0x24;
    pub(crate) const BLOCKS_LENGTH: usize = 0x30;
    pub(crate) const BLOCK_COUNT: usize = 0x34;
    pub(crate) const EDGE_COUNT: usize = 0x38;
    pub(crate) const CALLEES_OFFSET: usize = 0x3C;
    pub(crate) const CALLEES_SIZE: usize = 0x40;
    pub(crate) const BLOCKS_END: usize = 0x44;
    pub(crate) const TAIL_SIZE: usize = 0x48;
    /// The words that are zero in every known record.
    pub(crate) const ZERO: [usize; 4] = [0x08, 0x28, 0x4C, 0x50];
    /// The words not read, zero in every known record but not checked: shown raw.
    pub(crate) const UNKNOWN: [usize; 3] = [0x0C, 0x14, 0x2C];
}

/// The symbol-table entry flag of a static function (inferred).
pub const FLAG_STATIC: u32 = 0x04;
/// The symbol-table entry flag of a function folded into another by identical-code folding
/// (inferred).
pub const FLAG_FOLDED: u32 = 0x20;
/// The callee type of a function of this SPD.
pub const CALLEE_FUNCTION: u32 = 1;
/// The callee type of an import (its hash is djb2-64 of `__imp_` and the name).
pub const CALLEE_IMPORT: u32 = 3;

/// A function's entry in the module's symbol table (36 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Symbol {
    /// `ent+00`: the function's 64-bit hash, its key (djb2-64 of the name for external
    /// functions; static ones use a seed of their source, not reproducible).
    pub hash: u64,
    /// `ent+08`: where its name starts in the string table.
    pub name_offset: u32,
    /// `ent+0C`: flags; [`FLAG_STATIC`] and [`FLAG_FOLDED`] are inferred, the other bits
    /// unknown.
    pub flags: u32,
    /// `ent+10`: an id, distinct, in steps of 2 (inferred: SPDDump's `fid`, perhaps).
    pub id: u32,
    /// `ent+14`: unknown (zero in every known file).
    pub unknown_14: u32,
    /// `ent+18`: the RVA of the function this one was folded into, when [`FLAG_FOLDED`]
    /// is set (inferred).
    pub folded_rva: u32,
    /// `ent+1C`: where its record starts, from the start of the records area.
    pub record_offset: u32,
    /// `ent+20`: the next entry of its bucket's chain, from the table's start; 0 ends it.
    pub next: u32,
}

impl Symbol {
    /// The entry in `b` (36 bytes or more).
    pub(super) fn parse(b: &[u8]) -> Option<Symbol> {
        Some(Symbol {
            hash: u64_at(b, 0x00)?,
            name_offset: u32_at(b, 0x08)?,
            flags: u32_at(b, 0x0C)?,
            id: u32_at(b, 0x10)?,
            unknown_14: u32_at(b, 0x14)?,
            folded_rva: u32_at(b, 0x18)?,
            record_offset: u32_at(b, 0x1C)?,
            next: u32_at(b, 0x20)?,
        })
    }
}

/// One function of an SPD: its symbol entry, its name and its record.
#[derive(Clone, Copy, Debug)]
pub struct Function<'a> {
    pub(super) symbol: Symbol,
    pub(super) name: &'a [u8],
    pub(super) record: &'a [u8],
    /// Where the record starts in the file.
    pub(super) offset: u64,
    /// Its place in record order, from 0.
    pub(super) index: usize,
}

/// What a function's blocks add up to: the figures of `/func`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// Block 1's count: how often the function was entered.
    pub entry: u64,
    /// Its blocks.
    pub blocks: u32,
    /// Its edges (successors).
    pub edges: u32,
    /// Σ instruction counts of its blocks (inferred, as each block's).
    pub instructions: u64,
    /// Σ block count × instruction count: the estimated dynamic instructions (our estimate),
    /// saturating at `u64::MAX`.
    pub dyninst: u64,
    /// Its blocks with a count.
    pub covered: u32,
    /// Whether its counts form a flow: every block's count equals the sum of its incoming
    /// edges' (block 1 aside, entered from outside) and of its outgoing edges' (the blocks
    /// without successors aside, the exits).
    pub conserved: bool,
}

impl<'a> Function<'a> {
    /// Its symbol-table entry.
    pub fn symbol(&self) -> Symbol {
        self.symbol
    }

    /// Its 64-bit hash: the key of a function (names are not unique).
    pub fn hash(&self) -> u64 {
        self.symbol.hash
    }

    /// Its name, as the string table holds it (linker-level: C plain, C++ decorated).
    pub fn name(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.name)
    }

    /// Its name's bytes.
    pub fn name_bytes(&self) -> &'a [u8] {
        self.name
    }

    /// Its place in record order, from 0.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Where its record starts in the file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn word(&self, at: usize) -> u32 {
        u32_at(self.record, at).unwrap_or(0)
    }

    /// `rec+20`: its RVA (inferred, with high confidence; 0 when not emitted).
    pub fn rva(&self) -> u32 {
        self.word(rec::RVA)
    }

    /// `rec+24`: the size of its code (inferred, with high confidence; 0 when not emitted).
    pub fn code_size(&self) -> u32 {
        self.word(rec::CODE_SIZE)
    }

    /// Whether it has code of its own (not inlined everywhere): a code size (inferred).
    pub fn emitted(&self) -> bool {
        self.code_size() != 0
    }

    /// Whether its entry says it is static (inferred).
    pub fn is_static(&self) -> bool {
        self.symbol.flags & FLAG_STATIC != 0
    }

    /// The RVA of the function it was folded into, when its entry says it was (inferred).
    pub fn folded_into(&self) -> Option<u32> {
        (self.symbol.flags & FLAG_FOLDED != 0).then_some(self.symbol.folded_rva)
    }

    /// `rec+18`: a checksum of its flow graph's shape (inferred).
    pub fn checksum(&self) -> u32 {
        self.word(rec::CHECKSUM)
    }

    /// The words of its record not read, as `(offset, value)`: unknown.
    pub fn unknown_words(&self) -> [(usize, u32); 3] {
        rec::UNKNOWN.map(|at| (at, self.word(at)))
    }

    /// `rec+34`: its block count.
    pub fn block_count(&self) -> u32 {
        self.word(rec::BLOCK_COUNT)
    }

    /// `rec+38`: its edge count.
    pub fn edge_count(&self) -> u32 {
        self.word(rec::EDGE_COUNT)
    }

    /// Its blocks, in order (ids 1..n).
    pub fn blocks(&self) -> Blocks<'a> {
        Blocks {
            area: blocks_area(self.record).unwrap_or_default(),
            at: 0,
        }
    }

    /// Its callee entries, in order.
    pub fn callees(&self) -> Callees<'a> {
        Callees {
            area: callee_area(self.record).unwrap_or_default(),
            at: 0,
        }
    }

    /// Its tail entries, in order: shown raw, their meaning unknown.
    pub fn tail(&self) -> impl Iterator<Item = Tail> + 'a {
        let at = self.word(rec::BLOCKS_END) as usize;
        let len = self.word(rec::TAIL_SIZE) as usize;
        slice_at(self.record, at, len)
            .unwrap_or_default()
            .chunks_exact(TAIL_ENTRY)
            .filter_map(Tail::parse)
    }

    /// What its blocks add up to, in one pass over them.
    pub fn profile(&self) -> Profile {
        let mut p = Profile {
            edges: self.edge_count(),
            ..Profile::default()
        };
        p.conserved = self.unconserved().is_empty();
        for b in self.blocks() {
            if b.id == 1 {
                p.entry = b.count;
            }
            p.blocks = p.blocks.saturating_add(1);
            p.covered = p.covered.saturating_add(u32::from(b.count != 0));
            p.instructions = p.instructions.saturating_add(u64::from(b.instructions));
            p.dyninst = p
                .dyninst
                .saturating_add(b.count.saturating_mul(u64::from(b.instructions)));
        }
        p
    }

    /// The ids of the blocks whose count is not the sum of their incoming edges' (block 1,
    /// entered from outside, aside) or of their outgoing edges' (the blocks without
    /// successors, the exits, aside): none when its counts form a flow.
    pub fn unconserved(&self) -> Vec<u32> {
        let index = self.block_index();
        let mut into: Vec<u128> = vec![0; index.0.len()];
        let mut out: Vec<Option<u128>> = vec![None; index.0.len()];
        for (i, b) in self.blocks().enumerate() {
            for s in b.successors() {
                let sum = out[i].get_or_insert(0);
                *sum += u128::from(s.count);
                if let Some(to) = index.id_at(s.target) {
                    into[to as usize - 1] += u128::from(s.count);
                }
            }
        }
        let blocks = self.blocks().zip(into).zip(out);
        let broken = blocks.filter(|((b, into), out)| {
            let count = u128::from(b.count);
            (b.id != 1 && *into != count) || out.is_some_and(|o| o != count)
        });
        broken.map(|((b, _), _)| b.id).collect()
    }

    /// The ids of its blocks by their offsets, to name successors' targets.
    pub fn block_index(&self) -> BlockIndex {
        BlockIndex(self.blocks().map(|b| b.offset).collect())
    }
}

/// A function's blocks by their offsets in its blocks area.
#[derive(Clone, Debug)]
pub struct BlockIndex(Vec<u32>);

impl BlockIndex {
    /// The id of the block that starts at `offset`, when one does.
    pub fn id_at(&self, offset: u32) -> Option<u32> {
        let i = self.0.binary_search(&offset).ok()?;
        u32::try_from(i + 1).ok()
    }
}

/// The blocks area of a record, `[blocks offset, blocks end)`.
pub(super) fn blocks_area(record: &[u8]) -> Option<&[u8]> {
    let start = u32_at(record, rec::BLOCKS_OFFSET)? as usize;
    let end = u32_at(record, rec::BLOCKS_END)? as usize;
    record.get(start..end)
}

/// The callee area of a record.
pub(super) fn callee_area(record: &[u8]) -> Option<&[u8]> {
    let start = u32_at(record, rec::CALLEES_OFFSET)? as usize;
    let len = u32_at(record, rec::CALLEES_SIZE)? as usize;
    slice_at(record, start, len)
}

/// One block of a function's flow graph.
#[derive(Clone, Copy, Debug)]
pub struct Block<'a> {
    /// Where it starts in its function's blocks area (successors point there).
    pub offset: u32,
    /// Its id, 1..n.
    pub id: u32,
    /// Its flags: unknown, shown raw.
    pub flags: u32,
    /// Its count (how often it ran, as sampled; equals the sum of its incoming edges).
    pub count: u64,
    /// Its instructions (inferred: between its bytes / 15 and its bytes).
    pub instructions: u32,
    /// Its value profiles (64 bytes each, not decoded).
    pub value_profiles: u32,
    /// Its inline bytes (not decoded).
    pub inline_bytes: &'a [u8],
    ranges: &'a [u8],
    successors: &'a [u8],
    /// Where its successors start in the blocks area.
    successors_at: usize,
}

/// A block's successor: an edge of the flow graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Successor {
    /// Where the target block starts in the blocks area ([`BlockIndex::id_at`] names it).
    pub target: u32,
    /// How often the edge was taken.
    pub count: u64,
    /// The entry's last word: unknown, shown raw.
    pub unknown: u32,
}

impl<'a> Block<'a> {
    /// Its code ranges: (offset from the function's RVA, length in bytes). The length is
    /// stored doubled; this is the stored value halved.
    pub fn ranges(&self) -> impl Iterator<Item = (u32, u32)> + 'a {
        self.ranges.chunks_exact(RANGE).filter_map(|r| {
            let offset = u32_at(r, 0)?;
            Some((offset, u32_at(r, 4)? / 2))
        })
    }

    /// Its successors.
    pub fn successors(&self) -> impl Iterator<Item = Successor> + 'a {
        self.successors.chunks_exact(SUCCESSOR).filter_map(|s| {
            Some(Successor {
                target: u32_at(s, 0)?,
                count: u64_at(s, 4)?,
                unknown: u32_at(s, 12)?,
            })
        })
    }

    /// How many successors it has.
    pub fn successor_count(&self) -> usize {
        self.successors.len() / SUCCESSOR
    }

    /// Its ranges as stored, (offset, length x 2), each with where it lies from the
    /// block's start.
    pub(super) fn stored_ranges(&self) -> impl Iterator<Item = (usize, u32, u32)> + 'a {
        self.ranges
            .chunks_exact(RANGE)
            .enumerate()
            .filter_map(|(i, r)| Some((BLOCK_HEADER + RANGE * i, u32_at(r, 0)?, u32_at(r, 4)?)))
    }

    /// Where its successors start in the blocks area.
    pub(super) fn successors_at(&self) -> usize {
        self.successors_at
    }
}

/// Parses the block at `at` of a blocks area: it and where the next starts, or what is
/// wrong with it (its bytes run past the area).
pub(super) fn parse_block(area: &[u8], at: usize) -> Result<(Block<'_>, usize), String> {
    let field = |i: usize| u32_at(area, at + 4 * i);
    let (Some(id), Some(flags), Some(count), Some(instructions)) =
        (field(0), field(1), u64_at(area, at + 8), field(4))
    else {
        return Err(format!(
            "a block's 36-byte header at +{at:#X} runs past the blocks area's {:#X} bytes",
            area.len()
        ));
    };
    let (successors, ranges, values, inline) = (
        field(5).unwrap_or(0),
        field(6).unwrap_or(0),
        field(7).unwrap_or(0),
        field(8).unwrap_or(u32::MAX),
    );
    let past = || {
        format!(
            "block {id} at +{at:#X} ({ranges} ranges, {inline} inline bytes, {values} value \
             profiles, {successors} successors) runs past the blocks area's {:#X} bytes",
            area.len()
        )
    };
    let ranges_at = at + BLOCK_HEADER;
    let inline_at = sized(ranges, RANGE, ranges_at).ok_or_else(past)?;
    let values_at = sized(inline, 1, inline_at).ok_or_else(past)?;
    let successors_at = sized(values, VALUE_PROFILE, values_at).ok_or_else(past)?;
    let end = sized(successors, SUCCESSOR, successors_at).ok_or_else(past)?;
    if end > area.len() {
        return Err(past());
    }
    let block = Block {
        offset: u32::try_from(at).map_err(|_| past())?,
        id,
        flags,
        count,
        instructions,
        value_profiles: values,
        inline_bytes: &area[inline_at..values_at],
        ranges: &area[ranges_at..inline_at],
        successors: &area[successors_at..end],
        successors_at,
    };
    Ok((block, end))
}

/// A function's blocks, in order.
#[derive(Clone, Debug)]
pub struct Blocks<'a> {
    area: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Blocks<'a> {
    type Item = Block<'a>;

    fn next(&mut self) -> Option<Block<'a>> {
        if self.at >= self.area.len() {
            return None;
        }
        match parse_block(self.area, self.at) {
            Ok((block, next)) => {
                self.at = next;
                Some(block)
            }
            // Not after the checks; stop rather than guess.
            Err(_) => {
                self.at = self.area.len();
                None
            }
        }
    }
}

/// One callee entry: a function this one calls, and from where.
#[derive(Clone, Copy, Debug)]
pub struct Callee<'a> {
    /// The callee's hash.
    pub hash: u64,
    /// Its type: [`CALLEE_FUNCTION`], [`CALLEE_IMPORT`], or a value not seen (shown raw).
    pub kind: u32,
    /// How often it was called (inferred: the counter's meaning).
    pub calls: u64,
    sites: &'a [u8],
}

impl<'a> Callee<'a> {
    /// The ids of the blocks that call it.
    pub fn sites(&self) -> impl Iterator<Item = u32> + 'a {
        self.sites.chunks_exact(4).filter_map(|s| u32_at(s, 0))
    }

    /// Whether the callee is an import.
    pub fn is_import(&self) -> bool {
        self.kind == CALLEE_IMPORT
    }
}

/// Parses the callee entry at `at` of a callee area: it and where the next starts.
pub(super) fn parse_callee(area: &[u8], at: usize) -> Result<(Callee<'_>, usize), String> {
    let past = || {
        format!(
            "the callee entry at +{at:#X} runs past the callee area's {:#X} bytes",
            area.len()
        )
    };
    let (Some(hash), Some(kind), Some(calls), Some(n)) = (
        u64_at(area, at),
        u32_at(area, at + 8),
        u64_at(area, at + 12),
        u32_at(area, at + 20),
    ) else {
        return Err(past());
    };
    let start = at + CALLEE_HEADER;
    let end = sized(n, 4, start).ok_or_else(past)?;
    let sites = area.get(start..end).ok_or_else(past)?;
    Ok((
        Callee {
            hash,
            kind,
            calls,
            sites,
        },
        end,
    ))
}

/// A function's callee entries, in order.
#[derive(Clone, Debug)]
pub struct Callees<'a> {
    area: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Callees<'a> {
    type Item = Callee<'a>;

    fn next(&mut self) -> Option<Callee<'a>> {
        if self.at >= self.area.len() {
            return None;
        }
        match parse_callee(self.area, self.at) {
            Ok((callee, next)) => {
                self.at = next;
                Some(callee)
            }
            Err(_) => {
                self.at = self.area.len();
                None
            }
        }
    }
}

/// A tail entry (24 bytes): layout inferred, meaning unknown; shown raw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tail {
    /// A hash (seen: memset, memcpy, imports).
    pub hash: u64,
    /// A word of flags.
    pub flags: u32,
    /// A count.
    pub count: u64,
    /// The last word (zero in every known file).
    pub last: u32,
}

impl Tail {
    fn parse(b: &[u8]) -> Option<Tail> {
        Some(Tail {
            hash: u64_at(b, 0)?,
            flags: u32_at(b, 8)?,
            count: u64_at(b, 12)?,
            last: u32_at(b, 20)?,
        })
    }
}

/// A failed check of a record's contents: which, where (from the record's start), why.
pub(super) struct Fault {
    pub(super) check: TableCheck,
    pub(super) at: usize,
    pub(super) why: String,
}

impl Fault {
    #[cold]
    pub(super) fn new(check: TableCheck, at: usize, why: impl Into<String>) -> Fault {
        Fault {
            check,
            at,
            why: why.into(),
        }
    }
}
