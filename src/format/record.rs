//! The records of the event stream, as the decoder hands them out.
//!
//! ```text
//! BINARY_ID      81 | pad u8 | progid u16 | length u32          segment end = offset + 4 + length
//! REPEAT         82 | pad u8 | count u64                        next sample record: hits = 1 + count
//! IP samples     op | n u8   | n x rva u32                      op = 01..05, 41
//! LBR            10 | n u8   | n x (to u32, from u32)           to comes first on disk
//! ETW_CALLSTACK  42 | n u8   | n x frame u32                    arcs f[0]->f[1] ... f[n-2]->f[n-1]
//! ```
//!
//! Sample records borrow their payload from the decoder's buffer, so handing one out
//! allocates nothing; [`Rvas`] and [`Branches`] read the little-endian values on demand.

use std::fmt;

use byteorder::{ByteOrder, LittleEndian as LE};

use crate::format::opcode::Opcode;

/// One record of the event stream.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record<'a> {
    /// Starts the segment of one binary.
    BinaryId(BinaryId),
    /// Makes the next sample record count more than once.
    Repeat(Repeat),
    /// IP samples, LBR pairs or a call stack.
    Samples(Samples<'a>),
    /// A record with an opcode this version does not know, and what was done about it.
    Unknown(Unknown),
}

impl Record<'_> {
    /// The file offset of the record's opcode byte.
    pub fn offset(&self) -> u64 {
        match self {
            Record::BinaryId(r) => r.offset,
            Record::Repeat(r) => r.offset,
            Record::Samples(r) => r.offset,
            Record::Unknown(r) => r.offset,
        }
    }
}

/// A BINARY_ID record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinaryId {
    /// File offset of the opcode.
    pub offset: u64,
    /// Index into the program-ID table.
    pub progid: u16,
    /// The segment's length, counted from the length field itself.
    pub length: u32,
}

impl BinaryId {
    /// Where the segment's records end by its length: `offset + 4 + length`.
    pub fn declared_end(&self) -> u64 {
        self.offset + 4 + u64::from(self.length)
    }
}

/// A REPEAT record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repeat {
    /// File offset of the opcode.
    pub offset: u64,
    /// The next sample record counts `1 + count` times.
    pub count: u64,
}

/// What a sample record holds: the *source* of its samples, as the analyses name them
/// (an IP event's name, `LBR`, `ETW_CALLSTACK`). Sources order as the output lists them:
/// the IP events in opcode order, then LBR, then call stacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SampleKind {
    /// IP samples of one event (the opcode says which).
    Ip(Opcode),
    /// Last-branch-record pairs.
    Lbr,
    /// An ETW call stack.
    CallStack,
}

impl SampleKind {
    /// The source's name: the opcode's (`UNHALT_CYCLE`, `LBR`, `ETW_CALLSTACK`), or the
    /// opcode in hex for an IP opcode that has none.
    pub fn name(self) -> &'static str {
        let op = match self {
            SampleKind::Ip(op) => op,
            SampleKind::Lbr => Opcode::LBR,
            SampleKind::CallStack => Opcode::ETW_CALLSTACK,
        };
        op.name().unwrap_or("IP")
    }

    /// The position in the output's order.
    fn rank(self) -> (u8, u8) {
        match self {
            SampleKind::Ip(op) => (0, op.0),
            SampleKind::Lbr => (1, 0),
            SampleKind::CallStack => (2, 0),
        }
    }
}

impl Ord for SampleKind {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank().cmp(&other.rank())
    }
}

impl PartialOrd for SampleKind {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for SampleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// A sample record: IP samples, LBR pairs or a call stack.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Samples<'a> {
    /// File offset of the opcode.
    pub offset: u64,
    /// The opcode.
    pub opcode: Opcode,
    /// The program ID of the enclosing segment; `None` before any BINARY_ID.
    pub progid: Option<u16>,
    /// How many times each RVA, pair or arc counts: 1 + the pending REPEAT's count.
    /// Can be 2^64, so 128 bits.
    pub hits: u128,
    /// The `n` in the record.
    pub count: u8,
    /// The bytes after `n`: `4n` for RVAs and frames, `8n` for LBR pairs.
    pub payload: &'a [u8],
}

