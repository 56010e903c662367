//! What an ETL recorded, gathered in one pass and attributed to binaries (SPEC section 19):
//! the log-file header, the threads' processes, the images and their PDB identities, and
//! the samples, LBR records and stack walks folded by what they hold (as REPEAT folds an
//! SPT's records), so that memory grows with what is distinct, not with the file.
//!
//! Attribution, once the whole file is read (events of one buffer are not in time order with
//! another's): a sample's process is its thread's; an address at or above the kernel's half
//! (`0xFFFF800000000000` on a 64-bit recording, `0x80000000` on a 32-bit one) falls in the
//! images of process 0 or 4, any other in its process's images. An image counts wherever it
//! was loaded during the recording: unloads are counted, not applied (decision, SPEC 19 is
//! silent; an address reused by two images of one process is rare, and takes the image
//! that starts nearest below it, of two at one base the first loaded).
//! A sample in no image, or of a thread no event names, is unattributed.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::FxHashMap;
use uuid::Uuid;

use crate::etl::buffer::Buffer;
use crate::etl::event::{Events, Unreadable};
use crate::etl::kernel::{self, Kernel, LogHeader, Read, SampleKind};

/// Where reading a buffer's events stopped early, as [`crate::etl::event::Unreadable`] says,
/// with the buffer it was in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The buffer's number.
    pub buffer: u64,
    /// The buffer's offset in the file.
    pub offset: u64,
    /// What stopped it, at its offset among the buffer's events.
    pub unreadable: Unreadable,
}

/// At most this many [`Skipped`] are kept with their place; the rest are counted.
pub const SKIPPED_KEPT: usize = 16;

/// An image as loaded in one process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedImage {
    /// The process (0 for the kernel's images).
    pub process: u32,
    /// Where it starts.
    pub base: u64,
    /// How many bytes it spans.
    pub size: u64,
    /// Its file's path as recorded (the device path).
    pub path: String,
}

/// An image's PDB identity, from `DbgID_RSDS`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Identity {
    /// The PDB's GUID.
    pub guid: Uuid,
    /// The PDB's age.
    pub age: u32,
    /// The PDB's name as recorded (a path on the building machine, or a file name).
    pub pdb: String,
}

/// An LBR record as folded: process, thread, and its (from, to) pairs, newest first.
type LbrKey = (u32, u32, Box<[(u64, u64)]>);

/// What one pass over an ETL gathers.
#[derive(Default)]
pub struct Recording {
    /// The log-file header, when the first event is one.
    pub header: Option<LogHeader>,
    /// The buffers read.
    pub buffers: u64,
    /// The events read.
    pub events: u64,
    /// The events by header type (byte 2).
    pub kinds: BTreeMap<u8, u64>,
    /// The first [`SKIPPED_KEPT`] places where a buffer's events could not be read on.
    pub skipped: Vec<Skipped>,
    /// How many buffers stopped early, all told.
    pub skipped_count: u64,
    /// Events of a kind read whose payload was too short for its fields.
    pub short: u64,
    /// Image events, loads and rundowns (unloads apart).
    pub image_events: u64,
    /// Image unloads.
    pub unloads: u64,
    /// The time stamp of the log-file header's event: the recording's start, in the events'
    /// own clock.
    pub origin: Option<u64>,
    threads: FxHashMap<u32, u32>,
    images: Vec<LoadedImage>,
    image_at: FxHashMap<(u32, u64), usize>,
    identities: FxHashMap<(u32, u64), Identity>,
    samples: FxHashMap<(u32, u64, SampleKind), u64>,
    lbr: FxHashMap<LbrKey, u64>,
    stacks: FxHashMap<(u32, Box<[u64]>), u64>,
}

impl Recording {
    /// An empty recording, before the first buffer.
    pub fn new() -> Recording {
        Recording::default()
    }

    /// The pointer size the events are read with: the log-file header's, 8 until it is read.
    pub fn pointer(&self) -> u8 {
        self.header.map_or(8, |h| h.pointer_size)
    }

