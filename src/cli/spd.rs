//! spddump's command line: SPDDump's views of an SPD, in SPTDump's spellings, read by the
//! same reader as sptdump's (`cli/read.rs`): the same spellings, the same words for a
//! mistyped option (with the nearest one), `-` for standard input, `/help` made of the rows.

use std::ffi::OsString;

use super::grammar;
use super::options::{listing, shell};
use super::program::{Program, Setter};
use super::read::read;
use super::usage::{UsageError, usage};
use crate::views::spd::{self, SpdAsked, SpdRow, SpdViews};
use crate::views::{About, Apply, Group, Opt};

/// What spddump's command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpdCommand {
    /// Show the help.
    Help,
    /// Show the version.
    Version,
    /// Print the completions of the options for a shell: [`spd_completions`].
    Completions {
        /// The shell.
        shell: String,
    },
    /// Print the manual page: [`spd_manual`].
    Manual,
    /// Show the views of each file.
    Show {
        /// The views, in the order they are shown.
        views: SpdViews,
        /// JSON Lines instead of text.
        json: bool,
        /// The SPDs, `-` for standard input.
        files: Vec<OsString>,
        /// The images whose import tables name the callees that are imports (`/image`).
        images: Vec<OsString>,
    },
}

/// What spddump's options gather.
#[derive(Debug, Default)]
struct Given {
    all: bool,
    json: bool,
    help: bool,
    version: bool,
    images: Vec<OsString>,
    views: SpdAsked,
    completions: Option<String>,
    manual: bool,
}

/// spddump's own options the help lists before the views'.
const BEFORE: &[Opt<Given>] = &[Opt::flag(
    "all",
    "every view but /funcid (the default)",
    |g| g.all = true,
)];

/// spddump's own options the help lists after the views'.
const AFTER: &[Opt<Given>] = &[
    Opt::valued(
        "image",
        "FILES",
        "the images of the SPD's binary: /cg names the callees that are imports\n\
         by the names they import",
        |g: &mut Given, v| {
            g.images.push(v.to_owned());
            Ok(())
        },
    )
    .list()
    .output(),
    Opt::flag("json", "JSON Lines instead of text", |g: &mut Given| {
        g.json = true
    })
    .output(),
    Opt::valued(
        "completions",
        "SHELL",
        "print the completions of the options for SHELL: bash,\n\
         zsh, fish, powershell or elvish",
        |g: &mut Given, v| {
            g.completions = Some(shell(v)?);
            Ok(())
        },
    )
    .output(),
    Opt::flag(
        "manual",
        "print the manual page (roff: spddump /manual > spddump.1)",
        |g: &mut Given| g.manual = true,
    )
    .output(),
    Opt::flag("help", "this help", |g: &mut Given| g.help = true)
        .shown("/help, /?, /h")
        .output(),
    Opt::flag("version", "the version", |g: &mut Given| g.version = true)
        .shown("/version, /V")
        .output(),
];

/// One of spddump's option rows.
#[derive(Clone, Copy)]
enum Row {
    Own(&'static Opt<Given>),
    View(SpdRow),
}

impl Row {
    fn about(self) -> &'static About {
        match self {
            Row::Own(o) => &o.about,
            Row::View(o) => o.about(),
        }
    }
}

/// Every option, in the order the help lists them.
fn rows() -> Vec<Row> {
    let own = |list: &'static [Opt<Given>]| list.iter().map(Row::Own);
    own(BEFORE)
        .chain(spd::rows().into_iter().map(Row::View))
        .chain(own(AFTER))
        .collect()
}

/// spddump's options, as the reader reads them.
struct Spddump;

