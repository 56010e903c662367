//! The names an image imports, by the hash an SPD keys them with: SPDDump's `/cg` names a
//! callee of type 3 (an import) when its hash is djb2-64 of `__imp_` and a name the image
//! imports. The hash is the one external functions of an SPD are keyed by (docs/format.md);
//! that imports are hashed with the `__imp_` prefix is our reading, confirmed by the callees
//! of the known SPDs, whose import hashes are those of names such as `__imp_ZwClose`.

use std::collections::BTreeMap;
use std::path::Path;

use object::{NameOrOrdinal, Object};
use uuid::Uuid;

use crate::format::progid::registry_form;
use crate::image::damaged;
use crate::image::ident::{self, IdentError};
use crate::image::spd::Spd;

/// djb2 over 64 bits: `h = 5381`, then `h = h * 33 + byte`, wrapping.
pub fn djb2_64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(5381u64, |h, &c| {
        h.wrapping_mul(33).wrapping_add(u64::from(c))
    })
}

/// The imports of one or more images, by their SPD hash.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportNames {
    by_hash: BTreeMap<u64, String>,
}

/// Why an image's imports could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportsError {
    /// The file could not be read.
    #[error("{0}")]
    Unreadable(#[from] std::io::Error),
    /// It is not an image.
    #[error("not an image: {0}")]
    NotImage(String),
    /// Its import table could not be read.
    #[error("its import table cannot be read: {0}")]
    Table(String),
    /// Its CodeView record, which says which build it is, could not be read.
    #[error("{0}")]
    Identity(IdentError),
}

/// An image given to spddump's `/image`: the build it is, and the names it imports. Its
/// names are used for an SPD of its build only.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageImports {
    /// The path as given.
    pub path: String,
    /// Its file name (`imports.exe`).
    pub name: String,
    /// The GUID and age of its CodeView record; `None` for an image linked without one.
    pub build: Option<(Uuid, u32)>,
    /// The names it imports.
    pub names: ImportNames,
}

impl ImageImports {
    /// Reads the image at `path`: its CodeView record and its imports.
    ///
    /// # Errors
    ///
    /// When the file cannot be read, is not an image, or its import table or debug
    /// directory cannot be read.
    pub fn read(path: &Path) -> Result<ImageImports, ImportsError> {
        let mut names = ImportNames::default();
        names.read(path)?;
        let build = match ident::read(path) {
            Ok(id) => Some((id.guid, id.age)),
            Err(IdentError::NoCodeView { .. } | IdentError::NoDebugDirectory { .. }) => None,
            Err(e) => return Err(ImportsError::Identity(e)),
        };
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        Ok(ImageImports {
            path: path.to_string_lossy().into_owned(),
            name,
            build,
            names,
        })
    }

    /// Whether it is the build the SPD `spd` profiles: its GUID and age are the SPD's; or,
    /// for an image without a CodeView record (whose build cannot be told), its file name
    /// is the SPD's binary's.
    pub fn fits(&self, spd: &Spd) -> bool {
        match self.build {
            Some((guid, age)) => guid == spd.guid && age == spd.age,
            None => self.name.eq_ignore_ascii_case(&spd.binary),
        }
    }

    /// Its identity, as a refusal shows it: `app.exe {GUID} age 1`, or that it has none.
    pub fn identity(&self) -> String {
        match self.build {
            Some((guid, age)) => format!("{} {{{}}} age {age}", self.name, registry_form(&guid)),
            None => format!("{} without a CodeView record (no GUID or age)", self.name),
        }
    }
}

/// The names imported by the images of `images` that are the build `spd` profiles, and the
/// images that are not.
pub fn names_for<'i>(
    images: &'i [ImageImports],
    spd: &Spd,
) -> (ImportNames, Vec<&'i ImageImports>) {
    let mut names = ImportNames::default();
    let mut refused = Vec::new();
    for image in images {
        match image.fits(spd) {
            true => names.by_hash.extend(image.names.by_hash.clone()),
            false => refused.push(image),
        }
    }
    (names, refused)
}

impl ImportNames {
    /// The import named by `hash`, if an image given imports it.
    pub fn get(&self, hash: u64) -> Option<&str> {
        self.by_hash.get(&hash).map(String::as_str)
    }

    /// How many names are known.
    pub fn len(&self) -> usize {
        self.by_hash.len()
    }

    /// Whether no name is known.
    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }

    /// Adds the names the image at `path` imports (by name; imports by ordinal have none).
    /// The error says why the file could not be read as an image.
    pub fn read(&mut self, path: &Path) -> Result<usize, ImportsError> {
        let data = std::fs::read(path)?;
        let file = object::File::parse(&*data)
            .map_err(|_| ImportsError::NotImage(damaged::image(path)))?;
        let table = |_| ImportsError::Table(damaged::image(path));
        let imports = file.imports().map_err(table)?;
        let mut added = 0;
        for import in imports {
            let import = import.map_err(table)?;
            if let NameOrOrdinal::Name(name) = import.name() {
                added += usize::from(self.add(name));
            }
        }
        Ok(added)
    }

    fn add(&mut self, name: &[u8]) -> bool {
        let mut key = b"__imp_".to_vec();
        key.extend_from_slice(name);
        let name = String::from_utf8_lossy(name).into_owned();
        self.by_hash.insert(djb2_64(&key), name).is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_images_names_are_counted_once_however_often_it_is_read() {
        let exe = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe/imports.exe");
        let mut names = ImportNames::default();
        assert!(names.is_empty());
        let added = names.read(&exe).unwrap();
        // imports.c calls core.dll's three C exports by name.
        assert_eq!((added, names.len()), (3, 3));
        assert!(!names.is_empty());
        assert_eq!(names.read(&exe).unwrap(), 0);
        assert_eq!(names.len(), 3);
    }

    #[test]
    fn the_hash_is_the_one_the_known_spds_key_external_functions_by() {
        // Two external functions of the shared suite's 2023-08-31 EbpfCore SPD, as its
        // symbol table stores them.
        assert_eq!(djb2_64(b"ebpf_create_registry_key"), 0xCC22_20BA_8D48_E535);
        assert_eq!(
            djb2_64(b"ebpf_create_registry_key_ansi"),
            0x099F_3664_CA2F_9A1F
        );
    }

    #[test]
    fn a_file_that_is_not_an_image_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.exe");
        std::fs::write(&path, b"MZ but nothing more").unwrap();
        let mut names = ImportNames::default();
        assert!(
            names
                .read(&path)
                .unwrap_err()
                .to_string()
                .starts_with("not an image")
        );
        assert!(names.is_empty());
    }
}
