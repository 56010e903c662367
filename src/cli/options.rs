//! Every option, written down once: its name, its value, its help, and what it does to the
//! command line being read ([`Given`]), its value parsed there, once. The views' own rows
//! are their modules' ([`views::rows`]); the run's are here. The parser and `/help` are both
//! made from [`rows`].

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;

use crate::format::stackorder::StackOrder;
use crate::format::tables::StringIndex;
use crate::views::{self, About, DEFAULT_TOP, Group, Opt, Sections, text};

/// When to show a progress bar (`/progress`, `/quiet`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Progress {
    /// On a terminal, for a run past a second, not with `/json`.
    #[default]
    Auto,
    /// Whenever a file is read, for a run past a second.
    Always,
    /// Never.
    Never,
}

impl Progress {
    /// `auto`, `always` or `never`, as `/progress` spells it.
    fn as_str(self) -> &'static str {
        match self {
            Progress::Auto => "auto",
            Progress::Always => "always",
            Progress::Never => "never",
        }
    }
}

impl std::fmt::Display for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the options given say, each value parsed: the command line before it becomes a
/// plan ([`super::parse`] turns it into one, with the rules of how options combine).
#[derive(Debug, Default)]
pub(super) struct Given {
    /// The options given, by name, in order.
    pub named: Vec<&'static str>,
    pub help: bool,
    pub version: bool,
    pub all: bool,
    pub sections: Sections,
    /// What the views' rows gathered.
    pub views: views::Asked,
    pub merge: bool,
    pub sptlists: Vec<OsString>,
    pub stack_order: Option<StackOrder>,
    pub top: Option<usize>,
    pub binaries: Vec<String>,
    pub strindex: Option<StringIndex>,
    pub matches: Vec<OsString>,
    /// `/match` without files: check what `/symbols` finds.
    pub match_symbols: bool,
    pub pdbs: Vec<OsString>,
    pub images: Vec<OsString>,
    /// `/symbols` (`None` inside: read `_NT_SYMBOL_PATH`).
    pub symbols: Option<Option<OsString>>,
    pub noinline: bool,
    pub validate: bool,
    pub check: bool,
    pub compare: bool,
    pub min_overlap: Option<f64>,
    pub spt: Option<OsString>,
    pub strict: bool,
    pub progress: Option<Progress>,
    pub quiet: bool,
    pub json: bool,
    /// `/completions:SHELL`.
    pub completions: Option<String>,
    pub manual: bool,
}

/// An option of the run's own (not a view's).
type Own = Opt<Given>;

const fn flag(name: &'static str, group: Group, help: &'static str, set: fn(&mut Given)) -> Own {
    let o = Opt::flag(name, help, set);
    match group {
        Group::Sections => o,
        Group::Output => o.output(),
    }
}

const fn valued(
    name: &'static str,
    value: &'static str,
    help: &'static str,
    set: fn(&mut Given, &OsStr) -> Result<(), String>,
) -> Own {
    Opt::valued(name, value, help, set)
}

/// The run's options the help lists before the views'.
const BEFORE: &[Own] = &[
    flag(
        "all",
        Group::Sections,
        "everything below except /summary (the default)",
        |g| g.all = true,
    ),
    flag("header", Group::Sections, "the header fields", |g| {
        g.sections.header = true;
    }),
    flag("strtab", Group::Sections, "the string table", |g| {
        g.sections.strtab = true;
    }),
    flag(
        "progid",
        Group::Sections,
        "the program IDs: index, GUID, age, symbol-server key, name",
        |g| g.sections.progid = true,
    ),
    flag(
        "event",
        Group::Sections,
        "every record of the event stream",
        |g| g.sections.event = true,
    ),
];

