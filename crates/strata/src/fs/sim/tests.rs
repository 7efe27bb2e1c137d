//! Tests of the simulated file system's durability model, crashes and faults.

use super::*;

const SYNC_NOTHING: CrashMode = CrashMode {
    data: DataLoss::DropUnsynced,
    lose_unsynced_dir_entries: false,
};

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

/// A file system with `/db` made.
fn fs_with_db(seed: u64) -> SimFs {
    let fs = SimFs::new(seed);
    fs.create_dir_all(&p("/db")).unwrap();
    fs
}

/// Writes `synced` and syncs it, then appends `unsynced` without syncing; the file's
/// directory entry is synced.
fn write_partly_synced(fs: &SimFs, path: &Path, synced: &[u8], unsynced: &[u8]) {
    let mut file = fs.create(path).unwrap();
    file.append(synced).unwrap();
    file.sync().unwrap();
    fs.sync_dir(parent_dir(path)).unwrap();
    file.append(unsynced).unwrap();
    file.flush().unwrap();
}

fn io_kind(err: Error) -> io::ErrorKind {
    match err {
        Error::Io { source, .. } => source.kind(),
        other => panic!("expected an I/O error, got {other:?}"),
    }
}

#[test]
fn synced_data_survives_drop_unsynced_and_unsynced_does_not() {
    let fs = fs_with_db(1);
    let path = p("/db/000001.log");
    write_partly_synced(&fs, &path, b"durable", b" lost");
    assert_eq!(fs.file_contents(&path).unwrap(), b"durable lost");
    fs.crash(CrashMode::POWER_LOSS);
    assert_eq!(fs.file_contents(&path).unwrap(), b"durable");
    // What survived is durable now: a second crash changes nothing.
    fs.crash(CrashMode::POWER_LOSS);
    assert_eq!(fs.file_contents(&path).unwrap(), b"durable");
}

#[test]
fn process_kill_keeps_everything() {
    let fs = fs_with_db(1);
    let path = p("/db/x");
    let mut file = fs.create(&path).unwrap();
    file.append(b"never synced").unwrap();
    fs.crash(CrashMode::PROCESS_KILL);
    assert_eq!(fs.file_contents(&path).unwrap(), b"never synced");
}

#[test]
fn keep_random_prefix_keeps_between_synced_and_full_length() {
    let mut lengths = BTreeSet::new();
    for seed in 0..40 {
        let fs = fs_with_db(seed);
        let path = p("/db/x");
        write_partly_synced(&fs, &path, b"0123", b"456789");
        fs.crash(CrashMode {
            data: DataLoss::KeepRandomPrefix,
            lose_unsynced_dir_entries: false,
        });
        let got = fs.file_contents(&path).unwrap();
        assert!((4..=10).contains(&got.len()), "seed {seed}: {got:?}");
        assert_eq!(got[..], b"0123456789"[..got.len()]);
        lengths.insert(got.len());
    }
    assert!(
        lengths.len() > 2,
        "prefixes should vary with the seed: {lengths:?}"
    );
}

#[test]
fn tear_last_write_keeps_synced_bytes_and_a_strict_prefix_of_the_last_append() {
    let tear = CrashMode {
        data: DataLoss::TearLastWrite,
        lose_unsynced_dir_entries: false,
    };
    let mut lengths = BTreeSet::new();
    for seed in 0..40 {
        let fs = fs_with_db(seed);
        let path = p("/db/x");
        write_partly_synced(&fs, &path, b"head", b"tail-record");
        fs.crash(tear);
        let got = fs.file_contents(&path).unwrap();
        assert!(got.len() >= 4 && got.len() < 15, "seed {seed}: {got:?}");
        assert_eq!(got[..], b"headtail-record"[..got.len()]);
        lengths.insert(got.len());
    }
    assert!(
        lengths.len() > 2,
        "tears should vary with the seed: {lengths:?}"
    );

    // When unsynced bytes precede the last append, only the synced bytes survive.
    let fs = fs_with_db(7);
    let path = p("/db/y");
    let mut file = fs.create(&path).unwrap();
    file.append(b"abc").unwrap();
    file.sync().unwrap();
    file.append(b"def").unwrap();
    file.append(b"ghi").unwrap();
    // A new file's first append follows zero synced bytes, so it can tear.
    let mut fresh = fs.create(&p("/db/z")).unwrap();
    fresh.append(b"unsynced").unwrap();
    fs.crash(tear);
    assert_eq!(fs.file_contents(&path).unwrap(), b"abc");
    let torn = fs.file_contents(&p("/db/z")).unwrap();
    assert!(torn.len() < 8 && b"unsynced".starts_with(&torn), "{torn:?}");
}

