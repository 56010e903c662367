//! `/merge`: several traces as one profile (SPEC 9.7).

use std::collections::HashMap;
use std::io;
use std::sync::Arc;

use uuid::Uuid;

use super::many::each;
use super::{Collected, Error, Options, Out, RunStatus, Status, analyses};
use crate::analysis::stacks::StackCounts;
use crate::analysis::summary::Summary;
use crate::format::diag::Tally;
use crate::format::progid::ProgramId;
use crate::format::tables::Tables;
use crate::image::symbols::SymbolMap;
use crate::input::Input;
use crate::output::{FileInfo, Printer};

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
/// given is `paths[i]`. Several traces are decoded on every core when little of each is
/// printed, as [`crate::dump::run`] does.
pub fn merge<P: Printer>(
    printer: &mut P,
    paths: &[String],
    open: &(dyn Fn(usize) -> Result<Input, String> + Sync),
    opts: &Options,
) -> io::Result<Status> {
    let mut status = RunStatus::default();
    let mut merged = Merged::default();
    let top = opts.summary.or(opts.functions).unwrap_or(10);
    let stopped = each(printer, paths, open, opts, false, |outcome, collected| {
        status.add(&outcome, opts);
        if let Some(c) = collected {
            merged.absorb(c, top);
        }
    })?;
    if stopped {
        return Ok(status.status());
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
