//! Looking files up along a [`SymbolPath`]: plain directories, the symbol-store layout
//! (`ROOT/NAME/KEY/NAME`, two-tier under an `index2.txt`, `file.ptr`), and the cache a file
//! found in a later store is copied into. Local stores and network shares here; symbol
//! server URLs through `symserver` (the `network` feature), asked for in the store
//! layout, what they send written into the cache like a copy.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::ident::{self, Kind};
use crate::format::progid::{SymKey, registry_form};

use super::symbolpath::{ElementKind, Scratch, Store, SymbolPath, unsafe_name};
#[cfg(feature = "network")]
use super::symbolpath::{Fetch, redacted};
#[cfg(feature = "network")]
use super::symserver;

/// What the symbol path gave one binary of a trace: a `symbols` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinarySymbols {
    /// Its program ID.
    pub progid: u16,
    /// Its name in the trace.
    pub name: String,
    /// The PDB used, if one was found.
    pub pdb: Option<String>,
    /// The image used, if one was found.
    pub image: Option<String>,
    /// The element of the path the PDB (else the image) was found by.
    pub from: Option<String>,
    /// Whether a file was copied into a cache by this run.
    pub fetched: bool,
}

/// A file found for a binary, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Found<T> {
    /// What the caller made of the file (a PDB read and checked, say).
    pub value: T,
    /// The file used: in the cache when it was copied there.
    pub file: PathBuf,
    /// The element of the path it was found by.
    pub from: String,
    /// Whether it was copied into a cache by this lookup.
    pub fetched: bool,
}

/// What a lookup found, the notes it gives, and every place it looked.
#[derive(Debug)]
pub struct Lookup<T> {
    /// The first file that fits, if any.
    pub found: Option<Found<T>>,
    /// Files that did not fit, `file.ptr` messages, copies that failed.
    pub notes: Vec<String>,
    /// The places looked at, in order.
    pub looked: Vec<PathBuf>,
}

/// A place to search: a root, the element it comes from, and the cache of what is found
/// there.
struct Place<'a> {
    root: Root<'a>,
    from: &'a str,
    cache: Option<&'a str>,
    /// Where a file found without a cache to keep it is kept until the run is over.
    scratch: &'a Scratch,
}

/// Where a place is.
#[derive(Clone, Copy)]
enum Root<'a> {
    /// A directory or a network share.
    Local(&'a str),
    /// A symbol server.
    #[cfg(feature = "network")]
    Url(&'a str),
}

/// Why a file found along the path is not the one wanted: what the caller's reading of it
/// said (a PDB of another build, a file that is no PDB).
pub type Unfit = Box<dyn std::error::Error + Send + Sync>;

/// Looks `name` (a file name, already checked with [`unsafe_name`]) up along `path` by the
/// store key `key`; `fits` reads a file and says whether it is the one wanted (its error
/// the reason it is not). The first that fits wins.
pub fn find<T>(
    path: &SymbolPath,
    name: &str,
    key: &str,
    mut fits: impl FnMut(&Path) -> Result<T, Unfit>,
) -> Lookup<T> {
    let mut lookup = Lookup {
        found: None,
        notes: Vec::new(),
        looked: Vec::new(),
    };
    if let Some(why) = unsafe_name(name) {
        lookup
            .notes
            .push(format!("{name:?} is not looked up: {why}"));
        return lookup;
    }
    for place in places(path) {
        if lookup.found.is_some() {
            break;
        }
        match place.root {
            Root::Local(root) => search(root, &place, name, key, &mut fits, &mut lookup),
            #[cfg(feature = "network")]
            Root::Url(url) => {
                let server = Server {
                    place: &place,
                    fetch: &path.fetch,
                    name,
                    key,
                };
                server.search(url, &mut fits, &mut lookup);
            }
        }
    }
    lookup
}

/// The places of `path`, in search order, each with its cache.
fn places(path: &SymbolPath) -> Vec<Place<'_>> {
    let mut places = Vec::new();
    let mut cache: Option<&str> = None;
    for e in &path.elements {
        match &e.kind {
            ElementKind::Cache(dir) => cache = (!dir.is_empty()).then_some(dir.as_str()),
            ElementKind::Dir(dir) => {
                if let Some(c) = cache {
                    places.push(Place {
                        root: Root::Local(c),
                        from: &e.text,
                        cache: None,
                        scratch: &path.scratch,
                    });
                }
                places.push(Place {
                    root: Root::Local(dir),
                    from: &e.text,
                    cache,
                    scratch: &path.scratch,
                });
            }
            ElementKind::Server(stores) => {
                let mut first: Option<&str> = cache;
                if let Some(c) = cache {
                    places.push(Place {
                        root: Root::Local(c),
                        from: &e.text,
                        cache: None,
                        scratch: &path.scratch,
                    });
                }
                for store in stores {
                    match store {
                        Store::Local(root) => {
                            places.push(Place {
                                root: Root::Local(root),
                                from: &e.text,
                                cache: first,
                                scratch: &path.scratch,
                            });
                            first.get_or_insert(root);
                        }
                        #[cfg(feature = "network")]
                        Store::Url(url) => places.push(Place {
                            root: Root::Url(url),
                            from: &e.text,
                            cache: first,
                            scratch: &path.scratch,
                        }),
                        // Named in a note by the path: this build does not fetch.
                        #[cfg(not(feature = "network"))]
                        Store::Url(_) => {}
                    }
                }
            }
        }
    }
    places
}

