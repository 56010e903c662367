//! `/merge`: several traces as one profile (SPEC 9.7).

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::sync::Arc;

use uuid::Uuid;

use super::{
    Collected, Error, Options, Out, Outcome, RunStatus, Sections, Status, analyses, dump_file,
    dump_keeping, printer,
};
use crate::analysis::stacks::StackCounts;
use crate::analysis::summary::Summary;
use crate::format::diag::Tally;
use crate::format::progid::ProgramId;
use crate::format::tables::Tables;
use crate::image::symbols::SymbolMap;
use crate::input::Input;
use crate::output::{FileInfo, Output, Printer};

/// The binaries of several traces merged by (GUID, age), numbered by first appearance.
#[derive(Default)]
struct Merged {
    binaries: Vec<(String, Uuid, u32)>,
    index: HashMap<(Uuid, u32), u16>,
    summary: Option<Summary>,
    stacks: Option<StackCounts>,
}

impl Merged {
    /// Adds one trace's counts, its binaries renumbered into the merged ones.
    fn absorb(&mut self, c: Collected, top: usize) {
        let entries: Vec<ProgramId> = c
            .tables
            .progids
            .as_ref()
            .map(|t| t.entries().to_vec())
            .unwrap_or_default();
        let mut to: Vec<u16> = Vec::with_capacity(entries.len());
        for (p, e) in entries.iter().enumerate() {
            let next = self.binaries.len() as u16;
            let m = *self.index.entry((e.guid, e.age)).or_insert(next);
            if m == next {
                self.binaries
                    .push((c.tables.binary_name(p as u16), e.guid, e.age));
            }
            to.push(m);
        }
        // A progid past the table (an error already reported) keeps a binary of its own.
        let mut beyond: HashMap<u16, u16> = HashMap::new();
        let mut map = |p: u16| -> u16 {
            if let Some(&m) = to.get(usize::from(p)) {
                return m;
            }
            *beyond.entry(p).or_insert_with(|| {
                self.binaries
                    .push((format!("progid {p}"), Uuid::nil(), u32::from(p)));
                (self.binaries.len() - 1) as u16
            })
        };
        // Renumbering goes through the binaries of the summary and the stacks; collect the
        // mapping first, then apply it.
        let mut seen: HashMap<u16, u16> = HashMap::new();
        for p in c.summary.progids() {
            seen.insert(p, map(p));
        }
        if let Some(stacks) = &c.stacks {
            for (p, ..) in stacks.totals() {
                seen.entry(p).or_insert_with(|| map(p));
            }
        }
        let renumber = |p: u16| seen.get(&p).copied().unwrap_or(p);
        let summary = c.summary.renumber(renumber);
        match &mut self.summary {
            Some(s) => s.absorb(summary),
            None => {
                let mut s = Summary::new(top);
                s.absorb(summary);
                self.summary = Some(s);
            }
        }
        if let Some(stacks) = c.stacks {
            let stacks = stacks.renumber(renumber);
            match &mut self.stacks {
                Some(s) => s.absorb(stacks),
                None => self.stacks = Some(stacks),
            }
        }
    }
}

