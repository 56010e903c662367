//! An SPD's blocks that hold code, as a map of its binary's code: the block an address lies
//! in, the blocks a run of code meets. Section 16's checks make sure an emitted function's
//! code ranges tile its code, so each of its addresses lies in exactly one block.
//!
//! Blocks without a range (entry and join points, about half of all) hold no code and
//! weigh nothing: they are not in the map. Only emitted functions (an RVA and a code size)
//! have blocks here.

use std::ops::Range;

use crate::image::spd::table::FunctionTable;

/// The blocks of an SPD's emitted functions that hold code.
#[derive(Clone, Debug, Default)]
pub struct SpdBlocks {
    /// The blocks, by function in record order, then by id.
    blocks: Vec<SpdBlock>,
    /// Every block's code ranges, (RVA, length), in the order stored; a block's are
    /// `stored[block.ranges]`.
    stored: Vec<(u32, u32)>,
    /// Per function, in record order: its blocks in `blocks`, its pieces in `pieces`.
    functions: Vec<Span>,
    /// Every emitted function's code ranges, by function, then by RVA.
    pieces: Vec<Piece>,
}

/// A block of an SPD that holds code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpdBlock {
    /// Its function's place in record order.
    pub function: u32,
    /// Its id in its function's flow graph, 1..n.
    pub id: u32,
    /// Its count: how often it ran, as the SPD has it.
    pub count: u64,
    /// Its instructions (inferred).
    pub instructions: u32,
    /// Its ranges in [`SpdBlocks`]'s stored ranges.
    ranges: Range<u32>,
}

impl SpdBlock {
    /// Its weight in the SPD: count × instructions, its estimated dynamic instructions.
    pub fn weight(&self) -> u128 {
        u128::from(self.count) * u128::from(self.instructions)
    }
}

/// A function's blocks and pieces.
#[derive(Clone, Debug, Default)]
struct Span {
    blocks: Range<u32>,
    pieces: Range<u32>,
}

/// One code range of a block, as RVAs: `[start, end)`.
#[derive(Clone, Copy, Debug)]
struct Piece {
    start: u64,
    end: u64,
    block: u32,
}

impl SpdBlocks {
    /// The blocks with code of a checked table's emitted functions.
    pub fn of(table: &FunctionTable) -> SpdBlocks {
        let mut map = SpdBlocks::default();
        for (i, f) in table.functions().enumerate() {
            let (blocks, pieces) = (map.blocks.len() as u32, map.pieces.len() as u32);
            if f.rva() != 0 && f.code_size() != 0 {
                map.add_function(i as u32, f.rva(), f.blocks());
            }
            map.functions.push(Span {
                blocks: blocks..map.blocks.len() as u32,
                pieces: pieces..map.pieces.len() as u32,
            });
        }
        map
    }

    /// Adds the blocks with code of the function at `index`, whose code starts at `rva`.
    fn add_function<'a>(
        &mut self,
        index: u32,
        rva: u32,
        blocks: impl Iterator<Item = crate::image::spd::function::Block<'a>>,
    ) {
        let first_piece = self.pieces.len();
        for b in blocks {
            let from = self.stored.len() as u32;
            // A range of no bytes holds no code (none was seen; the checks allow it).
            for (offset, length) in b.ranges().filter(|&(_, length)| length > 0) {
                let start = u64::from(rva) + u64::from(offset);
                self.pieces.push(Piece {
                    start,
                    end: start + u64::from(length),
                    block: self.blocks.len() as u32,
                });
                self.stored
                    .push((u32::try_from(start).unwrap_or(u32::MAX), length));
            }
            let to = self.stored.len() as u32;
            if to > from {
                self.blocks.push(SpdBlock {
                    function: index,
                    id: b.id,
                    count: b.count,
                    instructions: b.instructions,
                    ranges: from..to,
                });
            }
        }
        self.pieces[first_piece..].sort_unstable_by_key(|p| p.start);
    }

    /// How many blocks hold code.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether no block holds code.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Every block that holds code, by function in record order, then by id.
    pub fn all(&self) -> &[SpdBlock] {
        &self.blocks
    }

    /// The places in [`all`](SpdBlocks::all) of the blocks of the function at `function`
    /// (its place in record order); empty for one not emitted.
    pub fn of_function(&self, function: usize) -> Range<usize> {
        self.functions
            .get(function)
            .map_or(0..0, |s| s.blocks.start as usize..s.blocks.end as usize)
    }

    /// A block's code ranges, (RVA, length), as stored (those of no bytes left out).
    pub fn ranges(&self, block: &SpdBlock) -> &[(u32, u32)] {
        self.stored
            .get(block.ranges.start as usize..block.ranges.end as usize)
            .unwrap_or_default()
    }

    /// The function's pieces, by RVA.
    fn pieces(&self, function: usize) -> &[Piece] {
        self.functions
            .get(function)
            .and_then(|s| {
                self.pieces
                    .get(s.pieces.start as usize..s.pieces.end as usize)
            })
            .unwrap_or_default()
    }

    /// The place of the block of `function` whose code holds `rva`.
    pub fn block_at(&self, function: usize, rva: u32) -> Option<usize> {
        let pieces = self.pieces(function);
        let rva = u64::from(rva);
        let after = pieces.partition_point(|p| p.start <= rva);
        let piece = pieces.get(after.checked_sub(1)?)?;
        (rva < piece.end).then_some(piece.block as usize)
    }

    /// The places of the blocks of `function` with code in `[start, end]`, in the order of
    /// their code: a block with several ranges there comes once for each.
    pub fn meeting(
        &self,
        function: usize,
        start: u32,
        end: u32,
    ) -> impl Iterator<Item = usize> + '_ {
        let pieces = self.pieces(function);
        let (start, end) = (u64::from(start), u64::from(end));
        let first = pieces.partition_point(|p| p.end <= start);
        pieces[first..]
            .iter()
            .take_while(move |p| p.start <= end)
            .map(|p| p.block as usize)
    }
}
