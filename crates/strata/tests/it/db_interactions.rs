//! Where two features meet: regression tests for defects that only showed
//! when one operation ran into another (a drop under a writer, blob garbage
//! collection against another family's compactions, repair after ingestion,
//! a reopen with another merge operator). Each pins the interaction
//! deterministically rather than hoping a race lands.

use std::path::Path;
use std::sync::Arc;

use strata::fs::{Fs, SimFs};
use strata::{
    merge_operator_from_name, repair_db, BlobOptions, CfOptions, CompactionOptions, Db, DbOptions,
    Error, IngestExternalFileOptions, SstFileWriter, WriteBatch, WriteOptions,
};

use crate::util::{sim_options, wait_until};

/// A batch across two families, logged while one of them is dropped, commits
/// whole: the dropped family's part is discarded with the family, the other
/// part is readable, the writer is told it succeeded, and the database keeps
/// taking writes (it used to fail the write after half of it was durable, and
/// refuse every later write).
#[test]
fn a_family_dropped_while_a_batch_is_logged_leaves_the_batch_whole() {
    let fs = SimFs::new(331);
    let db = Arc::new(Db::open(Path::new("/db"), sim_options(&fs)).unwrap());
    let victim = db
        .create_column_family("victim", CfOptions::default())
        .unwrap();
    let mut batch = WriteBatch::new();
    batch.put(b"default-half", b"1").unwrap();
    batch.put_cf(&victim, b"victim-half", b"1").unwrap();
    // The batch waits in its WAL sync, past every check of its families.
    fs.hold_syncs_of(".log");
    let writer = {
        let db = db.clone();
        std::thread::spawn(move || {
            let sync = WriteOptions {
                sync: true,
                ..WriteOptions::default()
            };
            db.write(&sync, batch)
        })
    };
    wait_until("the batch to wait in its WAL sync", || fs.held_syncs() == 1);
    db.drop_column_family(&victim).unwrap();
    fs.release_syncs();
    writer.join().unwrap().unwrap();
    assert_eq!(db.get(b"default-half").unwrap().as_deref(), Some(&b"1"[..]));
    // No background error: every family still takes writes, and families
    // can still be created.
    db.put(b"after", b"2").unwrap();
    db.create_column_family("next", CfOptions::default())
        .unwrap();
    assert_eq!(
        db.property("rocksdb.background-errors").as_deref(),
        Some("0")
    );
    drop(victim);
    Arc::try_unwrap(db).unwrap().close().unwrap();
    let db = Db::open_cf(
        Path::new("/db"),
        sim_options(&fs),
        [("next", CfOptions::default())],
    )
    .unwrap();
    assert_eq!(db.get(b"default-half").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"2"[..]));
}

/// Family `gc` has blob files and forced blob garbage collection at its
/// extremes (every blob file within the cutoff, a threshold of 0.0); family
/// `busy`, with a higher id, takes writes and flushes until its L0 is at the
/// stop trigger. `busy` must get its compactions: forced collection of files
/// that hold no garbage used to be due forever, and the scheduler always
/// served the lowest family id first, so `busy`'s writers waited forever.
#[test]
fn forced_blob_gc_in_one_family_does_not_starve_another() {
    let fs = SimFs::new(332);
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    let gc = db
        .create_column_family(
            "gc",
            CfOptions {
                blob: BlobOptions {
                    enable_blob_files: true,
                    min_blob_size: 16,
                    enable_blob_garbage_collection: true,
                    blob_garbage_collection_age_cutoff: 1.0,
                    blob_garbage_collection_force_threshold: 0.0,
                    ..BlobOptions::default()
                },
                ..CfOptions::default()
            },
        )
        .unwrap();
    for i in 0..50u32 {
        db.put_cf(&gc, format!("g{i:03}"), [b'v'; 64]).unwrap();
    }
    db.flush_cf(&gc).unwrap();
    let busy = db
        .create_column_family(
            "busy",
            CfOptions {
                compaction: CompactionOptions {
                    level0_file_num_compaction_trigger: 2,
                    level0_slowdown_writes_trigger: 3,
                    level0_stop_writes_trigger: 4,
                    ..CompactionOptions::default()
                },
                ..CfOptions::default()
            },
        )
        .unwrap();
    // Writes that would wait out a stall fail instead, and are retried
    // until compaction lets them through: a starved family fails the test
    // at the deadline rather than hanging it.
    let no_slowdown = WriteOptions {
        no_slowdown: true,
        ..WriteOptions::default()
    };
    for round in 0..12u32 {
        let mut batch = WriteBatch::new();
        batch.put_cf(&busy, format!("b{round:03}"), "v").unwrap();
        wait_until("busy to take a write", || {
            db.write(&no_slowdown, batch.clone()).is_ok()
        });
        db.flush_cf(&busy).unwrap();
    }
    wait_until("busy's L0 to be compacted below its trigger", || {
        let l0 = db.property_cf(&busy, "rocksdb.num-files-at-level0");
        l0.and_then(|n| n.parse::<usize>().ok())
            .is_some_and(|n| n < 2)
    });
    for round in 0..12u32 {
        let key = format!("b{round:03}");
        assert_eq!(db.get_cf(&busy, &key).unwrap().as_deref(), Some(&b"v"[..]));
    }
    for i in 0..50u32 {
        let value = db.get_cf(&gc, format!("g{i:03}")).unwrap();
        assert_eq!(value.as_deref(), Some(&[b'v'; 64][..]));
    }
}

