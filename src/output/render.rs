//! A report that writes itself: every view's report, every verdict and every section of a
//! trace, in text and in JSON Lines.

use std::io;

use super::json::Json;
use super::reported::Reported;
use super::text::Text;

/// A report, written out: as text for people, as JSON Lines for pipelines. Every view's
/// report, every verdict and every section of a trace is one; [`Printer::show`](super::Printer::show) writes it in
/// the format of the run.
pub trait Render {
    /// Writes it as text.
    ///
    /// # Errors
    ///
    /// When the output cannot be written.
    fn text(&self, t: &mut Text<'_>) -> io::Result<()>;
    /// Writes it as JSON Lines.
    ///
    /// # Errors
    ///
    /// When the output cannot be written.
    fn json(&self, j: &mut Json<'_>) -> io::Result<()>;

    /// What it reports, as a value, for a program that reads values rather than text
    /// ([`Collected`](super::Collected)); none when it is not a view's report.
    fn reported(&self) -> Option<Reported> {
        None
    }
}
