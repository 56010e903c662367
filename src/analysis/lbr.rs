//! The LBR records of a trace kept whole: each record is one snapshot of the processor's
//! last-branch stack, and the LBR views read its pairs as a sequence in time (the ranges
//! that ran straight through between two branches), which the summary's pair counts lose.
//!
//! As with the call stacks, decoding keeps one entry per distinct (binary, record as
//! stored) with its summed hits, nothing per record: SPTAggregate already folds identical
//! records with REPEAT, and the same snapshot seen again only adds to its hits.

use std::collections::BTreeMap;

use crate::analysis::slices::{self, SliceCounts};
use crate::format::record::{Branches, SampleKind, Samples};

/// The distinct LBR records of a trace and their hits, as decoded.
#[derive(Debug, Default)]
pub(crate) struct LbrRecords {
    /// The progid (2 bytes, little-endian) and the record's pairs as stored, with the summed
    /// hits.
    records: SliceCounts<u8>,
    /// Per binary: the LBR records with at least two pairs, and their hits.
    totals: BTreeMap<u16, (u64, u128)>,
}

impl LbrRecords {
    /// Counts a sample record, if it is an LBR record of a known binary with at least two
    /// pairs (a record of one pair holds no range), with the next ones, their cache misses
    /// overlapping. [`settle`](LbrRecords::settle) must be called before the records are read.
    #[inline]
    pub(crate) fn add_soon(&mut self, s: &Samples<'_>) {
        let (SampleKind::Lbr, Some(progid)) = (s.kind(), s.progid) else {
            return;
        };
        if s.count < 2 {
            return;
        }
        slices::absorb_totals(&mut self.totals, [(progid, (1, s.hits))]);
        self.records
            .add_soon(&[&progid.to_le_bytes(), s.payload], s.hits);
    }

    /// Counts the records [`add_soon`](LbrRecords::add_soon) holds.
    pub(crate) fn settle(&mut self) {
        self.records.settle();
    }

    /// Renumbers the binaries: `progid` becomes `to(progid)`.
    pub(crate) fn renumber(self, to: impl Fn(u16) -> u16) -> LbrRecords {
        LbrRecords {
            records: slices::renumbered(&self.records, &to),
            totals: slices::renumbered_totals(self.totals, &to),
        }
    }

    /// Adds what `other` counted.
    pub(crate) fn absorb(&mut self, other: LbrRecords) {
        slices::absorb_totals(&mut self.totals, other.totals);
        for (record, hits) in other.records.iter() {
            self.records.add(record, hits);
        }
    }

    /// Every distinct record of `progid`: its pairs as stored, and its hits.
    pub(crate) fn of(&self, progid: u16) -> impl Iterator<Item = (Branches<'_>, u128)> + '_ {
        self.records.iter().filter_map(move |(stored, hits)| {
            let (binary, pairs) = stored.split_at(2);
            (u16::from_le_bytes([binary[0], binary[1]]) == progid)
                .then(|| (Branches::new(pairs), hits))
        })
    }

    /// The binaries with LBR records of two pairs or more, and the records and hits of each,
    /// in progid order.
    pub(crate) fn totals(&self) -> impl Iterator<Item = (u16, u64, u128)> + '_ {
        self.totals
            .iter()
            .map(|(&p, &(records, hits))| (p, records, hits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::opcode::Opcode;
    use crate::format::record::Branch;

    fn record(r: &mut LbrRecords, progid: u16, hits: u128, pairs: &[(u32, u32)]) {
        let payload: Vec<u8> = pairs
            .iter()
            .flat_map(|&(from, to)| [to.to_le_bytes(), from.to_le_bytes()])
            .flatten()
            .collect();
        let s = Samples::new(
            0,
            Opcode::LBR,
            Some(progid),
            hits,
            pairs.len() as u8,
            &payload,
        );
        r.add_soon(&s);
    }

    fn pairs(r: &LbrRecords, progid: u16) -> Vec<(Vec<(u32, u32)>, u128)> {
        r.of(progid)
            .map(|(b, hits)| {
                (
                    b.iter().map(|Branch { from, to }| (from, to)).collect(),
                    hits,
                )
            })
            .collect()
    }

    #[test]
    fn records_are_kept_whole_per_binary_and_the_same_record_adds_its_hits() {
        let mut r = LbrRecords::default();
        record(&mut r, 0, 1, &[(0x10, 0x20), (0x30, 0x40)]);
        record(&mut r, 1, 5, &[(0x10, 0x20), (0x30, 0x40)]);
        record(&mut r, 0, 3, &[(0x10, 0x20), (0x30, 0x40)]);
        record(&mut r, 0, 7, &[(0x10, 0x20)]);
        r.settle();
        assert_eq!(pairs(&r, 0), [(vec![(0x10, 0x20), (0x30, 0x40)], 4)]);
        assert_eq!(pairs(&r, 1), [(vec![(0x10, 0x20), (0x30, 0x40)], 5)]);
        assert_eq!(r.totals().collect::<Vec<_>>(), [(0, 2, 4), (1, 1, 5)]);
    }

    #[test]
    fn renumbered_records_merge_into_the_binary_they_become() {
        let mut a = LbrRecords::default();
        record(&mut a, 0, 2, &[(1, 2), (3, 4)]);
        a.settle();
        let mut b = LbrRecords::default();
        record(&mut b, 3, 5, &[(1, 2), (3, 4)]);
        b.settle();
        a.absorb(b.renumber(|p| if p == 3 { 0 } else { p }));
        assert_eq!(pairs(&a, 0), [(vec![(1, 2), (3, 4)], 7)]);
        assert_eq!(a.totals().collect::<Vec<_>>(), [(0, 2, 7)]);
    }
}
