//! `/annotate:FUNCTION`: one function's code, instruction by instruction, with what the
//! profile says of each, as `perf annotate` shows it.
//!
//! ```text
//! count    the instructions' count by the LBR ranges (each consistent range through it
//!          counts its record's hits)
//! taken    the hits of the LBR branches taken from it where they end a consistent range
//!          (every LBR pair from it when no range was read); a record's oldest branch ends
//!          none, so `/callgraph`, which counts every pair, can count more; for a
//!          conditional jump, the fall-through is count - taken
//! ip       the IP samples at it, per event
//! line     the PDB's source line at it, the function inlined there (innermost), and the
//!          line's text when the source file is found (remapped by /srcpath)
//! ```
//!
//! Only the named function is decoded and looked up, from its first byte to its end.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::analysis::Counted;
use crate::analysis::lbr::ranges::RangeReport;
use crate::format::record::SampleKind;
use crate::image::code::{Code, Flow, Machine};
use crate::image::lines::SourceLines;
use crate::image::symbols::Symbols;

/// The most bytes of a source file read to show its lines.
const MAX_SOURCE: u64 = 16 << 20;

/// A prefix of the PDB's source paths and what it stands for here (`/srcpath:OLD=NEW`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourcePath {
    /// The prefix as the PDB records it (`C:\src`), compared without regard to case or the
    /// kind of slash.
    pub old: String,
    /// The folder it stands for on this machine.
    pub new: PathBuf,
}

/// A `/srcpath` value that is not `OLD=NEW`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected OLD=NEW, a folder as the PDB names it and one here")]
pub struct NotOldNew;

impl SourcePath {
    /// `OLD=NEW`, as `/srcpath` takes it.
    ///
    /// # Errors
    ///
    /// When `text` is not that.
    pub fn parse(text: &str) -> Result<SourcePath, NotOldNew> {
        let Some((old, new)) = text
            .split_once('=')
            .filter(|(o, n)| !o.is_empty() && !n.is_empty())
        else {
            return Err(NotOldNew);
        };
        Ok(SourcePath {
            old: old.to_owned(),
            new: new.into(),
        })
    }
}

/// One instruction of an annotated function.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Row {
    /// The instruction's RVA.
    pub rva: u32,
    /// Intel syntax, addresses as RVAs.
    pub text: String,
    /// How often it ran, by the consistent LBR ranges.
    pub count: u128,
    /// The hits of branches taken from it.
    pub taken: u128,
    /// Whether it is a conditional jump: one that can fall through.
    pub conditional: bool,
    /// The flow of its block (section 18: inferred); `None` when the function has no flow
    /// (it did not run, or was left raw) or the instruction is in no block (padding).
    pub flow: Option<u64>,
    /// The IP samples at it, per event of [`Annotated::events`].
    pub ip: Vec<u128>,
    /// The source file the PDB gives for it.
    pub file: Option<String>,
    /// Its line in that file.
    pub line: Option<u32>,
    /// The innermost function inlined here, when the address is in inlined code.
    pub inlined: Option<String>,
    /// The text of `line` in `file`, when the file was found.
    pub source: Option<String>,
}

impl Row {
    /// For a conditional jump: how often it fell through (its count less the branches
    /// taken from it).
    pub(crate) fn fall_through(&self) -> u128 {
        self.count.saturating_sub(self.taken)
    }
}

/// One function, annotated.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Annotated {
    /// The binary's program ID.
    pub progid: u16,
    /// The binary's name.
    pub name: String,
    /// The function's name, as the PDB gives it.
    pub function: String,
    /// Its RVA.
    pub rva: u32,
    /// The IP events the binary has, in the order of [`Row::ip`].
    pub events: Vec<SampleKind>,
    /// Its instructions, in address order.
    pub rows: Vec<Row>,
    /// Whether the ranges were read (an order found): else `count` is 0 throughout.
    pub ranges: bool,
}

/// The functions named FUNCTION, annotated, one per binary that has one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AnnotateReport {
    /// The function asked for, as given.
    pub function: String,
    /// Each binary's function of that name.
    pub functions: Vec<Annotated>,
    /// What kept a binary's function from being shown, per binary: no image, a machine not
    /// decoded.
    pub missing: Vec<String>,
}

