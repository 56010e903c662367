//! The function table of an SPD: what its module block holds past the header that section
//! 10's identity reads. Offsets from the module block's start (`mod+`), all little-endian;
//! docs/format.md gives the evidence for each field.
//!
//! ```text
//! mod+00 u32 the block's size           +04, +08 unknown
//!    +0C records area offset  +10 its size  +14 its end          +18 unknown
//!    +1C function count                                          +20 unknown
//!    +24 symbol table offset (0x38)  +28 its size (36 an entry)  +2C bucket count
//!    +30 string table offset (= the records' end)  +34 its size
//! layout: header | symbol table | records | string table | 0-3 pad bytes
//!
//! symbol table  slots of 36 bytes ([`Symbol`]); slot i < bucket count heads the chain of
//!               the hashes whose hash mod bucket count is i; an empty slot is all zeros
//! records       one a function, in the order of the string table ([`super::function`])
//! string table  a NUL, then each function's name, NUL-terminated, in record order
//! ```
//!
//! [`FunctionTable::parse`] makes every [`TableCheck`], in order, before anything is shown;
//! a table failing one is not read at all. The module block is held (its size was checked
//! against the file's by the identity's checks); the functions are views into it, made one
//! at a time as they are asked for.

use std::io::{Read, Seek, SeekFrom};

use super::Header;
use super::bytes::{sized, slice_at, u32_at, u64_at};
pub use super::check::{TableCheck, TableError};
use super::contents;
use super::function::{Function, RECORD_HEADER, Symbol, TAIL_ENTRY, rec};

/// The module block's header.
pub const MODULE_HEADER: usize = 0x38;
/// A symbol-table entry.
pub const SYMBOL_ENTRY: usize = 36;

/// A failed check, at an offset in the module block.
struct Failed {
    check: TableCheck,
    at: usize,
    why: String,
}

#[cold]
fn failed(check: TableCheck, at: usize, why: impl Into<String>) -> Failed {
    Failed {
        check,
        at,
        why: why.into(),
    }
}

/// The module block's header: where its areas lie, named where known, raw where not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModuleHeader {
    /// `mod+00`: the block's size.
    pub size: u32,
    /// `mod+0C`, `+10`, `+14`: the records area's offset, size and end.
    pub records: [u32; 3],
    /// `mod+1C`: the function count.
    pub functions: u32,
    /// `mod+24`, `+28`, `+2C`: the symbol table's offset, size and bucket count.
    pub symbols: [u32; 3],
    /// `mod+30`, `+34`: the string table's offset and size.
    pub strings: [u32; 2],
    /// The words not read, as `(offset, value)`: `+04`, `+08`, `+18`, `+20`; unknown.
    pub unknown: [(usize, u32); 4],
}

impl ModuleHeader {
    fn parse(b: &[u8]) -> Option<ModuleHeader> {
        let w = |at| u32_at(b, at);
        Some(ModuleHeader {
            size: w(0x00)?,
            records: [w(0x0C)?, w(0x10)?, w(0x14)?],
            functions: w(0x1C)?,
            symbols: [w(0x24)?, w(0x28)?, w(0x2C)?],
            strings: [w(0x30)?, w(0x34)?],
            unknown: [
                (0x04, w(0x04)?),
                (0x08, w(0x08)?),
                (0x18, w(0x18)?),
                (0x20, w(0x20)?),
            ],
        })
    }

    /// The symbol table's slots.
    pub fn slots(&self) -> u32 {
        self.symbols[1] / SYMBOL_ENTRY as u32
    }

    /// The pad bytes after the string table.
    pub fn pad(&self) -> u32 {
        self.size
            .saturating_sub(self.strings[0].saturating_add(self.strings[1]))
    }
}

/// An SPD's function table, checked: the module block and, in record order, where each
/// record lies and which symbol entry is its.
#[derive(Clone, Debug)]
pub struct FunctionTable {
    block: Vec<u8>,
    base: u64,
    header: ModuleHeader,
    /// Per record, in record order: its offset in the records area and its entry's slot.
    records: Vec<(u32, u32)>,
}

