//! The database handle: open and recover, write, read, snapshot, flush, close.
//!
//! This module wires the parts together and holds no algorithm of its own:
//! writes go through the commit pipeline (`write.rs`), reads through the super version
//! (`read.rs`), flushes run on a background thread (`background.rs`), and opening
//! replays the MANIFEST and the WALs (`open.rs`, `wal_replay.rs`).
//!
//! Lock order (the full list is in `docs/architecture.md`, "Locks"): `state`,
//! then `wal`, then the MANIFEST writer, then the publisher's queue. Readers
//! take none: they load the super version and the visible sequence number
//! from atomics.

mod admin;
mod background;
mod checkpoint;
mod compact;
mod db_options;
mod events;
mod families;
pub(crate) mod info_log;
mod ingest;
pub mod key_range;
mod key_versions;
mod lifecycle;
mod live_files;
mod manifest_writer;
mod merge_records;
mod multi_get;
mod open;
mod open_checks;
mod properties;
mod range_dels;
mod read;
mod repair;
mod repair_family;
mod repair_scan;
mod resume;
mod retired_wals;
mod services;
pub mod snapshot;
mod stall;
mod state;
mod stats;
mod stats_report;
mod wal_replay;
mod write;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::{Condvar, Mutex};

use crate::cf::{CfShared, CfState};
use crate::error::Result;
use crate::fs::{FileLock, Fs};
use crate::iter::db_iter::DbIterator;
use crate::iter::db_range::DbRange;
use crate::key::SequenceNumber;
use crate::options::{CfOptions, DbOptions, ReadOptions, WriteOptions};
use crate::table_cache::TableCache;
use crate::wal::LogWriter;
use crate::write::publish::Publisher;
use crate::write::WriteBatch;
pub use admin::{check_consistency, ConsistencyReport};
use info_log::InfoLog;
pub use key_range::KeyRange;
pub use key_versions::KeyVersion;
use lifecycle::Lifecycle;
pub use live_files::{LiveBlobFileMetaData, LiveFileMetaData};
pub use repair::{repair_db, RepairReport};
pub use services::{DbService, WeakDb};
pub use snapshot::Snapshot;
use snapshot::SnapshotList;
use state::DbState;
use stats::DbStats;
pub use wal_replay::WalDamage;

/// An open database.
///
/// `Db` is a cheap handle: cloning it shares the one open database (two
/// reference counts), and it is `Send + Sync`, so each thread can hold its own
/// clone. The database closes cleanly when the last clone is dropped, or at
/// once with [`Db::close`], which also reports any error; after `close`, the
/// other clones' writes, flushes and compactions fail with
/// [`crate::Error::Closed`] while their reads go on until they are dropped.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let db = strata::Db::open(dir.path(), strata::DbOptions { create_if_missing: true, ..Default::default() })?;
/// let writer = db.clone();
/// std::thread::spawn(move || writer.put("k", "v")).join().ok();
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v"[..]));
/// db.close()?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Db {
    inner: Arc<DbInner>,
    /// Shared by the clones; closes the database when the last one goes.
    lifecycle: Arc<Lifecycle>,
}

#[derive(Debug)]
pub(crate) struct DbInner {
    dir: PathBuf,
    options: DbOptions,
    /// Tells this open database apart from every other one in the process,
    /// so a family handle is never used with the wrong one.
    instance: u64,
    fs: Arc<dyn Fs>,
    /// `fs`, or `fs` behind the rate limiter: flushes write tables through
    /// the first (at high priority), compactions through the second.
    flush_fs: Arc<dyn Fs>,
    compaction_fs: Arc<dyn Fs>,
    state: Mutex<DbState>,
    /// Signalled when background work finishes, fails, or is needed.
    bg_cv: Condvar,
    /// The default family, which reads without a handle use.
    default_cf: Arc<CfShared>,
    /// Publishes committed batches in sequence order. Its visible sequence
    /// number is the highest whose write, and every write before it, is fully
    /// in the memtable: reads see everything up to it, so a batch becomes
    /// visible all at once.
    publisher: Publisher,
    /// How many writers at the front of the write queue spin before they
    /// block (one per core: more would take cores from writers doing work).
    spin_positions: usize,
    /// The active WAL, written by the commit leader only.
    wal: Mutex<Option<LogWriter>>,
    /// WALs retired by memtable switches and not yet synced.
    retired_wals: retired_wals::RetiredWals,
    /// The number of the newest OPTIONS file written; held while one is
    /// written, never together with the DB mutex (see `families.rs`).
    newest_options_file: Mutex<u64>,
    table_cache: Arc<TableCache>,
    /// Open blob files, and the reads of blob references through the blob cache.
    blobs: Arc<crate::blob::BlobSource>,
    snapshots: Arc<SnapshotList>,
    /// What replaying the WALs at open found damaged.
    wal_damage: Vec<WalDamage>,
    info_log: InfoLog,
    /// The listeners' event queue (inert without listeners).
    events: events::EventQueue,
    stats: DbStats,
    opened_at: std::time::Instant,
    shutting_down: AtomicBool,
    /// Opened with `open_read_only`: no WAL, no background threads.
    read_only: bool,
    /// Held for the life of a writable handle; read-only opens take no lock.
    _lock: Option<Box<dyn FileLock>>,
}

