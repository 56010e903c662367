//! The samples of a profile, encoded field by field as they are made, without a message
//! held per sample.

use std::collections::BTreeMap;
use std::io::{self, Write};

use super::addresses::*;
use super::proto::*;
use super::wire::*;
use crate::analysis::Counted;
use crate::analysis::stacks::StackCounts;
use crate::engine::index::AddressIndex;
use crate::format::stackorder::StackOrder;

/// The call stacks as decoded, as the profile is given them: borrowed, or handed over when
/// nothing after it reads them, to be let go of once their samples are written (the other
/// samples come after them when the profile shows the stacks first).
pub(crate) enum Stacks<'a> {
    /// Read, and left as they are.
    Borrowed(&'a StackCounts),
    /// Read, and let go of once written.
    Handed(StackCounts),
}

impl Stacks<'_> {
    pub(super) fn get(&self) -> &StackCounts {
        match self {
            Stacks::Borrowed(stacks) => stacks,
            Stacks::Handed(stacks) => stacks,
        }
    }

    /// Lets go of the stacks when they were handed over: memory alone.
    fn let_go(&mut self) {
        if let Stacks::Handed(stacks) = self {
            *stacks = StackCounts::default();
        }
    }
}

/// What writing found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Written {
    /// Whether a value above 2^63 - 1 was clamped to it.
    pub clamped: bool,
}

/// The samples of a profile, a value per sample type each, encoded as they are made.
pub(super) struct SampleList<'a, W> {
    pub(super) types: &'a [String],
    /// What encodes each sample.
    pub(super) encoder: SampleBytes,
    pub(super) location_of: &'a BTreeMap<u16, AddressIndex>,
    /// Every address, in order ([`Addresses::sorted`]).
    pub(super) sorted: &'a [(u16, u32, bool)],
    /// The slot of the type whose samples come first.
    pub(super) default: usize,
    /// Encoded samples on their way to `out`.
    pub(super) buffer: Vec<u8>,
    pub(super) out: &'a mut W,
    pub(super) written: Written,
}

impl<W: Write> SampleList<'_, W> {
    /// Writes every sample: first those of the type shown first, then the others; each
    /// binary's IP samples and branches, then the call stacks, let go of once written when
    /// they were handed over. What writing found.
    pub(super) fn write(
        mut self,
        counted: &Counted<'_>,
        mut stacks: Stacks<'_>,
    ) -> io::Result<Written> {
        for first in [true, false] {
            for p in counted.summary.progids() {
                self.ip(counted, p, first)?;
                self.branches(counted, p, first)?;
            }
            if self.stacks(stacks.get(), counted.order, first)? {
                stacks.let_go();
            }
        }
        self.flush()?;
        Ok(self.written)
    }

    /// A value as pprof holds it: clamped to `i64::MAX`, which [`Written`] remembers.
    pub(super) fn value(&mut self, hits: u128) -> i64 {
        i64::try_from(hits).unwrap_or_else(|_| {
            self.written.clamped = true;
            i64::MAX
        })
    }

    /// The slot of the type `name`, when its samples go in this pass (`first`: those of the
    /// type shown first; else the others).
    pub(super) fn slot(&self, name: &str, first: bool) -> Option<usize> {
        let slot = self
            .types
            .iter()
            .position(|t| t == name)
            .expect("a sample type for every source present");
        ((slot == self.default) == first).then_some(slot)
    }

    /// One sample of `locations` with `value` in the `slot`-th value, labelled with that type.
    pub(super) fn push(
        &mut self,
        locations: impl Iterator<Item = u64>,
        slot: usize,
        value: i64,
    ) -> io::Result<()> {
        self.encoder
            .encode(locations, slot, value, &mut self.buffer);
        // Flushing sooner or later writes the same bytes: this bound is for speed alone
        // (excluded from mutation runs, .cargo/mutants.toml).
        if self.buffer.len() >= 1 << 16 {
            self.flush()?;
        }
        Ok(())
    }

    pub(super) fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buffer)?;
        self.buffer.clear();
        Ok(())
    }

    /// A sample per IP event and address of binary `p`.
    pub(super) fn ip(&mut self, counted: &Counted<'_>, p: u16, first: bool) -> io::Result<()> {
        for t in counted.summary.ip_tables(p) {
            let Some(i) = self.slot(t.source().name(), first) else {
                continue;
            };
            // Values, not counts: half the room to sort.
            let mut values: Vec<(u32, i64)> =
                t.iter().map(|(rva, n)| (rva, self.value(n))).collect();
            // Each address once in a table, so sorting by it alone orders the samples whole.
            radsort::sort_by_key(&mut values, |&(rva, _)| rva);
            let mut walk = Walk::new(self.sorted, p);
            for (rva, value) in values {
                let location = walk.id(rva);
                self.push(std::iter::once(location), i, value)?;
            }
        }
        Ok(())
    }

    /// A two-location sample `[to, from]` per LBR pair of binary `p`.
    pub(super) fn branches(
        &mut self,
        counted: &Counted<'_>,
        p: u16,
        first: bool,
    ) -> io::Result<()> {
        let Some(table) = counted.summary.lbr(p) else {
            return Ok(());
        };
        let Some(i) = self.slot("branches", first) else {
            return Ok(());
        };
        let mut arcs: Vec<([u32; 2], i64)> =
            table.iter().map(|(arc, n)| (arc, self.value(n))).collect();
        // Each arc once in a table, so sorting by its ends alone orders the samples whole.
        radsort::sort_by_key(&mut arcs, |&([from, to], _)| (from, to));
        // In order of their sources: those are walked to, their targets looked up.
        let mut walk = Walk::new(self.sorted, p);
        let index = &self.location_of[&p];
        for ([from, to], value) in arcs {
            let ids = [location_id_of(index, to), walk.id(from)];
            self.push(ids.into_iter(), i, value)?;
        }
        Ok(())
    }

    /// A sample per distinct call stack, its locations leaf first, in the order the trace
    /// first shows the stacks (as they are stored; no viewer reads the samples' order).
    /// Whether it wrote them: in one pass of the two.
    pub(super) fn stacks(
        &mut self,
        stacks: &StackCounts,
        stack_order: StackOrder,
        first: bool,
    ) -> io::Result<bool> {
        if stacks.unique() == 0 {
            return Ok(false);
        }
        let Some(i) = self.slot("stacks", first) else {
            return Ok(false);
        };
        for (p, frames, hits) in stacks.raw() {
            let value = self.value(hits);
            let index = &self.location_of[&p];
            // Every frame's slot asked for before the first is looked up.
            rvas(frames).for_each(|rva| index.prefetch(rva, false));
            let id = |rva: u32| location_id_of(index, rva);
            match stack_order {
                StackOrder::LeafFirst => self.push(rvas(frames).map(id), i, value)?,
                StackOrder::RootFirst => self.push(rvas(frames).rev().map(id), i, value)?,
            }
        }
        Ok(true)
    }
}

