//! The driver: dumping one file, as the options ask, into a [`Printer`]; the runs over
//! several traces, [`run()`], [`merge()`] and [`compare()`], have modules of their own.
//!
//! It reads the header and tables and checks them (they are small: at most 64 KiB +
//! 1.5 MiB), attaches the `/pdb` symbols, prints the sections in file order, and decodes the
//! event stream only when events, a summary or a verdict is wanted, feeding each record to
//! the printer and to the analyses in one pass.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::analysis::check;
use crate::analysis::collect::Collector;
use crate::analysis::functions;
use crate::analysis::stacks::{Profile, StackCounts, StackOrder};
use crate::analysis::summary::Summary;
use crate::format::decode::{Decoder, Selection, Sink};
use crate::format::diag::{Code, Diagnostic, Tally};
use crate::format::error::Error;
use crate::format::header::Header;
use crate::format::magic::Foreign;
use crate::format::progid::registry_form;
use crate::format::record::{Record, SampleKind};
use crate::format::tables::{StringIndex, Tables, base_name};
use crate::image::matching::{self, MatchFile, MatchResult, PdbFile, Status as MatchStatus};
use crate::image::symbols::SymbolMap;
use crate::input::{Input, Opened};
use crate::output::pprof::{self, Counted};
use crate::output::{FileInfo, Format, Output, Printer, flamegraph, speedscope};

mod compare;
mod many;
mod merge;

pub use compare::compare;
pub use many::run;
pub use merge::merge;

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

/// What to print for each file, and how.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Text or JSON Lines.
    pub format: Format,
    /// The sections to print.
    pub sections: Sections,
    /// Print the summary after the sections, with this many top entries per table.
    pub summary: Option<usize>,
    /// Print the inclusive and exclusive hits per function of the call stacks
    /// (`/functions`), with this many rows per binary.
    pub functions: Option<usize>,
    /// Print the folded call stacks (`/folded`).
    pub folded: bool,
    /// Write a flame graph of the call stacks to this file (`/flamegraph:FILE`).
    pub flamegraph: Option<PathBuf>,
    /// How the frames of a call stack are stored (`/stackorder`).
    pub stack_order: StackOrder,
    /// Write the trace as a gzipped pprof profile to this file (`/pprof:FILE`).
    pub pprof: Option<PathBuf>,
    /// Write the trace in speedscope's format to this file (`/speedscope:FILE`).
    pub speedscope: Option<PathBuf>,
    /// Print only the diagnostics and a verdict.
    pub validate: bool,
    /// Warnings count as errors for the exit status and the verdict (`/strict`).
    pub strict: bool,
    /// Judge whether the trace is fit for SPDConvert (`/check`).
    pub check: bool,
    /// Compare the second trace with the first (`/compare BASE NEW`).
    pub compare: bool,
    /// With `/compare`, the overlap below which a paired source fails (`/min-overlap:F`).
    pub min_overlap: Option<f64>,
    /// The analyses treat all the traces as one (`/merge`).
    pub merge: bool,
    /// Count on the decoding thread alone, without a second thread for the IP samples: for
    /// when traces are decoded in parallel and the cores are busy already.
    pub one_thread: bool,
    /// Keep only the segments of these binaries: names (case-insensitive) or progid indices.
    pub binaries: Option<Vec<String>>,
    /// Images and PDBs to match against each trace's program IDs (`/match`).
    pub matches: Vec<MatchFile>,
    /// PDBs whose symbols name the RVAs of the program ID they match (`/pdb`).
    pub pdbs: Vec<PdbFile>,
    /// How the program IDs' string indices are read (`/strindex`): byte offsets into the
    /// string table, ordinals of its names, or (the default) whichever the file's indices
    /// call for.
    pub strindex: StringIndex,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            format: Format::Text,
            sections: Sections::ALL,
            summary: None,
            functions: None,
            folded: false,
            flamegraph: None,
            stack_order: StackOrder::LeafFirst,
            pprof: None,
            speedscope: None,
            validate: false,
            strict: false,
            check: false,
            compare: false,
            min_overlap: None,
            merge: false,
            one_thread: false,
            binaries: None,
            matches: Vec::new(),
            pdbs: Vec::new(),
            strindex: StringIndex::Auto,
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
    /// `/binary` names nothing in this file: a note, and a usage error when it names nothing
    /// in any trace of the run (see [`RunStatus`]).
    NoSuchBinary,
    /// The reader of the output went away (a closed pipe); the diagnostics found until then.
    OutputClosed(Tally),
}

