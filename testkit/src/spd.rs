//! A writer of SPD files (Sample Profile Databases) from the layout in docs/format.md alone,
//! sharing no code with sptdump's reader: the synthetic SPDs of the tests, of the README
//! (`testdata/pe/*.spd`) and of the fuzzer's seeds.
//!
//! ```text
//! 0x00  "H_Q_"   0x04  version   0x18  djb2 of the binary's name
//! 0x30  names area offset, 0x34 its size   0x38  module block offset
//! 0x48  age      0x4C  GUID (program-ID byte order)   0x5C, 0x64  profile totals (u64)
//! 0x80  names area: the binary's name and "* CIL module *", UTF-16LE, NUL-terminated
//! then, at an 8-byte boundary, the module block: a 0x38-byte header (+0x00 its size,
//! +0x0C/+0x10 function profiles, +0x1C function count, +0x30/+0x34 function names), the
//! profiles (16 bytes a function), the names (NUL-separated), to the end of the file
//! ```

use crate::builder::Guid;

/// An SPD to write.
#[derive(Clone, Debug)]
pub struct SpdBuilder {
    /// The binary's name, as the names area holds it.
    pub binary: String,
    /// The GUID of the binary's PDB.
    pub guid: Guid,
    /// The age of the binary's PDB.
    pub age: u32,
    /// The names of the functions with profiles.
    pub functions: Vec<String>,
    /// The two profile totals: both 0 before any trace was imported.
    pub totals: [u64; 2],
    /// The value at 0x04.
    pub version: u32,
    /// Bytes to write over the built file, last: `(offset, bytes)`.
    pub patches: Vec<(usize, Vec<u8>)>,
    /// Where to cut the built file, after the patches.
    pub truncate: Option<usize>,
}

/// Offsets of the header's fields.
pub mod field {
    /// The signature, `H_Q_`.
    pub const SIGNATURE: usize = 0x00;
    /// The version, `0x100C`.
    pub const VERSION: usize = 0x04;
    /// djb2 of the binary's name.
    pub const NAME_HASH: usize = 0x18;
    /// The names area's offset.
    pub const NAMES_OFFSET: usize = 0x30;
    /// The names area's size.
    pub const NAMES_SIZE: usize = 0x34;
    /// The module block's offset.
    pub const MODULE_OFFSET: usize = 0x38;
    /// The age.
    pub const AGE: usize = 0x48;
    /// The GUID.
    pub const GUID: usize = 0x4C;
    /// The first profile total.
    pub const TOTAL_1: usize = 0x5C;
    /// Within the module block: its size.
    pub const MODULE_SIZE: usize = 0x00;
    /// Within the module block: the function profiles' offset.
    pub const PROFILES_OFFSET: usize = 0x0C;
    /// Within the module block: the function names' offset.
    pub const FUNCTION_NAMES_OFFSET: usize = 0x30;
}

/// The value at 0x04 of every known SPD.
pub const VERSION: u32 = 0x100C;

/// The hash at 0x18: h = 5381, then h = h * 33 + byte, wrapping at 32 bits.
pub fn name_hash(name: &str) -> u32 {
    let mut h: u32 = 5381;
    for b in name.bytes() {
        h = h.wrapping_mul(33).wrapping_add(u32::from(b));
    }
    h
}

fn utf16z(s: &str) -> Vec<u8> {
    s.encode_utf16()
        .chain([0])
        .flat_map(|u| u.to_le_bytes())
        .collect()
}

