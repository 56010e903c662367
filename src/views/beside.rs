//! What the views of a trace set beside an SPD read (`/compare TRACE SPD`): the SPD, and
//! the trace's samples on its blocks.

use crate::analysis::spd::blocks::TraceOnBlocks;
use crate::image::spdprofile::SpdProfile;
use crate::output::FileInfo;

/// A trace set beside an SPD.
pub(crate) struct Beside<'b> {
    /// The trace, as the output names it.
    pub(crate) file: &'b FileInfo<'b>,
    /// The SPD, as given.
    pub(crate) spd_path: &'b str,
    /// Its functions and blocks.
    pub(crate) spd: &'b SpdProfile,
    /// The trace's samples on its blocks.
    pub(crate) on: &'b TraceOnBlocks<'b>,
}
