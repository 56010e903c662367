//! In which order the frames of a call-stack record are stored: ETW's leaf first, unless
//! `/stackorder` says otherwise.

use std::fmt;
use std::str::FromStr;

use super::error::UnknownName;

/// In which order the frames of a call stack are stored (`/stackorder`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StackOrder {
    /// `frames[0]` is the sampled frame: ETW's order, and the default.
    #[default]
    LeafFirst,
    /// `frames[0]` is the outermost frame.
    RootFirst,
}

impl StackOrder {
    /// The position of the leaf (the sampled frame) among `frames` frames as stored.
    pub fn leaf(self, frames: usize) -> usize {
        match self {
            StackOrder::LeafFirst => 0,
            StackOrder::RootFirst => frames.saturating_sub(1),
        }
    }

    /// `leaf-first` or `root-first`, as `/stackorder` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            StackOrder::LeafFirst => "leaf-first",
            StackOrder::RootFirst => "root-first",
        }
    }
}

impl fmt::Display for StackOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for StackOrder {
    type Err = UnknownName;

    /// Parses `leaf-first` or `root-first`, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [StackOrder::LeafFirst, StackOrder::RootFirst]
            .into_iter()
            .find(|o| o.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownName {
                given: s.to_owned(),
                expected: "leaf-first or root-first",
            })
    }
}
