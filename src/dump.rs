//! Dumping one file: read what the options ask for, check it, and print it in file order.
//!
//! The header and tables are always read and checked (they are small: at most 64 KiB +
//! 1.5 MiB); the event stream is decoded only when events, a summary or a verdict is wanted.

use std::io;

use crate::collect::Collector;
use crate::decode::{Decoder, Selection, Sink};
use crate::diag::{Diagnostic, Tally};
use crate::error::Error;
use crate::header::Header;
use crate::ident::Identity;
use crate::input::{Input, Tables};
use crate::matching::{self, Status, Verdict};
use crate::print::{FileInfo, Printer};
use crate::progid::registry_form;
use crate::record::Record;
use crate::symbols::Symbols;
use std::sync::Arc;

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
    /// Images and PDBs to match against each trace's program IDs (`/match`).
    pub matches: Vec<MatchFile>,
    /// PDBs whose symbols name the RVAs of the program ID they match (`/pdb`).
    pub pdbs: Vec<PdbFile>,
}

/// A PDB given to `/pdb`, read once for all traces.
#[derive(Clone, Debug)]
pub struct PdbFile {
    /// The path as given.
    pub path: String,
    /// Its GUID and age, which must match a program ID.
    pub identity: Identity,
    /// Its functions.
    pub symbols: Arc<Symbols>,
}

impl PartialEq for PdbFile {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.identity == other.identity
    }
}

impl Eq for PdbFile {}

/// A file given to `/match`, read once for all traces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchFile {
    /// The path as given.
    pub path: String,
    /// Its identity, or why it has none.
    pub identity: Result<Identity, String>,
}

/// One line of the `/match` section.
#[derive(Clone, Copy, Debug)]
pub struct MatchResult<'a> {
    /// The file.
    pub file: &'a MatchFile,
    /// The verdict, when the file has an identity.
    pub verdict: Option<Verdict>,
}

impl MatchResult<'_> {
    /// Whether this file fails the check: anything but a match.
    pub fn failed(&self) -> bool {
        !matches!(self.verdict, Some(v) if v.status == matching::Status::Match)
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            sections: Sections::ALL,
            summary: None,
            validate: false,
            binaries: None,
            matches: Vec::new(),
            pdbs: Vec::new(),
        }
    }
}

/// How dumping a file ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Decoded; the diagnostics found, and how many `/match` files did not match.
    Done(Tally, usize),
    /// The file could not be read to its end; what was read was printed.
    ReadFailed,
    /// `/binary` names nothing in this file: a usage error.
    NoSuchBinary,
    /// The reader of the output went away (a closed pipe); the diagnostics found until then.
    OutputClosed(Tally),
}

impl Outcome {
    /// The exit status this file calls for: 0 clean (warnings allowed), 1 errors, a failed
    /// read or a `/match` or `/pdb` that did not fit, 2 a `/binary` that names nothing.
    pub fn status(&self) -> u8 {
        match self {
            Outcome::Done(tally, 0) | Outcome::OutputClosed(tally) if tally.errors == 0 => 0,
            Outcome::Done(..) | Outcome::OutputClosed(_) | Outcome::ReadFailed => 1,
            Outcome::NoSuchBinary => 2,
        }
    }
}

/// Dumps the trace read from `input` into `printer`. Fails only when the output cannot be
/// written; problems with the input are reported through the printer and the outcome.
pub fn dump<P: Printer>(
    printer: &mut P,
    file: &FileInfo<'_>,
    input: Input,
    opts: &Options,
) -> io::Result<Outcome> {
    let mut out = Out {
        printer,
        tally: Tally::default(),
        mismatches: 0,
    };
    let outcome = match dump_sections(&mut out, file, input, opts) {
        Ok(outcome) => outcome,
        Err(Error::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
            return Ok(Outcome::OutputClosed(out.tally));
        }
        Err(Error::Write(e)) => return Err(e),
        Err(e @ Error::Read { .. }) => {
            out.printer.error(file, &e.to_string())?;
            out.tally.errors += 1;
            Outcome::ReadFailed
        }
    };
    if opts.validate && outcome != Outcome::NoSuchBinary {
        out.printer.validation(file, out.tally)?;
    }
    Ok(match outcome {
        Outcome::Done(..) => Outcome::Done(out.tally, out.mismatches),
        other => other,
    })
}

/// The printer, and the count of the diagnostics it was given.
struct Out<'a, P> {
    printer: &'a mut P,
    tally: Tally,
    /// `/match` files that did not match.
    mismatches: usize,
}

impl<P: Printer> Out<'_, P> {
    /// Prints with `f`; a failure is the output's.
    fn print(&mut self, f: impl FnOnce(&mut P) -> io::Result<()>) -> Result<(), Error> {
        f(self.printer).map_err(Error::Write)
    }

    /// Counts and prints a diagnostic.
    fn report(&mut self, d: Diagnostic) -> io::Result<()> {
        self.tally.add(&d);
        self.printer.diagnostic(&d)
    }
}

