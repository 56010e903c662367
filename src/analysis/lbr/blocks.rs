//! A function's code cut into basic blocks (section 14): what `/coverage` counts and the
//! flow's graph is made of.

use rustc_hash::FxHashSet;

use crate::analysis::lbr::reading::Decoded;
use crate::image::code::{Flow, Instruction};
use crate::image::symbols::Symbols;

/// One basic block of a function's code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CodeBlock {
    /// The RVA of its first byte.
    pub(crate) start: u32,
    /// The RVA just past its last byte.
    pub(crate) end: u32,
    /// Its instructions, as indices into [`FunctionCode::instructions`].
    pub(crate) instructions: std::ops::Range<usize>,
    /// Whether it is padding alone (`int3`, `nop`).
    pub(crate) padding: bool,
}

/// A function's code, decoded and cut into basic blocks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FunctionCode {
    /// Every instruction, in address order, with its RVA.
    pub(crate) instructions: Vec<(u32, Instruction)>,
    /// The blocks, in address order.
    pub(crate) blocks: Vec<CodeBlock>,
}

/// The basic blocks of the function at `rva`. Leaders are its first instruction, every
/// direct jump's target inside it, and every instruction after a jump, conditional or not,
/// or a return (a call does not end a block); a block of padding alone (`int3`, `nop`) is
/// marked so. The function is decoded from its first byte to its end; where an instruction
/// does not decode, its blocks end there.
pub(crate) fn split(functions: &Symbols, rva: u32, decoded: &mut Decoded<'_>) -> FunctionCode {
    let inside = |at: u32| functions.lookup(at).is_some_and(|(f, _)| f.rva == rva);
    let mut code: Vec<(u32, Instruction)> = Vec::new();
    let mut leaders: FxHashSet<u32> = FxHashSet::default();
    leaders.insert(rva);
    let mut at = rva;
    while inside(at) {
        let Some(i) = decoded.at(at) else { break };
        code.push((at, i));
        let Some(next) = at.checked_add(i.len) else {
            break;
        };
        if matches!(i.flow, Flow::Jump | Flow::Conditional | Flow::Return) {
            leaders.insert(next);
            leaders.extend(i.target.filter(|&t| inside(t)));
        }
        at = next;
    }
    let mut blocks = Vec::new();
    let mut first = 0;
    let mut padding = true;
    for (n, &(at, i)) in code.iter().enumerate() {
        padding = padding && i.padding;
        let last = code
            .get(n + 1)
            .is_none_or(|(next, _)| leaders.contains(next));
        if last {
            blocks.push(CodeBlock {
                start: code[first].0,
                end: at.saturating_add(i.len),
                instructions: first..n + 1,
                padding,
            });
            first = n + 1;
            padding = true;
        }
    }
    FunctionCode {
        instructions: code,
        blocks,
    }
}
