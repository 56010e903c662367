//! Function symbols from a PDB, to show a sampled RVA as `function+0xOFFSET`.
//!
//! [`Symbols::from_pdb`] gathers the functions a PDB knows about from two places:
//!
//! - procedure symbols (`S_GPROC32`, `S_LPROC32` and their `_ID` and DPC forms) in the module
//!   streams, which carry the function's code size and its source name (for C++, the
//!   undecorated qualified name);
//! - public symbols (`S_PUB32`) flagged as functions, in the global symbol stream, which carry
//!   no size and the decorated name. They fill in what has no procedure symbol: code built
//!   without debug information, assembly, static libraries shipped without it.
//!
//! Their section offsets are converted to RVAs through the PDB's section headers (and its
//! OMAP tables, for images that were rewritten after the link). Where a procedure and a
//! public symbol start at the same RVA, the procedure is kept; a public symbol inside a
//! procedure (an alternate entry point, a label) is dropped, as the procedure already
//! accounts for those bytes. A public symbol extends to the next function or to the end of
//! its section, whichever comes first.
//!
//! The functions are kept in one vector sorted by RVA; [`Symbols::lookup`] is a binary
//! search and allocates nothing.
//!
//! ```no_run
//! use sptdump::image::symbols::Symbols;
//!
//! let symbols = Symbols::from_pdb(std::path::Path::new("app.pdb"))?;
//! match symbols.lookup(0x1234) {
//!     Some((function, 0)) => println!("{}", function.name),
//!     Some((function, offset)) => println!("{}+{offset:#X}", function.name),
//!     None => println!("0x1234"),
//! }
//! # Ok::<(), sptdump::image::ident::IdentError>(())
//! ```

use std::ops::Range;
use std::path::{Path, PathBuf};

use pdb2::{FallibleIterator, ImageSectionHeader, PdbInternalSectionOffset, SymbolData};

use crate::image::guard::guarded;
use crate::image::ident::{self, IdentError};

/// A function found in a PDB.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Symbol<'a> {
    /// The function's name: the procedure's name as the compiler wrote it, or for a function
    /// known only by its public symbol, that symbol's (decorated) name.
    pub name: &'a str,
    /// The RVA of the function's first byte.
    pub rva: u32,
    /// The size of the function's code, from its procedure symbol; `None` for a function
    /// known only by its public symbol.
    pub size: Option<u32>,
}

/// One function, with the extent lookups use.
#[derive(Clone, Debug)]
struct SymbolEntry {
    rva: u32,
    /// One past the last RVA the function covers (a `u64`, so that no size overflows it).
    end: u64,
    size: Option<u32>,
    /// The name's bytes in [`Symbols::names`].
    name: Range<usize>,
    /// Where its procedure symbol is, for its lines and inline sites; `None` for a function
    /// known only by its public symbol.
    procedure: Option<Procedure>,
}

/// Where a procedure symbol is in its PDB: what its source lines and inline sites are read
/// from (`image::lines`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Procedure {
    /// The index of its module (object file) in the DBI stream.
    pub module: usize,
    /// The symbol's index in that module's symbol stream.
    pub symbol: u32,
    /// The procedure's first byte, as the PDB places it: section and offset.
    pub offset: PdbInternalSectionOffset,
    /// Its code size.
    pub len: u32,
}

/// The functions of a PDB, sorted by RVA, for looking up which function an RVA is in.
#[derive(Clone, Debug, Default)]
pub struct Symbols {
    entries: Vec<SymbolEntry>,
    /// All names, one after another.
    names: String,
    /// The PDB they were read from; `None` for functions given by hand.
    path: Option<PathBuf>,
}

/// A function as gathered, before the functions are sorted and their extents computed.
struct Candidate {
    rva: u32,
    size: Option<u32>,
    name: String,
    procedure: Option<Procedure>,
}

impl Symbols {
    /// Reads the function symbols of the PDB at `path`.
    ///
    /// Fails when the file cannot be read, is not a PDB, or its streams cannot be read.
    /// Symbols of kinds this reader does not know, and functions whose code the linker
    /// discarded (they have no RVA), are skipped.
    pub fn from_pdb(path: &Path) -> Result<Symbols, IdentError> {
        guarded(|| Symbols::read(path)).unwrap_or_else(|p| Err(IdentError::panicked(path, p)))
    }

