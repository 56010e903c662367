//! A writer of SPT v1 files for tests.
//!
//! It encodes the layout of docs/format.md on its own and shares no code with
//! sptdump's decoder, so a misreading of the format in one cannot hide the same
//! misreading in the other. Every integer is little-endian.
//!
//! # File
//!
//! The standard layout that [`SptBuilder::new`] produces:
//!
//! ```text
//!  0x0000 +------------------------------------+
//!         | header, 32 bytes                   |
//!  0x0020 +------------------------------------+ <- StringTableOffset
//!         | string table                       |
//!         |   StringTableUsed bytes of names,  |
//!         |   zeros up to StringTableCapacity  |
//!  0x4020 +------------------------------------+ <- ProgramIdTableOffset
//!         | program-ID table                   |    (= StringTableOffset + StringTableCapacity)
//!         |   ProgramIdsUsed entries of 24,    |
//!         |   zeros up to ProgramIdCapacity×24 |
//!  0x5820 +------------------------------------+ <- ProgramIdTableOffset + ProgramIdCapacity×24
//!         | event stream, to the end of file   |
//!         +------------------------------------+
//! ```
//!
//! # Header
//!
//! ```text
//!  offset size field                 value
//!  0x00   u32  Signature             0x5350543A, on disk 3A 54 50 53 (":TPS")
//!  0x04   u32  Version               1
//!  0x08   u32  RawDataId             reserved, 0
//!  0x0C   u32  TargetArch            reserved, 0
//!  0x10   u32  StringTableOffset     absolute file offset, usually 0x20
//!  0x14   u32  ProgramIdTableOffset  absolute file offset, usually 0x4020
//!  0x18   u16  StringTableUsed       bytes
//!  0x1A   u16  StringTableCapacity   bytes, usually 0x4000
//!  0x1C   u16  ProgramIdsUsed        entries
//!  0x1E   u16  ProgramIdCapacity     entries (not bytes), usually 0x100
//!
//!  3A 54 50 53 | 01 00 00 00 | 00 00 00 00 | 00 00 00 00
//!  20 00 00 00 | 20 40 00 00 | 08 00 | 00 40 | 01 00 | 00 01
//! ```
//!
//! # String table
//!
//! UTF-8 names, each ended by a NUL, one after another. A program-ID entry names its
//! binary by the byte offset of the name, relative to StringTableOffset.
//!
//! ```text
//!  +0                        +8
//!  61 70 70 2E 65 78 65 00 | 63 6F 72 65 2E 64 6C 6C 00
//!  a  p  p  .  e  x  e  \0   c  o  r  e  .  d  l  l  \0
//! ```
//!
//! # Program-ID entry (24 bytes)
//!
//! ```text
//!  +0   u32       GUID Data1, little-endian
//!  +4   u16       GUID Data2, little-endian
//!  +6   u16       GUID Data3, little-endian
//!  +8   [u8; 8]   GUID Data4, as written
//!  +16  u32       age
//!  +20  u32       string offset, bytes into the string table
//!
//!  {42AC0098-ADB5-E796-8C0E-161D2814780E}, age 1, name at 0:
//!  98 00 AC 42 | B5 AD | 96 E7 | 8C 0E 16 1D 28 14 78 0E | 01 00 00 00 | 00 00 00 00
//! ```
//!
//! # Event stream
//!
//! Records one after another, each starting with its opcode byte:
//!
//! ```text
//!  BINARY_ID        81 | pad 00 | progid u16 | length u32                    8 bytes
//!                   `length` counts from the length field itself: the segment's
//!                   records end at (offset of the 81) + 4 + length, so an empty
//!                   segment has length 4.
//!  REPEAT           82 | pad 00 | count u64                                 10 bytes
//!                   the next sample record counts 1 + count times
//!  UNHALT_CYCLE     01 | n u8 | n × RVA u32                             2 + 4n bytes
//!  RETIRE_INSTR     02 | n u8 | n × RVA u32
//!  RETIRE_BR_INSTR  03 | n u8 | n × RVA u32
//!  L1_ICACHE_MISS   04 | n u8 | n × RVA u32
//!  L1_DCACHE_MISS   05 | n u8 | n × RVA u32
//!  ETW_INSTR        41 | n u8 | n × RVA u32
//!  LBR              10 | n u8 | n × (to u32, from u32)                  2 + 8n bytes
//!                   the branch target comes first on disk
//!  ETW_CALLSTACK    42 | n u8 | n × frame RVA u32                       2 + 4n bytes
//!
//!  BINARY_ID progid 0, then RETIRE_INSTR [0x1000]:
//!  81 00 | 00 00 | 0A 00 00 00 || 02 01 | 00 10 00 00
//!  LBR [0x3000 -> 0x3010]:
//!  10 01 | 10 30 00 00 | 00 30 00 00
//! ```
//!
//! # How `build()` lays the file out
//!
//! The header fields are computed from what was added unless they were set explicitly,
//! in which case the value is written verbatim, however inconsistent. The offsets and
//! capacities that end up in the header also place the data: the string table's bytes go
//! to StringTableOffset, the program-ID entries to ProgramIdTableOffset, and the stream to
//! ProgramIdTableOffset + ProgramIdCapacity × 24. Everything not written is zero.
//!
//! * The counts that would overflow a region are written anyway: all string bytes past
//!   StringTableCapacity, all entries past ProgramIdCapacity.
//! * Where regions overlap, later writes win: the string table first, then the program-ID
//!   entries, then the stream, and last the header, so that its fields always read as set.
//! * The file ends at the end of the stream (at the stream's start when it is empty), or
//!   later only if string or entry bytes (or a patch) lie beyond it. Unused capacity never
//!   lengthens the file past the stream's end, so the decoder never finds padding in the
//!   stream.
//! * Then [`SptBuilder::patch`] and its `patch_u*` helpers overwrite bytes (to make a
//!   header disagree with where the data really is), and [`SptBuilder::truncate`] cuts
//!   the file short.

