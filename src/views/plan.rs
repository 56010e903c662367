//! The plan of a run: what to print of each trace and of the traces together, decided once,
//! before anything is read, and walked by the driver.
//!
//! ```text
//! per trace     sections (header, strtab, progid, event)      in file order
//!               views (summary ... speedscope)                unless the traces are merged
//!               verdicts (/match, /check, /validate)          always per trace
//! per run       Shape::Each       nothing more
//!               Shape::Merged     the views, of all the traces as one profile
//!               Shape::Compared   how NEW differs from BASE
//! ```
//!
//! What the decoder must count for all of that is derived here too ([`Plan::needs`]), so
//! that the driver asks the plan and never the options. A combination the plan cannot carry
//! out is a [`Conflict`], which names both options and why: nothing is ever dropped quietly.

use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::kept::Records;
use super::{Compared, Kind, Merged, Reads, Settings, Views, Writes};

use crate::format::stackorder::StackOrder;
use crate::format::tables::{StringIndex, Tables};
use crate::image::code::ImageFile;
use crate::image::matching::{self, MatchFile, MatchResult, PdbFile};
use crate::image::symbolpath::SymbolPath;
use crate::output::{Format, Output};

/// How many entries a table shows when `/top` does not say (`/summary`, `/functions`,
/// `/compare`'s keys).
pub const DEFAULT_TOP: usize = 10;

/// What a run does. Built once from the command line (or by hand, from
/// [`Plan::default`]: the default dump of `sptdump trace.spt`), then walked by
/// `dump::run`.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Text or JSON Lines.
    pub format: Format,
    /// The sections of each trace.
    pub sections: Sections,
    /// The analyses and exports.
    pub views: Views,
    /// A verdict per trace (`/validate`).
    pub validate: bool,
    /// Whether each trace is fit for SPDConvert (`/check`).
    pub check: bool,
    /// Warnings count as errors for the verdicts and the exit status (`/strict`).
    pub strict: bool,
    /// How the traces are taken together.
    pub shape: Shape,
    /// How many entries each table shows (`/top`).
    pub top: usize,
    /// How the frames of a call stack are stored (`/stackorder`).
    pub stack_order: StackOrder,
    /// How the program IDs' string indices are read (`/strindex`).
    pub strindex: StringIndex,
    /// Only the segments of these binaries: names (case-insensitive) or progid indices
    /// (`/binary`).
    pub binaries: Option<Vec<String>>,
    /// The files the command line named, still to be read ([`Plan::load`]).
    pub files: Files,
    /// Images, PDBs and SPDs to judge against each trace's program IDs (`/match`).
    pub matches: Vec<MatchFile>,
    /// The SPD set beside the trace (`/compare TRACE SPD`): the trace's samples are
    /// counted on its blocks.
    pub beside: Option<MatchFile>,
    /// PDBs whose symbols name the addresses of the binary they match (`/pdb`).
    pub pdbs: Vec<PdbFile>,
    /// Images whose code the LBR views decode, for the binary they match (`/image`).
    pub images: Vec<ImageFile>,
    /// Where PDBs and images of the binaries no `/pdb` or `/image` names are looked up
    /// (`/symbols`).
    pub symbol_path: Option<SymbolPath>,
    /// `/match /symbols`: a binary whose PDB the symbol path does not hold is an error.
    pub match_symbols: bool,
    /// Whether, with `/pdb`, code the compiler inlined is shown as frames of the functions
    /// inlined (unless `/noinline`).
    pub inline: bool,
    /// Where to write sptdump's aggregation of an ETL as an SPT (`/spt`, SPEC 19).
    pub spt: Option<PathBuf>,
}

impl Default for Plan {
    /// Every section of each trace, as text: `sptdump trace.spt`.
    fn default() -> Self {
        Plan {
            format: Format::Text,
            sections: Sections::ALL,
            views: Views::default(),
            validate: false,
            check: false,
            strict: false,
            shape: Shape::Each,
            top: DEFAULT_TOP,
            stack_order: StackOrder::LeafFirst,
            strindex: StringIndex::Auto,
            binaries: None,
            files: Files::default(),
            matches: Vec::new(),
            beside: None,
            pdbs: Vec::new(),
            images: Vec::new(),
            symbol_path: None,
            match_symbols: false,
            inline: true,
            spt: None,
        }
    }
}

