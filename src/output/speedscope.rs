//! `/speedscope:FILE`: the trace in speedscope's JSON file format (docs/output.md, "pprof and speedscope").
//!
//! ```text
//! {"$schema": "https://www.speedscope.app/file-format-schema.json",
//!  "profiles": [{"type": "sampled", "name": "app.exe: stacks", "unit": "none",
//!                "startValue": 0, "endValue": TOTAL,
//!                "samples": [[0, 3, 7], ...], "weights": [42, ...]}, ...],
//!  "shared": {"frames": [{"name": "app.exe!main", "file": "app.exe"}, ...]},
//!  "name": "trace.spt", "activeProfileIndex": 0, "exporter": "sptdump 0.1.0"}
//! ```
//!
//! One `sampled` profile per binary and source: each IP event (one-address samples, with
//! the functions inlined there above them) and the call stacks. Frames are the keys of
//! `analysis/keys.rs`, shared by all profiles, with the source file and start line a PDB
//! gives; a sample lists its frames outermost first (speedscope's order, unlike pprof's);
//! weights are hits, exact in the file.
//!
//! Each IP event's profile is made, written and let go in turn, and the frames they share
//! are written after them (the members of a JSON object are in no order a reader may rely
//! on): the file is written with one source's profile in memory at a time.

use std::io::{self, Write};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use hashbrown::HashTable;
use rustc_hash::FxHashMap;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::analysis::Counted;
use crate::analysis::keys::{FrameKey, Namers};
use crate::analysis::profile::{BinaryStacks, Paths, StackProfile};
use crate::analysis::sampled::each_sampled_of;
use crate::engine::slices::{entry, entry_hash, entry_is, entry_place, hash32, spread};
use crate::engine::threads::joined;
use crate::format::record::SampleKind;
use crate::output::push_dec;

/// A frame: `{"name": ..., "file": ..., "line": ...}`, its name in [`Frames::names`].
struct Frame {
    /// The source file, with a PDB's lines; else none, and the binary is written.
    file: Option<Box<str>>,
    /// The binary, as an index into [`Frames::binaries`].
    binary: usize,
    /// The line the function starts on, where the PDB says.
    line: Option<u32>,
}

/// A frame as written, with its name and its binary's.
struct Written<'a> {
    frame: &'a Frame,
    name: &'a str,
    binary: &'a str,
}

impl Serialize for Written<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let f = self.frame;
        let mut frame = s.serialize_struct("Frame", 2 + usize::from(f.line.is_some()))?;
        frame.serialize_field("name", self.name)?;
        frame.serialize_field("file", f.file.as_deref().unwrap_or(self.binary))?;
        if let Some(line) = f.line {
            frame.serialize_field("line", &line)?;
        }
        frame.end()
    }
}

/// A `sampled` profile: its name and total, and its samples, the stacks' keys through
/// `frames`.
struct SampledProfile {
    name: String,
    end_value: u128,
    stacks: Paths,
    /// The frame of each key.
    frames: Vec<usize>,
}

/// How many bytes of a profile are laid out before they are written.
const PIECE: usize = 1 << 16;

