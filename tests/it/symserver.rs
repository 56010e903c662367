//! `/symbols` over HTTP: a symbol server the tests start on 127.0.0.1 (a thread speaking
//! just enough HTTP/1.1) serves a store of the fixtures' PDBs; what sptdump asked for is in
//! the server's log.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{crate_root, json_lines, status, stderr, stdout};
use crate::symbols::{APP_KEY, CORE_KEY, TRACE, listing, named_trace, put, s};

/// What the server answers for a path (a path it does not know: 404).
#[derive(Clone)]
enum Reply {
    /// 200 and the bytes.
    File(Vec<u8>),
    /// This status and no body.
    Status(u16),
    /// 200 announcing this many bytes, the bytes given, then the connection closed.
    Short(Vec<u8>, usize),
    /// Nothing for a minute.
    Stall,
}

/// A symbol server on 127.0.0.1, stopped when dropped.
struct Server {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Serves `routes` (paths under `/symbols/`) until dropped.
    fn start(routes: &[(&str, Reply)]) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let routes: Arc<HashMap<String, Reply>> = Arc::new(
            routes
                .iter()
                .map(|(p, r)| (format!("/symbols/{p}"), r.clone()))
                .collect(),
        );
        let log = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (l, st) = (Arc::clone(&log), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (routes, log) = (Arc::clone(&routes), Arc::clone(&l));
                std::thread::spawn(move || answer(conn, &routes, &log));
            }
        });
        Server {
            addr,
            log,
            stop,
            thread: Some(thread),
        }
    }

    /// The store's URL.
    fn url(&self) -> String {
        format!("http://{}/symbols", self.addr)
    }

    /// The paths asked for so far, in order.
    fn requests(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which then stops listening.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

/// Reads one request on `conn`, logs its path and answers it.
fn answer(mut conn: TcpStream, routes: &HashMap<String, Reply>, log: &Mutex<Vec<String>>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
        match conn.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head);
    let Some(path) = head.split(' ').nth(1) else {
        return;
    };
    log.lock().unwrap().push(path.to_owned());
    let status =
        |code: u16| format!("HTTP/1.1 {code} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    let ok =
        |n: usize| format!("HTTP/1.1 200 OK\r\nContent-Length: {n}\r\nConnection: close\r\n\r\n");
    let _ = match routes.get(path) {
        None => conn.write_all(status(404).as_bytes()),
        Some(Reply::Status(code)) => conn.write_all(status(*code).as_bytes()),
        Some(Reply::File(bytes)) => conn
            .write_all(ok(bytes.len()).as_bytes())
            .and_then(|()| conn.write_all(bytes)),
        Some(Reply::Short(bytes, announced)) => conn
            .write_all(ok(*announced).as_bytes())
            .and_then(|()| conn.write_all(bytes)),
        Some(Reply::Stall) => {
            std::thread::sleep(Duration::from_secs(60));
            Ok(())
        }
    };
}

/// A fixture's bytes.
fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(crate_root().join("testdata/pe").join(name)).unwrap()
}

/// `sptdump ARGS` with the proxy variables removed (the server is on 127.0.0.1), the
/// system's temporary folder at `tmp` and `env` set.
fn sptdump(args: &[&str], tmp: &Path, env: &[(&str, &str)]) -> Output {
    let mut cmd = assert_cmd::Command::cargo_bin("sptdump").unwrap();
    cmd.current_dir(crate_root()).env("TMPDIR", tmp);
    for proxy in [
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
    ] {
        cmd.env_remove(proxy);
    }
    cmd.envs(env.iter().copied());
    cmd.args(args).output().unwrap()
}

/// The lines of `/json /functions /symbols:PATH` over the fixture trace, of `kind`.
fn lines_of(o: &Output, kind: &str) -> Vec<Value> {
    assert_eq!(status(o), 0, "{}", stderr(o));
    json_lines(o)
        .into_iter()
        .filter(|l| l["type"] == kind)
        .collect()
}

/// The notes' messages.
fn notes_of(o: &Output) -> Vec<String> {
    lines_of(o, "note")
        .iter()
        .map(|l| l["message"].as_str().unwrap().to_owned())
        .collect()
}

/// `/json /functions /symbols:PATH TRACE`.
fn json_run(path: &str, tmp: &Path, env: &[(&str, &str)]) -> Output {
    sptdump(
        &["/json", "/functions", &format!("/symbols:{path}"), TRACE],
        tmp,
        env,
    )
}