#[test]
fn new_file_needs_sync_dir_to_survive_losing_dir_entries() {
    let fs = fs_with_db(3);
    let path = p("/db/000005.sst");
    let mut file = fs.create(&path).unwrap();
    file.append(b"table").unwrap();
    file.sync().unwrap();
    drop(file);
    fs.crash(CrashMode::POWER_LOSS);
    assert!(!fs.exists(&path).unwrap());
    assert!(fs.file_contents(&path).is_none());
    assert!(
        fs.exists(&p("/db")).unwrap(),
        "directories are durable at once"
    );

    let mut file = fs.create(&path).unwrap();
    file.append(b"table").unwrap();
    file.sync().unwrap();
    fs.sync_dir(&p("/db")).unwrap();
    fs.crash(CrashMode::POWER_LOSS);
    assert_eq!(fs.file_contents(&path).unwrap(), b"table");

    // Without losing directory entries, an unsynced entry survives.
    let other = p("/db/000006.sst");
    fs.create(&other).unwrap();
    fs.crash(SYNC_NOTHING);
    assert!(fs.exists(&other).unwrap());
}

#[test]
fn unsynced_rename_and_remove_are_undone_by_losing_dir_entries() {
    let fs = fs_with_db(4);
    write_partly_synced(&fs, &p("/db/CURRENT"), b"MANIFEST-000001\n", b"");
    write_partly_synced(&fs, &p("/db/000002.dbtmp"), b"MANIFEST-000002\n", b"");
    fs.rename(&p("/db/000002.dbtmp"), &p("/db/CURRENT"))
        .unwrap();
    fs.remove(&p("/db/CURRENT")).ok();
    fs.crash(CrashMode::POWER_LOSS);
    assert_eq!(
        fs.file_contents(&p("/db/CURRENT")).unwrap(),
        b"MANIFEST-000001\n"
    );
    assert!(fs.exists(&p("/db/000002.dbtmp")).unwrap());

    fs.rename(&p("/db/000002.dbtmp"), &p("/db/CURRENT"))
        .unwrap();
    fs.sync_dir(&p("/db")).unwrap();
    fs.crash(CrashMode::POWER_LOSS);
    assert_eq!(
        fs.file_contents(&p("/db/CURRENT")).unwrap(),
        b"MANIFEST-000002\n"
    );
    assert!(!fs.exists(&p("/db/000002.dbtmp")).unwrap());
}

#[test]
fn recreating_a_file_is_not_durable_until_sync_dir() {
    let fs = fs_with_db(5);
    let path = p("/db/OPTIONS");
    write_partly_synced(&fs, &path, b"old", b"");
    let mut file = fs.create(&path).unwrap();
    file.append(b"new").unwrap();
    file.sync().unwrap();
    fs.crash(CrashMode::POWER_LOSS);
    assert_eq!(fs.file_contents(&path).unwrap(), b"old");
}

#[test]
fn failed_appends_tear_and_failed_syncs_lose_unsynced_bytes_at_power_loss() {
    let fs = fs_with_db(9);
    let mut file = fs.create(&p("/db/x")).unwrap();
    file.append(b"synced").unwrap();
    file.sync().unwrap();
    fs.sync_dir(&p("/db")).unwrap();
    file.append(b"-lost").unwrap();
    fs.inject(Fault::ErrorOnNth {
        op: OpKind::Sync,
        n: 1,
    });
    assert!(file.sync().is_err());
    // A retried fsync reports success, but the pages it would have written
    // were already dropped.
    file.append(b"-later").unwrap();
    file.sync().unwrap();
    fs.crash(CrashMode {
        data: DataLoss::DropUnsynced,
        lose_unsynced_dir_entries: false,
    });
    let contents = fs.file_contents(&p("/db/x")).unwrap();
    assert_eq!(contents, b"synced\0\0\0\0\0-later");
    // Torn appends: over many tries, both partial and empty writes land.
    let mut lengths = std::collections::BTreeSet::new();
    for _ in 0..40 {
        let mut f = fs.create(&p("/db/t")).unwrap();
        fs.inject(Fault::ErrorOnNth {
            op: OpKind::Append,
            n: 1,
        });
        assert!(f.append(b"0123456789").is_err());
        let landed = fs.file_contents(&p("/db/t")).unwrap();
        assert_eq!(landed, b"0123456789"[..landed.len()].to_vec());
        lengths.insert(landed.len());
    }
    assert!(lengths.len() > 3, "{lengths:?}");
}

