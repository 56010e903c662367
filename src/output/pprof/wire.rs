//! What the parts of a profile share: location IDs, the keys of encoded fields, the
//! addresses of a stored stack.

use byteorder::{ByteOrder, LE};
use prost::encoding::WireType;

/// The ID of the location at `place` in the sorted addresses: locations are numbered in
/// their order, from 1.
pub(super) fn location_id(place: usize) -> u64 {
    place as u64 + 1
}

/// The key of length-delimited field `field` (below 16), as prost encodes it.
pub(super) const fn key(field: u8) -> u8 {
    field << 3 | WireType::LengthDelimited as u8
}

/// The addresses of a stack's frames as stored.
pub(super) fn rvas(frames: &[u8]) -> impl DoubleEndedIterator<Item = u32> + '_ {
    frames.chunks_exact(4).map(LE::read_u32)
}
