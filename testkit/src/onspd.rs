//! LBR records drawn over an SPD's code, for the benchmark of `/compare TRACE SPD`: the
//! trace the SPD matches (its binary, GUID and age), each record a chain of 16 branches
//! inside one of the functions the SPD counts, drawn by their weight, its pairs stored newest
//! first, with an IP sample beside it. A random draw, not a program's execution: a load to
//! time the mapping of ranges onto blocks, never shown as what a program did.

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
    let mut weighted: Vec<(u32, u32, u128)> = Vec::new();
    let mut total = 0u128;
    for (i, f) in spd.functions.iter().enumerate() {
        let w: u128 = spd.blocks.all()[spd.blocks.of_function(i)]
            .iter()
            .map(|b| b.weight())
            .sum();
        if f.emitted() && w > 0 {
            total += w;
            weighted.push((f.rva, f.size, total));
        }
    }
    assert!(!weighted.is_empty(), "the SPD counts no function with code");
    let mut rng = Rng(seed | 1);
    let mut b = SptBuilder::new();
    let guid = registry_form(&header.spd.guid);
    let progid = b.binary(&header.spd.binary, &guid, header.spd.age);
    b.binary_id(progid);
    let mut chain = Vec::with_capacity(16);
    for r in 0..records {
        let draw = u128::from(rng.below(u64::MAX)) * total / u128::from(u64::MAX);
        let at = weighted.partition_point(|&(.., upto)| upto <= draw);
        let (rva, size, _) = weighted[at.min(weighted.len() - 1)];
        let last = rva + (size - 1);
        chain.clear();
        let mut to = rva + rng.below(u64::from(size)) as u32;
        chain.push((rva + rng.below(u64::from(size)) as u32, to));
        for _ in 1..16 {
            let from = to + rng.below(u64::from(last - to) + 1) as u32;
            to = rva + rng.below(u64::from(size)) as u32;
            chain.push((from, to));
        }
        chain.reverse();
        if r % 3 == 0 {
            b.repeat(rng.below(4));
        }
        b.lbr(&chain);
        b.ip(RETIRE_INSTR, &[chain[0].0]);
    }
    b.build()
}
