//! One trace of a run, from its header to its verdicts:
//!
//! ```text
//! etl         an ETL read whole into sptdump's aggregation, read on as an SPT (SPEC 19)
//! header      read and checked; a fatal problem (not an SPT file, a version not known)
//!             ends the trace after saying what it is
//! tables      the string and program-ID tables, read and checked (at most 64 KiB + 1.5 MiB);
//!             /binary resolved against them; the /pdb symbols attached
//! sections    /header, /strtab, /progid, then the stream decoded once, each record to the
//!             printer (/event) and to the counters the plan needs
//! views       /summary, /functions, /folded and the exports, unless the traces are merged
//! verdicts    /match, /check, /validate
//! ```

use std::io;
use std::sync::Arc;

use super::build::BuildFile;
use super::etl::{self, EtlRead};
use super::{Out, Outcome, Plan, views};
use crate::analysis::summary::collect::Collector;
use crate::analysis::{check, lbr::ranges};
use crate::format::decode::{Decoder, Selection, Sink};
use crate::format::diag::{Code, Diagnostic, Severity, Tally};
use crate::format::error::Error;
use crate::format::header::Header;
use crate::format::magic::Foreign;
use crate::format::progid::registry_form;
use crate::format::record::{Record, SampleKind, Samples};
use crate::format::tables::{Tables, base_name};
use crate::image::attached::SymbolMap;
use crate::image::matching::{self, MatchStatus};
use crate::image::spd;
use crate::input::{Input, OpenError, Opened};
use crate::output::sections::{HeaderSection, ProgidSection, StringSection};
use crate::output::verdicts::{Checked, Matched, Validated};
use crate::output::{FileInfo, Printer};
use crate::views::kept::{Kept, Records};
use crate::views::profile::After;
use crate::views::{Reads, Sections, Shape, Writes};

/// How a trace is read within its run.
#[derive(Clone, Copy, Debug)]
pub(super) struct Within {
    /// No trace follows it in the output.
    pub last: bool,
    /// Other threads are decoding other traces: count on this one alone.
    pub alone: bool,
}

/// One trace of a run: opened (or why it could not be), dumped into `printer` and closed;
/// what its counters counted is kept when the plan keeps it. Fails only when the output
/// cannot be written.
pub(super) fn one<P: Printer>(
    printer: &mut P,
    file: &FileInfo<'_>,
    input: Result<Input, OpenError>,
    plan: &Plan,
    within: Within,
) -> io::Result<(Outcome, Option<Kept>)> {
    let (outcome, kept) = match input {
        Ok(input) => dump(printer, file, input, plan, within.alone)?,
        Err(why) => (unreadable(printer, file, &why.to_string(), plan)?, None),
    };
    if !matches!(outcome, Outcome::OutputClosed(_)) {
        printer.end_file(within.last)?;
    }
    Ok((outcome, kept))
}

/// A trace that could not be opened. A pipeline counting `/validate` verdicts must not miss
/// it: it gets its file line, the error and a verdict.
fn unreadable<P: Printer>(
    printer: &mut P,
    file: &FileInfo<'_>,
    message: &str,
    plan: &Plan,
) -> io::Result<Outcome> {
    if plan.validate {
        printer.begin_file(file)?;
        printer.error(file, message)?;
        let tally = Tally {
            errors: 1,
            warnings: 0,
        };
        printer.show(&Validated {
            file,
            tally,
            valid: false,
        })?;
    } else {
        printer.error(file, message)?;
    }
    Ok(Outcome::ReadFailed)
}

/// Dumps the trace read from `input`: everything the plan asks of one trace, its verdict
/// last. Fails only when the output cannot be written; a closed pipe is an outcome.
fn dump<P: Printer>(
    printer: &mut P,
    file: &FileInfo<'_>,
    mut input: Input,
    plan: &Plan,
    alone: bool,
) -> io::Result<(Outcome, Option<Kept>)> {
    // An ETL is read whole into sptdump's aggregation, which the steps read as a trace.
    let etl = match input.is_etl() {
        Ok(false) => None,
        Ok(true) => match etl::read(input, plan) {
            Ok((read, aggregated)) => {
                input = aggregated;
                Some(read)
            }
            Err(message) => return Ok((unreadable(printer, file, &message, plan)?, None)),
        },
        Err(e) => return Ok((unreadable(printer, file, &e.to_string(), plan)?, None)),
    };
    // An ETL's /event lists its samples (its sections do), not the aggregation's records.
    let of_etl;
    let plan = match etl {
        Some(_) if plan.sections.event => {
            let mut p = plan.clone();
            p.sections.event = false;
            of_etl = p;
            &of_etl
        }
        _ => plan,
    };
    let mut out = Out::new(printer);
    let (outcome, kept) = match steps(&mut out, file, input, plan, alone, etl.as_ref()) {
        Ok(Stepped::Done(kept)) => (Outcome::Done(Tally::default(), 0), kept),
        Ok(Stepped::NoSuchBinary) => return Ok((Outcome::NoSuchBinary, None)),
        Err(e) if e.is_broken_pipe() => return Ok((Outcome::OutputClosed(out.tally), None)),
        Err(Error::Write(e)) => return Err(e),
        Err(e @ Error::Read { .. }) => {
            // The rest of the trace is unknown: its verdict counts this as an error in it.
            out.printer.error(file, &e.to_string())?;
            out.tally.errors += 1;
            (Outcome::ReadFailed, None)
        }
    };
    if plan.validate {
        let tally = out.tally;
        let valid = tally.errors == 0 && !(plan.strict && tally.warnings > 0);
        out.printer.show(&Validated { file, tally, valid })?;
    }
    let outcome = match outcome {
        Outcome::Done(..) => Outcome::Done(out.tally, out.failed),
        other => other,
    };
    Ok((outcome, kept))
}

