//! sptdump's aggregation of an ETL into an SPT (SPEC section 19, "Writing an SPT"): what
//! SPTAggregate does, by our own reading, since its exact choices are not published.
//!
//! - one program ID per binary with samples and a PDB identity (a binary without one cannot
//!   be named in an SPT: its samples are counted as left out);
//! - timer samples as `ETW_INSTR` records, PMC samples under the opcode their profile source
//!   names ([`pmc_opcode`], inferred), RVAs of equal hits together, each group after its
//!   REPEAT;
//! - each run of an LBR record's pairs within one binary as an `LBR` record, newest first
//!   as recorded (inferred), folded with `REPEAT`; each run of a stack walk's frames within
//!   one binary as an `ETW_CALLSTACK` record.

use std::collections::BTreeMap;
use std::fmt;

use crate::etl::kernel::SampleKind;
use crate::etl::recording::Attributed;
use crate::format::opcode::Opcode;
use crate::format::write::{NoRoom, SptWriter};

/// The SPT opcode of a PMC profile source, by the source ids `xperf -pmcsources` lists on
/// Intel machines (inferred: no public recording holds PMC samples, and the ids are the
/// machine's): unhalted core cycles (25, fixed 34) and total cycles (19) as `UNHALT_CYCLE`,
/// instructions retired (26, fixed 33) as `RETIRE_INSTR`, branch instructions (6, retired 30)
/// as `RETIRE_BR_INSTR`, instruction- and data-cache misses (9, 8) as `L1_ICACHE_MISS` and
/// `L1_DCACHE_MISS`. `None` for any other source.
pub fn pmc_opcode(source: u16) -> Option<Opcode> {
    Some(match source {
        19 | 25 | 34 => Opcode::UNHALT_CYCLE,
        26 | 33 => Opcode::RETIRE_INSTR,
        6 | 30 => Opcode::RETIRE_BR_INSTR,
        9 => Opcode::L1_ICACHE_MISS,
        8 => Opcode::L1_DCACHE_MISS,
        _ => return None,
    })
}

/// Why a recording cannot be aggregated.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotAggregated {
    /// PMC samples of a profile source that names no SPT opcode.
    UnknownSource {
        /// The source.
        source: u16,
        /// Its samples.
        samples: u64,
        /// The binary they fell in.
        binary: String,
    },
    /// The SPT has no room for it.
    NoRoom(NoRoom),
}

impl fmt::Display for NotAggregated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotAggregated::UnknownSource {
                source,
                samples,
                binary,
            } => write!(
                f,
                "{samples} PMC samples in {binary} are of profile source {source}, which names no \
                 SPT event (sptdump knows sources 6, 8, 9, 19, 25, 26, 30, 33 and 34, inferred)"
            ),
            NotAggregated::NoRoom(e) => write!(f, "{e}"),
        }
    }
}

/// The SPT of a recording, and what it leaves out.
#[derive(Debug)]
pub struct Aggregated {
    /// The file, to write.
    pub spt: SptWriter,
    /// Binaries with samples but no PDB identity: left out, with their samples.
    pub left_out: Vec<(String, u64)>,
}

