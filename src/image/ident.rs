//! Identities of PE images, PDBs and SPDs: the GUID and age that tie a binary to its PDB, and
//! with which a trace's program IDs name the binaries they were recorded from.
//!
//! The linker writes the pair twice: into the image, as the CodeView record (signature
//! `RSDS`) of its debug directory, and into the PDB, in the PDB information stream and the
//! DBI stream; SPDConvert keeps it in the SPD it imports traces into ([`super::spd`]).
//! [`read`] recognises each kind of file by its first bytes (`MZ`, the MSF 7.00 signature of
//! a PDB, `H_Q_`), never by its name, and returns its [`Identity`].
//!
//! GUIDs are [`uuid::Uuid`] values built as [`crate::format::progid`] builds them from a trace
//! (`Uuid::from_bytes_le` of the 16 bytes on disk), so an identity read here compares equal
//! with the program ID of the same build.
//!
//! ```no_run
//! let id = sptdump::image::ident::read(std::path::Path::new("core.dll"))?;
//! println!("{} {{{}}} {}", id.name, id.guid.hyphenated().to_string().to_uppercase(), id.age);
//! # Ok::<(), sptdump::image::ident::IdentError>(())
//! ```

use std::error::Error as StdError;
use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use object::read::pe::{ImageNtHeaders, PeFile, PeFile32, PeFile64};
use object::{FileKind, Object, ReadCache, ReadRef};
use uuid::Uuid;

use crate::format::error::{Error as ReadError, read_full};
use crate::format::progid::SymKey;
use crate::format::tables::base_name;
use crate::image::damaged;
use crate::image::guard::{ReaderPanicked, guarded};
use crate::image::spd::{self, Spd, SpdError};

/// The first 32 bytes of a PDB in the MSF 7.00 ("big MSF") container, the only PDB format
/// whose GUID a CodeView `RSDS` record can name.
pub const MSF7_SIGNATURE: &[u8; 32] = super::damaged::MSF7_SIGNATURE;

/// What kind of file an identity was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// A PE image (an `.exe`, `.dll`, `.sys`, ...), identified by its CodeView record.
    Pe,
    /// A PDB, identified by its information and DBI streams.
    Pdb,
    /// An SPD (a Sample Profile Database), identified by its header: its age is inferred.
    Spd,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::Pe => "PE image",
            Kind::Pdb => "PDB",
            Kind::Spd => "SPD",
        })
    }
}

/// The identity of a PE image, a PDB or an SPD.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Identity {
    /// What the file is.
    pub kind: Kind,
    /// The PDB's GUID, as the trace's program IDs hold it.
    pub guid: Uuid,
    /// The PDB's age: for an image, the age in its CodeView record; for a PDB, the age an
    /// image built with it records (see [`read`]).
    pub age: u32,
    /// The PDB path the image's CodeView record names (as the linker wrote it, often an
    /// absolute path on the build machine, or just the file name when linked with
    /// `/PDBALTPATH:%_PDB%`). `None` for a PDB.
    pub pdb_path: Option<String>,
    /// The file name of the file that was read, such as `core.dll`.
    pub name: String,
    /// For an SPD, what else it says: the binary it profiles, its functions, whether a
    /// trace was imported into it.
    pub spd: Option<Spd>,
}

impl Identity {
    /// Whether the age was inferred rather than read from a documented field: an SPD's.
    pub fn age_inferred(&self) -> bool {
        self.kind == Kind::Spd
    }

    /// The binary's name as it is matched against a trace's program IDs: an image's file
    /// name, a PDB's, or the binary an SPD names.
    pub fn binary(&self) -> &str {
        self.spd.as_ref().map_or(&self.name, |spd| &spd.binary)
    }

    /// The symbol-server key of the PDB this identity names: its GUID's 32 hex digits and
    /// its age in hex, as symbol stores file it.
    pub fn symkey(&self) -> SymKey {
        SymKey::new(self.guid, self.age)
    }
}

/// Why the identity of a file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IdentError {
    /// The file could not be opened or read.
    #[error("cannot read {}: {}", path.display(), crate::input::describe(source))]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: io::Error,
    },
    /// The file starts with none of `MZ`, the MSF 7.00 signature and `H_Q_`.
    #[error(
        "{} is neither a PE image (no MZ header), a PDB (no MSF 7.00 signature) nor an SPD \
         (no H_Q_ signature)",
        path.display()
    )]
    Unrecognized {
        /// The file.
        path: PathBuf,
    },
    /// The file starts like an SPD, but fails one of the checks an SPD must pass.
    #[error("{} is {source}", path.display())]
    Spd {
        /// The file.
        path: PathBuf,
        /// The check it failed.
        #[source]
        source: SpdError,
    },
    /// A PDB was expected, and the file does not start with the MSF 7.00 signature.
    #[error("{} is not a PDB (no MSF 7.00 signature)", path.display())]
    NotPdb {
        /// The file.
        path: PathBuf,
    },
    /// The file starts with `MZ`, but its PE headers cannot be read.
    #[error("{} is not a valid PE image: {reason}", path.display())]
    MalformedPe {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// The image has no debug directory.
    #[error(
        "{} has no debug directory, so no CodeView (RSDS) record: was it linked without /DEBUG?",
        path.display()
    )]
    NoDebugDirectory {
        /// The file.
        path: PathBuf,
    },
    /// The image has a debug directory, but no CodeView record with the `RSDS` signature
    /// in it.
    #[error(
        "{} has no CodeView (RSDS) debug record: was it linked without /DEBUG?",
        path.display()
    )]
    NoCodeView {
        /// The file.
        path: PathBuf,
    },
    /// The file has the PDB signature, but the streams needed cannot be read.
    #[error("cannot read the PDB {}: {source}", path.display())]
    Pdb {
        /// The file.
        path: PathBuf,
        /// What the PDB reader said.
        #[source]
        source: Box<dyn StdError + Send + Sync>,
    },
}