/// How the steps of [`dump`] ended.
#[expect(
    clippy::large_enum_variant,
    reason = "made once per trace and moved once, never stored"
)]
enum Stepped {
    /// All done; what the counters counted, when the plan keeps it.
    Done(Option<Kept>),
    /// `/binary` names nothing in the trace: nothing of it was printed but a note.
    NoSuchBinary,
}

/// The steps of [`dump`], from the header to the verdicts of `/match` and `/check`.
fn steps<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    input: Input,
    plan: &Plan,
    alone: bool,
    etl: Option<&EtlRead>,
) -> Result<Stepped, Error> {
    let Some((header, mut opened, found)) = tables(out, file, input, plan)? else {
        unwritten(out, file, plan)?;
        return Ok(Stepped::Done(None));
    };
    let selection = match &plan.binaries {
        None => None,
        Some(list) => match select(list, &opened.tables) {
            Some(selection) => Some(selection),
            None => {
                let message = format!(
                    "/binary:{} names no binary of this file; its program IDs are {}",
                    list.join(","),
                    binary_names(&opened.tables)
                );
                out.print(|p| p.note(file, &message))?;
                return Ok(Stepped::NoSuchBinary);
            }
        },
    };
    out.print(|p| p.begin_file(file))?;
    let symbols = attach_pdbs(out, file, &opened.tables, plan)?;
    match etl {
        // An ETL's own header and binaries, not its aggregation's tables.
        Some(etl) => etl::sections(out, file, etl, plan)?,
        None => sections(out, &header, &opened.tables, found, plan.sections)?,
    }
    let (summary, records) = decode(out, &header, &mut opened, selection, &symbols, plan, alone)?;
    let summary = match summary.map(Collector::finish) {
        Some(Ok(summary)) => Some(summary),
        Some(Err(failed)) => {
            out.fail(file, &failed.to_string())?;
            None
        }
        None => None,
    };
    let mut kept = Kept {
        summary,
        records,
        tables: opened.tables,
        symbols,
    };
    if plan.views_per_trace() {
        // `/check` reads the summary after the views, and `/merge` and `/compare` all of it.
        let after = After {
            summary: plan.check || plan.keeps_counts(),
            records: match (plan.keeps_counts(), plan.check) {
                (true, _) => Records::READ_BY,
                (false, true) => Reads::LBR_RECORDS,
                (false, false) => Reads::NOTHING,
            },
        };
        views::show(out, file, plan, &mut kept, after)?;
    }
    verdicts(out, file, plan, &kept, etl)?;
    Ok(Stepped::Done(plan.keeps_counts().then_some(kept)))
}

/// Says which files a trace whose header ends it does not get: the files of a run that
/// writes them per trace, so that a missing file is never a surprise.
fn unwritten<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    plan: &Plan,
) -> Result<(), Error> {
    if plan.shape != Shape::Each {
        return Ok(());
    }
    // The files first, then the directories.
    let (mut options, directories): (Vec<_>, Vec<_>) = plan
        .views
        .written()
        .partition(|(d, _)| matches!(d.writes, Writes::File(_)));
    options.extend(directories);
    let options: Vec<&str> = options.into_iter().map(|(d, _)| d.name).collect();
    if options.is_empty() {
        return Ok(());
    }
    let message = format!(
        "nothing of the trace could be read: /{} write nothing for it",
        options.join(", /")
    );
    out.print(|p| p.note(file, &message))
}

