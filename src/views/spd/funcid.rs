//! `/funcid:FID`: the functions of an id (decimal; inferred to be SPDDump's fid), a hash
//! (16 hex digits) or a name, each in detail: its fields, its callees, its flow graph.

use std::io;

use super::declare::{SpdDeclaration, SpdDeclared};
use super::lines::{calls_json, calls_text, detail_text, flow_json, flow_text, function_json};
use super::shown::{Shown, SpdFailure};
use crate::analysis::spd::figures::FunctionQuery;
use crate::views::{Opt, text};

/// `/funcid:FID`: the id, hash or name asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Funcid(pub String);

impl SpdDeclared for Funcid {
    const DECLARATION: SpdDeclaration = SpdDeclaration::new("funcid", 4);
    type Asked = Option<Funcid>;
    const OPTIONS: &'static [Opt<Self::Asked>] = &[Opt::valued(
        "funcid",
        "FID",
        "the functions of an id (decimal; inferred to be SPDDump's fid), a hash\n\
         (16 hex digits) or a name, in detail with their callees and blocks",
        |a, v| {
            let q = text(v);
            if q.is_empty() {
                return Err("expected an id, a hash or a name".into());
            }
            *a = Some(Funcid(q));
            Ok(())
        },
    )];

    fn asked(asked: Option<Funcid>) -> Result<Option<Self>, String> {
        Ok(asked)
    }

    fn of_all() -> Option<Self> {
        None
    }

    /// Every function the query names, in detail: its fields, its callees, its flow graph.
    fn show(&self, s: &mut Shown<'_>) -> io::Result<Result<(), SpdFailure>> {
        let (t, imports) = (s.table(), s.imports);
        let query = FunctionQuery::parse(&self.0);
        let found = || t.functions().filter(|f| query.matches(f));
        if found().next().is_none() {
            return Ok(Err(SpdFailure::NoSuchFunction(self.0.clone())));
        }
        for f in found() {
            if s.json {
                function_json(s, &f)?;
                calls_json(s, t, imports, std::iter::once(f))?;
                flow_json(s, std::iter::once(f))?;
            } else {
                detail_text(&mut s.out, t, &f)?;
                calls_text(&mut s.out, t, imports, std::iter::once(f))?;
                flow_text(&mut s.out, std::iter::once(f))?;
            }
        }
        Ok(Ok(()))
    }
}