/// The folder of `name` under `root` in the store layout (two-tier when `index2.txt` is
/// there).
fn store_folder(root: &Path, name: &str) -> PathBuf {
    if root.join("index2.txt").is_file() {
        let tier: String = name.chars().take(2).collect();
        root.join(tier.to_lowercase()).join(name)
    } else {
        root.join(name)
    }
}

/// Searches one local place, `root`: `ROOT/NAME` (plain directories), the store layout,
/// `file.ptr`.
fn search<T>(
    root: &str,
    place: &Place<'_>,
    name: &str,
    key: &str,
    fits: &mut impl FnMut(&Path) -> Result<T, Unfit>,
    lookup: &mut Lookup<T>,
) {
    let root = Path::new(root);
    let keyed = store_folder(root, name).join(key);
    let mut candidates = vec![root.join(name), keyed.join(name)];
    let ptr = keyed.join("file.ptr");
    if let Ok(text) = fs::read_to_string(&ptr) {
        let text = text.trim();
        if let Some(p) = text.strip_prefix("PATH:") {
            candidates.push(PathBuf::from(p.trim()));
        } else if let Some(m) = text.strip_prefix("MSG:") {
            lookup
                .notes
                .push(format!("{}: {}", ptr.display(), m.trim()));
        }
    }
    for file in candidates {
        lookup.looked.push(file.clone());
        if !file.is_file() {
            continue;
        }
        match fits(&file) {
            Err(why) => lookup.notes.push(format!(
                "{} (found by {}) is not used: {why}",
                file.display(),
                place.from
            )),
            Ok(value) => {
                let (file, fetched) = match place.cache {
                    Some(cache) => copy_to_cache(&file, Path::new(cache), name, key, lookup),
                    None => (file, false),
                };
                lookup.found = Some(Found {
                    value,
                    file,
                    from: place.from.to_owned(),
                    fetched,
                });
                return;
            }
        }
    }
    compressed(&keyed, place, (name, key), fits, lookup);
}

/// The compressed form of `name` in KEY's folder (`NAME.pd_`, a CAB, as `symstore /compress`
/// and symbol servers keep it), when KEY's folder has no `NAME` itself: expanded, checked,
/// and found like any other file.
fn compressed<T>(
    keyed: &Path,
    place: &Place<'_>,
    (name, key): (&str, &str),
    fits: &mut impl FnMut(&Path) -> Result<T, Unfit>,
    lookup: &mut Lookup<T>,
) {
    let cab = keyed.join(cab_name(name));
    if cab == keyed.join(name) || !cab.is_file() || keyed.join(name).is_file() {
        return;
    }
    lookup.looked.push(cab.clone());
    let shown = cab.display().to_string();
    let expanding = Expanding {
        place,
        name,
        key,
        downloaded: false,
    };
    expanding.expand(&cab, &shown, fits, lookup);
}

