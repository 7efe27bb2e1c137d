//! Kill mode's intruder: a second process that, while the writer child holds
//! the database, keeps trying what another process might do to it:
//! - `Db::open` must fail with `LockHeld`;
//! - `Db::destroy` must fail with `LockHeld` and delete nothing (CURRENT is
//!   still there; the parent's check after the kill proves the rest);
//! - `Db::open_read_only` must succeed, and its gets return only values the
//!   workload could have left in that key (a get may fail when the writer
//!   deletes a file under it, never with `Corruption`);
//! - `strata::check_consistency` must succeed and find nothing wrong.
//!
//! The parent starts it once the child has the database open and kills it
//! before it kills the child, so any success of open or destroy happened
//! while the writer was alive. One byte per round goes to `intruder.log`.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::filename::current_file_name;
use strata::{check_consistency, Db, DbOptions, Error, StdFs};

use crate::model::{MergeKind, MARK};
use crate::options;
use crate::workload::{key, Op, Workload};
use crate::RunLimits;

/// Exit code of an intruder that found a violation (its message is on
/// stderr).
pub const INTRUDER_VIOLATION: i32 = 4;
/// Pause between rounds, so the writer keeps most of the machine.
const PAUSE: Duration = Duration::from_millis(10);
/// An intruder left alone stops after this long.
const MAX_RUN: Duration = Duration::from_secs(120);

pub fn log_path(root: &Path) -> PathBuf {
    root.join("stress-logs").join("intruder.log")
}

/// Starts the intruder for `cycle` on the database under `root`.
pub fn spawn(exe: &Path, limits: &RunLimits, root: &Path, cycle: u64) -> std::io::Result<Child> {
    Command::new(exe)
        .arg("--mode=kill")
        .arg(format!("--seed={}", limits.seed))
        .arg(format!("--threads={}", limits.threads))
        .arg(format!("--db={}", root.display()))
        .arg(format!("--intruder-cycle={cycle}"))
        .stdout(Stdio::null())
        .spawn()
}

/// Kills the intruder (the writer is still alive) and returns its rounds,
/// or the violation it exited with.
pub fn stop(mut intruder: Child, root: &Path) -> Result<u64, String> {
    let exited = intruder.try_wait().ok().flatten();
    let _ = intruder.kill();
    let _ = intruder.wait();
    let rounds = std::fs::metadata(log_path(root)).map_or(0, |m| m.len());
    match exited {
        None => Ok(rounds),
        Some(status) if status.code() == Some(INTRUDER_VIOLATION) => Err(format!(
            "the intruder found a violation after {rounds} rounds (its message is above)"
        )),
        Some(status) => Err(format!(
            "the intruder exited before it was killed: {status}"
        )),
    }
}