/// Aggregates `attributed` into an SPT.
pub fn aggregate(attributed: &Attributed) -> Result<Aggregated, NotAggregated> {
    let mut spt = SptWriter::new();
    let mut left_out = Vec::new();
    let mut progids = vec![None; attributed.binaries.len()];
    for (i, b) in attributed.binaries.iter().enumerate() {
        let Some(id) = &b.identity else {
            left_out.push((b.name.clone(), b.total()));
            continue;
        };
        let progid = spt
            .binary(&b.name, id.guid, id.age)
            .map_err(NotAggregated::NoRoom)?;
        progids[i] = Some(progid);
        // RVAs by opcode and hits, in RVA order.
        let mut groups: BTreeMap<(Opcode, u64), Vec<u32>> = BTreeMap::new();
        for (&(kind, rva), &hits) in &b.samples {
            let opcode = match kind {
                SampleKind::Timer => Opcode::ETW_INSTR,
                SampleKind::Pmc(source) => {
                    pmc_opcode(source).ok_or_else(|| NotAggregated::UnknownSource {
                        source,
                        samples: b.pmc.get(&source).copied().unwrap_or_default(),
                        binary: b.name.clone(),
                    })?
                }
            };
            groups.entry((opcode, hits)).or_default().push(rva);
        }
        for ((opcode, hits), rvas) in &groups {
            spt.ip(progid, *opcode, *hits, rvas);
        }
    }
    for run in &attributed.lbr {
        if let Some(progid) = progids[run.binary] {
            spt.lbr(progid, run.hits, &run.pairs);
        }
    }
    for run in &attributed.stacks {
        if let Some(progid) = progids[run.binary] {
            spt.callstack(progid, run.hits, &run.frames);
        }
    }
    Ok(Aggregated { spt, left_out })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use uuid::Uuid;

    use super::*;
    use crate::etl::recording::{EtlBinary, Identity, LbrRun, StackRun};

    fn binary(name: &str, identity: bool, samples: &[(SampleKind, u32, u64)]) -> EtlBinary {
        let mut b = EtlBinary {
            name: name.to_owned(),
            identity: identity.then(|| Identity {
                guid: Uuid::from_u128(7),
                age: 3,
                pdb: "x.pdb".to_owned(),
            }),
            timer: 0,
            pmc: BTreeMap::new(),
            lbr: 0,
            processes: BTreeSet::new(),
            samples: BTreeMap::new(),
        };
        for &(kind, rva, hits) in samples {
            match kind {
                SampleKind::Timer => b.timer += hits,
                SampleKind::Pmc(s) => *b.pmc.entry(s).or_default() += hits,
            }
            b.samples.insert((kind, rva), hits);
        }
        b
    }

    #[test]
    fn samples_group_by_opcode_and_hits_and_a_binary_without_identity_is_left_out() {
        let a = Attributed {
            binaries: vec![
                binary(
                    "app.exe",
                    true,
                    &[
                        (SampleKind::Timer, 0x30, 2),
                        (SampleKind::Timer, 0x10, 2),
                        (SampleKind::Timer, 0x20, 1),
                        (SampleKind::Pmc(26), 0x40, 5),
                    ],
                ),
                binary("jit.dll", false, &[(SampleKind::Timer, 0x10, 4)]),
            ],
            lbr: vec![
                LbrRun {
                    binary: 0,
                    pairs: vec![(1, 2)],
                    hits: 3,
                },
                LbrRun {
                    binary: 1,
                    pairs: vec![(1, 2)],
                    hits: 1,
                },
            ],
            stacks: vec![StackRun {
                binary: 0,
                frames: vec![5, 6],
                hits: 1,
            }],
            ..Attributed::default()
        };
        let got = aggregate(&a).unwrap();
        assert_eq!(got.left_out, [("jit.dll".to_owned(), 4)]);
        let mut want = SptWriter::new();
        let p = want.binary("app.exe", Uuid::from_u128(7), 3).unwrap();
        want.ip(p, Opcode::RETIRE_INSTR, 5, &[0x40]);
        want.ip(p, Opcode::ETW_INSTR, 1, &[0x20]);
        want.ip(p, Opcode::ETW_INSTR, 2, &[0x10, 0x30]);
        want.lbr(p, 3, &[(1, 2)]);
        want.callstack(p, 1, &[5, 6]);
        assert_eq!(got.spt.to_bytes().unwrap(), want.to_bytes().unwrap());
    }

    #[test]
    fn a_pmc_source_that_names_no_event_is_refused() {
        for (source, opcode) in [
            (25, Opcode::UNHALT_CYCLE),
            (33, Opcode::RETIRE_INSTR),
            (30, Opcode::RETIRE_BR_INSTR),
            (9, Opcode::L1_ICACHE_MISS),
            (8, Opcode::L1_DCACHE_MISS),
        ] {
            assert_eq!(pmc_opcode(source), Some(opcode));
        }
        let a = Attributed {
            binaries: vec![binary("app.exe", true, &[(SampleKind::Pmc(29), 0x40, 5)])],
            ..Attributed::default()
        };
        let e = aggregate(&a).unwrap_err();
        assert_eq!(
            e,
            NotAggregated::UnknownSource {
                source: 29,
                samples: 5,
                binary: "app.exe".to_owned()
            }
        );
        assert!(
            e.to_string()
                .starts_with("5 PMC samples in app.exe are of profile source 29")
        );
    }
}
