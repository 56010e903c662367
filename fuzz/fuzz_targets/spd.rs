//! Reads arbitrary bytes as an SPD (a Sample Profile Database), as `/match` reads one: the
//! reader must read it or refuse it by a named check, never panic, hang or allocate from a
//! field it has not checked; and what it reads keeps what the checks promise.

#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use sptdump::image::spd::{self, SpdError};

fuzz_target!(|data: &[u8]| {
    match spd::read(&mut Cursor::new(data), data.len() as u64) {
        Ok(spd) => {
            assert!(data.starts_with(spd::SIGNATURE));
            assert!(!spd.binary.is_empty() && spd.binary.len() <= 260);
            assert!(spd.binary.is_ascii());
        }
        Err(SpdError::NotRecognised { .. }) => {}
        Err(e) => panic!("reading memory cannot fail: {e}"),
    }
});
