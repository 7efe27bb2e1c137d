//! Merge operators through the database: reads apply operands over values and
//! deletions in memtables and tables, in gets, multi_gets and iterators both
//! ways, at snapshots, and after flushes and compactions.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::fs::SimFs;
use strata::merge::{StringAppendOperator, UInt64AddOperator};
use strata::{CfOptions, Db, DbOptions, Error, ReadOptions, WriteBatch, WriteOptions};

use crate::util::sim_options;

fn with_operator(fs: &SimFs, op: Arc<dyn strata::MergeOperator>) -> DbOptions {
    DbOptions {
        merge_operator: Some(op),
        ..sim_options(fs)
    }
}

fn scan(db: &Db, reverse: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut it = db.iter();
    let mut out = Vec::new();
    if reverse {
        it.seek_to_last();
    } else {
        it.seek_to_first();
    }
    while it.valid() {
        out.push((it.key().unwrap().to_vec(), it.value().unwrap().to_vec()));
        if reverse {
            it.prev();
        } else {
            it.next();
        }
    }
    it.status().unwrap();
    if reverse {
        out.reverse();
    }
    out
}

#[test]
fn uint64add_counts_across_memtables_tables_and_compactions() {
    let fs = SimFs::new(21);
    let db = Db::open(
        Path::new("/db"),
        with_operator(&fs, Arc::new(UInt64AddOperator)),
    )
    .unwrap();
    let one = 1u64.to_le_bytes();
    for round in 0..5 {
        for _ in 0..10 {
            db.merge("counter", one).unwrap();
        }
        if round % 2 == 0 {
            db.flush().unwrap();
        }
    }
    let read =
        |db: &Db| u64::from_le_bytes(db.get("counter").unwrap().unwrap()[..].try_into().unwrap());
    assert_eq!(read(&db), 50);
    db.put("counter", 100u64.to_le_bytes()).unwrap();
    db.merge("counter", one).unwrap();
    assert_eq!(read(&db), 101);
    db.compact_range(None, None).unwrap();
    assert_eq!(read(&db), 101);
    db.delete("counter").unwrap();
    db.merge("counter", one).unwrap();
    assert_eq!(read(&db), 1);
    db.close().unwrap();
    let db = Db::open(
        Path::new("/db"),
        with_operator(&fs, Arc::new(UInt64AddOperator)),
    )
    .unwrap();
    assert_eq!(read(&db), 1);
}