    /// Gathers a buffer's events.
    pub fn add(&mut self, buffer: &Buffer<'_>) {
        self.buffers += 1;
        for event in Events::new(buffer.events) {
            let event = match event {
                Ok(e) => e,
                Err(unreadable) => {
                    self.skipped_count += 1;
                    if self.skipped.len() < SKIPPED_KEPT {
                        self.skipped.push(Skipped {
                            buffer: buffer.index,
                            offset: buffer.offset,
                            unreadable,
                        });
                    }
                    continue;
                }
            };
            self.events += 1;
            *self.kinds.entry(event.kind).or_default() += 1;
            match kernel::read(&event, self.pointer()) {
                Read::Known(k @ Kernel::LogHeader(_)) => {
                    self.origin.get_or_insert(event.header.time());
                    self.known(k);
                }
                Read::Known(k) => self.known(k),
                Read::Short => self.short += 1,
                Read::Other => {}
            }
        }
    }

    fn known(&mut self, k: Kernel<'_>) {
        match k {
            Kernel::LogHeader(h) => {
                // The first one names the recording; a merged file may hold more.
                self.header.get_or_insert(h);
            }
            Kernel::Sample(s) => *self.samples.entry((s.thread, s.ip, s.kind)).or_default() += 1,
            Kernel::Thread(t) => {
                self.threads.insert(t.thread, t.process);
            }
            Kernel::Image(i) => {
                self.image_events += 1;
                let key = (i.process, i.base);
                if !self.image_at.contains_key(&key) {
                    self.image_at.insert(key, self.images.len());
                    self.images.push(LoadedImage {
                        process: i.process,
                        base: i.base,
                        size: i.size,
                        path: kernel::file_name(i.file_name),
                    });
                }
            }
            Kernel::ImageUnload(_) => self.unloads += 1,
            Kernel::PdbId(p) => {
                self.identities
                    .entry((p.process, p.base))
                    .or_insert_with(|| Identity {
                        guid: p.guid,
                        age: p.age,
                        pdb: String::from_utf8_lossy(p.pdb).into_owned(),
                    });
            }
            Kernel::Lbr(l) => {
                *self
                    .lbr
                    .entry((l.process, l.thread, l.pairs().collect()))
                    .or_default() += 1;
            }
            Kernel::StackWalk(s) => {
                *self
                    .stacks
                    .entry((s.process, s.frames().collect()))
                    .or_default() += 1;
            }
        }
    }

    /// The images loaded during the recording, each once per process and base.
    pub fn images(&self) -> &[LoadedImage] {
        &self.images
    }

    /// The threads named by thread events: how many distinct ones.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    /// The PDB identities recorded: how many distinct (process, base) ones.
    pub fn identities(&self) -> usize {
        self.identities.len()
    }

    /// The samples, LBR records and stack walks attributed to binaries.
    pub fn attribute(&self) -> Attributed {
        Attribution::new(self).run(self)
    }

    /// Where addresses fall, by the recording's images: for reading its events again.
    pub fn places(&self) -> Places<'_> {
        Places {
            recording: self,
            attribution: Attribution::new(self),
        }
    }
}

/// The binary and RVA of an address in a process, by a recording's images and threads.
pub struct Places<'a> {
    recording: &'a Recording,
    attribution: Attribution,
}

impl Places<'_> {
    /// The process of a thread, when a thread event names it.
    pub fn process(&self, thread: u32) -> Option<u32> {
        self.recording.threads.get(&thread).copied()
    }

    /// The binary's name and the RVA of `address` in `process` (or, when unknown, in no
    /// process: then only the kernel's half is placed).
    pub fn place(&self, process: Option<u32>, address: u64) -> Option<(&str, u32)> {
        let (key, base) = self.attribution.locate(process, address)?;
        Some((self.attribution.keys[key].0.as_str(), rva(address, base)))
    }
}

/// A binary as the SPT would list it: one file name and PDB identity, with its samples.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtlBinary {
    /// Its file name, lower case, as SPT names binaries.
    pub name: String,
    /// Its PDB identity, when a `DbgID_RSDS` event gave one.
    pub identity: Option<Identity>,
    /// Its timer samples.
    pub timer: u64,
    /// Its PMC samples, by profile source.
    pub pmc: BTreeMap<u16, u64>,
    /// The LBR records with a pair in it.
    pub lbr: u64,
    /// The processes its samples came from.
    pub processes: BTreeSet<u32>,
    /// Its samples: (kind, RVA) -> hits.
    pub samples: BTreeMap<(SampleKind, u32), u64>,
}

impl EtlBinary {
    /// Its PMC samples, all sources.
    pub fn pmc_total(&self) -> u64 {
        self.pmc.values().sum()
    }

