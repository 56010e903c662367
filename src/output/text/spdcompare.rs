//! The text form of `/compare TRACE SPD`: a binary's function shares in the trace beside
//! the SPD's.

use std::io::{self, Write};

use super::lbr::table;
use super::sink::{TextPrinter, clean};
use super::summary::{plural, showing};
use crate::analysis::spdcompare::SpdCompareReport;
use crate::output::FileInfo;

/// A share as a percentage with two decimals.
fn pct(share: f64) -> String {
    format!("{:.2}%", 100.0 * share)
}

/// The table of `/compare TRACE SPD`, the legend of its marks under it.
pub(super) fn spd_compare<W: Write, E: Write>(
    p: &mut TextPrinter<W, E>,
    file: &FileInfo<'_>,
    r: &SpdCompareReport,
) -> io::Result<()> {
    let o = p.block()?;
    writeln!(
        o,
        "{} beside the SPD {}: progid {} ({}), {} IP sample{} ({} in no function); the SPD: {} \
         entries, {} dynamic instructions*; {} function{}{}",
        clean(&file.label()),
        clean(&r.spd),
        r.progid,
        clean(&r.binary),
        r.trace_total,
        plural(r.trace_total),
        r.unnamed,
        r.entry_total,
        r.dyninst_total,
        r.functions,
        plural(r.functions as u128),
        showing(r.rows.len(), r.functions),
    )?;
    let or_dash = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    let rows: Vec<[String; 7]> = r
        .rows
        .iter()
        .map(|row| {
            [
                row.trace_samples.to_string(),
                pct(row.trace_share),
                or_dash(row.spd_entry),
                pct(row.spd_entry_share),
                or_dash(row.spd_dyninst),
                pct(row.spd_dyninst_share),
                clean(&row.function).into_owned(),
            ]
        })
        .collect();
    let headings = [
        "samples", "trace%", "entries", "entry%", "dyninst*", "dyninst%", "function",
    ];
    table(o, headings, &rows)?;
    writeln!(
        o,
        "  * inferred: the sum of block count x instructions, our estimate; - no record in \
         the SPD"
    )
}
