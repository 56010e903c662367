//! What spddump's views compute of an SPD's function table: a query of `/funcid`, the
//! coverage and the dynamic-instruction ranking (our estimates: SPDDump's own definitions
//! are not published), and the names of callees.

use std::borrow::Cow;

use crate::image::imports::ImportNames;
use crate::image::spd::function::{CALLEE_FUNCTION, CALLEE_IMPORT, Callee, Function, Profile};
use crate::image::spd::table::FunctionTable;

/// What `/funcid:<fid>` names: an id (in decimal; inferred to be SPDDump's fid), a hash
/// (16 hex digits), or a name. A function matches when it bears any of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionQuery {
    hash: Option<u64>,
    id: Option<u32>,
    name: String,
}

impl FunctionQuery {
    /// The query `q` stands for.
    pub fn parse(q: &str) -> FunctionQuery {
        let hex = q.len() == 16 && q.bytes().all(|b| b.is_ascii_hexdigit());
        FunctionQuery {
            hash: hex.then(|| u64::from_str_radix(q, 16).ok()).flatten(),
            id: q.parse().ok(),
            name: q.to_owned(),
        }
    }

    /// Whether `f` bears the id, the hash or the name asked for.
    pub fn matches(&self, f: &Function<'_>) -> bool {
        self.hash == Some(f.hash())
            || self.id == Some(f.symbol().id)
            || f.name_bytes() == self.name.as_bytes()
    }
}

/// The blocks of a whole table, and those with a count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Its functions.
    pub functions: u64,
    /// Its functions with a block with a count.
    pub covered_functions: u64,
    /// Its blocks.
    pub blocks: u64,
    /// Its blocks with a count.
    pub covered: u64,
}

/// The coverage of a table: blocks with a count over blocks (our estimate).
pub fn coverage(table: &FunctionTable) -> Coverage {
    let mut c = Coverage::default();
    for f in table.functions() {
        let p = f.profile();
        c.functions += 1;
        c.covered_functions += u64::from(p.covered > 0);
        c.blocks += u64::from(p.blocks);
        c.covered += u64::from(p.covered);
    }
    c
}

/// The top `n` functions by estimated dynamic instructions (Σ block count × instruction
/// count), the largest first, ties in record order; with the total of every function's.
pub fn ranked_by_dyninst(table: &FunctionTable, n: usize) -> (Vec<(usize, Profile)>, u128) {
    let mut all: Vec<(usize, Profile)> = table
        .functions()
        .map(|f| (f.index(), f.profile()))
        .collect();
    let total = all.iter().map(|(_, p)| u128::from(p.dyninst)).sum();
    // A stable sort keeps record order among equals.
    all.sort_by_key(|(_, p)| std::cmp::Reverse(p.dyninst));
    all.truncate(n);
    (all, total)
}

/// The name of a callee, when this SPD holds it (a function of this SPD, found by hash) or,
/// for an import, when an image given with `/image` imports a name of its hash.
pub(crate) fn callee_name<'t>(
    table: &'t FunctionTable,
    imports: &'t ImportNames,
    c: &Callee<'_>,
) -> Option<Cow<'t, str>> {
    match c.kind {
        CALLEE_FUNCTION => table.by_hash(c.hash).map(|f| f.name()),
        CALLEE_IMPORT => imports.get(c.hash).map(Cow::Borrowed),
        _ => None,
    }
}

/// What a callee's type says: `function`, `import`, or the raw value.
pub(crate) fn callee_kind(kind: u32) -> Cow<'static, str> {
    match kind {
        CALLEE_FUNCTION => "function".into(),
        CALLEE_IMPORT => "import".into(),
        other => format!("type {other} (unknown)").into(),
    }
}