/// What a run calls for, from best to worst; the command line makes an exit code of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// No error found (warnings allowed).
    #[default]
    Clean,
    /// An error diagnostic, a file that could not be read, or a `/match` or `/pdb` file
    /// that does not fit the trace.
    Errors,
    /// The command line asked for something the input cannot give: a `/binary` list that
    /// names nothing in the file.
    Usage,
}

impl Outcome {
    /// The status this file calls for.
    pub fn status(&self) -> Status {
        match self {
            Outcome::Done(tally, 0) | Outcome::OutputClosed(tally) if tally.errors == 0 => {
                Status::Clean
            }
            Outcome::Done(..) | Outcome::OutputClosed(_) | Outcome::ReadFailed => Status::Errors,
            Outcome::NoSuchBinary => Status::Usage,
        }
    }
}

impl Outcome {
    /// The status this file calls for under `opts`: with `/strict`, a warning is an error.
    pub fn status_under(&self, opts: &Options) -> Status {
        match self {
            Outcome::Done(tally, _) | Outcome::OutputClosed(tally)
                if opts.strict && tally.warnings > 0 =>
            {
                Status::Errors
            }
            other => other.status(),
        }
    }
}

/// The status of a run over several files: the worst of theirs, save that a `/binary` list
/// is a usage error only when it names no binary of any trace read.
#[derive(Clone, Copy, Debug, Default)]
pub struct RunStatus {
    worst: Status,
    /// A trace was read with the `/binary` list naming some of its binaries (or no list).
    named: bool,
    /// A trace was read whose binaries the list names none of.
    unnamed: bool,
}

impl RunStatus {
    /// Adds the outcome of one file.
    pub fn add(&mut self, outcome: &Outcome, opts: &Options) {
        match outcome {
            Outcome::NoSuchBinary => self.unnamed = true,
            Outcome::ReadFailed => self.worst = self.worst.max(Status::Errors),
            Outcome::Done(..) | Outcome::OutputClosed(_) => {
                self.named = true;
                self.worst = self.worst.max(outcome.status_under(opts));
            }
        }
    }

    /// Adds a status found outside the files (a `/pdb` file that could not be read).
    pub fn add_status(&mut self, status: Status) {
        self.worst = self.worst.max(status);
    }

    /// The status of the run so far.
    pub fn status(&self) -> Status {
        if self.unnamed && !self.named {
            self.worst.max(Status::Usage)
        } else {
            self.worst
        }
    }
}

/// Prints the identities of the files given to `/match` when no trace is: what a user
/// compares with `SPDDump /header`. The status is `Errors` when one has no identity.
pub fn identities<P: Printer>(printer: &mut P, files: &[MatchFile]) -> io::Result<Status> {
    printer.identities(files)?;
    printer.flush()?;
    Ok(if files.iter().all(|f| f.identity.is_ok()) {
        Status::Clean
    } else {
        Status::Errors
    })
}

/// The printer these options ask for, writing the dump to `out` and diagnostics to `err`.
/// The command line, the tests and the fuzzer all print through it.
pub fn printer<W: Write, E: Write>(opts: &Options, out: W, err: E) -> Output<W, E> {
    Output::new(opts.format, !opts.banner(), out, err)
}

impl Options {
    /// Whether text starts each file with a `File:` line: when it prints something of the
    /// file besides folded stacks, and it is not `/validate` (whose verdicts name the file).
    pub fn banner(&self) -> bool {
        !self.validate
            && (self.sections != Sections::default()
                || self.summary.is_some()
                || self.functions.is_some()
                || !self.matches.is_empty())
    }

    /// Whether the call stacks are wanted.
    fn stacks(&self) -> bool {
        !self.validate
            && (self.functions.is_some()
                || self.folded
                || self.flamegraph.is_some()
                || self.exports())
    }

    /// Whether a profile for another viewer is to be written.
    fn exports(&self) -> bool {
        !self.validate && (self.pprof.is_some() || self.speedscope.is_some())
    }
}