    fn read(path: &Path) -> Result<Symbols, IdentError> {
        let err = |e| IdentError::pdb(path, e);
        let mut pdb = ident::open_pdb(path)?;
        let address_map = pdb.address_map().map_err(err)?;
        let sections = pdb.sections().map_err(err)?.unwrap_or_default();

        let mut procedures = Vec::new();
        let dbi = pdb.debug_information().map_err(err)?;
        let mut modules = dbi.modules().map_err(err)?;
        let mut index = 0;
        while let Some(module) = modules.next().map_err(err)? {
            let module_index = index;
            index += 1;
            let Some(info) = pdb.module_info(&module).map_err(err)? else {
                continue;
            };
            let mut symbols = info.symbols().map_err(err)?;
            while let Some(symbol) = symbols.next().map_err(err)? {
                let Ok(SymbolData::Procedure(procedure)) = symbol.parse() else {
                    continue;
                };
                if let Some(rva) = procedure.offset.to_rva(&address_map) {
                    procedures.push(Candidate {
                        rva: rva.0,
                        size: Some(procedure.len),
                        name: procedure.name.to_string().into_owned(),
                        procedure: Some(Procedure {
                            module: module_index,
                            symbol: symbol.index().0,
                            offset: procedure.offset,
                            len: procedure.len,
                        }),
                    });
                }
                // Skip the procedure's locals, blocks and other nested records: go to its
                // S_END, when that lies ahead.
                if procedure.end.0 > symbol.index().0 {
                    symbols.seek(procedure.end);
                }
            }
        }

        let mut publics = Vec::new();
        let globals = pdb.global_symbols().map_err(err)?;
        let mut symbols = globals.iter();
        while let Some(symbol) = symbols.next().map_err(err)? {
            let Ok(SymbolData::Public(public)) = symbol.parse() else {
                continue;
            };
            if !public.function {
                continue;
            }
            if let Some(rva) = public.offset.to_rva(&address_map) {
                publics.push(Candidate {
                    rva: rva.0,
                    size: None,
                    name: public.name.to_string().into_owned(),
                    procedure: None,
                });
            }
        }

        let mut symbols = Symbols::build(procedures, publics, &sections);
        symbols.path = Some(path.to_owned());
        Ok(symbols)
    }

    /// Functions given by hand as (RVA, size, name), for tests of what uses symbols.
    #[cfg(test)]
    pub(crate) fn from_functions(functions: &[(u32, u32, &str)]) -> Symbols {
        let named = functions
            .iter()
            .map(|&(rva, size, name)| (rva, size, name.to_owned()))
            .collect();
        Symbols::from_named(named)
    }

    /// Functions known by their (RVA, size, name) alone, as an SPD gives them: no PDB behind
    /// them, so no source lines and no inline frames. Of several at one RVA, the first is
    /// kept.
    pub fn from_named(functions: Vec<(u32, u32, String)>) -> Symbols {
        let procedures = functions
            .into_iter()
            .map(|(rva, size, name)| Candidate {
                rva,
                size: Some(size),
                name,
                procedure: None,
            })
            .collect();
        Symbols::build(procedures, Vec::new(), &[])
    }

