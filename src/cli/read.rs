//! Reading a command line in SPTDump's spellings against a program's option rows: sptdump's
//! and spddump's both (a [`Program`] each), so that both take the same spellings, say the
//! same things of a mistyped option and read values the same way.

use std::ffi::{OsStr, OsString};

use super::spelling::{Spelled, items, mistyped, spelled, unknown};
use super::usage::{UsageError, usage};
use crate::views::{About, Apply, Opt, Set, Takes};

/// A program's options, as the reader reads them.
pub(super) trait Program {
    /// What its options gather.
    type Given: Default;
    /// One of its option rows.
    type Row: Copy;
    /// Its name, as its messages give it.
    const NAME: &'static str;

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

/// Reads the arguments (without the program name): what the options gather, and the other
/// arguments (the files), in order. Every argument is checked before any file is read: a
/// mistyped option never reads a file. An argument that starts with `/` is an option only
/// when its name is one of ours; `--` ends the options; `-` is standard input.
pub(super) fn read<P: Program>(
    args: impl IntoIterator<Item = OsString>,
) -> Result<(P::Given, Vec<OsString>), UsageError> {
    read_in::<P>(args).map_err(|e| e.of(P::NAME))
}

fn read_in<P: Program>(
    args: impl IntoIterator<Item = OsString>,
) -> Result<(P::Given, Vec<OsString>), UsageError> {
    let mut given = P::Given::default();
    let mut files = Vec::new();
    let mut args = args.into_iter();
    let mut options_ended = false;
    while let Some(arg) = args.next() {
        if options_ended || arg == "-" {
            files.push(arg);
        } else if arg == "--" {
            options_ended = true;
        } else if let Some(spelled) = spelled(&arg)? {
            let rows = rows_named::<P>(canonical(&spelled.name.to_ascii_lowercase()));
            match rows.first() {
                Some(&row) => {
                    let about = P::about(row);
                    P::named(&mut given, about.name);
                    let value = value_of(about, &arg, &spelled, &mut args)?;
                    let setter = Setter {
                        value: value.as_deref(),
                    };
                    for row in rows {
                        P::apply(&mut given, row, setter)?;
                    }
                }
                None if spelled.dashed
                    || (spelled.separator != Some('=') && mistyped(&arg, &spelled.name)) =>
                {
                    let shown = arg.to_string_lossy();
                    let written = match spelled.separator {
                        Some(sep) => shown.split(sep).next().unwrap_or(&shown),
                        None => &shown,
                    };
                    let names: Vec<&str> =
                        P::rows().into_iter().map(|r| P::about(r).name).collect();
                    return Err(unknown(written, &spelled.name, &names));
                }
                None => files.push(arg),
            }
        } else {
            files.push(arg);
        }
    }
    Ok((given, files))
}

/// The value of option `about`, spelled as `arg`: after a colon (or for the dash forms `=`
/// or the next argument), as what it takes says.
fn value_of(
    about: &About,
    arg: &OsString,
    spelled: &Spelled,
    rest: &mut impl Iterator<Item = OsString>,
) -> Result<Option<OsString>, UsageError> {
    let shown = arg.to_string_lossy();
    let name = about.name;
    match (about.takes, spelled.value.clone()) {
        (_, Some(_)) if !spelled.dashed && spelled.separator == Some('=') => Err(usage(format!(
            "'{shown}': values follow a colon, as in /{name}:{}",
            shown.split_once('=').map_or("", |(_, v)| v)
        ))),
        (Takes::Nothing, None) => Ok(None),
        (Takes::Nothing, Some(_)) => Err(usage(format!("option '/{name}' takes no value"))),
        // A value of its own only after a colon (or `=` for the dash forms): the next
        // argument is never taken, as it may be a trace.
        (Takes::Maybe, value) => Ok(value),
        (Takes::Value | Takes::ValueOrAlone, Some(v)) => Ok(Some(v)),
        (Takes::ValueOrAlone, None) if !spelled.dashed => Ok(None),
        (Takes::Value | Takes::ValueOrAlone, None) if spelled.dashed => rest
            .next()
            .map(Some)
            .ok_or_else(|| usage(format!("option '{shown}' needs a value"))),
        (Takes::Value | Takes::ValueOrAlone, None) => {
            let what = about.value.unwrap_or("VALUE");
            Err(usage(format!(
                "option '{shown}' needs a value: /{name}:{what}"
            )))
        }
    }
}

/// Sets what an option's value says, parsed by its row.
#[derive(Clone, Copy)]
pub(super) struct Setter<'a> {
    /// Its value, as the reader read it.
    value: Option<&'a OsStr>,
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