use std::fmt;

/// IP sample: unhalted core cycles.
pub const UNHALT_CYCLE: u8 = 0x01;
/// IP sample: retired instructions.
pub const RETIRE_INSTR: u8 = 0x02;
/// IP sample: retired branch instructions.
pub const RETIRE_BR_INSTR: u8 = 0x03;
/// IP sample: L1 instruction-cache misses.
pub const L1_ICACHE_MISS: u8 = 0x04;
/// IP sample: L1 data-cache misses.
pub const L1_DCACHE_MISS: u8 = 0x05;
/// IP sample taken by ETW.
pub const ETW_INSTR: u8 = 0x41;
/// Last-branch-record arcs.
pub const LBR: u8 = 0x10;
/// ETW call stack.
pub const ETW_CALLSTACK: u8 = 0x42;
/// Starts the segment of one binary.
pub const BINARY_ID: u8 = 0x81;
/// Makes the next sample record count more than once.
pub const REPEAT: u8 = 0x82;

/// The six IP-sample opcodes, in opcode order.
pub const IP_OPCODES: [u8; 6] = [
    UNHALT_CYCLE,
    RETIRE_INSTR,
    RETIRE_BR_INSTR,
    L1_ICACHE_MISS,
    L1_DCACHE_MISS,
    ETW_INSTR,
];

/// `0x5350543A`, "SPT:" as a multi-character constant.
pub const SIGNATURE: u32 = 0x5350_543A;
/// The only version there is.
pub const VERSION: u32 = 1;
/// Size of the header.
pub const HEADER_SIZE: u64 = 32;
/// Size of one program-ID entry.
pub const PROGRAM_ID_ENTRY_SIZE: u64 = 24;
/// Where [`SptBuilder::new`] puts the string table.
pub const DEFAULT_STRING_TABLE_OFFSET: u32 = 0x20;
/// The string table's capacity in bytes in [`SptBuilder::new`].
pub const DEFAULT_STRING_TABLE_CAPACITY: u16 = 0x4000;
/// The program-ID table's capacity in entries in [`SptBuilder::new`].
pub const DEFAULT_PROGRAM_ID_CAPACITY: u16 = 0x100;
/// Where the stream starts in the standard layout: 0x20 + 0x4000 + 0x100 × 24.
pub const DEFAULT_STREAM_START: u64 = 0x5820;

