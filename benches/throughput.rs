//! Throughput of the decoder alone and of each printer, on an 8 MiB synthetic trace held in
//! memory (so the file system is out of the picture).
//!
//! ```text
//! cargo bench --bench throughput
//! ```
//!
//! Whole-process figures against the C yardstick come from `scripts/bench.py`.

use std::hint::black_box;
use std::io::{self, BufWriter, Cursor};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sptdump::decode::{Decoder, Sink};
use sptdump::diag::Diagnostic;
use sptdump::dump::{self, Options, Sections};
use sptdump::input::Input;
use sptdump::json::JsonPrinter;
use sptdump::print::{FileInfo, Printer};
use sptdump::record::Record;
use sptdump::text::TextPrinter;

#[path = "../tests/support/synth.rs"]
mod synth;

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

fn run<P: Printer>(printer: &mut P, trace: &[u8], options: &Options) {
    let file = FileInfo {
        path: "bench.spt",
        size: Some(trace.len() as u64),
    };
    dump::dump(printer, &file, Input::memory(trace.to_vec()), options).unwrap();
}

fn benches(c: &mut Criterion) {
    let mut trace = Vec::new();
    synth::write_trace(&mut trace, 8 << 20, 7).unwrap();
    let start = 0x20 + 0x4000 + 0x100 * 24;
    let events = Options {
        sections: Sections {
            event: true,
            ..Sections::default()
        },
        ..Options::default()
    };
    let summary = Options {
        sections: Sections::default(),
        summary: Some(10),
        ..Options::default()
    };
    let validate = Options {
        validate: true,
        ..Options::default()
    };

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
    g.bench_function("validate", |b| {
        b.iter(|| run(&mut JsonPrinter::new(out(), io::sink()), &trace, &validate))
    });
    g.bench_function("text events", |b| {
        b.iter(|| run(&mut TextPrinter::new(out(), io::sink()), &trace, &events))
    });
    g.bench_function("json events", |b| {
        b.iter(|| run(&mut JsonPrinter::new(out(), io::sink()), &trace, &events))
    });
    g.bench_function("summary", |b| {
        b.iter(|| run(&mut JsonPrinter::new(out(), io::sink()), &trace, &summary))
    });
    g.finish();
}

criterion_group!(throughput, benches);
criterion_main!(throughput);
