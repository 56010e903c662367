//! What an ETL holds before it is an SPT (SPEC section 19): its log-file header (`/header`)
//! and the binaries its samples fall in (`/progid`), as the SPT would list them.
//!
//! ```text
//! ETL header                          {"type":"etl_header","path":...,"os":"6.2.9200",...}
//!   OS version            6.2.9200
//! Binaries with samples (65)          {"type":"etl_binary","path":...,"name":"ntoskrnl.exe",...}
//!   {GUID}  age 2  timer 73096 ...    {"type":"etl_unattributed","path":...,"timer":5184,...}
//! ```

use std::io::{self, Write};

use serde::Serialize;

use super::text::clean;
use super::{Json, Render, Text};
use crate::etl::recording::{Attributed, Recording};
use crate::format::progid::registry_form;

/// The log-file header and what the recording holds (`/header` of an ETL).
pub struct EtlHeaderSection<'a>(pub &'a Recording, pub &'a Attributed);

/// The binaries the samples fall in, and the samples in none (`/progid` of an ETL).
pub struct EtlBinariesSection<'a>(pub &'a Attributed);

/// The heading of an ETL's samples, one per line (`/event` of an ETL).
pub struct EtlEventsHeading;

/// One sample or LBR record of an ETL (`/event`), in the order of the file.
pub struct EtlEvent<'a> {
    /// Seconds from the log-file header's event.
    pub time: f64,
    /// `timer`, `pmc` or `lbr`.
    pub kind: &'static str,
    /// A PMC sample's profile source.
    pub source: Option<u16>,
    /// The process, when known.
    pub process: Option<u32>,
    /// The thread.
    pub thread: u32,
    /// The instruction pointer; of an LBR record, its newest branch's source.
    pub address: u64,
    /// The binary it falls in and its RVA there.
    pub place: Option<(&'a str, u32)>,
    /// An LBR record's pairs.
    pub pairs: Option<usize>,
}

/// A FILETIME (100 ns since 1601-01-01, UTC) in ISO 8601, to the millisecond:
/// `2020-07-29T00:07:00.623Z`.
pub fn iso8601(filetime: u64) -> String {
    let ms = filetime / 10_000;
    let (days, ms) = (ms / 86_400_000, ms % 86_400_000);
    // Days from 1601-01-01 to 1970-01-01: 134,774.
    let (y, m, d) = civil(days as i64 - 134_774);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        ms / 3_600_000,
        ms / 60_000 % 60,
        ms / 1000 % 60,
        ms % 1000
    )
}

/// The civil date of `days` since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The samples of every kind: timer, PMC, LBR records.
fn totals(a: &Attributed) -> (u64, u64, u64) {
    let u = a.unattributed;
    a.binaries
        .iter()
        .fold((u.timer, u.pmc, u.lbr), |(t, p, l), b| {
            (t + b.timer, p + b.pmc_total(), l + b.lbr)
        })
}

impl Render for EtlHeaderSection<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let EtlHeaderSection(r, a) = *self;
        t.section(format_args!("ETL header"))?;
        match r.header {
            Some(h) => {
                let (major, minor, build) = h.os;
                writeln!(t, "  OS version            {major}.{minor}.{build}")?;
                writeln!(t, "  Processors            {}", h.processors)?;
                writeln!(t, "  Pointer size          {}", h.pointer_size)?;
                writeln!(
                    t,
                    "  Buffers               {} (the logger wrote {})",
                    r.buffers, h.buffers_written
                )?;
                writeln!(
                    t,
                    "  Events                {} ({} lost)",
                    r.events, h.events_lost
                )?;
                writeln!(t, "  Start                 {}", iso8601(h.start))?;
                writeln!(
                    t,
                    "  End                   {} ({:.2} s)",
                    iso8601(h.end),
                    h.end.saturating_sub(h.start) as f64 / 1e7
                )?;
            }
            None => {
                writeln!(t, "  (no log-file header: the first event is another)")?;
                writeln!(t, "  Buffers               {}", r.buffers)?;
                writeln!(t, "  Events                {}", r.events)?;
            }
        }
        let (timer, pmc, lbr) = totals(a);
        // No public recording holds PMC samples or LBR records: their layouts are inferred.
        let inferred = |n: u64| if n > 0 { " (layout inferred)" } else { "" };
        writeln!(t, "  Timer samples         {timer}")?;
        writeln!(t, "  PMC samples           {pmc}{}", inferred(pmc))?;
        writeln!(t, "  LBR records           {lbr}{}", inferred(lbr))
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        let EtlHeaderSection(r, a) = *self;
        let h = r.header;
        let (timer, pmc, lbr) = totals(a);
        j.line(&HeaderLine {
            path: j.path,
            os: h.map(|h| format!("{}.{}.{}", h.os.0, h.os.1, h.os.2)),
            processors: h.map(|h| h.processors),
            pointer_size: h.map(|h| h.pointer_size),
            buffers: r.buffers,
            events: r.events,
            events_lost: h.map(|h| h.events_lost),
            start: h.map(|h| iso8601(h.start)),
            end: h.map(|h| iso8601(h.end)),
            timer,
            pmc,
            lbr,
            inferred: [("pmc", pmc), ("lbr", lbr)]
                .into_iter()
                .filter(|&(_, n)| n > 0)
                .map(|(what, _)| what)
                .collect(),
        })
    }
}