/// The run's options the help lists after the views'.
const AFTER: &[Own] = &[
    flag(
        "merge",
        Group::Sections,
        "/summary, /functions, /folded and the exports treat all the traces as one\n\
         profile, binaries merged by GUID and age, as SPDConvert merges them",
        |g| g.merge = true,
    ),
    valued(
        "sptlist",
        "FILE",
        "add the traces listed in FILE, one path per line",
        |g, v| {
            g.sptlists.push(v.to_owned());
            Ok(())
        },
    )
    .list(),
    valued(
        "stackorder",
        "ORDER",
        "how call stacks are stored: leaf-first (ETW's) or root-first",
        |g, v| {
            let order = text(v)
                .parse()
                .map_err(|_| "expected leaf-first or root-first")?;
            g.stack_order = Some(order);
            Ok(())
        },
    )
    .default(|| StackOrder::default().to_string()),
    valued(
        "top",
        "N",
        "how many entries each table of /summary, /functions, /lines or /compare\n\
         shows; 0 or all: every entry; alone it implies /summary",
        |g, v| {
            let v = text(v);
            let n = if v.eq_ignore_ascii_case("all") {
                0
            } else {
                v.parse()
                    .map_err(|_| "expected a whole number, 0 or more, or all")?
            };
            // 0 is every entry: no table is cut.
            g.top = Some(if n == 0 { usize::MAX } else { n });
            Ok(())
        },
    )
    .default(|| DEFAULT_TOP.to_string()),
    valued(
        "binary",
        "LIST",
        "only segments of these binaries: names or progid indices, comma-separated",
        |g, v| {
            g.binaries.push(text(v));
            Ok(())
        },
    )
    .list(),
    valued(
        "strindex",
        "MODE",
        "read program-ID string indices as auto, offset or ordinal",
        |g, v| {
            let mode = text(v)
                .parse()
                .map_err(|_| "expected auto, offset or ordinal")?;
            g.strindex = Some(mode);
            Ok(())
        },
    )
    .default(|| StringIndex::default().to_string()),
    valued(
        "match",
        "FILES",
        "check images (.exe, .dll), PDBs or SPDs against the program IDs: match,\n\
         age-mismatch, guid-mismatch or absent; exit 1 unless all match. /match\n\
         alone, with /symbols: whether the symbol path holds each binary's PDB",
        |g, v| {
            g.matches.push(v.to_owned());
            Ok(())
        },
    )
    .list()
    .or_alone(),
    valued(
        "pdb",
        "FILES",
        "name RVAs by function (function+0xOFFSET) with these PDBs; each must\n\
         match a program ID's GUID and age",
        |g, v| {
            g.pdbs.push(v.to_owned());
            Ok(())
        },
    )
    .list(),
    Opt::optional(
        "symbols",
        "/symbols[:PATH]",
        "look up the PDBs and images no /pdb or /image names along a symbol\n\
         path (_NT_SYMBOL_PATH's syntax; without PATH, that variable): local\n\
         directories and stores, and http(s) symbol servers (srv*CACHE*URL);\n\
         SPTDUMP_SYMBOL_TIMEOUT=SECONDS or CONNECT,READ changes their time-outs\n\
         (10 s to connect, 60 s for a read)",
        |g, path| {
            g.symbols = Some(path.map(OsStr::to_owned));
            Ok(())
        },
    ),
    valued(
        "image",
        "FILES",
        "read the code of these images (.exe, .dll) for the LBR views; each must\n\
         match a program ID's GUID and age",
        |g, v| {
            g.images.push(v.to_owned());
            Ok(())
        },
    )
    .list(),
    flag(
        "noinline",
        Group::Output,
        "with /pdb, no inline frames: code the compiler inlined counts for the\n\
         function it was inlined into",
        |g| g.noinline = true,
    ),
    flag(
        "validate",
        Group::Output,
        "decode everything; print the diagnostics and a verdict per file (with\n\
         other options, after what they print)",
        |g| g.validate = true,
    ),
    flag(
        "check",
        Group::Output,
        "is the trace fit for SPDConvert? samples, LBR, the /match binaries,\n\
         density with /pdb: verdicts and the /mode to use; exit 1 on errors",
        |g| g.check = true,
    ),
    flag(
        "compare",
        Group::Output,
        "sptdump /compare BASE NEW: per binary and event, how far NEW's samples\n\
         overlap BASE's, and what NEW samples that BASE does not; with an SPD as\n\
         NEW, the trace beside it by function and block by block (/blocks:NAME)",
        |g| g.compare = true,
    ),
    valued(
        "min-overlap",
        "F",
        "with /compare: exit 1 when a binary's overlap is below F (0 to 1)",
        |g, v| match text(v).parse::<f64>() {
            Ok(f) if (0.0..=1.0).contains(&f) => {
                g.min_overlap = Some(f);
                Ok(())
            }
            _ => Err("expected a number from 0 to 1".to_owned()),
        },
    )
    .output(),
    valued(
        "spt",
        "FILE",
        "with an ETL: write sptdump's aggregation of its samples as an SPT\n\
         (what SPTAggregate would make of it, by our reading)",
        |g, v| {
            g.spt = Some(v.to_owned());
            Ok(())
        },
    )
    .output(),
    flag(
        "strict",
        Group::Output,
        "warnings count as errors for the verdict and the exit status",
        |g| g.strict = true,
    ),
    valued(
        "progress",
        "WHEN",
        "a progress bar on standard error: auto (on a terminal, for a run past a\n\
         second, not with /json), always or never",
        |g, v| {
            let when = [Progress::Auto, Progress::Always, Progress::Never]
                .into_iter()
                .find(|p| p.as_str().eq_ignore_ascii_case(&text(v)))
                .ok_or("expected auto, always or never")?;
            g.progress = Some(when);
            Ok(())
        },
    )
    .output()
    .default(|| Progress::default().to_string()),
    flag(
        "quiet",
        Group::Output,
        "no progress bar: only the output, diagnostics and errors",
        |g| g.quiet = true,
    ),
    flag(
        "json",
        Group::Output,
        "JSON Lines on standard output instead of text",
        |g| g.json = true,
    ),
    valued(
        "completions",
        "SHELL",
        "print the completions of the options for SHELL: bash, zsh, fish,\n\
         powershell or elvish",
        |g, v| {
            g.completions = Some(shell(v)?);
            Ok(())
        },
    )
    .output(),
    flag(
        "manual",
        Group::Output,
        "print the manual page (roff: sptdump /manual > sptdump.1)",
        |g| g.manual = true,
    ),
    flag("help", Group::Output, "this help", |g| g.help = true).shown("/help, /?, /h"),
    flag("version", Group::Output, "the version", |g| {
        g.version = true
    })
    .shown("/version, /V"),
];

