//! Key-value separation through the public API: values in blob files read
//! back by every read path, through flush, compaction, garbage collection
//! and reopen; the blob cache; merges and filters over separated values;
//! bad options; missing and damaged blob files.

use std::path::Path;
use std::sync::Arc;

use strata::cache::lru::{LruCache, LruOptions};
use strata::cache::Cache;
use strata::compaction_filter::{CompactionFilter, Decision, FilterContext};
use strata::fs::{Fs, SimFs};
use strata::{
    merge_operator_from_name, BlobOptions, Db, DbOptions, Error, PrepopulateBlobCache, ReadOptions,
    Statistics, Ticker,
};

use crate::util::{sim_options, small_leveled};

fn blob_options() -> BlobOptions {
    BlobOptions {
        enable_blob_files: true,
        min_blob_size: 100,
        blob_file_size: 16 << 10,
        ..BlobOptions::default()
    }
}

fn options(fs: &SimFs, blob: BlobOptions) -> DbOptions {
    DbOptions {
        blob,
        compaction: small_leveled(),
        ..sim_options(fs)
    }
}

fn open(fs: &SimFs, blob: BlobOptions) -> Db {
    Db::open(Path::new("/db"), options(fs, blob)).unwrap()
}

fn open_with_stats(fs: &SimFs, blob: BlobOptions, stats: &Arc<Statistics>) -> Db {
    let options = DbOptions {
        statistics: Some(stats.clone()),
        ..options(fs, blob)
    };
    Db::open(Path::new("/db"), options).unwrap()
}

fn big(n: u32) -> Vec<u8> {
    format!("{n:06}-{}", "v".repeat(300 + n as usize % 50)).into_bytes()
}

fn blob_files_on_disk(fs: &SimFs) -> Vec<String> {
    let mut names: Vec<String> = fs
        .list(Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".blob"))
        .collect();
    names.sort();
    names
}

fn num_blob_files(db: &Db) -> usize {
    db.property("strata.num-blob-files")
        .unwrap()
        .parse()
        .unwrap()
}

/// Large values go to blob files, small ones stay in the table, and gets,
/// batched gets and both scan directions read them all back, after flush,
/// compaction and reopen.
#[test]
fn every_read_path_resolves_references() {
    let fs = SimFs::new(1);
    let mut db = open(&fs, blob_options());
    for n in 0..400u32 {
        let key = format!("k{n:04}");
        let value = if n % 3 == 0 {
            b"small".to_vec()
        } else {
            big(n)
        };
        db.put(&key, &value).unwrap();
    }
    db.flush().unwrap();
    assert!(num_blob_files(&db) > 0);
    let check = |db: &Db| {
        for n in 0..400u32 {
            let want = if n % 3 == 0 {
                b"small".to_vec()
            } else {
                big(n)
            };
            let key = format!("k{n:04}");
            assert_eq!(db.get(&key).unwrap().unwrap().to_vec(), want, "{key}");
        }
        let keys: Vec<String> = (0..400u32).rev().map(|n| format!("k{n:04}")).collect();
        for (k, got) in keys
            .iter()
            .zip(db.multi_get(&ReadOptions::default(), &keys))
        {
            let n: u32 = k[1..].parse().unwrap();
            let want = if n % 3 == 0 {
                b"small".to_vec()
            } else {
                big(n)
            };
            assert_eq!(got.unwrap().unwrap().to_vec(), want);
        }
        let forward: Vec<(Vec<u8>, Vec<u8>)> = db.range(..).map(|r| r.unwrap()).collect();
        assert_eq!(forward.len(), 400);
        let mut it = db.iter();
        it.seek_to_last();
        let mut backward = Vec::new();
        while let (Some(k), Some(v)) = (it.key(), it.value()) {
            backward.push((k.to_vec(), v.to_vec()));
            it.prev();
        }
        it.status().unwrap();
        backward.reverse();
        assert_eq!(forward, backward);
    };
    check(&db);
    db.compact_range(None, None).unwrap();
    check(&db);
    drop(db);
    db = open(&fs, blob_options());
    check(&db);
    // Turned off later, the references already written still read.
    drop(db);
    let db = open(&fs, BlobOptions::default());
    check(&db);
}

