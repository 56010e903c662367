//! The integration tests, one binary for all of them (one link step): a module per area.
//!
//! Run one area with `cargo test --test it AREA::`, e.g. `cargo test --test it golden::`.

mod builder_selftest;
mod callgraph;
mod cfg;
mod check;
mod cli;
mod compare;
mod conformance;
mod conserved;
mod corruption;
mod damaged;
mod etl;
mod exports;
mod faults;
mod flow;
mod glossary;
mod golden;
mod html;
mod ident;
mod inline;
mod layers;
mod library;
mod matching;
mod merge;
#[cfg(feature = "parquet")]
mod parquet;
#[cfg(feature = "parquet")]
mod parquet_blocks;
mod plan;
mod properties;
mod ranges;
mod readme;
mod recorded;
mod sample;
mod schema;
mod spd;
mod spd_blocks;
mod spd_checks;
mod spd_flow;
mod spd_schema;
mod spd_table;
mod spd_trace;
mod spddump;
mod stacks;
mod strindex;
mod support;
mod symbolize;
mod symbols;
#[cfg(feature = "network")]
mod symserver;
mod usage;
mod views;
