//! The text printer: for people and for `diff`.
//!
//! Stable, aligned, one record per line; RVAs as `0x` and 8 hex digits, offsets in hex.
//! Diagnostics go to their own stream (stderr) as `PATH: error[CODE] at 0x0000ABCD: message`,
//! so they can be grepped apart from the dump.
//!
//! ```text
//! File: sample.spt (23,456 bytes)
//!
//! SPT header
//!   Signature             0x5350543A ("SPT:")
//!   ...
//!
//! String table (8 of 16384 bytes used)
//!   0x0000  app.exe
//!
//! Program IDs (1 of 256 used)
//!   [0]  {42AC0098-ADB5-E796-8C0E-161D2814780E}  age 1  key 42AC0098ADB5E7968C0E161D2814780E1  app.exe
//!
//! Events
//!   0x00005820  BINARY_ID        progid 0 (app.exe)  length 1234
//!   0x00005828  REPEAT           count 2
//!   0x00005832  RETIRE_INSTR     hits 3  0x00001000 0x00001004
//! ```

use std::io::{self, Write};

use crate::format::diag::Diagnostic;
use crate::format::record::Record;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;
use crate::image::lines::LineCache;
use crate::output::{FileInfo, Printer, Recorded, Render, push_dec};

mod records;
mod sink;
pub(crate) mod tables;

pub(crate) use records::progid_rows;
use records::*;
pub use sink::Text;
pub(crate) use sink::TextPrinter;
pub(crate) use sink::{clean, name_text, thousands};

impl<W: Write, E: Write> Printer for TextPrinter<W, E> {
    fn show(&mut self, report: &dyn Render) -> io::Result<()> {
        report.text(&mut self.text())
    }

    fn replays(&self) -> bool {
        true
    }

    fn begin_file(&mut self, file: &FileInfo<'_>) -> io::Result<()> {
        self.label = file.label().into_owned();
        self.sections = 0;
        self.lines.clear();
        if !self.banner {
            return Ok(());
        }
        match file.size {
            Some(size) => writeln!(
                self.out,
                "File: {} ({} byte{})",
                file.label(),
                thousands(size),
                if size == 1 { "" } else { "s" }
            ),
            None => writeln!(self.out, "File: {}", file.label()),
        }
    }

    fn begin_events(&mut self) -> io::Result<()> {
        self.records = 0;
        self.section(format_args!("Events"))
    }

    fn end_events(&mut self) -> io::Result<()> {
        if self.records == 0 {
            writeln!(self.out, "  (no records)")?;
        }
        Ok(())
    }

    fn record(
        &mut self,
        record: &Record<'_>,
        tables: &Tables,
        symbols: &SymbolMap,
    ) -> io::Result<()> {
        self.records += 1;
        let o = &mut self.out;
        match record {
            Record::BinaryId(b) => {
                let name = match (
                    tables.progids.as_ref().and_then(|t| t.get(b.progid)),
                    tables.name(b.progid),
                ) {
                    (None, _) if tables.progids.is_none() => "table not read".to_owned(),
                    (None, _) => "not in the table".to_owned(),
                    (Some(_), None) => "no name".to_owned(),
                    (Some(_), Some(bytes)) => name_text(bytes),
                };
                writeln!(
                    o,
                    "  {:#010X}  BINARY_ID        progid {} ({name})  length {}",
                    b.offset, b.progid, b.length
                )
            }
            Record::Repeat(r) => {
                let line = &mut self.line;
                line.clear();
                push_start(line, r.offset, "REPEAT");
                line.extend_from_slice(b"count ");
                push_dec(line, r.count);
                line.push(b'\n');
                o.write_all(line)
            }
            Record::Samples(s) => {
                self.line.clear();
                let symbols = symbols.get(s.progid).zip(s.progid).map(|(symbols, p)| {
                    let lines = self.lines.entry(p).or_default();
                    Symbolizer { symbols, lines }
                });
                samples_line(&mut self.line, s, symbols);
                o.write_all(&self.line)
            }
            Record::Unknown(u) => match u.resumed_at {
                Some(end) => writeln!(
                    o,
                    "  {:#010X}  {:<15}  unknown opcode: skipped {} bytes to {end:#010X}",
                    u.offset,
                    u.opcode,
                    end - u.offset
                ),
                None => writeln!(
                    o,
                    "  {:#010X}  {:<15}  unknown opcode: decoding stopped",
                    u.offset, u.opcode
                ),
            },
        }
    }

    fn diagnostic(&mut self, d: &Diagnostic) -> io::Result<()> {
        // Keep the dump and the diagnostics in step on a terminal. The diagnostic goes out
        // even when the dump's reader has gone: standard error may still be read.
        let flushed = self.out.flush();
        writeln!(self.err, "{}: {d}", self.label)?;
        self.err.flush()?;
        flushed
    }

    fn end_file(&mut self, last: bool) -> io::Result<()> {
        let mut problems: Vec<String> = self
            .lines
            .values_mut()
            .filter_map(LineCache::take_problem)
            .collect();
        problems.sort_unstable();
        problems.dedup();
        if !problems.is_empty() {
            self.out.flush()?;
            for problem in problems {
                writeln!(
                    self.err,
                    "sptdump: {}: note: {problem}: some addresses are shown without a line",
                    self.label
                )?;
            }
        }
        if !last && self.sections > 0 {
            self.out.separate()?;
        }
        Ok(())
    }

    fn error(&mut self, file: &FileInfo<'_>, message: &str) -> io::Result<()> {
        self.out.flush()?;
        writeln!(self.err, "sptdump: {}: {message}", file.label())?;
        self.err.flush()
    }

    fn note(&mut self, file: &FileInfo<'_>, message: &str) -> io::Result<()> {
        self.error(file, &format!("note: {message}"))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()?;
        self.err.flush()
    }

    fn replay(&mut self, recorded: &Recorded) -> io::Result<()> {
        recorded.replay(&mut self.out, &mut self.err)
    }
}

#[cfg(test)]
mod tests {
    use super::sink::{Blocks, Last, hex8};
    use super::*;

    /// `write` as any generic writer calls it (`io::copy`, a `BufWriter` around it): each
    /// byte passed on and counted once, and what follows it a block of its own.
    #[test]
    fn blocks_pass_each_write_on_whole_and_separate_the_next_block() {
        let mut blocks = Blocks {
            inner: Vec::new(),
            last: Last::Nothing,
        };
        blocks.separate().unwrap();
        assert_eq!(blocks.write(b"abc").unwrap(), 3);
        blocks.separate().unwrap();
        blocks.separate().unwrap();
        let mut rest: &[u8] = b"de";
        assert_eq!(io::copy(&mut rest, &mut blocks).unwrap(), 2);
        assert_eq!(blocks.inner, b"abc\nde");
    }

    #[test]
    fn hex8_pads_and_uppercases() {
        assert_eq!(&hex8(0x1A2F0), b"0x0001A2F0");
        assert_eq!(&hex8(u32::MAX), b"0xFFFFFFFF");
        assert_eq!(&hex8(0), b"0x00000000");
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(23_456), "23,456");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(clean("app.exe"), "app.exe");
        assert_eq!(clean("a\nb"), "a\\u{a}b");
    }
}
