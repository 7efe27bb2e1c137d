//! Bad input through the public API: invalid options, oversized keys, garbage
//! batches, released snapshots, inverted bounds, an iterator outliving its
//! database. Every case returns an error or a right answer; none panics.

use std::path::Path;

use proptest::prelude::*;
use strata::fs::SimFs;
use strata::write::batch::MAX_KEY_SIZE;
use strata::{
    CompactionStyle, CompressionType, Db, DbOptions, Error, ReadOptions, WriteBatch, WriteOptions,
};

use crate::util::{open_sim, sim_options};

/// One option field set to a value from a range that includes invalid ones.
#[derive(Debug, Clone)]
enum Tweak {
    WriteBufferSize(usize),
    MaxWriteBufferNumber(usize),
    BlockSize(usize),
    RestartInterval(usize),
    BloomBits(f64),
    Zstd(i32),
    NumLevels(usize),
    L0Trigger(usize),
    L0Slowdown(usize),
    LevelMultiplier(f64),
    TargetFileSize(u64),
    MaxBackgroundJobs(usize),
    Style(u8),
    MaxOpenFiles(i64),
}

fn tweak() -> impl Strategy<Value = Tweak> {
    prop_oneof![
        prop_oneof![Just(0usize), Just(1), Just(65_536), Just(usize::MAX)]
            .prop_map(Tweak::WriteBufferSize),
        (0usize..6).prop_map(Tweak::MaxWriteBufferNumber),
        prop_oneof![Just(0usize), Just(1), Just(4096), Just(1 << 30)].prop_map(Tweak::BlockSize),
        (0usize..40).prop_map(Tweak::RestartInterval),
        prop_oneof![
            Just(-1.0f64),
            Just(0.0),
            Just(10.0),
            Just(f64::NAN),
            Just(1e9)
        ]
        .prop_map(Tweak::BloomBits),
        (-10i32..40).prop_map(Tweak::Zstd),
        (0usize..12).prop_map(Tweak::NumLevels),
        (0usize..8).prop_map(Tweak::L0Trigger),
        (0usize..8).prop_map(Tweak::L0Slowdown),
        prop_oneof![
            Just(0.0f64),
            Just(0.5),
            Just(10.0),
            Just(f64::INFINITY),
            Just(f64::NAN)
        ]
        .prop_map(Tweak::LevelMultiplier),
        prop_oneof![Just(0u64), Just(1), Just(2 << 20)].prop_map(Tweak::TargetFileSize),
        (0usize..5).prop_map(Tweak::MaxBackgroundJobs),
        (0u8..3).prop_map(Tweak::Style),
        prop_oneof![Just(-5i64), Just(-1), Just(0), Just(1), Just(100)]
            .prop_map(Tweak::MaxOpenFiles),
    ]
}

