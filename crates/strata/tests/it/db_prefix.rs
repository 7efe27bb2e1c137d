//! Prefix seeks against a `BTreeMap` model: whatever the prefix extractor,
//! filters, memtable bloom and bounds, a seek returns exactly what a full
//! scan of the model returns over the same range. Reopens change the
//! extractor, so tables built with another one (or none) are read too, and
//! the index and filter layout (whole or partitioned).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::fs::SimFs;
use strata::{DbOptions, IndexType, PrefixExtractor, ReadOptions, Statistics, Ticker};

use crate::util::sim_options;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// Keys over a tiny alphabet and lengths 0..=5, so prefixes tie, some keys
/// are shorter than a fixed prefix, and 0xff runs test the last prefix.
fn random_key(rng: &mut SmallRng) -> Vec<u8> {
    const ALPHABET: [u8; 4] = [0, b'a', b'b', 0xff];
    let len = rng.gen_range(0..=5);
    (0..len)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())])
        .collect()
}

fn random_extractor(rng: &mut SmallRng) -> Option<PrefixExtractor> {
    match rng.gen_range(0..5) {
        0 => None,
        1 | 2 => Some(PrefixExtractor::Fixed(rng.gen_range(1..=3))),
        _ => Some(PrefixExtractor::Capped(rng.gen_range(1..=3))),
    }
}

fn options(fs: &SimFs, rng: &mut SmallRng) -> DbOptions {
    let mut o = sim_options(fs);
    o.table.prefix_extractor = random_extractor(rng);
    o.table.whole_key_filtering = rng.gen_bool(0.5);
    o.table.bloom_bits_per_key = [0.0, 2.0, 10.0][rng.gen_range(0..3)];
    o.table.block_size = 256;
    if rng.gen_bool(0.5) {
        // Partitions of a few blocks: a prefix's keys straddle them.
        o.table.index_type = IndexType::TwoLevelIndexSearch;
        o.table.partition_filters = rng.gen_bool(0.7);
        o.table.metadata_block_size = [64, 256][rng.gen_range(0..2)];
    }
    o.memtable_prefix_bloom_size_ratio = [0.0, 0.0001, 0.1][rng.gen_range(0..3)];
    o.memtable_whole_key_filtering = rng.gen_bool(0.5);
    o.compaction.level0_file_num_compaction_trigger = rng.gen_range(2..6);
    o.compaction.max_bytes_for_level_base = 64 << 10;
    o.compaction.target_file_size_base = 16 << 10;
    o
}

/// The keys a forward scan from `start` shows up to `end` (exclusive).
fn model_forward(model: &Model, start: &[u8], end: Option<&[u8]>) -> Vec<Vec<u8>> {
    model
        .range(start.to_vec()..)
        .take_while(|(k, _)| end.is_none_or(|e| k.as_slice() < e))
        .take(LIMIT)
        .map(|(k, _)| k.clone())
        .collect()
}

/// The keys a backward scan from `start` (inclusive) shows down to `low`.
fn model_backward(model: &Model, start: &[u8], low: &[u8]) -> Vec<Vec<u8>> {
    model
        .range(..=start.to_vec())
        .rev()
        .take_while(|(k, _)| k.as_slice() >= low)
        .take(LIMIT)
        .map(|(k, _)| k.clone())
        .collect()
}

/// How many keys each scan compares.
const LIMIT: usize = 40;

/// Up to [`LIMIT`] keys from the iterator's position, stepping with `step`.
fn collect(it: &mut strata::DbIterator, step: fn(&mut strata::DbIterator)) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    while let Some(k) = it.key() {
        out.push(k.to_vec());
        if out.len() == LIMIT {
            break;
        }
        step(it);
    }
    it.status().unwrap();
    out
}

fn forward(it: &mut strata::DbIterator) -> Vec<Vec<u8>> {
    collect(it, strata::DbIterator::next)
}

fn backward(it: &mut strata::DbIterator) -> Vec<Vec<u8>> {
    collect(it, strata::DbIterator::prev)
}

