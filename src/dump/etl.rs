//! An ETL given where a trace goes (SPEC section 19): read into its recording, attributed,
//! and aggregated into an SPT held in memory, which the steps of a trace then read as any
//! other; `/header` and `/progid` show the ETL's own header and binaries instead of the
//! aggregation's.

use std::fs::File;
use std::io::BufWriter;

use super::{Out, Plan};
use crate::etl::recording::{Attributed, Recording};
use crate::etl::spt;
use crate::format::diag::{Code, Diagnostic};
use crate::format::error::Error;
use crate::input::Input;
use crate::output::etl::{EtlBinariesSection, EtlHeaderSection};
use crate::output::{FileInfo, Printer};

/// An ETL read: what it recorded, its samples by binary, and what the aggregation left out.
pub(super) struct EtlRead {
    pub recording: Recording,
    pub attributed: Attributed,
    left_out: Vec<(String, u64)>,
}

/// Reads `input`, an ETL, and returns what it holds with its aggregation as a trace to
/// read; writes the aggregation where `/spt` says. `Err` is the message of a file refused.
pub(super) fn read(input: Input, plan: &Plan) -> Result<(EtlRead, Input), String> {
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
    let read = EtlRead {
        recording,
        attributed,
        left_out: aggregated.left_out,
    };
    Ok((read, Input::memory(bytes)))
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
    let r = &etl.recording;
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
    if sections.progid {
        out.print(|p| p.show(&EtlBinariesSection(&etl.attributed)))?;
    }
    if sections.event {
        let message = "/event of an ETL shows the records of sptdump's aggregation, folded \
                       and grouped, not the recording's samples in time order";
        out.print(|p| p.note(file, message))?;
    }
    if let Some(path) = &plan.spt {
        let message = format!(
            "wrote {}: sptdump's aggregation of the recording, {} binaries (SPEC 19)",
            path.display(),
            etl.attributed.binaries.len() - etl.left_out.len()
        );
        out.print(|p| p.note(file, &message))?;
    }
    for (name, samples) in &etl.left_out {
        let message = format!(
            "{name} has {samples} samples but no PDB identity (no DbgID_RSDS event): the SPT cannot name it, and leaves them out"
        );
        out.print(|p| p.note(file, &message))?;
    }
    Ok(())
}
