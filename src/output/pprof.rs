//! `/pprof:FILE`: the trace as a gzipped `profile.proto`, the format of google/pprof, which
//! `go tool pprof`, speedscope and Pyroscope read (docs/output.md, "pprof and speedscope").
//!
//! ```text
//! mapping   one per binary: filename = its name, build_id = its symbol-server key,
//!           starting at 0, so that a location's address is the stored RVA
//! location  one per (binary, address): a line for its function, and with inline frames
//!           one per function inlined there, innermost first, each with its line
//! function  from the PDB (/pdb): its name alone (the binary is the mapping's; pprof's
//!           graph breaks names at dots), its source file and start line; else named as
//!           the address is (`app.exe+0x1A2B`), in the binary
//! sample    IP: one per (binary, event, address), in address order
//!           stacks: one per distinct stack, locations leaf first, as first met
//!           branches: one per LBR pair, locations [to, from], in address order
//! ```
//!
//! A sample has a value for its own type only (pprof gives every sample a value per type:
//! the others are 0) and a `source` label naming that type; those of the type shown first
//! come first, so that `go tool pprof -traces` opens on them.
//!
//! The sample types are the IP events present, `branches` and `stacks`, with the one users
//! most likely want first put last (speedscope takes `default_sample_type` as a position):
//! `stacks` when there are call stacks, else the first IP event. pprof values are `int64`:
//! a count above 2^63 - 1 is clamped to it, and `Written::clamped` says so.
//!
//! The message types are written with prost's derives, field by field from profile.proto.

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::io::{self, Write};

use byteorder::{ByteOrder, LE};
use hashbrown::HashTable;
use prost::Message;
use prost::encoding::WireType;
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::analysis::Counted;
use crate::analysis::index::AddressIndex;
use crate::analysis::keys::{FrameKey, KeyId, Namers};
use crate::analysis::memory;
use crate::analysis::share::{self, Share, joined};
use crate::analysis::stacks::StackCounts;
use crate::format::record::SampleKind;
use crate::format::stackorder::StackOrder;
use crate::output::gzip;