/// The intruder process: rounds until killed (or `MAX_RUN`).
pub fn run(limits: &RunLimits, root: &Path, cycle: u64, w: &Workload) -> ExitCode {
    let opts = options::draw(limits.seed, Arc::new(StdFs));
    let dir = root.join("db");
    let mut log = match OpenOptions::new()
        .create(true)
        .append(true)
        .open(log_path(root))
    {
        Ok(f) => f,
        Err(e) => {
            eprintln!("strata-stress intruder: cannot open its log: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut rng = SmallRng::seed_from_u64(limits.seed ^ cycle.rotate_left(7) ^ 0x17);
    let started = Instant::now();
    while started.elapsed() < MAX_RUN {
        if let Err(e) = round(&dir, &opts.db, w, &mut rng) {
            eprintln!("strata-stress intruder: VIOLATION in cycle {cycle}: {e}");
            return ExitCode::from(INTRUDER_VIOLATION as u8);
        }
        if log.write_all(b".").is_err() {
            return ExitCode::FAILURE;
        }
        std::thread::sleep(PAUSE);
    }
    ExitCode::SUCCESS
}

fn round(dir: &Path, options: &DbOptions, w: &Workload, rng: &mut SmallRng) -> Result<(), String> {
    match Db::open(dir, options.clone()) {
        Ok(_) => return Err("Db::open succeeded while the writer holds the database".into()),
        Err(Error::LockHeld { .. }) => {}
        Err(e) => return Err(format!("Db::open failed, but not with LockHeld: {e}")),
    }
    match Db::destroy(dir, options) {
        Ok(()) => return Err("Db::destroy succeeded while the writer holds the database".into()),
        Err(Error::LockHeld { .. }) => {}
        Err(e) => return Err(format!("Db::destroy failed, but not with LockHeld: {e}")),
    }
    if !current_file_name(dir).exists() {
        return Err("CURRENT is gone after a refused Db::destroy".into());
    }
    let reader = Db::open_read_only(dir, options.clone())
        .map_err(|e| format!("Db::open_read_only beside the writer failed: {e}"))?;
    for _ in 0..5 {
        let (t, n) = (
            rng.gen_range(0..w.threads),
            rng.gen_range(0..w.keys_per_thread),
        );
        let Some(cf) =
            reader.cf_handle(crate::families::NAMES[crate::families::of_key(n, w.families)])
        else {
            return Err("a read-only open beside the writer lacks a column family".into());
        };
        match reader.get_cf(&cf, key(t, n)) {
            Ok(Some(v)) => check_written(w, t, n, &v)?,
            Ok(None) => {}
            Err(e @ Error::Corruption { .. }) => {
                return Err(format!(
                    "a read-only get of t{t:02}k{n:05} found corruption: {e}"
                ))
            }
            // A table the writer deleted under the reader: reads fail then,
            // they never return a wrong value.
            Err(_) => {}
        }
    }
    drop(reader);
    let report = check_consistency(dir, options)
        .map_err(|e| format!("check_consistency beside the writer failed: {e}"))?;
    if !report.is_clean() {
        return Err(format!(
            "check_consistency found damage in the live database: {report:?}"
        ));
    }
    Ok(())
}

/// A value read for key `n` of thread `t` must be one the workload could
/// have left there: a value put there or an operand merged into it (each
/// names its batch, `[EXPIRED]c<cycle>t<thread>i<index>-`), operands joined
/// by the string append operator, or any sum of the add operator. The
/// read-only open gives every family the default family's options
/// (`Db::open_read_only` takes no per-family ones), so a family with another
/// merge operator reads merged values wrongly: its values are not checked.
fn check_written(w: &Workload, t: usize, n: u32, v: &[u8]) -> Result<(), String> {
    let kind = w.merge_kind(n);
    let checked = if kind != w.merge_kinds[0] {
        true
    } else {
        match kind {
            MergeKind::UInt64Add => v.len() == 8 || written(w, t, n, v),
            MergeKind::StringAppend => v.split(|&b| b == b',').all(|p| written(w, t, n, p)),
            MergeKind::Max | MergeKind::Put => written(w, t, n, v),
        }
    };
    if checked {
        Ok(())
    } else {
        let shown: String = String::from_utf8_lossy(v).chars().take(40).collect();
        Err(format!(
            "a read-only get of t{t:02}k{n:05} returned {shown:?}, never written there"
        ))
    }
}

/// Whether `v` was put into key `n` of thread `t`, or merged into it.
fn written(w: &Workload, t: usize, n: u32, v: &[u8]) -> bool {
    let text = v.strip_prefix(MARK).unwrap_or(v);
    let Ok(text) = std::str::from_utf8(text) else {
        return false;
    };
    let head = text.split('-').next().and_then(|h| h.strip_prefix('c'));
    let parsed = head.and_then(|h| {
        let (cycle, rest) = h.split_once('t')?;
        let (thread, index) = rest.split_once('i')?;
        let parsed: (u64, usize, u64) = (
            cycle.parse().ok()?,
            thread.parse().ok()?,
            index.parse().ok()?,
        );
        Some(parsed)
    });
    let Some((cycle, thread, index)) = parsed else {
        return false;
    };
    thread == t
        && w.batch(cycle, t, index).ops.iter().any(|op| match op {
            Op::Put { key, value } => *key == n && value == v,
            Op::Merge { key, operand } => *key == n && operand == v,
            Op::Delete { .. } | Op::DeleteRange { .. } => false,
        })
}
