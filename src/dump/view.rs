//! The views of a profile, each declared once: what it reads of a profile, where it writes,
//! and what it is when the traces are merged or compared.
//!
//! Everything else about a view is derived from its [`Declaration`]: what the decoder must
//! count ([`Plan::needs`](super::Plan)), which combinations are refused
//! ([`Plan::conflict`](super::Plan::conflict)), when what it reads can be let go
//! (`views.rs`), whether text starts a trace with its `File:` line. A new view is a variant
//! of [`View`] and of [`Kind`], its declaration in [`Kind::declaration`] (a `match`: a view
//! without one does not compile), its arm in the walk of `views.rs` (a `match` too) and the
//! module that makes it.
//!
//! The order of [`Kind`] is the order in which the views of a profile are shown.

use std::path::{Path, PathBuf};

/// A view of a profile: what one option asks to be shown or written.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum View {
    /// Per binary: totals per event kind and the top entries (`/summary`).
    Summary,
    /// Inclusive and exclusive call-stack hits per function (`/functions`).
    Functions,
    /// The call stacks, folded (`/folded`).
    Folded,
    /// An SVG flame graph of the call stacks, written to this file (`/flamegraph:FILE`).
    FlameGraph(PathBuf),
    /// The hottest source lines per binary and source (`/lines`).
    Lines,
    /// Who calls whom, per binary, from LBR and call stacks (`/callgraph`); only the
    /// callers and callees of a function, when one is named (`/callgraph:FUNCTION`).
    CallGraph(Option<String>),
    /// Per function with any count, its basic blocks and those the LBR ranges cover
    /// (`/coverage`).
    Coverage,
    /// The functions that ran the most instructions by the LBR ranges, at most this many per
    /// binary (`/dyninst[:N]`).
    Dyninst(usize),
    /// One function's instructions with their counts, taken branches, IP samples and source
    /// lines (`/annotate:FUNCTION`).
    Annotate(String),
    /// A gzipped pprof profile, written to this file (`/pprof:FILE`).
    Pprof(PathBuf),
    /// The counts as Parquet tables, written under this directory (`/parquet:DIR`), a file
    /// per trace and table.
    Parquet(PathBuf),
    /// A speedscope file, written to this file (`/speedscope:FILE`).
    Speedscope(PathBuf),
    /// A self-contained HTML report, written to this file (`/html:FILE`).
    Html(PathBuf),
}

/// Which view a [`View`] is, without its file: the order in which they are shown.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `/summary`.
    Summary,
    /// `/functions`.
    Functions,
    /// `/folded`.
    Folded,
    /// `/flamegraph:FILE`.
    FlameGraph,
    /// `/lines`.
    Lines,
    /// `/callgraph`.
    CallGraph,
    /// `/coverage`.
    Coverage,
    /// `/dyninst`.
    Dyninst,
    /// `/annotate:FUNCTION`.
    Annotate,
    /// `/pprof:FILE`.
    Pprof,
    /// `/parquet:DIR`.
    Parquet,
    /// `/speedscope:FILE`.
    Speedscope,
    /// `/html:FILE`.
    Html,
}

/// What a view is: its option, what it reads, where it writes, and what it is under
/// `/merge` and `/compare`.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Declaration {
    /// The option's name: `summary` for `/summary`.
    pub name: &'static str,
    /// Where it writes.
    pub writes: Writes,
    /// What it reads of a profile.
    pub reads: Reads,
    /// What it is of traces merged (`/merge`).
    pub merged: Merged,
    /// What it is of two traces compared (`/compare BASE NEW`).
    pub compared: Compared,
    /// Why this build cannot make it, when it cannot (a cargo feature left out).
    pub missing: Option<&'static str>,
}

/// Where a view writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writes {
    /// Tables of the top entries (`/top`) on standard output, under the trace's `File:`
    /// line.
    Tables,
    /// Lines for another tool on standard output, and nothing else.
    Lines,
    /// One file: what it holds (`flame graph`), for messages.
    File(&'static str),
    /// Files under one directory: what they are, for messages.
    Directory(&'static str),
}

/// What a view is of traces merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Merged {
    /// The view of the merged profile, once.
    Merged,
    /// Refused: why, as `/NAME WHY: it does not go with /merge`.
    Refused(&'static str),
}

/// What a view is of two traces compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compared {
    /// Each trace's own, as without `/compare`.
    EachTrace,
    /// Of the two together: how NEW differs from BASE (`dump/compare.rs`); not shown per
    /// trace.
    Both,
    /// Refused: why, as `/NAME WHY: it does not go with ...`, and what follows the option.
    Refused(&'static str, &'static str),
}

