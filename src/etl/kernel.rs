//! The payloads of the events SPEC section 19 reads: the log-file header, samples, threads,
//! images, the images' PDB identities, LBR records and stack walks.
//!
//! Pointer-sized fields take the log-file header's pointer size (4 or 8). Every reader
//! returns `None` for a payload too short for its fields: such an event is counted as
//! unreadable by the caller, never guessed at.

use byteorder::{ByteOrder, LittleEndian as LE};
use uuid::{Uuid, uuid};

use crate::etl::event::{Event, Header};

/// Hooks (`group << 8 | opcode`) of the kernel events read.
pub mod hook {
    /// The log-file header, the first event of a file.
    pub const LOG_HEADER: u16 = 0x0000;
    /// A thread started.
    pub const THREAD_START: u16 = 0x0501;
    /// A thread that was running when the recording started (rundown).
    pub const THREAD_RUNDOWN: u16 = 0x0503;
    /// An image unloaded.
    pub const IMAGE_UNLOAD: u16 = 0x1402;
    /// An image that was loaded when the recording started (or ended: rundown).
    pub const IMAGE_RUNDOWN: u16 = 0x1403;
    /// An image loaded.
    pub const IMAGE_LOAD: u16 = 0x140A;
    /// A timer sample (`SampledProfile`).
    pub const TIMER_SAMPLE: u16 = 0x0F2E;
    /// A PMC sample (`PmcInterrupt`; inferred, as TraceEvent reads it).
    pub const PMC_SAMPLE: u16 = 0x0F2F;
    /// A stack walk.
    pub const STACK_WALK: u16 = 0x1820;
}

/// KernelTraceControl's image identities (`DbgID_RSDS` is its opcode 36).
pub const IMAGE_ID: Uuid = uuid!("b3e675d7-2554-4f18-830b-2762732560de");
/// `DbgID_RSDS`'s opcode.
pub const DBGID_RSDS: u8 = 36;
/// The task of LBR records (inferred, as dotnet-pgo reads them).
pub const LBR_TASK: Uuid = uuid!("99134383-5248-43fc-834b-529454e75df3");
/// The LBR records' opcode.
pub const LBR_OPCODE: u8 = 32;

/// Reads pointer-sized and fixed fields from a payload, in order.
struct Fields<'a> {
    bytes: &'a [u8],
    at: usize,
    pointer: usize,
}

impl<'a> Fields<'a> {
    fn new(bytes: &'a [u8], pointer: u8) -> Fields<'a> {
        Fields {
            bytes,
            at: 0,
            pointer: usize::from(pointer),
        }
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let b = self.bytes.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(b)
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(LE::read_u16)
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(LE::read_u32)
    }

    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(LE::read_u64)
    }

    fn ptr(&mut self) -> Option<u64> {
        if self.pointer == 4 {
            self.u32().map(u64::from)
        } else {
            self.u64()
        }
    }

    fn rest(&self) -> &'a [u8] {
        &self.bytes[self.at.min(self.bytes.len())..]
    }
}

/// The log-file header's fields that say what the recording was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogHeader {
    /// The size of the logger's buffers.
    pub buffer_size: u32,
    /// The OS version: major, minor, build.
    pub os: (u8, u8, u32),
    /// The number of processors.
    pub processors: u32,
    /// When the recording ended (FILETIME).
    pub end: u64,
    /// The buffers the logger wrote.
    pub buffers_written: u32,
    /// The pointer size of the recording machine, 4 or 8.
    pub pointer_size: u8,
    /// Events the logger lost.
    pub events_lost: u32,
    /// The frequency of the events' time stamps, per second.
    pub frequency: u64,
    /// When the recording started (FILETIME).
    pub start: u64,
}

impl LogHeader {
    /// Reads the log-file header from its payload. The fields from the frequency on lie
    /// after two pointers and a time-zone record: at 256 on a 64-bit recording (verified), at
    /// 248 on a 32-bit one (inferred from the layout). `None` when the payload is too short
    /// or the pointer size is neither 4 nor 8.
    pub fn parse(payload: &[u8]) -> Option<LogHeader> {
        let mut f = Fields::new(payload, 8);
        let buffer_size = f.u32()?;
        let major = f.take(1)?[0];
        let minor = f.take(1)?[0];
        f.take(2)?;
        let build = f.u32()? & 0xFFFF;
        let processors = f.u32()?;
        let end = f.u64()?;
        f.take(12)?;
        let buffers_written = f.u32()?;
        f.take(4)?;
        let pointer_size = f.u32()?;
        let events_lost = f.u32()?;
        let pointer_size = match pointer_size {
            4 => 4u8,
            8 => 8,
            _ => return None,
        };
        let at = if pointer_size == 8 { 256 } else { 248 };
        let frequency = LE::read_u64(payload.get(at..at + 8)?);
        let start = LE::read_u64(payload.get(at + 8..at + 16)?);
        Some(LogHeader {
            buffer_size,
            os: (major, minor, build),
            processors,
            end,
            buffers_written,
            pointer_size,
            events_lost,
            frequency,
            start,
        })
    }
}

