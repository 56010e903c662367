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
//! One `sampled` profile per binary and source: each IP event (one-frame samples) and the
//! call stacks. Frames are the keys of `analysis/keys.rs`, shared by all profiles; a sample lists its
//! frames outermost first (speedscope's order, unlike pprof's); weights are hits, exact in
//! the file.

use std::collections::BTreeMap;
use std::io::{self, Write};

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::analysis::Counted;
use crate::analysis::keys;
use crate::analysis::stacks::{BinaryStacks, StackProfile};

#[derive(Serialize)]
struct File<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    shared: Shared,
    profiles: Vec<SampledProfile>,
    name: &'a str,
    #[serde(rename = "activeProfileIndex")]
    active_profile_index: usize,
    exporter: String,
}

#[derive(Serialize)]
struct Shared {
    frames: Vec<Frame>,
}

#[derive(Serialize)]
struct Frame {
    name: String,
    file: String,
}

#[derive(Serialize)]
struct SampledProfile {
    r#type: &'static str,
    name: String,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: u128,
    #[serde(rename = "endValue")]
    end_value: u128,
    samples: Vec<Vec<usize>>,
    weights: Vec<u128>,
}

/// The shared frames, one per name.
#[derive(Default)]
struct Frames {
    frames: Vec<Frame>,
    index: FxHashMap<String, usize>,
}

impl Frames {
    fn of(&mut self, name: String, file: &str) -> usize {
        if let Some(&i) = self.index.get(&name) {
            return i;
        }
        let i = self.frames.len();
        self.index.insert(name.clone(), i);
        self.frames.push(Frame {
            name,
            file: file.to_owned(),
        });
        i
    }
}

/// Writes the speedscope file of `counted` to `out`, named `name` (the trace's path);
/// `stacks` is the profile of `counted.stacks`, folded by key.
pub fn write(
    out: impl Write,
    counted: &Counted<'_>,
    stacks: &StackProfile,
    name: &str,
) -> io::Result<()> {
    let mut frames = Frames::default();
    let mut profiles = Vec::new();
    let summary = counted.summary;
    let mut progids: Vec<u16> = summary.progids().collect();
    progids.extend(stacks.binaries.iter().map(|b| b.progid));
    progids.sort_unstable();
    progids.dedup();
    for progid in progids {
        let binary = counted.tables.binary_name(progid);
        let symbols = counted.symbols.get(Some(progid));
        for t in summary.ip_tables(progid) {
            // One-frame samples, folded by name (two functions of one name are one frame).
            let mut by_frame: BTreeMap<usize, u128> = BTreeMap::new();
            for (key, hits) in keys::by_key(t.iter(), symbols) {
                *by_frame
                    .entry(frames.of(key.name(&binary), &binary))
                    .or_default() += hits;
            }
            profiles.push(SampledProfile {
                r#type: "sampled",
                name: format!("{binary}: {}", t.source()),
                unit: "none",
                start_value: 0,
                end_value: t.total(),
                samples: by_frame.iter().map(|(&f, _)| vec![f]).collect(),
                weights: by_frame.iter().map(|(_, &w)| w).collect(),
            });
        }
        if let Some(b) = stacks.binaries.iter().find(|b| b.progid == progid) {
            profiles.push(stack_profile(&mut frames, &binary, b));
        }
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

/// The `sampled` profile of one binary's call stacks, each sample's frames outermost first.
fn stack_profile(frames: &mut Frames, binary: &str, b: &BinaryStacks) -> SampledProfile {
    let ids: Vec<usize> = (0..b.keys.len() as u32)
        .map(|k| frames.of(b.key_name(k), &b.name))
        .collect();
    SampledProfile {
        r#type: "sampled",
        name: format!("{binary}: stacks"),
        unit: "none",
        start_value: 0,
        end_value: b.hits,
        samples: b
            .stacks
            .iter()
            .map(|(s, _)| s.iter().map(|&k| ids[k as usize]).collect())
            .collect(),
        weights: b.stacks.iter().map(|&(_, w)| w).collect(),
    }
}
