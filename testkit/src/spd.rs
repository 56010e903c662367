//! A writer of SPD files (Sample Profile Databases) from the layout in docs/format.md alone,
//! sharing no code with sptdump's reader: the synthetic SPDs of the tests, of the README
//! (`testdata/pe/*.spd`) and of the fuzzer's seeds.
//!
//! ```text
//! 0x00  "H_Q_"   0x04  version   0x18  djb2 of the binary's name
//! 0x30  names area offset, 0x34 its size   0x38  module block offset
//! 0x48  age      0x4C  GUID (program-ID byte order)   0x5C, 0x64  profile totals (u64)
//! 0x80  names area: the binary's name and "* CIL module *", UTF-16LE, NUL-terminated
//! then, at an 8-byte boundary, the module block, to the end of the file:
//!   header (0x38)   +00 size, +0C/+10/+14 records offset/size/end, +1C function count,
//!                   +24/+28/+2C symbol table offset/size/buckets, +30/+34 strings
//!   symbol table    36-byte slots: the buckets' heads, then the entries chained after them
//!   records         one a function (0x54-byte header, callees, blocks, tail entries)
//!   string table    a NUL, then the names, NUL-terminated, in record order
//!   pad             to a multiple of 4 bytes
//! ```
//!
//! The functions are [`SpdFunction`]s; [`SpdBuilder::new`] holds a small program whose
//! every kind of function (external, static, folded, never emitted, never run) and every
//! part of a record (callees of both types, value profiles, inline bytes, tail entries)
//! appears once at least. [`SpdBuilder::layout`] says where each part was written, for the
//! tests that break one.

use crate::builder::Guid;
use crate::fixtures;

/// An SPD to write.
#[derive(Clone, Debug)]
pub struct SpdBuilder {
    /// The binary's name, as the names area holds it.
    pub binary: String,
    /// The GUID of the binary's PDB.
    pub guid: Guid,
    /// The age of the binary's PDB.
    pub age: u32,
    /// The functions, in record order.
    pub functions: Vec<SpdFunction>,
    /// The symbol table's bucket count.
    pub buckets: u32,
    /// The two profile totals: both 0 before any trace was imported.
    pub totals: [u64; 2],
    /// The value at 0x04.
    pub version: u32,
    /// Bytes to write over the built file, last: `(offset, bytes)`.
    pub patches: Vec<(usize, Vec<u8>)>,
    /// Where to cut the built file, after the patches.
    pub truncate: Option<usize>,
}

/// A function's record and symbol entry.
#[derive(Clone, Debug)]
pub struct SpdFunction {
    /// Its name.
    pub name: String,
    /// Its hash: djb2-64 of the name for an external function, anything for a static one.
    pub hash: u64,
    /// Its entry's flags: 0x04 static, 0x20 folded, other bits as the real files have them.
    pub flags: u32,
    /// Its entry's id.
    pub id: u32,
    /// The RVA it was folded into (with flag 0x20).
    pub folded_rva: u32,
    /// Its RVA and code size: 0 and 0 when it has no code of its own.
    pub rva: u32,
    /// Its code size.
    pub size: u32,
    /// The word at rec+0x18.
    pub checksum: u32,
    /// Its blocks; block i has id i + 1.
    pub blocks: Vec<SpdBlock>,
    /// Its callee entries.
    pub callees: Vec<SpdCallee>,
    /// Its tail entries: hash, flags, count.
    pub tail: Vec<(u64, u32, u64)>,
}

/// A block of a function's flow graph.
#[derive(Clone, Debug, Default)]
pub struct SpdBlock {
    /// The word after its id.
    pub flags: u32,
    /// Its count.
    pub count: u64,
    /// Its instruction count.
    pub instructions: u32,
    /// Its code ranges: offset from the function's RVA, length in bytes (stored doubled).
    pub ranges: Vec<(u32, u32)>,
    /// Its inline bytes.
    pub inline: Vec<u8>,
    /// How many 64-byte value profiles it has.
    pub value_profiles: u32,
    /// Its successors: the target block's id, the edge count.
    pub successors: Vec<(u32, u64)>,
}

