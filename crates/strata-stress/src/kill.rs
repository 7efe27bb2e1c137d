//! `--mode=kill`: a child process writes to a real database and is killed
//! with SIGKILL at a random moment (50 ms to 2 s); the parent then opens the
//! database and checks that every acknowledged write survived (their WAL
//! bytes had reached the OS), with no holes and no partial batch.
//!
//! While the child runs, a second process (`intruder`) keeps trying to
//! open, destroy, read and check the same database; after some cycles
//! CURRENT is deleted or damaged and must make the next open refuse
//! (`current`).
//!
//! The child records each batch's start and acknowledgement in one log file
//! per thread, one `write` per record, before it sends the batch and after it
//! returns; the page cache keeps those records through the kill. The parent
//! regenerates batch contents from the seed.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::StdFs;

use crate::expected::{verify, Durability, Expected, ThreadLog};
use crate::options::{self, StressOptions};
use crate::report::{violation, Outcome};
use crate::runner::{run_thread, Recorder, Shared};
use crate::workload::Workload;
use crate::RunLimits;

/// Exit code of a child that found a violation itself (a wrong read).
const CHILD_VIOLATION: i32 = 3;
/// A child left alone stops after this long.
const CHILD_MAX_RUN: Duration = Duration::from_secs(120);

pub fn workload(limits: &RunLimits, opts: &StressOptions) -> Workload {
    Workload::new(limits.seed, limits.threads, opts)
}

fn log_path(logs: &Path, thread: usize) -> PathBuf {
    logs.join(format!("t{thread:02}.log"))
}

/// Written by the child once it holds the database: the intruder may start.
fn opened_marker(logs: &Path) -> PathBuf {
    logs.join("opened")
}

/// Share of cycles, in percent, after which CURRENT is attacked.
const CURRENT_PERCENT: u32 = 12;