/// `app.pdb` → `app.pd_`: the name of a file's compressed form.
fn cab_name(name: &str) -> String {
    let mut cab = name.to_owned();
    cab.pop();
    cab.push('_');
    cab
}

/// A CAB holding `name`, to be expanded for a lookup at `place`.
struct Expanding<'a> {
    place: &'a Place<'a>,
    name: &'a str,
    key: &'a str,
    /// Whether the CAB came from a symbol server: what it holds is then fetched, cached or
    /// not.
    downloaded: bool,
}

impl Expanding<'_> {
    /// Expands `cab` (named `shown` in notes) into the cache, or a scratch file with no
    /// cache; keeps what it holds only when it is of the key asked for, and reads it where
    /// it is kept.
    fn expand<T>(
        &self,
        cab: &Path,
        shown: &str,
        fits: &mut impl FnMut(&Path) -> Result<T, Unfit>,
        lookup: &mut Lookup<T>,
    ) {
        let (name, key) = (self.name, self.key);
        let from = self.place.from;
        let not_used = |why: String| format!("{shown} (found by {from}) is not used: {why}");
        let pending = match self.place.cache {
            Some(cache) => Pending::in_cache(Path::new(cache), name, key),
            None => Pending::scratch(name, self.place.scratch),
        };
        let expanded = pending
            .map_err(|e| e.to_string())
            .and_then(|(pending, mut file)| {
                expand(cab, name, &mut file, EXPANDED_AT_MOST)?;
                drop(file);
                is_keyed(&pending.temporary, name, key)?;
                pending.keep().map_err(|e| e.to_string())
            });
        let (file, shown_as, cached) = match expanded {
            Ok(Placed::Cache(file)) => (file.clone(), file, true),
            Ok(Placed::Scratch(file)) => (file, PathBuf::from(shown), false),
            Err(why) => return lookup.notes.push(not_used(why)),
        };
        match fits(&file) {
            Err(why) => lookup.notes.push(not_used(why.to_string())),
            Ok(value) => {
                lookup.found = Some(Found {
                    value,
                    file: shown_as,
                    from: from.to_owned(),
                    fetched: cached || self.downloaded,
                });
            }
        }
    }
}

/// The most a file expanded from a CAB may hold: a PDB's largest (4 GiB).
const EXPANDED_AT_MOST: u64 = 4 << 30;

/// Writes the file `name` that the CAB `cab` holds to `out`, expanded (MSZIP or LZX, by
/// the `cab` crate; a panic of its reader on a damaged file is an error), when it expands to
/// `at_most` bytes or fewer.
fn expand(cab: &Path, name: &str, out: &mut File, at_most: u64) -> Result<(), String> {
    let expanded = super::guard::guarded(|| -> io::Result<()> {
        let mut cabinet = cab::Cabinet::new(File::open(cab)?)?;
        let inner = cabinet
            .folder_entries()
            .flat_map(|f| f.file_entries())
            .map(|f| f.name().to_owned())
            .find(|n| {
                n.rsplit(['\\', '/'])
                    .next()
                    .is_some_and(|n| n.eq_ignore_ascii_case(name))
            });
        let Some(inner) = inner else {
            return Err(io::Error::other(format!("the CAB holds no {name}")));
        };
        let reader = cabinet.read_file(&inner)?;
        let copied = io::copy(&mut io::Read::take(reader, at_most + 1), out)?;
        if copied > at_most {
            let past = format!("it expands past {at_most} bytes, more than a PDB holds");
            return Err(io::Error::other(past));
        }
        Ok(())
    });
    match expanded {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(format!("it could not be expanded (a CAB): {e}")),
        Err(panicked) => Err(format!("it could not be expanded (a CAB): {panicked}")),
    }
}

