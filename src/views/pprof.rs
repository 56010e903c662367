//! `/pprof:FILE`: the profile as a gzipped pprof protobuf, for `go tool pprof`, Pyroscope
//! and the other viewers that read it: a sample per distinct call stack (or address, of
//! samples without any), a value per source of samples, functions named with `/pdb`.

use std::path::{Path, PathBuf};

use super::file::{cannot_write, write_file};
use super::{Compared, Declaration, Declared, Opt, Profile, Reads, Writes};
use crate::format::error::Error;
use crate::output::pprof::{self, Stacks};
use crate::output::{Out, Printer};

/// `/pprof:FILE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pprof(pub PathBuf);

impl Declared for Pprof {
    const DECLARATION: Declaration = Declaration {
        lets_go: Reads::STACKS,
        peak: true,
        compared: Compared::Refused("draws one profile", " BASE NEW, which reads two apart"),
        ..Declaration::new(
            "pprof",
            10,
            Writes::File("pprof profile"),
            Reads::SAMPLES.and(Reads::STACKS).and(Reads::INLINE_NAMES),
        )
    };
    type Asked = Option<PathBuf>;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::valued(
        "pprof",
        "FILE",
        "write the trace as a gzipped pprof profile (go tool pprof, Pyroscope) to FILE",
        |a, v| {
            *a = Some(PathBuf::from(v));
            Ok(())
        },
    )];

    fn asked(asked: Option<PathBuf>) -> Result<Option<Self>, String> {
        Ok(asked.map(Pprof))
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.0)
    }

    /// The profile written to its file; the call stacks as decoded are let go of once their
    /// samples are written, when nothing after reads them.
    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        if profile.summary.is_none() {
            return Ok(());
        }
        let handed = profile.take_stacks();
        let Some(counted) = profile.counted() else {
            return Ok(());
        };
        let stacks = match handed {
            Some(stacks) => Stacks::Handed(stacks),
            None => Stacks::Borrowed(counted.stacks),
        };
        let file = profile.file;
        let written = write_file(&self.0, |w| {
            pprof::write(w, &counted, stacks, &profile.namers, &file.label())
        });
        match written {
            Ok(written) if written.clamped => {
                let message = "a count above 2^63 - 1, more than a pprof value holds, was \
                               clamped to it in the pprof profile";
                out.print(|p| p.note(file, message))
            }
            Ok(_) => Ok(()),
            Err(e) => cannot_write(out, file, "pprof profile", &self.0, &e),
        }
    }
}