/// Overwriting every value makes the first blob files garbage: compaction
/// counts it, and once no table references a file it is deleted.
#[test]
fn overwritten_blob_files_are_deleted() {
    let fs = SimFs::new(2);
    let db = open(&fs, blob_options());
    let mut first_round = Vec::new();
    for round in 0..3u32 {
        for n in 0..200u32 {
            db.put(format!("k{n:04}"), big(n + round)).unwrap();
        }
        db.flush().unwrap();
        if round == 0 {
            first_round = blob_files_on_disk(&fs);
        }
    }
    assert!(!first_round.is_empty());
    db.compact_range(None, None).unwrap();
    db.wait_for_compaction().unwrap();
    let left = blob_files_on_disk(&fs);
    assert!(
        first_round.iter().all(|f| !left.contains(f)),
        "{first_round:?} outlived their references: {left:?}"
    );
    let garbage: u64 = db
        .property("strata.live-blob-file-garbage-size")
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(garbage, 0, "the files left hold only live values");
    for n in 0..200u32 {
        assert_eq!(
            db.get(format!("k{n:04}")).unwrap().unwrap().to_vec(),
            big(n + 2)
        );
    }
}

/// With garbage collection, a compaction moves the live values out of the
/// oldest blob files, which then go; without it they stay.
#[test]
fn garbage_collection_relocates_the_oldest_files() {
    for gc in [false, true] {
        let fs = SimFs::new(3);
        let stats = Arc::new(Statistics::new());
        let blob = BlobOptions {
            enable_blob_garbage_collection: gc,
            blob_garbage_collection_age_cutoff: 1.0,
            ..blob_options()
        };
        let db = open_with_stats(&fs, blob, &stats);
        for n in 0..200u32 {
            db.put(format!("k{n:04}"), big(n)).unwrap();
        }
        db.flush().unwrap();
        let before = blob_files_on_disk(&fs);
        db.compact_range(None, None).unwrap();
        db.wait_for_compaction().unwrap();
        let after = blob_files_on_disk(&fs);
        let kept = before.iter().filter(|f| after.contains(f)).count();
        let relocated = stats.ticker(Ticker::BlobGcKeysRelocated);
        if gc {
            assert_eq!(kept, 0, "gc kept {before:?} -> {after:?}");
            assert_eq!(relocated, 200);
        } else {
            assert_eq!(kept, before.len());
            assert_eq!(relocated, 0);
        }
        for n in 0..200u32 {
            assert_eq!(
                db.get(format!("k{n:04}")).unwrap().unwrap().to_vec(),
                big(n)
            );
        }
    }
}

/// Blobs go to the blob cache with the read's `fill_cache`, and a flush
/// fills it with `prepopulate_blob_cache`; hits and misses are counted.
#[test]
fn blob_cache_follows_fill_cache_and_prepopulate() {
    for prepopulate in [
        PrepopulateBlobCache::Disable,
        PrepopulateBlobCache::FlushOnly,
    ] {
        let fs = SimFs::new(4);
        let stats = Arc::new(Statistics::new());
        let cache: Arc<dyn Cache> = Arc::new(LruCache::new(LruOptions::new(4 << 20)).unwrap());
        let blob = BlobOptions {
            blob_cache: Some(cache.clone()),
            prepopulate_blob_cache: prepopulate,
            ..blob_options()
        };
        let db = open_with_stats(&fs, blob, &stats);
        db.put("k", big(1)).unwrap();
        db.flush().unwrap();
        let no_fill = ReadOptions {
            fill_cache: false,
            ..ReadOptions::default()
        };
        db.get_opt(&no_fill, "k").unwrap();
        let hits_first = stats.ticker(Ticker::BlobCacheHit);
        db.get("k").unwrap();
        db.get("k").unwrap();
        match prepopulate {
            PrepopulateBlobCache::Disable => {
                assert_eq!(hits_first, 0, "nothing cached before the first read");
                // fill_cache=false added nothing: the second get missed too.
                assert_eq!(stats.ticker(Ticker::BlobCacheMiss), 2);
                assert_eq!(stats.ticker(Ticker::BlobCacheHit), 1);
            }
            PrepopulateBlobCache::FlushOnly => {
                assert_eq!(hits_first, 1, "the flush cached the blob");
                assert_eq!(stats.ticker(Ticker::BlobCacheMiss), 0);
            }
        }
        assert!(cache.usage() >= big(1).len());
    }
}

/// A merge over a separated base, and a compaction filter, see the value
/// whole; a changed value may go back into a blob file.
#[derive(Debug)]
struct Upper;

impl CompactionFilter for Upper {
    fn name(&self) -> &str {
        "Upper"
    }

    fn filter(&self, _ctx: &FilterContext, _key: &[u8], value: &[u8]) -> Decision {
        if value.starts_with(b"drop") {
            Decision::Remove
        } else if value.starts_with(b"up") {
            Decision::ChangeValue(value.to_ascii_uppercase())
        } else {
            Decision::Keep
        }
    }
}

