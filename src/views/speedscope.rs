//! `/speedscope:FILE`: the profile in speedscope's JSON format, a sampled profile per
//! binary and source, frames named with `/pdb` (inline frames included).

use std::path::{Path, PathBuf};

use super::file::{cannot_write, write_file};
use super::{Compared, Declaration, Declared, Opt, Profile, Reads, Writes};
use crate::format::error::Error;
use crate::output::{Out, Printer, speedscope};

/// `/speedscope:FILE`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Speedscope(pub PathBuf);

impl Declared for Speedscope {
    const DECLARATION: Declaration = Declaration {
        lets_go: Reads::PROFILE,
        compared: Compared::Refused("draws one profile", " BASE NEW, which reads two apart"),
        ..Declaration::new(
            "speedscope",
            13,
            Writes::File("speedscope file"),
            Reads::SAMPLES.and(Reads::PROFILE).and(Reads::INLINE_NAMES),
        )
    };
    type Asked = Option<PathBuf>;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::valued(
        "speedscope",
        "FILE",
        "write the trace in speedscope's JSON format to FILE",
        |a, v| {
            *a = Some(PathBuf::from(v));
            Ok(())
        },
    )];

    fn asked(asked: Option<PathBuf>) -> Result<Option<Self>, String> {
        Ok(asked.map(Speedscope))
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.0)
    }

    /// The profile written to its file; speedscope lets go of each binary's call stacks by
    /// key once it has written them: nothing after it reads them.
    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        let folded = std::mem::take(&mut profile.folded);
        let Some(counted) = profile.counted() else {
            return Ok(());
        };
        let file = profile.file;
        let written = write_file(&self.0, |w| {
            speedscope::write(w, &counted, &profile.namers, folded, &file.label())
        });
        if let Err(e) = written {
            cannot_write(out, file, "speedscope file", &self.0, &e)?;
        }
        Ok(())
    }
}
