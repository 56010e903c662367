//! Counts that add up on the image's graph (section 18): each function that ran, cut into
//! the blocks of section 14, with the edges its code gives them, what the LBR ranges and
//! pairs saw of each, and the flow inferred from that (`crate::flow`).
//!
//! ```text
//! blocks     section 14's, padding left out, numbered 1, 2, ... in address order
//! edges      entry   the calls and tail jumps into the function's first byte (LBR pairs)
//!            fall    into the next block, from a block whose last instruction goes on
//!            taken   a conditional jump's target inside the function (LBR pairs)
//!            jump    a direct jump's target inside it; an indirect jump's targets the
//!                    pairs show (LBR pairs)
//!            exit    a return, a jump out of the function, an indirect jump, a stop, or
//!                    code that runs on past the function's end or into an `int3`
//!            (code that runs into alignment `nop`s runs on through them: the edge goes to
//!            the block after them)
//! observed   a block: its instructions' largest count; a fall-through: the ranges that
//!            ran through the block's end (its last instruction's count less the ranges
//!            ending there); an edge from pairs: their hits; none seen is unknown (None)
//! ```
//!
//! Calls tie functions together: a function's entries are at least what the blocks of its
//! direct callers' call sites ran by the flow, so the functions are solved callers first,
//! and a function no record saw still gets the flow its callers send it.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;

use crate::analysis::lbr::blocks::{FunctionCode, split};
use crate::analysis::lbr::reading::Decoded;
use crate::flow::{self, Edge as FlowEdge, EdgeKind as FlowKind, FlowError, Graph as FlowGraph};
use crate::image::code::{Code, Flow as Control};
use crate::image::symbols::Symbols;

/// What kind of edge of the image's graph an edge is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EdgeKind {
    /// Into the function's first block.
    Entry,
    /// Into the next block.
    Fall,
    /// A conditional jump's target.
    Taken,
    /// A jump's target.
    Jump,
    /// Out of the function.
    Exit,
    /// A successor, on the SPD's graph (whose edges say nothing of the branch).
    Edge,
}

impl EdgeKind {
    /// `entry`, `fall`, `taken`, `jump` or `exit`, as text and JSON name it.
    pub fn name(self) -> &'static str {
        match self {
            EdgeKind::Entry => "entry",
            EdgeKind::Fall => "fall",
            EdgeKind::Taken => "taken",
            EdgeKind::Jump => "jump",
            EdgeKind::Exit => "exit",
            EdgeKind::Edge => "edge",
        }
    }

    fn solver(self) -> FlowKind {
        match self {
            EdgeKind::Entry => FlowKind::Entry,
            EdgeKind::Fall => FlowKind::Fall,
            EdgeKind::Taken | EdgeKind::Jump | EdgeKind::Edge => FlowKind::Jump,
            EdgeKind::Exit => FlowKind::Exit,
        }
    }
}

/// A block of a function's graph.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CfgBlock {
    /// Its number: on the image's graph 1 for the function's first block, then in address
    /// order; on the SPD's, its id there.
    pub id: u32,
    /// Whether it holds code: every block of the image's graph does; an SPD's block folded
    /// away does not (then `rva` and `end` are 0).
    pub code: bool,
    /// The RVA of its first byte (on the SPD's graph, of its lowest).
    pub rva: u32,
    /// The RVA just past its last byte (on the SPD's graph, past its highest).
    pub end: u32,
    /// Its instructions.
    pub instructions: u32,
    /// Its count by the ranges: its instructions' largest; `None` when none has one.
    pub observed: Option<u128>,
    /// Its count by the flow; `None` when the function was left raw.
    pub flow: Option<u64>,
}

/// An edge of a function's graph.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CfgEdge {
    /// The block it leaves; `None` for an entry.
    pub from: Option<u32>,
    /// The block it reaches; `None` for an exit.
    pub to: Option<u32>,
    /// What it is.
    pub kind: EdgeKind,
    /// Its count as seen; `None` when nothing saw it.
    pub observed: Option<u128>,
    /// Its count by the flow; `None` when the function was left raw.
    pub flow: Option<u64>,
}