/// The files a command line names for a run (`/match`, `/pdb`, `/image`), as named: read
/// into the plan by [`Plan::load`].
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Files {
    /// `/match`: images, PDBs and SPDs.
    pub matches: Vec<PathBuf>,
    /// `/pdb`.
    pub pdbs: Vec<PathBuf>,
    /// `/image`.
    pub images: Vec<PathBuf>,
}

/// A file named for a run that could not be read (`/pdb` or `/image`): the option, the
/// path, and why.
#[derive(Debug, thiserror::Error)]
#[error("/{option}:{}: {}", path.display(), chain(.error.as_ref()))]
pub struct Unreadable {
    /// The option that named it: `pdb`.
    pub option: &'static str,
    /// The file, as named.
    pub path: PathBuf,
    /// Why it could not be read.
    #[source]
    pub error: Box<dyn std::error::Error + Send + Sync>,
}

/// An error and each of its sources, joined by `: `.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The sections of a trace, printed in file order.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Sections {
    /// The header fields (`/header`).
    pub header: bool,
    /// The string table (`/strtab`).
    pub strtab: bool,
    /// The program IDs (`/progid`).
    pub progid: bool,
    /// Every record of the stream (`/event`).
    pub event: bool,
}

impl Sections {
    /// Every section: what `/all` prints.
    pub const ALL: Sections = Sections {
        header: true,
        strtab: true,
        progid: true,
        event: true,
    };

    /// No section.
    pub const NONE: Sections = Sections {
        header: false,
        strtab: false,
        progid: false,
        event: false,
    };

    /// Whether no section is printed.
    pub fn is_empty(&self) -> bool {
        *self == Sections::NONE
    }
}

/// How the traces of a run are taken together.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Shape {
    /// One after another, each on its own (the default).
    #[default]
    Each,
    /// As one profile, binaries merged by GUID and age, as SPDConvert merges them
    /// (`/merge`).
    Merged,
    /// Two traces, BASE and NEW: how NEW differs (`/compare`); with a threshold, an overlap
    /// below it fails the run (`/min-overlap`).
    Compared {
        /// The least overlap each paired source must reach.
        min_overlap: Option<f64>,
    },
}

/// What the decoder must count for a plan: derived once, in [`Plan::needs`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Needs {
    /// Print every record.
    pub events: bool,
    /// Count every address and arc per binary and source (the summary's tables).
    pub counts: bool,
    /// ... the call-stack arcs among them (the exports alone read the distinct stacks).
    pub stack_arcs: bool,
    /// Keep the kinds of records these read ([`Records`]).
    pub records: Reads,
    /// Decode the stream at all: for the above, or for its diagnostics.
    pub stream: bool,
}

/// Two options that cannot go together, or an option the traces given cannot satisfy.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Conflict(String);

impl Conflict {
    fn new(message: impl fmt::Display) -> Conflict {
        Conflict(message.to_string())
    }
}

impl Plan {
    /// What the decoder must count for this plan: what its views read, and `/check` and
    /// `/compare` the summary's tables, call-stack arcs among them.
    pub(crate) fn needs(&self) -> Needs {
        let reads = self.views.reads();
        let compared = matches!(self.shape, Shape::Compared { .. });
        let stack_arcs = reads.stack_arcs() || self.check || compared;
        // /check reads the LBR ranges where it has the code to read them with.
        let lbr = Reads::LBR_RECORDS;
        let mut records = match self.check && !self.images.is_empty() {
            true => reads.and(lbr),
            false => reads,
        };
        // /compare TRACE SPD maps the LBR records onto the SPD's blocks.
        if self.beside.is_some() {
            records = records.and(Reads::SPD_BLOCKS);
        }
        // The flow on an SPD's graph reads the LBR pairs from the summary's table of arcs.
        let spd = self.beside.is_some() || self.matches.iter().any(|m| m.spd.is_some());
        let counts = reads.counts() || stack_arcs || (spd && records.any(Reads::SPD_BLOCKS));
        let events = self.sections.event;
        let keeps = records.any(Records::READ_BY);
        Needs {
            events,
            counts,
            stack_arcs,
            records,
            stream: events || counts || keeps || self.validate,
        }
    }

