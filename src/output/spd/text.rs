//! The text views of `spddump`. A column or field marked `*` is inferred (consistent in
//! every known SPD; its meaning is our reading), one marked `?` is unknown and shown raw;
//! each view's title says so where it has either.

use std::io::{self, Write};

use crate::format::progid::{SymKey, registry_form};
use crate::image::imports::ImportNames;
use crate::image::spd::Header;
use crate::image::spd::function::Function;
use crate::image::spd::table::FunctionTable;

use super::figures::{callee_kind, callee_name, coverage as cover, percent_one, ranked_by_dyninst};

/// The legend of a view with inferred columns.
const INFERRED: &str = "* inferred";
/// The legend of a view with inferred and unknown columns.
const BOTH: &str = "* inferred, ? unknown (raw)";

/// `/header`: the identity (section 10), the version, the raw totals.
pub(super) fn header(out: &mut impl Write, h: &Header) -> io::Result<()> {
    let spd = &h.spd;
    writeln!(out, "SPD header")?;
    writeln!(out, "  binary        {}", spd.binary)?;
    writeln!(out, "  GUID          {{{}}}", registry_form(&spd.guid))?;
    writeln!(out, "  age           {} (inferred)", spd.age)?;
    writeln!(out, "  key           {}", SymKey::new(spd.guid, spd.age))?;
    let version = match spd.new_version() {
        true => " (not seen before: its fields may mean something else)",
        false => "",
    };
    writeln!(out, "  version       {:#X}{version}", spd.version)?;
    writeln!(
        out,
        "  name hash     {:#010X} (djb2 of the binary's name)",
        h.name_hash
    )?;
    writeln!(out, "  functions     {}", spd.functions)?;
    let profiled = if spd.profiled {
        "yes"
    } else {
        "not yet profiled"
    };
    writeln!(out, "  profiled      {profiled}")?;
    writeln!(
        out,
        "  totals (raw)  {} {} (as stored; what they count is unknown)",
        h.totals[0], h.totals[1]
    )?;
    writeln!(out)
}

/// `/module`: the module block's header, named where known, raw where not.
pub(super) fn module(out: &mut impl Write, t: &FunctionTable) -> io::Result<()> {
    let h = t.header();
    writeln!(out, "Module block at {:#X}, {:#X} bytes", t.base(), h.size)?;
    writeln!(
        out,
        "  symbol table  offset {:#X}  size {:#X}  {} slots  {} buckets",
        h.symbols[0],
        h.symbols[1],
        h.slots(),
        h.symbols[2]
    )?;
    writeln!(
        out,
        "  records       offset {:#X}  size {:#X}  end {:#X}",
        h.records[0], h.records[1], h.records[2]
    )?;
    writeln!(out, "  functions     {}", h.functions)?;
    writeln!(
        out,
        "  string table  offset {:#X}  size {:#X}  then {} pad bytes",
        h.strings[0],
        h.strings[1],
        h.pad()
    )?;
    write!(out, "  unknown       ")?;
    for (i, (at, v)) in h.unknown.iter().enumerate() {
        let sep = if i == 0 { "" } else { "  " };
        write!(out, "{sep}+{at:02X}? {v:#X}")?;
    }
    writeln!(out, "\n")
}

/// The flags of an entry: static, folded, as read (inferred).
fn flags(f: &Function<'_>) -> String {
    let mut s = format!("{:#04X}", f.symbol().flags);
    if f.is_static() {
        s.push_str(" static");
    }
    if let Some(rva) = f.folded_into() {
        s.push_str(&format!(" folded into {rva:#X}"));
    }
    s
}

