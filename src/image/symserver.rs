//! Symbol servers over HTTP and HTTPS (the `network` feature): one file asked for by its
//! URL, its body written where the caller says, within the time-outs of [`Fetch`] and a
//! bound on its size. Only [`super::symstore`] builds the URLs, from names already checked.

use std::io::{self, Read, Write};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::symbolpath::{Fetch, Progress, redacted};

/// The largest file fetched: 4 GiB, the most a PDB of 4 KiB pages holds. A server that
/// announces more is refused before anything is written; one that sends more is cut off
/// and what it sent deleted.
pub const MAX_BYTES: u64 = 4 << 30;

/// A file a server has (status 200), ready to be read.
pub struct Download {
    body: ureq::Body,
    shown: String,
    progress: Option<fn(Progress<'_>)>,
}

/// Why a symbol server's file could not be had: the URL (without its credentials), and
/// why.
#[derive(Debug, thiserror::Error)]
#[error("{url}: {why}")]
pub struct ServerError {
    /// The URL asked for, without its credentials.
    pub url: String,
    /// Why.
    pub why: Failure,
}

/// Why a request to a symbol server failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Failure {
    /// No answer, or not one of HTTP (time-outs, names, connections, TLS), as the client
    /// said it.
    #[error("{0}")]
    Request(String),
    /// An answer neither 200 nor 404.
    #[error("the server answered {code} {text}")]
    Status {
        /// The status code.
        code: u16,
        /// What it means.
        text: &'static str,
    },
    /// A file over [`MAX_BYTES`].
    #[error("it is {0} bytes, over the {MAX_BYTES} fetched")]
    TooLarge(u64),
    /// The download stopped before its end.
    #[error("the download broke off: {0}")]
    BrokeOff(io::Error),
    /// What came could not be written.
    #[error("cannot write what came: {0}")]
    CannotWrite(io::Error),
    /// Fewer bytes came than the server announced.
    #[error("{came} bytes came of the {announced} announced")]
    Short {
        /// What came.
        came: u64,
        /// What was announced.
        announced: u64,
    },
    /// What came could not be written out at its end.
    #[error("cannot write: {0}")]
    CannotFlush(io::Error),
}

/// Asks for `url`: `Ok(None)` when the server says 404 (not there), the file when it
/// says 200.
///
/// # Errors
///
/// Any other answer, or none, naming the URL without its credentials.
pub fn get(url: &str, fetch: &Fetch) -> Result<Option<Download>, ServerError> {
    let shown = redacted(url);
    let failed = |why: Failure| ServerError {
        url: shown.clone(),
        why,
    };
    let response = agent(fetch)
        .get(url)
        .call()
        .map_err(|e| failed(Failure::Request(reason(&e, url))))?;
    match response.status().as_u16() {
        200 => {}
        404 => return Ok(None),
        code => {
            let text = response.status().canonical_reason().unwrap_or("");
            return Err(failed(Failure::Status { code, text }));
        }
    }
    let body = response.into_body();
    if let Some(length) = body.content_length().filter(|&n| n > MAX_BYTES) {
        return Err(failed(Failure::TooLarge(length)));
    }
    Ok(Some(Download {
        body,
        shown,
        progress: fetch.progress,
    }))
}

impl Download {
    /// Writes the whole body to `out`: its length. A download that takes over a second
    /// draws a progress bar, when asked for one.
    ///
    /// # Errors
    ///
    /// Why it could not be written whole, naming the URL.
    pub fn write_to(self, out: &mut impl Write) -> Result<u64, ServerError> {
        let Download {
            body,
            shown,
            progress,
        } = self;
        let total = body.content_length();
        let mut reader = body.into_with_config().limit(MAX_BYTES).reader();
        let mut meter = Meter {
            tell: progress,
            started: Instant::now(),
            shown: false,
        };
        let copied = copy(&mut reader, out, |written| meter.at(&shown, total, written));
        drop(meter);
        let failed = |why: Failure| ServerError {
            url: shown.clone(),
            why,
        };
        let written = copied.map_err(failed)?;
        if total.is_some_and(|t| t != written) {
            return Err(failed(Failure::Short {
                came: written,
                announced: total.unwrap_or(0),
            }));
        }
        out.flush().map_err(|e| failed(Failure::CannotFlush(e)))?;
        Ok(written)
    }
}

/// Copies `reader` to `out` to its end, through reads a signal cut short, telling `at` how
/// many bytes are written after each write.
fn copy(
    reader: &mut impl Read,
    out: &mut impl Write,
    mut at: impl FnMut(u64),
) -> Result<u64, Failure> {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut written = 0u64;
    loop {
        let n = match reader.read(&mut buffer) {
            Ok(0) => return Ok(written),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::BrokeOff(e)),
        };
        out.write_all(&buffer[..n]).map_err(Failure::CannotWrite)?;
        written += n as u64;
        at(written);
    }
}