/// Dumps one file of a run into `printer` and closes it (`last` when no file follows).
/// `input` is the opened trace, or why it could not be opened, said in full: it is printed
/// as the file's error. Fails only when the output cannot be written.
pub fn dump_file<P: Printer>(
    printer: &mut P,
    file: &FileInfo<'_>,
    input: Result<Input, String>,
    opts: &Options,
    last: bool,
) -> io::Result<Outcome> {
    let outcome = match input {
        Ok(input) => dump(printer, file, input, opts)?,
        Err(message) if opts.validate => {
            // A pipeline counting verdicts must not miss a file it could not open: it gets
            // its file line, the error and a verdict.
            printer.begin_file(file)?;
            printer.error(file, &message)?;
            let tally = Tally {
                errors: 1,
                warnings: 0,
            };
            printer.validation(file, tally, false)?;
            Outcome::ReadFailed
        }
        Err(message) => {
            printer.error(file, &message)?;
            Outcome::ReadFailed
        }
    };
    if !matches!(outcome, Outcome::OutputClosed(_)) {
        printer.end_file(last)?;
    }
    Ok(outcome)
}

/// Dumps the trace read from `input` into `printer`. Fails only when the output cannot be
/// written; problems with the input are reported through the printer and the outcome.
pub fn dump<P: Printer>(
    printer: &mut P,
    file: &FileInfo<'_>,
    input: Input,
    opts: &Options,
) -> io::Result<Outcome> {
    dump_keeping(printer, file, input, opts).map(|(outcome, _)| outcome)
}

/// What a trace's analyses counted, kept for an analysis of several traces.
pub struct Collected {
    /// Every count of the summary.
    pub summary: Summary,
    /// The distinct call stacks, when an analysis of them was asked for.
    pub stacks: Option<StackCounts>,
    /// The trace's tables.
    pub tables: Tables,
    /// The `/pdb` symbols attached to it.
    pub symbols: SymbolMap,
}