impl Db {
    /// Opens (or with `create_if_missing`, creates) the database in `path`,
    /// recovering from the MANIFEST and every WAL written since the last flush.
    /// A database with column families other than the default one must be
    /// opened with [`Db::open_cf`], naming them all.
    pub fn open(path: impl AsRef<Path>, options: DbOptions) -> Result<Db> {
        Db::open_cf(path, options, Vec::<(String, CfOptions)>::new())
    }

    /// Opens the database with its column families (RocksDB's `Open` with
    /// column family descriptors): `families` names every family but the
    /// default one (whose options are `options`' column family fields), each
    /// with its options. A family the database has but `families` lacks fails
    /// the open, naming it; one `families` has but the database lacks is
    /// created with `create_missing_column_families`, and fails the open
    /// otherwise.
    pub fn open_cf<N: Into<String>>(
        path: impl AsRef<Path>,
        options: DbOptions,
        families: impl IntoIterator<Item = (N, CfOptions)>,
    ) -> Result<Db> {
        let families = families.into_iter().map(|(n, o)| (n.into(), o)).collect();
        let inner = Arc::new(open::open(path.as_ref(), options, families)?);
        let lifecycle = Arc::new(Lifecycle::new(inner.clone()));
        // On an error here, dropping `lifecycle` stops the threads already
        // started.
        let flush_thread = background::spawn_flush_thread(inner.clone())?;
        lifecycle.threads.lock().push(flush_thread);
        let wanted = inner.state.lock().jobs.compaction_threads;
        lifecycle.add_compaction_threads(wanted)?;
        Db { inner, lifecycle }.with_services()
    }

    /// Opens the database for reads only (RocksDB's `OpenForReadOnly`): the
    /// MANIFEST and WALs are replayed into memory and nothing is written — no
    /// LOCK, LOG, table or MANIFEST — so it works beside a writer and on
    /// read-only media. Writes, `flush` and `compact_range` fail with
    /// `InvalidArgument`. Files a concurrent writer deletes make reads fail;
    /// they never return wrong data. Every column family is opened: the
    /// default one with `options`' column family fields, the others with
    /// the options the newest OPTIONS file records for them (their merge
    /// operators above all), or `options`' when it has none. Give a family
    /// whose merge operator is your own with [`Db::open_cf_read_only`].
    pub fn open_read_only(path: impl AsRef<Path>, options: DbOptions) -> Result<Db> {
        Db::open_cf_read_only(path, options, Vec::<(String, CfOptions)>::new())
    }

    /// [`Db::open_read_only`] with the options of some families given, as
    /// [`Db::open_cf`] takes them; families not named are opened as
    /// `open_read_only` opens them.
    pub fn open_cf_read_only<N: Into<String>>(
        path: impl AsRef<Path>,
        options: DbOptions,
        families: impl IntoIterator<Item = (N, CfOptions)>,
    ) -> Result<Db> {
        let families = families.into_iter().map(|(n, o)| (n.into(), o)).collect();
        let inner = Arc::new(open::open_read_only(path.as_ref(), options, families)?);
        let lifecycle = Arc::new(Lifecycle::new(inner.clone()));
        Db { inner, lifecycle }.with_services()
    }

    /// Deletes the database in `path` (RocksDB's `DestroyDB`): every file of
    /// the engine's, then the directory if nothing else is left in it. Takes
    /// the database's lock first and fails with [`crate::Error::LockHeld`],
    /// deleting nothing, while any process or handle has it open; the LOCK
    /// file goes last, while still held. Files that are not the engine's, and
    /// the directory, stay. A missing directory is not an error.
    pub fn destroy(path: impl AsRef<Path>, options: &DbOptions) -> Result<()> {
        admin::destroy(path.as_ref(), options)
    }