/// One function's graph, what was seen of it, and its flow.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct FunctionCfg {
    /// The function's name.
    pub name: String,
    /// Its hash, on the SPD's graph; `None` on the image's.
    pub hash: Option<u64>,
    /// The RVA of its first byte.
    pub rva: u32,
    /// Its blocks, by id.
    pub blocks: Vec<CfgBlock>,
    /// Its edges: the entry first, then each block's in block order.
    pub edges: Vec<CfgEdge>,
    /// Why it has no flow, when it has none (too many blocks, counts too large).
    pub raw: Option<String>,
    /// The blocks (indices) holding a direct call, and the function each calls, by key.
    pub(crate) calls: Vec<(usize, u32)>,
    /// What names it among the functions solved together: its RVA on the image's graph,
    /// its place in record order on the SPD's.
    pub(crate) key: u32,
}

impl FunctionCfg {
    /// A graph of no blocks yet, of the function `name` at `rva`, known as `key` among
    /// those solved together.
    pub(crate) fn new(name: &str, rva: u32, key: u32) -> FunctionCfg {
        FunctionCfg {
            name: name.to_owned(),
            hash: None,
            rva,
            blocks: Vec::new(),
            edges: Vec::new(),
            raw: None,
            calls: Vec::new(),
            key,
        }
    }

    /// Whether any block or edge of it was seen.
    pub fn observed(&self) -> bool {
        self.blocks.iter().any(|b| b.observed.is_some())
            || self.edges.iter().any(|e| e.observed.is_some())
    }

    /// The instructions it ran by the flow: each block's flow times its instructions.
    pub fn flow_instructions(&self) -> u128 {
        let each = self.blocks.iter();
        each.map(|b| u128::from(b.flow.unwrap_or(0)) * u128::from(b.instructions))
            .sum()
    }

    /// The blocks that ran by the flow.
    pub fn ran(&self) -> u32 {
        self.blocks
            .iter()
            .filter(|b| b.flow.unwrap_or(0) > 0)
            .count() as u32
    }

    /// The blocks that ran by the flow but that no range covered: what raw counts call cold.
    pub fn falsely_cold(&self) -> u32 {
        let cold = |b: &&CfgBlock| b.flow.unwrap_or(0) > 0 && b.observed.is_none();
        self.blocks.iter().filter(cold).count() as u32
    }

    /// The flow of the block holding `rva`, if a block of it holds it.
    pub fn flow_at(&self, rva: u32) -> Option<u64> {
        let at = self.blocks.partition_point(|b| b.end <= rva);
        let block = self.blocks.get(at).filter(|b| b.rva <= rva)?;
        block.flow
    }
}

/// The graphs of a binary's functions that ran, by the ranges or by the flow its callers
/// sent them, in RVA order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BinaryCfg {
    /// Each function with an observation or with flow, by RVA.
    pub functions: Vec<FunctionCfg>,
}

impl BinaryCfg {
    /// The function starting at `rva`.
    pub fn function(&self, rva: u32) -> Option<&FunctionCfg> {
        let at = self.functions.binary_search_by_key(&rva, |f| f.rva).ok()?;
        self.functions.get(at)
    }
}

/// What the ranges and pairs of one binary saw, under the order used.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seen<'a> {
    /// Each instruction's count, by RVA.
    pub(crate) counts: &'a FxHashMap<u32, u128>,
    /// The consistent ranges ending at each instruction, by RVA.
    pub(crate) taken: &'a FxHashMap<u32, u128>,
    /// The pairs to a function's first byte or inside a function, by `(from, to)`.
    pub(crate) pairs: &'a FxHashMap<(u32, u32), u128>,
}

/// What the graphs of one binary are built from: its functions, code and what was seen.
struct Sources<'a> {
    functions: &'a Symbols,
    decoded: Decoded<'a>,
    seen: Seen<'a>,
    /// The entries seen of each function, by its RVA: pairs to its first byte from
    /// elsewhere, or from a call in it.
    entries: FxHashMap<u32, u128>,
    /// The in-function targets the pairs show for each source, by its RVA.
    targets: FxHashMap<u32, Vec<u32>>,
}