    /// All its samples: timer, PMC and LBR.
    pub fn total(&self) -> u64 {
        self.timer + self.pmc_total() + self.lbr
    }
}

/// Samples in no binary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unattributed {
    /// Timer samples.
    pub timer: u64,
    /// PMC samples.
    pub pmc: u64,
    /// LBR records with no pair in any binary.
    pub lbr: u64,
}

/// A run of an LBR record's pairs that lie in one binary, as RVAs, newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LbrRun {
    /// The binary, an index into [`Attributed::binaries`].
    pub binary: usize,
    /// The (from, to) pairs as RVAs, newest first.
    pub pairs: Vec<(u32, u32)>,
    /// How many times the record was taken.
    pub hits: u64,
}

/// A run of a stack walk's frames that lie in one binary, as RVAs, leaf first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StackRun {
    /// The binary, an index into [`Attributed::binaries`].
    pub binary: usize,
    /// The frames as RVAs, leaf first.
    pub frames: Vec<u32>,
    /// How many times the stack was taken.
    pub hits: u64,
}

/// The recording's samples by binary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Attributed {
    /// The binaries with samples, most samples first (then by name).
    pub binaries: Vec<EtlBinary>,
    /// The samples in none.
    pub unattributed: Unattributed,
    /// The LBR records' runs of pairs within one binary, in the order of `binaries`.
    pub lbr: Vec<LbrRun>,
    /// The stack walks' runs of frames within one binary (of two frames or more), in the
    /// binaries with samples.
    pub stacks: Vec<StackRun>,
}

/// The address ranges of the images, by process, sorted, with the binary each belongs to.
struct Attribution {
    /// The kernel's half of the address space starts here.
    kernel: u64,
    /// Per process: (base, end, binary key index), sorted by base.
    spaces: FxHashMap<u32, Vec<(u64, u64, usize)>>,
    /// The binaries' keys: (name, identity).
    keys: Vec<(String, Option<Identity>)>,
}

impl Attribution {
    fn new(r: &Recording) -> Attribution {
        let kernel = if r.pointer() == 4 {
            0x8000_0000
        } else {
            0xFFFF_8000_0000_0000
        };
        let mut keys = Vec::new();
        let mut index: FxHashMap<(String, Option<Identity>), usize> = FxHashMap::default();
        let mut spaces: FxHashMap<u32, Vec<(u64, u64, usize)>> = FxHashMap::default();
        for image in &r.images {
            let name = image
                .path
                .rsplit(['\\', '/'])
                .next()
                .unwrap_or_default()
                .to_lowercase();
            let identity = r.identities.get(&(image.process, image.base)).cloned();
            let key = (name, identity);
            let next = keys.len();
            let at = *index.entry(key.clone()).or_insert(next);
            if at == next {
                keys.push(key);
            }
            // The kernel's images are those of process 0 or 4, one space.
            let space = if image.base >= kernel && image.process == 4 {
                0
            } else {
                image.process
            };
            // An image spans at most 4 GiB (a PE's SizeOfImage is 32 bits), so that every
            // address found in one has a 32-bit RVA.
            let end = image
                .base
                .saturating_add(image.size.min(u64::from(u32::MAX)));
            spaces.entry(space).or_default().push((image.base, end, at));
        }
        for ranges in spaces.values_mut() {
            // By base, and at one base (process 0's and 4's) in the order loaded.
            ranges.sort_by_key(|&(base, ..)| base);
        }
        Attribution {
            kernel,
            spaces,
            keys,
        }
    }

    /// The binary and image base holding `address` in `process`.
    fn locate(&self, process: Option<u32>, address: u64) -> Option<(usize, u64)> {
        let space = if address >= self.kernel { 0 } else { process? };
        let ranges = self.spaces.get(&space)?;
        // Of the images that start last at or below the address (one, or process 0's and
        // 4's at one base), the first loaded that holds it.
        let after = ranges.partition_point(|&(base, ..)| base <= address);
        let &(last, ..) = ranges[..after].last()?;
        let first = ranges[..after].partition_point(|&(base, ..)| base < last);
        ranges[first..after]
            .iter()
            .find(|&&(_, end, _)| address < end)
            .map(|&(base, _, key)| (key, base))
    }

