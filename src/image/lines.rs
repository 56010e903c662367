//! Source lines and inline frames: which line of which function an address is, including
//! the functions the compiler inlined there, from a PDB's line and inlinee records, as
//! debuggers and `llvm-symbolizer --inlines` read them.
//!
//! ```text
//! address 0x1040 in digest (a procedure):          innermost first
//!   S_GPROC32 digest        line program:  inline.c:34    rotate   inline.c:20  (inlined)
//!     S_INLINESITE mix      annotations:   inline.c:27    mix      inline.c:27  (inlined)
//!       S_INLINESITE rotate annotations:   inline.c:20    digest   inline.c:34
//! ```
//!
//! Each inline site's binary annotations give the code ranges it covers, each with a line of
//! the inlined function; a site nested in another is inlined into it. The chain at an address
//! is the deepest site whose ranges hold it and the sites around it, then the procedure; each
//! frame's line is that of its range at the address (for a caller, the line of the call it
//! inlined), and the procedure's comes from the module's line program.
//!
//! [`SourceLines::read`] looks up a set of addresses at once and reads only what they need:
//! the modules (object files) their functions are in, and the names of the functions inlined
//! there. Nothing in the PDB is trusted: a module whose line or inlinee records cannot be read
//! leaves its functions without lines (the first problem is kept for a note), and a range
//! outside its procedure is ignored.

use std::collections::BTreeMap;
use std::collections::hash_map::Entry;
use std::ops::Range;
use std::path::Path;

use pdb2::{
    FallibleIterator, FileIndex, IdData, IdIndex, Inlinee, ItemFinder, LineProgram, ModuleInfo,
    PdbInternalSectionOffset, Rva, StringTable, SymbolData, SymbolIndex, TypeData, TypeIndex,
};
use rustc_hash::FxHashMap;

use crate::image::guard::guarded;
use crate::image::ident::{self, IdentError};
use crate::image::symbols::{Procedure, Symbols};

/// One frame of the chain at an address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceFrame<'a> {
    /// The function: an inlined one, or the procedure that holds the address.
    pub function: &'a str,
    /// The function's name as a number: equal for equal names within one [`SourceLines`].
    pub name_id: u32,
    /// The source file, as the PDB records it.
    pub file: Option<&'a str>,
    /// The line in `file`.
    pub line: Option<u32>,
    /// The line the function starts on (its first line record), for a procedure; `None` for
    /// an inlined function (the PDB reader does not expose it).
    pub start_line: Option<u32>,
    /// Whether the compiler inlined this function into the next frame out.
    pub inlined: bool,
}

/// A frame as kept: strings by index.
#[derive(Clone, Copy, Debug)]
struct Frame {
    function: u32,
    file: Option<u32>,
    line: Option<u32>,
    start_line: Option<u32>,
    inlined: bool,
}

/// The source lines and inline chains at a set of addresses of one binary.
#[derive(Debug, Default)]
pub struct SourceLines {
    strings: Vec<String>,
    interned: FxHashMap<String, u32>,
    frames: Vec<Frame>,
    /// Each address looked up to its frames, innermost first.
    chains: FxHashMap<u32, Range<u32>>,
    problem: Option<String>,
}

/// Source lines looked up one address at a time, as a dump prints its records: the first
/// address of a procedure reads the lines of all its bytes (up to [`LineCache::SPAN`]), so the
/// PDB is read once per procedure sampled, not once per record.
#[derive(Debug, Default)]
pub struct LineCache {
    /// The lines of each procedure read, by (module, symbol).
    procedures: FxHashMap<(usize, u32), SourceLines>,
    /// The first problem met, until it is taken.
    problem: Option<String>,
}

impl LineCache {
    /// The most bytes of a procedure read at once.
    pub const SPAN: u32 = 1 << 16;

