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

use std::collections::BTreeMap;

use crate::image::symbols::Symbols;

/// What a frame or sample is attributed to: a function, or an address no function holds.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FrameKey {
    /// The function's first byte, or the address as stored.
    pub rva: u32,
    /// The function's name, when the binary's symbols have one there.
    pub function: Option<String>,
}

impl FrameKey {
    /// The key of the address `rva`: sampled there (an IP sample, a leaf frame, a branch's
    /// end), or, when `returns`, a return address, which is looked up at `rva - 1`, the call
    /// instruction, yet stays `rva` when no function holds that.
    pub fn of(symbols: Option<&Symbols>, rva: u32, returns: bool) -> FrameKey {
        let at = if returns {
            rva.checked_sub(1)
        } else {
            Some(rva)
        };
        match symbols.zip(at).and_then(|(s, at)| s.lookup(at)) {
            Some((f, _)) => FrameKey {
                rva: f.rva,
                function: Some(f.name.to_owned()),
            },
            None => FrameKey {
                rva,
                function: None,
            },
        }
    }

    /// The key's name in text, folded stacks and exports: `binary!function`, or
    /// `binary+0x1A2B` (the RVA as stored, upper-case hex, no padding).
    pub fn name(&self, binary: &str) -> String {
        key_name(binary, self.function.as_deref(), self.rva)
    }

    /// What identifies the key within its binary: its RVA, and whether that is a function's.
    pub(crate) fn id(&self) -> (u32, bool) {
        (self.rva, self.function.is_some())
    }
}

/// The name of a key of `binary`: `binary!function`, or `binary+0x1A2B` for the address
/// `rva` when no function holds it.
pub fn key_name(binary: &str, function: Option<&str>, rva: u32) -> String {
    match function {
        Some(f) => format!("{binary}!{f}"),
        None => format!("{binary}+0x{rva:X}"),
    }
}

/// The hits of sampled addresses summed by key, in key order: each distinct address is
/// looked up once.
pub(crate) fn by_key(
    hits: impl Iterator<Item = (u32, u128)>,
    symbols: Option<&Symbols>,
) -> BTreeMap<FrameKey, u128> {
    let mut keys: BTreeMap<FrameKey, u128> = BTreeMap::new();
    for (rva, h) in hits {
        *keys.entry(FrameKey::of(symbols, rva, false)).or_default() += h;
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
        let main = |rva| FrameKey {
            rva,
            function: Some("main".to_owned()),
        };
        let address = |rva| FrameKey {
            rva,
            function: None,
        };
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
    fn names() {
        let k = FrameKey {
            rva: 0x1A2B,
            function: None,
        };
        assert_eq!(k.name("app.exe"), "app.exe+0x1A2B");
        let k = FrameKey {
            rva: 0x10,
            function: Some("main".to_owned()),
        };
        assert_eq!(k.name("app.exe"), "app.exe!main");
    }

    #[test]
    fn hits_by_key_fold_a_function_and_keep_addresses_apart() {
        let symbols = Symbols::from_functions(&[(0x100, 0x40, "main")]);
        let keys = by_key(
            [(0x100, 1), (0x120, 2), (0x200, 4)].into_iter(),
            Some(&symbols),
        );
        assert_eq!(keys.len(), 2);
        assert_eq!(
            keys[&FrameKey {
                rva: 0x100,
                function: Some("main".to_owned())
            }],
            3
        );
    }
}
