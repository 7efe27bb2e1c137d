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

use std::path::Path;

use strata::{ColumnFamily, Db, DbOptions};

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

/// Opens the database with every family (creating the others the first
/// time), each with `options`' column family options.
pub fn open(dir: impl AsRef<Path>, options: &DbOptions) -> strata::Result<Db> {
    let options = DbOptions {
        create_missing_column_families: true,
        ..options.clone()
    };
    let cf_options = options.cf_options();
    Db::open_cf(
        dir,
        options,
        NAMES[1..].iter().map(|n| (*n, cf_options.clone())),
    )
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
