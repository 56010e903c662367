//! The verdicts' lines: `/match` rows, identities, and how NEW differs from BASE.

use std::io::{self, Write};

use super::sink::*;
use super::summary;
use crate::analysis::compare::{Comparison, FunctionsCompared};
use crate::format::progid::registry_form;
use crate::format::tables::Tables;
use crate::image::ident::{Identity, Kind};
use crate::image::matching::{MatchResult, MatchStatus};

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
