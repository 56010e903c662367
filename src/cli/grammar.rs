//! clap's grammar of a program's command line, built from its option rows: the parser of
//! the command line in clap's form, and the source of the shell completions and the manual
//! page.
//!
//! SPTDump's spellings are not clap's (`/name:value`, any case, `/path` as a file, a value
//! after `=` only for the dash forms), so the reader (`read.rs`) puts each argument in
//! clap's form first: an option of ours as `--name=VALUE` or `--name`, its name in lower case
//! and its short spellings (`/?`, `/V`) made whole; then `--` and the files. clap parses that
//! against the grammar of the rows the command line names (the whole [`command`], with its
//! help, is for the completions and the manual page), and the options come back in the order
//! they were given. A mistyped option never reaches clap: the reader refuses it, with the nearest
//! known name, in the words sptdump has always used.
//!
//! The help stays the rows' own (`/help`): clap renders the manual page and the
//! completions, not the help.

use std::ffi::{OsStr, OsString};

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches};

use super::program::Program;
use super::usage::{UsageError, usage};
use crate::views::{About, Takes};

/// The name of the files' argument.
const FILES: &str = "files";

/// An option given without a value, in clap's form: what no argument can hold (a NUL).
const ALONE: &str = "\0";

/// The shells whose completions the programs write (`/completions:SHELL`).
pub(super) const SHELLS: [&str; 5] = ["bash", "elvish", "fish", "powershell", "zsh"];

/// clap's command of program `P`: an argument per option row (the rows several views share,
/// such as `/srcpath`, once), in the order `/help` lists them, and the files; with their
/// help, for the manual page and the completions.
pub(super) fn command<P: Program>() -> clap::Command {
    let rows: Vec<&'static About> = P::rows().into_iter().map(P::about).collect();
    grammar::<P>(&rows, true)
        .version(env!("CARGO_PKG_VERSION"))
        .about(P::ABOUT)
        .long_about(P::LONG_ABOUT)
}

/// The grammar of `rows` (each name once) and the files, their help text or none.
fn grammar<P: Program>(rows: &[&'static About], helped: bool) -> clap::Command {
    let mut command = clap::Command::new(P::NAME)
        .no_binary_name(true)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .disable_help_subcommand(true);
    let mut seen = Vec::with_capacity(rows.len());
    for about in rows {
        if seen.contains(&about.name) {
            continue;
        }
        seen.push(about.name);
        command = command.arg(argument(about, helped));
    }
    let files = Arg::new(FILES)
        .value_name(P::FILE)
        .num_args(0..)
        .action(ArgAction::Append)
        .value_parser(clap::value_parser!(OsString));
    command.arg(match helped {
        true => files.help(P::FILES_HELP),
        false => files,
    })
}

/// The argument of one option row, with its help or without.
fn argument(about: &About, helped: bool) -> Arg {
    let mut arg = Arg::new(about.name).long(about.name);
    if helped {
        arg = arg.help(one_line(about.help));
    }
    let valued = |arg: Arg| {
        arg.value_name(
            about
                .value
                .or_else(|| shown_value(about))
                .unwrap_or("VALUE"),
        )
        .action(ArgAction::Append)
        .require_equals(true)
        .value_parser(clap::value_parser!(OsString))
    };
    match about.takes {
        Takes::Nothing => arg.action(ArgAction::Count),
        Takes::Value => valued(arg).num_args(1),
        Takes::Maybe | Takes::ValueOrAlone => {
            valued(arg).num_args(0..=1).default_missing_value(ALONE)
        }
    }
}

/// The name of an optional value as the help shows it: `NAME` of `/callgraph[:NAME]`.
fn shown_value(about: &About) -> Option<&'static str> {
    let shown = about.shown?;
    let (_, value) = shown.split_once(':')?;
    Some(value.trim_end_matches(']'))
}

