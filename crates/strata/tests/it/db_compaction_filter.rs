//! Compaction filters: called by compactions on values no snapshot can see,
//! to keep, remove or change them.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use strata::compaction_filter::{CompactionFilter, Decision, FilterContext};
use strata::fs::SimFs;
use strata::{Db, DbOptions, ReadOptions};

use crate::util::sim_options;

/// Removes values starting with "expired", upper-cases values starting
/// with "shout", and counts its calls.
#[derive(Debug, Default)]
struct Janitor {
    calls: AtomicU64,
}

impl CompactionFilter for Janitor {
    fn name(&self) -> &str {
        "Janitor"
    }

    fn filter(&self, ctx: &FilterContext, _key: &[u8], value: &[u8]) -> Decision {
        self.calls.fetch_add(1, Ordering::Relaxed);
        assert!(ctx.level > 0, "flushes never filter");
        if value.starts_with(b"expired") {
            Decision::Remove
        } else if value.starts_with(b"shout") {
            Decision::ChangeValue(value.to_ascii_uppercase())
        } else {
            Decision::Keep
        }
    }
}

#[test]
fn compactions_remove_and_change_values_no_snapshot_sees() {
    let fs = SimFs::new(31);
    let janitor = Arc::new(Janitor::default());
    let options = DbOptions {
        compaction_filter: Some(janitor.clone()),
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    db.put("a", "keep me").unwrap();
    db.put("b", "old").unwrap();
    db.flush().unwrap();
    db.put("b", "expired now").unwrap();
    db.put("c", "shout it").unwrap();
    db.put("d", "expired too").unwrap();
    // A snapshot sees "d" as written: it must not change under it.
    let snapshot = db.snapshot();
    db.put("e", "expired later").unwrap();
    db.compact_range(None, None).unwrap();
    assert!(janitor.calls.load(Ordering::Relaxed) > 0);
    assert_eq!(db.get("a").unwrap().as_deref(), Some(&b"keep me"[..]));
    // Written after the snapshot: removed.
    assert_eq!(db.get("e").unwrap(), None);
    // Snapshot-visible data is left alone.
    assert_eq!(db.get("b").unwrap().as_deref(), Some(&b"expired now"[..]));
    assert_eq!(db.get("c").unwrap().as_deref(), Some(&b"shout it"[..]));
    assert_eq!(db.get("d").unwrap().as_deref(), Some(&b"expired too"[..]));
    let at = ReadOptions {
        snapshot: Some(snapshot.clone()),
        ..ReadOptions::default()
    };
    assert_eq!(
        db.get_opt(&at, "d").unwrap().as_deref(),
        Some(&b"expired too"[..])
    );
    // Once the snapshot is gone, the next compaction filters them too.
    drop(snapshot);
    drop(at);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get("c").unwrap().as_deref(), Some(&b"SHOUT IT"[..]));
    assert_eq!(db.get("d").unwrap(), None);
    // Removed: the older "b" stays hidden.
    assert_eq!(db.get("b").unwrap(), None);
    let all: Vec<_> = db.range(..).map(|e| e.unwrap().0).collect();
    assert_eq!(all, [&b"a"[..], &b"c"[..]]);
}

/// A read-only open neither compacts nor writes an OPTIONS file, so a
/// stored filter it is not given does not stop it: the families it does
/// not name still open with the rest of their stored options (their merge
/// operators above all), as loading the file for a writable open would
/// now refuse to without the filter.
#[test]
fn a_read_only_open_needs_no_stored_filter() {
    let fs = SimFs::new(32);
    let options = DbOptions {
        compaction_filter: Some(Arc::new(Janitor::default())),
        ..sim_options(&fs)
    };
    let lists = strata::CfOptions {
        merge_operator: Some(strata::merge_operator_from_name("stringappend").unwrap()),
        ..strata::CfOptions::default()
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    let cf = db.create_column_family("lists", lists).unwrap();
    db.merge_cf(&cf, "k", "a").unwrap();
    db.merge_cf(&cf, "k", "b").unwrap();
    drop(cf);
    db.close().unwrap();
    let load = strata::LoadOptions {
        ignore_unknown_options: true,
        ..strata::LoadOptions::default()
    };
    let fs_arc: Arc<dyn strata::fs::Fs> = Arc::new(fs.clone());
    let err = strata::options::load_latest_options_with_fs(fs_arc, Path::new("/db"), &load)
        .unwrap_err()
        .to_string();
    assert!(err.contains("Janitor"), "{err}");
    let reader = Db::open_read_only(Path::new("/db"), sim_options(&fs)).unwrap();
    let cf = reader.cf_handle("lists").unwrap();
    assert_eq!(
        reader.get_cf(&cf, "k").unwrap().as_deref(),
        Some(&b"a,b"[..])
    );
}
