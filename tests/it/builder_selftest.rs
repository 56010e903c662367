//! Tests of the test-side SPT writer itself, against bytes written out by hand and against
//! the shared conformance vectors.
//!
//! The vectors live outside this repository, in the shared suite beside it. Without them the
//! test that compares with them says it skipped (`sptdump_testkit::shared`).

use sptdump_testkit::builder::*;
use sptdump_testkit::shared;

const APP_GUID: &str = "42AC0098-ADB5-E796-8C0E-161D2814780E";
const SEQ_GUID: &str = "03020100-0504-0706-0809-0A0B0C0D0E0F";
const NIL_GUID: &str = "00000000-0000-0000-0000-000000000000";

/// One binary, "app.exe", as most conformance vectors have it.
fn app() -> SptBuilder {
    let mut b = SptBuilder::new();
    b.binary("app.exe", APP_GUID, 1);
    b
}

fn u16_at(file: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([file[at], file[at + 1]])
}

fn u32_at(file: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(file[at..at + 4].try_into().unwrap())
}

#[rustfmt::skip]
const MINIMAL_HEADER: [u8; 32] = [
    0x3A, 0x54, 0x50, 0x53, // Signature 0x5350543A ("SPT:")
    0x01, 0x00, 0x00, 0x00, // Version 1
    0x00, 0x00, 0x00, 0x00, // RawDataId 0
    0x00, 0x00, 0x00, 0x00, // TargetArch 0
    0x20, 0x00, 0x00, 0x00, // StringTableOffset 0x20
    0x20, 0x40, 0x00, 0x00, // ProgramIdTableOffset 0x4020
    0x08, 0x00,             // StringTableUsed 8 ("app.exe\0")
    0x00, 0x40,             // StringTableCapacity 0x4000
    0x01, 0x00,             // ProgramIdsUsed 1
    0x00, 0x01,             // ProgramIdCapacity 0x100
];

fn minimal() -> SptBuilder {
    let mut b = app();
    b.binary_id(0).ip(RETIRE_INSTR, &[0x1000]);
    b
}

#[test]
fn minimal_file_is_laid_out_as_drawn() {
    let file = minimal().build();
    assert_eq!(file.len(), 0x5820 + 14);
    assert_eq!(file[..32], MINIMAL_HEADER);
    assert_eq!(&file[0x20..0x28], b"app.exe\0");
    assert!(file[0x28..0x4020].iter().all(|&b| b == 0));
    #[rustfmt::skip]
    let entry = [
        0x98, 0x00, 0xAC, 0x42,             // Data1 0x42AC0098
        0xB5, 0xAD,                         // Data2 0xADB5
        0x96, 0xE7,                         // Data3 0xE796
        0x8C, 0x0E, 0x16, 0x1D, 0x28, 0x14, 0x78, 0x0E, // Data4
        0x01, 0x00, 0x00, 0x00,             // age 1
        0x00, 0x00, 0x00, 0x00,             // string offset 0
    ];
    assert_eq!(file[0x4020..0x4038], entry);
    assert!(file[0x4038..0x5820].iter().all(|&b| b == 0));
    #[rustfmt::skip]
    let stream = [
        0x81, 0x00, 0x00, 0x00, 0x0A, 0x00, 0x00, 0x00, // BINARY_ID progid 0, length 10
        0x02, 0x01, 0x00, 0x10, 0x00, 0x00,             // RETIRE_INSTR n=1, 0x1000
    ];
    assert_eq!(file[0x5820..], stream);
}

#[test]
fn minimal_matches_the_conformance_vector() {
    let dir = shared::conformance_vectors();
    let built = minimal().build();
    let expected = read_vector(&dir, "minimal.spt").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(expected[..32], MINIMAL_HEADER);
    assert_eq!(built, expected);
}

#[test]
fn empty_builder_is_header_and_reserved_tables() {
    let file = SptBuilder::new().build();
    assert_eq!(file.len() as u64, DEFAULT_STREAM_START);
    assert_eq!(u32_at(&file, 0), SIGNATURE);
    assert_eq!(u16_at(&file, 0x18), 0);
    assert_eq!(u16_at(&file, 0x1C), 0);
    assert!(file[32..].iter().all(|&b| b == 0));
}