/// What kind of sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SampleKind {
    /// A timer sample.
    Timer,
    /// A PMC sample, with its profile source.
    Pmc(u16),
}

/// A timer or PMC sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Which kind.
    pub kind: SampleKind,
    /// The instruction pointer.
    pub ip: u64,
    /// The thread it interrupted.
    pub thread: u32,
}

/// A thread and its process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thread {
    /// The process.
    pub process: u32,
    /// The thread.
    pub thread: u32,
}

/// An image in a process's address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Image<'a> {
    /// Where it is loaded.
    pub base: u64,
    /// How many bytes it spans.
    pub size: u64,
    /// The process (0 for the kernel's).
    pub process: u32,
    /// Its checksum, from its PE header.
    pub checksum: u32,
    /// Its time stamp, from its PE header.
    pub time_stamp: u32,
    /// Its file name as UTF-16 code units, the device path (`\Device\HarddiskVolume2\...`).
    pub file_name: &'a [u8],
}

/// An image's PDB identity (`DbgID_RSDS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PdbId<'a> {
    /// The image's base.
    pub base: u64,
    /// The process.
    pub process: u32,
    /// The PDB's GUID.
    pub guid: Uuid,
    /// The PDB's age.
    pub age: u32,
    /// The PDB's name as recorded (bytes up to the NUL).
    pub pdb: &'a [u8],
}

/// An LBR record: from/to pairs, newest first (inferred).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lbr<'a> {
    /// When it was taken.
    pub time: u64,
    /// The process.
    pub process: u32,
    /// The thread.
    pub thread: u32,
    /// The pairs' bytes: pointer-sized from, to, from, to...
    pub pairs: &'a [u8],
    /// The pointer size the pairs are in.
    pub pointer: u8,
}

impl Lbr<'_> {
    /// The (from, to) pairs, newest first.
    pub fn pairs(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let p = usize::from(self.pointer);
        self.pairs.chunks_exact(2 * p).map(move |c| {
            if p == 4 {
                (u64::from(LE::read_u32(c)), u64::from(LE::read_u32(&c[4..])))
            } else {
                (LE::read_u64(c), LE::read_u64(&c[8..]))
            }
        })
    }
}

/// A stack walk: the frames of one thread at one time, leaf first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackWalk<'a> {
    /// The time of the event the stack belongs to.
    pub time: u64,
    /// The process.
    pub process: u32,
    /// The thread.
    pub thread: u32,
    /// The frames' bytes, pointer-sized.
    pub frames: &'a [u8],
    /// The pointer size.
    pub pointer: u8,
}

impl StackWalk<'_> {
    /// The frames, leaf first.
    pub fn frames(&self) -> impl Iterator<Item = u64> + '_ {
        let p = usize::from(self.pointer);
        self.frames.chunks_exact(p).map(move |c| {
            if p == 4 {
                u64::from(LE::read_u32(c))
            } else {
                LE::read_u64(c)
            }
        })
    }
}