/// A callee entry.
#[derive(Clone, Debug)]
pub struct SpdCallee {
    /// The callee's hash.
    pub hash: u64,
    /// 1: a function of the SPD; 3: an import.
    pub kind: u32,
    /// The call count.
    pub calls: u64,
    /// The calling blocks' ids.
    pub sites: Vec<u32>,
}

/// Where [`SpdBuilder::build`] wrote each part, as file offsets.
#[derive(Clone, Debug, Default)]
pub struct SpdLayout {
    /// The module block.
    pub module: usize,
    /// The symbol table.
    pub symbols: usize,
    /// Each function's symbol entry, in record order.
    pub entries: Vec<usize>,
    /// Each function's record.
    pub records: Vec<usize>,
    /// Each function's blocks: where each starts, its first range, its first successor.
    pub blocks: Vec<Vec<BlockAt>>,
    /// Each function's callee area.
    pub callees: Vec<usize>,
    /// The string table.
    pub strings: usize,
}

/// Where a block's parts were written.
#[derive(Clone, Copy, Debug, Default)]
pub struct BlockAt {
    /// Its header.
    pub start: usize,
    /// Its first range.
    pub ranges: usize,
    /// Its first successor.
    pub successors: usize,
}

/// Offsets of the header's fields.
pub mod field {
    /// The signature, `H_Q_`.
    pub const SIGNATURE: usize = 0x00;
    /// The version, `0x100C`.
    pub const VERSION: usize = 0x04;
    /// djb2 of the binary's name.
    pub const NAME_HASH: usize = 0x18;
    /// The names area's offset.
    pub const NAMES_OFFSET: usize = 0x30;
    /// The names area's size.
    pub const NAMES_SIZE: usize = 0x34;
    /// The module block's offset.
    pub const MODULE_OFFSET: usize = 0x38;
    /// The age.
    pub const AGE: usize = 0x48;
    /// The GUID.
    pub const GUID: usize = 0x4C;
    /// The first profile total.
    pub const TOTAL_1: usize = 0x5C;
    /// Within the module block: its size.
    pub const MODULE_SIZE: usize = 0x00;
    /// Within the module block: the function records' offset.
    pub const PROFILES_OFFSET: usize = 0x0C;
    /// Within the module block: the function count.
    pub const FUNCTION_COUNT: usize = 0x1C;
    /// Within the module block: the symbol table's offset.
    pub const SYMBOLS_OFFSET: usize = 0x24;
    /// Within the module block: the bucket count.
    pub const BUCKETS: usize = 0x2C;
    /// Within the module block: the function names' offset.
    pub const FUNCTION_NAMES_OFFSET: usize = 0x30;
    /// Within a symbol entry: the name's offset.
    pub const ENTRY_NAME: usize = 0x08;
    /// Within a symbol entry: the record's offset.
    pub const ENTRY_RECORD: usize = 0x1C;
    /// Within a symbol entry: the next entry of the chain.
    pub const ENTRY_NEXT: usize = 0x20;
    /// Within a record: its size.
    pub const RECORD_SIZE: usize = 0x10;
    /// Within a record: the code size.
    pub const RECORD_CODE_SIZE: usize = 0x24;
    /// Within a record: the block count.
    pub const RECORD_BLOCKS: usize = 0x34;
    /// Within a record: the edge count.
    pub const RECORD_EDGES: usize = 0x38;
    /// Within a record: a word zero in every known record.
    pub const RECORD_ZERO: usize = 0x4C;
}

/// The value at 0x04 of every known SPD.
pub const VERSION: u32 = 0x100C;

/// The hash at 0x18: h = 5381, then h = h * 33 + byte, wrapping at 32 bits.
pub fn name_hash(name: &str) -> u32 {
    let mut h: u32 = 5381;
    for b in name.bytes() {
        h = h.wrapping_mul(33).wrapping_add(u32::from(b));
    }
    h
}

