//! Compaction through the public API: manual compaction, tombstones and
//! snapshots across it, trivial moves, and write stalls that always resume.

use std::path::Path;

use strata::fs::SimFs;
use strata::{CompactionOptions, Db, DbOptions, ReadOptions};

use crate::util::sim_options;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn open_with(fs: &SimFs, compaction: CompactionOptions) -> Db {
    let options = DbOptions {
        compaction,
        ..sim_options(fs)
    };
    Db::open(Path::new("/db"), options).unwrap()
}

fn files_per_level(db: &Db) -> Vec<u64> {
    (0..7)
        .map(|l| {
            db.property(&format!("strata.num-files-at-level{l}"))
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

fn number(db: &Db, name: &str) -> u64 {
    db.property(name).unwrap().parse().unwrap()
}

/// Every table file on disk is live: compactions delete their inputs.
fn assert_no_obsolete_tables(fs: &SimFs, db: &Db) {
    use strata::Fs as _;
    let on_disk = fs
        .list(Path::new("/db"))
        .unwrap()
        .iter()
        .filter(|n| n.ends_with(".sst"))
        .count() as u64;
    let live: u64 = files_per_level(db).iter().sum();
    assert_eq!(on_disk, live, "obsolete tables left on disk");
}

fn log_text(fs: &SimFs) -> String {
    String::from_utf8_lossy(&fs.file_contents(Path::new("/db/LOG")).unwrap()).into_owned()
}

#[test]
fn compact_range_moves_everything_down_and_drops_deleted_data() {
    let fs = SimFs::new(31);
    let db = open_with(
        &fs,
        CompactionOptions {
            disable_auto_compactions: true,
            ..CompactionOptions::default()
        },
    );
    for i in 0..3000u32 {
        db.put(key(i % 1000), format!("v{i}").as_bytes()).unwrap();
    }
    db.compact_range(None, None).unwrap();
    assert_no_obsolete_tables(&fs, &db);
    let files = files_per_level(&db);
    assert_eq!(files[..6].iter().sum::<u64>(), 0, "{files:?}");
    assert!(files[6] > 0);
    for i in 0..1000u32 {
        let want = format!("v{}", 2000 + i);
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(want.as_bytes()));
    }
    // A snapshot taken now keeps seeing the values through the next compaction.
    let snap = db.snapshot();
    for i in 0..1000u32 {
        db.delete(key(i)).unwrap();
    }
    db.compact_range(None, None).unwrap();
    let at_snap = ReadOptions {
        snapshot: Some(snap.clone()),
        ..ReadOptions::default()
    };
    assert_eq!(db.range_opt(&at_snap, ..).count(), 1000);
    assert_eq!(db.range(..).count(), 0);
    assert!(
        number(&db, "strata.total-sst-files-size") > 0,
        "the snapshot's data went"
    );
    // Released (the read options held it too), the deleted data and the
    // tombstones go at the bottom level.
    drop(at_snap);
    drop(snap);
    db.compact_range(None, None).unwrap();
    assert_eq!(number(&db, "strata.total-sst-files-size"), 0);
    assert_eq!(db.get(key(5)).unwrap(), None);
}

#[test]
fn compact_range_covers_only_its_range() {
    let fs = SimFs::new(32);
    let db = open_with(
        &fs,
        CompactionOptions {
            disable_auto_compactions: true,
            ..CompactionOptions::default()
        },
    );
    for i in 0..2000u32 {
        db.put(key(i), [b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    let before = files_per_level(&db);
    assert!(before[0] > 2, "{before:?}");
    db.compact_range(Some(&key(0)), Some(&key(10))).unwrap();
    let after = files_per_level(&db);
    assert!(
        after[0] > 0 && after[0] < before[0],
        "{before:?} -> {after:?}"
    );
    assert!(after[6] > 0);
    assert_eq!(db.range(..).count(), 2000);
}

#[test]
fn sequential_data_moves_down_without_rewriting() {
    let fs = SimFs::new(33);
    let db = open_with(&fs, CompactionOptions::default());
    for i in 0..6000u32 {
        db.put(key(i), [b'x'; 100]).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let log = log_text(&fs);
    assert!(
        log.contains("\"trivial_move\": true"),
        "no trivial move in:\n{log}"
    );
    assert!(
        !log.contains("\"trivial_move\": false"),
        "sequential L0 files were rewritten:\n{log}"
    );
    assert!(files_per_level(&db)[6] > 0);
    assert_eq!(db.range(..).count(), 6000);
}

#[test]
fn writes_stall_at_the_l0_triggers_and_always_resume() {
    let fs = SimFs::new(34);
    let db = open_with(
        &fs,
        CompactionOptions {
            level0_file_num_compaction_trigger: 2,
            level0_slowdown_writes_trigger: 2,
            level0_stop_writes_trigger: 3,
            delayed_write_rate: 4 << 20,
            ..CompactionOptions::default()
        },
    );
    // Slow syncs make every flush and compaction take a while, so writes
    // always meet the L0 triggers (with instant background work a run could
    // finish without one stall, and the test would depend on scheduling).
    fs.set_sync_latency(std::time::Duration::from_millis(3));
    for i in 0..20_000u32 {
        db.put(key(i % 5000), format!("value-{i:08}").as_bytes())
            .unwrap();
    }
    db.wait_for_compaction().unwrap();
    for i in 15_000..20_000u32 {
        let want = format!("value-{i:08}");
        assert_eq!(
            db.get(key(i % 5000)).unwrap().as_deref(),
            Some(want.as_bytes())
        );
    }
    assert!(files_per_level(&db)[0] < 3);
    assert_no_obsolete_tables(&fs, &db);
    let stats = db.property("strata.dbstats").unwrap();
    assert!(
        !stats.contains("Cumulative stall: 00:00:0.000"),
        "no stall:\n{stats}"
    );
    assert_eq!(number(&db, "strata.is-write-stopped"), 0);
    assert_eq!(number(&db, "strata.num-running-compactions"), 0);
    assert_eq!(number(&db, "strata.compaction-pending"), 0);
    // RocksDB's report layout: the compaction half (header, level rows, Sum
    // and Int, then its lines), then the DB half.
    let report = db.property("rocksdb.stats").unwrap();
    for needle in [
        "\n** Compaction Stats [default] **\nLevel    Files   Size     Score Read(GB)",
        "\n  L0 ",
        "\n Sum ",
        "\n Int ",
        "\n\nBlob file count: 0, ",
        "\nCumulative compaction: ",
        "\nStalls(count): ",
        "\n** DB Stats **\n",
        "\nCumulative writes: 20K writes, 20K keys, ",
        "\nCumulative WAL: 20K writes, ",
        "\nCumulative stall: ",
        "\nInterval writes: ",
    ] {
        assert!(report.contains(needle), "{needle:?} missing from\n{report}");
    }
    let sum = report.lines().find(|l| l.starts_with(" Sum ")).unwrap();
    let columns = report.lines().nth(2).unwrap().split_whitespace().count();
    assert_eq!(sum.split_whitespace().count(), columns + 1, "{sum}"); // Size has a unit
                                                                      // L0 reached the slowdown trigger whenever a flush made it two files.
    let stalls = report
        .lines()
        .find(|l| l.starts_with("Stalls(count): "))
        .unwrap();
    let slowdowns: u64 = stalls.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(slowdowns > 0, "{stalls}");
    // The halves on their own, and the levels, in RocksDB's layouts.
    let cf = db.property("rocksdb.cfstats").unwrap();
    assert!(cf.starts_with("\n** Compaction Stats [default] **\n") && !cf.contains("DB Stats"));
    let dbstats = db.property("rocksdb.dbstats").unwrap();
    assert!(
        dbstats.starts_with("\n** DB Stats **\nUptime(secs): "),
        "{dbstats}"
    );
    let levels = db.property("rocksdb.levelstats").unwrap();
    let mut lines = levels.lines();
    assert_eq!(lines.next(), Some("Level Files Size(MB)"));
    assert_eq!(lines.next(), Some("--------------------"));
    let l0 = format!("  0 {:>8} ", files_per_level(&db)[0]);
    assert!(lines.next().unwrap().starts_with(&l0), "{levels}");
    assert_eq!(lines.count(), 6, "{levels}");
    let sstables = db.property("strata.sstables").unwrap();
    assert!(sstables.contains("--- level 6 ---"), "{sstables}");
    // Keys in hex with their sequence number and type, as RocksDB prints them.
    let first = sstables.lines().find(|l| !l.starts_with("---")).unwrap();
    assert!(
        first.contains("['6B6579") && first.contains(" seq:") && first.contains(", type:1 .. '"),
        "{sstables}"
    );
    // 5000 live keys; the estimate counts overwritten versions not yet dropped.
    assert!(number(&db, "rocksdb.estimate-num-keys") >= 5000);
}

/// A compaction whose MANIFEST sync fails leaves its record in the file (the
/// append reached the OS). The outputs it names must survive, because the next
/// open may read that record: nothing is deleted after a background error.
#[test]
fn failed_manifest_sync_deletes_no_file_the_record_names() {
    use strata::fs::sim::{CrashMode, Fault, OpKind};
    let fs = SimFs::new(35);
    let db = open_with(
        &fs,
        CompactionOptions {
            disable_auto_compactions: true,
            ..CompactionOptions::default()
        },
    );
    for i in 0..2000u32 {
        db.put(key(i % 700), [b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    assert!(files_per_level(&db)[0] >= 2);
    // The compaction syncs its one output table, then the MANIFEST.
    fs.inject(Fault::ErrorOnNth {
        op: OpKind::Sync,
        n: 2,
    });
    let err = db.compact_range(None, None).unwrap_err();
    assert!(err.to_string().contains("fsync"), "{err}");
    fs.halt();
    drop(db);
    fs.crash(CrashMode::PROCESS_KILL);
    let db = open_with(&fs, CompactionOptions::default());
    assert_eq!(db.range(..).count(), 700);
    for i in 1300..2000u32 {
        assert_eq!(
            db.get(key(i % 700)).unwrap().as_deref(),
            Some(&[b'v'; 100][..])
        );
    }
}

/// Flushes and compactions through a shared rate limiter still finish and
/// keep every write.
#[test]
fn rate_limited_flushes_and_compactions_keep_every_write() {
    let fs = SimFs::new(36);
    let limiter = std::sync::Arc::new(strata::RateLimiter::new(4 << 20).unwrap());
    let options = DbOptions {
        rate_limiter: Some(limiter),
        compaction: CompactionOptions {
            level0_file_num_compaction_trigger: 2,
            ..CompactionOptions::default()
        },
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    for i in 0..4000u32 {
        db.put(key(i % 1500), format!("value-{i}").as_bytes())
            .unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in 2500..4000u32 {
        let want = format!("value-{i}");
        assert_eq!(
            db.get(key(i % 1500)).unwrap().as_deref(),
            Some(want.as_bytes())
        );
    }
}

/// A full disk during compaction fails the job with NoSpace and loses nothing:
/// the job's output is removed, its inputs stay, writes go on, and after
/// reopening with room every acknowledged write is there.
#[test]
fn a_full_disk_during_compaction_loses_nothing() {
    use strata::fs::sim::{CrashMode, Fault};
    let fs = SimFs::new(37);
    let db = open_with(
        &fs,
        CompactionOptions {
            disable_auto_compactions: true,
            ..CompactionOptions::default()
        },
    );
    for i in 0..3000u32 {
        db.put(key(i % 1000), format!("value-{i}").as_bytes())
            .unwrap();
    }
    db.flush().unwrap();
    // Room for a little more than what is there: not for the compaction's output.
    fs.inject(Fault::SpaceQuota {
        bytes: fs.total_bytes() + 8 * 1024,
    });
    let err = db.compact_range(None, None).unwrap_err();
    assert!(matches!(err, strata::Error::NoSpace { .. }), "{err}");
    // The failed job removed its partial output and left its inputs: writes
    // (with room in the WAL) and reads go on, and nothing is lost.
    db.put(b"more", b"x").unwrap();
    assert_eq!(
        db.get(key(999)).unwrap().as_deref(),
        Some(&b"value-2999"[..])
    );
    fs.halt();
    drop(db);
    fs.crash(CrashMode::POWER_LOSS);
    fs.clear_faults();
    let db = open_with(&fs, CompactionOptions::default());
    for i in 2000..3000u32 {
        let want = format!("value-{i}");
        assert_eq!(
            db.get(key(i % 1000)).unwrap().as_deref(),
            Some(want.as_bytes())
        );
    }
    db.compact_range(None, None).unwrap();
    assert_eq!(db.range(..).count(), 1000);
}

/// A compaction that fails on an I/O error is retried later; writes never
/// stop and nothing is lost. During a pure write workload only compactions
/// read files, so the first read after the fault is armed is a compaction's.
#[test]
fn a_failed_compaction_is_retried_and_writes_go_on() {
    use strata::fs::sim::{Fault, OpKind};
    let fs = SimFs::new(38);
    fs.inject(Fault::ErrorOnNth {
        op: OpKind::Read,
        n: 1,
    });
    let db = open_with(
        &fs,
        CompactionOptions {
            level0_file_num_compaction_trigger: 2,
            ..CompactionOptions::default()
        },
    );
    for i in 0..3000u32 {
        db.put(key(i % 1000), format!("value-{i}").as_bytes())
            .unwrap();
    }
    db.wait_for_compaction().unwrap();
    let log = log_text(&fs);
    assert!(log.contains("failed, retrying later"), "{log}");
    assert!(log.contains("compaction_finished"), "never retried:\n{log}");
    assert_eq!(number(&db, "strata.background-errors"), 0);
    for i in 2000..3000u32 {
        let want = format!("value-{i}");
        assert_eq!(
            db.get(key(i % 1000)).unwrap().as_deref(),
            Some(want.as_bytes())
        );
    }
}

/// FIFO keeps the newest data within the size limit and drops the oldest
/// tables whole; with a TTL, tables past it go too.
#[test]
fn fifo_drops_the_oldest_tables_to_stay_within_its_limit() {
    let fs = SimFs::new(39);
    // Snappy shrinks these values to about 7 KB per flushed table.
    let limit = 30 << 10;
    let db = open_with(
        &fs,
        CompactionOptions {
            compaction_style: strata::CompactionStyle::Fifo,
            compaction_options_fifo: strata::FifoOptions {
                max_table_files_size: limit,
            },
            ..CompactionOptions::default()
        },
    );
    for i in 0..6000u32 {
        db.put(key(i), [b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    assert!(number(&db, "strata.total-sst-files-size") <= limit);
    assert_eq!(
        files_per_level(&db)[1..].iter().sum::<u64>(),
        0,
        "FIFO keeps tables in L0"
    );
    assert_no_obsolete_tables(&fs, &db);
    // The newest writes are there, the oldest gone.
    assert!(db.get(key(5999)).unwrap().is_some());
    assert!(
        db.get(key(0)).unwrap().is_none(),
        "{}\n{}",
        db.property("strata.sstables").unwrap(),
        log_text(&fs)
    );
    let kept = db.range(..).count();
    assert!(kept > 500 && kept < 6000, "{kept}");
    drop(db);

    // TTL: after a second, every table is past a one-second TTL; the next
    // flush triggers a pick that drops them all but the new one.
    let db = open_with(
        &fs,
        CompactionOptions {
            compaction_style: strata::CompactionStyle::Fifo,
            ttl: 1,
            ..CompactionOptions::default()
        },
    );
    std::thread::sleep(std::time::Duration::from_millis(1100));
    db.put(b"fresh", b"1").unwrap();
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    assert_eq!(db.get(b"fresh").unwrap().as_deref(), Some(&b"1"[..]));
    assert!(
        db.get(key(5999)).unwrap().is_none(),
        "expired data is still there"
    );
}

/// While every memtable is full and flushes are slow, writers stop: the
/// property says so while they wait, the stop is counted in the report, and
/// writes resume.
#[test]
fn writers_waiting_for_a_full_memtable_are_reported_stopped() {
    let fs = SimFs::new(37);
    let options = DbOptions {
        max_write_buffer_number: 2,
        ..sim_options(&fs)
    };
    let db = std::sync::Arc::new(Db::open(Path::new("/db"), options).unwrap());
    // Each flush syncs its table, the directory and the MANIFEST: ~90 ms, while
    // filling a 64 KiB memtable takes a few.
    fs.set_sync_latency(std::time::Duration::from_millis(30));
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            for i in 0..2000u32 {
                db.put(key(i), [b'v'; 100]).unwrap();
            }
        })
    };
    let mut seen_stopped = false;
    while !seen_stopped && !writer.is_finished() {
        seen_stopped = number(&db, "strata.is-write-stopped") == 1;
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    writer.join().unwrap();
    assert!(seen_stopped, "no writer was ever seen stopped");
    assert_eq!(number(&db, "strata.is-write-stopped"), 0);
    let report = db.property("strata.stats").unwrap();
    let stalls = report
        .lines()
        .find(|l| l.starts_with("Stalls(count): "))
        .unwrap();
    let words: Vec<&str> = stalls.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == "memtable_compaction,")
        .unwrap();
    assert!(words[at - 1].parse::<u64>().unwrap() > 0, "{stalls}");
    assert!(
        !report.contains("Cumulative stall: 00:00:0.000"),
        "{report}"
    );
    assert_eq!(
        db.get(key(1999)).unwrap().as_deref(),
        Some(&[b'v'; 100][..])
    );
}

#[test]
fn tables_a_reader_kept_go_once_it_lets_go() {
    use strata::Fs as _;
    let fs = SimFs::new(41);
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    for i in 0..3000u32 {
        db.put(format!("k{i:05}").as_bytes(), [b'v'; 100]).unwrap();
    }
    db.flush().unwrap();
    let tables = || {
        fs.list(Path::new("/db"))
            .unwrap()
            .into_iter()
            .filter(|n| n.ends_with(".sst"))
            .count()
    };
    // An iterator pins the current tables while compaction replaces them.
    let mut it = db.iter();
    it.seek_to_first();
    db.compact_range(None, None).unwrap();
    let live = db.live_files().len();
    assert!(tables() > live, "the reader's tables were deleted under it");
    assert!(it.valid());
    drop(it);
    // No further job runs; the idle compaction thread sweeps them.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while tables() > live && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(tables(), live);
}

/// Each merging compaction records how many key ranges it was split into
/// (RocksDB's `num.subcompactions.scheduled` histogram).
#[test]
fn statistics_count_the_subcompactions_of_each_compaction() {
    use std::sync::Arc;
    use strata::{Histogram, Statistics};
    let fs = SimFs::new(71);
    let stats = Arc::new(Statistics::new());
    let options = DbOptions {
        statistics: Some(stats.clone()),
        compaction: CompactionOptions {
            max_subcompactions: 4,
            target_file_size_base: 4 << 10,
            disable_auto_compactions: true,
            ..CompactionOptions::default()
        },
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    for round in 0..4u32 {
        for i in 0..2000 {
            db.put(key(i), format!("value-{round}-{i:040}")).unwrap();
        }
        db.flush().unwrap();
    }
    assert_eq!(
        stats.histogram(Histogram::NumSubcompactionsScheduled).count,
        0
    );
    db.compact_range(None, None).unwrap();
    let split = stats.histogram(Histogram::NumSubcompactionsScheduled);
    assert!(split.count >= 1, "{split:?}");
    assert!(split.max >= 2 && split.max <= 4, "{split:?}");
    assert!(stats.report().contains("num.subcompactions.scheduled"));
}
