//! `repair_db`: a database whose MANIFEST is lost or damaged comes back
//! from its tables, blob files and WALs, with every write in them and none
//! twice.

use std::collections::BTreeMap;
use std::path::Path;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::options::IngestExternalFileOptions;
use strata::{
    merge_operator_from_name, repair_db, BlobOptions, CfOptions, CompactionOptions, Db, DbOptions,
    Error, ReverseBytewiseComparator, SstFileWriter,
};

use crate::util::{lose_manifest, small_leveled};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn options() -> DbOptions {
    DbOptions {
        create_if_missing: true,
        create_missing_column_families: true,
        write_buffer_size: 64 << 10,
        compaction: small_leveled(),
        merge_operator: Some(merge_operator_from_name("stringappend").unwrap()),
        blob: BlobOptions {
            enable_blob_files: true,
            min_blob_size: 200,
            ..BlobOptions::default()
        },
        ..DbOptions::default()
    }
}

fn users_options() -> CfOptions {
    CfOptions {
        write_buffer_size: 64 << 10,
        merge_operator: Some(merge_operator_from_name("stringappend").unwrap()),
        ..CfOptions::default()
    }
}

fn scan(db: &Db, cf: Option<&str>) -> Model {
    let range = match cf {
        Some(name) => db.range_cf(&db.cf_handle(name).unwrap(), ..),
        None => db.range(..),
    };
    range
        .map(|e| {
            let (k, v) = e.unwrap();
            (k.to_vec(), v.to_vec())
        })
        .collect()
}

/// Fails naming the first key where `got` and `want` differ (models are
/// too large to print whole).
fn assert_same(got: &Model, want: &Model, what: &str) {
    let show = |v: Option<&Vec<u8>>| v.map(|v| String::from_utf8_lossy(v).into_owned());
    let keys = got.keys().chain(want.keys());
    if let Some(k) = keys.into_iter().find(|k| got.get(*k) != want.get(*k)) {
        panic!(
            "{what}: {} of {} keys; first difference at {:?}: got {:?}, want {:?}",
            got.len(),
            want.len(),
            String::from_utf8_lossy(k),
            show(got.get(k)),
            show(want.get(k))
        );
    }
}

/// Puts, merges, deletes and a range deletion into the default family,
/// recorded in `model`.
fn write_default(db: &Db, rng: &mut SmallRng, model: &mut Model, round: u32, n: u32) {
    for i in 0..n {
        let key = format!("k{:04}", rng.gen_range(0..600)).into_bytes();
        match rng.gen_range(0..10) {
            0..=4 => {
                let len = if rng.gen_bool(0.3) { 300 } else { 20 };
                let value = format!("{round}-{i}-").repeat(len / 8).into_bytes();
                db.put(&key, &value).unwrap();
                model.insert(key, value);
            }
            5..=7 => {
                let operand = format!("m{round}.{i}").into_bytes();
                db.merge(&key, &operand).unwrap();
                let merged = match model.get(&key) {
                    Some(old) => [old.as_slice(), b",", &operand].concat(),
                    None => operand,
                };
                model.insert(key, merged);
            }
            _ => {
                db.delete(&key).unwrap();
                model.remove(&key);
            }
        }
    }
    let lo = format!("k{:04}", rng.gen_range(0..590));
    let hi = format!("k{:04}", lo[1..].parse::<u32>().unwrap() + 5);
    db.delete_range(&lo, &hi).unwrap();
    model.retain(|k, _| !(k.as_slice() >= lo.as_bytes() && k.as_slice() < hi.as_bytes()));
}

