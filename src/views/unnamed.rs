//! What the views that take a function's name (`/annotate:NAME`, `/callgraph:NAME`) say
//! when no function of the profile bears it: the closest names and the reason, an error;
//! or, when no binary it may be in has a PDB, which input is missing.
//!
//! ```text
//! /annotate:nosuch: no function of lbr.exe bears this name; the closest: rare_path, ...
//! /annotate:rotate: rotate is inlined into digest, tally (inline.exe), which hold its
//!     code: /annotate:digest shows its instructions
//! /annotate:classify: functions are named by a binary's PDB: give /pdb:FILE for lbr.exe
//! ```

use super::Profile;
use crate::analysis::named;
use crate::format::error::Error;
use crate::output::{Out, Printer};

/// How many of the closest names the error gives.
const CLOSEST: usize = 3;

/// Says why `wanted`, given to `/option`, names no function of `profile`: an error (the run
/// fails), or the PDB a view could not run without (said once the views are done). `shows`
/// says what the functions it was inlined into show of it (`/annotate:digest shows its
/// instructions`).
pub(super) fn unnamed<P: Printer>(
    profile: &Profile<'_>,
    out: &mut Out<'_, P>,
    option: &str,
    wanted: &str,
    shows: impl Fn(&str) -> String,
) -> Result<(), Error> {
    let Some(counted) = profile.counted() else {
        return Ok(());
    };
    let why = named::unnamed(&counted, wanted, CLOSEST);
    if why.looked_in.is_empty() && why.without_pdb.is_empty() && !wanted.contains('!') {
        // No binary has samples: there is nothing to name a function of.
        let message = format!("/{option}:{wanted}: the profile holds no samples");
        return out.print(|p| p.note(profile.file, &message));
    }
    let give = |binaries: &[String]| {
        binaries
            .iter()
            .map(|b| format!("give /pdb:FILE for {b}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if why.unlooked() {
        out.unable(format!(
            "/{option}:{wanted}: functions are named by a binary's PDB: {}",
            give(&why.without_pdb)
        ));
        return Ok(());
    }
    let mut parts = Vec::new();
    let bare = wanted.rsplit_once('!').map_or(wanted, |(_, f)| f);
    for (binary, into) in &why.inlined {
        let first = into.first().map_or("", String::as_str);
        let hold = if into.len() == 1 { "holds" } else { "hold" };
        parts.push(format!(
            "{bare} is inlined into {} ({binary}), which {hold} its code: {}",
            into.join(", "),
            shows(first)
        ));
    }
    if why.inlined.is_empty() {
        if why.looked_in.is_empty() {
            let binary = wanted.rsplit_once('!').map_or("", |(b, _)| b);
            parts.push(format!(
                "no binary of the profile with samples is named {binary}"
            ));
        } else {
            parts.push(format!(
                "no function of {} bears this name; the closest: {}",
                why.looked_in.join(", "),
                why.closest.join(", ")
            ));
        }
    }
    if !why.without_pdb.is_empty() {
        parts.push(format!(
            "{} not looked in (no PDB): {}",
            why.without_pdb.join(", "),
            give(&why.without_pdb)
        ));
    }
    let message = format!("/{option}:{wanted}: {}", parts.join("; "));
    out.fail(profile.file, &message)
}