    /// The file and line at `rva` (of the innermost function inlined there), when the PDB
    /// `symbols` were read from has them.
    pub fn line(&mut self, symbols: &Symbols, rva: u32) -> Option<(&str, u32)> {
        let (function, _, procedure) = symbols.lookup_procedure(rva)?;
        let procedure = procedure?;
        let lines = match self.procedures.entry((procedure.module, procedure.symbol)) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                let span = procedure.len.min(Self::SPAN);
                let start = function.rva;
                let lines =
                    SourceLines::read(symbols, (0..span).filter_map(|o| start.checked_add(o)));
                if let Some(problem) = lines.problem() {
                    self.problem.get_or_insert_with(|| problem.to_owned());
                }
                e.insert(lines)
            }
        };
        let frame = lines.chain(rva)?.next()?;
        Some((frame.file?, frame.line?))
    }

    /// The first problem met since the last call, if any: for one note.
    pub fn take_problem(&mut self) -> Option<String> {
        self.problem.take()
    }
}

/// What a module's procedures' lines are read from: its line program and its inlinees, by
/// the ID of the function inlined.
struct ModuleLines<'a, 's> {
    info: &'a ModuleInfo<'s>,
    program: LineProgram<'a>,
    inlinees: BTreeMap<IdIndex, Inlinee<'a>>,
}

impl<'a, 's> ModuleLines<'a, 's> {
    fn read(info: &'a ModuleInfo<'s>) -> pdb2::Result<ModuleLines<'a, 's>> {
        Ok(ModuleLines {
            info,
            program: info.line_program()?,
            inlinees: info.inlinees()?.map(|i| Ok((i.index(), i))).collect()?,
        })
    }
}

/// A range of code an inline site covers, with the line of the inlined function there.
#[derive(Clone, Copy, Debug)]
struct InlineRange {
    start: u32,
    end: u32,
    file: FileIndex,
    line: u32,
}

/// An inline site of a procedure.
#[derive(Debug)]
struct Site {
    /// The site it is nested in.
    parent: Option<usize>,
    depth: usize,
    inlinee: IdIndex,
    ranges: Vec<InlineRange>,
}

/// The addresses of one procedure to look up.
struct Wanted<'s> {
    procedure: Procedure,
    name: &'s str,
    rvas: Vec<u32>,
}

impl SourceLines {
    /// Looks up the addresses `rvas` in the PDB `symbols` were read from. Addresses in no
    /// procedure, and the functions of modules whose line records cannot be read, get no
    /// chain; the PDB is not opened when no address is in a procedure.
    pub fn read(symbols: &Symbols, rvas: impl IntoIterator<Item = u32>) -> SourceLines {
        let mut wanted: BTreeMap<(usize, u32), Wanted<'_>> = BTreeMap::new();
        for rva in rvas {
            if let Some((function, _, Some(procedure))) = symbols.lookup_procedure(rva) {
                wanted
                    .entry((procedure.module, procedure.symbol))
                    .or_insert_with(|| Wanted {
                        procedure,
                        name: function.name,
                        rvas: Vec::new(),
                    })
                    .rvas
                    .push(rva);
            }
        }
        let mut out = SourceLines::default();
        let Some(path) = symbols.path().filter(|_| !wanted.is_empty()) else {
            return out;
        };
        match guarded(|| out.read_pdb(path, &wanted)) {
            Ok(Ok(())) => out,
            Ok(Err(e)) => {
                out.problem.get_or_insert_with(|| e.to_string());
                out
            }
            // Whatever was read before is dropped: a chain may lack its names.
            Err(panicked) => SourceLines {
                problem: Some(IdentError::panicked(path, panicked).to_string()),
                ..SourceLines::default()
            },
        }
    }

