//! What the views read of the run's options besides their own.

use crate::format::stackorder::StackOrder;
use crate::image::matching::MatchFile;

/// What the views read of the run's options besides their own: how many entries a table
/// shows, how call stacks are stored, whether inline frames are named, and the files given
/// to `/match` (the report sets a matching SPD beside its binary).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings<'a> {
    /// How many entries each table shows (`/top`).
    pub top: usize,
    /// How the frames of a call stack are stored (`/stackorder`).
    pub order: StackOrder,
    /// Whether code the compiler inlined is named as the functions inlined (unless
    /// `/noinline`).
    pub inline: bool,
    /// The images, PDBs and SPDs given to `/match`.
    pub matches: &'a [MatchFile],
}