#[test]
fn error_on_nth_fails_exactly_that_operation_once() {
    let fs = fs_with_db(6);
    let mut file = fs.create(&p("/db/x")).unwrap();
    file.append(b"a").unwrap();
    fs.inject(Fault::ErrorOnNth {
        op: OpKind::Append,
        n: 3,
    });
    file.append(b"b").unwrap();
    file.append(b"c").unwrap();
    let err = file.append(b"d").unwrap_err();
    match &err {
        Error::Io { source, .. } => assert_eq!(source.raw_os_error(), Some(libc::EIO)),
        other => panic!("expected EIO, got {other:?}"),
    }
    assert!(err.to_string().contains("append"), "{err}");
    // The failed append wrote a prefix of its data (here all or nothing of
    // one byte), and the fault was one-shot.
    file.append(b"e").unwrap();
    let contents = fs.file_contents(&p("/db/x")).unwrap();
    assert!(contents == b"abce" || contents == b"abcde", "{contents:?}");
    assert_eq!(fs.op_count(OpKind::Append), 5);

    // Sweep: count a workload's syncs, then fail each one in turn.
    let workload = |fs: &SimFs| -> Result<()> {
        let mut f = fs.create(&p("/db/w"))?;
        for _ in 0..3 {
            f.append(b"rec")?;
            f.sync()?;
        }
        fs.sync_dir(&p("/db"))
    };
    let before = fs.op_count(OpKind::Sync);
    workload(&fs).unwrap();
    let syncs = fs.op_count(OpKind::Sync) - before;
    assert_eq!(syncs, 3);
    for n in 1..=syncs {
        fs.inject(Fault::ErrorOnNth {
            op: OpKind::Sync,
            n,
        });
        assert!(workload(&fs).is_err(), "sync {n} should fail");
        assert_eq!(fs.file_contents(&p("/db/w")).unwrap().len() as u64, 3 * n);
    }
    fs.clear_faults();
    workload(&fs).unwrap();
}

#[test]
fn every_op_kind_can_fail() {
    let fs = fs_with_db(8);
    let db = p("/db");
    let x = p("/db/x");
    let mut writer = fs.create(&x).unwrap();
    writer.append(b"data").unwrap();
    let reader = fs.open(&x, ReadFileOptions::default()).unwrap();
    type Op<'a> = Box<dyn Fn(&mut Box<dyn WritableFile>) -> Result<()> + 'a>;
    let ops: Vec<(OpKind, Op)> = vec![
        (
            OpKind::Create,
            Box::new(|_| fs.create(&p("/db/y")).map(|_| ())),
        ),
        (
            OpKind::Open,
            Box::new(|_| fs.open(&x, Default::default()).map(|_| ())),
        ),
        (OpKind::Read, Box::new(|_| reader.read_at(0, 1).map(|_| ()))),
        (OpKind::Append, Box::new(|w| w.append(b"!"))),
        (OpKind::Flush, Box::new(|w| w.flush())),
        (OpKind::Sync, Box::new(|w| w.sync())),
        (OpKind::Rename, Box::new(|_| fs.rename(&x, &x))),
        (OpKind::Remove, Box::new(|_| fs.remove(&p("/db/y")))),
        (OpKind::SyncDir, Box::new(|_| fs.sync_dir(&db))),
        (OpKind::List, Box::new(|_| fs.list(&db).map(|_| ()))),
        (
            OpKind::Lock,
            Box::new(|_| fs.lock(&p("/db/LOCK")).map(|_| ())),
        ),
    ];
    assert_eq!(ops.len(), OpKind::ALL.len());
    for (kind, op) in &ops {
        fs.inject(Fault::ErrorOnNth { op: *kind, n: 1 });
        let err = op(&mut writer).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{kind:?}: {err:?}");
        op(&mut writer).unwrap();
    }
}

