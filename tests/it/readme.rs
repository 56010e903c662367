//! The README and the docs show only what the tool prints: every example in them is run and
//! compared.
//!
//! Two kinds of blocks are checked:
//!
//! - a block whose lines start with `$ ` holds commands (`$ cd DIR`, `$ sptdump ARGS`,
//!   `$ spddump ARGS`, a trailing `\` continues a command on the next line), each followed
//!   by what it prints;
//! - a block right after an HTML comment `<!-- $ sptdump ARGS -->` (or `spddump`) is what
//!   those arguments print (the comment is invisible where the README is rendered).
//!
//! Every line shown must be a line of the command's standard output or standard error, in
//! the order it is printed there; a line `...` (alone, indented or not) stands for lines left
//! out, and a line that ends in ` ...` for a longer line that starts so. Commands run from the crate root, so `testdata/` paths work as the README writes them;
//! `$ cd ../shared/...` goes to the shared suite's files (public recordings, not kept in the
//! repository), and its examples are skipped, saying so, where the suite is not beside it.
//! A command piped into another tool (`| jq ...`) is not run: what it shows is that tool's.

use std::path::{Path, PathBuf};
use std::process::Command;

fn crate_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One command of the README and what it is shown to print.
#[derive(Debug)]
struct Example {
    /// The README line the command is on, for messages.
    line: usize,
    /// Where it runs, relative to the crate root.
    dir: PathBuf,
    /// `sptdump` or `spddump`.
    program: String,
    args: Vec<String>,
    shown: Vec<String>,
}

/// Splits a command line as a POSIX shell would for the simple cases the README uses:
/// spaces, and single or double quotes.
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote = None;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, ' ') => {
                if in_word {
                    out.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        out.push(word);
    }
    out
}

/// The examples of the README.
fn examples(readme: &str) -> Vec<Example> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(indent) = lines[i]
            .find("```")
            .filter(|&k| lines[i][..k].trim().is_empty())
        else {
            i += 1;
            continue;
        };
        // A fenced block from lines[i + 1] to the closing fence, its indentation removed.
        let start = i + 1;
        let end = (start..lines.len())
            .find(|&j| lines[j].trim_start().starts_with("```"))
            .expect("every block is closed");
        let block: Vec<&str> = lines[start..end]
            .iter()
            .map(|l| l.get(indent..).unwrap_or(""))
            .collect();
        let block = &block[..];
        let comment = (0..i)
            .rev()
            .map(|j| lines[j].trim())
            .find(|l| !l.is_empty())
            .and_then(|l| l.strip_prefix("<!-- $ "))
            .and_then(|l| l.strip_suffix("-->"))
            .and_then(|l| {
                let (program, args) = l.split_once(' ')?;
                ["sptdump", "spddump"]
                    .contains(&program)
                    .then_some((program, args))
            });
        if let Some((program, args)) = comment {
            out.push(Example {
                line: start,
                dir: PathBuf::new(),
                program: program.to_owned(),
                args: words(args.trim()),
                shown: block.iter().map(|l| l.to_string()).collect(),
            });
        } else if block.first().is_some_and(|l| l.starts_with("$ ")) {
            let mut dir = PathBuf::new();
            let mut j = 0;
            while j < block.len() {
                let Some(command) = block[j].strip_prefix("$ ") else {
                    panic!("README line {}: output before any command", start + j + 1);
                };
                let line = start + j + 1;
                let mut command = command.to_owned();
                while command.ends_with('\\') {
                    command.pop();
                    j += 1;
                    command.push_str(block[j].trim_start());
                }
                j += 1;
                let mut shown = Vec::new();
                while j < block.len() && !block[j].starts_with("$ ") {
                    shown.push(block[j].to_owned());
                    j += 1;
                }
                if command.contains(" | ") {
                    // A pipeline into another tool (jq): its output is that tool's.
                    continue;
                }
                let words = words(&command);
                match words.first().map(String::as_str) {
                    Some("cd") => {
                        assert!(shown.is_empty(), "README line {line}: cd prints nothing");
                        dir.push(&words[1]);
                    }
                    Some(program @ ("sptdump" | "spddump")) => out.push(Example {
                        line,
                        dir: dir.clone(),
                        program: program.to_owned(),
                        args: words[1..].to_vec(),
                        shown,
                    }),
                    other => panic!("README line {line}: unknown command {other:?}"),
                }
            }
        }
        i = end + 1;
    }
    out
}