/// Annotates `function` (a name as `/functions` prints it, or `binary!name`) in every binary
/// of `counted` with a PDB that has it.
pub(crate) fn annotate(
    counted: &Counted<'_>,
    ranges: Option<&RangeReport>,
    function: &str,
    paths: &[SourcePath],
) -> AnnotateReport {
    let mut report = AnnotateReport {
        function: function.to_owned(),
        ..AnnotateReport::default()
    };
    for progid in counted.symbols.progids() {
        let name = counted.tables.binary_name(progid);
        let Some(symbols) = counted.symbols.get(Some(progid)) else {
            continue;
        };
        let Some(found) = symbols
            .iter()
            .find(|s| crate::analysis::named::names(function, &name, s.name))
        else {
            continue;
        };
        let Some(code) = counted.symbols.code(Some(progid)) else {
            report.missing.push(format!(
                "{name}: its instructions are read from its image: give /image:FILE for {name}"
            ));
            continue;
        };
        if !matches!(code.machine, Machine::X64 | Machine::X86) {
            report.missing.push(format!(
                "{name}: its image is {} code, which is not decoded yet: no instruction shown",
                code.machine
            ));
            continue;
        }
        if code.text(found.rva).is_none() {
            report.missing.push(format!(
                "{name}: its image holds no code at 0x{:08X}, where the PDB puts {}",
                found.rva, found.name
            ));
            continue;
        }
        let binary = ranges.and_then(|r| r.binaries.iter().find(|b| b.progid == progid));
        let rows = rows(symbols, code, found.rva, paths);
        let mut annotated = Annotated {
            progid,
            name,
            function: found.name.to_owned(),
            rva: found.rva,
            events: Vec::new(),
            rows,
            ranges: binary.is_some_and(|b| b.order.is_some()),
        };
        samples(counted, &mut annotated);
        // With ranges read, a branch is counted where it ends a range, as its count is: so
        // that count - taken is how often it fell through.
        if let Some(b) = binary.filter(|b| b.order.is_some()) {
            let cfg = b.cfg.function(found.rva);
            for row in &mut annotated.rows {
                row.count = b.counts.get(&row.rva).copied().unwrap_or(0);
                row.taken = b.taken.get(&row.rva).copied().unwrap_or(0);
                row.flow = cfg.and_then(|f| f.flow_at(row.rva));
            }
        }
        report.functions.push(annotated);
    }
    report
}

/// The function's instructions from `start` to its end, with their source lines.
fn rows(symbols: &Symbols, code: &Code, start: u32, paths: &[SourcePath]) -> Vec<Row> {
    let inside = |at: u32| symbols.lookup(at).is_some_and(|(f, _)| f.rva == start);
    let mut rows = Vec::new();
    let mut at = start;
    while inside(at) {
        let (Some(i), Some(text)) = (code.instruction(at), code.text(at)) else {
            break;
        };
        rows.push(Row {
            rva: at,
            text,
            count: 0,
            taken: 0,
            conditional: i.flow == Flow::Conditional,
            flow: None,
            ip: Vec::new(),
            file: None,
            line: None,
            inlined: None,
            source: None,
        });
        let Some(next) = at.checked_add(i.len) else {
            break;
        };
        at = next;
    }
    let lines = SourceLines::read(symbols, rows.iter().map(|r| r.rva));
    let mut files = SourceFiles::new(paths);
    for row in &mut rows {
        let Some(mut chain) = lines.chain(row.rva) else {
            continue;
        };
        let Some(innermost) = chain.next() else {
            continue;
        };
        row.file = innermost.file.map(str::to_owned);
        row.line = innermost.line;
        row.inlined = innermost.inlined.then(|| innermost.function.to_owned());
        if let (Some(file), Some(line)) = (&row.file, row.line) {
            row.source = files.line(file, line);
        }
    }
    rows
}

/// The IP samples per event and the LBR branches taken from each instruction.
fn samples(counted: &Counted<'_>, f: &mut Annotated) {
    let at: BTreeMap<u32, usize> = f.rows.iter().enumerate().map(|(n, r)| (r.rva, n)).collect();
    let summary = counted.summary;
    for table in summary.ip_tables(f.progid) {
        let event = f.events.len();
        f.events.push(table.source());
        for row in &mut f.rows {
            row.ip.push(0);
        }
        for (rva, hits) in table.iter() {
            if let Some(&n) = at.get(&rva) {
                f.rows[n].ip[event] = f.rows[n].ip[event].saturating_add(hits);
            }
        }
    }
    if let Some(lbr) = summary.lbr(f.progid) {
        for ([from, _], hits) in lbr.iter() {
            if let Some(&n) = at.get(&from) {
                f.rows[n].taken = f.rows[n].taken.saturating_add(hits);
            }
        }
    }
}

