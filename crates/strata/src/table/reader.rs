//! Opens a table file and answers point reads.
//!
//! Open reads the footer, then the metaindex, properties, index, filter and
//! range-deletion blocks (and every index and filter partition, unless the
//! block cache is to hold them), always verifying their checksums; the range
//! tombstones are kept fragmented for the table's lifetime. Data blocks are
//! read on demand, through the block cache when the table has one (see
//! [`super::cached`]; each block is identified by the file and its offset).

use crate::cache::{Cache, CacheHandle, Priority};
use crate::statistics::{Statistics, Ticker};
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use crate::checksum::ChecksumType;
use crate::compression::CompressionType;
use crate::encoding::{decode_fixed32, Decoder};
use crate::error::{Error, Result};
use crate::fs::RandomAccessFile;
use crate::iter::InternalIterator;
use crate::key::{seek_key, ParsedInternalKey, SequenceNumber, ValueType};
use crate::key_order::KeyComparator;
use crate::options::{PrefixExtractor, ReadOptions};
use crate::perf_context::{self, PerfTimer};
use crate::range_del::{FragmentedRangeTombstones, RangeTombstone};
use crate::table::block::{Block, BlockOrigin, BytewiseOrder};
use crate::table::cached::{BlockCacheRef, MetaPinning};
use crate::table::filter::BloomFilter;
use crate::table::format::{
    check_meta_blocks, BlockHandle, Footer, BLOCK_TRAILER_LEN, FILTER_BLOCK_NAME, FOOTER_LEN,
    FORMAT_VERSION_RANGE_DEL, PARTITIONED_FILTER_BLOCK_NAME, PROPERTIES_BLOCK_NAME,
    RANGE_DEL_BLOCK_NAME,
};
use crate::table::partitioned_filter::{FilterQuery, TableFilter};
use crate::table::partitioned_index::{HeldPartitions, IndexIter};
use crate::table::prefetch::Prefetcher;
use crate::table::properties::TableProperties;
use crate::table::two_level::HandleIter;

/// The newest entry of a user key visible at the read's sequence number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableEntry {
    /// Sequence number of the entry.
    pub seq: SequenceNumber,
    /// Put or delete.
    pub value_type: ValueType,
    /// The value (empty for a deletion), sharing the block's bytes.
    pub value: Bytes,
}

/// Reads blocks of one file: bounds, checksum, decompression.
#[derive(Debug)]
pub(super) struct BlockFetcher {
    file: Arc<dyn RandomAccessFile>,
    path: Arc<Path>,
    file_size: u64,
    checksum: ChecksumType,
}

/// An open table file. Shared between threads behind an `Arc`.
#[derive(Debug)]
pub struct TableReader {
    /// Data blocks are looked up here first, and inserted after a read.
    pub(super) block_cache: Option<BlockCacheRef>,
    pub(super) fetcher: BlockFetcher,
    pub(super) footer: Footer,
    /// The index block, or a two-level index's top level. `None` when the
    /// block cache holds it (`cache_index_and_filter_blocks`).
    pub(super) index: Option<Block>,
    /// As `index`: `None` when the cache holds it.
    pub(super) filter: Option<TableFilter>,
    /// The filter block, or a partitioned filter's top level.
    pub(super) filter_handle: Option<BlockHandle>,
    /// `filter_handle` names a partitioned filter's top level.
    pub(super) partitioned_filter: bool,
    /// Index and filter partitions held in memory, or pinned in the cache.
    pub(super) partitions: HeldPartitions,
    properties_handle: BlockHandle,
    properties: TableProperties,
    /// The extractor whose prefixes the filter holds (parsed from the
    /// properties once, so a seek compares it without formatting a name);
    /// `None` when it holds none or names one this build does not know.
    pub(super) filter_prefix_extractor: Option<PrefixExtractor>,
    range_del_handle: Option<BlockHandle>,
    /// Read at open and held while the table is open (empty without the
    /// block): every get and iterator of the table consults them.
    range_tombstones: Arc<FragmentedRangeTombstones>,
    /// Handles keeping the cached index and filter pinned while the table is
    /// open; `index` and `filter` then share their values.
    pub(super) pinned_meta: Vec<CacheHandle>,
    /// The order of the table's keys, which every block seek uses.
    pub(super) order: KeyComparator,
    /// An ingested table's global sequence number: every entry and range
    /// tombstone, stored at sequence number 0, reads as this one (see
    /// [`with_global_seqno`](Self::with_global_seqno)).
    pub(super) global_seqno: Option<SequenceNumber>,
}

