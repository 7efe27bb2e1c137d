//! Many writers and readers at once: no lost writes, batches seen atomically.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use strata::fs::SimFs;
use strata::{Db, ReadOptions, WriteBatch, WriteOptions};

use crate::util::{flush_held_at_sync, open_sim, wait_until};

#[test]
fn four_writers_four_readers() {
    let fs = SimFs::new(7);
    let db = Arc::new(open_sim(&fs));
    let stop = Arc::new(AtomicBool::new(false));
    // Each writer owns keys w{t}-*; every batch writes the same value to a pair
    // of keys, so a reader seeing the two differ saw half a batch. Every third
    // batch also carries 20 keys w{t}-x{i}-{j}, a larger insert for readers to
    // catch half done.
    let writers: Vec<_> = (0..4u32)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..1500u32 {
                    let mut batch = WriteBatch::new();
                    let v = format!("{t}-{i}");
                    batch
                        .put(format!("w{t}-a").as_bytes(), v.as_bytes())
                        .unwrap();
                    batch
                        .put(format!("w{t}-b").as_bytes(), v.as_bytes())
                        .unwrap();
                    batch
                        .put(format!("w{t}-{i:05}").as_bytes(), v.as_bytes())
                        .unwrap();
                    if i % 3 == 0 {
                        for j in 0..20 {
                            batch
                                .put(format!("w{t}-x{i:05}-{j:02}").as_bytes(), v.as_bytes())
                                .unwrap();
                        }
                    }
                    let sync = i % 100 == 0;
                    db.write(
                        &WriteOptions {
                            sync,
                            ..WriteOptions::default()
                        },
                        batch,
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..4u32)
        .map(|r| {
            let db = db.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut checks = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let t = checks as u32 % 4;
                    let snap = db.snapshot();
                    let ro = ReadOptions {
                        snapshot: Some(snap.clone()),
                        ..ReadOptions::default()
                    };
                    let a = db.get_opt(&ro, format!("w{t}-a").as_bytes()).unwrap();
                    let b = db.get_opt(&ro, format!("w{t}-b").as_bytes()).unwrap();
                    assert_eq!(a, b, "reader {r} saw half a batch");
                    // An iterator on the snapshot is stable: writes that land
                    // while it runs do not appear, and the pair agrees.
                    if checks % 16 == 0 {
                        let lower = format!("w{t}-").into_bytes();
                        let upper = format!("w{t}.").into_bytes();
                        let seen: Vec<_> = db
                            .range_opt(&ro, lower.as_slice()..upper.as_slice())
                            .map(|e| e.unwrap())
                            .collect();
                        let again: Vec<_> = db
                            .range_opt(&ro, lower.as_slice()..upper.as_slice())
                            .map(|e| e.unwrap())
                            .collect();
                        assert_eq!(
                            seen, again,
                            "reader {r}: iteration moved under its snapshot"
                        );
                        let value_of = |k: &str| {
                            seen.iter()
                                .find(|(key, _)| key == k.as_bytes())
                                .map(|(_, v)| v.clone())
                        };
                        assert_eq!(value_of(&format!("w{t}-a")), value_of(&format!("w{t}-b")));
                        // A large batch is seen whole or not at all.
                        let extras = |i: usize| {
                            (0..20)
                                .filter(|j| value_of(&format!("w{t}-x{i:05}-{j:02}")).is_some())
                                .count()
                        };
                        for i in (0..1500).step_by(3) {
                            let numbered = value_of(&format!("w{t}-{i:05}")).is_some();
                            assert_eq!(
                                extras(i),
                                if numbered { 20 } else { 0 },
                                "reader {r}: torn batch w{t} {i}"
                            );
                        }
                        // Keys w{t}-00000.. form a prefix of the writer's history.
                        let numbered = seen
                            .iter()
                            .filter(|(k, _)| k.len() == format!("w{t}-00000").len())
                            .count();
                        assert!(
                            seen.iter()
                                .filter(|(k, _)| k.len() == format!("w{t}-00000").len())
                                .enumerate()
                                .all(|(i, (k, _))| *k == format!("w{t}-{i:05}").into_bytes()),
                            "hole in w{t}: {numbered} keys"
                        );
                    }
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let checks: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(checks > 0);
    for t in 0..4u32 {
        for i in 0..1500u32 {
            let got = db.get(format!("w{t}-{i:05}").as_bytes()).unwrap();
            assert_eq!(
                got.as_deref(),
                Some(format!("{t}-{i}").as_bytes()),
                "lost write"
            );
            if i % 3 == 0 {
                let extra = db.get(format!("w{t}-x{i:05}-19").as_bytes()).unwrap();
                assert_eq!(
                    extra.as_deref(),
                    Some(format!("{t}-{i}").as_bytes()),
                    "lost write"
                );
            }
        }
        assert_eq!(
            db.get(format!("w{t}-a").as_bytes()).unwrap().as_deref(),
            Some(format!("{t}-1499").as_bytes())
        );
    }
}

/// Synced writers racing, large and small batches mixed: however they are
/// scheduled into commit groups, every batch lands whole with its own sequence
/// numbers, and the counters agree with each other. Nothing here depends on
/// how many groups form: the 2 ms sync only makes grouping likely, so the
/// grouped paths usually run too; `a_held_wal_sync_groups_the_writers_queued_behind_it`
/// forces them.
#[test]
fn synced_groups_insert_large_batches_in_parallel() {
    let fs = SimFs::new(8);
    fs.set_sync_latency(std::time::Duration::from_millis(2));
    let db = Arc::new(open_sim(&fs));
    let sync = WriteOptions {
        sync: true,
        ..WriteOptions::default()
    };
    let writers: Vec<_> = (0..6u32)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..40u32 {
                    let mut batch = WriteBatch::new();
                    // Alternate large batches and small ones.
                    let records = if i % 2 == 0 { 32 } else { 2 };
                    for j in 0..records {
                        let key = format!("t{t}-{i:03}-{j:02}");
                        batch.put(key.as_bytes(), key.as_bytes()).unwrap();
                    }
                    db.write(&sync, batch).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let report = db.property("strata.dbstats").unwrap();
    let expected_keys = 6 * 20 * (32 + 2);
    let all: Vec<_> = db.range(..).map(|e| e.unwrap()).collect();
    assert_eq!(all.len(), expected_keys, "{report}");
    assert!(all.iter().all(|(k, v)| k == v));
    // Distinct sequence numbers: one per record, none reused or skipped.
    assert_eq!(
        number(&db, "strata.latest-sequence-number"),
        expected_keys as u64
    );
    let groups = counted(
        &report,
        &format!("Cumulative writes: 240 writes, {expected_keys} keys, "),
        " commit groups",
    );
    assert!((1..=240).contains(&groups), "{report}");
    // RocksDB counts WAL writes by batch, not by the group that carried them;
    // every group was synced once.
    assert!(
        report.contains(&format!("Cumulative WAL: 240 writes, {groups} syncs")),
        "{report}"
    );
    // Every follower inserts its own batch, whatever its size; the leader
    // inserts only its own: one follower insert per batch beyond the first
    // of each group.
    let parallel = counted(&report, "Parallel memtable inserts: ", " batches");
    assert_eq!(parallel, 240 - groups, "{report}");
    assert_eq!(number(&db, "strata.num-queued-writes"), 0);
}

/// Group commit, forced: the first writer is held inside its WAL sync, four
/// writers with large batches queue behind it, then the sync is let go. The
/// first group can only be the first writer (the queue was empty when it
/// formed); the next leader must take all four (they are queued, compatible,
/// and small in bytes), and its three followers insert their own batches.
#[test]
fn a_held_wal_sync_groups_the_writers_queued_behind_it() {
    let fs = SimFs::new(9);
    let db = Arc::new(open_sim(&fs));
    let write = |name: &'static str, records: u32| {
        let db = db.clone();
        std::thread::spawn(move || {
            let mut batch = WriteBatch::new();
            for j in 0..records {
                let key = format!("{name}-{j:02}");
                batch.put(key.as_bytes(), key.as_bytes()).unwrap();
            }
            let sync = WriteOptions {
                sync: true,
                ..WriteOptions::default()
            };
            db.write(&sync, batch).unwrap();
        })
    };
    fs.hold_syncs();
    let first = write("first", 1);
    wait_until("the first writer to reach its WAL sync", || {
        fs.held_syncs() == 1
    });
    assert_eq!(number(&db, "strata.num-queued-writes"), 1);
    let queued: Vec<_> = ["b", "c", "d", "e"]
        .into_iter()
        .map(|name| write(name, 32))
        .collect();
    wait_until("four writers to queue behind it", || {
        number(&db, "strata.num-queued-writes") == 5
    });
    // The held sync is still the only one: nothing overtook the first writer.
    assert_eq!(fs.held_syncs(), 1);
    assert_eq!(number(&db, "strata.latest-sequence-number"), 0);
    fs.release_syncs();
    first.join().unwrap();
    for w in queued {
        w.join().unwrap();
    }
    let report = db.property("strata.dbstats").unwrap();
    assert!(
        report.contains("Cumulative writes: 5 writes, 129 keys, 2 commit groups"),
        "{report}"
    );
    assert!(
        report.contains("Cumulative WAL: 5 writes, 2 syncs"),
        "{report}"
    );
    assert!(
        report.contains("Parallel memtable inserts: 3 batches"),
        "{report}"
    );
    assert_eq!(number(&db, "strata.latest-sequence-number"), 129);
    for name in ["first", "b", "c", "d", "e"] {
        let key = format!("{name}-00");
        assert_eq!(
            db.get(key.as_bytes()).unwrap().as_deref(),
            Some(key.as_bytes())
        );
    }
    assert_eq!(db.get(b"e-31").unwrap().as_deref(), Some(&b"e-31"[..]));
}

/// A numeric property.
fn number(db: &Db, name: &str) -> u64 {
    db.property(name).unwrap().parse().unwrap()
}

/// The number between `before` and `after` in `report`.
fn counted(report: &str, before: &str, after: &str) -> u64 {
    report
        .split_once(before)
        .and_then(|(_, rest)| rest.split_once(after))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no `{before}N{after}` in {report}"))
}

/// A flush held inside its MANIFEST fsync holds up no writer: the edit is
/// written with the DB mutex released, so writes, and properties (which
/// take the mutex), go on; the table is installed once the sync is let go.
#[test]
fn writes_go_on_while_a_manifest_sync_is_held() {
    let fs = SimFs::new(12);
    let db = Arc::new(open_sim(&fs));
    for i in 0..100u32 {
        db.put(format!("before{i:03}").as_bytes(), b"v").unwrap();
    }
    let flusher = flush_held_at_sync(&db, &fs, "MANIFEST");
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            for i in 0..200u32 {
                db.put(format!("during{i:03}").as_bytes(), b"v").unwrap();
            }
        })
    };
    wait_until("200 writes while the MANIFEST sync is held", || {
        writer.is_finished()
    });
    writer.join().unwrap();
    assert_eq!(fs.held_syncs(), 1, "the flush is still inside its sync");
    assert_eq!(number(&db, "rocksdb.num-files-at-level0"), 0);
    fs.release_syncs();
    flusher.join().unwrap().unwrap();
    assert_eq!(number(&db, "rocksdb.num-files-at-level0"), 1);
    assert_eq!(db.range(..).count(), 300);
}

