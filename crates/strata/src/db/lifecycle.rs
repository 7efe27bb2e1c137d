//! Closing the database: what every clone of a [`Db`](super::Db) shares,
//! and what the last one to go (or `close`) stops, services first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use super::info_log::info;
use super::{compact, write, DbInner};
use crate::cf::CfShared;
use crate::error::Result;

/// What closing the database needs, shared by every clone of a [`Db`](super::Db).
pub(super) struct Lifecycle {
    pub(super) inner: Arc<DbInner>,
    /// The flush thread and the compaction threads; empty once closed.
    pub(super) threads: Mutex<Vec<JoinHandle<()>>>,
    /// What the services started (see `services.rs`); dropped first.
    pub(super) services: Mutex<Vec<Box<dyn Send>>>,
    /// Set when `shutdown` begins.
    closed: AtomicBool,
}

impl std::fmt::Debug for Lifecycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lifecycle")
            .field("threads", &self.threads.lock().len())
            .field("services", &self.services.lock().len())
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl Lifecycle {
    pub(super) fn new(inner: Arc<DbInner>) -> Lifecycle {
        Lifecycle {
            inner,
            threads: Mutex::new(Vec::new()),
            services: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        }
    }

    /// Whether `shutdown` has begun: services then get no new handle.
    pub(super) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Starts compaction threads until `wanted` run (never stops any:
    /// threads numbered past the state's `compaction_threads` idle).
    pub(super) fn add_compaction_threads(&self, wanted: usize) -> Result<()> {
        let mut threads = self.threads.lock();
        // `shutdown` sets the flag holding this lock: once set, no thread
        // may start that it would not join.
        if self.inner.shutting_down.load(Ordering::Acquire) {
            return Ok(());
        }
        // The flush thread is the first.
        let running = threads.len().saturating_sub(1);
        threads.extend(compact::spawn_compaction_threads(
            &self.inner,
            running..wanted,
        )?);
        Ok(())
    }

    /// Stops the services, then the background threads, and syncs the WAL;
    /// a no-op once done. A read-only handle has services only.
    pub(super) fn shutdown(&self) -> Result<()> {
        self.closed.store(true, Ordering::Release);
        // Taken out before they stop: a service stopping may wait for a
        // thread of its own that is reading the database.
        let services = std::mem::take(&mut *self.services.lock());
        drop(services);
        let mut threads = self.threads.lock();
        if threads.is_empty() {
            return Ok(());
        }
        let inner = &self.inner;
        let unlogged: Vec<Arc<CfShared>> = {
            let state = inner.state.lock();
            state
                .cfs
                .values()
                .filter(|cf| cf.mem_unlogged || cf.imm.iter().any(|imm| imm.unlogged))
                .map(|cf| cf.shared.clone())
                .collect()
        };
        let flushed = unlogged.iter().try_for_each(|cf| write::flush(inner, cf));
        inner.shutting_down.store(true, Ordering::Release);
        {
            // Under the mutex, so no background thread or stalled writer
            // misses the wake-up between checking the flag and waiting.
            let _state = inner.state.lock();
            inner.bg_cv.notify_all();
        }
        let mut panicked = None;
        for thread in threads.drain(..) {
            let name = thread
                .thread()
                .name()
                .unwrap_or("a background thread")
                .to_owned();
            if thread.join().is_err() {
                panicked.get_or_insert(name);
            }
        }
        let synced = match inner.wal.lock().as_mut() {
            Some(wal) => inner
                .retired_wals
                .sync_below(u64::MAX)
                .and_then(|()| wal.sync()),
            None => Ok(()),
        };
        // Every event of the work above reaches the listeners first.
        let delivered = inner.events.close();
        info!(inner.info_log, "closed");
        flushed?;
        synced?;
        delivered?;
        if let Some(thread) = panicked {
            return Err(crate::Error::BackgroundThreadPanicked { thread });
        }
        Ok(())
    }
}

impl Drop for Lifecycle {
    fn drop(&mut self) {
        if let Err(e) = self.shutdown() {
            info!(self.inner.info_log, "error while closing: {e}");
        }
    }
}