impl TableReader {
    /// Opens the table in `file`; `path` names it in errors. The table holds
    /// its index and filter, partitions included.
    ///
    /// The keys are taken to be in the order the table's properties name,
    /// which must be built in (tools read tables this way); a database
    /// opens its tables with [`open_in_order`](Self::open_in_order).
    pub fn open(file: Arc<dyn RandomAccessFile>, path: &Path) -> Result<TableReader> {
        let mut table = Self::open_top_levels(file, path, None)?;
        table.partitions = table.read_partitions()?;
        Ok(table)
    }

    /// As [`open`](Self::open), for a table of a family sorted by `order`.
    ///
    /// # Errors
    ///
    /// `InvalidArgument` when the table's properties name another order.
    pub fn open_in_order(
        file: Arc<dyn RandomAccessFile>,
        path: &Path,
        order: &KeyComparator,
    ) -> Result<TableReader> {
        let mut table = Self::open_top_levels(file, path, Some(order))?;
        table.partitions = table.read_partitions()?;
        Ok(table)
    }

    /// [`open`](Self::open) followed by
    /// [`with_block_cache`](Self::with_block_cache), except that partitions
    /// the cache is to hold are not read now: a table opened for a database
    /// larger than memory reads only its top levels (and what it pins).
    pub fn open_with_block_cache(
        file: Arc<dyn RandomAccessFile>,
        path: &Path,
        order: &KeyComparator,
        cache: Arc<dyn Cache>,
        statistics: Option<Arc<Statistics>>,
        meta_priority: Option<Priority>,
        pinning: MetaPinning,
    ) -> Result<TableReader> {
        let mut table = Self::open_top_levels(file, path, Some(order))?;
        if meta_priority.is_none() {
            table.partitions = table.read_partitions()?;
        }
        table.with_block_cache(cache, statistics, meta_priority, pinning)
    }

    /// Opens the table reading its meta blocks but no index or filter
    /// partitions; `order`, when given, is the order the table must be in.
    fn open_top_levels(
        file: Arc<dyn RandomAccessFile>,
        path: &Path,
        order: Option<&KeyComparator>,
    ) -> Result<TableReader> {
        let path: Arc<Path> = Arc::from(path);
        let corrupt = |offset: u64, reason: String| Error::corruption(&path, offset, reason);
        let (fetcher, footer) = BlockFetcher::at_last_footer(file, path.clone())?;
        let metaindex = fetcher.read_block(footer.metaindex, true, None)?;
        let entries = metaindex_entries(&metaindex)?;
        let handle_of = |name: &[u8]| {
            entries
                .iter()
                .find(|(n, _)| n.as_slice() == name)
                .map(|&(_, handle)| handle)
        };
        let filter_handle = handle_of(FILTER_BLOCK_NAME);
        let partitioned_filter_handle = handle_of(PARTITIONED_FILTER_BLOCK_NAME);
        let range_del_handle = handle_of(RANGE_DEL_BLOCK_NAME);
        let properties_handle = handle_of(PROPERTIES_BLOCK_NAME).ok_or_else(|| {
            corrupt(
                footer.metaindex.offset,
                "metaindex lacks the properties block".into(),
            )
        })?;
        let props_block = fetcher.read_block(properties_handle, true, None)?;
        let properties = TableProperties::decode(&props_block)
            .map_err(|r| corrupt(properties_handle.offset, r))?;
        let order = table_order(&properties.comparator_name, order, &path)?;
        check_meta_blocks(
            footer.format_version,
            range_del_handle.is_some(),
            filter_handle.is_some(),
            partitioned_filter_handle.is_some(),
        )
        .map_err(|r| corrupt(footer.metaindex.offset, r))?;
        let index = fetcher.read_block(footer.index, true, None)?;
        let filter = match (filter_handle, partitioned_filter_handle) {
            (Some(handle), _) => {
                let bytes = fetcher.read_block_contents(handle, true, None)?;
                let filter = BloomFilter::new(bytes).map_err(|r| corrupt(handle.offset, r))?;
                Some(TableFilter::Full(filter))
            }
            (None, Some(handle)) => Some(TableFilter::Partitioned(
                fetcher.read_block(handle, true, None)?,
            )),
            (None, None) => None,
        };
        let range_tombstones = match range_del_handle {
            Some(handle) => {
                let block = fetcher.read_block(handle, true, None)?;
                let tombstones = read_range_tombstones(&block, &path, handle, &order)?;
                FragmentedRangeTombstones::new(tombstones, &order)
            }
            None => FragmentedRangeTombstones::default(),
        };
        Ok(TableReader {
            block_cache: None,
            fetcher,
            footer,
            index: Some(index),
            filter,
            filter_handle: filter_handle.or(partitioned_filter_handle),
            partitioned_filter: partitioned_filter_handle.is_some(),
            partitions: HeldPartitions::default(),
            properties_handle,
            filter_prefix_extractor: PrefixExtractor::parse(&properties.prefix_extractor_name).ok(),
            properties,
            range_del_handle,
            range_tombstones: Arc::new(range_tombstones),
            pinned_meta: Vec::new(),
            order,
            global_seqno: None,
        })
    }

