//! The samples without call stacks as stacks of one address each: IP samples and LBR
//! branches' targets, named like the frames of call stacks, for the views that draw them.

use std::collections::BTreeMap;

use super::fold::*;
use super::profile::*;
use crate::analysis::Counted;
use crate::analysis::keys::{FrameKey, Namer, Namers};
use crate::analysis::summary::Summary;
use crate::format::record::SampleKind;

/// The samples of every binary as [`flat`] stacks, in progid order: per IP event, then the
/// targets of LBR branches (where control went), named by `namers`; only the sources `keep`
/// keeps.
pub(crate) fn sampled(
    counted: &Counted<'_>,
    namers: &Namers<'_>,
    keep: impl Fn(SampleKind) -> bool,
) -> Vec<BinaryStacks> {
    let mut out = Vec::new();
    each_sampled(counted, namers, keep, |b| out.push(b));
    out
}

/// Calls `visit` with the samples of each binary and source as [`flat`] stacks, in the
/// order of [`sampled`], one at a time: what a view does not keep is let go before the next
/// is made.
pub(crate) fn each_sampled(
    counted: &Counted<'_>,
    namers: &Namers<'_>,
    keep: impl Fn(SampleKind) -> bool,
    mut visit: impl FnMut(BinaryStacks),
) {
    for progid in counted.summary.progids() {
        each_sampled_of(counted, namers, progid, &keep, &mut visit);
    }
}

/// [`each_sampled`] for the binary `progid` alone.
pub(crate) fn each_sampled_of(
    counted: &Counted<'_>,
    namers: &Namers<'_>,
    progid: u16,
    keep: impl Fn(SampleKind) -> bool,
    mut visit: impl FnMut(BinaryStacks),
) {
    let summary = counted.summary;
    let name = counted.tables.binary_name(progid);
    let namer = namers.get(progid);
    for t in summary.ip_tables(progid).filter(|t| keep(t.source())) {
        let records = t.records();
        visit(flat(
            progid,
            name.clone(),
            t.source(),
            records,
            t.iter(),
            true,
            namer,
        ));
    }
    if let Some(t) = summary.lbr(progid).filter(|t| keep(t.source())) {
        let targets = t.iter().map(|([_, to], hits)| (to, hits));
        visit(flat(
            progid,
            name.clone(),
            t.source(),
            t.records(),
            targets,
            false,
            namer,
        ));
    }
}

/// The samples of one binary and source, each a stack of one address: its chain of keys,
/// outermost first (with inline frames, its function and what was inlined there). What
/// `/functions` and flame graphs show of samples without call stacks.
///
/// `distinct`: no address of `samples` comes twice (an IP event's table; the targets of LBR
/// branches do). Then, without symbols, each address is a key of its own.
pub(crate) fn flat(
    progid: u16,
    name: String,
    source: SampleKind,
    records: u64,
    samples: impl Iterator<Item = (u32, u128)>,
    distinct: bool,
    namer: &Namer<'_>,
) -> BinaryStacks {
    if distinct && namer.is_plain() {
        return flat_plain(progid, name, source, records, samples);
    }
    let mut folding = Folding::new(namer);
    let mut hits = 0;
    // The addresses of a table are distinct: each is looked up once, nothing kept for a
    // second time. Most chains are one key (no inline frames): their hits go by key.
    let mut by_key: Vec<u128> = Vec::new();
    for (rva, h) in samples {
        hits += h;
        let (start, end) = folding.look_up(rva, false);
        let path = &folding.chains[start as usize..end as usize];
        if let [k] = *path {
            let k = k as usize;
            if by_key.len() <= k {
                by_key.resize(k + 1, 0);
            }
            by_key[k] += h;
        } else {
            folding.stacks.add(path, h);
        }
        // The chain is not needed again.
        folding.chains.truncate(start as usize);
    }
    // One-key stacks come in key order; the rest (few: addresses in inlined code) are sorted
    // and merged in, each before the first one-key stack that sorts after it.
    let mut longer: Vec<(Vec<u32>, u128)> = folding
        .stacks
        .iter()
        .map(|(path, h)| (path.to_vec(), h))
        .collect();
    longer.sort_unstable();
    let mut stacks = Paths::room_for(&by_key, &longer);
    let mut longer = longer.into_iter().peekable();
    for (k, &h) in by_key.iter().enumerate().filter(|&(_, &h)| h > 0) {
        let k = [k as u32];
        while let Some((path, h)) = longer.next_if(|(path, _)| path[..] < k[..]) {
            stacks.push(&path, h);
        }
        stacks.push(&k, h);
    }
    longer.for_each(|(path, h)| stacks.push(&path, h));
    BinaryStacks {
        progid,
        name,
        source,
        records,
        hits,
        keys: folding.keys,
        stacks,
    }
}

/// [`flat`] of distinct addresses without symbols: each address is a key, numbered in the
/// order they come, as [`Folding::look_up`] would number them, without a table of the keys
/// known: none comes twice.
fn flat_plain(
    progid: u16,
    name: String,
    source: SampleKind,
    records: u64,
    samples: impl Iterator<Item = (u32, u128)>,
) -> BinaryStacks {
    let (mut keys, mut by_key) = (Vec::new(), Vec::new());
    for (rva, h) in samples {
        keys.push(FrameKey::address(rva));
        by_key.push(h);
    }
    let mut stacks = Paths::room_for(&by_key, &[]);
    for (k, &h) in by_key.iter().enumerate().filter(|&(_, &h)| h > 0) {
        stacks.push(&[k as u32], h);
    }
    BinaryStacks {
        progid,
        name,
        source,
        records,
        hits: by_key.iter().sum(),
        keys,
        stacks,
    }
}

/// The hits of each binary's samples without call stacks, per source: what [`sampled`]
/// makes stacks of, read from the summary's totals.
pub(crate) fn sources(summary: &Summary) -> impl Iterator<Item = (SampleKind, u128)> + '_ {
    summary.progids().flat_map(|p| {
        let ip = summary.ip_tables(p).map(|t| (t.source(), t.total()));
        ip.chain(summary.lbr(p).map(|t| (t.source(), t.total())))
    })
}

/// Of `sources` (each a source and hits, as [`sources`] gives them, or the sources of
/// `sampled` stacks), the one with the most hits over all binaries, IP events first (of
/// equal hits, the first in opcode order), LBR branch targets only without IP samples;
/// `None` without samples.
pub(crate) fn busiest(sources: impl Iterator<Item = (SampleKind, u128)>) -> Option<SampleKind> {
    let mut hits: BTreeMap<SampleKind, u128> = BTreeMap::new();
    for (source, h) in sources.filter(|&(_, h)| h > 0) {
        *hits.entry(source).or_default() += h;
    }
    let ip = hits
        .iter()
        .filter(|(s, _)| matches!(s, SampleKind::Ip(_)))
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)));
    match ip {
        Some((&source, _)) => Some(source),
        None => hits.keys().next().copied(),
    }
}
