//! Services: what runs beside an open database for as long as it is open,
//! started by `Db::open` from [`crate::DbOptions::services`] and stopped
//! first when it closes. The web view (`strata_web::http_addr`) is one; the
//! engine knows nothing of HTTP.
//!
//! A service holds a [`WeakDb`], never a `Db`: a handle of its own would keep
//! the database open for ever, since the database holds the service.

use std::sync::{Arc, Weak};

use super::lifecycle::Lifecycle;
use super::Db;
use crate::error::Result;

/// Something started beside an open database (see the module notes).
///
/// ```
/// use std::sync::Arc;
/// use strata::{Db, DbOptions, DbService, WeakDb};
///
/// /// Counts the keys once at open, on a thread of its own.
/// #[derive(Debug)]
/// struct KeyCounter;
///
/// impl DbService for KeyCounter {
///     fn name(&self) -> &str {
///         "key counter"
///     }
///     fn start(&self, db: WeakDb) -> strata::Result<Box<dyn Send>> {
///         let thread = std::thread::spawn(move || db.upgrade().map(|db| db.range(..).count()));
///         Ok(Box::new(thread))
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let options = DbOptions {
///     create_if_missing: true,
///     services: vec![Arc::new(KeyCounter)],
///     ..DbOptions::default()
/// };
/// let db = Db::open(dir.path(), options)?;
/// db.close()?;
/// # Ok(())
/// # }
/// ```
pub trait DbService: Send + Sync + std::fmt::Debug {
    /// What the service is, for errors and the LOG.
    fn name(&self) -> &str;

    /// Starts the service on `db`. What it returns is kept while the
    /// database is open and dropped when it closes, before anything else
    /// stops: its `Drop` must stop what `start` started, and must not wait
    /// for the calling thread (the last handle of a database may be dropped
    /// on one of the service's own threads). An error fails the open.
    fn start(&self, db: WeakDb) -> Result<Box<dyn Send>>;
}

/// A handle that does not keep the database open: [`WeakDb::upgrade`]
/// gives a [`Db`] while some other handle is alive and it is not closed.
#[derive(Debug, Clone)]
pub struct WeakDb {
    lifecycle: Weak<Lifecycle>,
}

impl WeakDb {
    /// The database, unless every other handle is gone or it was closed.
    pub fn upgrade(&self) -> Option<Db> {
        let lifecycle = self.lifecycle.upgrade()?;
        if lifecycle.is_closed() {
            return None;
        }
        Some(Db {
            inner: lifecycle.inner.clone(),
            lifecycle,
        })
    }
}

impl Db {
    /// A [`WeakDb`] of this database.
    pub fn downgrade(&self) -> WeakDb {
        WeakDb {
            lifecycle: Arc::downgrade(&self.lifecycle),
        }
    }
}

impl Db {
    /// Starts every service the options name, in order, and keeps what
    /// they return until the database closes. The first error fails the
    /// open, naming the service; dropping `self` then stops those already
    /// started.
    pub(super) fn with_services(self) -> Result<Db> {
        for service in &self.inner.options.services {
            let running = service.start(self.downgrade()).map_err(|e| {
                crate::Error::invalid_argument(
                    "services",
                    format!("service {:?} did not start: {e}", service.name()),
                )
            })?;
            self.lifecycle.services.lock().push(running);
        }
        Ok(self)
    }
}