fn dump_sections<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    mut input: Input,
    opts: &Options,
) -> Result<Outcome, Error> {
    let show = |on: bool| on && !opts.validate;
    let done = Outcome::Done(Tally::default(), 0);
    let bytes = match input.header()? {
        Ok(bytes) => bytes,
        Err(truncated) => {
            out.print(|p| p.begin_file(file))?;
            out.report(truncated).map_err(Error::Write)?;
            return Ok(done);
        }
    };
    let header = Header::parse(&bytes);
    if let Some(fatal) = header.check_fatal() {
        out.print(|p| p.begin_file(file))?;
        if show(opts.sections.header) {
            out.print(|p| p.header(&header))?;
        }
        out.report(fatal).map_err(Error::Write)?;
        return Ok(done);
    }

    let mut found = Vec::new();
    let mut tables = input.tables(&header, &bytes, |d| found.push(d))?;
    let selection = match &opts.binaries {
        None => None,
        Some(list) => match select(list, &tables) {
            Some(selection) => Some(selection),
            None => {
                let message = format!(
                    "/binary:{} names no binary of this file; its program IDs are {}",
                    list.join(","),
                    binary_names(&tables)
                );
                out.print(|p| p.error(file, &message))?;
                return Ok(Outcome::NoSuchBinary);
            }
        },
    };

    out.print(|p| p.begin_file(file))?;
    for pdb in &opts.pdbs {
        let verdict = matching::judge(&pdb.identity, &tables);
        match (verdict.status, verdict.progid) {
            (Status::Match, Some(progid)) => tables.attach(progid, Arc::clone(&pdb.symbols)),
            _ => {
                let message = format!(
                    "/pdb:{} is {{{}}} age {}, which matches no program ID of this trace ({}); \
                     its symbols would be wrong, so they are not used",
                    pdb.path,
                    registry_form(&pdb.identity.guid),
                    pdb.identity.age,
                    verdict.status
                );
                out.print(|p| p.error(file, &message))?;
                out.mismatches += 1;
            }
        }
    }
    if show(opts.sections.header) {
        out.print(|p| p.header(&header))?;
    }
    for d in found {
        out.report(d).map_err(Error::Write)?;
    }
    if show(opts.sections.strtab) {
        out.print(|p| p.strings(&header, tables.strings.as_ref()))?;
    }
    if show(opts.sections.progid) {
        out.print(|p| p.progids(&header, &tables))?;
    }

    let events = show(opts.sections.event);
    let mut summary = opts.summary.filter(|_| !opts.validate).map(Collector::new);
    if events || summary.is_some() || opts.validate {
        if events {
            out.print(|p| p.begin_events())?;
        }
        if let Some(stream) = tables.stream.take() {
            let mut decoder = Decoder::new(
                stream,
                header.stream_offset(),
                tables.size,
                header.program_ids_used,
            );
            decoder.select(selection);
            decoder.run(&mut EventSink {
                out: &mut *out,
                tables: &tables,
                events,
                summary: summary.as_mut(),
            })?;
            // On a pipe, where the stream ends was not known when the tables were checked.
            if let Some(layout) = &tables.overlap_after_stream
                && let Some(d) = layout.check_overlap(decoder.end_of_input()?)
            {
                out.report(d).map_err(Error::Write)?;
            }
        }
        if events {
            out.print(|p| p.end_events())?;
        }
    }
    if let Some(summary) = summary.map(Collector::finish) {
        out.print(|p| p.summary(&summary, &tables))?;
    }
    if !opts.matches.is_empty() {
        let results: Vec<MatchResult<'_>> = opts
            .matches
            .iter()
            .map(|file| MatchResult {
                file,
                verdict: file
                    .identity
                    .as_ref()
                    .ok()
                    .map(|id| matching::judge(id, &tables)),
            })
            .collect();
        out.mismatches = results.iter().filter(|r| r.failed()).count();
        out.print(|p| p.matches(&results, &tables))?;
    }
    Ok(done)
}

/// Feeds the decoder's output to the printer, the summary and the tally.
struct EventSink<'a, 'b, P> {
    out: &'a mut Out<'b, P>,
    tables: &'a Tables,
    events: bool,
    summary: Option<&'a mut Collector>,
}

impl<P: Printer> Sink for EventSink<'_, '_, P> {
    #[inline]
    fn record(&mut self, record: &Record<'_>) -> io::Result<()> {
        if let (Some(summary), Record::Samples(s)) = (self.summary.as_deref_mut(), record) {
            summary.add(s);
        }
        if self.events {
            self.out.printer.record(record, self.tables)?;
        }
        Ok(())
    }

    fn diagnostic(&mut self, d: Diagnostic) -> io::Result<()> {
        self.out.report(d)
    }
}

/// The file's binaries as `0 (app.exe), 1 (core.dll)`, for messages.
fn binary_names(tables: &Tables) -> String {
    let count = tables.progids.as_ref().map_or(0, |t| t.entries().len());
    if count == 0 {
        return "none".to_owned();
    }
    (0..count)
        .map(|i| match tables.name(i as u16) {
            Some(n) => format!("{i} ({})", String::from_utf8_lossy(n)),
            None => format!("{i} (no name)"),
        })
        .collect::<Vec<_>>()
        .join(", ")
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
