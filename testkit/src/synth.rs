//! A realistic synthetic SPT trace of any size, for benchmarks.
//!
//! Four binaries; segments of about 64 KiB each, binaries interleaved; IP records of 1–64
//! RVAs over all six IP events, LBR records of 16 or 32 pairs, call stacks of 2–40 frames;
//! a REPEAT before about a third of the sample records; addresses drawn with a skew from a
//! few thousand hot ones per binary, and branches and calls from an address going to one of
//! a few others, as in real code. Call stacks are paths of a program's call graph, so they
//! repeat: each binary has a few thousand of them, drawn with a skew, as a sampled program
//! spends its time on a few hot paths. The same seed always gives the same bytes.
//!
//! The writer lays the bytes out from the format description and shares no code with the
//! decoder, so a benchmark never measures the decoder against its own mirror image.

use std::io::Write;

/// xorshift64*: small, fast, deterministic; the same stream on every machine.
pub struct Rng(pub u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Skewed towards small values: a few addresses get most samples, as in real profiles.
    fn skewed(&mut self, n: u64) -> u64 {
        let a = self.below(n);
        let b = self.below(n);
        a * b / n
    }
}

const BINARIES: [(&str, [u8; 16], u32); 4] = [
    (
        "contoso_app.exe",
        *b"\x21\x9c\x3f\x7b\x4e\x5d\x8b\x4a\x9f\x12\x6c\x0d\x3e\x8a\x1b\x57",
        3,
    ),
    (
        "contoso_core.dll",
        *b"\x08\x5d\xa4\xe1\xc3\x92\x6b\x4f\xb7\xd2\x0a\x9c\x5e\x3f\x81\x64",
        12,
    ),
    (
        "contoso_render.dll",
        *b"\x44\x19\x0b\x5a\x27\x6e\x3c\x41\x88\x0e\x91\x2d\x7c\x55\xa0\x13",
        7,
    ),
    (
        "ucrtbase.dll",
        *b"\xf4\xb2\xe0\xc6\x71\x3a\x95\x4d\x8e\x2b\xf4\xa7\xd1\xc0\x9e\x36",
        1,
    ),
];
const HOT_PER_BINARY: usize = 3000;
/// The distinct call stacks of each binary.
const STACKS_PER_BINARY: usize = 4000;
const SEGMENT_TARGET: usize = 64 * 1024;
const IP_OPCODES: [u8; 6] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x41];

/// How the addresses of a synthetic trace are spread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// A few thousand hot addresses per binary, drawn with a skew, and 4,000 call paths: a
    /// short profile of a small program (the default).
    Bench,
    /// A long production run: per binary about 30,000 distinct sampled addresses per event
    /// kind, 100,000 distinct LBR arcs and 50,000 distinct call-stack arcs, each chunk of
    /// the trace sampling a few thousand of them uniformly, the chunks moving through the
    /// program as the run goes on. Its counting tables outgrow the caches.
    Realistic,
    /// [`Profile::Realistic`] with IP samples only, as from a CPU or VM without LBR and a
    /// run without call stacks: many traces hold nothing else.
    RealisticIp,
}

/// Writes a trace of about `target` bytes (whole segments; at least one) to `out` and
/// returns its size. `seed` picks the trace; the same seed gives the same bytes.
pub fn write_trace(out: &mut impl Write, target: u64, seed: u64) -> std::io::Result<u64> {
    write_profile(out, target, seed, Profile::Bench).map(|(size, _)| size)
}

