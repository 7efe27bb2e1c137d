//! Ingestion meets repair: an ingested table records its global seqno in a
//! tail of its own file, so that `repair`, without the MANIFEST, keeps it
//! where it was among the writes before and after it: placed at sequence
//! number 0, moved in by a hard link, cut by a crash at any step of the
//! tail, or ingested by a build before the tail (read as newest, as ever);
//! and in the family that ingested it, which the tail records too.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use strata::fs::sim::{CrashMode, DataLoss, Fault, OpKind};
use strata::fs::{Fs, ReadFileOptions, SimFs, StdFs};
use strata::table::TableReader;
use strata::{
    repair_db, CfOptions, CompactionOptions, Db, DbOptions, IngestExternalFileOptions,
    RepairReport, SstFileWriter,
};

use crate::util::sim_options;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const NO_FAMILIES: [(&str, CfOptions); 0] = [];

fn scan(db: &Db) -> Model {
    db.range(..)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

/// `sim_options` without automatic compactions, so that the only file
/// system operations while a test counts them are the ingestion's.
fn quiet_options(fs: &SimFs) -> DbOptions {
    DbOptions {
        compaction: CompactionOptions {
            disable_auto_compactions: true,
            ..CompactionOptions::default()
        },
        ..sim_options(fs)
    }
}

/// Writes `/in/ingest.sst` holding `entries`.
fn sst_file(fs: &SimFs, entries: &[(&str, &str)]) -> &'static Path {
    let path = Path::new("/in/ingest.sst");
    fs.create_dir_all(Path::new("/in")).unwrap();
    let mut writer = SstFileWriter::create_with_fs(fs, path, &CfOptions::default()).unwrap();
    for (k, v) in entries {
        writer.put(k, v).unwrap();
    }
    writer.finish().unwrap();
    fs.sync_dir(Path::new("/in")).unwrap();
    path
}

/// Removes the MANIFESTs and CURRENT of `/db` on `fs`, then repairs it.
fn lose_manifest_and_repair(fs: &SimFs) -> RepairReport {
    for name in fs.list(Path::new("/db")).unwrap() {
        if name == "CURRENT" || name.starts_with("MANIFEST-") {
            fs.remove(&Path::new("/db").join(name)).unwrap();
        }
    }
    repair_db(Path::new("/db"), &quiet_options(fs), NO_FAMILIES).unwrap()
}

/// The global seqno the tail of table `path` records.
fn recorded_seqno(fs: &dyn Fs, path: &Path) -> Option<u64> {
    let file = fs.open(path, ReadFileOptions::default()).unwrap();
    let table = TableReader::open(file, path).unwrap();
    table.verify().unwrap();
    table.properties().global_seqno
}

fn model(entries: &[(&str, &str)]) -> Model {
    entries
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect()
}

/// Nothing overlaps the file, so it goes in at sequence number 0, below
/// every later write. Its tail records 0, and repair keeps the later
/// overwrite and deletion newer (it used to read the table as newest,
/// bringing back `b` and `c`'s ingested values).
#[test]
fn a_table_ingested_at_sequence_zero_stays_below_later_writes_after_repair() {
    let fs = SimFs::new(71);
    let db = Db::open("/db", quiet_options(&fs)).unwrap();
    let file = sst_file(&fs, &[("a", "in"), ("b", "in"), ("c", "in")]);
    db.ingest_external_file(&[file], &IngestExternalFileOptions::default())
        .unwrap();
    let live = db.live_files_metadata();
    assert_eq!(live.len(), 1);
    assert_eq!(live[0].largest_seqno, 0, "placed at sequence number 0");
    assert_eq!(recorded_seqno(&fs, &live[0].file_path), Some(0));
    assert_eq!(fs.file_size(&live[0].file_path).unwrap(), live[0].size);
    db.put("b", "later").unwrap();
    db.delete("c").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    let report = lose_manifest_and_repair(&fs);
    assert!(report.warnings.is_empty(), "{report:?}");
    let db = Db::open("/db", quiet_options(&fs)).unwrap();
    assert_eq!(
        scan(&db),
        model(&[("a", "in"), ("b", "later")]),
        "{report:?}"
    );
}

