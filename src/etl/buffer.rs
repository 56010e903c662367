//! An ETL's buffers, one at a time, decompressed where they are compressed.
//!
//! ```text
//! offset  size  field (the first 72 bytes of every buffer)
//! 0x00    u32   BufferSize     the bytes the buffer takes in the file
//! 0x04    u32   SavedOffset    where its events end, from the buffer's start, as if
//!                              uncompressed
//! 0x28    u8    the processor the buffer was filled on
//! 0x34    u16   BufferFlag     & 0x40: the bytes after the header are [MS-XCA] plain LZ77
//! ```
//!
//! Buffers lie back to back to the end of the file. Only these fields are read; the others
//! (sequence numbers, the clock, the logger's state) say nothing about the events.

use std::fmt;
use std::io::{self, Read};

use byteorder::{ByteOrder, LittleEndian as LE};

use crate::etl::xpress;
use crate::format::error::read_full;

/// The size of a buffer's header.
pub const BUFFER_HEADER: usize = 72;

/// `BufferFlag`'s bit for a compressed buffer.
pub const COMPRESSED: u16 = 0x40;

/// The largest buffer read: ETW's buffers are at most 16 MiB (its `BufferSize` limit); a
/// larger size is a damaged header, refused before anything is allocated for it.
pub const MAX_BUFFER: u32 = 16 << 20;

/// A buffer's header, as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BufferHeader {
    /// The bytes the buffer takes in the file, header included.
    pub size: u32,
    /// Where its events end, from the buffer's start, as if uncompressed.
    pub saved_offset: u32,
    /// The processor it was filled on.
    pub processor: u8,
    /// Its flags; [`COMPRESSED`] among them.
    pub flag: u16,
}

impl BufferHeader {
    /// Reads the fields from a buffer's first 72 bytes.
    pub fn parse(bytes: &[u8; BUFFER_HEADER]) -> BufferHeader {
        BufferHeader {
            size: LE::read_u32(&bytes[0..]),
            saved_offset: LE::read_u32(&bytes[4..]),
            processor: bytes[0x28],
            flag: LE::read_u16(&bytes[0x34..]),
        }
    }

    /// Whether the bytes after the header are compressed.
    pub fn compressed(&self) -> bool {
        self.flag & COMPRESSED != 0
    }

    /// Whether `bytes`, a file's first, can start an ETL: a size from the header's own 72
    /// bytes up to [`MAX_BUFFER`], events that end inside the buffer, and (in a buffer stored
    /// as is, as the first one is in every file seen) a first event that is the log-file
    /// header: a system header of hook 0. What tells an ETL from other files; 80 bytes
    /// suffice.
    pub fn starts_etl(bytes: &[u8]) -> bool {
        let Some(head) = bytes.first_chunk::<BUFFER_HEADER>() else {
            return false;
        };
        let h = BufferHeader::parse(head);
        let sane = (BUFFER_HEADER as u32..=MAX_BUFFER).contains(&h.size)
            && h.saved_offset >= BUFFER_HEADER as u32 + 8;
        if !sane || h.compressed() {
            return sane;
        }
        let event = &bytes[BUFFER_HEADER..];
        h.saved_offset <= h.size
            && event.len() >= 8
            && matches!(event[2], 0x01 | 0x02)
            && event[3] & 0xC0 == 0xC0
            && LE::read_u16(&event[6..]) == 0
    }
}

/// Why an ETL was refused: the offset of the buffer that failed, and what was wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Refused {
    /// The file could not be read.
    #[error("cannot read at offset {offset:#010X}: {source}")]
    Read {
        /// Where the read failed.
        offset: u64,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// A buffer breaks the format.
    #[error("buffer {index} at offset {offset:#010X}: {what}")]
    Damaged {
        /// The buffer's number, from 0.
        index: u64,
        /// The buffer's offset in the file.
        offset: u64,
        /// What is wrong with it.
        what: BufferFault,
    },
}

impl Refused {
    /// The file offset the refusal names.
    pub fn offset(&self) -> u64 {
        match *self {
            Refused::Read { offset, .. } | Refused::Damaged { offset, .. } => offset,
        }
    }
}

/// What is wrong with a buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BufferFault {
    /// The file ends inside the buffer's header.
    TruncatedHeader {
        /// The bytes of the header that are there.
        got: usize,
    },
    /// A size below the header's own 72 bytes, or above [`MAX_BUFFER`].
    BadSize {
        /// The size stored.
        size: u32,
    },
    /// The file ends before the buffer does.
    Overruns {
        /// The size stored.
        size: u32,
        /// The bytes of the buffer that are there.
        got: u64,
    },
    /// The events would end before the header does, or past the buffer (uncompressed), or
    /// past [`MAX_BUFFER`] (compressed).
    BadSavedOffset {
        /// The offset stored.
        saved_offset: u32,
        /// The buffer's size.
        size: u32,
    },
    /// The compressed bytes do not decompress to the events.
    Compressed(xpress::Damaged),
}

