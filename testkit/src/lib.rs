//! The test kit of sptdump, shared by the integration tests, the benches, the examples and
//! the fuzz targets, and compiled once for all of them.
//!
//! ```text
//! builder    a writer of SPT v1 files, from the format description alone
//! samples    the bundled sample trace, testdata/sample.spt, and its records as values
//! shared     the conformance vectors and SPD files beside the repository, or a loud skip
//! spd        a writer of SPD files (Sample Profile Databases), from their layout alone
//! synth      a realistic synthetic trace of any size, for benchmarks
//! reference  a second, short reading of the spec: the first thing a decoder must report
//! dumping    dumping a trace in-process, through the library, into memory
//! exports    what the exports of any run must hold, read back
//! fixtures   the real PE/PDB fixtures as llvm's tools describe them, and a profile of them
//! golden     golden files: comparing an output with the pinned one, or rewriting it
//! recording  testdata/pe/lbr.run.txt, LBR records of lbr.exe as it ran, and lbr.spt of them
//! walk       LBR traces of a random walk over a real image's code, with its true counts
//! ```
//!
//! [`builder`], [`samples`], [`spd`], [`synth`] and [`reference`](mod@reference) share no code with
//! sptdump's decoder: they are an independent reading of the format, so that a misreading
//! in one cannot hide the same misreading in the other. Only [`dumping`] and [`exports`] use the library.

#![deny(missing_docs)]

pub mod builder;
pub mod dumping;
pub mod etl;
pub mod exports;
pub mod fixtures;
pub mod golden;
pub mod onspd;
pub mod pprof;
pub mod recording;
pub mod reference;
pub mod samples;
pub mod shared;
pub mod spd;
pub mod synth;
pub mod walk;