    /// What replaying the WALs at this open found damaged (see
    /// [`crate::WalRecoveryMode`]); empty for a clean open. Also the
    /// `strata.wal-damage` property, which lists damaged WALs kept from
    /// earlier opens as well.
    pub fn wal_damage(&self) -> &[WalDamage] {
        &self.inner.wal_damage
    }

    /// Sets `key` to `value` in the default family.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put_opt(&WriteOptions::default(), key, value)
    }

    /// Sets `key` to `value` in the default family, with write options.
    pub fn put_opt(
        &self,
        options: &WriteOptions,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.put(key, value)?;
        self.write(options, batch)
    }

    /// Deletes `key` from the default family (a no-op if absent).
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_opt(&WriteOptions::default(), key)
    }

    /// Deletes `key` from the default family, with write options.
    pub fn delete_opt(&self, options: &WriteOptions, key: impl AsRef<[u8]>) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.delete(key)?;
        self.write(options, batch)
    }

    /// Deletes every key in `[begin, end)` of the default family (RocksDB's
    /// `DeleteRange`): one write, whatever the number of keys, and reads stay
    /// about as cheap as before. `begin > end` is `InvalidArgument` naming
    /// `delete_range`; an empty range (`begin == end`) writes nothing, as
    /// RocksDB's `DeleteRange` does (a [`WriteBatch`] refuses it, as
    /// RocksDB's batch does).
    pub fn delete_range(&self, begin: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        self.delete_range_opt(&WriteOptions::default(), begin, end)
    }

    /// Deletes every key in `[begin, end)` of the default family, with write
    /// options.
    pub fn delete_range_opt(
        &self,
        options: &WriteOptions,
        begin: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
    ) -> Result<()> {
        if begin.as_ref() == end.as_ref() {
            return self.inner.check_writable();
        }
        let mut batch = WriteBatch::new();
        batch.delete_range(begin, end)?;
        self.write(options, batch)
    }

    /// Adds a merge operand for `key` in the default family: reads combine it
    /// with the key's older versions through the family's merge operator
    /// (`DbOptions::merge_operator`; a family without one refuses the write
    /// with `InvalidArgument`).
    pub fn merge(&self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) -> Result<()> {
        self.merge_opt(&WriteOptions::default(), key, operand)
    }

    /// [`Db::merge`] with write options.
    pub fn merge_opt(
        &self,
        options: &WriteOptions,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
    ) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.merge(key, operand)?;
        self.write(options, batch)
    }

    /// Applies every operation of `batch`, in whichever families it names,
    /// atomically: readers see all of it or none of it, and recovery restores
    /// all of it or none of it. A batch naming a dropped family fails whole.
    pub fn write(&self, options: &WriteOptions, batch: WriteBatch) -> Result<()> {
        write::write(&self.inner, options, batch)
    }

    /// The value of `key` in the default family, or `None`.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        read::get(
            &self.inner,
            &self.inner.default_cf,
            &ReadOptions::default(),
            key.as_ref(),
        )
    }

    /// The value of `key` in the default family with read options (snapshot,
    /// checksum verification).
    pub fn get_opt(&self, options: &ReadOptions, key: impl AsRef<[u8]>) -> Result<Option<Bytes>> {
        read::get(&self.inner, &self.inner.default_cf, options, key.as_ref())
    }

    /// The values of several keys of the default family, read at one
    /// consistent sequence number, in the order of `keys`. Batched: the keys
    /// are sorted and read together, so keys that share a table read its
    /// filter and index once and keys that share a data block read it once.
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        options: &ReadOptions,
        keys: &[K],
    ) -> Vec<Result<Option<Bytes>>> {
        multi_get::multi_get(&self.inner, &self.inner.default_cf, options, keys)
    }

    /// A cursor over the default family, reading the latest state.
    /// Unpositioned: call a seek.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = strata::Db::open(dir.path(), strata::DbOptions { create_if_missing: true, ..Default::default() })?;
    /// db.put("a", "1")?;
    /// db.put("b", "2")?;
    /// let mut it = db.iter();
    /// it.seek(b"b");
    /// assert_eq!(it.key(), Some(&b"b"[..]));
    /// it.prev();
    /// assert_eq!(it.key(), Some(&b"a"[..]));
    /// it.prev();
    /// assert!(it.key().is_none());
    /// it.status()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn iter(&self) -> DbIterator {
        self.iter_opt(&ReadOptions::default())
    }

    /// A cursor over the default family at the read's snapshot (or now),
    /// within `iterate_lower_bound` / `iterate_upper_bound`. Unpositioned:
    /// call a seek.
    pub fn iter_opt(&self, options: &ReadOptions) -> DbIterator {
        read::iter(
            &self.inner,
            &self.inner.default_cf,
            options,
            options.iterate_lower_bound.clone(),
            options.iterate_upper_bound.clone(),
        )
    }

    /// The entries of the default family in `range`, as a double-ended Rust
    /// iterator of `Result<(key, value)>`, reading the latest state. Takes any
    /// std range over byte-string keys: `..`, `a..b`, `"a"..="m"`, `k..`.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = strata::Db::open(dir.path(), strata::DbOptions { create_if_missing: true, ..Default::default() })?;
    /// for (k, v) in [("a", "1"), ("b", "2"), ("c", "3")] {
    ///     db.put(k, v)?;
    /// }
    /// let keys: Vec<_> = db
    ///     .range("b"..)
    ///     .rev()
    ///     .map(|entry| entry.map(|(k, _)| k))
    ///     .collect::<strata::Result<_>>()?;
    /// assert_eq!(keys, [&b"c"[..], &b"b"[..]]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn range(&self, range: impl KeyRange) -> DbRange {
        self.range_opt(&ReadOptions::default(), range)
    }

    /// [`Db::range`] with read options: a snapshot, and bounds that narrow
    /// the range further.
    pub fn range_opt(&self, options: &ReadOptions, range: impl KeyRange) -> DbRange {
        read::range(&self.inner, &self.inner.default_cf, options, range)
    }

    /// A snapshot of the current state, released when dropped.
    pub fn snapshot(&self) -> Snapshot {
        // Under the DB mutex, where compactions read the snapshot list and
        // writers publish sequence numbers: a compaction that read the list
        // before this registration only holds tables whose entries are all at
        // or below the sequence read here, and keeps the newest version of
        // each key, which is what this snapshot sees. Read outside the mutex,
        // the sequence could be older than a compaction that then drops the
        // version it needs.
        let _state = self.inner.state.lock();
        self.inner.snapshots.acquire(self.inner.publisher.visible())
    }

    /// Leaves the read-only state a background error (a failed WAL, MANIFEST
    /// or flush write, or a full disk) put the database in, once the cause is
    /// gone: writes a new MANIFEST, starts a new WAL and flushes every
    /// memtable, then accepts writes again. Fails, changing nothing, while the
    /// cause persists; a corruption is never resumed from (reopen instead).
    /// Ok at once when there is no error.
    pub fn resume(&self) -> Result<()> {
        self.inner.check_writable()?;
        resume::resume(&self.inner)
    }

    /// Flushes the default family's active memtable to an L0 table and waits
    /// until every full memtable of it is flushed.
    pub fn flush(&self) -> Result<()> {
        write::flush(&self.inner, &self.inner.default_cf)
    }

    /// A property of the database (RocksDB's `GetProperty`), such as
    /// `strata.num-files-at-level0`, for the default family; `rocksdb.` names
    /// are accepted too.
    pub fn property(&self, name: &str) -> Option<String> {
        properties::property(&self.inner, &self.inner.default_cf, name)
    }

    /// Every table file of the default family's current version as `(level,
    /// file number, size in bytes)`, level by level (what `strata
    /// checkconsistency` verifies).
    pub fn live_files(&self) -> Vec<(usize, u64, u64)> {
        let sv = self.inner.default_cf.super_version.load();
        sv.version
            .all_files()
            .map(|(level, f)| (level, f.number, f.file_size))
            .collect()
    }

    /// Every blob file the default family's current version links, as
    /// `(file number, size in bytes)`, by number.
    pub fn live_blob_files(&self) -> Vec<(u64, u64)> {
        let sv = self.inner.default_cf.super_version.load();
        sv.version
            .blob_files()
            .iter()
            .map(|(&number, b)| (number, b.addition.file_size))
            .collect()
    }

    /// Makes an openable copy of the database in `dir`, which must not exist,
    /// while writes go on (RocksDB's `Checkpoint::CreateCheckpoint`): tables
    /// and blob files hard-linked where the file system allows (copied
    /// otherwise), the WALs still needed copied, a MANIFEST, CURRENT and the
    /// OPTIONS file written for the copy. Every write acknowledged before the
    /// call is in the copy, and a batch is in it whole or not at all.
    ///
    /// ```
    /// use strata::{Db, DbOptions};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let dir = tempfile::tempdir()?;
    /// let db = Db::open(dir.path().join("db"), DbOptions { create_if_missing: true, ..Default::default() })?;
    /// db.put("k", "v")?;
    /// db.create_checkpoint(dir.path().join("copy"))?;
    /// db.put("k", "later")?;
    /// let copy = Db::open(dir.path().join("copy"), DbOptions::default())?;
    /// assert_eq!(copy.get("k")?.as_deref(), Some(&b"v"[..]));
    /// // An existing directory is refused.
    /// assert!(db.create_checkpoint(dir.path().join("copy")).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_checkpoint(&self, dir: impl AsRef<Path>) -> Result<()> {
        checkpoint::create(&self.inner, dir.as_ref())
    }

    /// The last sequence number visible to reads.
    pub fn latest_sequence_number(&self) -> SequenceNumber {
        self.inner.publisher.visible()
    }

    /// Compacts the user keys of the default family in `[begin, end]`
    /// (`None`: unbounded) down to the last level, flushing the memtable first
    /// (RocksDB's `CompactRange`). Blocks until done.
    pub fn compact_range(&self, begin: Option<&[u8]>, end: Option<&[u8]>) -> Result<()> {
        self.inner.check_writable()?;
        self.flush()?;
        compact::compact_range(&self.inner, 0, begin, end)
    }

    /// Hands every WAL byte written so far to the OS and, with `sync`, makes
    /// it durable (RocksDB's `FlushWAL`). Writes already reach the OS before
    /// they are acknowledged, so without `sync` this only orders with them;
    /// with it, every write acknowledged before the call survives a power
    /// loss, even those made with `sync = false`. Callable from any thread.
    /// A failed sync stops writes, as a failed WAL write does.
    pub fn flush_wal(&self, sync: bool) -> Result<()> {
        self.inner.check_writable()?;
        self.inner.flush_wal(sync)
    }

    /// Makes every WAL byte written so far durable (RocksDB's `SyncWAL`):
    /// `flush_wal(true)`.
    pub fn sync_wal(&self) -> Result<()> {
        self.flush_wal(true)
    }

    /// Waits until no flush or compaction is pending or running, in any family.
    pub fn wait_for_compaction(&self) -> Result<()> {
        compact::wait_for_compaction(&self.inner)
    }

    /// Closes the database, reporting any error. Writes made with `disable_wal`
    /// are flushed first; the WAL is synced; background work stops. Other
    /// clones of this handle can still read; their writes fail with
    /// [`crate::Error::Closed`]. The LOCK is released when the last clone is
    /// dropped.
    pub fn close(self) -> Result<()> {
        self.lifecycle.shutdown()
    }
}

