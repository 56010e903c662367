//! The two tables of a trace side by side: the string table and the program-ID table, as far
//! as they could be read, and the names they give the program IDs together.

use crate::format::progid::ProgramIdTable;
use crate::format::strtab::StringTable;

/// A trace's string and program-ID tables. Either is `None` when it lies past the end of the
/// input; the diagnostics say why.
#[derive(Clone, Debug, Default)]
pub struct Tables {
    /// The string table.
    pub strings: Option<StringTable>,
    /// The program-ID table.
    pub progids: Option<ProgramIdTable>,
}

impl Tables {
    /// The name bytes of program ID `progid`, when both tables can resolve it.
    pub fn name(&self, progid: u16) -> Option<&[u8]> {
        let entry = self.progids.as_ref()?.get(progid)?;
        self.strings.as_ref()?.get(entry.string_offset)
    }

    /// How many program IDs the table lists (0 when it could not be read).
    pub fn progid_count(&self) -> usize {
        self.progids.as_ref().map_or(0, |t| t.entries().len())
    }
}

/// The last component of a binary's name, as Windows paths separate them (`\` or `/`):
/// `app.exe` for `C:\build\app.exe`. Names of binaries compare by it, case-insensitively.
pub fn base_name(name: &str) -> &str {
    name.rsplit(['/', '\\']).next().unwrap_or(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_names() {
        assert_eq!(base_name("C:\\build\\Core.DLL"), "Core.DLL");
        assert_eq!(base_name("/x/y/app.exe"), "app.exe");
        assert_eq!(base_name("app.exe"), "app.exe");
        assert_eq!(base_name("dir/"), "");
    }
}
