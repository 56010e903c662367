//! The events of one buffer: each header kind of SPEC section 19, its payload, and where the
//! next event starts.
//!
//! ```text
//! byte 2: the header type; byte 3: marker flags (& 0xC0 == 0xC0 on every event)
//! 0x01/0x02 system    u16 size +4, u16 hook +6, thread +8, process +12, time +16,
//!                     kernel and user time +24: 32 bytes
//! 0x03/0x04 compact   as system without the kernel and user time: 24 bytes (inferred)
//! 0x10/0x11 perf-info u16 size +4, u16 hook +6, time +8: 16 bytes
//! 0x09/0x0a full      u16 size +0, opcode +4, version +6, thread +8, process +12,
//! 0x14/0x15 classic     time +16, GUID +24, kernel and user time +40: 48 bytes
//! 0x12/0x13 event     u16 size +0, flags +4, thread +8, process +12, time +16,
//!                     provider GUID +24, descriptor +40 (id u16, version, channel, level,
//!                     opcode u8, task u16, keyword u64), processor time +56,
//!                     activity GUID +64: 80 bytes
//! ```
//!
//! A hook is `group << 8 | opcode`, the kernel's way of naming its own events. Events are
//! 8-byte aligned: the next starts at this one's start plus its size, rounded up to 8.

use byteorder::{ByteOrder, LittleEndian as LE};
use uuid::Uuid;

/// What an event's header says of it, by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Header {
    /// A kernel event with a system or compact header (0x01 to 0x04).
    System {
        /// `group << 8 | opcode`.
        hook: u16,
        /// The thread that logged it.
        thread: u32,
        /// Its process.
        process: u32,
        /// Its time stamp.
        time: u64,
    },
    /// A kernel event with a perf-info header (0x10, 0x11): no thread or process.
    PerfInfo {
        /// `group << 8 | opcode`.
        hook: u16,
        /// Its time stamp.
        time: u64,
    },
    /// A classic event named by a GUID (0x09, 0x0a, 0x14, 0x15).
    Classic {
        /// The event's GUID (a kernel event's task GUID, or a classic provider's).
        guid: Uuid,
        /// Its type, the opcode.
        opcode: u8,
        /// Its version.
        version: u16,
        /// The thread that logged it.
        thread: u32,
        /// Its process.
        process: u32,
        /// Its time stamp.
        time: u64,
    },
    /// A manifest or self-describing event (0x12, 0x13).
    Manifest {
        /// The provider's GUID.
        provider: Uuid,
        /// The event's id.
        id: u16,
        /// Its opcode.
        opcode: u8,
        /// Its task.
        task: u16,
        /// The thread that logged it.
        thread: u32,
        /// Its process.
        process: u32,
        /// Its time stamp.
        time: u64,
    },
}

impl Header {
    /// The time stamp, in the ticks of the log-file header's frequency.
    pub fn time(&self) -> u64 {
        match *self {
            Header::System { time, .. }
            | Header::PerfInfo { time, .. }
            | Header::Classic { time, .. }
            | Header::Manifest { time, .. } => time,
        }
    }

    /// The kernel's hook of a system or perf-info event.
    pub fn hook(&self) -> Option<u16> {
        match *self {
            Header::System { hook, .. } | Header::PerfInfo { hook, .. } => Some(hook),
            _ => None,
        }
    }
}

/// One event of a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event<'a> {
    /// Its offset among the buffer's events (add the buffer's 72-byte header for the offset
    /// in the buffer).
    pub at: usize,
    /// Its header type, byte 2.
    pub kind: u8,
    /// What its header says.
    pub header: Header,
    /// The bytes after its header, up to its size.
    pub payload: &'a [u8],
}

/// Where a buffer's events stopped being readable: an unknown header type, or a size that
/// leaves the buffer. The rest of that buffer is skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unreadable {
    /// Its offset among the buffer's events.
    pub at: usize,
    /// The header type there (byte 2).
    pub kind: u8,
    /// The marker flags there (byte 3).
    pub marker: u8,
    /// The size its header gives, where its kind says where the size is.
    pub size: Option<u16>,
}

/// The events of a buffer, in order; an [`Unreadable`] ends them.
#[derive(Clone, Debug)]
pub struct Events<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Events<'a> {
    /// The events in `bytes`, a buffer's events after its header.
    pub fn new(bytes: &'a [u8]) -> Events<'a> {
        Events { bytes, at: 0 }
    }
}

