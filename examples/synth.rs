//! Writes a large, realistic synthetic SPT trace for benchmarks.
//!
//! ```text
//! cargo run --release --example synth -- OUT.spt SIZE_MIB [SEED] [--realistic [--ip-only]]
//! cargo run --release --example synth -- OUT.spt SIZE_MIB [SEED] --lbr-walk
//! cargo run --release --example synth -- OUT.spt SIZE_MIB [SEED] --over-spd SPD
//! ```
//!
//! `--over-spd SPD` writes LBR records (and an IP sample each) drawn over the code of the
//! functions SPD counts, of the binary it is of: the load `/compare TRACE SPD` is timed on
//! (`sptdump_testkit::onspd`; a random draw, not an execution).
//!
//! `--lbr-walk` writes the SPGO tutorial's shape instead, an IP sample and an LBR record per
//! sample and no call stacks, of a random walk over `testdata/pe/lbr.exe`'s code
//! (`sptdump_testkit::walk`; paths of the code, not an execution): the trace the LBR views
//! (`/coverage`, `/dyninst`) are measured on, with
//! `/pdb:testdata/pe/lbr.pdb /image:testdata/pe/lbr.exe`.
//!
//! `--realistic` spreads the addresses as a long production run does (see
//! `synth::Profile::Realistic`); `--ip-only` leaves out its LBR records and call stacks. The last line printed counts the key updates a summary
//! makes of the trace, for benchmarks that measure time per update.
//!
//! The generator itself is `sptdump_testkit::synth` (`testkit/src/synth.rs`), shared with
//! the benches.

use std::env;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::process::ExitCode;

use sptdump::image::spd::table::FunctionTable;
use sptdump::image::spd::{self, Header};
use sptdump::image::spdprofile::SpdProfile;
use sptdump_testkit::{onspd, synth, walk};

fn main() -> ExitCode {
    let mut args: Vec<String> = env::args().skip(1).collect();
    let over_spd = args
        .iter()
        .position(|a| a == "--over-spd")
        .filter(|&at| at + 1 < args.len())
        .map(|at| {
            let spd = args.remove(at + 1);
            args.remove(at);
            spd
        });
    let mut flag = |name: &str| match args.iter().position(|a| a == name) {
        Some(at) => {
            args.remove(at);
            true
        }
        None => false,
    };
    let lbr_walk = flag("--lbr-walk");
    let profile = match (flag("--realistic"), flag("--ip-only")) {
        (false, _) => synth::Profile::Bench,
        (true, false) => synth::Profile::Realistic,
        (true, true) => synth::Profile::RealisticIp,
    };
    let (Some(out), Some(mib)) = (
        args.first(),
        args.get(1).and_then(|s| s.parse::<u64>().ok()),
    ) else {
        eprintln!("usage: synth OUT.spt SIZE_MIB [SEED] [--realistic [--ip-only] | --lbr-walk]");
        return ExitCode::from(2);
    };
    let seed = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_5EED_u64);
    if let Some(spd) = over_spd {
        // A 16-pair LBR record (130 bytes) and an IP record (6 bytes) per sample.
        let records = usize::try_from((mib << 20) / 136).unwrap_or(usize::MAX);
        return match read_spd(&spd) {
            Ok((header, profile)) => {
                let trace = onspd::trace(&header, &profile, records, seed);
                write(out, &trace)
            }
            Err(e) => {
                eprintln!("synth: {spd}: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if lbr_walk {
        // An IP record (6 bytes) and a 16-pair LBR record (130 bytes) per sample, and room
        // for the header and tables, so that 256 MiB stays within what the builder lays out.
        let sampling = walk::Sampling {
            records: usize::try_from(((mib << 20).saturating_sub(64 << 10)) / 136)
                .unwrap_or(usize::MAX),
            seed,
            ..walk::LBR_TRACE
        };
        let records = walk::walk("lbr", "lbr", "main_entry", sampling).records;
        let trace = walk::trace("lbr", "lbr.exe", &records, false);
        return write(out, &trace);
    }
    let written = File::create(out).and_then(|file| {
        let mut w = BufWriter::with_capacity(1 << 20, file);
        let written = synth::write_profile(&mut w, mib << 20, seed, profile)?;
        w.flush()?;
        Ok(written)
    });
    match written {
        Ok((size, keys)) => {
            eprintln!("wrote {out}: {size} bytes");
            println!("key updates: {keys}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("synth: {out}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The header and the functions of the SPD at `path`.
fn read_spd(path: &str) -> Result<(Header, SpdProfile), Box<dyn std::error::Error>> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let header = spd::read_header(&mut file, len)?;
    let table = FunctionTable::read(&mut file, &header)?;
    Ok((header, SpdProfile::from_table(&table)))
}

/// Writes `trace` to `out`.
fn write(out: &str, trace: &[u8]) -> ExitCode {
    match std::fs::write(out, trace) {
        Ok(()) => {
            eprintln!("wrote {out}: {} bytes", trace.len());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("synth: {out}: {e}");
            ExitCode::FAILURE
        }
    }
}
