//! The SPT v1 format itself: pure reading of bytes, with no file, pipe or symbol in sight.
//!
//! ```text
//! 0        32                 StringTableOffset      ProgramIdTableOffset        stream start
//! |header  | ...              |strings (capacity)    |program IDs (capacity x 24) |records ... EOF
//! ```
//!
//! One module per part of the file: [`header`], [`strtab`], [`progid`] (and [`tables`], the
//! two tables together), [`layout`] (where the parts lie and whether they fit), [`opcode`]
//! and [`record`] (the records of the event stream) and [`decode`] (the one-pass stream
//! decoder), and [`mod@write`], which writes a file. Every problem found is a
//! [`diag::Diagnostic`]; [`error::Error`] is for the input or output failing, not the file.
//! Nothing here does I/O beyond [`std::io::Read`] and [`std::io::Write`].

pub mod decode;
pub mod diag;
pub mod error;
pub mod header;
pub mod layout;
pub mod magic;
pub mod opcode;
pub mod progid;
pub mod record;
pub mod stackorder;
pub mod strtab;
pub mod tables;
pub mod write;
