//! The summary's lines as JSON writes them (`{"type":"summary",...}`) and text reads them.

use serde::Serialize;

/// What a source's total counts, as `/summary` names it: the `samples` of an IP event, the
/// `branches` of LBR records, the `arcs` of call stacks (a stack of n frames, n - 1 arcs).
/// The summary of one binary: a `{"type":"summary",...}` line in JSON.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct SummaryLine {
    /// The binary's program ID; none for the records before any BINARY_ID.
    pub progid: Option<u16>,
    /// The binary's name, when the string table has it.
    pub name: Option<String>,
    /// Its sample records.
    pub records: u64,
    /// Each IP event's totals and top addresses.
    pub ip: Vec<IpSummary>,
    /// The LBR records' totals and top arcs.
    pub lbr: Option<LbrSummary>,
    /// The call stacks' totals and top arcs.
    pub callstack: Option<CallstackSummary>,
}

/// One IP event of a binary: its totals and hottest addresses.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct IpSummary {
    /// The event's name.
    pub event: &'static str,
    /// Its records.
    pub records: u64,
    /// Its samples (hits).
    pub samples: u128,
    /// The distinct addresses sampled.
    pub unique_rvas: usize,
    /// The hottest addresses, at most `/top`.
    pub top: Vec<TopRva>,
    /// With `/pdb`: the samples by function.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub functions: Option<FunctionTable>,
}

/// Samples by function: the top functions, and the samples outside every function.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct FunctionTable {
    pub unique: usize,
    pub unresolved: u128,
    pub top: Vec<TopFunction>,
}

#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct TopFunction {
    pub function: String,
    pub rva: u32,
    pub hits: u128,
    /// The same as `hits`: the old name, kept for consumers (deprecated).
    pub samples: u128,
}

/// Arcs folded to function pairs.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct FunctionArcTable {
    /// The distinct pairs of functions.
    pub unique: usize,
    /// The hits of arcs with an end in no function.
    pub unresolved: u128,
    /// The hottest pairs, at most `/top`.
    pub top: Vec<TopFunctionArc>,
}

#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct TopFunctionArc {
    pub from: String,
    pub to: String,
    pub hits: u128,
}

#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct LbrSummary {
    pub records: u64,
    pub branches: u128,
    pub unique_arcs: usize,
    pub top: Vec<TopArc>,
    /// With `/pdb`: the arcs between functions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_arcs: Option<FunctionArcTable>,
}

#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct CallstackSummary {
    pub records: u64,
    /// The records' hits: the stacks' total, as `/functions` and `/check` count it. Text
    /// only: the summary's JSON line is fixed by the conformance suite.
    #[serde(skip)]
    pub hits: u128,
    /// The arcs' hits: a stack of n frames adds n - 1 arcs, each with its hits.
    pub arcs: u128,
    /// Whether the stacks are stored leaf first (`from` is the callee).
    #[serde(skip)]
    pub leaf_first: bool,
    pub unique_arcs: usize,
    pub top: Vec<TopArc>,
    /// With `/pdb`: the arcs between functions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function_arcs: Option<FunctionArcTable>,
}

#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct TopRva {
    pub rva: u32,
    pub hits: u128,
    /// With `/pdb`: `function+0xOFFSET`, when a function holds the address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

/// An arc (LBR: from, to; call stack: a frame and the next one out) and its hits.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct TopArc {
    /// Its first end, as stored.
    pub from: u32,
    /// Its second end, as stored.
    pub to: u32,
    /// Its hits.
    pub hits: u128,
}