/// File offsets of the header fields, for [`SptBuilder::patch_u32`] and
/// [`SptBuilder::patch_u16`].
pub mod field {
    /// u32 Signature.
    pub const SIGNATURE: u64 = 0x00;
    /// u32 Version.
    pub const VERSION: u64 = 0x04;
    /// u32 RawDataId.
    pub const RAW_DATA_ID: u64 = 0x08;
    /// u32 TargetArch.
    pub const TARGET_ARCH: u64 = 0x0C;
    /// u32 StringTableOffset.
    pub const STRING_TABLE_OFFSET: u64 = 0x10;
    /// u32 ProgramIdTableOffset.
    pub const PROGRAM_ID_TABLE_OFFSET: u64 = 0x14;
    /// u16 StringTableUsed.
    pub const STRING_TABLE_USED: u64 = 0x18;
    /// u16 StringTableCapacity.
    pub const STRING_TABLE_CAPACITY: u64 = 0x1A;
    /// u16 ProgramIdsUsed.
    pub const PROGRAM_IDS_USED: u64 = 0x1C;
    /// u16 ProgramIdCapacity.
    pub const PROGRAM_ID_CAPACITY: u64 = 0x1E;
}

/// The largest file `build()` agrees to lay out. A header that should point far beyond
/// the end of a small file is made with [`SptBuilder::patch_u32`], not by placing data
/// there.
pub const MAX_FILE_SIZE: u64 = 256 << 20;

/// A GUID as its 16 bytes lie on disk (Windows layout: u32, u16, u16 little-endian, then
/// 8 bytes as they are).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Guid(pub [u8; 16]);

impl Guid {
    /// From the registry form `42AC0098-ADB5-E796-8C0E-161D2814780E`, with or without
    /// braces, in either case. The first three groups are stored little-endian, the last
    /// eight bytes as written. Panics on anything else.
    pub fn parse(s: &str) -> Guid {
        let inner = s
            .strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'))
            .unwrap_or(s);
        let groups: Vec<&str> = inner.split('-').collect();
        let well_formed = groups.len() == 5
            && groups
                .iter()
                .zip([8, 4, 4, 4, 12])
                .all(|(g, len)| g.len() == len && g.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(well_formed, "not a GUID in registry form: {s:?}");
        let hex: String = groups.concat();
        let mut be = [0u8; 16];
        for (i, byte) in be.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
        }
        let d1 = u32::from_be_bytes([be[0], be[1], be[2], be[3]]);
        let d2 = u16::from_be_bytes([be[4], be[5]]);
        let d3 = u16::from_be_bytes([be[6], be[7]]);
        let mut d4 = [0u8; 8];
        d4.copy_from_slice(&be[8..]);
        Guid::from_fields(d1, d2, d3, d4)
    }

    /// From the four fields of a Windows `GUID`.
    pub fn from_fields(data1: u32, data2: u16, data3: u16, data4: [u8; 8]) -> Guid {
        let mut b = [0u8; 16];
        b[0..4].copy_from_slice(&data1.to_le_bytes());
        b[4..6].copy_from_slice(&data2.to_le_bytes());
        b[6..8].copy_from_slice(&data3.to_le_bytes());
        b[8..16].copy_from_slice(&data4);
        Guid(b)
    }

    /// The all-zero GUID.
    pub const fn nil() -> Guid {
        Guid([0; 16])
    }
}

/// The registry form, upper case, without braces:
/// `42AC0098-ADB5-E796-8C0E-161D2814780E`.
impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = &self.0;
        write!(
            f,
            "{:08X}-{:04X}-{:04X}-{:02X}{:02X}-",
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            u16::from_le_bytes([b[4], b[5]]),
            u16::from_le_bytes([b[6], b[7]]),
            b[8],
            b[9]
        )?;
        for byte in &b[10..] {
            write!(f, "{byte:02X}")?;
        }
        Ok(())
    }
}

/// Builds an SPT v1 file in memory. See the module documentation for the layout rules.
#[derive(Clone, Debug, Default)]
pub struct SptBuilder {
    signature: Option<u32>,
    version: Option<u32>,
    raw_data_id: Option<u32>,
    target_arch: Option<u32>,
    string_table_offset: Option<u32>,
    program_id_table_offset: Option<u32>,
    string_table_used: Option<u16>,
    string_table_capacity: Option<u16>,
    program_ids_used: Option<u16>,
    program_id_capacity: Option<u16>,
    strings: Vec<u8>,
    program_ids: Vec<[u8; 24]>,
    stream: Vec<u8>,
    /// Stream-relative offset of each BINARY_ID, and whether build() computes its length.
    binary_ids: Vec<(usize, bool)>,
    patches: Vec<(u64, Vec<u8>)>,
    truncate: Option<u64>,
}

