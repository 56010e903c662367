//! `/compare BASE NEW` with `/coverage` or `/dyninst`: how what SPGO will learn from each
//! trace's LBR ranges moved (docs/output.md, "How two traces differ").
//!
//! Binaries are paired by name, case-insensitively, as `/compare` pairs them; functions by
//! name, since the same function has other addresses in another build (two functions of one
//! name, static functions of different sources, are added together on each side). A binary
//! is compared only when both traces' ranges were read under an order: a share of ranges
//! read under no order would be a guess.

use std::collections::BTreeMap;

use crate::analysis::lbr::ranges::{BinaryRanges, Order, RangeReport};
use crate::analysis::share;

/// What one function ran and covered in each trace.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FunctionMoved {
    /// The function's name.
    pub name: String,
    /// Its instructions by the ranges, in BASE and NEW.
    pub instructions: [u128; 2],
    /// Its share of the binary's instructions, in BASE and NEW.
    pub share: [f64; 2],
    /// Its blocks (padding left out) and those covered, in BASE and NEW; 0 and 0 where it
    /// did not run.
    pub blocks: [u32; 2],
    /// Its covered blocks, in BASE and in NEW.
    pub covered: [u32; 2],
}

impl FunctionMoved {
    /// `share[1] - share[0]`.
    pub(crate) fn delta(&self) -> f64 {
        self.share[1] - self.share[0]
    }
}

/// One binary of both traces.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct BinaryMoved {
    /// Its name, as BASE spells it.
    pub name: String,
    /// The order each trace's ranges were read under; `None` where neither order reached the
    /// threshold or a file was missing: then no function is compared.
    pub order: [Option<Order>; 2],
    /// The instructions of every function, in BASE and NEW.
    pub instructions: [u128; 2],
    /// The blocks of the functions that ran, and those covered, in BASE and NEW.
    pub blocks: [u64; 2],
    /// The binary's covered blocks, in BASE and in NEW.
    pub covered: [u64; 2],
    /// The functions whose share moved most, `top` of them, by |delta| descending, then
    /// by name.
    pub functions: Vec<FunctionMoved>,
    /// How many functions ran in either trace, before `top` cut them.
    pub ran: usize,
}

impl BinaryMoved {
    /// Whether both traces' ranges were read, so that the figures compare.
    pub(crate) fn read(&self) -> bool {
        self.order.iter().all(Option::is_some)
    }
}

/// Every binary with LBR ranges in both traces, in BASE's order.
pub(crate) fn compare(base: &RangeReport, new: &RangeReport, top: usize) -> Vec<BinaryMoved> {
    let mut binaries = Vec::new();
    for b in &base.binaries {
        let key = b.name.to_ascii_lowercase();
        if let Some(n) = new
            .binaries
            .iter()
            .find(|n| n.name.to_ascii_lowercase() == key)
        {
            binaries.push(binary([b, n], top));
        }
    }
    binaries
}