    /// The chain at `rva`, innermost first, when the address was looked up and its
    /// procedure's lines could be read.
    pub fn chain(&self, rva: u32) -> Option<impl DoubleEndedIterator<Item = SourceFrame<'_>>> {
        let range = self.chains.get(&rva)?;
        let frames = &self.frames[range.start as usize..range.end as usize];
        Some(frames.iter().map(|f| SourceFrame {
            function: &self.strings[f.function as usize],
            name_id: f.function,
            file: f.file.map(|i| self.strings[i as usize].as_str()),
            line: f.line,
            start_line: f.start_line,
            inlined: f.inlined,
        }))
    }

    /// The procedures the function `name` was inlined into (at any depth), each once, in
    /// RVA order: looked up in the code of the procedures of `symbols`, in RVA order, up to
    /// `at_most` bytes in all. Empty when `name` is inlined nowhere in those bytes, or the
    /// PDB's line records cannot be read.
    pub fn inlined_into(symbols: &Symbols, name: &str, at_most: u32) -> Vec<String> {
        let mut rvas = Vec::new();
        for f in symbols.iter() {
            let Some(size) = f.size else { continue };
            let room = at_most.saturating_sub(rvas.len() as u32);
            if room == 0 {
                break;
            }
            rvas.extend((0..size.min(room)).filter_map(|o| f.rva.checked_add(o)));
        }
        let lines = SourceLines::read(symbols, rvas.iter().copied());
        let mut into: Vec<String> = Vec::new();
        for rva in rvas {
            let Some(chain) = lines.chain(rva) else {
                continue;
            };
            let frames: Vec<SourceFrame<'_>> = chain.collect();
            let inlined = frames.iter().any(|f| f.inlined && f.function == name);
            if let Some(procedure) = frames.last().filter(|_| inlined)
                && !into.iter().any(|p| p == procedure.function)
            {
                into.push(procedure.function.to_owned());
            }
        }
        into
    }

    /// What could not be read, if anything: the first problem met.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.interned.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_owned());
        self.interned.insert(s.to_owned(), i);
        i
    }

    fn read_pdb(
        &mut self,
        path: &Path,
        wanted: &BTreeMap<(usize, u32), Wanted<'_>>,
    ) -> Result<(), IdentError> {
        let err = |e| IdentError::pdb(path, e);
        let mut pdb = ident::open_pdb(path)?;
        let address_map = pdb.address_map().map_err(err)?;
        let strings = pdb.string_table().ok();
        let dbi = pdb.debug_information().map_err(err)?;
        let modules: Vec<_> = dbi.modules().and_then(|m| m.collect()).map_err(err)?;

        // Inlined functions by ID, named once the modules have been read.
        let mut pending: Vec<(usize, IdIndex)> = Vec::new();
        let mut wanted_modules: Vec<usize> = wanted.keys().map(|&(m, _)| m).collect();
        wanted_modules.dedup();
        for m in wanted_modules {
            let procedures = wanted.range((m, 0)..=(m, u32::MAX)).map(|(_, w)| w);
            let Some(module) = modules.get(m) else {
                continue;
            };
            let info = match pdb.module_info(module) {
                Ok(Some(info)) => info,
                Ok(None) => continue,
                Err(e) => {
                    self.note(err(e));
                    continue;
                }
            };
            // The module's line program and inlinees, read once for all its procedures.
            let module = match guarded(|| ModuleLines::read(&info)) {
                Ok(Ok(module)) => module,
                Ok(Err(e)) => {
                    self.note(err(e));
                    continue;
                }
                Err(panicked) => {
                    self.note(IdentError::panicked(path, panicked));
                    continue;
                }
            };
            let resolve = |lines: &mut SourceLines, w: &Wanted<'_>, pending: &mut Vec<_>| {
                lines.procedure(&module, strings.as_ref(), &address_map, w, pending)
            };
            for w in procedures {
                // What a procedure added before its records failed is taken back: its
                // addresses get no chain rather than part of one.
                let (frames, marks) = (self.frames.len(), pending.len());
                let failed = match guarded(|| resolve(self, w, &mut pending)) {
                    Ok(Ok(())) => None,
                    Ok(Err(e)) => Some(err(e).to_string()),
                    Err(panicked) => Some(IdentError::panicked(path, panicked).to_string()),
                };
                if let Some(problem) = failed {
                    self.problem.get_or_insert(problem);
                    self.frames.truncate(frames);
                    pending.truncate(marks);
                    let end = frames as u32;
                    self.chains.retain(|_, r| r.end <= end);
                }
            }
        }
        if !pending.is_empty()
            && let Err(e) = self.name_inlinees(&mut pdb, &pending)
        {
            self.note(err(e));
            for &(frame, id) in &pending {
                self.frames[frame].function = self.intern(&unnamed(id));
            }
        }
        Ok(())
    }

    fn note(&mut self, e: IdentError) {
        self.problem.get_or_insert_with(|| e.to_string());
    }

    /// Looks up the addresses of one procedure. Inlined functions get a placeholder name,
    /// their ID, replaced by [`SourceLines::name_inlinees`]; `pending` gathers the frames
    /// that have one.
    fn procedure(
        &mut self,
        module: &ModuleLines<'_, '_>,
        strings: Option<&StringTable<'_>>,
        address_map: &pdb2::AddressMap<'_>,
        w: &Wanted<'_>,
        pending: &mut Vec<(usize, IdIndex)>,
    ) -> pdb2::Result<()> {
        let program = &module.program;
        let p = w.procedure;
        let within = |offset: PdbInternalSectionOffset, len: u32| {
            offset.section == p.offset.section
                && offset.offset >= p.offset.offset
                && u64::from(offset.offset) + u64::from(len)
                    <= u64::from(p.offset.offset) + u64::from(p.len)
        };
        let mut lines: Vec<(u32, FileIndex, u32)> = Vec::new();
        let mut iter = program.lines_for_symbol(p.offset);
        while let Some(l) = iter.next()? {
            if within(l.offset, 0) {
                lines.push((l.offset.offset, l.file_index, l.line_start));
            }
        }
        lines.sort_by_key(|&(offset, _, _)| offset);
        let sites = sites(module, p, &within)?;

        let name = self.intern(w.name);
        let start_line = line_at(&lines, p.offset.offset)
            .map(|(_, _, l)| l)
            .filter(|&l| l > 0);
        let mut files: FxHashMap<FileIndex, Option<u32>> = FxHashMap::default();
        let mut file = |this: &mut SourceLines, index: FileIndex| {
            *files
                .entry(index)
                .or_insert_with(|| file_name(program, strings, index).map(|f| this.intern(&f)))
        };
        for &rva in &w.rvas {
            let Some(at) = Rva(rva).to_internal_offset(address_map) else {
                continue;
            };
            if !within(at, 1) {
                continue;
            }
            let start = self.frames.len() as u32;
            self.inline_frames(&sites, at.offset, &mut file, pending);
            let line = line_at(&lines, at.offset);
            let file = match line {
                Some((_, index, _)) => file(self, index),
                None => None,
            };
            self.frames.push(Frame {
                function: name,
                file,
                line: line.map(|(_, _, l)| l).filter(|&l| l > 0),
                start_line,
                inlined: false,
            });
            self.chains.insert(rva, start..self.frames.len() as u32);
        }
        Ok(())
    }

    /// Pushes the frames of the functions inlined at `offset`, innermost first: the deepest
    /// site holding it, then the sites around it.
    fn inline_frames(
        &mut self,
        sites: &[Site],
        offset: u32,
        file: &mut dyn FnMut(&mut SourceLines, FileIndex) -> Option<u32>,
        pending: &mut Vec<(usize, IdIndex)>,
    ) {
        let deepest = sites
            .iter()
            .enumerate()
            .filter(|(_, s)| range_at(s, offset).is_some())
            .max_by_key(|(i, s)| (s.depth, std::cmp::Reverse(*i)))
            .map(|(i, _)| i);
        let mut next = deepest;
        while let Some(i) = next {
            let site = &sites[i];
            let range = range_at(site, offset);
            let file = match range {
                Some(r) => file(self, r.file),
                None => None,
            };
            pending.push((self.frames.len(), site.inlinee));
            self.frames.push(Frame {
                function: u32::MAX,
                file,
                line: range.map(|r| r.line).filter(|&l| l > 0),
                start_line: None,
                inlined: true,
            });
            next = site.parent;
        }
    }

    /// Names the inlined functions of the frames in `pending` from the PDB's ID stream (and
    /// its type stream, for member functions' classes).
    fn name_inlinees(
        &mut self,
        pdb: &mut pdb2::PDB<'static, std::fs::File>,
        pending: &[(usize, IdIndex)],
    ) -> pdb2::Result<()> {
        let ids = pdb.id_information()?;
        let mut id_finder = ids.finder();
        let mut iter = ids.iter();
        while iter.next()?.is_some() {
            id_finder.update(&iter);
        }
        let types = pdb.type_information()?;
        let mut type_finder: Option<ItemFinder<'_, TypeIndex>> = None;
        let mut named: FxHashMap<IdIndex, u32> = FxHashMap::default();
        for &(frame, id) in pending {
            let name = match named.get(&id) {
                Some(&n) => n,
                None => {
                    let text = inlinee_name(&id_finder, &types, &mut type_finder, id)
                        .unwrap_or_else(|| unnamed(id));
                    let n = self.intern(&text);
                    named.insert(id, n);
                    n
                }
            };
            self.frames[frame].function = name;
        }
        Ok(())
    }
}

