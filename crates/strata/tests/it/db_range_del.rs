//! `delete_range` through the database: point reads, iterators, snapshots,
//! flushes, compactions of every style and reopens, checked against a
//! `BTreeMap` per column family; and a damaged range-deletion block.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::fs::{Fs, SimFs};
use strata::{
    ColumnFamily, CompactionOptions, CompactionStyle, Db, DbOptions, ReadOptions, WriteBatch,
};

use crate::util::{open_sim, sim_options};

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

const KEYS: u32 = 150;

fn key(n: u32) -> Vec<u8> {
    format!("k{n:04}").into_bytes()
}

/// A value naming its step, long enough that memtables fill and flush.
fn value(rng: &mut SmallRng, step: usize) -> Vec<u8> {
    let mut v = format!("v{step}.").into_bytes();
    v.resize(v.len() + rng.gen_range(0..600), b'x');
    v
}

fn delete_range(map: &mut Map, begin: &[u8], end: &[u8]) {
    let doomed: Vec<Vec<u8>> = map
        .range::<[u8], _>((Bound::Included(begin), Bound::Excluded(end)))
        .map(|(k, _)| k.clone())
        .collect();
    for k in doomed {
        map.remove(&k);
    }
}

fn scan(db: &Db, cf: &ColumnFamily, ro: &ReadOptions, forward: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = db.iter_cf_opt(cf, ro);
    let mut out = Vec::new();
    if forward {
        it.seek_to_first();
    } else {
        it.seek_to_last();
    }
    while it.valid() {
        out.push((it.key().unwrap().to_vec(), it.value().unwrap().to_vec()));
        if forward {
            it.next();
        } else {
            it.prev();
        }
    }
    it.status().unwrap();
    if !forward {
        out.reverse();
    }
    out
}

#[test]
fn deleted_ranges_stay_deleted_through_flush_compaction_and_reopen() {
    let fs = SimFs::new(1);
    let mut db = open_sim(&fs);
    for n in 0..100 {
        db.put(key(n), b"v").unwrap();
    }
    let before = db.snapshot();
    db.delete_range(key(10), key(20)).unwrap();
    db.put(key(15), b"again").unwrap();
    let check = |db: &Db, ro: &ReadOptions, deleted: bool| {
        for n in 0..100 {
            let got = db.get_opt(ro, key(n)).unwrap();
            let expect: Option<&[u8]> = match n {
                15 if deleted => Some(b"again"),
                10..=19 if deleted => None,
                _ => Some(b"v"),
            };
            assert_eq!(got.as_deref(), expect, "key {n}");
        }
        let cf = db.default_cf();
        let forward = scan(db, &cf, ro, true);
        assert_eq!(forward.len(), if deleted { 91 } else { 100 });
        assert_eq!(forward, scan(db, &cf, ro, false));
    };
    let at_snapshot = ReadOptions {
        snapshot: Some(before.clone()),
        ..ReadOptions::default()
    };
    check(&db, &ReadOptions::default(), true);
    check(&db, &at_snapshot, false);
    db.flush().unwrap();
    check(&db, &ReadOptions::default(), true);
    check(&db, &at_snapshot, false);
    db.compact_range(None, None).unwrap();
    check(&db, &ReadOptions::default(), true);
    check(&db, &at_snapshot, false);
    drop(before);
    db.compact_range(None, None).unwrap();
    check(&db, &ReadOptions::default(), true);
    drop(db);
    db = open_sim(&fs);
    check(&db, &ReadOptions::default(), true);
}

#[test]
fn a_memtable_of_tombstones_only_is_flushed_and_survives_a_reopen() {
    let fs = SimFs::new(2);
    let mut db = open_sim(&fs);
    for n in 0..50 {
        db.put(key(n), b"v").unwrap();
    }
    db.flush().unwrap();
    db.delete_range(key(0), key(25)).unwrap();
    db.flush().unwrap();
    assert_eq!(
        db.property("strata.num-files-at-level0").as_deref(),
        Some("2"),
        "the tombstone-only memtable made a table"
    );
    // Recovery must not need the WAL: the table holds the tombstone.
    drop(db);
    db = open_sim(&fs);
    assert_eq!(db.get(key(3)).unwrap(), None);
    assert_eq!(db.get(key(30)).unwrap().as_deref(), Some(&b"v"[..]));
    // Unflushed, the tombstone survives through the WAL.
    db.delete_range(key(25), key(40)).unwrap();
    drop(db);
    db = open_sim(&fs);
    assert_eq!(db.get(key(30)).unwrap(), None);
    assert_eq!(
        scan(&db, &db.default_cf(), &ReadOptions::default(), true).len(),
        10
    );
}