#[test]
fn a_lost_manifest_comes_back_from_tables_blob_files_and_wals() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SmallRng::seed_from_u64(7);
    let (mut default, mut users) = (Model::new(), Model::new());
    let db = Db::open_cf(dir.path(), options(), [("users", users_options())]).unwrap();
    let cf = db.cf_handle("users").unwrap();
    // Unflushed writes to `users` keep every WAL alive, so the WALs hold
    // default-family merges its tables hold too: those must not land twice.
    // A family no table of holds is unknown without a MANIFEST: the
    // WALs name families by id only. One flush names it.
    db.put_cf(&cf, "u-first", "1").unwrap();
    db.flush_cf(&cf).unwrap();
    users.insert(b"u-first".to_vec(), b"1".to_vec());
    for round in 0..6 {
        write_default(&db, &mut rng, &mut default, round, 800);
        db.flush().unwrap();
        db.merge_cf(&cf, format!("u{round}"), "x").unwrap();
        users.insert(format!("u{round}").into_bytes(), b"x".to_vec());
    }
    db.wait_for_compaction().unwrap();
    // Some in the WAL only.
    write_default(&db, &mut rng, &mut default, 99, 300);
    assert_same(&scan(&db, None), &default, "default");
    db.close().unwrap();
    lose_manifest(dir.path());
    assert!(Db::open_cf(dir.path(), options(), [("users", users_options())]).is_err());

    let report = repair_db(dir.path(), &options(), [("users", users_options())]).unwrap();
    assert_eq!(
        report.families,
        vec![(0, "default".to_string()), (1, "users".to_string())]
    );
    assert!(report.tables_recovered >= 2, "{report:?}");
    assert!(report.blob_files_recovered >= 1, "{report:?}");
    assert!(report.tables_from_wals >= 2, "{report:?}");
    assert!(report.wal_entries_recovered >= 300, "{report:?}");
    assert!(report.wal_entries_already_in_tables > 1000, "{report:?}");
    assert_eq!(report.wal_damage_skipped, 0);
    assert!(report.warnings.is_empty(), "{report:?}");
    assert!(report
        .lost
        .iter()
        .any(|(p, why)| p.ends_with("lost/000001.log") || why.contains("replayed")));

    let db = Db::open_cf(dir.path(), options(), [("users", users_options())]).unwrap();
    assert_same(&scan(&db, None), &default, "default");
    assert_eq!(scan(&db, Some("users")), users);
    for (k, v) in default.iter().step_by(17) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()));
    }
    // Blob garbage is counted exactly: a full compaction, which turns
    // every unreferenced record into garbage, adds up.
    db.compact_range(None, None).unwrap();
    assert_same(&scan(&db, None), &default, "default after compaction");
    // Takes writes as any database does, and keeps them.
    db.merge("k0001", "after").unwrap();
    let merged = match default.get(b"k0001".as_slice()) {
        Some(old) => [old.as_slice(), b",after"].concat(),
        None => b"after".to_vec(),
    };
    default.insert(b"k0001".to_vec(), merged);
    db.close().unwrap();

    // Repairing a healthy database changes nothing it holds.
    let again = repair_db(dir.path(), &options(), [("users", users_options())]).unwrap();
    assert!(again.manifest_records_read > 0);
    let db = Db::open_cf(dir.path(), options(), [("users", users_options())]).unwrap();
    assert_same(&scan(&db, None), &default, "default");
    assert_eq!(scan(&db, Some("users")), users);
}

