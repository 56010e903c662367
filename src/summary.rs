//! Summaries: what is hot, per binary.
//!
//! For each program ID with sample records (ascending, records before any BINARY_ID last),
//! all its segments merged: per IP event kind the records, samples, unique RVAs and the top N
//! RVAs; for LBR records the branches, unique arcs and top N arcs; for call stacks the arcs,
//! unique arcs and top N arcs. Totals are exact (128-bit). The top entries are the N largest
//! by summed hits, ties broken by the smaller RVA or `(from, to)`, so output is
//! deterministic.
//!
//! Memory holds one table entry per unique RVA or arc, nothing per sample.

use std::cmp::Reverse;
use std::collections::HashMap;
use std::hash::Hash;
use std::io::{self, Write};

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::input::Tables;
use crate::opcode::Opcode;
use crate::record::{Branch, SampleKind, Samples};

/// Per-binary aggregates of one file.
#[derive(Debug)]
pub struct Summary {
    top: usize,
    binaries: Vec<Binary>,
    index: HashMap<Option<u16>, usize>,
    /// The last program ID looked up and its position, since records come in runs.
    last: Option<(Option<u16>, usize)>,
}

/// The aggregates of one program ID.
#[derive(Debug)]
struct Binary {
    progid: Option<u16>,
    records: u64,
    ip: [Option<Tally<u32>>; 6],
    lbr: Option<Tally<Branch>>,
    callstack: Option<Tally<Branch>>,
}

/// Hits per key, with the record count and the exact total.
#[derive(Debug)]
struct Tally<K> {
    records: u64,
    total: u128,
    hits: FxHashMap<K, u128>,
}

impl<K: Hash + Eq + Ord + Copy> Tally<K> {
    fn new() -> Self {
        Tally {
            records: 0,
            total: 0,
            hits: FxHashMap::default(),
        }
    }

    #[inline]
    fn add(&mut self, key: K, hits: u128) {
        let slot = self.hits.entry(key).or_insert(0);
        *slot = slot.saturating_add(hits);
        self.total = self.total.saturating_add(hits);
    }

    /// The `n` keys with the most hits, ties by the smaller key.
    fn top(&self, n: usize) -> Vec<(K, u128)> {
        let mut all: Vec<(K, u128)> = self.hits.iter().map(|(&k, &h)| (k, h)).collect();
        let order = |a: &(K, u128), b: &(K, u128)| (Reverse(a.1), a.0).cmp(&(Reverse(b.1), b.0));
        if n < all.len() {
            all.select_nth_unstable_by(n, order);
            all.truncate(n);
        }
        all.sort_unstable_by(order);
        all
    }
}

impl Summary {
    /// An empty summary that will show `top` entries per table.
    pub fn new(top: usize) -> Self {
        Summary {
            top,
            binaries: Vec::new(),
            index: HashMap::new(),
            last: None,
        }
    }

    fn binary(&mut self, progid: Option<u16>) -> &mut Binary {
        let at = match self.last {
            Some((p, at)) if p == progid => at,
            _ => {
                let next = self.binaries.len();
                let at = *self.index.entry(progid).or_insert(next);
                if at == next {
                    self.binaries.push(Binary {
                        progid,
                        records: 0,
                        ip: Default::default(),
                        lbr: None,
                        callstack: None,
                    });
                }
                self.last = Some((progid, at));
                at
            }
        };
        &mut self.binaries[at]
    }

    /// Counts one sample record.
    pub fn add(&mut self, s: &Samples<'_>) {
        let b = self.binary(s.progid);
        b.records += 1;
        match s.kind() {
            SampleKind::Ip(op) => {
                let Some(i) = op.ip_index() else { return };
                let t = b.ip[i].get_or_insert_with(Tally::new);
                t.records += 1;
                for rva in s.rvas().iter() {
                    t.add(rva, s.hits);
                }
            }
            SampleKind::Lbr => {
                let t = b.lbr.get_or_insert_with(Tally::new);
                t.records += 1;
                for arc in s.branches().iter() {
                    t.add(arc, s.hits);
                }
            }
            SampleKind::CallStack => {
                let t = b.callstack.get_or_insert_with(Tally::new);
                t.records += 1;
                for arc in s.rvas().arcs() {
                    t.add(arc, s.hits);
                }
            }
        }
    }

    /// The binaries in output order: ascending program ID, records without one last.
    fn ordered(&self) -> Vec<&Binary> {
        let mut all: Vec<&Binary> = self.binaries.iter().collect();
        all.sort_by_key(|b| (b.progid.is_none(), b.progid));
        all
    }

