//! Dumping one file: read what the options ask for, check it, and print it in file order.
//!
//! The header and tables are always read and checked (they are small: at most 64 KiB +
//! 1.5 MiB); the event stream is decoded only when events, a summary or a verdict is wanted.

use std::io;

use crate::decode::{Decoder, Selection, Sink};
use crate::diag::{Diagnostic, Tally};
use crate::error::Error;
use crate::header::Header;
use crate::input::{Input, Tables};
use crate::print::{FileInfo, Printer};
use crate::record::Record;
use crate::summary::Summary;

/// The sections of a dump.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sections {
    /// The header fields.
    pub header: bool,
    /// The string table.
    pub strtab: bool,
    /// The program IDs.
    pub progid: bool,
    /// Every record of the stream.
    pub event: bool,
}

impl Sections {
    /// Every section: what `/all` prints.
    pub const ALL: Sections = Sections {
        header: true,
        strtab: true,
        progid: true,
        event: true,
    };
}

/// What to print for each file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The sections to print.
    pub sections: Sections,
    /// Print the summary after the sections, with this many top entries per table.
    pub summary: Option<usize>,
    /// Print only the diagnostics and a verdict.
    pub validate: bool,
    /// Keep only the segments of these binaries: names (case-insensitive) or progid indices.
    pub binaries: Option<Vec<String>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sections: Sections::ALL,
            summary: None,
            validate: false,
            binaries: None,
        }
    }
}

/// How dumping a file ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Decoded; the diagnostics found.
    Done(Tally),
    /// The file could not be read to its end; what was read was printed.
    ReadFailed,
    /// `/binary` names nothing in this file: a usage error.
    NoSuchBinary,
}

/// Dumps the trace read from `input` into `printer`. Fails only when the output cannot be
/// written; problems with the input are reported through the printer and the outcome.
pub fn dump<P: Printer>(
    printer: &mut P,
    file: &FileInfo<'_>,
    mut input: Input,
    opts: &Options,
) -> io::Result<Outcome> {
    let show = |on: bool| on && !opts.validate;
    let mut tally = Tally::default();
    let mut report = |p: &mut P, d: Diagnostic| {
        tally.add(&d);
        p.diagnostic(&d)
    };

    let result = (|| -> Result<Outcome, Error> {
        let bytes = match input.header()? {
            Ok(bytes) => bytes,
            Err(d) => {
                printer.begin_file(file).map_err(Error::Write)?;
                report(printer, d).map_err(Error::Write)?;
                return Ok(Outcome::Done(Tally::default()));
            }
        };
        let header = Header::parse(&bytes);
        if let Some(fatal) = header.check_fatal() {
            printer.begin_file(file).map_err(Error::Write)?;
            if show(opts.sections.header) {
                printer.header(&header).map_err(Error::Write)?;
            }
            report(printer, fatal).map_err(Error::Write)?;
            return Ok(Outcome::Done(Tally::default()));
        }

        let mut found = Vec::new();
        let mut tables = input.tables(&header, &bytes, |d| found.push(d))?;
        let selection = match &opts.binaries {
            Some(list) => match select(list, &tables) {
                Some(selection) => Some(selection),
                None => {
                    let names = binary_names(&tables);
                    let message = format!(
                        "/binary:{} names no binary of this file; its program IDs are {}",
                        list.join(","),
                        if names.is_empty() {
                            "none".to_owned()
                        } else {
                            names.join(", ")
                        }
                    );
                    printer.error(file, &message).map_err(Error::Write)?;
                    return Ok(Outcome::NoSuchBinary);
                }
            },
            None => None,
        };

        printer.begin_file(file).map_err(Error::Write)?;
        if show(opts.sections.header) {
            printer.header(&header).map_err(Error::Write)?;
        }
        for d in found {
            report(printer, d).map_err(Error::Write)?;
        }
        if show(opts.sections.strtab) {
            printer
                .strings(&header, tables.strings.as_ref())
                .map_err(Error::Write)?;
        }
        if show(opts.sections.progid) {
            printer.progids(&header, &tables).map_err(Error::Write)?;
        }

        let events = show(opts.sections.event);
        let mut summary = match opts.summary {
            Some(top) if !opts.validate => Some(Summary::new(top)),
            _ => None,
        };
        if events || summary.is_some() || opts.validate {
            if events {
                printer.begin_events().map_err(Error::Write)?;
            }
            if let Some(stream) = tables.stream.take() {
                let mut decoder = Decoder::new(
                    stream,
                    header.stream_offset(),
                    tables.size,
                    header.program_ids_used,
                );
                decoder.select(selection);
                let mut sink = EventSink {
                    printer: &mut *printer,
                    tables: &tables,
                    report: &mut report,
                    events,
                    summary: summary.as_mut(),
                };
                decoder.run(&mut sink)?;
            }
            if events {
                printer.end_events().map_err(Error::Write)?;
            }
        }
        if let Some(summary) = &summary {
            printer.summary(summary, &tables).map_err(Error::Write)?;
        }
        Ok(Outcome::Done(Tally::default()))
    })();

    let outcome = match result {
        Ok(Outcome::Done(_)) => Outcome::Done(tally),
        Ok(other) => other,
        Err(Error::Write(e)) => return Err(e),
        Err(e @ Error::Read { .. }) => {
            printer.error(file, &e.to_string())?;
            Outcome::ReadFailed
        }
    };
    if opts.validate && outcome != Outcome::NoSuchBinary {
        let mut verdict = tally;
        if outcome == Outcome::ReadFailed {
            verdict.errors += 1;
        }
        printer.validation(file, verdict)?;
    }
    Ok(outcome)
}

