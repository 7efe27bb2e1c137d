//! Basic behaviour of the database handle.

use std::path::Path;

use strata::fs::SimFs;
use strata::{Db, DbOptions, Error, ReadOptions, WriteBatch, WriteOptions};

use crate::util::{open_sim, sim_options};

#[test]
fn put_get_delete_and_reopen() {
    let fs = SimFs::new(1);
    {
        let db = open_sim(&fs);
        db.put(b"a", b"1").unwrap();
        db.put(b"", b"empty key").unwrap();
        db.put(b"b", b"").unwrap();
        db.delete(b"a").unwrap();
        db.put(b"c", b"3").unwrap();
        assert_eq!(db.get(b"a").unwrap(), None);
        assert_eq!(db.get(b"").unwrap().as_deref(), Some(&b"empty key"[..]));
        assert_eq!(db.get(b"b").unwrap().as_deref(), Some(&b""[..]));
        assert_eq!(db.get(b"zz").unwrap(), None);
    }
    // Reopen: recovered from the WAL.
    let db = open_sim(&fs);
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"3"[..]));
    db.flush().unwrap();
    assert_eq!(
        db.property("strata.num-files-at-level0").as_deref(),
        Some("1")
    );
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"3"[..]));
    drop(db);
    // Reopen: now from the table.
    let db = open_sim(&fs);
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"3"[..]));
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(
        db.property("rocksdb.num-files-at-level0").as_deref(),
        Some("1")
    );
}

#[test]
fn batches_snapshots_and_multi_get() {
    let fs = SimFs::new(2);
    let db = open_sim(&fs);
    db.put(b"k", b"old").unwrap();
    let snap = db.snapshot();
    let mut batch = WriteBatch::new();
    batch.put(b"k", b"new").unwrap();
    batch.put(b"j", b"x").unwrap();
    batch.delete(b"missing").unwrap();
    db.write(&WriteOptions::default(), batch).unwrap();
    let at_snap = ReadOptions {
        snapshot: Some(snap.clone()),
        ..ReadOptions::default()
    };
    assert_eq!(
        db.get_opt(&at_snap, b"k").unwrap().as_deref(),
        Some(&b"old"[..])
    );
    assert_eq!(db.get_opt(&at_snap, b"j").unwrap(), None);
    db.flush().unwrap();
    // Still true once both versions are in a table.
    assert_eq!(
        db.get_opt(&at_snap, b"k").unwrap().as_deref(),
        Some(&b"old"[..])
    );
    let got: Vec<_> = db
        .multi_get(&ReadOptions::default(), &[&b"k"[..], b"j", b"nope"])
        .into_iter()
        .map(|r| r.unwrap().map(|v| v.to_vec()))
        .collect();
    assert_eq!(got, vec![Some(b"new".to_vec()), Some(b"x".to_vec()), None]);
    drop(snap);
    // The read options hold the snapshot too.
    assert_eq!(db.property("strata.num-snapshots").as_deref(), Some("1"));
    drop(at_snap);
    assert_eq!(db.property("strata.num-snapshots").as_deref(), Some("0"));
}

#[test]
fn open_errors_are_clear() {
    let fs = SimFs::new(3);
    let mut options = sim_options(&fs);
    options.create_if_missing = false;
    let err = Db::open(Path::new("/nope"), options.clone()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidArgument {
                field: "create_if_missing",
                ..
            }
        ),
        "{err}"
    );

    let db = open_sim(&fs);
    let err = Db::open(Path::new("/db"), sim_options(&fs)).unwrap_err();
    assert!(matches!(err, Error::LockHeld { .. }), "{err}");
    assert!(err.to_string().contains("open elsewhere"), "{err}");
    drop(db);

    let mut options = sim_options(&fs);
    options.error_if_exists = true;
    let err = Db::open(Path::new("/db"), options).unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidArgument {
            field: "error_if_exists",
            ..
        }
    ));

    let mut options = sim_options(&fs);
    options.write_buffer_size = 1;
    let err = Db::open(Path::new("/db"), options).unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidArgument {
            field: "write_buffer_size",
            ..
        }
    ));
}

#[test]
fn oversized_key_is_invalid_argument() {
    let fs = SimFs::new(4);
    let db = open_sim(&fs);
    let big = vec![0u8; (8 << 20) + 1];
    let err = db.put(&big, b"v").unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument { field: "key", .. }),
        "{err}"
    );
}

