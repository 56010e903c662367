//! [MS-XCA] "plain LZ77" (XPRESS without Huffman), as ETW compresses an ETL's buffers.
//!
//! The stream is groups of 32 items, each group led by a 32-bit little-endian flag word read
//! from its most significant bit down: a 0 bit is a literal byte, a 1 bit a match of two
//! bytes, `(offset - 1) << 3 | length - 3`, whose length grows through a shared half byte,
//! then a byte, then 16 and 32 bits when its field is all ones ([MS-XCA] 2.4). The stream
//! ends where its bytes end; an ETL buffer's output is exactly `SavedOffset - 72` bytes.
//!
//! Hand-written: of the crates that decode it, the ones we measured either panic or allocate
//! toward a 32-bit length on damaged streams, refuse valid buffers, or run at a third of
//! this speed behind a framing of their own (docs/performance.md, "ETL", gives the figures).
//! Held to [MS-XCA]'s own examples (section 3.1), to a plain encoder on random streams, and to
//! any bytes at all (the tests below, and the fuzz target `etl`).

use std::fmt;

/// Why a stream could not be decompressed: where in the input, and what went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Damaged {
    /// The offset in the compressed input of the item that failed.
    pub at: usize,
    /// What was wrong there.
    pub what: Fault,
}

/// What is wrong with a compressed stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Fault {
    /// A match or its length runs past the end of the input.
    Truncated,
    /// A match refers to bytes before the start of the output.
    BeforeStart {
        /// How far back the match reaches.
        offset: usize,
        /// How many bytes had been written.
        written: usize,
    },
    /// The stream writes more than the output holds.
    PastOutput {
        /// The size of the output.
        size: usize,
    },
    /// The stream ends with fewer bytes written than the output holds.
    Short {
        /// How many bytes were written.
        written: usize,
        /// The size of the output.
        size: usize,
    },
    /// A 16- or 32-bit length below the 22 its own encoding adds back.
    BadLength,
}

impl fmt::Display for Damaged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.what {
            Fault::Truncated => write!(f, "the compressed stream ends inside a match"),
            Fault::BeforeStart { offset, written } => write!(
                f,
                "a match reaches {offset} bytes back with only {written} written"
            ),
            Fault::PastOutput { size } => {
                write!(
                    f,
                    "the stream decompresses to more than the {size} bytes it should"
                )
            }
            Fault::Short { written, size } => {
                write!(f, "the stream decompresses to {written} bytes, not {size}")
            }
            Fault::BadLength => write!(f, "a match's long length is below its minimum of 22"),
        }?;
        write!(f, " (at byte {} of the compressed stream)", self.at)
    }
}

/// Decompresses `input` into all of `out`: the stream must write exactly `out.len()` bytes.
pub fn decompress(input: &[u8], out: &mut [u8]) -> Result<(), Damaged> {
    let written = decompress_into(input, out)?;
    if written != out.len() {
        return Err(Damaged {
            at: input.len(),
            what: Fault::Short {
                written,
                size: out.len(),
            },
        });
    }
    Ok(())
}