/// `perftools.profiles.Profile`.
#[derive(Clone, PartialEq, Message)]
pub struct Profile {
    /// What each value of a sample counts.
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    /// The samples.
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    /// The binaries.
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    /// The addresses.
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    /// The functions.
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    /// Every string, referred to by index; `string_table[0]` is `""`.
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    /// Frames to drop (a regular expression); unused.
    #[prost(int64, tag = "7")]
    pub drop_frames: i64,
    /// Frames to keep; unused.
    #[prost(int64, tag = "8")]
    pub keep_frames: i64,
    /// When the profile was taken; unknown (0).
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    /// How long it took; unknown (0).
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    /// The sampling event; unset.
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    /// The sampling period; unset.
    #[prost(int64, tag = "12")]
    pub period: i64,
    /// Free-form comments, as string indices.
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    /// The name of the sample type shown first, as a string index.
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

/// `ValueType`: a kind of value and its unit, as string indices.
#[derive(Clone, PartialEq, Message)]
pub struct ValueType {
    /// The kind.
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    /// The unit.
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

/// `Sample`: locations, leaf first, and a value per sample type.
#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    /// Location IDs, the leaf first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    /// A value per sample type.
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    /// Its labels: `source`, what it is a sample of.
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

/// `Label`: a key and a string value, as string indices.
#[derive(Clone, PartialEq, Message)]
pub struct Label {
    /// The key.
    #[prost(int64, tag = "1")]
    pub key: i64,
    /// The value.
    #[prost(int64, tag = "2")]
    pub str: i64,
}

/// `Mapping`: one binary's address range.
#[derive(Clone, PartialEq, Message)]
pub struct Mapping {
    /// Its ID, from 1.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Where it starts: 0, so that addresses are RVAs.
    #[prost(uint64, tag = "2")]
    pub memory_start: u64,
    /// Where it ends: past the largest RVA.
    #[prost(uint64, tag = "3")]
    pub memory_limit: u64,
    /// The offset in the file; 0.
    #[prost(uint64, tag = "4")]
    pub file_offset: u64,
    /// The binary's name, as a string index.
    #[prost(int64, tag = "5")]
    pub filename: i64,
    /// Its symbol-server key, as a string index.
    #[prost(int64, tag = "6")]
    pub build_id: i64,
    /// Whether its locations have functions: always.
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
    /// Whether they have file names.
    #[prost(bool, tag = "8")]
    pub has_filenames: bool,
    /// Whether they have line numbers.
    #[prost(bool, tag = "9")]
    pub has_line_numbers: bool,
    /// Whether they have inlined frames.
    #[prost(bool, tag = "10")]
    pub has_inline_frames: bool,
}

/// `Location`: one address of one binary.
#[derive(Clone, PartialEq, Message)]
pub struct Location {
    /// Its ID, from 1.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Its binary's mapping.
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    /// The RVA.
    #[prost(uint64, tag = "3")]
    pub address: u64,
    /// The function it is in.
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
    /// Whether several functions were folded here; never.
    #[prost(bool, tag = "5")]
    pub is_folded: bool,
}

/// `Line`: a function of a location.
#[derive(Clone, PartialEq, Message)]
pub struct Line {
    /// The function.
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
    /// The source line; unknown (0).
    #[prost(int64, tag = "2")]
    pub line: i64,
}

/// `Function`.
#[derive(Clone, PartialEq, Message)]
pub struct Function {
    /// Its ID, from 1.
    #[prost(uint64, tag = "1")]
    pub id: u64,
    /// Its name, as a string index.
    #[prost(int64, tag = "2")]
    pub name: i64,
    /// Its name as the linker knows it, as a string index.
    #[prost(int64, tag = "3")]
    pub system_name: i64,
    /// Its source file (here: the binary), as a string index.
    #[prost(int64, tag = "4")]
    pub filename: i64,
    /// Its first source line; unknown (0).
    #[prost(int64, tag = "5")]
    pub start_line: i64,
}

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
    fn get(&self) -> &StackCounts {
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

/// Writes the profile of `counted`, with `comment` (the trace's path) as its comment, to
/// `out`, encoded as one `Profile` message, its samples streamed.
///
/// prost writes a message's fields in tag order, each on its own, and a message is the
/// concatenation of its fields: the sample types (1), then each sample (2) as it is made,
/// then each mapping, location, function and string (3 to 6), then the rest (7 to 14) are
/// the same bytes as the whole message encoded at once, without a `Sample` held per
/// distinct stack, nor the whole profile's bytes.
fn profile(
    out: &mut impl Write,
    counted: &Counted<'_>,
    stacks: Stacks<'_>,
    namers: &Namers<'_>,
    comment: &str,
) -> io::Result<Written> {
    let mut b = Builder::default();
    b.string("");
    let types = sample_types(counted, stacks.get());
    let count = b.string("count");
    let sample_type: Vec<ValueType> = types
        .iter()
        .map(|t| ValueType {
            r#type: b.string(t),
            unit: count,
        })
        .collect();
    // Every sample's label: its key's index is known before the locations add their names.
    let source = b.string("source");
    let addresses = addresses(counted, stacks.get());
    let mapping_of = b.mappings(counted, &addresses.sorted);
    let head = Profile {
        sample_type,
        ..Profile::default()
    };
    out.write_all(&head.encode_to_vec())?;
    let labels: Vec<i64> = head.sample_type.iter().map(|t| t.r#type).collect();
    let samples = SampleList {
        types: &types,
        encoder: SampleBytes::new(source, &labels),
        location_of: &addresses.location_of,
        sorted: &addresses.sorted,
        // Each sample has a value of one type only. Those of the type shown first come
        // first, so that `go tool pprof -traces` opens on them rather than on samples of 0
        // for it.
        default: types.len().saturating_sub(1),
        buffer: Vec::new(),
        out: &mut *out,
        written: Written::default(),
    };
    // The locations are made on a thread of their own while the samples are written: a
    // location's ID is its address's place, which the samples need, and nothing else of it.
    let (written, mut b) = std::thread::scope(|scope| {
        let sorted = &addresses.sorted;
        let located = scope.spawn(move || {
            b.locations(counted, namers, sorted, &mapping_of);
            b
        });
        let written = samples.write(counted, stacks);
        let b = joined(located);
        (written, b)
    });
    let written = written?;
    let comment = vec![b.string(comment)];
    let tail = Profile {
        comment,
        default_sample_type: head.sample_type.last().map_or(0, |t| t.r#type),
        ..Profile::default()
    };
    write_tail(out, &b, &tail)?;
    Ok(written)
}

/// Writes the mappings (3), locations (4), functions (5) and strings (6) of `b`, each
/// encoded on its own, then `tail`, the fields after them.
fn write_tail(out: &mut impl Write, b: &Builder, tail: &Profile) -> io::Result<()> {
    let mut buffer = Vec::new();
    for m in &b.mappings {
        prost::encoding::message::encode(3, m, &mut buffer);
    }
    out.write_all(&buffer)?;
    out.write_all(&b.locations)?;
    out.write_all(&b.functions)?;
    buffer.clear();
    for s in b.strings.iter() {
        prost::encoding::encode_key(6, WireType::LengthDelimited, &mut buffer);
        prost::encoding::encode_varint(s.len() as u64, &mut buffer);
        buffer.extend_from_slice(s.as_bytes());
        if buffer.len() >= 1 << 16 {
            out.write_all(&buffer)?;
            buffer.clear();
        }
    }
    out.write_all(&buffer)?;
    out.write_all(&tail.encode_to_vec())
}

/// The sample types: `branches`, the IP events present (the first of them last), `stacks`;
/// the one users most likely want first is put last, as speedscope takes
/// `default_sample_type` as a position.
fn sample_types(counted: &Counted<'_>, stacks: &StackCounts) -> Vec<String> {
    let summary = counted.summary;
    let mut events: Vec<SampleKind> = summary
        .progids()
        .flat_map(|p| summary.ip_tables(p).map(|t| t.source()))
        .collect();
    events.sort_unstable();
    events.dedup();
    let lbr = summary.progids().any(|p| summary.lbr(p).is_some());
    let mut types: Vec<String> = Vec::new();
    if lbr {
        types.push("branches".to_owned());
    }
    types.extend(events.iter().rev().map(|e| e.name().to_owned()));
    if stacks.unique() > 0 {
        types.push("stacks".to_owned());
    }
    types
}

/// Every address of the profile, per binary, and whether it is ever looked up where it
/// points (an IP sample, a branch's end, a leaf frame); else it is only a return address,
/// looked up one byte back. Gathered in an index per binary (every frame of every stack is
/// noted, and most are seen many times; a stack's are asked for before they are noted),
/// about half the binaries on a second thread when there are two cores, then sorted, and
/// the index made that of their locations.
fn addresses(counted: &Counted<'_>, stacks: &StackCounts) -> Addresses {
    addresses_shared(counted, stacks, &second_share(counted, stacks))
}

/// [`addresses`], those of the binaries `theirs` holds gathered on a second thread.
fn addresses_shared(counted: &Counted<'_>, stacks: &StackCounts, theirs: &Share) -> Addresses {
    let mut location_of = std::thread::scope(|scope| {
        let second = theirs
            .any()
            .then(|| scope.spawn(|| gathered(counted, stacks, |p| theirs.has(p))));
        let mut location_of = gathered(counted, stacks, |p| !theirs.has(p));
        if let Some(second) = second {
            let theirs = joined(second);
            location_of.extend(theirs);
            memory::give_back();
        }
        location_of
    });
    // Sorted by binary and address, and numbered in that order: the index's values become
    // the locations' IDs.
    let mut sorted: Vec<(u16, u32, bool)> = Vec::new();
    for (&p, index) in &mut location_of {
        let start = sorted.len();
        sorted.extend(index.iter().map(|(rva, _, exact)| (p, rva, exact != 0)));
        // Each of a binary's addresses once, so sorting by it alone orders them whole.
        radsort::sort_by_key(&mut sorted[start..], |&(_, rva, _)| rva);
        for (place, &(_, rva, _)) in sorted.iter().enumerate().skip(start) {
            let id = u32::try_from(location_id(place))
                .expect("fewer than 2^31 locations: each is a sorted address's memory");
            index.insert(rva, false, id);
        }
    }
    Addresses {
        sorted,
        location_of,
    }
}

/// The binaries whose addresses a second thread gathers, when there are two cores and two
/// binaries or more: about half the notes (table entries, branch ends, frames).
fn second_share(counted: &Counted<'_>, stacks: &StackCounts) -> Share {
    if !share::two_cores() {
        return Share::default();
    }
    let summary = counted.summary;
    let mut notes: BTreeMap<u16, usize> = BTreeMap::new();
    for p in summary.progids() {
        let ip: usize = summary.ip_tables(p).map(|t| t.unique()).sum();
        let lbr = summary.lbr(p).map_or(0, |t| 2 * t.unique());
        *notes.entry(p).or_default() += ip + lbr;
    }
    for (p, frames, _) in stacks.raw() {
        *notes.entry(p).or_default() += frames.len() / 4;
    }
    share::halves(notes)
}

/// The addresses of the binaries `mine` says, each with whether it is exact (1) or not (0),
/// in an index per binary.
fn gathered(
    counted: &Counted<'_>,
    stacks: &StackCounts,
    mine: impl Fn(u16) -> bool,
) -> BTreeMap<u16, AddressIndex> {
    let summary = counted.summary;
    let mut location_of: BTreeMap<u16, AddressIndex> = BTreeMap::new();
    // 1 when exact, else 0.
    let note = |index: &mut AddressIndex, rva: u32, exact: bool| match index.get(rva, false) {
        Some(seen) if seen >= u32::from(exact) => {}
        _ => index.insert(rva, false, u32::from(exact)),
    };
    for p in summary.progids().filter(|&p| mine(p)) {
        let index = location_of.entry(p).or_default();
        for t in summary.ip_tables(p) {
            t.iter().for_each(|(rva, _)| note(index, rva, true));
        }
        for ([from, to], _) in summary.lbr(p).iter().flat_map(|t| t.iter()) {
            note(index, from, true);
            note(index, to, true);
        }
    }
    for (p, frames, _) in stacks.raw().filter(|&(p, _, _)| mine(p)) {
        let index = location_of.entry(p).or_default();
        rvas(frames).for_each(|rva| index.prefetch(rva, false));
        let leaf = counted.order.leaf(frames.len() / 4);
        for (i, rva) in rvas(frames).enumerate() {
            note(index, rva, i == leaf);
        }
    }
    location_of
}

/// The distinct addresses of a profile, each with whether it is ever exact (sampled, not a
/// return address), and their locations.
struct Addresses {
    /// Per binary and address, in order, whether it is exact.
    sorted: Vec<(u16, u32, bool)>,
    /// Per binary, each address's location ID.
    location_of: BTreeMap<u16, AddressIndex>,
}

/// The location ID of `rva` of the binary whose addresses `index` holds.
fn location_id_of(index: &AddressIndex, rva: u32) -> u64 {
    let id = index.get(rva, false);
    u64::from(id.expect("every address of a sample is the profile's"))
}

/// The samples of a profile, a value per sample type each, encoded as they are made.
struct SampleList<'a, W> {
    types: &'a [String],
    /// What encodes each sample.
    encoder: SampleBytes,
    location_of: &'a BTreeMap<u16, AddressIndex>,
    /// Every address, in order ([`Addresses::sorted`]).
    sorted: &'a [(u16, u32, bool)],
    /// The slot of the type whose samples come first.
    default: usize,
    /// Encoded samples on their way to `out`.
    buffer: Vec<u8>,
    out: &'a mut W,
    written: Written,
}

impl<W: Write> SampleList<'_, W> {
    /// Writes every sample: first those of the type shown first, then the others; each
    /// binary's IP samples and branches, then the call stacks, let go of once written when
    /// they were handed over. What writing found.
    fn write(mut self, counted: &Counted<'_>, mut stacks: Stacks<'_>) -> io::Result<Written> {
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
    fn value(&mut self, hits: u128) -> i64 {
        i64::try_from(hits).unwrap_or_else(|_| {
            self.written.clamped = true;
            i64::MAX
        })
    }

    /// The slot of the type `name`, when its samples go in this pass (`first`: those of the
    /// type shown first; else the others).
    fn slot(&self, name: &str, first: bool) -> Option<usize> {
        let slot = self
            .types
            .iter()
            .position(|t| t == name)
            .expect("a sample type for every source present");
        ((slot == self.default) == first).then_some(slot)
    }

    /// One sample of `locations` with `value` in the `slot`-th value, labelled with that type.
    fn push(
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

    fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buffer)?;
        self.buffer.clear();
        Ok(())
    }

    /// A sample per IP event and address of binary `p`.
    fn ip(&mut self, counted: &Counted<'_>, p: u16, first: bool) -> io::Result<()> {
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
    fn branches(&mut self, counted: &Counted<'_>, p: u16, first: bool) -> io::Result<()> {
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
    fn stacks(
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
struct Walk<'a> {
    sorted: &'a [(u16, u32, bool)],
    progid: u16,
    /// The place of the last address found, or of the binary's first.
    at: usize,
}

impl<'a> Walk<'a> {
    fn new(sorted: &'a [(u16, u32, bool)], progid: u16) -> Self {
        let at = sorted.partition_point(|&(p, _, _)| p < progid);
        Walk { sorted, progid, at }
    }

    /// The location ID of `rva`, at or after the address asked for last.
    fn id(&mut self, rva: u32) -> u64 {
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

/// The ID of the location at `place` in the sorted addresses: locations are numbered in
/// their order, from 1.
fn location_id(place: usize) -> u64 {
    place as u64 + 1
}

/// The samples of a profile encoded by hand, the same bytes as prost encodes each as a
/// [`Sample`] (a unit test holds the two the same): a sample has a value for one type only
/// and the label of that type, so that all but its locations and that value are the same
/// bytes for every sample of a type, and a million samples are not each measured field by
/// field, then written, as a message is.
struct SampleBytes {
    /// The number of sample types.
    types: usize,
    /// Per type, the `label` field of its samples, encoded.
    labels: Vec<Vec<u8>>,
    /// The location IDs of the sample at hand, encoded.
    ids: Vec<u8>,
}

impl SampleBytes {
    /// The encoder of samples with a value for each of `labels.len()` types, labelled
    /// `source` = the type's name (`labels`, string indices).
    fn new(source: i64, labels: &[i64]) -> Self {
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
    fn encode(
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

/// The key of length-delimited field `field` (below 16), as prost encodes it.
const fn key(field: u8) -> u8 {
    field << 3 | WireType::LengthDelimited as u8
}

/// The addresses of a stack's frames as stored.
fn rvas(frames: &[u8]) -> impl DoubleEndedIterator<Item = u32> + '_ {
    frames.chunks_exact(4).map(LE::read_u32)
}

/// Writes the profile of `counted`, gzipped, to `out`: encoded on this thread and deflated
/// on others (`gzip::deflated`), as the profile of a trace with many call stacks takes
/// about as long to deflate as to encode.
///
/// The call stacks are `stacks`, not `counted.stacks`.
pub(crate) fn write(
    out: impl Write + Send,
    counted: &Counted<'_>,
    stacks: Stacks<'_>,
    namers: &Namers<'_>,
    comment: &str,
) -> io::Result<Written> {
    gzip::deflated(out, |w| profile(w, counted, stacks, namers, comment))
}

/// The tables of a profile being built: the mappings as messages, the locations and
/// functions encoded as they are made (the same bytes as encoding them all at the end), the
/// strings in one buffer.
#[derive(Default)]
struct Builder {
    strings: Strings,
    mappings: Vec<Mapping>,
    /// The locations, each encoded as field 4 of a `Profile`.
    locations: Vec<u8>,
    /// The functions, each encoded as field 5 of a `Profile`.
    functions: Vec<u8>,
    /// Per function, by its ID - 1: whether its file is a source file (not the binary's
    /// name).
    file_known: Vec<bool>,
}

/// The string table: each string once, all in one buffer.
#[derive(Default)]
struct Strings {
    text: String,
    /// Where each string ends in `text`.
    ends: Vec<usize>,
    /// Each string's index and 32 bits of its hash, found by that hash: as the table grows,
    /// its entries are placed again without reading their strings.
    index: HashTable<(u32, u32)>,
}

impl Strings {
    /// The `i`-th string of `text` that `ends` delimit.
    fn nth<'t>(text: &'t str, ends: &[usize], i: usize) -> &'t str {
        let start = i.checked_sub(1).map_or(0, |j| ends[j]);
        &text[start..ends[i]]
    }

    /// The 32 bits of `s`'s hash kept in the index.
    fn hash(s: &str) -> u32 {
        (FxBuildHasher.hash_one(s) >> 32) as u32
    }

    /// The hash the index places an entry by: its 32 bits spread over 64 (the table takes
    /// its slot from the low bits and a tag from the high ones).
    fn spread(hash: u32) -> u64 {
        u64::from(hash).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// The index of `s`, added the first time.
    fn index(&mut self, s: &str) -> usize {
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
    fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.ends.len()).map(|i| Self::nth(&self.text, &self.ends, i))
    }
}

/// The functions of one binary's locations, by what identifies them.
struct Functions<'b> {
    binary: &'b str,
    of: FxHashMap<KeyId, u64>,
}

impl Functions<'_> {
    /// The ID of the function `id`, added to the builder the first time: named `name` (no
    /// binary: pprof's graph breaks names at dots), in `file` (else the binary's name), from
    /// `start_line`.
    fn id(
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
    fn mappings(
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
    /// [`addresses`] numbers them) and encoded as they are made. Each binary's addresses are
    /// looked up once.
    fn locations(
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
    fn string(&mut self, s: &str) -> i64 {
        let i = self.strings.index(s);
        // As many strings as there are addresses, names and files: far fewer than 2^63.
        i64::try_from(i).expect("a string table of fewer than 2^63 strings")
    }
}

/// What the locations of a mapping have, as its flags say.
#[derive(Default)]
struct Has {
    /// A function whose file is a source file.
    files: bool,
    /// A line number.
    lines: bool,
    /// Inline frames.
    inlines: bool,
}

impl Has {
    /// Notes what a location of `line` has; `file_known` is per function, as in [`Builder`].
    fn note(&mut self, line: &[Line], file_known: &[bool]) {
        self.lines |= line.iter().any(|l| l.line > 0);
        self.inlines |= line.len() > 1;
        self.files |= line.iter().any(|l| file_known[l.function_id as usize - 1]);
    }
}

#[cfg(test)]
mod tests {
    use super::{Label, Sample, SampleBytes, Strings, Walk};
    use std::collections::HashMap;

    #[test]
    fn the_string_table_holds_each_string_once_when_their_hashes_meet() {
        // Two strings with the same 32 bits of hash kept: the first pair of `s0`, `s1`, ...
        let mut by_hash: HashMap<u32, String> = HashMap::new();
        let (a, b) = (0u32..)
            .find_map(|i| {
                let s = format!("s{i}");
                by_hash.insert(Strings::hash(&s), s.clone()).map(|t| (t, s))
            })
            .expect("a pair within 2^32 strings");
        let mut strings = Strings::default();
        let first = [strings.index(""), strings.index(&a), strings.index(&b)];
        assert_eq!(first, [0, 1, 2], "{a} and {b}");
        let again = [strings.index(&b), strings.index(&a), strings.index("")];
        assert_eq!(again, [2, 1, 0], "{a} and {b}");
        assert!(strings.iter().eq(["", a.as_str(), b.as_str()]));
    }

    #[test]
    fn addresses_gathered_on_a_second_thread_are_those_gathered_by_one() {
        use super::{Share, addresses_shared};
        use crate::analysis::Counted;
        use crate::analysis::stacks::StackCounts;
        use crate::analysis::summary::Summary;
        use crate::format::opcode::Opcode;
        use crate::format::record::Samples;
        use crate::format::stackorder::StackOrder;
        use crate::format::tables::Tables;
        use crate::image::symbols::SymbolMap;

        // Three binaries: IP samples, LBR branches and call stacks sharing addresses, some
        // frames leaves and return addresses both.
        let (mut summary, mut stacks) = (Summary::new(3), StackCounts::default());
        for progid in 0..3u16 {
            for i in 0..500u32 {
                let at =
                    |k: u32| (0x1000 * u32::from(progid + 1) + 4 * ((i * k) % 700)).to_le_bytes();
                let ip = at(7);
                let lbr = [at(3), at(5)].concat();
                let frames = [at(11), at(13), at(17)].concat();
                for (opcode, payload) in [
                    (Opcode::UNHALT_CYCLE, &ip[..]),
                    (Opcode::LBR, &lbr[..]),
                    (Opcode::ETW_CALLSTACK, &frames[..]),
                ] {
                    let samples = Samples {
                        offset: 0x5820,
                        opcode,
                        progid: Some(progid),
                        hits: 1,
                        count: (payload.len() / if opcode == Opcode::LBR { 8 } else { 4 }) as u8,
                        payload,
                    };
                    summary.add(&samples);
                    stacks.add(&samples);
                }
            }
        }
        let tables = Tables::default();
        let symbols = SymbolMap::none();
        let counted = Counted {
            summary: &summary,
            stacks: &stacks,
            order: StackOrder::LeafFirst,
            tables: &tables,
            symbols: &symbols,
        };
        let laid_out = |theirs: &Share| {
            let a = addresses_shared(&counted, &stacks, theirs);
            let ids: Vec<(u16, u32, bool, u32)> = a
                .sorted
                .iter()
                .map(|&(p, rva, exact)| (p, rva, exact, a.location_of[&p].get(rva, false).unwrap()))
                .collect();
            ids
        };
        let alone = laid_out(&Share::default());
        assert!(
            alone.iter().any(|&(_, _, exact, _)| !exact),
            "some only return addresses"
        );
        for theirs in [&[1][..], &[0, 2], &[0, 1, 2]] {
            let mut share = Share::default();
            theirs.iter().for_each(|&p| share.add(p));
            assert!(laid_out(&share) == alone, "{theirs:?} on a second thread");
        }
    }

    #[test]
    fn a_walk_gives_each_address_its_place_plus_one_within_its_binary() {
        let sorted = [(0, 10, true), (0, 20, false), (2, 5, true), (2, 20, true)];
        let mut walk = Walk::new(&sorted, 2);
        assert_eq!([walk.id(5), walk.id(5), walk.id(20)], [3, 3, 4]);
        let mut walk = Walk::new(&sorted, 0);
        assert_eq!([walk.id(10), walk.id(20)], [1, 2]);
        let mut walk = Walk::new(&sorted, 0);
        assert_eq!(walk.id(20), 2);
    }

    #[test]
    #[should_panic(expected = "every address of a sample is the profile's")]
    fn a_walk_never_gives_an_address_it_does_not_hold_a_place() {
        let sorted = [(0, 10, true), (2, 5, true)];
        Walk::new(&sorted, 0).id(5);
    }

    /// Every shape of sample the profile has, and the edges of the varints: the bytes are
    /// prost's own.
    #[test]
    fn a_sample_encoded_by_hand_is_the_bytes_prost_encodes() {
        let locations: [&[u64]; 4] = [&[], &[1], &[127, 128], &[1, 300, 1 << 40, u64::MAX]];
        let values = [0, 1, 127, 128, 16_383, 16_384, i64::MAX];
        for types in 1..=5 {
            let labels: Vec<i64> = (0..types).map(|t| 3 + 200 * t as i64).collect();
            for source in [1, 128] {
                let mut encoder = SampleBytes::new(source, &labels);
                for (slot, &label) in labels.iter().enumerate() {
                    for ids in locations {
                        for value in values {
                            let mut ours = Vec::new();
                            encoder.encode(ids.iter().copied(), slot, value, &mut ours);
                            let mut sample = Sample {
                                location_id: ids.to_vec(),
                                value: vec![0; types],
                                label: vec![Label {
                                    key: source,
                                    str: label,
                                }],
                            };
                            sample.value[slot] = value;
                            let mut prost = Vec::new();
                            prost::encoding::message::encode(2, &sample, &mut prost);
                            assert_eq!(ours, prost, "{types} types, slot {slot}: {sample:?}");
                        }
                    }
                }
            }
        }
    }
}