/// Tells whoever wants to know how a download goes, once it has taken a second; says it
/// ended when dropped.
struct Meter {
    tell: Option<fn(Progress<'_>)>,
    started: Instant,
    shown: bool,
}

impl Meter {
    fn at(&mut self, url: &str, total: Option<u64>, written: u64) {
        let Some(tell) = self.tell else { return };
        if !self.shown && self.started.elapsed() > Duration::from_secs(1) {
            self.shown = true;
            tell(Progress::Begun { url, total });
        }
        if self.shown {
            tell(Progress::At(written));
        }
    }
}

impl Drop for Meter {
    fn drop(&mut self) {
        if let (Some(tell), true) = (self.tell, self.shown) {
            tell(Progress::Ended);
        }
    }
}

/// Why a request failed, without the URL's credentials.
fn reason(e: &ureq::Error, url: &str) -> String {
    let text = match e {
        ureq::Error::Timeout(_) => format!("no answer in time ({e})"),
        ureq::Error::HostNotFound => "the host was not found".to_owned(),
        ureq::Error::ConnectionFailed => "the connection failed".to_owned(),
        _ => e.to_string(),
    };
    text.replace(url, &redacted(url))
}

/// The client of the time-outs of `fetch`, made once and kept (its connections are
/// reused from one request to the next).
fn agent(fetch: &Fetch) -> ureq::Agent {
    static KEPT: Mutex<Option<(Duration, Duration, ureq::Agent)>> = Mutex::new(None);
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    match &*kept {
        Some((c, r, agent)) if (*c, *r) == (fetch.connect, fetch.read) => agent.clone(),
        _ => {
            let config = ureq::Agent::config_builder()
                .timeout_connect(Some(fetch.connect))
                .timeout_per_read(Some(fetch.read))
                .http_status_as_error(false)
                .user_agent(concat!("sptdump/", env!("CARGO_PKG_VERSION")))
                .build();
            let agent = ureq::Agent::new_with_config(config);
            *kept = Some((fetch.connect, fetch.read, agent.clone()));
            agent
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::symbolpath::Fetch;

    /// A reader that gives its parts in turn, each a read's bytes or an error of a kind.
    struct Parts(Vec<Result<&'static [u8], io::ErrorKind>>);

    impl Read for Parts {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let part = self.0.remove(0).map_err(io::Error::from)?;
            buf[..part.len()].copy_from_slice(part);
            Ok(part.len())
        }
    }

    #[test]
    fn a_read_a_signal_cut_short_is_read_again_and_any_other_failure_breaks_off() {
        use io::ErrorKind::{ConnectionReset, Interrupted};
        let mut reader = Parts(vec![
            Err(Interrupted),
            Ok(b"abc"),
            Err(Interrupted),
            Ok(b"de"),
        ]);
        let (mut out, mut told) = (Vec::new(), Vec::new());
        let written = copy(&mut reader, &mut out, |n| told.push(n)).unwrap();
        assert_eq!(
            (written, &out[..], &told[..]),
            (5, &b"abcde"[..], &[3, 5][..])
        );
        let mut reader = Parts(vec![Ok(b"abc"), Err(ConnectionReset), Ok(b"de")]);
        let broke = copy(&mut reader, &mut Vec::new(), |_| {}).unwrap_err();
        assert!(
            matches!(&broke, Failure::BrokeOff(e) if e.kind() == ConnectionReset),
            "{broke:?}"
        );
    }

    static TOLD: Mutex<Vec<String>> = Mutex::new(Vec::new());

    fn tell(p: Progress<'_>) {
        TOLD.lock().unwrap().push(format!("{p:?}"));
    }

    /// A download is told of once it has taken a second, then at each write, then its end;
    /// one that took less is never told of.
    #[test]
    fn a_download_is_told_of_once_it_has_taken_a_second() {
        let url = "https://example.test/app.pdb";
        // Started an hour from now: however slow the machine, no time has passed (`elapsed`
        // is 0 for an instant still to come).
        let mut quick = Meter {
            tell: Some(tell),
            started: Instant::now() + Duration::from_secs(3600),
            shown: false,
        };
        quick.at(url, Some(10), 4);
        drop(quick);
        assert!(TOLD.lock().unwrap().is_empty());
        let mut slow = Meter {
            tell: Some(tell),
            started: Instant::now().checked_sub(Duration::from_secs(2)).unwrap(),
            shown: false,
        };
        slow.at(url, Some(10), 4);
        slow.at(url, Some(10), 10);
        drop(slow);
        assert_eq!(
            *TOLD.lock().unwrap(),
            [
                format!("Begun {{ url: {url:?}, total: Some(10) }}"),
                "At(4)".to_owned(),
                "At(10)".to_owned(),
                "Ended".to_owned(),
            ]
        );
    }

    /// The client is kept for the time-outs it was made with, and made anew for others.
    #[test]
    fn the_client_has_the_time_outs_asked_for() {
        let secs = Duration::from_secs;
        for s in [3, 3, 7, 3] {
            let fetch = Fetch {
                connect: secs(s),
                read: secs(s + 1),
                ..Fetch::default()
            };
            let agent = agent(&fetch);
            let c = agent.config();
            let made = (c.timeouts().connect, c.timeout_per_read());
            assert_eq!(made, (Some(secs(s)), Some(secs(s + 1))));
        }
    }

    #[test]
    fn a_failed_request_is_said_in_our_words_without_credentials() {
        let url = "https://me:secret@example.test/app.pdb";
        let said = |e: ureq::Error| reason(&e, url);
        assert_eq!(said(ureq::Error::HostNotFound), "the host was not found");
        assert_eq!(said(ureq::Error::ConnectionFailed), "the connection failed");
        let bad = said(ureq::Error::BadUri(url.to_owned()));
        assert_eq!(bad, format!("bad uri: {}", redacted(url)));
        assert!(!bad.contains("secret"), "{bad}");
    }
}