/// Reads the header and the tables, reporting what is wrong with them. `None` when the
/// header ends the trace (too short, not an SPT file, a version not known): then it has
/// been said, under the file's line.
fn tables<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    mut input: Input,
    plan: &Plan,
) -> Result<Option<(Header, Opened, Vec<Diagnostic>)>, Error> {
    let bytes = match input.header()? {
        Ok(bytes) => bytes,
        Err(truncated) => {
            out.print(|p| p.begin_file(file))?;
            out.report(truncated)?;
            return Ok(None);
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
        if plan.sections.header && foreign.is_none() {
            out.print(|p| p.show(&HeaderSection(&header)))?;
        }
        let fatal = match foreign {
            Some(Foreign::Spd) => spd_as_trace(&mut input, file, &bytes),
            Some(kind) => kind.bad_signature(&bytes),
            None => fatal,
        };
        out.report(fatal)?;
        return Ok(None);
    }
    let mut found = Vec::new();
    let opened = input.tables(&header, &bytes, plan.strindex, |d| found.push(d))?;
    Ok(Some((header, opened, found)))
}

/// The bad-signature diagnostic of an SPD given as a trace: whose build it is (when it is a
/// file, which can be read where the identity lies), and how to check a trace against it.
fn spd_as_trace(input: &mut Input, file: &FileInfo<'_>, first: &[u8]) -> Diagnostic {
    let named = if file.is_stdin() { "FILE" } else { file.path };
    let check = format!(
        "to check a trace against it: sptdump /match:{named} TRACE; to set a trace beside \
         it: sptdump /compare TRACE {named}"
    );
    let (what, hint) = match input.seekable().map(|(f, len)| spd::read(f, len)) {
        Some(Ok(spd)) => {
            let what = format!(
                "{} for {}, {{{}}} age {} (inferred)",
                Foreign::Spd,
                spd.binary,
                registry_form(&spd.guid),
                spd.age
            );
            (what, check)
        }
        Some(Err(spd::SpdError::NotRecognised { check, why })) => {
            let what = format!(
                "a file that starts like {} but fails its check {} ({check}: {why})",
                Foreign::Spd,
                check.number()
            );
            (what, "it is not a recognised SPD either".to_owned())
        }
        _ => (Foreign::Spd.to_string(), check),
    };
    Foreign::bad_signature_as(first, &what, Some(&hint))
}

/// The symbols of each `/pdb` and the code of each `/image` that matches a program ID of the
/// trace. Under `/merge` they are judged against the merged binaries instead, once, so one
/// that fits another trace is no error here.
fn attach_pdbs<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    tables: &Tables,
    plan: &Plan,
) -> Result<SymbolMap, Error> {
    let mut symbols = SymbolMap::default();
    for build in BuildFile::all(plan) {
        let verdict = matching::judge(build.identity(), tables);
        match (verdict.status, verdict.progid) {
            (MatchStatus::Match, Some(progid)) => build.attach(&mut symbols, progid),
            _ if !plan.views_per_trace() => {}
            _ => {
                let matching = format!("this trace ({})", verdict.status);
                out.fail(file, &build.unused(&matching))?;
            }
        }
    }
    attach_spds(tables, plan, &mut symbols);
    // Under /merge the symbol path is searched once, for the merged binaries.
    if plan.views_per_trace() {
        super::symbols::attach(out, file, tables, plan, &mut symbols)?;
        super::spdnames::attach(out, file, tables, plan, "this trace", &mut symbols)?;
    }
    Ok(symbols)
}

/// Attaches the SPD set beside the trace, and each `/match` SPD, to the binary it matches,
/// when a view counts the LBR records on an SPD's blocks.
fn attach_spds(tables: &Tables, plan: &Plan, symbols: &mut SymbolMap) {
    if !plan.needs().records.any(Reads::SPD_BLOCKS) {
        return;
    }
    for given in plan.matches.iter().chain(&plan.beside) {
        let (Ok(id), Some(Ok(profile))) = (&given.identity, &given.spd) else {
            continue;
        };
        let verdict = matching::judge(id, tables);
        if let (MatchStatus::Match, Some(progid)) = (verdict.status, verdict.progid) {
            symbols.attach_spd(progid, Arc::clone(profile));
        }
    }
}

/// Prints the sections before the stream, in file order, with the diagnostics of the
/// tables after the header's.
fn sections<P: Printer>(
    out: &mut Out<'_, P>,
    header: &Header,
    tables: &Tables,
    found: Vec<Diagnostic>,
    sections: Sections,
) -> Result<(), Error> {
    if sections.header {
        out.print(|p| p.show(&HeaderSection(header)))?;
    }
    for d in found {
        out.report(d)?;
    }
    if sections.strtab {
        out.print(|p| p.show(&StringSection(header, tables.strings.as_ref())))?;
    }
    if sections.progid {
        out.print(|p| p.show(&ProgidSection(header, tables)))?;
    }
    Ok(())
}