/// [`dump`], keeping what the analyses counted when `/compare` asks for it.
fn dump_keeping<P: Printer>(
    printer: &mut P,
    file: &FileInfo<'_>,
    input: Input,
    opts: &Options,
) -> io::Result<(Outcome, Option<Collected>)> {
    let mut out = Out {
        printer,
        tally: Tally::default(),
        collected: None,
        mismatches: 0,
    };
    let outcome = match dump_sections(&mut out, file, input, opts) {
        Ok(outcome) => outcome,
        Err(Error::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => {
            return Ok((Outcome::OutputClosed(out.tally), None));
        }
        Err(Error::Write(e)) => return Err(e),
        Err(e @ Error::Read { .. }) => {
            out.printer.error(file, &e.to_string())?;
            out.tally.errors += 1;
            Outcome::ReadFailed
        }
    };
    if opts.validate && outcome != Outcome::NoSuchBinary {
        let valid = out.tally.errors == 0 && !(opts.strict && out.tally.warnings > 0);
        out.printer.validation(file, out.tally, valid)?;
    }
    let outcome = match outcome {
        Outcome::Done(..) => Outcome::Done(out.tally, out.mismatches),
        other => other,
    };
    Ok((outcome, out.collected))
}

/// The printer, and the count of the diagnostics it was given.
struct Out<'a, P> {
    printer: &'a mut P,
    tally: Tally,
    /// What the analyses counted, kept for `/compare`.
    collected: Option<Collected>,
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
        // A file of another format gets a word on what it is, and no header full of junk.
        let foreign = match fatal.code {
            Code::BadSignature => Foreign::identify(&bytes),
            _ => None,
        };
        out.print(|p| p.begin_file(file))?;
        if show(opts.sections.header) && foreign.is_none() {
            out.print(|p| p.header(&header))?;
        }
        let fatal = foreign.map_or(fatal, |kind| kind.bad_signature(&bytes));
        out.report(fatal).map_err(Error::Write)?;
        return Ok(done);
    }

    let mut found = Vec::new();
    let mut opened = input.tables(&header, &bytes, opts.strindex, |d| found.push(d))?;
    let tables = &opened.tables;
    let selection = match &opts.binaries {
        None => None,
        Some(list) => match select(list, tables) {
            Some(selection) => Some(selection),
            None => {
                let message = format!(
                    "/binary:{} names no binary of this file; its program IDs are {}",
                    list.join(","),
                    binary_names(tables)
                );
                out.print(|p| p.note(file, &message))?;
                return Ok(Outcome::NoSuchBinary);
            }
        },
    };

    out.print(|p| p.begin_file(file))?;
    let mut symbols = SymbolMap::default();
    for pdb in &opts.pdbs {
        let verdict = matching::judge(&pdb.identity, tables);
        match (verdict.status, verdict.progid) {
            (MatchStatus::Match, Some(progid)) => symbols.attach(progid, Arc::clone(&pdb.symbols)),
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
        out.print(|p| p.progids(&header, tables))?;
    }

    let events = show(opts.sections.event);
    // The exports are made of the summary's counts: every address and branch of each binary.
    let counting = opts
        .summary
        .or((opts.exports() || opts.check || opts.compare || opts.merge).then_some(0));
    let collector = if opts.one_thread {
        Collector::alone
    } else {
        Collector::new
    };
    let mut summary = counting.filter(|_| !opts.validate).map(collector);
    let mut stacks = opts.stacks().then(StackCounts::default);
    if events || summary.is_some() || stacks.is_some() || opts.validate {
        if events {
            out.print(|p| p.begin_events())?;
        }
        let Opened {
            tables,
            stream,
            size,
            overlap_after_stream,
        } = &mut opened;
        if let Some(stream) = stream.take() {
            let mut decoder = Decoder::new(
                stream,
                header.stream_offset(),
                *size,
                header.program_ids_used,
            );
            decoder.select(selection);
            decoder.run(&mut EventSink {
                out: &mut *out,
                tables,
                symbols: &symbols,
                events,
                summary: summary.as_mut(),
                stack_arcs: opts.summary.is_some() || opts.check || opts.compare,
                stacks: stacks.as_mut(),
            })?;
            // On a pipe, where the stream ends was not known when the tables were checked.
            if let Some(layout) = overlap_after_stream
                && let Some(d) = layout.check_overlap(decoder.end_of_input()?)
            {
                out.report(d).map_err(Error::Write)?;
            }
        }
        if events {
            out.print(|p| p.end_events())?;
        }
    }
    let tables = &opened.tables;
    let summary = match summary.map(Collector::finish) {
        Some(Ok(summary)) => Some(summary),
        Some(Err(failed)) => {
            out.print(|p| p.error(file, &failed.to_string()))?;
            out.tally.errors += 1;
            None
        }
        None => None,
    };
    // Under /merge the analyses are of all the traces together: they print at the end.
    if !opts.merge {
        analyses(
            out,
            file,
            opts,
            summary.as_ref(),
            stacks.as_ref(),
            tables,
            &symbols,
        )?;
    }
    let results: Vec<MatchResult<'_>> = opts
        .matches
        .iter()
        .map(|file| MatchResult {
            file,
            verdict: file
                .identity
                .as_ref()
                .ok()
                .map(|id| matching::judge(id, tables)),
        })
        .collect();
    if !results.is_empty() {
        out.mismatches = results.iter().filter(|r| r.failed()).count();
        out.print(|p| p.matches(&results, tables))?;
    }
    if opts.check
        && !opts.validate
        && let Some(summary) = &summary
    {
        let report = check::check(summary, tables, &symbols, &results);
        let diagnostics = out.tally;
        out.print(|p| p.check(file, &report, diagnostics))?;
        out.tally.errors += report.count(check::Severity::Error);
    }
    if (opts.compare || opts.merge)
        && let Some(summary) = summary
    {
        out.collected = Some(Collected {
            summary,
            stacks,
            tables: opened.tables.clone(),
            symbols,
        });
    }
    Ok(done)
}

/// Prints and writes the analyses of a trace (or of several merged): `/summary`,
/// `/functions`, `/folded`, `/flamegraph`, `/pprof`, `/speedscope`.
fn analyses<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    opts: &Options,
    summary: Option<&Summary>,
    stacks: Option<&StackCounts>,
    tables: &Tables,
    symbols: &SymbolMap,
) -> Result<(), Error> {
    if let (Some(summary), Some(_)) = (summary, opts.summary) {
        out.print(|p| p.summary(summary, tables, symbols))?;
    }
    if let Some(stacks) = stacks {
        let profile = stacks.profile(opts.stack_order, tables, symbols);
        stack_outputs(out, file, opts, &profile)?;
        if let Some(summary) = summary {
            let counted = Counted {
                summary,
                stacks,
                order: opts.stack_order,
                tables,
                symbols,
            };
            exports(out, file, opts, &counted, &profile)?;
        }
    }
    Ok(())
}

