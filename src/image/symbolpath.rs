//! A symbol path in `_NT_SYMBOL_PATH`'s syntax (`/symbols`), parsed, and the checks that
//! keep a binary name from a trace from ever being turned into a path it should not be.
//!
//! Only parsing here: [`super::symstore`] looks files up along a parsed path, and
//! `symserver` fetches from the URLs in it.

use std::fs;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One element of a symbol path, with its text as given (what notes and the `symbols`
/// line's `from` name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Element {
    /// The element as written, less the credentials (`user:password@`) of its URLs: what
    /// is ever printed of it.
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
    /// An `http://` or `https://` symbol server, as written (credentials and all: it is
    /// requested, never printed; [`redacted`] is what is printed of it).
    Url(String),
}

/// How symbol servers are asked: the time-outs, and who is told how a long download goes.
#[derive(Clone, Copy, Debug)]
pub struct Fetch {
    /// The longest wait for a connection (with TLS): 10 s unless changed.
    pub connect: Duration,
    /// The longest wait for any one read of the answer: 60 s unless changed.
    pub read: Duration,
    /// Told how a download that takes over a second goes (the program draws a progress
    /// bar on a terminal; the library draws nothing).
    pub progress: Option<fn(Progress<'_>)>,
}

/// A time-out of `SPTDUMP_SYMBOL_TIMEOUT` that is not a number of seconds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a number of seconds (over 0, at most 86400)")]
pub struct NotSeconds(pub String);

/// How a long download goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress<'a> {
    /// It has taken a second: the URL (without credentials) and the length announced.
    Begun {
        /// What is downloaded.
        url: &'a str,
        /// Its length, when the server said.
        total: Option<u64>,
    },
    /// This many bytes have come.
    At(u64),
    /// It is over, whole or not.
    Ended,
}

impl Default for Fetch {
    fn default() -> Fetch {
        Fetch {
            connect: Duration::from_secs(10),
            read: Duration::from_secs(60),
            progress: None,
        }
    }
}

impl PartialEq for Fetch {
    fn eq(&self, other: &Fetch) -> bool {
        (self.connect, self.read, self.progress.is_some())
            == (other.connect, other.read, other.progress.is_some())
    }
}

impl Eq for Fetch {}

impl Fetch {
    /// The time-outs of `SPTDUMP_SYMBOL_TIMEOUT`'s value: `SECONDS` (both) or
    /// `CONNECT,READ`, each a positive number of seconds (fractions allowed, at most a
    /// day).
    ///
    /// # Errors
    ///
    /// A part of the value that is not such a number.
    pub fn with_timeouts(self, value: &str) -> Result<Fetch, NotSeconds> {
        let seconds = |s: &str| {
            let s = s.trim();
            match s.parse::<f64>() {
                Ok(n) if n > 0.0 && n <= 86_400.0 => Ok(Duration::from_secs_f64(n)),
                _ => Err(NotSeconds(s.to_owned())),
            }
        };
        let (connect, read) = match value.split_once(',') {
            Some((c, r)) => (seconds(c)?, seconds(r)?),
            None => (seconds(value)?, seconds(value)?),
        };
        Ok(Fetch {
            connect,
            read,
            ..self
        })
    }
}

/// The scratch files of a symbol path's lookups: what symbol servers sent when the path had
/// no cache to keep it in, read where it is and deleted once the last holder (the plan, the
/// symbols read of them) lets go; nothing for a caller to clean.
#[derive(Clone, Debug, Default)]
pub struct Scratch(Arc<ScratchFiles>);

/// The files of a [`Scratch`], deleted when dropped.
#[derive(Debug, Default)]
struct ScratchFiles(Mutex<Vec<PathBuf>>);

impl Scratch {
    /// Keeps `file` until the last holder lets go.
    pub(crate) fn keep(&self, file: PathBuf) {
        let mut files = self.0.0.lock().unwrap_or_else(|e| e.into_inner());
        files.push(file);
    }
}

impl PartialEq for Scratch {
    /// Two symbol paths are alike whatever their lookups downloaded.
    fn eq(&self, _: &Scratch) -> bool {
        true
    }
}

impl Eq for Scratch {}

impl Drop for ScratchFiles {
    fn drop(&mut self) {
        let files = std::mem::take(self.0.get_mut().unwrap_or_else(|e| e.into_inner()));
        for file in files {
            let _ = fs::remove_file(file);
        }
    }
}

