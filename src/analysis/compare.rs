//! `/compare BASE NEW`: how two traces differ (docs/output.md).
//!
//! Binaries are paired by name, case-insensitively. For each pair and each source present in
//! either trace (an IP event, `LBR`, `ETW_CALLSTACK`), with `p_k` and `q_k` the shares of key
//! `k` in the source's hits in BASE and NEW:
//!
//! ```text
//! overlap  = sum over k of min(p_k, q_k)     1 when the distributions are the same, 0 disjoint
//! coverage = sum of q_k where p_k > 0          the share of NEW that BASE sampled at all
//! missing  = the keys with q_k > p_k, most first
//! ```
//!
//! Keys are RVAs for IP events and the stored `(from, to)` pairs for LBR and call-stack arcs,
//! as `/summary` counts them; with a `/pdb` for the trace, each is named by the function that
//! holds it (an arc by the functions at both ends, a call stack's caller looked up at its
//! call, a byte before the return address it stores), and matched by name.

use std::collections::BTreeMap;

use crate::analysis::functions::FunctionsLine;
use crate::analysis::share;

use crate::analysis::keys::{self, key_name};
use crate::analysis::summary::Summary;
use crate::format::record::SampleKind;
use crate::format::stackorder::StackOrder;
use crate::format::tables::{Tables, base_name};
use crate::image::attached::SymbolMap;
use crate::image::symbols::Symbols;

/// One trace of the comparison.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct Side<'a> {
    /// Its counts.
    pub summary: &'a Summary,
    /// Its binaries' names.
    pub tables: &'a Tables,
    /// The `/pdb` symbols attached to it.
    pub symbols: &'a SymbolMap,
    /// Whether an address in inlined code is the innermost function inlined there.
    pub inline: bool,
    /// How its call stacks' frames are stored: which end of a call-stack arc is the caller.
    pub order: StackOrder,
}

/// A key as both traces know it: a function by name (the same function has other addresses
/// in another build), an address, or an arc.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum PairedKey {
    Function(String),
    Address(u32),
    Arc(u32, u32),
    /// An arc whose ends are both in functions: their names, stored end first, and the
    /// arrow that reads it (`->` from the first to the second, `<-` the other way).
    FunctionArc(String, &'static str, String),
}

/// One pair and source.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Comparison {
    /// The binary's name, as BASE spells it.
    pub name: String,
    /// The source: an IP event, LBR or call stacks.
    pub source: SampleKind,
    /// The source's hits in BASE.
    pub base_hits: u128,
    /// The source's hits in NEW.
    pub new_hits: u128,
    /// Sum of the smaller shares: 1 for the same distribution, 0 for disjoint ones.
    pub overlap: f64,
    /// The share of NEW's hits on keys BASE sampled at all.
    pub coverage: f64,
    /// The keys NEW has more of than BASE, most first, at most `/top` of them.
    pub missing: Vec<Missing>,
    /// How many keys NEW has more of than BASE, before `/top` cut them.
    pub more_in_new: usize,
}

/// A key NEW samples more than BASE.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Missing {
    /// `binary+0x1A2B`, `binary!function`, or `0x1A2B->0x1A40` for an arc.
    pub key: String,
    /// Its share in BASE.
    pub base_share: f64,
    /// Its share in NEW.
    pub new_share: f64,
}

/// A binary in one trace only.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OnlyIn {
    /// Its name.
    pub name: String,
    /// `base` or `new`.
    pub only_in: &'static str,
}

/// The comparison of two traces.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct CompareReport {
    /// BASE, as given on the command line.
    pub base: String,
    /// Each pair and source, pairs in BASE's progid order.
    pub comparisons: Vec<Comparison>,
    /// The binaries in one trace only.
    pub only_in: Vec<OnlyIn>,
    /// With `/functions` (or `/html`): per paired binary and source, the keys whose inclusive
    /// share moved most.
    pub functions: Vec<FunctionsCompared>,
}