impl SptBuilder {
    /// The standard layout: string table at 0x20 with capacity 0x4000, program-ID table
    /// right after it with capacity 0x100 entries, stream at 0x5820; signature 0x5350543A,
    /// version 1, reserved fields 0.
    pub fn new() -> Self {
        Self::default()
    }

    // ----- Header fields. Each is written verbatim; the offsets and capacities also
    // ----- place the data (see the module documentation).

    /// Signature (default 0x5350543A).
    pub fn signature(&mut self, v: u32) -> &mut Self {
        self.signature = Some(v);
        self
    }

    /// Version (default 1).
    pub fn version(&mut self, v: u32) -> &mut Self {
        self.version = Some(v);
        self
    }

    /// RawDataId (default 0).
    pub fn raw_data_id(&mut self, v: u32) -> &mut Self {
        self.raw_data_id = Some(v);
        self
    }

    /// TargetArch (default 0).
    pub fn target_arch(&mut self, v: u32) -> &mut Self {
        self.target_arch = Some(v);
        self
    }

    /// StringTableOffset (default 0x20); the string table's bytes are written there.
    pub fn string_table_offset(&mut self, v: u32) -> &mut Self {
        self.string_table_offset = Some(v);
        self
    }

    /// ProgramIdTableOffset (default StringTableOffset + StringTableCapacity); the entries
    /// are written there and the stream follows the table's capacity.
    pub fn program_id_table_offset(&mut self, v: u32) -> &mut Self {
        self.program_id_table_offset = Some(v);
        self
    }

    /// StringTableUsed (default: the number of bytes added). Only the header changes: all
    /// bytes added are still written.
    pub fn string_table_used(&mut self, v: u16) -> &mut Self {
        self.string_table_used = Some(v);
        self
    }

    /// StringTableCapacity (default 0x4000).
    pub fn string_table_capacity(&mut self, v: u16) -> &mut Self {
        self.string_table_capacity = Some(v);
        self
    }

    /// ProgramIdsUsed (default: the number of entries added). Only the header changes: all
    /// entries added are still written.
    pub fn program_ids_used(&mut self, v: u16) -> &mut Self {
        self.program_ids_used = Some(v);
        self
    }

    /// ProgramIdCapacity in entries (default 0x100).
    pub fn program_id_capacity(&mut self, v: u16) -> &mut Self {
        self.program_id_capacity = Some(v);
        self
    }

    // ----- Tables.

    /// Appends `s` and a NUL to the string table; returns the byte offset of `s` in it.
    pub fn string(&mut self, s: &str) -> u32 {
        let offset = self.raw_string_bytes(s.as_bytes());
        self.strings.push(0);
        offset
    }

    /// Appends bytes to the string table as they are (no NUL is added); returns the offset
    /// at which they start.
    pub fn raw_string_bytes(&mut self, b: &[u8]) -> u32 {
        let offset = u32::try_from(self.strings.len()).expect("string table beyond 4 GiB");
        self.strings.extend_from_slice(b);
        offset
    }

    /// Appends a program-ID entry; returns its index.
    pub fn program_id(&mut self, guid: Guid, age: u32, string_offset: u32) -> u16 {
        let index = u16::try_from(self.program_ids.len()).expect("more than 65536 program IDs");
        let mut entry = [0u8; 24];
        entry[0..16].copy_from_slice(&guid.0);
        entry[16..20].copy_from_slice(&age.to_le_bytes());
        entry[20..24].copy_from_slice(&string_offset.to_le_bytes());
        self.program_ids.push(entry);
        index
    }

    /// Adds `name` to the string table and a program-ID entry naming it; returns the
    /// entry's index. `guid` is in registry form (see [`Guid::parse`]).
    pub fn binary(&mut self, name: &str, guid: &str, age: u32) -> u16 {
        let offset = self.string(name);
        self.program_id(Guid::parse(guid), age, offset)
    }

    // ----- Event stream: each call appends one record.

    /// BINARY_ID whose length `build()` sets so that the segment ends exactly where the
    /// next BINARY_ID starts, or at the end of the stream.
    pub fn binary_id(&mut self, progid: u16) -> &mut Self {
        self.push_binary_id(progid, 0, true)
    }

    /// BINARY_ID with the given length, written as is.
    pub fn binary_id_with_length(&mut self, progid: u16, length: u32) -> &mut Self {
        self.push_binary_id(progid, length, false)
    }