/// Prints and writes what the call stacks make: `/functions`, `/folded`, `/flamegraph`.
fn stack_outputs<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    opts: &Options,
    profile: &Profile,
) -> Result<(), Error> {
    if let Some(top) = opts.functions {
        out.print(|p| p.functions(&functions::functions(profile, top)))?;
    }
    if !(opts.folded || opts.flamegraph.is_some()) {
        return Ok(());
    }
    if profile.is_empty() {
        let message = "no binary has call stacks (ETW_CALLSTACK records): nothing to fold";
        return out.print(|p| p.note(file, message));
    }
    let folded = profile.folded();
    if opts.folded {
        out.print(|p| p.folded(&folded))?;
    }
    if let Some(path) = &opts.flamegraph
        && let Err(e) = write_file(path, |w| flamegraph::write(w, &file.label(), &folded))
    {
        cannot_write(out, file, "flame graph", path, &e)?;
    }
    Ok(())
}

/// Writes the profiles for other viewers: `/pprof` and `/speedscope`.
fn exports<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    opts: &Options,
    counted: &Counted<'_>,
    profile: &Profile,
) -> Result<(), Error> {
    if let Some(path) = &opts.pprof {
        match write_file(path, |w| pprof::write(w, counted, &file.label())) {
            Ok(written) if written.clamped => {
                let message = "a count above 2^63 - 1, more than a pprof value holds, was clamped to it in the pprof profile";
                out.print(|p| p.note(file, message))?;
            }
            Ok(_) => {}
            Err(e) => cannot_write(out, file, "pprof profile", path, &e)?,
        }
    }
    if let Some(path) = &opts.speedscope
        && let Err(e) = write_file(path, |w| {
            speedscope::write(w, counted, profile, &file.label())
        })
    {
        cannot_write(out, file, "speedscope file", path, &e)?;
    }
    Ok(())
}

/// Creates `path` and writes it with `write`, through a buffer.
fn write_file<T>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> io::Result<T>,
) -> io::Result<T> {
    let mut w = BufWriter::new(File::create(path)?);
    let t = write(&mut w)?;
    w.flush()?;
    Ok(t)
}

/// Reports a file of ours that could not be written: an error of the run.
fn cannot_write<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    what: &str,
    path: &Path,
    e: &io::Error,
) -> Result<(), Error> {
    let message = format!(
        "cannot write the {what} {}: {}",
        path.display(),
        crate::input::describe(e)
    );
    out.print(|p| p.error(file, &message))?;
    out.tally.errors += 1;
    Ok(())
}

/// Feeds the decoder's output to the printer, the summary and the tally.
struct EventSink<'a, 'b, P> {
    out: &'a mut Out<'b, P>,
    tables: &'a Tables,
    symbols: &'a SymbolMap,
    events: bool,
    summary: Option<&'a mut Collector>,
    /// Whether the summary counts call-stack arcs: when it is printed.
    stack_arcs: bool,
    stacks: Option<&'a mut StackCounts>,
}

impl<P: Printer> Sink for EventSink<'_, '_, P> {
    #[inline]
    fn record(&mut self, record: &Record<'_>) -> io::Result<()> {
        if let Record::Samples(s) = record {
            // The exports alone need no call-stack arcs from the summary: the distinct stacks
            // hold them.
            if let Some(summary) = self.summary.as_deref_mut()
                && (self.stack_arcs || s.kind() != SampleKind::CallStack)
            {
                summary.add(s);
            }
            if let Some(stacks) = self.stacks.as_deref_mut() {
                stacks.add(s);
            }
        }
        if self.events {
            self.out.printer.record(record, self.tables, self.symbols)?;
        }
        Ok(())
    }

    fn diagnostic(&mut self, d: Diagnostic) -> io::Result<()> {
        self.out.report(d)
    }
}

/// The file's binaries as `0 (app.exe), 1 (core.dll)`, for messages.
fn binary_names(tables: &Tables) -> String {
    let count = tables.progid_count();
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
fn select(list: &[String], tables: &Tables) -> Option<Selection> {
    let count = tables.progid_count();
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
            if name == wanted || base_name(&name) == wanted {
                chosen.push(i);
                named = true;
            }
        }
    }
    named.then(|| Selection::new(chosen))
}
