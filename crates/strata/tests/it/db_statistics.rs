//! RocksDB's tickers and histograms beyond the basic ones: gets answered per
//! level, compaction drops by kind, WAL syncs and bytes, table opens, seeks
//! and batched reads, flush and compaction times, each counted exactly where
//! the test can know the count.

use std::path::Path;
use std::sync::Arc;

use strata::fs::SimFs;
use strata::{
    CompactionFilter, Db, DbOptions, Decision, FilterContext, Histogram, ReadOptions, Statistics,
    Ticker, WriteOptions,
};

use crate::util::sim_options;

/// Removes values that start with "drop".
#[derive(Debug)]
struct DropMarked;

impl CompactionFilter for DropMarked {
    fn name(&self) -> &str {
        "DropMarked"
    }

    fn filter(&self, _: &FilterContext, _: &[u8], value: &[u8]) -> Decision {
        if value.starts_with(b"drop") {
            Decision::Remove
        } else {
            Decision::Keep
        }
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:04}").into_bytes()
}

#[test]
fn tickers_count_what_happened() {
    let fs = SimFs::new(61);
    let stats = Arc::new(Statistics::new());
    let mut options = DbOptions {
        statistics: Some(stats.clone()),
        compaction_filter: Some(Arc::new(DropMarked)),
        ..sim_options(&fs)
    };
    options.compaction.disable_auto_compactions = true;
    let db = Db::open(Path::new("/db"), options).unwrap();
    // Level 1 and deeper after a full compaction: 100 keys, 10 of them
    // overwritten once (10 dropped as newer entries), 5 deleted (the
    // deletions and the values under them dropped: nothing is below), 3
    // put with values the filter removes, and a range deletion over 20..30
    // (10 values dropped by it, and its own tombstone kept out of the point
    // stream).
    for i in 0..100 {
        db.put(key(i), "v").unwrap();
    }
    db.flush().unwrap();
    for i in 0..10 {
        db.put(key(i), "w").unwrap();
    }
    for i in 40..45 {
        db.delete(key(i)).unwrap();
    }
    for i in 50..53 {
        db.put(key(i), "drop me").unwrap();
    }
    db.delete_range(key(20), key(30)).unwrap();
    db.flush().unwrap();
    let opens_before = stats.ticker(Ticker::NoFileOpens);
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    assert!(
        stats.ticker(Ticker::NoFileOpens) > opens_before,
        "the compaction opened its inputs"
    );
    assert!(stats.histogram(Histogram::CompactionTime).count >= 1);
    assert_eq!(stats.histogram(Histogram::FlushTime).count, 2);
    assert_eq!(
        stats.ticker(Ticker::CompactionKeyDropNewerEntry),
        10 + 5 + 3,
        "newer entries"
    );
    assert_eq!(
        stats.ticker(Ticker::CompactionKeyDropRangeDel),
        10,
        "range-deleted values"
    );
    assert_eq!(
        stats.ticker(Ticker::CompactionKeyDropUser),
        3,
        "filter removals"
    );
    assert!(
        stats.ticker(Ticker::CompactionKeyDropObsolete) >= 5,
        "obsolete deletions"
    );
    // Now one table per key range at L1 or deeper, one L0 file on top.
    db.put(key(0), "l0").unwrap();
    db.flush().unwrap();
    db.put(key(1), "mem").unwrap();
    let hits = |t| stats.ticker(t);
    let (l0, l1, deeper) = (
        hits(Ticker::GetHitL0),
        hits(Ticker::GetHitL1),
        hits(Ticker::GetHitL2AndUp),
    );
    assert_eq!(db.get(key(0)).unwrap().as_deref(), Some(&b"l0"[..]));
    assert_eq!(db.get(key(1)).unwrap().as_deref(), Some(&b"mem"[..]));
    assert_eq!(db.get(key(60)).unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get(key(41)).unwrap(), None);
    assert_eq!(hits(Ticker::GetHitL0), l0 + 1, "one get answered at L0");
    assert_eq!(
        hits(Ticker::GetHitL1) + hits(Ticker::GetHitL2AndUp),
        l1 + deeper + 1,
        "one get answered below L0"
    );
    // Batched reads: calls and keys.
    let got = db.multi_get(&ReadOptions::default(), &[key(0), key(60), key(99)]);
    assert!(got.iter().all(|r| r.as_ref().is_ok_and(|v| v.is_some())));
    assert_eq!(stats.ticker(Ticker::NumberMultigetCalls), 1);
    assert_eq!(stats.ticker(Ticker::NumberMultigetKeysRead), 3);
    assert_eq!(
        hits(Ticker::GetHitL0),
        l0 + 2,
        "the batch's L0 answer counts too"
    );
    // Seeks, forward and backward.
    let mut it = db.iter();
    it.seek(&key(5));
    it.seek_for_prev(&key(5));
    assert_eq!(stats.ticker(Ticker::NumberDbSeek), 2);
    drop(it);
    // WAL bytes move with every write; syncs with sync writes and flush_wal.
    let (synced, bytes) = (
        stats.ticker(Ticker::WalFileSynced),
        stats.ticker(Ticker::WalFileBytes),
    );
    assert!(bytes > 0);
    let sync = WriteOptions {
        sync: true,
        ..WriteOptions::default()
    };
    db.put_opt(&sync, key(7), "synced").unwrap();
    db.flush_wal(true).unwrap();
    assert_eq!(stats.ticker(Ticker::WalFileSynced), synced + 2);
    assert!(stats.ticker(Ticker::WalFileBytes) > bytes);
    assert_eq!(
        stats.histogram(Histogram::WalFileSyncMicros).count,
        synced + 2
    );
    assert!(stats.histogram(Histogram::TableOpenIoMicros).count >= 1);
    // Printed under RocksDB's names.
    let report = db.property("rocksdb.statistics").unwrap();
    for name in [
        "rocksdb.l0.hit COUNT : ",
        "rocksdb.compaction.key.drop.user COUNT : 3",
        "rocksdb.wal.synced COUNT : ",
    ] {
        assert!(report.contains(name), "{name} missing from\n{report}");
    }
    assert!(
        report.contains("rocksdb.db.flush.micros P50 : "),
        "{report}"
    );
}

