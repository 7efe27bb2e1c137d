//! Full verification of a table file: every checksum, every entry (range
//! tombstones included), and that the blocks tile the file with no gap but
//! what a global seqno tail superseded (checked as such), so that any
//! changed byte is detected.

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::{user_key, ValueType};

use crate::table::format::FOOTER_LEN;
use crate::table::partitioned_filter::FilterQuery;
use crate::table::partitioned_index::IndexIter;
use crate::table::reader::{read_range_tombstones, TableReader};
use crate::table::two_level::HandleIter;

/// What a successful verification walked over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyReport {
    /// Blocks read and checked (data and meta blocks).
    pub blocks: u64,
    /// Entries decoded (point entries and range tombstones).
    pub entries: u64,
}

impl TableReader {
    /// Whether the filter holds what the builder added for `user_key`: the
    /// key itself, or only its prefix when the filter holds prefixes only
    /// (nothing for a key outside the extractor's domain).
    fn filter_holds(&self, filter: &mut FilterQuery<'_>, user_key: &[u8]) -> Result<bool> {
        if !self.properties().filter_without_whole_keys {
            return filter.may_contain_key(user_key);
        }
        match self
            .filter_prefix_extractor
            .and_then(|p| p.prefix(user_key))
        {
            Some(prefix) => filter.may_contain(user_key, prefix),
            None => Ok(true),
        }
    }

    /// Reads every block with checksum verification and checks the table's
    /// structure: blocks contiguous from offset 0 to the footer (an ingested
    /// table's superseded properties, metaindex and footer, checked as
    /// `verify_superseded_tails` says, just before its properties), keys strictly
    /// increasing and well formed, index separators between neighbouring blocks,
    /// the filter matching every key, range tombstones well formed and in
    /// order, and the properties matching the contents.
    pub fn verify(&self) -> Result<VerifyReport> {
        let corrupt = |offset: u64, reason: String| Error::corruption(self.path(), offset, reason);
        let mut report = VerifyReport {
            blocks: 0,
            entries: 0,
        };
        let mut expected_offset = 0u64;
        let mut last_key: Option<Vec<u8>> = None;
        let mut last_separator: Option<Vec<u8>> = None;
        let mut deletions = 0u64;
        let mut index = IndexIter::new(self, false)?;
        let mut filter = self.filter()?.map(|f| FilterQuery::new(self, f));
        index.seek_to_first();
        while index.valid() {
            let handle = index.handle()?;
            if handle.offset != expected_offset {
                return Err(corrupt(
                    handle.offset,
                    format!(
                        "data block starts at {}, expected {expected_offset}",
                        handle.offset
                    ),
                ));
            }
            let block = self.read_block(handle, true)?;
            let mut it = block.iter(self.order.clone());
            it.seek_to_first();
            if !it.valid() {
                it.status()?;
                return Err(corrupt(handle.offset, "empty data block".into()));
            }
            if let Some(sep) = &last_separator {
                if self.order.compare_internal(sep, it.key()) != Ordering::Less {
                    return Err(corrupt(
                        handle.offset,
                        "index separator not below the block's first key".into(),
                    ));
                }
            }
            while it.valid() {
                let parsed = self.parse_key(it.key(), handle.offset)?;
                let value_type = match parsed.value_type() {
                    Some(ValueType::RangeDeletion) => {
                        return Err(corrupt(
                            handle.offset,
                            "range deletion in a data block".into(),
                        ))
                    }
                    Some(t) => t,
                    None => {
                        return Err(corrupt(
                            handle.offset,
                            format!("unknown value type {}", parsed.type_code),
                        ))
                    }
                };
                if value_type == ValueType::Delete {
                    deletions += 1;
                }
                if let Some(prev) = &last_key {
                    if self.order.compare_internal(prev, it.key()) != Ordering::Less {
                        return Err(corrupt(handle.offset, "keys out of order".into()));
                    }
                }
                let new_user_key = last_key
                    .as_deref()
                    .is_none_or(|p| user_key(p) != parsed.user_key);
                let in_filter = match filter.as_mut() {
                    Some(f) if new_user_key => self.filter_holds(f, parsed.user_key)?,
                    _ => true,
                };
                if !in_filter {
                    return Err(corrupt(
                        handle.offset,
                        "bloom filter misses a key the table holds".into(),
                    ));
                }
                last_key = Some(it.key().to_vec());
                report.entries += 1;
                it.next();
            }
            it.status()?;
            let last = last_key.as_deref().unwrap_or_default();
            if self.order.compare_internal(last, index.key()) == Ordering::Greater {
                return Err(corrupt(
                    handle.offset,
                    "index separator below the block's last key".into(),
                ));
            }
            last_separator = Some(index.key().to_vec());
            report.blocks += 1;
            expected_offset = handle.end_with_trailer().unwrap_or(u64::MAX);
            index.next();
        }
        index.status()?;

        let meta_handles = self.meta_handles()?;
        let mut superseded_blocks = 0;
        for handle in &meta_handles {
            // An ingested table's tail: what it superseded lies just
            // before the properties block it added.
            if *handle == self.properties_handle() && handle.offset > expected_offset {
                superseded_blocks = self.verify_superseded_tails(expected_offset, handle.offset)?;
                expected_offset = handle.offset;
            }
            if handle.offset != expected_offset {
                return Err(corrupt(
                    handle.offset,
                    format!(
                        "meta block starts at {}, expected {expected_offset}",
                        handle.offset
                    ),
                ));
            }
            self.read_block_contents(*handle)?;
            report.blocks += 1;
            expected_offset = handle.end_with_trailer().unwrap_or(u64::MAX);
        }
        let footer_at = self.file_size() - FOOTER_LEN as u64;
        if expected_offset != footer_at {
            return Err(corrupt(
                expected_offset,
                format!("blocks end at {expected_offset}, footer starts at {footer_at}"),
            ));
        }
        let range_deletions = self.verify_range_tombstones()?;
        report.entries += range_deletions;
        self.verify_partitions()?;
        let data_blocks = report.blocks - meta_handles.len() as u64;
        self.check_properties(
            &report,
            data_blocks,
            deletions,
            range_deletions,
            last_key.as_deref(),
        )?;
        report.blocks += superseded_blocks;
        Ok(report)
    }