    fn run(self, r: &Recording) -> Attributed {
        let mut binaries: Vec<EtlBinary> = self
            .keys
            .iter()
            .map(|(name, identity)| EtlBinary {
                name: name.clone(),
                identity: identity.clone(),
                timer: 0,
                pmc: BTreeMap::new(),
                lbr: 0,
                processes: BTreeSet::new(),
                samples: BTreeMap::new(),
            })
            .collect();
        let mut out = Attributed::default();
        self.samples(r, &mut binaries, &mut out);
        self.lbr(r, &mut binaries, &mut out);
        self.stacks(r, &mut out);
        ordered(binaries, out)
    }

    /// The timer and PMC samples, each by its binary and RVA.
    fn samples(&self, r: &Recording, binaries: &mut [EtlBinary], out: &mut Attributed) {
        for (&(thread, ip, kind), &hits) in &r.samples {
            let process = r.threads.get(&thread).copied();
            let Some((key, base)) = self.locate(process, ip) else {
                match kind {
                    SampleKind::Timer => out.unattributed.timer += hits,
                    SampleKind::Pmc(_) => out.unattributed.pmc += hits,
                }
                continue;
            };
            let b = &mut binaries[key];
            match kind {
                SampleKind::Timer => b.timer += hits,
                SampleKind::Pmc(source) => *b.pmc.entry(source).or_default() += hits,
            }
            if let Some(p) = process {
                b.processes.insert(p);
            }
            let rva = rva(ip, base);
            *b.samples.entry((kind, rva)).or_default() += hits;
        }
    }

    /// The LBR records' runs of pairs within one binary.
    fn lbr(&self, r: &Recording, binaries: &mut [EtlBinary], out: &mut Attributed) {
        for ((process, _thread, pairs), &hits) in &r.lbr {
            let runs = runs(pairs.iter().map(|&(from, to)| {
                let a = self.locate(Some(*process), from);
                let b = self.locate(Some(*process), to);
                match (a, b) {
                    (Some((x, base)), Some((y, _))) if x == y => {
                        Some((x, (rva(from, base), rva(to, base))))
                    }
                    _ => None,
                }
            }));
            if runs.is_empty() {
                out.unattributed.lbr += hits;
            }
            let mut counted = BTreeSet::new();
            for (binary, pairs) in runs {
                if counted.insert(binary) {
                    binaries[binary].lbr += hits;
                    binaries[binary].processes.insert(*process);
                }
                out.lbr.push(LbrRun {
                    binary,
                    pairs,
                    hits,
                });
            }
        }
    }

    /// The stack walks' runs of frames within one binary.
    fn stacks(&self, r: &Recording, out: &mut Attributed) {
        for ((process, frames), &hits) in &r.stacks {
            let located = frames.iter().map(|&f| {
                self.locate(Some(*process), f)
                    .map(|(k, base)| (k, rva(f, base)))
            });
            for (binary, frames) in runs(located) {
                if frames.len() >= 2 {
                    out.stacks.push(StackRun {
                        binary,
                        frames,
                        hits,
                    });
                }
            }
        }
    }
}

