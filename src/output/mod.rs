//! Output: every format behind one `Printer` trait, in the order the dump calls it.
//!
//! Per file: `Printer::begin_file`, then the selected sections in file order (header,
//! string table, program IDs, events), then the summary, then the verdicts of `/match` and
//! `/validate`. Diagnostics may come at any point after `begin_file`.
//!
//! `text` is for people and `diff`, `json` for pipelines; [`Output`] is either, as the
//! options choose. An exporter that writes a file of its own goes here too, beside them, and
//! reads an analysis's report: `flamegraph` draws the folded stacks as an SVG, `pprof` and
//! `speedscope` write the profile for those viewers. spddump's views of an SPD are `views::spd`.
use std::io::{self, Write};

use crate::format::diag::Diagnostic;
use crate::format::record::Record;
use crate::format::tables::Tables;
use crate::image::attached::SymbolMap;

pub(crate) mod cfgsvg;
mod collected;
pub mod compared;
pub mod etl;
mod file;
pub(crate) mod flamegraph;
pub(crate) mod gzip;
pub(crate) mod html;
pub(crate) mod json;
mod out;
#[cfg(feature = "parquet")]
pub(crate) mod parquet;
pub(crate) mod pprof;
mod printer;
mod render;
mod reported;
pub mod sections;
pub mod spdblocks;

pub(crate) mod speedscope;
pub(crate) mod text;
pub mod verdicts;

use json::JsonPrinter;
use text::TextPrinter;

pub use collected::Collected;
pub use file::FileInfo;
pub use json::Json;
pub(crate) use out::Out;
pub use printer::Format;
pub use printer::{Printer, Recorded};
pub(crate) use printer::{Recorder, percent, push_dec};
pub use render::Render;
pub use reported::Reported;
pub use text::Text;

/// A printer of either format, chosen at run time (the driver's `printer` makes one): what the
/// driver prints a run into.
pub struct Output<W: Write, E: Write>(Either<W, E>);

/// The printers, an enum rather than a trait object, so that the per-record calls stay
/// direct.
enum Either<W: Write, E: Write> {
    /// Text.
    Text(TextPrinter<W, E>),
    /// JSON Lines.
    Json(JsonPrinter<W, E>),
}

impl<W: Write, E: Write> Output<W, E> {
    /// A printer of `format` writing to `out`, and diagnostics to `err`. `verdicts_only`
    /// (`/validate` alone) leaves out text's `File:` line, as each verdict names its file.
    pub fn new(format: Format, verdicts_only: bool, out: W, err: E) -> Self {
        Output(match format {
            Format::Text if verdicts_only => {
                Either::Text(TextPrinter::new(out, err).without_banner())
            }
            Format::Text => Either::Text(TextPrinter::new(out, err)),
            Format::Json => Either::Json(JsonPrinter::new(out, err)),
        })
    }

    /// Gives back the writers.
    pub fn into_inner(self) -> (W, E) {
        match self.0 {
            Either::Text(p) => p.into_inner(),
            Either::Json(p) => p.into_inner(),
        }
    }

    /// Writes out what is buffered.
    pub fn flush(&mut self) -> io::Result<()> {
        Printer::flush(self)
    }
}

/// Calls the same method on whichever printer is inside.
macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {
        $(
            #[inline]
            fn $name(&mut self, $($arg: $ty),*) -> io::Result<()> {
                match &mut self.0 {
                    Either::Text(p) => p.$name($($arg),*),
                    Either::Json(p) => p.$name($($arg),*),
                }
            }
        )*
    };
}

impl<W: Write, E: Write> Printer for Output<W, E> {
    fn replays(&self) -> bool {
        true
    }

    delegate! {
        show(report: &dyn Render);
        begin_file(file: &FileInfo<'_>);
        begin_events();
        end_events();
        record(record: &Record<'_>, tables: &Tables, symbols: &SymbolMap);
        diagnostic(diagnostic: &Diagnostic);
        end_file(last: bool);
        error(file: &FileInfo<'_>, message: &str);
        note(file: &FileInfo<'_>, message: &str);
        flush();
        replay(recorded: &Recorded);
    }
}
