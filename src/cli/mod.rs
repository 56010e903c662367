//! The command line: SPTDump's options in every spelling, turned into one [`Plan`] before
//! anything is read.
//!
//! Options are case-insensitive and may be written `/name`, `-name` or `--name`. Values follow
//! a colon (`/top:20`), or for the dash forms `=` or a space (`--top 20`). An argument that
//! starts with `/` is an option only when its name is one of ours, so `/tmp/a.spt` is a file
//! on every platform. `--` ends the options; `-` is standard input.
//!
//! ```text
//! spelling.rs   an argument -> an option's name and value, or a file, or a typo
//! grammar.rs    the option rows -> clap's Command; the arguments in clap's form
//!               (--name=VALUE, --, the files) parsed by it; completions, manual page
//! read.rs       the two together, for sptdump and spddump alike
//! options.rs    the table: each option's name, value, help, and what it sets (its value
//!               parsed there, once)
//! mod.rs        what was given -> a Command and its Plan, by the rules of how options
//!               combine; a combination that cannot do what each option says is refused
//! ```
//!
//! SPTDump's spellings are not those of a general argument parser (`/name:value`, any case,
//! `/path` as a file), so the reader puts them in clap's form before clap parses them, and
//! says itself what a mistyped option was meant to be. The rows are the one source of the
//! options: the parser, `/help`, the completions and the manual page are made of them.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::image::symbolpath::SymbolPath;
use crate::output::Format;
use crate::views::summary::Summary;
use crate::views::{About, Apply, DEFAULT_TOP, Files, Plan, Sections, Shape, Takes, View, Views};

mod grammar;
mod options;
mod program;
mod read;
mod spd;
mod spelling;
mod usage;

use options::{Given, Row};
pub use options::{Progress, help, short_usage};
use program::{Program, Setter};
use read::read;
pub use spd::{SpdCommand, parse_spd, spd_completions, spd_help, spd_manual};
pub use usage::UsageError;
use usage::usage;

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Show the help.
    Help,
    /// Nothing was given: show the short usage on standard error, a usage error
    /// ([`short_usage`]).
    Usage,
    /// Show the version.
    Version,
    /// Print the completions of the options for a shell (`bash`, `zsh`, `fish`,
    /// `powershell` or `elvish`): [`completions`].
    Completions {
        /// The shell.
        shell: String,
    },
    /// Print the manual page: [`manual`].
    Manual,
    /// Show the identities of the `/match` files: there is no trace to match them with.
    Identities {
        /// JSON Lines instead of text.
        format: Format,
        /// The images and PDBs.
        paths: Vec<OsString>,
    },
    /// Run a plan over traces.
    Run {
        /// What to do. The files it names are still to be read ([`Plan::load`]).
        plan: Box<Plan>,
        /// The traces, `-` for standard input.
        traces: Vec<OsString>,
        /// Files listing more traces, one per line (`/sptlist`), to be read first.
        sptlists: Vec<OsString>,
        /// Whether to show a progress bar.
        progress: Progress,
    },
}

/// Parses the arguments (without the program name). Every argument is checked before any
/// file is read: a mistyped option never dumps a file.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut args = args.into_iter().peekable();
    if args.peek().is_none() {
        return Ok(Command::Usage);
    }
    let (given, traces) = read::<Sptdump>(args)?;
    command(given, traces)
}

/// sptdump's options, as the reader reads them.
struct Sptdump;

impl Program for Sptdump {
    type Given = Given;
    type Row = Row;
    const NAME: &'static str = "sptdump";
    const ABOUT: &'static str = options::ABOUT;
    const LONG_ABOUT: &'static str = options::LONG_ABOUT;
    const FILE: &'static str = "sptfile";
    const FILES_HELP: &'static str =
        "the SPT files to read; - reads standard input, *.spt is expanded on Windows too";

    fn rows() -> Vec<Row> {
        options::rows()
    }

