//! The tables of a profile being built: mappings, locations, functions and strings,
//! encoded as they are made.

use std::collections::BTreeMap;
use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::analysis::Counted;
use crate::analysis::keys::{FrameKey, KeyId, Namers};

use super::proto::*;
use super::wire::*;

/// The tables of a profile being built: the mappings as messages, the locations and
/// functions encoded as they are made (the same bytes as encoding them all at the end), the
/// strings in one buffer.
#[derive(Default)]
pub(super) struct Builder {
    pub(super) strings: Strings,
    pub(super) mappings: Vec<Mapping>,
    /// The locations, each encoded as field 4 of a `Profile`.
    pub(super) locations: Vec<u8>,
    /// The functions, each encoded as field 5 of a `Profile`.
    pub(super) functions: Vec<u8>,
    /// Per function, by its ID - 1: whether its file is a source file (not the binary's
    /// name).
    pub(super) file_known: Vec<bool>,
}

/// The string table: each string once, all in one buffer.
#[derive(Default)]
pub(super) struct Strings {
    pub(super) text: String,
    /// Where each string ends in `text`.
    pub(super) ends: Vec<usize>,
    /// Each string's index and 32 bits of its hash, found by that hash: as the table grows,
    /// its entries are placed again without reading their strings.
    pub(super) index: HashTable<(u32, u32)>,
}

impl Strings {
    /// The `i`-th string of `text` that `ends` delimit.
    pub(super) fn nth<'t>(text: &'t str, ends: &[usize], i: usize) -> &'t str {
        let start = i.checked_sub(1).map_or(0, |j| ends[j]);
        &text[start..ends[i]]
    }

    /// The 32 bits of `s`'s hash kept in the index.
    pub(super) fn hash(s: &str) -> u32 {
        (FxBuildHasher.hash_one(s) >> 32) as u32
    }

    /// The hash the index places an entry by: its 32 bits spread over 64 (the table takes
    /// its slot from the low bits and a tag from the high ones).
    pub(super) fn spread(hash: u32) -> u64 {
        u64::from(hash).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// The index of `s`, added the first time.
    pub(super) fn index(&mut self, s: &str) -> usize {
        let Strings { text, ends, index } = self;
        let hash = Self::hash(s);
        let found = index.find(Self::spread(hash), |&(i, h)| {
            h == hash && Self::nth(text, ends, i as usize) == s
        });
        if let Some(&(i, _)) = found {
            return i as usize;
        }
        let i = ends.len();
        text.push_str(s);
        ends.push(text.len());
        let entry = u32::try_from(i).expect("fewer than 2^32 strings: each is a name or a file");
        index.insert_unique(Self::spread(hash), (entry, hash), |&(_, h)| Self::spread(h));
        i
    }

    /// Each string, in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.ends.len()).map(|i| Self::nth(&self.text, &self.ends, i))
    }
}

/// The functions of one binary's locations, by what identifies them.
pub(super) struct Functions<'b> {
    pub(super) binary: &'b str,
    pub(super) of: FxHashMap<KeyId, u64>,
}

impl Functions<'_> {
    /// The ID of the function `id`, added to the builder the first time: named `name` (no
    /// binary: pprof's graph breaks names at dots), in `file` (else the binary's name), from
    /// `start_line`.
    pub(super) fn id(
        &mut self,
        b: &mut Builder,
        id: KeyId,
        name: &str,
        file: Option<&str>,
        start_line: Option<u32>,
    ) -> u64 {
        if let Some(&f) = self.of.get(&id) {
            return f;
        }
        let f = b.file_known.len() as u64 + 1;
        let name = b.string(name);
        let filename = b.string(file.unwrap_or(self.binary));
        b.file_known.push(file.is_some());
        let function = Function {
            id: f,
            name,
            system_name: name,
            filename,
            start_line: start_line.map_or(0, i64::from),
        };
        prost::encoding::message::encode(5, &function, &mut b.functions);
        self.of.insert(id, f);
        f
    }
}