/// The binaries with samples, most samples first, and the runs renumbered to them.
fn ordered(binaries: Vec<EtlBinary>, mut out: Attributed) -> Attributed {
    let mut order: Vec<usize> = (0..binaries.len())
        .filter(|&i| binaries[i].total() > 0)
        .collect();
    order.sort_by(|&a, &b| {
        let (x, y) = (&binaries[a], &binaries[b]);
        y.total()
            .cmp(&x.total())
            .then_with(|| x.name.cmp(&y.name))
            .then_with(|| x.identity.cmp(&y.identity))
    });
    let mut new_index = vec![usize::MAX; binaries.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    for run in &mut out.lbr {
        run.binary = new_index[run.binary];
    }
    // A stack's frames in a binary no sample fell in are left out with that binary: a
    // stack is the context of a sample, and the binaries listed are those with samples.
    out.stacks.retain(|run| new_index[run.binary] != usize::MAX);
    for run in &mut out.stacks {
        run.binary = new_index[run.binary];
    }
    out.lbr
        .sort_by(|a, b| (a.binary, &a.pairs).cmp(&(b.binary, &b.pairs)));
    out.stacks
        .sort_by(|a, b| (a.binary, &a.frames).cmp(&(b.binary, &b.frames)));
    let mut slots: Vec<Option<EtlBinary>> = binaries.into_iter().map(Some).collect();
    out.binaries = order
        .iter()
        .map(|&i| slots[i].take().expect("each once"))
        .collect();
    out
}

/// Splits located items into runs of consecutive items in one binary; an item in none
/// ends a run.
fn runs<T>(items: impl Iterator<Item = Option<(usize, T)>>) -> Vec<(usize, Vec<T>)> {
    let mut runs: Vec<(usize, Vec<T>)> = Vec::new();
    let mut open = false;
    for item in items {
        match item {
            Some((binary, t)) => match runs.last_mut() {
                Some((b, run)) if open && *b == binary => run.push(t),
                _ => {
                    runs.push((binary, vec![t]));
                    open = true;
                }
            },
            None => open = false,
        }
    }
    runs
}

/// An address as an RVA of the image at `base` that holds it (images span at most 4 GiB).
fn rva(address: u64, base: u64) -> u32 {
    u32::try_from(address - base).expect("an image spans at most 4 GiB")
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::etl::buffer::{Buffer, BufferHeader};
    use sptdump_testkit::etl::{self, thread};

    const KERNEL: u64 = 0xFFFF_F800_0000_0000;

    fn image(process: u32, base: u64, size: u64, path: &str) -> Vec<u8> {
        etl::image(8, process, base, size, path)
    }

    fn identity(process: u32, base: u64, guid: u128, age: u32, pdb: &str) -> Vec<u8> {
        etl::pdb_id(process, base, guid, age, pdb)
    }

    fn sample(thread: u32, ip: u64, pmc: Option<u16>) -> Vec<u8> {
        etl::sample(8, thread, ip, pmc)
    }

    fn lbr(process: u32, thread: u32, pairs: &[(u64, u64)]) -> Vec<u8> {
        etl::lbr(8, process, thread, pairs)
    }

    fn stack(process: u32, frames: &[u64]) -> Vec<u8> {
        etl::stack(8, process, 1, frames)
    }

    /// A recording of `events`, in one buffer.
    fn recorded(events: &[Vec<u8>]) -> Recording {
        let mut bytes = Vec::new();
        for e in events {
            bytes.extend(e);
            bytes.resize(bytes.len().next_multiple_of(8), 0);
        }
        let mut r = Recording::new();
        r.add(&Buffer {
            index: 0,
            offset: 0,
            header: BufferHeader::parse(&[0; 72]),
            events: &bytes,
        });
        r
    }

    #[test]
    fn samples_records_and_stacks_fall_in_their_processes_images() {
        let r = recorded(&[
            image(0, KERNEL, 0x10_0000, "\\SystemRoot\\system32\\NTOSKRNL.EXE"),
            identity(0, KERNEL, 1, 2, "ntkrnlmp.pdb"),
            image(7, 0x40_0000, 0x1000, "\\Device\\HarddiskVolume2\\App.exe"),
            identity(7, 0x40_0000, 3, 1, "app.pdb"),
            image(8, 0x40_0000, 0x1000, "\\Device\\HarddiskVolume2\\App.exe"),
            identity(8, 0x40_0000, 3, 1, "app.pdb"),
            image(7, 0x50_0000, 0x1000, "\\Device\\x\\nopdb.dll"),
            thread(7, 70),
            thread(8, 80),
            sample(70, 0x40_0010, None),
            sample(80, 0x40_0010, None),
            sample(80, 0x40_0020, Some(25)),
            sample(70, 0x50_0004, None),
            sample(70, KERNEL + 8, None),
            sample(99, KERNEL + 8, None),
            sample(99, 0x40_0010, None),
            sample(70, 0x60_0000, Some(25)),
            // Two pairs in the app, one out of it, one back: two runs.
            lbr(
                7,
                70,
                &[
                    (0x40_0100, 0x40_0200),
                    (0x40_0300, 0x40_0400),
                    (0x40_0500, 0x50_0000),
                    (0x40_0600, 0x40_0700),
                ],
            ),
            lbr(7, 70, &[(0x60_0000, 0x60_0001)]),
            stack(
                7,
                &[KERNEL + 1, KERNEL + 2, 0x40_0010, 0x40_0020, 0x50_0000],
            ),
        ]);
        let a = r.attribute();
        let names: Vec<_> = a
            .binaries
            .iter()
            .map(|b| (b.name.as_str(), b.total()))
            .collect();
        assert_eq!(
            names,
            [("app.exe", 4), ("ntoskrnl.exe", 2), ("nopdb.dll", 1)]
        );
        let app = &a.binaries[0];
        assert_eq!(app.identity.as_ref().unwrap().guid, Uuid::from_u128(3));
        assert_eq!(
            (app.timer, app.pmc_total(), app.lbr),
            (2, 1, 1),
            "a record counts once"
        );
        assert_eq!(app.processes, BTreeSet::from([7, 8]));
        assert_eq!(
            app.samples,
            BTreeMap::from([
                ((SampleKind::Timer, 0x10), 2),
                ((SampleKind::Pmc(25), 0x20), 1)
            ])
        );
        assert_eq!(
            a.binaries[1].samples,
            BTreeMap::from([((SampleKind::Timer, 8), 2)])
        );
        assert_eq!(a.binaries[2].identity, None);
        assert_eq!(
            a.unattributed,
            Unattributed {
                timer: 1,
                pmc: 1,
                lbr: 1
            }
        );
        assert_eq!(
            a.lbr,
            [
                LbrRun {
                    binary: 0,
                    pairs: vec![(0x100, 0x200), (0x300, 0x400)],
                    hits: 1
                },
                LbrRun {
                    binary: 0,
                    pairs: vec![(0x600, 0x700)],
                    hits: 1
                },
            ]
        );
        assert_eq!(
            a.stacks,
            [
                StackRun {
                    binary: 0,
                    frames: vec![0x10, 0x20],
                    hits: 1
                },
                StackRun {
                    binary: 1,
                    frames: vec![1, 2],
                    hits: 1
                },
            ]
        );
    }

    proptest! {
        /// Attribution finds, for every sample, what a scan of every image finds: the image
        /// of the sample's thread's process (of process 0 or 4 for the kernel's half) that
        /// holds its address.
        #[test]
        fn attribution_is_a_scan_of_the_images(
            images in prop::collection::vec((0u32..3, 0u64..40, 1u64..6, any::<bool>()), 0..12),
            threads in prop::collection::vec((0u32..3, 0u32..6), 0..8),
            samples in prop::collection::vec((0u32..8, 0u64..1040, 0usize..3, any::<bool>()), 0..40),
        ) {
            // Images at multiples of 8 pages of 4 KiB, each once per process and base.
            let mut events = Vec::new();
            let mut placed: Vec<(u32, u64, u64, usize)> = Vec::new();
            for (i, &(process, slot, pages, kernel)) in images.iter().enumerate() {
                let base = if kernel { KERNEL } else { 0 } + slot * 0x8000;
                let process = if kernel { [0, 4][process as usize % 2] } else { process + 5 };
                if placed.iter().any(|&(p, b, ..)| p == process && b == base) {
                    continue;
                }
                events.push(image(process, base, pages * 0x1000, &format!("m{i}.dll")));
                placed.push((process, base, pages * 0x1000, i));
            }
            for &(process, t) in &threads {
                events.push(thread(process + 5, t));
            }
            let process_of = |t: u32| threads.iter().rev().find(|&&(_, x)| x == t).map(|&(p, _)| p + 5);
            let mut want: BTreeMap<String, u64> = BTreeMap::new();
            let mut unattributed = 0;
            for &(t, at, delta, kernel) in &samples {
                // Addresses on images' first and last bytes and just past them among others.
                let ip = if kernel { KERNEL } else { 0 } + at * 0x200 + [0, 1, 0x1FF][delta];
                events.push(sample(t, ip, None));
                // The plain reading: every image, in the order loaded.
                let space = |p: u32| if kernel { p == 0 || p == 4 } else { Some(p) == process_of(t) };
                let mut found: Vec<_> = placed
                    .iter()
                    .filter(|&&(p, b, s, _)| space(p) && b <= ip && ip < b + s)
                    .collect();
                found.sort_by_key(|&&(_, b, _, _)| std::cmp::Reverse(b));
                // Of the kernel's two spaces at one base, the one loaded first.
                match found.iter().filter(|f| f.1 == found[0].1).min_by_key(|f| f.3) {
                    Some(&&(.., i)) => *want.entry(format!("m{i}.dll")).or_default() += 1,
                    None => unattributed += 1,
                }
            }
            let a = recorded(&events).attribute();
            let got: BTreeMap<String, u64> =
                a.binaries.iter().map(|b| (b.name.clone(), b.timer)).collect();
            prop_assert_eq!(got, want);
            prop_assert_eq!(a.unattributed.timer, unattributed);
        }
    }
}