/// The keys of one paired binary and source whose inclusive share of its hits moved most.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FunctionsCompared {
    /// The binary's name, as BASE spells it.
    pub name: String,
    /// What the hits are of: `ETW_CALLSTACK` (call stacks), an IP event, or `LBR` (branch
    /// targets), whose keys have no callees: there inclusive and exclusive are the same.
    pub source: &'static str,
    /// At most `/top` keys, by |delta| descending, ties by key.
    pub keys: Vec<FunctionDelta>,
}

/// How one key's shares of its binary's call-stack hits changed from BASE to NEW.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FunctionDelta {
    /// `binary!function` or `binary+0x1A2B`.
    pub key: String,
    /// Its inclusive share in BASE.
    pub base_inclusive: f64,
    /// Its inclusive share in NEW.
    pub new_inclusive: f64,
    /// Its exclusive share in BASE.
    pub base_exclusive: f64,
    /// Its exclusive share in NEW.
    pub new_exclusive: f64,
    /// `new_inclusive - base_inclusive`.
    pub delta: f64,
}

/// Per binary paired by name and source both traces have, the keys of its `/functions` lines
/// whose inclusive share moved most from `base` to `new`, `top` each (the lines hold every
/// key: no `/top` cut).
pub(crate) fn functions(
    base: &[FunctionsLine],
    new: &[FunctionsLine],
    top: usize,
) -> Vec<FunctionsCompared> {
    let paired = |line: &FunctionsLine| (base_name(&line.name).to_lowercase(), line.source);
    let mut out = Vec::new();
    for b in base {
        let Some(n) = new.iter().find(|n| paired(n) == paired(b)) else {
            continue;
        };
        let shares = |line: &FunctionsLine| -> BTreeMap<String, (f64, f64)> {
            line.rows()
                .iter()
                .map(|r| {
                    let of = |h: u128| share(h, line.hits());
                    (r.key().to_owned(), (of(r.inclusive()), of(r.exclusive())))
                })
                .collect()
        };
        let (p, q) = (shares(b), shares(n));
        let mut keys: Vec<FunctionDelta> = p
            .keys()
            .chain(q.keys())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .map(|key| {
                let (bi, be) = p.get(key).copied().unwrap_or_default();
                let (ni, ne) = q.get(key).copied().unwrap_or_default();
                FunctionDelta {
                    key: key.clone(),
                    base_inclusive: bi,
                    new_inclusive: ni,
                    base_exclusive: be,
                    new_exclusive: ne,
                    delta: ni - bi,
                }
            })
            .collect();
        // Stable: of equal moves, the keys stay in byte order.
        keys.sort_by(|x, y| y.delta.abs().total_cmp(&x.delta.abs()));
        keys.truncate(top);
        out.push(FunctionsCompared {
            name: b.name.clone(),
            source: b.source,
            keys,
        });
    }
    out
}

/// The binaries of a trace by the name they pair on, each with its progids.
fn binaries(tables: &Tables) -> BTreeMap<String, (String, Vec<u16>)> {
    let mut out: BTreeMap<String, (String, Vec<u16>)> = BTreeMap::new();
    for progid in 0..tables.progid_count() as u16 {
        let name = tables.binary_name(progid);
        let key = base_name(&name).to_lowercase();
        out.entry(key)
            .or_insert_with(|| (name.clone(), Vec::new()))
            .1
            .push(progid);
    }
    out
}

/// One side's hits per key for one source, and their total.
type Distribution = (BTreeMap<PairedKey, u128>, u128);

/// The hits of `source` over a binary's progids.
fn distribution(side: &Side<'_>, progids: &[u16], source: SampleKind) -> Distribution {
    let mut keys: BTreeMap<PairedKey, u128> = BTreeMap::new();
    let mut total = 0u128;
    for &p in progids {
        let arcs = match source {
            SampleKind::Lbr => side.summary.lbr(p),
            SampleKind::CallStack => side.summary.callstack(p),
            SampleKind::Ip(_) => None,
        };
        if let Some(t) = arcs {
            let symbols = side.symbols.get(Some(p));
            for ([from, to], hits) in t.iter() {
                let key = arc_key(symbols, source, side.order, [from, to]);
                *keys.entry(key).or_default() += hits;
            }
            total += t.total();
        }
        match source {
            SampleKind::Lbr | SampleKind::CallStack => {}
            SampleKind::Ip(_) => {
                let Some(t) = side.summary.ip_tables(p).find(|t| t.source() == source) else {
                    continue;
                };
                let symbols = side.symbols.get(Some(p));
                for (key, hits) in keys::by_key(t.iter(), symbols, side.inline) {
                    let shared = match key.function_name() {
                        Some(f) => PairedKey::Function(f.to_owned()),
                        None => PairedKey::Address(key.rva),
                    };
                    *keys.entry(shared).or_default() += hits;
                }
                total += t.total();
            }
        }
    }
    (keys, total)
}