    fn push_binary_id(&mut self, progid: u16, length: u32, patched: bool) -> &mut Self {
        self.binary_ids.push((self.stream.len(), patched));
        self.stream.extend_from_slice(&[BINARY_ID, 0]);
        self.stream.extend_from_slice(&progid.to_le_bytes());
        self.stream.extend_from_slice(&length.to_le_bytes());
        self
    }

    /// REPEAT: the next sample record counts `1 + count` times.
    pub fn repeat(&mut self, count: u64) -> &mut Self {
        self.stream.extend_from_slice(&[REPEAT, 0]);
        self.stream.extend_from_slice(&count.to_le_bytes());
        self
    }

    /// A record of `opcode`, n, then n RVAs: the layout of the IP samples (0x01..=0x05,
    /// 0x41) and of ETW_CALLSTACK. Any opcode byte is written as given. Panics on more
    /// than 255 RVAs.
    pub fn ip(&mut self, opcode: u8, rvas: &[u32]) -> &mut Self {
        let n = u8::try_from(rvas.len()).expect("at most 255 RVAs in one record");
        self.stream.extend_from_slice(&[opcode, n]);
        for rva in rvas {
            self.stream.extend_from_slice(&rva.to_le_bytes());
        }
        self
    }

    /// LBR with branches given as `(from, to)`; each pair is written `to` first. Panics on
    /// more than 255 pairs.
    pub fn lbr(&mut self, branches: &[(u32, u32)]) -> &mut Self {
        let n = u8::try_from(branches.len()).expect("at most 255 branches in one record");
        self.stream.extend_from_slice(&[LBR, n]);
        for &(from, to) in branches {
            self.stream.extend_from_slice(&to.to_le_bytes());
            self.stream.extend_from_slice(&from.to_le_bytes());
        }
        self
    }

    /// ETW_CALLSTACK with the frames in stream order. Panics on more than 255 frames.
    pub fn callstack(&mut self, frames: &[u32]) -> &mut Self {
        self.ip(ETW_CALLSTACK, frames)
    }

    /// Arbitrary bytes in the stream. They are not looked into: a BINARY_ID written here
    /// does not end the segment of a patched one before it.
    pub fn raw(&mut self, bytes: &[u8]) -> &mut Self {
        self.stream.extend_from_slice(bytes);
        self
    }

    // ----- After the layout.

    /// Overwrites bytes at a file offset after the layout, extending the file with zeros
    /// if needed. Patches apply in the order given.
    pub fn patch(&mut self, offset: u64, bytes: &[u8]) -> &mut Self {
        self.patches.push((offset, bytes.to_vec()));
        self
    }

    /// [`patch`](Self::patch) with a little-endian u16, e.g. at a [`field`] offset.
    pub fn patch_u16(&mut self, offset: u64, v: u16) -> &mut Self {
        self.patch(offset, &v.to_le_bytes())
    }

    /// [`patch`](Self::patch) with a little-endian u32, e.g. at a [`field`] offset.
    pub fn patch_u32(&mut self, offset: u64, v: u32) -> &mut Self {
        self.patch(offset, &v.to_le_bytes())
    }

    /// [`patch`](Self::patch) with a little-endian u64.
    pub fn patch_u64(&mut self, offset: u64, v: u64) -> &mut Self {
        self.patch(offset, &v.to_le_bytes())
    }

    /// Cuts the finished file to `len` bytes (after the patches); no effect on a file
    /// that is not longer.
    pub fn truncate(&mut self, len: u64) -> &mut Self {
        self.truncate = Some(len);
        self
    }

    // ----- Layout.

    /// The StringTableOffset that `build()` writes (and places the string table at).
    pub fn string_table_start(&self) -> u64 {
        u64::from(
            self.string_table_offset
                .unwrap_or(DEFAULT_STRING_TABLE_OFFSET),
        )
    }

    /// The ProgramIdTableOffset that `build()` writes (and places the entries at), as a
    /// u64: when derived from the string table it may not fit the header's u32, and then
    /// `build()` panics.
    pub fn program_id_table_start(&self) -> u64 {
        match self.program_id_table_offset {
            Some(v) => u64::from(v),
            None => {
                self.string_table_start()
                    + u64::from(
                        self.string_table_capacity
                            .unwrap_or(DEFAULT_STRING_TABLE_CAPACITY),
                    )
            }
        }
    }

