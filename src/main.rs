//! The `sptdump` command: the command line, files, exit codes. What it prints is the
//! library's work.

#![forbid(unsafe_code)]

mod cli;

use std::ffi::{OsStr, OsString};
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sptdump::dump::{self, Options, RunStatus, Status};
use sptdump::format::tables::base_name;
use sptdump::image::matching::{MatchFile, PdbFile};
use sptdump::input::{Input, OpenError};
use sptdump::output::{FileInfo, Format, Printer};

use crate::cli::{Command, Progress};

/// Exit status: no error found (warnings allowed).
const EXIT_OK: u8 = 0;
/// Exit status: an error diagnostic, a file that could not be read, or a `/match` or `/pdb`
/// file that does not fit the trace.
const EXIT_ERRORS: u8 = 1;
/// Exit status: the command line is wrong.
const EXIT_USAGE: u8 = 2;

fn exit_code(status: Status) -> u8 {
    match status {
        Status::Clean => EXIT_OK,
        Status::Errors => EXIT_ERRORS,
        Status::Usage => EXIT_USAGE,
    }
}

fn main() -> ExitCode {
    // On Windows no shell expands `*.spt` for a program; wild does, as Microsoft's tools do.
    let command = match cli::parse(wild::args_os().skip(1)) {
        Ok(command) => command,
        Err(e) => {
            eprintln!("sptdump: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let status = match command {
        Command::Help => write_text(out, &cli::help()),
        Command::Version => write_text(out, &format!("sptdump {}\n", env!("CARGO_PKG_VERSION"))),
        Command::Identities { format, paths } => {
            let files: Vec<MatchFile> = paths
                .iter()
                .map(|p| MatchFile::read(Path::new(p)))
                .collect();
            let options = Options {
                format,
                ..Options::default()
            };
            let mut printer = dump::printer(&options, out, io::stderr().lock());
            dump::identities(&mut printer, &files).context("cannot write the output")
        }
        Command::Dump {
            options,
            mut files,
            sptlists,
            progress,
            match_paths,
            pdb_paths,
        } => {
            for list in &sptlists {
                match read_sptlist(Path::new(list)) {
                    Ok(listed) => files.extend(listed),
                    Err(e) => {
                        eprintln!("sptdump: {e:#}; see 'sptdump /help'");
                        return ExitCode::from(EXIT_USAGE);
                    }
                }
            }
            let bar = progress_bar(progress, &options, &files);
            let status = run(
                out,
                *options,
                &files,
                &match_paths,
                &pdb_paths,
                bar.as_ref(),
            );
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            status
        }
    };
    ExitCode::from(match status {
        Ok(status) => exit_code(status),
        Err(e) if is_broken_pipe(&e) => EXIT_OK,
        Err(e) => {
            eprintln!("sptdump: {e:#}");
            EXIT_ERRORS
        }
    })
}

/// Whether the reader of standard output has gone, which ends the program quietly.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.downcast_ref::<io::Error>()
        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
}

fn write_text(mut out: impl Write, text: &str) -> Result<Status> {
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .context("cannot write the output")?;
    Ok(Status::Clean)
}

/// Reads the `/pdb` and `/match` files, then dumps every trace; returns the status of the
/// run.
fn run(
    out: impl Write,
    mut options: Options,
    files: &[OsString],
    match_paths: &[OsString],
    pdb_paths: &[OsString],
    bar: Option<&ProgressBar>,
) -> Result<Status> {
    let mut status = RunStatus::default();
    for path in pdb_paths {
        let path = Path::new(path);
        match PdbFile::read(path).with_context(|| format!("/pdb:{}", path.display())) {
            Ok(pdb) => options.pdbs.push(pdb),
            Err(e) => {
                eprintln!("sptdump: {e:#}");
                status.add_status(Status::Errors);
            }
        }
    }
    options.matches = match_paths
        .iter()
        .map(|p| MatchFile::read(Path::new(p)))
        .collect();

    let mut printer = dump::printer(&options, out, io::stderr().lock());
    if options.compare {
        return compare(&mut printer, &options, files, status);
    }
    let paths: Vec<String> = files
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let open = |i: usize| {
        let input = open(&files[i]).map_err(|e| format!("{e:#}"))?;
        Ok(match bar {
            // Standard input gets no bar: its size is not known.
            Some(bar) if files[i] != "-" => {
                let bar = bar.clone();
                input.observed(move |n| bar.inc(n as u64))
            }
            _ => input,
        })
    };
    let dumped = if options.merge {
        dump::merge(&mut printer, &paths, &open, &options)
    } else {
        dump::run(&mut printer, &paths, &open, &options)
    };
    match dumped {
        Ok(s) => status.add_status(s),
        // The reader has gone: stop quietly, keeping the errors found so far.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(status.status()),
        Err(e) => return Err(e).context("cannot write the output"),
    }
    match printer.flush() {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            return Err(e).context("cannot write the output");
        }
        _ => {}
    }
    if status.status() == Status::Usage
        && let Some(list) = &options.binaries
    {
        eprintln!(
            "sptdump: /binary:{} names no binary of any trace given; see 'sptdump /help'",
            list.join(",")
        );
    }
    Ok(status.status())
}

