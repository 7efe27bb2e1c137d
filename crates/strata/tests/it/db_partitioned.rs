//! Databases with partitioned index and filters: the layout is per table
//! file, so a database reopened with other index options reads every table
//! as it was written; with `cache_index_and_filter_blocks` the partitions
//! live in a cache smaller than the metadata, with the top levels pinned.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use strata::cache::lru::{LruCache, LruOptions};
use strata::cache::Cache;
use strata::fs::{ReadFileOptions, SimFs};
use strata::table::TableReader;
use strata::{CompactionOptions, Db, DbOptions, Fs, IndexType, Statistics, TableOptions, Ticker};

use crate::util::sim_options;

fn options(fs: &SimFs, two_level: bool, cache: Option<Arc<LruCache>>) -> DbOptions {
    DbOptions {
        table: TableOptions {
            block_size: 256,
            metadata_block_size: 128,
            index_type: if two_level {
                IndexType::TwoLevelIndexSearch
            } else {
                IndexType::BinarySearch
            },
            partition_filters: two_level,
            cache_index_and_filter_blocks: cache.is_some(),
            ..TableOptions::default()
        },
        block_cache: cache.map(|c| c as Arc<dyn Cache>),
        compaction: CompactionOptions {
            disable_auto_compactions: true,
            ..CompactionOptions::default()
        },
        ..sim_options(fs)
    }
}

/// How many of the database's tables have a two-level index, and how many
/// a one-block index.
fn layouts(fs: &SimFs) -> (usize, usize) {
    let dir = Path::new("/db");
    let (mut two_level, mut one_block) = (0, 0);
    for name in fs.list(dir).unwrap() {
        if !name.ends_with(".sst") {
            continue;
        }
        let path = dir.join(&name);
        let file = fs.open(&path, ReadFileOptions::default()).unwrap();
        let table = TableReader::open(file, &path).unwrap();
        table.verify().unwrap();
        if table.has_two_level_index() {
            assert!(table.properties().index_partitions > 1, "{name}");
            two_level += 1;
        } else {
            one_block += 1;
        }
    }
    (two_level, one_block)
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

/// Every read of `db` matches `model`: gets of present and absent keys, a
/// batched multi_get, and scans both ways.
fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for i in (0..3000u32).step_by(5) {
        assert_eq!(
            db.get(key(i)).unwrap().as_deref(),
            model.get(&key(i)).map(|v| &v[..])
        );
        let mut absent = key(i);
        absent.push(b'x');
        assert_eq!(db.get(&absent).unwrap(), None);
    }
    let batch: Vec<Vec<u8>> = (0..3000u32).step_by(13).map(key).collect();
    for (k, got) in batch
        .iter()
        .zip(db.multi_get(&strata::ReadOptions::default(), &batch))
    {
        assert_eq!(got.unwrap().as_deref(), model.get(k).map(|v| &v[..]));
    }
    let forward: Vec<(Vec<u8>, Vec<u8>)> = db
        .range(..)
        .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect::<strata::Result<_>>()
        .unwrap();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(forward, want);
    let backward = db.range(..).rev().count();
    assert_eq!(backward, model.len());
}

#[test]
fn tables_of_both_layouts_read_after_reopening_with_either() {
    let fs = SimFs::new(31);
    let dir = Path::new("/db");
    let mut model = BTreeMap::new();

    let db = Db::open(dir, options(&fs, true, None)).unwrap();
    for i in 0..3000u32 {
        let value = format!("first-{i}").into_bytes();
        db.put(key(i), &value).unwrap();
        model.insert(key(i), value);
    }
    db.flush().unwrap();
    check(&db, &model);
    drop(db);
    assert_eq!(layouts(&fs).1, 0);

    // Reopened with a one-block index: old tables stay two-level.
    let db = Db::open(dir, options(&fs, false, None)).unwrap();
    check(&db, &model);
    for i in (0..3000u32).step_by(3) {
        let value = format!("second-{i}").into_bytes();
        db.put(key(i), &value).unwrap();
        model.insert(key(i), value);
    }
    for i in (0..3000u32).step_by(7) {
        db.delete(key(i)).unwrap();
        model.remove(&key(i));
    }
    db.flush().unwrap();
    check(&db, &model);
    drop(db);
    let (two_level, one_block) = layouts(&fs);
    assert!(two_level > 0 && one_block > 0, "{two_level} {one_block}");

    // Back to two levels, index and filters in a small cache; compaction
    // rewrites everything two-level.
    let cache = Arc::new(LruCache::new(LruOptions::new(32 << 10)).unwrap());
    let db = Db::open(dir, options(&fs, true, Some(cache))).unwrap();
    check(&db, &model);
    db.compact_range(None, None).unwrap();
    check(&db, &model);
    drop(db);
    assert_eq!(layouts(&fs).1, 0);

    // And once more the other way.
    let db = Db::open(dir, options(&fs, false, None)).unwrap();
    db.compact_range(None, None).unwrap();
    check(&db, &model);
    drop(db);
    assert_eq!(layouts(&fs).0, 0);
}

