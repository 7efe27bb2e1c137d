//! `repair_db` with the old MANIFEST still there: what its records say is
//! kept, not just read. The tables it leaves live are the ones put back
//! wherever its edits moved them, and each family keeps the merge operator
//! it records.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use strata::fs::SimFs;
use strata::listener::{CompactionJobInfo, EventListener};
use strata::{repair_db, CfOptions, Db, DbOptions, RepairReport};

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
    assert!(
        moves.0.load(Ordering::Relaxed) > 0,
        "no trivial move to test"
    );
    assert!(db.live_files_metadata().iter().any(|f| f.level > 0));
    db.close().unwrap();

    for round in 1..=2 {
        let report = repair_db("/db", &options, NO_FAMILIES).unwrap();
        assert!(report.manifest_records_read > 0);
        let lost = lost_tables(&report);
        assert!(lost.is_empty(), "round {round}: {lost:#?}");
        let before = moves.0.load(Ordering::Relaxed);
        let db = Db::open("/db", options.clone()).unwrap();
        assert_eq!(scan(&db).len(), model.len(), "round {round}");
        assert_eq!(scan(&db), model, "round {round}");
        // The repaired L0 is moved down again, for the next round to read.
        db.wait_for_compaction().unwrap();
        assert!(
            round == 2 || moves.0.load(Ordering::Relaxed) > before,
            "round {round}: the repaired tables were not moved down"
        );
        db.close().unwrap();
    }
}