/// A file being written under a temporary name: into a cache's store layout, renamed to
/// its place there when kept; or, with no cache, a scratch file in the system's temporary
/// folder. Deleted when dropped unkept, so a cache entry is whole or not there at all.
struct Pending {
    temporary: PathBuf,
    target: Option<PathBuf>,
    kept: bool,
    /// Where a scratch file is kept once read.
    scratch: Option<Scratch>,
}

impl Pending {
    /// A file to be `cache/NAME/KEY/NAME` (two-tier when the cache has `index2.txt`).
    fn in_cache(cache: &Path, name: &str, key: &str) -> io::Result<(Pending, File)> {
        let folder = store_folder(cache, name).join(key);
        fs::create_dir_all(&folder)?;
        let temporary = folder.join(format!(".{name}.{}.partial", std::process::id()));
        let file = File::create(&temporary)?;
        let pending = Pending {
            temporary,
            target: Some(folder.join(name)),
            kept: false,
            scratch: None,
        };
        Ok((pending, file))
    }

    /// A scratch file, never kept: what a symbol server sends when the path has no cache,
    /// read and then deleted.
    fn scratch(name: &str, scratch: &Scratch) -> io::Result<(Pending, File)> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temporary =
            std::env::temp_dir().join(format!("sptdump-{}-{n}-{name}", std::process::id()));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temporary)?;
        let pending = Pending {
            temporary,
            target: None,
            kept: false,
            scratch: Some(scratch.clone()),
        };
        Ok((pending, file))
    }

    /// Renames the file to its place in the cache; a scratch file stays where it is until
    /// the run is over ([`Scratch`]).
    fn keep(mut self) -> io::Result<Placed> {
        self.kept = true;
        let Some(target) = self.target.take() else {
            let scratch = self.temporary.clone();
            if let Some(files) = &self.scratch {
                files.keep(scratch.clone());
            }
            return Ok(Placed::Scratch(scratch));
        };
        if let Err(e) = fs::rename(&self.temporary, &target) {
            self.kept = false;
            return Err(e);
        }
        Ok(Placed::Cache(target))
    }
}

/// Where a file was kept.
enum Placed {
    /// In the cache, at its place.
    Cache(PathBuf),
    /// In a scratch file, deleted at the end of the run.
    Scratch(PathBuf),
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.kept {
            let _ = fs::remove_file(&self.temporary);
        }
    }
}

/// Copies `file` into the store layout of `cache`, whole or not at all: written to a
/// temporary name in its folder, then renamed. The file used is the copy, or `file` with a
/// note when the copy failed.
fn copy_to_cache<T>(
    file: &Path,
    cache: &Path,
    name: &str,
    key: &str,
    lookup: &mut Lookup<T>,
) -> (PathBuf, bool) {
    let copied = Pending::in_cache(cache, name, key).and_then(|(pending, mut to)| {
        io::copy(&mut File::open(file)?, &mut to)?;
        drop(to);
        pending.keep()
    });
    match copied {
        Ok(Placed::Cache(target)) => (target, true),
        Ok(Placed::Scratch(_)) => (file.to_owned(), false),
        Err(e) => {
            lookup.notes.push(format!(
                "{} could not be copied into the cache {}: {e}",
                file.display(),
                cache.display()
            ));
            (file.to_owned(), false)
        }
    }
}

/// Where an image named `name` (the binary's own file name) may be: `DIR/NAME` in the
/// plain directories, `ROOT/NAME/*/NAME` in the local stores. Empty for an unsafe name.
pub fn image_candidates(path: &SymbolPath, name: &str) -> Vec<(PathBuf, String)> {
    if unsafe_name(name).is_some() {
        return Vec::new();
    }
    let mut found = Vec::new();
    for place in places(path) {
        // Symbol servers index images by time stamp and size, which a trace does not hold.
        #[allow(irrefutable_let_patterns)]
        let Root::Local(root) = place.root else {
            continue;
        };
        let root = Path::new(root);
        let mut files = vec![root.join(name)];
        if let Ok(dirs) = fs::read_dir(root.join(name)) {
            let mut dirs: Vec<PathBuf> = dirs.flatten().map(|d| d.path().join(name)).collect();
            dirs.sort();
            files.extend(dirs);
        }
        for f in files.into_iter().filter(|f| f.is_file()) {
            found.push((f, place.from.to_owned()));
        }
    }
    found
}

