//! A program's options as the reader and clap's grammar read them: sptdump's and spddump's
//! rows, behind one trait.

use std::ffi::OsStr;

use super::spelling::items;
use super::usage::{UsageError, usage};
use crate::views::{About, Apply, Opt, Set};

/// A program's options, as the reader reads them.
pub(super) trait Program {
    /// What its options gather.
    type Given: Default;
    /// One of its option rows.
    type Row: Copy;
    /// Its name, as its messages give it.
    const NAME: &'static str;
    /// What it is, in a line (the manual page's name line).
    const ABOUT: &'static str;
    /// What its manual page says after the options: how they are spelled, and more.
    const LONG_ABOUT: &'static str;
    /// The name of a file it reads, as the manual page's synopsis gives it.
    const FILE: &'static str;
    /// What its files are, for the manual page.
    const FILES_HELP: &'static str;

    /// Every row, in the order `/help` lists them.
    fn rows() -> Vec<Self::Row>;

    /// What a row's option is.
    fn about(row: Self::Row) -> &'static About;

    /// Notes that the option `name` was given, before its value is applied.
    fn named(_given: &mut Self::Given, _name: &'static str) {}

    /// Applies a row's option to `given`, by `setter`.
    fn apply(given: &mut Self::Given, row: Self::Row, setter: Setter<'_>)
    -> Result<(), UsageError>;
}

/// The short spellings every program takes: `/h`, `/?` for help, `/V` for version.
pub(super) fn canonical(name: &str) -> &str {
    match name {
        "h" | "?" => "help",
        "v" => "version",
        other => other,
    }
}

/// The rows of `P` named `name`: one, or several views' that take it (`/srcpath`).
pub(super) fn rows_named<P: Program>(name: &str) -> Vec<P::Row> {
    P::rows()
        .into_iter()
        .filter(|&r| P::about(r).name == name)
        .collect()
}

/// Sets what an option's value says, parsed by its row.
#[derive(Clone, Copy)]
pub(super) struct Setter<'a> {
    /// Its value, as the reader read it.
    pub(super) value: Option<&'a OsStr>,
}

impl Setter<'_> {
    /// Whether the option was given without a value.
    pub(super) fn alone(&self) -> bool {
        self.value.is_none()
    }
}

impl Apply for Setter<'_> {
    type Error = UsageError;

    fn apply<T>(self, target: &mut T, opt: &'static Opt<T>) -> Result<(), UsageError> {
        let name = opt.name;
        let set = match opt.set {
            Set::Flag(set) => {
                set(target);
                return Ok(());
            }
            Set::Optional(set) => {
                return set(target, self.value).map_err(|why| {
                    let value = self.value.unwrap_or_default().to_string_lossy();
                    usage(format!("invalid value '{value}' for /{name}: {why}"))
                });
            }
            Set::Value(set) => set,
        };
        let value = self.value.unwrap_or_default();
        let values = if opt.list {
            items(value)?
        } else {
            vec![value.to_owned()]
        };
        let files = matches!(opt.value, Some("FILE" | "FILES"));
        for v in values {
            if v.is_empty() && (opt.list || files) {
                return Err(usage(match (opt.list, files) {
                    (true, true) => format!("/{name} needs a comma-separated list of files"),
                    (true, false) => {
                        format!("/{name} needs a comma-separated list of names or progid indices")
                    }
                    (false, _) => format!("/{name} needs a file: /{name}:FILE"),
                }));
            }
            set(target, &v).map_err(|why| {
                usage(format!(
                    "invalid value '{}' for /{name}: {why}",
                    v.to_string_lossy()
                ))
            })?;
        }
        Ok(())
    }
}
