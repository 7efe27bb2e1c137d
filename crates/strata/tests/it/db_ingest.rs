//! Ingestion of `SstFileWriter` files: into an empty family and over
//! existing data (flushed and in the memtable), with range deletions and
//! merges, snapshots, reopening and compaction; and every kind of bad input
//! refused with the database unchanged.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use strata::fs::{Fs, SimFs};
use strata::{
    merge_operator_from_name, CfOptions, Db, DbOptions, Error, IngestExternalFileOptions,
    ReadOptions, ReverseBytewiseComparator, SstFileWriter,
};

use crate::util::sim_options;

fn scan(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.range(..)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

/// Writes `/in/{name}` with puts `key{i:05}` = `{tag}{i}` for `range`.
fn puts_file(fs: &SimFs, name: &str, range: std::ops::Range<u32>, tag: &str) -> PathBuf {
    let path = Path::new("/in").join(name);
    fs.create_dir_all(Path::new("/in")).unwrap();
    let mut w = SstFileWriter::create_with_fs(fs, &path, &CfOptions::default()).unwrap();
    for i in range {
        w.put(format!("key{i:05}"), format!("{tag}{i}")).unwrap();
    }
    w.finish().unwrap();
    fs.sync_dir(Path::new("/in")).unwrap();
    path
}

fn read_all(fs: &SimFs, path: &Path) -> Vec<u8> {
    let file = fs.open(path, Default::default()).unwrap();
    file.read_at(0, file.len() as usize).unwrap().to_vec()
}

fn write_all(fs: &SimFs, path: &Path, bytes: &[u8]) {
    let mut file = fs.create(path).unwrap();
    file.append(bytes).unwrap();
    file.sync().unwrap();
}

fn level_counts(db: &Db) -> Vec<usize> {
    (0..7)
        .map(|l| {
            db.property(&format!("rocksdb.num-files-at-level{l}"))
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

#[test]
fn into_an_empty_database_files_go_to_the_last_level_at_sequence_zero() {
    let fs = SimFs::new(1);
    let db = Db::open("/db", sim_options(&fs)).unwrap();
    let files: Vec<PathBuf> = (0..3)
        .map(|f| puts_file(&fs, &format!("{f}.sst"), f * 100..f * 100 + 100, "v"))
        .collect();
    db.ingest_external_file(&files, &IngestExternalFileOptions::default())
        .unwrap();
    assert_eq!(level_counts(&db), vec![0, 0, 0, 0, 0, 0, 3]);
    let all = scan(&db);
    assert_eq!(all.len(), 300);
    assert_eq!(db.get(key(250)).unwrap().as_deref(), Some(&b"v250"[..]));
    // Later writes are newer than the ingested data.
    db.put(key(5), "new").unwrap();
    assert_eq!(db.get(key(5)).unwrap().as_deref(), Some(&b"new"[..]));
    // The source files were copied, not moved.
    assert!(fs.exists(&files[0]).unwrap());
    drop(db);
    let db = Db::open("/db", sim_options(&fs)).unwrap();
    assert_eq!(db.get(key(5)).unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(db.get(key(299)).unwrap().as_deref(), Some(&b"v299"[..]));
}

#[test]
fn over_flushed_data_the_files_get_a_global_seqno_and_win() {
    let fs = SimFs::new(2);
    let db = Db::open("/db", sim_options(&fs)).unwrap();
    for i in 0..200 {
        db.put(key(i), "old").unwrap();
    }
    db.flush().unwrap();
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    let before = db.snapshot();
    let file = puts_file(&fs, "a.sst", 50..150, "new");
    db.ingest_external_file(&[&file], &IngestExternalFileOptions::default())
        .unwrap();
    let all = scan(&db);
    for i in 0..200 {
        let want: &[u8] = if (50..150).contains(&i) {
            format!("new{i}").leak().as_bytes()
        } else {
            b"old"
        };
        assert_eq!(
            all.get(&key(i)).map(|v| v.as_slice()),
            Some(want),
            "key {i}"
        );
    }
    // The snapshot taken before does not see the files.
    let ro = ReadOptions {
        snapshot: Some(before),
        ..ReadOptions::default()
    };
    assert_eq!(
        db.get_opt(&ro, key(60)).unwrap().as_deref(),
        Some(&b"old"[..])
    );
    let old: Vec<_> = db.range_opt(&ro, ..).map(|r| r.unwrap()).collect();
    assert!(
        old.iter().all(|(_, v)| &v[..] == b"old"),
        "snapshot iteration saw ingested data"
    );
    // Backward iteration and seeks see the same data.
    let mut it = db.iter();
    it.seek_for_prev(&key(100));
    assert_eq!(it.value().unwrap(), b"new100");
    it.prev();
    assert_eq!(it.value().unwrap(), b"new99");
    it.seek(&key(150));
    assert_eq!(it.value().unwrap(), b"old");
    it.prev();
    assert_eq!(it.value().unwrap(), b"new149");
    drop(it);
    // Reopened, and compacted to the bottom, the answers stay.
    drop(db);
    let db = Db::open("/db", sim_options(&fs)).unwrap();
    assert_eq!(scan(&db), all);
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    assert_eq!(scan(&db), all);
    db.put(key(60), "later").unwrap();
    assert_eq!(db.get(key(60)).unwrap().as_deref(), Some(&b"later"[..]));
}

/// Files of one ingestion that need a global seqno get one each, all above
/// every write and published together: with one shared number, a universal
/// compaction merging one file with older data wrote an output tying with
/// another file on largest sequence number, and L0 then answered with the
/// older data (a deleted key came back in `model_with_ingestion`).
#[test]
fn files_of_one_ingestion_get_a_sequence_number_each() {
    let fs = SimFs::new(9);
    let options = strata::DbOptions {
        // No compaction may merge the files before they are looked at.
        compaction: strata::CompactionOptions {
            compaction_style: strata::CompactionStyle::Universal,
            disable_auto_compactions: true,
            ..strata::CompactionOptions::default()
        },
        ..sim_options(&fs)
    };
    let db = Db::open("/db", options).unwrap();
    for i in 0..300 {
        db.put(key(i), "old").unwrap();
    }
    db.flush().unwrap();
    let before = db.snapshot();
    let last = db.latest_sequence_number();
    let files = [
        puts_file(&fs, "a.sst", 0..100, "a"),
        puts_file(&fs, "b.sst", 100..200, "b"),
        puts_file(&fs, "c.sst", 200..300, "c"),
    ];
    db.ingest_external_file(&files, &IngestExternalFileOptions::default())
        .unwrap();
    let mut seqs: Vec<(u64, u64)> = db
        .live_files_metadata()
        .into_iter()
        .filter(|f| f.smallest_seqno > last)
        .map(|f| (f.smallest_seqno, f.largest_seqno))
        .collect();
    seqs.sort_unstable();
    let want: Vec<(u64, u64)> = (last + 1..=last + 3).map(|s| (s, s)).collect();
    assert_eq!(seqs, want);
    assert_eq!(db.latest_sequence_number(), last + 3);
    let ro = ReadOptions {
        snapshot: Some(before),
        ..ReadOptions::default()
    };
    assert!(db.range_opt(&ro, ..).all(|r| &r.unwrap().1[..] == b"old"));
    assert_eq!(db.get(key(250)).unwrap().as_deref(), Some(&b"c250"[..]));
}

#[test]
fn an_overlapping_memtable_is_flushed_first_unless_forbidden() {
    let fs = SimFs::new(3);
    let db = Db::open("/db", sim_options(&fs)).unwrap();
    db.put(key(10), "mem").unwrap();
    db.put(key(900), "elsewhere").unwrap();
    let file = puts_file(&fs, "a.sst", 0..20, "file");
    let refuse = IngestExternalFileOptions {
        allow_blocking_flush: false,
        ..Default::default()
    };
    let err = db.ingest_external_file(&[&file], &refuse).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    assert_eq!(db.get(key(10)).unwrap().as_deref(), Some(&b"mem"[..]));
    assert_eq!(
        db.get(key(11)).unwrap(),
        None,
        "a refused file left data behind"
    );
    assert_eq!(
        table_files(&fs),
        0,
        "a refused file was left in the database"
    );

    db.ingest_external_file(&[&file], &IngestExternalFileOptions::default())
        .unwrap();
    assert_eq!(db.get(key(10)).unwrap().as_deref(), Some(&b"file10"[..]));
    assert_eq!(
        db.get(key(900)).unwrap().as_deref(),
        Some(&b"elsewhere"[..])
    );
    // Without a global seqno the overlap cannot be ingested.
    let again = puts_file(&fs, "b.sst", 5..8, "again");
    let no_seqno = IngestExternalFileOptions {
        allow_global_seqno: false,
        ..Default::default()
    };
    let err = db.ingest_external_file(&[&again], &no_seqno).unwrap_err();
    assert!(err.to_string().contains("global sequence number"), "{err}");
    assert_eq!(db.get(key(6)).unwrap().as_deref(), Some(&b"file6"[..]));
}

#[test]
fn range_deletions_and_merges_apply_over_older_data() {
    let fs = SimFs::new(4);
    let counters = CfOptions {
        merge_operator: Some(merge_operator_from_name("uint64add").unwrap()),
        ..CfOptions::default()
    };
    let options = DbOptions {
        merge_operator: counters.merge_operator.clone(),
        ..sim_options(&fs)
    };
    let db = Db::open("/db", options).unwrap();
    for i in 0..10u32 {
        db.put(key(i), 1u64.to_le_bytes()).unwrap();
    }
    db.flush().unwrap();
    fs.create_dir_all(Path::new("/in")).unwrap();
    let path = Path::new("/in/m.sst");
    let mut w = SstFileWriter::create_with_fs(&fs, path, &counters).unwrap();
    w.delete_range(key(5), key(8)).unwrap();
    w.merge(key(1), 41u64.to_le_bytes()).unwrap();
    w.delete(key(2)).unwrap();
    // The file's own entry in its deleted range stays: a range deletion
    // removes older data only.
    w.put(key(6), 7u64.to_le_bytes()).unwrap();
    let info = w.finish().unwrap();
    assert_eq!((info.num_entries, info.num_range_del_entries), (3, 1));
    db.ingest_external_file(&[path], &IngestExternalFileOptions::default())
        .unwrap();
    let check = |db: &Db| {
        let got = |i| {
            db.get(key(i))
                .unwrap()
                .map(|v| u64::from_le_bytes(v[..].try_into().unwrap()))
        };
        assert_eq!(got(0), Some(1));
        assert_eq!(got(1), Some(42));
        assert_eq!(got(2), None);
        assert_eq!(got(5), None);
        assert_eq!(got(6), Some(7));
        assert_eq!(got(7), None);
        assert_eq!(got(8), Some(1));
        assert_eq!(scan(db).len(), 7);
    };
    check(&db);
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    check(&db);
}

#[test]
fn move_files_removes_the_sources_and_a_family_takes_files_too() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        create_if_missing: true,
        ..DbOptions::default()
    };
    let db = Db::open(dir.path().join("db"), options).unwrap();
    let cf = db
        .create_column_family("side", CfOptions::default())
        .unwrap();
    let path = dir.path().join("bulk.sst");
    let mut w = SstFileWriter::create(&path, &CfOptions::default()).unwrap();
    w.put("a", "1").unwrap();
    w.put("b", "2").unwrap();
    w.finish().unwrap();
    let moving = IngestExternalFileOptions {
        move_files: true,
        ..Default::default()
    };
    db.ingest_external_file_cf(&cf, &[&path], &moving).unwrap();
    assert!(!path.exists(), "move_files left the source");
    assert_eq!(db.get_cf(&cf, "b").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(
        db.get("b").unwrap(),
        None,
        "the default family got the file"
    );
}

#[test]
fn bad_files_are_refused_and_change_nothing() {
    let fs = SimFs::new(5);
    let db = Db::open("/db", sim_options(&fs)).unwrap();
    db.put("x", "1").unwrap();
    db.flush().unwrap();
    let before = scan(&db);
    let tables_before = table_files(&fs);
    let fails = |paths: &[PathBuf], what: &str| -> Error {
        let err = db
            .ingest_external_file(paths, &IngestExternalFileOptions::default())
            .unwrap_err();
        assert_eq!(scan(&db), before, "{what}: the database changed");
        assert_eq!(
            table_files(&fs),
            tables_before,
            "{what}: files were left behind"
        );
        err
    };
    // Two files that overlap each other.
    let a = puts_file(&fs, "a.sst", 0..10, "a");
    let b = puts_file(&fs, "b.sst", 5..15, "b");
    let err = fails(&[a.clone(), b], "overlapping files");
    assert!(err.to_string().contains("overlap"), "{err}");
    // A missing file.
    fails(
        &[a.clone(), PathBuf::from("/in/missing.sst")],
        "missing file",
    );
    // The database's own table: not written for ingestion.
    let own = fs
        .list(Path::new("/db"))
        .unwrap()
        .into_iter()
        .find(|n| n.ends_with(".sst"))
        .unwrap();
    let err = fails(&[Path::new("/db").join(own)], "a database table");
    assert!(err.to_string().contains("SstFileWriter"), "{err}");
    // Another comparator.
    let reverse = CfOptions {
        comparator: std::sync::Arc::new(ReverseBytewiseComparator),
        ..CfOptions::default()
    };
    let path = Path::new("/in/rev.sst");
    let mut w = SstFileWriter::create_with_fs(&fs, path, &reverse).unwrap();
    w.put("b", "1").unwrap();
    w.put("a", "1").unwrap();
    w.finish().unwrap();
    let err = fails(&[path.to_path_buf()], "another comparator");
    assert!(err.to_string().contains("comparator"), "{err}");
    // A damaged file: one byte of its data block changed.
    let damaged = puts_file(&fs, "d.sst", 0..50, "d");
    let bytes = read_all(&fs, &damaged);
    let mut bad = bytes.clone();
    bad[20] ^= 0x40;
    let damaged_copy = Path::new("/in/d2.sst");
    write_all(&fs, damaged_copy, &bad);
    let err = fails(&[damaged_copy.to_path_buf()], "damaged file");
    assert!(err.is_corruption(), "{err}");
    // A truncated file.
    let cut = Path::new("/in/cut.sst");
    write_all(&fs, cut, &bytes[..bytes.len() - 10]);
    fails(&[cut.to_path_buf()], "truncated file");
    // No files at all.
    fails(&[], "no files");
    // The writer refuses what ingestion could not take.
    let mut w =
        SstFileWriter::create_with_fs(&fs, Path::new("/in/u.sst"), &CfOptions::default()).unwrap();
    w.put("b", "1").unwrap();
    assert!(w.put("a", "1").is_err(), "out of order");
    assert!(w.put("b", "2").is_err(), "the same key twice");
    assert!(w.delete_range("z", "y").is_err(), "inverted range");
    let empty =
        SstFileWriter::create_with_fs(&fs, Path::new("/in/e.sst"), &CfOptions::default()).unwrap();
    assert!(empty.finish().is_err(), "an empty file");
    assert!(
        SstFileWriter::create_with_fs(&fs, &a, &CfOptions::default()).is_err(),
        "existing path"
    );
    // And the database still takes a good file.
    db.ingest_external_file(&[a], &IngestExternalFileOptions::default())
        .unwrap();
    assert_eq!(db.get(key(3)).unwrap().as_deref(), Some(&b"a3"[..]));
}

fn table_files(fs: &SimFs) -> usize {
    fs.list(Path::new("/db"))
        .unwrap()
        .iter()
        .filter(|n| n.ends_with(".sst"))
        .count()
}

/// Each file creation, append and sync of an ingestion fails in turn: the
/// ingestion is all or nothing, before and after a power loss, leaves no
/// stray file once reopened, and a finished one survives a power loss.
#[test]
fn failures_and_power_loss_during_ingestion_keep_it_all_or_nothing() {
    use strata::fs::sim::{CrashMode, Fault, OpKind};
    for (round, op) in [OpKind::Create, OpKind::Append, OpKind::Sync]
        .into_iter()
        .enumerate()
    {
        let fs = SimFs::new(40 + round as u64);
        let mut db = Db::open("/db", sim_options(&fs)).unwrap();
        for i in 0..300 {
            db.put(key(i), "old").unwrap();
        }
        db.flush().unwrap();
        let files = [
            puts_file(&fs, "a.sst", 0..100, "a"),
            puts_file(&fs, "b.sst", 200..250, "b"),
        ];
        let before = scan(&db);
        let mut after = before.clone();
        for i in (0..100).chain(200..250) {
            let tag = if i < 100 { "a" } else { "b" };
            after.insert(key(i), format!("{tag}{i}").into_bytes());
        }
        let mut failed = 0;
        for n in 1..100 {
            fs.inject(Fault::ErrorOnNth { op, n });
            let result = db.ingest_external_file(&files, &IngestExternalFileOptions::default());
            fs.clear_faults();
            if result.is_ok() {
                assert_eq!(scan(&db), after);
                break;
            }
            assert!(n < 99, "{op:?}: the ingestion keeps failing: {result:?}");
            failed += 1;
            let now = scan(&db);
            assert!(
                now == before || now == after,
                "{op:?} #{n}: a partial ingestion"
            );
            // Whatever the failure left, a power loss and a reopen keep all
            // or nothing, with no table but the live ones.
            fs.halt();
            drop(db);
            fs.crash(CrashMode::POWER_LOSS);
            db = Db::open("/db", sim_options(&fs)).unwrap();
            let reopened = scan(&db);
            assert!(
                reopened == before || reopened == after,
                "{op:?} #{n}: partial after power loss"
            );
            assert_eq!(
                table_files(&fs),
                db.live_files().len(),
                "{op:?} #{n}: stray tables"
            );
            if reopened == after {
                break;
            }
        }
        assert!(failed >= 1, "{op:?}: no operation of the ingestion failed");
        fs.halt();
        drop(db);
        fs.crash(CrashMode::POWER_LOSS);
        let db = Db::open("/db", sim_options(&fs)).unwrap();
        assert_eq!(
            scan(&db),
            after,
            "{op:?}: a finished ingestion lost at power loss"
        );
    }
}
