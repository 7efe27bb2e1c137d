//! Families in orders other than bytewise, checked against a `BTreeMap`
//! model sorted the same way: RocksDB's reverse bytewise order (keys of
//! varying length, so a key and its extensions trade places), and an
//! application's order of 8-byte little-endian numbers (where bytewise
//! order and the true order disagree at every carry). Writes, range
//! deletions, flushes, compactions of both styles and reopens run between
//! gets, batched gets, bounded scans both ways, seeks and ranges from both
//! ends with every kind of bound.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::fs::SimFs;
use strata::{
    CfOptions, CompactionOptions, Comparator, Db, DbOptions, Error, ReadOptions,
    ReverseBytewiseComparator, WriteBatch, WriteOptions,
};

use crate::util::{drain_from_both_ends, scan_both_ways, sim_options, small_leveled, Entries};

/// A key order under test: the comparator the database gets, the same
/// order for the model, and the keys to draw.
trait Order: 'static {
    fn comparator() -> Arc<dyn Comparator>;
    fn cmp(a: &[u8], b: &[u8]) -> Ordering;
    fn random_key(rng: &mut SmallRng) -> Vec<u8>;
}

struct Reverse;

impl Order for Reverse {
    fn comparator() -> Arc<dyn Comparator> {
        Arc::new(ReverseBytewiseComparator)
    }
    fn cmp(a: &[u8], b: &[u8]) -> Ordering {
        b.cmp(a)
    }
    fn random_key(rng: &mut SmallRng) -> Vec<u8> {
        // Short keys over a small alphabet with both extremes: prefixes of
        // one another, and 0x00 / 0xff bytes, are common.
        let len = rng.gen_range(0..5);
        (0..len)
            .map(|_| [0u8, b'a', b'b', 0xff][rng.gen_range(0..4)])
            .collect()
    }
}

/// Keys are 8-byte little-endian numbers, ordered by value.
#[derive(Debug)]
struct U64LeComparator;

impl Comparator for U64LeComparator {
    fn name(&self) -> &str {
        "test.U64LittleEndian"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let num = |k: &[u8]| k.try_into().map(u64::from_le_bytes).ok();
        num(a).cmp(&num(b)).then_with(|| a.cmp(b))
    }
}

struct U64Le;

impl Order for U64Le {
    fn comparator() -> Arc<dyn Comparator> {
        Arc::new(U64LeComparator)
    }
    fn cmp(a: &[u8], b: &[u8]) -> Ordering {
        U64LeComparator.compare(a, b)
    }
    fn random_key(rng: &mut SmallRng) -> Vec<u8> {
        // Around the carries at 256 and 65,536, where little-endian bytes
        // sort nothing like the numbers.
        let base = [0u64, 250, 65_530][rng.gen_range(0..3)];
        (base + rng.gen_range(0..12u64)).to_le_bytes().to_vec()
    }
}

/// A model key, sorted in `O`.
#[derive(Debug, Clone)]
struct Key<O>(Vec<u8>, PhantomData<O>);

impl<O: Order> PartialEq for Key<O> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl<O: Order> Eq for Key<O> {}

impl<O: Order> Key<O> {
    fn new(k: &[u8]) -> Self {
        Key(k.to_vec(), PhantomData)
    }
}

impl<O: Order> PartialOrd for Key<O> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<O: Order> Ord for Key<O> {
    fn cmp(&self, other: &Self) -> Ordering {
        O::cmp(&self.0, &other.0)
    }
}

type Model<O> = BTreeMap<Key<O>, Vec<u8>>;

