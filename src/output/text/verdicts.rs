//! The verdicts' lines: `/match` rows, identities, and how NEW differs from BASE.

use std::io::{self, Write};

use super::sink::*;
use super::summary;
use crate::analysis::compare::{Comparison, FunctionsCompared};
use crate::format::progid::registry_form;
use crate::format::tables::Tables;
use crate::image::ident::{Identity, Kind};
use crate::image::matching::{MatchResult, MatchStatus};

/// The cells of a `/match` line: file, kind, GUID, age, then the verdict and what it
/// concerns.
pub(crate) fn match_row(r: &MatchResult<'_>, tables: &Tables) -> [String; 5] {
    let file = clean(&r.file.path).into_owned();
    let (Ok(id), Some(v)) = (&r.file.identity, &r.verdict) else {
        let why = r.file.identity.as_ref().err().map(ToString::to_string);
        let why = why.unwrap_or_default();
        return [
            file,
            String::new(),
            String::new(),
            String::new(),
            format!("error: {why}"),
        ];
    };
    let progid = |p: u16| match tables.name(p) {
        Some(name) => format!("progid {p} ({})", name_text(name)),
        None => format!("progid {p}"),
    };
    let verdict = match (v.status, v.progid, v.entry) {
        (MatchStatus::Match, Some(p), _) => format!("match          {}", progid(p)),
        (MatchStatus::AgeMismatch, Some(p), Some(e)) if id.age_inferred() => format!(
            "age-mismatch   {} has age {} (the SPD's age is inferred: see docs/format.md)",
            progid(p),
            e.age
        ),
        (MatchStatus::AgeMismatch, Some(p), Some(e)) => {
            format!("age-mismatch   {} has age {}", progid(p), e.age)
        }
        (MatchStatus::GuidMismatch, Some(p), Some(e)) => format!(
            "guid-mismatch  {} is {{{}}} age {}",
            progid(p),
            e.guid_string(),
            e.age
        ),
        (status, ..) => status.to_string(),
    };
    [
        file,
        kind_name(id.kind).to_owned(),
        format!("{{{}}}", registry_form(&id.guid)),
        age(id),
        verdict,
    ]
}

/// `age 1`, and for an SPD, whose age is inferred, `age 1 (inferred)`.
pub(super) fn age(id: &Identity) -> String {
    match id.age_inferred() {
        true => format!("age {} (inferred)", id.age),
        false => format!("age {}", id.age),
    }
}

/// The last cell of an identity's row: the PDB an image names, or what an SPD holds.
pub(super) fn identity_more(id: &Identity) -> String {
    match (&id.spd, &id.pdb_path) {
        (Some(spd), _) => {
            let version = match spd.new_version() {
                true => format!("  (SPD version {:#X}, not seen before)", spd.version),
                false => String::new(),
            };
            format!(
                "binary {}  {} function{}  {}{version}",
                clean(&spd.binary),
                spd.functions,
                if spd.functions == 1 { "" } else { "s" },
                if spd.profiled {
                    "profiled"
                } else {
                    "not yet profiled"
                }
            )
        }
        (None, Some(pdb)) => format!("pdb {}", clean(pdb)),
        (None, None) => String::new(),
    }
}

/// How text names the kind of an image, PDB or SPD.
pub(super) fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Pe => "PE",
        Kind::Pdb => "PDB",
        _ => "SPD",
    }
}

/// `/compare`: the keys NEW samples more than BASE, of one binary and source.
pub(super) fn more_in_new(o: &mut impl Write, c: &Comparison) -> io::Result<()> {
    let shown = summary::of(c.missing.len(), c.more_in_new);
    writeln!(
        o,
        "  {} {}: what NEW samples more than BASE{shown}",
        clean(&c.name),
        c.source
    )?;
    writeln!(o, "      base      new  key")?;
    for m in &c.missing {
        writeln!(
            o,
            "    {:>6}  {:>7}  {}",
            format!("{:.2}%", m.base_share * 100.0),
            format!("{:.2}%", m.new_share * 100.0),
            clean(&m.key)
        )?;
    }
    Ok(())
}

/// `/compare /functions`: the keys of one binary whose inclusive share moved most.
pub(super) fn moved(o: &mut impl Write, f: &FunctionsCompared) -> io::Result<()> {
    writeln!(
        o,
        "  {} {}: the keys whose inclusive share moved most",
        clean(&f.name),
        f.source
    )?;
    writeln!(
        o,
        "    {:>9}  {:>9}  {:>9}  {:>9}  {:>8}  key",
        "base incl", "new incl", "base excl", "new excl", "delta"
    )?;
    let pct = |v: f64| format!("{:.2}%", v * 100.0);
    for k in &f.keys {
        writeln!(
            o,
            "    {:>9}  {:>9}  {:>9}  {:>9}  {:>8}  {}",
            pct(k.base_inclusive),
            pct(k.new_inclusive),
            pct(k.base_exclusive),
            pct(k.new_exclusive),
            format!("{:+.2}%", k.delta * 100.0),
            clean(&k.key)
        )?;
    }
    Ok(())
}
