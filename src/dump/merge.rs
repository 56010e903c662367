//! `/merge`: several traces as one profile (docs/output.md, "Several traces as one").

use std::collections::HashMap;
use std::io;

use uuid::Uuid;

use super::build::BuildFile;
use super::many::each;
use super::{Out, Plan, Ran, Status, Traces, views};
use crate::analysis::summary::Summary;
use crate::format::error::Error;
use crate::format::progid::ProgramId;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;
use crate::output::{FileInfo, Printer};
use crate::views::kept::{Kept, Records};
use crate::views::profile::After;

/// The binaries of several traces merged by (GUID, age), numbered by first appearance.
#[derive(Default)]
struct Merged {
    binaries: Vec<(String, Uuid, u32)>,
    index: HashMap<(Uuid, u32), u16>,
    summary: Option<Summary>,
    records: Records,
}

impl Merged {
    /// The merged profile, with the symbols of each `/pdb` that fits a merged binary (a
    /// `/pdb` that fits none is reported), then those the `/symbols` path gives the rest.
    fn kept<P: Printer>(
        self,
        out: &mut Out<'_, P>,
        file: &FileInfo<'_>,
        plan: &Plan,
    ) -> Result<Kept, Error> {
        let mut symbols = SymbolMap::default();
        for build in BuildFile::all(plan) {
            let id = build.identity();
            let fits = self
                .binaries
                .iter()
                .position(|(_, guid, age)| *guid == id.guid && *age == id.age);
            match fits {
                Some(m) => build.attach(&mut symbols, m as u16),
                None => out.fail(file, &build.unused("any trace"))?,
            }
        }
        let tables = Tables::listing(&self.binaries);
        super::symbols::attach(out, file, &tables, plan, &mut symbols)?;
        super::spdnames::attach(out, file, &tables, plan, "the merged traces", &mut symbols)?;
        Ok(Kept {
            summary: self.summary,
            records: self.records,
            tables,
            symbols,
        })
    }

    /// Adds one trace's counts, its binaries renumbered into the merged ones.
    fn absorb(&mut self, c: Kept, top: usize) {
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
        for p in c.summary.iter().flat_map(Summary::progids) {
            seen.insert(p, map(p));
        }
        for p in c.records.progids() {
            seen.entry(p).or_insert_with(|| map(p));
        }
        let renumber = |p: u16| seen.get(&p).copied().unwrap_or(p);
        if let Some(summary) = c.summary {
            let summary = summary.renumber(renumber);
            self.summary
                .get_or_insert_with(|| Summary::new(top))
                .absorb(summary);
        }
        self.records.absorb(c.records.renumber(&renumber));
    }
}

/// `/merge`: dumps each trace (its sections and verdicts, as asked), then prints the views
/// of all of them as one profile, binaries merged by (GUID, age), as SPDConvert merges them:
/// a trace named twice counts twice. The `/pdb` files are judged against the merged
/// binaries, once: one that fits no trace is an error, one that fits some is not.
pub(super) fn merge<P: Printer>(
    printer: &mut P,
    plan: &Plan,
    traces: &Traces<'_>,
    ran: &mut Ran,
) -> io::Result<()> {
    let mut merged = Merged::default();
    let stopped = each(printer, plan, traces, false, |outcome, kept| {
        ran.add(outcome);
        if let Some(kept) = kept {
            merged.absorb(kept, plan.top);
        }
    })?;
    if stopped {
        return Ok(());
    }
    let label = format!(
        "{} trace{} merged",
        traces.len(),
        if traces.len() == 1 { "" } else { "s" }
    );
    let info = FileInfo {
        path: &label,
        size: None,
    };
    printer.begin_file(&info)?;
    let mut out = Out::new(printer);
    let mut kept = merged.kept(&mut out, &info, plan).map_err(Error::into_io)?;
    // Nothing reads the merged profile after its views.
    let after = After::default();
    views::show(&mut out, &info, plan, &mut kept, after).map_err(Error::into_io)?;
    if out.failed > 0 {
        ran.add_status(Status::Errors);
    }
    out.printer.end_file(true)
}
