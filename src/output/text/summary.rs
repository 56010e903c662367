//! The text form of `/summary`: a block per binary, each table of top entries with its hits
//! and their share, right-aligned like a profiler's report.

use std::io::{self, Write};

use super::sink::{TextPrinter, clean};
use crate::analysis::callgraph::CallGraph;
use crate::analysis::functions::{FunctionRow, FunctionsLine};
use crate::analysis::lines::{LinesReport, LinesTable};
use crate::analysis::summary::{FunctionArcTable, IpSummary, Summary, SummaryLine, TopArc};
use crate::format::record::SampleKind;
use crate::format::stackorder::StackOrder;
use crate::format::tables::Tables;
use crate::image::symbols::SymbolMap;
use crate::output::percent;

/// Writes the summary as text: a block per binary, each table aligned like a profiler's
/// report.
pub(super) fn write<W: Write, E: Write>(
    p: &mut TextPrinter<W, E>,
    summary: &Summary,
    tables: &Tables,
    symbols: &SymbolMap,
    order: StackOrder,
) -> io::Result<()> {
    for line in summary.lines(tables, symbols, order) {
        binary(p.block()?, &line)?;
    }
    Ok(())
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

/// An arc table's top arcs, and with `/pdb` its top function pairs.
/// Writes `/functions`: a table per binary of inclusive and exclusive hits, with their
/// shares of the binary's stack total, hottest first.
pub(super) fn functions<W: Write, E: Write>(
    p: &mut TextPrinter<W, E>,
    lines: &[FunctionsLine],
) -> io::Result<()> {
    for line in lines {
        functions_of(p.block()?, line)?;
    }
    Ok(())
}

/// The `/functions` table of one binary.
fn functions_of(o: &mut impl Write, line: &FunctionsLine) -> io::Result<()> {
    let (records, what) = if line.source == SampleKind::CallStack.name() {
        (line.stacks, "stack")
    } else {
        (line.records, "record")
    };
    let shown = showing(line.rows().len(), line.unique);
    writeln!(
        o,
        "Functions of progid {} ({}), {}: {records} {what}{}, {} hit{}, {} key{}{shown}",
        line.progid,
        clean(&line.name),
        line.source,
        plural(records),
        line.hits,
        plural(line.hits),
        line.unique,
        plural(line.unique as u64)
    )?;
    let rows = line.rows();
    if rows.is_empty() {
        return Ok(());
    }
    let width = |f: fn(&FunctionRow) -> u128, title: &str| {
        rows.iter()
            .map(|r| f(r).to_string().len())
            .max()
            .unwrap_or(0)
            .max(title.len())
    };
    let iw = width(|r| r.inclusive(), "inclusive");
    let ew = width(|r| r.exclusive(), "exclusive");
    let sw = "100.00%".len();
    writeln!(
        o,
        "    {:>iw$}  {:>sw$}  {:>ew$}  {:>sw$}  key",
        "inclusive", "share", "exclusive", "share"
    )?;
    for r in rows {
        writeln!(
            o,
            "    {:>iw$}  {:>sw$}  {:>ew$}  {:>sw$}  {}{}",
            r.inclusive(),
            percent(r.inclusive(), line.hits()),
            r.exclusive(),
            percent(r.exclusive(), line.hits()),
            clean(r.key()),
            if r.inlined() { " (inlined)" } else { "" }
        )?;
    }
    Ok(())
}

/// The function-pair table of an arc table.
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

/// ` (showing N of M)` after the heading of a table of `unique` entries that shows only
/// `shown` of them.
pub(super) fn of(shown: usize, unique: usize) -> String {
    if shown < unique {
        format!(" (showing {shown} of {unique})")
    } else {
        String::new()
    }
}

/// `, showing N` when a table of `unique` entries shows only `shown` of them.
pub(super) fn showing(shown: usize, unique: usize) -> String {
    if shown < unique {
        format!(", showing {shown}")
    } else {
        String::new()
    }
}

/// `/lines`: a table per binary and source.
pub(super) fn source_lines<W: Write, E: Write>(
    p: &mut TextPrinter<W, E>,
    report: &LinesReport,
) -> io::Result<()> {
    for table in &report.tables {
        lines_of(p.block()?, table)?;
    }
    Ok(())
}

/// The `/lines` table of one binary and source: `file:line` (or `(no line)`) and the
/// function there.
fn lines_of(o: &mut impl Write, t: &LinesTable) -> io::Result<()> {
    let shown = showing(t.top.len(), t.unique);
    writeln!(
        o,
        "Lines of progid {} ({}), {}: {} hit{}, {} line{}{shown}",
        t.progid,
        clean(&t.name),
        t.source.name(),
        t.hits,
        plural(t.hits),
        t.unique,
        plural(t.unique as u64),
    )?;
    let places: Vec<String> = t
        .top
        .iter()
        .map(|r| match (&r.file, r.line) {
            (Some(file), Some(line)) => format!("{}:{line}", clean(file)),
            (Some(file), None) => clean(file).into_owned(),
            (None, _) => "(no line)".to_owned(),
        })
        .collect();
    let width = places.iter().map(String::len).max().unwrap_or(0).max(4);
    let rows: Vec<(u128, String, String)> = t
        .top
        .iter()
        .zip(&places)
        .map(|(r, place)| {
            let key = format!("{place:<width$}  {}", clean(&r.function));
            (r.hits, percent(r.hits, t.hits), key)
        })
        .collect();
    table(o, &format!("{:<width$}  function", "line"), &rows)
}

/// `/callgraph`: a table per binary with edges, the most calls first.
pub(super) fn call_graph<W: Write, E: Write>(
    p: &mut TextPrinter<W, E>,
    graph: &CallGraph,
) -> io::Result<()> {
    for b in graph.binaries.iter().filter(|b| b.unique > 0) {
        let o = p.block()?;
        let shown = showing(b.edges.len(), b.unique);
        let what = match &graph.around {
            Some(f) => format!("Callers and callees of {} in", clean(f)),
            None => "Call graph of".to_owned(),
        };
        writeln!(
            o,
            "{what} progid {} ({}): {} call{} on {} edge{}{shown}",
            b.progid,
            clean(&b.name),
            b.calls,
            plural(b.calls),
            b.unique,
            plural(b.unique as u64),
        )?;
        let rows: Vec<(u128, String, String)> = b
            .edges
            .iter()
            .map(|e| {
                let edge = format!(
                    "{:<5}  {} -> {}",
                    e.kind.name(),
                    clean(&e.caller),
                    clean(&e.callee)
                );
                (e.calls, percent(e.calls, b.calls), edge)
            })
            .collect();
        table(o, "kind   caller -> callee", &rows)?;
    }
    Ok(())
}

pub(super) fn plural(n: impl Into<u128>) -> &'static str {
    let n: u128 = n.into();
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
    let share_width = "100.00%".len();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::opcode::Opcode;
    use crate::format::record::Samples;

    fn le(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn add(s: &mut Summary, progid: Option<u16>, opcode: Opcode, hits: u128, values: &[u32]) {
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
        let mut s = Summary::new(10);
        add(
            &mut s,
            Some(0),
            Opcode::RETIRE_INSTR,
            1,
            &[0x10, 0x20, 0x20, 0x20],
        );
        let mut printer = TextPrinter::new(Vec::new(), Vec::new());
        write(
            &mut printer,
            &s,
            &Tables::default(),
            &SymbolMap::default(),
            StackOrder::LeafFirst,
        )
        .unwrap();
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