/// `/symbol`: each function's entry: hash, id, RVA, size, flags, name.
pub(super) fn symbols(out: &mut impl Write, t: &FunctionTable) -> io::Result<()> {
    writeln!(out, "Symbols: {} functions ({INFERRED})", t.len())?;
    writeln!(
        out,
        "  {:<16}  {:>6}  {:>10}  {:>8}  {:<26}  name",
        "hash", "id*", "RVA*", "size*", "flags*"
    )?;
    for f in t.functions() {
        writeln!(
            out,
            "  {:016X}  {:>6}  {:>#10X}  {:>#8X}  {:<26}  {}",
            f.hash(),
            f.symbol().id,
            f.rva(),
            f.code_size(),
            flags(&f),
            f.name()
        )?;
    }
    writeln!(out)
}

/// `/func`: each function's profile.
pub(super) fn functions(out: &mut impl Write, t: &FunctionTable) -> io::Result<()> {
    writeln!(
        out,
        "Function profiles: {} functions ({INFERRED}; dyninst = Σ block count × instructions, \
         our estimate)",
        t.len()
    )?;
    writeln!(
        out,
        "  {:<16}  {:>12}  {:>6}  {:>6}  {:>7}  {:>16}  {:>7}  name",
        "hash", "entry", "blocks", "edges", "instr*", "dyninst*", "covered"
    )?;
    for f in t.functions() {
        let p = f.profile();
        writeln!(
            out,
            "  {:016X}  {:>12}  {:>6}  {:>6}  {:>7}  {:>16}  {:>7}  {}",
            f.hash(),
            p.entry,
            p.blocks,
            p.edges,
            p.instructions,
            p.dyninst,
            p.covered,
            f.name()
        )?;
    }
    writeln!(out)
}

/// `/funcid`: one function in detail.
pub(super) fn detail(out: &mut impl Write, t: &FunctionTable, f: &Function<'_>) -> io::Result<()> {
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

/// `/cg`: each function's callees, with call counts and calling blocks.
pub(super) fn calls<'t>(
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

/// `/fg`: each function's blocks, written as they are read.
pub(super) fn flow<'t>(
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
        writeln!(out)?;
    }
    Ok(())
}

/// `/coverage`: per function and overall, blocks with a count (our estimate).
pub(super) fn coverage(out: &mut impl Write, t: &FunctionTable) -> io::Result<()> {
    writeln!(
        out,
        "Coverage: blocks with a count, per function (our estimate; SPDDump's definition is \
         not published)"
    )?;
    writeln!(
        out,
        "  {:>6}  {:>7}  {:>6}  name",
        "blocks", "covered", "share"
    )?;
    for f in t.functions() {
        let p = f.profile();
        writeln!(
            out,
            "  {:>6}  {:>7}  {:>6}  {}",
            p.blocks,
            p.covered,
            percent_one(p.covered.into(), p.blocks.into()),
            f.name()
        )?;
    }
    let c = cover(t);
    writeln!(
        out,
        "  all: {} of {} blocks covered ({}); {} of {} functions with a covered block\n",
        c.covered,
        c.blocks,
        percent_one(c.covered.into(), c.blocks.into()),
        c.covered_functions,
        c.functions
    )
}

/// `/dyninst[:n]`: the top n functions by estimated dynamic instructions.
pub(super) fn dyninst(out: &mut impl Write, t: &FunctionTable, n: usize) -> io::Result<()> {
    let (top, total) = ranked_by_dyninst(t, n);
    writeln!(
        out,
        "Dynamic instructions: top {n} of {} functions (our estimate: Σ block count × \
         instructions*, {INFERRED}; SPDDump's definition is not published)",
        t.len()
    )?;
    writeln!(
        out,
        "  {:>4}  {:>16}  {:>6}  {:>12}  name",
        "rank", "dyninst*", "share", "entry"
    )?;
    for (rank, (index, p)) in top.iter().enumerate() {
        let name = t
            .function(*index)
            .map(|f| f.name().into_owned())
            .unwrap_or_default();
        writeln!(
            out,
            "  {:>4}  {:>16}  {:>6}  {:>12}  {name}",
            rank + 1,
            p.dyninst,
            percent_one(p.dyninst.into(), total),
            p.entry
        )?;
    }
    writeln!(out, "  all: {total}\n")
}