    /// The table as the database reads an ingested file: every entry and
    /// range tombstone at sequence number `seq` rather than the 0 the file
    /// stores (RocksDB's global seqno). The file must hold each user key at
    /// most once, as `SstFileWriter` writes it; ingestion checks that every
    /// stored sequence number is 0.
    pub fn with_global_seqno(mut self, seq: SequenceNumber) -> Result<TableReader> {
        if let Some(handle) = self.range_del_handle {
            let block = self.fetcher.read_block(handle, true, None)?;
            let tombstones = read_range_tombstones(&block, self.path(), handle, &self.order)?;
            let at_seq = tombstones.into_iter().map(|t| t.with_seq(seq));
            self.range_tombstones = Arc::new(FragmentedRangeTombstones::new(at_seq, &self.order));
        }
        self.global_seqno = Some(seq);
        Ok(self)
    }

    /// The global sequence number this reader applies, if any.
    pub fn global_seqno(&self) -> Option<SequenceNumber> {
        self.global_seqno
    }

    /// Every index and filter partition, for a table that holds them.
    fn read_partitions(&self) -> Result<HeldPartitions> {
        let mut held = HeldPartitions::default();
        if let (true, Some(top)) = (self.has_two_level_index(), &self.index) {
            held.index = self.read_index_partitions(top)?;
        }
        if let Some(TableFilter::Partitioned(top)) = &self.filter {
            held.filter = self.read_filter_partitions(top)?;
        }
        Ok(held)
    }

    /// Whether the index is two-level: a top level over index partitions
    /// (format version 3).
    pub fn has_two_level_index(&self) -> bool {
        self.footer.format_version > FORMAT_VERSION_RANGE_DEL
    }

    /// Where the index block (or a two-level index's top level) is.
    pub(crate) fn footer_index(&self) -> BlockHandle {
        self.footer.index
    }

    pub(crate) fn held_partitions(&self) -> &HeldPartitions {
        &self.partitions
    }

    /// The table's range tombstones, fragmented (empty when it has none).
    /// Point entries of this table and of older sources are deleted by them
    /// as [`FragmentedRangeTombstones`] describes.
    pub fn range_tombstones(&self) -> &Arc<FragmentedRangeTombstones> {
        &self.range_tombstones
    }

    /// The table's properties.
    pub fn properties(&self) -> &TableProperties {
        &self.properties
    }