impl IdentError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            IdentError::Io { path, .. }
            | IdentError::Unrecognized { path }
            | IdentError::NotPdb { path }
            | IdentError::MalformedPe { path, .. }
            | IdentError::NoDebugDirectory { path }
            | IdentError::NoCodeView { path }
            | IdentError::Spd { path, .. }
            | IdentError::Pdb { path, .. } => path,
        }
    }

    pub(crate) fn io(path: &Path, source: io::Error) -> IdentError {
        IdentError::Io {
            path: path.to_owned(),
            source,
        }
    }

    /// The PDB reader panicked on the file's records.
    pub(crate) fn panicked(path: &Path, source: ReaderPanicked) -> IdentError {
        IdentError::Pdb {
            path: path.to_owned(),
            source: Box::new(source),
        }
    }

    pub(crate) fn pdb(path: &Path, source: pdb2::Error) -> IdentError {
        // The PDB reader reports I/O failures as its own error kind: keep them I/O errors,
        // save the file ending early, which is the PDB's problem. Its words are the reader's:
        // what is wrong is said in ours.
        match source {
            pdb2::Error::IoError(e) if e.kind() != io::ErrorKind::UnexpectedEof => {
                IdentError::io(path, e)
            }
            other => IdentError::Pdb {
                path: path.to_owned(),
                source: Box::new(damaged::Words(damaged::pdb(path, &other))),
            },
        }
    }
}

/// Reads the identity of the PE image, PDB or SPD at `path`.
///
/// For an image, the GUID, age and PDB path come from the first CodeView record with the
/// `RSDS` signature in its debug directory.
///
/// For a PDB, the GUID is that of the PDB information stream, and the age is the DBI
/// stream's, which is the one the linker also writes into the image's CodeView record and
/// the one debuggers and symbol servers match against the image. The PDB information
/// stream has an age of its own, which tools that rewrite a PDB after the link (`pdbstr`
/// and `srctool` indexing sources, for instance) increase, so it can be higher than the
/// image's. Only when the DBI stream is absent, or records an age of 0 as very old PDBs do,
/// is the information stream's age reported. (lld writes one age, 1, into the image and
/// both streams.)
pub fn read(path: &Path) -> Result<Identity, IdentError> {
    let mut file = crate::input::open_file(path).map_err(|e| IdentError::io(path, e))?;
    let magic = read_magic(&mut file).map_err(|e| IdentError::io(path, e))?;
    if magic.starts_with(b"MZ") {
        read_pe(path, file)
    } else if magic == *MSF7_SIGNATURE {
        read_pdb(path, file)
    } else if spd::looks_like(&magic) {
        read_spd(path, file)
    } else {
        Err(IdentError::Unrecognized {
            path: path.to_owned(),
        })
    }
}

/// Opens the PDB at `path`, checking its signature first.
pub(crate) fn open_pdb(path: &Path) -> Result<pdb2::PDB<'static, File>, IdentError> {
    let mut file = crate::input::open_file(path).map_err(|e| IdentError::io(path, e))?;
    let magic = read_magic(&mut file).map_err(|e| IdentError::io(path, e))?;
    if magic != *MSF7_SIGNATURE {
        return Err(IdentError::NotPdb {
            path: path.to_owned(),
        });
    }
    pdb2::PDB::open(file).map_err(|e| IdentError::pdb(path, e))
}

/// Up to the first 32 bytes of `file` (zeros past the end of a shorter file).
fn read_magic(file: &mut File) -> io::Result<[u8; 32]> {
    let mut magic = [0u8; 32];
    read_full(file, &mut magic, 0).map_err(ReadError::into_io)?;
    Ok(magic)
}

/// The file name of `path`, for [`Identity::name`]: its last component, whether `/` or `\`
/// separates them, as everywhere a binary's name is compared.
fn file_name(path: &Path) -> String {
    base_name(&path.to_string_lossy()).to_owned()
}