/// Panics while `PANICKING` is set and either key is `boom`: an application
/// comparator with a bug that only one key triggers.
#[derive(Debug)]
struct PanickyComparator;

static PANICKING: AtomicBool = AtomicBool::new(false);

impl strata::Comparator for PanickyComparator {
    fn name(&self) -> &str {
        "test.Panicky"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        if PANICKING.load(Ordering::SeqCst) && (a == b"boom" || b == b"boom") {
            panic!("comparator bug on \"boom\"");
        }
        a.cmp(b)
    }
}

/// A writer whose memtable insert panics in the application's comparator
/// gets the panic back; the pipeline does not wedge: the other writers get a
/// typed error at once, reads go on, `resume` refuses (the memtable holds
/// part of a batch the WAL holds whole), and reopening replays the batch.
#[test]
fn a_panicking_comparator_stops_writes_without_wedging_the_pipeline() {
    let fs = SimFs::new(11);
    let options = || {
        let mut options = crate::util::sim_options(&fs);
        options.comparator = Arc::new(PanickyComparator);
        options
    };
    let db = Arc::new(Db::open(std::path::Path::new("/db"), options()).unwrap());
    for i in 0..100u32 {
        db.put(format!("k{i:03}").as_bytes(), b"v").unwrap();
    }
    PANICKING.store(true, Ordering::SeqCst);
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || db.put(b"boom", b"v"))
    };
    assert!(writer.join().is_err(), "the panic reaches the writer");
    PANICKING.store(false, Ordering::SeqCst);
    // Other writers, from several threads at once, fail rather than hang.
    let others: Vec<_> = (0..4)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || db.put(format!("other{t}").as_bytes(), b"v"))
        })
        .collect();
    for other in others {
        let result = other.join().unwrap();
        assert!(
            matches!(result, Err(strata::Error::WriterPanicked { .. })),
            "{result:?}"
        );
    }
    assert!(matches!(
        db.resume(),
        Err(strata::Error::WriterPanicked { .. })
    ));
    assert_eq!(db.get(b"k042").unwrap().as_deref(), Some(&b"v"[..]));
    drop(db);
    let db = Db::open(std::path::Path::new("/db"), options()).unwrap();
    assert_eq!(db.get(b"boom").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get(b"k099").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get(b"other0").unwrap(), None);
    db.put(b"after", b"v").unwrap();
}

