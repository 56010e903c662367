//! `/compare OLD NEW` (with `/top:N`, 20 unless said; 0: all): two SPDs of one binary
//! compared: functions matched by hash, of the same shape when their checksum is equal;
//! the overlap of the two by function and by block, what changed shape, what is new, what
//! is gone, the share of the old profile that no longer fits, and the functions whose share
//! moved most.
//!
//! ```text
//! NEW new.spd beside OLD old.spd: EbpfCore.sys, the same build (GUID and age)
//!   functions: 693 in OLD, 702 in NEW; 690 in both: 684 of the same shape*, 6 changed ...
//!   function overlap 97.12%, block overlap 93.40%; ...
//!      old%    new%    delta   shape  status   function
//! ```

use std::io::{self, Write};

use serde::Serialize;

use super::declare::{SpdDeclaration, SpdDeclared};
use super::lines::{hex, line};
use super::shown::{Paired, Shown, SpdFailure};
use crate::analysis::spd::pair::{self as spdpair, SpdPairReport};
use crate::format::progid::registry_form;
use crate::output::spdblocks::share_percent;
use crate::output::text::tables::{columns, plural, showing};
use crate::views::{Opt, text};

/// `/compare`: how many functions its table shows (`/top`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Compare {
    /// The most functions the table shows.
    pub top: usize,
}

/// How many functions `/compare` shows without `/top`.
pub const DEFAULT_TOP: usize = 20;

/// What `/compare` and `/top` gather.
#[derive(Debug, Default)]
pub(crate) struct Chosen {
    compare: bool,
    top: Option<usize>,
}

impl SpdDeclared for Compare {
    const DECLARATION: SpdDeclaration = SpdDeclaration {
        pair: true,
        ..SpdDeclaration::new("compare", 9)
    };
    type Asked = Chosen;
    const OPTIONS: &'static [Opt<Chosen>] = &[
        Opt::flag(
            "compare",
            "two SPDs of one binary, OLD NEW: functions matched by hash, of the same\n\
             shape by checksum*; the overlap by function and by block, what changed,\n\
             what is new or gone, and the functions whose share moved most",
            |c: &mut Chosen| c.compare = true,
        ),
        Opt::valued(
            "top",
            "N",
            "how many functions /compare shows; 0 or all: every one; default 20",
            |c: &mut Chosen, v| {
                let v = text(v);
                c.top = Some(match v.to_ascii_lowercase().as_str() {
                    "0" | "all" => usize::MAX,
                    n => n.parse().map_err(|_| "expected a number, 0 or all")?,
                });
                Ok(())
            },
        )
        .output(),
    ];

    fn asked(asked: Chosen) -> Result<Option<Self>, String> {
        match (asked.compare, asked.top) {
            (false, Some(_)) => Err("/top goes with /compare".into()),
            (false, None) => Ok(None),
            (true, top) => Ok(Some(Compare {
                top: top.unwrap_or(DEFAULT_TOP),
            })),
        }
    }

    fn of_all() -> Option<Self> {
        None
    }

    /// Nothing of one SPD: the view is of two.
    fn show(&self, _: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>> {
        Ok(Ok(()))
    }

    fn pair(&self, p: &mut Paired<'_>) -> io::Result<()> {
        let [(_, _, old), (_, _, new)] = p.sides;
        let report = spdpair::compare(old, new, self.top);
        match p.json {
            true => json(p, &report),
            false => text_of(p, &report),
        }
    }
}

/// Whether the two are of one build (GUID and age), and of one binary (its name).
fn builds(p: &Paired<'_>) -> (bool, bool) {
    let [(_, a, _), (_, b, _)] = p.sides;
    let (a, b) = (&a.spd, &b.spd);
    (
        a.guid == b.guid && a.age == b.age,
        a.binary.eq_ignore_ascii_case(&b.binary),
    )
}

