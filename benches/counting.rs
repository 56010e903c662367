//! The counting of a summary alone, per key update, on both synthetic profiles: the
//! decoded records of a 64 MiB trace, held in memory, counted on one thread.
//!
//! ```text
//! cargo bench --bench counting
//! ```
//!
//! `summary` is what `/summary` runs (its cache-line tables with prefetching); `fxhashmap`
//! counts the same keys in the general map a crate gives (hashbrown's, as `std`'s
//! `HashMap`, with `rustc-hash`'s hasher), one map per binary and table as a summary keeps:
//! the benchmark that keeps the hand-written tables honest.
//!
//! `counting/realistic-kinds` counts the realistic profile's records of one kind at a time
//! (IP samples, LBR, call stacks), each twice: as they are (`memory`), and with every RVA
//! masked to one of 64 values (`cache`), so that each binary's tables stay in the L1 and L2
//! caches. The first is what a key costs; the second what its instructions cost, the memory
//! system left out.

use std::collections::HashMap;
use std::hint::black_box;
use std::io::{self, Cursor};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rustc_hash::FxBuildHasher;
use sptdump::analysis::summary::Summary;
use sptdump::format::decode::{Decoder, Sink};
use sptdump::format::diag::Diagnostic;
use sptdump::format::opcode::Opcode;
use sptdump::format::record::{Record, SampleKind, Samples};
use sptdump_testkit::synth::{self, Profile};

/// A sample record, owned: its payload is a range of [`Records::bytes`].
struct Owned {
    opcode: Opcode,
    progid: Option<u16>,
    hits: u128,
    count: u8,
    payload: std::ops::Range<usize>,
}

/// The sample records of a trace.
#[derive(Default)]
struct Records {
    records: Vec<Owned>,
    bytes: Vec<u8>,
}

impl Sink for Records {
    fn record(&mut self, record: &Record<'_>) -> io::Result<()> {
        if let Record::Samples(s) = record {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(s.payload);
            self.records.push(Owned {
                opcode: s.opcode,
                progid: s.progid,
                hits: s.hits,
                count: s.count,
                payload: start..self.bytes.len(),
            });
        }
        Ok(())
    }
    fn diagnostic(&mut self, d: Diagnostic) -> io::Result<()> {
        panic!("the synthetic trace is well formed: {d:?}")
    }
}

impl Records {
    fn of(profile: Profile) -> (Records, u64) {
        let mut trace = Vec::new();
        let (_, keys) = synth::write_profile(&mut trace, 64 << 20, 7, profile).unwrap();
        let start = 0x20 + 0x4000 + 0x100 * 24;
        let mut records = Records::default();
        Decoder::new(Cursor::new(&trace[start..]), start as u64, None, 4)
            .run(&mut records)
            .unwrap();
        (records, keys)
    }

    /// The records of the kinds `keep` picks, their RVAs masked with `mask`, and how many
    /// key updates they make.
    fn subset(&self, keep: impl Fn(SampleKind) -> bool, mask: u32) -> (Records, u64) {
        let mut out = Records::default();
        let mut keys = 0u64;
        self.each(|s| {
            if !keep(s.kind()) {
                return;
            }
            keys += match s.kind() {
                SampleKind::Ip(_) => s.rvas().len() as u64,
                SampleKind::Lbr => s.branches().len() as u64,
                SampleKind::CallStack => s.rvas().len().saturating_sub(1) as u64,
            };
            let start = out.bytes.len();
            for word in s.payload.chunks_exact(4) {
                let rva = u32::from_le_bytes(word.try_into().unwrap()) & mask;
                out.bytes.extend_from_slice(&rva.to_le_bytes());
            }
            out.records.push(Owned {
                opcode: s.opcode,
                progid: s.progid,
                hits: s.hits,
                count: s.count,
                payload: start..out.bytes.len(),
            });
        });
        (out, keys)
    }

    fn each(&self, mut f: impl FnMut(&Samples<'_>)) {
        for r in &self.records {
            f(&Samples::new(
                0,
                r.opcode,
                r.progid,
                r.hits,
                r.count,
                &self.bytes[r.payload.clone()],
            ));
        }
    }
}

type Map<K> = HashMap<K, u128, FxBuildHasher>;

/// A binary's tables as general maps: one per IP event, LBR and call stacks.
type Tables = ([Map<u32>; 6], Map<[u32; 2]>, Map<[u32; 2]>);

/// A summary's tables as general maps, per program ID.
#[derive(Default)]
struct Maps {
    binaries: HashMap<Option<u16>, Tables>,
}

impl Maps {
    fn add(&mut self, s: &Samples<'_>) {
        let (ip, lbr, stacks) = self.binaries.entry(s.progid).or_default();
        let hits = s.hits;
        match s.kind() {
            SampleKind::Ip(op) => {
                let map = &mut ip[op.ip_index().unwrap()];
                s.rvas().iter().for_each(|rva| count(map, rva, hits));
            }
            SampleKind::Lbr => s
                .branches()
                .iter()
                .for_each(|b| count(lbr, [b.from, b.to], hits)),
            SampleKind::CallStack => s
                .rvas()
                .arcs()
                .for_each(|b| count(stacks, [b.from, b.to], hits)),
        }
    }
}

fn count<K: std::hash::Hash + Eq>(map: &mut Map<K>, key: K, hits: u128) {
    let h = map.entry(key).or_insert(0);
    *h = h.saturating_add(hits);
}

fn benches(c: &mut Criterion) {
    for (name, profile) in [("bench", Profile::Bench), ("realistic", Profile::Realistic)] {
        let (records, keys) = Records::of(profile);
        let mut g = c.benchmark_group(format!("counting/{name}"));
        g.throughput(Throughput::Elements(keys));
        g.sample_size(10);
        g.bench_function("summary", |b| {
            b.iter(|| {
                let mut summary = Summary::new(10);
                records.each(|s| summary.add(s));
                black_box(summary)
            })
        });
        g.bench_function("fxhashmap", |b| {
            b.iter(|| {
                let mut maps = Maps::default();
                records.each(|s| maps.add(s));
                black_box(maps)
            })
        });
        g.finish();
    }
    let (records, _) = Records::of(Profile::Realistic);
    let mut g = c.benchmark_group("counting/realistic-kinds");
    g.sample_size(10);
    for kind in ["ip", "lbr", "stacks"] {
        let keep = |k: SampleKind| match k {
            SampleKind::Ip(_) => kind == "ip",
            SampleKind::Lbr => kind == "lbr",
            SampleKind::CallStack => kind == "stacks",
        };
        for (place, mask) in [("memory", u32::MAX), ("cache", 0xfc)] {
            let (subset, keys) = records.subset(keep, mask);
            g.throughput(Throughput::Elements(keys));
            g.bench_function(format!("{kind}/{place}"), |b| {
                b.iter(|| {
                    let mut summary = Summary::new(10);
                    subset.each(|s| summary.add(s));
                    black_box(summary)
                })
            });
        }
    }
    g.finish();
}

criterion_group!(counting, benches);
criterion_main!(counting);