/// Removes the MANIFESTs and CURRENT of `/db` on `fs`.
fn lose_manifest(fs: &SimFs) {
    for name in fs.list(Path::new("/db")).unwrap() {
        if name == "CURRENT" || name.starts_with("MANIFEST-") {
            fs.remove(&Path::new("/db").join(name)).unwrap();
        }
    }
}

/// Writes made after an ingestion stay newer than the ingested table when
/// repair rebuilds a lost MANIFEST: the table's global sequence number is
/// recorded where repair finds it. Repair used to read the ingested table as
/// newer than every other write, bringing back a deleted key and an
/// overwritten value.
#[test]
fn repair_keeps_writes_made_after_an_ingestion_newer() {
    let fs = SimFs::new(333);
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    db.put(b"x", b"base").unwrap();
    db.flush().unwrap();
    fs.create_dir_all(Path::new("/in")).unwrap();
    let file = Path::new("/in/ingest.sst");
    let mut writer = SstFileWriter::create_with_fs(&fs, file, &CfOptions::default()).unwrap();
    writer.put(b"w", b"ingested").unwrap();
    writer.put(b"x", b"ingested").unwrap();
    writer.finish().unwrap();
    db.ingest_external_file(&[file], &IngestExternalFileOptions::default())
        .unwrap();
    db.put(b"x", b"after").unwrap();
    db.delete(b"w").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    lose_manifest(&fs);
    let report = repair_db(Path::new("/db"), &sim_options(&fs), NO_FAMILIES).unwrap();
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    assert_eq!(
        db.get(b"x").unwrap().as_deref(),
        Some(&b"after"[..]),
        "{report:?}"
    );
    assert_eq!(db.get(b"w").unwrap(), None, "{report:?}");
}

const NO_FAMILIES: [(&str, CfOptions); 0] = [];

/// A family whose data was merged with one operator refuses to open with
/// another, or with none, naming both: read with another operator, every
/// merged key would read silently wrong. Changing it by `set_options` is
/// refused too.
#[test]
fn a_family_refuses_to_reopen_with_another_merge_operator() {
    let fs = SimFs::new(334);
    let with = |name: Option<&str>| CfOptions {
        merge_operator: name.map(|n| merge_operator_from_name(n).unwrap()),
        ..CfOptions::default()
    };
    let open = |name: Option<&str>| {
        Db::open_cf(
            Path::new("/db"),
            sim_options(&fs),
            [("counters", with(name))],
        )
    };
    let db = Db::open_cf(
        Path::new("/db"),
        DbOptions {
            create_missing_column_families: true,
            ..sim_options(&fs)
        },
        [("counters", with(Some("uint64add")))],
    )
    .unwrap();
    let counters = db.cf_handle("counters").unwrap();
    for _ in 0..3 {
        db.merge_cf(&counters, b"n", 1u64.to_le_bytes()).unwrap();
    }
    let refused = db.set_options(&counters, &[("merge_operator", "stringappend")]);
    assert!(refused.is_err(), "set_options changed the merge operator");
    drop(counters);
    db.close().unwrap();
    for other in [Some("stringappend"), None] {
        let err = open(other).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{text}");
        assert!(text.contains("UInt64AddOperator"), "{text}");
        if let Some(name) = other {
            let class = merge_operator_from_name(name).unwrap();
            assert!(text.contains(class.name()), "{text}");
        }
    }
    let db = open(Some("uint64add")).unwrap();
    let counters = db.cf_handle("counters").unwrap();
    let n = db.get_cf(&counters, b"n").unwrap().unwrap();
    assert_eq!(&n[..], &3u64.to_le_bytes()[..]);
}

/// A checkpoint taken while a family is dropped copies the families that
/// are left: it used to fail with "column family ... was dropped" when the
/// drop landed between its listing of the families and its flush of the
/// dropped one (found by strata-stress's race mode).
#[test]
fn a_checkpoint_racing_a_family_drop_copies_the_families_left() {
    let fs = SimFs::new(335);
    let db = Arc::new(Db::open(Path::new("/db"), sim_options(&fs)).unwrap());
    let victim = db
        .create_column_family("victim", CfOptions::default())
        .unwrap();
    db.put(b"kept", b"1").unwrap();
    db.put_cf(&victim, b"gone", b"1").unwrap();
    // The checkpoint waits in its flush of the default family, the first,
    // for the table's sync; the drop lands meanwhile.
    fs.hold_syncs_of(".sst");
    let checkpoint = {
        let db = db.clone();
        std::thread::spawn(move || db.create_checkpoint(Path::new("/copy")))
    };
    wait_until("the checkpoint's flush to wait in a table sync", || {
        fs.held_syncs() == 1
    });
    db.drop_column_family(&victim).unwrap();
    fs.release_syncs();
    checkpoint.join().unwrap().unwrap();
    let copy = Db::open(Path::new("/copy"), sim_options(&fs)).unwrap();
    assert_eq!(copy.get(b"kept").unwrap().as_deref(), Some(&b"1"[..]));
}

