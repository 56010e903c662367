//! LBR records drawn over an SPD's code, for the benchmark of `/compare TRACE SPD`: the
//! trace the SPD matches (its binary, GUID and age), each record a chain of 16 branches
//! inside one of the functions the SPD counts, drawn by their weight, its pairs stored newest
//! first, with an IP sample in the same function's code beside it. A branch goes to the start of one of the function's
//! code ranges and is taken from the last byte of one of the next three, as branches go
//! between blocks, so arcs repeat as a real profile's do. A random draw, not a program's execution:
//! a load to time the mapping of ranges onto blocks, never shown as what a program did.

use sptdump::format::progid::registry_form;
use sptdump::image::spd::Header;
use sptdump::image::spdprofile::SpdProfile;

use crate::builder::{RETIRE_INSTR, SptBuilder};

/// xorshift64*.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

/// A trace of `records` LBR records (and as many IP samples) over the code of `spd`, whose
/// header is `header`; the same seed always gives the same bytes.
pub fn trace(header: &Header, spd: &SpdProfile, records: usize, seed: u64) -> Vec<u8> {
    // Per function the SPD counts: where its code ranges start and end, and its weight
    // summed with those before it.
    let mut weighted: Vec<(Vec<u32>, Vec<u32>, u128)> = Vec::new();
    let mut total = 0u128;
    for (i, f) in spd.functions.iter().enumerate() {
        let blocks = &spd.blocks.all()[spd.blocks.of_function(i)];
        let w: u128 = blocks.iter().map(|b| b.weight()).sum();
        if !f.emitted() || w == 0 {
            continue;
        }
        // Any SPD that reads: a range of no bytes, or one past the last RVA, is passed over.
        let ranges = blocks
            .iter()
            .flat_map(|b| spd.blocks.ranges(b).iter().copied())
            .filter_map(|(rva, len)| Some((rva, rva.checked_add(len.checked_sub(1)?)?)));
        let (mut starts, mut ends): (Vec<u32>, Vec<u32>) = ranges.unzip();
        if starts.is_empty() {
            continue;
        }
        starts.sort_unstable();
        ends.sort_unstable();
        total += w;
        weighted.push((starts, ends, total));
    }
    let mut rng = Rng(seed | 1);
    let mut b = SptBuilder::new();
    let guid = registry_form(&header.spd.guid);
    let progid = b.binary(&header.spd.binary, &guid, header.spd.age);
    b.binary_id(progid);
    let mut chain = Vec::with_capacity(16);
    // An SPD that counts no code holds no record.
    let records = if weighted.is_empty() { 0 } else { records };
    for r in 0..records {
        let draw =
            (u128::from(rng.below(u64::MAX)) << 64 | u128::from(rng.below(u64::MAX))) % total;
        let at = weighted.partition_point(|&(.., upto)| upto <= draw);
        let (starts, ends, _) = &weighted[at.min(weighted.len() - 1)];
        let mut pick = |from: &[u32]| from[rng.below(from.len() as u64) as usize];
        chain.clear();
        let mut to = pick(starts);
        chain.push((pick(ends), to));
        for _ in 1..16 {
            // A run of code straight on from `to` to the last byte of its range or of one of
            // the next two (a conditional branch or two not taken), as runs between taken
            // branches are short.
            let later = ends.partition_point(|&e| e < to);
            let next = &ends[later..ends.len().min(later + 3)];
            let from = match next {
                [] => to,
                next => pick(next),
            };
            to = pick(starts);
            chain.push((from, to));
        }
        chain.reverse();
        if r % 3 == 0 {
            b.repeat(rng.below(4));
        }
        b.lbr(&chain);
        // The IP sample: any byte of the function's code, as a sampled instruction is.
        let (lo, hi) = (starts[0], ends[ends.len() - 1].max(starts[0]));
        b.ip(
            RETIRE_INSTR,
            &[lo + rng.below(u64::from(hi - lo) + 1) as u32],
        );
    }
    b.build()
}
