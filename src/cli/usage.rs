//! A wrong command line, said in one line.

/// A wrong command line, as one line of text: what is wrong, and where the help is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}; see '{program} /help'")]
pub struct UsageError {
    message: String,
    program: &'static str,
}

pub(super) fn usage(message: impl Into<String>) -> UsageError {
    UsageError {
        message: message.into(),
        program: "sptdump",
    }
}

impl UsageError {
    /// A usage error of sptdump's saying `why`: a plan that conflicts with the traces given,
    /// a list of traces that cannot be read.
    pub fn new(why: impl std::fmt::Display) -> UsageError {
        usage(why.to_string())
    }

    /// The same error, of the program `program` (whose help it names).
    pub(super) fn of(self, program: &'static str) -> UsageError {
        UsageError { program, ..self }
    }
}