/// Decompresses `input` into `out` and returns how many bytes it wrote; writing past `out`
/// is an error.
pub fn decompress_into(input: &[u8], out: &mut [u8]) -> Result<usize, Damaged> {
    let (mut i, mut o) = (0usize, 0usize);
    // Where the shared half byte of lengths lies, when its upper half is still unused.
    let mut half: Option<usize> = None;
    let mut flags = 0u32;
    let mut left = 0u32;
    let size = out.len();
    while i < input.len() {
        if left == 0 {
            let Some(word) = input.get(i..i + 4) else {
                // Fewer than four bytes cannot hold a flag word: what remains is padding.
                break;
            };
            flags = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
            i += 4;
            left = 32;
            continue;
        }
        left -= 1;
        if flags >> left & 1 == 0 {
            let Some(slot) = out.get_mut(o) else {
                return Err(Damaged {
                    at: i,
                    what: Fault::PastOutput { size },
                });
            };
            *slot = input[i];
            i += 1;
            o += 1;
            continue;
        }
        let at = i;
        let truncated = Damaged {
            at,
            what: Fault::Truncated,
        };
        let Some(&[lo, hi]) = input.get(i..i + 2) else {
            return Err(truncated);
        };
        i += 2;
        let item = u16::from_le_bytes([lo, hi]);
        let offset = usize::from(item >> 3) + 1;
        let mut length = usize::from(item & 7);
        if length == 7 {
            length = match half.take() {
                Some(h) => usize::from(input[h] >> 4),
                None => {
                    let &b = input.get(i).ok_or(truncated)?;
                    half = Some(i);
                    i += 1;
                    usize::from(b & 15)
                }
            };
            if length == 15 {
                let &b = input.get(i).ok_or(truncated)?;
                i += 1;
                length = usize::from(b);
                if length == 255 {
                    let Some(&[a, b]) = input.get(i..i + 2) else {
                        return Err(truncated);
                    };
                    i += 2;
                    length = usize::from(u16::from_le_bytes([a, b]));
                    if length == 0 {
                        let Some(&[a, b, c, d]) = input.get(i..i + 4) else {
                            return Err(truncated);
                        };
                        i += 4;
                        length = u32::from_le_bytes([a, b, c, d]) as usize;
                    }
                    length = length.checked_sub(22).ok_or(Damaged {
                        at,
                        what: Fault::BadLength,
                    })?;
                }
                length = length.saturating_add(15);
            }
            length = length.saturating_add(7);
        }
        // Saturating: a 32-bit length on a 32-bit target must not wrap into a short one.
        length = length.saturating_add(3);
        if offset > o {
            return Err(Damaged {
                at,
                what: Fault::BeforeStart { offset, written: o },
            });
        }
        if length > size - o {
            return Err(Damaged {
                at,
                what: Fault::PastOutput { size },
            });
        }
        copy_match(out, o, offset, length);
        o += length;
    }
    Ok(o)
}

