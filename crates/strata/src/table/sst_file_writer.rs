//! `SstFileWriter`: builds a table file outside any database, for
//! [`Db::ingest_external_file`](crate::Db::ingest_external_file).
//!
//! The file is an ordinary table whose every entry is at sequence number 0
//! and whose properties say it was written for ingestion
//! (`rocksdb.external_sst_file.version` = 2). The database that ingests it
//! decides the sequence number its entries are read at (the global seqno,
//! kept in the MANIFEST), so the same file can be built once and ingested
//! anywhere. As in RocksDB, point entries come in strictly increasing user
//! key order (each user key once), and range deletions in any order; a range
//! deletion removes older data of the database, not the file's own entries.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::fs::{Fs, StdFs};
use crate::key::{internal_key, ValueType};
use crate::key_order::KeyComparator;
use crate::options::{CfOptions, TableOptions};
use crate::range_del::RangeTombstone;
use crate::table::builder::TableBuilder;
use crate::write::batch::{MAX_KEY_SIZE, MAX_VALUE_SIZE};

/// What [`SstFileWriter::finish`] wrote (RocksDB's `ExternalSstFileInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalSstFileInfo {
    /// Where the file is.
    pub file_path: PathBuf,
    /// The first point key (empty when the file holds only range deletions).
    pub smallest_key: Vec<u8>,
    /// The last point key (empty when the file holds only range deletions).
    pub largest_key: Vec<u8>,
    /// Size of the file in bytes.
    pub file_size: u64,
    /// Point entries: puts, merges and deletes.
    pub num_entries: u64,
    /// Range deletions as added (before fragmenting).
    pub num_range_del_entries: u64,
}

/// Writes a table file for ingestion into one column family; see the module
/// documentation. Dropping a writer without [`finish`](Self::finish) leaves
/// an unfinished file that ingestion refuses.
///
/// ```
/// use strata::{CfOptions, Db, DbOptions, IngestExternalFileOptions, SstFileWriter};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let file = dir.path().join("bulk.sst");
/// let mut writer = SstFileWriter::create(&file, &CfOptions::default())?;
/// writer.put("a", "1")?;
/// writer.put("b", "2")?;
/// writer.delete_range("c", "d")?;
/// let info = writer.finish()?;
/// assert_eq!(info.num_entries, 2);
///
/// let options = DbOptions { create_if_missing: true, ..DbOptions::default() };
/// let db = Db::open(dir.path().join("db"), options)?;
/// db.ingest_external_file(&[&file], &IngestExternalFileOptions::default())?;
/// assert_eq!(db.get("b")?.as_deref(), Some(&b"2"[..]));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct SstFileWriter {
    builder: TableBuilder,
    path: PathBuf,
    order: KeyComparator,
    smallest_key: Vec<u8>,
    /// The last point key added; `None` before the first.
    last_key: Option<Vec<u8>>,
    num_entries: u64,
    num_range_del_entries: u64,
}

impl SstFileWriter {
    /// Creates `path` (which must not exist) on the real file system, for a
    /// family with `options` (its comparator and table options).
    pub fn create(path: impl AsRef<Path>, options: &CfOptions) -> Result<SstFileWriter> {
        Self::create_with_fs(&StdFs, path, options)
    }

    /// [`create`](Self::create) on the file system `fs`.
    pub fn create_with_fs(
        fs: &dyn Fs,
        path: impl AsRef<Path>,
        options: &CfOptions,
    ) -> Result<SstFileWriter> {
        let path = path.as_ref().to_path_buf();
        if fs.exists(&path)? {
            return Err(Error::invalid_argument(
                "file_path",
                format!(
                    "{} already exists; SstFileWriter writes a new file",
                    path.display()
                ),
            ));
        }
        let order = KeyComparator::new(&options.comparator);
        let table: TableOptions = options.table.clone();
        let builder = TableBuilder::new(fs.create(&path)?, table)?
            .with_order(order.clone())
            .for_ingestion();
        Ok(SstFileWriter {
            builder,
            path,
            order,
            smallest_key: Vec::new(),
            last_key: None,
            num_entries: 0,
            num_range_del_entries: 0,
        })
    }

    /// Adds `key` = `value`. Keys must come in strictly increasing order.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.add(key.as_ref(), ValueType::Put, value.as_ref())
    }

    /// Adds a merge operand for `key`, applied over the database's older
    /// value by the family's merge operator.
    pub fn merge(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.add(key.as_ref(), ValueType::Merge, value.as_ref())
    }

    /// Adds a deletion of `key` (of the database's older value).
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        self.add(key.as_ref(), ValueType::Delete, &[])
    }

    /// Adds a deletion of the keys in `[begin, end)` in the database's older
    /// data, in any order relative to the point entries.
    pub fn delete_range(&mut self, begin: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        let (begin, end) = (begin.as_ref(), end.as_ref());
        check_key_size(begin)?;
        check_key_size(end)?;
        // Validates the range in the family's order.
        RangeTombstone::new(begin.to_vec(), end.to_vec(), 0, &self.order)?;
        self.builder.add_range_tombstone(begin, end, 0)?;
        self.num_range_del_entries += 1;
        Ok(())
    }

    /// Bytes written so far (an estimate until [`finish`](Self::finish)).
    pub fn file_size(&self) -> u64 {
        self.builder.estimated_file_size()
    }

    /// Writes the meta blocks and footer and syncs the file.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when nothing was added (RocksDB refuses an empty
    /// file too), or an I/O error.
    pub fn finish(self) -> Result<ExternalSstFileInfo> {
        if self.num_entries == 0 && self.num_range_del_entries == 0 {
            return Err(Error::invalid_argument(
                "SstFileWriter",
                format!(
                    "{} has no entries; an empty file cannot be ingested",
                    self.path.display()
                ),
            ));
        }
        let built = self.builder.finish()?;
        Ok(ExternalSstFileInfo {
            file_path: self.path,
            smallest_key: self.smallest_key,
            largest_key: self.last_key.unwrap_or_default(),
            file_size: built.file_size,
            num_entries: self.num_entries,
            num_range_del_entries: self.num_range_del_entries,
        })
    }

    fn add(&mut self, key: &[u8], value_type: ValueType, value: &[u8]) -> Result<()> {
        check_key_size(key)?;
        if value.len() > MAX_VALUE_SIZE {
            return Err(Error::invalid_argument(
                "value",
                format!(
                    "value of {} bytes exceeds the maximum {MAX_VALUE_SIZE}",
                    value.len()
                ),
            ));
        }
        if let Some(last) = &self.last_key {
            if !self.order.lt(last, key) {
                return Err(Error::invalid_argument(
                    "key",
                    format!(
                        "keys must be added in strictly increasing order ({}): {:?} after {:?}",
                        self.order.name(),
                        key.escape_ascii().to_string(),
                        last.escape_ascii().to_string()
                    ),
                ));
            }
        }
        self.builder.add(&internal_key(key, 0, value_type), value)?;
        if self.last_key.is_none() {
            self.smallest_key = key.to_vec();
        }
        self.last_key = Some(key.to_vec());
        self.num_entries += 1;
        Ok(())
    }
}

fn check_key_size(key: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY_SIZE {
        return Err(Error::invalid_argument(
            "key",
            format!(
                "key of {} bytes exceeds the maximum {MAX_KEY_SIZE}",
                key.len()
            ),
        ));
    }
    Ok(())
}
