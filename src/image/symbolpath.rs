//! A symbol path in `_NT_SYMBOL_PATH`'s syntax (`/symbols`), parsed, and the checks that
//! keep a binary name from a trace from ever being turned into a path it should not be.
//!
//! Only parsing here: [`super::symstore`] looks files up along a parsed path.

/// One element of a symbol path, with its text as given (what notes and the `symbols`
/// line's `from` name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Element {
    /// The element as written.
    pub text: String,
    /// What it says.
    pub kind: ElementKind,
}

/// What an element of a symbol path says.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ElementKind {
    /// A plain directory: `DIR\NAME.pdb`, and the store layout under it.
    Dir(String),
    /// `srv*A*B…` or `symsrv*symsrv.dll*A*B…`: stores searched left to right; the first
    /// local one is the cache of the later ones.
    Server(Vec<Store>),
    /// `cache*DIR`: the cache for the elements that follow it.
    Cache(String),
}

/// A store between the stars of a `srv*` element.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Store {
    /// A directory or network share.
    Local(String),
    /// An `http://` or `https://` symbol server: kept, not fetched in this build.
    Url(String),
}

/// A parsed symbol path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolPath {
    /// Its elements, in search order.
    pub elements: Vec<Element>,
}

impl SymbolPath {
    /// Parses `text`: elements separated by `;`, blanks around them ignored, empty ones
    /// skipped.
    pub fn parse(text: &str) -> SymbolPath {
        let elements = text
            .split(';')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(|e| Element {
                text: e.to_owned(),
                kind: kind(e),
            })
            .collect();
        SymbolPath { elements }
    }

    /// The notes the path gives before any lookup: one per element naming a symbol server
    /// URL, which this build does not fetch.
    pub fn notes(&self) -> Vec<String> {
        self.elements
            .iter()
            .filter(|e| matches!(&e.kind, ElementKind::Server(s) if s.iter().any(|s| matches!(s, Store::Url(_)))))
            .map(|e| format!("symbol server URLs are not fetched yet: {}", e.text))
            .collect()
    }
}

/// Whether `s` starts with `prefix`, ignoring ASCII case.
fn starts_with_folded(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len()
        && s.is_char_boundary(prefix.len())
        && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// What the element `e` says.
fn kind(e: &str) -> ElementKind {
    if starts_with_folded(e, "srv*") {
        ElementKind::Server(stores(e["srv*".len()..].split('*')))
    } else if starts_with_folded(e, "symsrv*") {
        // The second field names the DLL that serves the rest.
        let mut rest = e["symsrv*".len()..].split('*');
        rest.next();
        ElementKind::Server(stores(rest))
    } else if starts_with_folded(e, "cache*") {
        ElementKind::Cache(e["cache*".len()..].to_owned())
    } else {
        ElementKind::Dir(e.to_owned())
    }
}

/// The stores between the stars, empty ones skipped.
fn stores<'a>(fields: impl Iterator<Item = &'a str>) -> Vec<Store> {
    fields
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| {
            if starts_with_folded(f, "http://") || starts_with_folded(f, "https://") {
                Store::Url(f.to_owned())
            } else {
                Store::Local(f.to_owned())
            }
        })
        .collect()
}

/// The names Windows reserves for devices, in any case, with or without an extension.
const DEVICES: [&str; 4] = ["con", "prn", "aux", "nul"];

/// Why a binary name from a trace may not be turned into a path: `None` when it may. A
/// name with a path separator, `..`, a colon (a drive or a stream), a control character,
/// a device name or an empty stem is refused.
pub fn unsafe_name(name: &str) -> Option<&'static str> {
    let stem = name.split('.').next().unwrap_or("");
    let device = {
        let s = stem.trim_end().to_ascii_lowercase();
        DEVICES.contains(&s.as_str())
            || ((s.starts_with("com") || s.starts_with("lpt"))
                && s.len() == 4
                && matches!(s.as_bytes()[3], b'1'..=b'9'))
    };
    if name.contains(['/', '\\']) {
        Some("it holds a path separator")
    } else if name.contains("..") {
        Some("it holds ..")
    } else if name.contains(':') {
        Some("it holds a colon (a drive or a stream)")
    } else if name.chars().any(char::is_control) {
        Some("it holds a control character")
    } else if stem.trim().is_empty() {
        Some("its stem is empty")
    } else if device {
        Some("it is a device name")
    } else {
        None
    }
}