/// The location IDs of one binary's addresses, asked for in increasing order: found by
/// walking along the sorted addresses, where a location's ID is its address's place + 1,
/// rather than looked up in the binary's index, a cache miss each.
pub(super) struct Walk<'a> {
    pub(super) sorted: &'a [(u16, u32, bool)],
    pub(super) progid: u16,
    /// The place of the last address found, or of the binary's first.
    pub(super) at: usize,
}

impl<'a> Walk<'a> {
    pub(super) fn new(sorted: &'a [(u16, u32, bool)], progid: u16) -> Self {
        let at = sorted.partition_point(|&(p, _, _)| p < progid);
        Walk { sorted, progid, at }
    }

    /// The location ID of `rva`, at or after the address asked for last.
    pub(super) fn id(&mut self, rva: u32) -> u64 {
        let key = (self.progid, rva);
        let rest = &self.sorted[self.at..];
        self.at += rest.iter().take_while(|&&(p, r, _)| (p, r) < key).count();
        let found = self.sorted.get(self.at).map(|&(p, r, _)| (p, r));
        assert_eq!(
            found,
            Some(key),
            "every address of a sample is the profile's"
        );
        location_id(self.at)
    }
}

/// The samples of a profile encoded by hand, the same bytes as prost encodes each as a
/// [`Sample`] (a unit test holds the two the same): a sample has a value for one type only
/// and the label of that type, so that all but its locations and that value are the same
/// bytes for every sample of a type, and a million samples are not each measured field by
/// field, then written, as a message is.
pub(super) struct SampleBytes {
    /// The number of sample types.
    pub(super) types: usize,
    /// Per type, the `label` field of its samples, encoded.
    pub(super) labels: Vec<Vec<u8>>,
    /// The location IDs of the sample at hand, encoded.
    pub(super) ids: Vec<u8>,
}

impl SampleBytes {
    /// The encoder of samples with a value for each of `labels.len()` types, labelled
    /// `source` = the type's name (`labels`, string indices).
    pub(super) fn new(source: i64, labels: &[i64]) -> Self {
        let labels: Vec<Vec<u8>> = labels
            .iter()
            .map(|&str| {
                let mut field = Vec::new();
                prost::encoding::message::encode(3, &Label { key: source, str }, &mut field);
                field
            })
            .collect();
        SampleBytes {
            types: labels.len(),
            labels,
            ids: Vec::new(),
        }
    }

    /// Appends to `out` the sample of `locations` with `value` in the `slot`-th value (of
    /// [`SampleBytes::types`]), as field 2 of a `Profile`.
    pub(super) fn encode(
        &mut self,
        locations: impl Iterator<Item = u64>,
        slot: usize,
        value: i64,
        out: &mut Vec<u8>,
    ) {
        use prost::encoding::{encode_varint, encoded_len_varint};
        let label = &self.labels[slot];
        self.ids.clear();
        locations.for_each(|id| encode_varint(id, &mut self.ids));
        // An int64 is encoded as the varint of its two's complement (negative values do not
        // arise: they are counts).
        let value = value as u64;
        let ids = self.ids.len() as u64;
        // A packed field of no values is left out, as prost leaves it.
        let ids_field = match ids {
            0 => 0,
            n => 1 + encoded_len_varint(n) + self.ids.len(),
        };
        // Every other value is 0, a byte each.
        let values = (self.types - 1 + encoded_len_varint(value)) as u64;
        let body = ids_field + 1 + encoded_len_varint(values) + values as usize + label.len();
        // Room for the whole sample first: what follows only writes.
        let whole = 1 + encoded_len_varint(body as u64) + body;
        out.reserve(whole);
        let start = out.len();
        out.push(key(2));
        encode_varint(body as u64, out);
        if ids > 0 {
            out.push(key(1));
            encode_varint(ids, out);
            out.extend_from_slice(&self.ids);
        }
        out.push(key(2));
        encode_varint(values, out);
        out.resize(out.len() + slot, 0);
        encode_varint(value, out);
        out.resize(out.len() + self.types - 1 - slot, 0);
        out.extend_from_slice(label);
        debug_assert_eq!(out.len() - start, whole, "a sample fills its room");
    }
}
