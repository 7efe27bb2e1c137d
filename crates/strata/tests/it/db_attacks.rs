//! Regression tests for ways to lose data, read wrong, cry corruption or hang
//! that attacks on the tools and the API found: each reproduces the attack
//! and checks the engine now refuses, reports or recovers as it must.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use strata::fs::sim::Fault;
use strata::fs::SimFs;
use strata::{
    CompactionOptions, Db, DbOptions, Error, Fs, ReadOptions, WalRecoveryMode, WriteBatch,
    WriteOptions,
};

use crate::util::sim_options;

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

/// Runs `f` on a thread and fails the test if it has not returned after
/// `limit`: a hang detector for operations that must return (with a value
/// or an error), never a measure of speed.
fn returns_within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .unwrap_or_else(|_| panic!("the operation hung for {limit:?}"))
}

fn names_in(fs: &SimFs, dir: &str) -> Vec<String> {
    let mut names = fs.list(&p(dir)).unwrap();
    names.sort();
    names
}

/// `Db::destroy` takes the lock: it fails while the database is open and
/// deletes nothing, then removes every engine file once it is closed.
#[test]
fn destroy_refuses_an_open_database_and_then_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let options = DbOptions {
        create_if_missing: true,
        ..DbOptions::default()
    };
    let db = Db::open(&path, options.clone()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    let before = std::fs::read_dir(&path).unwrap().count();
    let err = Db::destroy(&path, &options).unwrap_err();
    assert!(matches!(err, Error::LockHeld { .. }), "{err}");
    let after = std::fs::read_dir(&path).unwrap().count();
    assert_eq!(before, after, "a refused destroy deletes nothing");
    db.put(b"k2", b"v2").unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    db.close().unwrap();
    // Reopen: the writes are there, and the lock was never stolen.
    let db = Db::open(&path, options.clone()).unwrap();
    assert_eq!(db.get(b"k2").unwrap().as_deref(), Some(&b"v2"[..]));
    drop(db);

    std::fs::write(path.join("notes.txt"), b"mine").unwrap();
    Db::destroy(&path, &options).unwrap();
    let left: Vec<String> = std::fs::read_dir(&path)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["notes.txt".to_string()],
        "only foreign files stay"
    );
    Db::destroy(dir.path().join("never-was"), &options).unwrap();
    let db = Db::open(&path, options).unwrap();
    assert_eq!(
        db.get(b"k").unwrap(),
        None,
        "a destroyed database starts empty"
    );
}

