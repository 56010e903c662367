//! Matching a binary or PDB against a trace's program IDs: the question behind SPDConvert's
//! "SPD version incompatible".
//!
//! A program ID names a build by its PDB's GUID and age. For a file's [`Identity`] the
//! verdict is, in this order of precedence:
//!
//! | status          | when                                                              |
//! |-----------------|-------------------------------------------------------------------|
//! | `match`         | a program ID has the same GUID and age                            |
//! | `age-mismatch`  | a program ID has the same GUID with another age (a relink)        |
//! | `guid-mismatch` | no GUID matches, but a program ID has the same binary name (for a |
//! |                 | PDB, the same stem: `core.pdb` and `core.dll`): another build     |
//! | `absent`        | neither: the trace knows nothing of this binary                   |
//!
//! Names compare case-insensitively, by their last path component, as Windows file names do.

use std::fmt;

use std::path::Path;
use std::sync::Arc;

use crate::format::progid::ProgramId;
use crate::format::tables::{Tables, base_name};
use crate::image::ident::{self, IdentError, Identity, Kind};
use crate::image::spdprofile::{SpdProfile, SpdReadError};
use crate::image::symbols::Symbols;

/// How a file's identity relates to the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MatchStatus {
    /// Same GUID and age.
    Match,
    /// Same GUID, another age.
    AgeMismatch,
    /// Another GUID, same binary name.
    GuidMismatch,
    /// Nothing in common.
    Absent,
}

impl MatchStatus {
    /// The status as printed: `match`, `age-mismatch`, `guid-mismatch`, `absent`.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchStatus::Match => "match",
            MatchStatus::AgeMismatch => "age-mismatch",
            MatchStatus::GuidMismatch => "guid-mismatch",
            MatchStatus::Absent => "absent",
        }
    }
}

impl fmt::Display for MatchStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The verdict for one identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatchVerdict {
    /// How the identity relates to the trace.
    pub status: MatchStatus,
    /// The program ID concerned: the one that matches, or the nearest one on a mismatch.
    pub progid: Option<u16>,
    /// That program ID's entry, for showing both identities side by side.
    pub entry: Option<ProgramId>,
}

/// The last path component, lower case: how Windows compares file names.
fn folded_name(name: &str) -> String {
    base_name(name).to_lowercase()
}

/// The base name without its last extension.
fn stem(name: &str) -> String {
    let base = folded_name(name);
    match base.rfind('.') {
        Some(dot) if dot > 0 => base[..dot].to_owned(),
        _ => base,
    }
}

/// A file given to `/match`, read once for all traces.
#[derive(Clone, Debug)]
pub struct MatchFile {
    /// The path as given.
    pub path: String,
    /// Its identity, or why it has none.
    pub identity: Result<Identity, Arc<IdentError>>,
    /// For an SPD, its functions, or why its function table could not be read; `None` for
    /// any other file.
    pub spd: Option<Result<Arc<SpdProfile>, Arc<SpdReadError>>>,
}

impl PartialEq for MatchFile {
    /// The same path, and the same identity or the same reason for having none.
    fn eq(&self, other: &Self) -> bool {
        let why = |f: &MatchFile| f.identity.as_ref().err().map(ToString::to_string);
        self.path == other.path
            && self.identity.as_ref().ok() == other.identity.as_ref().ok()
            && why(self) == why(other)
    }
}

/// One line of the `/match` section: a file and its verdict.
#[derive(Clone, Copy, Debug)]
pub struct MatchResult<'a> {
    /// The file.
    pub file: &'a MatchFile,
    /// The verdict, when the file has an identity.
    pub verdict: Option<MatchVerdict>,
}

impl MatchResult<'_> {
    /// Whether this file fails the check: anything but a match.
    pub fn failed(&self) -> bool {
        !matches!(self.verdict, Some(v) if v.status == MatchStatus::Match)
    }
}

/// A PDB given to `/pdb`, read once for all traces: its identity, which must match a program
/// ID, and its functions.
#[derive(Clone, Debug)]
pub struct PdbFile {
    /// The path as given.
    pub path: String,
    /// Its GUID and age.
    pub identity: Identity,
    /// Its functions.
    pub symbols: Arc<Symbols>,
}

impl MatchFile {
    /// Reads the identity of the image or PDB at `path`; a file without one is kept with the
    /// reason, which the `/match` section shows.
    pub fn read(path: &Path) -> MatchFile {
        let identity = ident::read(path).map_err(Arc::new);
        let spd = match &identity {
            Ok(id) if id.kind == Kind::Spd => {
                Some(SpdProfile::read(path).map(Arc::new).map_err(Arc::new))
            }
            _ => None,
        };
        MatchFile {
            path: path.to_string_lossy().into_owned(),
            identity,
            spd,
        }
    }
}

