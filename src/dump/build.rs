//! The files a trace's binaries are given by GUID and age (`/pdb`, `/image`), attached to
//! the binaries they fit.

use std::sync::Arc;

use crate::format::progid::registry_form;
use crate::image::attached::SymbolMap;
use crate::image::code::ImageFile;
use crate::image::ident::Identity;
use crate::image::matching::PdbFile;
use crate::views::Plan;

/// A file a trace's binaries are given by GUID and age: a `/pdb` (its functions) or an
/// `/image` (its code).
#[derive(Clone, Copy)]
pub(super) enum BuildFile<'p> {
    Pdb(&'p PdbFile),
    Image(&'p ImageFile),
}

impl BuildFile<'_> {
    /// The `/pdb` and `/image` files of `plan`.
    pub(super) fn all(plan: &Plan) -> impl Iterator<Item = BuildFile<'_>> {
        let pdbs = plan.pdbs.iter().map(BuildFile::Pdb);
        pdbs.chain(plan.images.iter().map(BuildFile::Image))
    }

    /// Its identity.
    pub(super) fn identity(&self) -> &Identity {
        match self {
            BuildFile::Pdb(pdb) => &pdb.identity,
            BuildFile::Image(image) => &image.identity,
        }
    }

    /// Attaches what it gives to `progid`.
    pub(super) fn attach(&self, to: &mut SymbolMap, progid: u16) {
        match self {
            BuildFile::Pdb(pdb) => to.attach(progid, Arc::clone(&pdb.symbols)),
            BuildFile::Image(image) => to.attach_code(progid, Arc::clone(&image.code)),
        }
    }

    /// Why it is not used: `/pdb:PATH is {GUID} age N, which matches no program ID of
    /// WHERE; its symbols would be wrong, so they are not used`.
    pub(super) fn unused(&self, matching: &str) -> String {
        let (option, path, what) = match self {
            BuildFile::Pdb(pdb) => ("pdb", &pdb.path, "its symbols would be wrong, so they are"),
            BuildFile::Image(image) => ("image", &image.path, "its code would be wrong, so it is"),
        };
        let id = self.identity();
        format!(
            "/{option}:{path} is {{{}}} age {}, which matches no program ID of {matching}; \
             {what} not used",
            registry_form(&id.guid),
            id.age
        )
    }
}
