//! Reads arbitrary bytes as a PDB, as `/pdb` reads one: its functions (`Symbols::from_pdb`),
//! then the source lines and inline chains of every byte of them (`SourceLines::read`). The
//! reader must read the file or refuse it with an error, never panic (the PDB reader's own
//! panics on inconsistent records are caught and reported as errors), hang or allocate
//! without bound; every chain it gives ends in the procedure that holds the address.

#![no_main]

use std::sync::atomic::{AtomicU64, Ordering};

use libfuzzer_sys::fuzz_target;
use sptdump::image::lines::SourceLines;
use sptdump::image::symbols::Symbols;

/// The file each input is written to: the reader takes a path, as `/pdb` does.
fn scratch() -> std::path::PathBuf {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed) % 4;
    std::env::temp_dir().join(format!("sptdump-fuzz-pdb-{}-{n}.pdb", std::process::id()))
}

fuzz_target!(|data: &[u8]| {
    let path = scratch();
    std::fs::write(&path, data).unwrap();
    if let Ok(symbols) = Symbols::from_pdb(&path) {
        // Every byte of the first functions, at most 64 KiB of addresses in all.
        let rvas: Vec<u32> = symbols
            .iter()
            .flat_map(|f| {
                (0..f.size.unwrap_or(1).min(0x1000)).map(move |o| f.rva.saturating_add(o))
            })
            .take(1 << 16)
            .collect();
        let lines = SourceLines::read(&symbols, rvas.iter().copied());
        for &rva in &rvas {
            if let Some(chain) = lines.chain(rva) {
                let frames: Vec<_> = chain.collect();
                assert!(!frames.last().expect("a chain has a frame").inlined);
                assert!(frames[..frames.len() - 1].iter().all(|f| f.inlined));
            }
        }
    }
    let _ = std::fs::remove_file(&path);
});