    /// The summary as JSON lines, one per binary.
    pub fn json_lines<'a>(&'a self, tables: &'a Tables) -> impl Iterator<Item = SummaryLine<'a>> {
        self.ordered().into_iter().map(move |b| SummaryLine {
            kind: "summary",
            progid: b.progid,
            name: b
                .progid
                .and_then(|p| tables.name(p))
                .map(|n| String::from_utf8_lossy(n).into_owned()),
            records: b.records,
            ip: Opcode::IP_KINDS
                .iter()
                .zip(&b.ip)
                .filter_map(|(op, t)| {
                    let t = t.as_ref()?;
                    Some(IpSummary {
                        event: op.name().unwrap_or_default(),
                        records: t.records,
                        samples: t.total,
                        unique_rvas: t.hits.len(),
                        top: t
                            .top(self.top)
                            .into_iter()
                            .map(|(rva, hits)| TopRva { rva, hits })
                            .collect(),
                    })
                })
                .collect(),
            lbr: b.lbr.as_ref().map(|t| LbrSummary {
                records: t.records,
                branches: t.total,
                unique_arcs: t.hits.len(),
                top: top_arcs(t, self.top),
            }),
            callstack: b.callstack.as_ref().map(|t| CallstackSummary {
                records: t.records,
                arcs: t.total,
                unique_arcs: t.hits.len(),
                top: top_arcs(t, self.top),
            }),
        })
    }
}

fn top_arcs(t: &Tally<Branch>, n: usize) -> Vec<TopArc> {
    t.top(n)
        .into_iter()
        .map(|(b, hits)| TopArc {
            from: b.from,
            to: b.to,
            hits,
        })
        .collect()
}

/// One `{"type":"summary",...}` line.
#[derive(Serialize)]
pub struct SummaryLine<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    progid: Option<u16>,
    name: Option<String>,
    records: u64,
    ip: Vec<IpSummary>,
    lbr: Option<LbrSummary>,
    callstack: Option<CallstackSummary>,
}

#[derive(Serialize)]
struct IpSummary {
    event: &'static str,
    records: u64,
    samples: u128,
    unique_rvas: usize,
    top: Vec<TopRva>,
}

#[derive(Serialize)]
struct LbrSummary {
    records: u64,
    branches: u128,
    unique_arcs: usize,
    top: Vec<TopArc>,
}

#[derive(Serialize)]
struct CallstackSummary {
    records: u64,
    arcs: u128,
    unique_arcs: usize,
    top: Vec<TopArc>,
}

#[derive(Serialize)]
struct TopRva {
    rva: u32,
    hits: u128,
}

#[derive(Serialize)]
struct TopArc {
    from: u32,
    to: u32,
    hits: u128,
}

/// The share of `part` in `total` as a percentage with two decimals.
fn percent(part: u128, total: u128) -> String {
    if total == 0 {
        return "-".into();
    }
    format!("{:.2}%", part as f64 * 100.0 / total as f64)
}

/// Writes the summary as text: a block per binary, each table aligned like a profiler's
/// report.
pub fn write_text(o: &mut impl Write, summary: &Summary, tables: &Tables) -> io::Result<()> {
    for line in summary.json_lines(tables) {
        writeln!(o)?;
        let name = line.name.as_deref().unwrap_or("(no name)");
        match line.progid {
            Some(p) => writeln!(
                o,
                "Summary of progid {p} ({name}): {} sample record{}",
                line.records,
                plural(line.records)
            )?,
            None => writeln!(
                o,
                "Summary of records before any BINARY_ID: {} sample record{}",
                line.records,
                plural(line.records)
            )?,
        }
        for ip in &line.ip {
            writeln!(
                o,
                "  {}: {} record{}, {} samples, {} unique RVA{}",
                ip.event,
                ip.records,
                plural(ip.records),
                ip.samples,
                ip.unique_rvas,
                plural(ip.unique_rvas as u64)
            )?;
            let rows: Vec<_> = ip
                .top
                .iter()
                .map(|t| {
                    (
                        t.hits,
                        percent(t.hits, ip.samples),
                        format!("0x{:08X}", t.rva),
                    )
                })
                .collect();
            table(o, "RVA", &rows)?;
        }
        if let Some(lbr) = &line.lbr {
            writeln!(
                o,
                "  LBR: {} record{}, {} branches, {} unique arc{}",
                lbr.records,
                plural(lbr.records),
                lbr.branches,
                lbr.unique_arcs,
                plural(lbr.unique_arcs as u64)
            )?;
            table(o, "from->to", &arc_rows(&lbr.top, lbr.branches))?;
        }
        if let Some(cs) = &line.callstack {
            writeln!(
                o,
                "  ETW_CALLSTACK: {} record{}, {} arcs, {} unique arc{}",
                cs.records,
                plural(cs.records),
                cs.arcs,
                cs.unique_arcs,
                plural(cs.unique_arcs as u64)
            )?;
            table(o, "caller->callee", &arc_rows(&cs.top, cs.arcs))?;
        }
    }
    Ok(())
}

fn arc_rows(top: &[TopArc], total: u128) -> Vec<(u128, String, String)> {
    top.iter()
        .map(|t| {
            (
                t.hits,
                percent(t.hits, total),
                format!("0x{:08X}->0x{:08X}", t.from, t.to),
            )
        })
        .collect()
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Right-aligned hits and shares, then the key: `      hits   share  RVA`.
fn table(o: &mut impl Write, key: &str, rows: &[(u128, String, String)]) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let hits_width = rows
        .iter()
        .map(|r| r.0.to_string().len())
        .max()
        .unwrap_or(0)
        .max(4);
    let share_width = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max(5);
    writeln!(
        o,
        "    {:>hits_width$}  {:>share_width$}  {key}",
        "hits", "share"
    )?;
    for (hits, share, key) in rows {
        writeln!(o, "    {hits:>hits_width$}  {share:>share_width$}  {key}")?;
    }
    Ok(())
}
