//! A function named on the command line (`/annotate:NAME`, `/callgraph:NAME`,
//! `/blocks:NAME`): whether a name names a function, and when none bears it, why: the names
//! closest to it, the binaries it could not be looked up in (no PDB), and the functions it
//! was inlined into, which hold its code.

use super::Counted;
use crate::image::lines::SourceLines;

/// The most bytes of a binary's code read for the functions a name was inlined into.
const INLINED_AT_MOST: u32 = 1 << 20;

/// The names of `names` closest to `name` (Jaro-Winkler), the closest first, each once: at
/// most `n`.
pub(crate) fn closest<'s>(
    names: impl IntoIterator<Item = &'s str>,
    name: &str,
    n: usize,
) -> Vec<&'s str> {
    let mut scored: Vec<(f64, &str)> = names
        .into_iter()
        .map(|f| (strsim::jaro_winkler(name, f), f))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(n).map(|(_, name)| name).collect()
}

/// Whether `wanted` (a function's name, or `binary!name` with the binary's name in any
/// case) names the function `function` of the binary `binary`.
pub(crate) fn names(wanted: &str, binary: &str, function: &str) -> bool {
    function == wanted
        || wanted
            .rsplit_once('!')
            .is_some_and(|(b, f)| f == function && b.eq_ignore_ascii_case(binary))
}

/// Why no function of a profile's binaries bears a name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Unnamed {
    /// The name as given.
    pub wanted: String,
    /// The binaries it was looked up in: those of the profile with samples and a PDB (only
    /// the one named, for `binary!name`).
    pub looked_in: Vec<String>,
    /// The names of their functions closest to it, the closest first.
    pub closest: Vec<String>,
    /// The binaries it could not be looked up in: sampled, but without a PDB.
    pub without_pdb: Vec<String>,
    /// Per binary where the name is that of an inlined function, the functions it was
    /// inlined into (which hold its code).
    pub inlined: Vec<(String, Vec<String>)>,
}

impl Unnamed {
    /// Whether the name could not be looked up at all: no binary it may be in has a PDB.
    pub fn unlooked(&self) -> bool {
        self.looked_in.is_empty() && !self.without_pdb.is_empty()
    }
}

/// Why `wanted` names no function of the binaries of `counted`: its `n` closest names, the
/// binaries without a PDB, where it was inlined.
pub(crate) fn unnamed(counted: &Counted<'_>, wanted: &str, n: usize) -> Unnamed {
    let (binary, bare) = match wanted.rsplit_once('!') {
        Some((b, f)) => (Some(b), f),
        None => (None, wanted),
    };
    let mut why = Unnamed {
        wanted: wanted.to_owned(),
        ..Unnamed::default()
    };
    let mut names: Vec<&str> = Vec::new();
    for progid in counted.summary.progids() {
        let name = counted.tables.binary_name(progid);
        if binary.is_some_and(|b| !b.eq_ignore_ascii_case(&name)) {
            continue;
        }
        let Some(symbols) = counted.symbols.get(Some(progid)) else {
            why.without_pdb.push(name);
            continue;
        };
        names.extend(symbols.iter().map(|s| s.name));
        let into = SourceLines::inlined_into(symbols, bare, INLINED_AT_MOST);
        if !into.is_empty() {
            why.inlined.push((name.clone(), into));
        }
        why.looked_in.push(name);
    }
    why.closest = closest(names, bare, n)
        .into_iter()
        .map(str::to_owned)
        .collect();
    why
}
