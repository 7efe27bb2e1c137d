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
