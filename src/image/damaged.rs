//! What is wrong with a PDB or an image that the readers of those formats refused, in our
//! words: where the file ends against where its own headers say it should, which part of it
//! that is (the MSF header, the stream directory, a stream; the DOS header, the PE headers,
//! a section), or what a record is; never the readers' own words.
//!
//! ```text
//! the PDB ends at byte 3000 (in block 0), before its stream directory's block map (block 17),
//!     where its MSF header gives 18 blocks of 4096 bytes (73728 bytes): it was cut short
//! the image ends at byte 300 inside its PE headers, which end at byte 464 (2 sections): it
//!     was cut short
//! ```

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// The first 32 bytes of a PDB 7.0 file (an MSF 7.00 container).
pub(crate) const MSF7_SIGNATURE: &[u8; 32] = b"Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0";

/// What is wrong with a file, in our words, as an error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Words(pub String);

/// The MSF header's size: the signature and six u32 fields.
const MSF_HEADER: u64 = 56;

/// The most bytes of a stream directory read to tell which stream a byte is in.
const MAX_DIRECTORY: u64 = 64 << 20;

/// What is wrong with the PDB at `path`, which the PDB reader refused with `e`.
pub(crate) fn pdb(path: &Path, e: &pdb2::Error) -> String {
    cut_pdb(path).unwrap_or_else(|| pdb_error(e))
}

/// Where the PDB at `path` ends inside what its MSF header gives, when it is cut short or its
/// header cannot be what a PDB has.
fn cut_pdb(path: &Path) -> Option<String> {
    let mut file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let mut head = [0u8; MSF_HEADER as usize];
    let got = read_up_to(&mut file, 0, &mut head).ok()?;
    let head = &head[..got];
    if !head.starts_with(MSF7_SIGNATURE) {
        return Some(format!(
            "not a PDB: its first bytes are {} where a PDB 7.0 file starts with 'Microsoft C/C++ \
             MSF 7.00'",
            hex(&head[..head.len().min(8)])
        ));
    }
    if len < MSF_HEADER {
        return Some(format!(
            "the PDB ends at byte {len} inside its MSF header ({MSF_HEADER} bytes): it was cut \
             short"
        ));
    }
    let word = |at: usize| u64::from(u32::from_le_bytes(head[at..at + 4].try_into().unwrap()));
    let (block, blocks, directory, map) = (word(32), word(40), word(44), word(52));
    if !matches!(block, 512 | 1024 | 2048 | 4096 | 8192 | 16384 | 32768) {
        return Some(format!(
            "its MSF header gives a block size of {block} bytes, where a PDB's is a power of two \
             from 512 to 32768: the header is damaged"
        ));
    }
    let whole = blocks * block;
    let at = |what: String| {
        format!(
            "the PDB ends at byte {len} {what}, where its MSF header gives {blocks} blocks of \
             {block} bytes ({whole} bytes): it was cut short"
        )
    };
    if len >= whole {
        return (map >= blocks).then(|| {
            format!(
                "its stream directory's block map is at block {map}, past its {blocks} blocks: \
                 the PDB is damaged"
            )
        });
    }
    let cut = len / block;
    if map >= cut {
        return Some(at(format!(
            "(in block {cut}), before its stream directory's block map (block {map})"
        )));
    }
    let msf = Msf {
        block,
        directory,
        map,
    };
    Some(at(cut_in_directory(&mut file, &msf, cut)?))
}

/// What an MSF header gives of the stream directory.
struct Msf {
    /// The block size.
    block: u64,
    /// The stream directory's size in bytes.
    directory: u64,
    /// The block that lists the directory's blocks.
    map: u64,
}

