//! The command line: SPTDump's options in every spelling, and the run over the files.
//!
//! Options are case-insensitive and may be written `/name`, `-name` or `--name`. Values follow
//! a colon (`/top:20`), or for the dash forms `=` or a space (`--top 20`). An argument that
//! starts with `/` is an option only when its name is one of ours, so `/tmp/a.spt` is a file
//! on every platform. `--` ends the options; `-` is standard input.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use clap::Parser;

use crate::diag::Tally;
use crate::dump::{self, MatchFile, Options, Outcome, PdbFile, Sections};
use crate::error;
use crate::ident;
use crate::input::Input;
use crate::json::JsonPrinter;
use crate::print::{FileInfo, Printer};
use crate::symbols::Symbols;
use crate::text::TextPrinter;
use std::sync::Arc;

/// Exit status: no error found.
pub const EXIT_OK: u8 = 0;
/// Exit status: an error diagnostic, or a file that could not be read.
pub const EXIT_ERRORS: u8 = 1;
/// Exit status: the command line is wrong.
pub const EXIT_USAGE: u8 = 2;

/// The help text, in the style of the MSVC tools.
pub const HELP: &str = "\
sptdump: show what is inside SPT (Sample Profile Trace) files of MSVC's Sample PGO

Usage: sptdump [options] sptfile...

Sections (several combine; they print in file order):
  /all            everything below except /summary (the default)
  /header         the header fields
  /strtab         the string table
  /progid         the program IDs: index, GUID, age, symbol-server key, name
  /event          every record of the event stream
  /summary        per binary: totals per event kind and the hottest addresses
  /top:N          how many entries /summary shows per table (default 10); implies /summary
  /binary:LIST    only segments of these binaries: names or progid indices, comma-separated
  /match:FILES    check images (.exe, .dll) or PDBs against the program IDs: match,
                  age-mismatch, guid-mismatch or absent; exit 1 unless all match
  /pdb:FILES      name RVAs by function (function+0xOFFSET) with these PDBs; each must
                  match a program ID's GUID and age

Output:
  /validate       decode everything; print only the diagnostics and a verdict per file
  /json           JSON Lines on standard output instead of text
  /help, /?, -h   this help
  /version        the version

Options are case-insensitive and may also be written -name or --name; values follow a
colon (/top:20), or for the dash forms '=' or a space (--top 20). An argument that starts
with '/' and names no option is a file, so /tmp/trace.spt works. '--' ends the options;
'-' reads standard input.

Exit status: 0 no errors (warnings allowed), 1 errors found or a file unreadable,
2 usage error.

Examples:
  sptdump sample.spt                  dump everything
  sptdump /progid sample.spt          GUID and age of each binary, to compare with SPDDump /header
  sptdump /validate /json *.spt       check traces in a build pipeline
  sptdump /match:app.exe,app.pdb trace.spt   does the trace fit this build?
";

/// A wrong command line, as one line of text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}; see 'sptdump /help'")]
pub struct UsageError(String);

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Show the help.
    Help,
    /// Show the version.
    Version,
    /// Dump files.
    Dump {
        /// What to print.
        options: Options,
        /// JSON Lines instead of text.
        json: bool,
        /// The files, `-` for standard input.
        files: Vec<String>,
        /// The images and PDBs given to `/match`, to be read before dumping.
        match_paths: Vec<String>,
        /// The PDBs given to `/pdb`, to be read before dumping.
        pdb_paths: Vec<String>,
    },
}

/// The options, once every spelling has become `--name[=value]`.
#[derive(Parser, Debug)]
#[command(
    name = "sptdump",
    no_binary_name = true,
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true
)]
struct Flags {
    #[arg(long)]
    all: bool,
    #[arg(long)]
    header: bool,
    #[arg(long)]
    strtab: bool,
    #[arg(long)]
    progid: bool,
    #[arg(long)]
    event: bool,
    #[arg(long)]
    summary: bool,
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    #[arg(long, value_name = "LIST", value_delimiter = ',', action = clap::ArgAction::Append)]
    binary: Vec<String>,
    #[arg(long = "match", value_name = "FILES", value_delimiter = ',', action = clap::ArgAction::Append)]
    matches: Vec<String>,
    #[arg(long, value_name = "FILES", value_delimiter = ',', action = clap::ArgAction::Append)]
    pdb: Vec<String>,
    #[arg(long)]
    validate: bool,
    #[arg(long)]
    json: bool,
    #[arg(long)]
    help: bool,
    #[arg(long)]
    version: bool,
}

