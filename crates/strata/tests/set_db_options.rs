//! `Db::set_db_options`, in a test binary of its own: it counts this
//! process's compaction threads, which other tests' databases would change.
// Test code may panic on failure: that is how a test reports it.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use strata::{Db, DbOptions, Error};

/// Threads of this process whose name starts with `prefix` (Linux shows the
/// first 15 bytes of a thread's name).
fn threads_named(prefix: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter(|task| {
            let comm = task.as_ref().unwrap().path().join("comm");
            std::fs::read_to_string(comm).is_ok_and(|name| name.starts_with(prefix))
        })
        .count()
}

#[test]
fn set_db_options_changes_background_jobs_and_write_rate_and_records_them() {
    let dir = tempfile::tempdir().unwrap();
    let options = DbOptions {
        create_if_missing: true,
        ..DbOptions::default()
    };
    let db = Db::open(dir.path(), options).unwrap();
    // A new thread names itself once it runs: wait for the count.
    let eventually = |want: usize| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while threads_named("strata-compact") != want && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(threads_named("strata-compact"), want);
    };
    // max_background_jobs = 2: the flush thread and one compaction thread.
    eventually(1);
    db.set_db_options(&[
        ("max_background_jobs", "4"),
        ("delayed_write_rate", "1048576"),
    ])
    .unwrap();
    eventually(3);
    let (stored, _) = strata::load_latest_options(dir.path(), &Default::default()).unwrap();
    assert_eq!(stored.compaction.max_background_jobs, 4);
    assert_eq!(stored.compaction.delayed_write_rate, 1048576);
    // Bad input changes nothing.
    for bad in [
        &[("max_open_files", "10")][..],
        &[("max_background_jobs", "0")],
        &[("delayed_write_rate", "fast")],
        &[("delayed_write_rate", "1"), ("no_such_option", "1")],
    ] {
        let err = db.set_db_options(bad).unwrap_err();
        assert!(
            matches!(err, Error::InvalidArgument { .. }),
            "{bad:?}: {err}"
        );
    }
    let (stored, _) = strata::load_latest_options(dir.path(), &Default::default()).unwrap();
    assert_eq!(stored.compaction.delayed_write_rate, 1048576);
    // Fewer jobs, down to RocksDB's least: compaction still runs, on the
    // one compaction thread left.
    db.set_db_options(&[("max_background_jobs", "1")]).unwrap();
    for round in 0..6u32 {
        for i in 0..200u32 {
            db.put(format!("k{i:04}"), format!("v{round}")).unwrap();
        }
        db.flush().unwrap();
    }
    db.wait_for_compaction().unwrap();
    assert!(
        db.property("rocksdb.num-files-at-level0")
            .unwrap()
            .parse::<u32>()
            .unwrap()
            < 4
    );
    assert_eq!(db.get("k0007").unwrap().as_deref(), Some(&b"v5"[..]));
    db.close().unwrap();
}