    fn about(row: Row) -> &'static About {
        row.about()
    }

    fn named(given: &mut Given, name: &'static str) {
        given.named.push(name);
    }

    fn apply(given: &mut Given, row: Row, setter: Setter<'_>) -> Result<(), UsageError> {
        match row {
            // `/match` alone checks what `/symbols` finds (the command says whether it may).
            Row::Own(_) if row.about().takes == Takes::ValueOrAlone && setter.alone() => {
                given.match_symbols = true;
                Ok(())
            }
            Row::Own(opt) => setter.apply(given, opt),
            Row::View(row) => row.apply(&mut given.views, setter),
        }
    }
}

/// What the options given ask for: a command, its plan built by the rules of how options
/// combine. The rules that concern the number of traces are the plan's own
/// ([`Plan::conflict`]), checked once the `/sptlist` files are read.
fn command(mut given: Given, traces: Vec<OsString>) -> Result<Command, UsageError> {
    if given.help {
        return Ok(Command::Help);
    }
    if given.version {
        return Ok(Command::Version);
    }
    if let Some(shell) = given.completions.take() {
        return Ok(Command::Completions { shell });
    }
    if given.manual {
        return Ok(Command::Manual);
    }
    let format = if given.json {
        Format::Json
    } else {
        Format::Text
    };
    if given.match_symbols && given.symbols.is_none() {
        return Err(usage(
            "/match needs FILES, or /symbols for what a symbol path finds: /match:FILES",
        ));
    }
    if traces.is_empty() && given.sptlists.is_empty() {
        if given.matches.is_empty() {
            return Err(usage("no SPT file given"));
        }
        // Images and PDBs without a trace: say who they are, and nothing else.
        let wants_a_trace = given
            .named
            .iter()
            .find(|n| !["json", "match", "quiet", "progress"].contains(n));
        if let Some(name) = wants_a_trace {
            return Err(usage(format!(
                "/{name} needs a trace; /match without one prints the files' identities"
            )));
        }
        return Ok(Command::Identities {
            format,
            paths: given.matches,
        });
    }
    let views = combinable(&mut given)?;
    let symbol_path = symbol_path(given.symbols.as_ref())?;
    let progress = match (given.quiet, given.progress) {
        (true, _) => Progress::Never,
        (false, when) => when.unwrap_or_default(),
    };
    let sptlists = given.sptlists.clone();
    let files = Files {
        matches: given.matches.iter().map(PathBuf::from).collect(),
        pdbs: given.pdbs.iter().map(PathBuf::from).collect(),
        images: given.images.iter().map(PathBuf::from).collect(),
    };
    let mut plan = plan(given, views, format);
    plan.symbol_path = symbol_path;
    plan.files = files;
    Ok(Command::Run {
        plan: Box::new(plan),
        traces,
        sptlists,
        progress,
    })
}

/// The completions of sptdump's options for `shell` (`bash`, `zsh`, `fish`, `powershell`
/// or `elvish`; `None` for another), generated by clap from the option rows.
pub fn completions(shell: &str) -> Option<Vec<u8>> {
    grammar::completions::<Sptdump>(shell)
}

/// sptdump's manual page, in roff, generated by clap from the option rows.
pub fn manual() -> Vec<u8> {
    grammar::manual::<Sptdump>()
}

