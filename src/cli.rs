//! The command line: SPTDump's options in every spelling, written down once in [`OPTIONS`].
//!
//! Options are case-insensitive and may be written `/name`, `-name` or `--name`. Values follow
//! a colon (`/top:20`), or for the dash forms `=` or a space (`--top 20`). An argument that
//! starts with `/` is an option only when its name is one of ours, so `/tmp/a.spt` is a file
//! on every platform. `--` ends the options; `-` is standard input.
//!
//! Every spelling is first rewritten as `--name[=value]`; clap then parses that, with its
//! arguments built from the same table the help is written from.

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::{Arg, ArgAction, ArgMatches};
use sptdump::analysis::stacks::StackOrder;
use sptdump::dump::{Options, Sections};
use sptdump::format::tables::StringIndex;
use sptdump::output::Format;

/// Where an option is listed in the help.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Group {
    /// What to print.
    Sections,
    /// How to print it.
    Output,
}

/// One option: its name, the name of its value if it takes one, and its help.
struct Opt {
    name: &'static str,
    /// `Some("N")` for `/top:N`.
    value: Option<&'static str>,
    /// Whether the value is a comma-separated list that accumulates over repetitions.
    list: bool,
    /// How the help shows it, when not as `/name` or `/name:VALUE`.
    shown: Option<&'static str>,
    group: Group,
    /// The help text; a newline continues it on the next line.
    help: &'static str,
}

const fn flag(name: &'static str, group: Group, help: &'static str) -> Opt {
    Opt {
        name,
        value: None,
        list: false,
        shown: None,
        group,
        help,
    }
}

const fn valued(name: &'static str, value: &'static str, list: bool, help: &'static str) -> Opt {
    Opt {
        name,
        value: Some(value),
        list,
        shown: None,
        group: Group::Sections,
        help,
    }
}

/// Every option, in the order the help lists them. The parser, the clap arguments and the
/// help are all made from this table.
const OPTIONS: &[Opt] = &[
    flag(
        "all",
        Group::Sections,
        "everything below except /summary (the default)",
    ),
    flag("header", Group::Sections, "the header fields"),
    flag("strtab", Group::Sections, "the string table"),
    flag(
        "progid",
        Group::Sections,
        "the program IDs: index, GUID, age, symbol-server key, name",
    ),
    flag("event", Group::Sections, "every record of the event stream"),
    flag(
        "summary",
        Group::Sections,
        "per binary: totals per event kind and the hottest addresses",
    ),
    flag(
        "functions",
        Group::Sections,
        "per binary: inclusive and exclusive call-stack hits per function",
    ),
    flag(
        "folded",
        Group::Sections,
        "the call stacks as folded lines (outer;...;leaf hits), for flame-graph tools",
    ),
    valued(
        "flamegraph",
        "FILE",
        false,
        "write an interactive SVG flame graph of the call stacks to FILE",
    ),
    valued(
        "pprof",
        "FILE",
        false,
        "write the trace as a gzipped pprof profile (go tool pprof, Pyroscope) to FILE",
    ),
    valued(
        "speedscope",
        "FILE",
        false,
        "write the trace in speedscope's JSON format to FILE",
    ),
    flag(
        "merge",
        Group::Sections,
        "/summary, /functions, /folded and the exports treat all the traces as one\n\
         profile, binaries merged by GUID and age, as SPDConvert merges them",
    ),
    valued(
        "sptlist",
        "FILE",
        true,
        "add the traces listed in FILE, one path per line",
    ),
    valued(
        "stackorder",
        "ORDER",
        false,
        "how call stacks are stored: leaf-first (the default, ETW's) or root-first",
    ),
    valued(
        "top",
        "N",
        false,
        "how many entries /summary or /functions shows per table (default 10);\n\
         alone it implies /summary",
    ),
    valued(
        "binary",
        "LIST",
        true,
        "only segments of these binaries: names or progid indices, comma-separated",
    ),
    valued(
        "strindex",
        "MODE",
        false,
        "read program-ID string indices as auto (the default), offset or ordinal",
    ),
    valued(
        "match",
        "FILES",
        true,
        "check images (.exe, .dll) or PDBs against the program IDs: match,\n\
         age-mismatch, guid-mismatch or absent; exit 1 unless all match",
    ),
    valued(
        "pdb",
        "FILES",
        true,
        "name RVAs by function (function+0xOFFSET) with these PDBs; each must\n\
         match a program ID's GUID and age",
    ),
    flag(
        "validate",
        Group::Output,
        "decode everything; print only the diagnostics and a verdict per file",
    ),
    flag(
        "check",
        Group::Output,
        "is the trace fit for SPDConvert? samples, LBR, the /match binaries,\n\
         density with /pdb: verdicts and the /mode to use; exit 1 on errors",
    ),
    flag(
        "compare",
        Group::Output,
        "sptdump /compare BASE NEW: per binary and event, how far NEW's samples\n\
         overlap BASE's, and what NEW samples that BASE does not",
    ),
    Opt {
        group: Group::Output,
        ..valued(
            "min-overlap",
            "F",
            false,
            "with /compare: exit 1 when a binary's overlap is below F (0 to 1)",
        )
    },
    flag(
        "strict",
        Group::Output,
        "warnings count as errors for the verdict and the exit status",
    ),
    Opt {
        group: Group::Output,
        ..valued(
            "progress",
            "WHEN",
            false,
            "a progress bar on standard error: auto (on a terminal, for a run past a\n\
             second, not with /json), always or never",
        )
    },
    flag(
        "quiet",
        Group::Output,
        "no progress bar: only the output, diagnostics and errors",
    ),
    flag(
        "json",
        Group::Output,
        "JSON Lines on standard output instead of text",
    ),
    Opt {
        shown: Some("/help, /?, /h"),
        ..flag("help", Group::Output, "this help")
    },
    Opt {
        shown: Some("/version, /V"),
        ..flag("version", Group::Output, "the version")
    },
];

