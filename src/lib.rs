//! sptdump: a faithful, cross-platform clone of Microsoft's SPTDump, the tool that shows what
//! is inside the SPT (Sample Profile Trace) files of MSVC's Sample Profile-Guided
//! Optimization.
//!
//! The format lives in one module per part of the file ([`header`], [`strtab`], [`progid`],
//! [`record`], [`decode`]); [`input`] reads them from a file or a pipe; [`dump`] drives a
//! dump into a [`print::Printer`], of which there are two: [`text`] and [`json`].
//! [`summary`] aggregates the hottest addresses. [`cli`] is the command line.
//!
//! ```no_run
//! use sptdump::{decode::{Decoder, Sink}, diag::Diagnostic, record::Record};
//!
//! struct Count(u64);
//! impl Sink for Count {
//!     fn record(&mut self, _: &Record<'_>) -> std::io::Result<()> { self.0 += 1; Ok(()) }
//!     fn diagnostic(&mut self, d: Diagnostic) -> std::io::Result<()> { eprintln!("{d}"); Ok(()) }
//! }
//! let stream = std::fs::File::open("stream.bin")?;
//! let mut count = Count(0);
//! Decoder::new(stream, 0x5820, None, 1).run(&mut count)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

pub mod cli;
pub mod collect;
pub mod counts;
pub mod decode;
pub mod diag;
pub mod dump;
pub mod error;
pub mod header;
pub mod ident;
pub mod input;
pub mod json;
pub mod layout;
pub mod matching;
pub mod opcode;
pub mod print;
pub mod progid;
pub mod record;
pub mod strtab;
pub mod summary;
pub mod symbols;
pub mod text;
