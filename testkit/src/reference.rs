//! A second reading of the diagnostics table (docs/output.md, "Diagnostic codes"), for tests: whether a file has anything a decoder
//! must report, and the first such thing. It is short on purpose and shares no code with
//! sptdump, so the two can be checked against each other: the decoder must report a problem
//! exactly when this finds one.
//!
//! It answers only "is there something to report" (and names the first thing); which
//! diagnostics follow, and how decoding resumes, is the decoder's business and is tested
//! elsewhere.

use std::ops::Range;

/// The little-endian u16 at offset `at` of `b`. Panics when it runs past the end.
pub fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

/// The little-endian u32 at offset `at` of `b`. Panics when it runs past the end.
pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

/// The first problem the diagnostics table asks a decoder to report in `file`, as a short
/// description, or `None` for a file with nothing to report (not even a warning).
pub fn reference_problem(file: &[u8]) -> Option<String> {
    let size = file.len() as u64;
    if file.len() < 32 {
        return Some("truncated-header".into());
    }
    if u32_at(file, 0) != 0x5350_543A {
        return Some("bad-signature".into());
    }
    if u32_at(file, 4) != 1 {
        return Some("unsupported-version".into());
    }
    if u32_at(file, 8) != 0 || u32_at(file, 12) != 0 {
        return Some("reserved-nonzero".into());
    }
    let so = u64::from(u32_at(file, 0x10));
    let po = u64::from(u32_at(file, 0x14));
    let (s_used, s_cap) = (u16_at(file, 0x18), u16_at(file, 0x1A));
    let (p_used, p_cap) = (u16_at(file, 0x1C), u16_at(file, 0x1E));
    let start = po + u64::from(p_cap) * 24;

    let parts: [Range<u64>; 4] = [
        0..32,
        so..so + u64::from(s_cap),
        po..po + u64::from(p_cap) * 24,
        start..size.max(start),
    ];
    for (i, a) in parts.iter().enumerate() {
        for b in &parts[i + 1..] {
            if !a.is_empty() && !b.is_empty() && a.start < b.end && b.start < a.end {
                return Some(format!("tables-overlap {a:?} {b:?}"));
            }
        }
    }
    if s_used > s_cap {
        return Some("string-table-overflow".into());
    }
    if p_used > p_cap {
        return Some("progid-table-overflow".into());
    }
    // Used bytes that run past the end. Nothing used runs past nothing.
    let strings = so..so + u64::from(s_used);
    if !strings.is_empty() && strings.end > size {
        return Some("string-table-out-of-bounds".into());
    }
    let entries = po..po + u64::from(p_used) * 24;
    if !entries.is_empty() && entries.end > size {
        return Some("progid-table-out-of-bounds".into());
    }
    if start > size {
        return Some("stream-out-of-bounds".into());
    }
    // (An empty table may lie anywhere, even past the end.)
    let table = file
        .get(strings.start as usize..strings.end as usize)
        .unwrap_or_default();
    for name in table.split(|&b| b == 0).filter(|s| !s.is_empty()) {
        if std::str::from_utf8(name).is_err() {
            return Some("invalid-utf8".into());
        }
    }
    if table.last().is_some_and(|&b| b != 0) {
        return Some("unterminated-string".into());
    }
    // The string indices (section 1, the hedge): ordinals when one of them starts no
    // non-empty name and all are below the number of such names, else byte offsets.
    let indices: Vec<u32> = (0..u64::from(p_used))
        .map(|i| u32_at(file, (po + i * 24 + 20) as usize))
        .collect();
    let starts_name = |i: u32| {
        let i = i as usize;
        i < table.len() && table[i] != 0 && (i == 0 || table[i - 1] == 0)
    };
    let names = (0..table.len() as u32).filter(|&i| starts_name(i)).count();
    if let Some(i) = indices.iter().position(|&x| !starts_name(x))
        && indices.iter().all(|&x| (x as usize) < names)
    {
        return Some(format!("string-index-ordinal in entry {i}"));
    }
    for (i, &index) in indices.iter().enumerate() {
        if index >= u32::from(s_used) {
            return Some(format!("string-offset-out-of-range in entry {i}"));
        }
    }
    stream_problem(&file[start as usize..], start, p_used)
}

/// The first problem in an event stream that starts at file offset `base` and runs to the
/// end of the file.
pub fn stream_problem(s: &[u8], base: u64, progids_used: u16) -> Option<String> {
    let at = |i: usize| format!("at {:#X}", base + i as u64);
    // The declared end of the current segment (stream-relative), once there is one.
    let mut segment: Option<usize> = None;
    let mut repeat = false;
    let mut i = 0;
    while i < s.len() {
        let op = s[i];
        let size = match op {
            0x81 => 8,
            0x82 => 10,
            0x01..=0x05 | 0x41 | 0x42 | 0x10 => match s.get(i + 1) {
                Some(&n) => 2 + usize::from(n) * if op == 0x10 { 8 } else { 4 },
                None => return Some(format!("truncated-record {}", at(i))),
            },
            _ => return Some(format!("unknown-opcode {op:#04X} {}", at(i))),
        };
        if i + size > s.len() {
            return Some(format!("truncated-record {}", at(i)));
        }
        match op {
            0x81 => {
                if repeat {
                    return Some(format!("dangling-repeat before {}", at(i)));
                }
                if segment.is_some_and(|end| end != i) {
                    return Some(format!("segment-length-mismatch before {}", at(i)));
                }
                if u16_at(s, i + 2) >= progids_used {
                    return Some(format!("progid-out-of-range {}", at(i)));
                }
                let length = u32_at(s, i + 4) as usize;
                if length < 4 || i + 4 + length > s.len() {
                    return Some(format!("bad-segment-length {}", at(i)));
                }
                segment = Some(i + 4 + length);
            }
            0x82 => {
                if segment.is_none() {
                    return Some(format!("event-before-binary-id {}", at(i)));
                }
                if repeat {
                    return Some(format!("repeat-overridden {}", at(i)));
                }
                repeat = true;
            }
            _ => {
                if segment.is_none() {
                    return Some(format!("event-before-binary-id {}", at(i)));
                }
                repeat = false;
                if op == 0x42 && s[i + 1] < 2 {
                    return Some(format!("short-callstack {}", at(i)));
                }
            }
        }
        i += size;
    }
    if repeat {
        return Some("dangling-repeat at the end".into());
    }
    if segment.is_some_and(|end| end != s.len()) {
        return Some("segment-length-mismatch at the end".into());
    }
    None
}