/// An OPTIONS file is written after the DB mutex is released: with its sync
/// held, `set_options` waits there while writes, reads and a flush go on.
/// Then the newest OPTIONS file holds the change.
#[test]
fn an_options_file_being_written_blocks_no_writer() {
    let fs = SimFs::new(61);
    let db = Arc::new(open_sim(&fs));
    // The OPTIONS file is written as a temporary file, synced, then renamed.
    fs.hold_syncs_of(".dbtmp");
    let setter = {
        let db = db.clone();
        std::thread::spawn(move || {
            db.set_options(
                &db.default_cf(),
                &[("level0_file_num_compaction_trigger", "7")],
            )
        })
    };
    wait_until("set_options to reach the OPTIONS sync", || {
        fs.held_syncs() == 1
    });
    // On a thread, so that a write blocked behind the held sync fails the
    // test at the deadline instead of hanging it.
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            db.put(b"k", b"v")?;
            db.flush()?;
            db.get(b"k")
        })
    };
    wait_until(
        "the write, flush and read beside the held OPTIONS sync",
        || writer.is_finished(),
    );
    assert_eq!(writer.join().unwrap().unwrap().as_deref(), Some(&b"v"[..]));
    fs.release_syncs();
    setter.join().unwrap().unwrap();
    let (loaded, _) = strata::options::load_latest_options_with_fs(
        Arc::new(fs.clone()),
        std::path::Path::new("/db"),
        &strata::options::LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(loaded.compaction.level0_file_num_compaction_trigger, 7);
}
