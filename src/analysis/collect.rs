//! Collecting a summary on two threads.
//!
//! A summary's cost is memory latency: one hash-table update per RVA, pair or arc, into
//! tables that together outgrow one core's L2 cache. So the work is split by table: a
//! second thread counts the IP samples, and the decoding thread counts the LBR and
//! call-stack arcs, each with its own tables in its own cache. IP samples go to the second
//! thread because they are most of most traces (many have nothing else): then decoding and
//! counting still overlap. IP records travel to the second thread in batches of their raw
//! bytes:
//!
//! ```text
//! opcode u8 | has progid u8 | progid u16 | hits u128 | n u8 | payload (n x 4 bytes)
//! ```
//!
//! The two halves touch disjoint tables, so merging them is a move, and the result is the
//! same summary, to the byte, as one thread would make. Memory stays bounded: at most a few
//! batches are in flight.

use std::any::Any;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::{self, JoinHandle};

use byteorder::{ByteOrder, LittleEndian as LE};

use crate::analysis::summary::Summary;
use crate::format::opcode::Opcode;
use crate::format::record::{SampleKind, Samples};

/// How many bytes of IP records make a batch.
const BATCH: usize = 256 * 1024;

/// Batches that may wait for the second thread before the first one waits in turn.
const IN_FLIGHT: usize = 4;

/// The counting thread stopped before the end (it panicked), so the counts it held are lost.
#[derive(Debug, thiserror::Error)]
#[error("the thread counting IP samples stopped ({0}); the summary would be incomplete")]
pub struct CountingFailed(String);

/// Collects a summary, handing IP records to a second thread.
pub struct Collector {
    local: Summary,
    batch: Vec<u8>,
    to_worker: Option<SyncSender<Vec<u8>>>,
    worker: Option<JoinHandle<Summary>>,
}

impl Collector {
    /// A collector for a summary showing `top` entries per table.
    pub fn new(top: usize) -> Self {
        Collector::with_worker(top, count)
    }

    /// A collector that counts everything on the calling thread: for when other threads are
    /// busy decoding other traces.
    pub fn alone(top: usize) -> Self {
        Collector {
            local: Summary::new(top),
            batch: Vec::new(),
            to_worker: None,
            worker: None,
        }
    }

    /// A collector whose second thread runs `work`.
    fn with_worker(top: usize, work: fn(Receiver<Vec<u8>>, usize) -> Summary) -> Self {
        let (to_worker, batches) = sync_channel::<Vec<u8>>(IN_FLIGHT);
        // Without a second thread (the system refused one), everything is counted here.
        let worker = thread::Builder::new()
            .name("sptdump-ip".into())
            .spawn(move || work(batches, top))
            .ok();
        Collector {
            local: Summary::new(top),
            batch: Vec::with_capacity(BATCH + crate::format::decode::MAX_RECORD + 24),
            to_worker: worker.as_ref().map(|_| to_worker),
            worker,
        }
    }

    /// Counts one sample record.
    #[inline]
    pub fn add(&mut self, s: &Samples<'_>) {
        if !matches!(s.kind(), SampleKind::Ip(_)) || self.to_worker.is_none() {
            self.local.add(s);
            return;
        }
        encode(&mut self.batch, s);
        if self.batch.len() >= BATCH {
            self.send();
        }
    }

    fn send(&mut self) {
        let fresh = Vec::with_capacity(self.batch.capacity());
        let full = std::mem::replace(&mut self.batch, fresh);
        if let Some(to_worker) = &self.to_worker
            && let Err(returned) = to_worker.send(full)
        {
            // The second thread is gone (it can only have panicked). What it counted is lost,
            // which `finish` reports; the rest is counted here.
            self.to_worker = None;
            for_each_record(&returned.0, |s| self.local.add(s));
        }
    }

    /// The whole summary, or why it cannot be had: the second thread stopped early.
    pub fn finish(mut self) -> Result<Summary, CountingFailed> {
        if !self.batch.is_empty() {
            self.send();
        }
        drop(self.to_worker.take());
        if let Some(worker) = self.worker.take() {
            let ip = worker.join().map_err(|p| CountingFailed(panic_text(&*p)))?;
            self.local.absorb(ip);
        }
        Ok(self.local)
    }
}

/// What a panic said, when it said it with a string.
fn panic_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "it panicked".to_owned()
    }
}

/// The second thread: counts every record of every batch until the channel closes.
fn count(batches: Receiver<Vec<u8>>, top: usize) -> Summary {
    let mut summary = Summary::new(top);
    for batch in batches {
        for_each_record(&batch, |s| summary.add(s));
    }
    summary
}