/// Whether every shown line is printed, in order, on one of the two streams; the first line
/// that is not, when one is not.
fn missing(shown: &[String], stdout: &str, stderr: &str) -> Option<String> {
    let streams = [
        stdout.lines().collect::<Vec<_>>(),
        stderr.lines().collect::<Vec<_>>(),
    ];
    let mut next = [0usize; 2];
    for line in shown {
        let line = line.trim_end();
        if line.trim() == "..." {
            continue;
        }
        // A line cut short with ` ...` shows the start of a longer one.
        let matches = |printed: &str| match line.strip_suffix(" ...") {
            Some(start) => printed.starts_with(start),
            None => printed.trim_end() == line,
        };
        let found = (0..2).find_map(|s| {
            (next[s]..streams[s].len())
                .find(|&k| matches(streams[s][k]))
                .map(|k| (s, k))
        });
        match found {
            Some((s, k)) => next[s] = k + 1,
            None => return Some(line.to_owned()),
        }
    }
    None
}

/// The documents whose examples are run, and how many each has at least (so that a change
/// of their form cannot leave them unchecked).
const DOCUMENTS: [(&str, usize); 7] = [
    ("README.md", 7),
    ("docs/guide.md", 20),
    ("docs/faq.md", 0),
    ("docs/options.md", 0),
    ("docs/output.md", 8),
    ("docs/format.md", 0),
    ("docs/development.md", 0),
];

