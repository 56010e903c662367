//! What the exports of any run must hold, whatever the input: the files read back (the pprof
//! profile with the kit's own reading of the wire format (`pprof.rs`), the speedscope file and the JSON Lines with serde)
//! and held against what `/functions /json` reports for the same traces.
//!
//! - **pprof**: string 0 is empty; every string index, location id, mapping id and function
//!   id points at something; every location lies in its mapping's address range; every sample has a value per sample type, none negative; the
//!   values of each sample type add up to that source's hits over every binary (`branches`
//!   is `LBR`, `stacks` is `ETW_CALLSTACK`), or, when a value was clamped to 2^63 - 1, to no
//!   more than them.
//! - **speedscope**: every sample's frames are frames of the file; samples and weights pair
//!   up; a profile's weights add up to its `endValue` and to its binary's hits of its source.
//! - **Parquet tables**: every file read back by the crate's reader; no row without hits;
//!   per binary and source the `samples` table's hits add up to the IP events', the `arcs`
//!   table's `LBR` rows to the branches, the `stacks` table's to the stack hits.
//! - **flame graph** and **report**: a whole SVG and a whole HTML page.
//!
//! Used by the hostile-input property test and the `dump` fuzz target, on every option set
//! of [`crate::dumping::option_sets`] that exports.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use crate::pprof::Profile;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde::Deserialize;
use sptdump::format::stackorder::StackOrder;
use sptdump::views::{Kind, Shape};

use crate::dumping::{Dumped, OptionSet, Via, dump_bytes};

/// Hits per binary name and source (`UNHALT_CYCLE`, `LBR`, `ETW_CALLSTACK`, ...).
pub type Hits = BTreeMap<(String, String), u128>;

/// The part of a `functions` line the checks need; totals can pass 2^64.
#[derive(Deserialize)]
struct FunctionsLine {
    name: String,
    source: String,
    hits: u128,
}

/// What `/functions /json` reports, per binary name and source, for the traces `set` reads
/// (merged when it merges), the one under test read as `via`. Sources without hits are left
/// out.
pub fn expected_hits(bytes: &[u8], set: &OptionSet, via: Via) -> Hits {
    let shape = match set.plan.shape {
        Shape::Merged => " /merge",
        Shape::Compared { .. } => " /compare sample.spt TRACE",
        _ => "",
    };
    let order = match set.plan.stack_order {
        StackOrder::RootFirst => " /stackorder:root-first",
        _ => "",
    };
    let run = OptionSet::parse(&format!("/functions /json /top:1{shape}{order}")).with(set.company);
    let d = dump_bytes(bytes, &run, via);
    let mut hits = Hits::new();
    for line in d.out.lines() {
        if !line.starts_with("{\"type\":\"functions\"") {
            continue;
        }
        let f: FunctionsLine =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("a functions line ({e}): {line}"));
        if f.hits > 0 {
            *hits.entry((f.name, f.source)).or_default() += f.hits;
        }
    }
    hits
}

/// What sptdump notes when a trace's header ends it, and so no file is written for it.
pub const NOTHING_READ: &str = "nothing of the trace could be read";

/// The exports of `d`, a run of `set`, checked against `expected` (see [`expected_hits`]).
/// Files that `set` does not write are not looked at; the ones it writes must exist, unless
/// the run said that nothing of the trace could be read.
pub fn check_exports(set: &OptionSet, d: &Dumped, expected: &Hits) -> Result<(), String> {
    let views = &set.plan.views;
    if d.err.contains(NOTHING_READ) {
        let tables = views.path(Kind::Parquet).filter(|dir| dir.exists());
        return match views.files().find(|(_, path)| path.exists()) {
            Some((name, _)) => Err(format!("/{name} written though nothing could be read")),
            None if tables.is_some() => Err("/parquet written though nothing could be read".into()),
            None => Ok(()),
        };
    }
    if let Some(path) = views.path(Kind::Pprof) {
        check_pprof(&read_gzip(path)?, expected).map_err(|e| format!("pprof: {e}"))?;
    }
    if let Some(path) = views.path(Kind::Speedscope) {
        check_speedscope(&read(path)?, expected).map_err(|e| format!("speedscope: {e}"))?;
    }
    if let Some(dir) = views.path(Kind::Parquet) {
        check_parquet(dir, expected).map_err(|e| format!("parquet: {e}"))?;
    }
    if let Some(path) = views.path(Kind::FlameGraph) {
        let svg = String::from_utf8(read(path)?).map_err(|e| format!("flame graph: {e}"))?;
        if !(svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>")) {
            return Err(format!("flame graph: not a whole SVG: {}", tail(&svg)));
        }
    }
    if let Some(path) = views.path(Kind::Html) {
        let html = String::from_utf8(read(path)?).map_err(|e| format!("report: {e}"))?;
        if !(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>")) {
            return Err(format!("report: not a whole page: {}", tail(&html)));
        }
    }
    Ok(())
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn read_gzip(path: &Path) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(read(path)?.as_slice())
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: not gzip: {e}", path.display()))?;
    Ok(bytes)
}

