//! `/folded`: the call stacks folded by key, `outer;...;leaf hits`, sorted, for the
//! flame-graph tools that read Brendan Gregg's format; of a trace without call stacks, what
//! its flame graph draws (the busiest source of samples, by function, under each binary).
//!
//! ```text
//! app.exe!main;app.exe!parse;app.exe!next 12        {"type":"folded","path":...,
//! app.exe!main;core.dll!core_add 30                  "stack":"...","hits":30}
//! ```

use std::io;

use serde::Serialize;

use super::{Declaration, Declared, Opt, Profile, Reads, Writes};
use crate::analysis::profile::{self, Folded as Lines};
use crate::analysis::sampled;
use crate::format::error::Error;
use crate::output::{Json, Out, Printer, Render, Text, flamegraph, push_dec};

/// `/folded`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Folded;

impl Declared for Folded {
    const DECLARATION: Declaration = Declaration {
        prints: &["folded"],
        ..Declaration::new(
            "folded",
            8,
            Writes::Lines,
            Reads::FLAME.and(Reads::PROFILE).and(Reads::INLINE_NAMES),
        )
    };
    type Asked = bool;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::flag(
        "folded",
        "the call stacks as folded lines (outer;...;leaf hits), for flame-graph tools",
        |a| *a = true,
    )];

    fn asked(asked: bool) -> Result<Option<Self>, String> {
        Ok(asked.then_some(Folded))
    }

    fn show<P: Printer>(
        &self,
        profile: &mut Profile<'_>,
        out: &mut Out<'_, P>,
    ) -> Result<(), Error> {
        if !profile.folded.is_empty() {
            return out.print(|p| p.show(&FoldedReport(&profile.folded.folded_lines())));
        }
        // What the flame graph draws of a trace without call stacks: its busiest source of
        // samples, by function, each under its binary.
        let sampled = &profile.flat.sampled;
        let file = profile.file;
        let Some(source) = sampled::busiest(sampled.iter().map(|b| (b.source, b.hits))) else {
            let message = "no samples: nothing to fold";
            return out.print(|p| p.note(file, message));
        };
        let message = format!(
            "no call stacks: the folded lines are {}, by function, each under its binary",
            flamegraph::source_drawn(source)
        );
        out.print(|p| p.note(file, &message))?;
        let lines = profile::folded_of_binaries(sampled, source);
        out.print(|p| p.show(&FoldedReport(&lines)))
    }
}

/// Folded stacks as `/folded` shows them, a line each.
pub struct FoldedReport<'a>(pub(crate) &'a Lines<'a>);

impl Render for FoldedReport<'_> {
    fn text(&self, t: &mut Text<'_>) -> io::Result<()> {
        self.0.try_for_each(|stack, hits| {
            t.line.clear();
            t.line.extend_from_slice(stack.as_bytes());
            t.line.push(b' ');
            push_dec(t.line, hits);
            t.line.push(b'\n');
            t.write_line()
        })
    }

    fn json(&self, j: &mut Json<'_>) -> io::Result<()> {
        let path = j.path;
        self.0
            .try_for_each(|stack, hits| j.line(&FoldedLine { path, stack, hits }))
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename = "folded")]
struct FoldedLine<'a> {
    path: &'a str,
    stack: &'a str,
    hits: u128,
}
