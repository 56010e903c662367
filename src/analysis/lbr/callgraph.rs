//! `/callgraph`: who calls whom, and how often, per binary.
//!
//! ```text
//! call   an LBR pair whose source is a call instruction (the image's code says so)
//! tail   an LBR pair whose source is a jump that enters another function at its first byte
//! stack  two adjacent frames of a call stack: the caller's return address, looked up a
//!        byte back at its call, and the callee's frame
//! ```
//!
//! Every pair of every LBR record counts, with the record's hits (1 + its REPEAT count), not
//! only the straight-through ranges between them; functions are the PDB's (`/pdb`), the
//! instructions the image's (`/image`). A binary without its PDB, or with LBR records but
//! without its image, says which is missing instead.

use std::collections::HashMap;

use crate::analysis::Counted;
use crate::format::stackorder::StackOrder;
use crate::image::code::{Code, Flow, Machine};
use crate::image::symbols::Symbols;

/// How a call edge was seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum EdgeKind {
    /// An LBR pair from a call instruction.
    Call,
    /// An LBR pair from a jump to another function's first byte.
    Tail,
    /// Two adjacent frames of a call stack.
    Stack,
}

impl EdgeKind {
    /// `call`, `tail` or `stack`, as text and JSON name it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            EdgeKind::Call => "call",
            EdgeKind::Tail => "tail",
            EdgeKind::Stack => "stack",
        }
    }
}

/// One caller -> callee edge.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallEdge {
    /// The calling function.
    pub caller: String,
    /// The function called.
    pub callee: String,
    /// How often.
    pub calls: u128,
    /// What the edge was seen as: a call, a tail call, or a call-stack arc.
    pub kind: EdgeKind,
}

/// The call edges of one binary.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BinaryCalls {
    /// The binary's program ID.
    pub progid: u16,
    /// The binary's name.
    pub name: String,
    /// The edges with the most calls, at most `/top` of them, most first.
    pub edges: Vec<CallEdge>,
    /// How many distinct edges there are.
    pub unique: usize,
    /// The calls of every edge.
    pub calls: u128,
    /// What kept edges from being found: a PDB or an image missing, a machine not decoded.
    pub missing: Vec<String>,
    /// Whether its records could be read as edges at all: with its PDB, its call stacks,
    /// or its LBR records with its image decoded.
    pub read: bool,
}

/// The call graph of a profile, per binary with LBR records or call stacks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallGraph {
    /// Each binary with LBR records or call stacks.
    pub binaries: Vec<BinaryCalls>,
    /// The function whose callers and callees these are, when the graph is of one.
    pub around: Option<String>,
}

/// An edge by the start RVAs of its functions.
type Key = (u32, u32, EdgeKind);

/// The call graph of `counted`, `top` edges per binary.
pub(crate) fn call_graph(counted: &Counted<'_>, top: usize) -> CallGraph {
    graph(counted, top, |_, _| true)
}

/// The edges of `counted` that call `function` or leave it, `top` per binary: its callers
/// and callees (pprof's `-peek`). `function` is a name as `/functions` prints it
/// (`binary!name`, the binary's name in any case) or the function's name alone.
pub(crate) fn around(counted: &Counted<'_>, function: &str, top: usize) -> CallGraph {
    let mut graph = graph(counted, top, |binary, name| {
        crate::analysis::named::names(function, binary, name)
    });
    graph.around = Some(function.to_owned());
    graph
}

