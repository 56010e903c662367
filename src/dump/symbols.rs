//! The symbols and images a `/symbols` path gives the binaries of a trace that no `/pdb`
//! or `/image` names.

use std::path::Path;
use std::sync::Arc;

use super::{Out, Plan};
use crate::format::error::Error;
use crate::format::progid::{ProgramId, registry_form};
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;
use crate::image::code::ImageFile;
use crate::image::ident::Identity;
use crate::image::matching::PdbFile;
use crate::image::symbolpath::{SymbolPath, pdb_name, unsafe_name};
use crate::image::symstore::{self, BinarySymbols};
use crate::output::verdicts::Found;
use crate::output::{FileInfo, Printer};

/// Looks the PDB and image of each binary without them up along the plan's symbol path,
/// attaches what fits, and prints a `symbols` line per binary looked up, with notes.
pub(super) fn attach<P: Printer>(
    out: &mut Out<'_, P>,
    file: &FileInfo<'_>,
    tables: &Tables,
    plan: &Plan,
    symbols: &mut SymbolMap,
) -> Result<(), Error> {
    let Some(path) = &plan.symbol_path else {
        return Ok(());
    };
    for note in path.notes() {
        out.print(|p| p.note(file, &note))?;
    }
    let entries = tables.progids.as_ref().map(|t| t.entries()).unwrap_or(&[]);
    for (i, entry) in entries.iter().enumerate() {
        let Ok(progid) = u16::try_from(i) else { break };
        let has_pdb = symbols.get(Some(progid)).is_some();
        let has_image = symbols.code(Some(progid)).is_some();
        if has_pdb && has_image {
            continue;
        }
        let name = tables.binary_name(progid);
        if let Some(why) = unsafe_name(&name) {
            let msg = format!("progid {progid} ({name:?}) is not looked up: {why}");
            out.print(|p| p.note(file, &msg))?;
            continue;
        }
        let mut line = BinarySymbols {
            progid,
            name: name.clone(),
            pdb: None,
            image: None,
            from: None,
            fetched: false,
        };
        let mut notes = Vec::new();
        if !has_pdb {
            look_pdb(path, entry, symbols, &mut line, &mut notes);
        }
        if !has_image {
            look_image(path, entry, symbols, &mut line, &mut notes);
        }
        for note in &notes {
            out.print(|p| p.note(file, note))?;
        }
        if line.pdb.is_none() && line.image.is_none() {
            if plan.strict {
                out.fail(
                    file,
                    &format!("no symbols found for {name} (progid {progid})"),
                )?;
            }
        } else {
            out.print(|p| p.show(&Found { file, found: &line }))?;
        }
        if plan.match_symbols && line.pdb.is_none() {
            let why = format!("the symbol path holds no PDB of {name} (progid {progid})");
            out.fail(file, &why)?;
        }
    }
    Ok(())
}

/// Whether `id` is the program ID's: the reason when it is not.
fn fits(id: &Identity, entry: &ProgramId) -> Result<(), String> {
    if id.guid == entry.guid && id.age == entry.age {
        Ok(())
    } else {
        Err(format!(
            "it is {{{}}} age {}, the trace wants {{{}}} age {}",
            registry_form(&id.guid),
            id.age,
            registry_form(&entry.guid),
            entry.age
        ))
    }
}

/// Looks the binary's PDB up; attaches it when one fits.
fn look_pdb(
    path: &SymbolPath,
    entry: &ProgramId,
    symbols: &mut SymbolMap,
    line: &mut BinarySymbols,
    notes: &mut Vec<String>,
) {
    let name = pdb_name(&line.name);
    let key = entry.symkey().to_string();
    let lookup = symstore::find(path, &name, &key, |p: &Path| {
        let pdb = PdbFile::read(p).map_err(|e| e.to_string())?;
        fits(&pdb.identity, entry)?;
        Ok(pdb)
    });
    notes.extend(lookup.notes);
    match lookup.found {
        Some(found) => {
            symbols.attach(line.progid, Arc::clone(&found.value.symbols));
            line.pdb = Some(found.file.display().to_string());
            line.from = Some(found.from);
            line.fetched = found.fetched;
        }
        None => notes.push(format!(
            "no PDB found for {} (progid {}); looked at {}",
            line.name,
            line.progid,
            symstore::looked_at(&lookup.looked)
        )),
    }
}

/// Looks the binary's image up by its name; attaches the first whose identity fits.
fn look_image(
    path: &SymbolPath,
    entry: &ProgramId,
    symbols: &mut SymbolMap,
    line: &mut BinarySymbols,
    notes: &mut Vec<String>,
) {
    for (candidate, from) in symstore::image_candidates(path, &line.name) {
        let image = ImageFile::read(&candidate).map_err(|e| e.to_string());
        match image.and_then(|i| fits(&i.identity, entry).map(|()| i)) {
            Ok(image) => {
                symbols.attach_code(line.progid, Arc::clone(&image.code));
                line.image = Some(candidate.display().to_string());
                line.from.get_or_insert(from);
                return;
            }
            Err(why) => notes.push(format!(
                "{} (found by {from}) is not used: {why}",
                candidate.display()
            )),
        }
    }
}