/// A parsed symbol path.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SymbolPath {
    /// Its elements, in search order.
    pub elements: Vec<Element>,
    /// How its symbol servers are asked.
    pub fetch: Fetch,
    /// Where what a symbol server sends is kept when the path has no cache, until the last
    /// copy of the path lets go.
    pub scratch: Scratch,
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
                text: redact_all(e),
                kind: kind(e),
            })
            .collect();
        SymbolPath {
            scratch: Scratch::default(),
            elements,
            fetch: Fetch::default(),
        }
    }

    /// The notes the path gives before any lookup: in a build without the `network`
    /// feature, one per element naming a symbol server URL, which it does not fetch.
    pub fn notes(&self) -> Vec<String> {
        if cfg!(feature = "network") {
            return Vec::new();
        }
        self.unfetched()
    }

    /// A note per element naming a symbol server URL: what a build that does not fetch says
    /// of the path.
    fn unfetched(&self) -> Vec<String> {
        self.elements
            .iter()
            .filter(|e| matches!(&e.kind, ElementKind::Server(s) if s.iter().any(|s| matches!(s, Store::Url(_)))))
            .map(|e| {
                format!(
                    "this sptdump was built without fetching from symbol servers (cargo's \"network\" feature, on by default): {}",
                    e.text
                )
            })
            .collect()
    }
}

/// `url` without the credentials of its authority (`https://user:pw@host/s` →
/// `https://host/s`): what is printed of a URL.
pub fn redacted(url: &str) -> String {
    let Some(start) = url.find("://").map(|i| i + 3) else {
        return url.to_owned();
    };
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    match url[start..end].rfind('@') {
        Some(at) => format!("{}{}", &url[..start], &url[start + at + 1..]),
        None => url.to_owned(),
    }
}

/// An element's text with the credentials of each of its URLs removed.
fn redact_all(element: &str) -> String {
    element
        .split('*')
        .map(redacted)
        .collect::<Vec<_>>()
        .join("*")
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
    fn urls_give_a_note_only_in_a_build_that_does_not_fetch() {
        let path = SymbolPath::parse("srv*/c*http://sym/s;/d");
        if cfg!(feature = "network") {
            assert!(path.notes().is_empty());
        } else {
            assert_eq!(path.notes().len(), 1);
            assert!(path.notes()[0].ends_with(": srv*/c*http://sym/s"));
        }
        assert!(SymbolPath::parse("srv*/c*/s;/d").notes().is_empty());
        // What the build that does not fetch says, whichever this one is.
        let unfetched = path.unfetched();
        assert_eq!(unfetched.len(), 1, "{unfetched:?}");
        assert!(unfetched[0].ends_with(": srv*/c*http://sym/s"));
        assert!(SymbolPath::parse("srv*/c*/s;/d").unfetched().is_empty());
    }

    #[test]
    fn a_pdb_is_named_by_the_binarys_stem() {
        assert_eq!(pdb_name("app.exe"), "app.pdb");
        assert_eq!(pdb_name("core.v2.dll"), "core.v2.pdb");
        assert_eq!(pdb_name("kernel"), "kernel.pdb");
        // A name that is all extension keeps it: its stem would be empty.
        assert_eq!(pdb_name(".exe"), ".exe.pdb");
    }

    #[test]
    fn plans_compare_their_symbol_paths_by_time_outs_not_by_what_they_fetched() {
        let fetch = Fetch::default();
        assert_eq!(fetch, Fetch::default());
        assert_ne!(fetch, Fetch::default().with_timeouts("5").unwrap());
        assert_ne!(fetch, Fetch::default().with_timeouts("10,5").unwrap());
        let (kept, other) = (Scratch::default(), Scratch::default());
        kept.keep(PathBuf::from("never-made.pdb"));
        assert_eq!(kept, other);
    }

    #[test]
    fn credentials_are_never_in_what_is_printed() {
        assert_eq!(
            redacted("https://u:p@sym.example/s"),
            "https://sym.example/s"
        );
        assert_eq!(redacted("http://u@h:8080/a@b"), "http://h:8080/a@b");
        assert_eq!(redacted("https://h/s?x=a@b"), "https://h/s?x=a@b");
        assert_eq!(redacted(r"C:\sym"), r"C:\sym");
        let path = SymbolPath::parse("srv*/c*https://me:secret@h/s");
        assert_eq!(path.elements[0].text, "srv*/c*https://h/s");
        assert_eq!(
            path.elements[0].kind,
            ElementKind::Server(vec![
                local("/c"),
                Store::Url("https://me:secret@h/s".into())
            ])
        );
    }

    #[test]
    fn time_outs_from_the_variable() {
        let f = Fetch::default();
        assert_eq!((f.connect.as_secs(), f.read.as_secs()), (10, 60));
        let f = f.with_timeouts("2").unwrap();
        assert_eq!((f.connect.as_secs(), f.read.as_secs()), (2, 2));
        let f = f.with_timeouts(" 1.5 , 30").unwrap();
        assert_eq!((f.connect.as_millis(), f.read.as_secs()), (1500, 30));
        for bad in ["", "0", "-1", "x", "1,", "nan", "inf", "1e9"] {
            assert!(Fetch::default().with_timeouts(bad).is_err(), "{bad:?}");
        }
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