impl Builder {
    /// A mapping per binary of `addresses`, starting at 0 so that addresses are RVAs; the
    /// mapping ID of each binary.
    pub(super) fn mappings(
        &mut self,
        counted: &Counted<'_>,
        addresses: &[(u16, u32, bool)],
    ) -> BTreeMap<u16, u64> {
        let mut mapping_of: BTreeMap<u16, u64> = BTreeMap::new();
        for &(progid, _, _) in addresses {
            if mapping_of.contains_key(&progid) {
                continue;
            }
            let id = mapping_of.len() as u64 + 1;
            let key = counted
                .tables
                .progids
                .as_ref()
                .and_then(|t| t.get(progid))
                .map(|e| e.symkey().to_string())
                .unwrap_or_default();
            let mapping = Mapping {
                id,
                memory_start: 0,
                memory_limit: 1 << 32,
                file_offset: 0,
                filename: self.string(&counted.tables.binary_name(progid)),
                build_id: self.string(&key),
                has_functions: true,
                has_filenames: false,
                has_line_numbers: false,
                has_inline_frames: false,
            };
            self.mappings.push(mapping);
            mapping_of.insert(progid, id);
        }
        mapping_of
    }

    /// A location per address, with its function and, with inline frames, the functions
    /// inlined there as `Line` entries, innermost first (as pprof expects), each with its file
    /// and line where the PDB has them, numbered in the order of `sorted` (as
    /// [`addresses`](super::addresses::addresses) numbers them) and encoded as they are made. Each binary's addresses are
    /// looked up once.
    pub(super) fn locations(
        &mut self,
        counted: &Counted<'_>,
        namers: &Namers<'_>,
        sorted: &[(u16, u32, bool)],
        mapping_of: &BTreeMap<u16, u64>,
    ) {
        let mut ids: Vec<KeyId> = Vec::new();
        let mut location = Location::default();
        let mut place = 0;
        for list in sorted.chunk_by(|a, b| a.0 == b.0) {
            let progid = list[0].0;
            let binary = counted.tables.binary_name(progid);
            let symbols = counted.symbols.get(Some(progid));
            let namer = namers.get(progid);
            let mut functions = Functions {
                binary: &binary,
                of: FxHashMap::default(),
            };
            let mapping = mapping_of[&progid];
            let mut has = Has::default();
            for &(_, rva, exact) in list {
                let returns = !exact;
                ids.clear();
                namer.ids(rva, returns, &mut ids);
                location.line.clear();
                match namer.frames(rva, returns) {
                    // Innermost first, as pprof expects: the ids reversed.
                    Some(frames) => {
                        for (f, &id) in frames.zip(ids.iter().rev()) {
                            let function_id =
                                functions.id(self, id, f.function, f.file, f.start_line);
                            location.line.push(Line {
                                function_id,
                                line: f.line.map_or(0, i64::from),
                            });
                        }
                    }
                    None => {
                        let key = FrameKey::of(symbols, rva, returns);
                        let name = match key.function_name() {
                            Some(f) => f.to_owned(),
                            None => key.name(&binary),
                        };
                        let function_id = functions.id(self, ids[0], &name, None, None);
                        location.line.push(Line {
                            function_id,
                            line: 0,
                        });
                    }
                }
                location.id = location_id(place);
                place += 1;
                location.mapping_id = mapping;
                location.address = u64::from(rva);
                has.note(&location.line, &self.file_known);
                prost::encoding::message::encode(4, &location, &mut self.locations);
            }
            let m = &mut self.mappings[mapping as usize - 1];
            m.has_filenames = has.files;
            m.has_line_numbers = has.lines;
            m.has_inline_frames = has.inlines;
        }
    }

    /// The index of `s` in the string table, adding it the first time.
    pub(super) fn string(&mut self, s: &str) -> i64 {
        let i = self.strings.index(s);
        // As many strings as there are addresses, names and files: far fewer than 2^63.
        i64::try_from(i).expect("a string table of fewer than 2^63 strings")
    }
}

/// What the locations of a mapping have, as its flags say.
#[derive(Default)]
pub(super) struct Has {
    /// A function whose file is a source file.
    pub(super) files: bool,
    /// A line number.
    pub(super) lines: bool,
    /// Inline frames.
    pub(super) inlines: bool,
}

impl Has {
    /// Notes what a location of `line` has; `file_known` is per function, as in [`Builder`].
    pub(super) fn note(&mut self, line: &[Line], file_known: &[bool]) {
        self.lines |= line.iter().any(|l| l.line > 0);
        self.inlines |= line.len() > 1;
        self.files |= line.iter().any(|l| file_known[l.function_id as usize - 1]);
    }
}
