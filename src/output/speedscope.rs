//! `/speedscope:FILE`: the trace in speedscope's JSON file format (docs/output.md, "pprof and speedscope").
//!
//! ```text
//! {"$schema": "https://www.speedscope.app/file-format-schema.json",
//!  "shared": {"frames": [{"name": "app.exe!main", "file": "app.exe"}, ...]},
//!  "profiles": [{"type": "sampled", "name": "app.exe: stacks", "unit": "none",
//!                "startValue": 0, "endValue": TOTAL,
//!                "samples": [[0, 3, 7], ...], "weights": [42, ...]}, ...],
//!  "name": "trace.spt", "activeProfileIndex": 0, "exporter": "sptdump 0.1.0"}
//! ```
//!
//! One `sampled` profile per binary and source: each IP event (one-address samples, with
//! the functions inlined there above them) and the call stacks. Frames are the keys of
//! `analysis/keys.rs`, shared by all profiles, with the source file and start line a PDB
//! gives; a sample lists its frames outermost first (speedscope's order, unlike pprof's);
//! weights are hits, exact in the file.

use std::io::{self, Write};

use rustc_hash::FxHashMap;
use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::analysis::Counted;
use crate::analysis::keys::FrameKey;
use crate::analysis::stacks::{BinaryStacks, Paths, StackProfile};
use crate::format::record::SampleKind;

#[derive(Serialize)]
struct File<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    shared: Shared<'a>,
    profiles: Vec<SampledProfile<'a>>,
    name: &'a str,
    #[serde(rename = "activeProfileIndex")]
    active_profile_index: usize,
    exporter: String,
}

#[derive(Serialize)]
struct Shared<'a> {
    frames: Vec<Frame<'a>>,
}

/// A frame: `{"name": ..., "file": ..., "line": ...}`, named when written (the frames'
/// index holds each name once).
struct Frame<'a> {
    key: &'a FrameKey,
    binary: &'a str,
}

impl Serialize for Frame<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let line = self.key.line();
        let mut frame = s.serialize_struct("Frame", 2 + usize::from(line.is_some()))?;
        frame.serialize_field("name", &self.key.name(self.binary))?;
        // The source file, with a PDB's lines; else the binary.
        frame.serialize_field("file", self.key.file().unwrap_or(self.binary))?;
        // The line the function starts on, where the PDB says.
        if let Some(line) = line {
            frame.serialize_field("line", &line)?;
        }
        frame.end()
    }
}

#[derive(Serialize)]
struct SampledProfile<'a> {
    r#type: &'static str,
    name: String,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: u128,
    #[serde(rename = "endValue")]
    end_value: u128,
    /// Written as they are read from the profile, not copied first.
    samples: Samples<'a>,
    weights: Weights<'a>,
}

/// The samples of a profile, each its frames' indices: the stacks' keys through `frames`.
struct Samples<'a> {
    stacks: &'a Paths,
    /// The frame of each key.
    frames: Vec<usize>,
}

impl Serialize for Samples<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.stacks.iter().map(|(keys, _)| Sample {
            keys,
            frames: &self.frames,
        }))
    }
}

struct Sample<'a> {
    keys: &'a [u32],
    frames: &'a [usize],
}

impl Serialize for Sample<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.keys.iter().map(|&k| self.frames[k as usize]))
    }
}

/// The hits of a profile's samples.
struct Weights<'a>(&'a Paths);

impl Serialize for Weights<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|(_, hits)| hits))
    }
}

/// The shared frames, one per name.
#[derive(Default)]
struct Frames<'a> {
    frames: Vec<Frame<'a>>,
    index: FxHashMap<String, usize>,
}

impl<'a> Frames<'a> {
    /// The frame of `key` of `binary`: the first key of its name.
    fn of(&mut self, key: &'a FrameKey, binary: &'a str) -> usize {
        let next = self.frames.len();
        let i = *self.index.entry(key.name(binary)).or_insert(next);
        if i == next {
            self.frames.push(Frame { key, binary });
        }
        i
    }
}

/// Writes the speedscope file of `counted` to `out`, named `name` (the trace's path);
/// `sampled` are its IP samples as stacks of one address (`stacks::sampled`), `stacks` the
/// profile of `counted.stacks`, folded by key.
pub fn write<'a>(
    out: impl Write,
    counted: &Counted<'_>,
    sampled: &'a [BinaryStacks],
    stacks: &'a StackProfile,
    name: &'a str,
) -> io::Result<()> {
    let mut frames = Frames::default();
    let mut profiles = Vec::new();
    let mut all: Vec<&BinaryStacks> = sampled
        .iter()
        .filter(|b| b.source != SampleKind::Lbr)
        .chain(&stacks.binaries)
        .collect();
    // Stable: each binary's IP events stay before its call stacks.
    all.sort_by_key(|b| b.progid);
    for b in all {
        let binary = counted.tables.binary_name(b.progid);
        profiles.push(profile(&mut frames, &binary, b));
    }
    // Open on the call stacks when there are any: they are what a flame graph shows.
    let active_profile_index = profiles
        .iter()
        .position(|p| p.name.ends_with(": stacks"))
        .unwrap_or(0);
    let file = File {
        schema: "https://www.speedscope.app/file-format-schema.json",
        shared: Shared {
            frames: frames.frames,
        },
        profiles,
        name,
        active_profile_index,
        exporter: format!("sptdump {}", env!("CARGO_PKG_VERSION")),
    };
    let mut out = out;
    serde_json::to_writer(&mut out, &file).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// The `sampled` profile of one binary and source, each sample's frames outermost first:
/// its call stacks (named `stacks`), or an IP event's samples, each with the functions
/// inlined at it.
fn profile<'a>(frames: &mut Frames<'a>, binary: &str, b: &'a BinaryStacks) -> SampledProfile<'a> {
    let ids: Vec<usize> = b.keys.iter().map(|k| frames.of(k, &b.name)).collect();
    let source = match b.source {
        SampleKind::CallStack => "stacks",
        other => other.name(),
    };
    SampledProfile {
        r#type: "sampled",
        name: format!("{binary}: {source}"),
        unit: "none",
        start_value: 0,
        end_value: b.hits,
        samples: Samples {
            stacks: &b.stacks,
            frames: ids,
        },
        weights: Weights(&b.stacks),
    }
}
