//! The text printer's own: the output in blocks, and how numbers and names are laid out.

use std::borrow::Cow;
use std::io::{self, Write};

use rustc_hash::FxHashMap;

use crate::image::lines::LineCache;

/// Writes text to `out` and diagnostics to `err`.
pub(crate) struct TextPrinter<W: Write, E: Write> {
    pub(super) out: Blocks<W>,
    pub(super) err: E,
    /// How the current file is named in diagnostics.
    pub(super) label: String,
    /// How many blocks (sections, summaries, tables) were printed for the current file.
    pub(super) sections: usize,
    /// Whether each file starts with a `File:` line; `/validate` prints only verdicts.
    pub(super) banner: bool,
    /// Records printed in the current events section.
    pub(super) records: u64,
    /// The line being laid out, kept to reuse its allocation.
    pub(super) line: Vec<u8>,
    /// The source lines of the current file's records, per binary with `/pdb`.
    pub(super) lines: FxHashMap<u16, LineCache>,
}

impl<W: Write, E: Write> TextPrinter<W, E> {
    /// A printer writing the dump to `out` and diagnostics to `err`.
    pub(crate) fn new(out: W, err: E) -> Self {
        TextPrinter {
            out: Blocks {
                inner: out,
                last: Last::Nothing,
            },
            err,
            label: String::new(),
            sections: 0,
            banner: true,
            records: 0,
            line: Vec::with_capacity(4096),
            lines: FxHashMap::default(),
        }
    }

    /// Leaves out the `File:` line that starts each file, for `/validate`.
    pub(crate) fn without_banner(mut self) -> Self {
        self.banner = false;
        self
    }

    /// Gives back the writers.
    pub(crate) fn into_inner(self) -> (W, E) {
        (self.out.inner, self.err)
    }

    /// Starts a block of the current file: a blank line, unless nothing precedes it.
    pub(super) fn block(&mut self) -> io::Result<&mut Blocks<W>> {
        self.sections += 1;
        self.out.separate()?;
        Ok(&mut self.out)
    }

    /// Starts a section titled `title`.
    pub(super) fn section(&mut self, title: std::fmt::Arguments<'_>) -> io::Result<()> {
        writeln!(self.block()?, "{title}")
    }

    /// The text printer as a report writes itself into it
    /// ([`Render::text`](crate::output::Render::text)).
    pub(super) fn text(&mut self) -> Text<'_> {
        Text {
            out: &mut self.out,
            err: &mut self.err,
            label: &self.label,
            sections: &mut self.sections,
            banner: self.banner,
            line: &mut self.line,
        }
    }
}

/// Where a report writes itself as text ([`Render::text`](crate::output::Render::text)): the output in blocks, each
/// separated from what precedes it by one blank line, and the error stream.
pub struct Text<'a> {
    out: &'a mut dyn Separated,
    err: &'a mut dyn Write,
    /// How the current file is named in messages.
    pub(crate) label: &'a str,
    sections: &'a mut usize,
    /// Whether each file starts with a `File:` line; `/validate` prints only verdicts, each
    /// naming its file.
    pub(crate) banner: bool,
    /// A line being laid out, kept to reuse its allocation.
    pub(crate) line: &'a mut Vec<u8>,
}

impl Text<'_> {
    /// Starts a block of the current file: a blank line, unless nothing precedes it.
    pub(crate) fn block(&mut self) -> io::Result<&mut Self> {
        *self.sections += 1;
        self.out.separate()?;
        Ok(self)
    }

    /// Starts a section titled `title`.
    pub(crate) fn section(&mut self, title: std::fmt::Arguments<'_>) -> io::Result<()> {
        writeln!(self.block()?, "{title}")
    }

    /// Writes the line laid out in [`Text::line`].
    pub(crate) fn write_line(&mut self) -> io::Result<()> {
        self.out.write_all(self.line)
    }

    /// An error about `file` on the error stream, after what is buffered of the output.
    pub(crate) fn error(&mut self, file: &str, message: &str) -> io::Result<()> {
        self.out.flush()?;
        writeln!(self.err, "sptdump: {file}: {message}")?;
        self.err.flush()
    }
}

impl Write for Text<'_> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// An output in blocks: [`Blocks`], whatever it writes to.
trait Separated: Write {
    /// The blank line before a block, when text precedes it.
    fn separate(&mut self) -> io::Result<()>;
}

impl<W: Write> Separated for Blocks<W> {
    fn separate(&mut self) -> io::Result<()> {
        Blocks::separate(self)
    }
}

/// The output, in blocks separated by one blank line: a block (a section, a summary, a
/// table) follows a blank line when anything precedes it, and never two blank lines in a
/// row. Every write notes only that text was written (one store), so the events section
/// pays nothing for it.
pub(super) struct Blocks<W> {
    pub(super) inner: W,
    /// What was written last.
    pub(super) last: Last,
}

/// What the output ends with.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Last {
    /// Nothing was written.
    Nothing,
    /// Text.
    Text,
    /// The blank line that separates blocks.
    Blank,
}

impl<W: Write> Blocks<W> {
    /// The blank line before a block, when text precedes it.
    pub(super) fn separate(&mut self) -> io::Result<()> {
        if self.last == Last::Text {
            self.inner.write_all(b"\n")?;
            self.last = Last::Blank;
        }
        Ok(())
    }
}

impl<W: Write> Write for Blocks<W> {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.last = Last::Text;
        self.inner.write(buf)
    }

    #[inline]
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.last = Last::Text;
        self.inner.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `0x` and 8 upper-case hex digits, without the formatting machinery: this runs for every
/// RVA of a dump.
#[inline]
pub(crate) fn hex8(v: u32) -> [u8; 10] {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    let mut s = *b"0x00000000";
    for i in 0..8 {
        s[9 - i] = DIGITS[((v >> (4 * i)) & 0xF) as usize];
    }
    s
}

/// Escapes control characters, so that a name never breaks a line.
pub(crate) fn clean(s: &str) -> Cow<'_, str> {
    if s.chars().any(char::is_control) {
        Cow::Owned(
            s.chars()
                .map(|c| {
                    if c.is_control() {
                        c.escape_unicode().to_string()
                    } else {
                        c.to_string()
                    }
                })
                .collect(),
        )
    } else {
        Cow::Borrowed(s)
    }
}

/// A name as text shows it.
pub(crate) fn name_text(bytes: &[u8]) -> String {
    clean(&String::from_utf8_lossy(bytes)).into_owned()
}

/// `23,456`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