/// The option names and whether each takes a value.
const OPTIONS: &[(&str, bool)] = &[
    ("all", false),
    ("header", false),
    ("strtab", false),
    ("progid", false),
    ("event", false),
    ("summary", false),
    ("top", true),
    ("binary", true),
    ("match", true),
    ("pdb", true),
    ("validate", false),
    ("json", false),
    ("help", false),
    ("version", false),
];

fn takes_value(name: &str) -> Option<bool> {
    OPTIONS.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
}

/// `--name=value`, once the value is known to be good.
fn checked(name: &str, value: &str) -> Result<String, UsageError> {
    if name == "top" && value.parse::<usize>().is_err() {
        return Err(usage(format!(
            "invalid value '{value}' for /top: expected a whole number, 0 or more"
        )));
    }
    Ok(format!("--{name}={value}"))
}

fn usage(message: impl Into<String>) -> UsageError {
    UsageError(message.into())
}

/// Parses the arguments (without the program name).
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut flags: Vec<String> = Vec::new();
    let mut files = Vec::new();
    let mut args = args.into_iter();
    let mut options_ended = false;
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|a| usage(format!("argument {a:?} is not valid Unicode")))?;
        if options_ended || arg == "-" {
            files.push(arg);
            continue;
        }
        if arg == "--" {
            options_ended = true;
            continue;
        }
        if matches!(arg.as_str(), "/?" | "-?" | "-h") {
            flags.push("--help".into());
            continue;
        }
        let (dashed, body) = if let Some(body) = arg.strip_prefix("--") {
            (true, body)
        } else if let Some(body) = arg.strip_prefix('-') {
            (true, body)
        } else if let Some(body) = arg.strip_prefix('/') {
            (false, body)
        } else {
            files.push(arg);
            continue;
        };
        let split = if dashed {
            body.find(['=', ':'])
        } else {
            body.find(':')
        };
        let (name, value) = match split {
            Some(i) => (&body[..i], Some(&body[i + 1..])),
            None => (body, None),
        };
        let lower = name.to_ascii_lowercase();
        let Some(wants_value) = takes_value(&lower) else {
            if dashed {
                return Err(usage(format!("unknown option '{arg}'")));
            }
            files.push(arg);
            continue;
        };
        match (wants_value, value) {
            (false, None) => flags.push(format!("--{lower}")),
            (false, Some(_)) => return Err(usage(format!("option '/{lower}' takes no value"))),
            (true, Some(v)) => flags.push(checked(&lower, v)?),
            (true, None) if dashed => match args.next() {
                Some(v) => {
                    let v = v
                        .into_string()
                        .map_err(|v| usage(format!("value {v:?} is not valid Unicode")))?;
                    flags.push(checked(&lower, &v)?);
                }
                None => return Err(usage(format!("option '{arg}' needs a value"))),
            },
            (true, None) => {
                let what = match lower.as_str() {
                    "top" => "N",
                    "match" | "pdb" => "FILE",
                    _ => "LIST",
                };
                return Err(usage(format!(
                    "option '{arg}' needs a value: /{lower}:{what}"
                )));
            }
        }
    }

    let flags = Flags::try_parse_from(&flags).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or("invalid arguments");
        usage(first.trim_start_matches("error: ").to_owned())
    })?;
    if flags.help {
        return Ok(Command::Help);
    }
    if flags.version {
        return Ok(Command::Version);
    }
    if files.is_empty() {
        return Err(usage("no SPT file given"));
    }
    if flags.binary.iter().any(|b| b.trim().is_empty()) {
        return Err(usage(
            "/binary needs a comma-separated list of names or progid indices",
        ));
    }

    // /top on its own asks for the top entries: that is a summary.
    let summary = (flags.summary || flags.top.is_some()).then(|| flags.top.unwrap_or(10));
    let chosen = Sections {
        header: flags.header,
        strtab: flags.strtab,
        progid: flags.progid,
        event: flags.event,
    };
    let only_verdicts = summary.is_some() || !flags.matches.is_empty();
    let sections = if flags.all || (chosen == Sections::default() && !only_verdicts) {
        Sections::ALL
    } else {
        chosen
    };
    Ok(Command::Dump {
        options: Options {
            sections,
            summary,
            validate: flags.validate,
            binaries: (!flags.binary.is_empty())
                .then(|| flags.binary.iter().map(|b| b.trim().to_owned()).collect()),
            matches: Vec::new(),
            pdbs: Vec::new(),
        },
        json: flags.json,
        files,
        match_paths: flags.matches,
        pdb_paths: flags.pdb,
    })
}

