//! `/parquet:DIR`: a trace's counts as Parquet tables, one row per key, for engines that sum
//! many traces (DuckDB, Spark, Trino, pandas). The columns are in docs/output.md, "Parquet
//! tables: /parquet".
//!
//! ```text
//! DIR/samples/NAME.parquet   trace binary guid age source rva hits function
//! DIR/arcs/NAME.parquet      trace binary guid age source from_rva to_rva hits
//!                            from_function to_function
//! DIR/stacks/NAME.parquet    trace binary guid age frames hits function
//! DIR/blocks/NAME.parquet    trace binary guid age graph function hash function_rva block
//!                            block_rva instructions observed flow spd_count
//! DIR/edges/NAME.parquet     trace binary guid age graph function hash function_rva
//!                            from_block to_block kind observed flow spd_count
//! ```
//!
//! The blocks and edges (section 13, "Blocks") are written for a trace with a binary whose
//! LBR records could be read on blocks (`analysis::graphs`), and only then.
//!
//! NAME is the trace's file name without its extension (`stdin` for standard input). A file
//! is written beside its final name (`.NAME.parquet.partial`, which engines skip) and
//! renamed when whole; an existing NAME.parquet is never overwritten: it is an error, found
//! before any of the trace's tables is written. With a second core, two tables are written
//! at once, each by one thread (the same bytes).
//!
//! Every row carries the trace, binary, GUID and age, so that rows of many traces and builds
//! mix. `hits` is `decimal(38,0)`: a key's hits can pass 64 bits (REPEAT), and engines sum
//! decimals exactly; a count above 10^38 - 1 is clamped to it (and said). RVAs are unsigned
//! 32-bit integers. Each table has a row group per binary and source (per binary for
//! stacks), so an engine reading one binary skips the others' row groups by their
//! statistics. The rows of a table are written from the summary's counts, a column at a
//! time, in bounded batches: memory stays that of `/summary`.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread;

use byteorder::{ByteOrder, LE};
use parquet::basic::Compression;
use parquet::column::writer::ColumnWriterImpl;
use parquet::data_type::{
    ByteArray, ByteArrayType, DataType, FixedLenByteArray, FixedLenByteArrayType, Int32Type,
};
use parquet::errors::{ParquetError, Result};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;

use crate::analysis::Counted;
use crate::analysis::graphs::{BinaryGraph, BlockRow, EdgeRow, GraphRow, Of};
use crate::engine::threads;
use crate::format::record::SampleKind;
use crate::format::stackorder::StackOrder;
use crate::format::tables::Tables;
use crate::image::symbols::Symbols;

/// The largest count `decimal(38,0)` holds: 10^38 - 1.
pub(crate) const DECIMAL_MAX: u128 = 10u128.pow(38) - 1;

/// Values buffered per column before they go to the writer.
const BATCH: usize = 4096;

const SAMPLES: &str = "message samples {
    required binary trace (STRING);
    required binary binary (STRING);
    optional binary guid (STRING);
    optional int32 age (INTEGER(32, false));
    required binary source (STRING);
    required int32 rva (INTEGER(32, false));
    required fixed_len_byte_array(16) hits (DECIMAL(38, 0));
    optional binary function (STRING);
}";

const ARCS: &str = "message arcs {
    required binary trace (STRING);
    required binary binary (STRING);
    optional binary guid (STRING);
    optional int32 age (INTEGER(32, false));
    required binary source (STRING);
    required int32 from_rva (INTEGER(32, false));
    required int32 to_rva (INTEGER(32, false));
    required fixed_len_byte_array(16) hits (DECIMAL(38, 0));
    optional binary from_function (STRING);
    optional binary to_function (STRING);
}";

const STACKS: &str = "message stacks {
    required binary trace (STRING);
    required binary binary (STRING);
    optional binary guid (STRING);
    optional int32 age (INTEGER(32, false));
    required group frames (LIST) {
        repeated group list {
            required int32 element (INTEGER(32, false));
        }
    }
    required fixed_len_byte_array(16) hits (DECIMAL(38, 0));
    optional binary function (STRING);
}";