#[test]
fn guid_parse_stores_the_first_three_groups_little_endian() {
    let expected = Guid([
        0x98, 0x00, 0xAC, 0x42, 0xB5, 0xAD, 0x96, 0xE7, 0x8C, 0x0E, 0x16, 0x1D, 0x28, 0x14, 0x78,
        0x0E,
    ]);
    assert_eq!(Guid::parse(APP_GUID), expected);
    assert_eq!(
        Guid::parse("{42AC0098-ADB5-E796-8C0E-161D2814780E}"),
        expected
    );
    assert_eq!(
        Guid::parse("42ac0098-adb5-e796-8c0e-161d2814780e"),
        expected
    );
    assert_eq!(expected.to_string(), APP_GUID);
    assert_eq!(
        Guid::from_fields(
            0x42AC0098,
            0xADB5,
            0xE796,
            [0x8C, 0x0E, 0x16, 0x1D, 0x28, 0x14, 0x78, 0x0E]
        ),
        expected
    );
    let seq = Guid::parse(SEQ_GUID);
    assert_eq!(seq.0, std::array::from_fn(|i| i as u8));
    assert_eq!(seq.to_string(), SEQ_GUID);
    assert_eq!(Guid::parse(NIL_GUID), Guid::nil());
}

#[test]
#[should_panic(expected = "not a GUID")]
fn guid_parse_rejects_a_short_group() {
    Guid::parse("42AC0098-ADB5-E796-8C0E-161D2814780");
}

#[test]
fn records_are_laid_out_as_drawn() {
    let mut b = SptBuilder::new();
    b.repeat(0x0102_0304_0506_0708)
        .ip(ETW_INSTR, &[0xAABB_CCDD, 1])
        .ip(UNHALT_CYCLE, &[])
        .callstack(&[0x10, 0x20])
        .raw(&[0xEE, 0xFF]);
    let file = b.build();
    #[rustfmt::skip]
    let stream = [
        0x82, 0x00, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // REPEAT count
        0x41, 0x02, 0xDD, 0xCC, 0xBB, 0xAA, 0x01, 0x00, 0x00, 0x00, // ETW_INSTR n=2
        0x01, 0x00,                                                 // UNHALT_CYCLE n=0
        0x42, 0x02, 0x10, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, // ETW_CALLSTACK n=2
        0xEE, 0xFF,                                                 // raw
    ];
    assert_eq!(file[0x5820..], stream);
}

#[test]
fn lbr_pairs_are_written_to_first() {
    let mut b = SptBuilder::new();
    b.lbr(&[(0x3000, 0x3010), (0x1111_2222, 0x3333_4444)]);
    let file = b.build();
    #[rustfmt::skip]
    let stream = [
        0x10, 0x02,             // LBR n=2
        0x10, 0x30, 0x00, 0x00, // to   0x3010
        0x00, 0x30, 0x00, 0x00, // from 0x3000
        0x44, 0x44, 0x33, 0x33, // to   0x33334444
        0x22, 0x22, 0x11, 0x11, // from 0x11112222
    ];
    assert_eq!(file[0x5820..], stream);
}

#[test]
fn binary_id_length_ends_at_the_next_binary_id_or_the_end() {
    let mut b = SptBuilder::new();
    b.binary_id(7) // 0x5820, records up to 0x5834
        .ip(RETIRE_INSTR, &[1, 2]) // 10 bytes
        .raw(&[0x99, 0x81]) // raw bytes belong to the segment and do not end it
        .binary_id(8) // 0x5834, empty segment
        .binary_id_with_length(9, 0xDEAD_BEEF) // 0x583C, written as is
        .repeat(1) // 0x5844
        .binary_id(10) // 0x584E, up to the end
        .callstack(&[1, 2, 3]); // 14 bytes
    let file = b.build();
    assert_eq!(file.len(), 0x584E + 8 + 14);
    assert_eq!(file[0x5820..0x5824], [0x81, 0x00, 0x07, 0x00]);
    assert_eq!(u32_at(&file, 0x5824), 0x5834 - 0x5824);
    assert_eq!(u16_at(&file, 0x5836), 8);
    assert_eq!(u32_at(&file, 0x5838), 4);
    assert_eq!(u32_at(&file, 0x5840), 0xDEAD_BEEF);
    assert_eq!(u32_at(&file, 0x5852), 8 + 14 - 4);
    for at in [0x5820u64, 0x5834, 0x584E] {
        // Every patched segment ends at offset_of_opcode + 4 + length.
        let at = at as usize;
        let end = at + 4 + u32_at(&file, at + 4) as usize;
        assert!(
            end == file.len() || file[end] == BINARY_ID,
            "segment at {at:#x}"
        );
    }
}

