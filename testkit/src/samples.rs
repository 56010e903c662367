//! The bundled sample trace, `testdata/sample.spt`.
//!
//! A small trace that looks like one SPTAggregate would write for an application, one of
//! its DLLs and the C runtime: three binaries, interleaved segments, every opcode, RVAs
//! clustered in a few hot functions, a few large REPEAT counts (one of 2^64 - 1) and two
//! empty records. It is valid: decoding it gives no diagnostic at all.
//!
//! The trace is generated from a fixed seed with the [`builder`](crate::builder);
//! [`sample_records`] gives the records as values, so that tests can compute what a decoder
//! must report without decoding.

use crate::builder::{
    ETW_INSTR, Guid, L1_DCACHE_MISS, L1_ICACHE_MISS, LBR, RETIRE_BR_INSTR, RETIRE_INSTR,
    SptBuilder, UNHALT_CYCLE,
};

/// One binary of the sample, in program-ID order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SampleBinary {
    /// Name in the string table.
    pub name: &'static str,
    /// PDB GUID in registry form.
    pub guid: &'static str,
    /// PDB age.
    pub age: u32,
    /// Offset of the name in the string table.
    pub string_offset: u32,
    /// Hot functions as (start RVA, size in bytes), hottest first.
    pub functions: &'static [(u32, u32)],
}

/// The sample's three binaries; index = progid.
pub const SAMPLE_BINARIES: [SampleBinary; 3] = [
    SampleBinary {
        name: "contoso_app.exe",
        guid: "7B3F9C21-5D4E-4A8B-9F12-6C0D3E8A1B57",
        age: 3,
        string_offset: 0,
        functions: &[
            (0x0000_2F10, 0x640), // RenderFrame
            (0x0000_7B20, 0x910), // UpdateEntities
            (0x0000_1A40, 0x1D0), // WinMain loop
            (0x0000_9A00, 0x180), // HashLookup
            (0x0000_4C80, 0x2A0), // ParseConfig
        ],
    },
    SampleBinary {
        name: "contoso_core.dll",
        guid: "E1A45D08-92C3-4F6B-B7D2-0A9C5E3F8164",
        age: 12,
        string_offset: 16,
        functions: &[
            (0x0001_3A80, 0xC40), // Inflate
            (0x0001_1040, 0x300), // Mat4Multiply
            (0x0002_4E60, 0x5A0), // SpatialGrid::Query
            (0x0001_F200, 0x220), // Crc32
        ],
    },
    SampleBinary {
        name: "ucrtbase.dll",
        guid: "C6E0B2F4-3A71-4D95-8E2B-F4A7D1C09E36",
        age: 1,
        string_offset: 33,
        functions: &[
            (0x0003_B4C0, 0x340), // memcpy
            (0x0001_A9F0, 0x120), // malloc
            (0x0003_BD00, 0x1C0), // memset
            (0x0001_AB30, 0x0A0), // free
            (0x0003_C5A0, 0x080), // strlen
        ],
    },
];

/// One record of the sample's stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SampleRecord {
    /// BINARY_ID of this progid; its length always matches its segment.
    BinaryId(u16),
    /// REPEAT with this count.
    Repeat(u64),
    /// An IP sample record: opcode and RVAs.
    Ip(u8, Vec<u32>),
    /// LBR with branches as (from, to).
    Lbr(Vec<(u32, u32)>),
    /// ETW_CALLSTACK frames in stream order.
    Callstack(Vec<u32>),
}

/// The segments as (progid, number of sample records).
const SEGMENTS: [(u16, usize); 12] = [
    (0, 10),
    (1, 8),
    (0, 6),
    (2, 7),
    (1, 12),
    (0, 9),
    (2, 5),
    (1, 6),
    (0, 11),
    (2, 8),
    (1, 7),
    (0, 6),
];

/// REPEAT counts placed on purpose, as (segment, sample record in it, count).
const LARGE_REPEATS: [(usize, usize, u64); 5] = [
    (1, 2, 1_000),
    (4, 5, 65_535),
    (6, 1, u64::MAX),
    (8, 3, 1 << 32),
    (10, 0, 250_000),
];

/// Empty records placed on purpose, as (segment, sample record in it, opcode).
const EMPTY_RECORDS: [(usize, usize, u8); 2] = [(3, 4, LBR), (7, 2, RETIRE_INSTR)];

/// xorshift32: small, fixed, and the same everywhere.
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }

    /// A function of `binary`, the hotter ones more often (weights 5, 4, 3, ...).
    fn function(&mut self, binary: &SampleBinary) -> (u32, u32) {
        let n = binary.functions.len() as u32;
        let total = n * (n + 1) / 2;
        let mut pick = self.below(total);
        for (i, &f) in binary.functions.iter().enumerate() {
            let weight = n - i as u32;
            if pick < weight {
                return f;
            }
            pick -= weight;
        }
        unreachable!()
    }

    /// An RVA inside a hot function of `binary`.
    fn rva(&mut self, binary: &SampleBinary) -> u32 {
        let (start, size) = self.function(binary);
        start + self.below(size)
    }
}