#[test]
fn tables_from_several_levels_are_compacted_so_point_reads_find_the_newest_version() {
    let dir = tempfile::tempdir().unwrap();
    let opts = DbOptions {
        merge_operator: None,
        blob: BlobOptions::default(),
        ..options()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let mut model = Model::new();
    let mut rng = SmallRng::seed_from_u64(11);
    for round in 0..12u32 {
        for i in 0..1000u32 {
            let key = format!("key{:05}", rng.gen_range(0..5000)).into_bytes();
            let value = format!("r{round}-{i}-").repeat(10).into_bytes();
            db.put(&key, &value).unwrap();
            model.insert(key, value);
        }
        db.flush().unwrap();
    }
    db.wait_for_compaction().unwrap();
    db.close().unwrap();
    lose_manifest(dir.path());
    let report = repair_db(dir.path(), &opts, Vec::<(String, CfOptions)>::new()).unwrap();
    // Whether the tables interleave depends on how background compaction
    // ran; when they do, the family is compacted.
    assert!(report.compacted_families.len() <= 1, "{report:?}");
    let mut quiet = opts.clone();
    quiet.compaction.disable_auto_compactions = true;
    let db = Db::open(dir.path(), quiet).unwrap();
    // L0 is searched newest first by largest sequence number: that is
    // right only while overlapping L0 tables' sequence ranges are apart.
    let l0: Vec<_> = db
        .live_files_metadata()
        .into_iter()
        .filter(|f| f.level == 0)
        .collect();
    for (i, a) in l0.iter().enumerate() {
        for b in &l0[i + 1..] {
            let overlap = a.smallest_key <= b.largest_key && b.smallest_key <= a.largest_key;
            let apart = a.smallest_seqno > b.largest_seqno || b.smallest_seqno > a.largest_seqno;
            assert!(
                !overlap || apart,
                "L0 tables #{} and #{} interleave",
                a.file_number,
                b.file_number
            );
        }
    }
    for (k, v) in &model {
        assert_eq!(
            db.get(k).unwrap().as_deref(),
            Some(v.as_slice()),
            "{}",
            String::from_utf8_lossy(k)
        );
    }
    assert_eq!(scan(&db, None), model);
}

#[test]
fn a_damaged_table_goes_to_lost_and_the_rest_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let opts = DbOptions {
        create_if_missing: true,
        compaction: CompactionOptions {
            disable_auto_compactions: true,
            ..CompactionOptions::default()
        },
        ..DbOptions::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for i in 0..2000 {
        db.put(format!("a{i:05}"), format!("value-a-{i}").repeat(4))
            .unwrap();
    }
    db.flush().unwrap();
    let damaged = db.live_files_metadata()[0].file_path.clone();
    for i in 0..2000 {
        db.put(format!("b{i:05}"), format!("value-b-{i}")).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let path = damaged;
    let mut bytes = std::fs::read(&path).unwrap();
    for b in &mut bytes[1000..1100] {
        *b ^= 0x5a;
    }
    std::fs::write(&path, bytes).unwrap();
    lose_manifest(dir.path());

    let report = repair_db(dir.path(), &opts, Vec::<(String, CfOptions)>::new()).unwrap();
    assert_eq!(report.tables_recovered, 1, "{report:?}");
    let (lost, why) = report
        .lost
        .iter()
        .find(|(p, _)| p.extension().is_some_and(|e| e == "sst"))
        .expect("the damaged table is in lost/");
    assert!(
        lost.exists() && lost.parent().unwrap().ends_with("lost"),
        "{lost:?}"
    );
    assert!(why.contains("checksum") || why.contains("orrupt"), "{why}");
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(
        db.get("b01234").unwrap().as_deref(),
        Some(b"value-b-1234".as_slice())
    );
    assert_eq!(db.get("a00001").unwrap(), None);
    assert_eq!(db.range(..).count(), 2000);
}

#[test]
fn repair_waits_for_no_one_it_refuses_while_the_database_is_open() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    db.put("k", "v").unwrap();
    let err = repair_db(dir.path(), &options(), Vec::<(String, CfOptions)>::new()).unwrap_err();
    assert!(matches!(err, Error::LockHeld { .. }), "{err:?}");
    assert_eq!(db.get("k").unwrap().as_deref(), Some(b"v".as_slice()));
    drop(db);
    let missing = dir.path().join("nothing-here");
    let err = repair_db(&missing, &options(), Vec::<(String, CfOptions)>::new()).unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err:?}");
}

#[test]
fn a_table_in_another_order_than_its_family_is_refused_until_the_comparator_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let reverse = DbOptions {
        create_if_missing: true,
        comparator: std::sync::Arc::new(ReverseBytewiseComparator),
        ..DbOptions::default()
    };
    let db = Db::open(dir.path(), reverse.clone()).unwrap();
    for i in 0..100 {
        db.put(format!("k{i:03}"), "v").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    lose_manifest(dir.path());
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with("OPTIONS-") {
            std::fs::remove_file(dir.path().join(name)).unwrap();
        }
    }
    let err = repair_db(
        dir.path(),
        &DbOptions::default(),
        Vec::<(String, CfOptions)>::new(),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
    assert!(text.contains("rocksdb.ReverseBytewiseComparator"), "{text}");
    assert!(
        !dir.path().join("CURRENT").exists(),
        "a refused repair changes nothing"
    );
    repair_db(dir.path(), &reverse, Vec::<(String, CfOptions)>::new()).unwrap();
    let db = Db::open(dir.path(), reverse).unwrap();
    let keys: Vec<_> = db.range(..).map(|e| e.unwrap().0.to_vec()).collect();
    assert_eq!(keys.len(), 100);
    assert_eq!(keys[0], b"k099".to_vec());
}

