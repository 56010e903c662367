//! An SPD's blocks that hold code, as a map of its binary's code: the block an address lies
//! in, the blocks a run of code meets. Section 16's checks make sure an emitted function's
//! code ranges tile its code, so each of its addresses lies in exactly one block.
//!
//! Blocks without a range (entry and join points, about half of all) hold no code and
//! weigh nothing: they are not in the map. Only emitted functions (an RVA and a code size)
//! have blocks here.
//!
//! ```text
//! pieces   every code range of every block, by RVA: [start, end), its block, its function,
//!          the piece of the same block before it (blocks interleave: 1, 2, 1, 2, 1)
//! index    per byte of the code's span, the piece that holds it (spans up to 4 MiB; past
//!          that, a binary search of the pieces)
//! steps    per piece, the edge of the SPD's graph from its block into the next piece's,
//!          when the next piece's code follows on at once and the graph has that edge
//! ```
//!
//! The map is of the code only when no two functions' code overlaps (in no known SPD does
//! it): an SPD whose functions overlap has no map ([`SpdBlocks::overlap`] says where), and
//! its addresses are looked up in none.

use std::ops::Range;

use crate::image::spd::function::Block;
use crate::image::spd::table::FunctionTable;
use crate::image::spdgraph::SpdGraphs;

/// The longest span of code given an index of a piece per byte: 4 MiB, 16 MiB of index.
const INDEXED_SPAN: u64 = 4 << 20;

/// No piece.
const NONE: u32 = u32::MAX;

/// The blocks of an SPD's emitted functions that hold code.
#[derive(Clone, Debug, Default)]
pub struct SpdBlocks {
    /// The blocks, by function in record order, then by id.
    blocks: Vec<SpdBlock>,
    /// Every block's code ranges, (RVA, length), in the order stored; a block's are
    /// `stored[block.ranges]`.
    stored: Vec<(u32, u32)>,
    /// Per function, in record order: its blocks in `blocks`.
    functions: Vec<Range<u32>>,
    /// Every code range, by RVA.
    pieces: Vec<Piece>,
    /// The first byte `index` maps.
    base: u64,
    /// Per byte from `base`, the piece that holds it, or [`NONE`]; empty when the span is
    /// too long (then `pieces` is searched).
    index: Vec<u32>,
    /// Two functions (by place in record order) whose code overlaps, at an RVA: then the
    /// blocks are no map of the code.
    overlap: Option<(u32, u32, u64)>,
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
    /// Its place among the nodes of the SPD's graphs.
    pub node: u32,
    /// Its ranges in [`SpdBlocks`]'s stored ranges.
    ranges: Range<u32>,
}

impl SpdBlock {
    /// Its weight in the SPD: count × instructions, its estimated dynamic instructions.
    pub fn weight(&self) -> u128 {
        u128::from(self.count) * u128::from(self.instructions)
    }
}

/// One code range of a block, as RVAs: `[start, end)`.
#[derive(Clone, Copy, Debug)]
struct Piece {
    start: u64,
    end: u64,
    block: u32,
    function: u32,
    /// The piece of the same block before this one, or [`NONE`].
    before: u32,
    /// The edge of the graphs from this piece's block into the next piece's, when the next
    /// piece's code follows on at once and the graph has that edge; or [`NONE`].
    step: u32,
    /// The piece before this one whose step is the same edge, or [`NONE`].
    step_before: u32,
}

impl SpdBlocks {
    /// The blocks with code of a checked table's emitted functions, whose graphs are
    /// `graphs`.
    pub fn of(table: &FunctionTable, graphs: &SpdGraphs) -> SpdBlocks {
        let mut map = SpdBlocks::default();
        for (i, f) in table.functions().enumerate() {
            let blocks = map.blocks.len() as u32;
            if f.rva() != 0 && f.code_size() != 0 {
                map.add_function(i as u32, f.rva(), f.blocks());
            }
            map.functions.push(blocks..map.blocks.len() as u32);
        }
        for b in &mut map.blocks {
            let node = graphs.node(b.function as usize, b.id);
            b.node = node.map_or(NONE, |n| n as u32);
        }
        map.pieces.sort_by_key(|p| (p.start, p.function));
        map.link();
        map.step(graphs);
        map
    }