    /// Where the properties block the last footer leads to is.
    pub(super) fn properties_handle(&self) -> BlockHandle {
        self.properties_handle
    }

    /// The file this table was opened from.
    pub fn path(&self) -> &Path {
        &self.fetcher.path
    }

    /// Size of the file in bytes.
    pub fn file_size(&self) -> u64 {
        self.fetcher.file_size
    }

    /// The index block, or a two-level index's top level: held (or pinned)
    /// by the table, or from the block cache.
    pub(crate) fn index(&self) -> Result<Block> {
        match (&self.index, &self.block_cache) {
            (Some(index), _) => Ok(index.clone()),
            (None, Some(cache)) => self
                .cached_index_block(cache, self.footer.index, true)
                .map(|(index, _)| index),
            (None, None) => self.fetcher.read_block(self.footer.index, true, None),
        }
    }

    /// The filter, if the table has one: held (or pinned), or from the
    /// block cache.
    pub fn filter(&self) -> Result<Option<TableFilter>> {
        match (&self.filter, self.meta_cache()) {
            (Some(filter), _) => Ok(Some(filter.clone())),
            (None, Some(cache)) => Ok(self.cached_table_filter(cache)?.map(|(f, _)| f)),
            (None, None) => Ok(None),
        }
    }

    /// A partitioned filter's top level; `None` when the filter is whole or
    /// absent.
    pub(crate) fn partitioned_filter_top(&self) -> Result<Option<Block>> {
        if !self.partitioned_filter {
            return Ok(None);
        }
        Ok(match self.filter()? {
            Some(TableFilter::Partitioned(top)) => Some(top),
            _ => None,
        })
    }

    /// Reads, checks and decompresses one block, bypassing the cache.
    pub fn read_block(&self, handle: BlockHandle, verify_checksum: bool) -> Result<Block> {
        self.fetcher.read_block(handle, verify_checksum, None)
    }

    /// One data block: from the block cache if it is there, else read (and
    /// inserted when `fill_cache`). A block that fails its checksum is never
    /// cached.
    pub fn read_data_block(
        &self,
        handle: BlockHandle,
        verify_checksum: bool,
        fill_cache: bool,
    ) -> Result<Block> {
        self.read_data_block_with(handle, verify_checksum, fill_cache, None)
    }

    /// [`read_data_block`](Self::read_data_block) with a scan's readahead:
    /// a block the cache misses is read through `prefetch`.
    pub(crate) fn read_data_block_with(
        &self,
        handle: BlockHandle,
        verify_checksum: bool,
        fill_cache: bool,
        prefetch: Option<&mut Prefetcher>,
    ) -> Result<Block> {
        let Some(cache) = &self.block_cache else {
            return self.fetcher.read_block(handle, verify_checksum, prefetch);
        };
        let fill = fill_cache.then_some(Priority::Low);
        self.cached_block(
            cache,
            handle,
            (Ticker::BlockCacheDataHit, Ticker::BlockCacheDataMiss),
            fill,
            || {
                let block = self.fetcher.read_block(handle, verify_checksum, prefetch)?;
                let size = block.size();
                Ok((block, size))
            },
        )
        .map(|(block, _)| block)
    }

    /// Reads a block's bytes without parsing them as entries (filter blocks).
    pub(crate) fn read_block_contents(&self, handle: BlockHandle) -> Result<Bytes> {
        self.fetcher.read_block_contents(handle, true, None)
    }

