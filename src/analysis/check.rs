//! `/check`: is this trace fit for SPDConvert? (docs/output.md)
//!
//! What goes wrong between recording and optimising, from Microsoft's SPGO walkthrough, as
//! verdicts with a stable code each:
//!
//! | code                   | severity | when                                                    |
//! |------------------------|----------|---------------------------------------------------------|
//! | no-samples             | error    | no sample records at all                                |
//! | binary-without-samples | error    | a `/match` file's program ID has no sample records      |
//! | binary-not-in-trace    | error    | a `/match` file matches no program ID                   |
//! | spd-mismatch           | error    | a `/match` SPD is not the trace's build                 |
//! | no-lbr                 | note     | no LBR records: `SPDConvert /mode:IP`                   |
//! | lbr-present            | note     | enough LBR samples: `SPDConvert /mode:LBR`              |
//! | lbr-sparse             | note     | too few LBR samples beside IP samples: `/mode:IP`       |
//! | kernel-image           | note     | a kernel-mode image (`ntoskrnl.exe`, `hal.dll`, `*.sys`) |
//! | sparse                 | warning  | with `/pdb`: under 1 hit per 100 bytes of sampled code  |
//! | spd-not-profiled       | note     | a `/match` SPD holds no profile yet                     |
//! | lbr-thin               | warning  | with `/pdb` and `/image`: the LBR ranges cover under    |
//! |                        |          | half the blocks of the functions with IP samples        |
//! | spd-stale              | warning  | a matching SPD holds no counts for more than half of    |
//! |                        |          | a binary's 20 hottest functions (by IP samples, or by   |
//! |                        |          | the LBR ranges where they were read)                    |
//! | lbr-falsely-cold       | note     | with `/pdb` and `/image`: blocks ran by the flow that   |
//! |                        |          | no LBR range covered (raw counts call them cold)        |
//! | spd-pdb-disagree       | warning  | a matching SPD and the binary's PDB place functions of  |
//! |                        |          | the same name at different RVAs: more than a tenth of   |
//! |                        |          | the names both hold, or any of the 20 hottest           |
//!
//! The mode to give SPDConvert is LBR when the trace has at least [`LBR_ENOUGH`] LBR samples
//! (each LBR record and each of its REPEATs; or LBR records and no IP samples), else IP; a
//! trace with no sample records has none.

use std::collections::BTreeMap;

use crate::analysis::lbr::ranges::{self, RangeReport};
use crate::analysis::summary::Summary;
use crate::etl::recording::{Attributed, Recording};
use crate::format::diag::{Severity, codes};
use crate::format::progid::registry_form;
use crate::format::record::SampleKind;
use crate::format::tables::{Tables, base_name};
use crate::image::attached::SymbolMap;
use crate::image::ident::{Identity, Kind};
use crate::image::matching::{MatchResult, MatchStatus, MatchVerdict};
use crate::image::spdprofile::SpdProfile;
use crate::image::symbols::Symbols;

