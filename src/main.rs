//! The `sptdump` command: the command line, files, exit codes. What it prints is the
//! library's work.

#![forbid(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use std::io::IsTerminal;
use std::time::Duration;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use sptdump::dump::{self, RunError, Status, Traces};
use sptdump::format::tables::base_name;
use sptdump::image::matching::MatchFile;
use sptdump::image::symbolpath::Progress as DownloadProgress;
use sptdump::input::{Input, OpenError, describe};
use sptdump::output::Format;
use sptdump::views::Plan;

use sptdump::cli::{self, Command, Progress, UsageError};

/// Exit status: no error found (warnings allowed).
const EXIT_OK: u8 = 0;
/// Exit status: an error diagnostic, a file that could not be read, or a `/match` or `/pdb`
/// file that does not fit the trace.
const EXIT_ERRORS: u8 = 1;
/// Exit status: the command line is wrong.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    // On Windows no shell expands `*.spt` for a program; wild does, as Microsoft's tools do.
    let command = match cli::parse(wild::args_os().skip(1)) {
        Ok(command) => command,
        Err(e) => return usage(e),
    };
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let ran = match command {
        Command::Help => write_text(&mut out, &cli::help()),
        Command::Usage => {
            eprint!("{}", cli::short_usage());
            return ExitCode::from(EXIT_USAGE);
        }
        Command::Version => write_text(
            &mut out,
            &format!("sptdump {}\n", env!("CARGO_PKG_VERSION")),
        ),
        Command::Completions { shell } => {
            let script = cli::completions(&shell).unwrap_or_default();
            out.write_all(&script).map(|()| Status::Clean)
        }
        Command::Manual => out.write_all(&cli::manual()).map(|()| Status::Clean),
        Command::Identities { format, paths } => {
            let files: Vec<MatchFile> = paths
                .iter()
                .map(|p| MatchFile::read(Path::new(p)))
                .collect();
            let mut plan = Plan::default();
            plan.format = format;
            let mut printer = plan.printer(&mut out, io::stderr().lock());
            dump::identities(&mut printer, &files)
        }
        Command::Run {
            plan,
            mut traces,
            sptlists,
            progress,
        } => {
            for list in &sptlists {
                match read_sptlist(Path::new(list)) {
                    Ok(listed) => traces.extend(listed),
                    Err(e) => return usage(UsageError::new(format!("{e:#}"))),
                }
            }
            if let Some(conflict) = plan.conflict(traces.len()) {
                return usage(UsageError::new(conflict));
            }
            run(&mut out, *plan, &traces, progress)
        }
    };
    finish(ran, out)
}

/// A wrong command line: one line on standard error, exit status 2.
fn usage(e: UsageError) -> ExitCode {
    eprintln!("sptdump: {e}");
    ExitCode::from(EXIT_USAGE)
}

/// The exit code of a run, once its output is flushed: a reader of the output that went
/// away ends the program quietly, with the status found so far; any other failure to write
/// is said on standard error.
fn finish(ran: io::Result<Status>, mut out: impl Write) -> ExitCode {
    let gone = |e: &io::Error| e.kind() == io::ErrorKind::BrokenPipe;
    let ran = ran.and_then(|status| match out.flush() {
        Err(e) if !gone(&e) => Err(e),
        _ => Ok(status),
    });
    ExitCode::from(match ran {
        Ok(Status::Clean) => EXIT_OK,
        Ok(Status::Usage) => EXIT_USAGE,
        Ok(_) => EXIT_ERRORS,
        Err(e) if gone(&e) => EXIT_OK,
        Err(e) => {
            eprintln!("sptdump: cannot write the output: {}", describe(&e));
            EXIT_ERRORS
        }
    })
}

fn write_text(out: &mut impl Write, text: &str) -> io::Result<Status> {
    out.write_all(text.as_bytes())?;
    Ok(Status::Clean)
}