/// Where block `cut`, the first the file does not hold whole, falls in the PDB's layout:
/// in the stream directory's block map, the directory, a stream, or no stream.
fn cut_in_directory(file: &mut File, msf: &Msf, cut: u64) -> Option<String> {
    let Msf {
        block,
        directory,
        map,
    } = *msf;
    // The directory's blocks, listed at block `map`; each stream's, listed in it. The
    // directory's size is checked before anything is allocated by it.
    if directory > MAX_DIRECTORY {
        return Some("inside its stream directory's block map".to_owned());
    }
    let listed = directory.div_ceil(block);
    let mut list = vec![0u8; (listed * 4) as usize];
    if read_up_to(file, map * block, &mut list).ok()? < list.len() {
        return Some("inside its stream directory's block map".to_owned());
    }
    let directory_blocks: Vec<u64> = words(&list).collect();
    if directory_blocks.contains(&cut) {
        return Some(format!("inside its stream directory (block {cut})"));
    }
    if let Some(beyond) = directory_blocks.iter().find(|&&b| b > cut) {
        return Some(format!(
            "(in block {cut}), before the end of its stream directory (block {beyond})"
        ));
    }
    let mut bytes = Vec::with_capacity(directory as usize);
    for &b in &directory_blocks {
        let mut one = vec![0u8; block as usize];
        let got = read_up_to(file, b * block, &mut one).ok()?;
        bytes.extend_from_slice(&one[..got]);
    }
    bytes.truncate(directory as usize);
    let mut fields = words(&bytes);
    let streams = fields.next()?;
    let sizes: Vec<u64> = fields.by_ref().take(streams as usize).collect();
    for (k, size) in sizes.iter().enumerate() {
        // A stream of size 0xFFFFFFFF is absent, and has no blocks.
        let n = if *size == u64::from(u32::MAX) {
            0
        } else {
            size.div_ceil(block)
        };
        let mut its = fields.by_ref().take(n as usize);
        if its.any(|b| b == cut) {
            return Some(format!("inside stream {k} (block {cut})"));
        }
    }
    Some(format!("in block {cut}, which no stream uses"))
}

/// What the PDB reader's error `e` means, in our words, when the file's layout says nothing.
fn pdb_error(e: &pdb2::Error) -> String {
    use pdb2::Error as E;
    match e {
        E::UnrecognizedFileFormat => "its MSF header is not that of a PDB 7.0 file".to_owned(),
        E::InvalidPageSize(n) => format!(
            "its MSF header gives a block size of {n} bytes, where a PDB's is a power of two \
             from 512 to 32768"
        ),
        E::PageReferenceOutOfRange(p) => {
            format!("a stream lists block {p}, past the end of the file: the PDB is damaged")
        }
        E::StreamNotFound(s) => format!("stream {s}, which it refers to, is not in the file"),
        E::StreamNameNotFound => "a named stream it needs is not in the file".to_owned(),
        E::InvalidStreamLength(s) => {
            format!("its {s} stream's length does not fit its records: the stream is damaged")
        }
        E::IoError(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            "a stream ends before its records do: the PDB is damaged or cut short".to_owned()
        }
        E::IoError(e) => crate::input::describe(e),
        E::UnexpectedEof | E::ScrollError(_) | E::SymbolTooShort | E::TypeTooShort => {
            "a record runs past the end of its stream: the PDB is damaged".to_owned()
        }
        E::UnimplementedFeature(f) => format!("it uses something not read here ({f})"),
        E::GlobalSymbolsNotFound => "it has no global symbol stream".to_owned(),
        E::UnimplementedSymbolKind(k) => format!("a symbol record of kind {k:#06X}, not read here"),
        E::InvalidTypeInformationHeader(why) => {
            format!("its type information header is damaged ({why})")
        }
        E::TypeNotFound(t) | E::TypeNotIndexed(t, _) => {
            format!("type {t} is referred to and not in its type stream")
        }
        E::UnimplementedTypeKind(k) => format!("a type record of kind {k:#06X}, not read here"),
        E::NotACrossModuleRef(i) | E::CrossModuleRefNotFound(i) => {
            format!("the cross-module type reference {i:#X} cannot be followed")
        }
        E::UnexpectedNumericPrefix(p) => {
            format!("a number in a record has the prefix {p:#06X}, which no number has")
        }
        E::AddressMapNotFound => "it has no section headers to place its functions".to_owned(),
        E::UnimplementedDebugSubsection(k) => {
            format!("a module's debug subsection of kind {k:#X}, not read here")
        }
        E::UnimplementedFileChecksumKind(k) => {
            format!("a source file checksum of kind {k}, not read here")
        }
        E::InvalidFileChecksumOffset(o) => {
            format!("a line record names a source file at {o:#X}, outside its file checksums")
        }
        E::LinesNotFound => "a module's line records are not where it says".to_owned(),
        E::InvalidCompressedAnnotation | E::UnknownBinaryAnnotation(_) => {
            "an inline site's annotations are damaged".to_owned()
        }
        E::UnknownRegister(r) => format!("a record names register {r}, which no machine has"),
        _ => "its records cannot be read: the PDB is damaged".to_owned(),
    }
}

