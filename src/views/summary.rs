//! `/summary`: per binary, the totals of each source of samples (an IP event, LBR, call
//! stacks) and the hottest addresses and arcs, with `/pdb` the hottest functions.
//!
//! ```text
//! Summary of progid 0 (app.exe): 42 sample records      {"type":"summary","path":...,
//!   UNHALT_CYCLE: 7 records, 46 samples, 30 unique RVAs   "progid":0,"name":"app.exe",
//!     hits    share  RVA                                  "records":42,"ip":[...],...}
//!        5   10.87%  0x00003117
//! ```

use std::io::{self, Write};

use serde::Serialize;

use super::{Declaration, Declared, Opt, Profile, Reads, When, Writes};
use crate::analysis::summary::{self, FunctionArcTable, IpSummary, SummaryLine, TopArc};
use crate::format::error::Error;
use crate::format::stackorder::StackOrder;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;
use crate::output::text::clean;
use crate::output::text::tables::{of, plural, showing, table};
use crate::output::{Json, Out, Printer, Render, Reported, Text, percent};

/// `/summary`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary;

impl Declared for Summary {
    const DECLARATION: Declaration = Declaration {
        prints: &["summary"],
        when: When::First,
        ..Declaration::new(
            "summary",
            0,
            Writes::Tables,
            Reads::SAMPLES.and(Reads::STACK_ARCS),
        )
    };
    type Asked = bool;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::flag(
        "summary",
        "per binary: totals per event kind and the hottest addresses",
        |a| *a = true,
    )];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Summary))
    }

    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        let Some(summary) = &profile.summary else {
            return Ok(());
        };
        let report = SummaryReport {
            summary,
            tables: profile.tables,
            symbols: profile.symbols,
            order: profile.settings.order,
        };
        out.print(|p| p.show(&report))
    }
}

/// What `/summary` shows of a profile: each binary's counts, named by its tables and
/// symbols.
#[non_exhaustive]
pub struct SummaryReport<'a> {
    /// The counts.
    pub summary: &'a summary::Summary,
    /// The binaries' names.
    pub tables: &'a Tables,
    /// Their symbols, which name the hottest functions.
    pub symbols: &'a SymbolMap,
    /// How call stacks are stored.
    pub order: StackOrder,
}

impl SummaryReport<'_> {
    /// The summary of each binary, as values.
    pub fn lines(&self) -> Vec<SummaryLine> {
        self.summary
            .lines(self.tables, self.symbols, self.order)
            .collect()
    }
}

impl Render for SummaryReport<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        for line in self.lines() {
            binary(t.block()?, &line)?;
        }
        Ok(())
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for summary in self.lines() {
            let path = j.path;
            j.line(&SummaryOf { path, summary })?;
        }
        Ok(())
    }

    fn reported(&self) -> Option<Reported> {
        Some(Reported::Summary(self.lines()))
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "summary")]
struct SummaryOf<'a> {
    path: &'a str,
    #[serde(flatten)]
    summary: SummaryLine,
}

/// The summary of one binary.
fn binary(o: &mut impl Write, line: &SummaryLine) -> io::Result<()> {
    let name = line.name.as_deref().unwrap_or("no name");
    let records = format!("{} sample record{}", line.records, plural(line.records));
    match line.progid {
        Some(p) => writeln!(o, "Summary of progid {p} ({name}): {records}")?,
        None => writeln!(o, "Summary of records before any BINARY_ID: {records}")?,
    }
    for ip in &line.ip {
        event(o, ip)?;
    }
    if let Some(lbr) = &line.lbr {
        writeln!(
            o,
            "  LBR: {} record{}, {} branch{}, {} unique arc{}{}",
            lbr.records,
            plural(lbr.records),
            lbr.branches,
            if lbr.branches == 1 { "" } else { "es" },
            lbr.unique_arcs,
            plural(lbr.unique_arcs as u64),
            showing(lbr.top.len(), lbr.unique_arcs)
        )?;
        table(o, "from->to", &arc_rows(&lbr.top, lbr.branches, "->"))?;
        if let Some(f) = &lbr.function_arcs {
            function_arcs(o, f, lbr.branches, "from->to", "->")?;
        }
    }
    if let Some(cs) = &line.callstack {
        writeln!(
            o,
            "  ETW_CALLSTACK: {} record{}, {} hit{}, {} arc{}, {} unique arc{}{}",
            cs.records,
            plural(cs.records),
            cs.hits,
            plural(cs.hits),
            cs.arcs,
            plural(cs.arcs),
            cs.unique_arcs,
            plural(cs.unique_arcs as u64),
            showing(cs.top.len(), cs.unique_arcs)
        )?;
        // As stored, each frame with the next one out: callee then caller when stacks are
        // stored leaf first, and the arrow says which calls which.
        let arrow = if cs.leaf_first { "<-" } else { "->" };
        let heading = if cs.leaf_first {
            "callee<-caller"
        } else {
            "caller->callee"
        };
        let rows = arc_rows(&cs.top, cs.arcs, arrow);
        table(o, heading, &rows)?;
        if let Some(f) = &cs.function_arcs {
            function_arcs(o, f, cs.arcs, heading, arrow)?;
        }
    }
    Ok(())
}

