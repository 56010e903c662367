//! The summary's lines as JSON writes them (`{"type":"summary",...}`) and text reads them.

use serde::Serialize;

/// What a source's total counts, as `/summary` names it: the `samples` of an IP event, the
/// `branches` of LBR records, the `arcs` of call stacks (a stack of n frames, n - 1 arcs).
/// The summary of one binary: a `{"type":"summary",...}` line in JSON.
#[derive(Serialize)]
pub(crate) struct SummaryLine {
    pub(crate) progid: Option<u16>,
    pub(crate) name: Option<String>,
    pub(crate) records: u64,
    pub(crate) ip: Vec<IpSummary>,
    pub(crate) lbr: Option<LbrSummary>,
    pub(crate) callstack: Option<CallstackSummary>,
}

#[derive(Serialize)]
pub(crate) struct IpSummary {
    pub(crate) event: &'static str,
    pub(crate) records: u64,
    pub(crate) samples: u128,
    pub(crate) unique_rvas: usize,
    pub(crate) top: Vec<TopRva>,
    /// With `/pdb`: the samples by function.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) functions: Option<FunctionTable>,
}

/// Samples by function: the top functions, and the samples outside every function.
#[derive(Serialize)]
pub(crate) struct FunctionTable {
    pub(crate) unique: usize,
    pub(crate) unresolved: u128,
    pub(crate) top: Vec<TopFunction>,
}

#[derive(Serialize)]
pub(crate) struct TopFunction {
    pub(crate) function: String,
    pub(crate) rva: u32,
    pub(crate) hits: u128,
    /// The same as `hits`: the old name, kept for consumers (deprecated).
    pub(crate) samples: u128,
}

/// Arcs folded to function pairs.
#[derive(Serialize)]
pub(crate) struct FunctionArcTable {
    pub(crate) unique: usize,
    pub(crate) unresolved: u128,
    pub(crate) top: Vec<TopFunctionArc>,
}

#[derive(Serialize)]
pub(crate) struct TopFunctionArc {
    pub(crate) from: String,
    pub(crate) to: String,
    pub(crate) hits: u128,
}

#[derive(Serialize)]
pub(crate) struct LbrSummary {
    pub(crate) records: u64,
    pub(crate) branches: u128,
    pub(crate) unique_arcs: usize,
    pub(crate) top: Vec<TopArc>,
    /// With `/pdb`: the arcs between functions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) function_arcs: Option<FunctionArcTable>,
}

#[derive(Serialize)]
pub(crate) struct CallstackSummary {
    pub(crate) records: u64,
    /// The records' hits: the stacks' total, as `/functions` and `/check` count it. Text
    /// only: the summary's JSON line is fixed by the conformance suite.
    #[serde(skip)]
    pub(crate) hits: u128,
    /// The arcs' hits: a stack of n frames adds n - 1 arcs, each with its hits.
    pub(crate) arcs: u128,
    /// Whether the stacks are stored leaf first (`from` is the callee).
    #[serde(skip)]
    pub(crate) leaf_first: bool,
    pub(crate) unique_arcs: usize,
    pub(crate) top: Vec<TopArc>,
    /// With `/pdb`: the arcs between functions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) function_arcs: Option<FunctionArcTable>,
}

#[derive(Serialize)]
pub(crate) struct TopRva {
    pub(crate) rva: u32,
    pub(crate) hits: u128,
    /// With `/pdb`: `function+0xOFFSET`, when a function holds the address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) symbol: Option<String>,
}

#[derive(Serialize)]
pub(crate) struct TopArc {
    pub(crate) from: u32,
    pub(crate) to: u32,
    pub(crate) hits: u128,
}