#[test]
fn an_ingested_table_keeps_its_global_seqno_while_a_manifest_record_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let opts = DbOptions {
        merge_operator: None,
        blob: BlobOptions::default(),
        compaction: CompactionOptions {
            disable_auto_compactions: true,
            ..CompactionOptions::default()
        },
        ..options()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for i in 0..50 {
        db.put(format!("k{i:02}"), "old").unwrap();
    }
    db.flush().unwrap();
    let sst = dir.path().join("ingest.sst");
    let mut writer = SstFileWriter::create(&sst, &opts.cf_options()).unwrap();
    for i in 0..50 {
        writer.put(format!("k{i:02}"), "ingested").unwrap();
    }
    writer.finish().unwrap();
    db.ingest_external_file(&[&sst], &IngestExternalFileOptions::default())
        .unwrap();
    db.put("k07", "newest").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    std::fs::remove_file(&sst).unwrap();

    // With the MANIFEST whole, its records place the file exactly.
    let report = repair_db(dir.path(), &opts, Vec::<(String, CfOptions)>::new()).unwrap();
    assert!(report.warnings.is_empty(), "{report:?}");
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    assert_eq!(
        db.get("k07").unwrap().as_deref(),
        Some(b"newest".as_slice())
    );
    assert_eq!(
        db.get("k08").unwrap().as_deref(),
        Some(b"ingested".as_slice())
    );
    db.close().unwrap();
}

/// Each file creation, append, sync and rename of a repair fails in turn,
/// then the power goes: a second repair still brings back every write, none
/// twice (merges would show it), whatever the first one left behind.
#[test]
fn a_repair_cut_by_a_failure_and_a_power_loss_can_be_run_again() {
    use std::sync::Arc;
    use strata::fs::sim::{CrashMode, Fault, OpKind};
    use strata::fs::SimFs;
    use strata::Fs;

    for (round, op) in [OpKind::Create, OpKind::Append, OpKind::Sync, OpKind::Rename]
        .into_iter()
        .enumerate()
    {
        let fs = SimFs::new(70 + round as u64);
        let opts = DbOptions {
            fs: Arc::new(fs.clone()),
            blob: BlobOptions::default(),
            ..options()
        };
        let mut rng = SmallRng::seed_from_u64(round as u64);
        let mut model = Model::new();
        let db = Db::open_cf("/db", opts.clone(), [("users", users_options())]).unwrap();
        let cf = db.cf_handle("users").unwrap();
        db.put_cf(&cf, "u", "1").unwrap();
        db.flush_cf(&cf).unwrap();
        for r in 0..3 {
            write_default(&db, &mut rng, &mut model, r, 400);
            db.flush().unwrap();
        }
        write_default(&db, &mut rng, &mut model, 9, 200);
        db.close().unwrap();
        for name in fs.list(Path::new("/db")).unwrap() {
            if name == "CURRENT" || name.starts_with("MANIFEST-") {
                fs.remove(&Path::new("/db").join(name)).unwrap();
            }
        }
        let mut failed = 0;
        for n in 1..200 {
            fs.inject(Fault::ErrorOnNth { op, n });
            let result = repair_db("/db", &opts, [("users", users_options())]);
            fs.clear_faults();
            if result.is_ok() {
                break;
            }
            failed += 1;
            fs.crash(CrashMode::POWER_LOSS);
        }
        assert!(failed >= 1, "{op:?}: no operation of the repair failed");
        fs.crash(CrashMode::POWER_LOSS);
        // The finished repair survives the power loss, or is redone.
        if Db::open_cf("/db", opts.clone(), [("users", users_options())]).is_err() {
            repair_db("/db", &opts, [("users", users_options())]).unwrap();
        }
        let db = Db::open_cf("/db", opts.clone(), [("users", users_options())]).unwrap();
        assert_same(&scan(&db, None), &model, &format!("{op:?}"));
        assert_eq!(scan(&db, Some("users")).len(), 1, "{op:?}");
        db.close().unwrap();
    }
}