/// An event SPEC section 19 reads, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kernel<'a> {
    /// The log-file header.
    LogHeader(LogHeader),
    /// A timer or PMC sample.
    Sample(Sample),
    /// A thread started, or was running (rundown).
    Thread(Thread),
    /// An image loaded, or was loaded (rundown).
    Image(Image<'a>),
    /// An image unloaded.
    ImageUnload(Image<'a>),
    /// An image's PDB identity.
    PdbId(PdbId<'a>),
    /// An LBR record.
    Lbr(Lbr<'a>),
    /// A stack walk.
    StackWalk(StackWalk<'a>),
}

/// What an event is, as far as section 19 reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Read<'a> {
    /// One of the events read.
    Known(Kernel<'a>),
    /// One of them, but its payload is too short for its fields.
    Short,
    /// Another event, not read.
    Other,
}

/// Decodes `event` with the recording's pointer size.
pub fn read<'a>(event: &Event<'a>, pointer: u8) -> Read<'a> {
    let known = match event.header {
        Header::System { hook, .. } | Header::PerfInfo { hook, .. } => {
            match kernel(hook, event.payload, pointer) {
                Some(k) => k,
                None => return Read::Other,
            }
        }
        Header::Classic { guid, opcode, .. } => {
            if guid == IMAGE_ID && opcode == DBGID_RSDS {
                pdb_id(event.payload)
            } else if guid == LBR_TASK && opcode == LBR_OPCODE {
                lbr(event.payload, pointer)
            } else {
                return Read::Other;
            }
        }
        Header::Manifest { .. } => return Read::Other,
    };
    match known {
        Some(k) => Read::Known(k),
        None => Read::Short,
    }
}

/// A kernel hook's payload: `None` for a hook not read, `Some(None)` for a short payload.
fn kernel(hook: u16, payload: &[u8], pointer: u8) -> Option<Option<Kernel<'_>>> {
    let mut f = Fields::new(payload, pointer);
    Some(match hook {
        hook::LOG_HEADER => LogHeader::parse(payload).map(Kernel::LogHeader),
        hook::TIMER_SAMPLE | hook::PMC_SAMPLE => (|| {
            let ip = f.ptr()?;
            let thread = f.u32()?;
            let kind = if hook == hook::TIMER_SAMPLE {
                SampleKind::Timer
            } else {
                SampleKind::Pmc(f.u16()?)
            };
            Some(Kernel::Sample(Sample { kind, ip, thread }))
        })(),
        hook::THREAD_START | hook::THREAD_RUNDOWN => (|| {
            let process = f.u32()?;
            let thread = f.u32()?;
            Some(Kernel::Thread(Thread { process, thread }))
        })(),
        hook::IMAGE_LOAD | hook::IMAGE_RUNDOWN | hook::IMAGE_UNLOAD => (|| {
            let image = image(&mut f)?;
            Some(if hook == hook::IMAGE_UNLOAD {
                Kernel::ImageUnload(image)
            } else {
                Kernel::Image(image)
            })
        })(),
        hook::STACK_WALK => (|| {
            let time = f.u64()?;
            let process = f.u32()?;
            let thread = f.u32()?;
            let frames = f.rest();
            let frames = &frames[..frames.len() / usize::from(pointer) * usize::from(pointer)];
            Some(Kernel::StackWalk(StackWalk {
                time,
                process,
                thread,
                frames,
                pointer,
            }))
        })(),
        _ => return None,
    })
}

/// An image event's payload: base, size, process, checksum, time stamp, a reserved u32, the
/// default base, four reserved u32, then the file name.
fn image<'a>(f: &mut Fields<'a>) -> Option<Image<'a>> {
    let base = f.ptr()?;
    let size = f.ptr()?;
    let process = f.u32()?;
    let checksum = f.u32()?;
    let time_stamp = f.u32()?;
    f.u32()?;
    f.ptr()?;
    f.take(16)?;
    Some(Image {
        base,
        size,
        process,
        checksum,
        time_stamp,
        file_name: utf16z(f.rest()),
    })
}

/// The UTF-16 code units of `bytes` up to their NUL (or all of them, an even count).
fn utf16z(bytes: &[u8]) -> &[u8] {
    let end = bytes
        .chunks_exact(2)
        .position(|c| c == [0, 0])
        .unwrap_or(bytes.len() / 2);
    &bytes[..end * 2]
}

fn pdb_id(payload: &[u8]) -> Option<Kernel<'_>> {
    let mut f = Fields::new(payload, 8);
    let base = f.u64()?;
    let process = f.u32()?;
    let g = f.take(16)?;
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(g);
    let age = f.u32()?;
    let rest = f.rest();
    let pdb = &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())];
    Some(Kernel::PdbId(PdbId {
        base,
        process,
        guid: Uuid::from_bytes_le(bytes),
        age,
        pdb,
    }))
}

fn lbr(payload: &[u8], pointer: u8) -> Option<Kernel<'_>> {
    let mut f = Fields::new(payload, pointer);
    let time = f.u64()?;
    let process = f.u32()?;
    let thread = f.u32()?;
    f.u32()?;
    let pairs = f.rest();
    let pair = 2 * usize::from(pointer);
    Some(Kernel::Lbr(Lbr {
        time,
        process,
        thread,
        pairs: &pairs[..pairs.len() / pair * pair],
        pointer,
    }))
}

