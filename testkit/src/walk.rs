//! LBR traces made by a random walk over a real image's control flow, with the walk's own
//! instruction counts kept as the truth the LBR views are compared against: a random walk,
//! not an execution.
//!
//! The walk reads the code as `llvm-objdump` disassembled it (`*.objdump.txt`, through
//! [`fixtures::disassembly`]), not as sptdump decodes it: it starts at the entry point, runs
//! each instruction in turn, follows calls and returns, takes each conditional jump with a
//! bias drawn from its address (some nearly always, some nearly never, some half the time),
//! whatever the program's data would decide, and runs the entry point again when it returns
//! (that return is a pair of its records). Every taken branch enters a last-branch stack of
//! `depth` entries; about every `period` taken branches the stack is sampled, as a
//! processor's PMC interrupt does, into one LBR record.
//!
//! Its paths are paths of the code, but not the ones the program takes: the walk is for the
//! tests whose point is a trace with known instruction counts (`tests/it/ranges.rs`) and
//! for benchmark traces of any size (`examples/synth.rs --lbr-walk`). What `lbr.exe` does
//! when it runs is `testdata/pe/lbr.spt`, recorded from an execution ([`crate::recording`]).

use std::collections::{BTreeMap, HashMap, VecDeque};

use crate::builder::{Guid, RETIRE_BR_INSTR, SptBuilder};
use crate::fixtures::{self, Function};

/// How to walk and sample.
#[derive(Clone, Copy, Debug)]
pub struct Sampling {
    /// How many LBR records to take.
    pub records: usize,
    /// The last-branch stack's depth: the pairs in a record (16 or 32 on real processors).
    pub depth: usize,
    /// About how many taken branches lie between two samples (each period is drawn between
    /// half and one and a half times this, so that samples do not lock onto a loop).
    pub period: usize,
    /// The seed of the walk's choices.
    pub seed: u64,
}

/// What a walk ran and what it sampled.
#[derive(Clone, Debug, Default)]
pub struct Walk {
    /// The LBR records, each as `(from, to)` pairs, the most recent first.
    pub records: Vec<Vec<(u32, u32)>>,
    /// The instructions each function ran, by name, over the whole walk.
    pub instructions: BTreeMap<String, u64>,
}

impl Walk {
    /// The share of `function` in the instructions the walk ran.
    pub fn share(&self, function: &str) -> f64 {
        let all: u64 = self.instructions.values().sum();
        self.instructions.get(function).copied().unwrap_or(0) as f64 / all.max(1) as f64
    }
}

/// Walks `image`'s code (its listing and `pdb`'s functions, as fixtures) from `entry`.
pub fn walk(image: &str, pdb: &str, entry: &str, sampling: Sampling) -> Walk {
    let code = fixtures::disassembly(image, pdb);
    let functions = fixtures::functions(pdb);
    let start = functions
        .iter()
        .find(|f| f.name == entry)
        .map(|f| f.rva)
        .expect("the entry point is a function of the PDB");
    let at: HashMap<u32, usize> = code.iter().enumerate().map(|(i, c)| (c.0, i)).collect();
    let mut rng = Rng(sampling.seed ^ 0x9E37_79B9_7F4A_7C15);
    let mut walk = Walk::default();
    let mut stack: Vec<u32> = Vec::new();
    let mut lbr: VecDeque<(u32, u32)> = VecDeque::with_capacity(sampling.depth);
    let mut until_sample = rng.period(sampling.period);
    let mut pc = at[&start];
    while walk.records.len() < sampling.records {
        let (rva, mnemonic, target) = &code[pc];
        let name = holding(&functions, *rva).map_or("?", |f| f.name.as_str());
        *walk.instructions.entry(name.to_owned()).or_default() += 1;
        let next = code.get(pc + 1).map(|c| c.0);
        let taken = match mnemonic.as_str() {
            // When the entry point returns, the program runs again, as if whatever called it
            // called it again at once: the return is a branch to the entry point.
            "ret" => Some(stack.pop().unwrap_or(start)),
            "call" => {
                stack.push(next.expect("a call is followed by an instruction"));
                *target
            }
            "jmp" => *target,
            m if m.starts_with('j') && rng.taken(bias(*rva)) => *target,
            _ => None,
        };
        let Some(to) = taken else {
            pc += 1;
            continue;
        };
        if lbr.len() == sampling.depth {
            lbr.pop_back();
        }
        lbr.push_front((*rva, to));
        pc = at[&to];
        until_sample -= 1;
        if until_sample == 0 {
            until_sample = rng.period(sampling.period);
            if lbr.len() == sampling.depth {
                walk.records.push(lbr.iter().copied().collect());
            }
        }
    }
    walk
}

/// How often the conditional jump at `rva` is taken: one of four biases, by its address.
fn bias(rva: u32) -> f64 {
    const BIASES: [f64; 4] = [0.9, 0.1, 0.5, 0.75];
    BIASES[(rva.wrapping_mul(0x9E37_79B1) >> 30) as usize]
}

/// The function of `functions` holding `rva`.
fn holding(functions: &[Function], rva: u32) -> Option<&Function> {
    functions
        .iter()
        .filter(|f| f.rva <= rva && f.size.is_none_or(|size| rva < f.rva + size))
        .max_by_key(|f| f.rva)
}

/// A trace of `binary` (with `image`'s CodeView identity) as the SPGO tutorial records
/// one: per sample, the instruction retired (`RETIRE_BR_INSTR`, where the newest branch
/// went) and the LBR record, its pairs written newest first, or oldest first when
/// `oldest_first`. No call stacks.
pub fn trace(
    image: &str,
    binary: &str,
    records: &[Vec<(u32, u32)>],
    oldest_first: bool,
) -> Vec<u8> {
    let mut b = SptBuilder::new();
    let (guid, age) = fixtures::codeview(image);
    let name = b.string(binary);
    b.program_id(Guid(guid), age, name);
    b.binary_id(0);
    for record in records {
        b.ip(RETIRE_BR_INSTR, &[record[0].1]);
        let mut pairs = record.clone();
        if oldest_first {
            pairs.reverse();
        }
        b.lbr(&pairs);
    }
    b.build()
}

/// 400 records of 16 pairs, about every 37 taken branches: the size of
/// `testdata/pe/lbr.spt`'s recording, for walks that stand beside it.
pub const LBR_TRACE: Sampling = Sampling {
    records: 400,
    depth: 16,
    period: 37,
    seed: 1,
};

/// splitmix64: the walk's choices, the same for the same seed everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Whether an event of probability `p` happens.
    fn taken(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }

    /// A sampling period between half and one and a half times `period`, at least 1.
    fn period(&mut self, period: usize) -> usize {
        let spread = period.max(1) as u64;
        (spread / 2 + self.next() % (spread + 1)).max(1) as usize
    }
}