/// `move_files` links the source in: the tail lands on the source's inode
/// too (another name of it sees it), the table still verifies whole, and
/// repair keeps the writes after the ingestion newer.
#[test]
fn a_moved_file_takes_the_tail_and_repair_keeps_later_writes_newer() {
    let dir = tempfile::tempdir().unwrap();
    let db_dir = dir.path().join("db");
    let options = DbOptions {
        create_if_missing: true,
        ..DbOptions::default()
    };
    let db = Db::open(&db_dir, options.clone()).unwrap();
    db.put("x", "base").unwrap();
    db.flush().unwrap();
    let source = dir.path().join("bulk.sst");
    let mut writer = SstFileWriter::create(&source, &CfOptions::default()).unwrap();
    writer.put("w", "ingested").unwrap();
    writer.put("x", "ingested").unwrap();
    writer.finish().unwrap();
    let written_size = StdFs.file_size(&source).unwrap();
    // A second name of the source's inode, to look at it after the move.
    let other_name = dir.path().join("other-name.sst");
    assert!(StdFs.hard_link(&source, &other_name).unwrap());
    let moving = IngestExternalFileOptions {
        move_files: true,
        ..IngestExternalFileOptions::default()
    };
    db.ingest_external_file(&[&source], &moving).unwrap();
    assert!(!source.exists(), "move_files left the source");
    let live = db.live_files_metadata();
    let ingested = live.iter().find(|f| f.largest_seqno == 2).unwrap();
    assert_eq!(recorded_seqno(&StdFs, &ingested.file_path), Some(2));
    assert_eq!(StdFs.file_size(&ingested.file_path).unwrap(), ingested.size);
    assert!(ingested.size > written_size);
    assert_eq!(recorded_seqno(&StdFs, &other_name), Some(2), "not a link");
    db.put("x", "after").unwrap();
    db.delete("w").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    crate::util::lose_manifest(&db_dir);
    let report = repair_db(&db_dir, &options, NO_FAMILIES).unwrap();
    assert!(report.warnings.is_empty(), "{report:?}");
    let db = Db::open(&db_dir, options).unwrap();
    assert_eq!(db.get("x").unwrap().as_deref(), Some(&b"after"[..]));
    assert_eq!(db.get("w").unwrap(), None, "{report:?}");
}

/// A table ingested by a build before the tail (the source file as it
/// was, copied in) has no global seqno or family on record once the
/// MANIFEST is lost: repair reads it as newer than every other write, in
/// the default family, as it always did, and says so.
#[test]
fn a_table_ingested_before_the_tail_is_read_as_newest_with_a_warning() {
    let fs = SimFs::new(72);
    let db = Db::open("/db", quiet_options(&fs)).unwrap();
    db.put("x", "base").unwrap();
    db.flush().unwrap();
    let file = sst_file(&fs, &[("x", "ingested")]);
    let written_size = fs.file_size(file).unwrap();
    db.ingest_external_file(&[file], &IngestExternalFileOptions::default())
        .unwrap();
    let live = db.live_files_metadata();
    let ingested = live.iter().find(|f| f.largest_seqno == 2).unwrap();
    // What an earlier build left: the copy without a tail.
    fs.set_len(&ingested.file_path, written_size).unwrap();
    assert_eq!(recorded_seqno(&fs, &ingested.file_path), None);
    db.put("y", "later").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    let report = lose_manifest_and_repair(&fs);
    assert_eq!(report.warnings.len(), 2, "{report:?}");
    for warning in [
        "has no global seqno on record",
        "does not record its column family",
    ] {
        let said = report.warnings.iter().any(|w| w.contains(warning));
        assert!(said, "{warning}: {report:?}");
    }
    let db = Db::open("/db", quiet_options(&fs)).unwrap();
    assert_eq!(scan(&db), model(&[("x", "ingested"), ("y", "later")]));
}

