//! `ReadOptions::read_tier = BlockCache` (RocksDB's `kBlockCacheTier`):
//! reads answer from memory or fail with `Incomplete`, never with a wrong
//! answer, and never read a file.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::cache::lru::{LruCache, LruOptions};
use strata::cache::Cache;
use strata::fs::SimFs;
use strata::{BlobOptions, Db, DbOptions, Error, ReadOptions, ReadTier};

use crate::util::{sim_options, small_leveled};

fn memory_only() -> ReadOptions {
    ReadOptions {
        read_tier: ReadTier::BlockCache,
        ..ReadOptions::default()
    }
}

fn is_incomplete<T: std::fmt::Debug>(result: &Result<T, Error>) -> bool {
    matches!(result, Err(Error::Incomplete { .. }))
}

fn key(i: u32) -> Vec<u8> {
    format!("k{i:05}").into_bytes()
}

#[test]
fn gets_answer_from_memory_or_are_incomplete() {
    let fs = SimFs::new(21);
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    for i in 0..500 {
        db.put(key(i), [b'v'; 50]).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    // Reopened: tables on disk, nothing of them in the cache.
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    db.put("in-memtable", "m").unwrap();
    let tier = memory_only();
    assert_eq!(
        db.get_opt(&tier, "in-memtable").unwrap().as_deref(),
        Some(&b"m"[..])
    );
    let first = db.get_opt(&tier, key(10));
    assert!(is_incomplete(&first), "{first:?}");
    let message = first.unwrap_err().to_string();
    assert!(
        message.contains("kBlockCacheTier") && message.contains(".sst"),
        "{message}"
    );
    // A read of all tiers brings the block into the cache; then the
    // memory-only read answers, for that key and its block's neighbours.
    assert!(db.get(key(10)).unwrap().is_some());
    assert!(db.get_opt(&tier, key(10)).unwrap().is_some());
    assert!(db.get_opt(&tier, key(11)).unwrap().is_some());
    // A block read with fill_cache off stays uncached.
    let no_fill = ReadOptions {
        fill_cache: false,
        ..ReadOptions::default()
    };
    assert!(db.get_opt(&no_fill, key(450)).unwrap().is_some());
    assert!(is_incomplete(&db.get_opt(&tier, key(450))));
    // multi_get: each key answered or incomplete on its own.
    let keys = [key(11), key(451), b"in-memtable".to_vec()];
    let got = db.multi_get_cf(&db.default_cf(), &tier, &keys);
    assert!(got[0].as_ref().unwrap().is_some());
    assert!(is_incomplete(&got[1]), "{:?}", got[1]);
    assert_eq!(got[2].as_ref().unwrap().as_deref(), Some(&b"m"[..]));
    // A read in another tier afterwards is not affected.
    assert!(db.get(key(451)).unwrap().is_some());
}

#[test]
fn iterators_stop_incomplete_where_a_file_is_needed() {
    let fs = SimFs::new(22);
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    for i in 0..2000 {
        db.put(key(i), [b'v'; 50]).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    let mut it = db.iter_opt(&memory_only());
    it.seek_to_first();
    assert!(!it.valid());
    assert!(is_incomplete(&it.status()), "{:?}", it.status());
    // After a full scan fills the cache, a memory-only scan sees it all.
    let all = db.range(..).collect::<Result<Vec<_>, _>>().unwrap();
    assert_eq!(all.len(), 2000);
    let mut it = db.iter_opt(&memory_only());
    let mut seen = 0;
    it.seek_to_first();
    while it.valid() {
        seen += 1;
        it.next();
    }
    it.status().unwrap();
    assert_eq!(seen, 2000);
}

#[test]
fn separated_values_need_the_blob_cache() {
    let fs = SimFs::new(23);
    let cache: Arc<dyn Cache> = Arc::new(LruCache::new(LruOptions::new(4 << 20)).unwrap());
    let options = |with_cache: bool| {
        let mut options = sim_options(&fs);
        options.blob = BlobOptions {
            enable_blob_files: true,
            min_blob_size: 100,
            blob_cache: with_cache.then(|| cache.clone()),
            ..BlobOptions::default()
        };
        options
    };
    let big = vec![b'b'; 400];
    for with_cache in [false, true] {
        let db = Db::open(Path::new("/db"), options(with_cache)).unwrap();
        db.put("big", &big).unwrap();
        db.flush().unwrap();
        db.close().unwrap();
        let db = Db::open(Path::new("/db"), options(with_cache)).unwrap();
        // Warm the table's blocks, then ask memory only.
        assert_eq!(db.get("big").unwrap().as_deref(), Some(&big[..]));
        let again = db.get_opt(&memory_only(), "big");
        if with_cache {
            assert_eq!(again.unwrap().as_deref(), Some(&big[..]));
        } else {
            assert!(is_incomplete(&again), "{again:?}");
        }
        db.close().unwrap();
    }
}

/// Random writes, deletes, flushes and compactions, with memory-only reads
/// checked against a model: each is the model's answer or `Incomplete`.
#[test]
fn memory_only_reads_never_answer_wrong() {
    let fs = SimFs::new(24);
    let options = DbOptions {
        compaction: small_leveled(),
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut rng = SmallRng::seed_from_u64(24);
    let (mut answered, mut incomplete) = (0, 0);
    for step in 0..20_000u32 {
        let k = key(rng.gen_range(0..800));
        match rng.gen_range(0..10) {
            0..=3 => {
                let v = format!("v{step}-{}", "x".repeat(rng.gen_range(0..120)));
                db.put(&k, &v).unwrap();
                model.insert(k, v.into_bytes());
            }
            4 => {
                db.delete(&k).unwrap();
                model.remove(&k);
            }
            5 if step % 500 == 0 => db.flush().unwrap(),
            _ => match db.get_opt(&memory_only(), &k) {
                Ok(got) => {
                    answered += 1;
                    assert_eq!(got.as_deref(), model.get(&k).map(|v| &v[..]), "step {step}");
                }
                Err(Error::Incomplete { .. }) => {
                    incomplete += 1;
                    // The full read answers right, and warms the cache.
                    let got = db.get(&k).unwrap();
                    assert_eq!(got.as_deref(), model.get(&k).map(|v| &v[..]), "step {step}");
                }
                Err(e) => panic!("step {step}: {e}"),
            },
        }
    }
    // Both kinds of answer happened, so the check covered both.
    assert!(
        answered > 1000 && incomplete > 10,
        "{answered} answered, {incomplete} incomplete"
    );
}