/// Feeds the decoder's output to the printer, the summary and the tally.
struct EventSink<'a, P, R> {
    printer: &'a mut P,
    tables: &'a Tables,
    report: &'a mut R,
    events: bool,
    summary: Option<&'a mut Summary>,
}

impl<P: Printer, R: FnMut(&mut P, Diagnostic) -> io::Result<()>> Sink for EventSink<'_, P, R> {
    #[inline]
    fn record(&mut self, record: &Record<'_>) -> io::Result<()> {
        if let (Some(summary), Record::Samples(s)) = (self.summary.as_deref_mut(), record) {
            summary.add(s);
        }
        if self.events {
            self.printer.record(record, self.tables)?;
        }
        Ok(())
    }

    fn diagnostic(&mut self, d: Diagnostic) -> io::Result<()> {
        (self.report)(self.printer, d)
    }
}

/// The file's binaries as `0 (app.exe)`, for messages.
fn binary_names(tables: &Tables) -> Vec<String> {
    let count = tables.progids.as_ref().map_or(0, |t| t.entries().len());
    (0..count)
        .map(|i| match tables.name(i as u16) {
            Some(n) => format!("{i} ({})", String::from_utf8_lossy(n)),
            None => format!("{i} (no name)"),
        })
        .collect()
}

/// Resolves a `/binary` list against the file's program IDs. Each item is a progid index
/// or a binary name, compared case-insensitively with the whole name or with its last path
/// component. An index outside the table still selects segments that use it (their
/// BINARY_IDs are errors, but may be worth seeing), yet does not count as naming anything.
/// `None` when nothing in the list names a program ID of this file.
pub fn select(list: &[String], tables: &Tables) -> Option<Selection> {
    let count = tables.progids.as_ref().map_or(0, |t| t.entries().len());
    let mut chosen = Vec::new();
    let mut named = false;
    for item in list {
        if let Ok(index) = item.parse::<u16>() {
            chosen.push(index);
            named |= usize::from(index) < count;
            continue;
        }
        let wanted = item.to_lowercase();
        for i in 0..count {
            let i = i as u16;
            let Some(name) = tables.name(i) else { continue };
            let name = String::from_utf8_lossy(name).to_lowercase();
            let base = name.rsplit(['/', '\\']).next().unwrap_or(&name);
            if name == wanted || base == wanted {
                chosen.push(i);
                named = true;
            }
        }
    }
    named.then(|| Selection::new(chosen))
}