impl DbInner {
    /// Records a background error; writes fail with it until it is cleared.
    /// The first error stands. A full disk also schedules recovery: once
    /// space is back, the database resumes by itself.
    fn set_bg_error(&self, state: &mut DbState, e: crate::Error) {
        let no_space = matches!(e, crate::Error::NoSpace { .. });
        self.set_bg_error_recovering(state, e, no_space);
    }

    /// Records a background error, scheduling automatic recovery from it
    /// when `recover` says time may cure it, and wakes every waiter: stalled
    /// writers must fail with it, and the flush thread runs the recovery.
    /// An error already standing is kept, with its own schedule.
    fn set_bg_error_recovering(&self, state: &mut DbState, e: crate::Error, recover: bool) {
        if state.recovery.bg_error.is_some() {
            return;
        }
        self.events.send(events::Event::BackgroundError(e.clone()));
        state.recovery.bg_error = Some(e);
        if recover {
            state.recovery.schedule();
        }
        self.bg_cv.notify_all();
    }
}

impl DbInner {
    /// Adds `n` to `ticker` when statistics are on.
    fn tick(&self, ticker: crate::statistics::Ticker, n: u64) {
        if let Some(stats) = &self.options.statistics {
            stats.add(ticker, n);
        }
    }

    /// Counts time writers spent stalled.
    fn record_stall(&self, micros: u64) {
        stats::DbStats::add(&self.stats.stall_micros, micros);
        self.tick(crate::statistics::Ticker::StallMicros, micros);
    }