/// Runs the command line `args` (without the program name), writing to the process's
/// standard output and error. Returns the exit status.
pub fn main(args: impl IntoIterator<Item = OsString>) -> u8 {
    let command = match parse(args) {
        Ok(command) => command,
        Err(e) => {
            eprintln!("sptdump: {e}");
            return EXIT_USAGE;
        }
    };
    let stdout = io::stdout().lock();
    let out = BufWriter::with_capacity(64 * 1024, stdout);
    let err = io::stderr().lock();
    match command {
        Command::Help => write_quietly(out, HELP),
        Command::Version => write_quietly(out, &format!("sptdump {}\n", env!("CARGO_PKG_VERSION"))),
        Command::Dump {
            mut options,
            json,
            files,
            match_paths,
            pdb_paths,
        } => {
            let files = expand_wildcards(files);
            let mut status = EXIT_OK;
            for path in pdb_paths {
                match read_pdb(&path) {
                    Ok(pdb) => options.pdbs.push(pdb),
                    Err(e) => {
                        eprintln!("sptdump: /pdb:{path}: {e}");
                        status = EXIT_ERRORS;
                    }
                }
            }
            options.matches = match_paths
                .into_iter()
                .map(|path| {
                    let identity = ident::read(Path::new(&path)).map_err(|e| e.to_string());
                    MatchFile { path, identity }
                })
                .collect();
            status.max(if json {
                run(&mut JsonPrinter::new(out, err), &options, &files)
            } else {
                let printer = TextPrinter::new(out, err);
                let mut printer = if options.validate {
                    printer.without_banner()
                } else {
                    printer
                };
                run(&mut printer, &options, &files)
            })
        }
    }
}

/// Expands `*` and `?` in the last component of file arguments. On Windows neither cmd.exe
/// nor PowerShell does it for a program, so `sptdump /validate *.spt` relies on it there, as
/// it does with Microsoft's tools; elsewhere the shell has done it already. A pattern that
/// matches no file is kept, to be reported as not found.
fn expand_wildcards(files: Vec<String>) -> Vec<String> {
    if !cfg!(windows) {
        return files;
    }
    let mut out = Vec::with_capacity(files.len());
    for arg in files {
        let split = arg.rfind(['/', '\\']).map_or(0, |i| i + 1);
        let (dir, pattern) = arg.split_at(split);
        if !pattern.contains(['*', '?']) {
            out.push(arg);
            continue;
        }
        let mut found: Vec<String> = std::fs::read_dir(if dir.is_empty() { "." } else { dir })
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|name| wildcard_match(pattern, name))
            .map(|name| format!("{dir}{name}"))
            .collect();
        if found.is_empty() {
            out.push(arg);
        } else {
            found.sort_by_key(|name| name.to_lowercase());
            out.extend(found);
        }
    }
    out
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters and `?` for
/// one, ignoring case as Windows file names do.
fn wildcard_match(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let n: Vec<char> = name.to_lowercase().chars().collect();
    // The classic two-pointer match, backtracking to the last `*`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// Reads a PDB's identity and functions for `/pdb`.
fn read_pdb(path: &str) -> Result<PdbFile, String> {
    let identity = ident::read(Path::new(path)).map_err(|e| e.to_string())?;
    if identity.kind != ident::Kind::Pdb {
        return Err(format!(
            "this is a {}, not a PDB: give the PDB the image was linked with",
            identity.kind
        ));
    }
    let symbols =
        Symbols::from_pdb(Path::new(path)).map_err(|e| format!("cannot read its symbols: {e}"))?;
    Ok(PdbFile {
        path: path.to_owned(),
        identity,
        symbols: Arc::new(symbols),
    })
}

fn write_quietly(mut out: impl Write, text: &str) -> u8 {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => EXIT_OK,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => EXIT_OK,
        Err(e) => {
            eprintln!("sptdump: cannot write the output: {e}");
            EXIT_ERRORS
        }
    }
}