impl SampledProfile {
    /// Writes the profile's object to `out`, laid out by hand in `buffer` (the same bytes
    /// serde_json writes of its fields in this order): a profile of call stacks is millions
    /// of small numbers, which serde_json would write in three pieces each.
    fn write(&self, out: &mut impl Write, buffer: &mut Vec<u8>) -> io::Result<()> {
        buffer.clear();
        buffer.extend_from_slice(br#"{"type":"sampled","name":"#);
        serde_json::to_writer(&mut *buffer, &self.name)?;
        buffer.extend_from_slice(br#","unit":"none","startValue":0,"endValue":"#);
        push_dec(buffer, self.end_value);
        buffer.extend_from_slice(br#","samples":["#);
        elements(out, buffer, self.stacks.iter(), |buffer, (keys, _)| {
            buffer.push(b'[');
            for (j, &k) in keys.iter().enumerate() {
                if j > 0 {
                    buffer.push(b',');
                }
                push_dec(buffer, self.frames[k as usize]);
            }
            buffer.push(b']');
            Ok(())
        })?;
        buffer.extend_from_slice(br#"],"weights":["#);
        elements(out, buffer, self.stacks.iter(), |buffer, (_, hits)| {
            push_dec(buffer, hits);
            Ok(())
        })?;
        buffer.extend_from_slice(b"]}");
        out.write_all(buffer)?;
        buffer.clear();
        Ok(())
    }
}

/// Lays `items` out in `buffer` as a JSON array's elements, each by `element`, a comma
/// between, writing the buffer to `out` a [`PIECE`] at a time.
fn elements<T>(
    out: &mut impl Write,
    buffer: &mut Vec<u8>,
    items: impl Iterator<Item = T>,
    mut element: impl FnMut(&mut Vec<u8>, T) -> io::Result<()>,
) -> io::Result<()> {
    for (i, item) in items.enumerate() {
        if i > 0 {
            buffer.push(b',');
        }
        element(buffer, item)?;
        write_piece(out, buffer)?;
    }
    Ok(())
}

/// Writes what `buffer` holds once it holds a [`PIECE`].
fn write_piece(out: &mut impl Write, buffer: &mut Vec<u8>) -> io::Result<()> {
    if buffer.len() >= PIECE {
        out.write_all(buffer)?;
        buffer.clear();
    }
    Ok(())
}

/// The shared frames, one per name.
#[derive(Default)]
struct Frames {
    frames: Vec<Frame>,
    /// The frames' names, one after another (a frame's is from the end of the one before
    /// it to its own end): a name is not a heap block of its own.
    names: String,
    ends: Vec<usize>,
    /// Each frame's index (the low 32 bits) with a 32-bit hash of its name (the high), found
    /// by that hash: the table grows without reading the names again.
    index: HashTable<u64>,
    /// The binaries' names, which frames without a source file are in.
    binaries: Vec<String>,
    /// The name being looked up, kept to reuse its allocation.
    scratch: String,
    /// The frame of each key no function holds, by its address, for the binary
    /// `addresses_of`: the name those make, found without making it. Every IP event of a
    /// binary samples mostly the same addresses, and its call stacks many of them; only one
    /// binary's are held at a time (its profiles are written one after another).
    addresses: FxHashMap<u32, usize>,
    addresses_of: Option<usize>,
}

impl Frames {
    /// The index of the binary named `name` in [`Frames::binaries`], added if new.
    fn binary(&mut self, name: &str) -> usize {
        match self.binaries.iter().position(|b| b == name) {
            Some(b) => b,
            None => {
                self.binaries.push(name.to_owned());
                self.binaries.len() - 1
            }
        }
    }

    /// [`Frames::of`] a key: a key no function holds is found by its address when a profile
    /// of the binary before asked for it.
    fn of_key(&mut self, key: &FrameKey, binary: usize) -> usize {
        if key.function_name().is_some() {
            return self.of(key, binary);
        }
        if self.addresses_of != Some(binary) {
            self.addresses.clear();
            self.addresses_of = Some(binary);
        }
        if let Some(&i) = self.addresses.get(&key.rva) {
            return i;
        }
        let i = self.of(key, binary);
        self.addresses.insert(key.rva, i);
        i
    }

    /// The frame of `key` of the binary `binary` (from [`Frames::binary`]): the first key
    /// of its name.
    fn of(&mut self, key: &FrameKey, binary: usize) -> usize {
        let Frames {
            frames,
            names,
            ends,
            index,
            binaries,
            scratch,
            ..
        } = self;
        scratch.clear();
        key.push_name(&binaries[binary], scratch);
        let name = scratch.as_str();
        let h = hash32(name);
        let found = |&e: &u64| entry_is(e, h) && name_of(names, ends, entry_place(e)) == name;
        if let Some(&e) = index.find(spread(h), found) {
            return entry_place(e);
        }
        let i = frames.len();
        let placed = entry(h, i);
        names.push_str(name);
        ends.push(names.len());
        frames.push(Frame {
            file: key.file().map(Box::from),
            binary,
            line: key.line(),
        });
        index.insert_unique(spread(h), placed, |&e| entry_hash(e));
        i
    }

    /// The frames, in order, as written.
    fn written(&self) -> impl Iterator<Item = Written<'_>> + '_ {
        self.frames.iter().enumerate().map(|(i, frame)| Written {
            frame,
            name: name_of(&self.names, &self.ends, i),
            binary: &self.binaries[frame.binary],
        })
    }
}

/// The name of frame `i`, of the `names` that end at `ends`.
fn name_of<'n>(names: &'n str, ends: &[usize], i: usize) -> &'n str {
    let start = i.checked_sub(1).map_or(0, |j| ends[j]);
    &names[start..ends[i]]
}

/// Writes the speedscope file of `counted` to `out`, named `name` (the trace's path):
/// per binary, in progid order, the profile of each IP event (its samples as stacks of one
/// address, made with `namers` and written one at a time), then that of its call stacks
/// from `stacks`, the profile of `counted.stacks` folded by key, let go of once written.
///
/// The profiles are made on this thread and laid out and written on another, one behind
/// the other: the making names the frames, which must be in the order the file shows them.
pub(crate) fn write(
    out: impl Write + Send,
    counted: &Counted<'_>,
    namers: &Namers<'_>,
    stacks: StackProfile,
    name: &str,
) -> io::Result<()> {
    let mut frames = Frames::default();
    let (tx, rx) = sync_channel::<SampledProfile>(1);
    let (out, active) = std::thread::scope(|scope| {
        let writer = scope.spawn(move || write_profiles(out, rx));
        let active = make_profiles(counted, namers, stacks, &mut frames, &tx);
        drop(tx);
        let out = joined(writer);
        (out, active)
    });
    let mut out = out?;
    let mut buffer = Vec::with_capacity(PIECE + 1024);
    out.write_all(br#"],"shared":{"frames":["#)?;
    elements(&mut out, &mut buffer, frames.written(), |buffer, frame| {
        Ok(serde_json::to_writer(buffer, &frame)?)
    })?;
    out.write_all(&buffer)?;
    out.write_all(br#"]},"name":"#)?;
    serde_json::to_writer(&mut out, name)?;
    let exporter = format!("sptdump {}", env!("CARGO_PKG_VERSION"));
    write!(
        out,
        r#","activeProfileIndex":{},"exporter":"#,
        active.unwrap_or(0)
    )?;
    serde_json::to_writer(&mut out, &exporter)?;
    out.write_all(b"}\n")
}

/// Makes the profiles of [`write()`], in order, and sends each to the writer on `tx`; stops
/// when the writer has (it could not write). The index of the first profile of call
/// stacks, if any: the one speedscope opens on.
fn make_profiles(
    counted: &Counted<'_>,
    namers: &Namers<'_>,
    stacks: StackProfile,
    frames: &mut Frames,
    tx: &SyncSender<SampledProfile>,
) -> Option<usize> {
    let mut progids: Vec<u16> = counted.summary.progids().collect();
    progids.extend(stacks.binaries.iter().map(|b| b.progid));
    progids.sort_unstable();
    progids.dedup();
    // In progid order, as the profiles are written.
    let mut binaries = stacks.binaries;
    binaries.sort_by_key(|b| b.progid);
    let mut stacked = binaries.into_iter().peekable();
    let (mut made, mut active) = (0, None);
    // Sends one profile; whether the writer took it.
    let mut send = |b: BinaryStacks| {
        if b.source == SampleKind::CallStack && active.is_none() {
            active = Some(made);
        }
        made += 1;
        let binary = counted.tables.binary_name(b.progid);
        tx.send(profile(frames, &binary, b)).is_ok()
    };
    for p in progids {
        let mut open = true;
        each_sampled_of(counted, namers, p, not_lbr, |b| open = open && send(b));
        while open && let Some(b) = stacked.next_if(|b| b.progid == p) {
            open = send(b);
        }
        if !open {
            break;
        }
    }
    active
}

/// Writes the head of the file and the profiles that come on `rx`, until it is closed; gives
/// `out` back for the rest.
fn write_profiles<W: Write>(mut out: W, rx: Receiver<SampledProfile>) -> io::Result<W> {
    out.write_all(
        br#"{"$schema":"https://www.speedscope.app/file-format-schema.json","profiles":["#,
    )?;
    let mut buffer = Vec::with_capacity(PIECE + 1024);
    for (i, profile) in rx.into_iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        profile.write(&mut out, &mut buffer)?;
    }
    Ok(out)
}

/// The sources speedscope writes a profile of: every IP event (not LBR's branch targets).
fn not_lbr(source: SampleKind) -> bool {
    source != SampleKind::Lbr
}

/// The `sampled` profile of one binary and source, each sample's frames outermost first:
/// its call stacks (named `stacks`), or an IP event's samples, each with the functions
/// inlined at it.
fn profile(frames: &mut Frames, binary: &str, b: BinaryStacks) -> SampledProfile {
    let named = frames.binary(&b.name);
    let ids: Vec<usize> = b.keys.iter().map(|k| frames.of_key(k, named)).collect();
    let source = match b.source {
        SampleKind::CallStack => "stacks",
        other => other.name(),
    };
    SampledProfile {
        name: format!("{binary}: {source}"),
        end_value: b.hits,
        stacks: b.stacks,
        frames: ids,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_is_one_per_name_whichever_binary_or_event_asks() {
        let mut frames = Frames::default();
        let (app, core) = (frames.binary("app.exe"), frames.binary("core.dll"));
        assert_eq!(frames.binary("app.exe"), app);
        let address = FrameKey::address(0x10);
        let first = frames.of_key(&address, app);
        // Asked again, as each IP event of a binary asks, or by a call stack: the same frame.
        assert_eq!(frames.of_key(&address, app), first);
        assert_eq!(frames.of(&address, app), first);
        // The same address of another binary is another name; asked of the first binary
        // again, after the other's, it is the first's frame.
        let other = frames.of_key(&address, core);
        assert_ne!(other, first);
        assert_eq!(frames.of_key(&address, app), first);
        assert_eq!(frames.of_key(&address, core), other);
        // A function at that address is another name; two functions of one name, one frame.
        let main = frames.of_key(&FrameKey::function(0x10, "main"), app);
        assert_ne!(main, first);
        assert_eq!(frames.of(&FrameKey::function(0x20, "main"), app), main);
        let written: Vec<(&str, &str)> = frames.written().map(|w| (w.name, w.binary)).collect();
        assert_eq!(
            written,
            [
                ("app.exe+0x10", "app.exe"),
                ("core.dll+0x10", "core.dll"),
                ("app.exe!main", "app.exe"),
            ]
        );
    }

    #[test]
    fn names_whose_hashes_are_one_are_two_frames() {
        // The first two addresses whose names' 32-bit hashes are the same.
        let mut seen = std::collections::HashMap::new();
        let (a, b) = (0u32..)
            .find_map(|rva| {
                let mut name = String::new();
                FrameKey::address(rva).push_name("app.exe", &mut name);
                seen.insert(hash32(name.as_str()), rva)
                    .map(|before| (before, rva))
            })
            .unwrap();
        let mut frames = Frames::default();
        let app = frames.binary("app.exe");
        let first = frames.of(&FrameKey::address(a), app);
        let second = frames.of(&FrameKey::address(b), app);
        assert_ne!(first, second);
        assert_eq!(frames.of(&FrameKey::address(a), app), first);
        assert_eq!(frames.of(&FrameKey::address(b), app), second);
    }

    #[test]
    fn frames_are_found_again_after_the_index_grows() {
        let mut frames = Frames::default();
        let app = frames.binary("app.exe");
        let made: Vec<usize> = (0..1000)
            .map(|rva| frames.of(&FrameKey::address(rva), app))
            .collect();
        assert_eq!(made, (0..1000).collect::<Vec<_>>());
        for rva in 0..1000 {
            assert_eq!(frames.of(&FrameKey::address(rva), app), rva as usize);
        }
    }

    /// A file whose write at byte `at` fails once (the disk was full for a moment), taking
    /// every byte before and after.
    struct FailsOnce {
        at: usize,
        taken: Vec<u8>,
        failed: bool,
    }

    impl Write for FailsOnce {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let room = self.at.saturating_sub(self.taken.len());
            if room == 0 && !self.failed {
                self.failed = true;
                return Err(io::Error::other("disk full"));
            }
            let n = if self.failed {
                buf.len()
            } else {
                buf.len().min(room)
            };
            self.taken.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_write_that_fails_anywhere_in_the_file_is_the_error() {
        use crate::analysis::stacks::StackCounts;
        use crate::analysis::summary::Summary;
        use crate::format::opcode::Opcode;
        use crate::format::record::Samples;
        use crate::format::tables::Tables;
        use crate::image::attached::SymbolMap;

        // Two binaries, each an IP event of 20,000 addresses: profiles of several pieces.
        let mut summary = Summary::new(2);
        for progid in [0, 1] {
            for rva in 0..20_000u32 {
                summary.add(&Samples {
                    offset: 0x5820,
                    opcode: Opcode::UNHALT_CYCLE,
                    progid: Some(progid),
                    hits: 1,
                    count: 1,
                    payload: &(rva * 4).to_le_bytes(),
                });
            }
        }
        let tables = Tables::listing(&[
            ("app.exe".to_owned(), uuid::Uuid::nil(), 1),
            ("core.dll".to_owned(), uuid::Uuid::nil(), 1),
        ]);
        let counted = Counted {
            summary: &summary,
            stacks: &StackCounts::default(),
            order: crate::format::stackorder::StackOrder::LeafFirst,
            tables: &tables,
            symbols: &SymbolMap::none(),
        };
        let namers = crate::analysis::keys::plain();
        let mut whole = Vec::new();
        write(
            &mut whole,
            &counted,
            &namers,
            StackProfile::default(),
            "t.spt",
        )
        .unwrap();
        let parsed: serde_json::Value = serde_json::from_slice(&whole).unwrap();
        assert_eq!(parsed["profiles"].as_array().unwrap().len(), 2);
        // In the head, in each profile, between them, in the frames and in the tail.
        let first = whole.windows(2).position(|w| w == b"},").unwrap();
        for at in [
            0,
            10,
            PIECE + 7,
            first + 1,
            whole.len() / 2,
            whole.len() - 5,
        ] {
            let mut file = FailsOnce {
                at,
                taken: Vec::new(),
                failed: false,
            };
            let written = write(
                &mut file,
                &counted,
                &namers,
                StackProfile::default(),
                "t.spt",
            );
            assert!(written.is_err(), "a failed write at byte {at} is the error");
        }
    }

    /// The fields of a profile as serde_json writes them, in the order the file has them.
    #[derive(Serialize)]
    struct BySerde<'a> {
        r#type: &'static str,
        name: &'a str,
        unit: &'static str,
        #[serde(rename = "startValue")]
        start_value: u32,
        #[serde(rename = "endValue")]
        end_value: u128,
        samples: Vec<Vec<usize>>,
        weights: Vec<u128>,
    }

    #[test]
    fn a_profile_laid_out_by_hand_is_what_serde_json_writes() {
        let namers = crate::analysis::keys::plain();
        // Enough samples to be written in several pieces; hits past 2^64, a name to escape.
        let samples = (0..20_000u32).map(|rva| (rva * 16, u128::from(rva) << 60));
        let b = crate::analysis::sampled::flat(
            0,
            "a\"b.exe".to_owned(),
            SampleKind::Ip(crate::format::opcode::Opcode::UNHALT_CYCLE),
            1,
            samples,
            true,
            namers.get(0),
        );
        let mut frames = Frames::default();
        let profile = profile(&mut frames, "a\"b.exe", b);
        let (mut written, mut buffer) = (Vec::new(), Vec::new());
        profile.write(&mut written, &mut buffer).unwrap();
        let expected = BySerde {
            r#type: "sampled",
            name: &profile.name,
            unit: "none",
            start_value: 0,
            end_value: profile.end_value,
            samples: (profile.stacks.iter())
                .map(|(keys, _)| keys.iter().map(|&k| profile.frames[k as usize]).collect())
                .collect(),
            weights: profile.stacks.iter().map(|(_, hits)| hits).collect(),
        };
        assert!(written.len() > 2 * PIECE);
        assert_eq!(
            String::from_utf8(written).unwrap(),
            serde_json::to_string(&expected).unwrap()
        );
    }
}