/// One lookup's questions to a symbol server: `NAME` by `KEY`, in the store layout.
#[cfg(feature = "network")]
struct Server<'a> {
    place: &'a Place<'a>,
    fetch: &'a Fetch,
    name: &'a str,
    key: &'a str,
}

/// What asking a symbol server for one file came to.
#[cfg(feature = "network")]
#[derive(PartialEq, Eq)]
enum Asked {
    /// 404: not there.
    Missing,
    /// Found and used, found and not used, or failed (with a note).
    Answered,
}

#[cfg(feature = "network")]
impl Server<'_> {
    /// Asks the server at `base` for `BASE/NAME/KEY/NAME`, then, when it says 404 and has
    /// an `index2.txt`, for the two-tier `BASE/na/NAME/KEY/NAME`.
    fn search<T>(
        &self,
        base: &str,
        fits: &mut impl FnMut(&Path) -> Result<T, Unfit>,
        lookup: &mut Lookup<T>,
    ) {
        let (name, key) = (segment(self.name), segment(self.key));
        let base = base.trim_end_matches('/');
        if self.ask_either(&format!("{base}/{name}/{key}"), fits, lookup) == Asked::Answered {
            return;
        }
        // Any answer but 200 says the store is not two-tier.
        let index = format!("{base}/index2.txt");
        if let Ok(Some(_)) = symserver::get(&index, self.fetch) {
            let tier: String = self.name.chars().take(2).collect::<String>().to_lowercase();
            let tier = segment(&tier);
            self.ask_either(&format!("{base}/{tier}/{name}/{key}"), fits, lookup);
        }
    }

    /// Asks for `FOLDER/NAME` and, when it is not there, for its compressed form
    /// `FOLDER/NAME.pd_`, as symbol servers keep files compressed.
    fn ask_either<T>(
        &self,
        folder: &str,
        fits: &mut impl FnMut(&Path) -> Result<T, Unfit>,
        lookup: &mut Lookup<T>,
    ) -> Asked {
        let name = segment(self.name);
        if self.ask(&format!("{folder}/{name}"), fits, lookup) == Asked::Answered {
            return Asked::Answered;
        }
        let cab = segment(&cab_name(self.name));
        if cab == name {
            return Asked::Missing;
        }
        self.ask_compressed(&format!("{folder}/{cab}"), fits, lookup)
    }

    /// Asks for `url` (shown as `shown`, listed among the places looked at): what comes, or
    /// what asking came to when nothing does (a failure is a note).
    fn get<T>(
        &self,
        url: &str,
        shown: &str,
        lookup: &mut Lookup<T>,
    ) -> Result<symserver::Download, Asked> {
        lookup.looked.push(PathBuf::from(shown));
        match symserver::get(url, self.fetch) {
            Ok(None) => Err(Asked::Missing),
            Ok(Some(download)) => Ok(download),
            Err(why) => {
                let from = self.place.from;
                lookup.notes.push(format!("{why} (asked by {from})"));
                Err(Asked::Answered)
            }
        }
    }

    /// Asks for the compressed form at `url`: downloaded into a scratch file, then expanded
    /// as a local one is.
    fn ask_compressed<T>(
        &self,
        url: &str,
        fits: &mut impl FnMut(&Path) -> Result<T, Unfit>,
        lookup: &mut Lookup<T>,
    ) -> Asked {
        let shown = redacted(url);
        let from = self.place.from;
        let download = match self.get(url, &shown, lookup) {
            Ok(download) => download,
            Err(asked) => return asked,
        };
        let written = Pending::scratch(&cab_name(self.name), self.place.scratch).and_then(
            |(cab, mut file)| {
                download.write_to(&mut file).map_err(io::Error::other)?;
                Ok(cab)
            },
        );
        let cab = match written {
            Ok(cab) => cab,
            Err(e) => {
                lookup.notes.push(format!("{shown} (asked by {from}): {e}"));
                return Asked::Answered;
            }
        };
        let expanding = Expanding {
            place: self.place,
            name: self.name,
            key: self.key,
            downloaded: true,
        };
        expanding.expand(&cab.temporary, &shown, fits, lookup);
        // The CAB itself is deleted here: only what it holds is kept.
        Asked::Answered
    }

    /// Asks for `url`; what comes is written into the cache under a temporary name (or a
    /// scratch file without a cache), checked by `fits`, and kept only when it fits.
    fn ask<T>(
        &self,
        url: &str,
        fits: &mut impl FnMut(&Path) -> Result<T, Unfit>,
        lookup: &mut Lookup<T>,
    ) -> Asked {
        let shown = redacted(url);
        let from = self.place.from;
        let download = match self.get(url, &shown, lookup) {
            Ok(download) => download,
            Err(asked) => return asked,
        };
        let pending = match self.place.cache {
            Some(cache) => Pending::in_cache(Path::new(cache), self.name, self.key),
            None => Pending::scratch(self.name, self.place.scratch),
        };
        let (pending, mut file) = match pending {
            Ok(p) => p,
            Err(e) => {
                let to = self.place.cache.unwrap_or("a temporary file");
                lookup
                    .notes
                    .push(format!("{shown} could not be written into {to}: {e}"));
                return Asked::Answered;
            }
        };
        if let Err(why) = download.write_to(&mut file) {
            lookup.notes.push(format!("{why} (asked by {from})"));
            return Asked::Answered;
        }
        drop(file);
        let not_used = |why: String| format!("{shown} (found by {from}) is not used: {why}");
        // Only a file of the key asked for is kept, and read where it is kept (a PDB's
        // lines are read from it again later).
        if let Err(why) = self.is_keyed(&pending.temporary) {
            lookup.notes.push(not_used(why));
            return Asked::Answered;
        }
        let (kept, shown_as) = match pending.keep() {
            Ok(Placed::Cache(kept)) => (kept.clone(), kept),
            Ok(Placed::Scratch(scratch)) => (scratch, PathBuf::from(&shown)),
            Err(e) => {
                let cache = self.place.cache.unwrap_or_default();
                let why = format!("{shown} could not be kept in the cache {cache}: {e}");
                lookup.notes.push(why);
                return Asked::Answered;
            }
        };
        match fits(&kept) {
            Err(why) => lookup.notes.push(not_used(why.to_string())),
            Ok(value) => {
                lookup.found = Some(Found {
                    value,
                    file: shown_as,
                    from: from.to_owned(),
                    fetched: true,
                });
            }
        }
        Asked::Answered
    }

    /// Whether `file` is what was asked for: a PDB (for a `.pdb` name) of the key asked
    /// for. The reason when it is not.
    fn is_keyed(&self, file: &Path) -> Result<(), String> {
        is_keyed(file, self.name, self.key)
    }
}

