//! Little-endian fields of a byte slice, read only where they lie inside it: a field that
//! would run past the slice (or past `usize`) is `None`, never a panic.

/// The u32 at `at`, when its four bytes lie in `b`.
pub(super) fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let end = at.checked_add(4)?;
    Some(u32::from_le_bytes(b.get(at..end)?.try_into().ok()?))
}

/// The u64 at `at`, when its eight bytes lie in `b`.
pub(super) fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    let end = at.checked_add(8)?;
    Some(u64::from_le_bytes(b.get(at..end)?.try_into().ok()?))
}

/// The `len` bytes at `at`, when they lie in `b`.
pub(super) fn slice_at(b: &[u8], at: usize, len: usize) -> Option<&[u8]> {
    b.get(at..at.checked_add(len)?)
}

/// `a * b + c`, when it fits a `usize`: the size of `a` items of `b` bytes after `c` more.
pub(super) fn sized(a: u32, b: usize, c: usize) -> Option<usize> {
    usize::try_from(a).ok()?.checked_mul(b)?.checked_add(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_past_the_end_are_none() {
        let b = [1, 0, 0, 0, 2, 0, 0, 0];
        assert_eq!(u32_at(&b, 4), Some(2));
        assert_eq!(u32_at(&b, 5), None);
        assert_eq!(u64_at(&b, 0), Some(0x2_0000_0001));
        assert_eq!(u64_at(&b, 1), None);
        assert_eq!(u32_at(&b, usize::MAX - 1), None);
        assert_eq!(slice_at(&b, 8, 0), Some(&[][..]));
        assert_eq!(slice_at(&b, usize::MAX, 2), None);
        assert_eq!(sized(u32::MAX, usize::MAX, 0), None);
        assert_eq!(sized(3, 8, 36), Some(60));
    }
}
