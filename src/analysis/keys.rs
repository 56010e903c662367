//! Keys: what a sampled address is attributed to, and how it is named. One rule for every
//! analysis and exporter (docs/output.md, "Stacks, frames and keys"):
//!
//! ```text
//! address              looked up at   key with symbols      key without      name
//! IP sample, leaf      RVA            the function's start  the address      app.exe!main
//! frame, branch end                                                          app.exe+0x1A2B
//! return address       RVA - 1        (the call instruction's function; an address no
//! (a caller's frame)                   function holds stays its own key, shown as stored)
//! ```
//!
//! With inline frames (`/pdb`, unless `/noinline`), an address in code the compiler inlined
//! is several keys: the procedure that holds it, then each function inlined there, outermost
//! first ([`Namer::ids`]). An inlined function is one key per name, whatever it was inlined
//! into.

use std::collections::BTreeMap;
use std::fmt::Write;

use rustc_hash::FxHashSet;

use crate::image::attached::SymbolMap;
use crate::image::lines::{SourceFrame, SourceLines};
use crate::image::symbols::Symbols;

/// What a frame or sample is attributed to: a function, or an address no function holds.
///
/// 16 bytes: a profile without symbols has a key per sampled address, and its names are
/// made when shown; a function's name and source are boxed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct FrameKey {
    /// The function's first byte, or the address as stored; for an inlined function, the
    /// first byte of the lowest function it was seen inlined into.
    pub rva: u32,
    /// Whether the function is one the compiler inlined (a frame of an inline chain).
    pub inlined: bool,
    /// The function's name and source, when the binary's symbols have a function there.
    function: Option<Box<Function>>,
}

/// A key's function: its name, and with inline frames, where its code is.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct Function {
    name: String,
    /// Its source file, as the PDB records it (for speedscope and pprof).
    file: Option<String>,
    /// The line it starts on, where the PDB says (a procedure's first line).
    line: Option<u32>,
}

/// What identifies a key within its binary, as one [`Namer`] gives it: cheap to compare,
/// so that a key's name and file are made once, the first time it is seen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum KeyId {
    /// An address no function holds.
    Address(u32),
    /// A function, by its first byte.
    Function(u32),
    /// An inlined function, by its name's number in the namer's source lines.
    Inlined(u32),
}

impl FrameKey {
    /// The key of the address `rva`: sampled there (an IP sample, a leaf frame, a branch's
    /// end), or, when `returns`, a return address, which is looked up at `rva - 1`, the call
    /// instruction, yet stays `rva` when no function holds that.
    pub(crate) fn of(symbols: Option<&Symbols>, rva: u32, returns: bool) -> FrameKey {
        match symbols
            .zip(looked_up_at(rva, returns))
            .and_then(|(s, at)| s.lookup(at))
        {
            Some((f, _)) => FrameKey::function(f.rva, f.name),
            None => FrameKey::address(rva),
        }
    }

    /// The key of an address no function holds.
    pub(crate) fn address(rva: u32) -> FrameKey {
        FrameKey {
            rva,
            inlined: false,
            function: None,
        }
    }

    /// The key of the function `name`, which starts at `rva`.
    pub(crate) fn function(rva: u32, name: &str) -> FrameKey {
        FrameKey {
            rva,
            inlined: false,
            function: Some(Box::new(Function {
                name: name.to_owned(),
                file: None,
                line: None,
            })),
        }
    }

    /// The function's name, when the binary's symbols have one there.
    pub(crate) fn function_name(&self) -> Option<&str> {
        self.function.as_ref().map(|f| f.name.as_str())
    }

    /// Where the function's code is, with inline frames: its source file, as the PDB
    /// records it.
    pub(crate) fn file(&self) -> Option<&str> {
        self.function.as_ref()?.file.as_deref()
    }

    /// The line the function starts on, where the PDB says.
    pub(crate) fn line(&self) -> Option<u32> {
        self.function.as_ref()?.line
    }

    /// The key's name in text, folded stacks and exports: `binary!function`, or
    /// `binary+0x1A2B` (the RVA as stored, upper-case hex, no padding).
    pub(crate) fn name(&self, binary: &str) -> String {
        key_name(binary, self.function_name(), self.rva)
    }

    /// Writes the key's [name](FrameKey::name) to `out`, after what it holds.
    pub(crate) fn push_name(&self, binary: &str, out: &mut String) {
        push_key_name(out, binary, self.function_name(), self.rva);
    }

    /// The key's name in folded stacks and flame graphs: [`FrameKey::name`], with
    /// FlameGraph's `_[i]` suffix on an inlined function, which flame-graph tools colour
    /// apart.
    pub(crate) fn frame_name(&self, binary: &str) -> String {
        let mut name = self.name(binary);
        if self.inlined {
            name.push_str("_[i]");
        }
        name
    }
}

/// How the addresses of one binary become keys: by its symbols, and with inline frames, by
/// the inline chains of the addresses it was made for, read from its PDB once.
pub(crate) struct Namer<'a> {
    symbols: Option<&'a Symbols>,
    lines: Option<SourceLines>,
}

