//! Images and symbols: what the binaries and PDBs of a build say, and how they fit a trace.
//!
//! [`ident`] reads the identity (GUID, age) of a PE image, a PDB or an SPD ([`spd`] reads
//! the last), [`matching`] judges it against a trace's program IDs (`/match`), and
//! [`symbols`] reads a PDB's functions to name sampled addresses (`/pdb`), [`lines`] their
//! source lines and the functions inlined at them, [`code`] an image's instructions
//! (`/image`), and [`spdprofile`] an SPD's functions and counts (the names of a binary no PDB
//! names, and what `/compare TRACE SPD` sets beside a trace). This is the only
//! layer that opens PE, PDB and SPD files.

pub mod attached;
pub mod code;
mod damaged;
pub(crate) mod guard;
pub mod ident;
pub mod imports;
pub mod lines;
pub mod matching;
pub mod spd;
pub mod spdblocks;
pub mod spdgraph;
pub mod spdprofile;
pub mod symbolpath;
pub mod symbols;
pub mod symstore;
// Symbol servers over HTTP and HTTPS.
#[cfg(feature = "network")]
pub mod symserver;
#[cfg(test)]
pub(crate) mod testpdb;
