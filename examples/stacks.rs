//! Writes a trace of call stacks over a range of addresses of one build, for the benchmark
//! of inline frames (scripts/bench.py): every frame of every stack a different address, so
//! that the stacks reference as many distinct addresses as asked.
//!
//! ```text
//! cargo run --release --example stacks -- OUT.spt IMAGE.readobj.txt NAME START END ADDRESSES [RECORDS]
//! ```
//!
//! The build's GUID and age come from `llvm-readobj --coff-debug-directory` output, as the
//! test fixtures' do; START..END is the range of RVAs to sample (a code section), ADDRESSES
//! how many distinct ones the stacks use (8 frames a stack, a few hits each), and RECORDS how
//! many call-stack records there are (ADDRESSES / 8 by default: each address once; more make
//! a trace of a realistic length, the stacks drawn from the same addresses, each with its IP
//! sample).

use std::process::ExitCode;

use sptdump_testkit::builder::{Guid, SptBuilder, UNHALT_CYCLE};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize| -> Option<u32> {
        let s = args.get(i)?;
        match s.strip_prefix("0x") {
            Some(hex) => u32::from_str_radix(hex, 16).ok(),
            None => s.parse().ok(),
        }
    };
    let records = number(6);
    let (Some(out), Some(readobj), Some(name), Some(start), Some(end), Some(count)) = (
        args.first(),
        args.get(1),
        args.get(2),
        number(3),
        number(4),
        number(5),
    ) else {
        eprintln!("usage: stacks OUT.spt IMAGE.readobj.txt NAME START END ADDRESSES [RECORDS]");
        return ExitCode::from(2);
    };
    let Ok(dump) = std::fs::read_to_string(readobj) else {
        eprintln!("stacks: cannot read {readobj}");
        return ExitCode::FAILURE;
    };
    let field = |key: &str| dump.lines().find_map(|l| l.trim().strip_prefix(key));
    let (Some(guid), Some(age)) = (field("PDBGUID: ("), field("PDBAge: ")) else {
        eprintln!("stacks: {readobj} has no PDBGUID and PDBAge");
        return ExitCode::FAILURE;
    };
    let guid: Vec<u8> = guid
        .trim_end_matches(')')
        .split_whitespace()
        .filter_map(|b| u8::from_str_radix(b, 16).ok())
        .collect();
    let (Ok(guid), Ok(age)) = (<[u8; 16]>::try_from(guid), age.trim().parse::<u32>()) else {
        eprintln!("stacks: {readobj}: unreadable GUID or age");
        return ExitCode::FAILURE;
    };

    let mut b = SptBuilder::new();
    let string = b.string(name);
    b.program_id(Guid(guid), age, string);
    b.binary_id(0);
    // Addresses spread evenly over the range, visited in a scrambled order (stepping by a
    // prime that does not divide the count visits every index once), 8 to a stack.
    let count = count.max(1);
    let span = end.saturating_sub(start).max(1);
    let at = |i: u32| start + ((u64::from(i) * u64::from(span)) / u64::from(count)) as u32;
    let step = [7919u64, 7907, 7901]
        .into_iter()
        .find(|p| u64::from(count) % p != 0)
        .unwrap_or(1);
    let order = |i: u32| ((u64::from(i) * step) % u64::from(count)) as u32;
    let mut frames = Vec::with_capacity(8);
    for i in 0..count {
        frames.push(at(order(i)));
        if frames.len() == 8 || i + 1 == count {
            b.repeat(u64::from(i % 5)).callstack(&frames);
            b.ip(UNHALT_CYCLE, &frames[..1]);
            frames.clear();
        }
    }
    // More records: stacks of 8 of the same addresses, stepping through them at a stride
    // that changes with each pass, so that many stacks are distinct.
    let written = count.div_ceil(8);
    for r in written..records.unwrap_or(written).max(written) {
        let stride = 1 + (r / written) % 97;
        let frames: Vec<u32> = (0..8)
            .map(|k| at(order((r.wrapping_mul(8).wrapping_add(k * stride)) % count)))
            .collect();
        b.repeat(u64::from(r % 3)).callstack(&frames);
        b.ip(UNHALT_CYCLE, &frames[..1]);
    }
    match std::fs::write(out, b.build()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("stacks: {out}: {e}");
            ExitCode::FAILURE
        }
    }
}
