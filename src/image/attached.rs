//! What is attached to a trace's binaries, by progid: what names their addresses (a `/pdb`'s
//! functions, or an SPD's), the code an `/image` holds, and the SPD set beside a trace
//! whose blocks its samples are counted on.

use std::sync::Arc;

use crate::image::code::Code;
use crate::image::spdprofile::SpdProfile;
use crate::image::symbols::Symbols;

/// What is attached to a trace's program IDs, by progid: the functions of a `/pdb`, the
/// code of an `/image`, the SPD whose blocks the samples are counted on.
#[derive(Clone, Debug, Default)]
pub struct SymbolMap {
    symbols: Vec<Option<Arc<Symbols>>>,
    code: Vec<Option<Arc<Code>>>,
    spds: Vec<Option<Arc<SpdProfile>>>,
}

impl SymbolMap {
    /// No symbols for any program ID.
    pub const fn none() -> SymbolMap {
        SymbolMap {
            symbols: Vec::new(),
            code: Vec::new(),
            spds: Vec::new(),
        }
    }

    /// The symbols attached to `progid`, if any.
    #[inline]
    pub fn get(&self, progid: Option<u16>) -> Option<&Symbols> {
        self.symbols.get(usize::from(progid?))?.as_deref()
    }

    /// The code attached to `progid`, if any.
    pub fn code(&self, progid: Option<u16>) -> Option<&Code> {
        self.code.get(usize::from(progid?))?.as_deref()
    }

    /// The SPD whose blocks `progid`'s samples are counted on, if any, shared.
    pub fn spd(&self, progid: u16) -> Option<&Arc<SpdProfile>> {
        self.spds.get(usize::from(progid))?.as_ref()
    }

    /// Attaches the SPD whose blocks `progid`'s samples are counted on.
    pub fn attach_spd(&mut self, progid: u16, spd: Arc<SpdProfile>) {
        put(&mut self.spds, progid, spd);
    }

    /// Attaches `symbols` to `progid`.
    pub fn attach(&mut self, progid: u16, symbols: Arc<Symbols>) {
        put(&mut self.symbols, progid, symbols);
    }

    /// Attaches the code of `progid`'s image.
    pub fn attach_code(&mut self, progid: u16, code: Arc<Code>) {
        put(&mut self.code, progid, code);
    }

    /// The program IDs with symbols, in order.
    pub fn progids(&self) -> impl Iterator<Item = u16> + '_ {
        (0..self.symbols.len())
            .filter(|&i| self.symbols[i].is_some())
            .map(|i| i as u16)
    }

    /// Whether no program ID has symbols.
    pub fn is_empty(&self) -> bool {
        self.symbols.iter().all(Option::is_none)
    }
}

/// Puts `value` at `progid` in `all`, growing it as needed.
fn put<T>(all: &mut Vec<Option<T>>, progid: u16, value: T) {
    let at = usize::from(progid);
    if all.len() <= at {
        all.resize_with(at + 1, || None);
    }
    all[at] = Some(value);
}
