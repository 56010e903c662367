//! A gzip file deflated on two threads: one member, as `gzip` writes and every reader reads,
//! its input cut into blocks of [`BLOCK`] bytes, each deflated alone and ended with a sync
//! flush, so that each thread deflates a block of its own; the blocks are written in order
//! and the trailer's CRC-32 is theirs combined. pigz writes the same shape of stream (with
//! its `-i`).
//!
//! A block deflated alone starts with an empty window: the pprof profile of the realistic
//! benchmark trace is 0.12% larger than deflated as one stream (round twelve in
//! docs/notes/performance-rounds.md). The bytes depend on the input and [`BLOCK`] only,
//! never on which thread deflated a block, so a profile gives the same file every time.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, PoisonError};

use flate2::{Compress, Compression, FlushCompress, Status};

use crate::engine::threads::{self, joined};

/// The input deflated as one block.
const BLOCK: usize = 1 << 18;
/// Blocks on their way to the deflaters: a few in flight.
const IN_FLIGHT: usize = 4;

/// A block of input: its place, its bytes, and whether it is the last.
type Job = (u64, Vec<u8>, bool);

/// Writes to `out`, gzipped, what `make` writes: `make` runs on this thread, the deflaters on
/// others (two with a second core, else one). The deflaters' error (a full disk) is the one
/// given, `make`'s being only that they stopped.
pub(crate) fn deflated<W: Write + Send, T>(
    out: W,
    make: impl FnOnce(&mut Blocks) -> io::Result<T>,
) -> io::Result<T> {
    let mut out = out;
    // As flate2's GzEncoder writes it: no name, no time, level 1 ("fastest"), OS unknown.
    out.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255])?;
    let threads = if threads::two_cores() { 2 } else { 1 };
    let (tx, rx) = sync_channel::<Job>(IN_FLIGHT);
    let rx = Arc::new(Mutex::new(rx));
    let sink = Mutex::new(Sink::new(out));
    let made = std::thread::scope(|scope| {
        let deflaters: Vec<_> = (0..threads)
            .map(|_| {
                let (rx, sink) = (Arc::clone(&rx), &sink);
                scope.spawn(move || deflate(&rx, sink))
            })
            .collect();
        // The deflaters alone hold the receiver: if they all stop, sending fails.
        drop(rx);
        let mut blocks = Blocks {
            tx,
            buffer: Vec::with_capacity(BLOCK),
            next: 0,
        };
        let made = make(&mut blocks).and_then(|t| blocks.send(true).map(|()| t));
        drop(blocks);
        let deflated = deflaters
            .into_iter()
            .map(joined)
            .fold(Ok(()), io::Result::and);
        deflated.and(made)
    })?;
    let sink = sink.into_inner().unwrap_or_else(PoisonError::into_inner);
    sink.finish()?;
    Ok(made)
}

/// The input, sent to the deflaters a block at a time.
pub(crate) struct Blocks {
    tx: SyncSender<Job>,
    buffer: Vec<u8>,
    next: u64,
}

impl Blocks {
    /// Sends what is buffered as the next block, the last if `last`.
    fn send(&mut self, last: bool) -> io::Result<()> {
        let block = std::mem::replace(&mut self.buffer, Vec::with_capacity(BLOCK));
        self.tx
            .send((self.next, block, last))
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the deflaters stopped"))?;
        self.next += 1;
        Ok(())
    }
}

impl Write for Blocks {
    /// Sends blocks of exactly [`BLOCK`] bytes, however the input is written.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while !rest.is_empty() {
            let room = BLOCK - self.buffer.len();
            let (now, later) = rest.split_at(room.min(rest.len()));
            self.buffer.extend_from_slice(now);
            if self.buffer.len() == BLOCK {
                self.send(false)?;
            }
            rest = later;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A deflater: takes blocks until there are none, deflates each alone, and gives it to the
/// sink.
fn deflate<W: Write>(rx: &Mutex<Receiver<Job>>, sink: &Mutex<Sink<W>>) -> io::Result<()> {
    let mut compress = Compress::new(Compression::fast(), false);
    loop {
        let job = rx.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok((at, input, last)) = job else {
            return Ok(());
        };
        compress.reset();
        let mut bytes = Vec::with_capacity(input.len() / 2 + 1024);
        let flush = if last {
            FlushCompress::Finish
        } else {
            FlushCompress::Sync
        };
        if let Err(e) = block(&mut compress, &input, &mut bytes, flush) {
            // The block will never be written: the others must not wait for it.
            sink.lock().unwrap_or_else(PoisonError::into_inner).fail(&e);
            return Err(e);
        }
        let crc = crc32fast::hash(&input);
        let deflated = Deflated {
            bytes,
            crc,
            len: input.len() as u64,
        };
        sink.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .put(at, deflated)?;
    }
}

/// Deflates `input` into `out`, ended by `flush`: a sync flush (byte-aligned, not final) or
/// the stream's end.
fn block(
    compress: &mut Compress,
    input: &[u8],
    out: &mut Vec<u8>,
    flush: FlushCompress,
) -> io::Result<()> {
    let mut rest = input;
    loop {
        // Room for the deflater to go on: a block of random bytes deflates to more than it
        // was.
        out.reserve(1 << 12);
        let read = compress.total_in();
        let status = compress
            .compress_vec(rest, out, flush)
            .map_err(io::Error::other)?;
        rest = &rest[(compress.total_in() - read) as usize..];
        // Done when the input is in and the flush had room to be written whole.
        let room = out.len() < out.capacity();
        match status {
            Status::StreamEnd => return Ok(()),
            _ if rest.is_empty() && room && flush != FlushCompress::Finish => return Ok(()),
            _ => {}
        }
    }
}

/// A block deflated: its bytes, and the CRC-32 and length of its input.
struct Deflated {
    bytes: Vec<u8>,
    crc: u32,
    len: u64,
}

/// The file after its header: the blocks in order, the trailer.
struct Sink<W> {
    out: W,
    next: u64,
    waiting: BTreeMap<u64, Deflated>,
    crc: crc32fast::Hasher,
    len: u64,
    /// Why the file could not be written, once it could not: every deflater stops with it.
    failed: Option<(io::ErrorKind, String)>,
}

impl<W: Write> Sink<W> {
    fn new(out: W) -> Self {
        Sink {
            out,
            next: 0,
            waiting: BTreeMap::new(),
            crc: crc32fast::Hasher::new(),
            len: 0,
            failed: None,
        }
    }

