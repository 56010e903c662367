//! Writes a large, realistic synthetic SPT trace for benchmarks.
//!
//! ```text
//! cargo run --release --example synth -- OUT.spt SIZE_MIB [SEED]
//! ```
//!
//! The generator itself is `sptdump_testkit::synth` (`testkit/src/synth.rs`), shared with
//! the benches.

use std::env;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::ExitCode;

use sptdump_testkit::synth;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let (Some(out), Some(mib)) = (
        args.first(),
        args.get(1).and_then(|s| s.parse::<u64>().ok()),
    ) else {
        eprintln!("usage: synth OUT.spt SIZE_MIB [SEED]");
        return ExitCode::from(2);
    };
    let seed = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_5EED_u64);
    let written = File::create(out).and_then(|file| {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let size = synth::write_trace(&mut w, mib << 20, seed)?;
        w.flush()?;
        Ok(size)
    });
    match written {
        Ok(size) => {
            eprintln!("wrote {out}: {size} bytes");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("synth: {out}: {e}");
            ExitCode::FAILURE
        }
    }
}