/// Why a file given to `/pdb` cannot be used. The messages are whole: no error chain
/// follows them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PdbFileError {
    /// Its identity could not be read.
    #[error("{0}")]
    Identity(IdentError),
    /// It is an image, not a PDB.
    #[error("this is a {0}, not a PDB: give the PDB the image was linked with")]
    NotPdb(Kind),
    /// Its functions could not be read.
    #[error("cannot read its symbols: {0}")]
    Symbols(IdentError),
}

impl PdbFile {
    /// Reads the PDB at `path`: its identity and its functions.
    pub fn read(path: &Path) -> Result<PdbFile, PdbFileError> {
        let identity = ident::read(path).map_err(PdbFileError::Identity)?;
        if identity.kind != Kind::Pdb {
            return Err(PdbFileError::NotPdb(identity.kind));
        }
        let symbols = Symbols::from_pdb(path).map_err(PdbFileError::Symbols)?;
        Ok(PdbFile {
            path: path.to_string_lossy().into_owned(),
            identity,
            symbols: Arc::new(symbols),
        })
    }
}

impl PartialEq for PdbFile {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.identity == other.identity
    }
}

impl Eq for PdbFile {}

/// Judges `id` against the program IDs of a trace.
pub fn judge(id: &Identity, tables: &Tables) -> MatchVerdict {
    let entries = tables.progids.as_ref().map(|t| t.entries()).unwrap_or(&[]);
    let found = |status, i: usize| MatchVerdict {
        status,
        progid: Some(i as u16),
        entry: Some(entries[i]),
    };
    if let Some(i) = entries
        .iter()
        .position(|p| p.guid == id.guid && p.age == id.age)
    {
        return found(MatchStatus::Match, i);
    }
    if let Some(i) = entries.iter().position(|p| p.guid == id.guid) {
        return found(MatchStatus::AgeMismatch, i);
    }
    let same_name = |i: usize| {
        let Some(name) = tables.name(i as u16) else {
            return false;
        };
        let name = String::from_utf8_lossy(name);
        match id.kind {
            Kind::Pdb => stem(&name) == stem(&id.name),
            _ => folded_name(&name) == folded_name(id.binary()),
        }
    };
    if let Some(i) = (0..entries.len()).find(|&i| same_name(i)) {
        return found(MatchStatus::GuidMismatch, i);
    }
    MatchVerdict {
        status: MatchStatus::Absent,
        progid: None,
        entry: None,
    }
}