/// The symbol path of `/symbols:PATH`, or of `_NT_SYMBOL_PATH` for `/symbols` alone (a
/// usage error when it is unset or empty), with the time-outs of `SPTDUMP_SYMBOL_TIMEOUT`
/// (`SECONDS`, or `CONNECT,READ`; a usage error when it is neither).
fn symbol_path(given: Option<&Option<OsString>>) -> Result<Option<SymbolPath>, UsageError> {
    let text = match given {
        None => return Ok(None),
        Some(Some(path)) => path.to_string_lossy().into_owned(),
        Some(None) => std::env::var_os("_NT_SYMBOL_PATH")
            .map(|v| v.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    if text.trim().is_empty() {
        return Err(usage(
            "/symbols needs a symbol path: /symbols:PATH, or _NT_SYMBOL_PATH set",
        ));
    }
    let mut path = SymbolPath::parse(&text);
    if let Some(value) = std::env::var_os("SPTDUMP_SYMBOL_TIMEOUT") {
        path.fetch = path
            .fetch
            .with_timeouts(&value.to_string_lossy())
            .map_err(|why| usage(format!("SPTDUMP_SYMBOL_TIMEOUT: {why}")))?;
    }
    Ok(Some(path))
}

/// The rules of how options combine that the plan's types cannot hold: a combination that
/// cannot do what each option says is a usage error naming both. The views asked for, made
/// of what their rows gathered (a view's options that do not go together are its module's
/// to refuse).
fn combinable(given: &mut Given) -> Result<Views, UsageError> {
    if given.compare && given.merge {
        return Err(usage(
            "/compare reads two traces apart: it does not go with /merge",
        ));
    }
    if given.min_overlap.is_some() && !given.compare {
        return Err(usage("/min-overlap goes with /compare BASE NEW"));
    }
    let views = std::mem::take(&mut given.views).views().map_err(usage)?;
    if given.noinline && given.pdbs.is_empty() {
        return Err(usage(
            "/noinline changes how /pdb names frames: it goes with /pdb",
        ));
    }
    if given.quiet && given.progress.is_some_and(|p| p != Progress::Never) {
        return Err(usage(
            "/quiet shows no progress bar: it does not go with /progress other than never",
        ));
    }
    Ok(views)
}

/// The plan of a command line that [`combinable`] accepts.
fn plan(given: Given, mut views: Views, format: Format) -> Plan {
    // /top with nothing that shows top entries asks for them: that is a summary.
    if given.top.is_some() && !views.tables() && !given.compare {
        views.add(View::Summary(Summary));
    }
    let shape = if given.merge {
        Shape::Merged
    } else if given.compare {
        Shape::Compared {
            min_overlap: given.min_overlap,
        }
    } else {
        Shape::Each
    };
    // Every section when nothing else is asked for.
    let asked = !views.is_empty()
        || given.validate
        || given.check
        || shape != Shape::Each
        || !given.matches.is_empty()
        || given.match_symbols
        || given.spt.is_some();
    let sections = if given.all || (given.sections.is_empty() && !asked) {
        Sections::ALL
    } else {
        given.sections
    };
    Plan {
        format,
        sections,
        views,
        validate: given.validate,
        check: given.check,
        strict: given.strict,
        shape,
        top: given.top.unwrap_or(DEFAULT_TOP),
        stack_order: given.stack_order.unwrap_or_default(),
        strindex: given.strindex.unwrap_or_default(),
        binaries: (!given.binaries.is_empty()).then_some(given.binaries),
        files: Files::default(),
        matches: Vec::new(),
        beside: None,
        pdbs: Vec::new(),
        images: Vec::new(),
        symbol_path: None,
        match_symbols: given.match_symbols,
        inline: !given.noinline,
        spt: given.spt.map(PathBuf::from),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::stackorder::StackOrder;
    use crate::views::Kind;

    fn parse_strs(args: &[&str]) -> Result<Command, UsageError> {
        parse(args.iter().map(OsString::from))
    }

    fn plan_of(args: &[&str]) -> (Plan, Vec<String>) {
        match parse_strs(args).unwrap() {
            Command::Run { plan, traces, .. } => (
                *plan,
                traces
                    .into_iter()
                    .map(|f| f.into_string().unwrap())
                    .collect(),
            ),
            other => panic!("{other:?}"),
        }
    }

    fn error_of(args: &[&str]) -> String {
        parse_strs(args).unwrap_err().to_string()
    }

    fn sections(f: impl FnOnce(&mut Sections)) -> Sections {
        let mut s = Sections::NONE;
        f(&mut s);
        s
    }

    #[test]
    fn the_help_lists_every_option_and_the_parser_knows_every_listed_one() {
        let help = help();
        for o in options::rows().into_iter().map(|o| *o.about()) {
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
                .replace(":WHEN", ":never")
                .replace(":SHELL", ":bash");
            // /compare and its threshold take two traces; /merge an analysis; every other
            // option one trace.
            let args: Vec<&str> = match o.name {
                "compare" | "min-overlap" => vec!["/compare", &example, "a.spt", "b.spt"],
                "merge" => vec![&example, "/summary", "a.spt"],
                "noinline" => vec![&example, "/pdb:a.pdb", "a.spt"],
                "icicle" => vec![&example, "/flamegraph:f.svg", "a.spt"],
                "svg" => vec![&example, "/cfg:main", "a.spt"],
                // Alone it reads _NT_SYMBOL_PATH, which the test does not set.
                "symbols" => vec!["/symbols:C:\\symbols", "a.spt"],
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
                assert!(
                    !program::rows_named::<Sptdump>(&name).is_empty(),
                    "the help lists /{name}"
                );
            }
        }
    }

    #[test]
    fn help_lines_fit_a_terminal() {
        for line in help().lines() {
            assert!(line.chars().count() <= 100, "{line}");
        }
    }

    #[test]
    fn default_is_all() {
        let (plan, files) = plan_of(&["a.spt"]);
        assert_eq!(plan, Plan::default());
        assert_eq!(plan.sections, Sections::ALL);
        assert_eq!(plan.format, Format::Text);
        assert_eq!(files, ["a.spt"]);
    }

    #[test]
    fn every_spelling_and_case() {
        for spelling in ["/progid", "-progid", "--progid", "/PROGID", "--ProgId"] {
            let (plan, _) = plan_of(&[spelling, "a.spt"]);
            assert_eq!(plan.sections, sections(|s| s.progid = true), "{spelling}");
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
            let (plan, files) = plan_of(args);
            assert!(plan.views.has(Kind::Summary), "{args:?}");
            assert_eq!(plan.top, 20, "{args:?}");
            assert_eq!(files, ["a"]);
        }
        let (plan, _) = plan_of(&["/summary", "a"]);
        assert_eq!(plan.top, DEFAULT_TOP);
        assert_eq!(plan.sections, Sections::NONE);
    }

    #[test]
    fn top_alone_is_a_summary_but_not_beside_what_takes_it() {
        assert!(plan_of(&["/top:3", "a"]).0.views.has(Kind::Summary));
        let (plan, _) = plan_of(&["/functions", "/top:3", "a"]);
        assert!(plan.views.has(Kind::Functions) && !plan.views.has(Kind::Summary));
        let (plan, _) = plan_of(&["/compare", "/top:3", "a", "b"]);
        assert!(
            !plan.views.has(Kind::Summary),
            "/compare shows its own top keys"
        );
        assert_eq!(plan.top, 3);
    }

    #[test]
    fn each_value_is_parsed_once_into_the_plan() {
        let (plan, _) = plan_of(&[
            "/stackorder:Root-First",
            "/strindex:ordinal",
            "/folded",
            "/merge",
            "a",
        ]);
        assert_eq!(plan.stack_order, StackOrder::RootFirst);
        assert_eq!(plan.strindex.as_str(), "ordinal");
        assert_eq!(plan.shape, Shape::Merged);
        let (plan, _) = plan_of(&["/compare", "/min-overlap:0.25", "a", "b"]);
        assert_eq!(
            plan.shape,
            Shape::Compared {
                min_overlap: Some(0.25)
            }
        );
    }

    #[test]
    fn slash_paths_are_files() {
        let (_, files) = plan_of(&["/tmp/a.spt", "/header.spt", "/json/b.spt"]);
        assert_eq!(
            files,
            ["/tmp/a.spt", "/header.spt", "/json/b.spt"].map(String::from)
        );
    }

    #[test]
    fn double_dash_ends_options_and_dash_is_stdin() {
        let (plan, files) = plan_of(&["/json", "-", "--", "/header", "-x"]);
        assert_eq!(plan.format, Format::Json);
        assert_eq!(plan.sections, Sections::ALL);
        assert_eq!(files, ["-", "/header", "-x"]);
    }

    #[test]
    fn nothing_given_is_the_short_usage_which_names_the_help() {
        assert_eq!(parse_strs(&[]), Ok(Command::Usage));
        let usage = short_usage();
        assert!(
            usage.contains("Usage: sptdump [options] sptfile..."),
            "{usage}"
        );
        assert!(
            usage.ends_with("'sptdump /help' lists every option.\n"),
            "{usage}"
        );
        for line in usage.lines() {
            assert!(line.chars().count() <= 100, "{line}");
            // Every option it shows is one.
            for word in line.split_whitespace().filter(|w| w.starts_with('/')) {
                let name: String = word[1..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                    .collect();
                assert!(!program::rows_named::<Sptdump>(&name).is_empty(), "{word}");
            }
        }
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
        let Command::Run { plan, .. } = parse_strs(&[
            "/match:C:\\b\\app.exe,app.pdb",
            "--match",
            "core.dll",
            "t.spt",
        ])
        .unwrap() else {
            panic!()
        };
        let named: Vec<PathBuf> = ["C:\\b\\app.exe", "app.pdb", "core.dll"]
            .map(PathBuf::from)
            .into();
        assert_eq!(plan.files.matches, named);
        assert_eq!(plan.sections, Sections::NONE);
    }

    #[test]
    fn match_without_a_trace_is_identities_and_nothing_else() {
        assert_eq!(
            parse_strs(&["/json", "/match:a.exe"]),
            Ok(Command::Identities {
                format: Format::Json,
                paths: vec!["a.exe".into()]
            })
        );
        let e = error_of(&["/summary", "/match:a.exe"]);
        assert!(e.starts_with("/summary needs a trace"), "{e}");
    }

    #[test]
    fn binary_lists_accumulate() {
        let (plan, _) = plan_of(&["/binary:core.dll,0", "--binary", "app.exe", "a"]);
        assert_eq!(
            plan.binaries,
            Some(vec!["core.dll".into(), "0".into(), "app.exe".into()])
        );
    }

    #[test]
    fn validate_beside_another_mode_does_both() {
        let (plan, _) = plan_of(&["/validate", "a"]);
        assert!(plan.validate && plan.sections.is_empty());
        let (plan, _) = plan_of(&["/validate", "/summary", "/check", "a"]);
        assert!(plan.validate && plan.views.has(Kind::Summary) && plan.check);
        let (plan, _) = plan_of(&["/validate", "/header", "a"]);
        assert_eq!(plan.sections, sections(|s| s.header = true));
    }

    #[test]
    fn combinations_that_cannot_do_what_each_says_are_refused() {
        for (args, says) in [
            (
                &["/compare", "/merge", "/summary", "a", "b"][..],
                "/compare",
            ),
            (
                &["/min-overlap:0.5", "a"],
                "/min-overlap goes with /compare",
            ),
            (&["/quiet", "/progress:always", "a"], "/quiet"),
            (&["/noinline", "/functions", "a"], "/noinline"),
            (&["/icicle", "/functions", "a"], "/icicle"),
        ] {
            let e = error_of(args);
            assert!(e.starts_with(says), "{args:?}: {e}");
        }
        assert!(parse_strs(&["/quiet", "/progress:never", "a"]).is_ok());
    }

    #[test]
    fn every_file_value_refuses_an_empty_one_alike() {
        for (arg, says) in [
            ("/flamegraph:", "/flamegraph needs a file: /flamegraph:FILE"),
            ("/pprof:", "/pprof needs a file: /pprof:FILE"),
            ("/speedscope:", "/speedscope needs a file: /speedscope:FILE"),
            (
                "/sptlist:",
                "/sptlist needs a comma-separated list of files",
            ),
            ("/match:a,", "/match needs a comma-separated list of files"),
            ("/pdb:", "/pdb needs a comma-separated list of files"),
            (
                "/binary:",
                "/binary needs a comma-separated list of names or progid indices",
            ),
        ] {
            assert_eq!(
                error_of(&[arg, "a"]),
                format!("{says}; see 'sptdump /help'")
            );
        }
    }

    #[test]
    fn usage_errors_are_one_line() {
        for args in [
            &["-bogus", "a"][..],
            &["--top", "x", "/summary", "a"],
            &["/top:-1", "a"],
            &["/top", "a"],
            &["/json"],
            &["/header:1", "a"],
            &["/binary:", "a"],
            &["--top"],
        ] {
            let e = error_of(args);
            assert!(!e.contains('\n'), "{args:?}: {e}");
            assert!(e.ends_with("see 'sptdump /help'"), "{args:?}: {e}");
        }
    }
}
