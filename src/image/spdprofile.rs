//! What an SPD given with `/match` tells of the binary it belongs to: the functions it
//! names (linker-level names, RVA, code size: a function map without source lines or
//! inline frames) and what it counted of each.
//!
//! Names are not unique in an SPD (static functions of different sources share them), so a
//! function is keyed by its hash, and looked up by RVA. Functions with RVA 0 and size 0
//! were never emitted (inlined everywhere, or folded into another): they name no address.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use crate::image::spd::table::{FunctionTable, TableError};
use crate::image::spd::{self, SpdError};
pub use crate::image::spdblocks::{Span, SpdBlock, SpdBlocks, Spot};
pub use crate::image::spdgraph::{SpdEdge, SpdGraphs, SpdNode};
use crate::image::symbols::Symbols;

/// An SPD's functions, read once for all traces.
#[derive(Clone, Debug)]
pub struct SpdProfile {
    /// The SPD's functions that have code, as a function map.
    pub symbols: Arc<Symbols>,
    /// Every function, in record order, with its counts.
    pub functions: Vec<SpdFunction>,
    /// The emitted functions' places in `functions`, by RVA.
    by_rva: Vec<(u32, usize)>,
    /// The blocks of the emitted functions that hold code: a map of the binary's code.
    pub blocks: SpdBlocks,
    /// Every function's flow graph: its blocks, with code or without, and their edges.
    pub graphs: SpdGraphs,
}

/// One function of an SPD, with what its blocks add up to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpdFunction {
    /// Its 64-bit hash: its key.
    pub hash: u64,
    /// Its name, as the SPD has it (decorated for C++).
    pub name: String,
    /// Its RVA (inferred): 0, with size 0, when it was never emitted.
    pub rva: u32,
    /// Its code size (inferred).
    pub size: u32,
    /// Its entry count: block 1's.
    pub entry: u64,
    /// Its estimated dynamic instructions: Σ block count × instructions (inferred).
    pub dyninst: u64,
    /// Whether any of its blocks holds a count.
    pub counted: bool,
    /// `rec+18`: a checksum of its flow graph's shape (inferred).
    pub checksum: u32,
    /// Its blocks, with code or without.
    pub block_count: u32,
}

impl SpdFunction {
    /// Whether it has code of its own: an RVA and a size.
    pub fn emitted(&self) -> bool {
        self.rva != 0 && self.size != 0
    }

    /// Whether its code holds `rva`.
    pub fn holds(&self, rva: u32) -> bool {
        self.emitted()
            && rva >= self.rva
            && u64::from(rva) < u64::from(self.rva) + u64::from(self.size)
    }
}

/// Why an SPD's functions could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpdReadError {
    /// Its header fails section 10's checks.
    #[error("{0}")]
    Spd(#[from] SpdError),
    /// Its function table fails a check.
    #[error("{0}")]
    Table(#[from] TableError),
}

impl SpdProfile {
    /// Reads the functions of the SPD at `path`.
    pub fn read(path: &Path) -> Result<SpdProfile, SpdReadError> {
        let mut file = File::open(path).map_err(SpdError::Io)?;
        let len = file.metadata().map_err(SpdError::Io)?.len();
        let header = spd::read_header(&mut file, len)?;
        let table = FunctionTable::read(&mut file, &header)?;
        Ok(SpdProfile::from_table(&table))
    }

    /// The functions of a checked table.
    pub fn from_table(table: &FunctionTable) -> SpdProfile {
        let functions: Vec<SpdFunction> = table
            .functions()
            .map(|f| {
                let profile = f.profile();
                SpdFunction {
                    hash: f.hash(),
                    name: f.name().into_owned(),
                    rva: f.rva(),
                    size: f.code_size(),
                    entry: profile.entry,
                    dyninst: profile.dyninst,
                    counted: profile.covered > 0,
                    checksum: f.checksum(),
                    block_count: profile.blocks,
                }
            })
            .collect();
        let named = functions
            .iter()
            .filter(|f| f.emitted())
            .map(|f| (f.rva, f.size, f.name.clone()))
            .collect();
        let mut by_rva: Vec<(u32, usize)> = (functions.iter().enumerate())
            .filter(|(_, f)| f.emitted())
            .map(|(i, f)| (f.rva, i))
            .collect();
        by_rva.sort_unstable();
        let graphs = SpdGraphs::of(table);
        SpdProfile {
            symbols: Arc::new(Symbols::from_named(named)),
            functions,
            by_rva,
            blocks: SpdBlocks::of(table, &graphs),
            graphs,
        }
    }

    /// The place in `functions` of the emitted function whose code holds `rva`: of several
    /// that start at or before it, the last to start.
    pub fn index_at(&self, rva: u32) -> Option<usize> {
        let after = self.by_rva.partition_point(|&(start, _)| start <= rva);
        let (_, i) = self.by_rva[after.checked_sub(1)?];
        self.functions[i].holds(rva).then_some(i)
    }

    /// The emitted function whose code holds `rva`.
    pub fn function_at(&self, rva: u32) -> Option<&SpdFunction> {
        self.index_at(rva).map(|i| &self.functions[i])
    }
}