    /// Each piece's step into the next, and the piece before it with the same step.
    fn step(&mut self, graphs: &SpdGraphs) {
        let mut last: rustc_hash::FxHashMap<u32, u32> = rustc_hash::FxHashMap::default();
        for i in 0..self.pieces.len() {
            let (p, next) = (&self.pieces[i], self.pieces.get(i + 1));
            let step = next
                .filter(|n| n.start == p.end && n.function == p.function && n.block != p.block)
                .and_then(|n| {
                    let (from, to) = (
                        self.blocks[p.block as usize].node,
                        self.blocks[n.block as usize].node,
                    );
                    graphs.edge(from as usize, to as usize)
                });
            let step = step.map_or(NONE, |e| e as u32);
            self.pieces[i].step = step;
            if step != NONE {
                self.pieces[i].step_before = last.insert(step, i as u32).unwrap_or(NONE);
            }
        }
    }

    /// Adds the blocks with code of the function at `function`, whose code starts at `rva`.
    fn add_function<'a>(
        &mut self,
        function: u32,
        rva: u32,
        blocks: impl Iterator<Item = Block<'a>>,
    ) {
        for b in blocks {
            let from = self.stored.len() as u32;
            // A range of no bytes holds no code (none was seen; the checks allow it).
            for (offset, length) in b.ranges().filter(|&(_, length)| length > 0) {
                let start = u64::from(rva) + u64::from(offset);
                self.pieces.push(Piece {
                    start,
                    end: start + u64::from(length),
                    block: self.blocks.len() as u32,
                    function,
                    before: NONE,
                    step: NONE,
                    step_before: NONE,
                });
                self.stored
                    .push((u32::try_from(start).unwrap_or(u32::MAX), length));
            }
            let to = self.stored.len() as u32;
            if to > from {
                self.blocks.push(SpdBlock {
                    function,
                    id: b.id,
                    count: b.count,
                    instructions: b.instructions,
                    node: NONE,
                    ranges: from..to,
                });
            }
        }
    }

    /// Once the pieces are in RVA order: each piece's piece of the same block before it, and
    /// the index; or, when two functions' code overlaps, no map at all.
    fn link(&mut self) {
        if let Some(w) = self.pieces.windows(2).find(|w| w[1].start < w[0].end) {
            self.overlap = Some((w[0].function, w[1].function, w[1].start));
            self.pieces.clear();
            return;
        }
        let mut last = vec![NONE; self.blocks.len()];
        for (i, p) in self.pieces.iter_mut().enumerate() {
            p.before = std::mem::replace(&mut last[p.block as usize], i as u32);
        }
        let (Some(first), Some(end)) = (self.pieces.first(), self.pieces.last()) else {
            return;
        };
        self.base = first.start;
        if end.end - first.start <= INDEXED_SPAN {
            self.index = vec![NONE; (end.end - first.start) as usize];
            for (i, p) in self.pieces.iter().enumerate() {
                let (from, to) = ((p.start - self.base) as usize, (p.end - self.base) as usize);
                self.index[from..to].fill(i as u32);
            }
        }
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
            .map_or(0..0, |s| s.start as usize..s.end as usize)
    }

    /// A block's code ranges, (RVA, length), as stored (those of no bytes left out).
    pub fn ranges(&self, block: &SpdBlock) -> &[(u32, u32)] {
        self.stored
            .get(block.ranges.start as usize..block.ranges.end as usize)
            .unwrap_or_default()
    }

    /// Two functions (by place in record order) whose code overlaps, and where: then the
    /// blocks are no map of the code, and no address is looked up in them.
    pub fn overlap(&self) -> Option<(usize, usize, u64)> {
        self.overlap.map(|(a, b, at)| (a as usize, b as usize, at))
    }

    /// The piece that holds `rva`.
    #[inline]
    fn piece_at(&self, rva: u32) -> Option<usize> {
        let off = u64::from(rva).checked_sub(self.base)?;
        if !self.index.is_empty() {
            let piece = *self.index.get(usize::try_from(off).ok()?)?;
            return (piece != NONE).then_some(piece as usize);
        }
        let rva = u64::from(rva);
        let i = self
            .pieces
            .partition_point(|p| p.start <= rva)
            .checked_sub(1)?;
        (rva < self.pieces[i].end).then_some(i)
    }

    /// The place of the function whose code holds `rva`, and of its block that does.
    #[inline]
    pub fn at(&self, rva: u32) -> Option<(usize, usize)> {
        let p = &self.pieces[self.piece_at(rva)?];
        Some((p.function as usize, p.block as usize))
    }

    /// Where `rva` lies, for [`span`](SpdBlocks::span) and [`head`](SpdBlocks::head):
    /// found once per address, used by every range and pair that ends there.
    #[inline]
    pub fn spot(&self, rva: u32) -> Spot {
        Spot {
            rva,
            piece: self.piece_at(rva).map_or(NONE, |p| p as u32),
        }
    }

    /// A run of code `[start, end]`, read as section 17 reads an LBR range: `None` when an
    /// end lies in no function's code (`outside`); `Some(None)` when it starts after it ends
    /// or its ends lie in two functions; else `Some(Some(span))`, the run as the pieces it
    /// meets, for [`walk`](SpdBlocks::walk).
    #[inline]
    pub fn span(&self, start: Spot, end: Spot) -> Option<Option<Span>> {
        if start.piece == NONE || end.piece == NONE {
            return None;
        }
        let (first, last) = (
            &self.pieces[start.piece as usize],
            &self.pieces[end.piece as usize],
        );
        Some(
            (start.rva <= end.rva && first.function == last.function).then_some(Span {
                first: start.piece,
                last: end.piece,
            }),
        )
    }

    /// Walks a span: `block` gets the place of every block with code in it, once (a block
    /// whose ranges interleave with others' is met once however many of its ranges lie in
    /// the span), and `edge` every edge of the graphs the span runs along (from one block's
    /// code on at once into the next's), once.
    #[inline]
    pub fn walk(&self, span: Span, mut block: impl FnMut(usize), mut edge: impl FnMut(usize)) {
        let (first, last) = (span.first as usize, span.last as usize);
        let Some(pieces) = self.pieces.get(first..=last) else {
            return;
        };
        for p in pieces {
            // Met once: no piece of its block before this one lies in the run.
            if p.before == NONE || (p.before as usize) < first {
                block(p.block as usize);
            }
        }
        // The last piece's step leads out of the span.
        for p in &pieces[..pieces.len() - 1] {
            if p.step != NONE && (p.step_before == NONE || (p.step_before as usize) < first) {
                edge(p.step as usize);
            }
        }
    }

    /// The place of the block whose code holds `at`.
    #[inline]
    pub fn block(&self, at: Spot) -> Option<usize> {
        Some(self.pieces.get(at.piece as usize)?.block as usize)
    }

    /// The place of the block whose lowest byte is at `at`, when one's is.
    #[inline]
    pub fn head(&self, at: Spot) -> Option<usize> {
        let p = self.pieces.get(at.piece as usize)?;
        (p.start == u64::from(at.rva) && p.before == NONE).then_some(p.block as usize)
    }

    /// A run of code `[start, end]` read as [`span`](SpdBlocks::span) reads it: `None` when
    /// it is outside; `Some(true)`, with `each` given every block it meets once, when it is
    /// consistent; else `Some(false)`.
    #[inline]
    pub fn run(&self, start: u32, end: u32, mut each: impl FnMut(usize)) -> Option<bool> {
        let span = self.span(self.spot(start), self.spot(end))?;
        Some(span.is_some_and(|span| {
            self.walk(span, &mut each, |_| {});
            true
        }))
    }
}