/// Dumps every file into `printer` and returns the exit status: the worst over the files.
pub fn run<P: Printer>(printer: &mut P, options: &Options, files: &[String]) -> u8 {
    let mut status = EXIT_OK;
    for (i, path) in files.iter().enumerate() {
        let last = i + 1 == files.len();
        let result = dump_one(printer, options, path, last);
        let file_status = match result {
            // The reader has gone: stop quietly, keeping the errors found so far.
            Ok(outcome @ Outcome::OutputClosed(_)) => return status.max(outcome.status()),
            Ok(outcome) => outcome.status(),
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return status,
            Err(e) => {
                eprintln!("sptdump: cannot write the output: {e}");
                return status.max(EXIT_ERRORS);
            }
        };
        status = status.max(file_status);
    }
    match printer.flush() {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            eprintln!("sptdump: cannot write the output: {e}");
            status.max(EXIT_ERRORS)
        }
        _ => status,
    }
}

fn dump_one<P: Printer>(
    printer: &mut P,
    options: &Options,
    path: &str,
    last: bool,
) -> io::Result<Outcome> {
    let input = if path == "-" {
        Ok(Input::pipe(Box::new(io::stdin().lock())))
    } else {
        open(path)
    };
    let info = FileInfo {
        path,
        size: input.as_ref().ok().and_then(Input::size),
    };
    let outcome = match input {
        Ok(input) => dump::dump(printer, &info, input, options)?,
        Err(e) => {
            printer.error(&info, &format!("cannot open: {}", error::describe(&e)))?;
            if options.validate {
                // A pipeline counting verdicts must not miss a file it could not open.
                printer.begin_file(&info)?;
                printer.validation(
                    &info,
                    Tally {
                        errors: 1,
                        warnings: 0,
                    },
                )?;
            }
            Outcome::ReadFailed
        }
    };
    if !matches!(outcome, Outcome::OutputClosed(_)) {
        printer.end_file(last)?;
    }
    Ok(outcome)
}

fn open(path: &str) -> io::Result<Input> {
    // A wildcard left after expansion matched nothing: not found, as a Unix shell's would be
    // (Windows itself calls such a name invalid).
    if cfg!(windows)
        && path
            .rsplit(['/', '\\'])
            .next()
            .is_some_and(|n| n.contains(['*', '?']))
    {
        return Err(io::ErrorKind::NotFound.into());
    }
    Input::file(error::open_file(Path::new(path))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Command, UsageError> {
        parse(args.iter().map(OsString::from))
    }

    fn dump_of(args: &[&str]) -> (Options, bool, Vec<String>) {
        match parse_strs(args).unwrap() {
            Command::Dump {
                options,
                json,
                files,
                ..
            } => (options, json, files),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn default_is_all() {
        let (o, json, files) = dump_of(&["a.spt"]);
        assert_eq!(o, Options::default());
        assert!(!json);
        assert_eq!(files, ["a.spt"]);
    }

    #[test]
    fn every_spelling_and_case() {
        for spelling in ["/progid", "-progid", "--progid", "/PROGID", "--ProgId"] {
            let (o, _, _) = dump_of(&[spelling, "a.spt"]);
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
            let (o, _, files) = dump_of(args);
            assert_eq!(o.summary, Some(20), "{args:?}");
            assert_eq!(files, ["a"]);
        }
        let (o, _, _) = dump_of(&["/summary", "a"]);
        assert_eq!(o.summary, Some(10));
        assert_eq!(o.sections, Sections::default());
    }

    #[test]
    fn slash_paths_are_files() {
        let (_, _, files) = dump_of(&["/tmp/a.spt", "/header.spt", "/json/b.spt"]);
        assert_eq!(
            files,
            ["/tmp/a.spt", "/header.spt", "/json/b.spt"].map(String::from)
        );
    }

    #[test]
    fn double_dash_ends_options_and_dash_is_stdin() {
        let (o, json, files) = dump_of(&["/json", "-", "--", "/header", "-x"]);
        assert!(json);
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
    fn wildcards() {
        assert!(wildcard_match("*.spt", "Trace 1.SPT"));
        assert!(wildcard_match("t?ace*.spt", "trace-2026.spt"));
        assert!(wildcard_match("*", ""));
        assert!(wildcard_match("a*b*c", "aXXbYYbc"));
        assert!(!wildcard_match("*.spt", "trace.spd"));
        assert!(!wildcard_match("?.spt", ".spt"));
        assert!(!wildcard_match("a*b", "ab c"));
    }

    #[test]
    fn binary_lists_accumulate() {
        let (o, _, _) = dump_of(&["/binary:core.dll,0", "--binary", "app.exe", "a"]);
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
