//! `repair_db` with the old MANIFEST still there: what its records say is
//! kept, not just read. The tables it leaves live are the ones put back
//! wherever its edits moved them, and each family keeps the merge operator
//! it records.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use strata::fs::{Fs, SimFs};
use strata::listener::{CompactionJobInfo, EventListener};
use strata::merge::StringAppendOperator;
use strata::{merge_operator_from_name, repair_db, CfOptions, Db, DbOptions, Error, RepairReport};

use crate::util::sim_options;

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

const NO_FAMILIES: [(&str, CfOptions); 0] = [];

/// Counts compactions that moved their inputs down without rewriting them.
#[derive(Debug, Default)]
struct TrivialMoves(AtomicUsize);

impl EventListener for TrivialMoves {
    fn on_compaction_completed(&self, info: &CompactionJobInfo) {
        if info.stats.is_trivial_move {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
}

fn scan(db: &Db) -> Model {
    db.range(..)
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

fn lost_tables(report: &RepairReport) -> Vec<String> {
    report
        .lost
        .iter()
        .filter(|(path, _)| path.extension().is_some_and(|e| e == "sst"))
        .map(|(path, why)| format!("{}: {why}", path.display()))
        .collect()
}

/// A compaction that moves a table to a deeper level writes one edit that
/// deletes it from its level and adds it, the same file, to the other.
/// Repair read such an edit additions first, so the table counted as not
/// live and went to `lost/` with everything it held (4000 of 6000 keys
/// here), though the MANIFEST was whole. A second repair, after an open
/// that moved the first repair's L0 tables down, emptied the family.
#[test]
fn tables_a_compaction_moved_to_another_level_stay_live_through_repair() {
    let fs = SimFs::new(91);
    let moves = Arc::new(TrivialMoves::default());
    let options = DbOptions {
        listeners: vec![moves.clone()],
        ..sim_options(&fs)
    };
    let db = Db::open("/db", options.clone()).unwrap();
    // Sequential keys: each table lies past every other, so compactions
    // move them down instead of rewriting them.
    let mut model = Model::new();
    for i in 0..6000 {
        let key = format!("key{i:05}").into_bytes();
        let value = format!("value-{i}-{}", "x".repeat(33)).into_bytes();
        db.put(&key, &value).unwrap();
        model.insert(key, value);
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    assert!(db.live_files_metadata().iter().any(|f| f.level > 0));
    // Events are delivered in the background; a close delivers them all.
    db.close().unwrap();
    let mut moved = moves.0.load(Ordering::Relaxed);
    assert!(moved > 0, "no trivial move to test");

    for round in 1..=2 {
        let report = repair_db("/db", &options, NO_FAMILIES).unwrap();
        assert!(report.manifest_records_read > 0);
        let lost = lost_tables(&report);
        assert!(lost.is_empty(), "round {round}: {lost:#?}");
        let db = Db::open("/db", options.clone()).unwrap();
        assert_eq!(scan(&db).len(), model.len(), "round {round}");
        assert_eq!(scan(&db), model, "round {round}");
        // The repaired L0 is moved down again, for the next round to read.
        db.wait_for_compaction().unwrap();
        db.close().unwrap();
        let now = moves.0.load(Ordering::Relaxed);
        assert!(
            now > moved,
            "round {round}: the repaired tables were not moved down"
        );
        moved = now;
    }
}

fn with_operator(name: Option<&str>) -> CfOptions {
    CfOptions {
        merge_operator: name.map(|n| merge_operator_from_name(n).unwrap()),
        ..CfOptions::default()
    }
}

/// `/db` on `fs` with family `counters` (uint64add) holding `n` = 3, one
/// merge in a table and two in the WAL.
fn counters_db(fs: &SimFs) {
    let db = Db::open_cf(
        "/db",
        DbOptions {
            create_missing_column_families: true,
            ..sim_options(fs)
        },
        [("counters", with_operator(Some("uint64add")))],
    )
    .unwrap();
    let counters = db.cf_handle("counters").unwrap();
    db.merge_cf(&counters, b"n", 1u64.to_le_bytes()).unwrap();
    db.flush_cf(&counters).unwrap();
    for _ in 0..2 {
        db.merge_cf(&counters, b"n", 1u64.to_le_bytes()).unwrap();
    }
    drop(counters);
    db.close().unwrap();
}

fn remove_files(fs: &SimFs, starting: &[&str]) {
    for name in fs.list(Path::new("/db")).unwrap() {
        if starting.iter().any(|s| name.starts_with(s)) {
            fs.remove(&Path::new("/db").join(name)).unwrap();
        }
    }
}

fn open_counters(fs: &SimFs, name: Option<&str>) -> strata::Result<Db> {
    Db::open_cf("/db", sim_options(fs), [("counters", with_operator(name))])
}

/// After a repair, `counters` opens with the operator its operands were
/// written for and with no other, as before the repair.
fn assert_counters_keep_uint64add(fs: &SimFs) {
    for other in [Some("stringappend"), None] {
        let err = open_counters(fs, other).err();
        let text = err.as_ref().map(ToString::to_string).unwrap_or_default();
        assert!(
            matches!(err, Some(Error::InvalidArgument { .. })),
            "opened with {other:?} after the repair: {text}"
        );
        assert!(text.contains("UInt64AddOperator"), "{text}");
    }
    let db = open_counters(fs, Some("uint64add")).unwrap();
    let counters = db.cf_handle("counters").unwrap();
    let n = db.get_cf(&counters, b"n").unwrap().unwrap();
    assert_eq!(&n[..], &3u64.to_le_bytes()[..]);
}

/// The repaired MANIFEST records the merge operator of each family repair
/// is given options for: it recorded none, so the first open with another
/// operator was accepted, read the counter as garbage, and recorded that
/// one, refusing the right one from then on.
#[test]
fn repair_records_the_merge_operator_each_family_is_given() {
    let fs = SimFs::new(92);
    counters_db(&fs);
    remove_files(&fs, &["MANIFEST-", "CURRENT", "OPTIONS-"]);
    let given = [("counters", with_operator(Some("uint64add")))];
    let report = repair_db("/db", &sim_options(&fs), given).unwrap();
    assert!(report.families.iter().any(|(_, n)| n == "counters"));
    assert_counters_keep_uint64add(&fs);
}

/// With the old MANIFEST readable, the operator it records is kept even
/// when repair is given no options for the family (no OPTIONS file names
/// it either); given another operator, repair refuses and changes nothing.
#[test]
fn repair_keeps_the_merge_operator_the_old_manifest_records() {
    let fs = SimFs::new(93);
    counters_db(&fs);
    remove_files(&fs, &["OPTIONS-"]);
    let wrong = [("counters", with_operator(Some("stringappend")))];
    let err = repair_db("/db", &sim_options(&fs), wrong).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{text}");
    assert!(
        text.contains("UInt64AddOperator") && text.contains("StringAppendOperator"),
        "{text}"
    );
    assert!(
        !fs.exists(Path::new("/db/lost")).unwrap(),
        "repair moved files"
    );
    repair_db("/db", &sim_options(&fs), NO_FAMILIES).unwrap();
    assert_counters_keep_uint64add(&fs);
}

fn lists(delimiter: Option<&[u8]>) -> CfOptions {
    CfOptions {
        merge_operator: delimiter.map(|d| {
            Arc::new(StringAppendOperator::new(d.to_vec())) as Arc<dyn strata::MergeOperator>
        }),
        ..CfOptions::default()
    }
}

/// `/db` on `fs` with family `lists`, a string append family joining by
/// `|`, holding `l` = "a|b" (one operand in a table, one in the WAL).
fn lists_db(fs: &SimFs) {
    let db = Db::open_cf(
        "/db",
        DbOptions {
            create_missing_column_families: true,
            ..sim_options(fs)
        },
        [("lists", lists(Some(b"|")))],
    )
    .unwrap();
    let family = db.cf_handle("lists").unwrap();
    db.merge_cf(&family, b"l", b"a").unwrap();
    db.flush_cf(&family).unwrap();
    db.merge_cf(&family, b"l", b"b").unwrap();
    drop(family);
    db.close().unwrap();
}

/// After a repair, `lists` opens with its delimiter and with no other.
fn assert_lists_keep_their_delimiter(fs: &SimFs) {
    let open = |delimiter| Db::open_cf("/db", sim_options(fs), [("lists", lists(delimiter))]);
    for other in [Some(&b","[..]), None] {
        let err = open(other).err();
        let text = err.as_ref().map(ToString::to_string).unwrap_or_default();
        assert!(
            matches!(err, Some(Error::InvalidArgument { .. })),
            "opened with delimiter {:?} after the repair: {text}",
            other.map(String::from_utf8_lossy)
        );
    }
    let db = open(Some(b"|")).unwrap();
    let family = db.cf_handle("lists").unwrap();
    let l = db.get_cf(&family, b"l").unwrap().unwrap();
    assert_eq!(&l[..], b"a|b");
}

/// The record holds the operator's settings as well as its name: given the
/// family's options (MANIFEST and OPTIONS file lost), or kept from the old
/// MANIFEST (given nothing, the OPTIONS file lost), which also gives the
/// operator its settings for repair's own compaction.
#[test]
fn repair_records_the_merge_operators_settings() {
    let fs = SimFs::new(94);
    lists_db(&fs);
    remove_files(&fs, &["MANIFEST-", "CURRENT", "OPTIONS-"]);
    repair_db("/db", &sim_options(&fs), [("lists", lists(Some(b"|")))]).unwrap();
    assert_lists_keep_their_delimiter(&fs);

    let fs = SimFs::new(95);
    lists_db(&fs);
    remove_files(&fs, &["OPTIONS-"]);
    let wrong = [("lists", lists(Some(b",")))];
    let err = repair_db("/db", &sim_options(&fs), wrong).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    assert!(err.to_string().contains("delimiter=|"), "{err}");
    repair_db("/db", &sim_options(&fs), NO_FAMILIES).unwrap();
    assert_lists_keep_their_delimiter(&fs);
}
