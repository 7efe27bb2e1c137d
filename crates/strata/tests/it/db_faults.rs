//! The I/O-error sweep: a reference workload (writes, some synced, flushes, a
//! compaction, reads) runs once cleanly to count its I/O operations; then
//! once per operation k of each kind, with that operation failing once, and
//! with every operation of that kind from k on failing (a broken disk); and
//! under a range of disk quotas (ENOSPC). In every case:
//! - no read returns a wrong value or a false NotFound: it is right or an error;
//! - a failed write leaves the database refusing writes with an error that
//!   names the failed operation, while reads go on;
//! - once the fault is gone, `resume` brings writes back;
//! - after power loss and reopen, every acknowledged synced write is there and
//!   the state is exactly a prefix of the acknowledged history;
//! - no table file outlives a failed flush or compaction.

use std::collections::BTreeMap;
use std::path::Path;

use strata::fs::sim::{CrashMode, DataLoss, Fault, OpKind};
use strata::fs::SimFs;
use strata::{Db, DbOptions, Error, WriteBatch, WriteOptions};

use crate::util::sim_options;

const BATCHES: u64 = 120;
const KEYS: u64 = 60;

fn options(fs: &SimFs) -> DbOptions {
    let mut o = sim_options(fs);
    o.compaction.level0_file_num_compaction_trigger = 2;
    o
}

fn key(n: u64) -> Vec<u8> {
    format!("key{n:03}").into_bytes()
}

/// Keys and values a batch puts.
type Puts = Vec<(Vec<u8>, Vec<u8>)>;

/// Batch `i`: two puts and the sequence key, about 1.2 KB.
fn batch(i: u64) -> (WriteBatch, Puts) {
    let mut b = WriteBatch::new();
    let mut puts = Vec::new();
    for j in 0..2 {
        let k = key((i * 7 + j * 13) % KEYS);
        let v = format!("b{i}j{j}-{}", "v".repeat(600)).into_bytes();
        b.put(&k, &v).unwrap();
        puts.push((k, v));
    }
    b.put(b"~seq", i.to_string().as_bytes()).unwrap();
    (b, puts)
}

/// The state after batches `0..n`.
fn state_after(n: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut state = BTreeMap::new();
    for i in 0..n {
        for (k, v) in batch(i).1 {
            state.insert(k, v);
        }
    }
    state
}

/// What a run observed.
#[derive(Debug, Default)]
struct Run {
    acked: u64,
    synced: u64,
    write_error: Option<Error>,
}

/// Reads `k` and checks it against the acknowledged state: right or an
/// error, never a wrong value or a false NotFound.
fn check_read(db: &Db, k: &[u8], acked: u64, case: &str) {
    let want = state_after(acked).get(k).cloned();
    if let Ok(got) = db.get(k) {
        assert_eq!(got.as_deref(), want.as_deref(), "{case}: silent wrong read");
    }
}

fn workload(db: &Db, case: &str) -> Run {
    let mut run = Run::default();
    for i in 0..BATCHES {
        let sync = i % 10 == 9;
        let options = WriteOptions {
            sync,
            ..WriteOptions::default()
        };
        match db.write(&options, batch(i).0) {
            Ok(()) => {
                run.acked = i + 1;
                if sync {
                    run.synced = i + 1;
                }
            }
            Err(e) => {
                run.write_error = Some(e);
                return run;
            }
        }
        check_read(db, &key((i * 7) % KEYS), run.acked, case);
        if i % 40 == 39 {
            if let Err(e) = db.flush() {
                run.write_error = Some(e);
                return run;
            }
        }
    }
    // A compaction error is retried, not fatal; its failure is an Err here.
    let _ = db.compact_range(None, None);
    for n in 0..KEYS {
        check_read(db, &key(n), run.acked, case);
    }
    run
}

/// Table files on disk that the current version does not name.
fn orphan_tables(fs: &SimFs, db: &Db) -> Vec<String> {
    use strata::Fs as _;
    let live: Vec<u64> = db.live_files().iter().map(|&(_, n, _)| n).collect();
    fs.list(Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|name| {
            name.strip_suffix(".sst")
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|n| !live.contains(&n))
        })
        .collect()
}