/// A full disk that fails a WAL append (no stall, no flush involved): the
/// write fails with `NoSpace`, and once space is back the database resumes
/// by itself. The flush thread that runs the recovery must be woken by the
/// failed write, or it sleeps until some other event and writes never come
/// back.
#[test]
fn full_disk_on_a_wal_append_recovers_when_space_returns() {
    let fs = SimFs::new(32);
    let options = DbOptions {
        write_buffer_size: 4 << 20,
        ..sim_options(&fs)
    };
    let db = Db::open(p("/db"), options.clone()).unwrap();
    db.put(b"before", b"x").unwrap();
    fs.inject(Fault::SpaceQuota {
        bytes: fs.total_bytes() + (8 << 10),
    });
    let value = vec![b'v'; 200];
    let mut acked = 0u32;
    let err = loop {
        match db.put(format!("key{acked:06}").as_bytes(), &value) {
            Ok(()) => acked += 1,
            Err(e) => break e,
        }
    };
    assert!(matches!(err, Error::NoSpace { .. }), "{err}");
    fs.clear_faults();
    let db = Arc::new(db);
    let probe_db = db.clone();
    returns_within(Duration::from_secs(60), move || {
        while probe_db.put(b"probe", b"x").is_err() {
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    for i in 0..acked {
        let key = format!("key{i:06}");
        assert_eq!(db.get(key.as_bytes()).unwrap().as_deref(), Some(&value[..]));
    }
}

/// A full disk while writes are stopped behind compaction: writers get
/// `NoSpace` instead of waiting forever, and once space is back the database
/// resumes by itself with every acknowledged write intact.
#[test]
fn full_disk_fails_stalled_writers_and_recovers_when_space_returns() {
    let fs = SimFs::new(31);
    let options = DbOptions {
        compaction: CompactionOptions {
            level0_file_num_compaction_trigger: 2,
            level0_slowdown_writes_trigger: 3,
            level0_stop_writes_trigger: 4,
            target_file_size_base: 64 << 10,
            ..CompactionOptions::default()
        },
        ..sim_options(&fs)
    };
    let db = Arc::new(Db::open(p("/db"), options.clone()).unwrap());
    let value = vec![b'v'; 200];
    for i in 0..2_000u32 {
        db.put(format!("key{i:06}").as_bytes(), &value).unwrap();
    }
    db.wait_for_compaction().unwrap();
    // Room for a few flushes, not for a compaction's outputs beside its inputs.
    fs.inject(Fault::SpaceQuota {
        bytes: fs.total_bytes() + (160 << 10),
    });
    let acked = Arc::new(AtomicU64::new(2_000));
    let (writer_db, writer_acked, writer_value) = (db.clone(), acked.clone(), value.clone());
    let err = returns_within(Duration::from_secs(120), move || {
        for i in 2_000u32.. {
            if let Err(e) = writer_db.put(format!("key{i:06}").as_bytes(), &writer_value) {
                return e;
            }
            writer_acked.store(u64::from(i) + 1, Ordering::SeqCst);
        }
        unreachable!()
    });
    assert!(matches!(err, Error::NoSpace { .. }), "{err}");
    let failing = db.put(b"probe", b"x").unwrap_err();
    assert!(matches!(failing, Error::NoSpace { .. }), "{failing}");

    fs.clear_faults();
    let probe_db = db.clone();
    returns_within(Duration::from_secs(120), move || {
        while probe_db.put(b"probe", b"x").is_err() {
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    db.wait_for_compaction().unwrap();
    let acked = acked.load(Ordering::SeqCst);
    let check = |db: &Db| {
        for i in 0..acked {
            let key = format!("key{i:06}");
            assert_eq!(
                db.get(key.as_bytes()).unwrap().as_deref(),
                Some(&value[..]),
                "{key}"
            );
        }
        assert_eq!(db.get(b"probe").unwrap().as_deref(), Some(&b"x"[..]));
    };
    check(&db);
    drop(db);
    check(&Db::open(p("/db"), options).unwrap());
}

/// Without CURRENT, an open with `create_if_missing` must not create a new
/// database over the old one's files (and delete them as obsolete).
#[test]
fn missing_current_is_refused_not_recreated() {
    let fs = SimFs::new(32);
    let db = Db::open(p("/db"), sim_options(&fs)).unwrap();
    for i in 0..500u32 {
        db.put(format!("k{i}").as_bytes(), b"value").unwrap();
    }
    db.flush().unwrap();
    db.put(b"unflushed", b"in the WAL").unwrap();
    drop(db);
    let current = fs.file_contents(&p("/db/CURRENT")).unwrap();
    fs.remove(&p("/db/CURRENT")).unwrap();
    let files = names_in(&fs, "/db");

    let err = Db::open(p("/db"), sim_options(&fs)).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    let message = err.to_string();
    let manifest = String::from_utf8(current.clone()).unwrap();
    assert!(message.contains(manifest.trim()), "{message}");
    assert!(message.contains("CURRENT is missing"), "{message}");
    assert_eq!(
        names_in(&fs, "/db"),
        files,
        "the refused open changed nothing"
    );
    let err = Db::open_read_only(p("/db"), sim_options(&fs)).unwrap_err();
    assert!(err.to_string().contains("CURRENT is missing"), "{err}");

    // Doing what the message says recovers everything.
    let mut f = fs.create(&p("/db/CURRENT")).unwrap();
    f.append(&current).unwrap();
    f.sync().unwrap();
    drop(f);
    let db = Db::open(p("/db"), sim_options(&fs)).unwrap();
    assert_eq!(db.get(b"k499").unwrap().as_deref(), Some(&b"value"[..]));
    assert_eq!(
        db.get(b"unflushed").unwrap().as_deref(),
        Some(&b"in the WAL"[..])
    );
}

/// A creation interrupted before CURRENT was written leaves nothing worth
/// keeping, and the next open creates the database.
#[test]
fn interrupted_creation_is_created_again() {
    let fs = SimFs::new(33);
    drop(Db::open(p("/db"), sim_options(&fs)).unwrap());
    fs.remove(&p("/db/CURRENT")).unwrap();
    // What a crash between the first MANIFEST and CURRENT leaves: an empty
    // WAL and a MANIFEST of an empty database.
    let db = Db::open(p("/db"), sim_options(&fs)).unwrap();
    db.put(b"a", b"1").unwrap();
}

/// Builds a database whose only unflushed writes sit in one WAL of several
/// 32 KiB blocks, then flips a byte in the WAL's second block. Returns the
/// number of keys written and the WAL's path.
fn database_with_damaged_wal(fs: &SimFs) -> (u32, PathBuf) {
    let options = DbOptions {
        write_buffer_size: 4 << 20,
        ..sim_options(fs)
    };
    let db = Db::open(p("/db"), options).unwrap();
    let keys = 2_000u32;
    for i in 0..keys {
        db.put(format!("key{i:06}").as_bytes(), [b'x'; 100])
            .unwrap();
    }
    db.close().unwrap();
    let wal = names_in(fs, "/db")
        .into_iter()
        .find(|n| n.ends_with(".log"))
        .map(|n| p("/db").join(n))
        .unwrap();
    assert!(fs.file_contents(&wal).unwrap().len() > 4 * 32 * 1024);
    fs.corrupt_byte(&wal, 32 * 1024 + 1000, 0x40).unwrap();
    (keys, wal)
}

fn open_with_mode(fs: &SimFs, mode: WalRecoveryMode) -> strata::Result<Db> {
    let options = DbOptions {
        wal_recovery_mode: mode,
        write_buffer_size: 4 << 20,
        ..sim_options(fs)
    };
    Db::open(p("/db"), options)
}

fn present(db: &Db, keys: u32) -> Vec<bool> {
    (0..keys)
        .map(|i| db.get(format!("key{i:06}").as_bytes()).unwrap().is_some())
        .collect()
}

/// Damage in the middle of a WAL is never silent: point-in-time recovery
/// keeps the prefix, reports what it dropped, and keeps the WAL as
/// `.log.corrupt`; absolute consistency refuses; skip-any replays the rest.
#[test]
fn wal_damage_mid_file_is_reported_and_kept() {
    let fs = SimFs::new(34);
    let (keys, wal) = database_with_damaged_wal(&fs);

    // A read-only open reports it and changes nothing.
    let options = DbOptions {
        write_buffer_size: 4 << 20,
        ..sim_options(&fs)
    };
    let ro = Db::open_read_only(p("/db"), options.clone()).unwrap();
    assert_eq!(ro.wal_damage().len(), 1, "{:?}", ro.wal_damage());
    let dropped = ro.wal_damage()[0].records_dropped;
    assert!(dropped > 1000, "{:?}", ro.wal_damage());
    drop(ro);
    let report = strata::check_consistency(p("/db"), &options).unwrap();
    assert!(!report.is_clean(), "{report:?}");
    assert!(fs.file_contents(&wal).is_some());

    let err = open_with_mode(&fs, WalRecoveryMode::AbsoluteConsistency).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    let err = open_with_mode(&fs, WalRecoveryMode::TolerateCorruptedTailRecords).unwrap_err();
    assert!(err.is_corruption(), "{err}");

    let db = open_with_mode(&fs, WalRecoveryMode::PointInTimeRecovery).unwrap();
    let damage = db.wal_damage().to_vec();
    assert_eq!(damage.len(), 1);
    assert_eq!(damage[0].records_dropped, dropped);
    let (first, last) = damage[0].dropped_sequences.unwrap();
    assert_eq!(last, u64::from(keys), "the last write is among the dropped");
    assert_eq!(last - first + 1, dropped, "one key per record");
    assert_eq!(
        db.property("strata.wal-records-dropped"),
        Some(dropped.to_string())
    );
    let found = present(&db, keys);
    let kept = found.iter().take_while(|&&f| f).count();
    assert!(kept > 200, "the prefix before the damage is kept: {kept}");
    assert!(found[kept..].iter().all(|&f| !f), "a prefix, nothing after");
    let corrupt = wal.with_extension("log.corrupt");
    assert!(
        fs.file_contents(&corrupt).is_some(),
        "{:?}",
        names_in(&fs, "/db")
    );
    assert!(fs.file_contents(&wal).is_none());
    let log = String::from_utf8(fs.file_contents(&p("/db/LOG")).unwrap()).unwrap();
    assert!(log.contains("[ERROR] WAL #"), "{log}");
    drop(db);
    // The kept WAL stays reported by later opens and by the check.
    let db = Db::open(p("/db"), sim_options(&fs)).unwrap();
    let report = db.property("strata.wal-damage").unwrap();
    assert!(report.contains(".log.corrupt"), "{report}");
    drop(db);
    let report = strata::check_consistency(p("/db"), &sim_options(&fs)).unwrap();
    assert_eq!(report.corrupt_wals, vec![corrupt]);

    let fs = SimFs::new(35);
    let (keys, _) = database_with_damaged_wal(&fs);
    let db = open_with_mode(&fs, WalRecoveryMode::SkipAnyCorruptedRecords).unwrap();
    let found = present(&db, keys);
    let missing = found.iter().filter(|&&f| !f).count();
    assert!(
        missing > 0 && missing < 400,
        "only the damaged block: {missing}"
    );
    assert!(
        found[found.len() - 1],
        "records after the damage are replayed"
    );
    assert_eq!(db.wal_damage().len(), 1);
}

/// A read-write open checks every live table exists with its recorded size.
#[test]
fn missing_or_short_tables_are_refused_at_open() {
    let fs = SimFs::new(36);
    let db = Db::open(p("/db"), sim_options(&fs)).unwrap();
    for i in 0..300u32 {
        db.put(format!("k{i}").as_bytes(), b"value").unwrap();
        if i % 100 == 99 {
            db.flush().unwrap();
        }
    }
    let tables: Vec<u64> = db.live_files().iter().map(|f| f.1).collect();
    drop(db);
    assert_eq!(tables.len(), 3);
    let table = |n: u64| p(&format!("/db/{n:06}.sst"));

    let saved = fs.file_contents(&table(tables[0])).unwrap();
    fs.remove(&table(tables[0])).unwrap();
    let err = Db::open(p("/db"), sim_options(&fs)).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("{:06}.sst (L0) is missing", tables[0])),
        "{err}"
    );
    let mut f = fs.create(&table(tables[0])).unwrap();
    f.append(&saved).unwrap();
    f.sync().unwrap();
    drop(f);

    let len = fs.file_contents(&table(tables[1])).unwrap().len() as u64;
    fs.set_len(&table(tables[1]), len - 10).unwrap();
    let err = Db::open(p("/db"), sim_options(&fs)).unwrap_err();
    assert!(err.to_string().contains("the MANIFEST recorded"), "{err}");
    let unchecked = DbOptions {
        paranoid_checks: false,
        ..sim_options(&fs)
    };
    drop(Db::open(p("/db"), unchecked).unwrap());
}

/// Errors name the live MANIFEST, not a placeholder.
#[test]
fn a_lost_wal_is_reported_against_the_live_manifest() {
    let fs = SimFs::new(37);
    let db = Db::open(p("/db"), sim_options(&fs)).unwrap();
    db.put(b"k", b"v").unwrap();
    drop(db);
    let current = String::from_utf8(fs.file_contents(&p("/db/CURRENT")).unwrap()).unwrap();
    let wal = names_in(&fs, "/db")
        .into_iter()
        .find(|n| n.ends_with(".log"))
        .unwrap();
    fs.remove(&p("/db").join(wal)).unwrap();
    match Db::open(p("/db"), sim_options(&fs)).unwrap_err() {
        Error::Corruption { file, reason, .. } => {
            assert_eq!(file, p("/db").join(current.trim()), "{reason}");
            assert!(reason.contains("lost an edit"), "{reason}");
        }
        other => panic!("expected corruption, got {other}"),
    }
}

/// A clean close persists writes made without the WAL even when a flush of
/// an older memtable ran between them.
#[test]
fn close_keeps_unlogged_writes_after_a_background_flush() {
    let fs = SimFs::new(38);
    let no_wal = WriteOptions {
        disable_wal: true,
        ..WriteOptions::default()
    };
    for close in [true, false] {
        let db = Db::open(p("/db"), sim_options(&fs)).unwrap();
        db.put_opt(&no_wal, b"x", b"1").unwrap();
        db.put_opt(&no_wal, b"gone", b"soon").unwrap();
        for i in 0..100u32 {
            db.put_opt(&no_wal, format!("filler{i}").as_bytes(), [b'f'; 1000])
                .unwrap();
        }
        db.put_opt(&no_wal, b"x", b"2").unwrap();
        db.delete_opt(&no_wal, b"gone").unwrap();
        db.put_opt(&no_wal, b"new", b"key").unwrap();
        // Let the flush of the full memtable finish first.
        db.wait_for_compaction().unwrap();
        if close {
            db.close().unwrap();
        } else {
            drop(db);
        }
        let db = Db::open(p("/db"), sim_options(&fs)).unwrap();
        assert_eq!(db.get(b"x").unwrap().as_deref(), Some(&b"2"[..]));
        assert_eq!(db.get(b"gone").unwrap(), None);
        assert_eq!(db.get(b"new").unwrap().as_deref(), Some(&b"key"[..]));
        db.delete(b"new").unwrap();
        db.put(b"gone", b"soon").unwrap();
    }
}

/// Fewer levels at reopen than the data occupies is refused, so compaction
/// can never take a middle level for the bottom and drop tombstones that
/// still hide older values.
#[test]
fn lowering_num_levels_below_the_data_is_refused() {
    let fs = SimFs::new(39);
    let db = Db::open(p("/db"), sim_options(&fs)).unwrap();
    db.put(b"k", b"old").unwrap();
    db.compact_range(None, None).unwrap();
    db.delete(b"k").unwrap();
    drop(db);
    let levels = |n: usize| DbOptions {
        compaction: CompactionOptions {
            num_levels: n,
            ..CompactionOptions::default()
        },
        ..sim_options(&fs)
    };
    match Db::open(p("/db"), levels(3)).unwrap_err() {
        Error::InvalidArgument { field, reason } => {
            assert_eq!(field, "num_levels");
            assert!(
                reason.contains("L6") && reason.contains("at least 7"),
                "{reason}"
            );
        }
        other => panic!("expected InvalidArgument, got {other}"),
    }
    let db = Db::open(p("/db"), levels(7)).unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"k").unwrap(), None);
}

/// Read-only opens and consistency checks beside a writer that flushes and
/// deletes WALs and tables all the time never call the database corrupt.
#[test]
fn read_only_opens_beside_a_busy_writer_never_fail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let options = DbOptions {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        compaction: CompactionOptions {
            target_file_size_base: 64 << 10,
            level0_file_num_compaction_trigger: 2,
            ..CompactionOptions::default()
        },
        ..DbOptions::default()
    };
    let db = Arc::new(Db::open(&path, options.clone()).unwrap());
    db.put(b"anchor", b"here").unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, done) = (db.clone(), done.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !done.load(Ordering::Relaxed) {
                db.put(format!("key{:08}", i % 50_000).as_bytes(), [b'w'; 200])
                    .unwrap();
                i += 1;
            }
        })
    };
    let reader_options = DbOptions {
        create_if_missing: false,
        ..options
    };
    for round in 0..3000 {
        let ro = Db::open_read_only(&path, reader_options.clone())
            .unwrap_or_else(|e| panic!("read-only open {round} failed: {e}"));
        // A table the writer compacts away after the open makes a read fail
        // (as documented for read-only handles), never answer wrong.
        match ro.get(b"anchor") {
            Ok(value) => assert_eq!(value.as_deref(), Some(&b"here"[..])),
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("read {round} failed: {e}"),
        }
        assert!(ro.wal_damage().is_empty(), "{:?}", ro.wal_damage());
        drop(ro);
        if round % 5 == 0 {
            let report = strata::check_consistency(&path, &reader_options)
                .unwrap_or_else(|e| panic!("check {round} failed: {e}"));
            assert!(report.is_clean(), "{report:?}");
        }
    }
    done.store(true, Ordering::Relaxed);
    writer.join().unwrap();
}

