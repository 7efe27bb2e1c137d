//! Column families: separate key spaces in one database, each with its own
//! memtables, levels, options and statistics, sharing one WAL (so a batch
//! across families is atomic) and one sequence of sequence numbers.
//!
//! Three parts:
//! - [`ColumnFamily`], the user's handle: cheap to clone, `Send + Sync`,
//!   holding no reference to the database (it keeps nothing alive but
//!   itself and the family's last published read state).
//! - `CfShared`, what readers use without the DB mutex: the family's
//!   identity and its published [`SuperVersion`].
//! - `CfState`, what the DB mutex guards: the memtables and options.
//!
//! Invariant: a family's id is never reused (the MANIFEST records the largest
//! handed out), so a WAL record of a dropped family can never be replayed
//! into a new one.

pub(crate) mod stats;

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::error::{Error, Result};
use crate::memtable::MemTable;
use crate::options::CfOptions;
use crate::version::{SuperVersion, Version};
pub(crate) use stats::CfStats;

pub use crate::version::DEFAULT_COLUMN_FAMILY_NAME;

/// A handle on one column family of an open database (RocksDB's
/// `ColumnFamilyHandle`). Cheap to clone and share between threads; it does
/// not keep the database open. Using it after its family was dropped, or
/// with another database, fails with `InvalidArgument`.
///
/// ```
/// # fn main() -> strata::Result<()> {
/// let dir = tempfile::tempdir().unwrap();
/// let db = strata::Db::open(dir.path(), strata::DbOptions {
///     create_if_missing: true,
///     ..Default::default()
/// })?;
/// let users = db.create_column_family("users", strata::CfOptions::default())?;
/// db.put_cf(&users, "alice", "1")?;
/// assert_eq!(db.get_cf(&users, "alice")?.as_deref(), Some(&b"1"[..]));
/// assert_eq!(db.get("alice")?, None); // the default family is another key space
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct ColumnFamily {
    pub(crate) shared: Arc<CfShared>,
}

impl ColumnFamily {
    /// The family's name.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The family's id (0 for the default family), as the MANIFEST and the
    /// WAL record it.
    pub fn id(&self) -> u32 {
        self.shared.id
    }

    /// True once the family was dropped (by any handle).
    pub fn is_dropped(&self) -> bool {
        self.shared.dropped.load(Ordering::Acquire)
    }

    /// The order of the family's keys (RocksDB's `GetComparator`), fixed
    /// when the family was created.
    pub fn comparator(&self) -> Arc<dyn crate::comparator::Comparator> {
        self.shared.super_version.load().options.comparator.clone()
    }
}

impl fmt::Debug for ColumnFamily {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ColumnFamily")
            .field("id", &self.shared.id)
            .field("name", &self.shared.name)
            .field("dropped", &self.is_dropped())
            .finish()
    }
}

/// The part of a family readers use without the DB mutex.
#[derive(Debug)]
pub(crate) struct CfShared {
    pub id: u32,
    pub name: String,
    /// Which open database the family belongs to ([`crate::Db`]'s
    /// instance number), so a handle of another database is refused.
    pub db_instance: u64,
    /// Set, under the DB mutex, once the drop is durable in the MANIFEST.
    pub dropped: AtomicBool,
    /// What reads of this family see; replaced under the DB mutex.
    pub super_version: ArcSwap<SuperVersion>,
    pub stats: CfStats,
}

impl CfShared {
    /// Fails unless the family is live in the database numbered
    /// `db_instance`.
    pub fn check_usable(&self, db_instance: u64) -> Result<()> {
        if self.db_instance != db_instance {
            return Err(Error::invalid_argument(
                "column_family",
                format!(
                    "the handle of column family {:?} belongs to another database (or an \
                     earlier open of this one)",
                    self.name
                ),
            ));
        }
        if self.dropped.load(Ordering::Acquire) {
            return Err(Error::invalid_argument(
                "column_family",
                format!("column family {:?} was dropped", self.name),
            ));
        }
        Ok(())
    }
}

/// A memtable waiting to be flushed, with the WALs that bound its writes.
#[derive(Debug)]
pub(crate) struct ImmMemTable {
    pub mem: Arc<MemTable>,
    /// The WAL that was current when this memtable started taking writes:
    /// every write it holds is in this WAL or a later one.
    pub log_number: u64,
    /// The WAL that came after it: once it is flushed, the family needs no
    /// WAL below this one.
    pub next_log_number: u64,
    /// It holds writes made with `disable_wal`: only its table will keep them.
    pub unlogged: bool,
}

/// The part of a family the DB mutex guards.
#[derive(Debug)]
pub(crate) struct CfState {
    pub shared: Arc<CfShared>,
    pub options: Arc<CfOptions>,
    /// Takes new writes.
    pub mem: Arc<MemTable>,
    /// The WAL that was current when `mem` started taking writes (raised to
    /// the current WAL at every WAL switch while `mem` is empty).
    pub mem_log_number: u64,
    /// Full memtables, newest first.
    pub imm: VecDeque<ImmMemTable>,
    /// The active memtable holds writes made with `disable_wal`: no WAL has
    /// them, so closing must flush it (full memtables carry their own flag).
    pub mem_unlogged: bool,
    /// Compaction debt of the current version (for the pending-bytes stalls).
    pub pending_compaction_bytes: u64,
    /// The write stall condition the listeners were last told of.
    pub stall_condition: crate::listener::WriteStallCondition,
}

impl CfState {
    /// A family with an empty memtable, whose writes start in WAL
    /// `log_number`, reading `version`.
    pub fn new(
        shared: Arc<CfShared>,
        options: Arc<CfOptions>,
        mem: Arc<MemTable>,
        imm: Vec<Arc<MemTable>>,
        log_number: u64,
    ) -> CfState {
        CfState {
            shared,
            options,
            mem,
            mem_log_number: log_number,
            // Read-only opens hand over replayed memtables, which are never
            // flushed, so no WAL bounds them.
            imm: imm
                .into_iter()
                .map(|mem| ImmMemTable {
                    mem,
                    log_number: 0,
                    next_log_number: 0,
                    unlogged: false,
                })
                .collect(),
            mem_unlogged: false,
            pending_compaction_bytes: 0,
            stall_condition: crate::listener::WriteStallCondition::Normal,
        }
    }

    /// The oldest WAL holding a write of this family not yet in a table,
    /// or `current_wal` when it has none.
    pub fn oldest_log_needed(&self, current_wal: u64) -> u64 {
        if let Some(oldest) = self.imm.back() {
            return oldest.log_number.min(current_wal);
        }
        if self.mem.is_empty() {
            current_wal
        } else {
            self.mem_log_number.min(current_wal)
        }
    }

    /// A fresh super version from the memtables and `version`.
    pub fn super_version(&self, version: Arc<Version>) -> SuperVersion {
        SuperVersion {
            mem: self.mem.clone(),
            imm: self.imm.iter().map(|i| i.mem.clone()).collect(),
            version,
            options: self.options.clone(),
        }
    }

    /// Publishes a super version for readers (call under the DB mutex).
    pub fn publish(&self, version: Arc<Version>) {
        self.shared
            .super_version
            .store(Arc::new(self.super_version(version)));
    }
}
