//! Record opcodes: the first byte of every record of the event stream.
//!
//! The set is open: a byte that names no known opcode still displays, as `0x07`.

use std::fmt;

/// A record's opcode byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Opcode(pub u8);

impl Opcode {
    /// IP samples: unhalted core cycles.
    pub const UNHALT_CYCLE: Opcode = Opcode(0x01);
    /// IP samples: instructions retired.
    pub const RETIRE_INSTR: Opcode = Opcode(0x02);
    /// IP samples: branch instructions retired.
    pub const RETIRE_BR_INSTR: Opcode = Opcode(0x03);
    /// IP samples: L1 instruction-cache misses.
    pub const L1_ICACHE_MISS: Opcode = Opcode(0x04);
    /// IP samples: L1 data-cache misses.
    pub const L1_DCACHE_MISS: Opcode = Opcode(0x05);
    /// Last-branch-record pairs.
    pub const LBR: Opcode = Opcode(0x10);
    /// IP samples from ETW.
    pub const ETW_INSTR: Opcode = Opcode(0x41);
    /// A call stack from ETW.
    pub const ETW_CALLSTACK: Opcode = Opcode(0x42);
    /// Starts the segment of one binary.
    pub const BINARY_ID: Opcode = Opcode(0x81);
    /// The next sample record counts `1 + count` times.
    pub const REPEAT: Opcode = Opcode(0x82);

    /// The IP-sample opcodes, in opcode order.
    pub const IP_KINDS: [Opcode; 6] = [
        Opcode::UNHALT_CYCLE,
        Opcode::RETIRE_INSTR,
        Opcode::RETIRE_BR_INSTR,
        Opcode::L1_ICACHE_MISS,
        Opcode::L1_DCACHE_MISS,
        Opcode::ETW_INSTR,
    ];

    /// The name without the `SPT_OP_` prefix, or `None` for an unknown opcode.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Opcode::UNHALT_CYCLE => "UNHALT_CYCLE",
            Opcode::RETIRE_INSTR => "RETIRE_INSTR",
            Opcode::RETIRE_BR_INSTR => "RETIRE_BR_INSTR",
            Opcode::L1_ICACHE_MISS => "L1_ICACHE_MISS",
            Opcode::L1_DCACHE_MISS => "L1_DCACHE_MISS",
            Opcode::LBR => "LBR",
            Opcode::ETW_INSTR => "ETW_INSTR",
            Opcode::ETW_CALLSTACK => "ETW_CALLSTACK",
            Opcode::BINARY_ID => "BINARY_ID",
            Opcode::REPEAT => "REPEAT",
            _ => return None,
        })
    }

    /// Whether records with this opcode are IP samples (`n`, then `n` RVAs).
    #[inline]
    pub fn is_ip(self) -> bool {
        self.ip_index().is_some()
    }

    /// The position of an IP kind in [`Opcode::IP_KINDS`]. Asked once per sample record
    /// by a summary, so a match rather than a search of the list (the tests tie the two).
    #[inline]
    pub fn ip_index(self) -> Option<usize> {
        match self.0 {
            0x01..=0x05 => Some(usize::from(self.0) - 1),
            0x41 => Some(5),
            _ => None,
        }
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.pad(name),
            None => f.pad(&format!("{:#04X}", self.0)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_unknown() {
        assert_eq!(Opcode(0x42).to_string(), "ETW_CALLSTACK");
        assert_eq!(format!("{:<6}|", Opcode(0x10)), "LBR   |");
        assert_eq!(Opcode(0x07).to_string(), "0x07");
        assert_eq!(Opcode(0x07).name(), None);
    }

    #[test]
    fn ip_kinds() {
        for byte in 0..=255u8 {
            let op = Opcode(byte);
            assert_eq!(op.is_ip(), op.ip_index().is_some(), "{op}");
        }
        for (i, op) in Opcode::IP_KINDS.into_iter().enumerate() {
            assert_eq!(op.ip_index(), Some(i), "{op}");
        }
        // No opcode but the IP kinds has a place among them.
        let ip = (0..=255u8).filter(|&b| Opcode(b).is_ip()).count();
        assert_eq!(ip, Opcode::IP_KINDS.len());
    }
}