const BLOCKS: &str = "message blocks {
    required binary trace (STRING);
    required binary binary (STRING);
    optional binary guid (STRING);
    optional int32 age (INTEGER(32, false));
    required binary graph (STRING);
    required binary function (STRING);
    optional binary hash (STRING);
    required int32 function_rva (INTEGER(32, false));
    required int32 block (INTEGER(32, false));
    optional int32 block_rva (INTEGER(32, false));
    required int32 instructions (INTEGER(32, false));
    optional fixed_len_byte_array(16) observed (DECIMAL(38, 0));
    optional fixed_len_byte_array(16) flow (DECIMAL(38, 0));
    optional fixed_len_byte_array(16) spd_count (DECIMAL(38, 0));
}";

const EDGES: &str = "message edges {
    required binary trace (STRING);
    required binary binary (STRING);
    optional binary guid (STRING);
    optional int32 age (INTEGER(32, false));
    required binary graph (STRING);
    required binary function (STRING);
    optional binary hash (STRING);
    required int32 function_rva (INTEGER(32, false));
    optional int32 from_block (INTEGER(32, false));
    optional int32 to_block (INTEGER(32, false));
    required binary kind (STRING);
    optional fixed_len_byte_array(16) observed (DECIMAL(38, 0));
    optional fixed_len_byte_array(16) flow (DECIMAL(38, 0));
    optional fixed_len_byte_array(16) spd_count (DECIMAL(38, 0));
}";

/// What was written.
#[derive(Debug, Default)]
pub(crate) struct Written {
    /// The files, in table order.
    pub files: Vec<PathBuf>,
    /// Whether a count above [`DECIMAL_MAX`] was clamped to it.
    pub clamped: bool,
}

/// A file that could not be written, and why.
#[derive(Debug)]
pub(crate) struct Failed {
    pub path: PathBuf,
    pub error: io::Error,
}

/// The name of a trace's files: its file name without the extension; `stdin` for `-`.
pub(crate) fn file_name(trace: &str) -> String {
    if trace == "-" {
        return "stdin".to_owned();
    }
    let base = Path::new(trace)
        .file_name()
        .map_or_else(|| trace.to_owned(), |n| n.to_string_lossy().into_owned());
    match base.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem.to_owned(),
        _ => base,
    }
}

/// The tables, in order: a name (the folder) and its schema. The last two are written only
/// for a trace with a graph.
const TABLES: [(&str, &str); 5] = [
    ("samples", SAMPLES),
    ("arcs", ARCS),
    ("stacks", STACKS),
    ("blocks", BLOCKS),
    ("edges", EDGES),
];

/// What a trace's tables are written from: its counts, and its binaries' graphs.
#[derive(Clone, Copy)]
pub(crate) struct Tabled<'a> {
    pub counted: &'a Counted<'a>,
    pub graphs: &'a [BinaryGraph<'a>],
}

