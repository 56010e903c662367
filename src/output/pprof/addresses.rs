//! The addresses a profile's locations are made of, gathered per binary (on two threads
//! when there are two cores) into an index from address to location.

use std::collections::BTreeMap;

use crate::analysis::Counted;
use crate::analysis::stacks::StackCounts;
use crate::engine::index::AddressIndex;
use crate::engine::memory;
use crate::engine::threads::{self, Share, joined};

use super::wire::*;

/// Every address of the profile, per binary, and whether it is ever looked up where it
/// points (an IP sample, a branch's end, a leaf frame); else it is only a return address,
/// looked up one byte back. Gathered in an index per binary (every frame of every stack is
/// noted, and most are seen many times; a stack's are asked for before they are noted),
/// about half the binaries on a second thread when there are two cores, then sorted, and
/// the index made that of their locations.
pub(super) fn addresses(counted: &Counted<'_>, stacks: &StackCounts) -> Addresses {
    addresses_shared(counted, stacks, &second_share(counted, stacks))
}

/// [`addresses`], those of the binaries `theirs` holds gathered on a second thread.
pub(super) fn addresses_shared(
    counted: &Counted<'_>,
    stacks: &StackCounts,
    theirs: &Share,
) -> Addresses {
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
pub(super) fn second_share(counted: &Counted<'_>, stacks: &StackCounts) -> Share {
    if !threads::two_cores() {
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
    threads::halves(notes)
}

/// The addresses of the binaries `mine` says, each with whether it is exact (1) or not (0),
/// in an index per binary.
pub(super) fn gathered(
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
pub(super) struct Addresses {
    /// Per binary and address, in order, whether it is exact.
    pub(super) sorted: Vec<(u16, u32, bool)>,
    /// Per binary, each address's location ID.
    pub(super) location_of: BTreeMap<u16, AddressIndex>,
}

/// The location ID of `rva` of the binary whose addresses `index` holds.
pub(super) fn location_id_of(index: &AddressIndex, rva: u32) -> u64 {
    let id = index.get(rva, false);
    u64::from(id.expect("every address of a sample is the profile's"))
}
