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

/// Asks for `url`: `Ok(None)` when the server says 404 (not there), the file when it
/// says 200, and otherwise the reason, naming the URL without its credentials.
pub fn get(url: &str, fetch: &Fetch) -> Result<Option<Download>, String> {
    let shown = redacted(url);
    let failed = |why: String| format!("{shown}: {why}");
    let response = agent(fetch)
        .get(url)
        .call()
        .map_err(|e| failed(reason(&e, url)))?;
    match response.status().as_u16() {
        200 => {}
        404 => return Ok(None),
        code => {
            let text = response.status().canonical_reason().unwrap_or("");
            return Err(failed(format!("the server answered {code} {text}")));
        }
    }
    let body = response.into_body();
    if let Some(length) = body.content_length().filter(|&n| n > MAX_BYTES) {
        return Err(failed(format!(
            "it is {length} bytes, over the {MAX_BYTES} fetched"
        )));
    }
    Ok(Some(Download {
        body,
        shown,
        progress: fetch.progress,
    }))
}

impl Download {
    /// Writes the whole body to `out`: its length, or the reason (naming the URL) it could
    /// not. A download that takes over a second draws a progress bar, when asked for one.
    pub fn write_to(self, out: &mut impl Write) -> Result<u64, String> {
        let failed = |why: String| format!("{}: {why}", self.shown);
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
                Err(e) => return Err(failed(format!("the download broke off: {e}"))),
            };
            out.write_all(&buffer[..n])
                .map_err(|e| failed(format!("cannot write what came: {e}")))?;
            written += n as u64;
            meter.at(&self.shown, total, written);
        }
        drop(meter);
        if total.is_some_and(|t| t != written) {
            return Err(failed(format!(
                "{written} bytes came of the {} announced",
                total.unwrap_or(0)
            )));
        }
        out.flush()
            .map_err(|e| failed(format!("cannot write: {e}")))?;
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
