//! sptdump: a faithful, cross-platform clone of Microsoft's SPTDump, the tool that shows what
//! is inside the SPT (Sample Profile Trace) files of MSVC's Sample Profile-Guided
//! Optimization.
//!
//! The library is built in layers, each using only those below it:
//!
//! ```text
//! cli        the command line: SPTDump's options in every spelling -> a Plan
//! dump       the driver: walks a Plan over the traces, into a printer, one pass per trace
//! views      each view of a profile in a module of its own, listed in one registry; the
//!            Plan of a run
//! output     the Printer and the Render trait; text and JSON Lines, the exporters
//! analysis   what the samples add up to: summary, stacks, functions, check, compare, keys
//! flow       counts that add up: one function's graph and observations -> a flow
//! engine     the counting tables, the stacks' slices, the address index, two threads
//! image      PE and PDB identities, /match verdicts, PDB symbols
//! input      a file or a pipe -> header, tables, and the stream positioned at its start
//! format     pure SPT: header, string table, program IDs, layout, records, decoder,
//!            diagnostics; no I/O beyond std::io::Read
//! etl        pure ETL, beside format: buffers, their decompression, events, the kernel's
//!            payloads, a recording attributed to binaries, sptdump's aggregation of it
//! ```
//!
//! The command line's options and their SPTDump spellings are read here too ([`cli::parse`]),
//! so that the binary, the tests and the fuzzer make a [`views::Plan`] of a command line one
//! way; the binary keeps what is its own (exit codes, the progress bar, reading `/sptlist`
//! files).
//!
//! Dumping a trace as `sptdump /json /progid trace.spt` does:
//!
//! ```no_run
//! use sptdump::dump::{self, Traces};
//! use sptdump::input::Input;
//! use sptdump::output::Format;
//! use sptdump::views::{Plan, Sections};
//!
//! let mut plan = Plan::default();
//! plan.format = Format::Json;
//! plan.sections = Sections::NONE;
//! plan.sections.progid = true;
//! let paths = ["trace.spt".to_owned()];
//! let open = |_: usize| Input::open("trace.spt".as_ref());
//! let mut printer = plan.printer(std::io::stdout().lock(), std::io::stderr().lock());
//! let ran = dump::run(&mut printer, &plan, &Traces::new(&paths, &open))?;
//! println!("{:?}", ran.status());
//! # Ok::<(), dump::RunError>(())
//! ```
//!
//! Or decoding the records of a stream yourself:
//!
//! ```no_run
//! use sptdump::format::{decode::{Decoder, Sink}, diag::Diagnostic, record::Record};
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
#![warn(unreachable_pub)]
// Two `unsafe` blocks in the crate, allowed where they stand: the cache-line prefetch of the
// counting tables (engine/counts.rs), and handing glibc's freed pages back
// (engine/memory.rs).
#![deny(unsafe_code)]

pub mod analysis;
pub mod cli;
pub mod dump;
pub mod engine;
pub mod etl;
pub mod flow;
pub mod format;
pub mod image;
pub mod input;
pub mod output;
pub mod views;