/// Reads the files the plan names (`/pdb`, `/image`, `/match`), then runs it over the
/// traces.
fn run(
    out: &mut impl Write,
    mut plan: Plan,
    traces: &[OsString],
    progress: Progress,
) -> io::Result<Status> {
    if let Some(path) = &mut plan.symbol_path {
        // A symbol server's download over a second draws its bar where the run's would.
        let wanted = match progress {
            Progress::Never => false,
            Progress::Always => true,
            Progress::Auto => io::stderr().is_terminal(),
        };
        path.fetch.progress = wanted.then_some(download_bar as fn(DownloadProgress<'_>));
    }
    let unreadable = plan.load();
    for e in &unreadable {
        eprintln!("sptdump: {e}");
    }
    let bar = progress_bar(progress, &plan, traces);
    let paths: Vec<String> = traces
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let open = |i: usize| {
        let input = open(&traces[i])?;
        Ok(match &bar {
            // Standard input gets no bar: its size is not known.
            Some(bar) if traces[i] != "-" => {
                let bar = bar.clone();
                input.observed(move |n| bar.inc(n as u64))
            }
            _ => input,
        })
    };
    let mut printer = plan.printer(out, io::stderr().lock());
    let ran = dump::run(&mut printer, &plan, &Traces::new(&paths, &open));
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let ran = match ran {
        Ok(ran) => ran,
        Err(RunError::Write(e)) => return Err(e),
        // The command line checked the plan against the traces before anything was read.
        Err(RunError::Conflict(conflict)) => {
            eprintln!("sptdump: {}", UsageError::new(conflict));
            return Ok(Status::Usage);
        }
        Err(e) => return Err(io::Error::other(e)),
    };
    if ran.status() == Status::Usage
        && let Some(list) = &plan.binaries
    {
        eprintln!(
            "sptdump: /binary:{} names no binary of any trace given; see 'sptdump /help'",
            list.join(",")
        );
    }
    Ok(match unreadable.is_empty() {
        false => ran.status().max(Status::Errors),
        true => ran.status(),
    })
}

/// The progress bar of a run, when one is wanted: over the bytes of every file to read,
/// shown on standard error once the run is past a second.
fn progress_bar(progress: Progress, plan: &Plan, files: &[OsString]) -> Option<ProgressBar> {
    let wanted = match progress {
        Progress::Never => false,
        Progress::Always => true,
        Progress::Auto => plan.format == Format::Text && io::stderr().is_terminal(),
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

/// The progress bar of a symbol server's download that takes over a second, on standard
/// error.
fn download_bar(progress: DownloadProgress<'_>) {
    static BAR: std::sync::Mutex<Option<ProgressBar>> = std::sync::Mutex::new(None);
    let mut bar = BAR.lock().unwrap_or_else(|e| e.into_inner());
    match progress {
        DownloadProgress::Begun { url, total } => {
            let shown = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
            let template = if total.is_some() {
                "{msg} {bytes}/{total_bytes} ({binary_bytes_per_sec}) {wide_bar}"
            } else {
                "{msg} {bytes} ({binary_bytes_per_sec})"
            };
            shown.set_style(ProgressStyle::with_template(template).expect("a valid template"));
            shown.set_message(url.to_owned());
            *bar = Some(shown);
        }
        DownloadProgress::At(n) => {
            if let Some(b) = &*bar {
                b.set_position(n);
            }
        }
        DownloadProgress::Ended => {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
        }
    }
}

/// The traces a `/sptlist` file names, one path per line; blank lines are skipped.
fn read_sptlist(path: &Path) -> Result<Vec<OsString>> {
    let bytes = std::fs::read(path).map_err(|e| {
        anyhow::anyhow!("/sptlist:{}: cannot read: {}", path.display(), describe(&e))
    })?;
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
fn open(path: &OsStr) -> Result<Input, OpenError> {
    if path == "-" {
        return Ok(Input::stdin());
    }
    // A wildcard left after expansion matched nothing: not found, as a Unix shell's would be
    // (Windows itself calls such a name invalid).
    if cfg!(windows) && base_name(&path.to_string_lossy()).contains(['*', '?']) {
        return Err(OpenError(io::Error::from(io::ErrorKind::NotFound)));
    }
    Input::open(Path::new(path))
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
        let mut json = Plan::default();
        json.format = Format::Json;
        assert!(progress_bar(Progress::Never, &Plan::default(), &sample).is_none());
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
