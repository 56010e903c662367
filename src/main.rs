//! The `sptdump` command: everything it does lives in the library's `cli` module.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(sptdump::cli::main(std::env::args_os().skip(1)))
}
