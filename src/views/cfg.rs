//! `/cfg[:FUNCTION]`: a function's graph on the image's blocks (section 18), or, for a binary
//! without its image whose SPD is given (`/match`, `/compare TRACE SPD`), on the SPD's own
//! blocks; each block and edge with what the LBR ranges and pairs saw of it and its count by
//! the flow inferred from that; without a name, every function with an observation, the most
//! instructions by the flow first, `/top` per binary.
//!
//! ```text
//! Flow of sum_table in progid 0 (lbr.exe) at 0x00001000: 9 blocks, 6 covered, 8 ran by the flow (2 falsely cold)
//!   block  RVA         end         instructions  observed   flow
//!       1  0x00001000  0x0000100E             5       431    431
//!   edge  from  to    kind   observed   flow
//!         entry 1     entry        400    431
//! ```

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::file::{cannot_write, write_file};
use super::option::text;
use super::ranges::{self, read};
use super::{Declaration, Declared, Opt, Profile, Reads, Writes};
use crate::analysis::lbr::cfg::FunctionCfg;
use crate::analysis::lbr::ranges::RangeReport;
use crate::analysis::named;
use crate::analysis::spd::blocks::{self as spdblocks, TraceOnBlocks};
use crate::format::error::Error;
use crate::output::cfgsvg;
use crate::output::text::clean;
use crate::output::text::tables::columns;
use crate::output::{FileInfo, Json, Out, Printer, Render, Reported, Text};

/// `/cfg[:FUNCTION]`, and where its picture goes (`/svg:FILE`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cfg {
    /// The function, as `/functions` names it, or `binary!name`; `None` for every function
    /// with an observation.
    pub function: Option<String>,
    /// Where to draw the function's graph (`/svg:FILE`), with a function named.
    pub svg: Option<PathBuf>,
}

/// What the options of `/cfg` chose.
#[derive(Debug, Default)]
pub(crate) struct Chosen {
    cfg: Option<Option<String>>,
    svg: Option<PathBuf>,
}

/// How many of the closest names an unknown name's error gives.
const CLOSEST: usize = 3;

impl Declared for Cfg {
    const DECLARATION: Declaration = Declaration {
        prints: &["cfg_block", "cfg_edge"],
        ..Declaration::new(
            "cfg",
            6,
            Writes::Tables,
            Reads::LBR_RECORDS.and(Reads::SPD_BLOCKS),
        )
    };
    type Asked = Chosen;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[
        Opt::optional(
            "cfg",
            "/cfg[:FUNCTION]",
            "a function's blocks and edges, each as the LBR ranges saw it and by the\n\
             flow inferred from them; without a name every function seen (with /pdb\n\
             and /image, or an SPD of the binary)",
            |a, v| {
                let function = v.map(text);
                if function.as_deref() == Some("") {
                    return Err("expected a function's name".into());
                }
                a.cfg = Some(function);
                Ok(())
            },
        ),
        Opt::valued(
            "svg",
            "FILE",
            "with /cfg:FUNCTION: draw its graph to FILE (SVG), blocks coloured by\n\
             the flow, edges as thick as theirs",
            |a: &mut Chosen, v| {
                a.svg = Some(PathBuf::from(text(v)));
                Ok(())
            },
        )
        .output(),
    ];

    fn asked(asked: Chosen) -> Result<Option<Self>, String> {
        match (asked.cfg, asked.svg) {
            (None, None) => Ok(None),
            (Some(function), None) => Ok(Some(Cfg {
                function,
                svg: None,
            })),
            (Some(Some(function)), Some(svg)) => Ok(Some(Cfg {
                function: Some(function),
                svg: Some(svg),
            })),
            (_, Some(_)) => {
                Err("/svg:FILE draws one function's graph: give it /cfg:FUNCTION".into())
            }
        }
    }

    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        let top = profile.settings.top;
        let file = profile.file;
        // A binary with an SPD matched or set beside (`/match`, `/compare TRACE SPD`) has
        // the SPD's graph, shown when its image's cannot be.
        let spds = on_spds(profile);
        let report = ranges::shown(profile, out)?;
        let imaged =
            |progid: u16| report.is_some_and(|r| ranges::read(r).any(|b| b.progid == progid));
        let spds: Vec<_> = spds.into_iter().filter(|s| !imaged(s.0)).collect();
        if spds.is_empty() && ranges::unable("cfg", (file, report), out)? {
            return Ok(());
        }
        let mut shown = match report {
            Some(report) => CfgReport::of(report, self.function.as_deref(), top),
            None => CfgReport::default(),
        };
        for (progid, name, on) in &spds {
            let binary = CfgBinary {
                progid: *progid,
                name,
            };
            shown.add_spd(binary, on, self.function.as_deref(), top);
        }
        out.print(|p| p.show(&shown))?;
        if let Some(wanted) = &self.function
            && shown.functions.is_empty()
        {
            let message = unnamed(report, &spds, wanted);
            out.fail(file, &message)?;
        }
        if let (Some(path), Some(&(b, f))) = (&self.svg, shown.functions.first()) {
            draw(out, file, path, (b.name, f), shown.functions.len())?;
        }
        Ok(())
    }
}

