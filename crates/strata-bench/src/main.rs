//! strata-bench: db_bench for Strata. `--help` lists the flags; design §7 says
//! how its numbers are meant to be compared with RocksDB's.

mod benchmarks;
mod compare;
mod engine;
mod flags;
mod generator;
mod intervals;
mod json;
mod report;
mod ycsb;

use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = Vec::new();
    for arg in std::env::args_os().skip(1) {
        match arg.into_string() {
            Ok(arg) => args.push(arg),
            Err(bad) => return fail(&format!("argument {bad:?} is not UTF-8")),
        }
    }
    let flags = match flags::parse(&args) {
        Ok(flags::Command::Run(flags)) => flags,
        Ok(flags::Command::Help) => {
            print!("{}", flags::usage());
            return ExitCode::SUCCESS;
        }
        Err(e) => return fail(&e.to_string()),
    };
    let result = match &flags.compare_with_rocksdb {
        Some(db_bench) => compare::run(&flags, db_bench),
        None => benchmarks::run(&flags),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e),
    }
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("strata-bench: {msg}");
    ExitCode::FAILURE
}