/// The files (not folders) under `dir`.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    if !dir.exists() {
        return Vec::new();
    }
    listing(dir).into_iter().filter(|p| p.is_file()).collect()
}

fn app_path() -> String {
    format!("app.pdb/{APP_KEY}/app.pdb")
}

#[test]
fn a_fetched_pdb_is_cached_whole_and_found_there_offline() {
    let d = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&[(&app_path(), Reply::File(fixture("app.pdb")))]);
    let cache = d.path().join("cache");
    let path = format!("srv*{}*{}", s(&cache), server.url());
    let o = json_run(&path, tmp.path(), &[]);
    let lines = lines_of(&o, "symbols");
    let cached = cache.join(app_path());
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["pdb"], s(&cached));
    assert_eq!(lines[0]["fetched"], true);
    assert_eq!(lines[0]["from"], path);
    assert_eq!(std::fs::read(&cached).unwrap(), fixture("app.pdb"));
    assert_eq!(
        files(&cache),
        std::slice::from_ref(&cached),
        "no temporary file is left"
    );
    // core.pdb: a 404 is "not there", named only among the places looked at.
    let core = format!("{}/core.pdb/{CORE_KEY}/core.pdb", server.url());
    let notes = notes_of(&o);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("no PDB found for core.dll") && n.contains(&core)),
        "{notes:?}"
    );
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(
        server.requests(),
        [
            format!("/symbols/{}", app_path()),
            format!("/symbols/core.pdb/{CORE_KEY}/core.pdb"),
            // Not there: its compressed form, as symbol servers keep files.
            format!("/symbols/core.pdb/{CORE_KEY}/core.pd_"),
            "/symbols/index2.txt".to_owned()
        ]
    );
    drop(server);
    let again = lines_of(&json_run(&path, tmp.path(), &[]), "symbols");
    assert_eq!(
        (&again[0]["pdb"], &again[0]["fetched"]),
        (&s(&cached).into(), &false.into())
    );
    assert!(files(tmp.path()).is_empty());
}

#[test]
fn functions_by_a_server_are_as_by_pdb() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&[(&app_path(), Reply::File(fixture("app.pdb")))]);
    let text = |args: &[&str]| {
        let o = sptdump(args, tmp.path(), &[]);
        assert_eq!(status(&o), 0, "{}", stderr(&o));
        // The PDB's lines are read again from where it was kept.
        assert!(!stderr(&o).contains("cannot read"), "{}", stderr(&o));
        stdout(&o)
            .lines()
            .filter(|l| !l.starts_with("Symbols of "))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
    };
    let by_server = text(&[
        "/functions",
        &format!("/symbols:srv*{}", server.url()),
        TRACE,
    ]);
    let by_pdb = text(&["/functions", "/pdb:testdata/pe/app.pdb", TRACE]);
    assert_eq!(by_server, by_pdb);
    assert_ne!(
        by_server,
        text(&["/functions", TRACE]),
        "the PDB names something"
    );
}

#[test]
fn without_a_cache_the_download_is_read_and_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let server = Server::start(&[(&app_path(), Reply::File(fixture("app.pdb")))]);
    let o = json_run(&format!("srv*{}", server.url()), tmp.path(), &[]);
    let lines = lines_of(&o, "symbols");
    assert_eq!(lines[0]["pdb"], format!("{}/{}", server.url(), app_path()));
    assert_eq!(lines[0]["fetched"], true);
    assert!(files(tmp.path()).is_empty(), "{:?}", files(tmp.path()));
}

#[test]
fn failures_are_notes_naming_the_url_without_its_credentials() {
    let d = tempfile::tempdir().unwrap();
    let server = Server::start(&[(&app_path(), Reply::Status(500))]);
    let with_secret = server.url().replace("http://", "http://me:secret@");
    let cache = d.path().join("cache");
    let o = json_run(&format!("srv*{}*{with_secret}", s(&cache)), d.path(), &[]);
    assert!(!stdout(&o).contains("secret") && !stderr(&o).contains("secret"));
    let notes = notes_of(&o);
    let url = format!("{}/{}", server.url(), app_path());
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with(&format!("{url}: the server answered 500"))),
        "{notes:?}"
    );
    assert!(lines_of(&o, "symbols").is_empty());
    assert!(files(&cache).is_empty());
    // Nobody listening.
    let closed = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let o = json_run(&format!("srv*http://{closed}/s"), d.path(), &[]);
    let notes = notes_of(&o);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with(&format!("http://{closed}/s/{}: ", app_path()))),
        "{notes:?}"
    );
}