/// Writes the tables of `counted`, the trace named `trace` on the command line, under `dir`:
/// the samples, arcs and stacks, and the blocks and edges of `graphs` when there are any.
///
/// Every table's folder is made, and its file checked not to exist, before any is written:
/// a trace whose tables cannot all be written writes none. The tables are then written two
/// at a time when there is a second core, each by one thread, whole; once one fails, none is
/// started after it, and the first that failed, in table order, is the error.
pub(crate) fn write(
    dir: &Path,
    trace: &str,
    counted: &Counted<'_>,
    graphs: &[BinaryGraph<'_>],
) -> Result<Written, Failed> {
    let name = format!("{}.parquet", file_name(trace));
    let tables = if graphs.is_empty() { 3 } else { TABLES.len() };
    let mut places = Vec::with_capacity(tables);
    for (table, schema) in TABLES.into_iter().take(tables) {
        let folder = dir.join(table);
        fs::create_dir_all(&folder).map_err(|error| Failed {
            path: folder.clone(),
            error,
        })?;
        let path = folder.join(&name);
        if path.exists() {
            let why = "it exists, and sptdump never overwrites a table: give another /parquet \
                       directory, or remove the file";
            let error = io::Error::new(io::ErrorKind::AlreadyExists, why);
            return Err(Failed { path, error });
        }
        let partial = folder.join(format!(".{name}.partial"));
        places.push(Place {
            table,
            schema,
            path,
            partial,
        });
    }
    let ids = Identities::new(trace, counted.tables);
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    // Takes the next table not yet taken, until there is none or one has failed.
    let work = || {
        let mut done = Vec::new();
        while !failed.load(Ordering::Relaxed) {
            let at = next.fetch_add(1, Ordering::Relaxed);
            let Some(place) = places.get(at) else { break };
            let result = place.write(&ids, Tabled { counted, graphs });
            failed.fetch_or(result.is_err(), Ordering::Relaxed);
            done.push((at, result));
        }
        done
    };
    let mut done = if threads::two_cores() {
        thread::scope(|s| {
            let other = s.spawn(work);
            let mut done = work();
            done.extend(threads::joined(other));
            done
        })
    } else {
        work()
    };
    done.sort_unstable_by_key(|&(at, _)| at);
    let mut written = Written::default();
    for (_, result) in done {
        let (path, clamped) = result?;
        written.clamped |= clamped;
        written.files.push(path);
    }
    Ok(written)
}

/// Where a table goes: its file, and the file it is written as until it is whole.
struct Place {
    table: &'static str,
    schema: &'static str,
    path: PathBuf,
    partial: PathBuf,
}

impl Place {
    /// Writes the table, renamed to its path when whole; gives the path and whether a count
    /// was clamped. A table that fails leaves nothing behind.
    fn write(&self, ids: &Identities<'_>, of: Tabled<'_>) -> Result<(PathBuf, bool), Failed> {
        let counted = of.counted;
        let result = File::create(&self.partial).and_then(|file| {
            let schema = Arc::new(parse_message_type(self.schema).map_err(io::Error::from)?);
            let mut w = SerializedFileWriter::new(BufWriter::new(file), schema, properties())
                .map_err(io::Error::from)?;
            let clamped = match self.table {
                "samples" => samples(&mut w, ids, counted),
                "arcs" => arcs(&mut w, ids, counted),
                "stacks" => stacks(&mut w, ids, counted),
                "blocks" => blocks(&mut w, ids, of.graphs),
                _ => edges(&mut w, ids, of.graphs),
            }
            .map_err(io::Error::from)?;
            let mut inner = w.into_inner().map_err(io::Error::from)?;
            inner.flush()?;
            Ok(clamped)
        });
        match result.and_then(|clamped| fs::rename(&self.partial, &self.path).map(|()| clamped)) {
            Ok(clamped) => Ok((self.path.clone(), clamped)),
            Err(error) => {
                let _ = fs::remove_file(&self.partial);
                Err(Failed {
                    path: self.path.clone(),
                    error,
                })
            }
        }
    }
}

/// Snappy; dictionaries for the strings (the same few values on every row) and for the arcs'
/// and frames' addresses (which repeat: half the size), none for the hits and the samples'
/// addresses, which are mostly distinct (a dictionary there costs time and saves nothing).
fn properties() -> Arc<WriterProperties> {
    let mut builder = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_created_by(concat!("sptdump ", env!("CARGO_PKG_VERSION")).to_owned());
    let numbers = ["rva", "hits"];
    for column in numbers {
        let path = ColumnPath::new(column.split('.').map(str::to_owned).collect());
        builder = builder.set_column_dictionary_enabled(path, false);
    }
    Arc::new(builder.build())
}

/// The columns every row starts with, per binary.
struct Identities<'a> {
    trace: &'a str,
    tables: &'a Tables,
}

/// One binary's leading columns, for one table: each table is written by one thread, and
/// its values are its own (a value shared by two threads would have its count of owners
/// moved from core to core on every row).
struct Identity {
    trace: ByteArray,
    binary: ByteArray,
    guid: Option<ByteArray>,
    age: Option<u32>,
}