    /// False when the bloom filter proves `user_key` absent. A filter that
    /// cannot be loaded proves nothing: the read goes on to the index.
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        self.filter_answer(user_key).unwrap_or(true)
    }

    /// What the bloom filter says of `user_key`: `Some(false)` when it proves
    /// the key absent, `Some(true)` when the key may be there, `None` when
    /// the table has no filter (or it, or the partition the key selects,
    /// cannot be loaded), so that statistics count only reads a filter was
    /// asked about, as RocksDB's do.
    pub fn filter_answer(&self, user_key: &[u8]) -> Option<bool> {
        self.whole_key_filter()?.may_contain_key(user_key).ok()
    }

    /// The filter to ask about whole keys: `None` when the table has none,
    /// holds prefixes only (`whole_key_filtering=false`), or cannot load it
    /// (which proves nothing).
    pub(crate) fn whole_key_filter(&self) -> Option<FilterQuery<'_>> {
        if self.properties.filter_without_whole_keys {
            return None;
        }
        let filter = self.filter().ok().flatten()?;
        Some(FilterQuery::new(self, filter))
    }

    /// False when the table's bloom filter proves that no key at or after
    /// `user_key` has `prefix`, a prefix `extractor` made of `user_key`
    /// (the partition of a partitioned filter is the one `user_key`
    /// selects: the first key at or after it is there, so if any key there
    /// has the prefix, that one does). A table built with another extractor
    /// (or none), or whose filter cannot be loaded, proves nothing. Counted
    /// in `bloom.filter.prefix.checked` / `.useful` when it was asked.
    pub fn prefix_may_match(
        &self,
        extractor: &PrefixExtractor,
        user_key: &[u8],
        prefix: &[u8],
    ) -> bool {
        if self.filter_prefix_extractor != Some(*extractor) {
            return true;
        }
        let Ok(Some(filter)) = self.filter() else {
            return true;
        };
        let Ok(answer) = FilterQuery::new(self, filter).may_contain(user_key, prefix) else {
            return true;
        };
        if let Some(stats) = self
            .block_cache
            .as_ref()
            .and_then(|c| c.statistics.as_ref())
        {
            stats.add(Ticker::BloomFilterPrefixChecked, 1);
            if !answer {
                stats.add(Ticker::BloomFilterPrefixUseful, 1);
            }
        }
        answer
    }

    /// The newest entry for `user_key` with sequence number <= `seq` that is
    /// a value or a deletion (merge operands are passed over; a read that
    /// applies them uses [`get_past_filter`](Self::get_past_filter)).
    /// Checks the filter first, then the index, then one data block (two when the
    /// key's versions straddle a block boundary).
    pub fn get(
        &self,
        options: &ReadOptions,
        user_key: &[u8],
        seq: SequenceNumber,
    ) -> Result<Option<TableEntry>> {
        if !self.may_contain(user_key) {
            return Ok(None);
        }
        self.get_past_filter(options, user_key, seq, &mut Vec::new())
    }

    /// [`get`](Self::get) for a caller that already asked the filter (to
    /// count its answer). Merge operands newer than the entry returned are
    /// appended to `operands`, newest first; with only operands here the
    /// answer is `None` (look in older sources).
    pub fn get_past_filter(
        &self,
        options: &ReadOptions,
        user_key: &[u8],
        seq: SequenceNumber,
        operands: &mut Vec<Bytes>,
    ) -> Result<Option<TableEntry>> {
        super::lookup::TableLookup::new(self, options).get(user_key, seq, operands)
    }

    /// About where in the file the entries of `user_key` and later keys
    /// begin: the offset of the data block that would hold it, or the end
    /// of the data blocks when every key is smaller (RocksDB's
    /// `ApproximateOffsetOf`, for size estimates).
    pub fn approximate_offset_of(&self, user_key: &[u8]) -> Result<u64> {
        let lookup = seek_key(user_key, crate::key::MAX_SEQUENCE_NUMBER);
        // An estimate should not disturb the cache.
        let mut index = IndexIter::new(self, false)?;
        index.seek(&lookup);
        if index.valid() {
            return Ok(index.handle()?.offset);
        }
        index.status()?;
        // Past the last block: the data ends where the meta blocks begin.
        Ok(self.footer.metaindex.offset)
    }

    /// An iterator over every entry, in internal-key order.
    pub fn iter(self: &Arc<Self>, options: &ReadOptions) -> super::iter::TableIterator {
        super::iter::TableIterator::new(self.clone(), options)
    }

    /// Where the range-deletion block is, if the table has one.
    pub(crate) fn range_del_handle(&self) -> Option<BlockHandle> {
        self.range_del_handle
    }

    /// Handles of the meta blocks (filter, range deletions, index, properties,
    /// metaindex, and every partition) in file order, for `verify`.
    pub(crate) fn meta_handles(&self) -> Result<Vec<BlockHandle>> {
        let mut v: Vec<BlockHandle> = self.filter_handle.into_iter().collect();
        v.extend(self.range_del_handle);
        v.extend([
            self.footer.index,
            self.properties_handle,
            self.footer.metaindex,
        ]);
        if self.has_two_level_index() {
            v.extend(
                self.partition_handles(&self.index()?)?
                    .into_iter()
                    .map(|(_, h)| h),
            );
        }
        if let Some(top) = self.partitioned_filter_top()? {
            v.extend(self.partition_handles(&top)?.into_iter().map(|(_, h)| h));
        }
        v.sort_by_key(|h| h.offset);
        Ok(v)
    }

    pub(crate) fn parse_key<'a>(
        &self,
        key: &'a [u8],
        block_offset: u64,
    ) -> Result<ParsedInternalKey<'a>> {
        ParsedInternalKey::parse(key).ok_or_else(|| {
            Error::corruption(self.path(), block_offset, "entry key shorter than its tag")
        })
    }
}

