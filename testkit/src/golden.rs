//! Golden files: an output pinned in the repository, compared line by line, and rewritten
//! on request after an intended change.
//!
//! ```text
//! SPTDUMP_BLESS=1 cargo test --test it golden::
//! ```
//!
//! rewrites the golden files of the `golden` test instead of comparing with them; review
//! the diff before committing it. The other tests that keep a file in step with its
//! generator (the bundled traces) follow the same switch, [`blessing`].

use std::fmt::Write as _;
use std::path::Path;

/// The environment variable that turns comparing into rewriting, when set to `1`.
pub const BLESS: &str = "SPTDUMP_BLESS";

/// Whether this run rewrites the golden files instead of comparing with them:
/// `SPTDUMP_BLESS=1`.
pub fn blessing() -> bool {
    std::env::var_os(BLESS).is_some_and(|v| v == "1")
}

/// Holds a generated file of the repository (a bundled trace or SPD) to what its generator
/// makes now: panics when they differ, naming `bless`, the command that rewrites it; when
/// [`blessing`], writes `built` there instead.
pub fn up_to_date(path: &Path, built: &[u8], bless: &str) {
    if blessing() {
        std::fs::write(path, built).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let on_disk = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert!(on_disk == built, "{} is stale: run {bless}", path.display());
}

/// Compares `actual` with the golden file at `path`, or, when [`blessing`], writes it there
/// (creating its folder). `what` names the output in the message (say, "the output of
/// `$ sptdump /header x.spt`"); `bless` is the command that regenerates the file, for the
/// message when it is missing. Line ends are compared as `\n`, however Git checked the file
/// out.
///
/// Returns what is wrong: the file cannot be read, or where the output first differs from
/// it (see [`describe_difference`]).
pub fn check(path: &Path, actual: &str, what: &str, bless: &str) -> Result<(), String> {
    if blessing() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        return std::fs::write(path, actual).map_err(|e| format!("{}: {e}", path.display()));
    }
    let expected = match std::fs::read_to_string(path) {
        // Git may have checked the file out with CRLF line ends.
        Ok(text) => text.replace("\r\n", "\n"),
        Err(e) => {
            return Err(format!(
                "{}: {e}\n  create it with: {bless}",
                path.display()
            ));
        }
    };
    if expected == actual {
        return Ok(());
    }
    Err(format!(
        "{}: {what} differs from the golden file\n  {}",
        path.display(),
        describe_difference(&expected, actual)
            .trim_end()
            .replace('\n', "\n  ")
    ))
}

/// Where `actual` first differs from `expected`, with both versions of the line and the
/// line before them.
pub fn describe_difference(expected: &str, actual: &str) -> String {
    let e: Vec<&str> = expected.lines().collect();
    let a: Vec<&str> = actual.lines().collect();
    let at = e
        .iter()
        .zip(&a)
        .position(|(x, y)| x != y)
        .unwrap_or(e.len().min(a.len()));
    let show = |lines: &[&str]| match lines.get(at) {
        Some(line) => format!("{line:?}"),
        None => "(end of output)".to_owned(),
    };
    let mut message = format!(
        "first difference at line {} ({} lines expected, {} found)\n",
        at + 1,
        e.len(),
        a.len()
    );
    if at > 0 {
        writeln!(message, "    after:    {:?}", e[at - 1]).unwrap();
    }
    writeln!(message, "    expected: {}", show(&e)).unwrap();
    writeln!(message, "    actual:   {}", show(&a)).unwrap();
    message
}
