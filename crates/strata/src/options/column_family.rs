//! Options of one column family (RocksDB's `ColumnFamilyOptions`): how its
//! memtables, tables and compaction behave. Every family has its own; the
//! default family's come from the same fields of [`DbOptions`](super::DbOptions),
//! as RocksDB's `Options` carries both halves.

use std::sync::Arc;

use super::{BlobOptions, CompactionOptions, TableOptions};
use crate::compaction_filter::CompactionFilter;
use crate::comparator::{bytewise_comparator, Comparator};
use crate::error::{Error, Result};
use crate::merge::MergeOperator;

/// Smallest accepted `write_buffer_size` (64 KiB).
pub const MIN_WRITE_BUFFER_SIZE: usize = 64 << 10;

/// Options of one column family.
///
/// ```
/// use strata::{merge_operator_from_name, CfOptions};
///
/// let counters = CfOptions {
///     write_buffer_size: 8 << 20,
///     merge_operator: Some(merge_operator_from_name("uint64add").unwrap()),
///     ..CfOptions::default()
/// };
/// assert!(counters.validate().is_ok());
/// ```
#[derive(Debug, Clone)]
pub struct CfOptions {
    /// Bytes of writes a memtable collects before it is switched out and flushed
    /// to an L0 table. Default 64 MiB. Larger buffers mean fewer, larger L0 files
    /// and more memory.
    pub write_buffer_size: usize,
    /// Memtables (active plus waiting to flush) allowed at once. Default 2. When
    /// all are full, writes wait for a flush.
    pub max_write_buffer_number: usize,
    /// The order of the family's keys (RocksDB's `comparator`). Default
    /// bytewise. Fixed when the family is created: an open with a
    /// comparator of another name fails with `InvalidArgument`.
    pub comparator: Arc<dyn Comparator>,
    /// How table files are built and read.
    pub table: TableOptions,
    /// When and how tables are compacted, and when writes stall for it.
    pub compaction: CompactionOptions,
    /// Combines merge operands into values (RocksDB's `merge_operator`).
    /// Default none: a merge is refused. A family's operator is recorded in
    /// the OPTIONS file by name and must keep that name across reopens.
    pub merge_operator: Option<Arc<dyn MergeOperator>>,
    /// Called by every compaction on the values it writes, to keep, remove
    /// or change them (RocksDB's `compaction_filter`; see
    /// [`crate::compaction_filter`]). Default none.
    pub compaction_filter: Option<Arc<dyn CompactionFilter>>,
    /// Size of each memtable's bloom filter as a fraction of
    /// `write_buffer_size` (RocksDB's `memtable_prefix_bloom_size_ratio`,
    /// at most 0.25). Default 0: none. It holds the prefixes of the table
    /// options' `prefix_extractor` (for prefix seeks) and, with
    /// `memtable_whole_key_filtering`, whole keys (for gets).
    pub memtable_prefix_bloom_size_ratio: f64,
    /// Put whole keys in the memtable bloom filter too. Default false.
    pub memtable_whole_key_filtering: bool,
    /// Key-value separation: which values go to blob files, and how those
    /// are cached and collected.
    pub blob: BlobOptions,
}

impl Default for CfOptions {
    fn default() -> Self {
        CfOptions {
            write_buffer_size: 64 << 20,
            max_write_buffer_number: 2,
            comparator: bytewise_comparator(),
            table: TableOptions::default(),
            compaction: CompactionOptions::default(),
            merge_operator: None,
            compaction_filter: None,
            memtable_prefix_bloom_size_ratio: 0.0,
            memtable_whole_key_filtering: false,
            blob: BlobOptions::default(),
        }
    }
}

impl CfOptions {
    /// How flushes write L0 tables: entry 0 of `compression_per_level`
    /// (whatever the base level), the rest as `table` says.
    pub fn l0_table_options(&self) -> TableOptions {
        TableOptions {
            compression: self
                .compaction
                .compression_for_level(0, 1, self.table.compression),
            ..self.table.clone()
        }
    }

    /// Arena size for a new memtable: the switch happens at `write_buffer_size`,
    /// so reserve that plus room for the group that crosses it.
    pub(crate) fn memtable_arena_bytes(&self) -> usize {
        self.write_buffer_size + self.write_buffer_size / 8
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<()> {
        if self.write_buffer_size < MIN_WRITE_BUFFER_SIZE || self.write_buffer_size > 64 << 30 {
            return Err(Error::invalid_argument(
                "write_buffer_size",
                format!(
                    "{} is outside {MIN_WRITE_BUFFER_SIZE}..=64 GiB",
                    self.write_buffer_size
                ),
            ));
        }
        if !(2..=64).contains(&self.max_write_buffer_number) {
            return Err(Error::invalid_argument(
                "max_write_buffer_number",
                format!("{} is outside 2..=64", self.max_write_buffer_number),
            ));
        }
        if !(0.0..=0.25).contains(&self.memtable_prefix_bloom_size_ratio) {
            return Err(Error::invalid_argument(
                "memtable_prefix_bloom_size_ratio",
                format!(
                    "{} is outside 0..=0.25",
                    self.memtable_prefix_bloom_size_ratio
                ),
            ));
        }
        if let (Some(extractor), false) = (
            self.table.prefix_extractor,
            crate::comparator::is_bytewise(&*self.comparator),
        ) {
            // A prefix names the keys in [p, prefix_end(p)) only in bytewise
            // order: prefix seeks and filters would skip keys under another.
            return Err(Error::invalid_argument(
                "prefix_extractor",
                format!(
                    "{} needs comparator {}; this family's is {}",
                    extractor.name(),
                    crate::comparator::BYTEWISE_COMPARATOR_NAME,
                    self.comparator.name()
                ),
            ));
        }
        self.table.validate()?;
        self.blob.validate()?;
        self.compaction.validate()
    }
}