/// How long the snapshot race runs: `STRATA_RACE_SECONDS` for a soak,
/// otherwise a fixed count of writes (short, for CI).
fn race_writes_or_deadline() -> (u64, Option<std::time::Instant>) {
    match std::env::var("STRATA_RACE_SECONDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
    {
        Some(secs) => (
            u64::MAX,
            Some(std::time::Instant::now() + Duration::from_secs(secs)),
        ),
        None => (20_000, None),
    }
}

/// One writer bumps `k` and `k2` together in one batch; a thread flushes and
/// compacts everything nonstop on tiny files; readers outnumbering the cores
/// take snapshots and read both keys, at the snapshot and at the latest
/// state. Every read must see a whole batch no older than what was
/// acknowledged before it began. Soak: `STRATA_RACE_SECONDS=600 cargo test
/// --release -p strata --test it snapshot_reads_race -- --nocapture`.
#[test]
fn snapshot_reads_race_flushes_and_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        table: strata::TableOptions {
            block_size: 256,
            ..strata::TableOptions::default()
        },
        compaction: CompactionOptions {
            target_file_size_base: 4 << 10,
            ..CompactionOptions::default()
        },
        ..DbOptions::default()
    };
    let db = Arc::new(Db::open(dir.path().join("db"), options).unwrap());
    let write = |db: &Db, n: u64| {
        let mut batch = WriteBatch::new();
        batch.put(b"k", n.to_string().as_bytes()).unwrap();
        batch.put(b"k2", n.to_string().as_bytes()).unwrap();
        db.write(&WriteOptions::default(), batch).unwrap();
    };
    write(&db, 0);
    let acked = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    // The writer goes on until the readers checked this many reads too, so a
    // loaded machine cannot end the race before it began.
    let checked = Arc::new(AtomicU64::new(0));
    let (writes, deadline) = race_writes_or_deadline();
    let mut threads = Vec::new();
    {
        let (db, done) = (db.clone(), done.clone());
        threads.push(std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                db.flush().unwrap();
                db.compact_range(None, None).unwrap();
            }
            0
        }));
    }
    for _ in 0..8 {
        let (db, acked, done) = (db.clone(), acked.clone(), done.clone());
        let checked = checked.clone();
        threads.push(std::thread::spawn(move || {
            let number = |v: Option<strata::Bytes>| -> u64 {
                let v = v.expect("k and k2 always exist");
                std::str::from_utf8(&v).unwrap().parse().unwrap()
            };
            let mut reads = 0u64;
            while !done.load(Ordering::Relaxed) {
                let floor = acked.load(Ordering::SeqCst);
                let snapshot = db.snapshot();
                let at = ReadOptions {
                    snapshot: Some(snapshot.clone()),
                    ..ReadOptions::default()
                };
                let k = number(db.get_opt(&at, b"k").unwrap());
                let k2 = number(db.get_opt(&at, b"k2").unwrap());
                assert_eq!(k, k2, "a snapshot saw half a batch");
                assert!(
                    k >= floor,
                    "snapshot read {k}, older than acknowledged {floor}"
                );
                let latest = number(db.get(b"k").unwrap());
                assert!(latest >= k, "latest read {latest} older than snapshot {k}");
                let both = db.multi_get(&at, &[&b"k"[..], &b"k2"[..]]);
                let again: Vec<u64> = both.into_iter().map(|r| number(r.unwrap())).collect();
                assert_eq!(again, vec![k, k], "the snapshot changed");
                reads += 1;
                checked.fetch_add(1, Ordering::Relaxed);
            }
            reads
        }));
    }
    let mut n = 1;
    let more = |n: u64| match deadline {
        Some(d) => std::time::Instant::now() < d,
        None => n <= writes || checked.load(Ordering::Relaxed) < MIN_RACE_READS,
    };
    while more(n) {
        write(&db, n);
        acked.store(n, Ordering::SeqCst);
        n += 1;
    }
    done.store(true, Ordering::Relaxed);
    let reads: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    if deadline.is_some() {
        println!(
            "snapshot race: {} writes, {reads} checked snapshot reads",
            n - 1
        );
    }
    assert!(reads >= MIN_RACE_READS.min(writes));
}