/// The binaries with an SPD attached whose LBR records were mapped onto its blocks, each
/// with its name and its records on the SPD's blocks (with the flow on its graph).
pub(super) fn on_spds<'w>(profile: &Profile<'w>) -> Vec<(u16, String, TraceOnBlocks<'w>)> {
    let Some(blocks) = profile.records.blocks.as_ref() else {
        return Vec::new();
    };
    let symbols = profile.symbols;
    let on = blocks.progids().filter_map(|progid| {
        let spd = symbols.spd(progid)?;
        let on = TraceOnBlocks::new(profile.summary.as_ref(), Some(blocks), progid, spd);
        on.flow()?;
        Some((progid, profile.tables.binary_name(progid), on))
    });
    on.collect()
}

/// Draws the graph of `f`, of binary `b`, to `path`, and says so; of `shown` functions of
/// the name, the first (the others' are not drawn, said in a note).
fn draw<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    path: &Path,
    (b, f): (&str, &FunctionCfg),
    shown: usize,
) -> Result<(), Error> {
    let svg = match cfgsvg::svg(f) {
        Ok(svg) => svg,
        Err(why) => {
            let message = format!("/svg: the graph of {} is not drawn: {why}", f.name);
            return out.print(|p| p.note(file, &message));
        }
    };
    if let Err(e) = write_file(path, |w| w.write_all(svg.as_bytes())) {
        return cannot_write(out, file, "picture", path, &e);
    }
    out.print(|p| p.note(file, &drawn(path, (b, f), shown)))
}

/// What a note says of a graph drawn to `path`.
fn drawn(path: &Path, (b, f): (&str, &FunctionCfg), shown: usize) -> String {
    let mut message = format!(
        "the graph of {} in {b} is drawn to {}",
        f.name,
        path.display()
    );
    if f.hash.is_some() {
        message.push_str(" (on the SPD's graph)");
    }
    if shown > 1 {
        message.push_str(&format!(
            " (the first of the {shown} functions of that name)"
        ));
    }
    message
}

/// Why `/cfg:wanted` shows nothing: no function that ran (by the LBR ranges, or by the flow
/// its callers send it) bears the name; the closest of theirs, on the image's graphs and the
/// SPDs'.
fn unnamed(
    report: Option<&RangeReport>,
    spds: &[(u16, String, TraceOnBlocks<'_>)],
    wanted: &str,
) -> String {
    let bare = wanted.rsplit_once('!').map_or(wanted, |(_, f)| f);
    let imaged = report.into_iter().flat_map(read);
    let names = imaged.flat_map(|b| b.cfg.functions.iter().map(|f| f.name.as_str()));
    let flows = spds.iter().filter_map(|(_, _, on)| on.flow());
    let names = names.chain(flows.flat_map(|f| f.functions.iter().map(|f| f.name.as_str())));
    let closest = named::closest(names, bare, CLOSEST);
    format!(
        "/cfg:{wanted}: no function that ran, by the LBR ranges or by the flow its callers \
         send it, bears this name; the closest: {}",
        closest.join(", ")
    )
}

/// A binary whose functions' graphs are shown.
#[derive(Clone, Copy, Debug)]
pub struct CfgBinary<'a> {
    /// Its program ID.
    pub progid: u16,
    /// Its name.
    pub name: &'a str,
}

/// What `/cfg` shows: the functions' graphs, per binary.
#[derive(Default)]
pub struct CfgReport<'a> {
    /// Each function shown, with its binary's program ID and name.
    pub functions: Vec<(CfgBinary<'a>, &'a FunctionCfg)>,
    /// How many functions each binary had to show, before `/top`.
    pub of: Vec<(u16, usize)>,
    /// Whether one function was asked for by name.
    pub named: bool,
}

