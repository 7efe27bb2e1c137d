//! The block cache under a database: hits, bad blocks, index and filter
//! blocks in the cache, pinning, and the clock cache.

use std::path::Path;
use std::sync::Arc;

use strata::cache::lru::{LruCache, LruOptions};
use strata::cache::Cache;
use strata::fs::SimFs;
use strata::{CompactionOptions, Db, DbOptions, ReadOptions, Statistics, TableOptions, Ticker};

use crate::util::sim_options;

#[test]
fn the_block_cache_serves_repeated_reads_and_never_caches_bad_blocks() {
    let fs = SimFs::new(16);
    let stats = std::sync::Arc::new(Statistics::new());
    let options = DbOptions {
        statistics: Some(stats.clone()),
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    for i in 0..500u32 {
        db.put(format!("k{i:05}").as_bytes(), [b'v'; 50]).unwrap();
    }
    db.flush().unwrap();
    let t = |ticker| stats.ticker(ticker);
    assert!(db.get(b"k00010").unwrap().is_some());
    assert_eq!(
        (t(Ticker::BlockCacheDataMiss), t(Ticker::BlockCacheAdd)),
        (1, 1)
    );
    assert!(db.get(b"k00011").unwrap().is_some()); // same block
    assert_eq!(t(Ticker::BlockCacheDataHit), 1);
    // fill_cache = false: a miss is read but not inserted.
    let no_fill = ReadOptions {
        fill_cache: false,
        ..ReadOptions::default()
    };
    assert!(db.get_opt(&no_fill, b"k00400").unwrap().is_some());
    assert!(db.get_opt(&no_fill, b"k00400").unwrap().is_some());
    assert_eq!(
        (t(Ticker::BlockCacheDataMiss), t(Ticker::BlockCacheAdd)),
        (3, 1)
    );
    // A corrupt block is an error every time, never a cached value.
    use strata::Fs as _;
    let table = fs
        .list(Path::new("/db"))
        .unwrap()
        .into_iter()
        .find(|n| n.ends_with(".sst"))
        .unwrap();
    // A byte in the middle of the data blocks: some block not yet cached.
    let path = Path::new("/db").join(&table);
    // Data blocks fill the front of the file; the middle is in one of them.
    let middle = fs.file_size(&path).unwrap() / 2;
    fs.corrupt_byte(&path, middle, 0x55).unwrap();
    let errors = || {
        (100..500u32)
            .filter(|i| db.get(format!("k{i:05}").as_bytes()).is_err())
            .count()
    };
    let first = errors();
    assert!(first > 0, "the corrupt block was never read");
    assert_eq!(errors(), first, "a corrupt block was cached");
}

#[test]
fn index_and_filter_blocks_can_live_in_a_small_block_cache() {
    let fs = SimFs::new(17);
    let stats = std::sync::Arc::new(Statistics::new());
    // A cache far smaller than the tables: index and filter blocks are
    // evicted and read again, and every read must stay right.
    let cache = LruCache::new(LruOptions::new(16 << 10)).unwrap();
    let options = DbOptions {
        statistics: Some(stats.clone()),
        block_cache: Some(std::sync::Arc::new(cache)),
        table: TableOptions {
            cache_index_and_filter_blocks: true,
            ..TableOptions::default()
        },
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    for i in 0..4000u32 {
        db.put(format!("k{i:05}").as_bytes(), format!("v{i}").as_bytes())
            .unwrap();
    }
    db.flush().unwrap();
    for i in (0..4000u32).step_by(7) {
        let got = db.get(format!("k{i:05}").as_bytes()).unwrap();
        assert_eq!(got.as_deref(), Some(format!("v{i}").as_bytes()));
        assert!(db.get(format!("k{i:05}x").as_bytes()).unwrap().is_none());
    }
    assert_eq!(db.range(..).count(), 4000);
    let t = |ticker| stats.ticker(ticker);
    assert!(t(Ticker::BlockCacheIndexMiss) > 0 && t(Ticker::BlockCacheIndexHit) > 0);
    assert!(t(Ticker::BlockCacheFilterMiss) > 0 && t(Ticker::BlockCacheFilterHit) > 0);
    assert!(t(Ticker::BloomFilterUseful) > 0);
}

#[test]
fn a_clock_block_cache_serves_reads() {
    use strata::cache::clock::{ClockCache, ClockOptions};
    let fs = SimFs::new(18);
    let stats = std::sync::Arc::new(Statistics::new());
    let cache = ClockCache::new(ClockOptions {
        capacity: 64 << 10,
        estimated_entry_charge: 4096,
        strict_capacity_limit: false,
    })
    .unwrap();
    let options = DbOptions {
        statistics: Some(stats.clone()),
        block_cache: Some(std::sync::Arc::new(cache)),
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    for i in 0..3000u32 {
        db.put(format!("k{i:05}").as_bytes(), format!("v{i}").as_bytes())
            .unwrap();
    }
    db.flush().unwrap();
    for round in 0..2 {
        for i in (0..3000u32).step_by(3) {
            let got = db.get(format!("k{i:05}").as_bytes()).unwrap();
            assert_eq!(
                got.as_deref(),
                Some(format!("v{i}").as_bytes()),
                "round {round}"
            );
        }
    }
    assert!(stats.ticker(Ticker::BlockCacheDataHit) > 0);
    assert_eq!(db.range(..).count(), 3000);
}

/// Opens a DB whose index and filter blocks live in `cache`, pinned at L0 or
/// not, with one flushed L0 table of 4000 keys.
fn db_with_l0_table(fs: &SimFs, cache: Arc<LruCache>, pin_l0: bool) -> (Db, Arc<Statistics>) {
    let stats = Arc::new(Statistics::new());
    let options = DbOptions {
        statistics: Some(stats.clone()),
        block_cache: Some(cache),
        table: TableOptions {
            cache_index_and_filter_blocks: true,
            pin_l0_filter_and_index_blocks_in_cache: pin_l0,
            ..TableOptions::default()
        },
        compaction: CompactionOptions {
            disable_auto_compactions: true,
            ..CompactionOptions::default()
        },
        ..sim_options(fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    for i in 0..4000u32 {
        db.put(format!("k{i:05}").as_bytes(), format!("v{i}").as_bytes())
            .unwrap();
    }
    db.flush().unwrap();
    (db, stats)
}

#[test]
fn l0_index_and_filter_stay_pinned_until_the_table_leaves_l0() {
    // Far smaller than the data: unpinned blocks are evicted by data reads.
    let cache = Arc::new(LruCache::new(LruOptions::new(32 << 10)).unwrap());
    let (db, stats) = db_with_l0_table(&SimFs::new(19), cache.clone(), true);
    let read_all = || {
        for i in (0..4000u32).step_by(3) {
            let got = db.get(format!("k{i:05}").as_bytes()).unwrap();
            assert_eq!(got.as_deref(), Some(format!("v{i}").as_bytes()));
        }
    };
    read_all();
    let t = |ticker| stats.ticker(ticker);
    let meta_lookups = || {
        t(Ticker::BlockCacheIndexHit)
            + t(Ticker::BlockCacheIndexMiss)
            + t(Ticker::BlockCacheFilterHit)
            + t(Ticker::BlockCacheFilterMiss)
    };
    // Loaded once, at open, then read through the pin: no further lookups
    // however many data blocks pass through the cache.
    let after_open = meta_lookups();
    let l0_files: u64 = db
        .property("strata.num-files-at-level0")
        .unwrap()
        .parse()
        .unwrap();
    assert!(l0_files > 0);
    assert_eq!(
        after_open,
        2 * l0_files,
        "one index and one filter load per open"
    );
    read_all();
    assert_eq!(meta_lookups(), after_open);
    assert!(t(Ticker::BlockCacheDataMiss) > 0);
    let pinned = cache.pinned_usage();
    assert!(pinned > 0, "nothing pinned while no read is in flight");
    // Compaction rewrites the table into L1; the L0 reader closes and its
    // pins go with it; the new L1 table is not pinned.
    db.compact_range(None, None).unwrap();
    read_all();
    assert_eq!(cache.pinned_usage(), 0);
    assert!(meta_lookups() > after_open);
}

#[test]
fn without_pinning_idle_index_and_filter_are_evictable() {
    let cache = Arc::new(LruCache::new(LruOptions::new(32 << 10)).unwrap());
    let (db, stats) = db_with_l0_table(&SimFs::new(20), cache.clone(), false);
    for i in (0..4000u32).step_by(3) {
        assert!(db.get(format!("k{i:05}").as_bytes()).unwrap().is_some());
    }
    assert_eq!(cache.pinned_usage(), 0);
    // Each read looks them up; data reads evict them, so some lookups miss
    // after the first.
    assert!(stats.ticker(Ticker::BlockCacheIndexHit) > 0);
    assert!(stats.ticker(Ticker::BlockCacheIndexMiss) > 1);
}

#[test]
fn compaction_reads_do_not_fill_the_block_cache() {
    let fs = SimFs::new(18);
    let stats = Arc::new(Statistics::new());
    let options = DbOptions {
        statistics: Some(stats.clone()),
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    for round in 0..3u32 {
        for i in 0..2000u32 {
            db.put(format!("k{i:05}").as_bytes(), format!("{round}-{i}"))
                .unwrap();
        }
        db.flush().unwrap();
    }
    let adds = stats.ticker(Ticker::BlockCacheAdd);
    let misses = stats.ticker(Ticker::BlockCacheDataMiss);
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    assert!(
        stats.ticker(Ticker::BlockCacheDataMiss) > misses + 10,
        "the compaction read its inputs through the cache lookup"
    );
    assert_eq!(
        stats.ticker(Ticker::BlockCacheAdd),
        adds,
        "a compaction read filled the block cache"
    );
    // Reads fill it as before.
    assert_eq!(db.get(b"k01999").unwrap().as_deref(), Some(&b"2-1999"[..]));
    assert_eq!(stats.ticker(Ticker::BlockCacheAdd), adds + 1);
}

#[test]
fn a_batched_multi_get_reads_each_block_once() {
    let fs = SimFs::new(19);
    let stats = Arc::new(Statistics::new());
    let options = DbOptions {
        statistics: Some(stats.clone()),
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    for i in 0..2000u32 {
        db.put(format!("k{i:05}").as_bytes(), [b'v'; 20]).unwrap();
    }
    db.flush().unwrap();
    let lookups =
        || stats.ticker(Ticker::BlockCacheDataHit) + stats.ticker(Ticker::BlockCacheDataMiss);
    // Ten neighbours (one data block, given in reverse and one twice) and
    // one far key: two blocks, two lookups.
    let mut keys: Vec<String> = (0..10).rev().map(|i| format!("k{:05}", 100 + i)).collect();
    keys.push("k00103".into());
    keys.push("k01900".into());
    let before = lookups();
    let got = db.multi_get(&ReadOptions::default(), &keys);
    assert_eq!(lookups() - before, 2);
    for value in got {
        assert_eq!(value.unwrap().as_deref(), Some(&[b'v'; 20][..]));
    }
    // Key by key, the same reads look up a block per key.
    let before = lookups();
    for k in &keys {
        db.get(k).unwrap();
    }
    assert_eq!(lookups() - before, keys.len() as u64);
}