/// A get after deleting a 100k-key range reads one tombstone, not 100k
/// deletions: the memtable holds a single range deletion beside the puts.
#[test]
fn deleting_a_wide_range_is_one_tombstone() {
    let fs = SimFs::new(3);
    let db = Db::open(
        Path::new("/db"),
        DbOptions {
            write_buffer_size: 64 << 20,
            ..sim_options(&fs)
        },
    )
    .unwrap();
    let mut batch = WriteBatch::new();
    for n in 0..100_000u32 {
        batch.put(format!("w{n:06}"), b"v").unwrap();
    }
    db.write(&Default::default(), batch).unwrap();
    db.delete_range("w000000", "w100000").unwrap();
    let prop = |name: &str| db.property(name).unwrap();
    assert_eq!(prop("strata.num-range-deletes-active-mem-table"), "1");
    assert_eq!(prop("strata.num-entries-active-mem-table"), "100000");
    assert_eq!(db.get("w054321").unwrap(), None);
    let mut it = db.iter();
    it.seek_to_first();
    assert!(!it.valid());
}

#[test]
fn inverted_ranges_are_invalid_and_empty_ones_write_nothing() {
    let fs = SimFs::new(4);
    let db = open_sim(&fs);
    db.put("a", "1").unwrap();
    let err = db.delete_range("b", "a").unwrap_err();
    assert!(
        matches!(err, strata::Error::InvalidArgument { .. })
            && err.to_string().contains("delete_range"),
        "{err}"
    );
    // As RocksDB's DeleteRange: an empty range is no error and no write.
    let seq = db.latest_sequence_number();
    db.delete_range("a", "a").unwrap();
    db.delete_range_cf(&db.default_cf(), "a", "a").unwrap();
    assert_eq!(db.latest_sequence_number(), seq);
    assert_eq!(db.get("a").unwrap().as_deref(), Some(&b"1"[..]));
    // A batch refuses an empty range at once; an inverted one only when it
    // is written, since the family's comparator decides what is inverted.
    let mut batch = strata::WriteBatch::new();
    assert!(batch.delete_range("a", "a").is_err());
    batch.delete_range("b", "a").unwrap();
    let err = db
        .write(&strata::WriteOptions::default(), batch)
        .unwrap_err();
    assert!(err.to_string().contains("must sort before"), "{err}");
    assert_eq!(db.latest_sequence_number(), seq);
}

#[test]
fn a_damaged_range_deletion_block_is_corruption() {
    let fs = SimFs::new(5);
    let db = open_sim(&fs);
    db.put("a", "1").unwrap();
    db.delete_range("b", "tombstone-end-marker").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    let names = strata::fs::Fs::list(&fs, Path::new("/db")).unwrap();
    let table = names.iter().find(|n| n.ends_with(".sst")).unwrap();
    let path = Path::new("/db").join(table);
    let bytes = fs.file_contents(&path).unwrap();
    let at = bytes
        .windows(b"tombstone-end-marker".len())
        .position(|w| w == b"tombstone-end-marker")
        .unwrap();
    fs.corrupt_byte(&path, at as u64 + 3, 0x20).unwrap();
    let read = Db::open(Path::new("/db"), sim_options(&fs)).and_then(|db| db.get("c").map(|_| ()));
    let err = read.unwrap_err();
    assert!(err.is_corruption(), "{err}");
}

/// Compaction options of the three styles, with small files so data moves.
fn styles() -> [CompactionOptions; 3] {
    [
        crate::util::small_leveled(),
        CompactionOptions {
            compaction_style: CompactionStyle::Universal,
            level0_file_num_compaction_trigger: 3,
            target_file_size_base: 8 << 10,
            ..CompactionOptions::default()
        },
        // FIFO drops tables only past 1 GiB: here it only moves nothing,
        // and manual compactions must keep tombstones right.
        CompactionOptions {
            compaction_style: CompactionStyle::Fifo,
            ..CompactionOptions::default()
        },
    ]
}

