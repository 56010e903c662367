//! The summary's report: a line per binary, its top entries named with the `/pdb` symbols,
//! as JSON prints it and text lays it out.

use crate::format::opcode::Opcode;
use crate::format::stackorder::StackOrder;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;
use crate::image::symbols::Symbols;

/// What a source's total counts, as `/summary` names it: the `samples` of an IP event, the
/// `branches` of LBR records, the `arcs` of call stacks (a stack of n frames, n - 1 arcs).
use super::shape::*;
use super::*;

/// The start RVA of the function holding `rva`.
fn function_of(symbols: &Symbols, rva: u32) -> Option<u32> {
    symbols.lookup(rva).map(|(f, _)| f.rva)
}

/// `function+0xOFFSET` for `rva`, when a function holds it.
fn symbol_at(symbols: &Symbols, rva: u32) -> Option<String> {
    symbols
        .lookup(rva)
        .map(|(f, offset)| format!("{}+0x{offset:X}", f.name))
}

/// The name of the function starting at `rva`.
fn function_name(symbols: &Symbols, rva: u32) -> String {
    symbols
        .lookup(rva)
        .map_or_else(|| format!("0x{rva:08X}"), |(f, _)| f.name.to_owned())
}

impl Keyed<u32> {
    /// IP samples by function.
    fn functions(&self, symbols: &Symbols, n: usize) -> FunctionTable {
        let (all, unresolved) = self.fold(|rva| function_of(symbols, rva));
        FunctionTable {
            unique: all.len(),
            unresolved,
            top: top(all.into_iter(), n)
                .into_iter()
                .map(|(rva, hits)| TopFunction {
                    function: function_name(symbols, rva),
                    rva,
                    hits,
                    samples: hits,
                })
                .collect(),
        }
    }
}

impl Keyed<[u32; 2]> {
    /// Arcs folded to function pairs; an arc with an end outside every function is
    /// unresolved.
    fn function_arcs(&self, symbols: &Symbols, n: usize) -> FunctionArcTable {
        let (all, unresolved) =
            self.fold(|[from, to]| Some([function_of(symbols, from)?, function_of(symbols, to)?]));
        FunctionArcTable {
            unique: all.len(),
            unresolved,
            top: top(all.into_iter(), n)
                .into_iter()
                .map(|([from, to], hits)| TopFunctionArc {
                    from: function_name(symbols, from),
                    to: function_name(symbols, to),
                    hits,
                })
                .collect(),
        }
    }
}

impl Summary {
    /// The summary's report, one line per binary, as JSON prints it and text lays it out;
    /// `order` says which end of a stored call-stack arc is the callee.
    pub(crate) fn lines<'a>(
        &'a self,
        tables: &'a Tables,
        symbols: &'a SymbolMap,
        order: StackOrder,
    ) -> impl Iterator<Item = SummaryLine> + 'a {
        self.ordered().into_iter().map(move |b| {
            let symbols = symbols.get(b.progid);
            SummaryLine {
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
                                .map(|(rva, hits)| TopRva {
                                    rva,
                                    hits,
                                    symbol: symbols.and_then(|s| symbol_at(s, rva)),
                                })
                                .collect(),
                            functions: symbols.map(|s| t.functions(s, self.top)),
                        })
                    })
                    .collect(),
                lbr: b.lbr.as_ref().map(|t| LbrSummary {
                    records: t.records,
                    branches: t.total,
                    unique_arcs: t.hits.len(),
                    top: top_arcs(t, self.top),
                    function_arcs: symbols.map(|s| t.function_arcs(s, self.top)),
                }),
                callstack: b
                    .callstack
                    .as_ref()
                    .map(|t| callstack_summary(t, symbols, self.top, order)),
            }
        })
    }
}

/// The call-stack table's summary: its arcs as stored, and which end of each is the callee.
fn callstack_summary(
    t: &Keyed<[u32; 2]>,
    symbols: Option<&Symbols>,
    n: usize,
    order: StackOrder,
) -> CallstackSummary {
    CallstackSummary {
        records: t.records,
        hits: t.record_hits,
        arcs: t.total,
        unique_arcs: t.hits.len(),
        // Stored leaf first, the first frame of a pair is the one called.
        leaf_first: order == StackOrder::LeafFirst,
        top: top_arcs(t, n),
        function_arcs: symbols.map(|s| t.function_arcs(s, n)),
    }
}

fn top_arcs(t: &Keyed<[u32; 2]>, n: usize) -> Vec<TopArc> {
    t.top(n)
        .into_iter()
        .map(|([from, to], hits)| TopArc { from, to, hits })
        .collect()
}