    /// Fails on a read-only handle, and once the database is closed.
    /// [`Db::flush_wal`], for a caller that checked the handle is writable
    /// (not holding the DB mutex: a failure takes it to stop writes).
    fn flush_wal(&self, sync: bool) -> Result<()> {
        let start = std::time::Instant::now();
        let mut wal = self.wal.lock();
        let Some(writer) = wal.as_mut() else {
            return Ok(());
        };
        // The retired WALs first: every write before the call, in whichever
        // WAL, must be durable.
        let result = writer.flush().and_then(|()| {
            if sync {
                self.retired_wals.sync_below(u64::MAX)?;
                writer.sync()
            } else {
                Ok(())
            }
        });
        drop(wal);
        if let Err(e) = &result {
            let mut state = self.state.lock();
            self.set_bg_error(&mut state, e.clone());
        } else if sync {
            stats::DbStats::add(&self.stats.wal_syncs, 1);
            self.record_wal_sync(start);
        }
        result
    }

    /// Counts a WAL fsync that began at `start` (`rocksdb.wal.synced` and
    /// its latency histogram).
    fn record_wal_sync(&self, start: std::time::Instant) {
        if let Some(stats) = &self.options.statistics {
            stats.add(crate::statistics::Ticker::WalFileSynced, 1);
            let micros = crate::statistics::micros_since(start);
            stats.record(crate::statistics::Histogram::WalFileSyncMicros, micros);
        }
    }

    fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(crate::Error::invalid_argument(
                "read_only",
                "the database was opened read-only",
            ));
        }
        if self.shutting_down.load(Ordering::Acquire) {
            return Err(crate::Error::Closed);
        }
        Ok(())
    }

    /// Why a writer waiting under the DB mutex must give up: a background
    /// error, or the database being closed (nothing will wake it again).
    fn wait_error(&self, state: &DbState) -> Option<crate::Error> {
        if let Some(e) = &state.recovery.bg_error {
            return Some(e.clone());
        }
        self.shutting_down
            .load(Ordering::Acquire)
            .then_some(crate::Error::Closed)
    }

    /// Publishes a new super version of family `cf` built from the state,
    /// and recomputes its stall inputs (call with the lock held).
    fn install_super_version(&self, state: &mut DbState, cf: u32) {
        let version = state.versions.current(cf);
        let Some(family) = state.cfs.get_mut(&cf) else {
            return;
        };
        let options = &family.options.compaction;
        // The pending-bytes stalls follow leveled's debt estimate; universal
        // and FIFO are bounded by their run and size limits instead.
        family.pending_compaction_bytes = match options.compaction_style {
            crate::options::CompactionStyle::Level => {
                crate::compaction::leveled::estimated_pending_bytes(&version, options)
            }
            _ => 0,
        };
        stall::count(family, &version, &state.jobs.compacting);
        let l0_files = version.num_files(0);
        let condition = stall::family_condition(family, l0_files);
        let now = stall::listener_condition(condition);
        if now != family.stall_condition {
            self.events.send(events::Event::StallConditionsChanged(
                crate::listener::WriteStallInfo {
                    cf_name: family.shared.name.clone(),
                    current: now,
                    previous: family.stall_condition,
                },
            ));
            family.stall_condition = now;
        }
        state.commit.write_controller.recalculate(
            cf,
            crate::write::controller::FamilyStall {
                condition,
                pending_bytes: family.pending_compaction_bytes,
                near_stop: stall::near_stop(family, l0_files),
                max_rate: options.delayed_write_rate,
            },
        );
        family.publish(version);
    }

    /// Publishes a new super version of every family.
    fn install_all_super_versions(&self, state: &mut DbState) {
        let ids: Vec<u32> = state.cfs.keys().copied().collect();
        for id in ids {
            self.install_super_version(state, id);
        }
    }

    /// The state of the family `cf` names, if it is live in this database.
    fn family<'s>(&self, state: &'s DbState, cf: &CfShared) -> Result<&'s CfState> {
        cf.check_usable(self.instance)?;
        state.cfs.get(&cf.id).ok_or_else(|| {
            crate::Error::invalid_argument(
                "column_family",
                format!("column family {:?} was dropped", cf.name),
            )
        })
    }
}
