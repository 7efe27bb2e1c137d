//! A model test of compaction filters: random writes, range deletes,
//! snapshots, flushes, compactions and reopens over two families that both
//! filter, checked against a `BTreeMap` per family.
//!
//! Whether a compaction has run over a key is up to timing, so the model
//! allows exactly what the filter may do to the newest value no snapshot
//! sees: a value starting with `x` is present or gone, one starting with
//! `u` is as written or upper-cased; anything else must read exactly as
//! written. An older version must never come back, and a snapshot must read
//! exactly what it saw when it was taken.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::compaction_filter::{CompactionFilter, Decision, FilterContext};
use strata::fs::SimFs;
use strata::{ColumnFamily, Db, DbOptions, ReadOptions, Snapshot};

use crate::util::sim_options;

/// Removes values starting with `x`; upper-cases values starting with `u`
/// (the result starts with `U`, so a second pass keeps it).
#[derive(Debug)]
struct MarkFilter;

impl CompactionFilter for MarkFilter {
    fn name(&self) -> &str {
        "MarkFilter"
    }

    fn filter(&self, _ctx: &FilterContext, _key: &[u8], value: &[u8]) -> Decision {
        match value.first() {
            Some(b'x') => Decision::Remove,
            Some(b'u') => Decision::ChangeValue(value.to_ascii_uppercase()),
            _ => Decision::Keep,
        }
    }
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const FAMILIES: [&str; 2] = ["default", "other"];

fn options(fs: &SimFs) -> DbOptions {
    DbOptions {
        compaction_filter: Some(Arc::new(MarkFilter)),
        // The smallest memtables: a few hundred writes flush several times
        // and automatic compactions run.
        write_buffer_size: 64 << 10,
        create_missing_column_families: true,
        ..sim_options(fs)
    }
}

fn open(fs: &SimFs) -> (Db, Vec<ColumnFamily>) {
    let options = options(fs);
    let other = options.cf_options();
    let db = Db::open_cf(Path::new("/db"), options, [("other", other)]).unwrap();
    let families = FAMILIES.iter().map(|n| db.cf_handle(n).unwrap()).collect();
    (db, families)
}

/// Whether `got` is what the newest write `written` may read as now.
fn allowed(written: Option<&[u8]>, got: Option<&[u8]>) -> bool {
    match (written, got) {
        (None, None) => true,
        (Some(w), Some(g)) if w == g => true,
        (Some(w), None) => w.first() == Some(&b'x'),
        (Some(w), Some(g)) => w.first() == Some(&b'u') && g == w.to_ascii_uppercase(),
        (None, Some(_)) => false,
    }
}

fn key(rng: &mut SmallRng) -> Vec<u8> {
    format!("k{:03}", rng.gen_range(0..60)).into_bytes()
}

fn value(rng: &mut SmallRng, step: usize) -> Vec<u8> {
    let mark = ["x", "u", "v", "v"][rng.gen_range(0..4)];
    // Long enough that a few hundred writes fill several memtables.
    format!("{mark}{step:05}{}", "p".repeat(rng.gen_range(0..1200))).into_bytes()
}

/// Checks every key of every family against the model now, and each live
/// snapshot against what it read when taken.
fn check(
    db: &Db,
    families: &[ColumnFamily],
    models: &[Model],
    snapshots: &[(Snapshot, Vec<Model>)],
    ctx: &str,
) {
    for (cf, model) in families.iter().zip(models) {
        let keys: Vec<Vec<u8>> = (0..60).map(|i| format!("k{i:03}").into_bytes()).collect();
        for k in &keys {
            let got = db.get_cf(cf, k).unwrap();
            let written = model.get(k).map(Vec::as_slice);
            assert!(
                allowed(written, got.as_deref()),
                "{ctx}: {} {} reads {:?}, last written {:?}",
                cf.name(),
                k.escape_ascii(),
                got.map(|g| g.escape_ascii().to_string()),
                written.map(|w| w.escape_ascii().to_string()),
            );
        }
        // The scan agrees with the gets: no key the model lacks appears.
        for entry in db.range_cf(cf, ..) {
            let (k, v) = entry.unwrap();
            assert!(
                allowed(model.get(&k).map(Vec::as_slice), Some(&v)),
                "{ctx}: scan of {} shows {}",
                cf.name(),
                k.escape_ascii()
            );
        }
    }
    for (snapshot, seen) in snapshots {
        let at = ReadOptions {
            snapshot: Some(snapshot.clone()),
            ..ReadOptions::default()
        };
        for (cf, model) in families.iter().zip(seen) {
            let scanned: Model = db.range_cf_opt(cf, &at, ..).map(|e| e.unwrap()).collect();
            let show = |m: &Model, k: &Vec<u8>| {
                m.get(k)
                    .map(|v| String::from_utf8_lossy(&v[..v.len().min(8)]).into_owned())
            };
            let changed: Vec<String> = scanned
                .keys()
                .chain(model.keys())
                .filter(|k| scanned.get(*k) != model.get(*k))
                .map(|k| {
                    format!(
                        "{}: {:?} now, {:?} then",
                        k.escape_ascii(),
                        show(&scanned, k),
                        show(model, k)
                    )
                })
                .collect();
            assert!(
                changed.is_empty(),
                "{ctx}: a snapshot's view of {} changed: {changed:?}",
                cf.name()
            );
            for (k, v) in model {
                let got = db.get_cf_opt(cf, &at, k).unwrap();
                assert_eq!(got.as_deref(), Some(v.as_slice()), "{ctx}: snapshot get");
            }
        }
    }
}

fn run_seed(seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let fs = SimFs::new(seed);
    let (mut db, mut families) = open(&fs);
    let mut models = vec![Model::new(), Model::new()];
    let mut snapshots: Vec<(Snapshot, Vec<Model>)> = Vec::new();
    for step in 0..400 {
        let f = rng.gen_range(0..FAMILIES.len());
        let ctx = format!("seed {seed} step {step}");
        match rng.gen_range(0..100) {
            0..=59 => {
                let (k, v) = (key(&mut rng), value(&mut rng, step));
                db.put_cf(&families[f], &k, &v).unwrap();
                models[f].insert(k, v);
            }
            60..=69 => {
                let k = key(&mut rng);
                db.delete_cf(&families[f], &k).unwrap();
                models[f].remove(&k);
            }
            70..=73 => {
                let (a, b) = (key(&mut rng), key(&mut rng));
                let (begin, end) = if a <= b { (a, b) } else { (b, a) };
                if begin < end {
                    db.delete_range_cf(&families[f], &begin, &end).unwrap();
                    models[f].retain(|k, _| !(begin <= *k && *k < end));
                }
            }
            74..=78 => {
                if snapshots.len() < 3 {
                    // What the snapshot must keep reading: the state when
                    // it was taken (compactions may have filtered some of
                    // the model's values already), checked against the
                    // model first.
                    let snapshot = db.snapshot();
                    let at = ReadOptions {
                        snapshot: Some(snapshot.clone()),
                        ..ReadOptions::default()
                    };
                    let seen = families
                        .iter()
                        .map(|cf| db.range_cf_opt(cf, &at, ..).map(|e| e.unwrap()).collect())
                        .collect();
                    // Nothing was written since: the latest state is the
                    // snapshot's.
                    check(&db, &families, &models, &[], &ctx);
                    snapshots.push((snapshot, seen));
                } else {
                    snapshots.remove(rng.gen_range(0..snapshots.len()));
                }
            }
            79..=84 => db.flush_cf(&families[f]).unwrap(),
            85..=89 => db.compact_range_cf(&families[f], None, None).unwrap(),
            90..=91 => {
                // Snapshots do not outlive the handle.
                snapshots.clear();
                drop(families);
                db.close().unwrap();
                (db, families) = open(&fs);
                check(
                    &db,
                    &families,
                    &models,
                    &snapshots,
                    &format!("{ctx} (reopened)"),
                );
            }
            _ => check(&db, &families, &models, &snapshots, &ctx),
        }
    }
    db.wait_for_compaction().unwrap();
    check(
        &db,
        &families,
        &models,
        &snapshots,
        &format!("seed {seed} end"),
    );
    snapshots.clear();
    for cf in &families {
        db.compact_range_cf(cf, None, None).unwrap();
    }
    check(
        &db,
        &families,
        &models,
        &[],
        &format!("seed {seed} compacted"),
    );
    // With no snapshot left, a full compaction has filtered everything.
    for (cf, model) in families.iter().zip(&models) {
        for (k, written) in model {
            let got = db.get_cf(cf, k).unwrap();
            let expected = match written.first() {
                Some(b'x') => None,
                Some(b'u') => Some(written.to_ascii_uppercase()),
                _ => Some(written.clone()),
            };
            assert_eq!(got.as_deref(), expected.as_deref(), "seed {seed}");
        }
    }
    drop(families);
    db.close().unwrap();
}

#[test]
fn compaction_filters_match_a_model_over_many_seeds() {
    for seed in 0..200 {
        run_seed(seed);
    }
}