    /// The file offset at which the stream starts: ProgramIdTableOffset +
    /// ProgramIdCapacity × 24.
    pub fn stream_start(&self) -> u64 {
        self.program_id_table_start()
            + u64::from(
                self.program_id_capacity
                    .unwrap_or(DEFAULT_PROGRAM_ID_CAPACITY),
            ) * PROGRAM_ID_ENTRY_SIZE
    }

    /// The file offset at which the next record appended to the stream will start.
    pub fn next_record_offset(&self) -> u64 {
        self.stream_start() + self.stream.len() as u64
    }

    /// The 32 header bytes `build()` writes (before any patch).
    pub fn header(&self) -> [u8; 32] {
        let pto = self.program_id_table_start();
        let pto = u32::try_from(pto).unwrap_or_else(|_| {
            panic!("ProgramIdTableOffset {pto:#x} does not fit in u32; set it explicitly")
        });
        let used = self.string_table_used.unwrap_or_else(|| {
            u16::try_from(self.strings.len())
                .expect("more than 65535 string bytes: set string_table_used explicitly")
        });
        let ids = self.program_ids_used.unwrap_or_else(|| {
            u16::try_from(self.program_ids.len())
                .expect("more than 65535 program IDs: set program_ids_used explicitly")
        });
        let mut h = [0u8; 32];
        let u32s = [
            self.signature.unwrap_or(SIGNATURE),
            self.version.unwrap_or(VERSION),
            self.raw_data_id.unwrap_or(0),
            self.target_arch.unwrap_or(0),
            self.string_table_offset
                .unwrap_or(DEFAULT_STRING_TABLE_OFFSET),
            pto,
        ];
        for (i, v) in u32s.iter().enumerate() {
            h[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
        }
        let u16s = [
            used,
            self.string_table_capacity
                .unwrap_or(DEFAULT_STRING_TABLE_CAPACITY),
            ids,
            self.program_id_capacity
                .unwrap_or(DEFAULT_PROGRAM_ID_CAPACITY),
        ];
        for (i, v) in u16s.iter().enumerate() {
            h[24 + 2 * i..24 + 2 * i + 2].copy_from_slice(&v.to_le_bytes());
        }
        h
    }

    /// The event stream's bytes with every patched BINARY_ID length filled in.
    pub fn stream_bytes(&self) -> Vec<u8> {
        let mut stream = self.stream.clone();
        for (i, &(at, patched)) in self.binary_ids.iter().enumerate() {
            if !patched {
                continue;
            }
            let end = self
                .binary_ids
                .get(i + 1)
                .map_or(stream.len(), |&(next, _)| next);
            let length = u32::try_from(end - (at + 4)).expect("segment longer than 4 GiB");
            stream[at + 4..at + 8].copy_from_slice(&length.to_le_bytes());
        }
        stream
    }

    /// Lays the file out. See the module documentation for the rules.
    pub fn build(&self) -> Vec<u8> {
        let header = self.header();
        let stream = self.stream_bytes();
        let st = self.string_table_start();
        let pt = self.program_id_table_start();
        let ss = self.stream_start();
        let entries_len = self.program_ids.len() as u64 * PROGRAM_ID_ENTRY_SIZE;

        let mut len = (ss + stream.len() as u64).max(HEADER_SIZE);
        if !self.strings.is_empty() {
            len = len.max(st + self.strings.len() as u64);
        }
        if entries_len > 0 {
            len = len.max(pt + entries_len);
        }
        for (at, bytes) in &self.patches {
            len = len.max(at + bytes.len() as u64);
        }
        assert!(
            len <= MAX_FILE_SIZE,
            "this layout needs a file of {len:#x} bytes; to make a header point past the \
             end of a small file, patch the field instead (patch_u32(field::..., v))"
        );

        let mut file = vec![0u8; len as usize];
        let mut put = |at: u64, bytes: &[u8]| {
            let at = at as usize;
            file[at..at + bytes.len()].copy_from_slice(bytes);
        };
        put(st, &self.strings);
        for (i, entry) in self.program_ids.iter().enumerate() {
            put(pt + i as u64 * PROGRAM_ID_ENTRY_SIZE, entry);
        }
        put(ss, &stream);
        put(0, &header);
        for (at, bytes) in &self.patches {
            put(*at, bytes);
        }
        if let Some(t) = self.truncate {
            file.truncate(t.min(len) as usize);
        }
        file
    }
}