fn binary(sides: [&BinaryRanges; 2], top: usize) -> BinaryMoved {
    let order = sides.map(|b| b.order);
    let mut moved = BinaryMoved {
        name: sides[0].name.clone(),
        order,
        instructions: sides.map(|b| b.instructions),
        blocks: sides.map(|b| b.blocks().0),
        covered: sides.map(|b| b.blocks().1),
        functions: Vec::new(),
        ran: 0,
    };
    if !moved.read() {
        return moved;
    }
    let mut by_name: BTreeMap<&str, FunctionMoved> = BTreeMap::new();
    for (i, b) in sides.iter().enumerate() {
        for f in &b.functions {
            let m = by_name.entry(&f.name).or_insert_with(|| FunctionMoved {
                name: f.name.clone(),
                instructions: [0; 2],
                share: [0.0; 2],
                blocks: [0; 2],
                covered: [0; 2],
            });
            m.instructions[i] = m.instructions[i].saturating_add(f.instructions);
            m.blocks[i] = m.blocks[i].saturating_add(f.blocks);
            m.covered[i] = m.covered[i].saturating_add(f.covered);
        }
    }
    let mut functions: Vec<FunctionMoved> = by_name.into_values().collect();
    for f in &mut functions {
        for i in 0..2 {
            f.share[i] = share(f.instructions[i], moved.instructions[i]);
        }
    }
    moved.ran = functions.len();
    // Stable: ties stay in name order.
    functions.sort_by(|a, b| b.delta().abs().total_cmp(&a.delta().abs()));
    functions.truncate(top);
    moved.functions = functions;
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::lbr::ranges::FunctionRun;

    fn run(name: &str, instructions: u128, blocks: u32, covered: u32) -> FunctionRun {
        FunctionRun {
            name: name.into(),
            rva: 0x1000,
            instructions,
            blocks,
            covered,
        }
    }

    fn binary(name: &str, order: Option<Order>, functions: Vec<FunctionRun>) -> BinaryRanges {
        BinaryRanges {
            name: name.into(),
            order,
            instructions: functions.iter().map(|f| f.instructions).sum(),
            functions,
            ..BinaryRanges::default()
        }
    }

    fn report(binaries: Vec<BinaryRanges>) -> RangeReport {
        RangeReport { binaries }
    }

    #[test]
    fn functions_are_paired_by_name_and_sorted_by_how_far_their_share_moved() {
        let old = Some(Order::NewestFirst);
        let base = report(vec![binary(
            "App.exe",
            old,
            vec![run("main", 50, 4, 4), run("loop", 50, 6, 3)],
        )]);
        // `loop` is a static of two sources: added together.
        let new = report(vec![binary(
            "app.EXE",
            old,
            vec![
                run("main", 10, 4, 2),
                run("loop", 60, 6, 6),
                run("loop", 20, 2, 1),
                run("cold", 10, 3, 1),
            ],
        )]);
        let moved = compare(&base, &new, 10);
        assert_eq!(moved.len(), 1);
        let b = &moved[0];
        assert_eq!(b.name, "App.exe");
        assert_eq!(b.instructions, [100, 100]);
        assert_eq!((b.blocks, b.covered), ([10, 15], [7, 10]));
        assert_eq!(b.ran, 3);
        let names: Vec<&str> = b.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["main", "loop", "cold"]);
        let figures: Vec<[u128; 6]> = b
            .functions
            .iter()
            .map(|f| {
                let [i, j] = f.instructions;
                let [k, l] = f.blocks.map(u128::from);
                let [m, n] = f.covered.map(u128::from);
                [i, j, k, l, m, n]
            })
            .collect();
        assert_eq!(
            figures,
            [
                [50, 10, 4, 4, 4, 2],
                [50, 80, 6, 8, 3, 7],
                [0, 10, 0, 3, 0, 1]
            ]
        );
        assert!((b.functions[0].delta() + 0.4).abs() < 1e-12);
        assert!((b.functions[1].delta() - 0.3).abs() < 1e-12);
        assert_eq!(compare(&base, &new, 2)[0].functions.len(), 2);
    }

    #[test]
    fn a_binary_read_under_no_order_in_either_trace_compares_no_function() {
        let base = report(vec![binary("a.dll", None, vec![run("f", 5, 1, 1)])]);
        let new = report(vec![
            binary("a.dll", Some(Order::OldestFirst), vec![run("f", 5, 1, 1)]),
            binary("b.dll", Some(Order::OldestFirst), vec![run("g", 5, 1, 1)]),
        ]);
        let moved = compare(&base, &new, 10);
        assert_eq!(moved.len(), 1, "b.dll is in NEW only");
        assert!(!moved[0].read());
        assert!(moved[0].functions.is_empty());
        assert_eq!(moved[0].order, [None, Some(Order::OldestFirst)]);
    }
}
