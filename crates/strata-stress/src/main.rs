//! strata-stress: runs random operations against Strata while an expected
//! state records what was acknowledged, crashes it (a killed process, or
//! power loss on the simulated file system), and checks that no acknowledged
//! write was lost, no batch split, and no hole opened. Ends with
//! `strata-stress: mode=M cycles=N ops=O violations=V`; exits 0 only when V is 0.

#[cfg(feature = "failpoints")]
mod crashpoints;
mod current;
mod expected;
mod families;
mod full_disk;
mod intruder;
mod kill;
mod model;
mod options;
mod race;
mod race_drop;
mod repair;
mod report;
mod runner;
mod sim;
mod wal_damage;
mod workload;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Parser, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Child processes killed with SIGKILL at random moments, on the real
    /// file system.
    Kill,
    /// Crashes and power loss on the simulated file system, in process.
    Sim,
    /// Crashes at named points inside the engine, and during the recovery
    /// after (needs the `failpoints` feature).
    Crashpoints,
    /// Snapshot, point and scan reads (twice `--threads` reader threads)
    /// racing nonstop flushes and compactions, every answer checked exactly;
    /// no crash.
    Race,
}

#[derive(Debug, Parser)]
#[command(name = "strata-stress", about = "Crash and fault testing of Strata")]
struct Args {
    #[arg(long, value_enum)]
    mode: Mode,
    /// Seconds to run (cycles stop starting after this).
    #[arg(long, default_value_t = 60)]
    duration: u64,
    /// Stop after this many cycles, whatever the duration (for CI).
    #[arg(long)]
    cycles: Option<u64>,
    /// Seed of options, operations and crash points; drawn from the clock
    /// when absent, and printed.
    #[arg(long)]
    seed: Option<u64>,
    /// Kill mode: directory for the database (a temporary one if absent).
    #[arg(long)]
    db: Option<PathBuf>,
    /// Writer threads.
    #[arg(long, default_value_t = 4)]
    threads: usize,
    /// Internal: run as the kill-mode child for this cycle.
    #[arg(long, hide = true)]
    child_cycle: Option<u64>,
    /// Internal: run as the kill-mode intruder for this cycle.
    #[arg(long, hide = true)]
    intruder_cycle: Option<u64>,
}

/// When a run stops, and what it runs with.
#[derive(Debug, Clone, Copy)]
pub struct RunLimits {
    pub seed: u64,
    pub threads: usize,
    pub duration: Duration,
    pub cycles: Option<u64>,
}

impl RunLimits {
    /// True once `cycles` are done, or the duration is up (when no cycle
    /// count is given).
    pub fn done(&self, cycles: u64, start: Instant) -> bool {
        match self.cycles {
            Some(n) => cycles >= n,
            None => start.elapsed() >= self.duration,
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.threads == 0 || args.threads > 64 {
        eprintln!("strata-stress: --threads must be within 1..=64");
        return ExitCode::FAILURE;
    }
    let seed = args.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64)
    });
    let limits = RunLimits {
        seed,
        threads: args.threads,
        duration: Duration::from_secs(args.duration),
        cycles: args.cycles,
    };
    if let Some(cycle) = args.child_cycle {
        let Some(root) = &args.db else {
            eprintln!("strata-stress: --child-cycle needs --db");
            return ExitCode::FAILURE;
        };
        return kill::child(&limits, root, cycle);
    }
    if let Some(cycle) = args.intruder_cycle {
        let Some(root) = &args.db else {
            eprintln!("strata-stress: --intruder-cycle needs --db");
            return ExitCode::FAILURE;
        };
        let opts = options::draw(limits.seed, std::sync::Arc::new(strata::StdFs));
        let w = kill::workload(&limits, &opts);
        return intruder::run(&limits, root, cycle, &w);
    }
    let (name, outcome) = match args.mode {
        Mode::Sim => ("sim", sim::run(&limits)),
        Mode::Kill => ("kill", kill::run(&limits, args.db.clone())),
        Mode::Race => ("race", race::run(&limits)),
        #[cfg(feature = "failpoints")]
        Mode::Crashpoints => ("crashpoints", crashpoints::run(&limits)),
        #[cfg(not(feature = "failpoints"))]
        Mode::Crashpoints => {
            eprintln!(
                "strata-stress: --mode=crashpoints needs the crash points compiled in: \
                 cargo run -p strata-stress --features failpoints -- --mode=crashpoints"
            );
            return ExitCode::FAILURE;
        }
    };
    outcome.print(name);
    if outcome.violations == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
