//! Reading a command line in SPTDump's spellings against a program's option rows: sptdump's
//! and spddump's both (a [`Program`] each), so that both take the same spellings, say the
//! same things of a mistyped option and read values the same way.

use std::ffi::OsString;

use super::grammar;
use super::program::{Program, Setter, canonical, rows_named};
use super::spelling::{Spelled, mistyped, spelled, unknown};
use super::usage::{UsageError, usage};
use crate::views::{About, Takes};

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
    let (options, files) = spell::<P>(args)?;
    // clap parses what the spellings say, in its own form, against the rows' command.
    let (options, files) = grammar::parse::<P>(&options, &files)?;
    let mut given = P::Given::default();
    for option in options {
        let rows = rows_named::<P>(option.name);
        let Some(&first) = rows.first() else {
            continue;
        };
        P::named(&mut given, P::about(first).name);
        let setter = Setter {
            value: option.value.as_deref(),
        };
        for row in rows {
            P::apply(&mut given, row, setter)?;
        }
    }
    Ok((given, files))
}

/// Reads SPTDump's spellings: each option of ours by its row's name, with its value; the
/// files. A mistyped option, or a value where none goes (or none where one must), is a usage
/// error here, before clap sees anything.
fn spell<P: Program>(
    args: impl IntoIterator<Item = OsString>,
) -> Result<(Vec<grammar::Given>, Vec<OsString>), UsageError> {
    let mut options = Vec::new();
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
                    let value = value_of(about, &arg, &spelled, &mut args)?;
                    options.push(grammar::Given {
                        name: about.name,
                        value,
                    });
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
    Ok((options, files))
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