/// [`write_trace`] with the addresses spread as `profile` says; returns the size and the
/// number of key updates a summary makes of the trace (every RVA of an IP record, every LBR
/// pair, every call-stack arc).
pub fn write_profile(
    out: &mut impl Write,
    target: u64,
    seed: u64,
    profile: Profile,
) -> std::io::Result<(u64, u64)> {
    if profile != Profile::Bench {
        return write_realistic(out, target, seed, profile == Profile::RealisticIp);
    }
    let mut keys = 0u64;
    let mut rng = Rng(seed | 1);

    let mut size = write_tables(out)?;

    let hot: Vec<Vec<u32>> = (0..BINARIES.len())
        .map(|_| {
            (0..HOT_PER_BINARY)
                .map(|_| 0x1000 + (rng.below(0x40_0000) as u32 & !1))
                .collect()
        })
        .collect();
    // Each binary's call paths: walks from a hot address to callers near it.
    let stacks: Vec<Vec<Vec<u32>>> = hot
        .iter()
        .map(|hot| {
            (0..STACKS_PER_BINARY)
                .map(|_| {
                    let n = 2 + rng.below(39) as usize;
                    let mut frame = rng.skewed(hot.len() as u64) as usize;
                    let mut path = Vec::with_capacity(n);
                    for _ in 0..n {
                        path.push(hot[frame]);
                        frame = (frame * 17 + 1 + rng.below(3) as usize) % hot.len();
                    }
                    path
                })
                .collect()
        })
        .collect();

    let mut segment = Vec::with_capacity(SEGMENT_TARGET + 4096);
    loop {
        let progid = rng.below(BINARIES.len() as u64) as usize;
        let hot = &hot[progid];
        segment.clear();
        while segment.len() < SEGMENT_TARGET {
            if rng.below(3) == 0 {
                segment.extend([0x82, 0]);
                let count = match rng.below(100_000) {
                    0 => rng.next(), // now and then a count that needs 128-bit totals
                    1..=99 => rng.below(65_536),
                    _ => rng.below(16) + 1,
                };
                segment.extend(count.to_le_bytes());
            }
            // Indices into the hot addresses; branches and calls from one address go to
            // one of a few others, as they do in real code.
            let n_hot = hot.len() as u64;
            let pick = |rng: &mut Rng| rng.skewed(n_hot) as usize;
            let near = |rng: &mut Rng, from: usize, salt: usize| {
                (from * salt + 1 + rng.below(3) as usize) % hot.len()
            };
            match rng.below(4) {
                0 | 1 => {
                    let n = 1 + rng.below(64) as u8;
                    keys += u64::from(n);
                    segment.extend([IP_OPCODES[rng.below(6) as usize], n]);
                    for _ in 0..n {
                        segment.extend(hot[pick(&mut rng)].to_le_bytes());
                    }
                }
                2 => {
                    let n = if rng.below(2) == 0 { 16 } else { 32 };
                    keys += u64::from(n);
                    segment.extend([0x10, n]);
                    for _ in 0..n {
                        let from = pick(&mut rng);
                        let to = near(&mut rng, from, 31);
                        segment.extend(hot[to].to_le_bytes());
                        segment.extend(hot[from].to_le_bytes());
                    }
                }
                _ => {
                    let path = &stacks[progid][rng.skewed(STACKS_PER_BINARY as u64) as usize];
                    keys += path.len() as u64 - 1;
                    segment.extend([0x42, path.len() as u8]);
                    for frame in path {
                        segment.extend(frame.to_le_bytes());
                    }
                }
            }
        }
        size += write_segment(out, progid, &segment)?;
        if size >= target {
            break;
        }
    }
    Ok((size, keys))
}

/// Writes a BINARY_ID for `progid` and the segment's records; returns their size.
fn write_segment(out: &mut impl Write, progid: usize, segment: &[u8]) -> std::io::Result<u64> {
    let mut binary_id = [0x81u8, 0, 0, 0, 0, 0, 0, 0];
    binary_id[2..4].copy_from_slice(&(progid as u16).to_le_bytes());
    // The length counts from the length field itself: 4 bytes of it, then the records.
    binary_id[4..8].copy_from_slice(&(4 + segment.len() as u32).to_le_bytes());
    out.write_all(&binary_id)?;
    out.write_all(segment)?;
    Ok(8 + segment.len() as u64)
}

/// Writes the header and the tables of the usual layout; returns their size.
fn write_tables(out: &mut impl Write) -> std::io::Result<u64> {
    // The usual layout: strings at 0x20 (capacity 0x4000), program IDs right after
    // (capacity 0x100 entries of 24 bytes), then the stream.
    let mut strings = Vec::new();
    let mut name_offsets = Vec::new();
    for (name, _, _) in BINARIES {
        name_offsets.push(strings.len() as u32);
        strings.extend_from_slice(name.as_bytes());
        strings.push(0);
    }
    let (so, scap, pcap) = (0x20u32, 0x4000u16, 0x100u16);
    let po = so + u32::from(scap);
    let mut header = Vec::with_capacity(32);
    header.extend(0x5350_543Au32.to_le_bytes());
    header.extend(1u32.to_le_bytes());
    header.extend([0u8; 8]);
    header.extend(so.to_le_bytes());
    header.extend(po.to_le_bytes());
    header.extend((strings.len() as u16).to_le_bytes());
    header.extend(scap.to_le_bytes());
    header.extend((BINARIES.len() as u16).to_le_bytes());
    header.extend(pcap.to_le_bytes());
    out.write_all(&header)?;
    strings.resize(usize::from(scap), 0);
    out.write_all(&strings)?;
    let mut table = Vec::new();
    for ((_, guid, age), name) in BINARIES.iter().zip(&name_offsets) {
        table.extend_from_slice(guid);
        table.extend(age.to_le_bytes());
        table.extend(name.to_le_bytes());
    }
    table.resize(usize::from(pcap) * 24, 0);
    out.write_all(&table)?;
    Ok(32 + u64::from(scap) + u64::from(pcap) * 24)
}

