//! Synthetic ETL files, for what no public recording holds (PMC and LBR samples, 32-bit
//! recordings, damaged buffers): an [MS-XCA] plain LZ77 encoder, events of each header kind,
//! the kernel payloads SPEC section 19 reads, and buffers and files made of them. Written
//! from the section, sharing no code with the library's reader.

/// The size of a buffer's header.
pub const BUFFER_HEADER: usize = 72;
/// `BufferFlag`'s bit for a compressed buffer.
pub const COMPRESSED: u16 = 0x40;

/// An item of a stream: a literal byte, or a match `(offset, length)`.
#[derive(Clone, Copy, Debug)]
pub enum Item {
    /// A literal byte.
    Literal(u8),
    /// A match: how far back, how many bytes.
    Match(usize, usize),
}

/// Encodes `items` as [MS-XCA] 2.3 does, with the same half-byte sharing: the plain
/// encoder the decoder is held to.
pub fn encode(items: &[Item]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut flag_at = 0;
    let mut flags = 0u32;
    let mut count = 0;
    let mut half: Option<usize> = None;
    out.extend([0; 4]);
    for item in items {
        if count == 32 {
            out[flag_at..flag_at + 4].copy_from_slice(&flags.to_le_bytes());
            flag_at = out.len();
            out.extend([0; 4]);
            flags = 0;
            count = 0;
        }
        flags <<= 1;
        count += 1;
        match *item {
            Item::Literal(b) => out.push(b),
            Item::Match(offset, length) => {
                flags |= 1;
                let l = length - 3;
                let field = l.min(7) as u16;
                out.extend((((offset - 1) as u16) << 3 | field).to_le_bytes());
                if l >= 7 {
                    let l = l - 7;
                    let nibble = l.min(15) as u8;
                    match half.take() {
                        Some(h) => out[h] |= nibble << 4,
                        None => {
                            half = Some(out.len());
                            out.push(nibble);
                        }
                    }
                    if l >= 15 {
                        let l = l - 15;
                        if l < 255 {
                            out.push(l as u8);
                        } else {
                            out.push(255);
                            let l = l + 22;
                            if l <= 0xFFFF {
                                out.extend((l as u16).to_le_bytes());
                            } else {
                                out.extend([0, 0]);
                                out.extend((l as u32).to_le_bytes());
                            }
                        }
                    }
                }
            }
        }
    }
    // The flags past the last item are ones: the stream ends at the next "match".
    flags = ((u64::from(flags) << (32 - count)) | ((1u64 << (32 - count)) - 1)) as u32;
    out[flag_at..flag_at + 4].copy_from_slice(&flags.to_le_bytes());
    out
}

/// What `items` expand to, plainly.
pub fn expand(items: &[Item]) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    for item in items {
        match *item {
            Item::Literal(b) => out.push(b),
            Item::Match(offset, length) => {
                for _ in 0..length {
                    out.push(out[out.len() - offset]);
                }
            }
        }
    }
    out
}

/// `data` compressed greedily: the longest earlier match of at least 3 bytes within 8,192
/// back, else a literal. Slow and plain; for tests.
pub fn compress(data: &[u8]) -> Vec<u8> {
    let mut items = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let mut best = (0, 0);
        for offset in 1..=i.min(8192) {
            let mut n = 0;
            while i + n < data.len() && data[i + n] == data[i + n - offset] {
                n += 1;
            }
            if n > best.1 {
                best = (offset, n);
            }
        }
        if best.1 >= 3 {
            items.push(Item::Match(best.0, best.1));
            i += best.1;
        } else {
            items.push(Item::Literal(data[i]));
            i += 1;
        }
    }
    encode(&items)
}

/// An event of a system header (0x02): hook, thread, process, time, then `payload`.
pub fn system(hook: u16, thread: u32, process: u32, time: u64, payload: &[u8]) -> Vec<u8> {
    let mut e = vec![2, 0, 0x02, 0xC0];
    e.extend(((32 + payload.len()) as u16).to_le_bytes());
    e.extend(hook.to_le_bytes());
    e.extend(thread.to_le_bytes());
    e.extend(process.to_le_bytes());
    e.extend(time.to_le_bytes());
    e.extend([0; 8]);
    e.extend(payload);
    e
}

