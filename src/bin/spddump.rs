//! The `spddump` command: SPDDump's views of an SPD (a Sample Profile Database), on any
//! platform. The command line, files, exit codes; what it prints is the library's work
//! (`sptdump::output::spd`).
//!
//! Options are case-insensitive and may be written `/name`, `-name` or `--name`, as
//! sptdump's; a value follows `:` (or `=`, or for `--funcid` the next argument). An argument
//! that starts with `/` is an option only when its name is one of ours, so `/tmp/a.spd` is a
//! file. `--` ends the options.

#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use sptdump::input::describe;
use sptdump::output::spd::{self, DEFAULT_DYNINST, SpdViews};

/// Exit status: every file shown.
const EXIT_OK: u8 = 0;
/// Exit status: a file that could not be read, is not an SPD, or whose table fails a check.
const EXIT_ERRORS: u8 = 1;
/// Exit status: the command line is wrong.
const EXIT_USAGE: u8 = 2;

const HELP: &str = "\
spddump: shows what is inside an SPD (a Sample Profile Database of MSVC's SPGO), as
SPDDump does, on any platform.

usage: spddump [options] FILE.spd...

  /all           every view but /funcid (the default)
  /header        the identity (binary, GUID, age), the version, the raw totals
  /module        the module block's header
  /symbol        the symbol table: hash, id, RVA, size, flags of each function
  /func          the function profiles: entry count, blocks, edges, instructions,
                 estimated dynamic instructions, covered blocks
  /funcid:FID    the functions of an id (decimal; inferred to be SPDDump's fid), a hash
                 (16 hex digits) or a name, in detail with their callees and blocks
  /cg            the call graph: each function's callees, call counts, calling blocks
  /fg            the flow graphs: blocks with count, instructions, ranges, successors
  /coverage      blocks with a count, per function and overall (our estimate)
  /dyninst[:N]   the top N (50) functions by estimated dynamic instructions (our
                 estimate: the sum of block count x instructions)
  /image:FILES   the images of the SPD's binary (comma-separated, or repeated): /cg
                 names the callees that are imports by the names they import
  /json          JSON Lines instead of text
  /help, /?      this help

Options may also be written -name or --name. Fields marked * are inferred (our reading
of the format, consistent in every known SPD); fields marked ? are unknown, shown raw.
Exit status: 0 every file shown, 1 a file not read or not readable, 2 a wrong command line.
";

/// What the command line asks for.
#[derive(Debug)]
enum Command {
    Help,
    Show {
        views: SpdViews,
        files: Vec<OsString>,
        /// `/image`: the images whose imports name callees.
        images: Vec<String>,
    },
}

/// A wrong command line.
#[derive(Debug)]
struct Usage(String);

fn main() -> ExitCode {
    let command = match parse(wild::args_os().skip(1)) {
        Ok(command) => command,
        Err(Usage(why)) => {
            eprintln!("spddump: {why}; see 'spddump /help'");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let ran = match command {
        Command::Help => out.write_all(HELP.as_bytes()).map(|()| EXIT_OK),
        Command::Show {
            mut views,
            files,
            images,
        } => {
            let read = read_images(&mut views, &images);
            show_all(&mut out, &views, &files).map(|status| status.max(read))
        }
    };
    finish(ran, out)
}

/// Reads the names the `/image` files import into `views`; a file that is not an image is
/// said, and the exit status says so.
fn read_images(views: &mut SpdViews, images: &[String]) -> u8 {
    let mut status = EXIT_OK;
    for image in images {
        if let Err(why) = views.imports.read(Path::new(image)) {
            eprintln!("spddump: {image}: {why}");
            status = EXIT_ERRORS;
        }
    }
    status
}

/// Shows each file; the exit status says whether any failed.
fn show_all(out: &mut impl Write, views: &SpdViews, files: &[OsString]) -> io::Result<u8> {
    let mut status = EXIT_OK;
    for path in files {
        let shown = Path::new(path).display().to_string();
        let opened = std::fs::File::open(path).and_then(|f| Ok((f.metadata()?.len(), f)));
        let (len, mut file) = match opened {
            Ok(opened) => opened,
            Err(e) => {
                out.flush()?;
                eprintln!("spddump: cannot read {shown}: {}", describe(&e));
                status = EXIT_ERRORS;
                continue;
            }
        };
        if let Err(failure) = spd::show(out, &shown, &mut file, len, views)? {
            // What was shown of the file comes before the error that stopped it.
            out.flush()?;
            eprintln!("spddump: {shown}: {failure}");
            status = EXIT_ERRORS;
        }
    }
    Ok(status)
}

/// The exit code, once the output is flushed: a reader that went away ends the program
/// quietly; any other failure to write is said.
fn finish(ran: io::Result<u8>, mut out: impl Write) -> ExitCode {
    let gone = |e: &io::Error| e.kind() == io::ErrorKind::BrokenPipe;
    let ran = ran.and_then(|status| match out.flush() {
        Err(e) if !gone(&e) => Err(e),
        _ => Ok(status),
    });
    ExitCode::from(match ran {
        Ok(status) => status,
        Err(e) if gone(&e) => EXIT_OK,
        Err(e) => {
            eprintln!("spddump: cannot write the output: {}", describe(&e));
            EXIT_ERRORS
        }
    })
}

/// An option as written: its name (lower case) and its value.
struct Spelled {
    name: String,
    value: Option<String>,
    dashed: bool,
}

/// Splits `/name:value`, `-name=value`, `--name`; `None` when `arg` does not start like an
/// option or its name is not text.
fn spelled(arg: &OsString) -> Option<Spelled> {
    let text = arg.to_str()?;
    let (dashed, body) = if let Some(b) = text.strip_prefix("--") {
        (true, b)
    } else if let Some(b) = text.strip_prefix('-') {
        (true, b)
    } else {
        (false, text.strip_prefix('/')?)
    };
    let (name, value) = match body.find([':', '=']) {
        Some(at) => (&body[..at], Some(body[at + 1..].to_owned())),
        None => (body, None),
    };
    Some(Spelled {
        name: name.to_ascii_lowercase(),
        value,
        dashed,
    })
}

/// The options' names.
const OPTIONS: &[&str] = &[
    "all", "header", "module", "symbol", "func", "funcid", "cg", "fg", "coverage", "dyninst",
    "image", "json", "help", "?", "h",
];

/// Whether an option's name is a word (letters, digits, `-`, `?`): `/word` that names no
/// option and no file is a mistyped option; anything else (`/tmp/a.spd`) is a file.
fn plain(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '?')
}

/// Parses the arguments (without the program name). Every argument is checked before any
/// file is read.
fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, Usage> {
    let mut views = SpdViews::default();
    let mut all = false;
    let mut files = Vec::new();
    let mut images = Vec::new();
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
        let Some(option) = spelled(&arg) else {
            files.push(arg);
            continue;
        };
        if !OPTIONS.contains(&option.name.as_str()) {
            if option.dashed || (plain(&option.name) && !Path::new(&arg).exists()) {
                let shown = arg.to_string_lossy();
                let shown = shown.split([':', '=']).next().unwrap_or_default();
                return Err(Usage(format!("unknown option '{shown}'")));
            }
            files.push(arg);
            continue;
        }
        if option.name == "image" {
            let value = option.value.filter(|v| !v.is_empty());
            let value = value.ok_or_else(|| Usage("/image needs a file (/image:FILE)".into()))?;
            images.extend(
                value
                    .split(',')
                    .filter(|f| !f.is_empty())
                    .map(str::to_owned),
            );
            continue;
        }
        if apply(&mut views, &mut all, option, &mut args)? {
            return Ok(Command::Help);
        }
    }
    if files.is_empty() {
        return Err(Usage("no SPD file given".into()));
    }
    if all || !views.any() {
        views = SpdViews {
            json: views.json,
            funcid: views.funcid.take(),
            ..SpdViews::all()
        };
    }
    Ok(Command::Show {
        views,
        files,
        images,
    })
}

/// Applies one option; true when it asks for the help.
fn apply(
    views: &mut SpdViews,
    all: &mut bool,
    option: Spelled,
    rest: &mut impl Iterator<Item = OsString>,
) -> Result<bool, Usage> {
    let name = option.name.as_str();
    match name {
        "funcid" => {
            let value = match (option.value, option.dashed) {
                (Some(v), _) => Some(v),
                (None, true) => rest.next().map(|v| v.to_string_lossy().into_owned()),
                (None, false) => None,
            };
            match value.filter(|v| !v.is_empty()) {
                Some(v) => views.funcid = Some(v),
                None => {
                    return Err(Usage(
                        "/funcid needs an id, a hash or a name (/funcid:FID)".into(),
                    ));
                }
            }
            return Ok(false);
        }
        "dyninst" => {
            let n = match option.value.as_deref() {
                None => DEFAULT_DYNINST,
                Some(v) => v.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    Usage(format!("/dyninst:N needs a number of functions, not '{v}'"))
                })?,
            };
            views.dyninst = Some(n);
            return Ok(false);
        }
        _ => {}
    }
    if option.value.is_some() {
        return Err(Usage(format!("/{name} takes no value")));
    }
    match name {
        "help" | "?" | "h" => return Ok(true),
        "all" => *all = true,
        "header" => views.header = true,
        "module" => views.module = true,
        "symbol" => views.symbol = true,
        "func" => views.func = true,
        "cg" => views.cg = true,
        "fg" => views.fg = true,
        "coverage" => views.coverage = true,
        _ => views.json = true,
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(words: &[&str]) -> Result<Command, Usage> {
        parse(words.iter().map(OsString::from))
    }

    fn views(words: &[&str]) -> SpdViews {
        match parse_words(words) {
            Ok(Command::Show { views, .. }) => views,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_spelling_of_an_option() {
        for spelled in ["/func", "-func", "--func", "/FUNC", "--Func"] {
            let v = views(&[spelled, "a.spd"]);
            assert!(v.func && !v.fg, "{spelled}");
        }
        assert_eq!(
            views(&["/funcid:main", "a.spd"]).funcid.as_deref(),
            Some("main")
        );
        assert_eq!(
            views(&["--funcid", "main", "a.spd"]).funcid.as_deref(),
            Some("main")
        );
        assert_eq!(views(&["--funcid=7", "a.spd"]).funcid.as_deref(), Some("7"));
        assert_eq!(views(&["/dyninst", "a.spd"]).dyninst, Some(50));
        assert_eq!(views(&["/dyninst:5", "a.spd"]).dyninst, Some(5));
    }

    #[test]
    fn nothing_asked_is_all_and_funcid_alone_is_itself() {
        assert_eq!(views(&["a.spd"]), SpdViews::all());
        let json = views(&["/json", "a.spd"]);
        assert!(json.json && json.fg && json.header);
        let one = views(&["/funcid:main", "a.spd"]);
        assert!(!one.fg && !one.header);
        let all = views(&["/all", "/funcid:main", "a.spd"]);
        assert!(all.fg && all.funcid.is_some());
    }

    #[test]
    fn wrong_command_lines_are_usage_errors() {
        for words in [
            &["/func"][..],
            &["/nosuch", "a.spd"],
            &["--nosuch", "a.spd"],
            &["/dyninst:x", "a.spd"],
            &["/dyninst:0", "a.spd"],
            &["/funcid", "a.spd"],
            &["/header:1", "a.spd"],
        ] {
            assert!(parse_words(words).is_err(), "{words:?}");
        }
        assert!(matches!(parse_words(&["/?"]), Ok(Command::Help)));
    }

    #[test]
    fn paths_are_files() {
        let Command::Show { files, .. } = parse_words(&["/tmp/x.spd", "--", "/func", "-"]).unwrap()
        else {
            panic!()
        };
        assert_eq!(files, ["/tmp/x.spd", "/func", "-"]);
    }
}
