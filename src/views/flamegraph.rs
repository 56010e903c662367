//! `/flamegraph:FILE`: an interactive SVG flame graph (inferno's) of the call stacks; of a
//! trace without call stacks, of its busiest source of samples by function, under each
//! binary; top-down with `/icicle`. Under `/compare`, a differential flame graph of NEW
//! against BASE.

use std::io;
use std::path::{Path, PathBuf};

use super::compared::Both;
use super::file::{cannot_write, write_file};
use super::profile::FlameInput;
use super::{Compared, Declaration, Declared, Opt, Profile, Reads, Writes};
use crate::analysis::profile::{self, BinaryStacks, StackProfile};
use crate::analysis::sampled;
use crate::format::error::Error;
use crate::output::{Out, Printer, flamegraph};

/// `/flamegraph:FILE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlameGraph {
    /// Where it is written.
    pub path: PathBuf,
    /// Drawn top-down, the outermost frame at the top (`/icicle`).
    pub icicle: bool,
}

/// What the options of `/flamegraph` chose.
#[derive(Debug, Default)]
pub(crate) struct Chosen {
    path: Option<PathBuf>,
    icicle: bool,
}

impl Declared for FlameGraph {
    const DECLARATION: Declaration = Declaration {
        compared: Compared::Both,
        ..Declaration::new(
            "flamegraph",
            9,
            Writes::File("flame graph"),
            Reads::FLAME.and(Reads::PROFILE).and(Reads::INLINE_NAMES),
        )
    };
    type Asked = Chosen;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[
        Opt::valued(
            "flamegraph",
            "FILE",
            "write an interactive SVG flame graph of the call stacks to FILE",
            |a, v| {
                a.path = Some(PathBuf::from(v));
                Ok(())
            },
        ),
        Opt::flag(
            "icicle",
            "draw /flamegraph top-down, the outermost frame at the top (an icicle graph)",
            |a: &mut Chosen| a.icicle = true,
        )
        .output(),
    ];

    fn asked(asked: Chosen) -> Result<Option<Self>, String> {
        match asked.path {
            Some(path) => Ok(Some(FlameGraph {
                path,
                icicle: asked.icicle,
            })),
            None if asked.icicle => {
                Err("/icicle says how /flamegraph draws: it goes with /flamegraph:FILE".into())
            }
            None => Ok(None),
        }
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }

    /// Always a file: the call stacks when there are any; else one IP event's samples (the
    /// one with the most hits) or the LBR branches' targets, each address's function (and
    /// what was inlined there) under its binary; else a picture that says there is nothing
    /// to draw.
    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        let file = profile.file;
        let label = file.label();
        let (title, folded, note) = flame_input(&label, &profile.folded, &profile.flat.sampled);
        if let Some(note) = note {
            out.print(|p| p.note(file, &note))?;
        }
        let icicle = self.icicle;
        if let Err(e) = write_file(&self.path, |w| flamegraph::write(w, &title, folded, icicle)) {
            cannot_write(out, file, "flame graph", &self.path, &e)?;
        }
        Ok(())
    }

    fn compared<P: Printer>(&self, both: &mut Both<'_>, printer: &mut P) -> io::Result<()> {
        let drawing = both.drawing(printer)?;
        let written = write_file(&self.path, |w| drawing.draw(w, self.icicle));
        both.written(printer, "flame graph", &self.path, written)
    }
}

/// What a flame graph of the profile draws, and its title: the call stacks when there are
/// any; else one IP event's samples (the one with the most hits) or the LBR branches'
/// targets, each address's function (and what was inlined there) under its binary; else
/// nothing; with a note saying what was drawn when it is not the call stacks.
pub(crate) fn flame_input(
    label: &str,
    profile: &StackProfile,
    sampled: &[BinaryStacks],
) -> FlameInput {
    if !profile.is_empty() {
        return (
            label.to_owned(),
            profile.drawn(flamegraph::DRAWN_PARTS),
            None,
        );
    }
    let Some(source) = sampled::busiest(sampled.iter().map(|b| (b.source, b.hits))) else {
        let note = "no samples: the flame graph says so and shows nothing";
        return (label.to_owned(), Vec::new(), Some(note.to_owned()));
    };
    let drawn = flamegraph::source_drawn(source);
    (
        format!("{label}: {drawn} (no call stacks)"),
        profile::folded_by_binary(sampled, source, Some(flamegraph::DRAWN_PARTS)),
        Some(format!(
            "no call stacks: the flame graph shows {drawn}, by function"
        )),
    )
}