#[test]
fn quota_yields_no_space_and_writes_nothing() {
    let fs = fs_with_db(9);
    fs.inject(Fault::SpaceQuota { bytes: 10 });
    let mut a = fs.create(&p("/db/a")).unwrap();
    a.append(b"123456").unwrap();
    let mut b = fs.create(&p("/db/b")).unwrap();
    b.append(b"7890").unwrap();
    assert_eq!(fs.total_bytes(), 10);
    assert!(matches!(b.append(b"x"), Err(Error::NoSpace { .. })));
    assert_eq!(fs.file_contents(&p("/db/b")).unwrap(), b"7890");
    assert_eq!(b.len(), 4);
    // Removing a file frees its space once no handle holds it.
    fs.remove(&p("/db/a")).unwrap();
    assert_eq!(
        fs.total_bytes(),
        10,
        "an open unlinked file still takes space"
    );
    drop(a);
    assert_eq!(fs.total_bytes(), 4);
    b.append(b"x").unwrap();
    fs.clear_faults();
    b.append(&[0; 100]).unwrap();
}

#[test]
fn handles_and_locks_die_in_a_crash() {
    let fs = fs_with_db(10);
    let path = p("/db/000003.log");
    let mut writer = fs.create(&path).unwrap();
    writer.append(b"abc").unwrap();
    writer.sync().unwrap();
    fs.sync_dir(&p("/db")).unwrap();
    let reader = fs.open(&path, ReadFileOptions::default()).unwrap();
    let lock = fs.lock(&p("/db/LOCK")).unwrap();
    fs.crash(SYNC_NOTHING);

    assert!(writer.append(b"d").is_err());
    assert!(writer.sync().is_err());
    assert!(writer.flush().is_err());
    assert!(reader.read_at(0, 1).is_err());
    assert_eq!(fs.file_contents(&path).unwrap(), b"abc");

    // The lock was released by the crash; dropping the dead guard later must not
    // release the new holder's lock.
    let new_lock = fs.lock(&p("/db/LOCK")).unwrap();
    drop(lock);
    assert!(matches!(
        fs.lock(&p("/db/LOCK")),
        Err(Error::LockHeld { .. })
    ));
    drop(new_lock);
    fs.lock(&p("/db/LOCK")).unwrap();
}

#[test]
fn second_lock_is_busy_until_the_first_is_dropped() {
    let fs = fs_with_db(11);
    let first = fs.lock(&p("/db/LOCK")).unwrap();
    assert!(
        fs.exists(&p("/db/LOCK")).unwrap(),
        "locking creates the file"
    );
    match fs.lock(&p("/db/./LOCK")) {
        Err(Error::LockHeld { path }) => assert_eq!(path, p("/db/LOCK")),
        other => panic!("expected LockHeld, got {other:?}"),
    }
    drop(first);
    let _again = fs.lock(&p("/db/LOCK")).unwrap();
}

#[test]
fn same_seed_gives_the_same_crash() {
    let run = |seed: u64| -> Vec<Option<Vec<u8>>> {
        let fs = fs_with_db(seed);
        let mut outcome = Vec::new();
        for round in 0..5u8 {
            for i in 0..4u8 {
                let path = p(&format!("/db/{i}"));
                let mut file = fs.create(&path).unwrap();
                file.append(&[round; 50]).unwrap();
                file.sync().unwrap();
                file.append(&[i; 50]).unwrap();
            }
            fs.sync_dir(&p("/db")).unwrap();
            let data =
                [DataLoss::KeepRandomPrefix, DataLoss::TearLastWrite][usize::from(round % 2)];
            fs.crash(CrashMode {
                data,
                lose_unsynced_dir_entries: true,
            });
            outcome.extend((0..4).map(|i| fs.file_contents(&p(&format!("/db/{i}")))));
        }
        outcome
    };
    assert_eq!(run(42), run(42));
    assert_ne!(run(42), run(43), "different seeds should usually differ");
}