codes! {
/// The stable code of a `/check` verdict, with the severity it always has.
pub enum VerdictCode {
    /// The trace holds no sample records at all.
    NoSamples = "no-samples", Error;
    /// A `/match` file names a program ID that has no sample records.
    BinaryWithoutSamples = "binary-without-samples", Error;
    /// A `/match` file matches no program ID.
    BinaryNotInTrace = "binary-not-in-trace", Error;
    /// A `/match` SPD is not the trace's build: SPDConvert will refuse the trace for it.
    SpdMismatch = "spd-mismatch", Error;
    /// With `/pdb`: fewer than 1 hit per 100 bytes of the sampled functions' code.
    Sparse = "sparse", Warning;
    /// No LBR records: `SPDConvert /mode:IP`.
    NoLbr = "no-lbr", Note;
    /// Enough LBR records for `SPDConvert /mode:LBR`.
    LbrPresent = "lbr-present", Note;
    /// LBR records, but too few to rely on beside the IP samples: `/mode:IP`.
    LbrSparse = "lbr-sparse", Note;
    /// A kernel-mode image (`ntoskrnl.exe`, `hal.dll`, `*.sys`).
    KernelImage = "kernel-image", Note;
    /// A `/match` SPD holds no profile yet: the first import fills it.
    SpdNotProfiled = "spd-not-profiled", Note;
    /// With `/pdb` and `/image`: the LBR ranges cover under half of the blocks of the
    /// functions with IP samples.
    LbrThin = "lbr-thin", Warning;
    /// A matching `/match` SPD holds no counts for more than half of a binary's
    /// [`HOTTEST`] hottest functions (by IP samples, or by the LBR ranges where they were
    /// read).
    SpdStale = "spd-stale", Warning;
    /// With `/pdb` and `/image`: blocks that ran by the flow (section 18) but that no LBR
    /// range covered, which SPGO would call cold from the raw counts.
    LbrFalselyCold = "lbr-falsely-cold", Note;
    /// A matching `/match` SPD and the binary's PDB (`/pdb` or `/symbols`) place functions
    /// of the same name at different RVAs: more than a tenth of the names both hold
    /// ([`DISAGREE_SHARE`]), or any of the binary's [`HOTTEST`] hottest functions.
    SpdPdbDisagree = "spd-pdb-disagree", Warning;
    /// An ETL with no PMC or LBR samples (timer samples only): SPTAggregate needs a
    /// recording with `-PmcProfile` or `-LastBranch`.
    EtlNoSpgoSamples = "etl-no-spgo-samples", Warning;
    /// An ETL binary with samples and no PDB identity (`DbgID_RSDS`): its GUID and age are
    /// unknown, and the SPT cannot name it.
    EtlNoIdentity = "etl-no-identity", Warning;
    /// An ETL whose logger lost events.
    EtlEventsLost = "etl-events-lost", Warning;
}
}

/// One verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verdict {
    /// The binary it concerns, if one.
    pub progid: Option<u16>,
    /// Its stable code, which says how much it matters.
    pub code: VerdictCode,
    /// What it says.
    pub message: String,
}

impl Verdict {
    /// How much it matters.
    pub(crate) fn severity(&self) -> Severity {
        self.code.severity()
    }
}

/// What one binary holds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckBinary {
    /// Its program ID.
    pub progid: u16,
    /// Its name.
    pub name: String,
    /// Its sample records.
    pub records: u64,
    /// Per source present (the IP events, `LBR`, `ETW_CALLSTACK`, in that order): records
    /// and hits (samples, branches, and the call stacks' hits).
    pub events: Vec<(SampleKind, u64, u128)>,
    /// Whether it has LBR records.
    pub lbr: bool,
    /// Its LBR samples: each LBR record and each of its REPEATs.
    pub lbr_samples: u128,
}

/// The SPDConvert mode a trace calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Mode {
    /// `/mode:LBR`: the trace has enough LBR samples (or only those).
    Lbr,
    /// `/mode:IP`.
    Ip,
    /// None: the trace holds no sample records, and SPDConvert can make nothing of it.
    Unusable,
}

impl Mode {
    /// `LBR` or `IP`; `None` when the trace is not usable.
    pub(crate) fn as_str(self) -> Option<&'static str> {
        match self {
            Mode::Lbr => Some("LBR"),
            Mode::Ip => Some("IP"),
            Mode::Unusable => None,
        }
    }
}

/// The check of one trace.
#[derive(Clone, Debug)]
#[non_exhaustive]
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
    pub(crate) fn count(&self, severity: Severity) -> u64 {
        self.verdicts
            .iter()
            .filter(|v| v.severity() == severity)
            .count() as u64
    }
}

/// Whether a binary's name is a kernel-mode image's.
fn kernel_image(name: &str) -> bool {
    let base = base_name(name).to_ascii_lowercase();
    base == "ntoskrnl.exe" || base == "hal.dll" || base.ends_with(".sys")
}

/// The verdicts being found.
#[derive(Default)]
struct Verdicts(Vec<Verdict>);