impl Render for EtlBinariesSection<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let a = self.0;
        t.section(format_args!(
            "Binaries with samples ({}), as the SPT would list them",
            a.binaries.len()
        ))?;
        // Fixed widths, as /progid of an SPT has them: a diff of two recordings' binaries
        // shows what changed.
        for b in &a.binaries {
            let id = match &b.identity {
                Some(id) => format!("{{{}}}  age {:<4}", registry_form(&id.guid), id.age),
                None => format!("{:<48}", "(no PDB identity: not in the SPT)"),
            };
            let pdb = b
                .identity
                .as_ref()
                .map_or(String::new(), |id| format!(" ({})", clean(&id.pdb)));
            writeln!(
                t,
                "  {id}  timer {:<9} pmc {:<9} lbr {:<9} processes {:<4} {}{pdb}",
                b.timer,
                b.pmc_total(),
                b.lbr,
                b.processes.len(),
                clean(&b.name)
            )?;
        }
        let u = a.unattributed;
        writeln!(
            t,
            "  {:<48}  timer {:<9} pmc {:<9} lbr {:<9}",
            "(in no binary: unattributed)", u.timer, u.pmc, u.lbr
        )
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        let a = self.0;
        for b in &a.binaries {
            j.line(&BinaryLine {
                path: j.path,
                name: &b.name,
                guid: b.identity.as_ref().map(|id| registry_form(&id.guid)),
                age: b.identity.as_ref().map(|id| id.age),
                pdb: b.identity.as_ref().map(|id| id.pdb.as_str()),
                timer: b.timer,
                pmc: b.pmc_total(),
                lbr: b.lbr,
                processes: b.processes.iter().copied().collect(),
            })?;
        }
        let u = a.unattributed;
        j.line(&UnattributedLine {
            path: j.path,
            timer: u.timer,
            pmc: u.pmc,
            lbr: u.lbr,
        })
    }
}

impl Render for EtlEventsHeading {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        t.section(format_args!(
            "Samples, in the order of the file (each processor's buffers in turn)"
        ))
    }

    fn json(&self, _: &mut Json<'_>) -> io::Result<()> {
        Ok(())
    }
}

impl Render for EtlEvent<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        let kind = match (self.kind, self.source, self.pairs) {
            (_, Some(source), _) => format!("pmc:{source}"),
            ("lbr", _, Some(n)) => format!("lbr:{n}"),
            (kind, ..) => kind.to_owned(),
        };
        let process = self.process.map_or("?".to_owned(), |p| p.to_string());
        let place = match self.place {
            Some((name, rva)) => format!("{}+{rva:#010X}", clean(name)),
            None => "(in no binary)".to_owned(),
        };
        writeln!(
            t,
            "  {:>12.6}  {kind:<8}  process {process:<6}  thread {:<6}  {:#018X}  {place}",
            self.time, self.thread, self.address
        )
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        j.line(&EventLine {
            path: j.path,
            time: self.time,
            kind: self.kind,
            source: self.source,
            process: self.process,
            thread: self.thread,
            address: self.address,
            binary: self.place.map(|(name, _)| name),
            rva: self.place.map(|(_, rva)| rva),
            pairs: self.pairs,
        })
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "etl_event")]
struct EventLine<'a> {
    path: &'a str,
    time: f64,
    kind: &'a str,
    source: Option<u16>,
    process: Option<u32>,
    thread: u32,
    address: u64,
    binary: Option<&'a str>,
    rva: Option<u32>,
    pairs: Option<usize>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "etl_header")]
struct HeaderLine<'a> {
    path: &'a str,
    os: Option<String>,
    processors: Option<u32>,
    pointer_size: Option<u8>,
    buffers: u64,
    events: u64,
    events_lost: Option<u32>,
    start: Option<String>,
    end: Option<String>,
    timer: u64,
    pmc: u64,
    lbr: u64,
    inferred: Vec<&'static str>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "etl_binary")]
struct BinaryLine<'a> {
    path: &'a str,
    name: &'a str,
    guid: Option<String>,
    age: Option<u32>,
    pdb: Option<&'a str>,
    timer: u64,
    pmc: u64,
    lbr: u64,
    processes: Vec<u32>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "etl_unattributed")]
struct UnattributedLine<'a> {
    path: &'a str,
    timer: u64,
    pmc: u64,
    lbr: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filetimes_are_iso_8601_dates() {
        assert_eq!(iso8601(116_444_736_000_000_000), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(132_404_548_206_236_167), "2020-07-29T00:07:00.623Z");
        assert_eq!(iso8601(0), "1601-01-01T00:00:00.000Z");
        // 2000-02-29, a leap day of a century year, 23:59:59.999.
        assert_eq!(iso8601(125_963_423_999_990_000), "2000-02-29T23:59:59.999Z");
        assert_eq!(iso8601(125_963_424_000_000_000), "2000-03-01T00:00:00.000Z");
        assert_eq!(
            iso8601(2_650_467_743_999_990_000),
            "9999-12-31T23:59:59.999Z"
        );
        // The largest FILETIME is a date too, never a panic.
        assert!(iso8601(u64::MAX).starts_with("60056-"));
    }
}