#[test]
fn next_record_offset_follows_the_stream() {
    let mut b = app();
    assert_eq!(b.next_record_offset(), 0x5820);
    b.binary_id(0);
    assert_eq!(b.next_record_offset(), 0x5828);
    b.repeat(3);
    assert_eq!(b.next_record_offset(), 0x5832);
    b.lbr(&[(1, 2)]);
    assert_eq!(b.next_record_offset(), 0x583C);
    // The layout can still move afterwards; the offset always reflects the current one.
    b.program_id_capacity(1);
    assert_eq!(b.stream_start(), 0x4020 + 24);
    assert_eq!(b.next_record_offset(), 0x4020 + 24 + 28);
    assert_eq!(b.build().len() as u64, b.next_record_offset());
}

#[test]
fn header_overrides_are_written_verbatim() {
    let mut b = app();
    b.signature(0x3A54_5053)
        .version(7)
        .raw_data_id(5)
        .target_arch(9)
        .string_table_used(0xFFFF)
        .program_ids_used(0x1234);
    b.binary_id(0);
    let file = b.build();
    assert_eq!(file[0..4], [0x53, 0x50, 0x54, 0x3A]);
    assert_eq!(u32_at(&file, 4), 7);
    assert_eq!(u32_at(&file, 8), 5);
    assert_eq!(u32_at(&file, 12), 9);
    assert_eq!(u16_at(&file, 0x18), 0xFFFF);
    assert_eq!(u16_at(&file, 0x1C), 0x1234);
    // The data is where it would be without the overrides.
    assert_eq!(&file[0x20..0x28], b"app.exe\0");
    assert_eq!(file[0x4020], 0x98);
    assert_eq!(file.len(), 0x5820 + 8);
}

#[test]
fn offsets_and_capacities_place_the_data() {
    let mut b = SptBuilder::new();
    b.string_table_offset(0x100).string_table_capacity(0x10);
    let name = b.string("x.dll");
    b.program_id(Guid::parse(SEQ_GUID), 2, name);
    b.program_id_capacity(2);
    b.binary_id(0).ip(L1_DCACHE_MISS, &[5]);
    let file = b.build();
    assert_eq!(u32_at(&file, 0x10), 0x100);
    assert_eq!(u32_at(&file, 0x14), 0x110);
    assert_eq!(u16_at(&file, 0x1A), 0x10);
    assert_eq!(u16_at(&file, 0x1E), 2);
    assert_eq!(&file[0x100..0x106], b"x.dll\0");
    assert_eq!(
        file[0x110..0x120],
        std::array::from_fn::<u8, 16, _>(|i| i as u8)
    );
    assert_eq!(b.stream_start(), 0x110 + 48);
    assert_eq!(file[0x140], BINARY_ID);
    assert_eq!(file.len(), 0x140 + 8 + 6);
    assert!(file[32..0x100].iter().all(|&b| b == 0));
}

#[test]
fn overflowing_tables_are_written_whole_and_later_writes_win() {
    let mut b = SptBuilder::new();
    b.string_table_capacity(4).program_id_table_offset(0x24);
    b.string("abcdefgh"); // 9 bytes from 0x20; entries overwrite them from 0x24
    b.program_id(Guid::nil(), 0x1111_1111, 0);
    b.program_id(Guid::nil(), 0x2222_2222, 0);
    b.program_id_capacity(1); // the stream starts over the second entry
    b.binary_id(0);
    let file = b.build();
    assert_eq!(u16_at(&file, 0x18), 9);
    assert_eq!(u16_at(&file, 0x1C), 2);
    assert_eq!(&file[0x20..0x24], b"abcd");
    assert_eq!(u32_at(&file, 0x24 + 16), 0x1111_1111);
    assert_eq!(b.stream_start(), 0x24 + 24);
    assert_eq!(file[0x3C..0x40], [0x81, 0x00, 0x00, 0x00]);
    assert_eq!(u32_at(&file, 0x3C + 4), 4);
    // The rest of the second entry survives past the stream's end.
    assert_eq!(u32_at(&file, 0x3C + 16), 0x2222_2222);
    assert_eq!(file.len(), 0x24 + 48);
}

