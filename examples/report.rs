//! The three hottest functions of a trace, from the typed `/functions` report: the library
//! runs a plan and hands back its reports as values, with nothing printed or parsed. The
//! same three, in the same order, as the first table of `sptdump /functions /top:3` shows.
//!
//! ```text
//! cargo run --example report [TRACE PDB]
//! ```
//!
//! Without arguments: `testdata/pe/profile.spt`, its functions named by `testdata/pe/app.pdb`.

use std::error::Error;

use sptdump::dump::{self, Traces};
use sptdump::input::Input;
use sptdump::output::{Collected, Reported};
use sptdump::views::functions::Functions;
use sptdump::views::{Plan, Sections, View};

fn main() -> Result<(), Box<dyn Error>> {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut args = std::env::args().skip(1);
    let trace = args
        .next()
        .unwrap_or_else(|| format!("{root}/testdata/pe/profile.spt"));
    let pdb = args
        .next()
        .unwrap_or_else(|| format!("{root}/testdata/pe/app.pdb"));

    // What `sptdump /functions /top:3 /pdb:PDB TRACE` does, its files read by the library.
    let mut plan = Plan::default();
    plan.sections = Sections::NONE;
    plan.top = 3;
    plan.views.add(View::Functions(Functions));
    plan.files.pdbs.push(pdb.into());
    if let Some(unreadable) = plan.load().into_iter().next() {
        return Err(unreadable.into());
    }
    let paths = [trace.clone()];
    let open = |_: usize| Input::open(trace.as_ref());
    let mut collected = Collected::default();
    dump::run(&mut collected, &plan, &Traces::new(&paths, &open))?;

    // Each binary and source's table, in the order sptdump prints them: the first is the
    // first binary's busiest source.
    let tables = collected
        .reports
        .iter()
        .find_map(|(_, report)| match report {
            Reported::Functions(tables) => Some(tables),
            _ => None,
        });
    let Some(first) = tables.and_then(|tables| tables.first()) else {
        return Err(format!("{trace}: no samples").into());
    };
    println!(
        "{} ({}), {}: {} hits",
        first.name,
        first.progid,
        first.source,
        first.hits()
    );
    for row in first.rows() {
        let share = 100.0 * row.inclusive() as f64 / first.hits().max(1) as f64;
        println!("{:>8}  {share:>6.2}%  {}", row.inclusive(), row.key());
    }
    Ok(())
}