/// The line record of a procedure at `offset` (`lines` sorted by offset): the first of
/// several there (the procedure's opening line, then its first statement's); else the last
/// one before it. As llvm-symbolizer reads them.
fn line_at(lines: &[(u32, FileIndex, u32)], offset: u32) -> Option<(u32, FileIndex, u32)> {
    match lines.partition_point(|&(o, _, _)| o <= offset) {
        0 => None,
        n if lines[n - 1].0 == offset => {
            Some(lines[lines.partition_point(|&(o, _, _)| o < offset)])
        }
        n => Some(lines[n - 1]),
    }
}

/// The name of an inlined function whose ID names nothing.
fn unnamed(id: IdIndex) -> String {
    format!("inlinee {:#X}", id.0)
}

/// The range of `site` that holds `offset`.
fn range_at(site: &Site, offset: u32) -> Option<&InlineRange> {
    site.ranges
        .iter()
        .find(|r| r.start <= offset && offset < r.end)
}

/// The kinds of symbol [`sites`] parses, from cvinfo.h: the procedure kinds (`S_LPROC32_ST`,
/// `S_GPROC32_ST`, `S_LPROC32`, `S_GPROC32`, `S_LPROC32_ID`, `S_GPROC32_ID`, `S_LPROC32_DPC`,
/// `S_LPROC32_DPC_ID`), whose nested records it skips, and the inline sites (`S_INLINESITE`,
/// `S_INLINESITE2`).
const WALKED: [u16; 10] = [
    0x100a, 0x100b, 0x110f, 0x1110, 0x1146, 0x1147, 0x1155, 0x1156, 0x114d, 0x115d,
];

