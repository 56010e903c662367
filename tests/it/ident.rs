//! Identities of the PE and PDB fixtures in `testdata/pe`, checked against what LLVM's tools
//! printed for them (`*.readobj.txt`, `*.pdbutil.txt`, written by `testdata/pe/build.sh`).

use std::io;
use std::path::{Path, PathBuf};

use sptdump::format::progid::ProgramId;
use sptdump::image::ident::{self, IdentError, Identity, Kind};
use sptdump::image::symbols::Symbols;
use sptdump_testkit::fixtures;
use uuid::Uuid;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/pe")
        .join(name)
}

fn read(name: &str) -> Identity {
    ident::read(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn dump(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The value after `key` on the first line (after `from`) that starts with it, trimmed.
fn field<'a>(text: &'a str, from: &str, key: &str) -> &'a str {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("no {from:?} in dump"));
    text[start..]
        .lines()
        .find_map(|line| line.trim_start().strip_prefix(key))
        .unwrap_or_else(|| panic!("no {key:?} after {from:?}"))
        .trim()
}

/// What `llvm-readobj --coff-debug-directory` printed of an image's CodeView record.
struct ReadobjCodeView {
    /// The GUID's 16 bytes as they are in the file.
    guid_bytes: [u8; 16],
    age: u32,
    pdb_file_name: String,
    /// File offset of the record.
    pointer_to_raw_data: u64,
}

fn readobj(image: &str) -> ReadobjCodeView {
    let text = dump(&format!(
        "{}.readobj.txt",
        image.trim_end_matches(".exe").trim_end_matches(".dll")
    ));
    let guid = field(&text, "PDBInfo", "PDBGUID:");
    let bytes: Vec<u8> = guid
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect();
    let offset = field(&text, "Type: CodeView", "PointerToRawData:");
    ReadobjCodeView {
        guid_bytes: bytes.try_into().expect("16 GUID bytes"),
        age: field(&text, "PDBInfo", "PDBAge:").parse().unwrap(),
        pdb_file_name: field(&text, "PDBInfo", "PDBFileName:").to_owned(),
        pointer_to_raw_data: u64::from_str_radix(offset.trim_start_matches("0x"), 16).unwrap(),
    }
}

/// What `llvm-pdbutil` printed of a PDB's identity.
struct PdbutilIdentity {
    /// Registry form with braces, as llvm-pdbutil prints it.
    guid: String,
    /// The PDB information stream's age.
    info_age: u32,
    /// The DBI stream's age.
    dbi_age: u32,
}

fn pdbutil(pdb: &str) -> PdbutilIdentity {
    let text = dump(&format!("{}.pdbutil.txt", pdb.trim_end_matches(".pdb")));
    let yaml_guid = field(&text, "PdbStream:", "Guid:").trim_matches('\'');
    let summary_guid = field(&text, "Summary", "GUID:");
    assert_eq!(yaml_guid, summary_guid, "{pdb}: the two dumps disagree");
    let info_age: u32 = field(&text, "PdbStream:", "Age:").parse().unwrap();
    assert_eq!(
        field(&text, "Summary", "Age:").parse::<u32>().unwrap(),
        info_age
    );
    PdbutilIdentity {
        guid: summary_guid.to_owned(),
        info_age,
        dbi_age: field(&text, "DbiStream:", "Age:").parse().unwrap(),
    }
}

fn registry_form(guid: &Uuid) -> String {
    format!("{{{}}}", guid.hyphenated().to_string().to_uppercase())
}

const IMAGES: [&str; 4] = ["app.exe", "core.dll", "v2/core.dll", "age2/core.dll"];
const PDBS: [&str; 4] = ["app.pdb", "core.pdb", "v2/core.pdb", "infoage2/core.pdb"];

/// The identities the test kit names the fixtures by are the ones their files hold.
#[test]
fn the_test_kits_identities_are_the_fixtures() {
    for (image, guid) in [
        ("app.exe", fixtures::APP_GUID),
        ("core.dll", fixtures::CORE_GUID),
    ] {
        let expected = Uuid::from_bytes_le(readobj(image).guid_bytes);
        assert_eq!(registry_form(&expected), format!("{{{guid}}}"), "{image}");
        assert_eq!(read(image).guid, expected, "{image}");
    }
}

#[test]
fn images_match_llvm_readobj() {
    for image in IMAGES {
        let id = read(image);
        let expected = readobj(image);
        assert_eq!(id.kind, Kind::Pe, "{image}");
        assert_eq!(id.guid, Uuid::from_bytes_le(expected.guid_bytes), "{image}");
        assert_eq!(id.age, expected.age, "{image}");
        assert_eq!(
            id.pdb_path.as_deref(),
            Some(expected.pdb_file_name.as_str()),
            "{image}"
        );
        assert_eq!(id.name, image.rsplit('/').next().unwrap(), "{image}");
    }
}

#[test]
fn pdbs_match_llvm_pdbutil() {
    for pdb in PDBS {
        let id = read(pdb);
        let expected = pdbutil(pdb);
        assert_eq!(id.kind, Kind::Pdb, "{pdb}");
        assert_eq!(registry_form(&id.guid), expected.guid, "{pdb}");
        // The DBI stream's age is the one reported.
        assert_eq!(id.age, expected.dbi_age, "{pdb}");
        assert_eq!(id.pdb_path, None, "{pdb}");
        assert_eq!(id.name, pdb.rsplit('/').next().unwrap(), "{pdb}");
    }
}

#[test]
fn images_and_their_pdbs_agree() {
    for (image, pdb) in [
        ("app.exe", "app.pdb"),
        ("core.dll", "core.pdb"),
        ("v2/core.dll", "v2/core.pdb"),
    ] {
        let (image_id, pdb_id) = (read(image), read(pdb));
        assert_eq!(
            (image_id.guid, image_id.age),
            (pdb_id.guid, pdb_id.age),
            "{image}"
        );
        assert_eq!(
            image_id.pdb_path.as_deref(),
            Some(pdb_id.name.as_str()),
            "{image}"
        );
    }
}

#[test]
fn v2_is_another_build_of_the_same_binary() {
    let (v1, v2) = (read("core.dll"), read("v2/core.dll"));
    assert_eq!(v1.name, v2.name);
    assert_eq!(v1.pdb_path, v2.pdb_path);
    assert_eq!(v1.age, v2.age);
    assert_ne!(v1.guid, v2.guid);
    assert_ne!(read("core.pdb").guid, read("v2/core.pdb").guid);
}

#[test]
fn age2_differs_in_age_only() {
    let (v1, age2) = (read("core.dll"), read("age2/core.dll"));
    assert_eq!((v1.guid, v1.age + 1), (age2.guid, age2.age));
    assert_eq!(age2.age, 2);
    assert_eq!((v1.name, v1.pdb_path), (age2.name, age2.pdb_path));
}

/// lld writes the same age into both streams of a PDB; a tool that rewrites the PDB later
/// increases the PDB information stream's only. The DBI stream's age still matches the
/// image.
#[test]
fn pdb_age_is_the_dbi_streams() {
    for pdb in ["app.pdb", "core.pdb", "v2/core.pdb"] {
        let expected = pdbutil(pdb);
        assert_eq!(expected.info_age, expected.dbi_age, "{pdb}");
    }
    let rewritten = pdbutil("infoage2/core.pdb");
    assert_eq!((rewritten.info_age, rewritten.dbi_age), (2, 1));
    let (image, pdb) = (read("core.dll"), read("infoage2/core.pdb"));
    assert_eq!((pdb.guid, pdb.age), (image.guid, image.age));
}

/// An identity compares equal with the program ID a trace records for the same build: the
/// program-ID entry is made of the CodeView record's bytes as they are in the image.
#[test]
fn identities_equal_trace_program_ids() {
    for (image, pdb) in [
        ("app.exe", "app.pdb"),
        ("core.dll", "core.pdb"),
        ("v2/core.dll", "v2/core.pdb"),
        ("age2/core.dll", "core.pdb"),
    ] {
        let record = readobj(image);
        let bytes = std::fs::read(fixture(image)).unwrap();
        let at = usize::try_from(record.pointer_to_raw_data).unwrap();
        assert_eq!(&bytes[at..at + 4], b"RSDS", "{image}");
        let mut entry = [0u8; 24];
        entry[..20].copy_from_slice(&bytes[at + 4..at + 24]); // GUID and age, as on disk
        let progid = ProgramId::parse(&entry);

        let image_id = read(image);
        assert_eq!(progid.guid, image_id.guid, "{image}");
        assert_eq!(progid.age, image_id.age, "{image}");
        assert_eq!(
            progid.guid_string(),
            registry_form(&image_id.guid).trim_matches(['{', '}'])
        );
        assert_eq!(
            progid.symkey().to_string(),
            format!(
                "{}{:X}",
                image_id.guid.simple().to_string().to_uppercase(),
                image_id.age
            )
        );

        let pdb_id = read(pdb);
        assert_eq!(progid.guid, pdb_id.guid, "{pdb}");
        assert_eq!(
            format!("{{{}}}", progid.guid_string()),
            pdbutil(pdb).guid,
            "{pdb}"
        );
    }
}

#[test]
fn image_linked_without_debug_has_no_codeview_record() {
    let path = fixture("nodebug.exe");
    let err = ident::read(&path).unwrap_err();
    assert!(matches!(err, IdentError::NoCodeView { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "{} has no CodeView (RSDS) debug record: was it linked without /DEBUG?",
            path.display()
        )
    );
    assert_eq!(err.path(), path);
}

#[test]
fn image_without_debug_directory() {
    let path = fixture("nodebugdir.exe");
    let text = dump("nodebugdir.readobj.txt");
    assert!(
        text.contains("DebugDirectory [\n]"),
        "the fixture has a debug directory"
    );
    let err = ident::read(&path).unwrap_err();
    assert!(matches!(err, IdentError::NoDebugDirectory { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "{} has no debug directory, so no CodeView (RSDS) record: was it linked without /DEBUG?",
            path.display()
        )
    );
}

#[test]
fn other_files_are_neither_pe_nor_pdb_nor_spd() {
    let dir = tempfile::tempdir().unwrap();
    let spt = dir.path().join("sample.spt");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/sample.spt"),
        &spt,
    )
    .unwrap();
    for path in [fixture("app.c"), fixture("build.sh"), spt] {
        let err = ident::read(&path).unwrap_err();
        assert!(matches!(err, IdentError::Unrecognized { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            format!(
                "{} is neither a PE image (no MZ header), a PDB (no MSF 7.00 signature) nor an \
                 SPD (no H_Q_ signature)",
                path.display()
            )
        );
    }
}

#[test]
fn missing_file_cannot_be_read() {
    let path = fixture("no-such-file.dll");
    let err = ident::read(&path).unwrap_err();
    match &err {
        IdentError::Io { source, .. } => assert_eq!(source.kind(), io::ErrorKind::NotFound),
        other => panic!("expected an I/O error, got {other}"),
    }
    assert!(
        err.to_string()
            .starts_with(&format!("cannot read {}: ", path.display())),
        "{err}"
    );
    assert!(std::error::Error::source(&err).is_some());
}

#[test]
fn symbols_want_a_pdb() {
    for name in ["app.exe", "app.c"] {
        let path = fixture(name);
        let err = Symbols::from_pdb(&path).unwrap_err();
        assert!(matches!(err, IdentError::NotPdb { .. }), "{name}: {err}");
        assert_eq!(
            err.to_string(),
            format!("{} is not a PDB (no MSF 7.00 signature)", path.display())
        );
    }
    let err = Symbols::from_pdb(&fixture("no-such-file.pdb")).unwrap_err();
    assert!(matches!(err, IdentError::Io { .. }), "{err}");
}