/// `/merge`: dumps each trace (its sections and diagnostics, as asked), then prints the
/// analyses of all of them as one profile, binaries merged by (GUID, age), as SPDConvert
/// merges them: a trace named twice counts twice. `open(i)` opens trace `i`, whose path as
/// given is `paths[i]`. Several traces are decoded on both cores when no section of theirs
/// is printed; the output is the same, byte for byte, as one after another.
pub fn merge<P: Printer>(
    printer: &mut P,
    paths: &[String],
    open: &(dyn Fn(usize) -> Result<Input, String> + Sync),
    opts: &Options,
) -> io::Result<Status> {
    let mut status = RunStatus::default();
    let mut merged = Merged::default();
    let top = opts.summary.or(opts.functions).unwrap_or(10);
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(paths.len());
    let parallel =
        workers > 1 && opts.sections == Sections::default() && !paths.iter().any(|p| p == "-");
    if parallel {
        // Each core decodes and counts traces of its own.
        let opts = &Options {
            one_thread: true,
            ..opts.clone()
        };
        // Each worker dumps whole traces into memory; they are replayed here in argument
        // order, and their counts merged as they come, so at most a few are held at once.
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (done, results) = std::sync::mpsc::sync_channel(workers);
        let result = std::thread::scope(|scope| -> io::Result<()> {
            for _ in 0..workers {
                let done = done.clone();
                let next = &next;
                scope.spawn(move || {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if i >= paths.len() {
                            break;
                        }
                        let mut buffered = printer_into_memory(opts);
                        let input = open(i);
                        let info = FileInfo {
                            path: &paths[i],
                            size: input.as_ref().ok().and_then(Input::size),
                        };
                        // The merged analyses follow the last trace.
                        let kept = dump_one(&mut buffered, &info, input, opts, false);
                        if done.send((i, kept, buffered.into_inner())).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(done);
            let mut pending = BTreeMap::new();
            let mut want = 0;
            for (i, kept, bytes) in results {
                pending.insert(i, (kept, bytes));
                while let Some((kept, (out, err))) = pending.remove(&want) {
                    printer.replay(&out, &err)?;
                    let (outcome, collected) = kept?;
                    status.add(&outcome, opts);
                    if let Some(c) = collected {
                        merged.absorb(c, top);
                    }
                    want += 1;
                }
            }
            Ok(())
        });
        result?;
    } else {
        for (i, path) in paths.iter().enumerate() {
            let input = open(i);
            let info = FileInfo {
                path,
                size: input.as_ref().ok().and_then(Input::size),
            };
            let (outcome, collected) = dump_one(printer, &info, input, opts, false)?;
            status.add(&outcome, opts);
            if let Outcome::OutputClosed(_) = outcome {
                return Ok(status.status());
            }
            if let Some(c) = collected {
                merged.absorb(c, top);
            }
        }
    }

    let label = format!(
        "{} trace{} merged",
        paths.len(),
        if paths.len() == 1 { "" } else { "s" }
    );
    let info = FileInfo {
        path: &label,
        size: None,
    };
    let tables = Tables::listing(&merged.binaries);
    let mut symbols = SymbolMap::default();
    for (m, (_, guid, age)) in merged.binaries.iter().enumerate() {
        if let Some(pdb) = opts
            .pdbs
            .iter()
            .find(|p| p.identity.guid == *guid && p.identity.age == *age)
        {
            symbols.attach(m as u16, Arc::clone(&pdb.symbols));
        }
    }
    printer.begin_file(&info)?;
    let mut out = Out {
        printer,
        tally: Tally::default(),
        collected: None,
        mismatches: 0,
    };
    match analyses(
        &mut out,
        &info,
        opts,
        merged.summary.as_ref(),
        merged.stacks.as_ref(),
        &tables,
        &symbols,
    ) {
        Ok(()) => {}
        Err(Error::Write(e)) => return Err(e),
        Err(e) => return Err(e.into_io()),
    }
    if out.tally.errors > 0 {
        status.add_status(Status::Errors);
    }
    out.printer.end_file(true)?;
    Ok(status.status())
}

/// One trace of a merge: dumped into `printer`, what it counted kept.
fn dump_one<P: Printer>(
    printer: &mut P,
    file: &FileInfo<'_>,
    input: Result<Input, String>,
    opts: &Options,
    last: bool,
) -> io::Result<(Outcome, Option<Collected>)> {
    let kept = match input {
        Ok(input) => {
            let kept = dump_keeping(printer, file, input, opts)?;
            if !matches!(kept.0, Outcome::OutputClosed(_)) {
                printer.end_file(last)?;
            }
            kept
        }
        Err(message) => (dump_file(printer, file, Err(message), opts, last)?, None),
    };
    Ok(kept)
}

/// A printer of `opts`'s format that writes into memory, for a trace dumped on another
/// thread.
fn printer_into_memory(opts: &Options) -> Output<Vec<u8>, Vec<u8>> {
    printer(opts, Vec::new(), Vec::new())
}
