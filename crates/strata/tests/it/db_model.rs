//! Random operation sequences checked against a `BTreeMap` model, with flushes,
//! reopens and hundreds of L0 files.

use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use strata::fs::{Fs, SimFs};

use strata::{
    BlobOptions, CompactionOptions, CompressionType, Db, DbOptions, ReadOptions, ReadTier,
    WriteBatch, WriteOptions,
};

use crate::util::{drain_from_both_ends, scan_both_ways, sim_options};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn random_key(rng: &mut SmallRng) -> Vec<u8> {
    // A small key space so keys are overwritten and deleted often; the empty key
    // is one of them.
    let n = rng.gen_range(0..200u32);
    if n == 0 {
        Vec::new()
    } else {
        format!("key{n:04}").into_bytes()
    }
}

fn random_value(rng: &mut SmallRng) -> Vec<u8> {
    let len = rng.gen_range(0..300);
    (0..len).map(|_| rng.gen_range(b'a'..=b'z')).collect()
}

fn check_all(db: &strata::Db, model: &Model, seed: u64, step: usize) {
    let mut keys = Vec::new();
    for n in 0..200u32 {
        let key = if n == 0 {
            Vec::new()
        } else {
            format!("key{n:04}").into_bytes()
        };
        check_memory_only(db, model, &key, seed, step);
        let got = db.get(&key).unwrap().map(|v| v.to_vec());
        assert_eq!(
            got.as_ref(),
            model.get(&key),
            "seed {seed} step {step} key {key:?}"
        );
        // The full read may have cached what the memory-only one lacked.
        check_memory_only(db, model, &key, seed, step);
        keys.push(key);
    }
    // The batched read, keys out of order and some twice, answers in the
    // caller's order exactly as the gets did.
    let mut rng = SmallRng::seed_from_u64(seed ^ step as u64);
    let mut batch: Vec<Vec<u8>> = (0..rng.gen_range(1..300))
        .map(|_| keys[rng.gen_range(0..keys.len())].clone())
        .collect();
    batch.push(b"key9999".to_vec());
    let got = db.multi_get(&ReadOptions::default(), &batch);
    assert_eq!(got.len(), batch.len());
    for (key, value) in batch.iter().zip(got) {
        assert_eq!(
            value.unwrap().map(|v| v.to_vec()).as_ref(),
            model.get(key),
            "multi_get: seed {seed} step {step} key {key:?}"
        );
    }
}

/// A read from memory only (`kBlockCacheTier`) gives the model's answer
/// or `Incomplete`.
fn check_memory_only(db: &Db, model: &Model, key: &[u8], seed: u64, step: usize) {
    let memory = ReadOptions {
        read_tier: ReadTier::BlockCache,
        ..ReadOptions::default()
    };
    match db.get_opt(&memory, key) {
        Ok(got) => assert_eq!(
            got.map(|v| v.to_vec()).as_ref(),
            model.get(key),
            "memory-only read: seed {seed} step {step} key {key:?}"
        ),
        Err(strata::Error::Incomplete { .. }) => {}
        Err(e) => panic!("memory-only read: seed {seed} step {step} key {key:?}: {e}"),
    }
}