/// A table ingested into a family other than the default goes back to it
/// after a repair without the MANIFEST: the tail records the family beside
/// the global seqno. Repair used to put every ingested table into the
/// default family, so `x`, `y` and `z` turned up there and `fam` lost them.
#[test]
fn a_table_ingested_into_a_family_goes_back_to_it_after_repair() {
    let fs = SimFs::new(73);
    let db = Db::open("/db", quiet_options(&fs)).unwrap();
    let fam = db
        .create_column_family("fam", CfOptions::default())
        .unwrap();
    let ingest = |cf: Option<&strata::ColumnFamily>, entries: &[(&str, &str)]| {
        // Copied in, so the next file may take the same name.
        let _ = fs.remove(Path::new("/in/ingest.sst"));
        let file = sst_file(&fs, entries);
        let options = IngestExternalFileOptions::default();
        match cf {
            Some(cf) => db.ingest_external_file_cf(cf, &[file], &options),
            None => db.ingest_external_file(&[file], &options),
        }
        .unwrap();
    };
    db.put("a", "1").unwrap();
    db.flush().unwrap();
    // At sequence number 0 (nothing in `fam` overlaps it).
    ingest(Some(&fam), &[("x", "ingested-into-fam")]);
    // At a global seqno, over a flushed write, with a write after it.
    db.put_cf(&fam, "y", "base").unwrap();
    db.flush_cf(&fam).unwrap();
    ingest(Some(&fam), &[("y", "ingested"), ("z", "ingested")]);
    db.put_cf(&fam, "z", "after").unwrap();
    db.flush_cf(&fam).unwrap();
    ingest(None, &[("b", "ingested-into-default")]);
    drop(fam);
    db.close().unwrap();
    let report = lose_manifest_and_repair(&fs);
    assert!(report.warnings.is_empty(), "{report:?}");
    let lost_tables = report.lost.iter().filter(|(p, _)| p.ends_with(".sst"));
    assert_eq!(lost_tables.count(), 0, "{report:?}");
    let families: Vec<&str> = report.families.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(families, ["default", "fam"], "{report:?}");
    let db = Db::open_cf("/db", quiet_options(&fs), [("fam", CfOptions::default())]).unwrap();
    assert_eq!(
        scan(&db),
        model(&[("a", "1"), ("b", "ingested-into-default")]),
        "default"
    );
    let fam = db.cf_handle("fam").unwrap();
    let in_fam: Model = db
        .range_cf(&fam, ..)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect();
    let want = [
        ("x", "ingested-into-fam"),
        ("y", "ingested"),
        ("z", "after"),
    ];
    assert_eq!(in_fam, model(&want), "fam");
}

/// The database and the file of the crash test: `x` and `y` flushed, a
/// file overlapping them (so it takes a global seqno) with `w` and `x`.
fn crash_test_setup(seed: u64) -> (SimFs, Db, &'static Path) {
    let fs = SimFs::new(seed);
    let db = Db::open("/db", quiet_options(&fs)).unwrap();
    db.put("x", "base").unwrap();
    db.put("y", "base").unwrap();
    db.flush().unwrap();
    let file = sst_file(&fs, &[("w", "ingested"), ("x", "ingested")]);
    (fs, db, file)
}

/// Every open, append and sync of an ingestion fails in turn (the tail's
/// read and reopen, its append and sync, the MANIFEST's after it), then
/// the machine crashes in each way (kill; power loss; torn or random
/// prefixes of unsynced bytes): the database opens with the ingestion
/// whole or not at all (whole if it was acknowledged), no stray table,
/// and a repair after a lost MANIFEST keeps later writes newer.
#[test]
fn a_crash_at_any_step_of_the_tail_leaves_the_ingestion_whole_or_absent() {
    let modes = [
        CrashMode::PROCESS_KILL,
        CrashMode::POWER_LOSS,
        CrashMode {
            data: DataLoss::TearLastWrite,
            lose_unsynced_dir_entries: true,
        },
        CrashMode {
            data: DataLoss::KeepRandomPrefix,
            lose_unsynced_dir_entries: false,
        },
    ];
    let before = model(&[("x", "base"), ("y", "base")]);
    let after = model(&[("w", "ingested"), ("x", "ingested"), ("y", "base")]);
    let mut seed = 80;
    for op in [OpKind::Open, OpKind::Append, OpKind::Sync] {
        let mut failures = 0;
        for n in 1.. {
            assert!(n < 50, "{op:?}: the ingestion keeps failing");
            let mut finished = false;
            for mode in modes {
                seed += 1;
                let (fs, db, file) = crash_test_setup(seed);
                fs.inject(Fault::ErrorOnNth { op, n });
                let result = db.ingest_external_file(&[file], &Default::default());
                fs.clear_faults();
                finished |= result.is_ok();
                let what = format!("{op:?} #{n}, {mode:?}, seed {seed}: {result:?}");
                fs.halt();
                drop(db);
                fs.crash(mode);
                let db = Db::open("/db", quiet_options(&fs)).unwrap();
                let found = scan(&db);
                assert!(found == before || found == after, "{what}: {found:?}");
                assert!(result.is_err() || found == after, "{what}: lost");
                let tables = fs.list(Path::new("/db")).unwrap();
                let tables = tables.iter().filter(|n| n.ends_with(".sst")).count();
                assert_eq!(tables, db.live_files().len(), "{what}: stray tables");
                db.put("x", "later").unwrap();
                db.flush().unwrap();
                db.close().unwrap();
                let report = lose_manifest_and_repair(&fs);
                assert!(report.warnings.is_empty(), "{what}: {report:?}");
                let db = Db::open("/db", quiet_options(&fs)).unwrap();
                let mut expected = found;
                expected.insert(b"x".to_vec(), b"later".to_vec());
                assert_eq!(scan(&db), expected, "{what}: after repair");
            }
            if finished {
                break;
            }
            failures += 1;
        }
        assert!(failures > 0, "{op:?}: no operation of the ingestion failed");
    }
}

