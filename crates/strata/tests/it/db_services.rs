//! Services (`DbOptions::services`): started with the database, stopped
//! first when it closes, never keeping it open.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use strata::{Db, DbOptions, DbService, Error, WeakDb};

/// Counts starts and stops, and keeps the handle it was given.
#[derive(Debug, Default)]
struct Probe {
    started: AtomicUsize,
    stopped: Arc<AtomicUsize>,
    handle: Mutex<Option<WeakDb>>,
    fail: bool,
}

struct Running(Arc<AtomicUsize>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl DbService for Probe {
    fn name(&self) -> &str {
        "probe"
    }

    fn start(&self, db: WeakDb) -> strata::Result<Box<dyn Send>> {
        if self.fail {
            return Err(Error::invalid_argument("probe", "told to fail"));
        }
        self.started.fetch_add(1, Ordering::SeqCst);
        *self.handle.lock().unwrap() = Some(db);
        Ok(Box::new(Running(self.stopped.clone())))
    }
}

fn options(probe: &Arc<Probe>) -> DbOptions {
    DbOptions {
        create_if_missing: true,
        services: vec![probe.clone()],
        ..DbOptions::default()
    }
}

#[test]
fn a_service_runs_while_the_database_is_open_and_never_keeps_it_open() {
    let dir = tempfile::tempdir().unwrap();
    let probe = Arc::new(Probe::default());
    let db = Db::open(dir.path(), options(&probe)).unwrap();
    assert_eq!(probe.started.load(Ordering::SeqCst), 1);
    let weak = probe.handle.lock().unwrap().clone().unwrap();
    weak.upgrade().unwrap().put("k", "v").unwrap();
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"v"[..]));
    // Dropping the last handle closes it: the service stops, its handle
    // upgrades no more, and the directory can be opened again.
    drop(db);
    assert_eq!(probe.stopped.load(Ordering::SeqCst), 1);
    assert!(weak.upgrade().is_none());
    let db = Db::open(dir.path(), options(&probe)).unwrap();
    let weak = probe.handle.lock().unwrap().clone().unwrap();
    let clone = db.clone();
    db.close().unwrap();
    // Closed, though a clone is alive: no new handle, the service stopped.
    assert_eq!(probe.stopped.load(Ordering::SeqCst), 2);
    assert!(weak.upgrade().is_none());
    drop(clone);
    // Read-only handles start services too.
    let ro = Db::open_read_only(dir.path(), options(&probe)).unwrap();
    assert_eq!(probe.started.load(Ordering::SeqCst), 3);
    drop(ro);
    assert_eq!(probe.stopped.load(Ordering::SeqCst), 3);
}

#[test]
fn a_service_that_does_not_start_fails_the_open_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let failing = Arc::new(Probe {
        fail: true,
        ..Probe::default()
    });
    let err = Db::open(dir.path(), options(&failing)).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err:?}");
    assert!(
        err.to_string().contains("\"probe\" did not start: "),
        "{err}"
    );
    // The failed open released the LOCK.
    let fine = Arc::new(Probe::default());
    Db::open(dir.path(), options(&fine))
        .unwrap()
        .close()
        .unwrap();
}