fn tail(s: &str) -> &str {
    let at = s.len().saturating_sub(80);
    s.get(at..).unwrap_or(s)
}

/// The source a pprof sample type or a speedscope profile stands for.
fn source_of(name: &str) -> &str {
    match name {
        "branches" => "LBR",
        "stacks" => "ETW_CALLSTACK",
        event => event,
    }
}

/// `expected` summed over binaries, per source.
fn per_source(expected: &Hits) -> BTreeMap<&str, u128> {
    let mut out = BTreeMap::new();
    for ((_, source), &hits) in expected {
        *out.entry(source.as_str()).or_default() += hits;
    }
    out
}

fn check_pprof(bytes: &[u8], expected: &Hits) -> Result<(), String> {
    let p = Profile::decode(bytes).map_err(|e| format!("not a profile: {e}"))?;
    let strings = p.string_table.len() as i64;
    if p.string_table.first().map(String::as_str) != Some("") {
        return Err("string 0 is not empty".into());
    }
    let string = |i: i64, what: &str| match (0..strings).contains(&i) {
        true => Ok(()),
        false => Err(format!("{what}: string {i} of {strings}")),
    };
    for t in &p.sample_type {
        string(t.r#type, "sample type")?;
        string(t.unit, "sample unit")?;
    }
    string(p.default_sample_type, "default sample type")?;
    for m in &p.mapping {
        string(m.filename, "mapping filename")?;
        string(m.build_id, "mapping build id")?;
    }
    for f in &p.function {
        string(f.name, "function name")?;
        string(f.system_name, "function system name")?;
        string(f.filename, "function filename")?;
    }
    let ids = |ids: Vec<u64>, what: &str| -> Result<Vec<u64>, String> {
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        match sorted.len() == ids.len() && !sorted.contains(&0) {
            true => Ok(sorted),
            false => Err(format!("{what} ids are not distinct and non-zero: {ids:?}")),
        }
    };
    ids(p.mapping.iter().map(|m| m.id).collect(), "mapping")?;
    let functions = ids(p.function.iter().map(|f| f.id).collect(), "function")?;
    let locations = ids(p.location.iter().map(|l| l.id).collect(), "location")?;
    for l in &p.location {
        let Some(m) = p.mapping.iter().find(|m| m.id == l.mapping_id) else {
            return Err(format!("location {} names mapping {}", l.id, l.mapping_id));
        };
        // Viewers find a location's binary by its address.
        if !(m.memory_start..m.memory_limit).contains(&l.address) {
            return Err(format!(
                "location {} at {:#x}, outside its mapping {:#x}..{:#x}",
                l.id, l.address, m.memory_start, m.memory_limit
            ));
        }
        if let Some(line) = l
            .line
            .iter()
            .find(|x| functions.binary_search(&x.function_id).is_err())
        {
            return Err(format!(
                "location {} names function {}",
                l.id, line.function_id
            ));
        }
    }
    let mut totals = vec![0i128; p.sample_type.len()];
    let mut clamped = false;
    for s in &p.sample {
        if s.value.len() != totals.len() {
            return Err(format!(
                "a sample of {} values for {} types",
                s.value.len(),
                totals.len()
            ));
        }
        if let Some(id) = s
            .location_id
            .iter()
            .find(|id| locations.binary_search(id).is_err())
        {
            return Err(format!("a sample names location {id}"));
        }
        for l in &s.label {
            string(l.key, "label key")?;
            string(l.str, "label value")?;
        }
        for (total, &v) in totals.iter_mut().zip(&s.value) {
            if v < 0 {
                return Err(format!("a negative value: {v}"));
            }
            clamped |= v == i64::MAX;
            *total += i128::from(v);
        }
    }
    let want = per_source(expected);
    let mut got = BTreeMap::new();
    for (t, total) in p.sample_type.iter().zip(totals) {
        let name = &p.string_table[t.r#type as usize];
        if total > 0 {
            got.insert(source_of(name), total as u128);
        }
    }
    let fits = |got: &BTreeMap<&str, u128>| {
        got.iter()
            .all(|(s, &n)| want.get(s).is_some_and(|&w| n <= w))
    };
    if got != want && !(clamped && fits(&got)) {
        return Err(format!("totals {got:?}, /functions says {want:?}"));
    }
    Ok(())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpeedscopeFile {
    shared: SpeedscopeShared,
    profiles: Vec<SpeedscopeProfile>,
    active_profile_index: usize,
}

#[derive(Deserialize)]
struct SpeedscopeShared {
    frames: Vec<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpeedscopeProfile {
    name: String,
    end_value: u128,
    samples: Vec<Vec<usize>>,
    weights: Vec<u128>,
}

fn check_speedscope(bytes: &[u8], expected: &Hits) -> Result<(), String> {
    let file: SpeedscopeFile =
        serde_json::from_slice(bytes).map_err(|e| format!("not a speedscope file: {e}"))?;
    let frames = file.shared.frames.len();
    if !file.profiles.is_empty() && file.active_profile_index >= file.profiles.len() {
        return Err(format!("active profile {}", file.active_profile_index));
    }
    let mut got = Hits::new();
    for p in &file.profiles {
        if p.samples.len() != p.weights.len() {
            return Err(format!(
                "{}: {} samples, {} weights",
                p.name,
                p.samples.len(),
                p.weights.len()
            ));
        }
        if let Some(&f) = p.samples.iter().flatten().find(|&&f| f >= frames) {
            return Err(format!("{}: frame {f} of {frames}", p.name));
        }
        let sum: u128 = p.weights.iter().sum();
        if sum != p.end_value {
            return Err(format!(
                "{}: weights add up to {sum}, endValue {}",
                p.name, p.end_value
            ));
        }
        let (binary, source) = p
            .name
            .rsplit_once(": ")
            .ok_or_else(|| format!("a profile named {:?}", p.name))?;
        if sum > 0 {
            *got.entry((binary.to_owned(), source_of(source).to_owned()))
                .or_default() += sum;
        }
    }
    // No LBR profile: branches are pairs, not stacks.
    let want: Hits = expected
        .iter()
        .filter(|((_, source), _)| source != "LBR")
        .map(|(k, &v)| (k.clone(), v))
        .collect();
    match got == want {
        true => Ok(()),
        false => Err(format!("totals {got:?}, /functions says {want:?}")),
    }
}

/// Every row of the table files under `dir/table`, as field name to value.
fn parquet_rows(dir: &Path, table: &str) -> Result<Vec<BTreeMap<String, Field>>, String> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir.join(table)).map_err(|e| format!("{table}: {e}"))?;
    for entry in entries {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_none_or(|e| e != "parquet") {
            return Err(format!("{}: not a table file", path.display()));
        }
        let file = std::fs::File::open(&path).map_err(|e| e.to_string())?;
        let reader =
            SerializedFileReader::new(file).map_err(|e| format!("{}: {e}", path.display()))?;
        let rows = reader.get_row_iter(None).map_err(|e| e.to_string())?;
        for row in rows {
            let row = row.map_err(|e| format!("{}: {e}", path.display()))?;
            out.push(
                row.get_column_iter()
                    .map(|(n, f)| (n.clone(), f.clone()))
                    .collect(),
            );
        }
    }
    Ok(out)
}

/// A row's `binary` and `hits` (a `decimal(38,0)`).
fn binary_and_hits(row: &BTreeMap<String, Field>) -> Result<(String, u128), String> {
    let binary = match row.get("binary") {
        Some(Field::Str(s)) => s.clone(),
        other => return Err(format!("binary {other:?}")),
    };
    let hits = match row.get("hits") {
        Some(Field::Decimal(d)) if (d.precision(), d.scale()) == (38, 0) => {
            let bytes: [u8; 16] = d.data().try_into().map_err(|_| "hits of 16 bytes")?;
            u128::try_from(i128::from_be_bytes(bytes)).map_err(|_| "negative hits")?
        }
        other => return Err(format!("hits {other:?}")),
    };
    match hits {
        0 => Err(format!("a row of {binary} without hits")),
        _ => Ok((binary, hits)),
    }
}

fn source(row: &BTreeMap<String, Field>) -> Result<String, String> {
    match row.get("source") {
        Some(Field::Str(s)) => Ok(s.clone()),
        other => Err(format!("source {other:?}")),
    }
}

fn check_parquet(dir: &Path, expected: &Hits) -> Result<(), String> {
    let mut got = Hits::new();
    for row in parquet_rows(dir, "samples")? {
        let (binary, hits) = binary_and_hits(&row)?;
        *got.entry((binary, source(&row)?)).or_default() += hits;
    }
    for row in parquet_rows(dir, "arcs")? {
        let (binary, hits) = binary_and_hits(&row)?;
        let source = source(&row)?;
        // The call-stack arcs count arcs, not stacks: /functions has no total of them.
        if source == "LBR" {
            *got.entry((binary, source)).or_default() += hits;
        }
    }
    for row in parquet_rows(dir, "stacks")? {
        let (binary, hits) = binary_and_hits(&row)?;
        *got.entry((binary, "ETW_CALLSTACK".into())).or_default() += hits;
    }
    match got == *expected {
        true => Ok(()),
        false => Err(format!("totals {got:?}, /functions says {expected:?}")),
    }
}