/// The order of a table whose properties name `name`: `expected`, the
/// family's, which the name must match, or the built-in order of that name.
///
/// # Errors
///
/// `InvalidArgument` naming `comparator` and the file when the names differ
/// (a table of another family's order, or a family reopened with another
/// comparator) or, without `expected`, when no built-in has the name.
fn table_order(name: &str, expected: Option<&KeyComparator>, path: &Path) -> Result<KeyComparator> {
    match expected {
        Some(order) if order.name() == name => Ok(order.clone()),
        Some(order) => Err(Error::invalid_argument(
            "comparator",
            format!(
                "table {} is sorted by {name}, but its column family's comparator is {}",
                path.display(),
                order.name()
            ),
        )),
        None => KeyComparator::built_in(name).ok_or_else(|| {
            Error::invalid_argument(
                "comparator",
                format!(
                    "table {} is sorted by {name}, which is not built in; \
                     read it through its database, which is given that comparator",
                    path.display()
                ),
            )
        }),
    }
}

/// Decodes every entry of the range-deletion block at `handle`; a bad entry is
/// `Error::Corruption` naming the file, the block's offset and the entry. The
/// entries' order is not relied on: the caller fragments them.
pub(crate) fn read_range_tombstones(
    block: &Block,
    path: &Path,
    handle: BlockHandle,
    order: &KeyComparator,
) -> Result<Vec<RangeTombstone>> {
    let mut out = Vec::new();
    let mut it = block.iter(order.clone());
    it.seek_to_first();
    while it.valid() {
        let t = RangeTombstone::decode_entry(it.key(), it.value(), order).map_err(|r| {
            Error::corruption(
                path,
                handle.offset,
                format!("range-deletion block entry {}: {r}", out.len()),
            )
        })?;
        out.push(t);
        it.next();
    }
    it.status()?;
    Ok(out)
}

/// The entries of a metaindex block, in its (bytewise) order: meta block
/// name and handle. Names this build does not know are kept, so a tail
/// rewritten from them loses none.
pub(super) fn metaindex_entries(block: &Block) -> Result<Vec<(Vec<u8>, BlockHandle)>> {
    let mut out = Vec::new();
    let mut it = block.iter(BytewiseOrder);
    it.seek_to_first();
    while it.valid() {
        let handle = BlockHandle::decode_from(&mut Decoder::new(it.value())).ok_or_else(|| {
            let origin = block.origin();
            Error::corruption(&origin.file, origin.offset, "bad handle in metaindex")
        })?;
        out.push((it.key().to_vec(), handle));
        it.next();
    }
    it.status()?;
    Ok(out)
}

