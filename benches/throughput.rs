//! Throughput of the decoder alone and of each printer, on an 8 MiB synthetic trace held in
//! memory (so the file system is out of the picture).
//!
//! ```text
//! cargo bench --bench throughput
//! ```
//!
//! Whole-process figures against the C yardstick come from `scripts/bench.py`.

use std::ffi::OsString;
use std::hint::black_box;
use std::io::{self, BufWriter, Cursor};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sptdump::cli::{self, Command};
use sptdump::dump::{self, Traces};
use sptdump::format::decode::{Decoder, Sink};
use sptdump::format::diag::Diagnostic;
use sptdump::format::record::Record;
use sptdump::input::Input;
use sptdump::views::Plan;
use sptdump_testkit::synth;

/// Counts what the decoder hands out, and nothing more.
struct Count(u64);

impl Sink for Count {
    fn record(&mut self, record: &Record<'_>) -> io::Result<()> {
        self.0 += black_box(record).offset() & 1;
        Ok(())
    }
    fn diagnostic(&mut self, _: Diagnostic) -> io::Result<()> {
        Ok(())
    }
}

/// Output goes through the same buffer as the command's, into nothing.
fn out() -> BufWriter<io::Sink> {
    BufWriter::with_capacity(64 * 1024, io::sink())
}

/// Runs the plan over the trace with the printer it asks for, as the command line does.
fn run(trace: &[u8], plan: &Plan) {
    let paths = ["bench.spt".to_owned()];
    let traces = Traces::opened(&paths, vec![Ok(Input::memory(trace.to_vec()))]);
    let mut printer = plan.printer(out(), io::sink());
    dump::run(&mut printer, plan, &traces).unwrap();
}

/// The plan of the command line `line` (with a trace), as sptdump's parser makes it.
fn plan(line: &str) -> Plan {
    let args = line
        .split_whitespace()
        .chain(["bench.spt"])
        .map(OsString::from);
    match cli::parse(args) {
        Ok(Command::Run { plan, .. }) => *plan,
        other => panic!("{line}: {other:?}"),
    }
}

fn benches(c: &mut Criterion) {
    let mut trace = Vec::new();
    synth::write_trace(&mut trace, 8 << 20, 7).unwrap();
    let start = 0x20 + 0x4000 + 0x100 * 24;
    let text_events = plan("/event");
    let json_events = plan("/event /json");
    let summary = plan("/summary /json");
    let validate = plan("/validate /json");

    let mut g = c.benchmark_group("throughput");
    g.throughput(Throughput::Bytes(trace.len() as u64));
    g.sample_size(20);
    g.bench_function("decode", |b| {
        b.iter(|| {
            let mut count = Count(0);
            Decoder::new(Cursor::new(&trace[start..]), start as u64, None, 4)
                .run(&mut count)
                .unwrap();
            count.0
        })
    });
    g.bench_function("validate", |b| b.iter(|| run(&trace, &validate)));
    g.bench_function("text events", |b| b.iter(|| run(&trace, &text_events)));
    g.bench_function("json events", |b| b.iter(|| run(&trace, &json_events)));
    g.bench_function("summary", |b| b.iter(|| run(&trace, &summary)));
    g.finish();
}

criterion_group!(throughput, benches);
criterion_main!(throughput);