fn apply(o: &mut DbOptions, t: &Tweak) {
    let c = &mut o.compaction;
    match *t {
        Tweak::WriteBufferSize(v) => o.write_buffer_size = v,
        Tweak::MaxWriteBufferNumber(v) => o.max_write_buffer_number = v,
        Tweak::BlockSize(v) => o.table.block_size = v,
        Tweak::RestartInterval(v) => o.table.block_restart_interval = v,
        Tweak::BloomBits(v) => o.table.bloom_bits_per_key = v,
        Tweak::Zstd(level) => o.table.compression = CompressionType::Zstd { level },
        Tweak::NumLevels(v) => c.num_levels = v,
        Tweak::L0Trigger(v) => c.level0_file_num_compaction_trigger = v,
        Tweak::L0Slowdown(v) => c.level0_slowdown_writes_trigger = v,
        Tweak::LevelMultiplier(v) => c.max_bytes_for_level_multiplier = v,
        Tweak::TargetFileSize(v) => c.target_file_size_base = v,
        Tweak::MaxBackgroundJobs(v) => c.max_background_jobs = v,
        Tweak::Style(s) => {
            c.compaction_style = [
                CompactionStyle::Level,
                CompactionStyle::Universal,
                CompactionStyle::Fifo,
            ][usize::from(s)]
        }
        Tweak::MaxOpenFiles(v) => o.max_open_files = v,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any combination of option values opens a working database or fails
    /// with InvalidArgument naming a field.
    #[test]
    fn options_open_or_are_refused(tweaks in proptest::collection::vec(tweak(), 1..4)) {
        let fs = SimFs::new(1);
        let mut options = sim_options(&fs);
        for t in &tweaks {
            apply(&mut options, t);
        }
        match Db::open(Path::new("/db"), options) {
            Ok(db) => {
                for i in 0..200u32 {
                    db.put(format!("k{i}").as_bytes(), [7; 100]).unwrap();
                }
                db.flush().unwrap();
                let got = db.get(b"k5").unwrap();
                prop_assert_eq!(got.as_deref(), Some(&[7u8; 100][..]));
            }
            Err(e) => prop_assert!(
                matches!(e, Error::InvalidArgument { .. }),
                "{:?}: {}", tweaks, e
            ),
        }
    }

    /// Garbage handed to `WriteBatch::from_data` is refused, or is a batch
    /// the database applies without harm.
    #[test]
    fn garbage_batches_are_refused_or_applied(data in proptest::collection::vec(any::<u8>(), 0..200)) {
        let fs = SimFs::new(2);
        let db = open_sim(&fs);
        if let Ok(batch) = WriteBatch::from_data(data) {
            let _ = db.write(&WriteOptions::default(), batch);
        }
        db.put(b"after", b"garbage").unwrap();
        let got = db.get(b"after").unwrap();
        prop_assert_eq!(got.as_deref(), Some(&b"garbage"[..]));
    }

    /// Bounds in any order, over any keys: an iterator never panics and
    /// stays within them.
    #[test]
    fn any_bounds_iterate_within_them(
        lower in proptest::collection::vec(any::<u8>(), 0..4),
        upper in proptest::collection::vec(any::<u8>(), 0..4),
    ) {
        let fs = SimFs::new(3);
        let db = open_sim(&fs);
        for k in [&b""[..], b"a", b"b\x00", b"\xff"] {
            db.put(k, b"v").unwrap();
        }
        let options = ReadOptions {
            iterate_lower_bound: Some(lower.clone()),
            iterate_upper_bound: Some(upper.clone()),
            ..ReadOptions::default()
        };
        let mut it = db.iter_opt(&options);
        it.seek_to_first();
        while it.valid() {
            prop_assert!(it.key() >= Some(&lower[..]) && it.key() < Some(&upper[..]));
            it.next();
        }
        prop_assert!(it.status().is_ok());
    }
}

#[test]
fn oversized_keys_are_refused_and_the_largest_allowed_works() {
    let fs = SimFs::new(4);
    let db = open_sim(&fs);
    let big = vec![b'k'; MAX_KEY_SIZE + 1];
    assert!(matches!(
        db.put(&big, b"v"),
        Err(Error::InvalidArgument { .. })
    ));
    assert!(matches!(
        db.delete(&big),
        Err(Error::InvalidArgument { .. })
    ));
    let mut batch = WriteBatch::new();
    assert!(batch.put(&big, b"v").is_err());
    // A get of an oversized key finds nothing; it stores nothing either.
    assert_eq!(db.get(&big).unwrap(), None);
    let largest = &big[..MAX_KEY_SIZE];
    db.put(largest, b"v").unwrap();
    db.flush().unwrap();
    assert_eq!(db.get(largest).unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn a_snapshot_lives_in_its_read_options_and_another_databases_is_refused() {
    let fs = SimFs::new(5);
    let db = open_sim(&fs);
    db.put(b"k", b"old").unwrap();
    let snapshot = db.snapshot();
    db.put(b"k", b"new").unwrap();
    let at = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    // The options hold the snapshot: dropping the handle releases nothing,
    // and a compaction keeps what the options read.
    drop(snapshot);
    db.flush().unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get_opt(&at, b"k").unwrap().as_deref(), Some(&b"old"[..]));
    assert_eq!(db.property("rocksdb.num-snapshots").as_deref(), Some("1"));
    drop(at);
    assert_eq!(db.property("rocksdb.num-snapshots").as_deref(), Some("0"));

    // A snapshot of another database (or an earlier open) is refused.
    let other_fs = SimFs::new(6);
    let other = open_sim(&other_fs);
    let foreign = ReadOptions {
        snapshot: Some(other.snapshot()),
        ..ReadOptions::default()
    };
    assert!(matches!(
        db.get_opt(&foreign, b"k"),
        Err(Error::InvalidArgument {
            field: "snapshot",
            ..
        })
    ));
    assert!(db.multi_get(&foreign, &[b"k"]).iter().all(|r| r.is_err()));
    let mut it = db.iter_opt(&foreign);
    it.seek_to_first();
    assert!(!it.valid() && it.status().is_err());
    let first = db.range_opt(&foreign, ..).next();
    assert!(
        matches!(first, Some(Err(Error::InvalidArgument { .. }))),
        "{first:?}"
    );
}

#[test]
fn an_iterator_outlives_its_database() {
    let fs = SimFs::new(6);
    let db = open_sim(&fs);
    for i in 0..500u32 {
        db.put(format!("k{i:04}").as_bytes(), b"v").unwrap();
    }
    db.flush().unwrap();
    let mut it = db.iter();
    drop(db);
    it.seek_to_first();
    let mut n = 0;
    while it.valid() {
        n += 1;
        it.next();
    }
    assert!(it.status().is_ok());
    assert_eq!(n, 500);
}

#[test]
fn opening_something_that_is_not_a_database_fails_cleanly() {
    use strata::Fs as _;
    let fs = SimFs::new(7);
    fs.create_dir_all(Path::new("/x")).unwrap();
    let mut f = fs.create(Path::new("/x/CURRENT")).unwrap();
    f.append(b"not a manifest name").unwrap();
    f.sync().unwrap();
    let e = Db::open(Path::new("/x"), sim_options(&fs)).unwrap_err();
    assert!(matches!(e, Error::Corruption { .. }), "{e}");
    let mut f = fs.create(Path::new("/file")).unwrap();
    f.append(b"x").unwrap();
    assert!(Db::open(Path::new("/file"), sim_options(&fs)).is_err());
}

/// The order a family was created with is fixed: an open that asks for
/// another is refused and the message names both orders, for the default
/// family and for another family alike.
#[test]
fn another_comparator_is_refused_naming_both() {
    let fs = SimFs::new(9);
    drop(open_sim(&fs));
    let mut options = sim_options(&fs);
    options.create_if_missing = false;
    options.comparator = std::sync::Arc::new(strata::ReverseBytewiseComparator);
    let Err(err) = Db::open(Path::new("/db"), options) else {
        panic!("reverse order opened a bytewise database");
    };
    let message = err.to_string();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{message}");
    for name in [
        "rocksdb.ReverseBytewiseComparator",
        "leveldb.BytewiseComparator",
    ] {
        assert!(message.contains(name), "{message}");
    }
    let db = open_sim(&fs);
    let reverse = strata::CfOptions {
        comparator: std::sync::Arc::new(strata::ReverseBytewiseComparator),
        ..strata::CfOptions::default()
    };
    db.create_column_family("rev", reverse).unwrap();
    drop(db);
    let mut options = sim_options(&fs);
    options.create_if_missing = false;
    let families = vec![("rev".to_owned(), strata::CfOptions::default())];
    let Err(err) = Db::open_cf(Path::new("/db"), options, families) else {
        panic!("bytewise order opened a reverse-ordered family");
    };
    let message = err.to_string();
    for name in [
        "rev",
        "rocksdb.ReverseBytewiseComparator",
        "leveldb.BytewiseComparator",
    ] {
        assert!(message.contains(name), "{message}");
    }
}
