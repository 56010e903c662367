//! The code of a PE image (`/image`): its executable sections' bytes, by RVA, and the
//! instruction at an address, decoded by iced-x86: its length, how it passes control on, and
//! where a near branch goes.
//!
//! Only what the views ask for is decoded, one instruction at a time; nothing is decoded of
//! an image whose machine is not x86 or x86-64 (an ARM64 image is read, and says so).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use iced_x86::{Decoder, DecoderOptions, FlowControl, Formatter, IntelFormatter, Mnemonic};
use object::read::pe::{ImageNtHeaders, ImageOptionalHeader, PeFile, PeFile32, PeFile64};
use object::{FileKind, LittleEndian as LE, ReadCache, ReadRef};

use crate::image::damaged;
use crate::image::ident::{self, IdentError, Identity, Kind};

/// The machine an image's code is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Machine {
    /// x86-64 (`IMAGE_FILE_MACHINE_AMD64`).
    X64,
    /// 32-bit x86 (`IMAGE_FILE_MACHINE_I386`).
    X86,
    /// ARM64 (`IMAGE_FILE_MACHINE_ARM64`): read, not decoded.
    Arm64,
    /// Another machine, by its number in the PE header.
    Other(u16),
}

impl fmt::Display for Machine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Machine::X64 => f.write_str("x86-64"),
            Machine::X86 => f.write_str("x86"),
            Machine::Arm64 => f.write_str("ARM64"),
            Machine::Other(m) => write!(f, "machine 0x{m:04X}"),
        }
    }
}

/// How an instruction passes control on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Flow {
    /// To the next instruction.
    Next,
    /// A call, direct or indirect.
    Call,
    /// An unconditional jump, direct or indirect.
    Jump,
    /// A conditional jump.
    Conditional,
    /// A return.
    Return,
    /// Anything else that does not fall through (an interrupt, an exception, `ud2`).
    Stop,
}

/// One instruction of an image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instruction {
    /// Its length in bytes.
    pub len: u32,
    /// How it passes control on.
    pub flow: Flow,
    /// The RVA a direct near branch or call goes to.
    pub target: Option<u32>,
    /// Whether it is padding: `int3` or a `nop` of any length.
    pub padding: bool,
}

/// The executable sections of an image.
#[derive(Debug)]
pub struct Code {
    /// Whose code it is.
    pub machine: Machine,
    /// Where the image is based: RVAs are addresses less this.
    base: u64,
    /// The executable sections, by RVA, each with its bytes as the file holds them.
    sections: Vec<(u32, Vec<u8>)>,
}

/// Why an image's code cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CodeError {
    /// Its identity could not be read.
    #[error("{0}")]
    Identity(IdentError),
    /// It is not a PE image.
    #[error("this is a {0}, not an image: give the .exe or .dll the trace was recorded from")]
    NotImage(Kind),
    /// Its headers or sections cannot be read.
    #[error("cannot read its code: {0}")]
    Malformed(String),
}

impl Code {
    /// Reads the executable sections of the PE image at `path`.
    pub fn read(path: &Path) -> Result<Code, CodeError> {
        let file = crate::input::open_file(path)
            .map_err(|e| CodeError::Identity(IdentError::io(path, e)))?;
        let cache = ReadCache::new(file);
        let malformed = |_: object::Error| CodeError::Malformed(damaged::image(path));
        match FileKind::parse(&cache).map_err(malformed)? {
            FileKind::Pe32 => sections(&PeFile32::parse(&cache).map_err(malformed)?, &cache),
            FileKind::Pe64 => sections(&PeFile64::parse(&cache).map_err(malformed)?, &cache),
            _ => Err(CodeError::Malformed("no PE header".to_owned())),
        }
    }

    /// The instruction at `rva`, when it lies in an executable section and decodes; `None`
    /// for an image whose machine is not decoded.
    pub fn instruction(&self, rva: u32) -> Option<Instruction> {
        let i = self.decode(rva, self.base)?;
        let flow = match i.flow_control() {
            FlowControl::Next | FlowControl::XbeginXabortXend => Flow::Next,
            FlowControl::Call | FlowControl::IndirectCall => Flow::Call,
            FlowControl::UnconditionalBranch | FlowControl::IndirectBranch => Flow::Jump,
            FlowControl::ConditionalBranch => Flow::Conditional,
            FlowControl::Return => Flow::Return,
            FlowControl::Interrupt | FlowControl::Exception => Flow::Stop,
        };
        let target = match i.flow_control() {
            FlowControl::Call
            | FlowControl::UnconditionalBranch
            | FlowControl::ConditionalBranch => i
                .near_branch_target()
                .checked_sub(self.base)
                .and_then(|t| u32::try_from(t).ok()),
            _ => None,
        };
        Some(Instruction {
            len: i.len() as u32,
            flow,
            target,
            padding: matches!(i.mnemonic(), Mnemonic::Int3 | Mnemonic::Nop),
        })
    }
}

