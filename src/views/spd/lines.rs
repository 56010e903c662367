//! What spddump's views share: how a function's profile, its callees and its flow graph are
//! shown (by `/symbol`, `/func`, `/coverage`, `/cg`, `/fg` and `/funcid`), in text and in
//! JSON Lines. A column or field marked `*` is inferred (consistent in every known SPD; its
//! meaning is our reading), one marked `?` is unknown and shown raw; each view's title says
//! so where it has either. JSON lines are small serialize-only structs, `"type"` first,
//! `"file"` second; hashes are 16 upper-case hex digits; a line's `"inferred"` lists its keys
//! whose meaning is our reading.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::shown::Shown;
use crate::analysis::spd::figures::{callee_kind, callee_name};
use crate::image::imports::ImportNames;
use crate::image::spd::function::Function;
use crate::image::spd::table::FunctionTable;

/// The legend of a view with inferred columns.
pub(super) const INFERRED: &str = "* inferred";
/// The legend of a view with inferred and unknown columns.
pub(super) const BOTH: &str = "* inferred, ? unknown (raw)";

/// The flags of an entry: static, folded, as read (inferred).
pub(super) fn flags(f: &Function<'_>) -> String {
    let mut s = format!("{:#04X}", f.symbol().flags);
    if f.is_static() {
        s.push_str(" static");
    }
    if let Some(rva) = f.folded_into() {
        s.push_str(&format!(" folded into {rva:#X}"));
    }
    s
}

/// One function in detail (`/funcid`).
pub(super) fn detail_text(
    out: &mut impl Write,
    t: &FunctionTable,
    f: &Function<'_>,
) -> io::Result<()> {
    let p = f.profile();
    let s = f.symbol();
    writeln!(out, "Function {} ({BOTH})", f.name())?;
    writeln!(out, "  hash          {:016X}", f.hash())?;
    writeln!(out, "  id*           {}", s.id)?;
    writeln!(out, "  RVA*          {:#X}", f.rva())?;
    writeln!(out, "  size*         {:#X}", f.code_size())?;
    writeln!(out, "  flags*        {}", flags(f))?;
    writeln!(out, "  checksum*     {:#010X}", f.checksum())?;
    writeln!(
        out,
        "  record        {} of {}, at {:#X}",
        f.index() + 1,
        t.len(),
        f.offset()
    )?;
    write!(out, "  unknown       ent+14? {:#X}", s.unknown_14)?;
    for (at, v) in f.unknown_words() {
        write!(out, "  rec+{at:02X}? {v:#X}")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "  entry {}  blocks {}  edges {}  instructions* {}  dyninst* {}  covered {}\n",
        p.entry, p.blocks, p.edges, p.instructions, p.dyninst, p.covered
    )
}

/// Each function's callees, with call counts and calling blocks (`/cg`).
pub(super) fn calls_text<'t>(
    out: &mut impl Write,
    t: &'t FunctionTable,
    imports: &ImportNames,
    functions: impl Iterator<Item = Function<'t>>,
) -> io::Result<()> {
    writeln!(
        out,
        "Call graph: callees by caller ({INFERRED}: calls are the callee entries' counters)"
    )?;
    for f in functions {
        let mut callees = f.callees().peekable();
        if callees.peek().is_none() {
            continue;
        }
        writeln!(out, "  {}  {:016X}", f.name(), f.hash())?;
        for c in callees {
            let name = callee_name(t, imports, &c).map_or_else(|| "-".into(), |n| n.into_owned());
            let sites: Vec<String> = c.sites().map(|s| s.to_string()).collect();
            writeln!(
                out,
                "    {:>12} calls*  {:016X}  {:<8}  from block {:<6}  {}",
                c.calls,
                c.hash,
                callee_kind(c.kind),
                sites.join(","),
                name
            )?;
        }
    }
    writeln!(out)
}

