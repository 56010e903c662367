//! What `spddump` shows of an SPD (a Sample Profile Database): SPDDump's views, in text
//! and in JSON Lines, from the reader of `image::spd`.
//!
//! ```text
//! mod.rs    the views asked for, the order they are shown in, a file's failure
//! sink.rs   where the views write, with the file's name
//! figures   what the views compute: coverage and dynamic instructions (our estimates),
//!           callee names, functions by id, hash or name
//! text.rs   the text views; inferred fields marked `*` (a legend says so), unknown ones
//!           shown raw and marked `?`
//! json.rs   the JSON Lines: spd_header, spd_module, spd_function, spd_call, spd_block,
//!           spd_tail, spd_coverage, spd_dyninst; inferred keys listed in `"inferred"`
//! ```
//!
//! Nothing of the function table is shown before all its checks passed; the identity
//! (section 10's checks) is shown first, so that a file whose table fails still says whose
//! it is. The module block is read once; each view walks the functions it needs, one at a
//! time, and `/fg` writes each block's line as it reads it.

use std::fmt;
use std::io::{self, Read, Seek, Write};

use crate::image::imports::ImportNames;
use crate::image::spd::table::{FunctionTable, TableError};
use crate::image::spd::{self, Header, SpdError};

mod figures;
mod json;
mod sink;
mod text;

use sink::Sink;

pub use figures::{FunctionQuery, coverage, ranked_by_dyninst};

/// The number of functions `/dyninst` shows when no number is given.
pub const DEFAULT_DYNINST: usize = 50;

/// The views of `spddump`, as its options ask for them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpdViews {
    /// `/header`: the identity, the version, the raw totals.
    pub header: bool,
    /// `/module`: the module block's header.
    pub module: bool,
    /// `/symbol`: the symbol table.
    pub symbol: bool,
    /// `/func`: the function profiles.
    pub func: bool,
    /// `/funcid:<fid>`: the functions of an id, hash or name, in detail.
    pub funcid: Option<String>,
    /// `/cg`: the callees.
    pub cg: bool,
    /// `/fg`: the flow graphs.
    pub fg: bool,
    /// `/coverage`: blocks with a count (our estimate).
    pub coverage: bool,
    /// `/dyninst[:n]`: the top n functions by estimated dynamic instructions.
    pub dyninst: Option<usize>,
    /// `/json`: JSON Lines instead of text.
    pub json: bool,
    /// `/image`: the names its images import, to name the callees that are imports.
    pub imports: ImportNames,
}

impl SpdViews {
    /// `/all`: every view but `/funcid`.
    pub fn all() -> SpdViews {
        SpdViews {
            header: true,
            module: true,
            symbol: true,
            func: true,
            funcid: None,
            cg: true,
            fg: true,
            coverage: true,
            dyninst: Some(DEFAULT_DYNINST),
            json: false,
            imports: ImportNames::default(),
        }
    }

    /// Whether any view is asked for (else `/all` is meant).
    pub fn any(&self) -> bool {
        let SpdViews {
            header,
            module,
            symbol,
            func,
            funcid,
            cg,
            fg,
            coverage,
            dyninst,
            json: _,
            imports: _,
        } = self;
        *header
            || *module
            || *symbol
            || *func
            || funcid.is_some()
            || *cg
            || *fg
            || *coverage
            || dyninst.is_some()
    }

    /// Whether a view past the header is asked for: then the function table is read.
    fn needs_table(&self) -> bool {
        let header_only = SpdViews {
            header: self.header,
            json: self.json,
            imports: self.imports.clone(),
            ..SpdViews::default()
        };
        *self != header_only
    }
}

/// Why a file's views could not all be shown.
#[derive(Debug)]
#[non_exhaustive]
pub enum SpdFailure {
    /// It is not a recognised SPD (section 10's checks), or could not be read.
    NotSpd(SpdError),
    /// Its function table failed a check, or could not be read.
    Table(TableError),
    /// `/funcid` named no function of it.
    NoSuchFunction(String),
}