impl Code {
    /// The instruction at `rva` as Intel syntax writes it (`mov eax, ecx`), the addresses
    /// it names (branch targets, RIP-relative operands) as RVAs, as every other address is
    /// shown; `None` where [`Code::instruction`] is.
    pub fn text(&self, rva: u32) -> Option<String> {
        let i = self.decode(rva, 0)?;
        let mut text = String::new();
        let mut formatter = IntelFormatter::new();
        let options = formatter.options_mut();
        options.set_space_after_operand_separator(true);
        options.set_hex_prefix("0x");
        options.set_hex_suffix("");
        options.set_uppercase_hex(true);
        options.set_branch_leading_zeros(false);
        options.set_show_branch_size(false);
        formatter.format(&i, &mut text);
        Some(text)
    }

    /// The instruction at `rva`, decoded as if the image were based at `base`.
    fn decode(&self, rva: u32, base: u64) -> Option<iced_x86::Instruction> {
        let bitness = match self.machine {
            Machine::X64 => 64,
            Machine::X86 => 32,
            Machine::Arm64 | Machine::Other(_) => return None,
        };
        let (start, bytes) = self
            .sections
            .iter()
            .rev()
            .find(|(start, _)| *start <= rva)?;
        let at = usize::try_from(rva - start).ok()?;
        let bytes = bytes.get(at..)?;
        let ip = base.checked_add(u64::from(rva))?;
        let mut decoder = Decoder::with_ip(bitness, bytes, ip, DecoderOptions::NONE);
        let i = decoder.decode();
        (!i.is_invalid()).then_some(i)
    }
}

/// The executable sections of `pe`, read from `data`.
fn sections<'d, Pe: ImageNtHeaders, R: ReadRef<'d>>(
    pe: &PeFile<'d, Pe, R>,
    data: R,
) -> Result<Code, CodeError> {
    let machine = match pe.nt_headers().file_header().machine.get(LE) {
        object::pe::IMAGE_FILE_MACHINE_AMD64 => Machine::X64,
        object::pe::IMAGE_FILE_MACHINE_I386 => Machine::X86,
        object::pe::IMAGE_FILE_MACHINE_ARM64 => Machine::Arm64,
        other => Machine::Other(other.0),
    };
    let mut sections = Vec::new();
    for section in pe.section_table().iter() {
        let flags = section.characteristics.get(LE);
        if flags.0 & object::pe::IMAGE_SCN_MEM_EXECUTE.0 == 0 {
            continue;
        }
        // The bytes the file holds, no more than the section's size in memory (the rest of a
        // section is zeros, which is no code).
        let bytes = section.pe_data(data).map_err(|_| {
            CodeError::Malformed(
                "its code cannot be read: a section lies outside the file".to_owned(),
            )
        })?;
        let size = section.virtual_size.get(LE) as usize;
        let bytes = &bytes[..bytes.len().min(size.max(1))];
        sections.push((section.virtual_address.get(LE), bytes.to_vec()));
    }
    sections.sort_by_key(|(rva, _)| *rva);
    Ok(Code {
        machine,
        base: pe.nt_headers().optional_header().image_base(),
        sections,
    })
}

/// An image given to `/image`: its identity, and its code.
#[derive(Clone, Debug)]
pub struct ImageFile {
    /// The path as given.
    pub path: String,
    /// Its GUID and age.
    pub identity: Identity,
    /// Its code.
    pub code: Arc<Code>,
}

impl ImageFile {
    /// Reads the image at `path`: its identity and its code.
    pub fn read(path: &Path) -> Result<ImageFile, CodeError> {
        let identity = ident::read(path).map_err(CodeError::Identity)?;
        if identity.kind != Kind::Pe {
            return Err(CodeError::NotImage(identity.kind));
        }
        Ok(ImageFile {
            path: path.to_string_lossy().into_owned(),
            identity,
            code: Arc::new(Code::read(path)?),
        })
    }
}

impl PartialEq for ImageFile {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path && self.identity == other.identity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/pe")
            .join(name)
    }

    #[test]
    fn the_code_is_the_executable_sections_as_far_as_they_reach_in_memory() {
        // lbr.exe: .text at 0x1000, 0x2FD bytes in memory (0x400 in the file); .rdata at
        // 0x2000, not executable (lbr.pdbutil.txt's section headers).
        let code = Code::read(&fixture("lbr.exe")).unwrap();
        assert_eq!(code.machine, Machine::X64);
        assert!(code.instruction(0x1000).is_some());
        assert!(code.text(0x1000).is_some());
        for rva in [0x2000, 0x2010, 0x1000 + 0x2FD, 0x0FFF] {
            assert!(code.instruction(rva).is_none(), "{rva:#x}");
            assert!(code.text(rva).is_none(), "{rva:#x}");
        }
        let x86 = Code::read(&fixture("lbr32.exe")).unwrap();
        assert_eq!(x86.machine, Machine::X86);
        assert!(x86.instruction(0x1000).is_some());
    }

    #[test]
    fn images_are_the_same_given_by_the_same_path_with_the_same_identity() {
        let lbr = ImageFile::read(&fixture("lbr.exe")).unwrap();
        assert_eq!(lbr, ImageFile::read(&fixture("lbr.exe")).unwrap());
        assert_ne!(lbr, ImageFile::read(&fixture("lbr32.exe")).unwrap());
        // The same bytes elsewhere: another path.
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("lbr.exe");
        std::fs::copy(fixture("lbr.exe"), &copy).unwrap();
        let copied = ImageFile::read(&copy).unwrap();
        assert_eq!(copied.identity, lbr.identity);
        assert_ne!(lbr, copied);
    }
}
