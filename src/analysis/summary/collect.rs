//! Collecting a summary on two threads.
//!
//! A summary's cost is memory latency: one hash-table update per RVA, pair or arc, into
//! tables that together outgrow one core's L2 cache. So the work is split by table: each
//! table (a binary's IP event, LBR arcs or call-stack arcs) is counted by one of two threads,
//! the decoding thread or a second one, each with its tables in its own cache. Records of
//! the second thread's tables travel to it in batches of their raw bytes:
//!
//! ```text
//! opcode u8 | has progid u8 | progid u16 | hits u128 | n u8 | payload (n x 4 or 8 bytes)
//! ```
//!
//! Which thread counts which table is balanced as the trace goes. At first the second
//! thread takes the IP events (most of most traces) and the first the arcs. After a million
//! key updates, and again each time their number doubles, the second thread hands its
//! tables back, and they are dealt out again by the work each has cost, the costliest first
//! to the thread with less, the decoding thread starting with the cost of decoding (measured
//! from the time both threads were busy since the last deal). A table
//! moves whole (its memory changes hands, nothing is copied), so the two threads never share
//! a table, putting their halves together is a move too, and the result is the same summary,
//! to the byte, as one thread would make. Memory stays bounded: at most a few batches are in
//! flight.

use std::any::Any;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use byteorder::{ByteOrder, LittleEndian as LE};
use rustc_hash::FxHashMap;

use crate::analysis::summary::{Summary, TableId};
use crate::format::opcode::Opcode;
use crate::format::record::Samples;

/// How many bytes of records make a batch.
const BATCH: usize = 256 * 1024;

/// A batch's capacity: a record past [`BATCH`] bytes fits.
const CAPACITY: usize = BATCH + crate::format::decode::MAX_RECORD + 24;

/// Batches that may wait for the second thread before the first one waits in turn.
const IN_FLIGHT: usize = 4;

/// Key updates before the tables are first dealt out by their cost; then each time the
/// count doubles.
const FIRST_DEAL: u64 = 1 << 20;

/// The cost of a key update, in units: an arc costs about 1.4 times an RVA
/// (benches/counting.rs).
const RVA_COST: u64 = 5;
const ARC_COST: u64 = 7;

/// The decoding thread's own work (reading, decoding, batching), in the same units, per key
/// update of the whole trace, until it is measured: at each deal, from the time each thread
/// was busy since the one before.
const DECODE_COST: f64 = 1.0;

/// The counting thread stopped before the end (it panicked), so the counts it held are lost.
#[derive(Debug, thiserror::Error)]
#[error("the thread counting samples stopped ({0}); the summary would be incomplete")]
pub(crate) struct CountingFailed(String);

/// What the second thread is asked to do.
enum Msg {
    /// Count these records.
    Batch(Vec<u8>),
    /// Send back every table and the time spent counting since the last return, and go on
    /// with none.
    Return,
    /// Count these tables from now on.
    Take(Summary),
}

/// What the second thread runs: it counts what the first sends, answers [`Msg::Return`] on
/// the second channel, and returns what it holds when the first channel closes.
type Work = fn(Receiver<Msg>, SyncSender<(Summary, Duration)>, usize) -> Summary;

/// Collects a summary, handing the records of some tables to a second thread.
pub(crate) struct Collector {
    local: Summary,
    batch: Vec<u8>,
    to_worker: Option<SyncSender<Msg>>,
    from_worker: Option<Receiver<(Summary, Duration)>>,
    worker: Option<JoinHandle<Summary>>,
    /// The second thread's tables, a bit each per binary, once dealt; before, the IP events.
    theirs: Option<FxHashMap<Option<u16>, u8>>,
    /// The last binary looked up and its tables on the second thread: records come in runs
    /// of one binary.
    last: Option<(Option<u16>, u8)>,
    /// Key updates so far, and at how many to deal the tables out next.
    keys: u64,
    next_deal: u64,
    /// Since the last deal: when it was, the time this thread spent waiting for the second
    /// one, the key updates then, and each table's.
    dealt_at: Instant,
    waited: Duration,
    keys_then: u64,
    tables_then: FxHashMap<TableId, u64>,
    /// The cost of decoding, per key update.
    decode_cost: f64,
}

impl Collector {
    /// A collector for a summary showing `top` entries per table.
    pub(crate) fn new(top: usize) -> Self {
        Collector::with_worker(top, count, FIRST_DEAL)
    }

    /// A collector that counts everything on the calling thread: for when other threads are
    /// busy decoding other traces.
    pub(crate) fn alone(top: usize) -> Self {
        Collector {
            local: Summary::new(top),
            batch: Vec::new(),
            to_worker: None,
            from_worker: None,
            worker: None,
            theirs: None,
            last: None,
            keys: 0,
            next_deal: u64::MAX,
            dealt_at: Instant::now(),
            waited: Duration::ZERO,
            keys_then: 0,
            tables_then: FxHashMap::default(),
            decode_cost: DECODE_COST,
        }
    }