    /// Sorts and deduplicates the functions, and computes their extents.
    fn build(
        mut procedures: Vec<Candidate>,
        mut publics: Vec<Candidate>,
        sections: &[ImageSectionHeader],
    ) -> Symbols {
        // A procedure of size 0 says nothing of its extent: treat it as a public symbol.
        for p in &mut procedures {
            p.size = p.size.filter(|&size| size > 0);
        }
        // Stable sorts: of several symbols at one RVA, the first in the PDB is kept.
        procedures.sort_by_key(|c| c.rva);
        procedures.dedup_by_key(|c| c.rva);
        publics.sort_by_key(|c| c.rva);
        publics.dedup_by_key(|c| c.rva);

        // Drop the public symbols at or inside a sized procedure.
        publics.retain(|public| {
            let after = procedures.partition_point(|p| p.rva <= public.rva);
            match after.checked_sub(1).map(|i| &procedures[i]) {
                Some(p) if p.rva == public.rva => false,
                Some(p) => match p.size {
                    Some(size) => u64::from(public.rva) >= u64::from(p.rva) + u64::from(size),
                    None => true,
                },
                None => true,
            }
        });

        // All functions now start at distinct RVAs.
        let mut all = procedures;
        all.append(&mut publics);
        all.sort_unstable_by_key(|c| c.rva);

        let mut sections: Vec<(u64, u64)> = sections.iter().map(section_range).collect();
        sections.sort_unstable();

        let mut names = String::with_capacity(all.iter().map(|c| c.name.len()).sum());
        let mut entries = Vec::with_capacity(all.len());
        for (i, c) in all.iter().enumerate() {
            let start = u64::from(c.rva);
            let next = all.get(i + 1).map(|n| u64::from(n.rva));
            let end = match c.size {
                Some(size) => start + u64::from(size),
                None => {
                    let section_end = section_end(&sections, start);
                    match (next, section_end) {
                        (Some(next), Some(section_end)) => next.min(section_end),
                        (Some(next), None) => next,
                        (None, Some(section_end)) => section_end,
                        // Outside every section and the last function: only its first
                        // byte is known to be its.
                        (None, None) => start + 1,
                    }
                }
            };
            let name_start = names.len();
            names.push_str(&c.name);
            entries.push(SymbolEntry {
                rva: c.rva,
                end,
                size: c.size,
                name: name_start..names.len(),
                procedure: c.procedure,
            });
        }
        Symbols {
            entries,
            names,
            path: None,
        }
    }

    /// The function containing `rva` and the offset into it; None between functions.
    ///
    /// A function with a size covers `[rva, rva + size)`; one without covers up to the next
    /// function or the end of its section.
    pub fn lookup(&self, rva: u32) -> Option<(Symbol<'_>, u32)> {
        self.locate(rva)
            .map(|(entry, offset)| (self.function(entry), offset))
    }

    /// The function containing `rva` and the offset into it, with where its procedure
    /// symbol is.
    pub(crate) fn lookup_procedure(
        &self,
        rva: u32,
    ) -> Option<(Symbol<'_>, u32, Option<Procedure>)> {
        self.locate(rva)
            .map(|(entry, offset)| (self.function(entry), offset, entry.procedure))
    }

    fn locate(&self, rva: u32) -> Option<(&SymbolEntry, u32)> {
        let after = self.entries.partition_point(|e| e.rva <= rva);
        let entry = &self.entries[after.checked_sub(1)?];
        (u64::from(rva) < entry.end).then(|| (entry, rva - entry.rva))
    }

    /// The PDB the functions were read from.
    pub(crate) fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The number of functions.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no functions.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The functions, in RVA order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Symbol<'_>> + '_ {
        self.entries.iter().map(|e| self.function(e))
    }

    fn function(&self, entry: &SymbolEntry) -> Symbol<'_> {
        Symbol {
            name: &self.names[entry.name.clone()],
            rva: entry.rva,
            size: entry.size,
        }
    }
}

/// The RVAs a section occupies in the loaded image.
fn section_range(section: &ImageSectionHeader) -> (u64, u64) {
    let start = u64::from(section.virtual_address);
    // The virtual size is what is mapped; some linkers leave it 0 and give only the size of
    // the raw data.
    let size = match section.virtual_size {
        0 => section.size_of_raw_data,
        size => size,
    };
    (start, start + u64::from(size))
}