impl fmt::Display for SpdFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpdFailure::NotSpd(e) => e.fmt(f),
            SpdFailure::Table(e) => e.fmt(f),
            SpdFailure::NoSuchFunction(q) => write!(
                f,
                "no function has the id, the hash or the name {q:?} (/funcid takes an id in \
                 decimal, a hash of 16 hex digits, or a name)"
            ),
        }
    }
}

/// Shows the views of the SPD in `file` (`len` bytes), named `name` in what is printed.
/// The outer error is a failure to write; the inner one what was wrong with the file, once
/// what could be shown of it was.
pub fn show<R: Read + Seek + ?Sized, W: Write>(
    out: &mut W,
    name: &str,
    file: &mut R,
    len: u64,
    views: &SpdViews,
) -> io::Result<Result<(), SpdFailure>> {
    let header = match spd::read_header(file, len) {
        Ok(header) => header,
        Err(e) => return Ok(Err(SpdFailure::NotSpd(e))),
    };
    if !views.json {
        writeln!(out, "File: {name}")?;
    }
    if views.header {
        show_header(out, name, &header, views.json)?;
    }
    if !views.needs_table() {
        return Ok(Ok(()));
    }
    let table = match FunctionTable::read(file, &header) {
        Ok(table) => table,
        Err(e) => {
            // The identity still says whose the file is.
            if !views.header {
                show_header(out, name, &header, views.json)?;
            }
            return Ok(Err(SpdFailure::Table(e)));
        }
    };
    let mut sink = Sink::new(out, name, views.json);
    show_table(&mut sink, &table, views)
}

fn show_header<W: Write>(out: &mut W, name: &str, header: &Header, json: bool) -> io::Result<()> {
    match json {
        true => json::header(out, name, header),
        false => text::header(out, header),
    }
}

/// The views past the header, in SPDDump's order.
fn show_table<W: Write>(
    s: &mut Sink<'_, W>,
    table: &FunctionTable,
    views: &SpdViews,
) -> io::Result<Result<(), SpdFailure>> {
    if views.module {
        match s.json {
            true => json::module(s, table)?,
            false => text::module(s.out, table)?,
        }
    }
    if s.json && (views.symbol || views.func || views.coverage) {
        json::functions(s, table)?;
    } else if !s.json {
        if views.symbol {
            text::symbols(s.out, table)?;
        }
        if views.func {
            text::functions(s.out, table)?;
        }
    }
    if views.cg {
        match s.json {
            true => json::calls(s, table, &views.imports, table.functions())?,
            false => text::calls(s.out, table, &views.imports, table.functions())?,
        }
    }
    if views.fg {
        match s.json {
            true => json::flow(s, table.functions())?,
            false => text::flow(s.out, table.functions())?,
        }
    }
    if views.coverage {
        match s.json {
            true => json::coverage(s, table)?,
            false => text::coverage(s.out, table)?,
        }
    }
    if let Some(n) = views.dyninst {
        match s.json {
            true => json::dyninst(s, table, n)?,
            false => text::dyninst(s.out, table, n)?,
        }
    }
    match &views.funcid {
        Some(q) => funcid(s, table, &views.imports, q),
        None => Ok(Ok(())),
    }
}

/// `/funcid`: every function the query names, in detail: its fields, its callees, its
/// flow graph.
fn funcid<W: Write>(
    s: &mut Sink<'_, W>,
    table: &FunctionTable,
    imports: &ImportNames,
    q: &str,
) -> io::Result<Result<(), SpdFailure>> {
    let query = FunctionQuery::parse(q);
    let found = || table.functions().filter(|f| query.matches(f));
    if found().next().is_none() {
        return Ok(Err(SpdFailure::NoSuchFunction(q.to_owned())));
    }
    for f in found() {
        match s.json {
            true => {
                json::function(s, &f)?;
                json::calls(s, table, imports, std::iter::once(f))?;
                json::flow(s, std::iter::once(f))?;
            }
            false => {
                text::detail(s.out, table, &f)?;
                text::calls(s.out, table, imports, std::iter::once(f))?;
                text::flow(s.out, std::iter::once(f))?;
            }
        }
    }
    Ok(Ok(()))
}