/// Each function's blocks, written as they are read (`/fg`).
pub(super) fn flow_text<'t>(
    out: &mut impl Write,
    functions: impl Iterator<Item = Function<'t>>,
) -> io::Result<()> {
    writeln!(
        out,
        "Flow graphs: blocks with count, instructions, RVA ranges, successors (block:edge \
         count) ({BOTH})"
    )?;
    for f in functions {
        writeln!(
            out,
            "  {}  {:016X}  RVA* {:#X}  size* {:#X}  {} blocks  {} edges  checksum* {:#010X}",
            f.name(),
            f.hash(),
            f.rva(),
            f.code_size(),
            f.block_count(),
            f.edge_count(),
            f.checksum()
        )?;
        flow_blocks(out, &f)?;
        for tail in f.tail() {
            writeln!(
                out,
                "    tail? hash {:016X}  flags {:#X}  count {}  last {:#X}",
                tail.hash, tail.flags, tail.count, tail.last
            )?;
        }
    }
    writeln!(out)
}

/// The blocks of one function, a line each.
fn flow_blocks(out: &mut impl Write, f: &Function<'_>) -> io::Result<()> {
    let index = f.block_index();
    let unconserved = f.unconserved();
    let rva = u64::from(f.rva());
    for b in f.blocks() {
        let ranges: Vec<String> = b
            .ranges()
            .map(|(o, l)| {
                format!(
                    "{:#X}-{:#X}",
                    rva + u64::from(o),
                    rva + u64::from(o) + u64::from(l)
                )
            })
            .collect();
        let successors: Vec<String> = b
            .successors()
            .map(|s| {
                let to = index.id_at(s.target).unwrap_or(0);
                match s.unknown {
                    0 => format!("{to}:{}", s.count),
                    u => format!("{to}:{} (?{u:#X})", s.count),
                }
            })
            .collect();
        let successors = match successors.is_empty() {
            true => "exit".to_owned(),
            false => successors.join(" "),
        };
        write!(
            out,
            "    block {:>4}  count {:>12}  instr* {:>5}  flags? {:#X}  ranges* {}  -> {}",
            b.id,
            b.count,
            b.instructions,
            b.flags,
            if ranges.is_empty() {
                "-".to_owned()
            } else {
                ranges.join(",")
            },
            successors
        )?;
        if b.value_profiles != 0 || !b.inline_bytes.is_empty() {
            write!(
                out,
                "  ({} value profiles, {} inline bytes: undecoded)",
                b.value_profiles,
                b.inline_bytes.len()
            )?;
        }
        if unconserved.contains(&b.id) {
            write!(
                out,
                "  (not conserved: its count is not the sum of its edges')"
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// A hash as JSON holds it.
pub(super) fn hex(hash: u64) -> String {
    format!("{hash:016X}")
}

pub(super) fn line(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    // An I/O error stays one (a reader gone is a broken pipe, ended quietly).
    serde_json::to_writer(&mut *out, value).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

#[derive(Serialize)]
struct FunctionLine<'a> {
    r#type: &'static str,
    file: &'a str,
    hash: String,
    name: &'a str,
    id: u32,
    rva: u32,
    size: u32,
    flags: u32,
    r#static: bool,
    folded_into: Option<u32>,
    checksum: u32,
    entry: u64,
    blocks: u32,
    edges: u32,
    instructions: u64,
    dyninst: u64,
    covered: u32,
    conserved: bool,
    unknown: BTreeMap<String, u32>,
    inferred: &'static [&'static str],
}

/// The keys of `spd_function` that are inferred.
const FUNCTION_INFERRED: &[&str] = &[
    "id",
    "rva",
    "size",
    "flags",
    "static",
    "folded_into",
    "checksum",
    "instructions",
    "dyninst",
];

/// `spd_function`, for every function, once whichever of the views that show them asks
/// first (JSON).
pub(crate) fn list_functions(s: &mut Shown<'_>) -> io::Result<()> {
    if std::mem::replace(&mut s.functions_listed, true) {
        return Ok(());
    }
    for f in s.table().functions() {
        function_json(s, &f)?;
    }
    Ok(())
}

/// `spd_function`, for one.
pub(super) fn function_json(s: &mut Shown<'_>, f: &Function<'_>) -> io::Result<()> {
    let p = f.profile();
    let name = f.name();
    let mut unknown: BTreeMap<String, u32> = f
        .unknown_words()
        .iter()
        .map(|(at, v)| (format!("rec+{at:02X}"), *v))
        .collect();
    unknown.insert("ent+14".into(), f.symbol().unknown_14);
    line(
        &mut s.out,
        &FunctionLine {
            r#type: "spd_function",
            file: s.file,
            hash: hex(f.hash()),
            name: &name,
            id: f.symbol().id,
            rva: f.rva(),
            size: f.code_size(),
            flags: f.symbol().flags,
            r#static: f.is_static(),
            folded_into: f.folded_into(),
            checksum: f.checksum(),
            entry: p.entry,
            blocks: p.blocks,
            edges: p.edges,
            instructions: p.instructions,
            dyninst: p.dyninst,
            covered: p.covered,
            conserved: p.conserved,
            unknown,
            inferred: FUNCTION_INFERRED,
        },
    )
}

#[derive(Serialize)]
struct CallLine<'a> {
    r#type: &'static str,
    file: &'a str,
    caller: String,
    callee: String,
    callee_name: Option<&'a str>,
    import: bool,
    kind: u32,
    calls: u64,
    sites: Vec<u32>,
    inferred: &'static [&'static str],
}

/// `spd_call`, for each callee of each of `functions`.
pub(super) fn calls_json<'t>(
    s: &mut Shown<'_>,
    t: &'t FunctionTable,
    imports: &ImportNames,
    functions: impl Iterator<Item = Function<'t>>,
) -> io::Result<()> {
    for f in functions {
        for c in f.callees() {
            let name = callee_name(t, imports, &c);
            line(
                &mut s.out,
                &CallLine {
                    r#type: "spd_call",
                    file: s.file,
                    caller: hex(f.hash()),
                    callee: hex(c.hash),
                    callee_name: name.as_deref(),
                    import: c.is_import(),
                    kind: c.kind,
                    calls: c.calls,
                    sites: c.sites().collect(),
                    inferred: &["calls"],
                },
            )?;
        }
    }
    Ok(())
}