/// The graphs and flows of the functions that ran by `seen` (`ran`: their RVAs and names),
/// with the binary's PDB `functions` and its image's `code`, callers first.
pub(crate) fn binary<'n>(
    seen: Seen<'_>,
    ran: impl Iterator<Item = (u32, &'n str)>,
    functions: &Symbols,
    code: &Code,
) -> BinaryCfg {
    let mut memo = FxHashMap::default();
    let mut sources = Sources {
        functions,
        decoded: Decoded {
            code,
            memo: &mut memo,
        },
        seen,
        entries: FxHashMap::default(),
        targets: FxHashMap::default(),
    };
    sources.index_pairs();
    let ran: Vec<FunctionCfg> = ran.map(|(rva, name)| sources.build(rva, name)).collect();
    let build = |rva: u32| {
        let (f, _) = functions.lookup(rva)?;
        Some(sources.build(rva, f.name))
    };
    BinaryCfg {
        functions: solved(ran, build),
    }
}

/// The flows of the functions `ran`, solved callers first, and of the functions they call
/// from a block with flow, which `build` makes by key when it can; by key.
pub(crate) fn solved(
    ran: Vec<FunctionCfg>,
    mut build: impl FnMut(u32) -> Option<FunctionCfg>,
) -> Vec<FunctionCfg> {
    let mut order = Order::default();
    for cfg in ran {
        order.add(cfg);
    }
    while let Some(key) = order.next() {
        order.solve(key);
        for callee in order.called_with_flow(key) {
            match build(callee) {
                Some(cfg) => order.add(cfg),
                None => order.unbuildable.push(callee),
            }
        }
    }
    order.built.into_values().collect()
}

impl Sources<'_> {
    /// Sorts the pairs into entries and in-function targets.
    fn index_pairs(&mut self) {
        let mut pairs: Vec<(&(u32, u32), &u128)> = self.seen.pairs.iter().collect();
        pairs.sort_unstable();
        for (&(from, to), &hits) in pairs {
            let Some((target, offset)) = self.functions.lookup(to) else {
                continue;
            };
            let inside = self
                .functions
                .lookup(from)
                .is_some_and(|(f, _)| f.rva == target.rva);
            let call = self
                .decoded
                .at(from)
                .is_some_and(|i| i.flow == Control::Call);
            if inside && !call {
                self.targets.entry(from).or_default().push(to);
            } else if offset == 0 {
                let n = self.entries.entry(to).or_default();
                *n = n.saturating_add(hits);
            }
        }
    }

    /// The graph of the function at `rva` and what was seen of it.
    fn build(&mut self, rva: u32, name: &str) -> FunctionCfg {
        let code = split(self.functions, rva, &mut self.decoded);
        let mut cfg = FunctionCfg::new(name, rva, rva);
        let mut ids: FxHashMap<u32, u32> = FxHashMap::default();
        for block in code.blocks.iter().filter(|b| !b.padding) {
            let id = cfg.blocks.len() as u32 + 1;
            ids.insert(block.start, id);
            let instructions = &code.instructions[block.instructions.clone()];
            let counts = instructions
                .iter()
                .filter_map(|(at, _)| self.seen.counts.get(at));
            cfg.blocks.push(CfgBlock {
                id,
                code: true,
                rva: block.start,
                end: block.end,
                instructions: instructions.len() as u32,
                observed: counts.copied().max(),
                flow: None,
            });
        }
        if ids.get(&rva) == Some(&1) {
            // Sums of records' hits, each at least 1: a count that is there is above zero.
            let entries = self.entries.get(&rva).copied();
            cfg.edges
                .push(edge(None, Some(1), EdgeKind::Entry, entries));
        }
        self.edges(&code, &ids, &mut cfg);
        cfg
    }

    /// The block code at `rva` runs into: the block starting there, or, when that is
    /// padding that falls through (alignment `nop`s), the first block after it that is not;
    /// `None` for code past the function's end, an `int3`, or no block starting there.
    fn runs_into(code: &FunctionCode, ids: &FxHashMap<u32, u32>, mut rva: u32) -> Option<u32> {
        loop {
            if let Some(&id) = ids.get(&rva) {
                return Some(id);
            }
            let at = code.blocks.binary_search_by_key(&rva, |b| b.start).ok()?;
            let block = &code.blocks[at];
            let (_, last) = code
                .instructions
                .get(block.instructions.end.checked_sub(1)?)?;
            if !block.padding || last.flow != Control::Next {
                return None;
            }
            rva = block.end;
        }
    }

    /// The edges out of each block of `cfg`, and its direct calls.
    fn edges(&self, code: &FunctionCode, ids: &FxHashMap<u32, u32>, cfg: &mut FunctionCfg) {
        let blocks = code.blocks.iter().filter(|b| !b.padding);
        for (index, block) in blocks.enumerate() {
            let id = Some(index as u32 + 1);
            let instructions = &code.instructions[block.instructions.clone()];
            for &(_, i) in instructions {
                let callee = i.target.filter(|_| i.flow == Control::Call);
                let start = callee
                    .and_then(|t| self.functions.lookup(t))
                    .filter(|(_, o)| *o == 0);
                if let Some((f, _)) = start.filter(|(f, _)| f.rva != cfg.rva) {
                    cfg.calls.push((index, f.rva));
                }
            }
            let Some(&(at, last)) = instructions.last() else {
                continue;
            };
            let paired = |to: u32| self.seen.pairs.get(&(at, to)).copied();
            let next = Sources::runs_into(code, ids, block.end);
            let fall = match next {
                Some(_) => EdgeKind::Fall,
                None => EdgeKind::Exit,
            };
            let through = self
                .seen
                .counts
                .get(&at)
                .map(|&n| n.saturating_sub(self.seen.taken.get(&at).copied().unwrap_or(0)));
            let through = through.filter(|&n| n > 0);
            let inside = |t: u32| Sources::runs_into(code, ids, t);
            match (last.flow, last.target) {
                (Control::Next | Control::Call, _) => cfg.edges.push(edge(id, next, fall, through)),
                (Control::Conditional, target) => {
                    cfg.edges.push(edge(id, next, fall, through));
                    match target.and_then(inside) {
                        Some(to) => cfg.edges.push(edge(
                            id,
                            Some(to),
                            EdgeKind::Taken,
                            paired(target.unwrap_or(0)),
                        )),
                        None => cfg.edges.push(edge(id, None, EdgeKind::Exit, None)),
                    }
                }
                (Control::Jump, Some(target)) => match inside(target) {
                    Some(to) => cfg
                        .edges
                        .push(edge(id, Some(to), EdgeKind::Jump, paired(target))),
                    None => cfg.edges.push(edge(id, None, EdgeKind::Exit, None)),
                },
                (Control::Jump, None) => {
                    let shown = self.targets.get(&at).into_iter().flatten();
                    for &target in shown {
                        if let Some(to) = inside(target) {
                            cfg.edges
                                .push(edge(id, Some(to), EdgeKind::Jump, paired(target)));
                        }
                    }
                    cfg.edges.push(edge(id, None, EdgeKind::Exit, None));
                }
                (Control::Return | Control::Stop, _) => {
                    cfg.edges.push(edge(id, None, EdgeKind::Exit, None));
                }
            }
        }
    }
}