/// A row's help on one line: its continuation lines joined with a space.
fn one_line(help: &str) -> String {
    help.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// One option as the reader read it: its row's name and its value (`None`: given alone).
pub(super) struct Given {
    pub name: &'static str,
    pub value: Option<OsString>,
}

/// The arguments in clap's form: the options, then `--` and the files.
fn clap_form(options: &[Given], files: &[OsString]) -> Vec<OsString> {
    let mut args = Vec::with_capacity(options.len() + files.len() + 1);
    for option in options {
        let mut arg = OsString::from("--");
        arg.push(option.name);
        if let Some(value) = &option.value {
            arg.push("=");
            arg.push(value);
        }
        args.push(arg);
    }
    args.push(OsString::from("--"));
    args.extend(files.iter().cloned());
    args
}

/// Parses the options and files read from SPTDump's spellings, in clap's form, against the
/// grammar of the rows they name (a command line names a few of the rows: the others' would
/// only cost time at every start): the options in the order they were given, and the files.
pub(super) fn parse<P: Program>(
    options: &[Given],
    files: &[OsString],
) -> Result<(Vec<Given>, Vec<OsString>), UsageError> {
    let rows: Vec<&'static About> = P::rows()
        .into_iter()
        .map(P::about)
        .filter(|about| options.iter().any(|o| o.name == about.name))
        .collect();
    let command = grammar::<P>(&rows, false);
    let arguments: Vec<(&'static str, bool)> = command
        .get_arguments()
        .filter(|a| a.get_id() != FILES)
        .map(|a| {
            let name = rows
                .iter()
                .map(|about| about.name)
                .find(|name| *name == a.get_id().as_str())
                .expect("every argument is a row's");
            (name, matches!(a.get_action(), ArgAction::Count))
        })
        .collect();
    let matches = command
        .try_get_matches_from(clap_form(options, files))
        .map_err(|e| {
            usage(
                e.kind()
                    .as_str()
                    .unwrap_or("the command line is not understood"),
            )
        })?;
    let mut given: Vec<(usize, Given)> = Vec::new();
    for (name, counted) in arguments {
        occurrences(&matches, name, counted, &mut given);
    }
    given.sort_by_key(|(at, _)| *at);
    let files = matches
        .get_many::<OsString>(FILES)
        .map(|files| files.cloned().collect())
        .unwrap_or_default();
    Ok((given.into_iter().map(|(_, g)| g).collect(), files))
}

/// Every occurrence of option `name` in `matches` (`counted`: a flag), with its place on the
/// command line.
fn occurrences(
    matches: &ArgMatches,
    name: &'static str,
    counted: bool,
    out: &mut Vec<(usize, Given)>,
) {
    let id = name;
    // A flag not given still has its count, 0, by default.
    if matches.value_source(id) != Some(ValueSource::CommandLine) {
        return;
    }
    let Some(places) = matches.indices_of(id) else {
        return;
    };
    if counted {
        out.extend(places.map(|at| (at, Given { name, value: None })));
        return;
    }
    let values = matches
        .get_many::<OsString>(id)
        .into_iter()
        .flatten()
        .map(|v| (v.as_os_str() != OsStr::new(ALONE)).then(|| v.clone()));
    out.extend(
        places
            .zip(values)
            .map(|(at, value)| (at, Given { name, value })),
    );
}

/// The completions of program `P` for `shell` (one of [`SHELLS`]).
pub(super) fn completions<P: Program>(shell: &str) -> Option<Vec<u8>> {
    use clap_complete::Shell;
    let shell = match shell {
        "bash" => Shell::Bash,
        "elvish" => Shell::Elvish,
        "fish" => Shell::Fish,
        "powershell" => Shell::PowerShell,
        "zsh" => Shell::Zsh,
        _ => return None,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command::<P>(), P::NAME, &mut out);
    Some(out)
}

/// The manual page of program `P`, in roff.
pub(super) fn manual<P: Program>() -> Vec<u8> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command::<P>())
        .render(&mut out)
        .expect("writing to memory");
    out
}
