//! The lines of the event stream's records and of the program-ID table.

use super::sink::*;
use crate::format::progid::ProgramIdTable;
use crate::format::record::{SampleKind, Samples};
use crate::format::tables::{IndexReading, Tables};
use crate::image::lines::LineCache;
use crate::image::symbols::Symbols;
use crate::output::push_dec;

pub(crate) type ProgidRow = (String, String, String, String, String);

pub(crate) fn progid_rows(table: &ProgramIdTable, tables: &Tables) -> Vec<ProgidRow> {
    table
        .entries()
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let name = match (tables.name_of(p), tables.reading) {
                (Some(bytes), _) => name_text(bytes),
                (None, IndexReading::Offset) => {
                    format!("(no name: string offset {:#X})", p.string_offset)
                }
                (None, IndexReading::Ordinal) => {
                    format!("(no name: string index {})", p.string_offset)
                }
            };
            (
                format!("[{i}]"),
                p.guid_string(),
                p.age.to_string(),
                p.symkey().to_string(),
                name,
            )
        })
        .collect()
}

/// Appends `0x` and at least 8 upper-case hex digits.
#[inline]
pub(super) fn push_offset(line: &mut Vec<u8>, v: u64) {
    match u32::try_from(v) {
        Ok(v) => line.extend_from_slice(&hex8(v)),
        Err(_) => line.extend_from_slice(format!("{v:#010X}").as_bytes()),
    }
}

/// The width of the record-name column, and the gap after it.
pub(super) const NAME_WIDTH: usize = 15 + 2;

/// Appends the start of a record line: `  0x00005828  RETIRE_INSTR     `.
#[inline]
pub(super) fn push_start(line: &mut Vec<u8>, offset: u64, name: &str) {
    line.extend_from_slice(b"  ");
    push_offset(line, offset);
    line.extend_from_slice(b"  ");
    line.extend_from_slice(name.as_bytes());
    let pad = NAME_WIDTH.saturating_sub(name.len()).max(1);
    line.extend_from_slice(&[b' '; NAME_WIDTH][..pad]);
}

/// What names a record's addresses: a binary's symbols, and its source lines.
pub(super) struct Symbolizer<'a> {
    pub(super) symbols: &'a Symbols,
    pub(super) lines: &'a mut LineCache,
}

/// Appends `(function+0xOFFSET)` when `symbols` place `rva` in a function, with ` file:line`
/// before the parenthesis closes when the PDB has a line there.
pub(super) fn push_symbol(line: &mut Vec<u8>, s: &mut Symbolizer<'_>, rva: u32) {
    if let Some((function, offset)) = s.symbols.lookup(rva) {
        line.push(b'(');
        line.extend_from_slice(clean(function.name).as_bytes());
        line.extend_from_slice(b"+0x");
        line.extend_from_slice(format!("{offset:X}").as_bytes());
        if let Some((file, number)) = s.lines.line(s.symbols, rva) {
            line.push(b' ');
            line.extend_from_slice(clean(file).as_bytes());
            line.push(b':');
            push_dec(line, u128::from(number));
        }
        line.push(b')');
    }
}

/// Lays out a sample record's line in `line`, naming each address by its function when
/// `symbols` are attached. This runs for nearly every record of a dump, so it builds the
/// line by hand, and the caller writes it in one piece.
pub(super) fn samples_line(line: &mut Vec<u8>, s: &Samples<'_>, symbols: Option<Symbolizer<'_>>) {
    push_start(line, s.offset, s.opcode.name().unwrap_or_default());
    line.extend_from_slice(b"hits ");
    push_dec(line, s.hits);
    if s.count == 0 {
        line.extend_from_slice(b"  (none)\n");
        return;
    }
    line.push(b' ');
    match symbols {
        None => plain_values(line, s),
        Some(symbols) => symbolized_values(line, s, symbols),
    }
    line.push(b'\n');
}

/// The addresses of a record, each copied in one piece from a fixed-size template.
#[inline]
pub(super) fn plain_values(line: &mut Vec<u8>, s: &Samples<'_>) {
    match s.kind() {
        SampleKind::Ip(_) => {
            for rva in s.rvas().iter() {
                let mut item = *b" 0x00000000";
                item[1..].copy_from_slice(&hex8(rva));
                line.extend_from_slice(&item);
            }
        }
        SampleKind::Lbr => {
            for b in s.branches().iter() {
                let mut item = *b" 0x00000000->0x00000000";
                item[1..11].copy_from_slice(&hex8(b.from));
                item[13..].copy_from_slice(&hex8(b.to));
                line.extend_from_slice(&item);
            }
        }
        SampleKind::CallStack => {
            line.push(b' ');
            for (i, rva) in s.rvas().iter().enumerate() {
                let mut item = *b"->0x00000000";
                item[2..].copy_from_slice(&hex8(rva));
                line.extend_from_slice(if i == 0 { &item[2..] } else { &item });
            }
        }
    }
}

/// The addresses of a record, each followed by its function.
pub(super) fn symbolized_values(line: &mut Vec<u8>, s: &Samples<'_>, mut symbols: Symbolizer<'_>) {
    let mut address = |line: &mut Vec<u8>, rva: u32| {
        line.extend_from_slice(&hex8(rva));
        push_symbol(line, &mut symbols, rva);
    };
    match s.kind() {
        SampleKind::Ip(_) => {
            for rva in s.rvas().iter() {
                line.push(b' ');
                address(line, rva);
            }
        }
        SampleKind::Lbr => {
            for b in s.branches().iter() {
                line.push(b' ');
                address(line, b.from);
                line.extend_from_slice(b"->");
                address(line, b.to);
            }
        }
        SampleKind::CallStack => {
            line.push(b' ');
            for (i, rva) in s.rvas().iter().enumerate() {
                if i > 0 {
                    line.extend_from_slice(b"->");
                }
                address(line, rva);
            }
        }
    }
}