    /// The verdict of each `/match` file on the program IDs of `tables`.
    pub(crate) fn match_results(&self, tables: &Tables) -> Vec<MatchResult<'_>> {
        matching::results(&self.matches, tables)
    }

    /// Whether the plan prints something of a trace besides its views: sections, the
    /// verdicts of `/validate`, `/check` or `/match`.
    pub(crate) fn shows_besides_views(&self) -> bool {
        !self.sections.is_empty() || self.validate || self.check || !self.matches.is_empty()
    }

    /// Whether the views are printed per trace (else once, of the merged profile).
    pub(crate) fn views_per_trace(&self) -> bool {
        self.shape != Shape::Merged
    }

    /// Whether the view of `kind` is made of each trace on its own: not when the traces are
    /// compared and it is of the two together.
    pub(crate) fn of_each_trace(&self, kind: Kind) -> bool {
        !(matches!(self.shape, Shape::Compared { .. }) && kind.declaration().compared.together())
    }

    /// Whether a view made of each trace on its own reads any of `reads`.
    pub(crate) fn each_trace_reads(&self, reads: Reads) -> bool {
        self.views
            .iter()
            .any(|v| self.of_each_trace(v.kind()) && v.kind().declaration().reads.any(reads))
    }

    /// Whether what the decoder counted must outlive the trace: for the merged profile or
    /// the comparison.
    pub(crate) fn keeps_counts(&self) -> bool {
        self.shape != Shape::Each
    }

    /// Reads the files the command line named ([`Plan::files`]) into the plan: the images of
    /// `/image`, the PDBs of `/pdb`, the files of `/match`, in that order. Those that could
    /// not be read are left out and given back, for the caller to say; a `/match` file that
    /// is no image, PDB or SPD is kept, its verdict says why.
    pub fn load(&mut self) -> Vec<Unreadable> {
        let files = std::mem::take(&mut self.files);
        let mut unreadable = Vec::new();
        for path in files.images {
            match ImageFile::read(&path) {
                Ok(image) => self.images.push(image),
                Err(e) => unreadable.push(Unreadable {
                    option: "image",
                    path,
                    error: Box::new(e),
                }),
            }
        }
        for path in files.pdbs {
            match PdbFile::read(&path) {
                Ok(pdb) => self.pdbs.push(pdb),
                Err(e) => unreadable.push(Unreadable {
                    option: "pdb",
                    path,
                    error: Box::new(e),
                }),
            }
        }
        self.matches
            .extend(files.matches.iter().map(|p| MatchFile::read(p)));
        unreadable
    }

    /// What the views read of the run's options besides their own.
    pub(crate) fn settings(&self) -> Settings<'_> {
        Settings {
            top: self.top,
            order: self.stack_order,
            inline: self.inline,
            matches: &self.matches,
        }
    }

    /// The printer this plan asks for, writing the dump to `out` and diagnostics to `err`.
    /// The command line, the tests and the fuzzer all print through it.
    pub fn printer<W: Write, E: Write>(&self, out: W, err: E) -> Output<W, E> {
        Output::new(self.format, !self.banner(), out, err)
    }

    /// Whether text starts each trace with a `File:` line: when it shows something of the
    /// trace. Verdicts alone (`/validate`, with or without `/match`) name the trace on each
    /// line instead, and folded stacks are for flame-graph tools, which read nothing else.
    pub(crate) fn banner(&self) -> bool {
        let shown = !self.sections.is_empty()
            || self.views.tables()
            || self.check
            || matches!(self.shape, Shape::Compared { .. });
        shown || (!self.validate && (!self.matches.is_empty() || self.match_symbols))
    }

    /// Whether each trace prints little (no section), so that several traces may be
    /// decoded at once, each into memory, and printed in order.
    pub(crate) fn prints_little(&self) -> bool {
        self.sections.is_empty()
    }

    /// Why this plan cannot run over `traces` traces, when it cannot: a view this build
    /// cannot make, a view that does not go with how the traces are taken together (its
    /// declaration says), a number of traces the shape or a file does not take, two files
    /// of one path. The command line reports it as a usage error.
    pub fn conflict(&self, traces: usize) -> Option<Conflict> {
        let views = || self.views.declarations();
        if let Some((name, why)) = views().find_map(|d| Some((d.name, d.missing?))) {
            return Some(Conflict::new(format!("/{name}: {why}")));
        }
        let refused = views().find_map(|d| match (self.shape, d.merged, d.compared) {
            (Shape::Merged, Merged::Refused(why), _) => Some((d.name, why, "/merge", "")),
            (Shape::Compared { .. }, _, Compared::Refused(why, more)) => {
                Some((d.name, why, "/compare", more))
            }
            _ => None,
        });
        if let Some((name, why, with, more)) = refused {
            return Some(Conflict::new(format!(
                "/{name} {why}: it does not go with {with}{more}"
            )));
        }
        let beside = views().find(|d| d.compared == Compared::BesideSpd);
        if let (Some(d), false) = (beside, matches!(self.shape, Shape::Compared { .. })) {
            return Some(Conflict::new(format!(
                "/{} sets a trace beside an SPD's blocks: give /compare TRACE SPD",
                d.name
            )));
        }
        if self.spt.is_some() && (self.shape != Shape::Each || traces != 1) {
            return Some(Conflict::new(format!(
                "/spt writes one ETL's aggregation: give it one trace, without /merge or /compare \
                 ({traces} given)"
            )));
        }
        match self.shape {
            Shape::Compared { .. } if traces != 2 => {
                return Some(Conflict::new(format!(
                    "/compare takes exactly two traces, BASE and NEW ({traces} given)"
                )));
            }
            Shape::Merged if self.views.is_empty() => {
                let merged: Vec<String> = Kind::ALL
                    .iter()
                    .map(|k| k.declaration())
                    .filter(|d| d.merged == Merged::Merged)
                    .map(|d| format!("/{}", d.name))
                    .collect();
                let (last, rest) = merged.split_last().expect("views merge");
                return Some(Conflict::new(format!(
                    "/merge merges the analyses of the traces: give it {} or {last}",
                    rest.join(", ")
                )));
            }
            Shape::Each if traces > 1 => {
                let one = views().find(|d| matches!(d.writes, Writes::File(_)));
                if let Some(d) = one {
                    return Some(Conflict::new(format!(
                        "/{} writes one file: give it one trace, or /merge several \
                         ({traces} given)",
                        d.name
                    )));
                }
            }
            _ => {}
        }
        let files: Vec<(&str, &Path)> = self.views.files().collect();
        for (i, (a, path)) in files.iter().enumerate() {
            if let Some((b, _)) = files[i + 1..].iter().find(|(_, p)| p == path) {
                return Some(Conflict::new(format!(
                    "/{a} and /{b} would both write {}",
                    path.display()
                )));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::views::{View, pprof::Pprof, speedscope::Speedscope, summary::Summary};

    fn plan(views: Views, shape: Shape) -> Plan {
        Plan {
            sections: Sections::NONE,
            views,
            shape,
            ..Plan::default()
        }
    }

    #[test]
    fn the_exports_alone_count_no_call_stack_arcs() {
        let pprof = Views::from_iter([View::Pprof(Pprof("p.pb.gz".into()))]);
        let needs = plan(pprof, Shape::Each).needs();
        assert!(needs.counts && needs.records.stacks() && !needs.stack_arcs && needs.stream);
        let summary = Views::from_iter([View::Summary(Summary)]);
        let needs = plan(summary, Shape::Each).needs();
        assert!(needs.counts && needs.stack_arcs && !needs.records.stacks());
        let compared = plan(Views::default(), Shape::Compared { min_overlap: None });
        assert!(
            compared.needs().stack_arcs,
            "/compare pairs the call-stack arcs"
        );
        let header = Plan {
            sections: Sections {
                header: true,
                ..Sections::NONE
            },
            ..Plan::default()
        };
        assert!(!header.needs().stream, "a header needs no stream");
        let validate = Plan {
            validate: true,
            ..header
        };
        assert_eq!(
            validate.needs(),
            Needs {
                stream: true,
                ..Needs::default()
            }
        );
    }

    #[test]
    fn conflicts_name_both_options() {
        let two = Views::from_iter([
            View::Pprof(Pprof("same".into())),
            View::Speedscope(Speedscope("same".into())),
        ]);
        let e = plan(two.clone(), Shape::Each).conflict(1).unwrap();
        assert_eq!(
            e.to_string(),
            "/pprof and /speedscope would both write same"
        );
        let e = plan(two.clone(), Shape::Each).conflict(2).unwrap();
        assert!(e.to_string().starts_with("/pprof writes one file"), "{e}");
        assert_eq!(plan(two.clone(), Shape::Merged).conflict(2).unwrap(), {
            plan(two, Shape::Each).conflict(1).unwrap()
        });
        let compared = Shape::Compared { min_overlap: None };
        let e = plan(Views::default(), compared).conflict(3).unwrap();
        assert!(e.to_string().contains("(3 given)"), "{e}");
        assert_eq!(plan(Views::default(), compared).conflict(2), None);
        let e = plan(Views::default(), Shape::Merged).conflict(2).unwrap();
        assert_eq!(
            e.to_string(),
            "/merge merges the analyses of the traces: give it /summary, /functions, \
             /folded, /flamegraph, /lines, /callgraph, /coverage, /dyninst, /annotate, \
             /cfg, /pprof, /speedscope or /html"
        );
    }
}
