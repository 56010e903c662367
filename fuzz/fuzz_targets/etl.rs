//! Feeds arbitrary bytes to the ETL reader (SPEC section 19) as a file, and checks what must
//! hold whatever the bytes:
//!
//! - buffers come in order, back to back from offset 0, each no larger than 16 MiB;
//! - a refusal names an offset inside the file, at a buffer's start;
//! - every event lies inside its buffer's events, in order, 8-byte aligned, and an
//!   unreadable one ends the buffer;
//! - every event's payload decodes to an answer with either pointer size, never a panic:
//!   the pairs of an LBR record and the frames of a stack walk lie inside their payload.

#![no_main]

use libfuzzer_sys::fuzz_target;
use sptdump::etl::buffer::{Buffers, MAX_BUFFER};
use sptdump::etl::event::Events;
use sptdump::etl::kernel::{self, Kernel, Read};

fuzz_target!(|data: &[u8]| {
    let mut buffers = Buffers::new(data);
    let mut next = 0u64;
    loop {
        let buffer = match buffers.next_buffer() {
            Ok(Some(b)) => b,
            Ok(None) => {
                assert_eq!(next, data.len() as u64, "the buffers end at the end of the file");
                break;
            }
            Err(refused) => {
                assert_eq!(refused.offset(), next, "{refused}");
                assert!(!refused.to_string().is_empty());
                break;
            }
        };
        assert_eq!(buffer.offset, next);
        assert!(buffer.header.size <= MAX_BUFFER);
        next += u64::from(buffer.header.size);
        let mut last = None;
        let mut ended = false;
        for event in Events::new(buffer.events) {
            assert!(!ended, "an event after an unreadable one");
            let event = match event {
                Ok(e) => e,
                Err(u) => {
                    assert!(u.at < buffer.events.len());
                    ended = true;
                    continue;
                }
            };
            assert_eq!(event.at % 8, 0);
            assert!(last.is_none_or(|l| event.at > l));
            assert!(event.at + event.payload.len() <= buffer.events.len());
            last = Some(event.at);
            for pointer in [4, 8] {
                match kernel::read(&event, pointer) {
                    Read::Known(Kernel::Lbr(l)) => {
                        assert!(l.pairs().count() * 2 * usize::from(pointer) <= event.payload.len());
                    }
                    Read::Known(Kernel::StackWalk(s)) => {
                        assert!(s.frames().count() * usize::from(pointer) <= event.payload.len());
                    }
                    Read::Known(Kernel::Image(i)) => {
                        let _ = kernel::file_name(i.file_name);
                    }
                    _ => {}
                }
            }
        }
    }
});