/// What a view reads of a profile, and when: a set of the structures the decoder fills and
/// the views derive. The walk of `views.rs` lets each go once no view after reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reads(u16);

impl Reads {
    /// Nothing.
    pub const NOTHING: Reads = Reads(0);
    /// The summary's tables of addresses and LBR arcs per binary and source, before any
    /// call stack is drawn (`/summary` is shown first).
    pub const SAMPLES_FIRST: Reads = Reads(1);
    /// The summary's tables of addresses and LBR arcs, also after the call stacks are drawn.
    pub const SAMPLES: Reads = Reads(1 << 1);
    /// The summary's call-stack arcs, before the call stacks are folded.
    pub const STACK_ARCS: Reads = Reads(1 << 2);
    /// The summary's call-stack arcs, also after the call stacks are folded.
    pub const STACK_ARCS_AFTER: Reads = Reads(1 << 3);
    /// The distinct call stacks as decoded, before they are folded by key.
    pub const STACKS: Reads = Reads(1 << 4);
    /// The distinct call stacks as decoded, also after they are folded by key.
    pub const STACKS_AFTER: Reads = Reads(1 << 5);
    /// The call stacks folded by key, their frames named.
    pub const PROFILE: Reads = Reads(1 << 6);
    /// Addresses named with what was inlined there (with `/pdb`).
    pub const INLINE_NAMES: Reads = Reads(1 << 7);
    /// The `/functions` lines of every binary and source.
    pub const FUNCTIONS: Reads = Reads(1 << 8);
    /// A flame graph's input: the call stacks, or the samples of a trace without any.
    pub const FLAME: Reads = Reads(1 << 9);
    /// The distinct LBR records, whole: read as branch sequences.
    pub const LBR_RECORDS: Reads = Reads(1 << 10);

    /// Both sets.
    pub const fn and(self, other: Reads) -> Reads {
        Reads(self.0 | other.0)
    }

    /// Whether this set holds anything of `other`.
    pub const fn any(self, other: Reads) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether the decoder must count the summary's tables for these.
    pub const fn counts(self) -> bool {
        self.any(
            Reads::SAMPLES_FIRST
                .and(Reads::SAMPLES)
                .and(Reads::STACK_ARCS)
                .and(Reads::STACK_ARCS_AFTER)
                .and(Reads::FUNCTIONS)
                .and(Reads::FLAME),
        )
    }

    /// Whether the summary must count the call-stack arcs for these.
    pub const fn stack_arcs(self) -> bool {
        self.any(Reads::STACK_ARCS.and(Reads::STACK_ARCS_AFTER))
    }

    /// Whether the decoder must keep the distinct LBR records for these.
    pub const fn lbr_records(self) -> bool {
        self.any(Reads::LBR_RECORDS)
    }

    /// Whether the decoder must keep the distinct call stacks for these.
    pub const fn stacks(self) -> bool {
        self.any(
            Reads::STACKS
                .and(Reads::STACKS_AFTER)
                .and(Reads::PROFILE)
                .and(Reads::FUNCTIONS)
                .and(Reads::FLAME),
        )
    }
}

impl Kind {
    /// Every view, in the order they are shown.
    pub const ALL: [Kind; 13] = [
        Kind::Summary,
        Kind::Functions,
        Kind::Folded,
        Kind::FlameGraph,
        Kind::Lines,
        Kind::CallGraph,
        Kind::Coverage,
        Kind::Dyninst,
        Kind::Annotate,
        Kind::Pprof,
        Kind::Parquet,
        Kind::Speedscope,
        Kind::Html,
    ];