#[derive(Serialize)]
struct Successor {
    block: u32,
    count: u64,
    unknown: u32,
}

#[derive(Serialize)]
struct BlockLine<'a> {
    r#type: &'static str,
    file: &'a str,
    function: &'a str,
    id: u32,
    count: u64,
    instructions: u32,
    ranges: Vec<[u32; 2]>,
    successors: Vec<Successor>,
    value_profiles: u32,
    inline_bytes: usize,
    unknown_flags: u32,
    inferred: &'static [&'static str],
}

#[derive(Serialize)]
struct TailLine<'a> {
    r#type: &'static str,
    file: &'a str,
    function: &'a str,
    unknown_hash: String,
    unknown_flags: u32,
    unknown_count: u64,
    unknown_last: u32,
}

/// `spd_block` for each block, then `spd_tail` for each tail entry, of each of
/// `functions`, written as they are read.
pub(super) fn flow_json<'t>(
    s: &mut Shown<'_>,
    functions: impl Iterator<Item = Function<'t>>,
) -> io::Result<()> {
    for f in functions {
        let hash = hex(f.hash());
        let index = f.block_index();
        for b in f.blocks() {
            let successors = b
                .successors()
                .map(|x| Successor {
                    block: index.id_at(x.target).unwrap_or(0),
                    count: x.count,
                    unknown: x.unknown,
                })
                .collect();
            line(
                &mut s.out,
                &BlockLine {
                    r#type: "spd_block",
                    file: s.file,
                    function: &hash,
                    id: b.id,
                    count: b.count,
                    instructions: b.instructions,
                    ranges: b.ranges().map(|(o, l)| [o, l]).collect(),
                    successors,
                    value_profiles: b.value_profiles,
                    inline_bytes: b.inline_bytes.len(),
                    unknown_flags: b.flags,
                    inferred: &["instructions", "ranges"],
                },
            )?;
        }
        for tail in f.tail() {
            line(
                &mut s.out,
                &TailLine {
                    r#type: "spd_tail",
                    file: s.file,
                    function: &hash,
                    unknown_hash: hex(tail.hash),
                    unknown_flags: tail.flags,
                    unknown_count: tail.count,
                    unknown_last: tail.last,
                },
            )?;
        }
    }
    Ok(())
}