    /// A collector whose second thread runs `work`, dealing the tables out first after
    /// `first_deal` key updates.
    fn with_worker(top: usize, work: Work, first_deal: u64) -> Self {
        let (to_worker, msgs) = sync_channel::<Msg>(IN_FLIGHT);
        let (replies, from_worker) = sync_channel::<(Summary, Duration)>(1);
        // Without a second thread (the system refused one), everything is counted here.
        let Ok(worker) = thread::Builder::new()
            .name("sptdump-count".into())
            .spawn(move || work(msgs, replies, top))
        else {
            return Collector::alone(top);
        };
        // The first batch grows to its size; the next ones are made with room for it.
        Collector {
            to_worker: Some(to_worker),
            from_worker: Some(from_worker),
            worker: Some(worker),
            next_deal: first_deal,
            ..Collector::alone(top)
        }
    }

    /// Counts one sample record.
    #[inline]
    pub(crate) fn add(&mut self, s: &Samples<'_>) {
        if self.to_worker.is_none() {
            self.local.add(s);
            return;
        }
        let tables = match self.last {
            Some((progid, tables)) if progid == s.progid => tables,
            _ => self.tables_of(s.progid),
        };
        if Summary::table_of(s).is_some_and(|t| tables >> t & 1 != 0) {
            encode(&mut self.batch, s);
            if self.batch.len() >= BATCH {
                self.send_batch();
            }
        } else {
            self.local.add(s);
        }
        self.keys += u64::from(s.count);
        if self.keys >= self.next_deal {
            self.deal();
        }
    }

    /// The tables of binary `progid` that the second thread counts, a bit each, remembered
    /// for the next record.
    fn tables_of(&mut self, progid: Option<u16>) -> u8 {
        let tables = theirs_of(self.theirs.as_ref(), progid);
        self.last = Some((progid, tables));
        tables
    }

    /// Sends the batch to the second thread, and starts another.
    fn send_batch(&mut self) {
        let full = std::mem::replace(&mut self.batch, Vec::with_capacity(CAPACITY));
        self.send(Msg::Batch(full));
    }

    /// Sends the second thread a message; when it is gone, counts here what it was sent.
    fn send(&mut self, msg: Msg) {
        let Some(to_worker) = &self.to_worker else {
            return;
        };
        let start = Instant::now();
        let sent = to_worker.send(msg);
        self.waited += start.elapsed();
        if let Err(returned) = sent {
            // The second thread is gone (it can only have panicked). What it counted is lost,
            // which `finish` reports; the rest is counted here.
            self.to_worker = None;
            match returned.0 {
                Msg::Batch(batch) => for_each_record(&batch, |s| self.local.add(s)),
                Msg::Take(tables) => self.local.absorb(tables),
                Msg::Return => {}
            }
        }
    }

    /// Deals the tables out again by the work each has cost so far.
    fn deal(&mut self) {
        self.next_deal = self.keys.saturating_mul(2);
        if !self.batch.is_empty() {
            self.send_batch();
        }
        let busy = self.dealt_at.elapsed().saturating_sub(self.waited);
        self.send(Msg::Return);
        let Some((returned, their_busy)) = self.from_worker.as_ref().and_then(|r| r.recv().ok())
        else {
            // Gone: `finish` reports it.
            self.to_worker = None;
            return;
        };
        self.local.absorb(returned);
        let loads: FxHashMap<TableId, u64> = self.local.loads().collect();
        let costs: Vec<(TableId, u64, u64)> = loads
            .iter()
            .map(|(&table, &keys)| {
                let unit = if table.1 < Opcode::IP_KINDS.len() {
                    RVA_COST
                } else {
                    ARC_COST
                };
                let then = self.tables_then.get(&table).copied().unwrap_or(0);
                (
                    table,
                    keys.saturating_mul(unit),
                    keys.saturating_sub(then).saturating_mul(unit),
                )
            })
            .collect();
        self.measure(&costs, busy, their_busy);
        self.tables_then = loads;
        self.keys_then = self.keys;
        self.waited = Duration::ZERO;
        self.dealt_at = Instant::now();

        let mut costs: Vec<(TableId, u64)> = costs.into_iter().map(|(t, c, _)| (t, c)).collect();
        // The costliest first, ties in table order.
        costs.sort_unstable_by_key(|&(table, cost)| (std::cmp::Reverse(cost), table));
        let mut ours = (self.keys as f64 * self.decode_cost) as u64;
        let mut others = 0u64;
        let mut theirs = FxHashMap::default();
        for ((progid, table), cost) in costs {
            if others < ours {
                others = others.saturating_add(cost);
                *theirs.entry(progid).or_insert(0u8) |= 1 << table;
            } else {
                ours = ours.saturating_add(cost);
            }
        }
        let tables = self
            .local
            .split_off(|(progid, t)| theirs_of(Some(&theirs), progid) >> t & 1 != 0);
        self.send(Msg::Take(tables));
        self.theirs = Some(theirs);
        self.last = None;
    }