#[test]
fn a_pdb_of_another_build_is_named_and_not_kept() {
    let d = tempfile::tempdir().unwrap();
    let core = format!("core.pdb/{CORE_KEY}/core.pdb");
    let server = Server::start(&[(&core, Reply::File(fixture("v2/core.pdb")))]);
    let cache = d.path().join("cache");
    let o = json_run(
        &format!("srv*{}*{}", s(&cache), server.url()),
        d.path(),
        &[],
    );
    let notes = notes_of(&o);
    let url = format!("{}/{core}", server.url());
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with(&format!("{url} (found by srv*"))
                && n.contains("is not used: it is {")),
        "{notes:?}"
    );
    assert!(lines_of(&o, "symbols").is_empty());
    assert!(files(&cache).is_empty(), "{:?}", files(&cache));
}

/// A download cut short, or announced past the most fetched (refused before a byte is
/// read), leaves nothing and says why; one announced at exactly the most is read, here until
/// it breaks off.
#[test]
fn a_download_cut_short_or_too_large_leaves_nothing() {
    use sptdump::image::symserver::MAX_BYTES;
    let pdb = fixture("app.pdb");
    let most = usize::try_from(MAX_BYTES).unwrap();
    let broke = "the download broke off".to_owned();
    let past = format!("it is {} bytes, over the {MAX_BYTES} fetched", most + 1);
    for (sent, announced, says) in [
        (pdb.len() / 2, pdb.len(), &broke),
        (4, most + 1, &past),
        (4, most, &broke),
    ] {
        let d = tempfile::tempdir().unwrap();
        let reply = Reply::Short(pdb[..sent].to_vec(), announced);
        let server = Server::start(&[(&app_path(), reply)]);
        let cache = d.path().join("cache");
        let path = format!("srv*{}*{}", s(&cache), server.url());
        let o = json_run(&path, d.path(), &[]);
        let notes = notes_of(&o);
        let said = format!("{}/{}: {says}", server.url(), app_path());
        assert!(
            notes.iter().any(|n| n.starts_with(&said)),
            "{announced}: {notes:?}"
        );
        assert!(lines_of(&o, "symbols").is_empty());
        assert!(files(&cache).is_empty(), "{:?}", files(&cache));
    }
}

#[test]
fn a_two_tier_store_is_served() {
    let tmp = tempfile::tempdir().unwrap();
    let tiered = format!("ap/{}", app_path());
    let server = Server::start(&[
        ("index2.txt", Reply::File(Vec::new())),
        (&tiered, Reply::File(fixture("app.pdb"))),
    ]);
    let o = json_run(&format!("srv*{}", server.url()), tmp.path(), &[]);
    let lines = lines_of(&o, "symbols");
    assert_eq!(lines[0]["pdb"], format!("{}/{tiered}", server.url()));
    let asked = server.requests();
    assert_eq!(
        asked[..4],
        [
            format!("/symbols/{}", app_path()),
            format!("/symbols/app.pdb/{APP_KEY}/app.pd_"),
            "/symbols/index2.txt".to_owned(),
            format!("/symbols/{tiered}")
        ]
    );
}

