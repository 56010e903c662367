//! A wrong command line, said in one line.

/// A wrong command line, as one line of text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}; see 'sptdump /help'")]
pub struct UsageError(String);

pub(super) fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

impl UsageError {
    /// A usage error saying `why`: a plan that conflicts with the traces given, a list of
    /// traces that cannot be read.
    pub fn new(why: impl std::fmt::Display) -> UsageError {
        usage(why.to_string())
    }
}