/// Opening an existing file for appending is all the tail needs from a
/// file system; one without it fails the ingestion, which changes nothing.
#[test]
fn a_file_system_that_cannot_append_fails_the_ingestion_cleanly() {
    #[derive(Debug)]
    struct NoReopen {
        inner: Arc<SimFs>,
    }
    impl Fs for NoReopen {
        fn create_dir_all(&self, dir: &Path) -> strata::Result<()> {
            self.inner.create_dir_all(dir)
        }
        fn create(&self, path: &Path) -> strata::Result<Box<dyn strata::fs::WritableFile>> {
            self.inner.create(path)
        }
        fn open(
            &self,
            path: &Path,
            options: ReadFileOptions,
        ) -> strata::Result<Arc<dyn strata::fs::RandomAccessFile>> {
            self.inner.open(path, options)
        }
        fn rename(&self, from: &Path, to: &Path) -> strata::Result<()> {
            self.inner.rename(from, to)
        }
        fn remove(&self, path: &Path) -> strata::Result<()> {
            self.inner.remove(path)
        }
        fn list(&self, dir: &Path) -> strata::Result<Vec<String>> {
            self.inner.list(dir)
        }
        fn lock(&self, path: &Path) -> strata::Result<Box<dyn strata::fs::FileLock>> {
            self.inner.lock(path)
        }
        fn sync_dir(&self, dir: &Path) -> strata::Result<()> {
            self.inner.sync_dir(dir)
        }
        fn file_size(&self, path: &Path) -> strata::Result<u64> {
            self.inner.file_size(path)
        }
        fn exists(&self, path: &Path) -> strata::Result<bool> {
            self.inner.exists(path)
        }
    }
    let (fs, db, file) = crash_test_setup(90);
    db.close().unwrap();
    let options = DbOptions {
        fs: Arc::new(NoReopen {
            inner: Arc::new(fs.clone()),
        }),
        ..quiet_options(&fs)
    };
    let db = Db::open("/db", options).unwrap();
    let err = db
        .ingest_external_file(&[file], &Default::default())
        .unwrap_err();
    assert!(err.to_string().contains("reopen for appending"), "{err}");
    assert_eq!(scan(&db), model(&[("x", "base"), ("y", "base")]));
    assert_eq!(
        fs.list(Path::new("/db"))
            .unwrap()
            .iter()
            .filter(|n| n.ends_with(".sst"))
            .count(),
        db.live_files().len(),
        "the copy was left behind"
    );
    db.put("z", "still writable").unwrap();
}