#[test]
fn debug_prints_the_seed() {
    let fs = SimFs::new(0xDEAD);
    assert!(format!("{fs:?}").contains(&0xDEAD.to_string()), "{fs:?}");
    assert_eq!(fs.seed(), 0xDEAD);
}

#[test]
fn paths_are_normalized_and_listed_per_directory() {
    let fs = fs_with_db(12);
    fs.create_dir_all(&p("/db/blobs")).unwrap();
    fs.create(&p("/db/./a")).unwrap();
    fs.create(&p("/db/blobs/../b")).unwrap();
    fs.create(&p("/db/blobs/c")).unwrap();
    assert!(fs.exists(&p("/db/a")).unwrap());
    let mut names = fs.list(&p("/db/")).unwrap();
    names.sort();
    assert_eq!(names, ["a", "b", "blobs"]);
    assert_eq!(fs.list(&p("/db/blobs")).unwrap(), ["c"]);
    assert_eq!(fs.list(&p("/")).unwrap(), ["db"]);
    assert_eq!(
        io_kind(fs.list(&p("/nope")).unwrap_err()),
        io::ErrorKind::NotFound
    );
}

#[test]
fn create_or_open_in_a_missing_directory_is_not_found() {
    let fs = SimFs::new(13);
    assert_eq!(
        io_kind(fs.create(&p("/db/x")).unwrap_err()),
        io::ErrorKind::NotFound
    );
    fs.create_dir_all(&p("/db")).unwrap();
    let open = fs.open(&p("/db/x"), ReadFileOptions::default());
    assert_eq!(io_kind(open.unwrap_err()), io::ErrorKind::NotFound);
    assert_eq!(
        io_kind(fs.remove(&p("/db/x")).unwrap_err()),
        io::ErrorKind::NotFound
    );
    assert!(fs.file_size(&p("/db/x")).is_err());
    fs.create(&p("/db/x")).unwrap();
    assert!(
        fs.create_dir_all(&p("/db/x/y")).is_err(),
        "a file is not a directory"
    );
}

#[test]
fn reads_see_later_appends_and_reject_past_eof() {
    let fs = fs_with_db(14);
    let path = p("/db/x");
    let mut writer = fs.create(&path).unwrap();
    writer.append(b"hello").unwrap();
    let reader = fs.open(&path, ReadFileOptions::default()).unwrap();
    assert_eq!(reader.len(), 5);
    writer.append(b" world").unwrap();
    assert_eq!(&reader.read_at(6, 5).unwrap()[..], b"world");
    assert_eq!(reader.len(), 5, "len is the size at open");
    assert_eq!(
        io_kind(reader.read_at(8, 4).unwrap_err()),
        io::ErrorKind::UnexpectedEof
    );
    assert!(reader.read_at(u64::MAX, 2).is_err());
    // An unlinked file stays readable through an open handle.
    fs.remove(&path).unwrap();
    assert_eq!(&reader.read_at(0, 5).unwrap()[..], b"hello");
    assert_eq!(fs.file_size(&p("/db/x")).ok(), None);
}

#[test]
fn corruption_helpers_change_the_current_bytes() {
    let fs = fs_with_db(15);
    let path = p("/db/x");
    write_partly_synced(&fs, &path, b"abcdef", b"");
    fs.corrupt_byte(&path, 1, 0x20).unwrap();
    assert_eq!(fs.file_contents(&path).unwrap(), b"aBcdef");
    assert!(fs.corrupt_byte(&path, 6, 1).is_err());
    fs.set_len(&path, 3).unwrap();
    assert_eq!(fs.file_size(&path).unwrap(), 3);
    fs.set_len(&path, 5).unwrap();
    assert_eq!(fs.file_contents(&path).unwrap(), b"aBc\0\0");
    fs.crash(CrashMode::POWER_LOSS);
    assert_eq!(
        fs.file_contents(&path).unwrap(),
        b"aBc",
        "extension was not synced"
    );
}