/// The checked function table of the SPD `bytes`, for tests that build one.
#[cfg(test)]
pub(crate) fn of_bytes(bytes: &[u8]) -> FunctionTable {
    let mut file = std::io::Cursor::new(bytes);
    let header = super::read_header(&mut file, bytes.len() as u64).unwrap();
    FunctionTable::read(&mut file, &header).unwrap()
}

impl FunctionTable {
    /// Reads the module block of the SPD in `file`, whose header (section 10's checks
    /// passed) is `header`, and checks it.
    pub fn read<R: Read + Seek + ?Sized>(
        file: &mut R,
        header: &Header,
    ) -> Result<FunctionTable, TableError> {
        file.seek(SeekFrom::Start(header.module_offset))?;
        let mut size = [0u8; 4];
        file.read_exact(&mut size)?;
        let size = u64::from(u32::from_le_bytes(size));
        file.seek(SeekFrom::Start(header.module_offset))?;
        // Read as the bytes come, never allocated from the size: a file shorter than it says
        // gives a short block, which the first check refuses.
        let mut block = Vec::new();
        file.take(size).read_to_end(&mut block)?;
        FunctionTable::parse(block, header.module_offset)
    }

    /// Checks the module block `block`, which starts at `base` in its file.
    pub fn parse(block: Vec<u8>, base: u64) -> Result<FunctionTable, TableError> {
        let checked = check(&block);
        let unreadable = |f: Failed| TableError::Unreadable {
            check: f.check,
            offset: base.saturating_add(f.at as u64),
            why: f.why,
        };
        let (header, records) = checked.map_err(unreadable)?;
        Ok(FunctionTable {
            block,
            base,
            header,
            records,
        })
    }

    /// The module block's header.
    pub fn header(&self) -> &ModuleHeader {
        &self.header
    }

    /// Where the module block starts in the file.
    pub fn base(&self) -> u64 {
        self.base
    }

    /// How many functions it holds.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether it holds no function.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The function at `index` in record order.
    pub fn function(&self, index: usize) -> Option<Function<'_>> {
        let &(offset, slot) = self.records.get(index)?;
        let h = &self.header;
        let entry_at = sized(slot, SYMBOL_ENTRY, h.symbols[0] as usize)?;
        let symbol = Symbol::parse(slice_at(&self.block, entry_at, SYMBOL_ENTRY)?)?;
        let strings = slice_at(&self.block, h.strings[0] as usize, h.strings[1] as usize)?;
        let name = strings.get(symbol.name_offset as usize..)?;
        let name = &name[..name.iter().position(|&b| b == 0)?];
        let record_at = h.records[0] as usize + offset as usize;
        let size = u32_at(&self.block, record_at + rec::SIZE)? as usize;
        Some(Function {
            symbol,
            name,
            record: slice_at(&self.block, record_at, size)?,
            offset: self.base + record_at as u64,
            index,
        })
    }

    /// Every function, in record order, made as it is asked for.
    pub fn functions(&self) -> impl Iterator<Item = Function<'_>> {
        (0..self.records.len()).filter_map(|i| self.function(i))
    }

    /// The function whose hash is `hash`, found through its bucket's chain.
    pub fn by_hash(&self, hash: u64) -> Option<Function<'_>> {
        let h = &self.header;
        let mut slot = u32::try_from(hash % u64::from(h.symbols[2])).ok()?;
        // A checked chain is at most as long as the table.
        for _ in 0..h.slots() {
            let at = sized(slot, SYMBOL_ENTRY, h.symbols[0] as usize)?;
            let symbol = Symbol::parse(slice_at(&self.block, at, SYMBOL_ENTRY)?)?;
            if symbol.hash == hash {
                // An empty slot (all zeros) has the hash 0 but no record: none is found.
                let index = self.records.iter().position(|r| r.1 == slot)?;
                return self.function(index);
            }
            if symbol.next == 0 {
                return None;
            }
            slot = symbol.next / SYMBOL_ENTRY as u32;
        }
        None
    }
}