impl Verdicts {
    fn add(&mut self, progid: Option<u16>, code: VerdictCode, message: String) {
        self.0.push(Verdict {
            progid,
            code,
            message,
        });
    }
}

/// Checks a trace from its summary (every count), its tables, the `/pdb` symbols and the
/// `/match` verdicts.
pub(crate) fn check(
    summary: &Summary,
    tables: &Tables,
    symbols: &SymbolMap,
    matches: &[MatchResult<'_>],
) -> CheckReport {
    let mut verdicts = Verdicts::default();
    let binaries: Vec<CheckBinary> = (0..tables.progid_count() as u16)
        .map(|progid| {
            binary(
                summary,
                tables,
                symbols.get(Some(progid)),
                progid,
                &mut verdicts,
            )
        })
        .collect();
    let usable = summary.all_records() > 0;
    if !usable {
        verdicts.add(
            None,
            VerdictCode::NoSamples,
            "the trace holds no sample records at all: nothing to optimise with".to_owned(),
        );
    }
    for m in matches {
        matched(summary, tables, m, &mut verdicts);
        stale(summary, symbols, m, &mut verdicts);
        disagree(summary, symbols, m, &mut verdicts);
    }
    let mode = match usable {
        true => mode(&binaries, &mut verdicts),
        false => Mode::Unusable,
    };
    let mut verdicts = verdicts.0;
    verdicts.sort_by_key(|v| std::cmp::Reverse(v.severity()));
    CheckReport {
        binaries,
        verdicts,
        mode,
    }
}

/// The verdicts of an ETL's recording (SPEC section 19), beside those of its aggregation.
pub(crate) fn etl(report: &mut CheckReport, recording: &Recording, attributed: &Attributed) {
    let mut verdicts = Verdicts::default();
    let u = attributed.unattributed;
    let spgo = u.pmc
        + u.lbr
        + attributed
            .binaries
            .iter()
            .map(|b| b.pmc_total() + b.lbr)
            .sum::<u64>();
    if spgo == 0 {
        let timer: u64 = u.timer + attributed.binaries.iter().map(|b| b.timer).sum::<u64>();
        verdicts.add(
            None,
            VerdictCode::EtlNoSpgoSamples,
            format!(
                "the recording holds no PMC or LBR samples ({timer} timer samples): \
                 SPTAggregate needs one made with xperf -PmcProfile or -LastBranch"
            ),
        );
    }
    for b in attributed.binaries.iter().filter(|b| b.identity.is_none()) {
        verdicts.add(
            None,
            VerdictCode::EtlNoIdentity,
            format!(
                "{} has {} samples but no PDB identity (no DbgID_RSDS event; xperf -merge adds \
                 them): its GUID and age are unknown, and the SPT leaves it out",
                b.name,
                b.total()
            ),
        );
    }
    if let Some(lost) = recording.header.map(|h| h.events_lost).filter(|&n| n > 0) {
        verdicts.add(
            None,
            VerdictCode::EtlEventsLost,
            format!(
                "the logger lost {lost} events: samples are missing (larger or more buffers: \
                 xperf -BufferSize, -MinBuffers)"
            ),
        );
    }
    report.verdicts.extend(verdicts.0);
    report
        .verdicts
        .sort_by_key(|v| std::cmp::Reverse(v.severity()));
}

/// The share of the sampled functions' basic blocks under which the LBR ranges are thin: a
/// profile that leaves most of the blocks of the code that runs without a count has SPGO
/// treat them as cold, which is the opposite of what it was recorded for. No figure is
/// published by SPGO; this is ours (docs/guide.md, "Before SPDConvert").
pub(crate) const THIN: f64 = 0.5;

/// The `lbr-thin` verdict of each binary whose LBR ranges were read: of the functions with
/// IP samples, the blocks the ranges cover.
pub(crate) fn thin(
    report: &mut CheckReport,
    summary: &Summary,
    symbols: &SymbolMap,
    ranges: &RangeReport,
) {
    for b in ranges.binaries.iter().filter(|b| b.order.is_some()) {
        let (Some(functions), Some(code)) =
            (symbols.get(Some(b.progid)), symbols.code(Some(b.progid)))
        else {
            continue;
        };
        let mut sampled: BTreeMap<u32, ()> = BTreeMap::new();
        for table in summary.ip_tables(b.progid) {
            sampled.extend(
                table
                    .iter()
                    .filter_map(|(rva, _)| functions.lookup(rva).map(|(f, _)| (f.rva, ()))),
            );
        }
        let (mut blocks, mut covered) = (0u64, 0u64);
        for &rva in sampled.keys() {
            let (all, hit) = match b.functions.iter().find(|f| f.rva == rva) {
                Some(f) => (f.blocks, f.covered),
                None => (ranges::blocks_of(functions, code, rva, &b.counts).0, 0),
            };
            blocks += u64::from(all);
            covered += u64::from(hit);
        }
        if blocks > 0 && (covered as f64) < THIN * blocks as f64 {
            report.verdicts.push(Verdict {
                progid: Some(b.progid),
                code: VerdictCode::LbrThin,
                message: format!(
                    "the LBR ranges cover {covered} of the {blocks} blocks of the {} functions \
                     with IP samples ({:.2}%): SPGO will see the rest as cold; record longer",
                    sampled.len(),
                    100.0 * crate::analysis::share(covered.into(), blocks.into()),
                ),
            });
        }
    }
    report
        .verdicts
        .sort_by_key(|v| std::cmp::Reverse(v.severity()));
}

/// The share of a binary's flow on falsely-cold blocks above which `lbr-falsely-cold`
/// advises recording longer or at a higher rate: ours, as [`THIN`] is.
pub(crate) const FALSELY_COLD_ADVICE: f64 = 0.1;

/// The `lbr-falsely-cold` note of each binary whose flow has blocks that ran but that no
/// range covered: how many, and their share of the binary's flow (each block's flow times
/// its instructions).
pub(crate) fn falsely_cold(report: &mut CheckReport, ranges: &RangeReport) {
    for b in ranges.binaries.iter().filter(|b| b.order.is_some()) {
        let (mut blocks, mut cold, mut all) = (0u64, 0u128, 0u128);
        for f in b.cfg.functions.iter().filter(|f| f.raw.is_none()) {
            for k in &f.blocks {
                let weight = u128::from(k.flow.unwrap_or(0)) * u128::from(k.instructions);
                all = all.saturating_add(weight);
                if k.flow.unwrap_or(0) > 0 && k.observed.is_none() {
                    blocks += 1;
                    cold = cold.saturating_add(weight);
                }
            }
        }
        if blocks == 0 {
            continue;
        }
        let share = crate::analysis::share(cold, all);
        let advice = match share > FALSELY_COLD_ADVICE {
            true => "; record longer or at a higher rate, so that the records cover them",
            false => "",
        };
        report.verdicts.push(Verdict {
            progid: Some(b.progid),
            code: VerdictCode::LbrFalselyCold,
            message: format!(
                "{blocks} block{} ran by the flow but no LBR range covered {} ({:.2}% of the \
                 binary's flow): raw counts call {} cold{advice}",
                if blocks == 1 { "" } else { "s" },
                if blocks == 1 { "it" } else { "them" },
                100.0 * share,
                if blocks == 1 { "it" } else { "them" },
            ),
        });
    }
    report
        .verdicts
        .sort_by_key(|v| std::cmp::Reverse(v.severity()));
}

/// The fewest LBR samples `/check` recommends `SPDConvert /mode:LBR` for, when the trace
/// has IP samples too: a second of LBR sampling at xperf's default profile interval (1 ms),
/// each sample up to 32 branches. A sample is an LBR record and each of its REPEATs:
/// SPTAggregate folds identical records into one with a REPEAT, so the records as stored say
/// nothing of the volume. No figure is published by SPDConvert; this is ours (docs/guide.md,
/// "Before SPDConvert").
pub const LBR_ENOUGH: u64 = 1000;

/// The SPDConvert mode, from how much LBR data the trace has, with the verdict that says
/// why.
fn mode(binaries: &[CheckBinary], verdicts: &mut Verdicts) -> Mode {
    let (mut records, mut samples, mut branches, mut ip) = (0u64, 0u128, 0u128, 0u128);
    for b in binaries {
        samples = samples.saturating_add(b.lbr_samples);
        for &(source, r, hits) in &b.events {
            match source {
                SampleKind::Lbr => {
                    records += r;
                    branches += hits;
                }
                SampleKind::Ip(_) => ip += hits,
                SampleKind::CallStack => {}
            }
        }
    }
    let mut amount = format!(
        "{branches} branch{} in {samples} LBR sample{}",
        if branches == 1 { "" } else { "es" },
        if samples == 1 { "" } else { "s" }
    );
    if u128::from(records) != samples {
        let s = if records == 1 { "" } else { "s" };
        amount.push_str(&format!(
            " ({records} record{s} as stored, with their REPEATs)"
        ));
    }
    let enough = samples >= u128::from(LBR_ENOUGH);
    if records == 0 {
        let message = "no LBR records (a CPU or VM without LBR, or perfcore.ini not set): use \
                       SPDConvert /mode:IP";
        verdicts.add(None, VerdictCode::NoLbr, message.to_owned());
        Mode::Ip
    } else if enough || ip == 0 {
        let message = if enough {
            format!("{amount}: use SPDConvert /mode:LBR")
        } else {
            format!(
                "{amount}, and no IP samples: SPDConvert /mode:LBR, though fewer than \
                 {LBR_ENOUGH} samples make a thin profile"
            )
        };
        verdicts.add(None, VerdictCode::LbrPresent, message);
        Mode::Lbr
    } else {
        let message = format!(
            "LBR: {amount}: too few beside {ip} IP samples (fewer than {LBR_ENOUGH} \
             samples); use SPDConvert /mode:IP, or re-record with xperf's -LastBranch"
        );
        verdicts.add(None, VerdictCode::LbrSparse, message);
        Mode::Ip
    }
}

/// What binary `progid` holds, and its verdicts: a kernel image, sparse samples.
fn binary(
    summary: &Summary,
    tables: &Tables,
    symbols: Option<&Symbols>,
    progid: u16,
    verdicts: &mut Verdicts,
) -> CheckBinary {
    let name = tables.binary_name(progid);
    // The hits of an IP event or LBR are its samples or branches, /summary's totals; a
    // call stack's are its records' hits, each record once.
    let events: Vec<(SampleKind, u64, u128)> = summary
        .sources(progid)
        .map(|t| match t.source {
            SampleKind::CallStack => (t.source, t.records, t.record_hits),
            _ => (t.source, t.records, t.total),
        })
        .collect();
    if kernel_image(&name) {
        verdicts.add(
            Some(progid),
            VerdictCode::KernelImage,
            format!(
                "{name} is a kernel-mode image: SPTAggregate includes kernel samples unless \
                 given /nokernel"
            ),
        );
    }
    if let Some(symbols) = symbols {
        density(summary, symbols, progid, &name, verdicts);
    }
    CheckBinary {
        progid,
        records: summary.records(Some(progid)),
        lbr: events.iter().any(|e| e.0 == SampleKind::Lbr),
        lbr_samples: summary
            .sources(progid)
            .find(|t| t.source == SampleKind::Lbr)
            .map_or(0, |t| t.record_hits),
        name,
        events,
    }
}

/// The `sparse` verdict: the IP samples' density over the sampled functions' code.
fn density(summary: &Summary, symbols: &Symbols, progid: u16, name: &str, verdicts: &mut Verdicts) {
    let mut functions: BTreeMap<u32, u32> = BTreeMap::new();
    let mut hits = 0u128;
    for table in summary.ip_tables(progid) {
        for (rva, h) in table.iter() {
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
        verdicts.add(
            Some(progid),
            VerdictCode::Sparse,
            format!(
                "{name}: {hits} IP hit{} over {bytes} bytes of code in {} sampled function{}, \
                 fewer than 1 per 100 bytes; sample about {longer} times longer",
                if hits == 1 { "" } else { "s" },
                functions.len(),
                if functions.len() == 1 { "" } else { "s" },
            ),
        );
    }
}

/// The verdicts on one `/match` file: none when it matches a binary with samples (and, for
/// an SPD, one that holds a profile).
fn matched(summary: &Summary, tables: &Tables, m: &MatchResult<'_>, verdicts: &mut Verdicts) {
    let (Some(v), Ok(id)) = (m.verdict, &m.file.identity) else {
        return;
    };
    match (v.status, v.progid) {
        (MatchStatus::Match, Some(progid)) if summary.records(Some(progid)) == 0 => verdicts.add(
            Some(progid),
            VerdictCode::BinaryWithoutSamples,
            format!(
                "{} matches progid {progid} ({}), which has no sample records: was it left \
                 out by SPTAggregate's /binary, or not run while recording?",
                m.file.path,
                tables.binary_name(progid)
            ),
        ),
        (MatchStatus::Match, _) => {}
        (status, progid) if id.kind == Kind::Spd => verdicts.add(
            progid,
            VerdictCode::SpdMismatch,
            spd_mismatch(m, id, v, status, tables),
        ),
        (status, progid) => verdicts.add(
            progid,
            VerdictCode::BinaryNotInTrace,
            format!(
                "{} is not in the trace ({status}): SPDConvert would find no samples of this \
                 build",
                m.file.path
            ),
        ),
    }
    if id.spd.as_ref().is_some_and(|spd| !spd.profiled) {
        verdicts.add(
            v.progid.filter(|_| v.status == MatchStatus::Match),
            VerdictCode::SpdNotProfiled,
            format!(
                "{} holds no profile yet: the first SPDConvert import fills it",
                m.file.path
            ),
        );
    }
}

/// How many of a binary's hottest functions `spd-stale` looks up in the SPD.
pub const HOTTEST: usize = 20;

/// The `spd-stale` verdict of a `/match` SPD that matches a binary with IP samples, holds a
/// profile and whose functions are named (by a PDB or by the SPD itself): of the binary's
/// [`HOTTEST`] functions with the most IP samples, those the SPD holds no counts for (entry
/// count 0 and every block count 0, or no record with code at that RVA). More than half
/// without counts is the verdict: a few hot functions without counts are what sampling
/// leaves (a short import, a function hot only in this run), most of them means the SPD was
/// trained on another workload, or before this code was hot. No figure is published by
/// SPGO; this is ours (docs/output.md, "Is the trace fit for SPDConvert"). Where the LBR
/// ranges were read, [`stale_by_ranges`] ranks by them instead.
fn stale(summary: &Summary, symbols: &SymbolMap, m: &MatchResult<'_>, verdicts: &mut Verdicts) {
    let Some((progid, profile)) = profiled_spd(m) else {
        return;
    };
    let Some(functions) = symbols.get(Some(progid)) else {
        return;
    };
    let mut hits: BTreeMap<u32, u128> = BTreeMap::new();
    for table in summary.ip_tables(progid) {
        for (rva, n) in table.iter() {
            if let Some((f, _)) = functions.lookup(rva) {
                *hits.entry(f.rva).or_default() += n;
            }
        }
    }
    let mut hottest: Vec<(u32, u128)> = hits.into_iter().collect();
    hottest.sort_by_key(|&(rva, n)| (std::cmp::Reverse(n), rva));
    let hottest: Vec<u32> = hottest.iter().take(HOTTEST).map(|&(rva, _)| rva).collect();
    if let Some(message) = stale_message(m, profile, &hottest, "IP samples") {
        verdicts.add(Some(progid), VerdictCode::SpdStale, message);
    }
}

/// The share of the names an SPD and a PDB of one build both hold that may be placed at
/// different RVAs before `spd-pdb-disagree` is said: a tenth. One build's SPD and PDB come
/// from the same link and should agree on every function; a few may differ where the two
/// name functions differently (identical-code folding keeps one name of several), more
/// means one of the two is not of this link.
pub const DISAGREE_SHARE: f64 = 0.1;

/// How many functions `spd-pdb-disagree` gives as examples.
const DISAGREE_EXAMPLES: usize = 3;

/// The `spd-pdb-disagree` verdict of a `/match` SPD that matches a binary whose functions a
/// PDB names: of the names both hold (the SPD's functions with code, the PDB's functions),
/// those the two place at different RVAs (no RVA in common). Said when they are more than
/// [`DISAGREE_SHARE`] of the names, or include one of the binary's [`HOTTEST`] functions
/// with the most IP samples; with examples, the hottest first. Names come from the PDB.
fn disagree(summary: &Summary, symbols: &SymbolMap, m: &MatchResult<'_>, verdicts: &mut Verdicts) {
    let (Some(v), Some(Ok(profile))) = (m.verdict, &m.file.spd) else {
        return;
    };
    let (MatchStatus::Match, Some(progid)) = (v.status, v.progid) else {
        return;
    };
    // Only a PDB's functions: an SPD's own, attached where no PDB is, have no path.
    let Some((pdb, path)) = symbols.get(Some(progid)).and_then(|s| Some((s, s.path()?))) else {
        return;
    };
    let mut placed: BTreeMap<&str, (Vec<u32>, Vec<u32>)> = BTreeMap::new();
    for f in profile.functions.iter().filter(|f| f.emitted()) {
        placed.entry(&f.name).or_default().0.push(f.rva);
    }
    for f in pdb.iter() {
        if let Some((_, rvas)) = placed.get_mut(f.name) {
            rvas.push(f.rva);
        }
    }
    placed.retain(|_, (spd, pdb)| !pdb.is_empty() && !spd.is_empty());
    let both = placed.len();
    let differ: BTreeMap<&str, (u32, u32)> = placed
        .iter()
        .filter(|(_, (spd, pdb))| !spd.iter().any(|r| pdb.contains(r)))
        .map(|(name, (spd, pdb))| (*name, (spd[0], pdb[0])))
        .collect();
    if differ.is_empty() {
        return;
    }
    // The binary's hottest functions by IP samples, as the PDB names them.
    let mut hits: BTreeMap<u32, (u128, &str)> = BTreeMap::new();
    for table in summary.ip_tables(progid) {
        for (rva, n) in table.iter() {
            if let Some((f, _)) = pdb.lookup(rva) {
                let entry = hits.entry(f.rva).or_insert((0, f.name));
                entry.0 = entry.0.saturating_add(n);
            }
        }
    }
    let mut hottest: Vec<(u128, &str)> = hits.into_values().collect();
    hottest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    hottest.truncate(HOTTEST);
    let hot: Vec<&str> = (hottest.iter())
        .map(|&(_, name)| name)
        .filter(|name| differ.contains_key(name))
        .collect();
    if hot.is_empty() && (differ.len() as f64) <= DISAGREE_SHARE * both as f64 {
        return;
    }
    let mut examples: Vec<&str> = hot.clone();
    examples.extend(differ.keys().filter(|n| !hot.contains(n)));
    let examples: Vec<String> = examples
        .iter()
        .take(DISAGREE_EXAMPLES)
        .map(|name| {
            let (spd, pdb) = differ[name];
            format!("{name} at {spd:#010X} in the SPD, {pdb:#010X} in the PDB")
        })
        .collect();
    let message = format!(
        "{} and the PDB {} are of the same build but place {} of the {both} functions both \
         name at different RVAs ({} of the {} hottest): {}; functions are named by the PDB, and \
         one of the two files is not of this link",
        m.file.path,
        path.display(),
        differ.len(),
        hot.len(),
        hottest.len(),
        examples.join("; "),
    );
    verdicts.add(Some(progid), VerdictCode::SpdPdbDisagree, message);
}

/// The binary a `/match` SPD matches and its functions, when it holds a profile.
fn profiled_spd<'m>(m: &MatchResult<'m>) -> Option<(u16, &'m SpdProfile)> {
    let (Some(v), Some(Ok(profile)), Ok(id)) = (m.verdict, &m.file.spd, &m.file.identity) else {
        return None;
    };
    let (MatchStatus::Match, Some(progid)) = (v.status, v.progid) else {
        return None;
    };
    if id.spd.as_ref().is_some_and(|spd| !spd.profiled) {
        return None;
    }
    Some((progid, profile))
}

/// What `spd-stale` says of the `hottest` functions (their RVAs, hottest first, ranked
/// `by`), when more than half of them hold no counts in the SPD.
fn stale_message(
    m: &MatchResult<'_>,
    profile: &SpdProfile,
    hottest: &[u32],
    by: &str,
) -> Option<String> {
    let absent = hottest
        .iter()
        .filter(|&&rva| profile.function_at(rva).is_none())
        .count();
    let uncounted = hottest
        .iter()
        .filter(|&&rva| profile.function_at(rva).is_none_or(|f| !f.counted))
        .count();
    (2 * uncounted > hottest.len()).then(|| {
        format!(
            "{} holds no counts for {uncounted} of the {} hottest functions by {by} \
             ({absent} of them not in it at all): more than half, so it was trained on \
             another workload or before this code was hot; import a trace of this workload",
            m.file.path,
            hottest.len()
        )
    })
}

/// `spd-stale` ranked by the LBR ranges where they were read for the SPD's binary (its
/// [`HOTTEST`] functions by the instructions the ranges ran, as `/dyninst` ranks them):
/// replaces the verdict ranked by IP samples for that binary.
pub(crate) fn stale_by_ranges(
    report: &mut CheckReport,
    matches: &[MatchResult<'_>],
    ranges: &RangeReport,
) {
    for m in matches {
        let Some((progid, profile)) = profiled_spd(m) else {
            continue;
        };
        let read = ranges.binaries.iter().find(|b| b.progid == progid);
        let Some(b) = read.filter(|b| b.order.is_some() && !b.functions.is_empty()) else {
            continue;
        };
        let hottest: Vec<u32> = b.functions.iter().take(HOTTEST).map(|f| f.rva).collect();
        report
            .verdicts
            .retain(|v| !(v.code == VerdictCode::SpdStale && v.progid == Some(progid)));
        if let Some(message) = stale_message(m, profile, &hottest, "LBR ranges") {
            report.verdicts.push(Verdict {
                progid: Some(progid),
                code: VerdictCode::SpdStale,
                message,
            });
        }
    }
    report
        .verdicts
        .sort_by_key(|v| std::cmp::Reverse(v.severity()));
}

/// What `spd-mismatch` says: the words SPDConvert uses, and both identities.
fn spd_mismatch(
    m: &MatchResult<'_>,
    id: &Identity,
    v: MatchVerdict,
    status: MatchStatus,
    tables: &Tables,
) -> String {
    let spd = format!(
        "{} is for {} {{{}}} age {} (inferred)",
        m.file.path,
        id.binary(),
        registry_form(&id.guid),
        id.age
    );
    let trace = match (v.progid, v.entry) {
        (Some(p), Some(e)) => format!(
            "the trace's progid {p} ({}) is {{{}}} age {}",
            tables.binary_name(p),
            e.guid_string(),
            e.age
        ),
        _ => format!("no program ID of the trace is {}", id.binary()),
    };
    format!(
        "SPDConvert will refuse this trace for this SPD: SPD version incompatible ({status}): \
         {spd}; {trace}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_lists_every_code_in_the_table_order() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/check.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let listed: Vec<&str> = schema["properties"]["code"]["enum"]
            .as_array()
            .expect("an enum of the codes")
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        let codes: Vec<&str> = VerdictCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(listed, codes);
        let severities: Vec<&str> = VerdictCode::ALL
            .iter()
            .map(|c| c.severity().as_str())
            .collect();
        for s in severities {
            let known = schema["properties"]["severity"]["enum"].as_array().unwrap();
            assert!(known.iter().any(|k| k == s), "{s}");
        }
    }

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