#[test]
fn unused_capacity_does_not_lengthen_the_file_past_the_stream() {
    let mut b = app();
    b.program_id_table_offset(0x30).program_id_capacity(1); // inside the string table
    b.binary_id(0);
    let file = b.build();
    assert_eq!(b.stream_start(), 0x48);
    assert_eq!(file.len(), 0x48 + 8);
    assert_eq!(&file[0x20..0x28], b"app.exe\0");
}

#[test]
fn the_header_wins_over_a_table_placed_on_it() {
    let mut b = SptBuilder::new();
    b.string_table_offset(0).string_table_capacity(0x40);
    b.string("this string starts at offset zero and runs past the header");
    let file = b.build();
    assert_eq!(u32_at(&file, 0), SIGNATURE);
    assert_eq!(u16_at(&file, 0x18), 59);
    assert_eq!(&file[32..40], b"o and ru");
}

#[test]
fn patches_and_truncation_apply_last() {
    let mut b = minimal();
    b.patch_u32(field::STRING_TABLE_OFFSET, 0xFFFF_FFF0)
        .patch_u16(field::PROGRAM_ID_CAPACITY, 0)
        .patch(0x5830, &[1, 2])
        .truncate(0x5831);
    let file = b.build();
    assert_eq!(u32_at(&file, 0x10), 0xFFFF_FFF0);
    assert_eq!(u16_at(&file, 0x1E), 0);
    assert_eq!(&file[0x20..0x28], b"app.exe\0");
    assert_eq!(file.len(), 0x5831);
    assert_eq!(file[0x5830], 1);
}

#[test]
#[should_panic(expected = "at most 255")]
fn more_than_255_rvas_is_refused() {
    SptBuilder::new().ip(RETIRE_INSTR, &[0; 256]);
}

// ----- The conformance vectors, rebuilt from their expected output in cases.json.

/// The bytes of the conformance vector `name` in `dir`, or why they cannot be read.
fn read_vector(dir: &std::path::Path, name: &str) -> Result<Vec<u8>, String> {
    let path = dir.join(name);
    std::fs::read(&path).map_err(|e| format!("conformance vector {}: {e}", path.display()))
}

