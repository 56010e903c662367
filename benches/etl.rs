//! The ETL reader's layers on the public recording of the shared suite
//! (`../shared/etl/net.4.5.2.x64.etl`, 4.9 MB, 359 compressed buffers, 23 MB of events), held
//! in memory: the buffers decompressed alone (`decompress`, what `xpress.c` does but count),
//! then with their events walked (`events`), then gathered into a recording (`recording`).
//!
//! ```text
//! cargo bench --bench etl
//! ```
//!
//! Skipped, with a line saying so, without the shared suite beside the repository.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sptdump::etl::buffer::{BUFFER_HEADER, BufferHeader, Buffers};
use sptdump::etl::event::Events;
use sptdump::etl::recording::Recording;
use sptdump::etl::xpress;

fn bench(c: &mut Criterion) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .with_file_name("shared")
        .join("etl/net.4.5.2.x64.etl");
    let Ok(file) = std::fs::read(&path) else {
        eprintln!("skipped: no {}", path.display());
        return;
    };
    // The compressed buffers: (stored bytes, events' size).
    let mut compressed = Vec::new();
    let mut at = 0;
    while at + BUFFER_HEADER <= file.len() {
        let h = BufferHeader::parse(file[at..at + BUFFER_HEADER].try_into().unwrap());
        let end = at + h.size as usize;
        if h.compressed() {
            compressed.push((
                &file[at + BUFFER_HEADER..end],
                h.saved_offset as usize - BUFFER_HEADER,
            ));
        }
        at = end;
    }
    let plain: u64 = compressed.iter().map(|&(_, n)| n as u64).sum();
    let mut g = c.benchmark_group("etl");
    g.throughput(Throughput::Bytes(plain));
    g.bench_function("decompress", |b| {
        let mut out = vec![0u8; 1 << 20];
        b.iter(|| {
            for &(input, n) in &compressed {
                xpress::decompress(input, &mut out[..n]).unwrap();
            }
            black_box(&out);
        })
    });
    g.bench_function("events", |b| {
        b.iter(|| {
            let mut buffers = Buffers::new(&file[..]);
            let mut events = 0u64;
            while let Some(buffer) = buffers.next_buffer().unwrap() {
                events += Events::new(buffer.events).count() as u64;
            }
            black_box(events)
        })
    });
    g.bench_function("recording", |b| {
        b.iter(|| {
            let mut buffers = Buffers::new(&file[..]);
            let mut recording = Recording::new();
            while let Some(buffer) = buffers.next_buffer().unwrap() {
                recording.add(&buffer);
            }
            black_box(recording.attribute())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