/// An event of a perf-info header (0x11): hook, time, then `payload`.
pub fn perf_info(hook: u16, time: u64, payload: &[u8]) -> Vec<u8> {
    let mut e = vec![2, 0, 0x11, 0xC0];
    e.extend(((16 + payload.len()) as u16).to_le_bytes());
    e.extend(hook.to_le_bytes());
    e.extend(time.to_le_bytes());
    e.extend(payload);
    e
}

/// An event of a classic header with a GUID (0x14): GUID, opcode, thread, process, time.
pub fn classic(
    guid: u128,
    opcode: u8,
    thread: u32,
    process: u32,
    time: u64,
    payload: &[u8],
) -> Vec<u8> {
    let mut e = Vec::new();
    e.extend(((48 + payload.len()) as u16).to_le_bytes());
    e.extend([0x14, 0xC0, opcode, 0, 2, 0]);
    e.extend(thread.to_le_bytes());
    e.extend(process.to_le_bytes());
    e.extend(time.to_le_bytes());
    e.extend(guid_bytes(guid));
    e.extend([0; 8]);
    e.extend(payload);
    e
}

/// A buffer holding `events`, each 8-byte aligned, stored as is or compressed.
pub fn buffer(events: &[Vec<u8>], compressed: bool) -> Vec<u8> {
    let mut body = Vec::new();
    for e in events {
        body.extend(e);
        body.resize(body.len().next_multiple_of(8), 0);
    }
    let saved = (BUFFER_HEADER + body.len()) as u32;
    let stored = if compressed { compress(&body) } else { body };
    let mut b = vec![0u8; BUFFER_HEADER];
    b[0..4].copy_from_slice(&((BUFFER_HEADER + stored.len()) as u32).to_le_bytes());
    b[4..8].copy_from_slice(&saved.to_le_bytes());
    if compressed {
        b[0x34..0x36].copy_from_slice(&COMPRESSED.to_le_bytes());
    }
    b.extend(stored);
    b
}

/// The hooks of the kernel events the payloads below belong to.
pub mod hook {
    /// The log-file header.
    pub const LOG_HEADER: u16 = 0x0000;
    /// A thread that was running when the recording started.
    pub const THREAD_RUNDOWN: u16 = 0x0503;
    /// An image that was loaded when the recording started.
    pub const IMAGE_RUNDOWN: u16 = 0x1403;
    /// A timer sample.
    pub const TIMER_SAMPLE: u16 = 0x0F2E;
    /// A PMC sample.
    pub const PMC_SAMPLE: u16 = 0x0F2F;
    /// A stack walk.
    pub const STACK_WALK: u16 = 0x1820;
}

/// KernelTraceControl's image identities; `DbgID_RSDS` is its opcode 36.
pub const IMAGE_ID: u128 = 0xb3e675d7_2554_4f18_830b_2762732560de;
/// The LBR records' task; their opcode is 32.
pub const LBR_TASK: u128 = 0x99134383_5248_43fc_834b_529454e75df3;

/// `v` in `pointer` bytes.
pub fn ptr(v: u64, pointer: u8) -> Vec<u8> {
    v.to_le_bytes()[..usize::from(pointer)].to_vec()
}

/// A log-file header's payload: the fields SPEC 19 reads, the rest zero.
pub struct LogHeader {
    /// 4 or 8.
    pub pointer: u8,
    /// Major, minor, build.
    pub os: (u8, u8, u32),
    /// Processors.
    pub processors: u32,
    /// Buffers written.
    pub buffers: u32,
    /// Events lost.
    pub lost: u32,
    /// Start and end, FILETIME.
    pub start: u64,
    /// The end.
    pub end: u64,
}

impl Default for LogHeader {
    fn default() -> Self {
        LogHeader {
            pointer: 8,
            os: (10, 0, 19045),
            processors: 4,
            buffers: 1,
            lost: 0,
            start: 133_000_000_000_000_000,
            end: 133_000_000_100_000_000,
        }
    }
}

impl LogHeader {
    /// The payload.
    pub fn payload(&self) -> Vec<u8> {
        let mut p = vec![0u8; 300];
        p[0..4].copy_from_slice(&65536u32.to_le_bytes());
        p[4] = self.os.0;
        p[5] = self.os.1;
        p[8..12].copy_from_slice(&self.os.2.to_le_bytes());
        p[12..16].copy_from_slice(&self.processors.to_le_bytes());
        p[16..24].copy_from_slice(&self.end.to_le_bytes());
        p[36..40].copy_from_slice(&self.buffers.to_le_bytes());
        p[44..48].copy_from_slice(&u32::from(self.pointer).to_le_bytes());
        p[48..52].copy_from_slice(&self.lost.to_le_bytes());
        let at = if self.pointer == 8 { 256 } else { 248 };
        p[at..at + 8].copy_from_slice(&10_000_000u64.to_le_bytes());
        p[at + 8..at + 16].copy_from_slice(&self.start.to_le_bytes());
        p
    }

