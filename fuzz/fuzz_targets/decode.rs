//! Feeds arbitrary bytes straight to the event-stream decoder and checks, for every record
//! it hands out, what must hold whatever the bytes:
//!
//! - the record's offset lies inside the stream `[START, START + len)`;
//! - offsets strictly increase from one record to the next;
//! - a sample record's payload is exactly `n` values wide (4 bytes each, 8 for LBR), and
//!   its hits are at least 1;
//! - an unknown opcode resumes, if at all, further on, and when the size is known no later
//!   than the end (on a pipe a segment's declared end cannot be checked up front, and may
//!   lie past the end of the stream);
//! - every diagnostic's offset lies inside the stream too;
//! - reading a slice and writing to this sink never fail, so `run` returns `Ok`.
//!
//! The first byte is a control byte, the rest is the stream:
//!
//! ```text
//! bit 7      the size is known up front (a file) rather than not (a pipe)
//! bit 6      decode with a selection of progid 0 only, as `/binary:0` does
//! bits 0..5  ProgramIdsUsed, 0..=63
//! ```

#![no_main]

use std::io;

use libfuzzer_sys::fuzz_target;
use sptdump::format::decode::{Decoder, Selection, Sink};
use sptdump::format::diag::Diagnostic;
use sptdump::format::opcode::Opcode;
use sptdump::format::record::Record;

/// Where the stream starts in the usual layout.
const START: u64 = 0x5820;

struct Check {
    end: u64,
    size_known: bool,
    last: Option<u64>,
}

impl Sink for Check {
    fn record(&mut self, record: &Record<'_>) -> io::Result<()> {
        let offset = record.offset();
        assert!(
            (START..self.end).contains(&offset),
            "record at {offset:#X} outside the stream [{START:#X}, {:#X}): {record:?}",
            self.end
        );
        if let Some(last) = self.last {
            assert!(
                offset > last,
                "record at {offset:#X} does not come after the one at {last:#X}"
            );
        }
        self.last = Some(offset);
        match record {
            Record::Samples(s) => {
                let width = if s.opcode == Opcode::LBR { 8 } else { 4 };
                assert_eq!(
                    s.payload.len(),
                    usize::from(s.count) * width,
                    "payload of {record:?}"
                );
                assert!(s.hits >= 1, "hits of {record:?}");
                assert!(
                    s.opcode.is_ip()
                        || s.opcode == Opcode::LBR
                        || s.opcode == Opcode::ETW_CALLSTACK,
                    "sample record with opcode {}",
                    s.opcode
                );
                let values = match s.opcode {
                    Opcode::LBR => s.branches().len(),
                    _ => s.rvas().len(),
                };
                assert_eq!(values, usize::from(s.count));
            }
            Record::Unknown(u) => {
                assert!(u.opcode.name().is_none(), "known opcode as unknown: {u:?}");
                if let Some(resume) = u.resumed_at {
                    assert!(resume > u.offset, "resume of {u:?}");
                    assert!(!self.size_known || resume <= self.end, "resume of {u:?}");
                }
            }
            Record::BinaryId(_) | Record::Repeat(_) => {}
            other => panic!("a kind of record this target does not check yet: {other:?}"),
        }
        Ok(())
    }

    fn diagnostic(&mut self, d: Diagnostic) -> io::Result<()> {
        assert!(
            (START..self.end).contains(&d.offset),
            "diagnostic outside the stream [{START:#X}, {:#X}): {d}",
            self.end
        );
        assert!(!d.message.is_empty());
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&control, stream)) = data.split_first() else {
        return;
    };
    let len = stream.len() as u64;
    let size = (control & 0x80 != 0).then_some(START + len);
    let mut decoder = Decoder::new(stream, START, size, u16::from(control & 0x3F));
    if control & 0x40 != 0 {
        decoder.select(Some(Selection::new([0])));
    }
    let mut check = Check {
        end: START + len,
        size_known: size.is_some(),
        last: None,
    };
    decoder
        .run(&mut check)
        .expect("reading a slice and writing to memory cannot fail");
});