/// Every check, in order: the header, then the records (as `(offset, slot)`, in order).
fn check(block: &[u8]) -> Result<(ModuleHeader, Vec<(u32, u32)>), Failed> {
    let header = module_areas(block)?;
    let entries = symbol_table(block, &header)?;
    let records = record_frames(block, &header, entries)?;
    for &(offset, _) in &records {
        let at = header.records[0] as usize + offset as usize;
        let size = u32_at(block, at + rec::SIZE).unwrap_or(0) as usize;
        let record = slice_at(block, at, size).unwrap_or_default();
        contents::check(record).map_err(|f| failed(f.check, at + f.at, f.why))?;
    }
    Ok((header, records))
}

/// Check 1: the header lies in the block, and header, symbol table, records and string
/// table follow one another to within 3 bytes of the block's end.
fn module_areas(block: &[u8]) -> Result<ModuleHeader, Failed> {
    let Some(h) = block.get(..MODULE_HEADER).and_then(ModuleHeader::parse) else {
        return Err(failed(
            TableCheck::ModuleAreas,
            0,
            format!(
                "the module block has {:#X} bytes, fewer than its {MODULE_HEADER:#X}-byte header",
                block.len()
            ),
        ));
    };
    let fault = |at: usize, why: String| Err(failed(TableCheck::ModuleAreas, at, why));
    if h.size as usize != block.len() {
        return fault(
            0,
            format!(
                "the block says {:#X} bytes, {:#X} were read",
                h.size,
                block.len()
            ),
        );
    }
    let [sym, sym_size, buckets] = h.symbols.map(u64::from);
    let [rec_at, rec_size, rec_end] = h.records.map(u64::from);
    let [str_at, str_size] = h.strings.map(u64::from);
    let slots = sym_size / SYMBOL_ENTRY as u64;
    if sym != MODULE_HEADER as u64 {
        return fault(
            0x24,
            format!("the symbol table starts at {sym:#X}, not after the header (0x38)"),
        );
    }
    if !sym_size.is_multiple_of(SYMBOL_ENTRY as u64) || buckets == 0 || buckets > slots {
        return fault(
            0x28,
            format!(
                "the symbol table's {sym_size:#X} bytes are not whole 36-byte slots holding its \
                 {buckets} buckets"
            ),
        );
    }
    if rec_at != sym + sym_size || rec_end != rec_at + rec_size {
        return fault(
            0x0C,
            format!(
                "the records area [{rec_at:#X}, {:#X}) (end {rec_end:#X}) does not follow the \
                 symbol table's end ({:#X})",
                rec_at + rec_size,
                sym + sym_size
            ),
        );
    }
    let str_end = str_at + str_size;
    if str_at != rec_end || str_end > u64::from(h.size) || u64::from(h.size) - str_end > 3 {
        return fault(
            0x30,
            format!(
                "the string table [{str_at:#X}, {str_end:#X}) does not run from the records' end \
                 ({rec_end:#X}) to within 3 bytes of the block's end ({:#X})",
                h.size
            ),
        );
    }
    Ok(h)
}

/// Checks 2 to 5: the symbol table's entries, their hashes, buckets and chains. The slots
/// of the entries, by their record offsets.
fn symbol_table(block: &[u8], h: &ModuleHeader) -> Result<Vec<(u32, u32)>, Failed> {
    // The areas lie in the block (check 1).
    let table = &block[h.symbols[0] as usize..h.symbols[0] as usize + h.symbols[1] as usize];
    let slot_at = |slot: u32| h.symbols[0] as usize + slot as usize * SYMBOL_ENTRY;
    let symbol =
        |slot: u32| Symbol::parse(&table[slot as usize * SYMBOL_ENTRY..]).unwrap_or_default();
    let used: Vec<u32> = (0..h.slots())
        .filter(|&s| {
            !table[s as usize * SYMBOL_ENTRY..][..SYMBOL_ENTRY]
                .iter()
                .all(|&b| b == 0)
        })
        .collect();
    if used.len() != h.functions as usize {
        return Err(failed(
            TableCheck::SymbolCount,
            0x1C,
            format!(
                "the module says {} functions, its symbol table holds {} entries",
                h.functions,
                used.len()
            ),
        ));
    }
    let mut hashes: Vec<(u64, u32)> = used.iter().map(|&s| (symbol(s).hash, s)).collect();
    hashes.sort_unstable();
    if let Some(w) = hashes.windows(2).find(|w| w[0].0 == w[1].0) {
        let later = w[0].1.max(w[1].1);
        return Err(failed(
            TableCheck::UniqueHashes,
            slot_at(later),
            format!("two entries share the hash {:016X}", w[0].0),
        ));
    }
    chains(h, &used, &symbol, &slot_at)?;
    let mut by_record: Vec<(u32, u32)> =
        used.iter().map(|&s| (symbol(s).record_offset, s)).collect();
    by_record.sort_unstable();
    Ok(by_record)
}