    /// Decodes every entry of the range-deletion block (if any) and checks
    /// that they come in strictly increasing internal-key order, as writers
    /// store them; returns how many there are.
    fn verify_range_tombstones(&self) -> Result<u64> {
        let Some(handle) = self.range_del_handle() else {
            return Ok(0);
        };
        let block = self.read_block(handle, true)?;
        let tombstones = read_range_tombstones(&block, self.path(), handle, &self.order)?;
        let keys: Vec<Vec<u8>> = tombstones.iter().map(|t| t.internal_start_key()).collect();
        if let Some(i) = keys
            .windows(2)
            .position(|w| self.order.compare_internal(&w[0], &w[1]) != Ordering::Less)
        {
            return Err(Error::corruption(
                self.path(),
                handle.offset,
                format!(
                    "range-deletion block entries {i} and {} out of order",
                    i + 1
                ),
            ));
        }
        Ok(tombstones.len() as u64)
    }

    /// Checks a two-level index and a partitioned filter beyond what the
    /// walk over the data blocks saw: each top-level entry is its
    /// partition's last separator, partitions are not empty, the filter's
    /// top level is filed by the index's separators, every filter partition
    /// parses, and the properties count the partitions.
    fn verify_partitions(&self) -> Result<()> {
        if !self.has_two_level_index() {
            return Ok(());
        }
        let top = self.index()?;
        let partitions = self.partition_handles(&top)?;
        for (separator, handle) in &partitions {
            let mut it = self
                .index_partition(*handle, false)?
                .iter(self.order.clone());
            it.seek_to_last();
            it.status()?;
            if !it.valid() || it.key() != separator.as_slice() {
                return Err(Error::corruption(
                    self.path(),
                    handle.offset,
                    "top-level index entry is not its partition's last separator",
                ));
            }
        }
        if let Some(filter_top) = self.partitioned_filter_top()? {
            let filters = self.partition_handles(&filter_top)?;
            let same_keys = filters.len() == partitions.len()
                && filters.iter().zip(&partitions).all(|(f, i)| f.0 == i.0);
            if !same_keys {
                return Err(Error::corruption(
                    self.path(),
                    filters.first().map_or(0, |(_, h)| h.offset),
                    "filter partitions do not follow the index partitions",
                ));
            }
            for (_, handle) in filters {
                self.filter_partition(handle)?;
            }
        }
        let p = self.properties();
        let top_size =
            self.footer_index().end_with_trailer().unwrap_or(0) - self.footer_index().offset;
        if p.index_partitions != partitions.len() as u64 || p.top_level_index_size != top_size {
            return Err(Error::corruption(
                self.path(),
                0,
                format!(
                    "properties say {} index partitions and a {}-byte top level, \
                     the table has {} and {top_size}",
                    p.index_partitions,
                    p.top_level_index_size,
                    partitions.len()
                ),
            ));
        }
        Ok(())
    }

    fn check_properties(
        &self,
        report: &VerifyReport,
        data_blocks: u64,
        deletions: u64,
        range_deletions: u64,
        last_key: Option<&[u8]>,
    ) -> Result<()> {
        let p = self.properties();
        let mismatch = |what: &str, stored: u64, actual: u64| {
            Error::corruption(
                self.path(),
                0,
                format!("properties say {stored} {what}, the table holds {actual}"),
            )
        };
        let point_entries = report.entries.saturating_sub(range_deletions);
        if p.num_entries != point_entries {
            return Err(mismatch("entries", p.num_entries, point_entries));
        }
        if p.num_range_deletions != range_deletions {
            return Err(mismatch(
                "range deletions",
                p.num_range_deletions,
                range_deletions,
            ));
        }
        if p.num_deletions != deletions {
            return Err(mismatch("deletions", p.num_deletions, deletions));
        }
        if p.num_data_blocks != data_blocks {
            return Err(mismatch("data blocks", p.num_data_blocks, data_blocks));
        }
        if last_key.map(user_key).unwrap_or_default() != p.largest_user_key.as_slice() {
            return Err(Error::corruption(
                self.path(),
                0,
                "largest user key property does not match",
            ));
        }
        Ok(())
    }
}