fn encode(batch: &mut Vec<u8>, s: &Samples<'_>) {
    batch.push(s.opcode.0);
    batch.push(u8::from(s.progid.is_some()));
    batch.extend_from_slice(&s.progid.unwrap_or(0).to_le_bytes());
    batch.extend_from_slice(&s.hits.to_le_bytes());
    batch.push(s.count);
    batch.extend_from_slice(s.payload);
}

/// Calls `f` with each record of a batch that [`encode`] wrote.
fn for_each_record(mut batch: &[u8], mut f: impl FnMut(&Samples<'_>)) {
    while let [opcode, has_progid, p0, p1, rest @ ..] = batch {
        let (hits, rest) = rest.split_at(16);
        let count = rest[0];
        let opcode = Opcode(*opcode);
        let width = if opcode == Opcode::LBR { 8 } else { 4 };
        let (payload, rest) = rest[1..].split_at(usize::from(count) * width);
        f(&Samples {
            offset: 0,
            opcode,
            progid: (*has_progid != 0).then(|| LE::read_u16(&[*p0, *p1])),
            hits: LE::read_u128(hits),
            count,
            payload,
        });
        batch = rest;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::tables::Tables;
    use crate::image::symbols::SymbolMap;

    fn le(values: &[u32]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_le_bytes()).collect()
    }

    fn records() -> Vec<(Opcode, Option<u16>, u128, Vec<u32>)> {
        let mut out = Vec::new();
        for i in 0..20_000u32 {
            let progid = [Some(0), Some(3), None][(i % 3) as usize];
            let hits = if i % 997 == 0 {
                1 << 64
            } else {
                u128::from(i % 5 + 1)
            };
            out.push((Opcode::RETIRE_INSTR, progid, hits, vec![i % 301, i % 7]));
            out.push((Opcode::LBR, progid, hits, vec![i % 11, i % 13, 5, 6]));
            out.push((
                Opcode::ETW_CALLSTACK,
                progid,
                hits,
                vec![i % 17, i % 19, i % 23],
            ));
        }
        out
    }

    fn feed(add: &mut impl FnMut(&Samples<'_>)) {
        for (opcode, progid, hits, values) in records() {
            let payload = le(&values);
            let width = if opcode == Opcode::LBR { 2 } else { 1 };
            add(&Samples {
                offset: 0,
                opcode,
                progid,
                hits,
                count: (values.len() / width) as u8,
                payload: &payload,
            });
        }
    }

    fn json(summary: &Summary) -> Vec<String> {
        let (tables, symbols) = (Tables::default(), SymbolMap::default());
        summary
            .lines(&tables, &symbols)
            .map(|l| serde_json::to_string(&l).unwrap())
            .collect()
    }

    #[test]
    fn two_threads_give_the_summary_one_gives() {
        let mut one = Summary::new(5);
        feed(&mut |s| one.add(s));
        let mut two = Collector::new(5);
        feed(&mut |s| two.add(s));
        assert!(two.worker.is_some(), "the second thread started");
        assert_eq!(json(&two.finish().unwrap()), json(&one));
    }

    #[test]
    fn a_second_thread_that_stops_is_an_error_not_a_short_summary() {
        fn stops(batches: Receiver<Vec<u8>>, _: usize) -> Summary {
            let _first = batches.recv();
            panic!("counting went wrong");
        }
        // Keep the panic's report out of the test output.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let mut two = Collector::with_worker(5, stops);
        feed(&mut |s| two.add(s));
        let result = two.finish();
        std::panic::set_hook(hook);
        let e = result.expect_err("the IP counts of the first batch are lost");
        assert!(e.to_string().contains("counting went wrong"), "{e}");
    }

    #[test]
    fn batches_round_trip() {
        let mut batch = Vec::new();
        let payload = le(&[1, 2, 3, 4]);
        let s = Samples {
            offset: 9,
            opcode: Opcode::LBR,
            progid: Some(0xBEEF),
            hits: (1 << 64) + 3,
            count: 2,
            payload: &payload,
        };
        encode(&mut batch, &s);
        encode(&mut batch, &Samples { progid: None, ..s });
        let mut seen = Vec::new();
        for_each_record(&batch, |r| {
            seen.push((r.opcode, r.progid, r.hits, r.payload.to_vec()))
        });
        assert_eq!(
            seen,
            [
                (Opcode::LBR, Some(0xBEEF), (1 << 64) + 3, payload.clone()),
                (Opcode::LBR, None, (1 << 64) + 3, payload)
            ]
        );
    }
}