impl<'a> Identities<'a> {
    fn new(trace: &'a str, tables: &'a Tables) -> Self {
        Identities { trace, tables }
    }

    fn of(&self, progid: u16) -> Identity {
        let entry = self.tables.progids.as_ref().and_then(|t| t.get(progid));
        Identity {
            trace: ByteArray::from(self.trace),
            binary: ByteArray::from(self.tables.binary_name(progid).into_bytes()),
            guid: entry.map(|e| ByteArray::from(e.guid_string().into_bytes())),
            age: entry.map(|e| e.age),
        }
    }

    /// Writes the trace, binary, GUID and age columns of `rows` rows of binary `id`.
    fn columns<W: Write + Send>(
        &self,
        g: &mut SerializedRowGroupWriter<'_, W>,
        id: &Identity,
        rows: usize,
    ) -> Result<()> {
        column::<ByteArrayType, W>(g, Levels::Required, |c| c.repeat(Some(&id.trace), rows))?;
        column::<ByteArrayType, W>(g, Levels::Required, |c| c.repeat(Some(&id.binary), rows))?;
        column::<ByteArrayType, W>(g, Levels::Optional, |c| c.repeat(id.guid.as_ref(), rows))?;
        column::<Int32Type, W>(g, Levels::Optional, |c| {
            c.repeat(id.age.map(|a| a as i32).as_ref(), rows)
        })
    }
}

/// The samples table: a row group per binary and IP event.
fn samples<W: Write + Send>(
    w: &mut SerializedFileWriter<W>,
    ids: &Identities<'_>,
    counted: &Counted<'_>,
) -> Result<bool> {
    let mut clamped = false;
    let summary = counted.summary;
    for progid in summary.progids() {
        let id = ids.of(progid);
        let symbols = counted.symbols.get(Some(progid));
        for t in summary.ip_tables(progid) {
            let rows = t.unique();
            let mut g = w.next_row_group()?;
            ids.columns(&mut g, &id, rows)?;
            source_column(&mut g, t.source(), rows)?;
            column::<Int32Type, W>(&mut g, Levels::Required, |c| {
                t.iter().try_for_each(|(rva, _)| c.value(rva as i32))
            })?;
            hits_column(&mut g, t.iter().map(|(_, hits)| hits), &mut clamped)?;
            function_column(&mut g, symbols, t.iter().map(|(rva, _)| rva))?;
            g.close()?;
        }
    }
    Ok(clamped)
}

/// The arcs table: a row group per binary and source (LBR, call stacks). A call-stack arc
/// goes from the caller to the callee, whatever `/stackorder` says the frames' order is.
fn arcs<W: Write + Send>(
    w: &mut SerializedFileWriter<W>,
    ids: &Identities<'_>,
    counted: &Counted<'_>,
) -> Result<bool> {
    let mut clamped = false;
    let summary = counted.summary;
    for progid in summary.progids() {
        let id = ids.of(progid);
        let symbols = counted.symbols.get(Some(progid));
        let leaf_first = counted.order == StackOrder::LeafFirst;
        let tables = [
            (SampleKind::Lbr, summary.lbr(progid), false),
            (SampleKind::CallStack, summary.callstack(progid), leaf_first),
        ];
        for (source, t, swap) in tables {
            let Some(t) = t else { continue };
            let arcs = || {
                t.iter()
                    .map(move |([a, b], hits)| if swap { ([b, a], hits) } else { ([a, b], hits) })
            };
            let rows = t.unique();
            let mut g = w.next_row_group()?;
            ids.columns(&mut g, &id, rows)?;
            source_column(&mut g, source, rows)?;
            for end in 0..2 {
                column::<Int32Type, W>(&mut g, Levels::Required, |c| {
                    arcs().try_for_each(|(arc, _)| c.value(arc[end] as i32))
                })?;
            }
            hits_column(&mut g, arcs().map(|(_, hits)| hits), &mut clamped)?;
            // A caller's frame is a return address, just after its call: the call is the byte
            // before.
            let caller = u32::from(source == SampleKind::CallStack);
            function_column(
                &mut g,
                symbols,
                arcs().map(|([from, _], _)| from.saturating_sub(caller)),
            )?;
            function_column(&mut g, symbols, arcs().map(|([_, to], _)| to))?;
            g.close()?;
        }
    }
    Ok(clamped)
}

