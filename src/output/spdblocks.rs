//! A trace on an SPD's blocks (`/compare TRACE SPD`): the overlap of the two on shares of
//! dynamic instructions, and the functions where they differ most.
//!
//! ```text
//! trace.spt on the blocks of the SPD app.spd: progid 0 (app.exe), by LBR ranges ...
//!   overlap 87.43% over 812 blocks* with code; ...  {"type":"spd_blocks",...}
//!      loss   shape  trace%  spd%  blocks  ...     {"type":"spd_blocks_function",...}
//! ```

use std::io::{self, Write};

use serde::Serialize;

use super::text::clean;
use super::text::tables::{columns, plural, showing};
use super::{FileInfo, Json, Render, Reported, Text, percent};
use crate::analysis::spd::blocks::{BlockSource, SpdBlocksReport};

/// What JSON says is inferred of a block: its instructions and its code ranges (and so its
/// RVA).
pub(crate) const BLOCK_INFERRED: [&str; 2] = ["instructions", "ranges"];

/// A trace's binary on the blocks of the SPD of its build.
pub struct SpdBlocksShown<'a> {
    /// The trace.
    pub file: &'a FileInfo<'a>,
    /// The comparison.
    pub report: &'a SpdBlocksReport,
}

/// A share as a percentage, two decimals; a share too small to show so is `<0.01%`.
pub(crate) fn share_percent(share: f64) -> String {
    if share > 0.0 && share < 0.000_05 {
        "<0.01%".into()
    } else {
        format!("{:.2}%", share * 100.0)
    }
}

/// What the trace's side was read from, in words.
fn source_words(r: &SpdBlocksReport) -> String {
    match r.source {
        BlockSource::Lbr(order) => format!(
            "by its LBR ranges read {}: {} range{}, {} consistent on the SPD, {} with an end \
             outside every function",
            order.name(),
            r.ranges,
            plural(r.ranges),
            percent(r.consistent, r.ranges),
            r.outside
        ),
        BlockSource::Ip(kind) => format!(
            "by its {} samples: {}, {} of them outside every function",
            kind.name(),
            r.ranges,
            r.outside
        ),
        BlockSource::Nothing => "with no LBR ranges in an order and no IP samples".to_owned(),
    }
}

impl Render for SpdBlocksShown<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let r = self.report;
        let o = t.block()?;
        writeln!(
            o,
            "{} on the blocks of the SPD {}: progid {} ({}), {}",
            clean(&self.file.label()),
            clean(&r.spd),
            r.progid,
            clean(&r.name),
            source_words(r)
        )?;
        let overlap = r.overlap.map_or_else(|| "-".to_owned(), share_percent);
        writeln!(
            o,
            "  overlap {overlap} over {} blocks* with code; this trace ran {} of them",
            r.blocks, r.ran
        )?;
        writeln!(
            o,
            "  blocks this trace ran that the SPD holds cold: {} (what it would add); blocks \
             the SPD counts that this trace never ran: {}",
            r.ran_cold, r.cold_ran
        )?;
        if let Some(flow) = &r.flow {
            let overlap = flow.overlap.map_or_else(|| "-".to_owned(), share_percent);
            writeln!(
                o,
                "  by the flow inferred on the SPD's graph from these ranges: overlap \
                 {overlap}; {} blocks ran, {} of them held cold by the SPD; {} the SPD counts \
                 did not run",
                flow.ran, flow.ran_cold, flow.cold_ran
            )?;
        }
        if r.rows.is_empty() {
            return Ok(());
        }
        writeln!(
            o,
            "  the functions where the two differ most, by loss (the losses add up to 1 - \
             overlap): {} function{}{}",
            r.functions,
            plural(r.functions as u128),
            showing(r.rows.len(), r.functions)
        )?;
        let rows: Vec<[String; 8]> = r
            .rows
            .iter()
            .map(|f| {
                [
                    share_percent(f.loss),
                    f.shape_overlap
                        .map_or_else(|| "-".to_owned(), share_percent),
                    share_percent(f.trace_share),
                    f.flow_share.map_or_else(|| "-".to_owned(), share_percent),
                    share_percent(f.spd_share),
                    f.blocks.to_string(),
                    f.ran_cold.to_string(),
                    clean(&f.name).into_owned(),
                ]
            })
            .collect();
        let headings = [
            "loss", "shape", "trace%", "flow%", "spd%", "blocks", "ran cold", "function",
        ];
        columns(o, headings, &rows)?;
        writeln!(
            o,
            "  * inferred: a block's code ranges and instructions, our reading of the SPD; \
             shares are of dynamic instructions (count x instructions)"
        )
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        let r = self.report;
        j.line(&SpdBlocksLine {
            path: j.path,
            spd: &r.spd,
            progid: r.progid,
            name: &r.name,
            source: r.source.name(),
            order: r.source.order().map(|o| o.name()),
            ranges: r.ranges,
            consistent: r.consistent,
            outside: r.outside,
            overlap: r.overlap,
            flow_overlap: r.flow.as_ref().and_then(|f| f.overlap),
            flow_ran_cold: r.flow.as_ref().map(|f| f.ran_cold),
            flow_cold_ran: r.flow.as_ref().map(|f| f.cold_ran),
            blocks: r.blocks,
            ran: r.ran,
            ran_cold: r.ran_cold,
            cold_ran: r.cold_ran,
            inferred: BLOCK_INFERRED,
        })?;
        for f in &r.rows {
            j.line(&SpdBlocksFunctionLine {
                path: j.path,
                spd: &r.spd,
                progid: r.progid,
                hash: format!("{:016X}", f.hash),
                name: &f.name,
                rva: f.rva,
                loss: f.loss,
                shape_overlap: f.shape_overlap,
                trace_share: f.trace_share,
                spd_share: f.spd_share,
                blocks: f.blocks,
                ran_cold: f.ran_cold,
                flow_share: f.flow_share,
            })?;
        }
        Ok(())
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::SpdBlocks(self.report.clone()))
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "spd_blocks")]
struct SpdBlocksLine<'a> {
    path: &'a str,
    spd: &'a str,
    progid: u16,
    name: &'a str,
    source: &'a str,
    order: Option<&'a str>,
    ranges: u128,
    consistent: u128,
    outside: u128,
    overlap: Option<f64>,
    flow_overlap: Option<f64>,
    flow_ran_cold: Option<usize>,
    flow_cold_ran: Option<usize>,
    blocks: usize,
    ran: usize,
    ran_cold: usize,
    cold_ran: usize,
    inferred: [&'static str; 2],
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "spd_blocks_function")]
struct SpdBlocksFunctionLine<'a> {
    path: &'a str,
    spd: &'a str,
    progid: u16,
    hash: String,
    name: &'a str,
    rva: u32,
    loss: f64,
    shape_overlap: Option<f64>,
    trace_share: f64,
    spd_share: f64,
    blocks: usize,
    ran_cold: usize,
    flow_share: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::share_percent;

    /// Two decimals; a share above 0 that would show as 0.00% shows as `<0.01%`, and one
    /// that rounds to 0.01% as that.
    #[test]
    fn a_share_too_small_to_show_says_so() {
        assert_eq!(share_percent(0.0), "0.00%");
        assert_eq!(share_percent(0.000_01), "<0.01%");
        assert_eq!(share_percent(0.000_049), "<0.01%");
        assert_eq!(share_percent(0.000_05), format!("{:.2}%", 0.000_05 * 100.0));
        assert_eq!(share_percent(0.000_06), "0.01%");
        assert_eq!(share_percent(0.5), "50.00%");
        assert_eq!(share_percent(1.0), "100.00%");
    }
}
