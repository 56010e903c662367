//! The JSON Lines of `spddump`: one object per line, `"type"` first, `"file"` second.
//!
//! ```text
//! {"type":"spd_header","file":"app.spd","binary":"app.exe","guid":"7A76D39E-...","age":1,...}
//! {"type":"spd_module","file":"app.spd","offset":192,"size":2304,...}
//! {"type":"spd_function","file":"app.spd","hash":"0123456789ABCDEF","name":"main_entry",...}
//! {"type":"spd_call","file":"app.spd","caller":"...","callee":"...","calls":1,"sites":[1],...}
//! {"type":"spd_block","file":"app.spd","function":"...","id":1,"count":1,...}
//! {"type":"spd_tail","file":"app.spd","function":"...","hash":"...","flags":1,...}
//! {"type":"spd_coverage","file":"app.spd","blocks":23,"covered":19,...}
//! {"type":"spd_dyninst","file":"app.spd","rank":1,"hash":"...","dyninst":1234,...}
//! ```
//!
//! Hashes are 16 upper-case hex digits. A line's `"inferred"` lists its keys whose meaning
//! is our reading of the format (consistent in every known SPD); keys named `unknown...`
//! hold fields whose meaning is not known, raw. Each line is a small serialize-only struct.

use crate::image::imports::ImportNames;
use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use crate::format::progid::{SymKey, registry_form};
use crate::image::spd::Header;
use crate::image::spd::function::Function;
use crate::image::spd::table::FunctionTable;

use super::figures::{callee_name, coverage as cover, fraction, ranked_by_dyninst};
use super::sink::Sink;

/// A hash as JSON holds it.
fn hex(hash: u64) -> String {
    format!("{hash:016X}")
}

fn line(out: &mut impl Write, value: &impl Serialize) -> io::Result<()> {
    // An I/O error stays one (a reader gone is a broken pipe, ended quietly).
    serde_json::to_writer(&mut *out, value).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

#[derive(Serialize)]
struct HeaderLine<'a> {
    r#type: &'static str,
    file: &'a str,
    binary: &'a str,
    guid: String,
    age: u32,
    symkey: String,
    version: u32,
    new_version: bool,
    name_hash: u32,
    functions: u32,
    profiled: bool,
    totals_raw: [u64; 2],
    inferred: &'static [&'static str],
}

/// `spd_header`.
pub(super) fn header(out: &mut impl Write, file: &str, h: &Header) -> io::Result<()> {
    let spd = &h.spd;
    line(
        out,
        &HeaderLine {
            r#type: "spd_header",
            file,
            binary: &spd.binary,
            guid: registry_form(&spd.guid),
            age: spd.age,
            symkey: SymKey::new(spd.guid, spd.age).to_string(),
            version: spd.version,
            new_version: spd.new_version(),
            name_hash: h.name_hash,
            functions: spd.functions,
            profiled: spd.profiled,
            totals_raw: h.totals,
            inferred: &["age"],
        },
    )
}

#[derive(Serialize)]
struct ModuleLine<'a> {
    r#type: &'static str,
    file: &'a str,
    offset: u64,
    size: u32,
    functions: u32,
    symbols: BTreeMap<&'static str, u32>,
    records: BTreeMap<&'static str, u32>,
    strings: BTreeMap<&'static str, u32>,
    pad: u32,
    unknown: BTreeMap<String, u32>,
}

/// `spd_module`.
pub(super) fn module<W: Write>(s: &mut Sink<'_, W>, t: &FunctionTable) -> io::Result<()> {
    let h = t.header();
    let [offset, size, buckets] = h.symbols;
    let [r_offset, r_size, r_end] = h.records;
    line(
        s.out,
        &ModuleLine {
            r#type: "spd_module",
            file: s.file,
            offset: t.base(),
            size: h.size,
            functions: h.functions,
            symbols: BTreeMap::from([
                ("offset", offset),
                ("size", size),
                ("slots", h.slots()),
                ("buckets", buckets),
            ]),
            records: BTreeMap::from([("offset", r_offset), ("size", r_size), ("end", r_end)]),
            strings: BTreeMap::from([("offset", h.strings[0]), ("size", h.strings[1])]),
            pad: h.pad(),
            unknown: h
                .unknown
                .iter()
                .map(|(at, v)| (format!("+{at:02X}"), *v))
                .collect(),
        },
    )
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

/// `spd_function`, for every function.
pub(super) fn functions<W: Write>(s: &mut Sink<'_, W>, t: &FunctionTable) -> io::Result<()> {
    for f in t.functions() {
        function(s, &f)?;
    }
    Ok(())
}

/// `spd_function`, for one.
pub(super) fn function<W: Write>(s: &mut Sink<'_, W>, f: &Function<'_>) -> io::Result<()> {
    let p = f.profile();
    let name = f.name();
    let mut unknown: BTreeMap<String, u32> = f
        .unknown_words()
        .iter()
        .map(|(at, v)| (format!("rec+{at:02X}"), *v))
        .collect();
    unknown.insert("ent+14".into(), f.symbol().unknown_14);
    line(
        s.out,
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
pub(super) fn calls<'t, W: Write>(
    s: &mut Sink<'_, W>,
    t: &'t FunctionTable,
    imports: &ImportNames,
    functions: impl Iterator<Item = Function<'t>>,
) -> io::Result<()> {
    for f in functions {
        for c in f.callees() {
            let name = callee_name(t, imports, &c);
            line(
                s.out,
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
pub(super) fn flow<'t, W: Write>(
    s: &mut Sink<'_, W>,
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
                s.out,
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
                s.out,
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

#[derive(Serialize)]
struct CoverageLine<'a> {
    r#type: &'static str,
    file: &'a str,
    functions: u64,
    covered_functions: u64,
    blocks: u64,
    covered: u64,
    share: f64,
    estimate: bool,
}

/// `spd_coverage`: the whole table's (the functions' own are on their `spd_function` lines).
pub(super) fn coverage<W: Write>(s: &mut Sink<'_, W>, t: &FunctionTable) -> io::Result<()> {
    let c = cover(t);
    line(
        s.out,
        &CoverageLine {
            r#type: "spd_coverage",
            file: s.file,
            functions: c.functions,
            covered_functions: c.covered_functions,
            blocks: c.blocks,
            covered: c.covered,
            share: fraction(c.covered.into(), c.blocks.into()),
            estimate: true,
        },
    )
}

#[derive(Serialize)]
struct DyninstLine<'a> {
    r#type: &'static str,
    file: &'a str,
    rank: usize,
    hash: String,
    name: &'a str,
    dyninst: u64,
    share: f64,
    entry: u64,
    estimate: bool,
}

/// `spd_dyninst`: the top `n` functions by estimated dynamic instructions.
pub(super) fn dyninst<W: Write>(
    s: &mut Sink<'_, W>,
    t: &FunctionTable,
    n: usize,
) -> io::Result<()> {
    let (top, total) = ranked_by_dyninst(t, n);
    for (rank, (index, p)) in top.iter().enumerate() {
        let Some(f) = t.function(*index) else {
            continue;
        };
        let name = f.name();
        line(
            s.out,
            &DyninstLine {
                r#type: "spd_dyninst",
                file: s.file,
                rank: rank + 1,
                hash: hex(f.hash()),
                name: &name,
                dyninst: p.dyninst,
                share: fraction(p.dyninst.into(), total),
                entry: p.entry,
                estimate: true,
            },
        )?;
    }
    Ok(())
}
