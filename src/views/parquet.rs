//! `/parquet:DIR`: the counts as Parquet tables (samples, arcs, stacks), a file per trace
//! under a folder per table, for DuckDB, Spark or pandas to sum across a fleet's traces; and
//! where a binary's LBR records can be read on blocks (its image and PDB, or its SPD matched),
//! its blocks and edges with their flow (`analysis::graphs`).

use std::path::{Path, PathBuf};

use super::{Compared, Declaration, Declared, Merged, Opt, Profile, Reads, Writes};
use crate::format::error::Error;
use crate::output::{Out, Printer};

/// `/parquet:DIR`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parquet(pub PathBuf);

/// Why `/parquet` goes with neither `/merge` nor `/compare`.
const PER_TRACE_TABLES: &str = "writes each trace's tables, for an engine to sum";

impl Declared for Parquet {
    const DECLARATION: Declaration = Declaration {
        merged: Merged::Refused(PER_TRACE_TABLES),
        compared: Compared::Refused(PER_TRACE_TABLES, ""),
        missing: if cfg!(feature = "parquet") {
            None
        } else {
            Some(
                "this sptdump was built without Parquet tables (cargo's \"parquet\" feature, on by default)",
            )
        },
        ..Declaration::new(
            "parquet",
            12,
            Writes::Directory("Parquet tables"),
            Reads::SAMPLES
                .and(Reads::STACK_ARCS)
                .and(Reads::STACKS)
                .and(Reads::LBR_RECORDS)
                .and(Reads::SPD_BLOCKS),
        )
    };
    type Asked = Option<PathBuf>;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::valued(
        "parquet",
        "DIR",
        "write the counts as Parquet tables (samples, arcs, stacks; a file per trace)\n\
         under DIR, for DuckDB, Spark or pandas to sum; with /image and /pdb, or an\n\
         SPD matched, the LBR records' blocks and edges with their flow too",
        |a, v| {
            *a = Some(PathBuf::from(v));
            Ok(())
        },
    )];

    fn asked(asked: Option<PathBuf>) -> Result<Option<Self>, String> {
        Ok(asked.map(Parquet))
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.0)
    }

    /// The trace's tables, written under the directory.
    #[cfg(feature = "parquet")]
    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        use super::file::cannot_write;
        use crate::analysis::graphs;
        use crate::output::parquet;

        let on_spds = super::cfg::on_spds(profile);
        let mut graphs: Vec<_> = profile.ranges.iter().flat_map(graphs::on_images).collect();
        graphs.extend(
            on_spds
                .iter()
                .filter_map(|(progid, _, on)| graphs::on_spd(*progid, on)),
        );
        let Some(counted) = profile.counted() else {
            return Ok(());
        };
        let file = profile.file;
        match parquet::write(&self.0, file.path, &counted, &graphs) {
            Ok(written) => {
                if written.clamped {
                    let message = "a count above 10^38 - 1, more than decimal(38,0) holds, was \
                                   clamped to it in the Parquet tables";
                    out.print(|p| p.note(file, message))?;
                }
                if out.tally.errors > 0 {
                    let message =
                        "the trace has errors: its Parquet tables hold what could be decoded";
                    out.print(|p| p.note(file, message))?;
                }
                Ok(())
            }
            Err(failed) => cannot_write(out, file, "Parquet table", &failed.path, &failed.error),
        }
    }

    /// Refused before anything is read: this build has no Parquet writer.
    #[cfg(not(feature = "parquet"))]
    fn show<P: Printer>(&self, _: &mut Profile<'_>, _: &mut Out<'_, P>) -> Result<(), Error> {
        Ok(())
    }
}
