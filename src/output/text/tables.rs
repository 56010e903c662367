//! How the views' tables are laid out as text: right-aligned hits and shares, then the key;
//! and the words around them.

use std::io::{self, Write};

/// `part` of `total` as a percentage with one decimal, `-` of nothing.
pub(crate) fn percent_one(part: u128, total: u128) -> String {
    if total == 0 {
        return "-".into();
    }
    format!("{:.1}%", part as f64 * 100.0 / total as f64)
}

/// `s` after a count that is not one.
pub(crate) fn plural(n: impl Into<u128>) -> &'static str {
    let n: u128 = n.into();
    if n == 1 { "" } else { "s" }
}

/// ` (showing N of M)` after the heading of a table of `unique` entries that shows only
/// `shown` of them.
pub(crate) fn of(shown: usize, unique: usize) -> String {
    if shown < unique {
        format!(" (showing {shown} of {unique})")
    } else {
        String::new()
    }
}

/// `, showing N` when a table of `unique` entries shows only `shown` of them.
pub(crate) fn showing(shown: usize, unique: usize) -> String {
    if shown < unique {
        format!(", showing {shown}")
    } else {
        String::new()
    }
}

/// Right-aligned hits and shares, then the key: `      hits   share  RVA`.
pub(crate) fn table(
    o: &mut impl Write,
    key: &str,
    rows: &[(u128, String, String)],
) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let hits_width = rows
        .iter()
        .map(|r| r.0.to_string().len())
        .max()
        .unwrap_or(0)
        .max(4);
    let share_width = "100.00%".len();
    writeln!(
        o,
        "    {:>hits_width$}  {:>share_width$}  {key}",
        "hits", "share"
    )?;
    for (hits, share, key) in rows {
        writeln!(o, "    {hits:>hits_width$}  {share:>share_width$}  {key}")?;
    }
    Ok(())
}

/// A table of right-aligned figures and a last column of names, under its headings.
pub(crate) fn columns<const N: usize>(
    o: &mut impl Write,
    headings: [&str; N],
    rows: &[[String; N]],
) -> io::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut widths = headings.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |o: &mut dyn Write, cells: [&str; N]| -> io::Result<()> {
        write!(o, "   ")?;
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == N {
                writeln!(o, " {cell}")?;
            } else {
                write!(o, " {cell:>width$} ", width = widths[i])?;
            }
        }
        Ok(())
    };
    line(o, headings)?;
    for row in rows {
        line(o, row.each_ref().map(String::as_str))?;
    }
    Ok(())
}