struct Run {
    options: DbOptions,
    /// `None` only while reopening: one handle holds the lock at a time.
    db: Option<Db>,
    other: ColumnFamily,
    /// Default family, then "other".
    models: [Map; 2],
    snapshots: Vec<(strata::Snapshot, [Map; 2])>,
    rng: SmallRng,
    ctx: String,
}

impl Run {
    fn open(options: &DbOptions) -> (Db, ColumnFamily) {
        let db = Db::open_cf(
            Path::new("/db"),
            options.clone(),
            [("other", options.cf_options())],
        )
        .unwrap();
        let other = db.cf_handle("other").unwrap();
        (db, other)
    }

    fn db(&self) -> &Db {
        self.db.as_ref().expect("open between steps")
    }

    fn cf(&self, i: usize) -> ColumnFamily {
        if i == 0 {
            self.db().default_cf()
        } else {
            self.other.clone()
        }
    }

    fn random_range(&mut self) -> (Vec<u8>, Vec<u8>) {
        let a = self.rng.gen_range(0..KEYS);
        let width = if self.rng.gen_bool(0.9) {
            self.rng.gen_range(1..12)
        } else {
            self.rng.gen_range(1..KEYS)
        };
        (key(a), key(a + width))
    }

    fn step(&mut self, step: usize) {
        let i = usize::from(self.rng.gen_bool(0.4));
        let cf = self.cf(i);
        match self.rng.gen_range(0..100) {
            0..=34 => {
                let (k, v) = (
                    key(self.rng.gen_range(0..KEYS)),
                    format!("v{step}").into_bytes(),
                );
                self.db().put_cf(&cf, &k, &v).unwrap();
                self.models[i].insert(k, v);
            }
            35..=41 => {
                let k = key(self.rng.gen_range(0..KEYS));
                self.db().delete_cf(&cf, &k).unwrap();
                self.models[i].remove(&k);
            }
            42..=49 => {
                let (b, e) = self.random_range();
                self.db().delete_range_cf(&cf, &b, &e).unwrap();
                delete_range(&mut self.models[i], &b, &e);
            }
            50..=56 => {
                // A batch mixing both families and every kind of write.
                let mut batch = WriteBatch::new();
                for _ in 0..self.rng.gen_range(1..8) {
                    let j = usize::from(self.rng.gen_bool(0.5));
                    let cf = self.cf(j);
                    match self.rng.gen_range(0..10) {
                        0..=5 => {
                            let k = key(self.rng.gen_range(0..KEYS));
                            let v = value(&mut self.rng, step);
                            batch.put_cf(&cf, &k, &v).unwrap();
                            self.models[j].insert(k, v);
                        }
                        6..=7 => {
                            let (b, e) = self.random_range();
                            batch.delete_range_cf(&cf, &b, &e).unwrap();
                            delete_range(&mut self.models[j], &b, &e);
                        }
                        _ => {
                            let k = key(self.rng.gen_range(0..KEYS));
                            batch.delete_cf(&cf, &k).unwrap();
                            self.models[j].remove(&k);
                        }
                    }
                }
                self.db().write(&Default::default(), batch).unwrap();
            }
            57..=66 => {
                let k = key(self.rng.gen_range(0..KEYS));
                let got = self.db().get_cf(&cf, &k).unwrap().map(|v| v.to_vec());
                assert_eq!(
                    got.as_ref(),
                    self.models[i].get(&k),
                    "{} step {step}: get {k:?}",
                    self.ctx
                );
            }
            67..=69 => {
                let keys: Vec<Vec<u8>> = (0..5).map(|_| key(self.rng.gen_range(0..KEYS))).collect();
                let got = self.db().multi_get_cf(&cf, &ReadOptions::default(), &keys);
                for (k, g) in keys.iter().zip(got) {
                    let g = g.unwrap().map(|v| v.to_vec());
                    assert_eq!(
                        g.as_ref(),
                        self.models[i].get(k),
                        "{} step {step}: multi_get",
                        self.ctx
                    );
                }
            }
            70..=77 => self.check_iteration(i, None, step),
            78..=81 => {
                if self.snapshots.len() < 3 {
                    self.snapshots
                        .push((self.db().snapshot(), self.models.clone()));
                } else {
                    let (snap, models) = self.snapshots.remove(self.rng.gen_range(0..3));
                    self.check_iteration(i, Some((snap, &models[i])), step);
                }
            }
            82..=87 => self.db().flush_cf(&cf).unwrap(),
            88..=92 => {
                let (b, e) = self.random_range();
                let (b, e) = if self.rng.gen_bool(0.3) {
                    (None, None)
                } else {
                    (Some(b), Some(e))
                };
                self.db()
                    .compact_range_cf(&cf, b.as_deref(), e.as_deref())
                    .unwrap();
            }
            93..=95 => {
                if let Some(k) = self.snapshots.len().checked_sub(1) {
                    let models = self.snapshots[k].1[i].clone();
                    let snap = self.snapshots[k].0.clone();
                    self.check_iteration(i, Some((snap, &models)), step);
                }
            }
            _ => {
                self.snapshots.clear();
                drop(self.db.take());
                let (db, other) = Run::open(&self.options);
                self.db = Some(db);
                self.other = other;
            }
        }
    }