/// The inline sites of procedure `p`, with the ranges their annotations give that lie
/// within it.
fn sites(
    module: &ModuleLines<'_, '_>,
    p: Procedure,
    within: &dyn Fn(PdbInternalSectionOffset, u32) -> bool,
) -> pdb2::Result<Vec<Site>> {
    let inlinees = &module.inlinees;
    let mut symbols = module.info.symbols_at(SymbolIndex(p.symbol))?;
    let end = match symbols.next()?.map(|s| s.parse()) {
        Some(Ok(SymbolData::Procedure(proc))) => proc.end,
        _ => return Ok(Vec::new()),
    };
    let mut sites: Vec<Site> = Vec::new();
    // The sites open around the current symbol, with where each ends.
    let mut open: Vec<(usize, SymbolIndex)> = Vec::new();
    while let Some(symbol) = symbols.next()? {
        let index = symbol.index();
        if index >= end {
            break;
        }
        while open.last().is_some_and(|&(_, until)| index >= until) {
            open.pop();
        }
        // Only procedures and inline sites matter here: the rest (locals, their ranges,
        // frame data, ...) are skipped unparsed.
        if !WALKED.contains(&symbol.raw_kind()) {
            continue;
        }
        match symbol.parse() {
            Ok(SymbolData::Procedure(nested)) if nested.end > index => {
                symbols.seek(nested.end);
            }
            Ok(SymbolData::InlineSite(site)) => {
                let mut ranges = Vec::new();
                if let Some(inlinee) = inlinees.get(&site.inlinee) {
                    let mut lines = inlinee.lines(p.offset, &site);
                    while let Some(l) = lines.next()? {
                        let len = l.length.unwrap_or(0);
                        // An empty range holds no offset: it is not kept.
                        if len != 0 && within(l.offset, len) {
                            ranges.push(InlineRange {
                                start: l.offset.offset,
                                end: l.offset.offset + len,
                                file: l.file_index,
                                line: l.line_start,
                            });
                        }
                    }
                }
                let parent = open.last().map(|&(i, _)| i);
                sites.push(Site {
                    parent,
                    depth: open.len(),
                    inlinee: site.inlinee,
                    ranges,
                });
                // A site whose end is not ahead is closed at the next symbol.
                open.push((sites.len() - 1, site.end));
            }
            _ => {}
        }
    }
    Ok(sites)
}