/// Checks 4 and 5: walks every bucket's chain; each entry met lies in its bucket, each
/// link points at an entry of the table not met before, and every entry is met.
fn chains(
    h: &ModuleHeader,
    used: &[u32],
    symbol: &dyn Fn(u32) -> Symbol,
    slot_at: &dyn Fn(u32) -> usize,
) -> Result<(), Failed> {
    let slots = h.slots();
    let buckets = h.symbols[2];
    let mut met = vec![false; slots as usize];
    for bucket in 0..buckets {
        if used.binary_search(&bucket).is_err() {
            continue;
        }
        let mut slot = bucket;
        loop {
            met[slot as usize] = true;
            let s = symbol(slot);
            if s.hash % u64::from(buckets) != u64::from(bucket) {
                return Err(failed(
                    TableCheck::Buckets,
                    slot_at(slot),
                    format!(
                        "the entry of hash {:016X} lies in bucket {bucket}'s chain, its bucket is {}",
                        s.hash,
                        s.hash % u64::from(buckets)
                    ),
                ));
            }
            if s.next == 0 {
                break;
            }
            let next = s.next / SYMBOL_ENTRY as u32;
            let why = if !s.next.is_multiple_of(SYMBOL_ENTRY as u32) || next >= slots {
                Some(format!(
                    "links to +{:#X}, which starts no slot of the table",
                    s.next
                ))
            } else if used.binary_search(&next).is_err() {
                Some(format!("links to the empty slot {next}"))
            } else if met[next as usize] {
                Some(format!("links back to slot {next}, met before: a loop"))
            } else {
                None
            };
            if let Some(why) = why {
                return Err(failed(
                    TableCheck::Chains,
                    slot_at(slot) + 0x20,
                    format!("bucket {bucket}'s chain {why}"),
                ));
            }
            slot = next;
        }
    }
    if let Some(&lost) = used.iter().find(|&&s| !met[s as usize]) {
        return Err(failed(
            TableCheck::Chains,
            slot_at(lost),
            format!("the entry in slot {lost} lies in no bucket's chain"),
        ));
    }
    Ok(())
}