/// The edges of `counted` with an end `keep` keeps (given the binary's name and the
/// function's), `top` per binary.
fn graph(counted: &Counted<'_>, top: usize, keep: impl Fn(&str, &str) -> bool) -> CallGraph {
    let summary = counted.summary;
    let mut binaries = Vec::new();
    for progid in summary.progids() {
        let lbr = summary.lbr(progid);
        let stacks = summary.callstack(progid);
        if lbr.is_none() && stacks.is_none() {
            continue;
        }
        let name = counted.tables.binary_name(progid);
        let Some(symbols) = counted.symbols.get(Some(progid)) else {
            let why = "call edges join functions: give /pdb:FILE for it".to_owned();
            binaries.push(without(progid, name, why));
            continue;
        };
        let mut edges: HashMap<Key, u128> = HashMap::new();
        let mut missing = Vec::new();
        let mut read = stacks.is_some();
        if let Some(lbr) = lbr {
            match counted.symbols.code(Some(progid)) {
                Some(code) if matches!(code.machine, Machine::X64 | Machine::X86) => {
                    read = true;
                    for ([from, to], hits) in lbr.iter() {
                        if let Some(key) = branch(symbols, code, from, to) {
                            add(&mut edges, key, hits);
                        }
                    }
                }
                Some(code) => missing.push(format!(
                    "its image is {} code, which is not decoded yet: no call edge from LBR",
                    code.machine
                )),
                None => {
                    missing.push("LBR call edges need its code: give /image:FILE for it".to_owned())
                }
            }
        }
        if let Some(stacks) = stacks {
            for ([a, b], hits) in stacks.iter() {
                if let Some(key) = frames(symbols, counted.order, [a, b]) {
                    add(&mut edges, key, hits);
                }
            }
        }
        let keep = |function: &str| keep(&name, function);
        let edges = named(symbols, edges, keep, top);
        binaries.push(BinaryCalls {
            progid,
            name,
            missing,
            read,
            ..edges
        });
    }
    CallGraph {
        binaries,
        around: None,
    }
}

/// Adds `hits` to `key`'s calls; a count past 2^128 (2^64 records of 2^64 hits) stays at
/// the most a count holds.
fn add(edges: &mut HashMap<Key, u128>, key: Key, hits: u128) {
    let calls = edges.entry(key).or_default();
    *calls = calls.saturating_add(hits);
}

/// A binary whose edges cannot be found, and why.
fn without(progid: u16, name: String, why: String) -> BinaryCalls {
    BinaryCalls {
        progid,
        name,
        edges: Vec::new(),
        unique: 0,
        calls: 0,
        missing: vec![why],
        read: false,
    }
}

/// The edge an LBR pair `from -> to` is, when it is one: a call, or a jump to another
/// function's first byte; both ends in functions.
fn branch(symbols: &Symbols, code: &Code, from: u32, to: u32) -> Option<Key> {
    let (caller, _) = symbols.lookup(from)?;
    let (callee, offset) = symbols.lookup(to)?;
    let kind = match code.instruction(from)?.flow {
        Flow::Call => EdgeKind::Call,
        Flow::Jump if offset == 0 && callee.rva != caller.rva => EdgeKind::Tail,
        _ => return None,
    };
    Some((caller.rva, callee.rva, kind))
}

/// The edge a call-stack arc (two adjacent frames, as stored) is: stored leaf first, the
/// callee's frame comes first; the caller's frame is a return address, looked up a byte back.
fn frames(symbols: &Symbols, order: StackOrder, [a, b]: [u32; 2]) -> Option<Key> {
    let (callee, caller) = match order {
        StackOrder::LeafFirst => (a, b),
        StackOrder::RootFirst => (b, a),
    };
    let (caller, _) = symbols.lookup(caller.checked_sub(1)?)?;
    let (callee, _) = symbols.lookup(callee)?;
    Some((caller.rva, callee.rva, EdgeKind::Stack))
}

/// The edges of one binary named by its functions, those with an end `keep` keeps, the
/// `top` with most calls first (its progid, name and notes left for the caller).
fn named(
    symbols: &Symbols,
    edges: HashMap<Key, u128>,
    keep: impl Fn(&str) -> bool,
    top: usize,
) -> BinaryCalls {
    let function = |rva: u32| {
        symbols
            .lookup(rva)
            .map_or_else(|| format!("0x{rva:08X}"), |(f, _)| f.name.to_owned())
    };
    let mut all: Vec<(Key, u128)> = edges
        .into_iter()
        .filter(|((caller, callee, _), _)| keep(&function(*caller)) || keep(&function(*callee)))
        .collect();
    let unique = all.len();
    let calls = all
        .iter()
        .fold(0u128, |sum, (_, calls)| sum.saturating_add(*calls));
    // Most calls first; ties by caller, callee and kind, so that output is the same each run.
    all.sort_unstable_by(|(a, x), (b, y)| y.cmp(x).then(a.cmp(b)));
    all.truncate(top);
    BinaryCalls {
        progid: 0,
        name: String::new(),
        edges: all
            .into_iter()
            .map(|((caller, callee, kind), calls)| CallEdge {
                caller: function(caller),
                callee: function(callee),
                calls,
                kind,
            })
            .collect(),
        unique,
        calls,
        missing: Vec::new(),
        read: false,
    }
}