/// The model's entries within `(lower, upper)`, in order.
fn expected<O: Order>(model: &Model<O>, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Entries {
    let after_lower = |k: &[u8]| match lower {
        Bound::Included(l) => O::cmp(l, k).is_le(),
        Bound::Excluded(l) => O::cmp(l, k).is_lt(),
        Bound::Unbounded => true,
    };
    let before_upper = |k: &[u8]| match upper {
        Bound::Included(u) => O::cmp(k, u).is_le(),
        Bound::Excluded(u) => O::cmp(k, u).is_lt(),
        Bound::Unbounded => true,
    };
    model
        .iter()
        .filter(|(k, _)| after_lower(&k.0) && before_upper(&k.0))
        .map(|(k, v)| (k.0.clone(), v.clone()))
        .collect()
}

fn random_bound(rng: &mut SmallRng, key: Vec<u8>) -> Bound<Vec<u8>> {
    match rng.gen_range(0..3) {
        0 => Bound::Included(key),
        1 => Bound::Excluded(key),
        _ => Bound::Unbounded,
    }
}

fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// Gets and a batched get of random keys, present and absent.
fn check_reads<O: Order>(db: &Db, model: &Model<O>, rng: &mut SmallRng, ctx: &str) {
    let keys: Vec<Vec<u8>> = (0..40).map(|_| O::random_key(rng)).collect();
    for k in &keys {
        let got = db.get(k).unwrap().map(|v| v.to_vec());
        assert_eq!(got.as_ref(), model.get(&Key::new(k)), "{ctx}: get {k:?}");
    }
    let got = db.multi_get(&ReadOptions::default(), &keys);
    for (k, v) in keys.iter().zip(got) {
        let v = v.unwrap().map(|v| v.to_vec());
        assert_eq!(
            v.as_ref(),
            model.get(&Key::new(k)),
            "{ctx}: multi_get {k:?}"
        );
    }
}

/// A bounded scan both ways, a seek and a seek-for-prev with steps in
/// both directions, and a range with random kinds of bound from both ends.
fn check_iteration<O: Order>(db: &Db, model: &Model<O>, rng: &mut SmallRng, ctx: &str) {
    let lower = rng.gen_bool(0.5).then(|| O::random_key(rng));
    let upper = rng.gen_bool(0.5).then(|| O::random_key(rng));
    let want = expected(
        model,
        lower.as_deref().map_or(Bound::Unbounded, Bound::Included),
        upper.as_deref().map_or(Bound::Unbounded, Bound::Excluded),
    );
    let ro = ReadOptions {
        iterate_lower_bound: lower.clone(),
        iterate_upper_bound: upper.clone(),
        ..ReadOptions::default()
    };
    let ctx = format!("{ctx} bounds {lower:?}..{upper:?}");
    let mut it = db.iter_opt(&ro);
    let (forward, backward) = scan_both_ways(&mut it);
    assert_eq!(forward, want, "{ctx}: forward");
    assert_eq!(backward, want, "{ctx}: backward");

    let target = O::random_key(rng);
    let mut pos = if rng.gen_bool(0.5) {
        it.seek(&target);
        want.iter().position(|(k, _)| O::cmp(k, &target).is_ge())
    } else {
        it.seek_for_prev(&target);
        want.iter().rposition(|(k, _)| O::cmp(k, &target).is_le())
    };
    for _ in 0..6 {
        let Some(i) = pos else {
            assert!(!it.valid(), "{ctx}: seeking {target:?} should find nothing");
            break;
        };
        assert_eq!(
            it.key(),
            Some(&want[i].0[..]),
            "{ctx}: after seeking {target:?}"
        );
        if rng.gen_bool(0.5) {
            it.next();
            pos = (i + 1 < want.len()).then_some(i + 1);
        } else {
            it.prev();
            pos = i.checked_sub(1);
        }
    }

    let (a, b) = (O::random_key(rng), O::random_key(rng));
    let (from, to) = (random_bound(rng, a), random_bound(rng, b));
    let want = expected(model, as_ref(&from), as_ref(&to));
    let (mut front, back) = drain_from_both_ends(db.range((from.clone(), to.clone())), rng);
    front.extend(back);
    assert_eq!(front, want, "{ctx}: range {from:?}..{to:?}");
}

/// Runs `steps` random operations on a database whose default family is in
/// order `O`, checking reads against the model as it goes.
fn run<O: Order>(seed: u64, steps: usize, compaction: &CompactionOptions) {
    let fs = SimFs::new(seed);
    let mut rng = SmallRng::seed_from_u64(seed);
    let options = |fs: &SimFs| {
        let mut options = DbOptions {
            compaction: compaction.clone(),
            ..sim_options(fs)
        };
        options.comparator = O::comparator();
        options
    };
    let mut db = Db::open(Path::new("/db"), options(&fs)).unwrap();
    let mut model: Model<O> = BTreeMap::new();
    for step in 0..steps {
        let ctx = format!("seed {seed} step {step}");
        match rng.gen_range(0..100) {
            0..=39 => {
                let (k, v) = (O::random_key(&mut rng), vec![b'v'; rng.gen_range(0..200)]);
                db.put(&k, &v).unwrap();
                model.insert(Key::new(&k), v);
            }
            40..=49 => {
                let k = O::random_key(&mut rng);
                db.delete(&k).unwrap();
                model.remove(&Key::new(&k));
            }
            50..=54 => {
                let (a, b) = (O::random_key(&mut rng), O::random_key(&mut rng));
                match O::cmp(&a, &b) {
                    Ordering::Less => {
                        db.delete_range(&a, &b).unwrap();
                        let doomed = expected(&model, Bound::Included(&a), Bound::Excluded(&b));
                        for (k, _) in doomed {
                            model.remove(&Key::new(&k));
                        }
                    }
                    // Inverted in this order (whatever it is bytewise):
                    // refused, and nothing is written.
                    Ordering::Greater => {
                        let err = db.delete_range(&a, &b).unwrap_err();
                        assert!(matches!(err, Error::InvalidArgument { .. }), "{ctx}: {err}");
                    }
                    Ordering::Equal => db.delete_range(&a, &b).unwrap(),
                }
            }
            55..=64 => {
                let mut batch = WriteBatch::new();
                for _ in 0..rng.gen_range(1..8) {
                    let k = O::random_key(&mut rng);
                    if rng.gen_bool(0.3) {
                        batch.delete(&k).unwrap();
                        model.remove(&Key::new(&k));
                    } else {
                        let v = vec![b'b'; rng.gen_range(0..100)];
                        batch.put(&k, &v).unwrap();
                        model.insert(Key::new(&k), v);
                    }
                }
                db.write(&WriteOptions::default(), batch).unwrap();
            }
            65..=79 => check_reads(&db, &model, &mut rng, &ctx),
            80..=89 => check_iteration(&db, &model, &mut rng, &ctx),
            90..=94 => db.flush().unwrap(),
            95..=96 => {
                let (a, b) = (O::random_key(&mut rng), O::random_key(&mut rng));
                let (a, b) = if O::cmp(&a, &b).is_le() {
                    (a, b)
                } else {
                    (b, a)
                };
                db.compact_range(Some(&a), Some(&b)).unwrap();
            }
            _ => {
                drop(db);
                db = Db::open(Path::new("/db"), options(&fs)).unwrap();
                check_reads(&db, &model, &mut rng, &ctx);
            }
        }
    }
    db.wait_for_compaction().unwrap();
    let deeper: u64 = (1..7)
        .map(|level| {
            let name = format!("strata.num-files-at-level{level}");
            db.property(&name).unwrap().parse::<u64>().unwrap()
        })
        .sum();
    assert!(deeper > 0, "seed {seed}: nothing was compacted below L0");
    let ctx = format!("seed {seed} at the end");
    check_reads(&db, &model, &mut rng, &ctx);
    let all: Entries = db.range(..).map(|r| r.unwrap()).collect();
    assert_eq!(
        all,
        expected(&model, Bound::Unbounded, Bound::Unbounded),
        "{ctx}"
    );
}

fn universal() -> CompactionOptions {
    CompactionOptions {
        compaction_style: strata::CompactionStyle::Universal,
        level0_file_num_compaction_trigger: 3,
        target_file_size_base: 8 << 10,
        ..CompactionOptions::default()
    }
}

#[test]
fn reverse_bytewise_matches_the_model() {
    for seed in 0..4 {
        run::<Reverse>(seed, 2500, &small_leveled());
    }
    for seed in 10..12 {
        run::<Reverse>(seed, 2500, &universal());
    }
}

#[test]
fn application_comparator_matches_the_model() {
    for seed in 20..24 {
        run::<U64Le>(seed, 2500, &small_leveled());
    }
    for seed in 30..32 {
        run::<U64Le>(seed, 2500, &universal());
    }
}

/// Three families in three orders share one database, a WAL and a
/// MANIFEST: each keeps its order through flushes and reopens, and a reopen
/// that forgets the application's comparator is refused, naming it.
#[test]
fn families_in_different_orders_share_a_database() {
    let fs = SimFs::new(77);
    let families = || {
        vec![
            (
                "rev",
                CfOptions {
                    comparator: Reverse::comparator(),
                    ..CfOptions::default()
                },
            ),
            (
                "num",
                CfOptions {
                    comparator: U64Le::comparator(),
                    ..CfOptions::default()
                },
            ),
        ]
    };
    let mut options = sim_options(&fs);
    options.create_missing_column_families = true;
    let db = Db::open_cf(Path::new("/db"), options.clone(), families()).unwrap();
    let keys: Vec<u64> = vec![1, 255, 256, 65_535, 65_536, 7];
    for (round, &n) in keys.iter().enumerate() {
        let k = n.to_le_bytes();
        for cf in [
            db.default_cf(),
            db.cf_handle("rev").unwrap(),
            db.cf_handle("num").unwrap(),
        ] {
            db.put_cf(&cf, k, [round as u8]).unwrap();
        }
        if round % 2 == 1 {
            db.flush().unwrap();
        }
    }
    let order_of = |db: &Db, cf: Option<&str>| -> Vec<u64> {
        let cf = cf.map_or_else(|| db.default_cf(), |n| db.cf_handle(n).unwrap());
        db.range_cf(&cf, ..)
            .map(|r| u64::from_le_bytes(r.unwrap().0.try_into().unwrap()))
            .collect()
    };
    let check = |db: &Db| {
        let mut bytewise = keys.clone();
        bytewise.sort_by_key(|n| n.to_le_bytes());
        let mut reverse = bytewise.clone();
        reverse.reverse();
        let mut numeric = keys.clone();
        numeric.sort_unstable();
        assert_eq!(order_of(db, None), bytewise);
        assert_eq!(order_of(db, Some("rev")), reverse);
        assert_eq!(order_of(db, Some("num")), numeric);
    };
    check(&db);
    db.compact_range_cf(&db.cf_handle("num").unwrap(), None, None)
        .unwrap();
    drop(db);
    let db = Db::open_cf(Path::new("/db"), options.clone(), families()).unwrap();
    check(&db);
    drop(db);

    let forgetful = vec![
        (
            "rev",
            CfOptions {
                comparator: Reverse::comparator(),
                ..CfOptions::default()
            },
        ),
        ("num", CfOptions::default()),
    ];
    // Listing the families needs no comparator: it builds no version.
    let names = Db::list_column_families(Path::new("/db"), &sim_options(&fs)).unwrap();
    assert_eq!(names, ["default", "num", "rev"]);
    let Err(err) = Db::open_cf(Path::new("/db"), options, forgetful) else {
        panic!("opened a family without its comparator");
    };
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    assert!(err.to_string().contains("test.U64LittleEndian"), "{err}");
}

/// A prefix extractor names a byte range of keys only in bytewise order, so
/// a family in another order cannot have one.
#[test]
fn a_prefix_extractor_needs_bytewise_order() {
    let fs = SimFs::new(78);
    let mut options = sim_options(&fs);
    options.comparator = Reverse::comparator();
    options.table.prefix_extractor = Some(strata::PrefixExtractor::Fixed(4));
    let Err(err) = Db::open(Path::new("/db"), options) else {
        panic!("a reverse-ordered family took a prefix extractor");
    };
    assert!(err.to_string().contains("prefix_extractor"), "{err}");
}