impl<'a> Namer<'a> {
    /// The namer of a binary with `symbols`, for `addresses` (each an RVA as stored, and
    /// whether it is a return address); with `inline`, their inline chains are read.
    pub(crate) fn new(
        symbols: Option<&'a Symbols>,
        inline: bool,
        addresses: impl IntoIterator<Item = (u32, bool)>,
    ) -> Namer<'a> {
        let lines = match symbols {
            Some(s) if inline => Some(SourceLines::read(
                s,
                addresses
                    .into_iter()
                    .filter_map(|(rva, returns)| looked_up_at(rva, returns)),
            )),
            _ => None,
        };
        Namer { symbols, lines }
    }

    /// Whether it names without symbols: every address is a key of its own
    /// ([`FrameKey::address`]).
    pub(crate) fn is_plain(&self) -> bool {
        self.symbols.is_none()
    }

    /// What could not be read of the binary's line and inlinee records, if anything.
    pub(crate) fn problem(&self) -> Option<&str> {
        self.lines.as_ref()?.problem()
    }

    /// The frames of the address `rva` (a return address when `returns`), innermost first,
    /// with their files and lines, when its chain was read.
    pub(crate) fn frames(
        &self,
        rva: u32,
        returns: bool,
    ) -> Option<impl DoubleEndedIterator<Item = SourceFrame<'_>>> {
        let at = looked_up_at(rva, returns)?;
        self.lines.as_ref()?.chain(at)
    }

    /// Pushes the ids of the keys of the address `rva` (a return address when `returns`)
    /// onto `out`, outermost first: its function, then the functions inlined there, when its
    /// chain was read; else its one key's, as [`FrameKey::of`] gives it. Allocates nothing.
    pub(crate) fn ids(&self, rva: u32, returns: bool, out: &mut Vec<KeyId>) {
        let function = looked_up_at(rva, returns)
            .zip(self.symbols)
            .and_then(|(at, s)| s.lookup(at))
            .map(|(f, _)| f.rva);
        let chain = self.frames(rva, returns);
        match (function, chain) {
            (Some(start), Some(chain)) => out.extend(chain.rev().map(|f| match f.inlined {
                true => KeyId::Inlined(f.name_id),
                false => KeyId::Function(start),
            })),
            (Some(start), None) => out.push(KeyId::Function(start)),
            (None, _) => out.push(KeyId::Address(rva)),
        }
    }

    /// The key of the `depth`-th id [`Namer::ids`] gives the address (0: the outermost).
    pub(crate) fn key(&self, rva: u32, returns: bool, depth: usize) -> FrameKey {
        let key = FrameKey::of(self.symbols, rva, returns);
        // A chain is read only for an address in a procedure, which `FrameKey::of` finds
        // too: the key's RVA is that function's start.
        match self.frames(rva, returns).and_then(|c| c.rev().nth(depth)) {
            Some(frame) => FrameKey {
                rva: key.rva,
                inlined: frame.inlined,
                function: Some(Box::new(Function {
                    name: frame.function.to_owned(),
                    file: frame.file.map(str::to_owned),
                    line: frame.start_line,
                })),
            },
            _ => key,
        }
    }
}

/// The namers of a profile's binaries, each made once for every address the views ask
/// about, so that each binary's PDB is read once.
pub(crate) struct Namers<'a> {
    by_progid: BTreeMap<u16, Namer<'a>>,
    plain: Namer<'a>,
}

impl<'a> Namers<'a> {
    /// The namers of the binaries with `symbols`, for `addresses` per binary (each an RVA
    /// as stored, and whether it is a return address).
    pub(crate) fn new(
        symbols: &'a SymbolMap,
        inline: bool,
        mut addresses: BTreeMap<u16, FxHashSet<(u32, bool)>>,
    ) -> Namers<'a> {
        let by_progid = symbols
            .progids()
            .map(|progid| {
                let addresses = addresses.remove(&progid).unwrap_or_default();
                (
                    progid,
                    Namer::new(symbols.get(Some(progid)), inline, addresses),
                )
            })
            .collect();
        Namers {
            by_progid,
            plain: Namer {
                symbols: None,
                lines: None,
            },
        }
    }

    /// Namers that name every address by its binary and RVA.
    pub(crate) fn plain() -> Namers<'a> {
        Namers {
            by_progid: BTreeMap::new(),
            plain: Namer {
                symbols: None,
                lines: None,
            },
        }
    }

    /// The namer of binary `progid`; without symbols, one that names addresses.
    pub(crate) fn get(&self, progid: u16) -> &Namer<'a> {
        self.by_progid.get(&progid).unwrap_or(&self.plain)
    }

    /// The binaries whose line or inlinee records could not be read, and why.
    pub(crate) fn problems(&self) -> impl Iterator<Item = (u16, &str)> + '_ {
        self.by_progid
            .iter()
            .filter_map(|(&p, n)| Some((p, n.problem()?)))
    }
}

