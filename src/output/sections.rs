//! The sections of an SPT file as SPTDump shows them, before its events: `/header`,
//! `/strtab`, `/progid`.
//!
//! ```text
//! SPT header                          {"type":"header","signature":1397773370,...}
//!   Signature  0x5350543A ("SPT:")
//! String table (46 of 16384 bytes)    {"type":"string","offset":0,"value":"app.exe"}
//!   0x0000  app.exe
//! Program IDs (3 of 256 used)         {"type":"progid","index":0,"guid":"...","age":3,...}
//!   [0]  {GUID}  age 3  key ...  app.exe
//! ```

use std::io::{self, Write};

use serde::Serialize;

use super::text::{clean, progid_rows};
use super::{Json, Render, Text};
use crate::format::header::{Header, fourcc};
use crate::format::strtab::StringTable;
use crate::format::tables::Tables;

/// The header's fields (`/header`).
pub struct HeaderSection<'a>(pub &'a Header);

/// The string table (`/strtab`); `None` when it could not be read.
pub struct StringSection<'a>(pub &'a Header, pub Option<&'a StringTable>);

/// The program-ID table (`/progid`).
pub struct ProgidSection<'a>(pub &'a Header, pub &'a Tables);

impl Render for HeaderSection<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let h = self.0;
        t.section(format_args!("SPT header"))?;
        writeln!(
            t,
            "  Signature             {:#010X} (\"{}\")",
            h.signature,
            fourcc(h.signature)
        )?;
        writeln!(t, "  Version               {}", h.version)?;
        writeln!(t, "  RawDataId             {}", h.raw_data_id)?;
        writeln!(t, "  TargetArch            {}", h.target_arch)?;
        writeln!(t, "  StringTableOffset     {:#010X}", h.string_table_offset)?;
        writeln!(
            t,
            "  ProgramIdTableOffset  {:#010X}",
            h.program_id_table_offset
        )?;
        writeln!(t, "  StringTableUsed       {}", h.string_table_used)?;
        writeln!(t, "  StringTableCapacity   {}", h.string_table_capacity)?;
        writeln!(t, "  ProgramIdsUsed        {}", h.program_ids_used)?;
        writeln!(t, "  ProgramIdCapacity     {}", h.program_id_capacity)?;
        writeln!(
            t,
            "  (event stream at      {:#010X} = ProgramIdTableOffset + ProgramIdCapacity x 24)",
            h.stream_offset()
        )
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        let h = self.0;
        j.line(&HeaderLine {
            signature: h.signature,
            version: h.version,
            raw_data_id: h.raw_data_id,
            target_arch: h.target_arch,
            string_table_offset: h.string_table_offset,
            program_id_table_offset: h.program_id_table_offset,
            string_table_used: h.string_table_used,
            string_table_capacity: h.string_table_capacity,
            program_ids_used: h.program_ids_used,
            program_id_capacity: h.program_id_capacity,
        })
    }
}

impl Render for StringSection<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let StringSection(h, table) = *self;
        t.section(format_args!(
            "String table ({} of {} bytes used)",
            h.string_table_used, h.string_table_capacity
        ))?;
        match table {
            Some(table) => {
                for entry in table.entries() {
                    writeln!(t, "  {:#06X}  {}", entry.offset, clean(&entry.text()))?;
                }
                Ok(())
            }
            None => writeln!(t, "  (not listed: the table lies past the end of the file)"),
        }
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        for entry in self.1.into_iter().flat_map(StringTable::entries) {
            j.line(&StringLine {
                offset: entry.offset,
                value: &entry.text(),
            })?;
        }
        Ok(())
    }
}

impl Render for ProgidSection<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let ProgidSection(h, tables) = *self;
        t.section(format_args!(
            "Program IDs ({} of {} used)",
            h.program_ids_used, h.program_id_capacity
        ))?;
        let Some(table) = tables.progids.as_ref() else {
            return writeln!(t, "  (not listed: the table lies past the end of the file)");
        };
        // Fixed widths, so that no column depends on the other rows or files, and `diff` of
        // two traces' program IDs shows only what changed: an age has at most 10 digits, a
        // key at most 32 + 8 characters, and indices past [255] (the usual capacity is 256)
        // are rare.
        for (index, guid, age, key, name) in progid_rows(table, tables) {
            writeln!(
                t,
                "  {index:<5}  {{{guid}}}  age {age:<10}  key {key:<40}  {name}"
            )?;
        }
        Ok(())
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        let tables = self.1;
        let Some(table) = tables.progids.as_ref() else {
            return Ok(());
        };
        for (index, p) in table.entries().iter().enumerate() {
            let name = tables.name_of(p).map(String::from_utf8_lossy);
            j.line(&ProgidLine {
                index,
                guid: p.guid_string(),
                age: p.age,
                symkey: p.symkey().to_string(),
                string_offset: p.string_offset,
                name: name.as_deref(),
            })?;
        }
        Ok(())
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "header")]
struct HeaderLine {
    signature: u32,
    version: u32,
    raw_data_id: u32,
    target_arch: u32,
    string_table_offset: u32,
    program_id_table_offset: u32,
    string_table_used: u16,
    string_table_capacity: u16,
    program_ids_used: u16,
    program_id_capacity: u16,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "string")]
struct StringLine<'a> {
    offset: u32,
    value: &'a str,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "progid")]
struct ProgidLine<'a> {
    index: usize,
    guid: String,
    age: u32,
    symkey: String,
    string_offset: u32,
    name: Option<&'a str>,
}