    /// Measures the cost of decoding from the time each thread was busy since the last deal:
    /// the second thread's time per unit of its tables' cost prices this thread's time, and
    /// what its own tables do not explain is decoding.
    fn measure(&mut self, costs: &[(TableId, u64, u64)], busy: Duration, their_busy: Duration) {
        let (mut ours, mut theirs) = (0u64, 0u64);
        for &((progid, table), _, recent) in costs {
            if theirs_of(self.theirs.as_ref(), progid) >> table & 1 != 0 {
                theirs += recent;
            } else {
                ours += recent;
            }
        }
        let keys = self.keys - self.keys_then;
        if theirs == 0 || keys == 0 || their_busy.is_zero() {
            return;
        }
        let per_unit = their_busy.as_secs_f64() / theirs as f64;
        let decoding = busy.as_secs_f64() / per_unit - ours as f64;
        // Bounded: a thread descheduled for a while must not deal everything to one side.
        self.decode_cost = (decoding / keys as f64).clamp(0.0, 4.0 * ARC_COST as f64);
    }

    /// The whole summary, or why it cannot be had: the second thread stopped early.
    pub(crate) fn finish(mut self) -> Result<Summary, CountingFailed> {
        if !self.batch.is_empty() {
            self.send_batch();
        }
        drop(self.to_worker.take());
        if let Some(worker) = self.worker.take() {
            let theirs = worker.join().map_err(|p| CountingFailed(panic_text(&*p)))?;
            self.local.absorb(theirs);
        }
        Ok(self.local)
    }
}

/// The tables of binary `progid` that the second thread counts, a bit each, as `theirs`
/// deals them; before the first deal (`None`), the IP events.
fn theirs_of(theirs: Option<&FxHashMap<Option<u16>, u8>>, progid: Option<u16>) -> u8 {
    match theirs {
        Some(theirs) => theirs.get(&progid).copied().unwrap_or(0),
        None => (1 << Opcode::IP_KINDS.len()) - 1,
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

/// The second thread: counts what it is sent until the channel closes.
fn count(msgs: Receiver<Msg>, replies: SyncSender<(Summary, Duration)>, top: usize) -> Summary {
    let mut summary = Summary::new(top);
    let mut busy = Duration::ZERO;
    for msg in msgs {
        match msg {
            Msg::Batch(batch) => {
                let start = Instant::now();
                for_each_record(&batch, |s| summary.add(s));
                busy += start.elapsed();
            }
            Msg::Return => {
                let all = std::mem::replace(&mut summary, Summary::new(top));
                if replies.send((all, std::mem::take(&mut busy))).is_err() {
                    break;
                }
            }
            Msg::Take(tables) => summary.absorb(tables),
        }
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
    use crate::image::attached::SymbolMap;

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
            .lines(
                &tables,
                &symbols,
                crate::format::stackorder::StackOrder::LeafFirst,
            )
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
    fn tables_dealt_out_again_and_again_give_the_summary_one_thread_gives() {
        let mut one = Summary::new(5);
        feed(&mut |s| one.add(s));
        // A deal after 1,000 key updates, then at 2,000, 4,000, ...: seven in all.
        let mut two = Collector::with_worker(5, count, 1000);
        let mut dealt = Vec::new();
        feed(&mut |s| {
            two.add(s);
            if let Some(theirs) = &two.theirs
                && dealt.last() != Some(theirs)
            {
                dealt.push(theirs.clone());
            }
        });
        assert!(two.worker.is_some(), "the second thread started");
        assert!(!dealt.is_empty(), "the tables were dealt out");
        // Dealt by cost, the second thread gets more than the IP events it starts with.
        let ip = (1u8 << Opcode::IP_KINDS.len()) - 1;
        assert!(
            dealt.iter().any(|d| d.values().any(|&m| m & !ip != 0)),
            "{dealt:?}"
        );
        assert_eq!(json(&two.finish().unwrap()), json(&one));
    }

    #[test]
    fn a_second_thread_that_stops_is_an_error_not_a_short_summary() {
        fn stops(msgs: Receiver<Msg>, _: SyncSender<(Summary, Duration)>, _: usize) -> Summary {
            let _first = msgs.recv();
            panic!("counting went wrong");
        }
        // Keep the panic's report out of the test output.
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let mut two = Collector::with_worker(5, stops, FIRST_DEAL);
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