/// The end of the section containing `rva`, if one does. `sections` is sorted.
fn section_end(sections: &[(u64, u64)], rva: u64) -> Option<u64> {
    let after = sections.partition_point(|&(start, _)| start <= rva);
    let (_, end) = sections[after.checked_sub(1)?];
    (rva < end).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::testpdb;

    fn candidate(rva: u32, size: Option<u32>, name: &str) -> Candidate {
        Candidate {
            rva,
            size,
            name: name.to_owned(),
            procedure: None,
        }
    }

    fn section(virtual_address: u32, virtual_size: u32) -> ImageSectionHeader {
        ImageSectionHeader {
            virtual_address,
            virtual_size,
            size_of_raw_data: virtual_size.next_multiple_of(0x200),
            ..ImageSectionHeader::default()
        }
    }

    fn names(symbols: &Symbols) -> Vec<(&str, u32, Option<u32>)> {
        symbols.iter().map(|f| (f.name, f.rva, f.size)).collect()
    }

    /// A function as `llvm-pdbutil dump --symbols --publics` printed it.
    #[derive(Debug)]
    struct Dumped {
        name: String,
        rva: u32,
        /// The procedure's code size; `None` for a public symbol.
        size: Option<u32>,
    }

    /// What `llvm-pdbutil` printed of a fixture PDB (`testdata/pe/*.pdbutil.txt`): its
    /// procedures, its public function symbols, and its sections as RVA ranges.
    struct Dump {
        procedures: Vec<Dumped>,
        publics: Vec<Dumped>,
        sections: Vec<Range<u32>>,
    }

    fn dump(pdb: &str) -> Dump {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/pe")
            .join(format!("{}.pdbutil.txt", pdb.trim_end_matches(".pdb")));
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = text.lines().collect();

        // "  SECTION HEADER #1", then "       188 virtual size", "      1000 virtual address"
        // (hexadecimal).
        let mut sections = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            if line.trim_start().starts_with("SECTION HEADER #") {
                let hex = |key: &str| {
                    let line = lines[i..].iter().find(|l| l.ends_with(key)).unwrap();
                    u32::from_str_radix(line.trim().split(' ').next().unwrap(), 16).unwrap()
                };
                let (size, va) = (hex(" virtual size"), hex(" virtual address"));
                sections.push(va..va + size);
            }
        }
        // "addr = 0001:0368": section number and offset, both decimal.
        let rva = |line: &str| {
            let addr = line.split("addr = ").nth(1).unwrap();
            let addr = addr.split(',').next().unwrap().trim();
            let (section, offset) = addr.split_once(':').unwrap();
            let section: usize = section.parse().unwrap();
            sections[section - 1].start + offset.parse::<u32>().unwrap()
        };
        let name = |line: &str| line.split('`').nth(1).unwrap().to_owned();

        let (mut procedures, mut publics) = (Vec::new(), Vec::new());
        for pair in lines.windows(2) {
            let (head, detail) = (pair[0], pair[1]);
            if head.contains("| S_GPROC32 ") || head.contains("| S_LPROC32 ") {
                // "parent = 0, end = 280, addr = 0001:0000, code size = 66"
                let size = detail
                    .split("code size = ")
                    .nth(1)
                    .unwrap()
                    .trim()
                    .parse()
                    .unwrap();
                procedures.push(Dumped {
                    name: name(head),
                    rva: rva(detail),
                    size: Some(size),
                });
            } else if head.contains("| S_PUB32 ") && detail.contains("flags = function") {
                publics.push(Dumped {
                    name: name(head),
                    rva: rva(detail),
                    size: None,
                });
            }
        }
        assert!(!procedures.is_empty() && !publics.is_empty() && !sections.is_empty());
        Dump {
            procedures,
            publics,
            sections,
        }
    }

    fn load(pdb: &str) -> Symbols {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/pe")
            .join(pdb);
        Symbols::from_pdb(&path).unwrap_or_else(|e| panic!("{e}"))
    }

    fn at(symbols: &Symbols, rva: u32) -> Option<(&str, u32, Option<u32>, u32)> {
        symbols
            .lookup(rva)
            .map(|(f, offset)| (f.name, f.rva, f.size, offset))
    }

    /// Checks a fixture's symbols against its dump: every procedure resolves over exactly
    /// its code, every public function symbol without a procedure resolves up to the next
    /// function or the end of its section, and nothing resolves outside them.
    fn check_against_dump(pdb: &str) -> (Symbols, Dump) {
        let symbols = load(pdb);
        let dump = dump(pdb);
        let mut starts: Vec<u32> = dump
            .procedures
            .iter()
            .chain(&dump.publics)
            .map(|f| f.rva)
            .collect();
        starts.sort_unstable();
        starts.dedup();
        assert_eq!(
            symbols.len(),
            starts.len(),
            "{pdb}: one function per address"
        );
        let is_start = |rva: u32| starts.binary_search(&rva).is_ok();

        for p in &dump.procedures {
            let size = p.size.unwrap();
            let name = p.name.as_str();
            assert_eq!(
                at(&symbols, p.rva),
                Some((name, p.rva, Some(size), 0)),
                "{pdb}"
            );
            let last = p.rva + size - 1;
            assert_eq!(
                at(&symbols, last),
                Some((name, p.rva, Some(size), size - 1)),
                "{pdb}"
            );
            if !is_start(p.rva + size) {
                assert_eq!(at(&symbols, p.rva + size), None, "{pdb}: after {name}");
            }
        }
        for public in &dump.publics {
            if let Some(p) = dump.procedures.iter().find(|p| p.rva == public.rva) {
                // The procedure is kept, with its size.
                assert_eq!(symbols.lookup(public.rva).unwrap().0.name, p.name, "{pdb}");
                continue;
            }
            let section = dump
                .sections
                .iter()
                .find(|s| s.contains(&public.rva))
                .unwrap();
            let next = starts.iter().copied().find(|&s| s > public.rva);
            let end = next.map_or(section.end, |next| next.min(section.end));
            let name = public.name.as_str();
            assert_eq!(
                at(&symbols, public.rva),
                Some((name, public.rva, None, 0)),
                "{pdb}"
            );
            let offset = end - 1 - public.rva;
            assert_eq!(
                at(&symbols, end - 1),
                Some((name, public.rva, None, offset)),
                "{pdb}"
            );
            if !is_start(end) {
                assert_eq!(at(&symbols, end), None, "{pdb}: after {name}");
            }
        }

        let first = starts[0];
        let last_section_end = dump.sections.iter().map(|s| s.end).max().unwrap();
        assert_eq!(at(&symbols, 0), None, "{pdb}");
        assert_eq!(at(&symbols, first - 1), None, "{pdb}");
        assert_eq!(at(&symbols, last_section_end), None, "{pdb}");
        assert_eq!(at(&symbols, u32::MAX), None, "{pdb}");
        (symbols, dump)
    }

    #[test]
    fn app_pdb() {
        let (symbols, dump) = check_against_dump("app.pdb");
        // Padding after a sized procedure belongs to no function.
        let hash_bytes = dump
            .procedures
            .iter()
            .find(|p| p.name == "hash_bytes")
            .unwrap();
        let gap = hash_bytes.rva + hash_bytes.size.unwrap();
        assert!(dump.procedures.iter().all(|p| p.rva != gap));
        assert_eq!(at(&symbols, gap), None);
        // The static function has a procedure symbol and no public one.
        let mix_round = dump
            .procedures
            .iter()
            .find(|p| p.name == "mix_round")
            .unwrap();
        assert!(dump.publics.iter().all(|p| p.name != "mix_round"));
        assert_eq!(at(&symbols, mix_round.rva).unwrap().0, "mix_round");
        // The assembly function, last in .text, has only a public symbol: it runs to the
        // end of the section.
        let text = &dump.sections[0];
        let spin = symbols.iter().last().unwrap();
        assert_eq!((spin.name, spin.size), ("spin_pause", None));
        assert_eq!(at(&symbols, text.end - 1).unwrap().0, "spin_pause");
        assert_eq!(at(&symbols, text.end), None);
        // The data symbol in .rdata is no function.
        assert_eq!(at(&symbols, dump.sections[1].start), None);
        assert_eq!(
            symbols.iter().map(|f| f.name).collect::<Vec<_>>(),
            [
                "hash_bytes",
                "mix_round",
                "parse_token",
                "compute_checksum",
                "main_entry",
                "spin_pause"
            ]
        );
    }

    #[test]
    fn core_pdb() {
        let (symbols, _) = check_against_dump("core.pdb");
        // The assembly function, first in .text, runs up to the next function.
        let functions: Vec<Symbol<'_>> = symbols.iter().collect();
        assert_eq!((functions[0].name, functions[0].size), ("core_sum3", None));
        assert_eq!(
            at(&symbols, functions[1].rva - 1),
            Some((
                "core_sum3",
                functions[0].rva,
                None,
                functions[1].rva - 1 - functions[0].rva
            ))
        );
    }

    #[test]
    fn core_v2_pdb() {
        let (v2, _) = check_against_dump("v2/core.pdb");
        let v1 = load("core.pdb");
        let size = |s: &Symbols, name: &str| s.iter().find(|f| f.name == name).unwrap().size;
        assert!(size(&v2, "core_scale") > size(&v1, "core_scale"));
    }

    #[test]
    fn procedures_win_over_public_symbols() {
        let symbols = Symbols::build(
            vec![
                candidate(0x1040, Some(0x10), "ns::second"),
                candidate(0x1000, Some(0x20), "ns::first"),
                candidate(0x1000, Some(0x30), "ns::first_again"),
            ],
            vec![
                candidate(0x1000, None, "?first@ns@@YAXXZ"),
                candidate(0x1008, None, "inner_label"),
                candidate(0x1020, None, "asm_routine"),
                candidate(0x1020, None, "asm_alias"),
                candidate(0x1040, None, "?second@ns@@YAXXZ"),
            ],
            &[section(0x1000, 0x60)],
        );
        assert_eq!(
            names(&symbols),
            [
                ("ns::first", 0x1000, Some(0x20)),
                ("asm_routine", 0x1020, None),
                ("ns::second", 0x1040, Some(0x10)),
            ]
        );
        assert_eq!(symbols.len(), 3);
        assert!(!symbols.is_empty());
        // The public symbol runs up to the next function.
        assert_eq!(
            symbols.lookup(0x103F).map(|(f, o)| (f.name, o)),
            Some(("asm_routine", 0x1F))
        );
        // A sized procedure ends where its size says.
        assert_eq!(
            symbols.lookup(0x104F).map(|(f, o)| (f.name, o)),
            Some(("ns::second", 0xF))
        );
        assert_eq!(symbols.lookup(0x1050), None);
        assert_eq!(symbols.lookup(0xFFF), None);
    }

    #[test]
    fn public_symbols_stop_at_their_section_end() {
        let symbols = Symbols::build(
            vec![],
            vec![
                candidate(0x1000, None, "a"),
                candidate(0x1010, None, "b"),
                candidate(0x2100, None, "after"),
                candidate(0x3000, None, "c"),
                candidate(0x9000, None, "outside"),
            ],
            &[section(0x2000, 0x100), section(0x1000, 0x18)],
        );
        // "after" starts where a section ends: it is in no section.
        assert_eq!(
            symbols.lookup(0x2100).map(|(f, o)| (f.name, o)),
            Some(("after", 0))
        );
        assert_eq!(
            symbols.lookup(0x100F).map(|(f, o)| (f.name, o)),
            Some(("a", 0xF))
        );
        assert_eq!(
            symbols.lookup(0x1017).map(|(f, o)| (f.name, o)),
            Some(("b", 7))
        );
        assert_eq!(symbols.lookup(0x1018), None);
        // "c" lies in no section: it runs up to the next function.
        assert_eq!(
            symbols.lookup(0x8FFF).map(|(f, o)| (f.name, o)),
            Some(("c", 0x5FFF))
        );
        // The last function, in no section, covers its first byte only.
        assert_eq!(
            symbols.lookup(0x9000).map(|(f, o)| (f.name, o)),
            Some(("outside", 0))
        );
        assert_eq!(symbols.lookup(0x9001), None);
    }

    #[test]
    fn sizes_near_the_top_of_the_address_space() {
        let symbols = Symbols::build(
            vec![candidate(u32::MAX - 1, Some(u32::MAX), "huge")],
            vec![],
            &[],
        );
        assert_eq!(
            symbols.lookup(u32::MAX).map(|(f, o)| (f.name, o)),
            Some(("huge", 1))
        );
        assert_eq!(Symbols::default().lookup(0), None);
        assert!(Symbols::default().is_empty());
    }

    #[test]
    fn zero_sized_procedures_extend_like_public_symbols() {
        let symbols = Symbols::build(
            vec![candidate(0x1000, Some(0), "stub")],
            vec![candidate(0x1000, None, "stub_public")],
            &[section(0x1000, 0x10)],
        );
        assert_eq!(names(&symbols), [("stub", 0x1000, None)]);
        assert_eq!(
            symbols.lookup(0x100F).map(|(f, o)| (f.name, o)),
            Some(("stub", 0xF))
        );
    }

    /// shapes.pdb with `outer`'s record saying that it ends where it starts: its nested
    /// records are read as they come, and every procedure is still found, once.
    #[test]
    fn a_procedure_that_ends_where_it_starts_is_read_once() {
        let temp = tempfile::tempdir().unwrap();
        let path = testpdb::procedure_ending_at_itself(temp.path(), "shapes.pdb", "outer");
        let symbols = testpdb::in_time(move || Symbols::from_pdb(&path).unwrap());
        let found: Vec<&str> = symbols.iter().map(|f| f.name).collect();
        assert_eq!(found, ["outer", "second", "nested", "main_entry"]);
    }
}
