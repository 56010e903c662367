//! The checks of one function record's contents, made after its frame (size, hash, zero
//! words) passed: its blocks, their successors, the exit block, the code ranges of an
//! emitted function, and the callees' call sites. Offsets in the faults are from the
//! record's start.
//!
//! The blocks of one record are held while it is checked (a few hundred bytes of views into
//! the module block), never those of every record.

use super::bytes::u32_at;
use super::check::TableCheck;
use super::function::{
    Block, CALLEE_HEADER, Fault, SUCCESSOR, blocks_area, callee_area, parse_block, parse_callee,
    rec,
};

/// Checks the contents of `record`, whose frame was checked (its areas lie in it).
pub(super) fn check(record: &[u8]) -> Result<(), Fault> {
    let word = |at: usize| u32_at(record, at).unwrap_or(0);
    let blocks_at = word(rec::BLOCKS_OFFSET) as usize;
    let area = blocks_area(record).ok_or_else(|| {
        Fault::new(
            TableCheck::RecordSize,
            rec::BLOCKS_OFFSET,
            "the blocks area does not lie in the record",
        )
    })?;
    let blocks = block_ids(area, blocks_at, word(rec::BLOCK_COUNT))?;
    successors(&blocks, blocks_at, word(rec::EDGE_COUNT))?;
    exit_block(&blocks, blocks_at)?;
    if word(rec::CODE_SIZE) != 0 {
        ranges(&blocks, blocks_at, word(rec::CODE_SIZE))?;
    }
    call_sites(record, word(rec::BLOCK_COUNT))
}

/// Block ids run 1..n, n is the record's block count, and the blocks end exactly at the
/// blocks end.
fn block_ids(area: &[u8], blocks_at: usize, count: u32) -> Result<Vec<Block<'_>>, Fault> {
    let mut blocks: Vec<Block<'_>> = Vec::new();
    let mut at = 0;
    while at < area.len() {
        let (block, next) = parse_block(area, at)
            .map_err(|why| Fault::new(TableCheck::BlockIds, blocks_at + at, why))?;
        let want = blocks.len() + 1;
        if block.id as usize != want {
            return Err(Fault::new(
                TableCheck::BlockIds,
                blocks_at + at,
                format!("block {want} has the id {}", block.id),
            ));
        }
        blocks.push(block);
        at = next;
    }
    if blocks.len() != count as usize {
        return Err(Fault::new(
            TableCheck::BlockIds,
            rec::BLOCK_COUNT,
            format!(
                "the record says {count} blocks, its blocks area holds {}",
                blocks.len()
            ),
        ));
    }
    Ok(blocks)
}

/// Successors land on block starts, and there are as many as the record's edge count.
fn successors(blocks: &[Block<'_>], blocks_at: usize, edges: u32) -> Result<(), Fault> {
    let mut total: u64 = 0;
    for b in blocks {
        for (i, s) in b.successors().enumerate() {
            let starts_a_block = blocks.binary_search_by_key(&s.target, |b| b.offset).is_ok();
            if !starts_a_block {
                return Err(Fault::new(
                    TableCheck::Successors,
                    blocks_at + b.successors_at() + SUCCESSOR * i,
                    format!(
                        "successor {} of block {} points at +{:#X} of the blocks area, where \
                         no block starts",
                        i + 1,
                        b.id,
                        s.target
                    ),
                ));
            }
            total += 1;
        }
    }
    if total != u64::from(edges) {
        return Err(Fault::new(
            TableCheck::Successors,
            rec::EDGE_COUNT,
            format!("the record says {edges} edges, its blocks have {total} successors"),
        ));
    }
    Ok(())
}

/// Exactly one block has no successor: the last.
fn exit_block(blocks: &[Block<'_>], blocks_at: usize) -> Result<(), Fault> {
    let Some(last) = blocks.last() else {
        return Err(Fault::new(
            TableCheck::ExitBlock,
            rec::BLOCK_COUNT,
            "the function has no block, so no exit block",
        ));
    };
    if let Some(early) = blocks[..blocks.len() - 1]
        .iter()
        .find(|b| b.successor_count() == 0)
    {
        return Err(Fault::new(
            TableCheck::ExitBlock,
            blocks_at + early.offset as usize,
            format!(
                "block {} has no successor, but only the last block ({}) may be the exit",
                early.id, last.id
            ),
        ));
    }
    if last.successor_count() != 0 {
        return Err(Fault::new(
            TableCheck::ExitBlock,
            blocks_at + last.offset as usize,
            format!(
                "the last block ({}) has {} successors; no block is the exit",
                last.id,
                last.successor_count()
            ),
        ));
    }
    Ok(())
}

/// An emitted function's code ranges tile `[0, code size)`: sorted by offset, each starts
/// where the one before it ended, the last ends at the code size. A length is stored
/// doubled, so a stored length is even.
fn ranges(blocks: &[Block<'_>], blocks_at: usize, code_size: u32) -> Result<(), Fault> {
    let mut all: Vec<(u32, u32, usize)> = Vec::new();
    for b in blocks {
        for (within, offset, stored) in b.stored_ranges() {
            let at = blocks_at + b.offset as usize + within;
            if !stored.is_multiple_of(2) {
                return Err(Fault::new(
                    TableCheck::Ranges,
                    at + 4,
                    format!(
                        "a range of block {} stores the length {stored:#X}, which is odd (a \
                         length is stored doubled)",
                        b.id
                    ),
                ));
            }
            all.push((offset, stored / 2, at));
        }
    }
    all.sort_unstable();
    let mut next: u64 = 0;
    for (offset, len, at) in all {
        if u64::from(offset) != next {
            return Err(Fault::new(
                TableCheck::Ranges,
                at,
                format!(
                    "the code ranges leave a gap or overlap: one starts at +{offset:#X}, the \
                     ranges before it end at +{next:#X}"
                ),
            ));
        }
        next += u64::from(len);
    }
    if next != u64::from(code_size) {
        return Err(Fault::new(
            TableCheck::Ranges,
            rec::CODE_SIZE,
            format!("the code ranges cover [0, {next:#X}), the code size is {code_size:#X}"),
        ));
    }
    Ok(())
}

/// The callee area holds whole entries, and every call site is a block id in 1..n.
fn call_sites(record: &[u8], blocks: u32) -> Result<(), Fault> {
    let start = u32_at(record, rec::CALLEES_OFFSET).unwrap_or(0) as usize;
    let area = callee_area(record).unwrap_or_default();
    let mut at = 0;
    while at < area.len() {
        let (callee, next) = parse_callee(area, at)
            .map_err(|why| Fault::new(TableCheck::CallSites, start + at, why))?;
        for (i, site) in callee.sites().enumerate() {
            if site == 0 || site > blocks {
                return Err(Fault::new(
                    TableCheck::CallSites,
                    start + at + CALLEE_HEADER + 4 * i,
                    format!(
                        "a call of {:016X} is made from block {site}, which is not in 1..{blocks}",
                        callee.hash
                    ),
                ));
            }
        }
        at = next;
    }
    Ok(())
}
