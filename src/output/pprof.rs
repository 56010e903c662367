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

use std::io::{self, Write};

use prost::Message;
use prost::encoding::WireType;

use crate::analysis::Counted;
use crate::analysis::keys::Namers;
use crate::analysis::stacks::StackCounts;
use crate::engine::threads::joined;
use crate::format::record::SampleKind;
use crate::output::gzip;

mod addresses;
mod builder;
mod proto;
mod samples;
mod wire;

use addresses::*;
use builder::*;
use proto::{Profile, ValueType};
use samples::*;
pub(crate) use samples::{Stacks, Written};

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

#[cfg(test)]
mod tests {
    use super::proto::{Label, Sample};
    use super::{SampleBytes, Strings, Walk};
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
        use super::addresses_shared;
        use crate::analysis::Counted;
        use crate::analysis::stacks::StackCounts;
        use crate::analysis::summary::Summary;
        use crate::engine::threads::Share;
        use crate::format::opcode::Opcode;
        use crate::format::record::Samples;
        use crate::format::stackorder::StackOrder;
        use crate::format::tables::Tables;
        use crate::image::attached::SymbolMap;

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