#[test]
fn a_server_that_does_not_answer_times_out() {
    let d = tempfile::tempdir().unwrap();
    let server = Server::start(&[(&app_path(), Reply::Stall)]);
    let cache = d.path().join("cache");
    let started = Instant::now();
    let path = format!("srv*{}*{}", s(&cache), server.url());
    let o = json_run(&path, d.path(), &[("SPTDUMP_SYMBOL_TIMEOUT", "5,1")]);
    // The server would hold the request for a minute.
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let notes = notes_of(&o);
    let url = format!("{}/{}", server.url(), app_path());
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with(&format!("{url}: no answer in time"))),
        "{notes:?}"
    );
    assert!(files(&cache).is_empty());
    let o = json_run(&path, d.path(), &[("SPTDUMP_SYMBOL_TIMEOUT", "soon")]);
    assert_eq!(status(&o), 2);
    assert!(
        stderr(&o).contains("SPTDUMP_SYMBOL_TIMEOUT"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn hostile_names_never_reach_a_url() {
    let d = tempfile::tempdir().unwrap();
    let names = [
        "../app.exe",
        "a\\app.exe",
        "x/app.exe",
        "C:app.exe",
        "CON.exe",
        ".exe",
        "app.exe",
        "%2e%2e%2fapp.exe",
    ];
    let trace = named_trace(d.path(), &names);
    put(d.path(), "app.pdb", "app.pdb");
    let server = Server::start(&[(&app_path(), Reply::File(fixture("app.pdb")))]);
    let cache = d.path().join("cache");
    let before = listing(d.path());
    let arg = format!("/symbols:srv*{}*{}", s(&cache), server.url());
    let o = sptdump(&["/json", "/functions", &arg, &s(&trace)], d.path(), &[]);
    let found = lines_of(&o, "symbols");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["name"], "app.exe");
    // Only the safe names were asked for, each one segment (a server decodes `%25` to `%`,
    // never to `/`), and only the cache was written to.
    let escaped = format!("%252e%252e%252fapp.pdb/{APP_KEY}/%252e%252e%252fapp.pdb");
    assert_eq!(
        server.requests(),
        [
            format!("/symbols/{}", app_path()),
            format!("/symbols/{escaped}"),
            format!("/symbols/{}_", &escaped[..escaped.len() - 1]),
            "/symbols/index2.txt".to_owned()
        ]
    );
    let after: Vec<_> = listing(d.path())
        .into_iter()
        .filter(|p| !p.starts_with(&cache))
        .collect();
    assert_eq!(after, before);
}

#[test]
fn match_alone_asks_a_server_whether_it_holds_the_build() {
    let tmp = tempfile::tempdir().unwrap();
    let core = format!("core.pdb/{CORE_KEY}/core.pdb");
    let server = Server::start(&[(&app_path(), Reply::File(fixture("app.pdb")))]);
    let arg = format!("/symbols:srv*{}", server.url());
    let o = sptdump(&["/match", &arg, TRACE], tmp.path(), &[]);
    assert_eq!(status(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("the symbol path holds no PDB of core.dll"));
    let server = Server::start(&[
        (&app_path(), Reply::File(fixture("app.pdb"))),
        (&core, Reply::File(fixture("core.pdb"))),
    ]);
    let arg = format!("/symbols:srv*{}", server.url());
    let o = sptdump(&["/match", &arg, TRACE], tmp.path(), &[]);
    assert_eq!(status(&o), 0, "{}", stderr(&o));
}

#[test]
fn a_cache_element_keeps_what_a_later_server_sends() {
    let d = tempfile::tempdir().unwrap();
    let server = Server::start(&[(&app_path(), Reply::File(fixture("app.pdb")))]);
    let cache = d.path().join("c");
    let path = format!("cache*{};symsrv*symsrv.dll*{}", s(&cache), server.url());
    let lines = lines_of(&json_run(&path, d.path(), &[]), "symbols");
    let cached = cache.join(app_path());
    assert_eq!(lines[0]["pdb"], s(&cached));
    assert_eq!(lines[0]["fetched"], true);
    assert_eq!(std::fs::read(&cached).unwrap(), fixture("app.pdb"));
}

#[test]
fn a_compressed_pdb_is_fetched_expanded_and_cached_as_the_pdb() {
    // app.pd_ is app.pdb in a cabinet (MSZIP), written by gcab (testdata/pe/build.sh).
    let d = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let compressed = format!("app.pdb/{APP_KEY}/app.pd_");
    let server = Server::start(&[(&compressed, Reply::File(fixture("app.pd_")))]);
    let cache = d.path().join("cache");
    let o = json_run(
        &format!("srv*{}*{}", s(&cache), server.url()),
        tmp.path(),
        &[],
    );
    let lines = lines_of(&o, "symbols");
    let cached = cache.join(app_path());
    assert_eq!(
        (&lines[0]["pdb"], &lines[0]["fetched"]),
        (&s(&cached).into(), &true.into())
    );
    assert_eq!(std::fs::read(&cached).unwrap(), fixture("app.pdb"));
    assert_eq!(
        files(&cache),
        std::slice::from_ref(&cached),
        "the CAB is not kept"
    );
    assert_eq!(
        server.requests()[..2],
        [
            format!("/symbols/{}", app_path()),
            format!("/symbols/{compressed}")
        ]
    );
    // Without a cache: expanded into a scratch file, read and deleted.
    let o = json_run(&format!("srv*{}", server.url()), tmp.path(), &[]);
    let lines = lines_of(&o, "symbols");
    assert_eq!(
        (&lines[0]["pdb"], &lines[0]["fetched"]),
        (
            &format!("{}/{compressed}", server.url()).into(),
            &true.into()
        )
    );
    assert!(files(tmp.path()).is_empty(), "{:?}", files(tmp.path()));
}