#[test]
fn real_files_and_info_log() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        ..DbOptions::default()
    };
    {
        let db = Db::open(dir.path(), options.clone()).unwrap();
        for i in 0..5000u32 {
            db.put(format!("key{i:06}").as_bytes(), [b'v'; 100])
                .unwrap();
        }
        db.flush().unwrap();
        db.close().unwrap();
    }
    let db = Db::open(dir.path(), options).unwrap();
    assert_eq!(
        db.get(b"key004999").unwrap().as_deref(),
        Some(&[b'v'; 100][..])
    );
    let log = std::fs::read_to_string(dir.path().join("LOG")).unwrap();
    assert!(log.contains("recovered"), "{log}");
    let old_log = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .find(|e| e.file_name().to_string_lossy().starts_with("LOG.old."))
        .expect("previous LOG kept");
    let old = std::fs::read_to_string(old_log.path()).unwrap();
    assert!(old.contains("flush: table"), "{old}");
}

/// Tables written with O_DIRECT by flushes and compactions read back exactly,
/// through a reopen, with direct reads too. Skipped where the file system has
/// no O_DIRECT (tmpfs).
#[test]
fn direct_io_for_flush_and_compaction_writes_readable_tables() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        use_direct_io_for_flush_and_compaction: true,
        use_direct_reads: true,
        ..DbOptions::default()
    };
    let db = match Db::open(dir.path(), options.clone()) {
        Ok(db) => db,
        Err(e) => panic!("{e}"),
    };
    let value = |i: u32| format!("value{i:06}").repeat(1 + i as usize % 13);
    let mut wrote = Ok(());
    for i in 0..6000u32 {
        wrote = wrote.and_then(|()| db.put(format!("key{i:06}").as_bytes(), value(i).as_bytes()));
    }
    match wrote.and_then(|()| db.compact_range(None, None)) {
        Ok(()) => {}
        Err(Error::InvalidArgument { reason, .. }) => {
            eprintln!("skipping: {reason}");
            return;
        }
        Err(e) => panic!("{e}"),
    }
    let written = |name: &str| -> u64 { db.property(name).unwrap().parse().unwrap() };
    assert!(written("strata.flush-bytes-written") > 0);
    assert!(written("strata.compaction-bytes-written") > 0);
    db.close().unwrap();
    let db = Db::open(dir.path(), options).unwrap();
    for i in (0..6000u32).step_by(7) {
        let got = db.get(format!("key{i:06}").as_bytes()).unwrap();
        assert_eq!(got.as_deref(), Some(value(i).as_bytes()), "key {i}");
    }
    let count = db.range(..).count();
    assert_eq!(count, 6000);
}

