//! strata-cache-bench: RocksDB's `cache_bench` workload on Strata's block
//! cache. `-flag=value` and `--flag=value` both work.

#[path = "../cache_bench.rs"]
mod cache_bench;
#[path = "../mt64.rs"]
mod mt64;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = cache_bench::parse(&args).and_then(|flags| cache_bench::run(&flags));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("strata-cache-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