/// Short spellings: `/h`, `/?` for help, `/V` for version.
fn canonical(name: &str) -> &str {
    match name {
        "h" | "?" => "help",
        "v" => "version",
        other => other,
    }
}

fn option(name: &str) -> Option<&'static Opt> {
    OPTIONS.iter().find(|o| o.name == name)
}

/// How the help shows an option: `/name`, `/name:VALUE`, or its own spelling.
fn label(o: &Opt) -> String {
    match (o.shown, o.value) {
        (Some(shown), _) => shown.to_owned(),
        (None, Some(value)) => format!("/{}:{value}", o.name),
        (None, None) => format!("/{}", o.name),
    }
}

/// The help text, in the style of the MSVC tools, its option lists made from [`OPTIONS`].
pub fn help() -> String {
    // Two spaces after the longest option.
    let width = OPTIONS.iter().map(|o| label(o).len()).max().unwrap_or(0) + 2;
    let mut text = String::from(
        "sptdump: show what is inside SPT (Sample Profile Trace) files of MSVC's Sample PGO\n\
         \n\
         Usage: sptdump [options] sptfile...\n",
    );
    for (group, title) in [
        (
            Group::Sections,
            "Sections (several combine; they print in file order):",
        ),
        (Group::Output, "Output:"),
    ] {
        let _ = write!(text, "\n{title}\n");
        for o in OPTIONS.iter().filter(|o| o.group == group) {
            let mut lines = o.help.lines();
            let _ = writeln!(
                text,
                "  {:<width$}{}",
                label(o),
                lines.next().unwrap_or_default()
            );
            for more in lines {
                let _ = writeln!(
                    text,
                    "{:indent$}{}",
                    "",
                    more.trim_start(),
                    indent = width + 2
                );
            }
        }
    }
    text.push_str(
        "\n\
Options are case-insensitive and may also be written -name or --name; values follow a
colon (/top:20), or for the dash forms '=' or a space (--top 20). An argument that starts
with '/' and names no option is a file, so /tmp/trace.spt works; a mistyped option is an
error, never a file. '--' ends the options; '-' reads standard input.

Call stacks (ETW_CALLSTACK) are stored leaf first, as ETW walks them: the first frame is the
sampled one, the last the outermost recorded; /event shows them as stored.

Exit status: 0 no errors (warnings allowed), 1 errors found, a file unreadable, or a
/match or /pdb file that does not fit the trace, 2 usage error.

Examples:
  sptdump sample.spt                  dump everything
  sptdump /progid sample.spt          GUID and age of each binary, to compare with SPDDump /header
  sptdump /validate /json *.spt       check traces in a build pipeline
  sptdump /match:app.exe,app.pdb trace.spt   does the trace fit this build?
",
    );
    text
}