/// One IP event's totals, its top addresses, and with `/pdb` its top functions.
fn event(o: &mut impl Write, ip: &IpSummary) -> io::Result<()> {
    writeln!(
        o,
        "  {}: {} record{}, {} sample{}, {} unique RVA{}{}",
        ip.event,
        ip.records,
        plural(ip.records),
        ip.samples,
        plural(ip.samples),
        ip.unique_rvas,
        plural(ip.unique_rvas as u64),
        showing(ip.top.len(), ip.unique_rvas)
    )?;
    let rows: Vec<_> = ip
        .top
        .iter()
        .map(|t| {
            let rva = match &t.symbol {
                Some(symbol) => format!("0x{:08X}  {}", t.rva, clean(symbol)),
                None => format!("0x{:08X}", t.rva),
            };
            (t.hits, percent(t.hits, ip.samples), rva)
        })
        .collect();
    table(o, "RVA", &rows)?;
    let Some(f) = &ip.functions else {
        return Ok(());
    };
    let rows: Vec<_> = f
        .top
        .iter()
        .map(|t| {
            let name = clean(&t.function).into_owned();
            (t.hits, percent(t.hits, ip.samples), name)
        })
        .collect();
    table(o, &format!("function{}", of(f.top.len(), f.unique)), &rows)?;
    let what = [
        "sample outside every function",
        "samples outside every function",
    ];
    unresolved(o, f.unresolved, ip.samples, what)
}

/// The function pairs of an arc table, under `heading` (`from->to`, `callee<-caller` or
/// `caller->callee`, said of functions), their ends joined by `arrow`, as stored.
fn function_arcs(
    o: &mut impl Write,
    f: &FunctionArcTable,
    total: u128,
    heading: &str,
    arrow: &str,
) -> io::Result<()> {
    let rows: Vec<_> = f
        .top
        .iter()
        .map(|t| {
            let arc = format!("{}{arrow}{}", clean(&t.from), clean(&t.to));
            (t.hits, percent(t.hits, total), arc)
        })
        .collect();
    let heading = heading
        .replace("from", "function")
        .replace("to", "function")
        .replace("callee", "callee function")
        .replace("caller", "caller function");
    table(o, &format!("{heading}{}", of(f.top.len(), f.unique)), &rows)?;
    unresolved(
        o,
        f.unresolved,
        total,
        [
            "arc with an end outside every function",
            "arcs with an end outside every function",
        ],
    )
}

/// A closing line for what no function holds, when there is any; `what` is said in the
/// singular and the plural.
fn unresolved(o: &mut impl Write, part: u128, total: u128, what: [&str; 2]) -> io::Result<()> {
    if part == 0 {
        return Ok(());
    }
    let what = what[usize::from(part != 1)];
    writeln!(o, "    ({part} {what}, {})", percent(part, total))
}

/// The rows of an arc table: each arc as stored, its ends joined by `arrow`.
fn arc_rows(top: &[TopArc], total: u128, arrow: &str) -> Vec<(u128, String, String)> {
    top.iter()
        .map(|t| {
            (
                t.hits,
                percent(t.hits, total),
                format!("0x{:08X}{arrow}0x{:08X}", t.from, t.to),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::opcode::Opcode;
    use crate::format::record::Samples;
    use crate::output::{Format, Output};

    fn le(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn add(
        s: &mut summary::Summary,
        progid: Option<u16>,
        opcode: Opcode,
        hits: u128,
        values: &[u32],
    ) {
        let payload = le(values);
        s.add(&Samples {
            offset: 0,
            opcode,
            progid,
            hits,
            count: values.len() as u8,
            payload: &payload,
        });
    }

    #[test]
    fn text_shows_shares_aligned() {
        let mut s = summary::Summary::new(10);
        add(
            &mut s,
            Some(0),
            Opcode::RETIRE_INSTR,
            1,
            &[0x10, 0x20, 0x20, 0x20],
        );
        let mut printer = Output::new(Format::Text, false, Vec::new(), Vec::new());
        let report = SummaryReport {
            summary: &s,
            tables: &Tables::default(),
            symbols: &SymbolMap::default(),
            order: StackOrder::LeafFirst,
        };
        printer.show(&report).unwrap();
        let text = String::from_utf8(printer.into_inner().0).unwrap();
        assert!(
            text.contains("RETIRE_INSTR: 1 record, 4 samples, 2 unique RVAs"),
            "{text}"
        );
        let rows: Vec<&str> = text.lines().filter(|l| l.contains("0x000000")).collect();
        assert_eq!(
            rows,
            [
                "       3   75.00%  0x00000020",
                "       1   25.00%  0x00000010"
            ]
        );
    }

    #[test]
    fn what_no_function_holds_is_counted_in_the_right_number() {
        for (part, line) in [
            (1, "    (1 sample outside every function, 50.00%)\n"),
            (3, "    (3 samples outside every function, 150.00%)\n"),
        ] {
            let mut out = Vec::new();
            let what = [
                "sample outside every function",
                "samples outside every function",
            ];
            unresolved(&mut out, part, 2, what).unwrap();
            assert_eq!(String::from_utf8(out).unwrap(), line);
        }
        let mut out = Vec::new();
        unresolved(&mut out, 0, 2, ["a", "b"]).unwrap();
        assert!(out.is_empty());
    }
}