/// Source files read once each, their paths remapped.
struct SourceFiles<'p> {
    paths: &'p [SourcePath],
    read: BTreeMap<String, Option<Vec<String>>>,
}

impl<'p> SourceFiles<'p> {
    fn new(paths: &'p [SourcePath]) -> Self {
        SourceFiles {
            paths,
            read: BTreeMap::new(),
        }
    }

    /// Line `line` (from 1) of the file the PDB calls `file`, when it is found here.
    fn line(&mut self, file: &str, line: u32) -> Option<String> {
        let paths = self.paths;
        let text = self
            .read
            .entry(file.to_owned())
            .or_insert_with(|| read_source(&remap(file, paths)));
        let line = usize::try_from(line).ok()?.checked_sub(1)?;
        text.as_ref()?.get(line).cloned()
    }
}

/// Where the PDB's `file` is here: under the first `/srcpath` whose OLD prefixes it (case
/// and slashes aside), else as recorded.
fn remap(file: &str, paths: &[SourcePath]) -> PathBuf {
    let normal = |s: &str| s.replace('\\', "/").to_ascii_lowercase();
    let lower = normal(file);
    for p in paths {
        let old = normal(&p.old);
        let old = old.trim_end_matches('/');
        if let Some(rest) = lower.strip_prefix(old)
            && (rest.is_empty() || rest.starts_with('/'))
        {
            let rest = &file[file.len() - rest.len()..];
            let mut path = p.new.clone();
            path.extend(rest.split(['/', '\\']).filter(|c| !c.is_empty()));
            return path;
        }
    }
    PathBuf::from(file)
}

/// The lines of the source file at `path`, when it is a readable text file of at most
/// [`MAX_SOURCE`] bytes.
fn read_source(path: &std::path::Path) -> Option<Vec<String>> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_SOURCE {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some(text.lines().map(|l| l.trim_end().to_owned()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_path_is_remapped_by_its_prefix_whatever_the_case_and_slashes() {
        let paths = [SourcePath {
            old: r"C:\Src\".to_owned(),
            new: PathBuf::from("here"),
        }];
        let expected: PathBuf = ["here", "lib", "a.c"].iter().collect();
        assert_eq!(remap(r"c:\src\lib\a.c", &paths), expected);
        assert_eq!(remap("C:/SRC/lib/a.c", &paths), expected);
        // A prefix of a component is no prefix of the path.
        assert_eq!(remap(r"C:\srcs\a.c", &paths), PathBuf::from(r"C:\srcs\a.c"));
        assert_eq!(remap("/other/a.c", &paths), PathBuf::from("/other/a.c"));
    }

    #[test]
    fn a_source_path_names_both_folders() {
        let p = SourcePath::parse(r"C:\src=here").unwrap();
        assert_eq!(
            (p.old.as_str(), p.new.as_path()),
            (r"C:\src", "here".as_ref())
        );
        // Split at the first `=`: a folder here may hold one.
        let p = SourcePath::parse("C:=a=b").unwrap();
        assert_eq!((p.old.as_str(), p.new.as_path()), ("C:", "a=b".as_ref()));
        for text in [r"C:\src=", "=here", "=", "here", ""] {
            assert_eq!(SourcePath::parse(text), Err(NotOldNew), "{text:?}");
        }
    }

    #[test]
    fn a_source_file_is_read_up_to_its_bound_and_a_folder_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, len: u64| {
            let path = dir.path().join(name);
            let mut text = vec![b'x'; usize::try_from(len).unwrap()];
            text[..4].copy_from_slice(b"a;\n\n");
            std::fs::write(&path, text).unwrap();
            path
        };
        let lines = read_source(&write("at.c", MAX_SOURCE)).expect("read at the bound");
        assert_eq!((lines.len(), lines[0].as_str()), (3, "a;"));
        assert_eq!(read_source(&write("past.c", MAX_SOURCE + 1)), None);
        assert_eq!(read_source(dir.path()), None);
        assert_eq!(read_source(&dir.path().join("absent.c")), None);
    }
}
