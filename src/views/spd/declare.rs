//! What one of spddump's views declares of itself, once, in its module.

use std::io;

use super::shown::{Paired, Shown, SpdFailure};
use crate::views::Opt;

/// One of spddump's views of an SPD: declared, parsed and shown by its own module, listed
/// in the registry (`spd_views!` in `registry.rs`) in the order they are shown.
pub(crate) trait SpdDeclared: Sized {
    /// What it is.
    const DECLARATION: SpdDeclaration;
    /// What its options gather from a command line, before the view is made of them.
    type Asked: Default + std::fmt::Debug + 'static;
    /// Its option rows.
    const OPTIONS: &'static [Opt<Self::Asked>];

    /// The view its options ask for, if they ask for it; why they do not go together, else.
    fn asked(asked: Self::Asked) -> Result<Option<Self>, String>;

    /// The view as `/all` (and a command line that names no view) shows it, when it does.
    fn of_all() -> Option<Self>;

    /// Shows it of the SPD at hand; the inner error says what was wrong with the file.
    fn show(&self, s: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>>;

    /// Shows it of two SPDs, OLD and NEW, when it is of two ([`SpdDeclaration::pair`]).
    fn pair(&self, _p: &mut Paired<'_>) -> io::Result<()> {
        Ok(())
    }
}

/// What one of spddump's views is.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpdDeclaration {
    /// The option's name: `func` for `/func`.
    pub name: &'static str,
    /// Where `/help` lists it among the views, from 0.
    pub listed: u8,
    /// Whether it reads the function table (else only the header).
    pub table: bool,
    /// Whether, in JSON, it shows each function's `spd_function` line: they are listed
    /// once, where the first view of the registry that shows them would be.
    pub lists_functions: bool,
    /// Whether it is of two SPDs, OLD and NEW, rather than of each: the command line then
    /// takes exactly two.
    pub pair: bool,
}

impl SpdDeclaration {
    /// A view of the function table, listed `listed`th.
    pub(crate) const fn new(name: &'static str, listed: u8) -> Self {
        SpdDeclaration {
            name,
            listed,
            table: true,
            lists_functions: false,
            pair: false,
        }
    }
}
