//! Where the view gets the database it shows: the application's own handle
//! (held weakly, so the view never keeps the database open), or a read-only
//! handle of the view's own that it reopens as pages are asked for, so that
//! it follows a writer in another process without taking its LOCK.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use strata::{Db, WeakDb};

/// Opens the database again, read-only; an error is shown, not fatal.
pub type Reopen = Box<dyn Fn() -> Result<Db, String> + Send + Sync>;

/// The database a page or a sample reads.
#[derive(Clone)]
pub(crate) enum Source {
    /// The application's handle: live, and gone when the application closes.
    Live(WeakDb),
    /// A read-only handle, as of when it was opened.
    ReadOnly(Arc<ReadOnlyView>),
}

/// A read-only handle and the means to replace it with a newer one.
pub(crate) struct ReadOnlyView {
    reopen: Reopen,
    /// A page asked for later than this after the last open reopens.
    every: Duration,
    /// Held across a reopen, so two pages asked for at once open once.
    opened: Mutex<Opened>,
}

struct Opened {
    db: Db,
    /// When `db` was opened: what its pages show is as of then.
    at: Instant,
    wall: SystemTime,
    /// When the last open was tried, and why it failed if it did.
    tried: Instant,
    failed: Option<String>,
}

/// What a page is built from: a handle and, for a read-only view, what the
/// page says about how old it is.
pub(crate) struct Seen {
    pub db: Db,
    /// When the state shown was current (now, for a live view).
    pub as_of: Instant,
    /// `None` for a live view.
    pub note: Option<String>,
}

impl Source {
    pub(crate) fn read_only(first: Db, reopen: Reopen, every: Duration) -> Source {
        let now = Instant::now();
        Source::ReadOnly(Arc::new(ReadOnlyView {
            reopen,
            every,
            opened: Mutex::new(Opened {
                db: first,
                at: now,
                wall: SystemTime::now(),
                tried: now,
                failed: None,
            }),
        }))
    }

    /// The database for a page: a read-only view older than its interval
    /// is reopened first. `None` once a live database is closed.
    pub(crate) fn for_page(&self) -> Option<Seen> {
        match self {
            Source::Live(weak) => live(weak),
            Source::ReadOnly(view) => Some(view.seen(true)),
        }
    }

    /// The database for the sampler, which never reopens: a read-only view
    /// costs nothing while nobody looks at it.
    pub(crate) fn for_sample(&self) -> Option<Seen> {
        match self {
            Source::Live(weak) => live(weak),
            Source::ReadOnly(view) => Some(view.seen(false)),
        }
    }

    pub(crate) fn is_read_only(&self) -> bool {
        matches!(self, Source::ReadOnly(_))
    }
}

fn live(weak: &WeakDb) -> Option<Seen> {
    weak.upgrade().map(|db| Seen {
        db,
        as_of: Instant::now(),
        note: None,
    })
}

impl ReadOnlyView {
    fn seen(&self, refresh: bool) -> Seen {
        let mut opened = self.lock();
        if refresh && opened.tried.elapsed() >= self.every {
            opened.tried = Instant::now();
            match (self.reopen)() {
                Ok(db) => {
                    // The old handle closes once the last page reading it
                    // is done.
                    opened.db = db;
                    opened.at = opened.tried;
                    opened.wall = SystemTime::now();
                    opened.failed = None;
                }
                // A writer between two files of its MANIFEST, say: keep
                // showing the older state, say why, and try again later.
                Err(e) => opened.failed = Some(e),
            }
        }
        let mut note = format!(
            "Read-only view as of {} UTC ({:.1} s ago): reopened when a page is asked \
             for more than {} s after the last open. Counters of the writing process \
             (write amplification, stalls, compaction stats) are not seen from here.",
            utc(opened.wall),
            opened.at.elapsed().as_secs_f64(),
            self.every.as_secs_f64()
        );
        if let Some(e) = &opened.failed {
            note.push_str(&format!(" The last reopen failed: {e}"));
        }
        Seen {
            db: opened.db.clone(),
            as_of: opened.at,
            note: Some(note),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Opened> {
        // A page that panicked mid-reopen left a handle that still works.
        self.opened.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `HH:MM:SS` of a wall-clock time, in UTC (no time zone data is at hand).
fn utc(at: SystemTime) -> String {
    let secs = at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    format!(
        "{:02}:{:02}:{:02}",
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::utc;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn utc_is_the_time_of_day() {
        let at = UNIX_EPOCH + Duration::from_secs(86_400 * 3 + 13 * 3600 + 7 * 60 + 9);
        assert_eq!(utc(at), "13:07:09");
    }
}