/// Distinct addresses per binary in [`Profile::Realistic`], and how many a chunk samples.
const POOL: usize = 30_000;
const WINDOW: usize = 3_000;

/// [`Profile::Realistic`], or with `ip_only` [`Profile::RealisticIp`].
fn write_realistic(
    out: &mut impl Write,
    target: u64,
    seed: u64,
    ip_only: bool,
) -> std::io::Result<(u64, u64)> {
    let mut rng = Rng(seed | 1);
    let mut keys = 0u64;
    let mut size = write_tables(out)?;
    let pool: Vec<Vec<u32>> = (0..BINARIES.len())
        .map(|_| {
            (0..POOL)
                .map(|_| 0x1000 + (rng.below(0x80_0000) as u32 & !1))
                .collect()
        })
        .collect();
    let mut segment = Vec::with_capacity(SEGMENT_TARGET + 4096);
    // The window moves through the program as the run goes on: every 4 MiB it starts
    // elsewhere.
    let mut window = [0usize; BINARIES.len()];
    let mut moved_at = 0u64;
    loop {
        if size >= moved_at {
            for w in &mut window {
                *w = rng.below(POOL as u64) as usize;
            }
            moved_at = size + (4 << 20);
        }
        let progid = rng.below(BINARIES.len() as u64) as usize;
        let pool = &pool[progid];
        let start = window[progid];
        let pick = |rng: &mut Rng| (start + rng.below(WINDOW as u64) as usize) % POOL;
        segment.clear();
        while segment.len() < SEGMENT_TARGET {
            if rng.below(3) == 0 {
                segment.extend([0x82, 0]);
                segment.extend((rng.below(16) + 1).to_le_bytes());
            }
            match rng.below(if ip_only { 2 } else { 4 }) {
                0 | 1 => {
                    let n = 1 + rng.below(64) as u8;
                    keys += u64::from(n);
                    segment.extend([IP_OPCODES[rng.below(6) as usize], n]);
                    for _ in 0..n {
                        segment.extend(pool[pick(&mut rng)].to_le_bytes());
                    }
                }
                2 => {
                    // About 3.3 targets per branch address: 100,000 arcs over 30,000.
                    let n = if rng.below(2) == 0 { 16 } else { 32 };
                    keys += u64::from(n);
                    segment.extend([0x10, n]);
                    for _ in 0..n {
                        let from = pick(&mut rng);
                        let spread = 3 + u64::from(rng.below(10) < 3);
                        let to = (from * 31 + 1 + rng.below(spread) as usize) % POOL;
                        segment.extend(pool[to].to_le_bytes());
                        segment.extend(pool[from].to_le_bytes());
                    }
                }
                _ => {
                    // A stack is a call path: where it starts decides its length and its
                    // frames, so stacks repeat as in a real program (at most 30,000 per
                    // binary). A frame's caller depends on the depth's parity: at most
                    // 60,000 arcs, about 50,000 of them sampled.
                    let start = pick(&mut rng);
                    let n = 2 + (start * 2_654_435_761 % 39) as u8;
                    keys += u64::from(n) - 1;
                    segment.extend([0x42, n]);
                    let mut frame = start;
                    for depth in 0..usize::from(n) {
                        segment.extend(pool[frame].to_le_bytes());
                        frame = (frame * 7919 + 1 + (depth & 1)) % POOL;
                    }
                }
            }
        }
        size += write_segment(out, progid, &segment)?;
        if size >= target {
            break;
        }
    }
    Ok((size, keys))
}