/// An arc's key: by the functions at its ends when `symbols` place both in one, else its
/// stored addresses. A call stack's caller is a return address, looked up a byte back, at its
/// call; stored leaf first, the caller is an arc's second end, and the arc reads `<-`.
fn arc_key(
    symbols: Option<&Symbols>,
    source: SampleKind,
    order: StackOrder,
    arc: [u32; 2],
) -> PairedKey {
    let stack = source == SampleKind::CallStack;
    let leaf_first = order == StackOrder::LeafFirst;
    let named = symbols.and_then(|s| {
        let name = |rva: u32, caller: bool| {
            let at = if caller { rva.saturating_sub(1) } else { rva };
            s.lookup(at).map(|(f, _)| f.name.to_owned())
        };
        let [first, second] = arc;
        Some((
            name(first, stack && !leaf_first)?,
            name(second, stack && leaf_first)?,
        ))
    });
    match named {
        Some((first, second)) => {
            let arrow = if stack && leaf_first { "<-" } else { "->" };
            PairedKey::FunctionArc(first, arrow, second)
        }
        None => PairedKey::Arc(arc[0], arc[1]),
    }
}

/// The sources a binary has.
fn sources(side: &Side<'_>, progids: &[u16]) -> impl Iterator<Item = SampleKind> {
    progids
        .iter()
        .flat_map(|&p| side.summary.sources(p).map(|t| t.source))
}

/// Compares `new` with `base`, showing `top` missing keys per pair and source.
pub(crate) fn compare(base: &Side<'_>, new: &Side<'_>, top: usize) -> CompareReport {
    let base_binaries = binaries(base.tables);
    let new_binaries = binaries(new.tables);
    let mut report = CompareReport::default();
    let mut pairs: Vec<(&String, &(String, Vec<u16>))> = base_binaries.iter().collect();
    pairs.sort_by_key(|(_, (_, progids))| progids[0]);
    for (key, (name, base_progids)) in pairs {
        let Some((_, new_progids)) = new_binaries.get(key) else {
            report.only_in.push(OnlyIn {
                name: name.clone(),
                only_in: "base",
            });
            continue;
        };
        let mut all: Vec<SampleKind> = sources(base, base_progids)
            .chain(sources(new, new_progids))
            .collect();
        all.sort();
        all.dedup();
        for source in all {
            let (p, p_total) = distribution(base, base_progids, source);
            let (q, q_total) = distribution(new, new_progids, source);
            report
                .comparisons
                .push(comparison(name, source, (&p, p_total), (&q, q_total), top));
        }
    }
    for (key, (name, _)) in &new_binaries {
        if !base_binaries.contains_key(key) {
            report.only_in.push(OnlyIn {
                name: name.clone(),
                only_in: "new",
            });
        }
    }
    report
}