/// The parent: runs kill cycles in `dir` (a temporary directory if `None`).
pub fn run(limits: &RunLimits, dir: Option<PathBuf>) -> Outcome {
    let mut out = Outcome::default();
    let temp = match dir {
        Some(_) => None,
        None => match tempfile::tempdir() {
            Ok(t) => Some(t),
            Err(e) => {
                eprintln!("strata-stress: cannot make a temporary directory: {e}");
                out.violations += 1;
                return out;
            }
        },
    };
    let root = dir.unwrap_or_else(|| temp.as_ref().map_or_else(PathBuf::new, |t| t.path().into()));
    let (db_dir, logs_dir) = (root.join("db"), root.join("stress-logs"));
    let opts = options::draw(limits.seed, Arc::new(StdFs));
    let described = opts.to_string();
    println!(
        "strata-stress: mode=kill seed={} db={} options: {described}",
        limits.seed,
        db_dir.display()
    );
    let w = workload(limits, &opts);
    let durability = if opts.disable_wal {
        Durability::PrefixOnly
    } else if opts.db.manual_wal_flush {
        // A kill loses what waited in the WAL's buffer; sync writes flushed it.
        Durability::Synced
    } else {
        Durability::Acknowledged
    };
    let mut rng = SmallRng::seed_from_u64(limits.seed.rotate_left(29));
    let mut expected = Expected::new(w.threads);
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("strata-stress: cannot find its own executable: {e}");
            out.violations += 1;
            return out;
        }
    };
    let start = Instant::now();
    while !limits.done(out.cycles, start) {
        let cycle = out.cycles;
        let mut fail = |what: String, logs: &[ThreadLog]| {
            violation("kill", &w, &described, cycle, &what, logs);
            out.violations += 1;
        };
        if let Err(e) = fs::remove_dir_all(&logs_dir)
            .or_else(|e| match e.kind() {
                std::io::ErrorKind::NotFound => Ok(()),
                _ => Err(e),
            })
            .and_then(|()| fs::create_dir_all(&logs_dir))
        {
            fail(format!("cannot reset {}: {e}", logs_dir.display()), &[]);
            return out;
        }
        let spawned = Command::new(&exe)
            .arg("--mode=kill")
            .arg(format!("--seed={}", limits.seed))
            .arg(format!("--threads={}", limits.threads))
            .arg(format!("--db={}", root.display()))
            .arg(format!("--child-cycle={cycle}"))
            .stdout(Stdio::null())
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                fail(format!("cannot start the child: {e}"), &[]);
                return out;
            }
        };
        let kill_at = Instant::now() + Duration::from_millis(rng.gen_range(50..=2_000));
        let mut early_exit = None;
        let mut intruder = None;
        while Instant::now() < kill_at {
            match child.try_wait() {
                Ok(Some(status)) => {
                    early_exit = Some(status);
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(_) => break,
            }
            if intruder.is_none() && opened_marker(&logs_dir).exists() {
                match crate::intruder::spawn(&exe, limits, &root, cycle) {
                    Ok(c) => intruder = Some(c),
                    Err(e) => {
                        fail(format!("cannot start the intruder: {e}"), &[]);
                        let _ = child.kill();
                        let _ = child.wait();
                        return out;
                    }
                }
            }
        }
        // The intruder goes first: whatever it did, it did while the writer
        // held the database.
        let intruded = intruder.map(|i| crate::intruder::stop(i, &root));
        // SIGKILL: the process dies wherever it is.
        let _ = child.kill();
        let _ = child.wait();
        let logs: Vec<ThreadLog> = (0..w.threads)
            .map(|t| read_log(&log_path(&logs_dir, t)))
            .collect();
        out.ops += logs.iter().map(|l| l.started.len() as u64).sum::<u64>();
        out.merges += logs
            .iter()
            .enumerate()
            .map(|(t, l)| w.merges_in(cycle, t, l.acked.iter().flatten().count()))
            .sum::<u64>();
        match intruded {
            Some(Ok(rounds)) => {
                out.ops += rounds;
                out.intruder_rounds += rounds;
            }
            Some(Err(e)) => {
                fail(e, &logs);
                return out;
            }
            None => {}
        }
        if let Some(status) = early_exit {
            let what = if status.code() == Some(CHILD_VIOLATION) {
                "the child found a wrong read (its message is above)".to_string()
            } else {
                format!("the child exited before it was killed: {status}")
            };
            fail(what, &logs);
            return out;
        }
        let db = match crate::families::open(&db_dir, &opts) {
            Ok(db) => db,
            Err(e) => {
                fail(format!("reopen after kill failed: {e}"), &logs);
                return out;
            }
        };
        if !db.wal_damage().is_empty() {
            let damage: Vec<String> = db.wal_damage().iter().map(|d| d.to_string()).collect();
            fail(
                format!("a kill left WAL damage: {}", damage.join("; ")),
                &logs,
            );
            return out;
        }
        if let Err(e) = verify(&db, &w, cycle, &mut expected, &logs, durability) {
            fail(e, &logs);
            return out;
        }
        if let Err(e) = db.close() {
            fail(format!("close after verification failed: {e}"), &logs);
            return out;
        }
        out.cycles += 1;
        if rng.gen_range(0..100) < CURRENT_PERCENT {
            if let Err(e) = attack_current(&db_dir, &opts, &w, &expected, &mut rng) {
                fail(e, &[]);
                return out;
            }
            out.ops += 2;
            out.current_attacks += 1;
            out.cycles += 1;
        }
    }
    out.expired_gone = expected.expired_gone;
    out.filter_removed = opts.filter.removed();
    out
}

/// Deletes or damages CURRENT of the closed database, checks that an open
/// refuses, restores it, and checks the database holds exactly `expected`.
fn attack_current(
    dir: &Path,
    options: &StressOptions,
    w: &Workload,
    expected: &Expected,
    rng: &mut SmallRng,
) -> Result<(), String> {
    let what = crate::current::attack(&StdFs, dir, &options.db, rng)?;
    let db = crate::families::open(dir, options)
        .map_err(|e| format!("{what}, restored: reopen failed: {e}"))?;
    crate::expected::verify_unchanged(&db, w, expected)
        .map_err(|e| format!("{what}, restored: {e}"))?;
    db.close()
        .map_err(|e| format!("{what}, restored: close failed: {e}"))
}