    /// What this view is.
    pub const fn declaration(self) -> Declaration {
        use Compared::{Both, EachTrace};
        use Reads as R;
        let one_profile =
            Compared::Refused("draws one profile", " BASE NEW, which reads two apart");
        let named = R::PROFILE.and(R::INLINE_NAMES);
        match self {
            Kind::Summary => view(
                "summary",
                Writes::Tables,
                R::SAMPLES_FIRST.and(R::STACK_ARCS),
                EachTrace,
            ),
            Kind::Functions => view(
                "functions",
                Writes::Tables,
                R::FUNCTIONS.and(R::SAMPLES).and(named),
                Both,
            ),
            Kind::Folded => view("folded", Writes::Lines, R::FLAME.and(named), EachTrace),
            Kind::FlameGraph => view(
                "flamegraph",
                Writes::File("flame graph"),
                R::FLAME.and(named),
                Both,
            ),
            Kind::Lines => view(
                "lines",
                Writes::Tables,
                R::SAMPLES.and(R::STACKS_AFTER),
                EachTrace,
            ),
            Kind::CallGraph => {
                let reads = R::SAMPLES.and(R::STACK_ARCS_AFTER);
                view("callgraph", Writes::Tables, reads, EachTrace)
            }
            Kind::Coverage | Kind::Dyninst | Kind::Annotate => self.of_lbr_ranges(),
            Kind::Pprof => {
                let reads = R::SAMPLES.and(R::STACKS_AFTER).and(R::INLINE_NAMES);
                view("pprof", Writes::File("pprof profile"), reads, one_profile)
            }
            Kind::Parquet => Declaration {
                merged: Merged::Refused(PER_TRACE_TABLES),
                missing: if cfg!(feature = "parquet") {
                    None
                } else {
                    Some(
                        "this sptdump was built without Parquet tables (cargo's \"parquet\" feature, on by default)",
                    )
                },
                ..view(
                    "parquet",
                    Writes::Directory("Parquet tables"),
                    R::SAMPLES.and(R::STACK_ARCS_AFTER).and(R::STACKS_AFTER),
                    Compared::Refused(PER_TRACE_TABLES, ""),
                )
            },
            Kind::Speedscope => view(
                "speedscope",
                Writes::File("speedscope file"),
                R::SAMPLES.and(named),
                one_profile,
            ),
            Kind::Html => {
                let tables = R::SAMPLES
                    .and(R::STACK_ARCS)
                    .and(R::STACKS)
                    .and(R::FUNCTIONS)
                    .and(R::LBR_RECORDS);
                view(
                    "html",
                    Writes::File("HTML report"),
                    tables.and(named).and(R::FLAME),
                    Both,
                )
            }
        }
    }
}

impl Kind {
    /// The declaration of a view of the LBR records read as ranges: tables of each trace,
    /// of the merged profile; `/annotate` reads the samples too.
    const fn of_lbr_ranges(self) -> Declaration {
        // Under /compare, coverage and instructions are set side by side per function;
        // a function's code is each trace's own.
        let (name, reads, compared) = match self {
            Kind::Coverage => ("coverage", Reads::LBR_RECORDS, Compared::Both),
            Kind::Dyninst => ("dyninst", Reads::LBR_RECORDS, Compared::Both),
            _ => (
                "annotate",
                Reads::LBR_RECORDS.and(Reads::SAMPLES),
                Compared::EachTrace,
            ),
        };
        view(name, Writes::Tables, reads, compared)
    }
}

/// A view of the merged profile under `/merge`, which this build makes.
const fn view(name: &'static str, writes: Writes, reads: Reads, compared: Compared) -> Declaration {
    Declaration {
        name,
        writes,
        reads,
        merged: Merged::Merged,
        compared,
        missing: None,
    }
}

/// Why `/parquet` goes with neither `/merge` nor `/compare`.
const PER_TRACE_TABLES: &str = "writes each trace's tables, for an engine to sum";

impl View {
    /// Which view this is.
    pub const fn kind(&self) -> Kind {
        match self {
            View::Summary => Kind::Summary,
            View::Functions => Kind::Functions,
            View::Folded => Kind::Folded,
            View::FlameGraph(_) => Kind::FlameGraph,
            View::Lines => Kind::Lines,
            View::CallGraph(_) => Kind::CallGraph,
            View::Coverage => Kind::Coverage,
            View::Dyninst(_) => Kind::Dyninst,
            View::Annotate(_) => Kind::Annotate,
            View::Pprof(_) => Kind::Pprof,
            View::Parquet(_) => Kind::Parquet,
            View::Speedscope(_) => Kind::Speedscope,
            View::Html(_) => Kind::Html,
        }
    }

    /// What this view is.
    pub const fn declaration(&self) -> Declaration {
        self.kind().declaration()
    }

    /// The file or directory it writes, when it writes one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            View::FlameGraph(path)
            | View::Pprof(path)
            | View::Parquet(path)
            | View::Speedscope(path)
            | View::Html(path) => Some(path),
            View::Summary
            | View::Functions
            | View::Folded
            | View::Lines
            | View::CallGraph(_)
            | View::Coverage
            | View::Dyninst(_)
            | View::Annotate(_) => None,
        }
    }
}

/// The analyses and exports of a profile, of each trace or of all of them merged: at most
/// one of each kind, in the order they are shown.
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Views {
    list: Vec<View>,
    /// The flame graph drawn top-down, the outermost frame at the top (`/icicle`).
    pub icicle: bool,
}