/// Where an RVA lies among the pieces of code of an SPD's blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spot {
    rva: u32,
    piece: u32,
}

impl Spot {
    /// The RVA.
    pub fn rva(self) -> u32 {
        self.rva
    }
}

/// A consistent run of code, as the pieces it meets: the first and the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    first: u32,
    last: u32,
}

#[cfg(test)]
mod tests {
    use sptdump_testkit::fixtures::APP_GUID as GUID;
    use sptdump_testkit::spd::SpdBuilder;

    use super::SpdBlocks;
    use crate::image::spd::table::of_bytes;
    use crate::image::spdgraph::SpdGraphs;
    use crate::image::spdprofile::SpdProfile;

    /// Blocks whose code interleaves (1, 2, 1, 2, then 3), edges 1->2 and 2->3: a run meets
    /// each block once and each edge it runs along once, and a step between two blocks that
    /// the graph has no edge for (2 then 1) is none.
    #[test]
    fn a_run_meets_each_block_and_each_edge_it_runs_along_once() {
        use sptdump_testkit::spd::{SpdBlock, SpdFunction};
        let mut spd = SpdBuilder::new("app.exe", GUID, 1);
        spd.functions = vec![SpdFunction::new(
            "woven",
            0x1000,
            20,
            vec![
                SpdBlock::new(5, 2, &[(0, 4), (8, 4)], &[(2, 5)]),
                SpdBlock::new(5, 2, &[(4, 4), (12, 4)], &[(3, 5)]),
                SpdBlock::new(5, 1, &[(16, 4)], &[]),
            ],
        )];
        let bytes = spd.build();
        let table = of_bytes(&bytes);
        let graphs = SpdGraphs::of(&table);
        let blocks = SpdBlocks::of(&table, &graphs);
        let edge = |from: u32, to: u32| graphs.edge(from as usize - 1, to as usize - 1).unwrap();
        let run = |start: u32, end: u32| {
            let span = blocks
                .span(blocks.spot(start), blocks.spot(end))
                .unwrap()
                .unwrap();
            let (mut met, mut along) = (Vec::new(), Vec::new());
            blocks.walk(span, |b| met.push(blocks.all()[b].id), |e| along.push(e));
            (met, along)
        };
        assert_eq!(
            run(0x1000, 0x1013),
            (vec![1, 2, 3], vec![edge(1, 2), edge(2, 3)])
        );
        assert_eq!(run(0x1008, 0x100D), (vec![1, 2], vec![edge(1, 2)]));
        assert_eq!(run(0x1004, 0x1009), (vec![2, 1], vec![]));
        assert_eq!(run(0x1002, 0x1002), (vec![1], vec![]));
        // The lowest byte of a block is its head; its other bytes are not.
        assert_eq!(
            blocks.head(blocks.spot(0x1004)).map(|b| blocks.all()[b].id),
            Some(2)
        );
        assert_eq!(blocks.head(blocks.spot(0x100C)), None);
        assert_eq!(
            blocks.span(blocks.spot(0x1009), blocks.spot(0x1008)),
            Some(None)
        );
        assert_eq!(blocks.span(blocks.spot(0x1000), blocks.spot(0x2000)), None);
    }

