//! The `spddump` command: SPDDump's views of an SPD (a Sample Profile Database), on any
//! platform. The command line (read as sptdump's is, `sptdump::cli::parse_spd`), files,
//! exit codes; what it prints is the library's work (`sptdump::views::spd`).

#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::io::{self, BufWriter, Cursor, Read, Seek, Write};
use std::path::Path;
use std::process::ExitCode;

use sptdump::cli::{SpdCommand, parse_spd, spd_completions, spd_help, spd_manual};
use sptdump::dump::{compare_spds, show_spd};
use sptdump::image::imports::ImageImports;
use sptdump::input::describe;
use sptdump::views::spd::SpdViews;

/// Exit status: every file shown.
const EXIT_OK: u8 = 0;
/// Exit status: a file that could not be read, is not an SPD, or whose table fails a check.
const EXIT_ERRORS: u8 = 1;
/// Exit status: the command line is wrong.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    // On Windows no shell expands `*.spd` for a program; wild does, as Microsoft's tools do.
    let command = match parse_spd(wild::args_os().skip(1)) {
        Ok(command) => command,
        Err(e) => {
            eprintln!("spddump: {e}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let mut out = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let ran = match command {
        SpdCommand::Help => out.write_all(spd_help().as_bytes()).map(|()| EXIT_OK),
        SpdCommand::Completions { shell } => out
            .write_all(&spd_completions(&shell).unwrap_or_default())
            .map(|()| EXIT_OK),
        SpdCommand::Manual => out.write_all(&spd_manual()).map(|()| EXIT_OK),
        SpdCommand::Version => {
            let version = format!("spddump {}\n", env!("CARGO_PKG_VERSION"));
            out.write_all(version.as_bytes()).map(|()| EXIT_OK)
        }
        SpdCommand::Show {
            views,
            json,
            files,
            images,
        } => {
            let (imports, read) = read_images(&images);
            let each = match views.of_each() {
                true => show_all(&mut out, &views, json, &imports, &files),
                false => Ok(EXIT_OK),
            };
            let two = match views.of_two() {
                true => each.and_then(|status| {
                    Ok(status.max(compare_two(&mut out, &views, json, &files)?))
                }),
                false => each,
            };
            two.map(|status| status.max(read))
        }
        _ => Ok(EXIT_USAGE),
    };
    finish(ran, out)
}

/// The `/image` files: their builds and the names they import; a file that is not an image
/// is said, and the exit status says so.
fn read_images(images: &[OsString]) -> (Vec<ImageImports>, u8) {
    let mut read = Vec::new();
    let mut status = EXIT_OK;
    for image in images {
        let path = Path::new(image);
        match ImageImports::read(path) {
            Ok(image) => read.push(image),
            Err(why) => {
                eprintln!("spddump: {}: {why}", path.display());
                status = EXIT_ERRORS;
            }
        }
    }
    (read, status)
}

/// A file to read an SPD of: on disk, or standard input read whole (an SPD is read out of
/// order).
enum Opened {
    File(std::fs::File),
    Memory(Cursor<Vec<u8>>),
}

/// Opens `path` (`-` is standard input), with its length.
fn open(path: &OsString) -> io::Result<(u64, Opened)> {
    if path == "-" {
        let mut bytes = Vec::new();
        io::stdin().lock().read_to_end(&mut bytes)?;
        return Ok((bytes.len() as u64, Opened::Memory(Cursor::new(bytes))));
    }
    let file = std::fs::File::open(path)?;
    Ok((file.metadata()?.len(), Opened::File(file)))
}

/// Shows each file; the exit status says whether any failed.
fn show_all(
    out: &mut impl Write,
    views: &SpdViews,
    json: bool,
    imports: &[ImageImports],
    files: &[OsString],
) -> io::Result<u8> {
    let mut status = EXIT_OK;
    for path in files {
        let shown = match path == "-" {
            true => "standard input".to_owned(),
            false => Path::new(path).display().to_string(),
        };
        let (len, mut opened) = match open(path) {
            Ok(opened) => opened,
            Err(e) => {
                out.flush()?;
                eprintln!("spddump: cannot read {shown}: {}", describe(&e));
                status = EXIT_ERRORS;
                continue;
            }
        };
        let file: &mut dyn ReadSeek = match &mut opened {
            Opened::File(f) => f,
            Opened::Memory(m) => m,
        };
        if let Err(failure) = show_spd(out, (&shown, file, len), views, json, imports)? {
            // What was shown of the file comes before the error that stopped it.
            out.flush()?;
            eprintln!("spddump: {shown}: {failure}");
            status = EXIT_ERRORS;
        }
    }
    Ok(status)
}

/// Shows the views of the two SPDs `files`, OLD and NEW (`/compare`); the exit status says
/// whether either could not be read.
fn compare_two(
    out: &mut impl Write,
    views: &SpdViews,
    json: bool,
    files: &[OsString],
) -> io::Result<u8> {
    let mut opened = Vec::with_capacity(2);
    for path in files {
        let shown = match path == "-" {
            true => "standard input".to_owned(),
            false => Path::new(path).display().to_string(),
        };
        match open(path) {
            Ok((len, file)) => opened.push((shown, len, file)),
            Err(e) => {
                out.flush()?;
                eprintln!("spddump: cannot read {shown}: {}", describe(&e));
                return Ok(EXIT_ERRORS);
            }
        }
    }
    let [(a, a_len, a_file), (b, b_len, b_file)] = &mut opened[..] else {
        return Ok(EXIT_USAGE);
    };
    let sides: [(&str, &mut dyn ReadSeek, u64); 2] = [
        (a.as_str(), a_file.as_read_seek(), *a_len),
        (b.as_str(), b_file.as_read_seek(), *b_len),
    ];
    if let Err((name, failure)) = compare_spds(out, sides, views, json)? {
        out.flush()?;
        eprintln!("spddump: {name}: {failure}");
        return Ok(EXIT_ERRORS);
    }
    Ok(EXIT_OK)
}

impl Opened {
    fn as_read_seek(&mut self) -> &mut dyn ReadSeek {
        match self {
            Opened::File(f) => f,
            Opened::Memory(m) => m,
        }
    }
}

/// A file read out of order.
trait ReadSeek: Read + Seek {}

impl<T: Read + Seek> ReadSeek for T {}

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