/// A file name's UTF-16 code units as text, with U+FFFD for what is not UTF-16.
pub fn file_name(units: &[u8]) -> String {
    let units: Vec<u16> = units.chunks_exact(2).map(LE::read_u16).collect();
    String::from_utf16_lossy(&units)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::etl::event::Events;
    use sptdump_testkit::etl::{classic, perf_info, system};

    /// The one event of `bytes`, read with pointers of `pointer` bytes.
    fn one(bytes: Vec<u8>, pointer: u8) -> Read<'static> {
        let bytes: &'static [u8] = Vec::leak(bytes);
        let e = Events::new(bytes).next().unwrap().unwrap();
        read(&e, pointer)
    }

    fn ptr(v: u64, pointer: u8) -> Vec<u8> {
        v.to_le_bytes()[..usize::from(pointer)].to_vec()
    }

    /// A log-file header's payload with the fields read, on a recording of `pointer`.
    fn log_header(pointer: u8) -> Vec<u8> {
        let mut p = vec![0u8; 300];
        p[0..4].copy_from_slice(&65536u32.to_le_bytes());
        p[4] = 10;
        p[5] = 0;
        p[8..12].copy_from_slice(&(19043u32 | 7 << 16).to_le_bytes());
        p[12..16].copy_from_slice(&12u32.to_le_bytes());
        p[16..24].copy_from_slice(&1000u64.to_le_bytes());
        p[36..40].copy_from_slice(&3u32.to_le_bytes());
        p[44..48].copy_from_slice(&u32::from(pointer).to_le_bytes());
        p[48..52].copy_from_slice(&5u32.to_le_bytes());
        let at = if pointer == 8 { 256 } else { 248 };
        p[at..at + 8].copy_from_slice(&10_000_000u64.to_le_bytes());
        p[at + 8..at + 16].copy_from_slice(&900u64.to_le_bytes());
        p
    }

    #[test]
    fn the_log_file_header_of_either_pointer_size() {
        for pointer in [4, 8] {
            let h = LogHeader::parse(&log_header(pointer)).unwrap();
            assert_eq!(
                h,
                LogHeader {
                    buffer_size: 65536,
                    os: (10, 0, 19043),
                    processors: 12,
                    end: 1000,
                    buffers_written: 3,
                    pointer_size: pointer,
                    events_lost: 5,
                    frequency: 10_000_000,
                    start: 900,
                }
            );
        }
        let mut odd = log_header(8);
        odd[44] = 6;
        assert_eq!(LogHeader::parse(&odd), None);
        assert_eq!(LogHeader::parse(&log_header(8)[..271]), None);
        assert!(LogHeader::parse(&log_header(8)[..272]).is_some());
        assert_eq!(
            one(system(hook::LOG_HEADER, 0, 0, 0, &log_header(8)[..100]), 8),
            Read::Short
        );
    }

    #[test]
    fn samples_threads_and_stacks_of_either_pointer_size() {
        for pointer in [4, 8] {
            let ip = if pointer == 8 {
                0xFFFF_F800_0000_1234
            } else {
                0x8000_1234
            };
            let mut timer = ptr(ip, pointer);
            timer.extend(77u32.to_le_bytes());
            timer.extend([1, 0, 0, 0]);
            assert_eq!(
                one(perf_info(hook::TIMER_SAMPLE, 5, &timer), pointer),
                Read::Known(Kernel::Sample(Sample {
                    kind: SampleKind::Timer,
                    ip,
                    thread: 77
                }))
            );
            let mut pmc = ptr(ip, pointer);
            pmc.extend(78u32.to_le_bytes());
            pmc.extend(6u16.to_le_bytes());
            pmc.extend([0, 0]);
            assert_eq!(
                one(perf_info(hook::PMC_SAMPLE, 5, &pmc), pointer),
                Read::Known(Kernel::Sample(Sample {
                    kind: SampleKind::Pmc(6),
                    ip,
                    thread: 78
                }))
            );
            assert_eq!(
                one(
                    perf_info(hook::PMC_SAMPLE, 5, &pmc[..usize::from(pointer) + 5]),
                    pointer
                ),
                Read::Short
            );
            let mut stack = 9u64.to_le_bytes().to_vec();
            stack.extend(4u32.to_le_bytes());
            stack.extend(44u32.to_le_bytes());
            for f in [ip, ip + 1, 3] {
                stack.extend(ptr(f, pointer));
            }
            stack.push(0xEE);
            let Read::Known(Kernel::StackWalk(s)) =
                one(perf_info(hook::STACK_WALK, 5, &stack), pointer)
            else {
                panic!("not a stack walk");
            };
            assert_eq!((s.time, s.process, s.thread), (9, 4, 44));
            assert_eq!(s.frames().collect::<Vec<_>>(), [ip, ip + 1, 3]);
        }
        let thread = [3u32.to_le_bytes(), 4u32.to_le_bytes()].concat();
        assert_eq!(
            one(system(hook::THREAD_RUNDOWN, 0, 0, 0, &thread), 8),
            Read::Known(Kernel::Thread(Thread {
                process: 3,
                thread: 4
            }))
        );
        assert_eq!(one(system(0x0502, 0, 0, 0, &thread), 8), Read::Other);
    }

    #[test]
    fn images_of_either_pointer_size_with_their_names() {
        for pointer in [4, 8] {
            let mut p = ptr(0x40_0000, pointer);
            p.extend(ptr(0x2000, pointer));
            for v in [7u32, 0xC5, 0x5EED, 0] {
                p.extend(v.to_le_bytes());
            }
            p.extend(ptr(0x40_0000, pointer));
            p.extend([0; 16]);
            for u in "\\Device\\a.dll".encode_utf16().chain([0, 0x41]) {
                p.extend(u.to_le_bytes());
            }
            let want = Image {
                base: 0x40_0000,
                size: 0x2000,
                process: 7,
                checksum: 0xC5,
                time_stamp: 0x5EED,
                file_name: &[],
            };
            for (h, unload) in [
                (hook::IMAGE_LOAD, false),
                (hook::IMAGE_RUNDOWN, false),
                (hook::IMAGE_UNLOAD, true),
            ] {
                let got = match one(system(h, 0, 0, 0, &p), pointer) {
                    Read::Known(Kernel::Image(i)) if !unload => i,
                    Read::Known(Kernel::ImageUnload(i)) if unload => i,
                    other => panic!("{other:?}"),
                };
                assert_eq!(
                    Image {
                        file_name: &[],
                        ..got
                    },
                    want
                );
                assert_eq!(file_name(got.file_name), "\\Device\\a.dll");
            }
            let short = 2 * usize::from(pointer) + 16 + usize::from(pointer) + 15;
            assert_eq!(
                one(system(hook::IMAGE_LOAD, 0, 0, 0, &p[..short]), pointer),
                Read::Short
            );
        }
    }

    #[test]
    fn pdb_identities_and_lbr_records_by_their_guids() {
        let guid = Uuid::from_u128(0x7248_2100_1C1C_4A03_AED8_C4C7_1C2E_8D1D);
        let mut p = 0xFFFF_F800_0000_0000u64.to_le_bytes().to_vec();
        p.extend(4u32.to_le_bytes());
        p.extend(guid.to_bytes_le());
        p.extend(2u32.to_le_bytes());
        p.extend(b"ntkrnlmp.pdb\0\0\0");
        assert_eq!(
            one(classic(IMAGE_ID.as_u128(), DBGID_RSDS, 0, 0, 0, &p), 4),
            Read::Known(Kernel::PdbId(PdbId {
                base: 0xFFFF_F800_0000_0000,
                process: 4,
                guid,
                age: 2,
                pdb: b"ntkrnlmp.pdb"
            }))
        );
        assert_eq!(
            one(classic(IMAGE_ID.as_u128(), 0, 0, 0, 0, &p), 8),
            Read::Other
        );
        assert_eq!(
            one(
                classic(IMAGE_ID.as_u128(), DBGID_RSDS, 0, 0, 0, &p[..31]),
                8
            ),
            Read::Short
        );
        for pointer in [4, 8] {
            let mut l = 5u64.to_le_bytes().to_vec();
            for v in [6u32, 7, 0] {
                l.extend(v.to_le_bytes());
            }
            for v in [0x10, 0x20, 0x30, 0x40] {
                l.extend(ptr(v, pointer));
            }
            l.push(1);
            let Read::Known(Kernel::Lbr(r)) = one(
                classic(LBR_TASK.as_u128(), LBR_OPCODE, 0, 0, 0, &l),
                pointer,
            ) else {
                panic!("not an LBR record");
            };
            assert_eq!((r.time, r.process, r.thread), (5, 6, 7));
            assert_eq!(r.pairs().collect::<Vec<_>>(), [(0x10, 0x20), (0x30, 0x40)]);
        }
        assert_eq!(
            one(classic(LBR_TASK.as_u128(), 33, 0, 0, 0, &[0; 40]), 8),
            Read::Other
        );
    }
}
