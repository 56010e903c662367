//! The functions an SPD given with `/match` names, for the binaries no PDB names: its
//! records give each function's RVA and code size, and its linker-level name.

use std::sync::Arc;

use super::{Out, Plan};
use crate::format::error::Error;
use crate::format::progid::registry_form;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;
use crate::image::matching::{self, MatchFile, MatchStatus};
use crate::output::{FileInfo, Printer};

/// Attaches the functions of each `/match` SPD whose GUID and age are a program ID's of
/// `tables` to that binary, unless a PDB names it already, and says in a note where the
/// names came from, or why an SPD names nothing. `of` names what `tables` list ("this
/// trace", "the merged traces"). Nothing is attached or said when nothing names addresses:
/// no view, no `/check`, no records printed.
pub(super) fn attach<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    tables: &Tables,
    plan: &Plan,
    of: &str,
    symbols: &mut SymbolMap,
) -> Result<(), Error> {
    if plan.views.is_empty() && !plan.check && !plan.sections.event {
        return Ok(());
    }
    for given in &plan.matches {
        if let Some(note) = name_from(given, tables, of, symbols) {
            out.print(|p| p.note(file, &note))?;
        }
    }
    Ok(())
}

/// Attaches what `given` names, when it is an SPD; the note that says so.
fn name_from(
    given: &MatchFile,
    tables: &Tables,
    of: &str,
    symbols: &mut SymbolMap,
) -> Option<String> {
    let (Ok(id), Some(read)) = (&given.identity, &given.spd) else {
        return None;
    };
    let path = &given.path;
    let verdict = matching::judge(id, tables);
    let progid = match (verdict.status, verdict.progid) {
        (MatchStatus::Match, Some(progid)) => progid,
        (status, _) => {
            return Some(format!(
                "the SPD {path} names no function of {of}: it is {{{}}} age {} (inferred), \
                 which matches no program ID ({status})",
                registry_form(&id.guid),
                id.age
            ));
        }
    };
    let binary = format!("progid {progid} ({})", tables.binary_name(progid));
    if symbols.get(Some(progid)).is_some() {
        return Some(format!(
            "the SPD {path} names no function of {binary}: a PDB names them"
        ));
    }
    Some(match read {
        Ok(profile) => {
            symbols.attach(progid, Arc::clone(&profile.symbols));
            format!(
                "functions of {binary} named from the SPD {path} (no PDB): {} functions with \
                 code (RVA and size inferred), linker-level names, no source lines or inline \
                 frames",
                profile.symbols.len()
            )
        }
        Err(e) => format!("the SPD {path} names no function of {binary}: {e}"),
    })
}