/// What the decoder counted: the summary's tables, and what it kept of the records
/// themselves; each when the plan needs it.
type Counters = (Option<Collector>, Records);

/// Decodes the stream once, when the plan needs it: each record to the printer (`/event`)
/// and to the counters the plan needs, which are returned.
fn decode<P: Printer>(
    out: &mut Out<'_, P>,
    header: &Header,
    opened: &mut Opened,
    selection: Option<Selection>,
    symbols: &SymbolMap,
    plan: &Plan,
    alone: bool,
) -> Result<Counters, Error> {
    let needs = plan.needs();
    let collector = if alone {
        Collector::alone
    } else {
        Collector::new
    };
    let mut summary = needs.counts.then(|| collector(plan.top));
    let mut records = Records::wanted(needs.records);
    if !needs.stream {
        return Ok((summary, records));
    }
    if needs.events {
        out.print(|p| p.begin_events())?;
    }
    let Opened {
        tables,
        stream,
        size,
        overlap_after_stream,
    } = opened;
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
            symbols,
            events: needs.events,
            summary: summary.as_mut(),
            stack_arcs: needs.stack_arcs,
            keeps: records.any(),
            records: &mut records,
        })?;
        records.settle(symbols);
        // On a pipe, where the stream ends was not known when the tables were checked.
        if let Some(layout) = overlap_after_stream
            && let Some(d) = layout.check_overlap(decoder.end_of_input()?)
        {
            out.report(d)?;
        }
    }
    if needs.events {
        out.print(|p| p.end_events())?;
    }
    Ok((summary, records))
}

/// The verdicts of one trace: `/match`, then `/check` (`/validate`'s comes last, in
/// [`dump`]).
fn verdicts<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    plan: &Plan,
    kept: &Kept,
    etl: Option<&EtlRead>,
) -> Result<(), Error> {
    let results = plan.match_results(&kept.tables);
    if !results.is_empty() {
        out.failed += results.iter().filter(|r| r.failed()).count();
        let matched = Matched {
            results: &results,
            tables: &kept.tables,
        };
        out.print(|p| p.show(&matched))?;
    }
    if plan.check
        && let Some(summary) = &kept.summary
    {
        let mut report = check::check(summary, &kept.tables, &kept.symbols, &results);
        if let Some(lbr) = &kept.records.lbr {
            let ranges = ranges::ranges(lbr, &kept.tables, &kept.symbols);
            check::thin(&mut report, summary, &kept.symbols, &ranges);
            check::falsely_cold(&mut report, &ranges);
            check::stale_by_ranges(&mut report, &results, &ranges);
        }
        if let Some(etl) = etl {
            check::etl(&mut report, &etl.recording, &etl.attributed);
        }
        let diagnostics = out.tally;
        let checked = Checked {
            file,
            report: &report,
            diagnostics,
        };
        out.print(|p| p.show(&checked))?;
        out.failed += report.count(Severity::Error) as usize;
    }
    Ok(())
}

/// Feeds the decoder's output to the printer, the counters and the tally.
struct EventSink<'a, 'b, P> {
    out: &'a mut Out<'b, P>,
    tables: &'a Tables,
    symbols: &'a SymbolMap,
    events: bool,
    summary: Option<&'a mut Collector>,
    /// Whether the summary counts call-stack arcs.
    stack_arcs: bool,
    /// Whether anything is kept of the records themselves.
    keeps: bool,
    records: &'a mut Records,
}

impl<P: Printer> EventSink<'_, '_, P> {
    /// Keeps what the views read of a sample record besides the summary (the distinct call
    /// stacks, the LBR records). Apart, so that the decoder's loop stays small when nothing
    /// is kept (`/validate`, `/summary`).
    #[inline(never)]
    fn keep(&mut self, s: &Samples<'_>) {
        self.records.add(s, self.symbols);
    }
}

impl<P: Printer> Sink for EventSink<'_, '_, P> {
    // Once per record: inlined into the decoder's loop (a call here costs `/validate` a
    // fifth of its instructions).
    #[inline(always)]
    fn record(&mut self, record: &Record<'_>) -> io::Result<()> {
        if let Record::Samples(s) = record {
            if let Some(summary) = self.summary.as_deref_mut()
                && (self.stack_arcs || s.kind() != SampleKind::CallStack)
            {
                summary.add(s);
            }
            if self.keeps {
                self.keep(s);
            }
        }
        if self.events {
            self.out.printer.record(record, self.tables, self.symbols)?;
        }
        Ok(())
    }

    fn diagnostic(&mut self, d: Diagnostic) -> io::Result<()> {
        self.out.count(&d);
        self.out.printer.diagnostic(&d)
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
