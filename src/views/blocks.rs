//! `/blocks:NAME` (with `/compare TRACE SPD`): one function's blocks side by side, in id
//! order: their code ranges, instructions, the SPD's count and share, the trace's. NAME is
//! a name as the SPD has it (every function bearing it) or a 16-hex-digit hash; a name no
//! function bears is an error naming the closest names.
//!
//! ```text
//! Blocks of _ebpf_murmur3_32 (hash 2A311577F7D30750, RVA 0x00012340) beside the SPD ...
//!     id  instructions*  spd count   spd%  trace count  trace%  flow  ranges*
//!      2              1  101352192  1.20%         3000   2.10%  3000  0x00012340+8
//! ```

use std::io::{self, Write};

use serde::Serialize;

use super::option::text;
use super::{Beside, Compared, Declaration, Declared, Merged, Opt, Profile, Reads, Writes};
use crate::analysis::spd::blocks::{self as spdblocks, BlockSource, SpdBlockRow};
use crate::format::error::Error;
use crate::output::spdblocks::{BLOCK_INFERRED, share_percent};
use crate::output::text::clean;
use crate::output::text::tables::{columns, plural};
use crate::output::{FileInfo, Json, Out, Printer, Render, Reported, Text};

/// `/blocks:NAME`: the functions whose blocks are set beside the SPD's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Blocks {
    /// The names or hashes, as given.
    pub names: Vec<String>,
}

/// How many of the closest names an unknown name's error gives.
const CLOSEST: usize = 3;

impl Declared for Blocks {
    const DECLARATION: Declaration = Declaration {
        prints: &["spd_block_compare"],
        merged: Merged::Refused("sets one trace beside an SPD"),
        compared: Compared::BesideSpd,
        ..Declaration::new(
            "blocks",
            7,
            Writes::Tables,
            Reads::SPD_BLOCKS.and(Reads::SAMPLES),
        )
    };
    type Asked = Vec<String>;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::valued(
        "blocks",
        "NAME",
        "with /compare TRACE SPD: a function's blocks beside the SPD's (counts and\n\
         shares); NAME as the SPD has it, or its hash; may be repeated",
        |a, v| {
            let name = text(v);
            if name.is_empty() {
                return Err("expected a function's name or hash".into());
            }
            a.push(name);
            Ok(())
        },
    )];

    fn asked(names: Vec<String>) -> Result<Option<Self>, String> {
        Ok((!names.is_empty()).then_some(Blocks { names }))
    }

    /// Nothing of a trace on its own: the view is of a trace beside an SPD.
    fn show<P: Printer>(&self, _: &mut Profile<'_>, _: &mut Out<'_, P>) -> Result<(), Error> {
        Ok(())
    }

    /// Each function's blocks, or the error that names the closest names.
    fn beside<P: Printer>(&self, beside: &Beside<'_>, printer: &mut P) -> io::Result<bool> {
        let mut failed = false;
        for name in &self.names {
            let functions = spdblocks::named(beside.spd, name);
            if functions.is_empty() {
                let closest = spdblocks::closest(beside.spd, name, CLOSEST);
                let message = format!(
                    "/blocks:{name}: no function of the SPD {} bears this name or hash; the \
                     closest: {}",
                    beside.spd_path,
                    closest.join(", ")
                );
                printer.error(beside.file, &message)?;
                failed = true;
                continue;
            }
            for f in functions {
                let function = &beside.spd.functions[f];
                let shown = BlockRows {
                    file: beside.file,
                    spd: beside.spd_path,
                    hash: function.hash,
                    name: &function.name,
                    rva: function.emitted().then_some(function.rva),
                    source: beside.on.source(),
                    rows: beside.on.blocks_of(f),
                };
                printer.show(&shown)?;
            }
        }
        Ok(failed)
    }
}

/// One function's blocks, both sides.
pub struct BlockRows<'a> {
    /// The trace.
    pub file: &'a FileInfo<'a>,
    /// The SPD, as given.
    pub spd: &'a str,
    /// The function's hash.
    pub hash: u64,
    /// Its name, as the SPD has it.
    pub name: &'a str,
    /// Its RVA, when it was emitted.
    pub rva: Option<u32>,
    /// What the trace's side was read from.
    pub source: BlockSource,
    /// Its blocks that hold code, in id order.
    pub rows: Vec<SpdBlockRow>,
}

impl Render for BlockRows<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let o = t.block()?;
        let at = self.rva.map_or_else(
            || "not emitted".to_owned(),
            |rva| format!("RVA {rva:#010X}"),
        );
        writeln!(
            o,
            "Blocks of {} (hash {:016X}, {at}) beside the SPD {}, {}: {} block{}* with code",
            clean(self.name),
            self.hash,
            clean(self.spd),
            match self.source {
                BlockSource::Lbr(order) => format!("by LBR ranges read {}", order.name()),
                BlockSource::Ip(kind) => format!("by {} samples", kind.name()),
                BlockSource::Nothing => "nothing of the trace to set beside them".to_owned(),
            },
            self.rows.len(),
            plural(self.rows.len() as u128),
        )?;
        let trace = match self.source {
            BlockSource::Ip(_) => "trace hits",
            _ => "trace count",
        };
        let rows: Vec<[String; 8]> = self
            .rows
            .iter()
            .map(|b| {
                let ranges: Vec<String> = (b.ranges.iter())
                    .map(|(rva, len)| format!("{rva:#010X}+{len}"))
                    .collect();
                [
                    b.id.to_string(),
                    b.instructions.to_string(),
                    b.spd_count.to_string(),
                    share_percent(b.spd_share),
                    b.trace.to_string(),
                    share_percent(b.trace_share),
                    b.flow_count
                        .map_or_else(|| "-".to_owned(), |n| n.to_string()),
                    ranges.join(" "),
                ]
            })
            .collect();
        let headings = [
            "id",
            "instructions*",
            "spd count",
            "spd%",
            trace,
            "trace%",
            "flow",
            "ranges*",
        ];
        columns(o, headings, &rows)
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        let ip = matches!(self.source, BlockSource::Ip(_));
        for b in &self.rows {
            j.line(&BlockLine {
                path: j.path,
                spd: self.spd,
                hash: format!("{:016X}", b.hash),
                name: &b.name,
                id: b.id,
                ranges: b.ranges.iter().map(|&(rva, len)| [rva, len]).collect(),
                instructions: b.instructions,
                spd_count: b.spd_count,
                trace_count: (!ip).then_some(b.trace),
                trace_hits: ip.then_some(b.trace),
                spd_share: b.spd_share,
                trace_share: b.trace_share,
                flow_count: b.flow_count,
                inferred: BLOCK_INFERRED,
            })?;
        }
        Ok(())
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::SpdBlockRows(self.rows.clone()))
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "spd_block_compare")]
struct BlockLine<'a> {
    path: &'a str,
    spd: &'a str,
    hash: String,
    name: &'a str,
    id: u32,
    ranges: Vec<[u32; 2]>,
    instructions: u32,
    spd_count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_count: Option<u128>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_hits: Option<u128>,
    spd_share: f64,
    trace_share: f64,
    flow_count: Option<u64>,
    inferred: [&'static str; 2],
}
