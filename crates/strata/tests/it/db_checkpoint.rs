//! Checkpoints: an openable copy made while writes go on, holding every
//! write acknowledged before the call, each batch whole; with families,
//! blob files, range deletions and unflushed writes; refused into an
//! existing directory; and a failure or crash while one is made leaves the
//! database as it was.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use strata::fs::sim::{CrashMode, Fault, OpKind};
use strata::fs::{Fs, SimFs};
use strata::{BlobOptions, Db, DbOptions, Error, WriteBatch, WriteOptions};

use crate::util::sim_options;

fn scan(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    db.range(..)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

fn scan_cf(db: &Db, name: &str) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let cf = db.cf_handle(name).unwrap();
    db.range_cf(&cf, ..)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

/// Two writers put numbered keys into two families with one batch each,
/// while the checkpoint is taken: the copy holds every batch acknowledged
/// before the call, each writer's batches form a prefix, and every batch is
/// in both families or in neither.
#[test]
fn checkpoint_during_writes_holds_every_acknowledged_batch() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        create_if_missing: true,
        create_missing_column_families: true,
        write_buffer_size: 256 << 10,
        blob: BlobOptions {
            enable_blob_files: true,
            min_blob_size: 200,
            ..BlobOptions::default()
        },
        ..DbOptions::default()
    };
    let other = options.cf_options();
    let db = Arc::new(Db::open_cf(dir.path().join("db"), options, [("other", other)]).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let acked: Arc<[AtomicU64; 2]> = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let writers: Vec<_> = (0..2u64)
        .map(|w| {
            let (db, stop, acked) = (db.clone(), stop.clone(), acked.clone());
            std::thread::spawn(move || {
                let cf = db.cf_handle("other").unwrap();
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    i += 1;
                    let key = format!("w{w}-{i:08}");
                    // Every fourth value is large enough for a blob file.
                    let value = format!("{i}-{}", "v".repeat(if i % 4 == 0 { 300 } else { 10 }));
                    let mut batch = WriteBatch::new();
                    batch.put(&key, &value).unwrap();
                    batch.put_cf(&cf, &key, &value).unwrap();
                    db.write(&WriteOptions::default(), batch).unwrap();
                    acked[w as usize].store(i, Ordering::Release);
                }
            })
        })
        .collect();
    while acked[0].load(Ordering::Acquire) < 20_000 || acked[1].load(Ordering::Acquire) < 20_000 {
        std::thread::yield_now();
    }
    let before = [
        acked[0].load(Ordering::Acquire),
        acked[1].load(Ordering::Acquire),
    ];
    let copy = dir.path().join("copy");
    db.create_checkpoint(&copy).unwrap();
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    let options = DbOptions::default();
    let names = Db::list_column_families(&copy, &options).unwrap();
    assert!(names.contains(&"other".to_string()), "{names:?}");
    let other = options.cf_options();
    let snapshot = Db::open_cf(&copy, options, [("other", other)]).unwrap();
    let default = scan(&snapshot);
    assert_eq!(
        default,
        scan_cf(&snapshot, "other"),
        "a batch split across families"
    );
    for (w, &acknowledged) in before.iter().enumerate() {
        let present: Vec<u64> = default
            .keys()
            .filter_map(|k| {
                std::str::from_utf8(k)
                    .ok()?
                    .strip_prefix(&format!("w{w}-"))?
                    .parse()
                    .ok()
            })
            .collect();
        let last = present.len() as u64;
        assert!(
            last >= acknowledged,
            "writer {w}: {last} batches, {acknowledged} acknowledged"
        );
        assert_eq!(
            present,
            (1..=last).collect::<Vec<_>>(),
            "writer {w}: not a prefix"
        );
    }
}

