//! The column families the workload spreads its keys over: key `n` of every
//! thread lives in family `n % 3` ("default", "s1", "s2"), and each thread's
//! sequence key in the default family. A batch touches several families, so
//! the prefix check after a crash (the sequence key says which batches
//! survived; every key must match that prefix) also checks that a batch
//! across families survives or vanishes whole.
//!
//! Runs without the WAL keep every key in the default family: without a WAL
//! each family is flushed on its own, so after a crash families hold
//! different prefixes of the history (RocksDB ties them with `atomic_flush`,
//! which Strata does not have), and no single prefix could be checked.
//!
//! Each family has its own merge operator (`model::MergeKind`), and all
//! share the compaction filter.

use std::path::Path;

use std::ops::Bound;

use strata::comparator::REVERSE_BYTEWISE_COMPARATOR_NAME;
use strata::{CfOptions, ColumnFamily, Db, DbOptions};

use crate::model::MergeKind;
use crate::options::StressOptions;
use crate::workload::key;

/// The families' names, by index.
pub const NAMES: [&str; 3] = ["default", "s1", "s2"];

/// How many families a run spreads its keys over.
pub fn used(disable_wal: bool) -> usize {
    if disable_wal {
        1
    } else {
        NAMES.len()
    }
}

/// The family of key number `n` when `used` families are in use.
pub fn of_key(n: u32, used: usize) -> usize {
    (n % used.max(1) as u32) as usize
}

/// The family a writer thread creates, writes, merges into, reads and drops
/// now and then (so crashes hit family creation, drop and the OPTIONS file
/// writes).
pub const SCRATCH: &str = "scratch";

/// The scratch family's options: its own merge operator, so that a family
/// created at run time with one is tested too.
pub fn scratch_options() -> CfOptions {
    CfOptions {
        merge_operator: Some(MergeKind::StringAppend.operator()),
        ..CfOptions::default()
    }
}

/// Opens the database with every family (creating the others the first
/// time), each with its options from `opts`. A scratch family a crash left
/// behind is opened and dropped.
pub fn open(dir: impl AsRef<Path>, opts: &StressOptions) -> strata::Result<Db> {
    let dir = dir.as_ref();
    let options = DbOptions {
        create_missing_column_families: true,
        ..opts.db.clone()
    };
    let scratch_left = Db::list_column_families(dir, &options)
        .map(|names| names.iter().any(|n| n == SCRATCH))
        .unwrap_or(false);
    let mut families: Vec<(&str, CfOptions)> = (1..NAMES.len())
        .map(|i| (NAMES[i], opts.cf_options(i)))
        .collect();
    if scratch_left {
        families.push((SCRATCH, scratch_options()));
    }
    let db = Db::open_cf(dir, options, families)?;
    if let Some(scratch) = db.cf_handle(SCRATCH) {
        db.drop_column_family(&scratch)?;
    }
    Ok(db)
}

/// The handles of an open database's families, by index.
#[derive(Debug, Clone)]
pub struct Families {
    handles: Vec<ColumnFamily>,
    used: usize,
}

impl Families {
    /// The handles of `db`, which must have every family, of which the
    /// first `used` hold keys.
    pub fn of(db: &Db, used: usize) -> Result<Families, String> {
        let handles = NAMES
            .iter()
            .map(|n| {
                db.cf_handle(n)
                    .ok_or_else(|| format!("column family {n:?} is missing"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Families { handles, used })
    }

    /// The family of key number `n`.
    pub fn for_key(&self, n: u32) -> &ColumnFamily {
        &self.handles[of_key(n, self.used)]
    }

    /// Every family, the default one first.
    pub fn all(&self) -> &[ColumnFamily] {
        &self.handles
    }
}

/// The `[begin, end)` of `cf`'s order that holds thread `thread`'s keys
/// numbered `first..end`. In reverse bytewise order those keys run from
/// key `end - 1` down to key `first`, so the range starts at the first and
/// ends at the key just below `first` among the thread's (or below all of
/// them: the shorter key prefix).
pub fn range_in_order(
    cf: &ColumnFamily,
    thread: usize,
    first: u32,
    end: u32,
) -> (Vec<u8>, Vec<u8>) {
    if cf.comparator().name() != REVERSE_BYTEWISE_COMPARATOR_NAME {
        return (key(thread, first), key(thread, end));
    }
    let below = match first.checked_sub(1) {
        Some(n) => key(thread, n),
        None => format!("t{thread:02}k").into_bytes(),
    };
    (key(thread, end.saturating_sub(1)), below)
}

/// The keys from `first` through `last` (bytewise, `last` included or not)
/// as a range of `cf`'s order: a family in reverse bytewise order holds
/// them from `last` down to `first`.
pub fn key_span(
    cf: &ColumnFamily,
    first: &[u8],
    last: Bound<&[u8]>,
) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let owned = |b: Bound<&[u8]>| b.map(<[u8]>::to_vec);
    if cf.comparator().name() == REVERSE_BYTEWISE_COMPARATOR_NAME {
        (owned(last), Bound::Included(first.to_vec()))
    } else {
        (Bound::Included(first.to_vec()), owned(last))
    }
}