/// The name of source file `index` of a module.
fn file_name(
    program: &LineProgram<'_>,
    strings: Option<&StringTable<'_>>,
    index: FileIndex,
) -> Option<String> {
    let info = program.get_file_info(index).ok()?;
    let name = info.name.to_string_lossy(strings?).ok()?;
    Some(name.into_owned())
}

/// The name of an inlined function: `scope::name` for a global function with a scope (a C++
/// namespace), `Class::name` for a member function.
fn inlinee_name<'t>(
    ids: &ItemFinder<'_, IdIndex>,
    types: &'t pdb2::TypeInformation<'_>,
    type_finder: &mut Option<ItemFinder<'t, TypeIndex>>,
    id: IdIndex,
) -> Option<String> {
    let string = |id: IdIndex| match ids.find(id).ok()?.parse().ok()? {
        IdData::String(s) => Some(s.name.to_string().into_owned()),
        _ => None,
    };
    match ids.find(id).ok()?.parse().ok()? {
        IdData::Function(f) => {
            let name = f.name.to_string();
            Some(match f.scope.and_then(string) {
                Some(scope) if !scope.is_empty() => format!("{scope}::{name}"),
                _ => name.into_owned(),
            })
        }
        IdData::MemberFunction(m) => {
            let finder = match type_finder {
                Some(f) => f,
                None => {
                    let mut f = types.finder();
                    let mut iter = types.iter();
                    while iter.next().ok()?.is_some() {
                        f.update(&iter);
                    }
                    type_finder.insert(f)
                }
            };
            let class = match finder.find(m.parent).ok()?.parse().ok()? {
                TypeData::Class(c) => Some(c.name.to_string().into_owned()),
                TypeData::Union(u) => Some(u.name.to_string().into_owned()),
                _ => None,
            };
            let name = m.name.to_string();
            Some(match class {
                Some(class) => format!("{class}::{name}"),
                None => name.into_owned(),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/pe")
            .join(name)
    }

    use sptdump_testkit::fixtures::{Symbolized as Told, symbolizer};

    fn ours(lines: &SourceLines, rva: u32) -> Option<Vec<(Told, bool)>> {
        let chain = lines.chain(rva)?;
        Some(
            chain
                .map(|f| {
                    let told = (f.function.to_owned(), f.file.map(str::to_owned), f.line);
                    (told, f.inlined)
                })
                .collect(),
        )
    }

    #[test]
    fn every_address_of_the_fixture_as_llvm_symbolizer_reads_it() {
        let (compared, inlined, deepest) = compare_with_llvm_symbolizer("inline");
        assert!(compared > 200 && inlined > 50, "{compared} {inlined}");
        assert_eq!(deepest, 3, "rotate in mix in digest");
        // -O1 builds, without inlining; the assembly functions have no line records
        // (llvm-symbolizer names them without a line, where we give no chain).
        for image in ["app", "core"] {
            let (compared, inlined, _) = compare_with_llvm_symbolizer(image);
            assert!(
                compared > 40 && inlined == 0,
                "{image}: {compared} {inlined}"
            );
        }
    }

    #[test]
    fn cxx_inlined_functions_are_named_by_their_namespace_or_class() {
        let (compared, inlined, _) = compare_with_llvm_symbolizer("members");
        assert!(compared > 100 && inlined > 20, "{compared} {inlined}");
        // The comparison holds only if each kind of name occurs: a namespace, a nested
        // one, a struct's member and a union's.
        let told = symbolizer("members");
        for name in ["geo::scale", "geo::detail::twist", "Acc::add", "Bits::low"] {
            assert!(
                told.iter().any(|(_, f)| f.len() == 2 && f[0].0 == name),
                "{name}"
            );
        }
    }

    /// A chain as (function, line, inlined), innermost first.
    type Chain<'a> = Vec<(&'a str, Option<u32>, bool)>;

    /// The chain of `rva` in shapes.exe (see shapes.s), and the procedure's start line.
    fn shape(lines: &SourceLines, rva: u32) -> (Chain<'_>, Option<u32>) {
        let chain: Vec<SourceFrame<'_>> = lines.chain(rva).unwrap().collect();
        let start = chain.last().unwrap().start_line;
        (
            chain
                .iter()
                .map(|f| (f.function, f.line, f.inlined))
                .collect(),
            start,
        )
    }

    /// shapes.exe's code: outer at 0x1000 (13 bytes), second at 0x1010 (5).
    const OUTER: u32 = 0x1000;
    const SECOND: u32 = 0x1010;

    fn shapes() -> SourceLines {
        let symbols = Symbols::from_pdb(&fixture("shapes.pdb")).unwrap();
        let lines = SourceLines::read(&symbols, (OUTER..OUTER + 13).chain(SECOND..SECOND + 5));
        assert_eq!(lines.problem(), None);
        lines
    }

    #[test]
    fn a_line_0_record_is_no_line() {
        let lines = shapes();
        // outer's first record says line 0: its first bytes have no line, nor has outer a
        // start line.
        assert_eq!(shape(&lines, OUTER), (vec![("outer", None, false)], None));
        // twice's range at +4 says line 0; its range at +2, line 5.
        let at = |offset| shape(&lines, OUTER + offset).0;
        assert_eq!(at(4), [("twice", None, true), ("outer", Some(11), false)]);
        assert_eq!(
            at(2),
            [("twice", Some(5), true), ("outer", Some(11), false)]
        );
    }

    #[test]
    fn a_scope_that_is_an_empty_string_is_no_scope() {
        let lines = shapes();
        assert_eq!(shape(&lines, OUTER + 2).0[0].0, "twice");
    }

    #[test]
    fn an_inline_range_past_its_procedure_s_end_is_taken_nowhere() {
        let lines = shapes();
        // twice's third range runs from outer's last byte, +12, four bytes on.
        assert_eq!(shape(&lines, OUTER + 12).0, [("outer", Some(12), false)]);
    }

    #[test]
    fn a_nested_procedure_s_inline_sites_are_not_its_parent_s() {
        let lines = shapes();
        // The procedure nested in outer holds a site of twice at outer's +9 and +10.
        for offset in [9, 10] {
            assert_eq!(
                shape(&lines, OUTER + offset).0,
                [("outer", Some(12), false)]
            );
        }
    }

    #[test]
    fn the_lines_before_a_procedure_without_lines_are_not_its_lines() {
        let lines = shapes();
        // second has no line records; outer's, before it, are what the PDB's line
        // subsections hold nearest.
        for rva in SECOND..SECOND + 5 {
            let chain: Vec<SourceFrame<'_>> = lines.chain(rva).unwrap().collect();
            assert_eq!(chain.len(), 1);
            assert_eq!(
                (chain[0].function, chain[0].file, chain[0].line),
                ("second", None, None)
            );
        }
    }

    /// Compares the chain at every byte of `image`'s code with llvm-symbolizer's: how many
    /// addresses were compared, how many had inline frames, and the deepest chain.
    fn compare_with_llvm_symbolizer(image: &str) -> (usize, usize, usize) {
        let symbols = Symbols::from_pdb(&fixture(&format!("{image}.pdb"))).unwrap();
        let told = symbolizer(image);
        assert!(told.len() > 50, "one line per byte of .text");
        let lines = SourceLines::read(&symbols, told.iter().map(|&(rva, _)| rva));
        assert_eq!(lines.problem(), None);
        let (mut inlined, mut deepest, mut compared) = (0, 0, 0);
        for (rva, frames) in &told {
            let Some(chain) = ours(&lines, *rva) else {
                // Padding between procedures belongs to no function here, and a function
                // known only by its public symbol has no lines; llvm-symbolizer gives both
                // a function without a line.
                assert!(
                    symbols
                        .lookup_procedure(*rva)
                        .is_none_or(|(_, _, p)| p.is_none()),
                    "{image} {rva:#X}"
                );
                assert!(frames.iter().all(|f| f.2.is_none()), "{image} {rva:#X}");
                continue;
            };
            let names: Vec<Told> = chain.iter().map(|(t, _)| t.clone()).collect();
            assert_eq!(&names, frames, "{image} at {rva:#X}");
            // Every frame but the outermost is inlined.
            let flags: Vec<bool> = chain.iter().map(|&(_, i)| i).collect();
            let mut expected = vec![true; flags.len()];
            *expected.last_mut().unwrap() = false;
            assert_eq!(flags, expected, "{image} at {rva:#X}");
            compared += 1;
            inlined += usize::from(chain.len() > 1);
            deepest = deepest.max(chain.len());
        }
        (compared, inlined, deepest)
    }

    #[test]
    fn a_call_in_inlined_code_is_in_the_inlined_function() {
        let symbols = Symbols::from_pdb(&fixture("inline.pdb")).unwrap();
        let told = symbolizer("inline");
        // checksum's call to digest is inside step, inlined into checksum: the return
        // address, looked up one byte back, is in step.
        let (rva, _) = told
            .iter()
            .find(|(_, f)| f.len() == 2 && f[0].0 == "step" && f[1].0 == "checksum")
            .unwrap();
        let lines = SourceLines::read(&symbols, [*rva]);
        let chain = ours(&lines, *rva).unwrap();
        assert_eq!(chain[0].0.0, "step");
        assert_eq!(chain[0].0.1.as_deref(), Some("C:\\src\\inline.c"));
    }

    #[test]
    fn addresses_in_no_procedure_open_nothing() {
        // Functions given by hand have no PDB: nothing is read, nothing fails.
        let symbols = Symbols::from_functions(&[(0x1000, 0x10, "f")]);
        let lines = SourceLines::read(&symbols, [0x1000, 0x2000]);
        assert!(lines.chain(0x1000).is_none());
        assert_eq!(lines.problem(), None);
    }
}

#[cfg(test)]
mod hostile {
    use super::*;
    use crate::image::testpdb;

    /// Every byte of inline.pdb changed in turn (stepping through the file), then its
    /// functions' lines read: never a panic, and a line only where the file still gives one.
    #[test]
    fn a_damaged_pdb_gives_functions_without_lines_never_a_panic() {
        let original =
            std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe/inline.pdb"))
                .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("damaged.pdb");
        let (mut read, mut problems) = (0, 0);
        for at in (0..original.len()).step_by(61) {
            for value in [0x00, 0xFF, original[at] ^ 0x40] {
                let mut bytes = original.clone();
                bytes[at] = value;
                std::fs::write(&path, &bytes).unwrap();
                let Ok(symbols) = Symbols::from_pdb(&path) else {
                    continue;
                };
                let rvas: Vec<u32> = symbols
                    .iter()
                    .flat_map(|f| f.rva..f.rva + f.size.unwrap_or(1).min(0x200))
                    .collect();
                let lines = SourceLines::read(&symbols, rvas.iter().copied());
                read += 1;
                problems += usize::from(lines.problem().is_some());
                for &rva in &rvas {
                    if let Some(chain) = lines.chain(rva) {
                        let frames: Vec<_> = chain.collect();
                        assert!(!frames.is_empty());
                        assert!(
                            !frames.last().unwrap().inlined,
                            "the outermost is a procedure"
                        );
                    }
                }
            }
        }
        assert!(read > 100, "{read} damaged PDBs still read");
        assert!(problems > 0, "some damage is noticed");
    }

    /// shapes.pdb with the end of the procedure nested in `outer` pointing at the nested
    /// procedure's own record: read to the end, never round and round.
    #[test]
    fn a_nested_procedure_that_ends_where_it_starts_is_read_once() {
        let temp = tempfile::tempdir().unwrap();
        let path = testpdb::procedure_ending_at_itself(temp.path(), "shapes.pdb", "nested");
        let chain = testpdb::in_time(move || {
            let symbols = Symbols::from_pdb(&path).unwrap();
            let lines = SourceLines::read(&symbols, 0x1000..0x100d);
            let outer: Vec<String> = lines
                .chain(0x1002)
                .unwrap()
                .map(|f| f.function.to_owned())
                .collect();
            outer
        });
        assert_eq!(chain, ["twice", "outer"]);
    }
}
