//! `strata`: inspect and edit Strata databases and table files, in the spirit of
//! RocksDB's `ldb` and `sst_dump`. Database commands take ldb's form, so ldb
//! scripts carry over: `strata --db=DIR [--hex] get KEY`.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod blob_dump;
mod cf_cmd;
mod cli_error;
mod db_cmd;
mod db_flags;
mod hex;
mod idump;
mod inspect;
mod kv_line;
mod live_files;
mod repair_cmd;
#[cfg(feature = "web")]
mod serve;
mod sst;
mod table_dump;

use cli_error::CliError;

#[derive(Debug, Parser)]
#[command(
    name = "strata",
    version,
    about = "Inspect and edit Strata databases and table files (like ldb and sst_dump)",
    after_help = "Examples:\n  \
        strata --db=/tmp/db --create_if_missing put k1 v1\n  \
        strata --db=/tmp/db get k1\n  \
        strata --db=/tmp/db scan --from=k --to=l --max_keys=10\n  \
        strata --db=/tmp/db dump --hex > dump.txt\n  \
        strata --db=/tmp/db2 --hex --create_if_missing load < dump.txt\n  \
        strata dump_wal --walfile=/tmp/db/000007.log --print_value"
)]
struct Cli {
    /// Database flags given before the command (they may also follow it).
    #[command(flatten)]
    flags: db_flags::DbFlags,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Build, dump and verify table (SST) files.
    #[command(subcommand)]
    Sst(sst::SstCommand),
    #[command(flatten)]
    Db(db_cmd::DbCommand),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Usage errors exit with 1 as ldb's do; --help and --version with 0.
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.command {
        Command::Sst(cmd) => {
            if !cli.flags.is_empty() {
                eprintln!("the sst commands take their own options after `sst <command>`");
                return ExitCode::FAILURE;
            }
            match sst::run(cmd) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("{e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Db(cmd) => match db_cmd::run(cmd, &cli.flags) {
            Ok(()) | Err(CliError::StdoutClosed) => ExitCode::SUCCESS,
            Err(CliError::Failed(message)) => {
                eprintln!("Failed: {message}");
                ExitCode::FAILURE
            }
        },
    }
}
