//! What the ETL tests build their inputs with: an [MS-XCA] plain LZ77 encoder, and buffers
//! and events laid out as SPEC section 19 gives them. Synthetic, for what no public file
//! holds; the public files are read in place by the integration tests.

use crate::etl::buffer::{BUFFER_HEADER, COMPRESSED};

/// An item of a stream: a literal byte, or a match `(offset, length)`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Item {
    /// A literal byte.
    Literal(u8),
    /// A match: how far back, how many bytes.
    Match(usize, usize),
}

/// Encodes `items` as [MS-XCA] 2.3 does, with the same half-byte sharing: the plain
/// encoder the decoder is held to.
pub(crate) fn encode(items: &[Item]) -> Vec<u8> {
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
pub(crate) fn expand(items: &[Item]) -> Vec<u8> {
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
pub(crate) fn compress(data: &[u8]) -> Vec<u8> {
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
pub(crate) fn system(hook: u16, thread: u32, process: u32, time: u64, payload: &[u8]) -> Vec<u8> {
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
pub(crate) fn perf_info(hook: u16, time: u64, payload: &[u8]) -> Vec<u8> {
    let mut e = vec![2, 0, 0x11, 0xC0];
    e.extend(((16 + payload.len()) as u16).to_le_bytes());
    e.extend(hook.to_le_bytes());
    e.extend(time.to_le_bytes());
    e.extend(payload);
    e
}

/// An event of a classic header with a GUID (0x14): GUID, opcode, thread, process, time.
pub(crate) fn classic(
    guid: uuid::Uuid,
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
    e.extend(guid.to_bytes_le());
    e.extend([0; 8]);
    e.extend(payload);
    e
}

/// A buffer holding `events`, each 8-byte aligned, stored as is or compressed.
pub(crate) fn buffer(events: &[Vec<u8>], compressed: bool) -> Vec<u8> {
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