    /// The event: a system header of hook 0.
    pub fn event(&self) -> Vec<u8> {
        system(hook::LOG_HEADER, 0, 0, 0, &self.payload())
    }
}

/// An image rundown: base, size, process, then the file name.
pub fn image(pointer: u8, process: u32, base: u64, size: u64, path: &str) -> Vec<u8> {
    let mut p = ptr(base, pointer);
    p.extend(ptr(size, pointer));
    for v in [process, 0, 0, 0] {
        p.extend(v.to_le_bytes());
    }
    p.extend(ptr(base, pointer));
    p.extend([0; 16]);
    for u in path.encode_utf16().chain([0]) {
        p.extend(u.to_le_bytes());
    }
    system(hook::IMAGE_RUNDOWN, 0, process, 0, &p)
}

/// A `DbgID_RSDS` event: the image at `base` in `process` has this PDB identity.
pub fn pdb_id(process: u32, base: u64, guid: u128, age: u32, pdb: &str) -> Vec<u8> {
    let mut p = base.to_le_bytes().to_vec();
    p.extend(process.to_le_bytes());
    p.extend(guid_bytes(guid));
    p.extend(age.to_le_bytes());
    p.extend(pdb.as_bytes());
    p.push(0);
    classic(IMAGE_ID, 36, 0, process, 0, &p)
}

/// A thread rundown.
pub fn thread(process: u32, thread: u32) -> Vec<u8> {
    let p = [process.to_le_bytes(), thread.to_le_bytes()].concat();
    system(hook::THREAD_RUNDOWN, 0, process, 0, &p)
}

/// A timer sample, or a PMC sample of `pmc`'s profile source.
pub fn sample(pointer: u8, thread: u32, ip: u64, pmc: Option<u16>) -> Vec<u8> {
    let mut p = ptr(ip, pointer);
    p.extend(thread.to_le_bytes());
    p.extend(pmc.unwrap_or(1).to_le_bytes());
    p.extend([0, 0]);
    let h = if pmc.is_some() {
        hook::PMC_SAMPLE
    } else {
        hook::TIMER_SAMPLE
    };
    perf_info(h, 0, &p)
}

/// An LBR record of `(from, to)` pairs, newest first.
pub fn lbr(pointer: u8, process: u32, thread: u32, pairs: &[(u64, u64)]) -> Vec<u8> {
    let mut p = 0u64.to_le_bytes().to_vec();
    for v in [process, thread, 0] {
        p.extend(v.to_le_bytes());
    }
    for &(from, to) in pairs {
        p.extend(ptr(from, pointer));
        p.extend(ptr(to, pointer));
    }
    classic(LBR_TASK, 32, thread, process, 0, &p)
}

/// A stack walk, leaf first.
pub fn stack(pointer: u8, process: u32, thread: u32, frames: &[u64]) -> Vec<u8> {
    let mut p = 0u64.to_le_bytes().to_vec();
    p.extend(process.to_le_bytes());
    p.extend(thread.to_le_bytes());
    for &f in frames {
        p.extend(ptr(f, pointer));
    }
    perf_info(hook::STACK_WALK, 0, &p)
}

/// A GUID's 16 bytes as Windows stores them (the first three fields little-endian).
pub fn guid_bytes(guid: u128) -> [u8; 16] {
    let b = guid.to_be_bytes();
    [
        b[3], b[2], b[1], b[0], b[5], b[4], b[7], b[6], b[8], b[9], b[10], b[11], b[12], b[13],
        b[14], b[15],
    ]
}

/// An ETL of `buffers`, each a list of events, the first buffer stored as is (it holds the
/// log-file header, which should be its first event), the others compressed or not.
pub fn file(buffers: &[Vec<Vec<u8>>], compressed: bool) -> Vec<u8> {
    buffers
        .iter()
        .enumerate()
        .flat_map(|(i, events)| buffer(events, compressed && i > 0))
        .collect()
}
