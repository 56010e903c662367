//! LBR as SPGO reads it (section 14): the records read as branch sequences while they are
//! decoded (`reading`), what the ranges add up to per binary and function, the order of the
//! pairs decided (`ranges`), how two traces' ranges moved (`rangediff`), one function
//! instruction by instruction (`annotate`), and who calls whom (`callgraph`).

pub mod annotate;
pub(crate) mod blocks;
pub mod callgraph;
pub mod cfg;
pub mod rangediff;
pub mod ranges;
pub mod reading;
