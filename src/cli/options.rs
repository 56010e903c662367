//! Every option, written down once: its name, its value, its help, and what it does to the
//! command line being read ([`Given`]), its value parsed there, once. The parser and `/help`
//! are both made from [`OPTIONS`].

use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::path::PathBuf;

use crate::analysis::annotate::SourcePath;
use crate::dump::{DEFAULT_TOP, Kind, Sections, View, Views};
use crate::format::stackorder::StackOrder;
use crate::format::tables::StringIndex;

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
    pub views: Views,
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
    pub source_paths: Vec<SourcePath>,
    pub noinline: bool,
    pub validate: bool,
    pub check: bool,
    pub compare: bool,
    pub min_overlap: Option<f64>,
    pub strict: bool,
    pub progress: Option<Progress>,
    pub quiet: bool,
    pub json: bool,
}

/// Where an option is listed in the help.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Group {
    /// What to print.
    Sections,
    /// How to print it.
    Output,
}

/// What an option does to the command line being read.
#[derive(Clone, Copy)]
pub(super) enum Set {
    /// A flag.
    Flag(fn(&mut Given)),
    /// A value (each item of a list): parsed and stored, or why it is not good.
    Value(fn(&mut Given, &OsStr) -> Result<(), String>),
    /// A flag that may take a value after a colon (`/callgraph`, `/callgraph:NAME`).
    Optional(fn(&mut Given, Option<&OsStr>) -> Result<(), String>),
}

/// One option.
pub(super) struct Opt {
    pub name: &'static str,
    /// The name of its value (`N` for `/top:N`), if it takes one. A value named `FILE` or
    /// `FILES` may not be empty.
    pub value: Option<&'static str>,
    /// Whether the value is a comma-separated list that accumulates over repetitions.
    pub list: bool,
    /// How the help shows it, when not as `/name` or `/name:VALUE`.
    pub shown: Option<&'static str>,
    pub group: Group,
    /// The help text; a newline continues it on the next line.
    pub help: &'static str,
    /// The value when the option is not given, as the help shows it.
    pub default: Option<fn() -> String>,
    pub set: Set,
}

/// How many functions `/dyninst` shows per binary without a number: SPDDump's default.
const DEFAULT_DYNINST: usize = 50;

const fn flag(name: &'static str, group: Group, help: &'static str, set: fn(&mut Given)) -> Opt {
    Opt {
        name,
        value: None,
        list: false,
        shown: None,
        group,
        help,
        default: None,
        set: Set::Flag(set),
    }
}

const fn valued(
    name: &'static str,
    value: &'static str,
    help: &'static str,
    set: fn(&mut Given, &OsStr) -> Result<(), String>,
) -> Opt {
    Opt {
        name,
        value: Some(value),
        list: false,
        shown: None,
        group: Group::Sections,
        help,
        default: None,
        set: Set::Value(set),
    }
}

/// A value's text, for the values that are not file names.
fn text(value: &OsStr) -> String {
    value.to_string_lossy().into_owned()
}