/// Whether `file` is the one `key` names: a PDB (when `name` is one) of that GUID and age.
fn is_keyed(file: &Path, name: &str, key: &str) -> Result<(), String> {
    let id = ident::read(file).map_err(|e| e.to_string())?;
    if name.to_ascii_lowercase().ends_with(".pdb") && id.kind != Kind::Pdb {
        return Err(format!("it is a {}, not a PDB", id.kind));
    }
    let found = SymKey::new(id.guid, id.age).to_string();
    if found != key {
        return Err(format!(
            "it is {{{}}} age {}, the key asked for is {key}",
            registry_form(&id.guid),
            id.age,
        ));
    }
    Ok(())
}

/// `text` as one segment of a URL's path: every byte but letters, digits, `-`, `.`, `_`
/// and `~` percent-encoded, so that no name can add a segment, a query or a fragment, or be
/// decoded by the server into one (`%2e%2e%2f` is sent as `%252e%252e%252f`).
#[cfg(feature = "network")]
fn segment(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// "A, B, C and N more": the first few places of `looked`.
pub fn looked_at(looked: &[PathBuf]) -> String {
    const SHOWN: usize = 3;
    let mut s: Vec<String> = looked
        .iter()
        .take(SHOWN)
        .map(|p| p.display().to_string())
        .collect();
    if looked.len() > SHOWN {
        s.push(format!("and {} more", looked.len() - SHOWN));
    }
    s.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "42AC0098ADB5E7968C0E161D2814780E1";

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let p = dir.path().join(p);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        dir
    }

    /// Accepts a file whose text is "good".
    fn good(p: &Path) -> Result<String, Unfit> {
        let text = fs::read_to_string(p).unwrap();
        if text == "good" {
            Ok(text)
        } else {
            Err(format!("it says {text}").into())
        }
    }

    fn at(dir: &tempfile::TempDir, s: &str) -> String {
        dir.path().join(s).display().to_string()
    }

    #[test]
    fn plain_directory_then_store_layout() {
        let d = tree(&[
            ("plain/app.pdb", "good"),
            (&format!("s/app.pdb/{KEY}/app.pdb"), "good"),
        ]);
        let l = find(&SymbolPath::parse(&at(&d, "plain")), "app.pdb", KEY, good);
        assert_eq!(l.found.unwrap().file, d.path().join("plain/app.pdb"));
        let l = find(
            &SymbolPath::parse(&format!("srv*{}", at(&d, "s"))),
            "app.pdb",
            KEY,
            good,
        );
        let found = l.found.unwrap();
        assert_eq!(
            found.file,
            d.path().join(format!("s/app.pdb/{KEY}/app.pdb"))
        );
        assert!(!found.fetched);
    }

    #[test]
    fn two_tier_store_and_file_ptr() {
        let d = tree(&[
            ("s/index2.txt", ""),
            (&format!("s/ap/app.pdb/{KEY}/app.pdb"), "good"),
            (&format!("p/core.pdb/{KEY}/file.ptr"), "PATH:ELSEWHERE"),
            (&format!("m/core.pdb/{KEY}/file.ptr"), "MSG: withdrawn"),
            ("else/core.pdb", "good"),
        ]);
        let l = find(&SymbolPath::parse(&at(&d, "s")), "app.pdb", KEY, good);
        assert!(l.found.is_some());
        let ptr = d.path().join(format!("p/core.pdb/{KEY}/file.ptr"));
        fs::write(&ptr, format!("PATH:{}", at(&d, "else/core.pdb"))).unwrap();
        let l = find(&SymbolPath::parse(&at(&d, "p")), "core.pdb", KEY, good);
        assert_eq!(l.found.unwrap().file, d.path().join("else/core.pdb"));
        let l = find(&SymbolPath::parse(&at(&d, "m")), "core.pdb", KEY, good);
        assert!(l.found.is_none());
        assert!(l.notes[0].ends_with(": withdrawn"), "{:?}", l.notes);
    }

    /// A CAB's file is expanded when it holds up to the bound, and refused a byte past it.
    #[test]
    fn a_cab_is_expanded_up_to_its_bound() {
        let pe = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/pe");
        let (cab, pdb) = (pe.join("app.pd_"), fs::read(pe.join("app.pdb")).unwrap());
        let len = pdb.len() as u64;
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("app.pdb");
        expand(&cab, "app.pdb", &mut File::create(&out).unwrap(), len).unwrap();
        assert_eq!(fs::read(&out).unwrap(), pdb);
        let past = expand(&cab, "app.pdb", &mut File::create(&out).unwrap(), len - 1);
        let past = past.unwrap_err();
        assert!(
            past.ends_with(&format!(
                "it expands past {} bytes, more than a PDB holds",
                len - 1
            )),
            "{past}"
        );
    }

    /// The places looked at: three named, the rest counted.
    #[test]
    fn the_places_looked_at_are_named_up_to_three() {
        let places: Vec<PathBuf> = ["a", "b", "c", "d"].iter().map(PathBuf::from).collect();
        assert_eq!(looked_at(&places[..3]), "a, b, c");
        assert_eq!(looked_at(&places), "a, b, c, and 1 more");
    }

    #[test]
    fn a_compressed_file_that_is_not_a_cab_is_named_not_used() {
        let d = tree(&[(&format!("s/app.pdb/{KEY}/app.pd_"), "good")]);
        let l = find(&SymbolPath::parse(&at(&d, "s")), "app.pdb", KEY, good);
        assert!(l.found.is_none());
        assert!(
            l.notes[0].contains("app.pd_ (found by")
                && l.notes[0].contains("could not be expanded (a CAB)"),
            "{:?}",
            l.notes
        );
    }

    #[test]
    fn a_file_from_a_later_store_is_copied_into_the_cache() {
        let d = tree(&[(&format!("s/app.pdb/{KEY}/app.pdb"), "good")]);
        let path = SymbolPath::parse(&format!("srv*{}*{}", at(&d, "c"), at(&d, "s")));
        let found = find(&path, "app.pdb", KEY, good).found.unwrap();
        let cached = d.path().join(format!("c/app.pdb/{KEY}/app.pdb"));
        assert!(found.fetched);
        assert_eq!(found.file, cached);
        fs::remove_dir_all(d.path().join("s")).unwrap();
        let again = find(&path, "app.pdb", KEY, good).found.unwrap();
        assert_eq!((again.file, again.fetched), (cached, false));
        let left: Vec<_> = fs::read_dir(d.path().join(format!("c/app.pdb/{KEY}")))
            .unwrap()
            .collect();
        assert_eq!(left.len(), 1, "no temporary file is left");
    }

    #[test]
    fn a_file_that_does_not_fit_is_named_and_not_used() {
        let d = tree(&[("a/app.pdb", "other build"), ("b/app.pdb", "good")]);
        let path = SymbolPath::parse(&format!("{};{}", at(&d, "a"), at(&d, "b")));
        let l = find(&path, "app.pdb", KEY, good);
        assert_eq!(l.found.unwrap().file, d.path().join("b/app.pdb"));
        assert!(l.notes[0].contains("a/app.pdb") && l.notes[0].contains("other build"));
    }

    #[test]
    fn nothing_found_lists_where_it_looked() {
        let d = tree(&[]);
        let path = SymbolPath::parse(&format!("{};srv*{}", at(&d, "a"), at(&d, "b")));
        let l = find(&path, "app.pdb", KEY, good);
        assert!(l.found.is_none());
        assert_eq!(l.looked.len(), 4);
        assert!(looked_at(&l.looked).ends_with("and 1 more"));
    }

    #[test]
    fn hostile_names_are_never_looked_up_nor_written() {
        let d = tree(&[("s/x", "good")]);
        let path = SymbolPath::parse(&format!("srv*{}*{}", at(&d, "c"), at(&d, "s")));
        let before = fs::read_dir(d.path()).unwrap().count();
        for bad in ["../app.pdb", "..", "CON.pdb", "a/b.pdb", "C:x.pdb"] {
            let l = find(&path, bad, KEY, |_| Ok(()));
            assert!(l.found.is_none() && l.looked.is_empty(), "{bad}");
            assert!(image_candidates(&path, bad).is_empty());
        }
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), before);
    }

    #[cfg(feature = "network")]
    #[test]
    fn names_are_one_segment_of_a_url() {
        assert_eq!(segment("app.pdb"), "app.pdb");
        assert_eq!(segment("a b?#%2f/é.pdb"), "a%20b%3F%23%252f%2F%C3%A9.pdb");
    }

    #[test]
    fn images_by_name() {
        let d = tree(&[("plain/app.exe", ""), ("s/app.exe/5F3A1000/app.exe", "")]);
        let path = SymbolPath::parse(&format!("{};srv*{}", at(&d, "plain"), at(&d, "s")));
        let c = image_candidates(&path, "app.exe");
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].0, d.path().join("s/app.exe/5F3A1000/app.exe"));
    }
}