fn comparison(
    name: &str,
    source: SampleKind,
    (p, p_total): (&BTreeMap<PairedKey, u128>, u128),
    (q, q_total): (&BTreeMap<PairedKey, u128>, u128),
    top: usize,
) -> Comparison {
    let mut overlap = 0.0;
    let mut coverage = 0.0;
    let mut missing = Vec::new();
    for (k, &hits) in q {
        let qk = share(hits, q_total);
        let pk = share(p.get(k).copied().unwrap_or(0), p_total);
        // Both 0 when either side has no hits: the shares of an empty side are all 0.
        overlap += pk.min(qk);
        if pk > 0.0 {
            coverage += qk;
        }
        if qk > pk {
            missing.push((qk - pk, k, pk, qk));
        }
    }
    missing.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    let more_in_new = missing.len();
    missing.truncate(top);
    Comparison {
        name: name.to_owned(),
        source,
        base_hits: p_total,
        new_hits: q_total,
        overlap: overlap.min(1.0),
        coverage: coverage.min(1.0),
        more_in_new,
        missing: missing
            .into_iter()
            .map(|(_, k, base_share, new_share)| Missing {
                key: match k {
                    PairedKey::Function(f) => key_name(name, Some(f), 0),
                    PairedKey::Address(rva) => key_name(name, None, *rva),
                    PairedKey::Arc(from, to) => format!("0x{from:X}->0x{to:X}"),
                    PairedKey::FunctionArc(first, arrow, second) => {
                        format!("{first}{arrow}{second}")
                    }
                },
                base_share,
                new_share,
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(pairs: &[(u32, u128)]) -> (BTreeMap<PairedKey, u128>, u128) {
        let keys: BTreeMap<PairedKey, u128> = pairs
            .iter()
            .map(|&(k, h)| (PairedKey::Address(k), h))
            .collect();
        let total = keys.values().sum();
        (keys, total)
    }

    fn compared(p: &[(u32, u128)], q: &[(u32, u128)]) -> Comparison {
        let (p, pt) = dist(p);
        let (q, qt) = dist(q);
        comparison(
            "app.exe",
            SampleKind::Ip(crate::format::opcode::Opcode::UNHALT_CYCLE),
            (&p, pt),
            (&q, qt),
            10,
        )
    }

    #[test]
    fn the_keys_more_in_new_are_counted_before_top_cuts_them() {
        let (p, pt) = dist(&[(1, 1)]);
        let (q, qt) = dist(&[(2, 1), (3, 2), (4, 3)]);
        let source = SampleKind::Ip(crate::format::opcode::Opcode::UNHALT_CYCLE);
        let c = comparison("app.exe", source, (&p, pt), (&q, qt), 2);
        assert_eq!((c.missing.len(), c.more_in_new), (2, 3));
        assert_eq!(c.missing[0].key, "app.exe+0x4", "most first");
    }

    #[test]
    fn identical_distributions_overlap_fully() {
        let c = compared(&[(1, 3), (2, 1)], &[(1, 30), (2, 10)]);
        assert_eq!((c.overlap, c.coverage), (1.0, 1.0));
        assert!(c.missing.is_empty());
    }

    #[test]
    fn disjoint_distributions_do_not_overlap() {
        let c = compared(&[(1, 3)], &[(2, 5)]);
        assert_eq!((c.overlap, c.coverage), (0.0, 0.0));
        assert_eq!(c.missing.len(), 1);
        assert_eq!(c.missing[0].key, "app.exe+0x2");
        assert_eq!(
            (c.missing[0].base_share, c.missing[0].new_share),
            (0.0, 1.0)
        );
    }

    #[test]
    fn half_overlap() {
        // BASE: all on 1; NEW: half on 1, half on 2.
        let c = compared(&[(1, 4)], &[(1, 2), (2, 2)]);
        assert_eq!((c.overlap, c.coverage), (0.5, 0.5));
        assert_eq!(c.missing[0].key, "app.exe+0x2");
    }

    #[test]
    fn an_empty_side_overlaps_nothing() {
        let c = compared(&[], &[(1, 4)]);
        assert_eq!(
            (c.overlap, c.coverage, c.base_hits, c.new_hits),
            (0.0, 0.0, 0, 4)
        );
        let c = compared(&[(1, 4)], &[]);
        assert_eq!((c.overlap, c.coverage), (0.0, 0.0));
    }

    #[test]
    fn missing_keys_most_first_ties_by_key() {
        let c = compared(&[(9, 10)], &[(3, 1), (2, 1), (1, 2)]);
        let keys: Vec<&str> = c.missing.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["app.exe+0x1", "app.exe+0x2", "app.exe+0x3"]);
    }
}
