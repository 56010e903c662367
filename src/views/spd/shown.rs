//! Where spddump's views of one SPD write, and what they read: its output (text or JSON
//! Lines), its name, its header and its function table, and the names of imports.

use std::fmt;
use std::io::Write;

use crate::image::imports::ImportNames;
use crate::image::spd::table::{FunctionTable, TableError};
use crate::image::spd::{Header, SpdError};
use crate::image::spdprofile::SpdProfile;

/// What spddump's views of one SPD read, and where they write.
pub(crate) struct Shown<'a> {
    /// The output.
    pub(crate) out: &'a mut dyn Write,
    /// The file, as the output names it.
    pub(crate) file: &'a str,
    /// JSON Lines instead of text.
    pub(crate) json: bool,
    /// Its header: the identity, the version, the raw totals.
    pub(crate) header: &'a Header,
    /// Its function table, when a view reads it.
    pub(crate) table: Option<&'a FunctionTable>,
    /// The names the `/image` files import, to name the callees that are imports.
    pub(crate) imports: &'a ImportNames,
    /// Whether the functions' `spd_function` lines were listed (JSON).
    pub(crate) functions_listed: bool,
}

impl<'a> Shown<'a> {
    /// The views of the SPD named `file`, of `header` (and `table`, once read), writing to
    /// `out` as text or JSON Lines; `imports` name the callees that are imports.
    pub(crate) fn new(
        out: &'a mut dyn Write,
        (file, json, header, imports): (&'a str, bool, &'a Header, &'a ImportNames),
        table: Option<&'a FunctionTable>,
    ) -> Self {
        Shown {
            out,
            file,
            json,
            header,
            table,
            imports,
            functions_listed: false,
        }
    }

    /// The function table; the views that read it are shown only once it is read.
    pub(crate) fn table(&self) -> &'a FunctionTable {
        self.table
            .expect("the table is read before the views that read it")
    }
}

/// What spddump's views of two SPDs read, and where they write.
pub(crate) struct Paired<'a> {
    /// The output.
    pub(crate) out: &'a mut dyn Write,
    /// JSON Lines instead of text.
    pub(crate) json: bool,
    /// OLD and NEW, each as the output names it, with its header and its functions.
    pub(crate) sides: [(&'a str, &'a Header, &'a SpdProfile); 2],
}

/// Why a file's views could not all be shown.
#[derive(Debug)]
#[non_exhaustive]
pub enum SpdFailure {
    /// It is not a recognised SPD (section 10's checks), or could not be read.
    NotSpd(SpdError),
    /// Its function table failed a check, or could not be read.
    Table(TableError),
    /// `/funcid` named no function of it.
    NoSuchFunction(String),
    /// It is an SPT trace, which sptdump shows.
    Trace,
    /// `/image` files that are not the build the SPD profiles (their names were not used),
    /// each as given with its identity; and the SPD's identity.
    OtherBuild {
        /// Each image refused, as given, and its identity.
        images: Vec<(String, String)>,
        /// The SPD's binary, GUID and age.
        spd: String,
    },
}

impl fmt::Display for SpdFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpdFailure::NotSpd(e) => e.fmt(f),
            SpdFailure::Table(e) => e.fmt(f),
            SpdFailure::Trace => write!(
                f,
                "this is an SPT trace, not an SPD (its first bytes are 3A 54 50 53, \"SPT:\"): \
                 sptdump shows what it holds; sptdump /match:SPD TRACE checks it against an \
                 SPD's build"
            ),
            SpdFailure::OtherBuild { images, spd } => {
                for (i, (path, identity)) in images.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(
                        f,
                        "/image:{path} is not the build this SPD profiles, and its import names \
                         were not used: the image is {identity}, the SPD's binary {spd}"
                    )?;
                }
                Ok(())
            }
            SpdFailure::NoSuchFunction(q) => write!(
                f,
                "no function has the id, the hash or the name {q:?} (/funcid takes an id in \
                 decimal, a hash of 16 hex digits, or a name)"
            ),
        }
    }
}

impl std::error::Error for SpdFailure {}