#[test]
fn merges_without_an_operator_are_refused_and_reads_say_why() {
    let fs = SimFs::new(22);
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    let err = db.merge("k", "x").unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidArgument {
                field: "merge_operator",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(db.get("k").unwrap(), None);
    db.close().unwrap();
    // Written with an operator, opened without one: the open is refused,
    // naming the operator the operands were written for (it used to open
    // and fail each read of a merged key).
    let db = Db::open(
        Path::new("/db"),
        with_operator(&fs, Arc::new(StringAppendOperator::new(b",".to_vec()))),
    )
    .unwrap();
    db.merge("k", "x").unwrap();
    db.close().unwrap();
    let err = Db::open(Path::new("/db"), sim_options(&fs)).unwrap_err();
    assert!(err.to_string().contains("StringAppendOperator"), "{err}");
    let err = Db::open_read_only(Path::new("/db"), sim_options(&fs)).unwrap_err();
    assert!(err.to_string().contains("StringAppendOperator"), "{err}");
}

/// A model of string-append merges against random puts, deletes, merges,
/// flushes, compactions and snapshots, read by get, multi_get and both
/// iteration directions.
#[test]
fn stringappend_matches_a_model() {
    for seed in 0..30u64 {
        let fs = SimFs::new(seed);
        let op: Arc<dyn strata::MergeOperator> = Arc::new(StringAppendOperator::new(b",".to_vec()));
        let options = DbOptions {
            write_buffer_size: 64 << 10,
            ..with_operator(&fs, op.clone())
        };
        let db = Db::open(Path::new("/db"), options.clone()).unwrap();
        let cf = db
            .create_column_family(
                "appends",
                CfOptions {
                    merge_operator: Some(op.clone()),
                    ..options.cf_options()
                },
            )
            .unwrap();
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        let mut snapshots = Vec::new();
        for i in 0..600u32 {
            let key = format!("k{:02}", rng.gen_range(0..20)).into_bytes();
            let v = format!("v{i}").into_bytes();
            match rng.gen_range(0..100) {
                0..=19 => {
                    db.put(&key, &v).unwrap();
                    model.insert(key, v);
                }
                20..=29 => {
                    db.delete(&key).unwrap();
                    model.remove(&key);
                }
                30..=79 => {
                    // Half in batches with a family's write beside them.
                    if rng.gen_bool(0.5) {
                        let mut batch = WriteBatch::new();
                        batch.merge(&key, &v).unwrap();
                        batch.merge_cf(&cf, &key, &v).unwrap();
                        db.write(&WriteOptions::default(), batch).unwrap();
                    } else {
                        db.merge(&key, &v).unwrap();
                    }
                    let merged = match model.get(&key) {
                        Some(old) => [old.as_slice(), b",", &v].concat(),
                        None => v,
                    };
                    model.insert(key, merged);
                }
                80..=84 => db.flush().unwrap(),
                85..=86 => db.compact_range(None, None).unwrap(),
                87..=89 => snapshots.push((db.snapshot(), model.clone())),
                _ => {
                    let got = db.get(&key).unwrap().map(|v| v.to_vec());
                    assert_eq!(got.as_ref(), model.get(&key), "seed {seed} op {i}");
                }
            }
        }
        let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        assert_eq!(scan(&db, false), want, "seed {seed} forward");
        assert_eq!(scan(&db, true), want, "seed {seed} backward");
        let keys: Vec<&Vec<u8>> = model.keys().collect();
        for (got, key) in db
            .multi_get(&ReadOptions::default(), &keys)
            .iter()
            .zip(&keys)
        {
            assert_eq!(
                got.as_ref().unwrap().as_deref(),
                model.get(*key).map(|v| v.as_slice())
            );
        }
        for (snapshot, then) in &snapshots {
            let ro = ReadOptions {
                snapshot: Some(snapshot.clone()),
                ..ReadOptions::default()
            };
            let got: Vec<_> = db
                .range_opt(&ro, ..)
                .map(|e| {
                    let (k, v) = e.unwrap();
                    (k.to_vec(), v.to_vec())
                })
                .collect();
            let want: Vec<_> = then.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            assert_eq!(got, want, "seed {seed} at a snapshot");
        }
        // The family took the merges only, in the same order.
        for (k, _) in db.range_cf(&cf, ..).map(|e| e.unwrap()) {
            assert!(db.get_cf(&cf, &k).unwrap().is_some());
        }
    }
}

/// Read-only opens merge each family's operands with that family's
/// operator: from the OPTIONS file, or as given.
#[test]
fn read_only_opens_merge_with_each_familys_operator() {
    let fs = strata::fs::SimFs::new(41);
    let path = std::path::Path::new("/db");
    let options = strata::DbOptions {
        merge_operator: Some(strata::merge_operator_from_name("uint64add").unwrap()),
        ..crate::util::sim_options(&fs)
    };
    let lists = strata::CfOptions {
        merge_operator: Some(strata::merge_operator_from_name("stringappend").unwrap()),
        ..options.cf_options()
    };
    let db = Db::open(path, options.clone()).unwrap();
    let cf = db.create_column_family("lists", lists.clone()).unwrap();
    db.put_cf(&cf, "k", "a").unwrap();
    db.merge_cf(&cf, "k", "b").unwrap();
    db.merge("n", 5u64.to_le_bytes()).unwrap();
    // Beside the writer, which keeps everything in its WAL.
    let reader = Db::open_read_only(path, options.clone()).unwrap();
    let read_cf = reader.cf_handle("lists").unwrap();
    assert_eq!(
        reader.get_cf(&read_cf, "k").unwrap().as_deref(),
        Some(&b"a,b"[..])
    );
    assert_eq!(
        reader.get("n").unwrap().as_deref(),
        Some(&5u64.to_le_bytes()[..])
    );
    let given = Db::open_cf_read_only(path, options, [("lists", lists)]).unwrap();
    let given_cf = given.cf_handle("lists").unwrap();
    assert_eq!(
        given.get_cf(&given_cf, "k").unwrap().as_deref(),
        Some(&b"a,b"[..])
    );
}

/// The reason of an `InvalidArgument` about the merge operator.
fn merge_operator_refusal(opened: strata::Result<Db>) -> String {
    match opened {
        Ok(_) => panic!("the open was not refused"),
        Err(Error::InvalidArgument {
            field: "merge_operator",
            reason,
        }) => reason,
        Err(e) => panic!("refused for another reason: {e}"),
    }
}

/// A string append family is recorded with its delimiter, not only the
/// operator's name: reopened with another delimiter, the open is refused
/// (it used to succeed, `a,b` merged with `|` read `a,b|c`, and the
/// OPTIONS file took the new delimiter). The default delimiter is `,`.
#[test]
fn a_string_append_family_refuses_another_delimiter() {
    let fs = SimFs::new(23);
    let joined_by = |d: &[u8]| with_operator(&fs, Arc::new(StringAppendOperator::new(d.to_vec())));
    let db = Db::open(Path::new("/db"), joined_by(b",")).unwrap();
    db.merge("k", "a").unwrap();
    db.merge("k", "b").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    for reason in [
        merge_operator_refusal(Db::open(Path::new("/db"), joined_by(b"|"))),
        merge_operator_refusal(Db::open_read_only(Path::new("/db"), joined_by(b"|"))),
    ] {
        assert!(
            reason.contains("delimiter=,") && reason.contains("delimiter=|"),
            "{reason}"
        );
    }
    let default_delimiter = with_operator(&fs, Arc::new(StringAppendOperator::default()));
    let db = Db::open(Path::new("/db"), default_delimiter).unwrap();
    db.merge("k", "c").unwrap();
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"a,b,c"[..]));
}

/// A family opened with a merge operator is held to it whether or not it
/// holds merge operands (one may be written at any time), and the refusal
/// says so: it used to claim operands "written for" the operator in a
/// family that never had a merge.
#[test]
fn the_refusal_says_which_operator_the_family_was_opened_with() {
    let fs = SimFs::new(24);
    let db = Db::open(
        Path::new("/db"),
        with_operator(&fs, Arc::new(UInt64AddOperator)),
    )
    .unwrap();
    db.put("k", "v").unwrap();
    db.close().unwrap();
    let max = strata::merge_operator_from_name("max").unwrap();
    let reason = merge_operator_refusal(Db::open(Path::new("/db"), with_operator(&fs, max)));
    assert!(
        reason.contains(
            "was opened with merge operator UInt64AddOperator; its merge operands, if any, need it"
        ) && reason.contains("MaxOperator"),
        "{reason}"
    );
    assert!(!reason.contains("holds merge operands"), "{reason}");
}