fn text_of(p: &mut Paired<'_>, r: &SpdPairReport) -> io::Result<()> {
    let [(old, a, _), (new, b, _)] = p.sides;
    let (a, b) = (&a.spd, &b.spd);
    let (same_build, same_binary) = builds(p);
    let out = &mut p.out;
    let build = match same_build {
        true => "the same build (GUID and age)".to_owned(),
        false => format!(
            "another build ({{{}}} age {} beside {{{}}} age {})",
            registry_form(&b.guid),
            b.age,
            registry_form(&a.guid),
            a.age
        ),
    };
    writeln!(out, "NEW {new} beside OLD {old}: {}, {build}", b.binary)?;
    if !same_binary {
        writeln!(
            out,
            "  note: OLD is of {} and NEW of {}: compared all the same",
            a.binary, b.binary
        )?;
    }
    writeln!(
        out,
        "  functions: {} in OLD, {} in NEW; {} in both: {} of the same shape*, {} changed; {} \
         only in OLD, {} only in NEW",
        r.functions_old, r.functions_new, r.both, r.same_shape, r.changed, r.only_old, r.only_new
    )?;
    writeln!(
        out,
        "  function overlap {}, block overlap {}; the functions that changed shape held {} of \
         the old profile (it no longer fits their code)",
        share_percent(r.function_overlap),
        share_percent(r.block_overlap),
        share_percent(r.changed_share_old)
    )?;
    if r.rows.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "  the functions whose share moved most: {} function{}{}",
        r.functions,
        plural(r.functions as u128),
        showing(r.rows.len(), r.functions)
    )?;
    let rows: Vec<[String; 6]> = r
        .rows
        .iter()
        .map(|f| {
            [
                share_percent(f.old_share),
                share_percent(f.new_share),
                format!("{:+.2}%", f.delta * 100.0),
                f.shape_overlap
                    .map_or_else(|| "-".to_owned(), share_percent),
                f.status.name().to_owned(),
                f.name.clone(),
            ]
        })
        .collect();
    columns(
        out,
        ["old%", "new%", "delta", "shape", "status", "function"],
        &rows,
    )?;
    writeln!(
        out,
        "  * inferred: the checksum as the flow graph's shape, and shares of dynamic \
         instructions (block count x instructions), our reading of the SPD"
    )
}

fn json(p: &mut Paired<'_>, r: &SpdPairReport) -> io::Result<()> {
    let [(old, ..), (new, ..)] = p.sides;
    let (same_build, same_binary) = builds(p);
    line(
        &mut p.out,
        &CompareLine {
            r#type: "spd_compare",
            file: new,
            old,
            new,
            same_build,
            same_binary,
            functions_old: r.functions_old,
            functions_new: r.functions_new,
            both: r.both,
            same_shape: r.same_shape,
            changed: r.changed,
            only_old: r.only_old,
            only_new: r.only_new,
            function_overlap: r.function_overlap,
            block_overlap: r.block_overlap,
            changed_share_old: r.changed_share_old,
            inferred: ["same_shape", "shares"],
        },
    )?;
    for f in &r.rows {
        let row = FunctionLine {
            r#type: "spd_compare_function",
            file: new,
            old,
            new,
            hash: hex(f.hash),
            name: &f.name,
            status: f.status.name(),
            old_share: f.old_share,
            new_share: f.new_share,
            delta: f.delta,
            old_entry: f.old_entry,
            new_entry: f.new_entry,
            shape_overlap: f.shape_overlap,
        };
        line(&mut p.out, &row)?;
    }
    Ok(())
}

#[derive(Serialize)]
struct CompareLine<'a> {
    r#type: &'static str,
    /// NEW, as on every line about NEW.
    file: &'a str,
    old: &'a str,
    new: &'a str,
    same_build: bool,
    same_binary: bool,
    functions_old: usize,
    functions_new: usize,
    both: usize,
    same_shape: usize,
    changed: usize,
    only_old: usize,
    only_new: usize,
    function_overlap: f64,
    block_overlap: f64,
    changed_share_old: f64,
    inferred: [&'static str; 2],
}

#[derive(Serialize)]
struct FunctionLine<'a> {
    r#type: &'static str,
    /// NEW, as on every line about NEW.
    file: &'a str,
    old: &'a str,
    new: &'a str,
    hash: String,
    name: &'a str,
    status: &'static str,
    old_share: f64,
    new_share: f64,
    delta: f64,
    old_entry: Option<u64>,
    new_entry: Option<u64>,
    shape_overlap: Option<f64>,
}