impl<'a> Samples<'a> {
    /// The record at file `offset`: `opcode` with its `count` and the `payload` after it, in
    /// the segment of `progid`, counting `hits` times.
    pub fn new(
        offset: u64,
        opcode: Opcode,
        progid: Option<u16>,
        hits: u128,
        count: u8,
        payload: &'a [u8],
    ) -> Self {
        Samples {
            offset,
            opcode,
            progid,
            hits,
            count,
            payload,
        }
    }

    /// What the record holds.
    pub fn kind(&self) -> SampleKind {
        match self.opcode {
            Opcode::LBR => SampleKind::Lbr,
            Opcode::ETW_CALLSTACK => SampleKind::CallStack,
            op => SampleKind::Ip(op),
        }
    }

    /// The RVAs of an IP record or the frames of a call stack.
    pub fn rvas(&self) -> Rvas<'a> {
        Rvas(self.payload)
    }

    /// The pairs of an LBR record, as `from -> to`.
    pub fn branches(&self) -> Branches<'a> {
        Branches(self.payload)
    }
}

#[inline]
fn u32_at(bytes: &[u8]) -> u32 {
    LE::read_u32(bytes)
}

/// A run of little-endian `u32` RVAs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rvas<'a>(&'a [u8]);

impl<'a> Rvas<'a> {
    /// How many RVAs there are.
    pub fn len(&self) -> usize {
        self.0.len() / 4
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.len() < 4
    }

    /// The RVAs in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u32> + 'a {
        self.0.chunks_exact(4).map(u32_at)
    }

    /// The call-stack arcs: each frame to the next.
    pub fn arcs(&self) -> impl ExactSizeIterator<Item = Branch> + 'a {
        let bytes = self.0;
        (0..self.len().saturating_sub(1)).map(move |i| Branch {
            from: u32_at(&bytes[4 * i..]),
            to: u32_at(&bytes[4 * i + 4..]),
        })
    }
}

/// One arc: an LBR branch or a call-stack edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Branch {
    /// Where control came from.
    pub from: u32,
    /// Where it went.
    pub to: u32,
}

/// A run of LBR pairs, stored `to` first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Branches<'a>(&'a [u8]);

impl<'a> Branches<'a> {
    /// The pairs of an LBR record's payload (8 bytes each, `to` first; a partial pair at the
    /// end is not one).
    pub fn new(payload: &'a [u8]) -> Self {
        Branches(payload)
    }

    /// How many pairs there are.
    pub fn len(&self) -> usize {
        self.0.len() / 8
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.len() < 8
    }

    /// The pairs in order, as `from -> to`.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Branch> + 'a {
        self.0.chunks_exact(8).map(|c| Branch {
            to: u32_at(c),
            from: u32_at(&c[4..]),
        })
    }
}

/// A record with an unknown opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unknown {
    /// File offset of the opcode.
    pub offset: u64,
    /// The opcode byte.
    pub opcode: Opcode,
    /// Where decoding resumed (the end of the enclosing segment), or `None` when it stopped.
    pub resumed_at: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lbr_pairs_are_stored_to_first() {
        let payload = [
            0x10, 0x20, 0x00, 0x00, // to   0x2010
            0x00, 0x20, 0x00, 0x00, // from 0x2000
            0x30, 0x20, 0x00, 0x00, // to   0x2030
            0x20, 0x20, 0x00, 0x00, // from 0x2020
        ];
        let pairs: Vec<_> = Branches(&payload).iter().collect();
        assert_eq!(
            pairs,
            [
                Branch {
                    from: 0x2000,
                    to: 0x2010
                },
                Branch {
                    from: 0x2020,
                    to: 0x2030
                }
            ]
        );
    }

    #[test]
    fn callstack_arcs_join_neighbouring_frames() {
        let payload = [
            0x00, 0x30, 0, 0, // f0 0x3000
            0x10, 0x30, 0, 0, // f1 0x3010
            0x20, 0x30, 0, 0, // f2 0x3020
        ];
        let rvas = Rvas(&payload);
        assert_eq!(rvas.iter().collect::<Vec<_>>(), [0x3000, 0x3010, 0x3020]);
        let arcs: Vec<_> = rvas.arcs().map(|b| (b.from, b.to)).collect();
        assert_eq!(arcs, [(0x3000, 0x3010), (0x3010, 0x3020)]);
        assert_eq!(Rvas(&payload[..4]).arcs().count(), 0);
        assert_eq!(Rvas(&[]).arcs().count(), 0);
    }
}