/// A thread's log as the child left it. A last line without its newline
/// was cut by the kill: the start or acknowledgement it began to record
/// did not happen before the record, so it is ignored.
fn read_log(path: &Path) -> ThreadLog {
    let mut log = ThreadLog::default();
    let Ok(text) = fs::read_to_string(path) else {
        return log;
    };
    let complete = text.rfind('\n').map_or("", |end| &text[..end]);
    for line in complete.lines() {
        let fields: Vec<u64> = line
            .split(' ')
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        match (line.as_bytes().first(), fields.as_slice()) {
            (Some(b'S'), [_, clock]) => log.start(*clock),
            (Some(b'A'), [index, clock, sync]) => log.ack(*index as usize, *clock, *sync == 1),
            _ => {}
        }
    }
    log
}

/// Records to a thread's log file, one `write` call per record.
struct FileRecorder(File);

impl Recorder for FileRecorder {
    fn start(&mut self, index: usize, clock: u64) -> std::io::Result<()> {
        self.0.write_all(format!("S {index} {clock}\n").as_bytes())
    }

    fn ack(&mut self, index: usize, clock: u64, sync: bool) -> std::io::Result<()> {
        self.0
            .write_all(format!("A {index} {clock} {}\n", u8::from(sync)).as_bytes())
    }
}

/// The child: writes until killed (or `CHILD_MAX_RUN`).
pub fn child(limits: &RunLimits, root: &Path, cycle: u64) -> ExitCode {
    let opts = options::draw(limits.seed, Arc::new(StdFs));
    let w = workload(limits, &opts);
    let db = match crate::families::open(root.join("db"), &opts) {
        Ok(db) => db,
        Err(e) => {
            eprintln!("strata-stress child: open failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut expected = Expected::new(w.threads);
    // The child reads the state the parent verified, so its reads check too.
    if let Err(e) = crate::expected::load(&db, &w, &mut expected) {
        eprintln!("strata-stress child: {e}");
        return ExitCode::FAILURE;
    }
    let logs = root.join("stress-logs");
    if let Err(e) = File::create(opened_marker(&logs)) {
        eprintln!("strata-stress child: cannot mark the database open: {e}");
        return ExitCode::FAILURE;
    }
    let mut recorders = Vec::with_capacity(w.threads);
    for t in 0..w.threads {
        match OpenOptions::new()
            .create(true)
            .append(true)
            .open(log_path(&logs, t))
        {
            Ok(f) => recorders.push(FileRecorder(f)),
            Err(e) => {
                eprintln!("strata-stress child: cannot open its log: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let shared = match Shared::new(&db, w, cycle, opts.disable_wal, Arc::default()) {
        Ok(shared) => shared,
        Err(e) => {
            eprintln!("strata-stress child: {e}");
            return ExitCode::FAILURE;
        }
    };
    let failure = std::thread::scope(|s| {
        let handles: Vec<_> = recorders
            .into_iter()
            .enumerate()
            .map(|(t, mut rec)| {
                let (shared, state) = (&shared, expected.keys[t].clone());
                s.spawn(move || run_thread(shared, t, state, &mut rec))
            })
            .collect();
        let started = Instant::now();
        while started.elapsed() < CHILD_MAX_RUN && !handles.iter().all(|h| h.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
        }
        shared
            .stop
            .store(true, std::sync::atomic::Ordering::Release);
        handles
            .into_iter()
            .filter_map(|h| {
                h.join()
                    .unwrap_or(Err("a writer thread panicked".into()))
                    .err()
            })
            .next()
    });
    match failure {
        Some(e) => {
            eprintln!("strata-stress child: VIOLATION: {e}");
            ExitCode::from(CHILD_VIOLATION as u8)
        }
        None => ExitCode::SUCCESS,
    }
}