/// A write still in the memtable when a table is ingested over other data
/// is older than the ingestion's global seqno; once a compaction merges the
/// ingested table into one of its own, that table's largest sequence number
/// is above the write. Repair took every WAL record at or below a family's
/// largest table sequence number as flushed, and dropped the write, with the
/// MANIFEST whole or lost.
#[test]
fn a_write_older_than_a_compacted_ingestion_survives_repair() {
    for strip in [false, true] {
        let fs = SimFs::new(75);
        let mut options = sim_options(&fs);
        options.compaction.level0_file_num_compaction_trigger = 2;
        let db = Db::open("/db", options).unwrap();
        db.put("k", "old").unwrap();
        db.flush().unwrap();
        // In the memtable and the WAL only, below the ingestion's seqno.
        db.put("z", "unflushed").unwrap();
        let file = sst_file(&fs, &[("k", "ingested")]);
        db.ingest_external_file(&[file], &IngestExternalFileOptions::default())
            .unwrap();
        // Two tables in L0: compacted into one whose largest seqno is the
        // ingestion's, above `z`'s.
        db.wait_for_compaction().unwrap();
        assert_eq!(db.live_files_metadata().len(), 1);
        db.close().unwrap();
        let report = if strip {
            lose_manifest_and_repair(&fs)
        } else {
            repair_db(Path::new("/db"), &quiet_options(&fs), NO_FAMILIES).unwrap()
        };
        let db = Db::open("/db", quiet_options(&fs)).unwrap();
        assert_eq!(
            scan(&db),
            model(&[("k", "ingested"), ("z", "unflushed")]),
            "strip {strip}: {report:?}"
        );
    }
}

/// Random writes, flushes and ingestions into three families, then a repair
/// with the MANIFEST removed (even seeds) or whole (odd seeds): every family
/// holds exactly what it held. Before the tail recorded the family, every
/// seed that ingested into another family than the default failed.
#[test]
fn model_ingestion_into_every_family_survives_repair() {
    const FAMILIES: [&str; 3] = ["default", "one", "two"];
    for seed in 0..24u64 {
        let fs = SimFs::new(700 + seed);
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let db = Db::open("/db", sim_options(&fs)).unwrap();
        let mut handles = vec![None];
        for name in &FAMILIES[1..] {
            handles.push(Some(
                db.create_column_family(name, CfOptions::default()).unwrap(),
            ));
        }
        let mut models = vec![Model::new(); FAMILIES.len()];
        for step in 0..80 {
            let f = rng.gen_range(0..FAMILIES.len());
            let cf = handles[f].as_ref();
            let key = format!("k{:02}", rng.gen_range(0..30)).into_bytes();
            let value = format!("s{seed}-{step}").into_bytes();
            match rng.gen_range(0..10) {
                0..=4 => {
                    match cf {
                        Some(cf) => db.put_cf(cf, &key, &value),
                        None => db.put(&key, &value),
                    }
                    .unwrap();
                    models[f].insert(key, value);
                }
                5 => {
                    match cf {
                        Some(cf) => db.delete_cf(cf, &key),
                        None => db.delete(&key),
                    }
                    .unwrap();
                    models[f].remove(&key);
                }
                6 => match cf {
                    Some(cf) => db.flush_cf(cf),
                    None => db.flush(),
                }
                .unwrap(),
                _ => {
                    let mut keys: Vec<u32> = (0..rng.gen_range(1..5))
                        .map(|_| rng.gen_range(0..30))
                        .collect();
                    keys.sort_unstable();
                    keys.dedup();
                    let _ = fs.remove(Path::new("/in/ingest.sst"));
                    let entries: Vec<(String, String)> = keys
                        .iter()
                        .map(|k| (format!("k{k:02}"), format!("s{seed}-{step}-in")))
                        .collect();
                    let refs: Vec<(&str, &str)> = entries
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    let file = sst_file(&fs, &refs);
                    let options = IngestExternalFileOptions::default();
                    match cf {
                        Some(cf) => db.ingest_external_file_cf(cf, &[file], &options),
                        None => db.ingest_external_file(&[file], &options),
                    }
                    .unwrap();
                    models[f].extend(model(&refs));
                }
            }
        }
        drop(handles);
        db.close().unwrap();
        let report = if seed % 2 == 0 {
            lose_manifest_and_repair(&fs)
        } else {
            repair_db(Path::new("/db"), &quiet_options(&fs), NO_FAMILIES).unwrap()
        };
        let what = format!("seed {seed}: {report:?}");
        assert!(report.warnings.is_empty(), "{what}");
        let named = FAMILIES[1..].iter().map(|n| (*n, CfOptions::default()));
        let db = Db::open_cf("/db", sim_options(&fs), named).unwrap();
        for (f, name) in FAMILIES.iter().enumerate() {
            let cf = db.cf_handle(name).unwrap();
            let found: Model = db
                .range_cf(&cf, ..)
                .map(|r| r.unwrap())
                .map(|(k, v)| (k.to_vec(), v.to_vec()))
                .collect();
            assert_eq!(found, models[f], "{name}, {what}");
        }
        db.close().unwrap();
    }
}