/// The symbols of binary 0: `main` [0x100, 0x140), and two functions both named `dup`, at
/// [0x200, 0x220) and [0x300, 0x320).
#[cfg(test)]
pub(crate) fn main_and_two_dups() -> SymbolMap {
    let symbols = Symbols::from_functions(&[
        (0x100, 0x40, "main"),
        (0x200, 0x20, "dup"),
        (0x300, 0x20, "dup"),
    ]);
    let mut map = SymbolMap::default();
    map.attach(0, std::sync::Arc::new(symbols));
    map
}

/// Namers without symbols: every address its own key.
#[cfg(test)]
pub(crate) fn plain() -> Namers<'static> {
    static NONE: SymbolMap = SymbolMap::none();
    Namers::new(&NONE, true, BTreeMap::new())
}

/// The address a frame is looked up at: a return address one byte back, at its call.
fn looked_up_at(rva: u32, returns: bool) -> Option<u32> {
    if returns {
        rva.checked_sub(1)
    } else {
        Some(rva)
    }
}

/// The name of a key of `binary`: `binary!function`, or `binary+0x1A2B` for the address
/// `rva` when no function holds it.
pub(crate) fn key_name(binary: &str, function: Option<&str>, rva: u32) -> String {
    let mut name = String::new();
    push_key_name(&mut name, binary, function, rva);
    name
}

/// Writes the name [`key_name`] makes to `out`, after what it holds.
fn push_key_name(out: &mut String, binary: &str, function: Option<&str>, rva: u32) {
    out.push_str(binary);
    match function {
        Some(f) => {
            out.push('!');
            out.push_str(f);
        }
        None => {
            // Writing to a String cannot fail.
            let _ = write!(out, "+0x{rva:X}");
        }
    }
}

/// The hits of sampled addresses summed by key, in key order: each address's innermost key
/// (with `inline`, the innermost function inlined there). Each distinct address is looked up
/// once.
pub(crate) fn by_key(
    hits: impl Iterator<Item = (u32, u128)>,
    symbols: Option<&Symbols>,
    inline: bool,
) -> BTreeMap<FrameKey, u128> {
    let hits: Vec<(u32, u128)> = hits.collect();
    let namer = Namer::new(symbols, inline, hits.iter().map(|&(rva, _)| (rva, false)));
    let mut keys: BTreeMap<FrameKey, u128> = BTreeMap::new();
    let mut ids = Vec::new();
    for (rva, h) in hits {
        ids.clear();
        namer.ids(rva, false, &mut ids);
        let innermost = namer.key(rva, false, ids.len().saturating_sub(1));
        *keys.entry(innermost).or_default() += h;
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn return_addresses_look_back_one_byte_and_are_shown_as_stored() {
        // main [0x100, 0x140).
        let symbols = Symbols::from_functions(&[(0x100, 0x40, "main")]);
        let s = Some(&symbols);
        let main = |rva| FrameKey::function(rva, "main");
        let address = |rva| FrameKey::address(rva);
        assert_eq!(FrameKey::of(s, 0x13F, false), main(0x100));
        // Sampled at 0x140, past main's end: its own key.
        assert_eq!(FrameKey::of(s, 0x140, false), address(0x140));
        // Returning to 0x140: the call instruction at 0x13F is in main.
        assert_eq!(FrameKey::of(s, 0x140, true), main(0x100));
        // Returning to main's first byte: the call at 0xFF is in no function.
        assert_eq!(FrameKey::of(s, 0x100, true), address(0x100));
        assert_eq!(FrameKey::of(s, 0, true), address(0));
        assert_eq!(FrameKey::of(None, 0x120, true), address(0x120));
    }

    #[test]
    fn a_key_takes_16_bytes() {
        // A profile without symbols holds one per sampled address (docs/performance.md,
        // "Memory: what the views keep and when it is let go").
        assert_eq!(std::mem::size_of::<FrameKey>(), 16);
    }

    #[test]
    fn names() {
        let k = FrameKey::address(0x1A2B);
        assert_eq!(k.name("app.exe"), "app.exe+0x1A2B");
        let mut k = FrameKey::function(0x10, "main");
        assert_eq!(k.name("app.exe"), "app.exe!main");
        assert_eq!(k.frame_name("app.exe"), "app.exe!main");
        k.inlined = true;
        assert_eq!(k.name("app.exe"), "app.exe!main");
        assert_eq!(k.frame_name("app.exe"), "app.exe!main_[i]");
    }

    #[test]
    fn hits_by_key_fold_a_function_and_keep_addresses_apart() {
        let symbols = Symbols::from_functions(&[(0x100, 0x40, "main")]);
        let keys = by_key(
            [(0x100, 1), (0x120, 2), (0x200, 4)].into_iter(),
            Some(&symbols),
            true,
        );
        assert_eq!(keys.len(), 2);
        assert_eq!(keys[&FrameKey::function(0x100, "main")], 3);
    }
}