impl CfgEdge {
    /// An edge as seen, its flow not solved yet.
    pub(crate) fn new(
        from: Option<u32>,
        to: Option<u32>,
        kind: EdgeKind,
        observed: Option<u128>,
    ) -> CfgEdge {
        edge(from, to, kind, observed)
    }
}

fn edge(from: Option<u32>, to: Option<u32>, kind: EdgeKind, observed: Option<u128>) -> CfgEdge {
    CfgEdge {
        from,
        to,
        kind,
        observed,
        flow: None,
    }
}

/// The functions built so far, and the order they are solved in: a function once every
/// caller built so far is solved (the lowest RVA first), else, in a cycle of calls, the
/// lowest RVA waiting.
#[derive(Default)]
struct Order {
    built: BTreeMap<u32, FunctionCfg>,
    solved: BTreeSet<u32>,
    waiting: BTreeSet<u32>,
    ready: BTreeSet<u32>,
    /// The built functions calling each function, built or not.
    callers: FxHashMap<u32, Vec<u32>>,
    /// How many of each waiting function's callers are not solved yet.
    unsolved_callers: FxHashMap<u32, u32>,
    /// Called functions that could not be built: never asked for again.
    unbuildable: Vec<u32>,
}

impl Order {
    fn callees(cfg: &FunctionCfg) -> BTreeSet<u32> {
        cfg.calls.iter().map(|&(_, callee)| callee).collect()
    }

