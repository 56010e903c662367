//! PDBs damaged on purpose, for the tests of [`super::symbols`] and [`super::lines`]: a
//! record whose end points at itself, which a reader that followed it would read again and
//! again.

use pdb2::{FallibleIterator, SymbolData};
use std::path::{Path, PathBuf};

/// A copy of the fixture PDB `pdb` (in `testdata/pe`), in `dir`, in which the record of the
/// procedure `name` says that it ends where it starts.
pub(crate) fn procedure_ending_at_itself(dir: &Path, pdb: &str, name: &str) -> PathBuf {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/pe")
        .join(pdb);
    let original = std::fs::read(&fixture).unwrap();
    let (kind, index, parent, end) = record(&fixture, name);
    assert!(end > index, "{name} ends after it starts");
    // The record as the file holds it: its kind, its parent and its end.
    let mut wanted = kind.to_le_bytes().to_vec();
    wanted.extend(parent.to_le_bytes());
    wanted.extend(end.to_le_bytes());
    let at: Vec<usize> = original
        .windows(wanted.len())
        .enumerate()
        .filter(|(_, w)| *w == wanted)
        .map(|(at, _)| at)
        .collect();
    assert_eq!(at.len(), 1, "one record of {name} in {pdb}");
    let mut bytes = original;
    bytes[at[0] + 6..at[0] + 10].copy_from_slice(&index.to_le_bytes());
    let path = dir.join(pdb);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The kind, index, parent and end of the record of procedure `name`, in any module.
fn record(pdb: &Path, name: &str) -> (u16, u32, u32, u32) {
    let mut pdb = pdb2::PDB::open(std::fs::File::open(pdb).unwrap()).unwrap();
    let dbi = pdb.debug_information().unwrap();
    let mut modules = dbi.modules().unwrap();
    while let Some(module) = modules.next().unwrap() {
        let Some(info) = pdb.module_info(&module).unwrap() else {
            continue;
        };
        let mut symbols = info.symbols().unwrap();
        while let Some(symbol) = symbols.next().unwrap() {
            if let Ok(SymbolData::Procedure(p)) = symbol.parse()
                && p.name.to_string() == name
            {
                return (
                    symbol.raw_kind(),
                    symbol.index().0,
                    p.parent.map_or(0, |s| s.0),
                    p.end.0,
                );
            }
        }
    }
    panic!("no procedure {name}");
}

/// What `f` returns, when it returns within 30 seconds; a test that reads a damaged file
/// fails rather than hangs when the reader goes round and round.
pub(crate) fn in_time<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || sender.send(f()));
    receiver
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("read within 30 seconds")
}
