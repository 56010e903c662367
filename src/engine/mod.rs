//! The counting engine: the data structures and the threading the analyses are built on,
//! knowing nothing of SPT, PE or PDB files.
//!
//! ```text
//! counts.rs    exact hits per key (an RVA or an arc), in a hash table laid out in cache lines
//! slices.rs    distinct slices (call stacks) and their hits, kept one after another in blocks
//! index.rs     addresses to values, probed linearly, prefetched a stack at a time
//! threads.rs   which binaries a second thread takes, and joining what it gave
//! memory.rs    handing back to the system what a helper thread freed
//! ```

pub(crate) mod counts;
pub(crate) mod index;
pub(crate) mod memory;
pub(crate) mod slices;
pub(crate) mod threads;
