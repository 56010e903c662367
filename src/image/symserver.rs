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
        let shown = self.shown.clone();
        let failed = |why: Failure| ServerError {
            url: shown.clone(),
            why,
        };
        let total = self.body.content_length();
        let mut reader = self.body.into_with_config().limit(MAX_BYTES).reader();
        let mut meter = Meter {
            tell: self.progress,
            started: Instant::now(),
            shown: false,
        };
        let mut buffer = vec![0u8; 64 * 1024];
        let mut written = 0u64;
        loop {
            let n = match reader.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(failed(Failure::BrokeOff(e))),
            };
            out.write_all(&buffer[..n])
                .map_err(|e| failed(Failure::CannotWrite(e)))?;
            written += n as u64;
            meter.at(&self.shown, total, written);
        }
        drop(meter);
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
