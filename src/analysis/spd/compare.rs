//! `/compare TRACE SPD`: the shares of a trace's functions by IP samples beside the shares
//! the SPD gives them, by entry count and by estimated dynamic instructions (docs/output.md,
//! "A trace beside an SPD").
//!
//! Functions are matched by RVA: a sampled address is named by the binary's functions (a
//! PDB's, or the SPD's own), and the function that starts there is the SPD's record whose
//! code holds that RVA. The SPD's functions with counts that the trace never sampled are
//! rows too, with a trace share of 0.

use std::collections::BTreeMap;

use super::blocks::{BlockCounts, SpdBlocksReport, TraceOnBlocks};
use crate::analysis::counted::share;
use crate::analysis::summary::Summary;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;
use crate::image::matching::{self, MatchFile, MatchStatus};
use crate::image::spdprofile::{SpdFunction, SpdProfile};
use crate::image::symbols::Symbols;

/// A trace's binary beside its SPD.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SpdCompareReport {
    /// The SPD, as given.
    pub spd: String,
    /// The trace's binary the SPD matches.
    pub progid: u16,
    /// Its name.
    pub binary: String,
    /// Its IP samples, every IP event.
    pub trace_total: u128,
    /// Of those, the samples no function holds.
    pub unnamed: u128,
    /// The SPD's entry counts, summed.
    pub entry_total: u128,
    /// The SPD's estimated dynamic instructions, summed.
    pub dyninst_total: u128,
    /// How many rows there were before `top` cut them.
    pub functions: usize,
    /// The rows, the largest share on either side first.
    pub rows: Vec<SpdCompareRow>,
}

/// One function on both sides.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct SpdCompareRow {
    /// Its name: the trace's (as `/functions` shows it) where sampled, else the SPD's.
    pub function: String,
    /// Its RVA, where it has code.
    pub rva: Option<u32>,
    /// Its hash in the SPD; `None` when the SPD has no record of it.
    pub hash: Option<u64>,
    /// Its IP samples in the trace.
    pub trace_samples: u128,
    /// Their share of the binary's IP samples.
    pub trace_share: f64,
    /// Its entry count in the SPD; `None` when the SPD has no record of it.
    pub spd_entry: Option<u64>,
    /// Its share of the SPD's entry counts.
    pub spd_entry_share: f64,
    /// Its estimated dynamic instructions in the SPD (inferred).
    pub spd_dyninst: Option<u64>,
    /// Their share of the SPD's.
    pub spd_dyninst_share: f64,
}

/// A row's key: the SPD's record (by its place) or, for a function the SPD has no record
/// of, its RVA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum RowKey {
    Spd(usize),
    Rva(u32),
}

/// The binary `progid`'s functions, named by `symbols`, beside `profile`'s; at most `top`
/// rows.
pub(crate) fn compare(
    summary: &Summary,
    symbols: &Symbols,
    progid: u16,
    profile: &SpdProfile,
    top: usize,
) -> SpdCompareReport {
    let mut rows: BTreeMap<RowKey, SpdCompareRow> = BTreeMap::new();
    let (mut trace_total, mut unnamed) = (0u128, 0u128);
    for table in summary.ip_tables(progid) {
        for (rva, n) in table.iter() {
            trace_total += n;
            let Some((f, _)) = symbols.lookup(rva) else {
                unnamed += n;
                continue;
            };
            let key = match profile.index_at(f.rva) {
                Some(i) => RowKey::Spd(i),
                None => RowKey::Rva(f.rva),
            };
            let row = rows.entry(key).or_insert_with(|| row(f.name, Some(f.rva)));
            row.trace_samples += n;
        }
    }
    for (i, f) in profile.functions.iter().enumerate() {
        if f.counted || rows.contains_key(&RowKey::Spd(i)) {
            let rva = f.emitted().then_some(f.rva);
            let row = rows
                .entry(RowKey::Spd(i))
                .or_insert_with(|| row(&f.name, rva));
            row.hash = Some(f.hash);
            row.spd_entry = Some(f.entry);
            row.spd_dyninst = Some(f.dyninst);
        }
    }
    let sum = |f: fn(&SpdFunction) -> u64| -> u128 {
        profile.functions.iter().map(|s| u128::from(f(s))).sum()
    };
    let (entry_total, dyninst_total) = (sum(|f| f.entry), sum(|f| f.dyninst));
    let mut rows: Vec<SpdCompareRow> = rows.into_values().collect();
    for r in &mut rows {
        r.trace_share = share(r.trace_samples, trace_total);
        r.spd_entry_share = share(r.spd_entry.unwrap_or(0).into(), entry_total);
        r.spd_dyninst_share = share(r.spd_dyninst.unwrap_or(0).into(), dyninst_total);
    }
    let larger = |r: &SpdCompareRow| r.trace_share.max(r.spd_dyninst_share);
    rows.sort_by(|a, b| {
        larger(b)
            .total_cmp(&larger(a))
            .then_with(|| a.function.cmp(&b.function))
    });
    let functions = rows.len();
    rows.truncate(top);
    SpdCompareReport {
        spd: String::new(),
        progid,
        binary: String::new(),
        trace_total,
        unnamed,
        entry_total,
        dyninst_total,
        functions,
        rows,
    }
}

/// A row with nothing counted yet.
fn row(function: &str, rva: Option<u32>) -> SpdCompareRow {
    SpdCompareRow {
        function: function.to_owned(),
        rva,
        hash: None,
        trace_samples: 0,
        trace_share: 0.0,
        spd_entry: None,
        spd_entry_share: 0.0,
        spd_dyninst: None,
        spd_dyninst_share: 0.0,
    }
}

/// The binary beside each `/match` SPD that matches one of `tables` and whose functions
/// were read, in the order given: what the report shows of them, by function and, on the
/// SPD's blocks, with what the decoder mapped onto them (`blocks`). A binary without names
/// of its own (no PDB) is named by the SPD.
pub(crate) fn of_matches(
    summary: &Summary,
    (tables, symbols): (&Tables, &SymbolMap),
    matches: &[MatchFile],
    blocks: Option<&BlockCounts>,
    top: usize,
) -> Vec<(SpdCompareReport, SpdBlocksReport)> {
    let mut reports = Vec::new();
    for given in matches {
        let (Ok(id), Some(Ok(profile))) = (&given.identity, &given.spd) else {
            continue;
        };
        let verdict = matching::judge(id, tables);
        let (MatchStatus::Match, Some(progid)) = (verdict.status, verdict.progid) else {
            continue;
        };
        let named = symbols.get(Some(progid)).unwrap_or(&profile.symbols);
        let mut report = compare(summary, named, progid, profile, top);
        report.spd = given.path.clone();
        report.binary = tables.binary_name(progid);
        let on = TraceOnBlocks::new(Some(summary), blocks, progid, profile);
        let mut on_blocks = on.report(top);
        on_blocks.spd = given.path.clone();
        on_blocks.progid = progid;
        on_blocks.name = report.binary.clone();
        reports.push((report, on_blocks));
    }
    reports
}