/// A checkpoint during which families are created and dropped, each
/// replacing the OPTIONS file, still carries the OPTIONS file it captured:
/// it used to copy it by name after the capture and fail when the file was
/// gone (found by strata-stress's race mode).
#[test]
fn a_checkpoint_keeps_its_options_file_while_families_come_and_go() {
    let fs = SimFs::new(336);
    let db = Arc::new(Db::open(Path::new("/db"), sim_options(&fs)).unwrap());
    db.put(b"kept", b"1").unwrap();
    // The checkpoint waits in the sync of the WAL it copies, after its
    // capture; two OPTIONS files are written meanwhile, and the older ones
    // deleted.
    fs.hold_syncs_of(".log");
    let checkpoint = {
        let db = db.clone();
        std::thread::spawn(move || db.create_checkpoint(Path::new("/copy")))
    };
    wait_until("the checkpoint to wait in a sync of its copy", || {
        fs.held_syncs() == 1
    });
    for round in 0..2 {
        let name = format!("passing{round}");
        let cf = db
            .create_column_family(&name, CfOptions::default())
            .unwrap();
        db.drop_column_family(&cf).unwrap();
    }
    fs.release_syncs();
    checkpoint.join().unwrap().unwrap();
    let listing = fs.list(Path::new("/copy")).unwrap();
    assert!(
        listing.iter().any(|name| name.starts_with("OPTIONS-")),
        "{listing:?}"
    );
    let copy = Db::open(Path::new("/copy"), sim_options(&fs)).unwrap();
    assert_eq!(copy.get(b"kept").unwrap().as_deref(), Some(&b"1"[..]));
}

/// Universal compaction with every L0 trigger at 1 (valid options): one
/// flushed table stops writes, and no rule of the picker merged a lone run,
/// so every writer waited forever. L0 holding writes back is now always
/// compacted.
#[test]
fn universal_compaction_at_a_stop_trigger_of_one_does_not_stop_writes_for_good() {
    let fs = SimFs::new(337);
    let db = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    let options = CfOptions {
        compaction: CompactionOptions {
            compaction_style: strata::CompactionStyle::Universal,
            level0_file_num_compaction_trigger: 1,
            level0_slowdown_writes_trigger: 1,
            level0_stop_writes_trigger: 1,
            ..CompactionOptions::default()
        },
        ..CfOptions::default()
    };
    let tiered = db.create_column_family("tiered", options).unwrap();
    let no_slowdown = WriteOptions {
        no_slowdown: true,
        ..WriteOptions::default()
    };
    for round in 0..5u32 {
        let mut batch = WriteBatch::new();
        batch.put_cf(&tiered, format!("k{round}"), "v").unwrap();
        batch.put(format!("other{round}"), "v").unwrap();
        wait_until("a write to go through", || {
            db.write(&no_slowdown, batch.clone()).is_ok()
        });
        db.flush_cf(&tiered).unwrap();
    }
    db.wait_for_compaction().unwrap();
    for round in 0..5u32 {
        let key = format!("k{round}");
        assert_eq!(
            db.get_cf(&tiered, &key).unwrap().as_deref(),
            Some(&b"v"[..])
        );
    }
}

/// A handle of another database is refused by every write, alone or in a
/// batch: records name families by id, so it used to write into whichever
/// family of this database has the same id.
#[test]
fn another_databases_family_handle_is_refused_by_writes() {
    let (fs_a, fs_b) = (SimFs::new(339), SimFs::new(340));
    let a = Db::open(Path::new("/db"), sim_options(&fs_a)).unwrap();
    let b = Db::open(Path::new("/db"), sim_options(&fs_b)).unwrap();
    let mine = a
        .create_column_family("mine", CfOptions::default())
        .unwrap();
    let theirs = b
        .create_column_family("theirs", CfOptions::default())
        .unwrap();
    assert_eq!(mine.id(), theirs.id());
    let err = a.put_cf(&theirs, b"k", b"v").unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    let mut batch = WriteBatch::new();
    batch.put(b"k", b"v").unwrap();
    batch.put_cf(&theirs, b"k", b"v").unwrap();
    let err = a.write(&WriteOptions::default(), batch).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    let mut mixed = WriteBatch::new();
    mixed.put_cf(&mine, b"k", b"v").unwrap();
    assert!(mixed.delete_cf(&theirs, b"k").is_err());
    assert_eq!(a.get(b"k").unwrap(), None);
    assert_eq!(a.get_cf(&mine, b"k").unwrap(), None);
    a.write(&WriteOptions::default(), mixed).unwrap();
    assert_eq!(a.get_cf(&mine, b"k").unwrap().as_deref(), Some(&b"v"[..]));
}
