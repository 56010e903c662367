//! What the views and verdicts of a run report, as values: for a program that reads them
//! rather than text or JSON Lines ([`Collected`](super::Collected) keeps them).

use crate::analysis::check::CheckReport;
use crate::analysis::compare::CompareReport;
use crate::analysis::functions::FunctionsLine;
use crate::analysis::lbr::annotate::AnnotateReport;
use crate::analysis::lbr::callgraph::CallGraph;
use crate::analysis::lbr::cfg::FunctionCfg;
use crate::analysis::lbr::ranges::RangeReport;
use crate::analysis::lines::LinesReport;
use crate::analysis::spd::blocks::{SpdBlockRow, SpdBlocksReport};
use crate::analysis::spd::compare::SpdCompareReport;
use crate::analysis::summary::SummaryLine;

/// A view's report, or a verdict, as a value.
#[non_exhaustive]
#[derive(Clone, Debug)]
pub enum Reported {
    /// `/summary`: each binary's totals and hottest addresses.
    Summary(Vec<SummaryLine>),
    /// `/functions`: a table per binary and source, in the order sptdump prints them.
    Functions(Vec<FunctionsLine>),
    /// `/lines`: the hottest source lines.
    Lines(LinesReport),
    /// `/callgraph`: who calls whom.
    CallGraph(CallGraph),
    /// `/coverage`: each binary's LBR records read as ranges, `top` functions shown.
    Coverage(RangeReport, usize),
    /// `/dyninst`: each binary's LBR records read as ranges, `n` functions shown.
    Dyninst(RangeReport, usize),
    /// `/annotate`: one function's instructions.
    Annotate(AnnotateReport),
    /// `/cfg`: functions' graphs with their flow, each with its binary's program ID and
    /// name.
    Cfg(Vec<(u16, String, FunctionCfg)>),
    /// `/check`: whether the trace is fit for SPDConvert.
    Check(CheckReport),
    /// `/compare BASE NEW`: how NEW differs.
    Compare(CompareReport),
    /// `/compare TRACE SPD`: a binary's functions beside the SPD's.
    SpdCompare(SpdCompareReport),
    /// `/compare TRACE SPD`: a binary's samples on the SPD's blocks.
    SpdBlocks(SpdBlocksReport),
    /// `/blocks:NAME`: one function's blocks, the SPD's counts and the trace's.
    SpdBlockRows(Vec<SpdBlockRow>),
}