/// Scans in both directions with random bounds, seeks and direction changes,
/// comparing with the model; also the double-ended `range`.
fn check_iteration(db: &strata::Db, model: &Model, rng: &mut SmallRng, seed: u64, step: usize) {
    let lower = rng.gen_bool(0.5).then(|| random_key(rng));
    let upper = rng.gen_bool(0.5).then(|| random_key(rng));
    let expected: Vec<(Vec<u8>, Vec<u8>)> = model
        .iter()
        .filter(|(k, _)| {
            lower.as_ref().is_none_or(|l| *k >= l) && upper.as_ref().is_none_or(|u| *k < u)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let ro = ReadOptions {
        iterate_lower_bound: lower.clone(),
        iterate_upper_bound: upper.clone(),
        ..ReadOptions::default()
    };
    let ctx = format!("seed {seed} step {step} bounds {lower:?}..{upper:?}");
    let mut it = db.iter_opt(&ro);
    let (forward, backward) = scan_both_ways(&mut it);
    assert_eq!(forward, expected, "{ctx}: forward");
    assert_eq!(backward, expected, "{ctx}: backward");
    // A seek, then a few steps in mixed directions.
    let target = random_key(rng);
    it.seek(&target);
    let mut pos = expected.iter().position(|(k, _)| *k >= target);
    for _ in 0..6 {
        match pos {
            Some(i) => {
                assert!(it.valid(), "{ctx}: seek {target:?} should find entry {i}");
                assert_eq!(it.key(), Some(&expected[i].0[..]), "{ctx}");
                if rng.gen_bool(0.5) {
                    it.next();
                    pos = (i + 1 < expected.len()).then_some(i + 1);
                } else {
                    it.prev();
                    pos = i.checked_sub(1);
                }
            }
            None => {
                assert!(!it.valid(), "{ctx}: seek {target:?} should find nothing");
                break;
            }
        }
    }
    // The Rust range, from both ends at once.
    let range = db.range((
        lower
            .as_deref()
            .map_or(std::ops::Bound::Unbounded, std::ops::Bound::Included),
        upper
            .as_deref()
            .map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded),
    ));
    let (mut front, back) = drain_from_both_ends(range, rng);
    let keys = |v: &[(Vec<u8>, Vec<u8>)]| -> Vec<String> {
        v.iter()
            .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
            .collect()
    };
    let (front_keys, back_keys) = (keys(&front), keys(&back));
    front.extend(back);
    if front != expected {
        panic!(
            "{ctx}: range: front {front_keys:?} back {back_keys:?} expected {:?}",
            keys(&expected)
        );
    }
}

/// With blob files on, just after an open: some are linked, and exactly
/// the linked ones are on disk (the open deleted the obsolete ones).
fn check_blob_files(db: &Db, fs: &SimFs, seed: u64) {
    let linked: usize = db
        .property("strata.num-blob-files")
        .unwrap()
        .parse()
        .unwrap();
    let on_disk = strata::fs::Fs::list(fs, Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|name| name.ends_with(".blob"))
        .count();
    assert!(linked > 0, "seed {seed}: no blob file linked");
    assert_eq!(linked, on_disk, "seed {seed}: linked vs on disk");
}

/// Options of the model runs: the test defaults, with `compaction` and
/// `blob` applied.
fn model_options(fs: &SimFs, compaction: &CompactionOptions, blob: &BlobOptions) -> DbOptions {
    DbOptions {
        compaction: compaction.clone(),
        blob: blob.clone(),
        ..sim_options(fs)
    }
}

/// Runs `steps` random operations, waits for background work to settle, and
/// returns the number of files per level (counted after the wait, so the
/// shape does not depend on how far compaction got on a loaded machine).
fn run(seed: u64, steps: usize, compaction: &CompactionOptions) -> Vec<usize> {
    run_with(seed, steps, compaction, &BlobOptions::default(), false)
}

/// Ingests one to three `SstFileWriter` files of random puts and deletes
/// (some with a range deletion over their own span) and applies them to the
/// model: a file's range deletion removes older data, then its entries land.
fn ingest_random(db: &Db, fs: &SimFs, rng: &mut SmallRng, model: &mut Model, step: usize) {
    let mut keys: Vec<Vec<u8>> = (0..rng.gen_range(1..40)).map(|_| random_key(rng)).collect();
    keys.sort();
    keys.dedup();
    let files = rng.gen_range(1..=3usize).min(keys.len());
    let per_file = keys.len().div_ceil(files);
    fs.create_dir_all(Path::new("/in")).unwrap();
    let mut paths = Vec::new();
    for (i, chunk) in keys.chunks(per_file).enumerate() {
        let path = Path::new("/in").join(format!("{step}-{i}.sst"));
        let mut w = strata::SstFileWriter::create_with_fs(fs, &path, &Default::default()).unwrap();
        let (first, last) = (&chunk[0], &chunk[chunk.len() - 1]);
        if first < last && rng.gen_bool(0.3) {
            w.delete_range(first, last).unwrap();
            let covered: Vec<Vec<u8>> = model
                .range(first.clone()..last.clone())
                .map(|(k, _)| k.clone())
                .collect();
            for k in covered {
                model.remove(&k);
            }
        }
        for k in chunk {
            if rng.gen_bool(0.25) {
                w.delete(k).unwrap();
                model.remove(k);
            } else {
                let v = random_value(rng);
                w.put(k, &v).unwrap();
                model.insert(k.clone(), v);
            }
        }
        w.finish().unwrap();
        paths.push(path);
    }
    let options = strata::IngestExternalFileOptions {
        move_files: rng.gen_bool(0.5),
        verify_checksums_before_ingest: rng.gen_bool(0.5),
        ..Default::default()
    };
    db.ingest_external_file(&paths, &options).unwrap();
    for path in &paths {
        let _ = fs.remove(path);
    }
}

/// [`run`] with key-value separation set by `blob`, and with `ingest`
/// ingestion of `SstFileWriter` files among the operations.
fn run_with(
    seed: u64,
    steps: usize,
    compaction: &CompactionOptions,
    blob: &BlobOptions,
    ingest: bool,
) -> Vec<usize> {
    let fs = SimFs::new(seed);
    let mut rng = SmallRng::seed_from_u64(seed);
    let open =
        |fs: &SimFs| Db::open(Path::new("/db"), model_options(fs, compaction, blob)).unwrap();
    let mut db = open(&fs);
    let mut model = Model::new();
    // Snapshots with the model state they must keep seeing.
    let mut snapshots: Vec<(strata::Snapshot, Model)> = Vec::new();
    for step in 0..steps {
        match rng.gen_range(0..100) {
            0..=44 => {
                let (k, v) = (random_key(&mut rng), random_value(&mut rng));
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            45..=59 => {
                let k = random_key(&mut rng);
                db.delete(&k).unwrap();
                model.remove(&k);
            }
            60..=74 => {
                let mut batch = WriteBatch::new();
                for _ in 0..rng.gen_range(1..10) {
                    let k = random_key(&mut rng);
                    if rng.gen_bool(0.3) {
                        batch.delete(&k).unwrap();
                        model.remove(&k);
                    } else {
                        let v = random_value(&mut rng);
                        batch.put(&k, &v).unwrap();
                        model.insert(k, v);
                    }
                }
                let sync = rng.gen_bool(0.1);
                db.write(
                    &WriteOptions {
                        sync,
                        ..WriteOptions::default()
                    },
                    batch,
                )
                .unwrap();
            }
            75..=85 => {
                let k = random_key(&mut rng);
                assert_eq!(
                    db.get(&k).unwrap().map(|v| v.to_vec()).as_ref(),
                    model.get(&k),
                    "seed {seed} step {step}"
                );
            }
            86..=89 => check_iteration(&db, &model, &mut rng, seed, step),
            90..=93 => {
                if snapshots.len() < 4 {
                    snapshots.push((db.snapshot(), model.clone()));
                } else {
                    snapshots.remove(rng.gen_range(0..snapshots.len()));
                }
            }
            94..=96 => db.flush().unwrap(),
            97 if ingest => ingest_random(&db, &fs, &mut rng, &mut model, step),
            _ => {
                // Reopen: snapshots do not survive it.
                snapshots.clear();
                drop(db);
                db = open(&fs);
                check_all(&db, &model, seed, step);
            }
        }
        if step % 500 == 0 {
            for (snap, expected) in &snapshots {
                let ro = ReadOptions {
                    snapshot: Some(snap.clone()),
                    ..ReadOptions::default()
                };
                let k = random_key(&mut rng);
                assert_eq!(
                    db.get_opt(&ro, &k).unwrap().map(|v| v.to_vec()).as_ref(),
                    expected.get(&k),
                    "seed {seed} step {step}: snapshot read"
                );
                let seen: Vec<(Vec<u8>, Vec<u8>)> =
                    db.range_opt(&ro, ..).map(|r| r.unwrap()).collect();
                let want: Vec<(Vec<u8>, Vec<u8>)> = expected
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(seen, want, "seed {seed} step {step}: snapshot iteration");
            }
        }
    }
    check_all(&db, &model, seed, steps);
    db.wait_for_compaction().unwrap();
    check_all(&db, &model, seed, steps);
    if blob.enable_blob_files {
        // A sweep that ran while a read held an older version left its
        // obsolete files for later; reopening removes whatever is left.
        // No compaction after this open, so none writes new blob files
        // while they are counted.
        drop(db);
        let quiet = CompactionOptions {
            disable_auto_compactions: true,
            ..compaction.clone()
        };
        db = Db::open(Path::new("/db"), model_options(&fs, &quiet, blob)).unwrap();
        check_all(&db, &model, seed, steps);
        check_blob_files(&db, &fs, seed);
    }
    (0..7)
        .map(|level| {
            db.property(&format!("strata.num-files-at-level{level}"))
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

#[test]
fn model_many_seeds() {
    for seed in 0..12 {
        run(seed, 3000, &CompactionOptions::default());
    }
}

#[test]
fn model_with_hundreds_of_l0_files() {
    // Small memtables, many writes and no compaction: L0 grows.
    let no_compaction = CompactionOptions {
        disable_auto_compactions: true,
        ..CompactionOptions::default()
    };
    let files = run(1000, 8_000, &no_compaction)[0];
    assert!(files >= 100, "only {files} L0 files");
}

/// Background compaction with tiny levels, so data moves through several
/// levels while snapshots are held and released and the database reopens.
#[test]
fn model_with_background_compaction() {
    for (seed, dynamic) in (2000..2008).zip([true, false].into_iter().cycle()) {
        let compaction = CompactionOptions {
            level0_file_num_compaction_trigger: 2,
            max_bytes_for_level_base: 64 << 10,
            max_bytes_for_level_multiplier: 2.0,
            target_file_size_base: 16 << 10,
            level_compaction_dynamic_level_bytes: dynamic,
            max_background_jobs: 3,
            max_subcompactions: if seed % 4 >= 2 { 3 } else { 1 },
            ..CompactionOptions::default()
        };
        let files = run(seed, 4000, &compaction);
        let deeper: usize = files[1..].iter().sum();
        // Once compaction is idle, L0 is below its trigger.
        assert!(
            deeper > 0 && files[0] < 2,
            "seed {seed}: files per level {files:?}"
        );
    }
}

/// Universal compaction in the background, with the same model checks:
/// merging runs of several levels (and L0 into L0) must keep every read right.
#[test]
fn model_with_universal_compaction() {
    for seed in 3000..3006u64 {
        let compaction = CompactionOptions {
            compaction_style: strata::CompactionStyle::Universal,
            level0_file_num_compaction_trigger: 3,
            target_file_size_base: 16 << 10,
            compaction_options_universal: strata::UniversalOptions {
                // Vary the pick: a loose ratio merges more runs at once.
                size_ratio: if seed % 2 == 0 { 1 } else { 20 },
                max_size_amplification_percent: 150,
                ..strata::UniversalOptions::default()
            },
            // Two compaction threads for half the seeds: disjoint runs
            // merge in parallel, split into subcompactions too.
            max_background_jobs: if seed % 4 >= 2 { 3 } else { 2 },
            max_subcompactions: if seed % 4 == 3 { 2 } else { 1 },
            ..CompactionOptions::default()
        };
        let files = run(seed, 4000, &compaction);
        let deeper: usize = files[1..].iter().sum();
        assert!(deeper > 0, "seed {seed}: files per level {files:?}");
    }
}

/// Blob files on: values of 100 bytes and more (about two thirds of the
/// model's) go to small blob files, while compaction moves data down
/// several levels and, for half the seeds, garbage collection relocates the
/// oldest files' values. Snapshots, reopens and both scan directions are
/// checked as in the other runs.
#[test]
fn model_with_blob_files() {
    for seed in 4000..4008u64 {
        let compaction = CompactionOptions {
            level0_file_num_compaction_trigger: 2,
            max_bytes_for_level_base: 64 << 10,
            max_bytes_for_level_multiplier: 2.0,
            target_file_size_base: 16 << 10,
            max_background_jobs: 3,
            max_subcompactions: if seed % 4 >= 2 { 2 } else { 1 },
            ..CompactionOptions::default()
        };
        let blob = BlobOptions {
            enable_blob_files: true,
            min_blob_size: 100,
            blob_file_size: 8 << 10,
            blob_compression_type: if seed % 2 == 0 {
                CompressionType::Lz4
            } else {
                CompressionType::None
            },
            // Some seeds keep values in the tables of the upper levels.
            blob_file_starting_level: (seed % 3) as usize,
            enable_blob_garbage_collection: seed % 4 < 2,
            blob_garbage_collection_age_cutoff: 0.5,
            // And forced collection for a quarter of them.
            blob_garbage_collection_force_threshold: if seed % 4 == 0 { 0.3 } else { 1.0 },
            ..BlobOptions::default()
        };
        run_with(seed, 4000, &compaction, &blob, true);
    }
}

/// Ingestion mixed into writes, snapshots, reopens and background
/// compaction, leveled (dynamic levels for half) and universal: files land
/// at sequence number 0 where nothing overlaps them, else above every write
/// so far, and every read matches the model.
#[test]
fn model_with_ingestion() {
    for seed in 5000..5008u64 {
        let compaction = CompactionOptions {
            compaction_style: if seed % 3 == 2 {
                strata::CompactionStyle::Universal
            } else {
                strata::CompactionStyle::Level
            },
            level0_file_num_compaction_trigger: 2,
            max_bytes_for_level_base: 64 << 10,
            max_bytes_for_level_multiplier: 2.0,
            target_file_size_base: 16 << 10,
            level_compaction_dynamic_level_bytes: seed % 2 == 0,
            max_background_jobs: 3,
            ..CompactionOptions::default()
        };
        run_with(seed, 4000, &compaction, &BlobOptions::default(), true);
    }
}