/// The size of each kind's header, and where its size is: `(header, size at)`.
fn layout(kind: u8) -> Option<(usize, usize)> {
    Some(match kind {
        0x01 | 0x02 => (32, 4),
        0x03 | 0x04 => (24, 4),
        0x10 | 0x11 => (16, 4),
        0x09 | 0x0a | 0x14 | 0x15 => (48, 0),
        0x12 | 0x13 => (80, 0),
        _ => return None,
    })
}

fn guid(bytes: &[u8]) -> Uuid {
    let mut g = [0u8; 16];
    g.copy_from_slice(&bytes[..16]);
    Uuid::from_bytes_le(g)
}

/// Reads the header of kind `kind` from `e`, which holds at least that header's bytes.
fn header(kind: u8, e: &[u8]) -> Header {
    if let 0x10 | 0x11 = kind {
        return Header::PerfInfo {
            hook: LE::read_u16(&e[6..]),
            time: LE::read_u64(&e[8..]),
        };
    }
    // Every other kind keeps the thread, process and time at 8, 12 and 16.
    let (thread, process, time) = (
        LE::read_u32(&e[8..]),
        LE::read_u32(&e[12..]),
        LE::read_u64(&e[16..]),
    );
    match kind {
        0x01..=0x04 => Header::System {
            hook: LE::read_u16(&e[6..]),
            thread,
            process,
            time,
        },
        0x12 | 0x13 => Header::Manifest {
            provider: guid(&e[24..]),
            id: LE::read_u16(&e[40..]),
            opcode: e[45],
            task: LE::read_u16(&e[46..]),
            thread,
            process,
            time,
        },
        _ => Header::Classic {
            guid: guid(&e[24..]),
            opcode: e[4],
            version: LE::read_u16(&e[6..]),
            thread,
            process,
            time,
        },
    }
}

impl<'a> Iterator for Events<'a> {
    type Item = Result<Event<'a>, Unreadable>;