/// Writes 4000 keys into one two-level table read through a cache of 24
/// KiB, far below its index and filter; returns the database, the cache
/// and the statistics.
fn small_cache_db(fs: &SimFs, pin_top_level: bool) -> (Db, Arc<LruCache>, Arc<Statistics>) {
    let cache = Arc::new(LruCache::new(LruOptions::new(24 << 10)).unwrap());
    let stats = Arc::new(Statistics::new());
    let mut options = options(fs, true, Some(cache.clone()));
    options.table.pin_top_level_index_and_filter = pin_top_level;
    options.statistics = Some(stats.clone());
    options.write_buffer_size = 4 << 20;
    let db = Db::open(Path::new("/db"), options).unwrap();
    for i in 0..4000u32 {
        db.put(key(i), format!("v{i}")).unwrap();
    }
    db.flush().unwrap();
    (db, cache, stats)
}

#[test]
fn partitions_live_in_a_cache_smaller_than_them_with_the_top_levels_pinned() {
    for pin_top_level in [true, false] {
        let fs = SimFs::new(32);
        let (db, cache, stats) = small_cache_db(&fs, pin_top_level);
        for i in (0..4000u32).step_by(3) {
            assert_eq!(db.get(key(i)).unwrap(), Some(format!("v{i}").into()));
            // Inside the table's key range, so the filter is asked.
            assert_eq!(db.get(format!("key{i:06}x")).unwrap(), None);
            assert!(cache.usage() <= cache.capacity());
        }
        let t = |ticker| stats.ticker(ticker);
        // Partitions were read again after eviction.
        assert!(
            t(Ticker::BlockCacheIndexMiss) > 20,
            "{}",
            t(Ticker::BlockCacheIndexMiss)
        );
        assert!(t(Ticker::BlockCacheFilterMiss) > 20);
        assert!(t(Ticker::BloomFilterUseful) > 0);
        // Only the top levels are pinned, and only when asked.
        let pinned = cache.pinned_usage();
        if pin_top_level {
            assert!(pinned > 0 && pinned < 8 << 10, "{pinned}");
        } else {
            assert_eq!(pinned, 0);
        }
    }
}

#[test]
fn compaction_reads_leave_index_partitions_out_of_the_cache() {
    let fs = SimFs::new(33);
    let cache = Arc::new(LruCache::new(LruOptions::new(8 << 20)).unwrap());
    let stats = Arc::new(Statistics::new());
    let mut options = options(&fs, true, Some(cache));
    options.statistics = Some(stats.clone());
    let db = Db::open(Path::new("/db"), options).unwrap();
    for round in 0..3u32 {
        for i in 0..2000u32 {
            db.put(key(i), format!("{round}-{i}")).unwrap();
        }
        db.flush().unwrap();
    }
    // A scan that fills nothing opens every table, pinning its top levels,
    // before counting.
    let no_fill = strata::ReadOptions {
        fill_cache: false,
        ..strata::ReadOptions::default()
    };
    assert_eq!(db.range_opt(&no_fill, ..).count(), 2000);
    let t = |ticker| stats.ticker(ticker);
    let (adds, index_misses) = (t(Ticker::BlockCacheAdd), t(Ticker::BlockCacheIndexMiss));
    db.compact_range(None, None).unwrap();
    // The inputs' partitions were looked up but not inserted: what was
    // added is the new table's pinned top levels.
    assert!(t(Ticker::BlockCacheIndexMiss) > index_misses);
    assert!(
        t(Ticker::BlockCacheAdd) <= adds + 4,
        "{} {adds}",
        t(Ticker::BlockCacheAdd)
    );
    // Reads fill it as before: a partition and a data block at least.
    let before_read = t(Ticker::BlockCacheAdd);
    assert_eq!(db.get(key(1999)).unwrap(), Some("2-1999".into()));
    assert!(t(Ticker::BlockCacheAdd) >= before_read + 2);
}