impl Program for Spddump {
    type Given = Given;
    type Row = Row;
    const NAME: &'static str = "spddump";
    const ABOUT: &'static str =
        "show what is inside SPD (Sample Profile Database) files of MSVC's Sample PGO";
    const LONG_ABOUT: &'static str = "\
spddump shows what is inside SPD (Sample Profile Database) files, the profiles MSVC's Sample \
Profile-Guided Optimization builds with: SPDDump's views (header, symbols, function \
profiles, call graph, flow graphs), coverage and dynamic instructions, and two SPDs of one \
binary compared. Fields marked * are inferred (our reading of the format, consistent in \
every known SPD); fields marked ? are unknown, shown raw.

Options are case-insensitive and may be written /name, -name or --name (as listed here); \
values follow a colon (/funcid:main), or for the dash forms '=' or a space. An argument \
that starts with '/' and names no option is a file; '--' ends the options; '-' reads \
standard input.

Exit status: 0 every file shown, 1 a file not read or not readable, 2 a wrong command line.";
    const FILE: &'static str = "spdfile";
    const FILES_HELP: &'static str = "the SPD files to read; - reads standard input";

    fn rows() -> Vec<Row> {
        rows()
    }

    fn about(row: Row) -> &'static About {
        row.about()
    }

    fn apply(given: &mut Given, row: Row, setter: Setter<'_>) -> Result<(), UsageError> {
        match row {
            Row::Own(opt) => setter.apply(given, opt),
            Row::View(row) => row.apply(&mut given.views, setter),
        }
    }
}

/// Parses spddump's arguments (without the program name). Every argument is checked before
/// any file is read.
pub fn parse_spd(args: impl IntoIterator<Item = OsString>) -> Result<SpdCommand, UsageError> {
    let (given, files) = read::<Spddump>(args)?;
    if given.help {
        return Ok(SpdCommand::Help);
    }
    if given.version {
        return Ok(SpdCommand::Version);
    }
    if let Some(shell) = given.completions {
        return Ok(SpdCommand::Completions { shell });
    }
    if given.manual {
        return Ok(SpdCommand::Manual);
    }
    if files.is_empty() {
        return Err(usage("no SPD file given").of("spddump"));
    }
    let mut views = given.views.views().map_err(|e| usage(e).of("spddump"))?;
    if views.of_two() && files.len() != 2 {
        let message = format!(
            "/compare takes exactly two SPDs, OLD and NEW ({} given)",
            files.len()
        );
        return Err(usage(message).of("spddump"));
    }
    // Every view of /all (each as its option alone asks for it) when /all, or when no view
    // is named.
    if given.all || views.is_empty() {
        for view in spd::SpdKind::ALL.iter().filter_map(|k| k.of_all()) {
            if !views.has(view.kind()) {
                views.add(view);
            }
        }
    }
    Ok(SpdCommand::Show {
        views,
        json: given.json,
        files,
        images: given.images,
    })
}

/// The completions of spddump's options for `shell` (`bash`, `zsh`, `fish`, `powershell`
/// or `elvish`; `None` for another), generated by clap from the option rows.
pub fn spd_completions(shell: &str) -> Option<Vec<u8>> {
    grammar::completions::<Spddump>(shell)
}

/// spddump's manual page, in roff, generated by clap from the option rows.
pub fn spd_manual() -> Vec<u8> {
    grammar::manual::<Spddump>()
}

/// What spddump is, the first line of its help.
const TITLE: &str =
    "spddump: show what is inside SPD (Sample Profile Database) files of MSVC's Sample PGO";

/// spddump's help, its option lists made from the rows.
pub fn spd_help() -> String {
    let rows: Vec<&About> = rows().into_iter().map(Row::about).collect();
    let mut help = format!("{TITLE}\n\nUsage: spddump [options] spdfile...\n");
    help.push_str(&listing(
        &rows,
        &[
            (
                Group::Sections,
                "Views (several combine; they print in SPDDump's order):",
            ),
            (Group::Output, "Output:"),
        ],
    ));
    help.push('\n');
    help.push_str(
        "\
Options are case-insensitive and may also be written -name or --name; values follow a
colon (/funcid:main), or for the dash forms '=' or a space (--funcid main). An argument
that starts with '/' and names no option is a file, so /tmp/app.spd works; a mistyped
option is an error, never a file. '--' ends the options; '-' reads standard input.
",
    );
    help.push_str(
        "\n\
Fields marked * are inferred (our reading of the format, consistent in every known SPD);
fields marked ? are unknown, shown raw.

Exit status: 0 every file shown, 1 a file not read or not readable, 2 a wrong command line.
",
    );
    help
}
