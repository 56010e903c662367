//! Each way a check of an SPD's function table fails, alone: every condition of every check
//! (docs/format.md) broken by itself in a synthetic module block, refused at the field or the
//! entry that broke it, and the edges a check lets pass read. `spd_table.rs` breaks each
//! check once; this breaks each condition, so that a check that tests only some of them is
//! seen.

use sptdump::image::spd::table::{FunctionTable, TableCheck, TableError};
use sptdump_testkit::fixtures::APP_GUID as APP;
use sptdump_testkit::spd::{SpdBuilder, SpdLayout, field};

/// The module header's words, from the block's start.
const SIZE: usize = 0x00;
const RECORDS_AT: usize = 0x0C;
const RECORDS_SIZE: usize = 0x10;
const RECORDS_END: usize = 0x14;
const SYMBOLS_SIZE: usize = 0x28;
const BUCKETS: usize = 0x2C;
const STRINGS_AT: usize = 0x30;
const STRINGS_SIZE: usize = 0x34;

/// A record's words, from its start.
const REC_SIZE: usize = 0x10;
const REC_BLOCKS_AT: usize = 0x1C;
const REC_BLOCKS_LENGTH: usize = 0x30;
const REC_CALLEES_AT: usize = 0x3C;
const REC_TAIL: usize = 0x48;

/// A synthetic SPD's module block, and where its parts lie in it (from its start).
struct Module {
    block: Vec<u8>,
    at: SpdLayout,
}

impl Module {
    fn of(b: &SpdBuilder) -> Module {
        let bytes = b.build();
        let l = b.layout();
        let m = l.module;
        let less = |v: &[usize]| v.iter().map(|x| x - m).collect::<Vec<_>>();
        let at = SpdLayout {
            module: 0,
            symbols: l.symbols - m,
            entries: less(&l.entries),
            records: less(&l.records),
            callees: less(&l.callees),
            blocks: Vec::new(),
            strings: l.strings - m,
        };
        Module {
            block: bytes[m..].to_vec(),
            at,
        }
    }