/// Every option, in the order the help lists them.
pub(super) const OPTIONS: &[Opt] = &[
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
    flag(
        Kind::Summary.declaration().name,
        Group::Sections,
        "per binary: totals per event kind and the hottest addresses",
        |g| g.views.add(View::Summary),
    ),
    flag(
        Kind::Functions.declaration().name,
        Group::Sections,
        "per binary: inclusive and exclusive call-stack hits per function",
        |g| g.views.add(View::Functions),
    ),
    flag(
        Kind::Lines.declaration().name,
        Group::Sections,
        "per binary and source: the hottest source lines (with /pdb)",
        |g| g.views.add(View::Lines),
    ),
    Opt {
        shown: Some("/callgraph[:NAME]"),
        set: Set::Optional(|g, function| {
            let function = match function.map(text) {
                Some(f) if f.is_empty() => return Err("expected a function's name".to_owned()),
                f => f,
            };
            g.views.add(View::CallGraph(function));
            Ok(())
        }),
        ..flag(
            Kind::CallGraph.declaration().name,
            Group::Sections,
            "per binary: who calls whom and how often, from LBR (with /image) and call\n\
             stacks; functions from /pdb. With NAME, that function's callers and callees",
            |_| {},
        )
    },
    flag(
        Kind::Coverage.declaration().name,
        Group::Sections,
        "per binary: the basic blocks of each function that ran and those the LBR\n\
         ranges cover: what SPGO will see as cold (with /pdb and /image)",
        |g| g.views.add(View::Coverage),
    ),
    Opt {
        shown: Some("/dyninst[:N]"),
        set: Set::Optional(|g, n| {
            let n = match n.map(text) {
                None => DEFAULT_DYNINST,
                Some(n) => match n.parse::<usize>() {
                    Ok(0) => usize::MAX,
                    Ok(n) => n,
                    Err(_) => return Err("expected a whole number, 0 for every function".into()),
                },
            };
            g.views.add(View::Dyninst(n));
            Ok(())
        }),
        ..flag(
            Kind::Dyninst.declaration().name,
            Group::Sections,
            "per binary: the N functions (default 50; 0: all) that ran the most\n\
             instructions by the LBR ranges (with /pdb and /image)",
            |_| {},
        )
    },
    valued(
        Kind::Annotate.declaration().name,
        "FUNCTION",
        "one function's instructions with their LBR counts, the branches taken\n\
         from each, IP samples and source lines (with /pdb and /image)",
        |g, v| {
            let function = text(v);
            if function.is_empty() {
                return Err("expected a function's name".into());
            }
            g.views.add(View::Annotate(function));
            Ok(())
        },
    ),
    flag(
        Kind::Folded.declaration().name,
        Group::Sections,
        "the call stacks as folded lines (outer;...;leaf hits), for flame-graph tools",
        |g| g.views.add(View::Folded),
    ),
    valued(
        Kind::FlameGraph.declaration().name,
        "FILE",
        "write an interactive SVG flame graph of the call stacks to FILE",
        |g, v| {
            g.views.add(View::FlameGraph(PathBuf::from(v)));
            Ok(())
        },
    ),
    flag(
        "icicle",
        Group::Output,
        "draw /flamegraph top-down, the outermost frame at the top (an icicle graph)",
        |g| g.views.icicle = true,
    ),
    valued(
        Kind::Pprof.declaration().name,
        "FILE",
        "write the trace as a gzipped pprof profile (go tool pprof, Pyroscope) to FILE",
        |g, v| {
            g.views.add(View::Pprof(PathBuf::from(v)));
            Ok(())
        },
    ),
    valued(
        Kind::Html.declaration().name,
        "FILE",
        "write a self-contained HTML report (binaries, check, samples, functions,\n\
         lines, calls, flame graph) to FILE",
        |g, v| {
            g.views.add(View::Html(PathBuf::from(v)));
            Ok(())
        },
    ),
    valued(
        Kind::Parquet.declaration().name,
        "DIR",
        "write the counts as Parquet tables (samples, arcs, stacks; a file per trace)\n\
         under DIR, for DuckDB, Spark or pandas to sum",
        |g, v| {
            g.views.add(View::Parquet(PathBuf::from(v)));
            Ok(())
        },
    ),
    valued(
        Kind::Speedscope.declaration().name,
        "FILE",
        "write the trace in speedscope's JSON format to FILE",
        |g, v| {
            g.views.add(View::Speedscope(PathBuf::from(v)));
            Ok(())
        },
    ),
    flag(
        "merge",
        Group::Sections,
        "/summary, /functions, /folded and the exports treat all the traces as one\n\
         profile, binaries merged by GUID and age, as SPDConvert merges them",
        |g| g.merge = true,
    ),
    Opt {
        list: true,
        ..valued(
            "sptlist",
            "FILE",
            "add the traces listed in FILE, one path per line",
            |g, v| {
                g.sptlists.push(v.to_owned());
                Ok(())
            },
        )
    },
    Opt {
        default: Some(|| StackOrder::default().to_string()),
        ..valued(
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
    },
    Opt {
        default: Some(|| DEFAULT_TOP.to_string()),
        ..valued(
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
    },
    Opt {
        list: true,
        ..valued(
            "binary",
            "LIST",
            "only segments of these binaries: names or progid indices, comma-separated",
            |g, v| {
                g.binaries.push(text(v));
                Ok(())
            },
        )
    },
    Opt {
        default: Some(|| StringIndex::default().to_string()),
        ..valued(
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
    },
    Opt {
        list: true,
        ..valued(
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
    },
    Opt {
        list: true,
        ..valued(
            "pdb",
            "FILES",
            "name RVAs by function (function+0xOFFSET) with these PDBs; each must\n\
             match a program ID's GUID and age",
            |g, v| {
                g.pdbs.push(v.to_owned());
                Ok(())
            },
        )
    },
    Opt {
        shown: Some("/symbols[:PATH]"),
        set: Set::Optional(|g, path| {
            g.symbols = Some(path.map(OsStr::to_owned));
            Ok(())
        }),
        ..flag(
            "symbols",
            Group::Sections,
            "look up the PDBs and images no /pdb or /image names along a symbol\n\
             path (_NT_SYMBOL_PATH's syntax; without PATH, that variable): local\n\
             directories and stores, and http(s) symbol servers (srv*CACHE*URL);\n\
             SPTDUMP_SYMBOL_TIMEOUT=SECONDS or CONNECT,READ changes their time-outs\n\
             (10 s to connect, 60 s for a read)",
            |_| {},
        )
    },
    Opt {
        list: true,
        ..valued(
            "image",
            "FILES",
            "read the code of these images (.exe, .dll) for the LBR views; each must\n\
             match a program ID's GUID and age",
            |g, v| {
                g.images.push(v.to_owned());
                Ok(())
            },
        )
    },
    Opt {
        group: Group::Output,
        ..valued(
            "srcpath",
            "OLD=NEW",
            "for /annotate: the source files the PDB names under OLD (C:\\src) are under\n\
         NEW here; may be repeated",
            |g, v| {
                let v = text(v);
                let Some((old, new)) = v
                    .split_once('=')
                    .filter(|(o, n)| !o.is_empty() && !n.is_empty())
                else {
                    return Err(
                        "expected OLD=NEW, a folder as the PDB names it and one here".into(),
                    );
                };
                g.source_paths.push(SourcePath {
                    old: old.to_owned(),
                    new: new.into(),
                });
                Ok(())
            },
        )
    },
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
         NEW, the trace's function shares beside the SPD's",
        |g| g.compare = true,
    ),
    Opt {
        group: Group::Output,
        ..valued(
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
    },
    flag(
        "strict",
        Group::Output,
        "warnings count as errors for the verdict and the exit status",
        |g| g.strict = true,
    ),
    Opt {
        group: Group::Output,
        default: Some(|| Progress::default().to_string()),
        ..valued(
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
    },
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
    Opt {
        shown: Some("/help, /?, /h"),
        ..flag("help", Group::Output, "this help", |g| g.help = true)
    },
    Opt {
        shown: Some("/version, /V"),
        ..flag("version", Group::Output, "the version", |g| {
            g.version = true
        })
    },
];

/// Short spellings: `/h`, `/?` for help, `/V` for version.
pub(super) fn canonical(name: &str) -> &str {
    match name {
        "h" | "?" => "help",
        "v" => "version",
        other => other,
    }
}

/// The option of this name.
pub(super) fn option(name: &str) -> Option<&'static Opt> {
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
    // Two spaces after the longest option.
    let width = OPTIONS.iter().map(|o| label(o).len()).max().unwrap_or(0) + 2;
    let mut text = format!("{TITLE}\n\nUsage: {USAGE}\n");
    for (group, title) in [
        (
            Group::Sections,
            "Sections (several combine; they print in file order):",
        ),
        (Group::Output, "Output:"),
    ] {
        let _ = write!(text, "\n{title}\n");
        for o in OPTIONS.iter().filter(|o| o.group == group) {
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