    /// Forward, backward and seeks with random bounds, at `snapshot` (with
    /// its model) or the latest state.
    fn check_iteration(
        &mut self,
        i: usize,
        snapshot: Option<(strata::Snapshot, &Map)>,
        step: usize,
    ) {
        let cf = self.cf(i);
        let lower = self
            .rng
            .gen_bool(0.5)
            .then(|| key(self.rng.gen_range(0..KEYS)));
        let upper = self
            .rng
            .gen_bool(0.5)
            .then(|| key(self.rng.gen_range(0..KEYS)));
        let model = snapshot.as_ref().map_or(&self.models[i], |(_, m)| *m);
        let expected: Vec<(Vec<u8>, Vec<u8>)> = model
            .iter()
            .filter(|(k, _)| {
                lower.as_ref().is_none_or(|l| *k >= l) && upper.as_ref().is_none_or(|u| *k < u)
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let ro = ReadOptions {
            snapshot: snapshot.as_ref().map(|(s, _)| s.clone()),
            iterate_lower_bound: lower.clone(),
            iterate_upper_bound: upper.clone(),
            ..ReadOptions::default()
        };
        let ctx = format!(
            "{} step {step} cf {i} bounds {lower:?}..{upper:?} snapshot {:?}",
            self.ctx, ro.snapshot
        );
        assert_eq!(scan(self.db(), &cf, &ro, true), expected, "{ctx}: forward");
        assert_eq!(
            scan(self.db(), &cf, &ro, false),
            expected,
            "{ctx}: backward"
        );
        let mut it = self.db().iter_cf_opt(&cf, &ro);
        let target = key(self.rng.gen_range(0..KEYS));
        it.seek(&target);
        let want = expected.iter().find(|(k, _)| *k >= target);
        assert_eq!(
            it.valid().then(|| it.key().unwrap().to_vec()),
            want.map(|(k, _)| k.clone()),
            "{ctx}: seek {target:?}"
        );
        it.seek_for_prev(&target);
        let want = expected.iter().rev().find(|(k, _)| *k <= target);
        assert_eq!(
            it.valid().then(|| it.key().unwrap().to_vec()),
            want.map(|(k, _)| k.clone()),
            "{ctx}: seek_for_prev {target:?}"
        );
        if let Some((snap, model)) = snapshot {
            let ro = ReadOptions {
                snapshot: Some(snap),
                ..ReadOptions::default()
            };
            let k = key(self.rng.gen_range(0..KEYS));
            let got = self
                .db()
                .get_cf_opt(&cf, &ro, &k)
                .unwrap()
                .map(|v| v.to_vec());
            assert_eq!(
                got.as_ref(),
                model.get(&k),
                "{ctx}: get {k:?} at the snapshot"
            );
        }
    }
}

/// Runs the model; returns the number of files below L0 at the end, and the
/// most subcompactions one compaction ran as (from the LOG's events).
fn model_run(seed: u64, compaction: CompactionOptions, steps: usize) -> (usize, usize) {
    let fs = SimFs::new(seed);
    let options = DbOptions {
        compaction,
        create_missing_column_families: true,
        ..sim_options(&fs)
    };
    let (db, other) = Run::open(&options);
    let mut run = Run {
        options,
        db: Some(db),
        other,
        models: [Map::new(), Map::new()],
        snapshots: Vec::new(),
        rng: SmallRng::seed_from_u64(seed),
        ctx: format!("seed {seed}"),
    };
    for step in 0..steps {
        run.step(step);
    }
    run.snapshots.clear();
    run.db().wait_for_compaction().unwrap();
    for i in 0..2 {
        let cf = run.cf(i);
        let all: Map = scan(run.db(), &cf, &ReadOptions::default(), true)
            .into_iter()
            .collect();
        assert_eq!(all, run.models[i], "seed {seed}: final state of family {i}");
    }
    let deeper = (1..7)
        .map(|l| {
            let n = run.db().property(&format!("strata.num-files-at-level{l}"));
            n.and_then(|n| n.parse::<usize>().ok()).unwrap_or(0)
        })
        .sum();
    (deeper, most_subcompactions(&fs))
}

/// The largest `num_subcompactions` of the compaction events in every LOG
/// file (the current one and those earlier opens renamed).
fn most_subcompactions(fs: &SimFs) -> usize {
    let marker = "\"num_subcompactions\": ";
    fs.list(Path::new("/db"))
        .unwrap()
        .iter()
        .filter(|name| name.starts_with("LOG"))
        .flat_map(|name| {
            let bytes = fs.file_contents(&Path::new("/db").join(name)).unwrap();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            text.split(marker)
                .skip(1)
                .filter_map(|rest| rest.split(',').next()?.trim().parse::<usize>().ok())
                .collect::<Vec<_>>()
        })
        .max()
        .unwrap_or(0)
}

#[test]
fn model_leveled() {
    for seed in 0..6 {
        let (deeper, _) = model_run(seed, styles()[0].clone(), 2500);
        assert!(deeper > 0, "seed {seed}: compaction moved nothing down");
    }
}

/// The leveled and universal models again, with compactions split across
/// up to four threads: range tombstones, snapshots and reopens must come out
/// the same whatever the cuts between subcompactions.
#[test]
fn model_with_subcompactions() {
    for (seed, style) in [(300, 0), (301, 0), (302, 1), (303, 1)] {
        let compaction = CompactionOptions {
            max_subcompactions: 4,
            // This model's tables hold a few kilobytes: a job is split only
            // when it can fill an output file per subcompaction.
            target_file_size_base: 512,
            // Two compaction threads: universal merges disjoint runs in
            // parallel, leveled runs disjoint levels.
            max_background_jobs: 3,
            ..styles()[style].clone()
        };
        let (deeper, most) = model_run(seed, compaction, 2500);
        assert!(deeper > 0, "seed {seed}: compaction moved nothing down");
        assert!(most > 1, "seed {seed}: no compaction was split");
    }
}

#[test]
fn model_universal() {
    for seed in 100..106 {
        let (deeper, _) = model_run(seed, styles()[1].clone(), 2500);
        assert!(deeper > 0, "seed {seed}: compaction moved nothing down");
    }
}

#[test]
fn model_fifo() {
    for seed in 200..203 {
        model_run(seed, styles()[2].clone(), 2500);
    }
}

/// A range deletion ends a key's merge chain as a deletion does: operands
/// above it merge over nothing, those below it are gone, in every source.
#[test]
fn a_range_deletion_ends_merge_chains() {
    let fs = SimFs::new(6);
    let db = Db::open(
        Path::new("/db"),
        DbOptions {
            merge_operator: Some(std::sync::Arc::new(
                strata::merge::StringAppendOperator::new(b",".to_vec()),
            )),
            ..sim_options(&fs)
        },
    )
    .unwrap();
    db.put("k", "a").unwrap();
    db.merge("k", "b").unwrap();
    db.merge("m", "x").unwrap();
    db.delete_range("k", "l").unwrap();
    db.merge("k", "c").unwrap();
    db.merge("k", "d").unwrap();
    let check = |db: &Db, when: &str| {
        assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"c,d"[..]), "{when}");
        assert_eq!(db.get("m").unwrap().as_deref(), Some(&b"x"[..]), "{when}");
        let cf = db.default_cf();
        let want = vec![
            (b"k".to_vec(), b"c,d".to_vec()),
            (b"m".to_vec(), b"x".to_vec()),
        ];
        assert_eq!(scan(db, &cf, &ReadOptions::default(), true), want, "{when}");
        assert_eq!(
            scan(db, &cf, &ReadOptions::default(), false),
            want,
            "{when}"
        );
    };
    check(&db, "in the memtable");
    db.flush().unwrap();
    check(&db, "in a table");
    db.merge("k", "e").unwrap();
    db.delete_range("a", "l").unwrap();
    db.merge("k", "f").unwrap();
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"f"[..]));
}