/// Copies `length` bytes from `offset` back to `o`, byte by byte where they overlap (a match
/// may repeat the bytes it is writing).
#[inline]
fn copy_match(out: &mut [u8], o: usize, offset: usize, length: usize) {
    if offset >= length {
        out.copy_within(o - offset..o - offset + length, o);
    } else {
        for k in o..o + length {
            out[k] = out[k - offset];
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use sptdump_testkit::etl::{Item, encode, expand};

    /// Items that make a valid stream: a match never reaches before the start.
    fn items() -> impl Strategy<Value = Vec<Item>> {
        prop::collection::vec(
            prop_oneof![
                3 => any::<u8>().prop_map(|b| (true, b as usize, 0)),
                2 => (1usize..9000, prop_oneof![3usize..10, 10usize..25, 25usize..300, 300usize..70_000])
                    .prop_map(|(o, l)| (false, o, l)),
            ],
            0..120,
        )
        .prop_map(|raw| {
            let mut written = 0usize;
            let mut items = Vec::new();
            for (literal, a, b) in raw {
                if literal || written == 0 {
                    items.push(Item::Literal(a as u8));
                    written += 1;
                } else {
                    let offset = 1 + (a - 1) % written.min(8192);
                    items.push(Item::Match(offset, b));
                    written += b;
                }
            }
            items
        })
    }

    fn decoded(input: &[u8], size: usize) -> Result<Vec<u8>, Damaged> {
        let mut out = vec![0u8; size];
        decompress(input, &mut out).map(|()| out)
    }

    /// [MS-XCA] 3.1's first example: 26 literals, no match.
    #[test]
    fn the_alphabet_of_ms_xca() {
        let mut input = vec![0x3f, 0x00, 0x00, 0x00];
        input.extend(b'a'..=b'z');
        let want: Vec<u8> = (b'a'..=b'z').collect();
        assert_eq!(decoded(&input, 26).unwrap(), want);
    }

    /// [MS-XCA] 3.1's second example: "abc" 100 times, three literals and a match of 297
    /// that reads its length through the half byte, a byte and 16 bits.
    #[test]
    fn abc_a_hundred_times_of_ms_xca() {
        let input = [
            0xff, 0xff, 0xff, 0x1f, 0x61, 0x62, 0x63, 0x17, 0x00, 0x0f, 0xff, 0x26, 0x01,
        ];
        assert_eq!(decoded(&input, 300).unwrap(), b"abc".repeat(100));
        assert_eq!(
            encode(&[
                Item::Literal(b'a'),
                Item::Literal(b'b'),
                Item::Literal(b'c'),
                Item::Match(3, 297)
            ]),
            input
        );
    }

    #[test]
    fn a_match_before_the_start_is_refused_where_it_is() {
        let input = encode(&[Item::Literal(1), Item::Match(2, 3)]);
        assert_eq!(
            decoded(&input, 4),
            Err(Damaged {
                at: 5,
                what: Fault::BeforeStart {
                    offset: 2,
                    written: 1
                }
            })
        );
    }

    #[test]
    fn more_or_fewer_bytes_than_the_output_are_refused() {
        let input = encode(&[Item::Literal(1), Item::Match(1, 10)]);
        assert_eq!(decoded(&input, 11).unwrap(), vec![1; 11]);
        assert_eq!(
            decoded(&input, 10).unwrap_err().what,
            Fault::PastOutput { size: 10 }
        );
        assert_eq!(
            decoded(&input, 3).unwrap_err().what,
            Fault::PastOutput { size: 3 }
        );
        assert_eq!(
            decoded(&input, 12).unwrap_err().what,
            Fault::Short {
                written: 11,
                size: 12
            }
        );
        assert_eq!(
            decoded(&[0, 0, 0, 0, 7, 8], 1).unwrap_err().what,
            Fault::PastOutput { size: 1 }
        );
    }

    #[test]
    fn a_stream_cut_inside_a_match_is_truncated() {
        // A match of 300 needs its item, a half byte, a byte and 16 bits.
        let input = encode(&[Item::Literal(1), Item::Match(1, 300)]);
        assert_eq!(input.len(), 4 + 1 + 2 + 1 + 1 + 2);
        for cut in 6..input.len() {
            assert_eq!(
                decoded(&input[..cut], 301),
                Err(Damaged {
                    at: 5,
                    what: Fault::Truncated
                }),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn a_long_length_below_22_is_refused() {
        // Length field 7, half byte 15, byte 255, then 16 bits of 21.
        let input = [0, 0, 0, 0x40, 1, 0x07, 0, 0x0f, 0xff, 21, 0];
        assert_eq!(
            decoded(&input, 100),
            Err(Damaged {
                at: 5,
                what: Fault::BadLength
            })
        );
    }

    #[test]
    fn a_32_bit_length_is_bounded_by_the_output_not_believed() {
        // Length field 7, half byte 15, byte 255, 16 bits of 0, then 32 bits near 4 GiB.
        let input = [
            0, 0, 0, 0x40, 1, 0x07, 0, 0x0f, 0xff, 0, 0, 0xff, 0xff, 0xff, 0xff,
        ];
        assert_eq!(
            decoded(&input, 64).unwrap_err().what,
            Fault::PastOutput { size: 64 }
        );
    }

    proptest! {
        /// Any valid stream decodes to what its items expand to, the half bytes shared
        /// between matches, lengths of 16 and 32 bits among them.
        #[test]
        fn streams_decode_to_their_items(items in items()) {
            let want = expand(&items);
            prop_assert_eq!(decoded(&encode(&items), want.len()).unwrap(), want);
        }

        /// Any bytes at all, and a damaged valid stream, end in an answer: never a panic,
        /// never a write past the output.
        #[test]
        fn any_bytes_are_an_answer(
            items in items(),
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            cut in any::<prop::sample::Index>(),
            size in 0usize..5000,
        ) {
            let mut input = encode(&items);
            for (at, b) in flips {
                let i = at.index(input.len());
                input[i] ^= b;
            }
            input.truncate(cut.index(input.len() + 1));
            let mut out = vec![0u8; size];
            match decompress_into(&input, &mut out) {
                Ok(n) => prop_assert!(n <= size),
                Err(d) => prop_assert!(d.at <= input.len()),
            }
        }
    }
}