fn check(db: &strata::Db, extractor: Option<PrefixExtractor>, model: &Model, rng: &mut SmallRng) {
    let ctx =
        |what: &str, target: &[u8]| format!("{what} target {target:?} extractor {extractor:?}");
    for _ in 0..30 {
        let target = random_key(rng);
        let domain = extractor.and_then(|e| e.prefix(&target).map(|p| (e, p.to_vec())));

        // prefix_same_as_start: exactly the keys of the target's prefix, in
        // both directions; a target outside the domain scans in total order.
        let same = ReadOptions {
            prefix_same_as_start: true,
            ..ReadOptions::default()
        };
        let mut it = db.iter_opt(&same);
        it.seek(&target);
        let (low, end) = match &domain {
            Some((e, p)) => (p.clone(), e.prefix_end(p)),
            None => (Vec::new(), None),
        };
        let want = model_forward(model, &target, end.as_deref());
        assert_eq!(
            forward(&mut it),
            want,
            "{}",
            ctx("same-as-start seek", &target)
        );
        it.seek_for_prev(&target);
        let want = model_backward(model, &target, &low);
        assert_eq!(
            backward(&mut it),
            want,
            "{}",
            ctx("same-as-start seek_for_prev", &target)
        );
        // A seek, then a step back: prev stays inside the prefix too.
        it.seek(&target);
        if it.valid() {
            it.prev();
            let before = model
                .range(..target.clone())
                .next_back()
                .map(|(k, _)| k.clone())
                .filter(|k| k.as_slice() >= low.as_slice());
            assert_eq!(
                it.key().map(<[u8]>::to_vec),
                before,
                "{}",
                ctx("seek then prev", &target)
            );
        }

        // An upper bound, sometimes inside the prefix (filters may be
        // used), sometimes past it (they may not).
        let upper = random_key(rng);
        let bounded = ReadOptions {
            iterate_upper_bound: Some(upper.clone()),
            total_order_seek: rng.gen_bool(0.2),
            ..ReadOptions::default()
        };
        let mut it = db.iter_opt(&bounded);
        it.seek(&target);
        let want = model_forward(model, &target, Some(&upper));
        assert_eq!(
            forward(&mut it),
            want,
            "{} upper {upper:?}",
            ctx("bounded seek", &target)
        );

        // No prefix option: a total-order scan, whatever the extractor.
        let mut it = db.iter_opt(&ReadOptions::default());
        it.seek(&target);
        let want = model_forward(model, &target, None);
        assert_eq!(forward(&mut it), want, "{}", ctx("plain seek", &target));
        it.seek_to_first();
        assert_eq!(it.key().map(<[u8]>::to_vec), model.keys().next().cloned());

        // Gets, with or without whole keys in the filters.
        assert_eq!(
            db.get(&target).unwrap().map(|v| v.to_vec()),
            model.get(&target).cloned(),
            "{}",
            ctx("get", &target)
        );
    }
}

fn run(seed: u64, stats: &Arc<Statistics>) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let fs = SimFs::new(seed);
    let mut model = Model::new();
    let options = |rng: &mut SmallRng| DbOptions {
        statistics: Some(stats.clone()),
        ..options(&fs, rng)
    };
    let mut opts = options(&mut rng);
    let mut db = strata::Db::open(Path::new("/db"), opts.clone()).unwrap();
    for round in 0..4 {
        for _ in 0..rng.gen_range(200..1500) {
            let key = random_key(&mut rng);
            match rng.gen_range(0..10) {
                0 => {
                    db.delete(&key).unwrap();
                    model.remove(&key);
                }
                1 => {
                    let end = random_key(&mut rng);
                    if key < end {
                        db.delete_range(&key, &end).unwrap();
                        let doomed: Vec<_> = model
                            .range(key.clone()..end)
                            .map(|(k, _)| k.clone())
                            .collect();
                        for k in doomed {
                            model.remove(&k);
                        }
                    }
                }
                _ => {
                    let value = format!("v{}", rng.gen::<u32>()).into_bytes();
                    db.put(&key, &value).unwrap();
                    model.insert(key, value);
                }
            }
            if rng.gen_ratio(1, 300) {
                db.flush().unwrap();
            }
        }
        check(&db, opts.table.prefix_extractor, &model, &mut rng);
        db.flush().unwrap();
        check(&db, opts.table.prefix_extractor, &model, &mut rng);
        if round % 2 == 1 {
            db.compact_range(None, None).unwrap();
        }
        // Reopen with other prefix settings: the tables keep theirs.
        drop(db);
        opts = options(&mut rng);
        db = strata::Db::open(Path::new("/db"), opts.clone()).unwrap();
        check(&db, opts.table.prefix_extractor, &model, &mut rng);
    }
}

#[test]
fn prefix_seeks_return_what_a_full_scan_returns() {
    let stats = Arc::new(Statistics::new());
    for seed in 0..12 {
        run(seed, &stats);
    }
    // The filters were asked, and some kept seeks out of tables.
    let checked = stats.ticker(Ticker::BloomFilterPrefixChecked);
    let useful = stats.ticker(Ticker::BloomFilterPrefixUseful);
    assert!(
        useful > 0 && checked > useful,
        "checked {checked} useful {useful}"
    );
}

/// `set_options` changes the extractor of a live database: memtables made
/// with the old one and tables built with it keep answering, their filters
/// proving nothing for the new prefixes.
#[test]
fn prefix_extractor_changes_on_a_live_database() {
    let mut rng = SmallRng::seed_from_u64(99);
    let fs = SimFs::new(99);
    let mut opts = options(&fs, &mut rng);
    opts.table.prefix_extractor = Some(PrefixExtractor::Fixed(2));
    opts.table.bloom_bits_per_key = 10.0;
    opts.memtable_prefix_bloom_size_ratio = 0.1;
    let mut current = opts.table.prefix_extractor;
    let db = strata::Db::open(Path::new("/db"), opts).unwrap();
    let mut model = Model::new();
    let extractors = ["capped:1", "fixed:3", "nullptr", "rocksdb.FixedPrefix.2"];
    for (round, name) in extractors.iter().enumerate() {
        for _ in 0..600 {
            let key = random_key(&mut rng);
            let value = format!("v{round}").into_bytes();
            db.put(&key, &value).unwrap();
            model.insert(key, value);
            if rng.gen_ratio(1, 200) {
                db.flush().unwrap();
            }
        }
        check(&db, current, &model, &mut rng);
        db.set_options(&db.default_cf(), &[("prefix_extractor", name)])
            .unwrap();
        current = PrefixExtractor::parse(name).ok();
        check(&db, current, &model, &mut rng);
    }
}
