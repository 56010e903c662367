//! `/check`: is this trace fit for SPDConvert? (SPEC 9.5)
//!
//! What goes wrong between recording and optimising, from Microsoft's SPGO walkthrough, as
//! verdicts with a stable code each:
//!
//! | code                   | severity | when                                                    |
//! |------------------------|----------|---------------------------------------------------------|
//! | no-samples             | error    | no sample records at all                                |
//! | binary-without-samples | error    | a `/match` file's program ID has no sample records      |
//! | binary-not-in-trace    | error    | a `/match` file matches no program ID                   |
//! | no-lbr                 | note     | no LBR records: `SPDConvert /mode:IP`                   |
//! | lbr-present            | note     | LBR records: `SPDConvert /mode:LBR` is possible         |
//! | kernel-image           | note     | a kernel-mode image (`ntoskrnl.exe`, `hal.dll`, `*.sys`) |
//! | sparse                 | warning  | with `/pdb`: under 1 hit per 100 bytes of sampled code  |
//!
//! The mode to give SPDConvert is LBR when the trace has LBR records, else IP.

use std::collections::BTreeMap;
use std::fmt;

use crate::analysis::summary::Summary;
use crate::format::opcode::Opcode;
use crate::format::tables::{Tables, base_name};
use crate::image::matching::{MatchResult, Status};
use crate::image::symbols::SymbolMap;

/// How much a verdict matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing.
    Note,
    /// Worth fixing.
    Warning,
    /// The trace will not do.
    Error,
}

impl Severity {
    /// `note`, `warning` or `error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The binary it concerns, if one.
    pub progid: Option<u16>,
    /// How much it matters.
    pub severity: Severity,
    /// Its stable code.
    pub code: &'static str,
    /// What it says.
    pub message: String,
}

/// What one binary holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckBinary {
    /// Its program ID.
    pub progid: u16,
    /// Its name.
    pub name: String,
    /// Its sample records.
    pub records: u64,
    /// Per event kind present (the IP events, `LBR`, `ETW_CALLSTACK`): records and hits.
    pub events: Vec<(&'static str, u64, u128)>,
    /// Whether it has LBR records.
    pub lbr: bool,
}

/// The SPDConvert mode a trace calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `/mode:LBR`: the trace has LBR records.
    Lbr,
    /// `/mode:IP`.
    Ip,
}

impl Mode {
    /// `LBR` or `IP`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Lbr => "LBR",
            Mode::Ip => "IP",
        }
    }
}

/// The check of one trace.
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// Each binary of the program-ID table, in progid order.
    pub binaries: Vec<CheckBinary>,
    /// The verdicts, errors first.
    pub verdicts: Vec<Verdict>,
    /// The mode to use.
    pub mode: Mode,
}

impl CheckReport {
    /// How many verdicts have `severity`.
    pub fn count(&self, severity: Severity) -> u64 {
        self.verdicts
            .iter()
            .filter(|v| v.severity == severity)
            .count() as u64
    }
}

/// Whether a binary's name is a kernel-mode image's.
fn kernel_image(name: &str) -> bool {
    let base = base_name(name).to_ascii_lowercase();
    base == "ntoskrnl.exe" || base == "hal.dll" || base.ends_with(".sys")
}