/// When to show a progress bar (`/progress`, `/quiet`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// On a terminal, for a run past a second, not with `/json`.
    Auto,
    /// Whenever a file is read, for a run past a second.
    Always,
    /// Never.
    Never,
}

/// A wrong command line, as one line of text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}; see 'sptdump /help'")]
pub struct UsageError(String);

fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Show the help.
    Help,
    /// Show the version.
    Version,
    /// Show the identities of the `/match` files: there is no trace to match them with.
    Identities {
        /// JSON Lines instead of text.
        format: Format,
        /// The images and PDBs.
        paths: Vec<OsString>,
    },
    /// Dump files.
    Dump {
        /// Whether to show a progress bar.
        progress: Progress,
        /// Files listing more traces, one per line (`/sptlist`), to be read before dumping.
        sptlists: Vec<OsString>,
        /// What to print, and how. Its `/match` and `/pdb` files are still to be read.
        options: Box<Options>,
        /// The files, `-` for standard input.
        files: Vec<OsString>,
        /// The images and PDBs given to `/match`, to be read before dumping.
        match_paths: Vec<OsString>,
        /// The PDBs given to `/pdb`, to be read before dumping.
        pdb_paths: Vec<OsString>,
    },
}

/// The clap parser of the normalised `--name[=value]` arguments, built from [`OPTIONS`].
fn clap_command() -> clap::Command {
    let command = clap::Command::new("sptdump")
        .no_binary_name(true)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .args_override_self(true);
    OPTIONS.iter().fold(command, |command, o| {
        let arg = Arg::new(o.name).long(o.name);
        command.arg(match o.value {
            None => arg.action(ArgAction::SetTrue),
            Some(value) => arg
                .value_name(value)
                .value_parser(clap::value_parser!(OsString))
                .action(if o.list {
                    ArgAction::Append
                } else {
                    ArgAction::Set
                }),
        })
    })
}

/// An argument that may be an option: its spelling, name and value.
struct Spelled {
    /// Written `-name` or `--name` (else `/name`).
    dashed: bool,
    /// The name as written.
    name: String,
    /// What separates the value: `:` or `=`.
    separator: Option<char>,
    /// The value after it.
    value: Option<OsString>,
}

/// Splits `/name:value`, `-name=value` and the like. `None` when the argument does not
/// start like an option, or its name is not text (then it can only be a file).
fn spelled(arg: &OsStr) -> Result<Option<Spelled>, UsageError> {
    let bytes = arg.as_encoded_bytes();
    let (dashed, body) = match bytes {
        [b'-', b'-', body @ ..] => (true, body),
        [b'-', body @ ..] => (true, body),
        [b'/', body @ ..] => (false, body),
        _ => return Ok(None),
    };
    let at = body.iter().position(|b| matches!(b, b':' | b'='));
    let name = &body[..at.unwrap_or(body.len())];
    let Ok(name) = std::str::from_utf8(name) else {
        return Ok(None);
    };
    let (separator, value) = match at {
        Some(i) => (
            Some(char::from(body[i])),
            Some(value_of(arg, bytes.len() - body.len() + i + 1)?),
        ),
        None => (None, None),
    };
    Ok(Some(Spelled {
        dashed,
        name: name.to_owned(),
        separator,
        value,
    }))
}

/// The part of `arg` from byte `at` on, which follows an ASCII separator.
fn value_of(arg: &OsStr, at: usize) -> Result<OsString, UsageError> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(OsStr::from_bytes(&arg.as_bytes()[at..]).to_owned())
    }
    #[cfg(not(unix))]
    {
        // Elsewhere an option's value must be text (file arguments need not be).
        match arg.to_str() {
            Some(text) => Ok(OsString::from(&text[at..])),
            None => Err(usage(format!("option {arg:?} is not valid Unicode"))),
        }
    }
}