    fn next(&mut self) -> Option<Self::Item> {
        let at = self.at;
        let rest = self.bytes.get(at..).filter(|r| r.len() >= 8)?;
        let (kind, marker) = (rest[2], rest[3]);
        let mut unreadable = Unreadable {
            at,
            kind,
            marker,
            size: None,
        };
        // Whatever happens next, this buffer's events end here unless one is read.
        self.at = self.bytes.len();
        if marker & 0xC0 != 0xC0 {
            return Some(Err(unreadable));
        }
        let Some((head, size_at)) = layout(kind) else {
            return Some(Err(unreadable));
        };
        let size = LE::read_u16(&rest[size_at..]);
        unreadable.size = Some(size);
        let size = usize::from(size);
        if size < head || size > rest.len() {
            return Some(Err(unreadable));
        }
        let event = &rest[..size];
        self.at = (at + size).next_multiple_of(8);
        Some(Ok(Event {
            at,
            kind,
            header: header(kind, event),
            payload: &event[head..],
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sptdump_testkit::etl::{classic, perf_info, system};

    fn body(events: &[Vec<u8>]) -> Vec<u8> {
        let mut b = Vec::new();
        for e in events {
            b.extend(e);
            b.resize(b.len().next_multiple_of(8), 0);
        }
        b
    }

    #[test]
    fn each_kind_of_header_is_read_with_its_payload() {
        let g = Uuid::from_u128(0x0011_2233_4455_6677_8899_aabb_ccdd_eeff);
        let bytes = body(&[
            system(0x0501, 10, 20, 30, &[1, 2, 3]),
            perf_info(0x0F2E, 40, &[4; 16]),
            classic(g.as_u128(), 36, 11, 21, 31, &[5]),
        ]);
        let read: Vec<_> = Events::new(&bytes).map(Result::unwrap).collect();
        assert_eq!(read.len(), 3);
        assert_eq!((read[0].at, read[0].kind), (0, 0x02));
        assert_eq!(
            read[0].header,
            Header::System {
                hook: 0x0501,
                thread: 10,
                process: 20,
                time: 30
            }
        );
        assert_eq!(read[0].payload, [1, 2, 3]);
        assert_eq!(read[1].at, 40, "after 35 bytes, rounded up to 8");
        assert_eq!(
            read[1].header,
            Header::PerfInfo {
                hook: 0x0F2E,
                time: 40
            }
        );
        assert_eq!(read[1].payload, [4; 16]);
        assert_eq!(
            read[2].header,
            Header::Classic {
                guid: g,
                opcode: 36,
                version: 2,
                thread: 11,
                process: 21,
                time: 31
            }
        );
        assert_eq!(read[2].payload, [5]);
        assert_eq!(read[2].header.time(), 31);
        assert_eq!(read[2].header.hook(), None);
    }

    #[test]
    fn a_manifest_header_gives_its_provider_and_descriptor() {
        let mut e = vec![0u8; 88];
        e[0..2].copy_from_slice(&88u16.to_le_bytes());
        e[2] = 0x13;
        e[3] = 0xC0;
        e[8..12].copy_from_slice(&7u32.to_le_bytes());
        e[12..16].copy_from_slice(&8u32.to_le_bytes());
        e[16..24].copy_from_slice(&9u64.to_le_bytes());
        e[24..40].copy_from_slice(&Uuid::from_u128(5).to_bytes_le());
        e[40..42].copy_from_slice(&300u16.to_le_bytes());
        e[45] = 12;
        e[46..48].copy_from_slice(&400u16.to_le_bytes());
        let read: Vec<_> = Events::new(&e).collect();
        assert_eq!(read.len(), 1);
        let event = read[0].unwrap();
        assert_eq!(
            event.header,
            Header::Manifest {
                provider: Uuid::from_u128(5),
                id: 300,
                opcode: 12,
                task: 400,
                thread: 7,
                process: 8,
                time: 9
            }
        );
        assert_eq!(event.payload.len(), 8);
    }

    #[test]
    fn an_unknown_kind_or_a_size_that_leaves_the_buffer_ends_it() {
        let good = system(1, 2, 3, 4, &[]);
        let mut unknown = good.clone();
        unknown[2] = 0x05;
        let mut long = good.clone();
        long[4] = 200;
        let mut short = good.clone();
        short[4] = 31;
        let mut unmarked = good.clone();
        unmarked[3] = 0x80;
        for (bad, size) in [
            (unknown, None),
            (long, Some(200)),
            (short, Some(31)),
            (unmarked, None),
        ] {
            let bytes = body(&[good.clone(), bad.clone(), good.clone()]);
            let read: Vec<_> = Events::new(&bytes).collect();
            assert_eq!(read.len(), 2, "one event, then where reading stopped");
            assert!(read[0].is_ok());
            assert_eq!(
                read[1],
                Err(Unreadable {
                    at: 32,
                    kind: bad[2],
                    marker: bad[3],
                    size
                })
            );
        }
        // Fewer than 8 bytes left hold no event: the buffer's events end.
        let mut bytes = body(std::slice::from_ref(&good));
        bytes.extend([0xff; 7]);
        assert_eq!(Events::new(&bytes).count(), 1);
    }
}

#[cfg(test)]
mod twins {
    use super::*;
    use sptdump_testkit::etl::{classic, perf_info, system};

    /// The one event of `e`, with its header type set to `kind`.
    fn as_kind(mut e: Vec<u8>, kind: u8) -> Event<'static> {
        e[2] = kind;
        let bytes: &'static [u8] = Vec::leak(e);
        Events::new(bytes).next().unwrap().unwrap()
    }

    /// The header types of 32-bit recordings, and the compact and instance ones, read as
    /// their verified twins (inferred, SPEC 19): the same fields where the twin has them.
    #[test]
    fn every_twin_of_a_verified_header_reads_as_it() {
        let system = system(0x0501, 10, 20, 30, &[1; 12]);
        let want = as_kind(system.clone(), 0x02);
        assert_eq!(as_kind(system.clone(), 0x01).header, want.header);
        assert_eq!(as_kind(system.clone(), 0x01).payload, want.payload);
        // A compact header stops before the kernel and user time: 8 more bytes of payload.
        for compact in [0x03, 0x04] {
            let e = as_kind(system.clone(), compact);
            assert_eq!(e.header, want.header);
            assert_eq!(e.payload.len(), want.payload.len() + 8);
        }
        let perf = perf_info(0x0F2E, 40, &[4; 16]);
        let (a, b) = (as_kind(perf.clone(), 0x10), as_kind(perf, 0x11));
        assert_eq!((a.header, a.payload), (b.header, b.payload));
        let g = Uuid::from_u128(0xAB);
        let classic = classic(g.as_u128(), 36, 11, 21, 31, &[5; 8]);
        let want = as_kind(classic.clone(), 0x14);
        for twin in [0x09, 0x0a, 0x15] {
            let e = as_kind(classic.clone(), twin);
            assert_eq!(
                (e.header, e.payload),
                (want.header, want.payload),
                "{twin:#04x}"
            );
        }
    }
}
