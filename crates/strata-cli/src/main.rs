//! `strata`: inspect and edit Strata table files (and, later, databases), in the
//! spirit of RocksDB's `sst_dump` and `ldb`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod hex;
mod sst;

#[derive(Debug, Parser)]
#[command(
    name = "strata",
    version,
    about = "Inspect and edit Strata table files"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build, dump and verify table (SST) files.
    #[command(subcommand)]
    Sst(sst::SstCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Sst(cmd) => sst::run(cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