/// The hash of an external function: djb2 over 64 bits (an import's is that of `__imp_`
/// and its name).
pub fn function_hash(name: &str) -> u64 {
    let mut h: u64 = 5381;
    for b in name.bytes() {
        h = h.wrapping_mul(33).wrapping_add(u64::from(b));
    }
    h
}

fn utf16z(s: &str) -> Vec<u8> {
    s.encode_utf16()
        .chain([0])
        .flat_map(|u| u.to_le_bytes())
        .collect()
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn push_u32(out: &mut Vec<u8>, v: u32) {
    out.extend(v.to_le_bytes());
}

fn push_u64(out: &mut Vec<u8>, v: u64) {
    out.extend(v.to_le_bytes());
}

fn u32_of(n: usize) -> u32 {
    u32::try_from(n).expect("a synthetic SPD's sizes fit 32 bits")
}

impl SpdBlock {
    /// A block of `count` and `instructions` covering `ranges`, going to `successors`.
    pub fn new(
        count: u64,
        instructions: u32,
        ranges: &[(u32, u32)],
        successors: &[(u32, u64)],
    ) -> SpdBlock {
        SpdBlock {
            count,
            instructions,
            ranges: ranges.to_vec(),
            successors: successors.to_vec(),
            ..SpdBlock::default()
        }
    }

    fn size(&self) -> usize {
        36 + 8 * self.ranges.len()
            + self.inline.len()
            + 64 * self.value_profiles as usize
            + 16 * self.successors.len()
    }
}

impl SpdFunction {
    /// An external function (hash djb2-64 of its name) at `rva`, `size` bytes, of `blocks`.
    pub fn new(name: &str, rva: u32, size: u32, blocks: Vec<SpdBlock>) -> SpdFunction {
        SpdFunction {
            name: name.to_owned(),
            hash: function_hash(name),
            flags: 0x09,
            id: 0,
            folded_rva: 0,
            rva,
            size,
            checksum: 0x5EED_0000 | u32_of(blocks.len()),
            blocks,
            callees: Vec::new(),
            tail: Vec::new(),
        }
    }

    /// Adds a call of the function `callee` (of this SPD) from `sites`.
    pub fn calls(mut self, callee: &str, calls: u64, sites: &[u32]) -> SpdFunction {
        self.callees.push(SpdCallee {
            hash: function_hash(callee),
            kind: 1,
            calls,
            sites: sites.to_vec(),
        });
        self
    }

    /// Adds a call of the import `name` from `sites`.
    pub fn imports(mut self, name: &str, calls: u64, sites: &[u32]) -> SpdFunction {
        let hash = function_hash(&format!("__imp_{name}"));
        self.callees.push(SpdCallee {
            hash,
            kind: 3,
            calls,
            sites: sites.to_vec(),
        });
        self
    }

    /// Its edge count: the successors of its blocks.
    fn edges(&self) -> usize {
        self.blocks.iter().map(|b| b.successors.len()).sum()
    }

    /// The callee area's bytes.
    fn callee_area(&self) -> Vec<u8> {
        let mut out = Vec::new();
        for c in &self.callees {
            push_u64(&mut out, c.hash);
            push_u32(&mut out, c.kind);
            push_u64(&mut out, c.calls);
            push_u32(&mut out, u32_of(c.sites.len()));
            c.sites.iter().for_each(|&s| push_u32(&mut out, s));
        }
        out
    }

    /// The blocks area's bytes, and where each block's parts lie in it.
    fn blocks_area(&self) -> (Vec<u8>, Vec<BlockAt>) {
        let mut starts = vec![0usize];
        for b in &self.blocks {
            starts.push(starts.last().unwrap() + b.size());
        }
        let mut out = Vec::new();
        let mut at = Vec::new();
        for (i, b) in self.blocks.iter().enumerate() {
            let start = out.len();
            for v in [u32_of(i + 1), b.flags] {
                push_u32(&mut out, v);
            }
            push_u64(&mut out, b.count);
            for v in [
                b.instructions,
                u32_of(b.successors.len()),
                u32_of(b.ranges.len()),
                b.value_profiles,
                u32_of(b.inline.len()),
            ] {
                push_u32(&mut out, v);
            }
            let ranges = out.len();
            for &(offset, len) in &b.ranges {
                push_u32(&mut out, offset);
                push_u32(&mut out, len * 2);
            }
            out.extend(&b.inline);
            out.extend(std::iter::repeat_n(0xA5, 64 * b.value_profiles as usize));
            let successors = out.len();
            for &(target, count) in &b.successors {
                push_u32(&mut out, u32_of(starts[target as usize - 1]));
                push_u64(&mut out, count);
                push_u32(&mut out, 0);
            }
            at.push(BlockAt {
                start,
                ranges,
                successors,
            });
        }
        (out, at)
    }

    /// The record's bytes, and where its blocks lie in it.
    fn record(&self) -> (Vec<u8>, Vec<BlockAt>) {
        let callees = self.callee_area();
        let (blocks, mut at) = self.blocks_area();
        let blocks_at = 0x54 + callees.len();
        let blocks_end = blocks_at + blocks.len();
        let tail = 24 * self.tail.len();
        let mut r = vec![0u8; 0x54];
        r[0..8].copy_from_slice(&self.hash.to_le_bytes());
        for (off, v) in [
            (0x10, blocks_end + tail),
            (0x14, 0xFFFF_FFFF),
            (0x18, self.checksum as usize),
            (0x1C, blocks_at),
            (0x20, self.rva as usize),
            (0x24, self.size as usize),
            (0x30, blocks.len()),
            (0x34, self.blocks.len()),
            (0x38, self.edges()),
            (0x3C, 0x54),
            (0x40, callees.len()),
            (0x44, blocks_end),
            (0x48, tail),
        ] {
            put_u32(&mut r, off, u32_of(v));
        }
        r.extend(callees);
        r.extend(blocks);
        for &(hash, flags, count) in &self.tail {
            push_u64(&mut r, hash);
            push_u32(&mut r, flags);
            push_u64(&mut r, count);
            push_u32(&mut r, 0);
        }
        for b in &mut at {
            for p in [&mut b.start, &mut b.ranges, &mut b.successors] {
                *p += blocks_at;
            }
        }
        (r, at)
    }
}

/// A function of `image` (`app` for `testdata/pe/app.exe`) placed where the PDB of its build
/// places it ([`fixtures::placed`]): at its RVA, of its code size, of `blocks`, whose code
/// ranges must lie inside its code.
fn placed(image: &str, name: &str, blocks: Vec<SpdBlock>) -> SpdFunction {
    let (rva, size) = fixtures::placed(image, image, name);
    for b in &blocks {
        for &(offset, len) in &b.ranges {
            assert!(
                offset + len <= size,
                "{name}: a block's range {offset:#x}+{len:#x} is past its {size:#x} bytes of code"
            );
        }
    }
    SpdFunction::new(name, rva, size, blocks)
}

/// The program of [`SpdBuilder::new`]: a checksum over parsed tokens, as `testdata/pe/app.c`
/// computes it, each function placed where `app.pdb` places it, and two functions of no code
/// of their own (one folded into another, one inlined everywhere). The blocks split each
/// function's code where `app.exe`'s instructions start.
fn program() -> Vec<SpdFunction> {
    let b = SpdBlock::new;
    let mut parse_blocks = vec![
        b(40, 4, &[(0x00, 0x0C)], &[(2, 40)]),
        b(160, 7, &[(0x0C, 0x32)], &[(2, 120), (3, 40)]),
        b(40, 5, &[(0x3E, 0x06)], &[(4, 10), (5, 30)]),
        b(10, 5, &[(0x44, 0x10)], &[(5, 10)]),
        b(40, 3, &[(0x54, 0x09)], &[]),
    ];
    parse_blocks[3].value_profiles = 1;
    parse_blocks[3].inline = vec![1, 2, 3];
    let mut hash_bytes = placed(
        "app",
        "hash_bytes",
        vec![
            b(10, 4, &[(0x00, 0x0E)], &[(2, 10)]),
            b(80, 6, &[(0x0E, 0x25)], &[(2, 70), (3, 10)]),
            b(10, 3, &[(0x33, 0x0F)], &[]),
        ],
    );
    hash_bytes.callees.push(SpdCallee {
        hash: 0x3C8D_5A1F_0E7B_9246,
        kind: 1,
        calls: 80,
        sites: vec![2],
    });
    hash_bytes.tail.push((function_hash("memset"), 1, 10));
    let mut mix_round = placed("app", "mix_round", vec![b(80, 7, &[(0, 0x13)], &[])]);
    // A static function: its hash is seeded by its source, not the djb2 of its name.
    mix_round.hash = 0x3C8D_5A1F_0E7B_9246;
    mix_round.flags = 0x0D;
    let mut folded = SpdFunction::new("checksum_fast", 0, 0, vec![b(0, 0, &[], &[])]);
    folded.flags = 0x29;
    folded.folded_rva = fixtures::function("app", "compute_checksum").rva;
    let mut functions = vec![
        placed(
            "app",
            "main_entry",
            vec![
                b(1, 5, &[(0, 0x10)], &[(2, 1)]),
                b(1, 4, &[(0x10, 0x0D)], &[]),
            ],
        )
        .calls("compute_checksum", 1, &[1])
        .imports("ExitProcess", 1, &[2]),
        placed(
            "app",
            "compute_checksum",
            vec![
                b(1, 6, &[(0x00, 0x1B)], &[(2, 1)]),
                b(40, 12, &[(0x1B, 0x45)], &[(2, 39), (3, 1)]),
                b(1, 9, &[(0x60, 0x34)], &[]),
            ],
        )
        .calls("parse_token", 40, &[2]),
        placed("app", "parse_token", parse_blocks).calls("hash_bytes", 10, &[4]),
        hash_bytes,
        mix_round,
        placed("app", "spin_pause", vec![b(0, 2, &[(0, 3)], &[])]),
        folded,
        SpdFunction::new("to_digit", 0, 0, vec![b(0, 0, &[], &[])]),
    ];
    for (i, f) in functions.iter_mut().enumerate() {
        f.id = 0x21 + 2 * u32_of(i);
    }
    functions
}

impl SpdBuilder {
    /// An SPD of `binary`, profiled, holding `program`'s eight functions.
    pub fn new(binary: &str, guid: &str, age: u32) -> SpdBuilder {
        SpdBuilder {
            binary: binary.to_owned(),
            guid: Guid::parse(guid),
            age,
            functions: program(),
            buckets: 5,
            totals: [1200, 1200],
            version: VERSION,
            patches: Vec::new(),
            truncate: None,
        }
    }

    /// The same SPD before any trace was imported into it: every count 0.
    pub fn not_profiled(mut self) -> SpdBuilder {
        self.totals = [0, 0];
        for f in &mut self.functions {
            for b in &mut f.blocks {
                b.count = 0;
                b.successors.iter_mut().for_each(|s| s.1 = 0);
            }
            f.callees.iter_mut().for_each(|c| c.calls = 0);
            f.tail.iter_mut().for_each(|t| t.2 = 0);
        }
        self
    }

    /// Where the module block starts.
    pub fn module_offset(&self) -> usize {
        let names = 0x80 + utf16z(&self.binary).len() + utf16z("* CIL module *").len();
        names.next_multiple_of(8)
    }

    /// The bytes of the file.
    pub fn build(&self) -> Vec<u8> {
        self.build_with_layout().0
    }

    /// Where each part of the file is written.
    pub fn layout(&self) -> SpdLayout {
        self.build_with_layout().1
    }

    fn build_with_layout(&self) -> (Vec<u8>, SpdLayout) {
        let mut names = utf16z(&self.binary);
        names.extend(utf16z("* CIL module *"));
        let module_at = self.module_offset();
        let mut header = vec![0u8; 0x80];
        header[..4].copy_from_slice(b"H_Q_");
        put_u32(&mut header, field::VERSION, self.version);
        put_u32(&mut header, field::NAME_HASH, name_hash(&self.binary));
        put_u32(&mut header, field::NAMES_OFFSET, 0x80);
        put_u32(&mut header, field::NAMES_SIZE, names.len() as u32);
        put_u32(&mut header, field::MODULE_OFFSET, module_at as u32);
        put_u32(&mut header, field::AGE, self.age);
        header[field::GUID..field::GUID + 16].copy_from_slice(&self.guid.0);
        header[field::TOTAL_1..field::TOTAL_1 + 8].copy_from_slice(&self.totals[0].to_le_bytes());
        header[0x64..0x6C].copy_from_slice(&self.totals[1].to_le_bytes());
        let mut file = header;
        file.extend(names);
        file.resize(module_at, 0);
        let (module, mut layout) = self.module();
        file.extend(module);
        layout.shift(module_at);
        for (at, bytes) in &self.patches {
            file[*at..*at + bytes.len()].copy_from_slice(bytes);
        }
        if let Some(len) = self.truncate {
            file.truncate(len);
        }
        (file, layout)
    }

    /// Each function's slot in the symbol table, and the table's slot count: a function
    /// heads its bucket when the bucket is free, else takes the next slot past the buckets
    /// and is linked at its chain's end. And each slot's link to the next.
    fn slots(&self) -> (Vec<usize>, Vec<usize>) {
        let buckets = self.buckets as usize;
        let mut slot_of = Vec::new();
        let mut next = vec![0usize; buckets];
        let mut heads: Vec<Option<usize>> = vec![None; buckets];
        for f in &self.functions {
            let bucket = (f.hash % u64::from(self.buckets)) as usize;
            let slot = match heads[bucket] {
                None => bucket,
                Some(mut last) => {
                    let slot = next.len();
                    next.push(0);
                    while next[last] != 0 {
                        last = next[last] / 36;
                    }
                    next[last] = slot * 36;
                    slot
                }
            };
            heads[bucket].get_or_insert(slot);
            slot_of.push(slot);
        }
        (slot_of, next)
    }

    /// The module block, with the layout of its parts from its start.
    fn module(&self) -> (Vec<u8>, SpdLayout) {
        let mut layout = SpdLayout::default();
        let mut strings = vec![0u8];
        let mut name_at = Vec::new();
        for f in &self.functions {
            name_at.push(strings.len());
            strings.extend(f.name.as_bytes());
            strings.push(0);
        }
        let mut records = Vec::new();
        let mut record_at = Vec::new();
        let mut blocks = Vec::new();
        for f in &self.functions {
            let (r, at) = f.record();
            record_at.push(records.len());
            blocks.push(at);
            records.extend(r);
        }
        let (slot_of, next) = self.slots();
        let symbols_at = 0x38;
        let mut table = vec![0u8; 36 * next.len()];
        for (i, f) in self.functions.iter().enumerate() {
            let e = &mut table[36 * slot_of[i]..][..36];
            e[0..8].copy_from_slice(&f.hash.to_le_bytes());
            for (off, v) in [
                (0x08, u32_of(name_at[i])),
                (0x0C, f.flags),
                (0x10, f.id),
                (0x18, f.folded_rva),
                (0x1C, u32_of(record_at[i])),
                (0x20, u32_of(next[slot_of[i]])),
            ] {
                put_u32(e, off, v);
            }
        }
        let records_at = symbols_at + table.len();
        let strings_at = records_at + records.len();
        let size = (strings_at + strings.len()).next_multiple_of(4);
        let mut header = vec![0u8; 0x38];
        for (off, v) in [
            (0x00, size),
            (0x04, 1),
            (0x0C, records_at),
            (0x10, records.len()),
            (0x14, strings_at),
            (0x1C, self.functions.len()),
            (0x24, symbols_at),
            (0x28, table.len()),
            (0x2C, self.buckets as usize),
            (0x30, strings_at),
            (0x34, strings.len()),
        ] {
            put_u32(&mut header, off, u32_of(v));
        }
        layout.symbols = symbols_at;
        layout.entries = slot_of.iter().map(|s| symbols_at + 36 * s).collect();
        layout.records = record_at.iter().map(|r| records_at + r).collect();
        layout.callees = layout.records.iter().map(|r| r + 0x54).collect();
        layout.blocks = blocks
            .into_iter()
            .zip(&layout.records)
            .map(|(bs, &r)| bs.into_iter().map(|b| b.shifted(r)).collect())
            .collect();
        layout.strings = strings_at;
        let mut module = header;
        module.extend(table);
        module.extend(records);
        module.extend(strings);
        module.resize(size, 0);
        (module, layout)
    }

    /// Writes `bytes` at `at` of the built file.
    pub fn patch(mut self, at: usize, bytes: &[u8]) -> SpdBuilder {
        self.patches.push((at, bytes.to_vec()));
        self
    }

    /// Writes the u32 `v` at `at` of the built file.
    pub fn patch_u32(self, at: usize, v: u32) -> SpdBuilder {
        self.patch(at, &v.to_le_bytes())
    }

    /// Cuts the built file at `len` bytes.
    pub fn truncate(mut self, len: usize) -> SpdBuilder {
        self.truncate = Some(len);
        self
    }
}

impl BlockAt {
    fn shifted(self, by: usize) -> BlockAt {
        BlockAt {
            start: self.start + by,
            ranges: self.ranges + by,
            successors: self.successors + by,
        }
    }
}

impl SpdLayout {
    /// Moves every offset by `by`: from the module block's start to the file's.
    fn shift(&mut self, by: usize) {
        self.module = by;
        self.symbols += by;
        self.strings += by;
        for v in [&mut self.entries, &mut self.records, &mut self.callees] {
            v.iter_mut().for_each(|x| *x += by);
        }
        for f in &mut self.blocks {
            f.iter_mut().for_each(|b| *b = b.shifted(by));
        }
    }
}

/// The SPDs of `testdata/pe/`, for the README, each with the file name it has there: the
/// build of `app.exe` in `testdata/pe/` (profiled), an older build of it (another GUID, the
/// same code), and `core.dll`'s build before any trace was imported. Each bears the GUID and
/// age of its build, and places its functions where the PDB of that build does.
pub fn readme_spds() -> Vec<(&'static str, Vec<u8>)> {
    let old_app = "1C0E5B7A-3D2F-4A61-9E84-55C3A0F2B917";
    // Each SPD of a build bears the identity of its image and PDB.
    let of_build = |binary: &str, image: &str| {
        let (guid, age) = fixtures::codeview(image);
        let mut spd = SpdBuilder::new(binary, old_app, age);
        spd.guid = Guid(guid);
        spd
    };
    let app_spd = of_build("app.exe", "app");
    let mut old = app_spd.clone();
    old.guid = Guid::parse(old_app);
    let mut core_spd = of_build("core.dll", "core");
    let b = SpdBlock::new;
    core_spd.functions = vec![
        placed("core", "core_add", vec![b(0, 2, &[(0, 4)], &[])]),
        // core_scale's loop (core.c): the test of n, the loop's set-up, the loop, and the
        // exit, its two returns (the total, or 0 when n <= 0), split where core.dll's
        // instructions start.
        placed(
            "core",
            "core_scale",
            vec![
                b(0, 2, &[(0x00, 0x04)], &[(2, 0), (4, 0)]),
                b(0, 4, &[(0x04, 0x0C)], &[(3, 0)]),
                b(0, 6, &[(0x10, 0x13)], &[(3, 0), (4, 0)]),
                b(0, 3, &[(0x23, 0x01), (0x24, 0x03)], &[]),
            ],
        ),
    ];
    for (i, f) in core_spd.functions.iter_mut().enumerate() {
        f.id = 0x11 + 2 * u32_of(i);
    }
    core_spd.buckets = 3;
    let core_spd = core_spd.not_profiled();
    vec![
        ("app.spd", app_spd.build()),
        ("app-old.spd", old.build()),
        ("core.spd", core_spd.build()),
    ]
}
