//! ETL, the Event Trace Log that xperf records and SPTAggregate reads (SPEC section 19):
//! pure reading of bytes, like [`crate::format`] for SPT, with no I/O beyond
//! [`std::io::Read`].
//!
//! ```text
//! buffer 0                          buffer 1                            ...  EOF
//! |72-byte header|events ...|pad    |72-byte header|LZ77(events ...)|
//! ```
//!
//! [`buffer`] reads the buffers one at a time and [`xpress`] decompresses the compressed
//! ones; [`event`] walks a buffer's events by their header kinds; [`kernel`] decodes the
//! payloads section 19 reads (the log-file header, samples, threads, images, PDB
//! identities, LBR records, stack walks); [`recording`] gathers them in one pass and
//! attributes the samples to binaries; [`spt`] aggregates that into an SPT, as SPTAggregate
//! would by our reading.

pub mod buffer;
pub mod event;
pub mod kernel;
pub mod recording;
pub mod spt;
pub mod xpress;
