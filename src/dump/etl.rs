//! An ETL given where a trace goes (SPEC section 19): read into its recording, attributed,
//! and aggregated into an SPT held in memory, which the steps of a trace then read as any
//! other; `/header` and `/progid` show the ETL's own header and binaries instead of the
//! aggregation's.

use std::cell::Cell;
use std::fs::File;
use std::io::BufWriter;

use super::{Out, Plan};
use crate::etl::event::Events;
use crate::etl::kernel::{self, Kernel, Read, SampleKind};
use crate::etl::recording::{Attributed, Recording};
use crate::etl::spt;
use crate::format::diag::{Code, Diagnostic};
use crate::format::error::Error;
use crate::input::Input;
use crate::output::etl::{EtlBinariesSection, EtlEvent, EtlEventsHeading, EtlHeaderSection};
use crate::output::text::clean;
use crate::output::{FileInfo, Printer};

/// An ETL read: what it recorded, its samples by binary, and what the aggregation left out.
pub(super) struct EtlRead {
    pub recording: Recording,
    pub attributed: Attributed,
    left_out: Vec<(String, u64)>,
    /// The file again, for `/event` (its samples, one per line); `Err` on a pipe, read once.
    events: Cell<Option<Result<Input, ()>>>,
}

/// Reads `input`, an ETL, and returns what it holds with its aggregation as a trace to
/// read; writes the aggregation where `/spt` says. `Err` is the message of a file refused.
pub(super) fn read(mut input: Input, plan: &Plan) -> Result<(EtlRead, Input), String> {
    let recording = input.recording(|_| {}).map_err(|e| e.to_string())?;
    let attributed = recording.attribute();
    let aggregated = spt::aggregate(&attributed).map_err(|e| e.to_string())?;
    let bytes = aggregated
        .spt
        .to_bytes()
        .map_err(|e| format!("cannot aggregate the recording: {e}"))?;
    if let Some(path) = &plan.spt {
        let write = || -> std::io::Result<()> {
            let mut out = BufWriter::new(File::create(path)?);
            std::io::Write::write_all(&mut out, &bytes)?;
            out.into_inner().map_err(|e| e.into_error())?.sync_all()
        };
        write().map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let events = match plan.sections.event {
        false => None,
        true => match input.rewind() {
            Ok(true) => Some(Ok(input)),
            Ok(false) => Some(Err(())),
            Err(e) => return Err(e.to_string()),
        },
    };
    let read = EtlRead {
        recording,
        attributed,
        left_out: aggregated.left_out,
        events: Cell::new(events),
    };
    Ok((read, Input::memory(bytes)))
}

/// The recording's samples and LBR records, one per line, in the order of the file: a
/// second reading of it, placed by the images and threads the first one gathered.
fn events<P: Printer>(out: &mut Out<'_, P>, etl: &EtlRead, input: &mut Input) -> Result<(), Error> {
    let r = &etl.recording;
    let places = r.places();
    let origin = r.origin.unwrap_or(0);
    let frequency = r.header.map_or(1, |h| h.frequency.max(1));
    let pointer = r.pointer();
    out.print(|p| p.show(&EtlEventsHeading))?;
    let mut failed = None;
    let read = input.buffers(|buffer| {
        for event in Events::new(buffer.events).map_while(Result::ok) {
            if failed.is_some() {
                return;
            }
            let time = event.header.time().saturating_sub(origin) as f64 / frequency as f64;
            let line = match kernel::read(&event, pointer) {
                Read::Known(Kernel::Sample(s)) => {
                    let process = places.process(s.thread);
                    let (kind, source) = match s.kind {
                        SampleKind::Timer => ("timer", None),
                        SampleKind::Pmc(source) => ("pmc", Some(source)),
                    };
                    EtlEvent {
                        time,
                        kind,
                        source,
                        process,
                        thread: s.thread,
                        address: s.ip,
                        place: places.place(process, s.ip),
                        pairs: None,
                    }
                }
                Read::Known(Kernel::Lbr(l)) => {
                    let address = l.pairs().next().map_or(0, |(from, _)| from);
                    EtlEvent {
                        time,
                        kind: "lbr",
                        source: None,
                        process: Some(l.process),
                        thread: l.thread,
                        address,
                        place: places.place(Some(l.process), address),
                        pairs: Some(l.pairs().count()),
                    }
                }
                _ => continue,
            };
            if let Err(e) = out.print(|p| p.show(&line)) {
                failed = Some(e);
            }
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    // The file was read whole once: a second reading that fails is the file changing.
    read.map_err(|e| Error::read(e.offset(), std::io::Error::other(e.to_string())))
}

/// What a trace shows of an ETL before its profile: the header and the binaries, as the
/// sections ask; the buffers whose events stopped early; the binaries the SPT leaves out.
pub(super) fn sections<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    etl: &EtlRead,
    plan: &Plan,
) -> Result<(), Error> {
    let sections = plan.sections;
    if sections.header {
        out.print(|p| p.show(&EtlHeaderSection(&etl.recording, &etl.attributed)))?;
    }
    skipped(out, file, &etl.recording)?;
    if sections.progid {
        out.print(|p| p.show(&EtlBinariesSection(&etl.attributed)))?;
    }
    match etl.events.take() {
        Some(Ok(mut input)) => events(out, etl, &mut input)?,
        Some(Err(())) => {
            let message = "/event of an ETL reads it a second time: give a file, not a pipe";
            out.print(|p| p.note(file, message))?;
        }
        None => {}
    }
    if let Some(path) = &plan.spt {
        let message = format!(
            "wrote {}: sptdump's aggregation of the recording, {} binaries (SPEC 19)",
            path.display(),
            etl.attributed.binaries.len() - etl.left_out.len()
        );
        out.print(|p| p.note(file, &message))?;
    }
    pmc_sources(out, file, &etl.attributed)?;
    for (name, samples) in &etl.left_out {
        let message = format!(
            "{} has {samples} samples but no PDB identity (no DbgID_RSDS event): the SPT cannot name it, and leaves them out",
            clean(name)
        );
        out.print(|p| p.note(file, &message))?;
    }
    Ok(())
}

/// The buffers whose events stopped early: a warning at each of the first, a note for the
/// rest.
fn skipped<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    r: &Recording,
) -> Result<(), Error> {
    for s in &r.skipped {
        let u = s.unreadable;
        let what = match u.size {
            Some(size) => format!("an event of header type {:#04x} and size {size}", u.kind),
            None => format!(
                "an event of header type {:#04x} (marker {:#04x})",
                u.kind, u.marker
            ),
        };
        let offset = s.offset + (crate::etl::buffer::BUFFER_HEADER + u.at) as u64;
        out.report(Diagnostic::new(
            Code::EtlUnknownHeader,
            offset,
            format!(
                "buffer {} holds {what} that no reader knows or that leaves the buffer: the rest of the buffer is skipped",
                s.buffer
            ),
        ))?;
    }
    if r.skipped_count > r.skipped.len() as u64 {
        let more = r.skipped_count - r.skipped.len() as u64;
        out.print(|p| p.note(file, &format!("{more} more buffers stop early likewise")))?;
    }
    Ok(())
}

/// Which SPT event each PMC profile source was read as: by source ids, inferred.
fn pmc_sources<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    attributed: &Attributed,
) -> Result<(), Error> {
    let mut sources: Vec<u16> = attributed
        .binaries
        .iter()
        .filter(|b| b.identity.is_some())
        .flat_map(|b| b.pmc.keys().copied())
        .collect();
    sources.sort_unstable();
    sources.dedup();
    for source in sources {
        if let Some(opcode) = crate::etl::spt::pmc_opcode(source) {
            let message = format!(
                "PMC samples of profile source {source} are read as {opcode} (by the source ids \
                 xperf -pmcsources lists on Intel machines: inferred)"
            );
            out.print(|p| p.note(file, &message))?;
        }
    }
    Ok(())
}