/// Checks a trace from its summary (every count), its tables, the `/pdb` symbols and the
/// `/match` verdicts.
pub fn check(
    summary: &Summary,
    tables: &Tables,
    symbols: &SymbolMap,
    matches: &[MatchResult<'_>],
) -> CheckReport {
    let mut verdicts = Vec::new();
    let mut verdict = |progid, severity, code, message: String| {
        verdicts.push(Verdict {
            progid,
            severity,
            code,
            message,
        });
    };
    let mut binaries = Vec::new();
    let mut any_lbr = false;
    for progid in 0..tables.progid_count() as u16 {
        let name = tables.binary_name(progid);
        let mut events: Vec<(&'static str, u64, u128)> = summary
            .ip_hits(progid)
            .iter()
            .map(|e| (e.event.name().unwrap_or_default(), e.records, e.total))
            .collect();
        let lbr = summary.lbr_hits(progid);
        if let Some(b) = &lbr {
            events.push(("LBR", b.records, b.total));
        }
        if let Some((records, hits)) = summary.callstack_totals(progid) {
            events.push((
                Opcode::ETW_CALLSTACK.name().unwrap_or_default(),
                records,
                hits,
            ));
        }
        any_lbr |= lbr.is_some();
        if kernel_image(&name) {
            verdict(
                Some(progid),
                Severity::Note,
                "kernel-image",
                format!(
                    "{name} is a kernel-mode image: SPTAggregate includes kernel samples unless \
                     given /nokernel"
                ),
            );
        }
        if let Some(symbols) = symbols.get(Some(progid)) {
            // Sample density over the sampled functions' code.
            let mut functions: BTreeMap<u32, u32> = BTreeMap::new();
            let mut hits = 0u128;
            for e in summary.ip_hits(progid) {
                for (rva, h) in e.hits {
                    if let Some((f, _)) = symbols.lookup(rva)
                        && let Some(size) = f.size
                    {
                        functions.insert(f.rva, size);
                        hits += h;
                    }
                }
            }
            let bytes: u128 = functions.values().map(|&s| u128::from(s)).sum();
            if bytes > 0 && hits * 100 < bytes {
                let longer = bytes.div_ceil(hits.max(1) * 100).max(2);
                verdict(
                    Some(progid),
                    Severity::Warning,
                    "sparse",
                    format!(
                        "{name}: {hits} IP hit{} over {bytes} bytes of code in {} sampled \
                         function{}, fewer than 1 per 100 bytes; sample about {longer} times \
                         longer",
                        if hits == 1 { "" } else { "s" },
                        functions.len(),
                        if functions.len() == 1 { "" } else { "s" },
                    ),
                );
            }
        }
        binaries.push(CheckBinary {
            progid,
            name,
            records: summary.records(Some(progid)),
            events,
            lbr: lbr.is_some(),
        });
    }
    if summary.all_records() == 0 {
        verdict(
            None,
            Severity::Error,
            "no-samples",
            "the trace holds no sample records at all: nothing to optimise with".to_owned(),
        );
    }
    for m in matches {
        let Some(v) = m.verdict else { continue };
        match (v.status, v.progid) {
            (Status::Match, Some(progid)) if summary.records(Some(progid)) == 0 => verdict(
                Some(progid),
                Severity::Error,
                "binary-without-samples",
                format!(
                    "{} matches progid {progid} ({}), which has no sample records: was it \
                     left out by SPTAggregate's /binary, or not run while recording?",
                    m.file.path,
                    tables.binary_name(progid)
                ),
            ),
            (Status::Match, _) => {}
            (status, progid) => verdict(
                progid,
                Severity::Error,
                "binary-not-in-trace",
                format!(
                    "{} is not in the trace ({status}): SPDConvert would find no samples of \
                     this build",
                    m.file.path
                ),
            ),
        }
    }
    let mode = if any_lbr { Mode::Lbr } else { Mode::Ip };
    match mode {
        Mode::Ip => verdict(
            None,
            Severity::Note,
            "no-lbr",
            "no LBR records (a CPU or VM without LBR, or perfcore.ini not set): use \
             SPDConvert /mode:IP"
                .to_owned(),
        ),
        Mode::Lbr => verdict(
            None,
            Severity::Note,
            "lbr-present",
            "LBR records present: SPDConvert /mode:LBR is possible".to_owned(),
        ),
    }
    verdicts.sort_by_key(|v| std::cmp::Reverse(v.severity));
    CheckReport {
        binaries,
        verdicts,
        mode,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_images() {
        for name in [
            "ntoskrnl.exe",
            "C:\\Windows\\System32\\HAL.DLL",
            "tcpip.sys",
        ] {
            assert!(kernel_image(name), "{name}");
        }
        for name in ["app.exe", "sys.dll", "ntoskrnl.exe.bak"] {
            assert!(!kernel_image(name), "{name}");
        }
    }
}