    fn add(&mut self, cfg: FunctionCfg) {
        let rva = cfg.key;
        for callee in Order::callees(&cfg) {
            self.callers.entry(callee).or_default().push(rva);
            if self.waiting.contains(&callee) {
                *self.unsolved_callers.entry(callee).or_default() += 1;
                self.ready.remove(&callee);
            }
        }
        let callers = self.callers.get(&rva).map_or(&[][..], Vec::as_slice);
        let unsolved = callers.iter().filter(|c| !self.solved.contains(c)).count() as u32;
        self.unsolved_callers.insert(rva, unsolved);
        if unsolved == 0 {
            self.ready.insert(rva);
        }
        self.waiting.insert(rva);
        self.built.insert(rva, cfg);
    }

    fn next(&mut self) -> Option<u32> {
        self.ready.first().or(self.waiting.first()).copied()
    }

    /// What the solved callers' call sites send `rva`: the flow of each block that calls it.
    fn sent_to(&self, rva: u32) -> u128 {
        let callers = self.callers.get(&rva).map_or(&[][..], Vec::as_slice);
        let solved = callers.iter().filter(|c| self.solved.contains(c));
        let sites = solved.filter_map(|c| self.built.get(c)).flat_map(|caller| {
            let calls = caller.calls.iter().filter(|&&(_, callee)| callee == rva);
            calls.map(|&(block, _)| u128::from(caller.blocks[block].flow.unwrap_or(0)))
        });
        sites.fold(0u128, u128::saturating_add)
    }

    fn solve(&mut self, rva: u32) {
        let sent = self.sent_to(rva);
        if let Some(cfg) = self.built.get_mut(&rva) {
            solve(cfg, sent);
        }
        self.waiting.remove(&rva);
        self.ready.remove(&rva);
        self.solved.insert(rva);
        let callees = self.built.get(&rva).map(Order::callees).unwrap_or_default();
        for callee in callees {
            if let Some(n) = self.unsolved_callers.get_mut(&callee).filter(|n| **n > 0) {
                *n -= 1;
                if *n == 0 && self.waiting.contains(&callee) {
                    self.ready.insert(callee);
                }
            }
        }
    }

    /// The functions `rva` calls from a block with flow that are not built yet.
    fn called_with_flow(&self, rva: u32) -> Vec<u32> {
        let Some(cfg) = self.built.get(&rva) else {
            return Vec::new();
        };
        let ran = cfg
            .calls
            .iter()
            .filter(|&&(block, _)| cfg.blocks[block].flow.unwrap_or(0) > 0);
        let new: BTreeSet<u32> = ran
            .map(|&(_, callee)| callee)
            .filter(|c| !self.built.contains_key(c) && !self.unbuildable.contains(c))
            .collect();
        new.into_iter().collect()
    }
}

/// Solves `cfg`'s flow, its entries at least `sent` by its callers; a function the solver
/// does not take is left raw, with why.
fn solve(cfg: &mut FunctionCfg, sent: u128) {
    let count = |n: Option<u128>| n.map(|n| u64::try_from(n).map_err(|_| ())).transpose();
    let graph = (|| {
        let blocks = cfg
            .blocks
            .iter()
            .map(|b| count(b.observed))
            .collect::<Result<_, _>>()?;
        let edges = cfg.edges.iter().map(|e| {
            let mut observed = e.observed;
            if e.kind == EdgeKind::Entry && sent > 0 {
                observed = Some(observed.unwrap_or(0).max(sent));
            }
            Ok(FlowEdge {
                from: e.from.map(|id| id - 1),
                to: e.to.map(|id| id - 1),
                kind: e.kind.solver(),
                observed: count(observed)?,
            })
        });
        Ok::<_, ()>(FlowGraph {
            blocks,
            edges: edges.collect::<Result<_, ()>>()?,
        })
    })();
    let solved = match graph {
        Ok(graph) => flow::solve(&graph),
        Err(()) => Err(FlowError::CountsTooLarge { max: u64::MAX }),
    };
    match solved {
        Ok(f) => {
            for (b, n) in cfg.blocks.iter_mut().zip(f.blocks) {
                b.flow = Some(n);
            }
            for (e, n) in cfg.edges.iter_mut().zip(f.edges) {
                e.flow = Some(n);
            }
        }
        Err(e) => cfg.raw = Some(format!("its flow is not inferred: {e}")),
    }
}