/// A shell whose completions the programs write (`/completions:SHELL`), in lower case.
pub(super) fn shell(value: &OsStr) -> Result<String, String> {
    let shell = text(value).to_ascii_lowercase();
    match super::grammar::SHELLS.contains(&shell.as_str()) {
        true => Ok(shell),
        false => Err("expected bash, zsh, fish, powershell or elvish".to_owned()),
    }
}

/// An option row: the run's own, or a view's.
#[derive(Clone, Copy)]
pub(super) enum Row {
    /// The run's.
    Own(&'static Own),
    /// A view's, from its module.
    View(views::Row),
}

impl Row {
    /// What it is.
    pub(super) fn about(self) -> &'static About {
        match self {
            Row::Own(o) => &o.about,
            Row::View(o) => o.about(),
        }
    }
}

/// Every option, in the order the help lists them: the run's sections, the views, then the
/// run's other options.
pub(super) fn rows() -> Vec<Row> {
    let own = |list: &'static [Own]| list.iter().map(Row::Own);
    own(BEFORE)
        .chain(views::rows().into_iter().map(Row::View))
        .chain(own(AFTER))
        .collect()
}

/// The options of `rows` as the help lists them, each group under its title: the label,
/// two spaces past the longest, then the help, its default after it.
pub(super) fn listing(rows: &[&About], groups: &[(Group, &str)]) -> String {
    // Two spaces after the longest option.
    let width = rows.iter().map(|o| o.label().len()).max().unwrap_or(0) + 2;
    let mut text = String::new();
    for (group, title) in groups {
        let _ = write!(text, "\n{title}\n");
        let mut listed = Vec::new();
        for o in rows.iter().filter(|o| o.group == *group) {
            // A row several views take is listed once, with the first one's words.
            if listed.contains(&o.name) {
                continue;
            }
            listed.push(o.name);
            let mut help = o.help.to_owned();
            if let Some(default) = o.default {
                let said = format!("default {}", default());
                // On a line of its own when the last one would grow past 100 columns.
                let last = help.lines().last().unwrap_or_default().trim_start();
                let sep = match width + 2 + last.len() + 2 + said.len() > 100 {
                    true => ";\n",
                    false => "; ",
                };
                let _ = write!(help, "{sep}{said}");
            }
            let mut lines = help.lines();
            let _ = writeln!(
                text,
                "  {:<width$}{}",
                o.label(),
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
    text
}

/// How sptdump's options are spelled, as its help says it.
pub(super) const SPELLINGS: &str = "\
Options are case-insensitive and may also be written -name or --name; values follow a
colon (/top:20), or for the dash forms '=' or a space (--top 20). An argument that starts
with '/' and names no option is a file, so /tmp/trace.spt works; a mistyped option is an
error, never a file. '--' ends the options; '-' reads standard input.
";

/// What sptdump is, in a line: the manual page's.
pub(super) const ABOUT: &str =
    "show what is inside SPT (Sample Profile Trace) files of MSVC's Sample PGO";

/// What the manual page says after the options.
pub(super) const LONG_ABOUT: &str = "\
sptdump shows what is inside SPT (Sample Profile Trace) files, the hardware-sample traces of \
MSVC's Sample Profile-Guided Optimization: a cross-platform clone of Microsoft's SPTDump, \
with its options and sections, and JSON Lines, validation, summaries, functions, flame \
graphs, exports, and checks of a trace against the build it must match.

Options are case-insensitive and may be written /name, -name or --name (as listed here); \
values follow a colon (/top:20), or for the dash forms '=' or a space (--top 20). An \
argument that starts with '/' and names no option is a file, so /tmp/trace.spt works; a \
mistyped option is an error, never a file. '--' ends the options; '-' reads standard input.

Exit status: 0 no errors (warnings allowed), 1 errors found, a file unreadable, or a /match \
or /pdb file that does not fit the trace, 2 usage error.";

/// What sptdump is, the first line of the help and of the short usage.
const TITLE: &str =
    "sptdump: show what is inside SPT (Sample Profile Trace) files of MSVC's Sample PGO";

/// How sptdump is run.
const USAGE: &str = "sptdump [options] sptfile...";

/// What `sptdump` alone prints: how it is run, the commands most runs are, and where every
/// option is listed.
pub fn short_usage() -> String {
    format!(
        "{TITLE}\n\
         \n\
         Usage: {USAGE}\n\
         \x20      sptdump /match:FILES          the GUID and age of images, PDBs and SPDs\n\
         \n\
         \x20 sptdump trace.spt                   every section of the trace\n\
         \x20 sptdump /progid trace.spt           each binary's GUID and age, to compare with an SPD's\n\
         \x20 sptdump /summary /top:20 trace.spt  what the trace holds, per binary and event\n\
         \x20 sptdump /check trace.spt            whether SPDConvert can use it, and in which mode\n\
         \x20 sptdump /validate /strict *.spt     a verdict per trace, for build pipelines\n\
         \n\
         'sptdump /help' lists every option.\n"
    )
}

/// The help text, in the style of the MSVC tools, its option lists made from the table of options.
pub fn help() -> String {
    let rows: Vec<&About> = rows().into_iter().map(Row::about).collect();
    let mut text = format!("{TITLE}\n\nUsage: {USAGE}\n");
    text.push_str(&listing(
        &rows,
        &[
            (
                Group::Sections,
                "Sections (several combine; they print in file order):",
            ),
            (Group::Output, "Output:"),
        ],
    ));
    text.push('\n');
    text.push_str(SPELLINGS);
    text.push_str(
        "\n\
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