/// On the real file system the copy's tables and blob files are hard links
/// to the database's: the same inodes.
#[test]
fn checkpoint_hard_links_tables_and_blob_files() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        create_if_missing: true,
        blob: BlobOptions {
            enable_blob_files: true,
            min_blob_size: 100,
            ..BlobOptions::default()
        },
        ..DbOptions::default()
    };
    let db = Db::open(dir.path().join("db"), options).unwrap();
    db.put("small", "s").unwrap();
    db.put("big", "b".repeat(500)).unwrap();
    db.flush().unwrap();
    let copy = dir.path().join("copy");
    db.create_checkpoint(&copy).unwrap();
    let inode = |p: &Path| std::fs::metadata(p).unwrap().ino();
    let mut linked = 0;
    for entry in std::fs::read_dir(&copy).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "sst" || x == "blob") {
            let original = dir.path().join("db").join(path.file_name().unwrap());
            assert_eq!(inode(&path), inode(&original), "{path:?} was copied");
            linked += 1;
        }
    }
    assert_eq!(linked, 2, "one table and one blob file");
    let copy = Db::open(&copy, DbOptions::default()).unwrap();
    assert_eq!(
        copy.get("big").unwrap().unwrap().to_vec(),
        "b".repeat(500).as_bytes()
    );
}

/// The model the simulated-file-system tests write: families, blob files,
/// a range deletion, and writes left in the memtable and WAL.
fn write_model(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut model = BTreeMap::new();
    for i in 0..300u32 {
        let value = format!("{i}-{}", "x".repeat((i % 3) as usize * 150));
        db.put(format!("k{i:04}"), &value).unwrap();
        model.insert(format!("k{i:04}").into_bytes(), value.into_bytes());
        if i == 150 {
            db.flush().unwrap();
        }
    }
    db.delete_range("k0100", "k0120").unwrap();
    model.retain(|k, _| k.as_slice() < &b"k0100"[..] || k.as_slice() >= &b"k0120"[..]);
    model
}

fn sim_blob_options(fs: &SimFs) -> DbOptions {
    DbOptions {
        blob: BlobOptions {
            enable_blob_files: true,
            min_blob_size: 100,
            ..BlobOptions::default()
        },
        ..sim_options(fs)
    }
}

/// On the simulated file system (which cannot link: files are copied), a
/// checkpoint survives a power loss right after the call, and so does the
/// database.
#[test]
fn checkpoint_survives_power_loss() {
    let fs = SimFs::new(11);
    let db = Db::open(Path::new("/db"), sim_blob_options(&fs)).unwrap();
    let model = write_model(&db);
    db.create_checkpoint(Path::new("/copy")).unwrap();
    db.put("after", "not in the copy").unwrap();
    fs.halt();
    drop(db);
    fs.crash(CrashMode::POWER_LOSS);
    let open = |dir: &str| Db::open(Path::new(dir), sim_blob_options(&fs)).unwrap();
    let copy = open("/copy");
    assert_eq!(scan(&copy), model);
    assert!(copy.property("strata.num-blob-files").unwrap() != "0");
    drop(copy);
    let db = open("/db");
    assert_eq!(
        scan(&db).len(),
        model.len() + usize::from(db.get("after").unwrap().is_some())
    );
}

/// A checkpoint into an existing directory is refused and changes nothing;
/// one that fails part way (each of its file creations failing in turn)
/// leaves a directory that does not open as a database, and the database
/// as it was, before and after a power loss.
#[test]
fn failed_checkpoints_change_nothing() {
    let fs = SimFs::new(12);
    let db = Db::open(Path::new("/db"), sim_blob_options(&fs)).unwrap();
    let model = write_model(&db);
    db.flush().unwrap();
    fs.create_dir_all(Path::new("/taken")).unwrap();
    match db.create_checkpoint(Path::new("/taken")) {
        Err(e @ Error::InvalidArgument { .. }) => assert!(e.to_string().contains("exists"), "{e}"),
        other => panic!("checkpoint into an existing directory: {other:?}"),
    }
    let mut failed = 0;
    for n in 1.. {
        let dir = format!("/copy{n}");
        fs.inject(Fault::ErrorOnNth {
            op: OpKind::Create,
            n,
        });
        let made = db.create_checkpoint(Path::new(&dir));
        fs.clear_faults();
        if made.is_ok() {
            break;
        }
        failed += 1;
        let existing = DbOptions {
            create_if_missing: false,
            ..sim_blob_options(&fs)
        };
        assert!(Db::open(Path::new(&dir), existing).is_err(), "{dir} opened");
        assert_eq!(scan(&db), model, "after a failed checkpoint");
    }
    assert!(failed >= 5, "only {failed} file creations");
    fs.halt();
    drop(db);
    fs.crash(CrashMode::POWER_LOSS);
    let db = Db::open(Path::new("/db"), sim_blob_options(&fs)).unwrap();
    assert_eq!(scan(&db), model);
}