#[test]
fn every_example_in_the_readme_and_the_docs_is_what_the_tool_prints() {
    let mut failures = Vec::new();
    for (document, least) in DOCUMENTS {
        let text = std::fs::read_to_string(crate_root().join(document)).unwrap();
        let examples = examples(&text);
        assert!(
            examples.len() >= least,
            "only {} examples found in {document}: has its form changed?",
            examples.len()
        );
        failures.extend(run_examples(document, &examples));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What the examples of `document` do not print as shown.
fn run_examples(document: &str, examples: &[Example]) -> Vec<String> {
    let mut failures = Vec::new();
    for ex in examples {
        // An example on the shared suite's files (`$ cd ../shared/etl`) runs where the
        // suite is checked out beside the repository, and says it skipped elsewhere.
        if ex.dir.starts_with("../shared") {
            let sub = ex.dir.strip_prefix("../shared").unwrap().to_str().unwrap();
            if sptdump_testkit::shared::folder(&format!("readme: {document} line {}", ex.line), sub)
                .is_none()
            {
                continue;
            }
        }
        let dir = match ex.dir.strip_prefix("../shared") {
            Ok(sub) => sptdump_testkit::shared::root().join(sub),
            Err(_) => crate_root().join(&ex.dir),
        };
        let binary = match ex.program.as_str() {
            "spddump" => env!("CARGO_BIN_EXE_spddump"),
            _ => env!("CARGO_BIN_EXE_sptdump"),
        };
        let output = Command::new(binary)
            .args(&ex.args)
            .current_dir(&dir)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if let Some(line) = missing(&ex.shown, &stdout, &stderr) {
            failures.push(format!(
                "{document} line {}: `{} {}` does not print (in this order)\n    {line}\n  \
                 it prints:\n{}{}",
                ex.line,
                ex.program,
                ex.args.join(" "),
                stdout
                    .lines()
                    .take(40)
                    .map(|l| format!("    {l}\n"))
                    .collect::<String>(),
                stderr
                    .lines()
                    .take(10)
                    .map(|l| format!("    (stderr) {l}\n"))
                    .collect::<String>(),
            ));
        }
    }
    failures
}

#[test]
fn the_checker_finds_a_line_that_is_not_printed() {
    let shown = ["a".to_owned(), "...".to_owned(), "c".to_owned()];
    assert_eq!(missing(&shown, "a\nb\nc\n", ""), None);
    assert_eq!(missing(&shown, "c\na\n", ""), Some("c".to_owned()));
    assert_eq!(missing(&shown, "a\n", "c\n"), None);
    assert_eq!(
        missing(&["x".to_owned()], "a\n", "b\n"),
        Some("x".to_owned())
    );
    assert_eq!(missing(&["ab ...".to_owned()], "abc\n", ""), None);
    assert_eq!(
        missing(&["ab ...".to_owned()], "xabc\n", ""),
        Some("ab ...".to_owned())
    );
    assert_eq!(
        words(r#"/json "/match:a b.exe" 'x y' z"#),
        ["/json", "/match:a b.exe", "x y", "z"]
    );
}

/// The lines of the first fenced block after the heading `heading` of `text`.
fn first_block_after<'a>(text: &'a str, heading: &str) -> Vec<&'a str> {
    let mut lines = text
        .lines()
        .skip_while(|l| l.trim_end() != heading)
        .skip_while(|l| !l.starts_with("```"))
        .skip(1);
    lines
        .by_ref()
        .take_while(|l| !l.starts_with("```"))
        .collect()
}

#[test]
fn the_quick_start_works_on_a_fresh_clone_as_written() {
    let readme = std::fs::read_to_string(crate_root().join("README.md")).unwrap();
    // The door, not a manual.
    assert!(
        readme.lines().count() <= 300,
        "the README is over 300 lines"
    );
    let commands = first_block_after(&readme, "## Quick start");
    assert_eq!(
        commands,
        ["cargo run --release -- testdata/sample.spt", "cargo test"],
        "the quick start's commands"
    );
    // `cargo run` picks the binary by `default-run` when a package has two, and builds it with
    // the default features: both must hold, or the first command fails before it starts.
    let manifest = std::fs::read_to_string(crate_root().join("Cargo.toml")).unwrap();
    let package = manifest.split("\n[").next().unwrap();
    assert!(
        package
            .lines()
            .any(|l| l.trim() == r#"default-run = "sptdump""#),
        "Cargo.toml's [package] names no default-run = \"sptdump\""
    );
    let defaults = manifest
        .lines()
        .find_map(|l| l.strip_prefix("default = "))
        .expect("default features");
    for bin in manifest.split("[[bin]]").skip(1) {
        if let Some(features) = bin
            .lines()
            .find_map(|l| l.strip_prefix("required-features = "))
        {
            for feature in features.trim_matches(['[', ']']).split(',') {
                assert!(
                    defaults.contains(feature.trim()),
                    "a binary needs {feature}, which is not a default feature"
                );
            }
        }
    }
    // What it is shown to print is what those arguments print (the examples test runs it).
    let shown = readme
        .lines()
        .skip_while(|l| l.trim_end() != "## Quick start")
        .find_map(|l| l.strip_prefix("<!-- $ sptdump "))
        .and_then(|l| l.strip_suffix(" -->"))
        .expect("the quick start shows what its first command prints");
    assert_eq!(
        commands[0].strip_prefix("cargo run --release -- "),
        Some(shown)
    );
}

/// The option names of lines of a help text or of the first cells of a table: every
/// `/name` before a colon, a bracket, a comma or a space.
fn option_names<'a>(cells: impl Iterator<Item = &'a str>) -> std::collections::BTreeSet<String> {
    let mut names = std::collections::BTreeSet::new();
    for cell in cells {
        for part in cell.split('/').skip(1) {
            let name: String = part
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '?')
                .collect();
            if !name.is_empty() {
                names.insert(name.to_ascii_lowercase());
            }
        }
    }
    names
}

#[test]
fn the_option_reference_is_the_help() {
    let page = std::fs::read_to_string(crate_root().join("docs/options.md")).unwrap();
    for program in ["sptdump", "spddump"] {
        let binary = match program {
            "spddump" => env!("CARGO_BIN_EXE_spddump"),
            _ => env!("CARGO_BIN_EXE_sptdump"),
        };
        let help = Command::new(binary).arg("/help").output().unwrap();
        let help = String::from_utf8(help.stdout).unwrap();
        let shown = first_block_after(&page, &format!("<!-- help: {program} -->"));
        assert_eq!(
            shown.join("\n"),
            help.trim_end(),
            "docs/options.md's help of {program} is not what `{program} /help` prints"
        );
        if program == "sptdump" {
            // The table names every option the help lists, and no other.
            let listed = option_names(
                help.lines()
                    .filter(|l| l.starts_with("  /"))
                    .map(|l| l.split("  ").nth(1).unwrap_or("")),
            );
            let table = option_names(
                page.lines()
                    .filter(|l| l.starts_with("| `/"))
                    .map(|l| l.split(" | ").next().unwrap_or("")),
            );
            assert_eq!(table, listed, "docs/options.md's table against /help");
        }
    }
}