/// Snapshot reads the short (CI) race checks at the least.
const MIN_RACE_READS: u64 = 200_000;

/// The check still names a missing or cut table of a database at rest: only
/// tables a newer MANIFEST no longer lists are forgiven.
#[test]
fn check_consistency_names_missing_and_short_tables() {
    use strata::Fs as _;
    let fs = SimFs::new(36);
    let db = Db::open(p("/db"), sim_options(&fs)).unwrap();
    for round in 0..2u32 {
        for i in 0..500u32 {
            db.put(format!("k{round}-{i:04}"), [b'v'; 100]).unwrap();
        }
        db.flush().unwrap();
    }
    drop(db);
    let tables: Vec<String> = fs
        .list(&p("/db"))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".sst"))
        .collect();
    assert!(tables.len() >= 2, "{tables:?}");
    let report = strata::check_consistency(p("/db"), &sim_options(&fs)).unwrap();
    assert_eq!(report.tables_checked, tables.len());
    fs.remove(&p("/db").join(&tables[0])).unwrap();
    let cut = p("/db").join(&tables[1]);
    let bytes = fs.file_contents(&cut).unwrap();
    let mut file = fs.create(&cut).unwrap();
    file.append(&bytes[..bytes.len() / 2]).unwrap();
    file.sync().unwrap();
    drop(file);
    let err = strata::check_consistency(p("/db"), &sim_options(&fs)).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    let text = err.to_string();
    assert!(text.contains("2 table or blob file(s)"), "{text}");
    assert!(text.contains(&format!("{} (L", tables[0])), "{text}");
    assert!(text.contains("is missing"), "{text}");
    assert!(text.contains(&format!("{} (L", tables[1])), "{text}");
    assert!(text.contains("bytes, the MANIFEST recorded"), "{text}");
}
