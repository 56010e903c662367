//! SPD files (Sample Profile Databases): which build a profile database belongs to.
//!
//! The SPD format is not documented. What is read here was inferred from twelve SPD files
//! that MSVC's linker and SPDConvert wrote for two drivers (docs/format.md, "SPD files",
//! says how sure each field is). All integers little-endian, offsets from the start:
//!
//! ```text
//! 0x00  4   signature "H_Q_" (48 5F 51 5F)
//! 0x04  u32 0x100C in every known file (a version, probably)
//! 0x18  u32 djb2 hash of the binary's name
//! 0x30  u32 offset of the names area   0x34  u32 its size in bytes
//! 0x38  u32 offset of the module block
//! 0x48  u32 age of the binary's PDB (inferred)
//! 0x4C  16  GUID of the binary's PDB, in a program ID's byte order
//! 0x5C  u64 profile total 1            0x64  u64 profile total 2 (0 before any import)
//!
//! names area    UTF-16LE strings, NUL-terminated: the binary's name, "* CIL module *"
//! module block  +0x00 u32 its size; +0x0C, +0x10 offset and size of the function
//!               profiles; +0x1C the number of functions; +0x30, +0x34 offset and size of
//!               the names of the functions (offsets relative to the block)
//! ```
//!
//! A file is read as an SPD only when it passes every [`Check`], in order; otherwise it is
//! not a recognised SPD, and the first check it failed says why: never a guess. Only the
//! header, the binary's name and the module block's header are read (at most 0x80 + 522 +
//! 0x38 bytes, whatever the size of the file), and nothing is allocated from a field before
//! it is checked against the file's size.
//!
//! What the module block holds past its header (the symbol table, the function records with
//! their blocks and callees, the names) is read by [`table`], with checks of its own.

use std::fmt;
use std::io::{self, Read, Seek, SeekFrom};

use byteorder::{ByteOrder, LittleEndian as LE};
use uuid::Uuid;

mod bytes;
mod check;
mod contents;
pub mod function;
pub mod table;

/// The first four bytes of an SPD.
pub const SIGNATURE: &[u8; 4] = b"H_Q_";

/// The value at 0x04 in every SPD seen so far.
pub const KNOWN_VERSION: u32 = 0x100C;

/// The header's size: every field of the identity lies in it.
const HEADER: usize = 0x80;

/// The module block's header.
const MODULE_HEADER: usize = 0x38;

/// The longest binary name read: 260 characters (Windows' `MAX_PATH`) and a NUL.
const MAX_NAME: usize = 260;

/// The checks a file must pass to be read as an SPD, in the order they are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Check {
    /// At least 0x80 bytes, starting with `H_Q_`.
    Signature,
    /// The names area lies in the file, after the header, and starts with a name of 1 to
    /// 260 characters ending in a UTF-16 NUL.
    NamesArea,
    /// The djb2 hash of that name (ASCII only) is the one at 0x18.
    NameHash,
    /// The module block starts after the names area, its header lies in the file, and it
    /// ends where the file ends.
    ModuleBlock,
    /// The function profiles and their names lie in the module block.
    ModuleParts,
}

impl Check {
    /// The check's number, from 1, as the documentation lists them.
    pub fn number(self) -> u8 {
        self as u8 + 1
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Check::Signature => "size and signature",
            Check::NamesArea => "names area",
            Check::NameHash => "name hash",
            Check::ModuleBlock => "module block",
            Check::ModuleParts => "function profiles and names",
        })
    }
}

/// Why a file is not read as an SPD.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpdError {
    /// It failed a check.
    #[error("not a recognised SPD: check {} ({}) failed: {why}", check.number(), check)]
    NotRecognised {
        /// The first check it failed.
        check: Check,
        /// What was found.
        why: String,
    },
    /// It could not be read.
    #[error("{}", crate::input::describe(.0))]
    Io(#[from] io::Error),
}

impl SpdError {
    #[cold]
    fn failed(check: Check, why: impl Into<String>) -> SpdError {
        SpdError::NotRecognised {
            check,
            why: why.into(),
        }
    }
}

/// What an SPD says of the build whose profile it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spd {
    /// The binary's name, from the names area (`EbpfCore.sys`).
    pub binary: String,
    /// The GUID of the binary's PDB.
    pub guid: Uuid,
    /// The age of the binary's PDB: inferred, less certain than the GUID.
    pub age: u32,
    /// How many functions it has profiles for.
    pub functions: u32,
    /// Whether a trace was imported into it (either profile total is not 0).
    pub profiled: bool,
    /// The value at 0x04: [`KNOWN_VERSION`] in every file seen so far.
    pub version: u32,
}

