//! Tests of the version set: MANIFEST writes, recovery and failures.

use super::*;
use crate::fs::SimFs;
use crate::key::{internal_key, ValueType};

fn meta(number: u64, key: &[u8], seq: u64) -> FileMetaData {
    FileMetaData {
        number,
        file_size: 10,
        smallest: internal_key(key, seq, ValueType::Put),
        largest: internal_key(key, seq, ValueType::Put),
        smallest_seqno: seq,
        largest_seqno: seq,
        blob_files: Vec::new(),
        global_seqno: None,
    }
}

fn meta_range(number: u64, lo: &[u8], hi: &[u8]) -> FileMetaData {
    FileMetaData {
        smallest: internal_key(lo, 1, ValueType::Put),
        largest: internal_key(hi, 1, ValueType::Put),
        ..meta(number, lo, 1)
    }
}

#[test]
fn every_new_manifest_records_the_wal_features() {
    // Builds before metadata records would misread this version's WALs:
    // the first record of every MANIFEST names the features, so they refuse.
    let fs = SimFs::new(3);
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    let mut set = VersionSet::new_empty(Arc::new(fs.clone()), dir, KeyComparator::Bytewise);
    set.write_new_manifest(Some(0)).unwrap();
    set.write_new_manifest(None).unwrap();
    let (_, _, mut reader) = open_manifest(&fs, dir).unwrap();
    let (_, record) = reader.read_record().unwrap().unwrap();
    let first = VersionEdit::decode(record).unwrap();
    assert_eq!(first.wal_features, Some(crate::wal::WAL_FEATURES));
    assert_eq!(first.column_family, 0);
}

#[test]
fn edits_survive_reopen_and_torn_tail() {
    let fs = SimFs::new(3);
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    let mut set = VersionSet::new_empty(Arc::new(fs.clone()), dir, KeyComparator::Bytewise);
    set.write_new_manifest(Some(0)).unwrap();
    let n = set.new_file_number();
    set.set_last_sequence(7);
    let mut edit = VersionEdit::new();
    edit.add_file(0, meta(n, b"k", 7)).set_log_number(5);
    set.log_and_apply(&mut edit).unwrap();

    let again = VersionSet::recover(Arc::new(fs.clone()), dir, &[]).unwrap();
    assert_eq!(again.current(0).num_files(0), 1);
    assert_eq!(again.last_sequence(), 7);
    assert_eq!(again.log_number(0), 5);
    assert!(again.next_file_number() > n);

    // A half-written final record is ignored.
    let path = manifest_file_name(dir, set.manifest_number());
    let len = fs.file_size(&path).unwrap();
    let mut edit = VersionEdit::new();
    edit.add_file(0, meta(set.new_file_number(), b"z", 9));
    set.log_and_apply(&mut edit).unwrap();
    fs.set_len(&path, len + 5).unwrap();
    let torn = VersionSet::recover(Arc::new(fs.clone()), dir, &[]).unwrap();
    assert_eq!(torn.current(0).num_files(0), 1);
}

#[derive(Debug)]
struct Backwards;
impl Comparator for Backwards {
    fn name(&self) -> &str {
        "test.Backwards"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        b.cmp(a)
    }
}

/// Each family's order is in the MANIFEST: it comes back on recovery
/// (its sorted levels sorted by it), and a name no comparator given to
/// the open answers to is refused, naming it.
#[test]
fn family_orders_survive_reopen() {
    let fs = SimFs::new(4);
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    let reverse = KeyComparator::ReverseBytewise;
    let mut set = VersionSet::new_empty(Arc::new(fs.clone()), dir, reverse.clone());
    set.write_new_manifest(Some(0)).unwrap();
    let user: Arc<dyn Comparator> = Arc::new(Backwards);
    set.register_comparator(&user);
    let mut create = VersionEdit::new();
    create
        .add_column_family(1, "mine")
        .set_comparator_name("test.Backwards");
    set.log_and_apply(&mut create).unwrap();
    // Two L1 files that are disjoint only in reverse order.
    let (a, b) = (set.new_file_number(), set.new_file_number());
    let mut edit = VersionEdit::new();
    edit.add_file(1, meta_range(a, b"z", b"m"))
        .add_file(1, meta_range(b, b"l", b"a"));
    set.log_and_apply(&mut edit).unwrap();
    // A new MANIFEST writes every family's order in its snapshot.
    set.write_new_manifest(None).unwrap();

    let again = VersionSet::recover(Arc::new(fs.clone()), dir, &[user]).unwrap();
    assert_eq!(again.order(0), Some(&reverse));
    assert_eq!(
        again.order(1).map(KeyComparator::name),
        Some("test.Backwards")
    );
    let numbers: Vec<u64> = again.current(0).files(1).iter().map(|f| f.number).collect();
    assert_eq!(numbers, [a, b]);

    let err = VersionSet::recover(Arc::new(fs.clone()), dir, &[]).unwrap_err();
    assert!(err.to_string().contains("test.Backwards"), "{err}");
}

#[test]
fn manifest_sync_failure_installs_nothing() {
    let fs = SimFs::new(4);
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    let mut set = VersionSet::new_empty(Arc::new(fs.clone()), dir, KeyComparator::Bytewise);
    set.write_new_manifest(Some(0)).unwrap();
    fs.inject(crate::fs::sim::Fault::ErrorOnNth {
        op: crate::fs::sim::OpKind::Sync,
        n: 1,
    });
    let mut edit = VersionEdit::new();
    edit.add_file(0, meta(set.new_file_number(), b"k", 1));
    assert!(set.log_and_apply(&mut edit).is_err());
    assert_eq!(set.current(0).num_files(0), 0);
    // The MANIFEST is not written again after a failure.
    assert!(set.log_and_apply(&mut VersionEdit::new()).is_err());
}

/// Seen once in strata-stress (seed 103, cycle 315): a job taking its
/// MANIFEST turn after another job's write failed on a full disk must
/// fail with that `NoSpace`, which recovery waits out, and not with an
/// `InvalidArgument` of its own, which would stop the database for good.
#[test]
fn a_write_after_a_failed_one_fails_with_the_same_error() {
    let fs = SimFs::new(5);
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    let mut set = VersionSet::new_empty(Arc::new(fs.clone()), dir, KeyComparator::Bytewise);
    set.write_new_manifest(Some(0)).unwrap();
    fs.inject(crate::fs::sim::Fault::SpaceQuota {
        bytes: fs.total_bytes(),
    });
    let mut edit = VersionEdit::new();
    edit.add_file(0, meta(set.new_file_number(), b"k", 1));
    let first = set.log_and_apply(&mut edit).unwrap_err();
    assert!(matches!(first, Error::NoSpace { .. }), "{first:?}");
    // The next writer, begun before any recovery, gets the full disk too.
    let mut next = VersionEdit::new();
    next.add_file(0, meta(set.new_file_number(), b"m", 2));
    let second = set.log_and_apply(&mut next).unwrap_err();
    assert!(matches!(second, Error::NoSpace { .. }), "{second:?}");
    assert_eq!(set.current(0).num_files(0), 0);
    // A new MANIFEST (what recovery writes once space is back) takes
    // writes again.
    fs.clear_faults();
    set.write_new_manifest(None).unwrap();
    set.log_and_apply(&mut next).unwrap();
    assert_eq!(set.current(0).num_files(0), 1);
}