#[test]
fn held_syncs_wait_for_release_without_blocking_other_operations() {
    let fs = fs_with_db(12);
    let mut file = fs.create(&p("/db/f")).unwrap();
    file.append(b"abc").unwrap();
    fs.hold_syncs();
    let syncing = std::thread::spawn(move || file.sync());
    while fs.held_syncs() == 0 {
        std::thread::yield_now();
    }
    // The held sync has not begun, and the rest of the file system works.
    assert_eq!(fs.op_count(OpKind::Sync), 0);
    fs.sync_dir(&p("/db")).unwrap();
    let mut other = fs.create(&p("/db/g")).unwrap();
    other.append(b"x").unwrap();
    assert_eq!(fs.file_contents(&p("/db/f")).unwrap(), b"abc");
    fs.release_syncs();
    syncing.join().unwrap().unwrap();
    assert_eq!((fs.held_syncs(), fs.op_count(OpKind::Sync)), (0, 1));
    // Released, syncs run at once again, and the held one took effect.
    other.sync().unwrap();
    fs.crash(SYNC_NOTHING);
    assert_eq!(fs.file_contents(&p("/db/f")).unwrap(), b"abc");
}

#[test]
fn buffered_appends_wait_for_a_flush_and_die_with_a_crash() {
    let fs = fs_with_db(1);
    fs.buffer_appends(true);
    let path = p("/db/buffered");
    let mut file = fs.create(&path).unwrap();
    file.append(b"abc").unwrap();
    assert_eq!(file.len(), 3, "len counts buffered bytes");
    assert_eq!(fs.file_contents(&path).unwrap(), b"");
    file.flush().unwrap();
    assert_eq!(fs.file_contents(&path).unwrap(), b"abc");
    file.append(b"def").unwrap();
    file.sync().unwrap();
    assert_eq!(fs.file_contents(&path).unwrap(), b"abcdef");
    file.append(b"lost").unwrap();
    // Even a process kill, which keeps everything the OS has, loses what was
    // still in the process.
    fs.crash(CrashMode::PROCESS_KILL);
    drop(file);
    assert_eq!(fs.file_contents(&path).unwrap(), b"abcdef");

    // Closing a file hands its buffer to the OS.
    let other = p("/db/closed");
    let mut file = fs.create(&other).unwrap();
    file.append(b"kept").unwrap();
    drop(file);
    assert_eq!(fs.file_contents(&other).unwrap(), b"kept");
}

/// A reopened file appends after its bytes, through the same inode, with
/// the crash semantics of any append: unsynced, the tail is lost or torn;
/// synced, it stays. Reopening a missing file fails, and counts as an open.
#[test]
fn reopened_files_append_with_the_usual_crash_semantics() {
    let tear = CrashMode {
        data: DataLoss::TearLastWrite,
        lose_unsynced_dir_entries: true,
    };
    for (mode, synced) in [
        (CrashMode::POWER_LOSS, false),
        (tear, false),
        (CrashMode::POWER_LOSS, true),
        (CrashMode::PROCESS_KILL, false),
    ] {
        let fs = fs_with_db(11);
        let path = p("/db/000009.sst");
        write_partly_synced(&fs, &path, b"table", b"");
        let opens = fs.op_count(OpKind::Open);
        let mut file = fs.reopen_writable(&path).unwrap();
        assert_eq!(fs.op_count(OpKind::Open), opens + 1);
        assert_eq!(file.len(), 5);
        file.append(b"+tail").unwrap();
        assert_eq!(file.len(), 10);
        if synced {
            file.sync().unwrap();
        }
        assert_eq!(fs.file_contents(&path).unwrap(), b"table+tail");
        fs.crash(mode);
        let got = fs.file_contents(&path).unwrap();
        if synced || mode == CrashMode::PROCESS_KILL {
            assert_eq!(got, b"table+tail", "{mode:?}");
        } else {
            assert!(got.len() >= 5 && got.len() < 10, "{mode:?}: {got:?}");
            assert_eq!(got[..], b"table+tail"[..got.len()]);
        }
    }
    let fs = fs_with_db(12);
    assert_eq!(
        io_kind(fs.reopen_writable(&p("/db/missing")).err().unwrap()),
        io::ErrorKind::NotFound
    );
}