impl BlockFetcher {
    /// A fetcher for the table in `file`, with the footer it ends in.
    pub(super) fn at_last_footer(
        file: Arc<dyn RandomAccessFile>,
        path: Arc<Path>,
    ) -> Result<(BlockFetcher, Footer)> {
        let file_size = file.len();
        let footer_at = file_size.checked_sub(FOOTER_LEN as u64).ok_or_else(|| {
            Error::corruption(
                &path,
                0,
                format!("file of {file_size} bytes is too short for a table"),
            )
        })?;
        let bytes = file.read_at(footer_at, FOOTER_LEN)?;
        let footer = Footer::decode(&bytes).map_err(|r| Error::corruption(&path, footer_at, r))?;
        let checksum = ChecksumType::from_code(footer.checksum_code).ok_or_else(|| {
            Error::corruption(
                &path,
                footer_at,
                format!("unknown checksum type {}", footer.checksum_code),
            )
        })?;
        let fetcher = BlockFetcher {
            file,
            path,
            file_size,
            checksum,
        };
        Ok((fetcher, footer))
    }

    /// Reads and checks the footer at `offset` (the last one, or one a
    /// global seqno tail superseded).
    pub(super) fn footer_at(&self, offset: u64) -> Result<Footer> {
        let bytes = self.file.read_at(offset, FOOTER_LEN)?;
        Footer::decode(&bytes).map_err(|r| Error::corruption(&self.path, offset, r))
    }

    /// The checksum function of the table's blocks.
    pub(super) fn checksum(&self) -> ChecksumType {
        self.checksum
    }

    /// The file's size when it was opened.
    pub(super) fn file_size(&self) -> u64 {
        self.file_size
    }

    /// Reads, checks and decompresses one block.
    pub(super) fn read_block(
        &self,
        handle: BlockHandle,
        verify_checksum: bool,
        prefetch: Option<&mut Prefetcher>,
    ) -> Result<Block> {
        let contents = self.read_block_contents(handle, verify_checksum, prefetch)?;
        Block::new(
            contents,
            BlockOrigin {
                file: self.path.clone(),
                offset: handle.offset,
            },
        )
    }

    /// A block's checked, decompressed bytes, read through `prefetch` when
    /// given (a scan's readahead).
    pub(super) fn read_block_contents(
        &self,
        handle: BlockHandle,
        verify_checksum: bool,
        prefetch: Option<&mut Prefetcher>,
    ) -> Result<Bytes> {
        crate::read_tier::check_storage_read(&self.path)?;
        let corrupt = |reason: String| Error::corruption(&self.path, handle.offset, reason);
        let blocks_end = self.file_size - FOOTER_LEN as u64;
        let in_bounds = handle
            .end_with_trailer()
            .is_some_and(|end| end <= blocks_end);
        let size = usize::try_from(handle.size)
            .ok()
            .filter(|_| in_bounds)
            .ok_or_else(|| {
                corrupt(format!(
                "block handle (offset {}, size {}) runs past the blocks, which end at {blocks_end}",
                handle.offset, handle.size
            ))
            })?;
        let timer = PerfTimer::start();
        let raw = match prefetch {
            Some(p) => p.read(
                &*self.file,
                handle.offset,
                size + BLOCK_TRAILER_LEN,
                blocks_end,
            )?,
            None => self.file.read_at(handle.offset, size + BLOCK_TRAILER_LEN)?,
        };
        perf_context::count(|c| {
            c.block_read_count += 1;
            c.block_read_byte += (size + BLOCK_TRAILER_LEN) as u64;
        });
        let (contents, trailer) = raw.split_at(size);
        let type_byte = trailer[0];
        if verify_checksum {
            let stored = decode_fixed32(&trailer[1..]).unwrap_or(0);
            let actual = self.checksum.checksum_with_byte(contents, type_byte);
            if stored != actual {
                return Err(corrupt(format!(
                    "block checksum mismatch: stored {stored:#010x}, computed {actual:#010x}"
                )));
            }
        }
        let block = match CompressionType::from_code(type_byte) {
            Some(CompressionType::None) => Ok(raw.slice(..size)),
            Some(codec) => codec.decompress(contents).map(Bytes::from).map_err(corrupt),
            None => Err(corrupt(format!("unknown compression type {type_byte}"))),
        };
        timer.stop(|c| &mut c.block_read_time);
        block
    }
}