/// The verdict of each of `files` on the program IDs of `tables`.
pub(crate) fn results<'f>(files: &'f [MatchFile], tables: &Tables) -> Vec<MatchResult<'f>> {
    files
        .iter()
        .map(|file| MatchResult {
            file,
            verdict: file.identity.as_ref().ok().map(|id| judge(id, tables)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::progid::ProgramIdTable;
    use crate::format::strtab::StringTable;
    use sptdump_testkit::fixtures::{APP_GUID as APP, CORE_GUID as CORE};
    use uuid::Uuid;

    const OTHER: &str = "C3C5D482-8C28-72EC-4C4C-44205044422E";

    /// Two files given to `/match` or `/pdb` are the same when their paths are, and what
    /// was read of them: the identity, or why there is none.
    #[test]
    fn files_given_are_equal_by_path_and_what_was_read() {
        let pe = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe");
        let app = MatchFile::read(&pe.join("app.exe"));
        assert!(app.identity.is_ok());
        assert_eq!(app, MatchFile::read(&pe.join("app.exe")));
        let moved = MatchFile {
            path: "elsewhere/app.exe".into(),
            ..app.clone()
        };
        assert_ne!(app, moved);
        let other = MatchFile {
            identity: MatchFile::read(&pe.join("core.dll")).identity,
            ..app.clone()
        };
        assert_ne!(app, other);
        let missing = MatchFile::read(&pe.join("no-such.exe"));
        assert!(missing.identity.is_err());
        assert_eq!(missing, MatchFile::read(&pe.join("no-such.exe")));
        let not_an_image = MatchFile {
            identity: MatchFile::read(&pe.join("app-only.spt")).identity,
            ..missing.clone()
        };
        assert!(not_an_image.identity.is_err());
        assert_ne!(missing, not_an_image);
        let found = MatchFile {
            identity: app.identity.clone(),
            ..missing.clone()
        };
        assert_ne!(missing, found);

        let pdb = PdbFile::read(&pe.join("app.pdb")).unwrap();
        assert_eq!(pdb, PdbFile::read(&pe.join("app.pdb")).unwrap());
        let moved = PdbFile {
            path: "elsewhere/app.pdb".into(),
            ..pdb.clone()
        };
        assert_ne!(pdb, moved);
        let other = PdbFile {
            identity: PdbFile::read(&pe.join("core.pdb")).unwrap().identity,
            ..pdb.clone()
        };
        assert_ne!(pdb, other);
    }

    /// A trace that knows `app.exe` (age 1) and `C:\build\Core.DLL` (age 2).
    fn tables() -> Tables {
        let strings = StringTable::new(b"app.exe\0C:\\build\\Core.DLL\0".to_vec(), 0x20);
        let mut entries = Vec::new();
        for (guid, age, name) in [(APP, 1u32, 0u32), (CORE, 2, 8)] {
            entries.extend(Uuid::parse_str(guid).unwrap().to_bytes_le());
            entries.extend(age.to_le_bytes());
            entries.extend(name.to_le_bytes());
        }
        Tables {
            strings: Some(strings),
            progids: Some(ProgramIdTable::parse(&entries, 0x4020)),
            ..Tables::default()
        }
    }

    fn id(kind: Kind, guid: &str, age: u32, name: &str) -> Identity {
        Identity {
            kind,
            guid: Uuid::parse_str(guid).unwrap(),
            age,
            pdb_path: None,
            name: name.into(),
            spd: None,
        }
    }

    fn judged(kind: Kind, guid: &str, age: u32, name: &str) -> (MatchStatus, Option<u16>) {
        let v = judge(&id(kind, guid, age, name), &tables());
        (v.status, v.progid)
    }

    #[test]
    fn each_verdict() {
        assert_eq!(
            judged(Kind::Pe, APP, 1, "app.exe"),
            (MatchStatus::Match, Some(0))
        );
        assert_eq!(
            judged(Kind::Pdb, CORE, 2, "core.pdb"),
            (MatchStatus::Match, Some(1))
        );
        assert_eq!(
            judged(Kind::Pe, CORE, 1, "core.dll"),
            (MatchStatus::AgeMismatch, Some(1))
        );
        assert_eq!(
            judged(Kind::Pe, OTHER, 2, "core.dll"),
            (MatchStatus::GuidMismatch, Some(1))
        );
        assert_eq!(
            judged(Kind::Pdb, OTHER, 1, "CORE.pdb"),
            (MatchStatus::GuidMismatch, Some(1))
        );
        assert_eq!(
            judged(Kind::Pe, OTHER, 1, "render.dll"),
            (MatchStatus::Absent, None)
        );
    }

    #[test]
    fn the_identity_decides_before_the_name() {
        // The GUID and age of app.exe under another file name still match.
        assert_eq!(
            judged(Kind::Pe, APP, 1, "renamed.exe"),
            (MatchStatus::Match, Some(0))
        );
        // A PE is compared by its whole file name, not its stem: core.exe is not core.dll.
        assert_eq!(
            judged(Kind::Pe, OTHER, 1, "core.exe"),
            (MatchStatus::Absent, None)
        );
    }

    #[test]
    fn names_and_stems() {
        assert_eq!(folded_name("C:\\build\\Core.DLL"), "core.dll");
        assert_eq!(folded_name("/x/y/app.exe"), "app.exe");
        assert_eq!(stem("C:\\build\\Core.DLL"), "core");
        assert_eq!(stem("a.b.pdb"), "a.b");
        assert_eq!(stem(".hidden"), ".hidden");
    }

    #[test]
    fn an_spd_matches_by_the_binary_it_names_not_its_file_name() {
        let mut spd = id(Kind::Spd, OTHER, 2, "profile.spd");
        spd.spd = Some(crate::image::spd::Spd {
            binary: "CORE.dll".into(),
            guid: spd.guid,
            age: 2,
            functions: 3,
            profiled: true,
            version: crate::image::spd::KNOWN_VERSION,
        });
        let v = judge(&spd, &tables());
        assert_eq!((v.status, v.progid), (MatchStatus::GuidMismatch, Some(1)));
        assert!(spd.age_inferred());
        // The same GUID: a match, whatever the file is called.
        spd.guid = Uuid::parse_str(CORE).unwrap();
        let v = judge(&spd, &tables());
        assert_eq!((v.status, v.progid), (MatchStatus::Match, Some(1)));
    }
}