/// A thread's perf context counts what its own gets did, as the tickers
/// count it for the whole database (nothing else runs meanwhile).
#[test]
fn perf_context_agrees_with_the_tickers() {
    use strata::perf_context::{perf_context, reset_perf_context, set_perf_level, PerfLevel};
    let fs = SimFs::new(62);
    let stats = Arc::new(Statistics::new());
    let mut options = DbOptions {
        statistics: Some(stats.clone()),
        ..sim_options(&fs)
    };
    options.compaction.disable_auto_compactions = true;
    options.table.block_size = 512;
    let db = Db::open(Path::new("/db"), options).unwrap();
    for part in 0..2u32 {
        for i in 0..1000u32 {
            db.put(key(i * 2 + part), format!("value {i}")).unwrap();
        }
        db.flush().unwrap();
    }
    // Open both tables before counting (an open reads index and filter).
    db.get(key(0)).unwrap();
    db.get(key(1)).unwrap();
    set_perf_level(PerfLevel::EnableTime);
    reset_perf_context();
    let tickers = [
        Ticker::BlockCacheHit,
        Ticker::BlockCacheMiss,
        Ticker::BloomFilterUseful,
        Ticker::BloomFilterFullPositive,
        Ticker::BytesRead,
    ];
    let before = tickers.map(|t| stats.ticker(t));
    for i in (0..3000).step_by(7) {
        db.get(key(i)).unwrap();
    }
    let after = tickers.map(|t| stats.ticker(t));
    let delta = |i: usize| after[i] - before[i];
    let context = perf_context();
    set_perf_level(PerfLevel::Disable);
    assert_eq!(context.block_cache_hit_count, delta(0));
    assert_eq!(
        context.block_read_count,
        delta(1),
        "every miss read its block"
    );
    assert!(context.block_read_count > 0 && context.block_read_byte > 0);
    assert_eq!(context.bloom_sst_miss_count, delta(2));
    assert_eq!(context.bloom_sst_hit_count, delta(3));
    assert!(context.bloom_sst_miss_count > 0 && context.bloom_sst_hit_count > 0);
    assert_eq!(context.get_read_bytes, delta(4));
    assert_eq!(context.get_from_memtable_count, 429, "one memtable per get");
    assert!(context.get_from_output_files_time > 0 && context.block_read_time > 0);
    // Another thread counted nothing of it.
    let other = std::thread::spawn(perf_context).join().unwrap();
    assert_eq!(other, Default::default());
}