/// Checks 6 to 9: the records tile their area, one an entry, in the string table's order;
/// each record's hash is its entry's, its size identity holds, its zero words are zero.
fn record_frames(
    block: &[u8],
    h: &ModuleHeader,
    by_record: Vec<(u32, u32)>,
) -> Result<Vec<(u32, u32)>, Failed> {
    let records = &block[h.records[0] as usize..h.records[2] as usize];
    let strings = &block[h.strings[0] as usize..h.strings[0] as usize + h.strings[1] as usize];
    let tiling = |at: usize, why: String| failed(TableCheck::RecordTiling, at, why);
    if strings.first() != Some(&0) {
        return Err(tiling(
            h.strings[0] as usize,
            "the string table does not start with a NUL".into(),
        ));
    }
    let (mut pos, mut name_at) = (0usize, 1usize);
    for &(offset, slot) in &by_record {
        let entry_at = h.symbols[0] as usize + slot as usize * SYMBOL_ENTRY;
        let symbol = Symbol::parse(&block[entry_at..]).unwrap_or_default();
        let rec_at = h.records[0] as usize + pos;
        if offset as usize != pos {
            return Err(tiling(
                entry_at + 0x1C,
                format!(
                    "an entry's record lies at +{offset:#X} of the records area, the records before it end at +{pos:#X}"
                ),
            ));
        }
        let Some(nul) = strings
            .get(name_at..)
            .and_then(|s| s.iter().position(|&b| b == 0))
        else {
            return Err(tiling(
                h.strings[0] as usize + name_at.min(strings.len()),
                "the string table ends before the record's name".into(),
            ));
        };
        if symbol.name_offset as usize != name_at {
            return Err(tiling(
                entry_at + 0x08,
                format!(
                    "the entry names +{:#X} of the string table, its record's name there starts at +{name_at:#X}",
                    symbol.name_offset
                ),
            ));
        }
        name_at += nul + 1;
        let size = record_frame(records, pos, &symbol)
            .map_err(|f| failed(f.check, rec_at + f.at, f.why))?;
        pos += size;
    }
    if pos != records.len() {
        return Err(tiling(
            h.records[0] as usize + pos,
            format!(
                "the records end at +{pos:#X}, their area at +{:#X}",
                records.len()
            ),
        ));
    }
    if name_at != strings.len() {
        return Err(tiling(
            h.strings[0] as usize + name_at,
            "the string table holds more names than there are records".into(),
        ));
    }
    Ok(by_record)
}

/// Checks 6 to 9 for the record at `pos` of the records area: its size.
fn record_frame(records: &[u8], pos: usize, symbol: &Symbol) -> Result<usize, Failed> {
    let Some(head) = slice_at(records, pos, RECORD_HEADER) else {
        return Err(failed(
            TableCheck::RecordTiling,
            0,
            format!(
                "a record's {RECORD_HEADER:#X}-byte header runs past the records area's end (+{:#X})",
                records.len()
            ),
        ));
    };
    let w = |at: usize| u32_at(head, at).unwrap_or(0);
    let hash = u64_at(head, rec::HASH).unwrap_or(0);
    if hash != symbol.hash {
        return Err(failed(
            TableCheck::RecordHash,
            rec::HASH,
            format!(
                "the record's hash is {hash:016X}, its entry's {:016X}",
                symbol.hash
            ),
        ));
    }
    let size = w(rec::SIZE) as u64;
    let callees = w(rec::CALLEES_SIZE) as u64;
    let blocks_at = w(rec::BLOCKS_OFFSET) as u64;
    let blocks_end = w(rec::BLOCKS_END) as u64;
    let tail = w(rec::TAIL_SIZE) as u64;
    let identity = w(rec::CALLEES_OFFSET) as usize == RECORD_HEADER
        && blocks_at == RECORD_HEADER as u64 + callees
        && blocks_end == blocks_at + w(rec::BLOCKS_LENGTH) as u64
        && tail.is_multiple_of(TAIL_ENTRY as u64)
        && size == blocks_end + tail;
    if !identity {
        return Err(failed(
            TableCheck::RecordSize,
            rec::SIZE,
            format!(
                "the record's size {size:#X} is not its blocks end {blocks_end:#X} plus its tail \
                 {tail:#X} (24 an entry), with callees at 0x54 ({callees:#X} bytes), blocks at \
                 {blocks_at:#X} ({:#X} bytes)",
                w(rec::BLOCKS_LENGTH)
            ),
        ));
    }
    if size > (records.len() - pos) as u64 {
        return Err(failed(
            TableCheck::RecordTiling,
            rec::SIZE,
            format!(
                "the record's {size:#X} bytes run past the records area's end (+{:#X})",
                records.len()
            ),
        ));
    }
    if let Some(&at) = rec::ZERO.iter().find(|&&at| w(at) != 0) {
        return Err(failed(
            TableCheck::ZeroWords,
            at,
            format!(
                "rec+{at:02X} holds {:#X}, zero in every known record",
                w(at)
            ),
        ));
    }
    Ok(size as usize)
}