/// The sample's records, in stream order.
pub fn sample_records() -> Vec<SampleRecord> {
    let mut rng = Rng(0x5EED_C0DE);
    let mut stacks = 0;
    let mut out = Vec::new();
    for (s, &(progid, count)) in SEGMENTS.iter().enumerate() {
        let bin = &SAMPLE_BINARIES[progid as usize];
        out.push(SampleRecord::BinaryId(progid));
        for r in 0..count {
            if let Some(&(_, _, c)) = LARGE_REPEATS.iter().find(|x| (x.0, x.1) == (s, r)) {
                out.push(SampleRecord::Repeat(c));
            } else if rng.below(4) == 0 {
                out.push(SampleRecord::Repeat(u64::from(rng.below(8))));
            }
            if let Some(&(_, _, op)) = EMPTY_RECORDS.iter().find(|x| (x.0, x.1) == (s, r)) {
                out.push(match op {
                    LBR => SampleRecord::Lbr(Vec::new()),
                    _ => SampleRecord::Ip(op, Vec::new()),
                });
                continue;
            }
            let record = match rng.below(20) {
                0..=4 => ip(&mut rng, bin, RETIRE_INSTR),
                5..=7 => ip(&mut rng, bin, UNHALT_CYCLE),
                8..=9 => ip(&mut rng, bin, RETIRE_BR_INSTR),
                10 => ip(&mut rng, bin, L1_ICACHE_MISS),
                11 => ip(&mut rng, bin, L1_DCACHE_MISS),
                12 => ip(&mut rng, bin, ETW_INSTR),
                13..=15 => lbr(&mut rng, bin),
                _ => {
                    // Depths go round 2..=8 in a fixed order, so that all of them occur.
                    let depth = 2 + (stacks * 3 % 7);
                    stacks += 1;
                    callstack(&mut rng, bin, depth)
                }
            };
            out.push(record);
        }
    }
    out
}

/// 1 to 6 RVAs, as a sampler that flushes a small batch would write them.
fn ip(rng: &mut Rng, bin: &SampleBinary, opcode: u8) -> SampleRecord {
    let n = 1 + rng.below(6);
    SampleRecord::Ip(opcode, (0..n).map(|_| rng.rva(bin)).collect())
}

/// 4 to 16 branches: loop back-edges inside a function, and calls to the start of
/// another one.
fn lbr(rng: &mut Rng, bin: &SampleBinary) -> SampleRecord {
    let n = 4 + rng.below(13);
    let branches = (0..n)
        .map(|_| {
            let (start, size) = rng.function(bin);
            let from = start + size / 4 + rng.below(size - size / 4);
            let to = if rng.below(3) == 0 {
                rng.function(bin).0
            } else {
                start + rng.below(from - start)
            };
            (from, to)
        })
        .collect();
    SampleRecord::Lbr(branches)
}

/// `depth` frames, each a return address inside a hot function.
fn callstack(rng: &mut Rng, bin: &SampleBinary, depth: u32) -> SampleRecord {
    SampleRecord::Callstack((0..depth).map(|_| rng.rva(bin)).collect())
}

/// The sample as a builder, for tests that want to add to it or know its offsets.
pub fn sample_builder() -> SptBuilder {
    let mut b = SptBuilder::new();
    for bin in &SAMPLE_BINARIES {
        let name = b.string(bin.name);
        assert_eq!(name, bin.string_offset, "string offset of {}", bin.name);
        b.program_id(Guid::parse(bin.guid), bin.age, name);
    }
    for record in sample_records() {
        match record {
            SampleRecord::BinaryId(progid) => b.binary_id(progid),
            SampleRecord::Repeat(count) => b.repeat(count),
            SampleRecord::Ip(opcode, rvas) => b.ip(opcode, &rvas),
            SampleRecord::Lbr(branches) => b.lbr(&branches),
            SampleRecord::Callstack(frames) => b.callstack(&frames),
        };
    }
    b
}

/// The bytes of `testdata/sample.spt`.
pub fn sample_trace() -> Vec<u8> {
    sample_builder().build()
}

/// `testdata/broken.spt`, the README's damaged trace: one binary, `app.exe`, and three
/// problems in its stream.
///
/// ```text
/// 0x5820  BINARY_ID progid 0, length 28          its segment ends at 0x5840
/// 0x5828  RETIRE_INSTR n = 3
/// 0x5836  UNHALT_CYCLE n = 1
/// 0x583C  07                                     unknown opcode: skipped to 0x5840
/// 0x5840  BINARY_ID progid 5, length 20          progid-out-of-range: the table has 1
/// 0x5848  RETIRE_INSTR n = 1
/// 0x584E  REPEAT count 3                         dangling-repeat: the stream ends
/// 0x5858  end of file
/// ```
pub fn broken_trace() -> Vec<u8> {
    let mut b = SptBuilder::new();
    b.binary("app.exe", "42AC0098-ADB5-E796-8C0E-161D2814780E", 1);
    b.binary_id_with_length(0, 28)
        .ip(RETIRE_INSTR, &[0x1000, 0x1004, 0x1010])
        .ip(UNHALT_CYCLE, &[0x1020])
        .raw(&[0x07, 0, 0, 0]);
    b.binary_id_with_length(5, 20)
        .ip(RETIRE_INSTR, &[0x2000])
        .repeat(3);
    b.build()
}

/// `testdata/swapped.spt`, the README's trace whose signature was written in the wrong byte
/// order: the sample with its first four bytes reversed.
pub fn swapped_trace() -> Vec<u8> {
    let mut t = sample_trace();
    t[..4].reverse();
    t
}