/// Splits a list value at its commas and trims each item of surrounding spaces.
fn items(value: &OsStr) -> Result<Vec<OsString>, UsageError> {
    let bytes = value.as_encoded_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    for end in (0..=bytes.len()).filter(|&i| i == bytes.len() || bytes[i] == b',') {
        let (mut lo, mut hi) = (start, end);
        while lo < hi && bytes[lo] == b' ' {
            lo += 1;
        }
        while hi > lo && bytes[hi - 1] == b' ' {
            hi -= 1;
        }
        out.push(slice(value, lo, hi)?);
        start = end + 1;
    }
    Ok(out)
}

/// The bytes `lo..hi` of `value`, both at ASCII boundaries.
fn slice(value: &OsStr, lo: usize, hi: usize) -> Result<OsString, UsageError> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(OsStr::from_bytes(&value.as_bytes()[lo..hi]).to_owned())
    }
    #[cfg(not(unix))]
    {
        match value.to_str() {
            Some(text) => Ok(OsString::from(&text[lo..hi])),
            None => Err(usage(format!("value {value:?} is not valid Unicode"))),
        }
    }
}

/// Whether an argument that names no option was meant as one: `/` and a word of letters,
/// digits, `-` and `?` (a value may follow a colon), naming no file. Anything else (`/tmp/a`,
/// `/trace.spt`, a file that exists) is a file.
fn mistyped(arg: &OsStr, name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '?')
        && !Path::new(arg).exists()
}

