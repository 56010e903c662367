//! SPTDump's spellings of an option: `/name`, `-name` or `--name`, in any case, a value after
//! `:` (or for the dash forms `=` or the next argument), lists split at commas; and what a
//! word that names no option was meant to be.

use std::ffi::{OsStr, OsString};
use std::path::Path;

use super::usage::{UsageError, usage};

/// An argument that may be an option: its spelling, name and value.
pub(super) struct Spelled {
    /// Written `-name` or `--name` (else `/name`).
    pub dashed: bool,
    /// The name as written.
    pub name: String,
    /// What separates the value: `:` or `=`.
    pub separator: Option<char>,
    /// The value after it.
    pub value: Option<OsString>,
}

/// Splits `/name:value`, `-name=value` and the like. `None` when the argument does not
/// start like an option, or its name is not text (then it can only be a file).
pub(super) fn spelled(arg: &OsStr) -> Result<Option<Spelled>, UsageError> {
    let bytes = arg.as_encoded_bytes();
    let (dashed, body) = match bytes {
        [b'-', b'-', body @ ..] => (true, body),
        [b'-', body @ ..] => (true, body),
        [b'/', body @ ..] => (false, body),
        _ => return Ok(None),
    };
    let at = body.iter().position(|b| matches!(b, b':' | b'='));
    let name = &body[..at.unwrap_or(body.len())];
    let Ok(name) = std::str::from_utf8(name) else {
        return Ok(None);
    };
    let (separator, value) = match at {
        Some(i) => (
            Some(char::from(body[i])),
            Some(value_of(arg, bytes.len() - body.len() + i + 1)?),
        ),
        None => (None, None),
    };
    Ok(Some(Spelled {
        dashed,
        name: name.to_owned(),
        separator,
        value,
    }))
}

/// The part of `arg` from byte `at` on, which follows an ASCII separator.
fn value_of(arg: &OsStr, at: usize) -> Result<OsString, UsageError> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(OsStr::from_bytes(&arg.as_bytes()[at..]).to_owned())
    }
    #[cfg(not(unix))]
    {
        // Elsewhere an option's value must be text (file arguments need not be).
        match arg.to_str() {
            Some(text) => Ok(OsString::from(&text[at..])),
            None => Err(usage(format!("option {arg:?} is not valid Unicode"))),
        }
    }
}

/// Splits a list value at its commas and trims each item of surrounding spaces.
pub(super) fn items(value: &OsStr) -> Result<Vec<OsString>, UsageError> {
    let bytes = value.as_encoded_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    for end in (0..=bytes.len()).filter(|&i| i == bytes.len() || bytes[i] == b',') {
        let (mut lo, mut hi) = (start, end);
        while lo < hi && bytes[lo] == b' ' {
            lo += 1;
        }
        while hi > lo && bytes[hi - 1] == b' ' {
            hi -= 1;
        }
        out.push(slice(value, lo, hi)?);
        start = end + 1;
    }
    Ok(out)
}

/// The bytes `lo..hi` of `value`, both at ASCII boundaries.
fn slice(value: &OsStr, lo: usize, hi: usize) -> Result<OsString, UsageError> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(OsStr::from_bytes(&value.as_bytes()[lo..hi]).to_owned())
    }
    #[cfg(not(unix))]
    {
        match value.to_str() {
            Some(text) => Ok(OsString::from(&text[lo..hi])),
            None => Err(usage(format!("value {value:?} is not valid Unicode"))),
        }
    }
}

/// Whether an argument that names no option was meant as one: `/` and a word of letters,
/// digits, `-` and `?` (a value may follow a colon), naming no file. Anything else (`/tmp/a`,
/// `/trace.spt`, a file that exists) is a file.
pub(super) fn mistyped(arg: &OsStr, name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '?')
        && !Path::new(arg).exists()
}

/// The option of `names` nearest to a mistyped name, when one is near enough to be what was
/// meant.
fn nearest<'n>(name: &str, names: &[&'n str]) -> Option<&'n str> {
    let name = name.to_ascii_lowercase();
    names
        .iter()
        .map(|&o| (strsim::jaro_winkler(&name, o), o))
        .filter(|&(score, _)| score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

/// The usage error for an unknown option, written `shown`, with the nearest known one in the
/// same spelling: `--summry` suggests `--summary`, `-sumary` `-summary`, `/sumary` `/summary`.
pub(super) fn unknown(shown: &str, name: &str, names: &[&str]) -> UsageError {
    let prefix = if shown.starts_with("--") {
        "--"
    } else if shown.starts_with('-') {
        "-"
    } else {
        "/"
    };
    match nearest(name, names) {
        Some(near) => usage(format!(
            "unknown option '{shown}' (did you mean {prefix}{near}?)"
        )),
        None => usage(format!("unknown option '{shown}'")),
    }
}