/// The progress bar of a run, when one is wanted: over the bytes of every file to read,
/// shown on standard error once the run is past a second.
fn progress_bar(progress: Progress, options: &Options, files: &[OsString]) -> Option<ProgressBar> {
    let wanted = match progress {
        Progress::Never => false,
        Progress::Always => true,
        Progress::Auto => options.format == Format::Text && io::stderr().is_terminal(),
    };
    let total: u64 = files
        .iter()
        .filter(|f| *f != "-")
        .filter_map(|f| std::fs::metadata(f).ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    if !wanted || total == 0 {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    let style = ProgressStyle::with_template(
        "{bytes}/{total_bytes} ({binary_bytes_per_sec}, {eta} left) {wide_bar}",
    )
    .expect("a valid template");
    bar.set_style(style);
    // A short run shows no bar at all.
    let shown = bar.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        if !shown.is_finished() {
            shown.set_draw_target(ProgressDrawTarget::stderr());
        }
    });
    Some(bar)
}

/// `/compare BASE NEW`.
fn compare<P: Printer>(
    printer: &mut P,
    options: &Options,
    files: &[OsString],
    mut status: RunStatus,
) -> Result<Status> {
    let [base, new] = files else {
        unreachable!("the command line checks there are two")
    };
    let (base_shown, new_shown) = (base.to_string_lossy(), new.to_string_lossy());
    let (base_input, new_input) = (
        open(base).map_err(|e| format!("{e:#}")),
        open(new).map_err(|e| format!("{e:#}")),
    );
    let base_info = FileInfo {
        path: &base_shown,
        size: base_input.as_ref().ok().and_then(Input::size),
    };
    let new_info = FileInfo {
        path: &new_shown,
        size: new_input.as_ref().ok().and_then(Input::size),
    };
    match dump::compare(
        printer,
        (&base_info, base_input),
        (&new_info, new_input),
        options,
    ) {
        Ok(s) => status.add_status(s),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(status.status()),
        Err(e) => return Err(e).context("cannot write the output"),
    }
    match printer.flush() {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(e).context("cannot write the output")
        }
        _ => Ok(status.status()),
    }
}

/// The traces a `/sptlist` file names, one path per line; blank lines are skipped.
fn read_sptlist(path: &Path) -> Result<Vec<OsString>> {
    let bytes = std::fs::read(path)
        .map_err(OpenError)
        .with_context(|| format!("/sptlist:{}: cannot read", path.display()))?;
    Ok(bytes
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line).trim_ascii())
        .filter(|line| !line.is_empty())
        .map(os_string)
        .collect())
}

/// A path from the bytes of a list file: any bytes on Unix, UTF-8 elsewhere.
fn os_string(bytes: &[u8]) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        OsStr::from_bytes(bytes).to_owned()
    }
    #[cfg(not(unix))]
    {
        OsString::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// Opens a trace argument: `-` is standard input.
fn open(path: &OsStr) -> Result<Input> {
    if path == "-" {
        return Ok(Input::stdin());
    }
    // A wildcard left after expansion matched nothing: not found, as a Unix shell's would be
    // (Windows itself calls such a name invalid).
    if cfg!(windows) && base_name(&path.to_string_lossy()).contains(['*', '?']) {
        let not_found = OpenError(io::Error::from(io::ErrorKind::NotFound));
        return Err(not_found).context("cannot open");
    }
    Input::open(Path::new(path)).context("cannot open")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_progress_bar_only_where_asked_and_never_for_nothing_to_read() {
        let sample = [OsString::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/sample.spt"
        ))];
        let json = Options {
            format: Format::Json,
            ..Options::default()
        };
        assert!(progress_bar(Progress::Never, &Options::default(), &sample).is_none());
        assert!(
            progress_bar(Progress::Auto, &json, &sample).is_none(),
            "not with /json"
        );
        let bar = progress_bar(Progress::Always, &json, &sample).expect("asked for");
        assert_eq!(bar.length(), Some(25_546), "the bytes of every file");
        bar.finish_and_clear();
        let stdin = [OsString::from("-")];
        assert!(
            progress_bar(Progress::Always, &json, &stdin).is_none(),
            "standard input has no size"
        );
    }
}