#[test]
fn disable_wal_writes_are_flushed_on_close() {
    let fs = SimFs::new(5);
    {
        let db = open_sim(&fs);
        let no_wal = WriteOptions {
            disable_wal: true,
            ..WriteOptions::default()
        };
        db.put_opt(&no_wal, b"k", b"v").unwrap();
        db.close().unwrap();
    }
    let db = open_sim(&fs);
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn write_and_flush_counters_are_exact() {
    let fs = SimFs::new(12);
    let db = open_sim(&fs);
    let number = |name: &str| -> u64 { db.property(name).unwrap().parse().unwrap() };
    let mut ingested = 0u64;
    for i in 0..100u32 {
        let mut batch = WriteBatch::new();
        batch.put(format!("k{i}").as_bytes(), [7u8; 50]).unwrap();
        batch.delete(format!("d{i}").as_bytes()).unwrap();
        ingested += batch.data().len() as u64;
        db.write(&WriteOptions::default(), batch).unwrap();
    }
    assert_eq!(number("strata.bytes-written"), ingested);
    // Each batch is one WAL record: its bytes plus a 7-byte header (no record
    // crosses a 32 KiB block here, so no padding or second fragment).
    assert_eq!(number("strata.wal-bytes-written"), ingested + 100 * 7);
    assert_eq!(number("strata.flush-bytes-written"), 0);
    db.flush().unwrap();
    let tables = number("strata.total-sst-files-size");
    assert!(tables > 0);
    assert_eq!(number("strata.flush-bytes-written"), tables);
    let report = db.property("strata.dbstats").unwrap();
    assert!(
        report.contains("Cumulative writes: 100 writes, 200 keys"),
        "{report}"
    );
    assert!(report.contains("Cumulative flush: 1 flushes"), "{report}");
}

#[test]
fn read_only_open_sees_everything_and_writes_nothing() {
    use strata::Fs as _;
    let fs = SimFs::new(13);
    let writer = open_sim(&fs);
    for i in 0..3000u32 {
        writer
            .put(format!("k{i:05}").as_bytes(), [b'v'; 60])
            .unwrap();
    }
    // Some data in tables, the rest only in the WAL; the writer stays open,
    // idle, so its background work does not change the file list.
    writer.wait_for_compaction().unwrap();
    let dir = Path::new("/db");
    let mut before = fs.list(dir).unwrap();
    before.sort();
    let reader = Db::open_read_only(dir, sim_options(&fs)).unwrap();
    assert_eq!(reader.range(..).count(), 3000);
    assert_eq!(
        reader.get(b"k02999").unwrap().as_deref(),
        Some(&[b'v'; 60][..])
    );
    let refused = |r: strata::Result<()>| {
        matches!(
            r,
            Err(Error::InvalidArgument {
                field: "read_only",
                ..
            })
        )
    };
    assert!(refused(reader.put(b"x", b"y")));
    assert!(refused(reader.flush()));
    assert!(refused(reader.compact_range(None, None)));
    reader.wait_for_compaction().unwrap();
    drop(reader);
    let mut after = fs.list(dir).unwrap();
    after.sort();
    assert_eq!(before, after, "a read-only open wrote files");
    // The writer is unaffected.
    writer.put(b"later", b"1").unwrap();
    drop(writer);
    assert!(Db::open_read_only(Path::new("/nothing"), sim_options(&fs)).is_err());
}

/// Without bloom filters, no read counts as a filter's answer (RocksDB counts
/// `bloom.filter.full.positive` only when a filter was asked).
#[test]
fn statistics_count_no_filter_answers_without_filters() {
    use strata::{Statistics, Ticker};
    let fs = SimFs::new(15);
    let stats = std::sync::Arc::new(Statistics::new());
    let options = DbOptions {
        statistics: Some(stats.clone()),
        table: strata::TableOptions {
            bloom_bits_per_key: 0.0,
            ..strata::TableOptions::default()
        },
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    assert!(db.get(b"k").unwrap().is_some());
    assert!(db.get(b"j").unwrap().is_none());
    assert_eq!(stats.ticker(Ticker::BloomFilterFullPositive), 0);
    assert_eq!(stats.ticker(Ticker::BloomFilterUseful), 0);
}

#[test]
fn statistics_count_reads_writes_and_filters() {
    use strata::{Histogram, Statistics, Ticker};
    let fs = SimFs::new(14);
    let stats = std::sync::Arc::new(Statistics::new());
    let options = DbOptions {
        statistics: Some(stats.clone()),
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    for i in 0..2000u32 {
        db.put(format!("k{i:05}").as_bytes(), b"0123456789")
            .unwrap();
    }
    db.flush().unwrap();
    db.put(b"fresh", b"1").unwrap();
    assert!(db.get(b"fresh").unwrap().is_some()); // memtable hit
    assert!(db.get(b"k00007").unwrap().is_some()); // from a table
    assert!(db.get(b"absent").unwrap().is_none()); // below every table
    assert!(db.get(b"k00007x").unwrap().is_none()); // inside a table's range
    let mut it = db.iter();
    it.seek(b"k00100");
    assert!(it.valid());
    assert_eq!(stats.ticker(Ticker::NumberKeysWritten), 2001);
    assert_eq!(stats.ticker(Ticker::NumberKeysRead), 4);
    assert_eq!(stats.ticker(Ticker::BytesRead), 11);
    assert_eq!(stats.ticker(Ticker::MemtableHit), 1);
    assert_eq!(stats.ticker(Ticker::MemtableMiss), 3);
    // k00007's table passed its filter; k00007x was turned away by one.
    assert!(stats.ticker(Ticker::BloomFilterFullPositive) >= 1);
    assert!(stats.ticker(Ticker::BloomFilterUseful) >= 1);
    assert!(stats.ticker(Ticker::FlushWriteBytes) > 0);
    assert_eq!(stats.histogram(Histogram::DbGetMicros).count, 4);
    assert_eq!(stats.histogram(Histogram::DbWriteMicros).count, 2001);
    assert_eq!(stats.histogram(Histogram::DbSeekMicros).count, 1);
    let report = db.property("strata.statistics").unwrap();
    assert!(
        report.contains("rocksdb.number.keys.read COUNT : 4"),
        "{report}"
    );
    assert!(report.contains("rocksdb.db.get.micros P50 : "), "{report}");
    let plain = open_sim(&SimFs::new(15));
    assert_eq!(plain.property("strata.statistics"), None);
}