fn one_case(seed: u64, fault: Option<Fault>, case: &str) {
    let fs = SimFs::new(seed);
    let db = Db::open(Path::new("/db"), options(&fs)).unwrap();
    if let Some(f) = fault {
        fs.inject(f);
    }
    let run = workload(&db, case);
    if let Some(e) = &run.write_error {
        let text = e.to_string();
        let named = [
            "append", "fsync", "sync", "rename", "create", "read", "space", "flush",
        ]
        .iter()
        .any(|op| text.contains(op));
        assert!(named, "{case}: the error does not name its cause: {text}");
        // Writes stay refused until resume; reads go on.
        let (b, _) = batch(BATCHES + 1);
        assert!(db.write(&WriteOptions::default(), b).is_err(), "{case}");
        check_read(&db, &key(0), run.acked, case);
    }
    fs.clear_faults();
    db.resume()
        .unwrap_or_else(|e| panic!("{case}: resume after the fault was cleared: {e}"));
    // Writes work again: one more synced batch, which must survive power loss.
    let last = run.acked;
    db.write(
        &WriteOptions {
            sync: true,
            ..WriteOptions::default()
        },
        batch(last).0,
    )
    .unwrap_or_else(|e| panic!("{case}: write after resume: {e}"));
    // Power loss before any flush: the write after resume must come back
    // from the WAL, whatever the failed operation left in the files.
    fs.halt();
    drop(db);
    fs.crash(CrashMode {
        data: DataLoss::DropUnsynced,
        lose_unsynced_dir_entries: true,
    });
    let db = Db::open(Path::new("/db"), options(&fs))
        .unwrap_or_else(|e| panic!("{case}: reopen after power loss: {e}"));
    let seq: u64 = db.get(b"~seq").unwrap().map_or(0, |v| {
        std::str::from_utf8(&v).unwrap().parse::<u64>().unwrap() + 1
    });
    assert_eq!(
        seq,
        last + 1,
        "{case}: the synced write after resume was lost"
    );
    let mut recovered = BTreeMap::new();
    for n in 0..KEYS {
        if let Some(v) = db.get(key(n)).unwrap() {
            recovered.insert(key(n), v.to_vec());
        }
    }
    let mut want = state_after(last);
    for (k, v) in batch(last).1 {
        want.insert(k, v);
    }
    assert!(
        recovered == want,
        "{case}: state is not the acknowledged history"
    );
    // Obsolete tables go when a job ends with no reader or other job holding
    // an older version; one more job, running alone, sweeps whatever a
    // failed job left.
    db.wait_for_compaction().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(orphan_tables(&fs, &db), Vec::<String>::new(), "{case}");
}

/// I/O operations of each kind in a clean run of the workload.
fn reference_counts() -> Vec<(OpKind, u64)> {
    let fs = SimFs::new(1);
    let db = Db::open(Path::new("/db"), options(&fs)).unwrap();
    let before: Vec<u64> = OpKind::ALL.iter().map(|&op| fs.op_count(op)).collect();
    let run = workload(&db, "reference");
    assert!(run.write_error.is_none() && run.acked == BATCHES);
    assert!(
        !db.live_files().is_empty(),
        "the reference workload made no tables"
    );
    OpKind::ALL
        .iter()
        .zip(before)
        .map(|(&op, b)| (op, fs.op_count(op) - b))
        .collect()
}

#[test]
fn io_error_sweep_loses_no_synced_write_and_never_answers_wrong() {
    let counts = reference_counts();
    let swept = [
        OpKind::Read,
        OpKind::Append,
        OpKind::Sync,
        OpKind::Rename,
        OpKind::Create,
        OpKind::SyncDir,
    ];
    let mut points = 0;
    for (op, count) in counts.into_iter().filter(|(op, _)| swept.contains(op)) {
        // At most 60 points per kind: appends and reads number in hundreds.
        let stride = (count / 60).max(1);
        for k in (1..=count).step_by(stride as usize) {
            points += 1;
            one_case(
                k,
                Some(Fault::ErrorOnNth { op, n: k }),
                &format!("{op:?} #{k} once"),
            );
            one_case(
                k,
                Some(Fault::ErrorFromNth { op, n: k }),
                &format!("{op:?} from #{k}"),
            );
        }
    }
    assert!(points > 100, "only {points} fault points");
    eprintln!("io-error sweep: {points} fault points, each failed once and persistently");
    // A full disk at many fill levels.
    for kib in (40..400).step_by(15) {
        one_case(
            kib,
            Some(Fault::SpaceQuota { bytes: kib << 10 }),
            &format!("ENOSPC at {kib} KiB"),
        );
    }
}

#[test]
fn resume_refuses_while_the_disk_is_still_full_and_clears_after() {
    let fs = SimFs::new(5);
    let db = Db::open(Path::new("/db"), options(&fs)).unwrap();
    fs.inject(Fault::SpaceQuota { bytes: 60 << 10 });
    let run = workload(&db, "quota");
    assert!(
        matches!(run.write_error, Some(Error::NoSpace { .. })),
        "{run:?}"
    );
    assert_eq!(
        db.property("strata.background-errors").as_deref(),
        Some("1")
    );
    assert!(db.resume().is_err(), "resumed while the disk is still full");
    assert!(db.put(b"k", b"v").is_err());
    fs.clear_faults();
    db.resume().unwrap();
    assert_eq!(
        db.property("strata.background-errors").as_deref(),
        Some("0")
    );
    db.put(b"k", b"v").unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}