/// The option nearest to a mistyped name, when one is near enough to be what was meant.
fn nearest(name: &str) -> Option<&'static str> {
    let name = name.to_ascii_lowercase();
    OPTIONS
        .iter()
        .map(|o| (strsim::jaro_winkler(&name, o.name), o.name))
        .filter(|&(score, _)| score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

/// The usage error for an unknown option, with the nearest known one.
fn unknown(shown: &str, name: &str) -> UsageError {
    match nearest(name) {
        Some(near) => usage(format!("unknown option '{shown}' (did you mean /{near}?)")),
        None => usage(format!("unknown option '{shown}'")),
    }
}

/// `--name=value`, once the value is known to be good.
fn flag_with(name: &str, value: &OsStr) -> Result<Vec<OsString>, UsageError> {
    let opt = option(name).expect("a known option");
    let values = if opt.list {
        let items = items(value)?;
        if items.iter().any(|i| i.is_empty()) {
            return Err(usage(format!(
                "/{name} needs a comma-separated list of {}",
                match name {
                    "binary" => "names or progid indices",
                    _ => "files",
                }
            )));
        }
        items
    } else {
        vec![value.to_owned()]
    };
    for v in &values {
        check_value(name, v)?;
    }
    Ok(values
        .into_iter()
        .map(|v| {
            let mut flag = OsString::from(format!("--{name}="));
            flag.push(v);
            flag
        })
        .collect())
}

/// Checks the values that are not files.
fn check_value(name: &str, value: &OsStr) -> Result<(), UsageError> {
    let text = value.to_string_lossy();
    match name {
        "top" if text.parse::<usize>().is_err() => Err(usage(format!(
            "invalid value '{text}' for /top: expected a whole number, 0 or more"
        ))),
        "strindex" if text.parse::<StringIndex>().is_err() => Err(usage(format!(
            "invalid value '{text}' for /strindex: expected auto, offset or ordinal"
        ))),
        "min-overlap" if !text.parse::<f64>().is_ok_and(|f| (0.0..=1.0).contains(&f)) => {
            Err(usage(format!(
                "invalid value '{text}' for /min-overlap: expected a number from 0 to 1"
            )))
        }
        "progress"
            if !matches!(
                text.to_ascii_lowercase().as_str(),
                "auto" | "always" | "never"
            ) =>
        {
            Err(usage(format!(
                "invalid value '{text}' for /progress: expected auto, always or never"
            )))
        }
        "stackorder" if text.parse::<StackOrder>().is_err() => Err(usage(format!(
            "invalid value '{text}' for /stackorder: expected leaf-first or root-first"
        ))),
        "flamegraph" if value.is_empty() => {
            Err(usage("/flamegraph needs a file: /flamegraph:FILE"))
        }
        _ => Ok(()),
    }
}

/// The values given to an option, in order.
fn values(matches: &ArgMatches, name: &str) -> Vec<OsString> {
    matches
        .get_many::<OsString>(name)
        .into_iter()
        .flatten()
        .cloned()
        .collect()
}

/// Parses the arguments (without the program name). Every argument is checked before any
/// file is read: a mistyped option never dumps a file.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut flags: Vec<OsString> = Vec::new();
    let mut files = Vec::new();
    let mut args = args.into_iter();
    let mut options_ended = false;
    while let Some(arg) = args.next() {
        if options_ended || arg == "-" {
            files.push(arg);
            continue;
        }
        if arg == "--" {
            options_ended = true;
            continue;
        }
        let Some(Spelled {
            dashed,
            name,
            separator,
            value,
        }) = spelled(&arg)?
        else {
            files.push(arg);
            continue;
        };
        let shown = arg.to_string_lossy();
        let lower = name.to_ascii_lowercase();
        let Some(opt) = option(canonical(&lower)) else {
            if dashed || (separator != Some('=') && mistyped(&arg, &name)) {
                let written = match separator {
                    Some(sep) => shown.split(sep).next().unwrap_or(&shown),
                    None => &shown,
                };
                return Err(unknown(written, &name));
            }
            files.push(arg);
            continue;
        };
        let name = opt.name;
        match (opt.value, value) {
            (_, Some(_)) if !dashed && separator == Some('=') => {
                return Err(usage(format!(
                    "'{shown}': values follow a colon, as in /{name}:{}",
                    shown.split_once('=').map_or("", |(_, v)| v)
                )));
            }
            (None, None) => flags.push(OsString::from(format!("--{name}"))),
            (None, Some(_)) => return Err(usage(format!("option '/{name}' takes no value"))),
            (Some(_), Some(v)) => flags.extend(flag_with(name, &v)?),
            (Some(_), None) if dashed => match args.next() {
                Some(v) => flags.extend(flag_with(name, &v)?),
                None => return Err(usage(format!("option '{shown}' needs a value"))),
            },
            (Some(what), None) => {
                return Err(usage(format!(
                    "option '{shown}' needs a value: /{name}:{what}"
                )));
            }
        }
    }

    let matches = clap_command().try_get_matches_from(&flags).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or("invalid arguments");
        usage(first.trim_start_matches("error: ").to_owned())
    })?;
    if matches.get_flag("help") {
        return Ok(Command::Help);
    }
    if matches.get_flag("version") {
        return Ok(Command::Version);
    }
    let format = if matches.get_flag("json") {
        Format::Json
    } else {
        Format::Text
    };
    let match_paths = values(&matches, "match");
    let sptlists = values(&matches, "sptlist");
    if files.is_empty() && sptlists.is_empty() {
        // Images and PDBs without a trace: say who they are.
        if !match_paths.is_empty() {
            return Ok(Command::Identities {
                format,
                paths: match_paths,
            });
        }
        return Err(usage("no SPT file given"));
    }
    let text = |name: &str| {
        values(&matches, name)
            .into_iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
    };
    let top = text("top")
        .first()
        .map(|n| n.parse::<usize>().expect("checked"));
    let strindex = text("strindex")
        .first()
        .map_or(StringIndex::Auto, |m| m.parse().expect("checked"));
    let stack_order = text("stackorder")
        .first()
        .map_or(StackOrder::LeafFirst, |m| m.parse().expect("checked"));
    let binaries = text("binary");
    let progress = if matches.get_flag("quiet") {
        Progress::Never
    } else {
        match text("progress")
            .first()
            .map(|p| p.to_ascii_lowercase())
            .as_deref()
        {
            Some("always") => Progress::Always,
            Some("never") => Progress::Never,
            _ => Progress::Auto,
        }
    };
    let compare = matches.get_flag("compare");
    if compare && files.len() != 2 {
        return Err(usage(format!(
            "/compare takes exactly two traces, BASE and NEW ({} given)",
            files.len()
        )));
    }
    if compare && matches.get_flag("merge") {
        return Err(usage(
            "/compare reads two traces apart: it does not go with /merge",
        ));
    }
    let min_overlap = text("min-overlap")
        .first()
        .map(|f| f.parse::<f64>().expect("checked"));
    if min_overlap.is_some() && !compare {
        return Err(usage("/min-overlap goes with /compare BASE NEW"));
    }
    let file_of = |name: &str| values(&matches, name).pop().map(PathBuf::from);
    let (flamegraph, pprof, speedscope) = (
        file_of("flamegraph"),
        file_of("pprof"),
        file_of("speedscope"),
    );
    let merge = matches.get_flag("merge");
    for (name, given) in [
        ("flamegraph", &flamegraph),
        ("pprof", &pprof),
        ("speedscope", &speedscope),
    ] {
        if given.is_some() && !merge && (files.len() > 1 || !sptlists.is_empty()) {
            return Err(usage(format!(
                "/{name} writes one file: give it one trace, or /merge several"
            )));
        }
    }

    // /top on its own asks for the top entries: that is a summary.
    let functions = matches.get_flag("functions").then(|| top.unwrap_or(10));
    let summary = (matches.get_flag("summary") || (top.is_some() && functions.is_none()))
        .then(|| top.unwrap_or(10));
    let folded = matches.get_flag("folded");
    let chosen = Sections {
        header: matches.get_flag("header"),
        strtab: matches.get_flag("strtab"),
        progid: matches.get_flag("progid"),
        event: matches.get_flag("event"),
    };
    let only_verdicts = summary.is_some()
        || functions.is_some()
        || folded
        || flamegraph.is_some()
        || pprof.is_some()
        || speedscope.is_some()
        || matches.get_flag("check")
        || compare
        || !match_paths.is_empty();
    let sections = if matches.get_flag("all") || (chosen == Sections::default() && !only_verdicts) {
        Sections::ALL
    } else {
        chosen
    };
    Ok(Command::Dump {
        options: Box::new(Options {
            format,
            sections,
            summary,
            functions,
            folded,
            flamegraph,
            stack_order,
            pprof,
            speedscope,
            validate: matches.get_flag("validate"),
            strict: matches.get_flag("strict"),
            check: matches.get_flag("check"),
            compare,
            min_overlap,
            merge,
            one_thread: false,
            strindex,
            binaries: (!binaries.is_empty()).then_some(binaries),
            matches: Vec::new(),
            pdbs: Vec::new(),
        }),
        files,
        sptlists,
        progress,
        match_paths,
        pdb_paths: values(&matches, "pdb"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, UsageError> {
        parse(args.iter().map(OsString::from))
    }

    fn dump_of(args: &[&str]) -> (Options, Vec<String>) {
        match parse_strs(args).unwrap() {
            Command::Dump { options, files, .. } => (
                *options,
                files
                    .into_iter()
                    .map(|f| f.into_string().unwrap())
                    .collect(),
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_help_lists_every_option_and_the_parser_knows_every_listed_one() {
        let help = help();
        for o in OPTIONS {
            let spelled = match o.value {
                Some(value) => format!("/{}:{value}", o.name),
                None => format!("/{}", o.name),
            };
            let shown = o.shown.map_or(format!("{spelled} "), |s| format!("{s} "));
            assert!(shown.starts_with(&spelled), "{shown}");
            assert!(
                help.contains(&format!("\n  {shown}")),
                "{spelled} is not in the help"
            );
            let example = spelled
                .replace(":N", ":3")
                .replace(":MODE", ":auto")
                .replace(":ORDER", ":root-first")
                .replace(":F", ":0.5")
                .replace(":WHEN", ":never");
            // /compare and its threshold take two traces; every other option one.
            let args: Vec<&str> = match o.name {
                "compare" | "min-overlap" => vec!["/compare", &example, "a.spt", "b.spt"],
                _ => vec![&example, "a.spt"],
            };
            assert!(parse_strs(&args).is_ok(), "{spelled}");
        }
        // And the other way round: every `/name` the help lists is an option.
        for line in help.lines() {
            let Some(word) = line.strip_prefix("  /") else {
                continue;
            };
            let name: String = word
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            if !name.is_empty() {
                assert!(option(&name).is_some(), "the help lists /{name}");
            }
        }
        // The clap arguments are the table's.
        let command = clap_command();
        let names: Vec<_> = command
            .get_arguments()
            .map(|a| a.get_id().as_str())
            .collect();
        let table: Vec<_> = OPTIONS.iter().map(|o| o.name).collect();
        assert_eq!(names, table);
    }

    #[test]
    fn help_lines_fit_a_terminal() {
        for line in help().lines() {
            assert!(line.chars().count() <= 100, "{line}");
        }
    }

    #[test]
    fn default_is_all() {
        let (o, files) = dump_of(&["a.spt"]);
        assert_eq!(o, Options::default());
        assert_eq!(o.format, Format::Text);
        assert_eq!(files, ["a.spt"]);
    }

    #[test]
    fn every_spelling_and_case() {
        for spelling in ["/progid", "-progid", "--progid", "/PROGID", "--ProgId"] {
            let (o, _) = dump_of(&[spelling, "a.spt"]);
            assert_eq!(
                o.sections,
                Sections {
                    progid: true,
                    ..Sections::default()
                },
                "{spelling}"
            );
        }
    }

    #[test]
    fn values_after_colon_equals_or_space() {
        for args in [
            &["/summary", "/top:20", "a"][..],
            &["/summary", "--top=20", "a"],
            &["/summary", "--top", "20", "a"],
            &["/summary", "-TOP:20", "a"],
        ] {
            let (o, files) = dump_of(args);
            assert_eq!(o.summary, Some(20), "{args:?}");
            assert_eq!(files, ["a"]);
        }
        let (o, _) = dump_of(&["/summary", "a"]);
        assert_eq!(o.summary, Some(10));
        assert_eq!(o.sections, Sections::default());
    }

    #[test]
    fn slash_paths_are_files() {
        let (_, files) = dump_of(&["/tmp/a.spt", "/header.spt", "/json/b.spt"]);
        assert_eq!(
            files,
            ["/tmp/a.spt", "/header.spt", "/json/b.spt"].map(String::from)
        );
    }

    #[test]
    fn double_dash_ends_options_and_dash_is_stdin() {
        let (o, files) = dump_of(&["/json", "-", "--", "/header", "-x"]);
        assert_eq!(o.format, Format::Json);
        assert_eq!(o.sections, Sections::ALL);
        assert_eq!(files, ["-", "/header", "-x"]);
    }

    #[test]
    fn help_and_version() {
        for h in ["/?", "-h", "--help", "/HELP", "-?"] {
            assert_eq!(parse_strs(&[h]), Ok(Command::Help), "{h}");
        }
        assert_eq!(parse_strs(&["/version"]), Ok(Command::Version));
    }

    #[test]
    fn match_files_accumulate_and_leave_out_the_sections() {
        let Command::Dump {
            options,
            match_paths,
            ..
        } = parse_strs(&[
            "/match:C:\\b\\app.exe,app.pdb",
            "--match",
            "core.dll",
            "t.spt",
        ])
        .unwrap()
        else {
            panic!()
        };
        assert_eq!(match_paths, ["C:\\b\\app.exe", "app.pdb", "core.dll"]);
        assert_eq!(options.sections, Sections::default());
    }

    #[test]
    fn binary_lists_accumulate() {
        let (o, _) = dump_of(&["/binary:core.dll,0", "--binary", "app.exe", "a"]);
        assert_eq!(
            o.binaries,
            Some(vec!["core.dll".into(), "0".into(), "app.exe".into()])
        );
    }

    #[test]
    fn usage_errors_are_one_line() {
        for args in [
            &["-bogus", "a"][..],
            &["--top", "x", "/summary", "a"],
            &["/top:-1", "a"],
            &["/top", "a"],
            &["/json"],
            &[],
            &["/header:1", "a"],
            &["/binary:", "a"],
            &["--top"],
        ] {
            let e = parse_strs(args).unwrap_err().to_string();
            assert!(!e.contains('\n'), "{args:?}: {e}");
            assert!(e.ends_with("see 'sptdump /help'"), "{args:?}: {e}");
        }
    }
}