/// The stacks table: a row group per binary; frames leaf first, `function` the leaf's.
fn stacks<W: Write + Send>(
    w: &mut SerializedFileWriter<W>,
    ids: &Identities<'_>,
    counted: &Counted<'_>,
) -> Result<bool> {
    let mut clamped = false;
    let stacks = counted.stacks;
    let leaf_first = counted.order == StackOrder::LeafFirst;
    // Each binary's stacks, gathered in one walk, in place: (frames as stored, hits).
    let mut by_binary: BTreeMap<u16, Vec<(&[u8], u128)>> = BTreeMap::new();
    for (progid, frames, hits) in stacks.raw() {
        by_binary.entry(progid).or_default().push((frames, hits));
    }
    let mut frames = Vec::new();
    for (progid, rows) in by_binary {
        let id = ids.of(progid);
        let symbols = counted.symbols.get(Some(progid));
        // The frames of each row, leaf first.
        let mut each = |f: &mut dyn FnMut(&[u32], u128) -> Result<()>| -> Result<()> {
            rows.iter().try_for_each(|&(stored, hits)| {
                frames.clear();
                frames.extend(stored.chunks_exact(4).map(LE::read_u32));
                if !leaf_first {
                    frames.reverse();
                }
                f(&frames, hits)
            })
        };
        let rows = rows.len();
        let mut g = w.next_row_group()?;
        ids.columns(&mut g, &id, rows)?;
        column::<Int32Type, W>(&mut g, Levels::List, |c| {
            each(&mut |frames, _| c.list(frames.iter().map(|&rva| rva as i32)))
        })?;
        column::<FixedLenByteArrayType, W>(&mut g, Levels::Required, |c| {
            each(&mut |_, hits| c.value(decimal(hits, &mut clamped)))
        })?;
        column::<ByteArrayType, W>(&mut g, Levels::Optional, |c| {
            each(&mut |frames, _| {
                c.optional(frames.first().and_then(|&leaf| function(symbols, leaf)))
            })
        })?;
        g.close()?;
    }
    Ok(clamped)
}