fn put_u32(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

impl SpdBuilder {
    /// An SPD of `binary`, profiled, with three functions.
    pub fn new(binary: &str, guid: &str, age: u32) -> SpdBuilder {
        SpdBuilder {
            binary: binary.to_owned(),
            guid: Guid::parse(guid),
            age,
            functions: ["main", "work", "helper"].map(String::from).to_vec(),
            totals: [1200, 1200],
            version: VERSION,
            patches: Vec::new(),
            truncate: None,
        }
    }

    /// The same SPD before any trace was imported into it.
    pub fn not_profiled(mut self) -> SpdBuilder {
        self.totals = [0, 0];
        self
    }

    /// Where the module block starts.
    pub fn module_offset(&self) -> usize {
        let names = 0x80 + utf16z(&self.binary).len() + utf16z("* CIL module *").len();
        names.next_multiple_of(8)
    }

    /// The bytes of the file.
    pub fn build(&self) -> Vec<u8> {
        let mut names = utf16z(&self.binary);
        names.extend(utf16z("* CIL module *"));
        let module_at = self.module_offset();
        let mut header = vec![0u8; 0x80];
        header[..4].copy_from_slice(b"H_Q_");
        put_u32(&mut header, field::VERSION, self.version);
        put_u32(&mut header, field::NAME_HASH, name_hash(&self.binary));
        put_u32(&mut header, field::NAMES_OFFSET, 0x80);
        put_u32(&mut header, field::NAMES_SIZE, names.len() as u32);
        put_u32(&mut header, field::MODULE_OFFSET, module_at as u32);
        put_u32(&mut header, field::AGE, self.age);
        header[field::GUID..field::GUID + 16].copy_from_slice(&self.guid.0);
        header[field::TOTAL_1..field::TOTAL_1 + 8].copy_from_slice(&self.totals[0].to_le_bytes());
        header[0x64..0x6C].copy_from_slice(&self.totals[1].to_le_bytes());
        let mut file = header;
        file.extend(names);
        file.resize(module_at, 0);
        file.extend(self.module());
        for (at, bytes) in &self.patches {
            file[*at..*at + bytes.len()].copy_from_slice(bytes);
        }
        if let Some(len) = self.truncate {
            file.truncate(len);
        }
        file
    }

    /// The module block: its header, the profiles, the function names.
    fn module(&self) -> Vec<u8> {
        let profiles: Vec<u8> = (0..self.functions.len())
            .flat_map(|i| {
                let mut p = [0u8; 16];
                p[..4].copy_from_slice(&(i as u32).to_le_bytes());
                p[8..16].copy_from_slice(&self.totals[0].to_le_bytes());
                p
            })
            .collect();
        let mut function_names: Vec<u8> = Vec::new();
        for f in &self.functions {
            function_names.extend(f.as_bytes());
            function_names.push(0);
        }
        let mut header = vec![0u8; 0x38];
        let size = 0x38 + profiles.len() + function_names.len();
        put_u32(&mut header, field::MODULE_SIZE, size as u32);
        put_u32(&mut header, field::PROFILES_OFFSET, 0x38);
        put_u32(&mut header, 0x10, profiles.len() as u32);
        put_u32(&mut header, 0x1C, self.functions.len() as u32);
        let names_at = 0x38 + profiles.len();
        put_u32(&mut header, field::FUNCTION_NAMES_OFFSET, names_at as u32);
        put_u32(&mut header, 0x34, function_names.len() as u32);
        let mut module = header;
        module.extend(profiles);
        module.extend(function_names);
        module
    }

    /// Writes `bytes` at `at` of the built file.
    pub fn patch(mut self, at: usize, bytes: &[u8]) -> SpdBuilder {
        self.patches.push((at, bytes.to_vec()));
        self
    }

    /// Writes the u32 `v` at `at` of the built file.
    pub fn patch_u32(self, at: usize, v: u32) -> SpdBuilder {
        self.patch(at, &v.to_le_bytes())
    }

    /// Cuts the built file at `len` bytes.
    pub fn truncate(mut self, len: usize) -> SpdBuilder {
        self.truncate = Some(len);
        self
    }
}

/// The SPDs of `testdata/pe/`, for the README, each with the file name it has there: the
/// build of `app.exe` in `testdata/pe/` (profiled), an older build of it (another GUID),
/// and `core.dll`'s build before any trace was imported.
pub fn readme_spds() -> Vec<(&'static str, Vec<u8>)> {
    let app = "7A76D39E-EF6D-104E-4C4C-44205044422E";
    let old_app = "1C0E5B7A-3D2F-4A61-9E84-55C3A0F2B917";
    let core = "5DFC88D6-05FC-4E3C-4C4C-44205044422E";
    let mut app_spd = SpdBuilder::new("app.exe", app, 1);
    app_spd.functions = [
        "main_entry",
        "compute_checksum",
        "parse_token",
        "hash_bytes",
        "mix_round",
        "spin_pause",
    ]
    .map(String::from)
    .to_vec();
    let mut old = app_spd.clone();
    old.guid = Guid::parse(old_app);
    let mut core_spd = SpdBuilder::new("core.dll", core, 1).not_profiled();
    core_spd.functions = ["core_add", "core_scale"].map(String::from).to_vec();
    vec![
        ("app.spd", app_spd.build()),
        ("app-old.spd", old.build()),
        ("core.spd", core_spd.build()),
    ]
}