    /// Block `at`, written when those before it are.
    fn put(&mut self, at: u64, block: Deflated) -> io::Result<()> {
        if let Some((kind, why)) = &self.failed {
            return Err(io::Error::new(*kind, why.clone()));
        }
        self.waiting.insert(at, block);
        self.write_ready().inspect_err(|e| self.fail(e))
    }

    /// Ends the file at `e`: what waits is let go of, and every block after is refused.
    fn fail(&mut self, e: &io::Error) {
        self.failed.get_or_insert_with(|| (e.kind(), e.to_string()));
        self.waiting.clear();
    }

    /// Writes the blocks that are next in order.
    fn write_ready(&mut self) -> io::Result<()> {
        while let Some(block) = self.waiting.remove(&self.next) {
            self.out.write_all(&block.bytes)?;
            self.crc.combine(&crc32fast::Hasher::new_with_initial_len(
                block.crc, block.len,
            ));
            self.len += block.len;
            self.next += 1;
        }
        Ok(())
    }

    /// The trailer: the CRC-32 of the input and its length modulo 2^32.
    fn finish(mut self) -> io::Result<()> {
        debug_assert!(self.waiting.is_empty(), "a block was never written");
        self.out.write_all(&self.crc.finalize().to_le_bytes())?;
        self.out.write_all(&(self.len as u32).to_le_bytes())?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;
    use std::io::Read;

    fn gunzip(gz: &[u8]) -> Vec<u8> {
        let mut d = GzDecoder::new(gz);
        let mut out = Vec::new();
        d.read_to_end(&mut out).unwrap();
        // One member: nothing after it.
        assert!(d.into_inner().is_empty());
        out
    }

    fn gzip(input: &[u8], pieces: usize) -> Vec<u8> {
        let mut gz = Vec::new();
        deflated(&mut gz, |w| {
            for piece in input.chunks(pieces.max(1)) {
                w.write_all(piece)?;
            }
            Ok(())
        })
        .unwrap();
        gz
    }

    /// Bytes that deflate somewhat, as a profile does.
    fn input(len: usize) -> Vec<u8> {
        let mut x = 0x2545_f491_u32;
        (0..len)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                if i % 7 < 4 {
                    (i / 64) as u8
                } else {
                    x as u8 & 0x0f
                }
            })
            .collect()
    }

    /// Bytes that do not deflate: each block's output is larger than its input.
    fn random(len: usize) -> Vec<u8> {
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect()
    }

    #[test]
    fn any_length_reads_back_as_one_member() {
        let lengths = [
            0,
            1,
            1000,
            BLOCK - 1,
            BLOCK,
            BLOCK + 1,
            3 * BLOCK,
            5 * BLOCK + 77,
        ];
        for data in lengths.iter().flat_map(|&len| [input(len), random(len)]) {
            let len = data.len();
            let gz = gzip(&data, 4093);
            assert_eq!(gunzip(&gz), data, "{len} bytes");
            let trailer = &gz[gz.len() - 8..];
            assert_eq!(trailer[..4], crc32fast::hash(&data).to_le_bytes(), "{len}");
            assert_eq!(trailer[4..], (len as u32).to_le_bytes(), "{len}");
        }
    }

    #[test]
    fn the_bytes_depend_on_the_input_alone() {
        let data = input(4 * BLOCK + 12_345);
        let once = gzip(&data, 100_000);
        for pieces in [1, 999, BLOCK, usize::MAX] {
            assert_eq!(
                gzip(&data, pieces),
                once,
                "written {pieces} bytes at a time"
            );
        }
        // A header as flate2 writes it, and as small as a stream deflated whole, give or take
        // a hundredth.
        let mut whole = flate2::write::GzEncoder::new(Vec::new(), Compression::fast());
        whole.write_all(&data).unwrap();
        let whole = whole.finish().unwrap();
        assert_eq!(once[..10], whole[..10]);
        assert!(
            once.len() * 100 <= whole.len() * 101,
            "{} {}",
            once.len(),
            whole.len()
        );
    }

    #[test]
    fn a_failing_file_is_the_error_and_nothing_hangs() {
        /// Full at its second write (the first block, after the header), then room again (as
        /// when another process frees space): nothing is written after the first failure,
        /// and the encoder is stopped.
        struct FullOnce(u32);
        impl Write for FullOnce {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0 += 1;
                if self.0 == 2 {
                    return Err(io::Error::new(io::ErrorKind::StorageFull, "full"));
                }
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let data = input(BLOCK);
        let mut sent = 0;
        let e = deflated(FullOnce(0), |w| {
            for _ in 0..64 {
                w.write_all(&data)?;
                sent += 1;
            }
            Ok(())
        })
        .unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        // The blocks in flight and in the deflaters' hands, not the 64.
        assert!(sent < 16, "{sent} blocks sent after the file failed");
    }
}