/// Every conformance vector, as this builder makes it.
fn vectors() -> Vec<(&'static str, SptBuilder)> {
    let mut v = Vec::new();
    let mut add = |name: &'static str, f: &dyn Fn(&mut SptBuilder)| {
        let mut b = app();
        f(&mut b);
        v.push((name, b));
    };

    add("minimal.spt", &|b| {
        b.binary_id(0).ip(RETIRE_INSTR, &[0x1000]);
    });
    add("empty-stream.spt", &|_| {});
    add("zero-count.spt", &|b| {
        b.binary_id(0)
            .ip(UNHALT_CYCLE, &[])
            .lbr(&[])
            .callstack(&[16, 32]);
    });
    add("repeat-huge.spt", &|b| {
        b.binary_id(0)
            .repeat(u64::MAX)
            .ip(RETIRE_INSTR, &[16, 16, 32])
            .repeat(u64::MAX)
            .lbr(&[(1, 2), (1, 2)])
            .repeat(1 << 63)
            .callstack(&[5, 6, 7]);
    });
    add("truncated-header.spt", &|b| {
        b.binary_id(0).ip(RETIRE_INSTR, &[0x1000]).truncate(31);
    });
    add("bad-signature.spt", &|b| {
        b.signature(0).binary_id(0).ip(RETIRE_INSTR, &[0x1000]);
    });
    add("bad-signature-byte-order.spt", &|b| {
        b.signature(0x3A54_5053)
            .binary_id(0)
            .ip(RETIRE_INSTR, &[0x1000]);
    });
    add("unsupported-version.spt", &|b| {
        b.version(2).binary_id(0).ip(RETIRE_INSTR, &[0x1000]);
    });
    add("reserved-nonzero.spt", &|b| {
        b.raw_data_id(5)
            .target_arch(9)
            .binary_id(0)
            .ip(RETIRE_INSTR, &[0x1000]);
    });
    add("string-table-out-of-bounds.spt", &|b| {
        b.binary_id(0)
            .ip(RETIRE_INSTR, &[0x1000])
            .patch_u32(field::STRING_TABLE_OFFSET, 0x10_0000);
    });
    add("progid-table-out-of-bounds.spt", &|b| {
        b.truncate(16426);
    });
    add("stream-out-of-bounds.spt", &|b| {
        b.truncate(20480);
    });
    add("string-offset-out-of-range.spt", &|b| {
        *b = SptBuilder::new();
        b.string("app.exe");
        b.program_id(Guid::parse(APP_GUID), 1, 100);
        b.binary_id(0).ip(RETIRE_INSTR, &[1]);
    });
    add("event-before-binary-id.spt", &|b| {
        b.ip(RETIRE_INSTR, &[1])
            .repeat(1)
            .ip(RETIRE_INSTR, &[2])
            .binary_id(0)
            .ip(RETIRE_INSTR, &[3]);
    });
    add("progid-out-of-range.spt", &|b| {
        b.binary_id(3).ip(RETIRE_INSTR, &[1]);
    });
    add("bad-segment-length.spt", &|b| {
        b.binary_id_with_length(0, 2).ip(RETIRE_INSTR, &[1]);
    });
    add("bad-segment-length-past-eof.spt", &|b| {
        b.binary_id_with_length(0, 1000).ip(RETIRE_INSTR, &[1]);
    });
    add("segment-length-mismatch.spt", &|b| {
        b.binary_id_with_length(0, 14)
            .ip(RETIRE_INSTR, &[1])
            .binary_id(0)
            .ip(RETIRE_INSTR, &[2]);
    });
    add("segment-length-mismatch-at-end.spt", &|b| {
        b.binary_id_with_length(0, 8).ip(RETIRE_INSTR, &[1, 2]);
    });
    add("unknown-opcode-skipped.spt", &|b| {
        b.binary_id(0)
            .ip(RETIRE_INSTR, &[1])
            .raw(&[0x7F, 1, 2, 3])
            .repeat(3)
            .raw(&[0])
            .binary_id(0)
            .ip(RETIRE_INSTR, &[9]);
    });
    add("unknown-opcode-fatal.spt", &|b| {
        b.ip(RETIRE_INSTR, &[1]).raw(&[0xEE, 0, 0]);
    });
    add("truncated-record.spt", &|b| {
        // The segment's length covers the whole record; the file does not.
        b.binary_id(0).ip(RETIRE_INSTR, &[1, 2, 3]).truncate(22577);
    });
    add("truncated-repeat.spt", &|b| {
        b.binary_id(0)
            .ip(RETIRE_INSTR, &[1])
            .repeat(9)
            .truncate(22581);
    });
    add("short-callstack.spt", &|b| {
        b.binary_id(0).callstack(&[]).callstack(&[16]);
    });
    add("repeat-overridden.spt", &|b| {
        b.binary_id(0).repeat(5).repeat(2).ip(RETIRE_INSTR, &[1]);
    });
    add("dangling-repeat.spt", &|b| {
        b.binary_id(0)
            .repeat(5)
            .binary_id(0)
            .ip(RETIRE_INSTR, &[1])
            .repeat(6);
    });
    add("all-opcodes.spt", &|b| {
        b.binary("core.dll", SEQ_GUID, 2);
        b.binary_id(0);
        for op in IP_OPCODES {
            let low = u32::from(op);
            b.ip(op, &[0x1000 + low, 0x2000 + low]);
        }
        b.repeat(2)
            .lbr(&[(0x3000, 0x3010), (0x3020, 0x3030)])
            .repeat(0)
            .callstack(&[0x4000, 0x4010, 0x4020, 0x4030])
            .callstack(&[0x5000, 0x5010])
            .binary_id(1)
            .repeat(7)
            .ip(ETW_INSTR, &[0xABCD_EF01]);
    });
    add("multi-binary.spt", &|b| {
        b.binary("core.dll", SEQ_GUID, 16);
        b.binary("render.dll", NIL_GUID, 0xFFFF_FFFF);
        for k in 0u32..9 {
            let progid = (k % 3) as u16;
            let branches = vec![(16, 32); progid as usize];
            let frames: &[u32] = if k % 2 == 0 { &[1, 2] } else { &[1, 2, 3] };
            b.binary_id(progid)
                .ip(RETIRE_INSTR, &[(k % 4) * 256, 256])
                .lbr(&branches)
                .callstack(frames);
        }
    });
    add("unicode-names.spt", &|b| {
        *b = SptBuilder::new();
        b.binary("ünïcødé.dll", APP_GUID, 1);
        b.binary("plain.exe", SEQ_GUID, 2);
        b.binary_id(0)
            .ip(RETIRE_INSTR, &[1])
            .binary_id(1)
            .ip(RETIRE_INSTR, &[2]);
    });
    add("custom-layout.spt", &|b| {
        *b = SptBuilder::new();
        b.string_table_capacity(0x40).program_id_capacity(4);
        let first = b.string("first.dll");
        let second = b.string("second.exe");
        b.program_id(Guid::parse(SEQ_GUID), 3, second);
        b.program_id(Guid::parse(APP_GUID), 4, first);
        b.binary_id(1)
            .ip(RETIRE_BR_INSTR, &[7, 8])
            .binary_id(0)
            .ip(RETIRE_BR_INSTR, &[9]);
    });
    add("invalid-utf8.spt", &|b| {
        *b = SptBuilder::new();
        let name = b.raw_string_bytes(b"a\xFFp.exe\0");
        b.program_id(Guid::parse(APP_GUID), 1, name);
        b.binary_id(0).ip(RETIRE_INSTR, &[1]);
    });
    add("unterminated-string.spt", &|b| {
        *b = SptBuilder::new();
        b.string_table_capacity(16);
        let name = b.raw_string_bytes(b"app.ex!");
        b.program_id(Guid::parse(APP_GUID), 1, name);
        b.binary_id(0).ip(RETIRE_INSTR, &[1]);
    });
    add("string-table-overflow.spt", &|b| {
        b.string_table_capacity(4)
            .program_id_table_offset(0x40)
            .binary_id(0)
            .ip(RETIRE_INSTR, &[1]);
    });
    add("progid-table-overflow.spt", &|b| {
        // Three entries are written, the stream after them, and the header then claims
        // room for two: the third entry is where the stream is said to start.
        *b = SptBuilder::new();
        for (name, guid, age) in [("a", APP_GUID, 1), ("b", SEQ_GUID, 2), ("c", NIL_GUID, 3)] {
            b.binary(name, guid, age);
        }
        b.program_id_capacity(3)
            .binary_id(0)
            .patch_u16(field::PROGRAM_ID_CAPACITY, 2);
    });
    add("tables-overlap.spt", &|b| {
        // The entries lie 16 bytes into the string table, the stream right after the
        // string table; the header claims the standard capacities, which puts the stream's
        // start in the middle of the string table.
        b.string_table_capacity(0x10)
            .program_id_capacity(682) // 0x30 + 682 * 24 = 0x4020
            .binary_id(0)
            .ip(RETIRE_INSTR, &[1])
            .patch_u16(field::STRING_TABLE_CAPACITY, 0x4000)
            .patch_u16(field::PROGRAM_ID_CAPACITY, 0x100);
    });
    v
}

#[test]
fn reproduces_the_conformance_vectors() {
    let dir = shared::conformance_vectors();
    let mut compared = 0;
    let mut failures = Vec::new();
    for (name, builder) in vectors() {
        let expected = match read_vector(&dir, name) {
            Ok(bytes) => bytes,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        compared += 1;
        let built = builder.build();
        if built != expected {
            let at = built
                .iter()
                .zip(&expected)
                .position(|(a, b)| a != b)
                .unwrap_or(built.len().min(expected.len()));
            failures.push(format!(
                "{name}: {} bytes built, {} expected, first difference at {at:#x}",
                built.len(),
                expected.len()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let names: Vec<&str> = vectors().iter().map(|(n, _)| *n).collect();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        if file.ends_with(".spt") && !names.contains(&file.as_str()) {
            eprintln!("note: conformance vector {file} has no counterpart here");
        }
    }
    eprintln!("{compared} conformance vectors compared");
}