fn read_pe(path: &Path, file: File) -> Result<Identity, IdentError> {
    // Only the headers and the debug directory are read, not the whole image.
    let cache = ReadCache::new(file);
    let malformed = |reason: String| IdentError::MalformedPe {
        path: path.to_owned(),
        reason,
    };
    match FileKind::parse(&cache) {
        Ok(FileKind::Pe32) => {
            let pe = PeFile32::parse(&cache).map_err(|_| malformed(damaged::image(path)))?;
            codeview(path, &pe)
        }
        Ok(FileKind::Pe64) => {
            let pe = PeFile64::parse(&cache).map_err(|_| malformed(damaged::image(path)))?;
            codeview(path, &pe)
        }
        Ok(_) => Err(malformed("no PE header after the MZ header".to_owned())),
        Err(_) => Err(malformed(damaged::image(path))),
    }
}

fn codeview<'data, Pe, R>(path: &Path, pe: &PeFile<'data, Pe, R>) -> Result<Identity, IdentError>
where
    Pe: ImageNtHeaders,
    R: ReadRef<'data>,
{
    if pe
        .data_directory(object::pe::IMAGE_DIRECTORY_ENTRY_DEBUG)
        .is_none()
    {
        return Err(IdentError::NoDebugDirectory {
            path: path.to_owned(),
        });
    }
    let cv = pe
        .pdb_info()
        .map_err(|_| IdentError::MalformedPe {
            path: path.to_owned(),
            reason: format!(
                "its debug directory cannot be read: {}",
                damaged::image(path)
            ),
        })?
        .ok_or_else(|| IdentError::NoCodeView {
            path: path.to_owned(),
        })?;
    Ok(Identity {
        kind: Kind::Pe,
        guid: Uuid::from_bytes_le(cv.guid()),
        age: cv.age(),
        pdb_path: Some(String::from_utf8_lossy(cv.path()).into_owned()),
        name: file_name(path),
        spd: None,
    })
}

fn read_spd(path: &Path, mut file: File) -> Result<Identity, IdentError> {
    let len = file.metadata().map_err(|e| IdentError::io(path, e))?.len();
    let spd = spd::read(&mut file, len).map_err(|e| match e {
        SpdError::Io(e) => IdentError::io(path, e),
        source => IdentError::Spd {
            path: path.to_owned(),
            source,
        },
    })?;
    Ok(Identity {
        kind: Kind::Spd,
        guid: spd.guid,
        age: spd.age,
        pdb_path: None,
        name: file_name(path),
        spd: Some(spd),
    })
}

fn read_pdb(path: &Path, file: File) -> Result<Identity, IdentError> {
    guarded(|| read_pdb_streams(path, file)).unwrap_or_else(|p| Err(IdentError::panicked(path, p)))
}

fn read_pdb_streams(path: &Path, file: File) -> Result<Identity, IdentError> {
    let mut pdb = pdb2::PDB::open(file).map_err(|e| IdentError::pdb(path, e))?;
    let info = pdb
        .pdb_information()
        .map_err(|e| IdentError::pdb(path, e))?;
    let dbi_age = match pdb.debug_information() {
        Ok(dbi) => dbi.age(),
        // No DBI stream, or an empty one: only the information stream's age is known.
        Err(pdb2::Error::StreamNotFound(_) | pdb2::Error::UnexpectedEof) => None,
        Err(e) => return Err(IdentError::pdb(path, e)),
    };
    Ok(Identity {
        kind: Kind::Pdb,
        guid: info.guid,
        age: dbi_age.unwrap_or(info.age),
        pdb_path: None,
        name: file_name(path),
        spd: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_empty_files_are_unrecognized() {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in [
            ("empty", &b""[..]),
            ("m", b"M"),
            ("text.txt", b"hello, world\n"),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            let err = read(&path).unwrap_err();
            assert!(
                matches!(err, IdentError::Unrecognized { .. }),
                "{name}: {err}"
            );
            assert_eq!(err.path(), path);
        }
    }

    #[test]
    fn mz_without_pe_headers_is_malformed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stub.exe");
        let mut bytes = vec![0u8; 128];
        bytes[..2].copy_from_slice(b"MZ");
        std::fs::write(&path, &bytes).unwrap();
        let err = read(&path).unwrap_err();
        assert!(matches!(err, IdentError::MalformedPe { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with(&format!("{} is not a valid PE image: ", path.display()))
        );
    }

    #[test]
    fn pdb_signature_without_streams_is_a_pdb_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.pdb");
        let mut bytes = MSF7_SIGNATURE.to_vec();
        bytes.extend_from_slice(&[0u8; 64]);
        std::fs::write(&path, &bytes).unwrap();
        let err = read(&path).unwrap_err();
        assert!(matches!(err, IdentError::Pdb { .. }), "{err}");
        assert!(
            err.to_string()
                .starts_with(&format!("cannot read the PDB {}: ", path.display()))
        );
    }

    #[test]
    fn kind_names() {
        assert_eq!(Kind::Pe.to_string(), "PE image");
        assert_eq!(Kind::Pdb.to_string(), "PDB");
    }
}