impl Spd {
    /// Whether the version is one not seen before: its fields were read as those of
    /// [`KNOWN_VERSION`], and may mean something else.
    pub fn new_version(&self) -> bool {
        self.version != KNOWN_VERSION
    }
}

/// The header of an SPD: its identity, and the fields beside it that no identity needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The identity (section 10's fields).
    pub spd: Spd,
    /// The two profile totals at 0x5C and 0x64, as stored. What they count is not known:
    /// they equal no sum of the function records' counters, and are shown raw.
    pub totals: [u64; 2],
    /// The djb2 hash of the binary's name, at 0x18.
    pub name_hash: u32,
    /// Where the module block starts in the file.
    pub module_offset: u64,
}

/// Whether `first` (a file's first bytes) starts like an SPD.
pub fn looks_like(first: &[u8]) -> bool {
    first.starts_with(SIGNATURE)
}

/// djb2 (h = 5381, then h = h * 33 + c, mod 2^32) over the bytes of `name`.
fn djb2(name: &[u8]) -> u32 {
    name.iter().fold(5381u32, |h, &c| {
        h.wrapping_mul(33).wrapping_add(u32::from(c))
    })
}

/// Reads `buf.len()` bytes at `at`.
fn read_at<R: Read + Seek + ?Sized>(file: &mut R, at: u64, buf: &mut [u8]) -> io::Result<()> {
    file.seek(SeekFrom::Start(at))?;
    file.read_exact(buf)
}

/// Reads the SPD in `file`, whose size is `len` bytes: its checks, then its identity.
pub fn read<R: Read + Seek + ?Sized>(file: &mut R, len: u64) -> Result<Spd, SpdError> {
    read_header(file, len).map(|h| h.spd)
}

/// Reads the SPD in `file`, whose size is `len` bytes: its checks, then its header.
pub fn read_header<R: Read + Seek + ?Sized>(file: &mut R, len: u64) -> Result<Header, SpdError> {
    if len < HEADER as u64 {
        return Err(SpdError::failed(
            Check::Signature,
            format!("the file has {len} bytes, fewer than an SPD's 0x80-byte header"),
        ));
    }
    let mut header = [0u8; HEADER];
    read_at(file, 0, &mut header)?;
    if !looks_like(&header) {
        let first: Vec<String> = header[..4].iter().map(|b| format!("{b:02X}")).collect();
        return Err(SpdError::failed(
            Check::Signature,
            format!(
                "it starts with {}, not 48 5F 51 5F (\"H_Q_\")",
                first.join(" ")
            ),
        ));
    }
    let u32_at = |at: usize| LE::read_u32(&header[at..]);
    let (names, names_end) = names_area(file, len, u32_at(0x30), u32_at(0x34))?;
    let binary = name_hash(&names, u32_at(0x18))?;
    let module = module_block(file, len, u32_at(0x38), names_end)?;
    let functions = LE::read_u32(&module[0x1C..]);
    let totals = [LE::read_u64(&header[0x5C..]), LE::read_u64(&header[0x64..])];
    let guid: [u8; 16] = header[0x4C..0x5C].try_into().expect("16 bytes");
    let spd = Spd {
        binary,
        guid: Uuid::from_bytes_le(guid),
        age: u32_at(0x48),
        functions,
        profiled: totals.iter().any(|&t| t != 0),
        version: u32_at(0x04),
    };
    Ok(Header {
        spd,
        totals,
        name_hash: u32_at(0x18),
        module_offset: u64::from(u32_at(0x38)),
    })
}

/// Check 2: the names area at `offset` (`size` bytes), and the name that starts it, as
/// UTF-16 units without the NUL; and where the area ends.
fn names_area<R: Read + Seek + ?Sized>(
    file: &mut R,
    len: u64,
    offset: u32,
    size: u32,
) -> Result<(Vec<u16>, u64), SpdError> {
    let end = u64::from(offset) + u64::from(size);
    if u64::from(offset) < HEADER as u64 || end > len {
        return Err(SpdError::failed(
            Check::NamesArea,
            format!(
                "the names area [{offset:#X}, {end:#X}) does not lie between the header's end \
                 (0x80) and the file's ({len:#X})"
            ),
        ));
    }
    // At most a name of 260 characters and its NUL are read, however large the area says
    // it is.
    let take = (size as usize).min(2 * (MAX_NAME + 1));
    let mut bytes = vec![0u8; take];
    read_at(file, u64::from(offset), &mut bytes)?;
    let units: Vec<u16> = bytes.chunks_exact(2).map(LE::read_u16).collect();
    match units.iter().position(|&u| u == 0) {
        Some(n) if (1..=MAX_NAME).contains(&n) => Ok((units[..n].to_vec(), end)),
        Some(_) => Err(SpdError::failed(
            Check::NamesArea,
            "the names area starts with an empty name",
        )),
        None => Err(SpdError::failed(
            Check::NamesArea,
            format!(
                "no UTF-16 NUL ends a name in the first {} characters of the names area",
                units.len().min(MAX_NAME + 1)
            ),
        )),
    }
}