/// What is wrong with the image at `path`, which the image reader refused: where it ends
/// against where its headers and sections say it should, or which header is damaged.
pub(crate) fn image(path: &Path) -> String {
    match std::fs::read(path) {
        Ok(bytes) => image_bytes(&bytes),
        Err(e) => crate::input::describe(&e),
    }
}

/// [`image`] of its bytes.
fn image_bytes(b: &[u8]) -> String {
    let len = b.len();
    let u16_at = |at: usize| b.get(at..at + 2).map(|s| u16::from_le_bytes([s[0], s[1]]));
    let u32_at = |at: usize| {
        b.get(at..at + 4)
            .map(|s| u32::from_le_bytes(s.try_into().unwrap()) as usize)
    };
    let cut = |what: &str| format!("the image ends at byte {len} {what}: it was cut short");
    if !b.starts_with(b"MZ") {
        return format!(
            "not a PE image: its first bytes are {} where an image starts with 'MZ'",
            hex(&b[..len.min(8)])
        );
    }
    let Some(pe) = u32_at(0x3C) else {
        return cut("inside its DOS header (64 bytes)");
    };
    if pe + 24 > len {
        return cut(&format!(
            "inside its PE signature and COFF header, which its DOS header places at byte {pe}"
        ));
    }
    if &b[pe..pe + 4] != b"PE\0\0" {
        return format!(
            "its DOS header places the PE signature at byte {pe}, where the bytes are {}, not \
             'PE' and two zeros: the image is damaged",
            hex(&b[pe..pe + 4])
        );
    }
    let (sections, optional) = (
        usize::from(u16_at(pe + 6).unwrap_or(0)),
        usize::from(u16_at(pe + 20).unwrap_or(0)),
    );
    let headers = pe + 24 + optional + 40 * sections;
    if headers > len {
        return cut(&format!(
            "inside its PE headers, which end at byte {headers} ({sections} sections)"
        ));
    }
    let table = pe + 24 + optional;
    for s in 0..sections {
        let at = table + 40 * s;
        let name = String::from_utf8_lossy(&b[at..at + 8])
            .trim_end_matches('\0')
            .to_owned();
        let (size, start) = (u32_at(at + 16).unwrap_or(0), u32_at(at + 20).unwrap_or(0));
        if size > 0 && start.saturating_add(size) > len {
            return cut(&format!(
                "before the end of its section {name} (bytes {start} to {})",
                start.saturating_add(size)
            ));
        }
    }
    "its PE headers are damaged: a size, an offset or a directory in them does not fit the \
     file"
        .to_owned()
}

/// Up to `buf.len()` bytes at `at`; how many there were.
fn read_up_to(file: &mut File, at: u64, buf: &mut [u8]) -> io::Result<usize> {
    file.seek(SeekFrom::Start(at))?;
    let mut got = 0;
    while got < buf.len() {
        match file.read(&mut buf[got..])? {
            0 => break,
            n => got += n,
        }
    }
    Ok(got)
}

/// The little-endian u32s of `bytes`.
fn words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes
        .chunks_exact(4)
        .map(|w| u64::from(u32::from_le_bytes(w.try_into().unwrap())))
}

/// Bytes as hex pairs: `4D 5A 90 00`.
fn hex(bytes: &[u8]) -> String {
    let pairs: Vec<String> = bytes.iter().map(|b| format!("{b:02X}")).collect();
    match pairs.is_empty() {
        true => "none (the file is empty)".to_owned(),
        false => pairs.join(" "),
    }
}