/// The blocks table: a row group per binary and graph.
fn blocks<W: Write + Send>(
    w: &mut SerializedFileWriter<W>,
    ids: &Identities<'_>,
    graphs: &[BinaryGraph<'_>],
) -> Result<bool> {
    graph_table(
        w,
        ids,
        graphs,
        |g| &g.blocks,
        |g, rows| {
            let u32s: [fn(&BlockRow<'_>) -> Option<u32>; 3] =
                [|r| Some(r.block), |r| r.rva, |r| Some(r.instructions)];
            let levels = [Levels::Required, Levels::Optional, Levels::Required];
            for (get, levels) in u32s.into_iter().zip(levels) {
                column::<Int32Type, W>(g, levels, |c| {
                    rows.iter()
                        .try_for_each(|r| c.optional(get(r).map(|n| n as i32)))
                })?;
            }
            Ok(())
        },
    )
}

/// The edges table: a row group per binary and graph.
fn edges<W: Write + Send>(
    w: &mut SerializedFileWriter<W>,
    ids: &Identities<'_>,
    graphs: &[BinaryGraph<'_>],
) -> Result<bool> {
    graph_table(
        w,
        ids,
        graphs,
        |g| &g.edges,
        |g, rows| {
            for end in [|r: &EdgeRow<'_>| r.from, |r: &EdgeRow<'_>| r.to] {
                column::<Int32Type, W>(g, Levels::Optional, |c| {
                    rows.iter()
                        .try_for_each(|r| c.optional(end(r).map(|n| n as i32)))
                })?;
            }
            column::<ByteArrayType, W>(g, Levels::Required, |c| {
                rows.iter()
                    .try_for_each(|r| c.value(ByteArray::from(r.kind)))
            })
        },
    )
}

/// A table of graphs' rows: a row group per binary and graph, whose columns are those that
/// say whose each row is, then what `middle` writes, then the counts. Whether a count was
/// clamped.
fn graph_table<'a, R: GraphRow<'a>, W: Write + Send>(
    w: &mut SerializedFileWriter<W>,
    ids: &Identities<'_>,
    graphs: &[BinaryGraph<'a>],
    rows_of: for<'g> fn(&'g BinaryGraph<'a>) -> &'g [R],
    middle: impl Fn(&mut SerializedRowGroupWriter<'_, W>, &[R]) -> Result<()>,
) -> Result<bool> {
    let mut clamped = false;
    for graph in graphs {
        let rows = rows_of(graph);
        let mut g = w.next_row_group()?;
        function_columns(&mut g, ids, graph, rows.iter().map(GraphRow::of))?;
        middle(&mut g, rows)?;
        counts_columns(&mut g, rows.iter().map(GraphRow::counts), &mut clamped)?;
        g.close()?;
    }
    Ok(clamped)
}

/// The columns a graph's rows start with: the binary's identity, the graph, and the
/// function of each row (its name, hash and RVA).
fn function_columns<'r, W: Write + Send>(
    g: &mut SerializedRowGroupWriter<'_, W>,
    ids: &Identities<'_>,
    graph: &BinaryGraph<'_>,
    of: impl Iterator<Item = Of<'r>> + Clone,
) -> Result<()> {
    let rows = of.clone().count();
    ids.columns(g, &ids.of(graph.progid), rows)?;
    let name = ByteArray::from(graph.graph.name());
    column::<ByteArrayType, W>(g, Levels::Required, |c| c.repeat(Some(&name), rows))?;
    column::<ByteArrayType, W>(g, Levels::Required, |c| {
        of.clone()
            .try_for_each(|o| c.value(ByteArray::from(o.function)))
    })?;
    column::<ByteArrayType, W>(g, Levels::Optional, |c| {
        of.clone().try_for_each(|o| {
            c.optional(
                o.hash
                    .map(|h| ByteArray::from(format!("{h:016X}").into_bytes())),
            )
        })
    })?;
    column::<Int32Type, W>(g, Levels::Required, |c| {
        of.clone().try_for_each(|o| c.value(o.rva as i32))
    })
}

/// The `observed`, `flow` and `spd_count` columns, each a decimal or a null per row.
fn counts_columns<W: Write + Send>(
    g: &mut SerializedRowGroupWriter<'_, W>,
    rows: impl Iterator<Item = [Option<u128>; 3]> + Clone,
    clamped: &mut bool,
) -> Result<()> {
    for i in 0..3 {
        column::<FixedLenByteArrayType, W>(g, Levels::Optional, |c| {
            rows.clone()
                .try_for_each(|counts| c.optional(counts[i].map(|n| decimal(n, clamped))))
        })?;
    }
    Ok(())
}

/// The `source` column: an IP event's name, `LBR` or `ETW_CALLSTACK`, on every row.
fn source_column<W: Write + Send>(
    g: &mut SerializedRowGroupWriter<'_, W>,
    source: SampleKind,
    rows: usize,
) -> Result<()> {
    let name = ByteArray::from(source.name());
    column::<ByteArrayType, W>(g, Levels::Required, |c| c.repeat(Some(&name), rows))
}

fn hits_column<W: Write + Send>(
    g: &mut SerializedRowGroupWriter<'_, W>,
    hits: impl Iterator<Item = u128>,
    clamped: &mut bool,
) -> Result<()> {
    let mut hits = hits;
    column::<FixedLenByteArrayType, W>(g, Levels::Required, |c| {
        hits.try_for_each(|h| c.value(decimal(h, clamped)))
    })
}

/// The function the PDB places each address in, where there is a PDB and a function.
fn function_column<W: Write + Send>(
    g: &mut SerializedRowGroupWriter<'_, W>,
    symbols: Option<&Symbols>,
    rvas: impl Iterator<Item = u32>,
) -> Result<()> {
    let mut rvas = rvas;
    column::<ByteArrayType, W>(g, Levels::Optional, |c| {
        rvas.try_for_each(|rva| c.optional(function(symbols, rva)))
    })
}

fn function(symbols: Option<&Symbols>, rva: u32) -> Option<ByteArray> {
    let (symbol, _) = symbols?.lookup(rva)?;
    Some(ByteArray::from(symbol.name))
}

/// `hits` as `decimal(38,0)`: 16 bytes, big-endian two's complement; clamped to
/// [`DECIMAL_MAX`].
fn decimal(hits: u128, clamped: &mut bool) -> FixedLenByteArray {
    if hits > DECIMAL_MAX {
        *clamped = true;
    }
    FixedLenByteArray::from(hits.min(DECIMAL_MAX).to_be_bytes().to_vec())
}

/// How a column's values are nested.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Levels {
    /// One value per row.
    Required,
    /// A value or a null per row.
    Optional,
    /// A list per row (of required elements).
    List,
}

/// Values on their way to a column's writer, in batches.
struct Batch<'a, 'c, T: DataType> {
    writer: &'a mut ColumnWriterImpl<'c, T>,
    levels: Levels,
    values: Vec<T::T>,
    definition: Vec<i16>,
    repetition: Vec<i16>,
}

impl<T: DataType> Batch<'_, '_, T> {
    /// A row's value.
    fn value(&mut self, value: T::T) -> Result<()> {
        self.values.push(value);
        if self.levels == Levels::Optional {
            self.definition.push(1);
        }
        self.full()
    }

    /// A row's value, or its null.
    fn optional(&mut self, value: Option<T::T>) -> Result<()> {
        match value {
            Some(v) => self.value(v),
            None => {
                self.definition.push(0);
                self.full()
            }
        }
    }

    /// `rows` rows of `value` (a null where it is `None`), the value cloned for one batch
    /// and written again and again: the same calls to the writer as a value per row, without
    /// a clone and a drop of it per row.
    fn repeat(&mut self, value: Option<&T::T>, rows: usize) -> Result<()> {
        debug_assert!(
            value.is_some() || self.levels == Levels::Optional,
            "a null only where a column may hold one"
        );
        self.flush()?;
        let batch = rows.min(BATCH);
        let values: Vec<T::T> = value.map_or_else(Vec::new, |v| vec![v.clone(); batch]);
        let defined = i16::from(value.is_some());
        let definition = match self.levels {
            Levels::Optional => vec![defined; batch],
            _ => Vec::new(),
        };
        let mut left = rows;
        while left > 0 {
            let n = left.min(BATCH);
            let values = &values[..values.len().min(n)];
            let definition = (!definition.is_empty()).then(|| &definition[..n]);
            self.writer.write_batch(values, definition, None)?;
            left -= n;
        }
        Ok(())
    }

    /// A row's list.
    fn list(&mut self, items: impl Iterator<Item = T::T>) -> Result<()> {
        let mut first = true;
        for item in items {
            self.values.push(item);
            self.definition.push(1);
            self.repetition.push(if first { 0 } else { 1 });
            first = false;
        }
        if first {
            // An empty list.
            self.definition.push(0);
            self.repetition.push(0);
        }
        self.full()
    }

    fn full(&mut self) -> Result<()> {
        if self.values.len() >= BATCH || self.definition.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        fn levels(v: &[i16]) -> Option<&[i16]> {
            (!v.is_empty()).then_some(v)
        }
        self.writer.write_batch(
            &self.values,
            levels(&self.definition),
            levels(&self.repetition),
        )?;
        self.values.clear();
        self.definition.clear();
        self.repetition.clear();
        Ok(())
    }
}

/// Writes the row group's next column with `fill`.
fn column<T: DataType, W: Write + Send>(
    g: &mut SerializedRowGroupWriter<'_, W>,
    levels: Levels,
    fill: impl FnOnce(&mut Batch<'_, '_, T>) -> Result<()>,
) -> Result<()> {
    let Some(mut column) = g.next_column()? else {
        return Err(ParquetError::General(
            "more columns written than the schema has".to_owned(),
        ));
    };
    let mut batch = Batch {
        writer: column.typed::<T>(),
        levels,
        values: Vec::with_capacity(BATCH),
        definition: Vec::new(),
        repetition: Vec::new(),
    };
    fill(&mut batch)?;
    batch.flush()?;
    column.close()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_are_big_endian_decimals_clamped_to_38_digits() {
        let mut clamped = false;
        let one = decimal(1, &mut clamped);
        assert_eq!(
            one.data(),
            &[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        );
        let big = decimal(1 << 64, &mut clamped);
        assert_eq!(big.data()[7..9], [1, 0]);
        assert!(!clamped);
        assert_eq!(
            decimal(DECIMAL_MAX, &mut clamped).data(),
            &DECIMAL_MAX.to_be_bytes()
        );
        assert!(!clamped, "10^38 - 1 fits");
        let over = decimal(DECIMAL_MAX + 1, &mut clamped);
        assert!(clamped);
        assert_eq!(over.data(), &DECIMAL_MAX.to_be_bytes());
        assert_eq!(DECIMAL_MAX.to_string().len(), 38);
    }

    /// No trace reaches 10^38 hits (5 x 10^18 records of the largest REPEAT), so a summary
    /// made here holds one: its table clamps it, and what is written says so.
    #[test]
    fn a_count_past_38_digits_is_clamped_and_said() {
        use crate::analysis::stacks::StackCounts;
        use crate::analysis::summary::Summary;
        use crate::format::opcode::Opcode;
        use crate::format::record::Samples;
        use crate::image::attached::SymbolMap;

        let mut summary = Summary::new(3);
        let rva = 0x1000u32.to_le_bytes();
        for hits in [1, DECIMAL_MAX + 1] {
            summary.add(&Samples {
                offset: 0x5820,
                opcode: Opcode::UNHALT_CYCLE,
                progid: Some(0),
                hits,
                count: 1,
                payload: &rva,
            });
        }
        let tables = Tables::listing(&[("app.exe".to_owned(), uuid::Uuid::nil(), 1)]);
        let counted = Counted {
            summary: &summary,
            stacks: &StackCounts::default(),
            order: StackOrder::LeafFirst,
            tables: &tables,
            symbols: &SymbolMap::none(),
        };
        let dir = tempfile::tempdir().unwrap();
        let written = write(dir.path(), "huge.spt", &counted, &[]).unwrap();
        assert!(written.clamped);
        // In table order, whichever thread wrote each.
        let files: Vec<PathBuf> = ["samples", "arcs", "stacks"]
            .map(|table| dir.path().join(table).join("huge.parquet"))
            .into();
        assert_eq!(written.files, files);
        // The same summary within 38 digits is not said to be clamped.
        let mut fits = Summary::new(3);
        fits.add(&Samples {
            offset: 0x5820,
            opcode: Opcode::UNHALT_CYCLE,
            progid: Some(0),
            hits: DECIMAL_MAX,
            count: 1,
            payload: &rva,
        });
        let counted = Counted {
            summary: &fits,
            ..counted
        };
        let dir = tempfile::tempdir().unwrap();
        assert!(
            !write(dir.path(), "fits.spt", &counted, &[])
                .unwrap()
                .clamped
        );
    }

    #[test]
    fn a_trace_names_its_files_by_its_stem() {
        assert_eq!(file_name("traces/app.spt"), "app");
        assert_eq!(
            file_name(r"C:\traces\run.1.spt"),
            if cfg!(windows) {
                "run.1"
            } else {
                r"C:\traces\run.1"
            }
        );
        assert_eq!(file_name("-"), "stdin");
        assert_eq!(file_name("noext"), "noext");
        assert_eq!(file_name(".hidden"), ".hidden");
    }
}