impl fmt::Display for BufferFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            BufferFault::TruncatedHeader { got } => write!(
                f,
                "the file ends {got} bytes into a buffer's header of {BUFFER_HEADER}"
            ),
            BufferFault::BadSize { size } => write!(
                f,
                "its size is {size} bytes; a buffer takes {BUFFER_HEADER} to {MAX_BUFFER}"
            ),
            BufferFault::Overruns { size, got } => write!(
                f,
                "its size is {size} bytes, but the file ends after {got} of them"
            ),
            BufferFault::BadSavedOffset { saved_offset, size } => write!(
                f,
                "its events end at {saved_offset}, outside its {BUFFER_HEADER}-byte header and {size}-byte buffer"
            ),
            BufferFault::Compressed(d) => write!(f, "{d}"),
        }
    }
}

/// One buffer: where it lies and its events' bytes (after the header, up to `SavedOffset`).
#[derive(Clone, Copy, Debug)]
pub struct Buffer<'a> {
    /// Its number, from 0.
    pub index: u64,
    /// Its offset in the file.
    pub offset: u64,
    /// Its header.
    pub header: BufferHeader,
    /// Its events, decompressed: the bytes from the end of the header to `SavedOffset`. An
    /// event's offset in the buffer is its offset here plus [`BUFFER_HEADER`].
    pub events: &'a [u8],
}

/// Reads an ETL's buffers one at a time from `R`, keeping one buffer in memory.
pub struct Buffers<R> {
    input: R,
    offset: u64,
    index: u64,
    stored: Vec<u8>,
    plain: Vec<u8>,
}

impl<R: Read> Buffers<R> {
    /// Reads buffers from the start of `input`.
    pub fn new(input: R) -> Buffers<R> {
        Buffers {
            input,
            offset: 0,
            index: 0,
            stored: Vec::new(),
            plain: Vec::new(),
        }
    }

