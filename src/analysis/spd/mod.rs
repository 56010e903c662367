//! What a trace and an SPD add up to together, and an SPD alone: spddump's figures of one
//! SPD (`figures`), a trace on an SPD's own blocks (`blocks`), a trace beside an SPD by
//! function (`compare`), the flow inferred on the SPD's own graph from a trace (`flow`), and
//! two SPDs of one binary side by side (`pair`).

pub mod blocks;
pub mod compare;
pub mod figures;
pub(crate) mod flow;
pub mod pair;