    fn blocks_of(bytes: &[u8]) -> SpdBlocks {
        let table = of_bytes(bytes);
        SpdBlocks::of(&table, &SpdGraphs::of(&table))
    }

    /// Code spread wider than the index's span is searched: every block's code is found
    /// where its ranges say, and the bytes between the functions in none.
    #[test]
    fn code_spread_wide_is_searched_and_found() {
        let mut app = SpdBuilder::new("app.exe", GUID, 1);
        let spin = app.functions.iter_mut().find(|f| f.name == "spin_pause");
        spin.unwrap().rva = 0x0200_0000;
        let wide = blocks_of(&app.build());
        assert!(wide.index.is_empty() && !wide.is_empty());
        let near = blocks_of(&SpdBuilder::new("app.exe", GUID, 1).build());
        let span = near.pieces.last().unwrap().end - near.base;
        assert_eq!(near.index.len() as u64, span);
        // The same code high in the image: the index is of its span, wherever it starts.
        let mut high = SpdBuilder::new("app.exe", GUID, 1);
        (high.functions.iter_mut())
            .filter(|f| f.rva != 0)
            .for_each(|f| f.rva += 0x0300_0000);
        let high = blocks_of(&high.build());
        assert_eq!(high.index.len() as u64, span);
        assert_eq!(wide.len(), near.len());
        for (b, block) in wide.all().iter().enumerate() {
            for &(rva, length) in wide.ranges(block) {
                for at in [rva, rva + length / 2, rva + length - 1] {
                    assert_eq!(wide.at(at), Some((block.function as usize, b)), "{at:#x}");
                }
                assert_ne!(wide.at(rva + length).map(|p| p.1), Some(b));
            }
        }
        assert_eq!(wide.at(0x0100_0000), None);
        assert!(SpdBlocks::default().is_empty());
    }

    /// The index of a piece per byte and the search over the pieces (for code spread wider
    /// than [`super::INDEXED_SPAN`]) find the same block at every RVA of the code, in its
    /// gaps and past either end.
    #[test]
    fn the_index_and_the_search_find_the_same_blocks() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe/app.spd");
        let indexed = SpdProfile::read(&path).unwrap().blocks;
        assert!(!indexed.index.is_empty());
        let mut searched = indexed.clone();
        searched.index = Vec::new();
        let end = indexed.pieces.last().unwrap().end;
        let (lo, hi) = (indexed.base as u32, end as u32);
        let (mut held, mut gaps) = (0, 0);
        for rva in lo.saturating_sub(16)..hi + 16 {
            let found = indexed.at(rva);
            assert_eq!(found, searched.at(rva), "{rva:#x}");
            if found.is_some() {
                held += 1;
            } else if (lo..hi).contains(&rva) {
                gaps += 1;
            }
        }
        assert!(held > 0 && gaps > 0, "{held} {gaps}");
    }
}