impl Views {
    /// Asks for `view`, in place of one of its kind asked for before.
    pub fn add(&mut self, view: View) {
        let kind = view.kind();
        match self.list.binary_search_by_key(&kind, View::kind) {
            Ok(at) => self.list[at] = view,
            Err(at) => self.list.insert(at, view),
        }
    }

    /// The views asked for, in the order they are shown.
    pub fn iter(&self) -> impl Iterator<Item = &View> {
        self.list.iter()
    }

    /// Whether no view is asked for.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether `kind` is asked for.
    pub fn has(&self, kind: Kind) -> bool {
        self.get(kind).is_some()
    }

    /// The view of `kind`, when asked for.
    pub fn get(&self, kind: Kind) -> Option<&View> {
        let at = self.list.binary_search_by_key(&kind, View::kind).ok()?;
        Some(&self.list[at])
    }

    /// The file or directory the view of `kind` writes, when it is asked for.
    pub fn path(&self, kind: Kind) -> Option<&Path> {
        self.get(kind)?.path()
    }

    /// Whether a view asked for reads any of `reads`.
    pub fn read(&self, reads: Reads) -> bool {
        self.list.iter().any(|v| v.declaration().reads.any(reads))
    }

    /// Whether a view asked for, other than `kind`, reads any of `reads`.
    pub fn read_by_others(&self, kind: Kind, reads: Reads) -> bool {
        self.list
            .iter()
            .any(|v| v.kind() != kind && v.declaration().reads.any(reads))
    }

    /// Everything the views asked for read.
    pub fn reads(&self) -> Reads {
        self.list
            .iter()
            .fold(Reads::NOTHING, |all, v| all.and(v.declaration().reads))
    }

    /// The single files the views write, each with its option's name.
    pub fn files(&self) -> impl Iterator<Item = (&'static str, &Path)> {
        self.written()
            .filter(|(d, _)| matches!(d.writes, Writes::File(_)))
            .map(|(d, path)| (d.name, path))
    }

    /// Every file and directory the views write, with their declarations.
    pub fn written(&self) -> impl Iterator<Item = (Declaration, &Path)> {
        self.list
            .iter()
            .filter_map(|v| Some((v.declaration(), v.path()?)))
    }

    /// Whether a view prints tables of the top entries (`/top`) on standard output:
    /// `/summary`, `/functions`, `/lines`. Text shows them under the trace's `File:` line.
    pub fn tables(&self) -> bool {
        self.list
            .iter()
            .any(|v| v.declaration().writes == Writes::Tables)
    }
}

impl FromIterator<View> for Views {
    fn from_iter<I: IntoIterator<Item = View>>(views: I) -> Self {
        let mut all = Views::default();
        views.into_iter().for_each(|v| all.add(v));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_listed_once_in_the_order_shown() {
        let mut sorted = Kind::ALL;
        sorted.sort();
        assert_eq!(sorted, Kind::ALL);
        for (i, kind) in Kind::ALL.iter().enumerate() {
            assert!(!Kind::ALL[i + 1..].contains(kind), "{kind:?} twice");
        }
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.declaration().name).collect();
        for (i, name) in names.iter().enumerate() {
            assert!(!names[i + 1..].contains(name), "/{name} twice");
        }
    }

    #[test]
    fn a_view_reads_something_and_what_it_writes_has_a_path() {
        for kind in Kind::ALL {
            let d = kind.declaration();
            assert_ne!(d.reads, Reads::NOTHING, "/{} reads nothing", d.name);
            assert!(
                d.reads.counts() || d.reads.stacks() || d.reads.lbr_records(),
                "/{} needs nothing decoded",
                d.name
            );
        }
        let views: Views = [
            View::Html("r.html".into()),
            View::Summary,
            View::Parquet("t".into()),
            View::Pprof("p".into()),
        ]
        .into_iter()
        .collect();
        let kinds: Vec<Kind> = views.iter().map(View::kind).collect();
        assert_eq!(
            kinds,
            [Kind::Summary, Kind::Pprof, Kind::Parquet, Kind::Html]
        );
        let files: Vec<&str> = views.files().map(|(name, _)| name).collect();
        assert_eq!(files, ["pprof", "html"], "a directory is not a file");
        assert_eq!(views.written().count(), 3);
        assert!(views.tables());
    }

    #[test]
    fn a_view_asked_for_twice_is_the_last_one() {
        let mut views = Views::default();
        views.add(View::Pprof("a".into()));
        views.add(View::Pprof("b".into()));
        assert_eq!(views.iter().count(), 1);
        assert_eq!(views.path(Kind::Pprof), Some(Path::new("b")));
    }
}
