//! spddump's walk of an SPD's views: its header read and checked, then each view asked for
//! in the order of the registry, the function table read once before the first view that
//! reads it.

use std::io::{self, Read, Seek, SeekFrom, Write};

use crate::format::progid::registry_form;
use crate::image::imports::ImportNames;
use crate::image::imports::{self, ImageImports};
use crate::image::spd::table::FunctionTable;
use crate::image::spd::{self, Header};
use crate::image::spdprofile::SpdProfile;
use crate::views::spd::{
    Paired, Shown, SpdFailure, SpdKind, SpdView, SpdViews, header, list_functions,
};

/// Shows `views` of the SPD in `file` (`len` bytes), named `name` in what is printed, as
/// text or as JSON Lines; the callees that are imports are named by the `images` of the
/// SPD's build. The outer error is a failure to write; the inner one what was wrong with
/// the file, once what could be shown of it was, or else an image of another build.
pub fn show<R: Read + Seek + ?Sized>(
    out: &mut dyn Write,
    (name, file, len): (&str, &mut R, u64),
    views: &SpdViews,
    json: bool,
    images: &[ImageImports],
) -> io::Result<Result<(), SpdFailure>> {
    let header = match spd::read_header(file, len) {
        Ok(header) => header,
        Err(_) if is_trace(file) => return Ok(Err(SpdFailure::Trace)),
        Err(e) => return Ok(Err(SpdFailure::NotSpd(e))),
    };
    let (names, refused) = imports::names_for(images, &header.spd);
    let shown = show_read(out, (name, file), views, json, (&header, &names))?;
    if shown.is_ok() && !refused.is_empty() {
        let spd = &header.spd;
        return Ok(Err(SpdFailure::OtherBuild {
            images: refused
                .iter()
                .map(|i| (i.path.clone(), i.identity()))
                .collect(),
            spd: format!(
                "{} {{{}}} age {} (inferred)",
                spd.binary,
                registry_form(&spd.guid),
                spd.age
            ),
        }));
    }
    Ok(shown)
}

/// [`show`], once the SPD's header is read and the names of its build's imports gathered.
fn show_read<R: Read + Seek + ?Sized>(
    out: &mut dyn Write,
    (name, file): (&str, &mut R),
    views: &SpdViews,
    json: bool,
    (header, imports): (&Header, &ImportNames),
) -> io::Result<Result<(), SpdFailure>> {
    if !json {
        writeln!(out, "File: {name}")?;
    }
    let read = (name, json, header, imports);
    // The views before the first that reads the function table, then the table, then the
    // rest.
    let reads_table = |v: &&SpdView| v.kind().declaration().table;
    let first = views
        .iter()
        .position(|v| reads_table(&v))
        .unwrap_or(views.len());
    let (before, rest) = views.as_slice().split_at(first);
    if let Err(failure) = each(&mut Shown::new(&mut *out, read, None), before)? {
        return Ok(Err(failure));
    }
    if rest.is_empty() {
        return Ok(Ok(()));
    }
    let table = match FunctionTable::read(file, header) {
        Ok(table) => table,
        Err(e) => {
            // The identity still says whose the file is.
            if !views.has(SpdKind::Header) {
                header::show(&mut Shown::new(&mut *out, read, None))?;
            }
            return Ok(Err(SpdFailure::Table(e)));
        }
    };
    each(&mut Shown::new(out, read, Some(&table)), rest)
}

/// Shows the views of two SPDs (`/compare`) of `sides`, OLD then NEW, each as `show` takes
/// it: both are read and checked whole first. The inner error names the file that failed
/// and why.
pub fn compare_spds<R: Read + Seek + ?Sized>(
    out: &mut dyn Write,
    sides: [(&str, &mut R, u64); 2],
    views: &SpdViews,
    json: bool,
) -> io::Result<Result<(), (String, SpdFailure)>> {
    let mut read = Vec::with_capacity(2);
    for (name, file, len) in sides {
        match profile_of(file, len) {
            Ok((header, profile)) => read.push((name, header, profile)),
            Err(failure) => return Ok(Err((name.to_owned(), failure))),
        }
    }
    let [(old, a, p), (new, b, q)] = [&read[0], &read[1]];
    let mut paired = Paired {
        out,
        json,
        sides: [(old, a, p), (new, b, q)],
    };
    for view in views.iter().filter(|v| v.kind().declaration().pair) {
        view.pair(&mut paired)?;
    }
    Ok(Ok(()))
}

/// The header and the functions of the SPD in `file`, checked.
fn profile_of<R: Read + Seek + ?Sized>(
    file: &mut R,
    len: u64,
) -> Result<(Header, SpdProfile), SpdFailure> {
    let header = match spd::read_header(file, len) {
        Ok(header) => header,
        Err(_) if is_trace(file) => return Err(SpdFailure::Trace),
        Err(e) => return Err(SpdFailure::NotSpd(e)),
    };
    let table = FunctionTable::read(file, &header).map_err(SpdFailure::Table)?;
    Ok((header, SpdProfile::from_table(&table)))
}

/// Shows each of `views`; in JSON each function's line is listed once, where the first view
/// that lists them would be.
fn each(shown: &mut Shown<'_>, views: &[SpdView]) -> io::Result<Result<(), SpdFailure>> {
    let lister = SpdKind::ALL
        .iter()
        .copied()
        .find(|k| k.declaration().lists_functions);
    let lists = views.iter().any(|v| v.kind().declaration().lists_functions);
    for view in views {
        if shown.json && lists && Some(view.kind()) >= lister {
            list_functions(shown)?;
        }
        if let Err(failure) = view.show(shown)? {
            return Ok(Err(failure));
        }
    }
    Ok(Ok(()))
}

/// Whether `file` starts as an SPT trace does.
fn is_trace<R: Read + Seek + ?Sized>(file: &mut R) -> bool {
    let mut first = [0; 4];
    let read = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.read_exact(&mut first));
    read.is_ok() && u32::from_le_bytes(first) == crate::format::header::SIGNATURE
}