    /// The file offset of the next buffer: past the last one read.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The next buffer, or `None` at the end of the file.
    pub fn next_buffer(&mut self) -> Result<Option<Buffer<'_>>, Refused> {
        let (index, offset) = (self.index, self.offset);
        let damaged = |what| Refused::Damaged {
            index,
            offset,
            what,
        };
        let mut head = [0u8; BUFFER_HEADER];
        let got = read_full(&mut self.input, &mut head, offset).map_err(|e| Refused::Read {
            offset,
            source: e.into_io(),
        })?;
        match got {
            0 => return Ok(None),
            BUFFER_HEADER => {}
            got => return Err(damaged(BufferFault::TruncatedHeader { got })),
        }
        let header = BufferHeader::parse(&head);
        let size = header.size;
        if !(BUFFER_HEADER as u32..=MAX_BUFFER).contains(&size) {
            return Err(damaged(BufferFault::BadSize { size }));
        }
        let saved_offset = header.saved_offset;
        let limit = if header.compressed() {
            MAX_BUFFER
        } else {
            size
        };
        if saved_offset < BUFFER_HEADER as u32 || saved_offset > limit {
            return Err(damaged(BufferFault::BadSavedOffset { saved_offset, size }));
        }
        // The body grows with the bytes that arrive, never with the size a header claims.
        let body = u64::from(size) - BUFFER_HEADER as u64;
        self.stored.clear();
        let read = (&mut self.input)
            .take(body)
            .read_to_end(&mut self.stored)
            .map_err(|source| Refused::Read {
                offset: offset + BUFFER_HEADER as u64,
                source,
            })?;
        if (read as u64) < body {
            return Err(damaged(BufferFault::Overruns {
                size,
                got: BUFFER_HEADER as u64 + read as u64,
            }));
        }
        let logical = (saved_offset as usize) - BUFFER_HEADER;
        let events = if header.compressed() {
            self.plain.resize(logical, 0);
            xpress::decompress(&self.stored, &mut self.plain)
                .map_err(|d| damaged(BufferFault::Compressed(d)))?;
            &self.plain[..]
        } else {
            &self.stored[..logical]
        };
        self.offset += u64::from(size);
        self.index += 1;
        Ok(Some(Buffer {
            index,
            offset,
            header,
            events,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sptdump_testkit::etl::{buffer, system};

    fn events(file: &[u8]) -> Result<Vec<(u64, u64, Vec<u8>)>, Refused> {
        let mut buffers = Buffers::new(file);
        let mut out = Vec::new();
        while let Some(b) = buffers.next_buffer()? {
            out.push((b.index, b.offset, b.events.to_vec()));
        }
        Ok(out)
    }

    fn damaged(file: &[u8]) -> (u64, u64, BufferFault) {
        match events(file) {
            Err(Refused::Damaged {
                index,
                offset,
                what,
            }) => (index, offset, what),
            other => panic!("not refused as damaged: {other:?}"),
        }
    }

    fn two_buffers() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let a = buffer(&[system(0, 1, 2, 3, &[7; 20])], false);
        let b = buffer(
            &[system(0x0501, 1, 2, 3, &[9; 300]), system(5, 6, 7, 8, &[])],
            true,
        );
        let file = [a.clone(), b.clone()].concat();
        (file, a, b)
    }

    #[test]
    fn buffers_stored_and_compressed_read_back_in_order() {
        let (file, a, b) = two_buffers();
        assert!(b.len() < 72 + 32 + 300, "the second buffer is compressed");
        let read = events(&file).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!((read[0].0, read[0].1), (0, 0));
        assert_eq!(read[0].2, a[72..]);
        assert_eq!((read[1].0, read[1].1), (1, a.len() as u64));
        let mut want = system(0x0501, 1, 2, 3, &[9; 300]);
        want.resize(want.len().next_multiple_of(8), 0);
        want.extend(system(5, 6, 7, 8, &[]));
        assert_eq!(read[1].2, want);
        assert!(events(&[]).unwrap().is_empty());
    }

    #[test]
    fn a_file_that_starts_an_etl_is_known_by_its_first_event() {
        let (file, ..) = two_buffers();
        assert!(BufferHeader::starts_etl(&file[..80]));
        assert!(!BufferHeader::starts_etl(&file[..79]));
        let mut not_header = file.clone();
        not_header[72 + 6] = 1;
        assert!(!BufferHeader::starts_etl(&not_header));
        assert!(!BufferHeader::starts_etl(b"SPT:\x01\0\0\0"));
        let mut small = file.clone();
        small[0..4].copy_from_slice(&71u32.to_le_bytes());
        assert!(!BufferHeader::starts_etl(&small));
    }

    #[test]
    fn damaged_buffers_are_refused_with_their_offset() {
        let (file, a, _) = two_buffers();
        let second = a.len();
        // The file ends inside the second buffer's header, then inside its body.
        assert_eq!(
            damaged(&file[..second + 10]),
            (1, second as u64, BufferFault::TruncatedHeader { got: 10 })
        );
        let size = (file.len() - second) as u32;
        assert_eq!(
            damaged(&file[..file.len() - 1]),
            (
                1,
                second as u64,
                BufferFault::Overruns {
                    size,
                    got: u64::from(size) - 1
                }
            )
        );
        // Sizes below the header and past 16 MiB, before anything is read for them.
        for bad in [0, 71, MAX_BUFFER + 1, u32::MAX] {
            let mut f = file.clone();
            f[second..second + 4].copy_from_slice(&bad.to_le_bytes());
            assert_eq!(
                damaged(&f),
                (1, second as u64, BufferFault::BadSize { size: bad })
            );
        }
        // Events that end before the header, or past a buffer stored as is.
        for bad in [71, a.len() as u32 + 1] {
            let mut f = file.clone();
            f[4..8].copy_from_slice(&bad.to_le_bytes());
            assert_eq!(
                damaged(&f),
                (
                    0,
                    0,
                    BufferFault::BadSavedOffset {
                        saved_offset: bad,
                        size: a.len() as u32
                    }
                )
            );
        }
        // A compressed stream that does not give the events' size.
        let mut f = file.clone();
        let saved = u32::from_le_bytes(f[second + 4..second + 8].try_into().unwrap());
        f[second + 4..second + 8].copy_from_slice(&(saved + 8).to_le_bytes());
        let (index, offset, what) = damaged(&f);
        assert_eq!((index, offset), (1, second as u64));
        assert!(matches!(
            what,
            BufferFault::Compressed(xpress::Damaged {
                what: xpress::Fault::Short { .. },
                ..
            })
        ));
        let message = Refused::Damaged {
            index,
            offset,
            what,
        }
        .to_string();
        assert!(
            message.starts_with(&format!("buffer 1 at offset {:#010X}: ", second)),
            "{message}"
        );
    }
}