#[test]
fn merges_and_filters_see_separated_values() {
    let fs = SimFs::new(5);
    let options = DbOptions {
        merge_operator: Some(merge_operator_from_name("stringappend").unwrap()),
        compaction_filter: Some(Arc::new(Upper)),
        ..options(&fs, blob_options())
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    let long = |prefix: &str| format!("{prefix}{}", "x".repeat(200));
    db.put("m", long("base")).unwrap();
    db.put("d", long("drop")).unwrap();
    db.put("u", long("up")).unwrap();
    db.flush().unwrap();
    db.merge("m", "tail").unwrap();
    let merged = format!("{},tail", long("base"));
    assert_eq!(db.get("m").unwrap().unwrap().to_vec(), merged.as_bytes());
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get("m").unwrap().unwrap().to_vec(), merged.as_bytes());
    assert_eq!(db.get("d").unwrap(), None);
    assert_eq!(
        db.get("u").unwrap().unwrap().to_vec(),
        long("up").to_ascii_uppercase().as_bytes()
    );
}

/// Bad blob options name the option.
#[test]
fn bad_blob_options_are_invalid_arguments() {
    let fs = SimFs::new(6);
    let cases: [(BlobOptions, &str); 4] = [
        (
            BlobOptions {
                min_blob_size: 10,
                ..BlobOptions::default()
            },
            "min_blob_size",
        ),
        (
            BlobOptions {
                blob_file_size: 0,
                ..blob_options()
            },
            "blob_file_size",
        ),
        (
            BlobOptions {
                blob_garbage_collection_age_cutoff: 1.5,
                ..blob_options()
            },
            "blob_garbage_collection_age_cutoff",
        ),
        (
            BlobOptions {
                blob_garbage_collection_force_threshold: -0.1,
                ..blob_options()
            },
            "blob_garbage_collection_force_threshold",
        ),
    ];
    for (blob, name) in cases {
        match Db::open(Path::new("/db"), options(&fs, blob)) {
            Err(e @ Error::InvalidArgument { .. }) => {
                assert!(e.to_string().contains(name), "{e}")
            }
            other => panic!("{name}: {:?}", other.map(|_| ())),
        }
    }
    // The same through set_options, which changes nothing on failure.
    let db = open(&fs, blob_options());
    let cf = db.default_cf();
    let err = db
        .set_options(&cf, &[("blob_garbage_collection_age_cutoff", "2")])
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("blob_garbage_collection_age_cutoff"),
        "{err}"
    );
    db.set_options(
        &cf,
        &[("enable_blob_files", "false"), ("min_blob_size", "0")],
    )
    .unwrap();
    db.put("after", big(7)).unwrap();
    db.flush().unwrap();
    assert_eq!(db.get("after").unwrap().unwrap().to_vec(), big(7));
}

/// Blob files turned on by `set_options` apply from the next flush.
#[test]
fn set_options_turns_blob_files_on() {
    let fs = SimFs::new(7);
    let db = open(&fs, BlobOptions::default());
    db.put("a", big(1)).unwrap();
    db.flush().unwrap();
    assert_eq!(num_blob_files(&db), 0);
    let cf = db.default_cf();
    db.set_options(
        &cf,
        &[("enable_blob_files", "true"), ("min_blob_size", "100")],
    )
    .unwrap();
    db.put("b", big(2)).unwrap();
    db.flush().unwrap();
    assert_eq!(num_blob_files(&db), 1);
    assert_eq!(db.get("a").unwrap().unwrap().to_vec(), big(1));
    assert_eq!(db.get("b").unwrap().unwrap().to_vec(), big(2));
}

/// A damaged record is Corruption naming the blob file on the reads that
/// meet it, and a missing blob file fails the open naming it: never a wrong
/// value or a panic.
#[test]
fn missing_or_damaged_blob_files_are_corruption() {
    let fs = SimFs::new(8);
    let db = open(&fs, blob_options());
    db.put("k", big(1)).unwrap();
    db.flush().unwrap();
    drop(db);
    let name = blob_files_on_disk(&fs).pop().unwrap();
    let path = Path::new("/db").join(&name);
    // Damage one byte of the value (the record starts after the 24-byte
    // header and its own 21-byte header and the key).
    fs.corrupt_byte(&path, 24 + 21 + 1 + 10, 0x40).unwrap();
    let db = open(&fs, blob_options());
    for result in [
        db.get("k").map(|_| ()),
        db.range(..).try_for_each(|r| r.map(|_| ())),
    ] {
        match result {
            Err(e @ Error::Corruption { .. }) => assert!(e.to_string().contains(&name), "{e}"),
            other => panic!("damaged record read as {other:?}"),
        }
    }
    drop(db);
    // A missing one stops the open, as a missing table does.
    fs.remove(&path).unwrap();
    match Db::open(Path::new("/db"), options(&fs, blob_options())) {
        Err(e @ Error::Corruption { .. }) => {
            assert!(
                e.to_string().contains(&name) && e.to_string().contains("missing"),
                "{e}"
            )
        }
        other => panic!("opened without a blob file: {:?}", other.map(|_| ())),
    }
}
