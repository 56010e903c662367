//! Handing memory a helper thread freed back to the system.
//!
//! glibc's `malloc` gives a thread an arena of its own once another thread allocates at the
//! same time, and keeps what is freed in the arena it came from, for that arena's later
//! allocations. What a helper thread allocated and freed (the look-up tables of the binaries
//! a second thread folded) stays mapped after it ends, as the thread that goes on allocates
//! elsewhere: on the 1 GiB realistic trace, 5 MiB more at the peak of `/speedscope` than
//! when one thread folds. `malloc_trim` hands the free pages of every arena back.
//! Elsewhere (Windows' heap, macOS, musl) there is nothing to do here.

/// Hands the pages no allocation holds back to the system, where the allocator keeps them.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub(crate) fn give_back() {
    unsafe extern "C" {
        /// glibc's: returns 1 when memory was handed back, else 0.
        fn malloc_trim(pad: usize) -> std::ffi::c_int;
    }
    // SAFETY: `malloc_trim` takes no pointer and only frees pages of chunks no allocation
    // holds; glibc documents it as safe to call from any thread at any time (MT-Safe). This
    // and the prefetch of engine/counts.rs are the crate's two `unsafe` blocks.
    unsafe {
        malloc_trim(0);
    }
}

/// Hands the pages no allocation holds back to the system: nothing to do without glibc.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn give_back() {}