impl<'a> CfgReport<'a> {
    /// The functions `/cfg` shows of `report`: the one named `function`, in every binary
    /// that has it, or `top` of each binary's functions with an observation, the most
    /// instructions by the flow first (then by RVA).
    pub fn of(report: &'a RangeReport, function: Option<&str>, top: usize) -> CfgReport<'a> {
        let mut functions = Vec::new();
        let mut of = Vec::new();
        for b in read(report) {
            let mut mine: Vec<&FunctionCfg> = match function {
                Some(wanted) => {
                    let named = |f: &&FunctionCfg| named::names(wanted, &b.name, &f.name);
                    b.cfg.functions.iter().filter(named).collect()
                }
                None => b.cfg.functions.iter().filter(|f| f.observed()).collect(),
            };
            mine.sort_by(|x, y| {
                let hotter = y.flow_instructions().cmp(&x.flow_instructions());
                hotter.then(x.rva.cmp(&y.rva))
            });
            of.push((b.progid, mine.len()));
            let shown = if function.is_some() { usize::MAX } else { top };
            let binary = CfgBinary {
                progid: b.progid,
                name: &b.name,
            };
            functions.extend(mine.into_iter().take(shown).map(|f| (binary, f)));
        }
        CfgReport {
            functions,
            of,
            named: function.is_some(),
        }
    }

    /// Adds the graphs on `on`'s SPD of binary `binary`: the function `function` names (as
    /// the SPD has it, or its hash; `binary!name` too), or `top` of those with an
    /// observation, the most instructions by the flow first.
    fn add_spd(
        &mut self,
        binary: CfgBinary<'a>,
        on: &'a TraceOnBlocks<'_>,
        function: Option<&str>,
        top: usize,
    ) {
        let Some(flow) = on.flow() else {
            return;
        };
        let mut mine: Vec<&FunctionCfg> = match function {
            Some(wanted) => {
                let (of, bare) = wanted.rsplit_once('!').unwrap_or((binary.name, wanted));
                let places = match of.eq_ignore_ascii_case(binary.name) {
                    true => spdblocks::named(on.spd(), bare),
                    false => Vec::new(),
                };
                places
                    .into_iter()
                    .filter_map(|f| flow.function(f))
                    .collect()
            }
            None => flow.functions.iter().filter(|f| f.observed()).collect(),
        };
        mine.sort_by(|x, y| {
            let hotter = y.flow_instructions().cmp(&x.flow_instructions());
            hotter.then(x.rva.cmp(&y.rva))
        });
        self.of.push((binary.progid, mine.len()));
        let shown = if function.is_some() { usize::MAX } else { top };
        self.functions
            .extend(mine.into_iter().take(shown).map(|f| (binary, f)));
        self.named = function.is_some();
    }
}

/// A count as the tables show it: `-` for one nothing saw.
fn shown(count: Option<impl ToString>) -> String {
    count.map_or_else(|| "-".to_owned(), |n| n.to_string())
}

/// An edge's end as the tables show it: the block's id, or `entry` and `exit`.
fn end(block: Option<u32>, none: &str) -> String {
    block.map_or_else(|| none.to_owned(), |id| id.to_string())
}

/// A function's blocks and edges as two tables.
fn tables(o: &mut impl Write, f: &FunctionCfg) -> io::Result<()> {
    let blocks: Vec<[String; 6]> = f
        .blocks
        .iter()
        .map(|k| {
            let rva = |at: u32| match k.code {
                true => format!("0x{at:08X}"),
                false => "-".to_owned(),
            };
            [
                k.id.to_string(),
                rva(k.rva),
                rva(k.end),
                k.instructions.to_string(),
                shown(k.observed),
                shown(k.flow),
            ]
        })
        .collect();
    columns(
        o,
        ["block", "RVA", "end", "instructions", "observed", "flow"],
        &blocks,
    )?;
    let edges: Vec<[String; 5]> = f
        .edges
        .iter()
        .map(|e| {
            [
                end(e.from, "entry"),
                end(e.to, "exit"),
                e.kind.name().to_owned(),
                shown(e.observed),
                shown(e.flow),
            ]
        })
        .collect();
    columns(o, ["from", "to", "kind", "observed", "flow"], &edges)
}

impl Render for CfgReport<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        for &(b, f) in &self.functions {
            let o = t.block()?;
            let covered = f.blocks.iter().filter(|b| b.observed.is_some()).count();
            let graph = match f.hash {
                Some(hash) => format!(" on the SPD's graph (hash {hash:016X})"),
                None => String::new(),
            };
            write!(
                o,
                "Flow of {} in progid {} ({}) at 0x{:08X}{graph}: {} blocks, {covered} covered",
                clean(&f.name),
                b.progid,
                clean(b.name),
                f.rva,
                f.blocks.len(),
            )?;
            match &f.raw {
                Some(why) => writeln!(o, "; {why}")?,
                None => writeln!(
                    o,
                    ", {} ran by the flow ({} falsely cold)",
                    f.ran(),
                    f.falsely_cold(),
                )?,
            }
            tables(o, f)?;
            writeln!(
                o,
                "  observed: as the LBR ranges and pairs saw it (-: nothing did, unknown); \
                 flow: inferred, so that every block's count is the sum of its edges'"
            )?;
            if f.hash.is_some() {
                writeln!(
                    o,
                    "  the SPD's blocks and edges as it stores them (inferred: our reading of \
                     the SPD); a block without code (RVA -) is never observed"
                )?;
            }
        }
        for &(progid, n) in &self.of {
            let shown = self
                .functions
                .iter()
                .filter(|(b, _)| b.progid == progid)
                .count();
            if !self.named && shown < n {
                let o = t.block()?;
                writeln!(
                    o,
                    "progid {progid}: {shown} of {n} functions with an observation shown \
                     (/top:N shows more)"
                )?;
            }
        }
        Ok(())
    }

    /// A `cfg_block` line per block and a `cfg_edge` line per edge of each function shown.
    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for &(b, f) in &self.functions {
            let hash = f.hash.map(|h| format!("{h:016X}"));
            let of = Of {
                path: j.path,
                progid: b.progid,
                name: b.name,
                graph: if f.hash.is_some() { "spd" } else { "image" },
                function: &f.name,
                hash: hash.as_deref(),
                function_rva: f.rva,
            };
            for k in &f.blocks {
                j.line(&BlockLine {
                    kind: "cfg_block",
                    of: &of,
                    id: k.id,
                    rva: k.code.then_some(k.rva),
                    end: k.code.then_some(k.end),
                    instructions: k.instructions,
                    observed: k.observed,
                    flow: k.flow,
                })?;
            }
            for e in &f.edges {
                j.line(&EdgeLine {
                    kind: "cfg_edge",
                    of: &of,
                    from: e.from,
                    to: e.to,
                    edge: e.kind.name(),
                    observed: e.observed,
                    flow: e.flow,
                })?;
            }
        }
        Ok(())
    }

    fn reported(&self) -> Option<Reported> {
        let functions = self.functions.iter();
        let functions = functions.map(|&(b, f)| (b.progid, b.name.to_owned(), f.clone()));
        Some(Reported::Cfg(functions.collect()))
    }
}

/// What every line of a function's graph says of whose it is.
#[derive(Serialize)]
struct Of<'a> {
    path: &'a str,
    progid: u16,
    name: &'a str,
    graph: &'static str,
    function: &'a str,
    hash: Option<&'a str>,
    function_rva: u32,
}

#[derive(Serialize)]
struct BlockLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    of: &'a Of<'a>,
    id: u32,
    rva: Option<u32>,
    end: Option<u32>,
    instructions: u32,
    observed: Option<u128>,
    flow: Option<u64>,
}

#[derive(Serialize)]
struct EdgeLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    of: &'a Of<'a>,
    from: Option<u32>,
    to: Option<u32>,
    #[serde(rename = "kind")]
    edge: &'static str,
    observed: Option<u128>,
    flow: Option<u64>,
}