/// Check 3: the name's djb2 hash is `stored`; the name, when it is.
fn name_hash(name: &[u16], stored: u32) -> Result<String, SpdError> {
    let text = String::from_utf16_lossy(name);
    if !name.iter().all(|&u| u < 0x80) {
        return Err(SpdError::failed(
            Check::NameHash,
            format!("the binary's name {text:?} is not ASCII, which its hash covers"),
        ));
    }
    let bytes: Vec<u8> = name.iter().map(|&u| u as u8).collect();
    let hash = djb2(&bytes);
    if hash != stored {
        return Err(SpdError::failed(
            Check::NameHash,
            format!(
                "the djb2 hash of the binary's name {text:?} is {hash:#010X}, but the header \
                 holds {stored:#010X}"
            ),
        ));
    }
    Ok(text)
}

/// Checks 4 and 5: the module block's header, at `offset`, after the names area's end.
fn module_block<R: Read + Seek + ?Sized>(
    file: &mut R,
    len: u64,
    offset: u32,
    names_end: u64,
) -> Result<[u8; MODULE_HEADER], SpdError> {
    let start = u64::from(offset);
    if start < names_end || start + MODULE_HEADER as u64 > len {
        return Err(SpdError::failed(
            Check::ModuleBlock,
            format!(
                "the module block's header [{start:#X}, {:#X}) does not lie between the names \
                 area's end ({names_end:#X}) and the file's ({len:#X})",
                start + MODULE_HEADER as u64
            ),
        ));
    }
    let mut module = [0u8; MODULE_HEADER];
    read_at(file, start, &mut module)?;
    let size = u64::from(LE::read_u32(&module));
    if start + size != len {
        return Err(SpdError::failed(
            Check::ModuleBlock,
            format!(
                "the module block ({size:#X} bytes at {start:#X}) ends at {:#X}, not where the \
                 file does ({len:#X})",
                start + size
            ),
        ));
    }
    for (what, at) in [("function profiles", 0x0C), ("function names", 0x30)] {
        let part = u64::from(LE::read_u32(&module[at..]));
        let part_end = part + u64::from(LE::read_u32(&module[at + 4..]));
        if part_end > size {
            return Err(SpdError::failed(
                Check::ModuleParts,
                format!(
                    "the {what} [{part:#X}, {part_end:#X}) run past the module block's \
                     {size:#X} bytes"
                ),
            ));
        }
    }
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn djb2_of_known_names() {
        // The values at 0x18 of the shared files: map.sys and EbpfCore.sys.
        assert_eq!(djb2(b"map.sys"), 0xB495_CBB0);
        assert_eq!(djb2(b""), 5381);
    }

    #[test]
    fn checks_are_numbered_in_order() {
        let all = [
            Check::Signature,
            Check::NamesArea,
            Check::NameHash,
            Check::ModuleBlock,
            Check::ModuleParts,
        ];
        let numbers: Vec<u8> = all.iter().map(|c| c.number()).collect();
        assert_eq!(numbers, [1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_short_file_fails_the_first_check() {
        let mut bytes = io::Cursor::new(b"H_Q_".to_vec());
        let e = read(&mut bytes, 4).unwrap_err();
        assert!(
            matches!(
                e,
                SpdError::NotRecognised {
                    check: Check::Signature,
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string()
                .starts_with("not a recognised SPD: check 1 (size and signature)")
        );
    }

    /// A file of a header's bytes and no more passes the size check, and fails a later one.
    #[test]
    fn a_header_alone_passes_the_size_check() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe/app.spd");
        let mut header = std::fs::read(path).unwrap();
        header.truncate(HEADER);
        let e = read(&mut io::Cursor::new(header), HEADER as u64).unwrap_err();
        assert!(
            matches!(&e, SpdError::NotRecognised { check, .. } if *check != Check::Signature),
            "{e}"
        );
    }
}