    fn word(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.block[at..at + 4].try_into().unwrap())
    }

    fn set(&mut self, at: usize, v: u32) {
        self.block[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    /// Adds `by` (which may be negative) to the word at `at`.
    fn add(&mut self, at: usize, by: i64) {
        let v = i64::from(self.word(at)) + by;
        self.set(at, u32::try_from(v).unwrap());
    }

    /// Puts `bytes` in at `at`, moving what follows.
    fn insert(&mut self, at: usize, bytes: &[u8]) {
        self.block.splice(at..at, bytes.iter().copied());
    }

    /// The symbol table's slots.
    fn slots(&self) -> usize {
        self.word(SYMBOLS_SIZE) as usize / 36
    }

    /// Where the string table ends.
    fn strings_end(&self) -> usize {
        (self.word(STRINGS_AT) + self.word(STRINGS_SIZE)) as usize
    }

    /// What the refusal of the block says.
    fn refusal(self) -> String {
        FunctionTable::parse(self.block, 0).unwrap_err().to_string()
    }

    /// The check the block fails and where, when it fails one.
    fn verdict(self) -> Option<(TableCheck, usize)> {
        match FunctionTable::parse(self.block, 0) {
            Ok(_) => None,
            Err(TableError::Unreadable { check, offset, .. }) => {
                Some((check, usize::try_from(offset).unwrap()))
            }
            Err(e) => panic!("parsing memory cannot fail so: {e}"),
        }
    }
}

type Break = Box<dyn Fn(&mut Module) -> (TableCheck, usize)>;

fn case(f: impl Fn(&mut Module) -> (TableCheck, usize) + 'static) -> Break {
    Box::new(f)
}

#[test]
fn each_condition_of_each_check_refuses_alone() {
    use TableCheck::*;
    let good = SpdBuilder::new("app.exe", APP, 1);
    assert_eq!(Module::of(&good).verdict(), None);
    let cases: Vec<(&str, Break)> = vec![
        (
            "a block shorter than its header",
            case(|m| {
                m.block.truncate(0x30);
                (ModuleAreas, 0)
            }),
        ),
        (
            "a block longer than it says",
            case(|m| {
                m.block.extend([0; 4]);
                (ModuleAreas, 0)
            }),
        ),
        (
            "a symbol table not of whole slots",
            case(|m| {
                m.add(SYMBOLS_SIZE, 1);
                (ModuleAreas, SYMBOLS_SIZE)
            }),
        ),
        (
            "no bucket",
            case(|m| {
                m.set(BUCKETS, 0);
                (ModuleAreas, SYMBOLS_SIZE)
            }),
        ),
        (
            "a bucket more than there are slots",
            case(|m| {
                m.set(BUCKETS, u32::try_from(m.slots()).unwrap() + 1);
                (ModuleAreas, SYMBOLS_SIZE)
            }),
        ),
        (
            "records not at the symbol table's end",
            case(|m| {
                m.add(RECORDS_AT, 4);
                m.add(RECORDS_SIZE, -4);
                (ModuleAreas, RECORDS_AT)
            }),
        ),
        (
            "records ending past their size",
            case(|m| {
                m.add(RECORDS_END, 4);
                (ModuleAreas, RECORDS_AT)
            }),
        ),
        (
            "a string table not at the records' end",
            case(|m| {
                m.add(STRINGS_AT, 4);
                m.add(STRINGS_SIZE, -4);
                (ModuleAreas, STRINGS_AT)
            }),
        ),
        (
            "a string table past the block's end",
            case(|m| {
                m.add(STRINGS_SIZE, 8);
                (ModuleAreas, STRINGS_AT)
            }),
        ),
        (
            "four bytes past the string table",
            case(|m| {
                let pad = m.block.len() - m.strings_end();
                m.block.extend(vec![0; 4 - pad]);
                m.add(SIZE, 4 - pad as i64);
                (ModuleAreas, STRINGS_AT)
            }),
        ),
        (
            "a link into a slot's middle",
            case(|m| {
                let e = m.at.entries[0];
                m.set(e + field::ENTRY_NEXT, 37);
                (Chains, e + 0x20)
            }),
        ),
        (
            "a link one past the table",
            case(|m| {
                let e = m.at.entries[0];
                m.set(
                    e + field::ENTRY_NEXT,
                    u32::try_from(36 * m.slots()).unwrap(),
                );
                (Chains, e + 0x20)
            }),
        ),
        (
            "a link to an empty slot",
            case(|m| {
                let used: Vec<usize> = m.at.entries.iter().map(|e| (e - 0x38) / 36).collect();
                let empty = (0..m.slots()).find(|s| !used.contains(s)).unwrap();
                let e = m.at.entries[0];
                m.set(e + field::ENTRY_NEXT, u32::try_from(36 * empty).unwrap());
                (Chains, e + 0x20)
            }),
        ),
        (
            "an entry in no chain",
            case(|m| {
                let buckets = m.word(BUCKETS) as usize;
                let lost = *m
                    .at
                    .entries
                    .iter()
                    .find(|&&e| (e - 0x38) / 36 >= buckets)
                    .expect("an entry past the buckets");
                let link = u32::try_from(lost - 0x38).unwrap();
                let before = *m
                    .at
                    .entries
                    .iter()
                    .find(|&&e| m.word(e + field::ENTRY_NEXT) == link)
                    .unwrap();
                m.set(before + field::ENTRY_NEXT, 0);
                (Chains, lost)
            }),
        ),
        (
            "a string table not starting with a NUL",
            case(|m| {
                let s = m.at.strings;
                m.block[s] = b'x';
                (RecordTiling, s)
            }),
        ),
        (
            "a record not where the records before it end",
            case(|m| {
                let e = m.at.entries[1];
                m.add(e + field::ENTRY_RECORD, 4);
                (RecordTiling, e + 0x1C)
            }),
        ),
        (
            "the last name without its NUL",
            case(|m| {
                let end = m.strings_end();
                m.block[end - 1] = b'x';
                let last = "to_digit".len();
                (RecordTiling, end - 1 - last)
            }),
        ),
        (
            "four bytes past the last record",
            case(|m| {
                let s = m.at.strings;
                m.insert(s, &[0; 4]);
                for at in [SIZE, RECORDS_SIZE, RECORDS_END, STRINGS_AT] {
                    m.add(at, 4);
                }
                (RecordTiling, s)
            }),
        ),
        (
            "a last record cut inside its header",
            case(|m| {
                let last = *m.at.records.last().unwrap();
                let cut = m.at.strings - (last + 0x20);
                m.block.drain(last + 0x20..m.at.strings);
                for at in [SIZE, RECORDS_SIZE, RECORDS_END, STRINGS_AT] {
                    m.add(at, -(cut as i64));
                }
                (RecordTiling, last)
            }),
        ),
        (
            "a name more than there are records",
            case(|m| {
                let end = m.strings_end();
                m.insert(end, b"xyz\0");
                m.add(STRINGS_SIZE, 4);
                m.add(SIZE, 4);
                (RecordTiling, end)
            }),
        ),
        (
            "a callee area not after the record's header",
            case(|m| {
                let r = m.at.records[2];
                m.set(r + REC_CALLEES_AT, 0x58);
                (RecordSize, r + REC_SIZE)
            }),
        ),
        (
            "blocks not after the callees",
            case(|m| {
                let r = m.at.records[2];
                m.add(r + REC_BLOCKS_AT, 4);
                m.add(r + REC_BLOCKS_LENGTH, -4);
                (RecordSize, r + REC_SIZE)
            }),
        ),
        (
            "a blocks length not their span",
            case(|m| {
                let r = m.at.records[2];
                m.add(r + REC_BLOCKS_LENGTH, 4);
                (RecordSize, r + REC_SIZE)
            }),
        ),
        (
            "a tail of half an entry",
            case(|m| {
                let r = m.at.records[2];
                m.set(r + REC_TAIL, 12);
                m.add(r + REC_SIZE, 12);
                (RecordSize, r + REC_SIZE)
            }),
        ),
        (
            "a last record past the records area",
            case(|m| {
                let r = *m.at.records.last().unwrap();
                m.add(r + REC_TAIL, 24);
                m.add(r + REC_SIZE, 24);
                (RecordTiling, r + REC_SIZE)
            }),
        ),
    ];
    for (name, broken) in cases {
        let mut m = Module::of(&good);
        let want = broken(&mut m);
        assert_eq!(m.verdict(), Some(want), "{name}");
    }
    for zero in [0x08, 0x28, 0x4C, 0x50] {
        let mut m = Module::of(&good);
        let r = m.at.records[2];
        m.set(r + zero, 1);
        assert_eq!(m.verdict(), Some((ZeroWords, r + zero)), "rec+{zero:02X}");
    }
}

/// Three pad bytes after the string table, and as many buckets as slots (every function
/// heads its own bucket), are read.
#[test]
fn the_edges_the_checks_allow_are_read() {
    let mut m = Module::of(&SpdBuilder::new("app.exe", APP, 1));
    let pad = m.block.len() - m.strings_end();
    m.block.extend(vec![0; 3 - pad]);
    m.add(SIZE, 3 - pad as i64);
    assert_eq!(m.verdict(), None, "three pad bytes");

    let mut b = SpdBuilder::new("app.exe", APP, 1);
    b.buckets = (8..64)
        .find(|&n| {
            let mut seen: Vec<u64> = b.functions.iter().map(|f| f.hash % n).collect();
            seen.sort_unstable();
            seen.dedup();
            seen.len() == b.functions.len()
        })
        .map(|n| u32::try_from(n).unwrap())
        .expect("a bucket count that parts the hashes");
    let m = Module::of(&b);
    assert_eq!(m.slots(), b.buckets as usize);
    assert_eq!(m.verdict(), None, "{} buckets, as many slots", b.buckets);
}

/// A chain's faults are all named at the link (or the entry) that broke it; what each says
/// tells them apart.
#[test]
fn a_broken_chain_says_how_it_broke() {
    let good = SpdBuilder::new("app.exe", APP, 1);
    let link = |to: u32| {
        let mut m = Module::of(&good);
        let e = m.at.entries[0];
        m.set(e + field::ENTRY_NEXT, to);
        m.refusal()
    };
    let m = Module::of(&good);
    let slots = u32::try_from(m.slots()).unwrap();
    let used: Vec<u32> =
        m.at.entries
            .iter()
            .map(|e| u32::try_from((e - 0x38) / 36).unwrap())
            .collect();
    let empty = (0..slots).find(|s| !used.contains(s)).unwrap();
    let first = used[0];
    for (to, says) in [
        // Into the middle of the entry's own slot, and one slot past the table.
        (
            36 * first + 1,
            format!("links to +{:#X}, which starts no slot", 36 * first + 1),
        ),
        (
            36 * slots,
            format!("links to +{:#X}, which starts no slot", 36 * slots),
        ),
        (36 * empty, format!("links to the empty slot {empty}")),
        (
            36 * first,
            format!("links back to slot {first}, met before: a loop"),
        ),
    ] {
        let refusal = link(to);
        assert!(refusal.contains(&says), "{to:#X}: {refusal}");
    }
}