/// The PDB's name of a binary: its stem with `.pdb` (`app.exe` → `app.pdb`).
pub fn pdb_name(binary: &str) -> String {
    let stem = match binary.rfind('.') {
        Some(dot) if dot > 0 => &binary[..dot],
        _ => binary,
    };
    format!("{stem}.pdb")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<ElementKind> {
        SymbolPath::parse(text)
            .elements
            .into_iter()
            .map(|e| e.kind)
            .collect()
    }

    fn local(s: &str) -> Store {
        Store::Local(s.to_owned())
    }

    #[test]
    fn plain_directories_split_on_semicolons() {
        assert_eq!(
            kinds(r" C:\a ;;D:\b;"),
            [
                ElementKind::Dir(r"C:\a".into()),
                ElementKind::Dir(r"D:\b".into())
            ]
        );
        assert!(kinds("").is_empty());
    }

    #[test]
    fn server_elements_keep_their_stores_in_order() {
        let url = "https://msdl.microsoft.com/download/symbols";
        assert_eq!(
            kinds(&format!(r"srv*C:\symbols*{url}")),
            [ElementKind::Server(vec![
                local(r"C:\symbols"),
                Store::Url(url.into())
            ])]
        );
        assert_eq!(
            kinds(r"SRV*\\share\s*/tmp/b"),
            [ElementKind::Server(vec![
                local(r"\\share\s"),
                local("/tmp/b")
            ])]
        );
        assert_eq!(
            kinds(r"symsrv*symsrv.dll*C:\c*D:\s"),
            [ElementKind::Server(vec![local(r"C:\c"), local(r"D:\s")])]
        );
        assert_eq!(kinds("srv*/s"), [ElementKind::Server(vec![local("/s")])]);
    }

    #[test]
    fn cache_elements() {
        assert_eq!(
            kinds(r"cache*C:\c;srv*D:\s"),
            [
                ElementKind::Cache(r"C:\c".into()),
                ElementKind::Server(vec![local(r"D:\s")])
            ]
        );
    }

    #[test]
    fn urls_give_a_note_and_local_stores_none() {
        let path = SymbolPath::parse("srv*/c*http://sym/s;/d");
        assert_eq!(
            path.notes(),
            ["symbol server URLs are not fetched yet: srv*/c*http://sym/s"]
        );
        assert!(SymbolPath::parse("srv*/c*/s;/d").notes().is_empty());
    }

    #[test]
    fn hostile_names_are_refused() {
        for bad in [
            "../app.exe",
            "a/b.exe",
            r"a\b.exe",
            "..",
            "C:app.exe",
            "app.exe:s",
            "con",
            "CON.exe",
            "nul.dll",
            "Com1.dll",
            "lpt9",
            "a\u{1}.exe",
            ".exe",
            "",
            " .dll",
        ] {
            assert!(unsafe_name(bad).is_some(), "{bad:?} should be refused");
        }
        for good in [
            "app.exe",
            "core.dll",
            "console.exe",
            "com10.dll",
            "lpt.exe",
            "a.b.exe",
        ] {
            assert_eq!(unsafe_name(good), None, "{good:?} should be accepted");
        }
    }

    #[test]
    fn pdb_names() {
        assert_eq!(pdb_name("app.exe"), "app.pdb");
        assert_eq!(pdb_name("a.b.dll"), "a.b.pdb");
        assert_eq!(pdb_name("tool"), "tool.pdb");
    }
}
