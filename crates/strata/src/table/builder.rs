//! Writes a table file from internal keys added in sorted order, and range
//! tombstones added in any order.

use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::blob::BlobRef;
use crate::compression::CompressionType;
use crate::crash_point::crash_point;
use crate::error::{Error, Result};
use crate::fs::WritableFile;
use crate::key::SequenceNumber;
use crate::key::{ParsedInternalKey, ValueType};
use crate::key_order::KeyComparator;
use crate::options::TableOptions;
use crate::range_del::{range_end_sentinel, FragmentedRangeTombstones, RangeTombstone};
use crate::table::block_builder::BlockBuilder;
use crate::table::filter::BloomBuilder;
use crate::table::format::{
    block_trailer, BlockHandle, Footer, FILTER_BLOCK_NAME, FORMAT_VERSION_PLAIN,
    FORMAT_VERSION_RANGE_DEL, FORMAT_VERSION_TWO_LEVEL_INDEX, PARTITIONED_FILTER_BLOCK_NAME,
    PROPERTIES_BLOCK_NAME, RANGE_DEL_BLOCK_NAME,
};
use crate::table::partitioner::Partitioner;
use crate::table::properties::TableProperties;

/// What [`TableBuilder::finish`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuiltTable {
    /// Size of the file in bytes.
    pub file_size: u64,
    /// The table's properties.
    pub properties: TableProperties,
    /// Smallest internal key of the table's range: its first point entry, or
    /// its first range tombstone's `(start, seq, RangeDeletion)`, whichever
    /// sorts first. Empty when the table holds neither.
    pub smallest: Vec<u8>,
    /// Largest internal key of the table's range: its last point entry, or
    /// [`range_end_sentinel`] of its last tombstone's end, whichever sorts
    /// last. A sentinel excludes its own user key. Empty when the table holds
    /// neither.
    pub largest: Vec<u8>,
    /// The blob files the table's `BlobIndex` entries point into, strictly
    /// increasing.
    pub blob_files: Vec<u64>,
}

/// Builds one table file. Call [`add`](Self::add) with strictly increasing
/// internal keys and [`add_range_tombstone`](Self::add_range_tombstone) in any
/// order, then [`finish`](Self::finish), which writes the meta blocks and the
/// footer and syncs the file.
#[derive(Debug)]
pub struct TableBuilder {
    file: Box<dyn WritableFile>,
    options: TableOptions,
    data_block: BlockBuilder,
    /// The index block, or the current index partition.
    index_block: BlockBuilder,
    /// The bloom filter, or the current filter partition.
    filter: Option<BloomBuilder>,
    /// What goes into `filter` for each user key.
    filter_keys: FilterKeys,
    /// Set for a two-level index: the finished partitions.
    partitioner: Option<Partitioner>,
    /// Handle of the last flushed data block, whose index entry waits for the next
    /// key so the separator can be shortened.
    pending_index: Option<BlockHandle>,
    first_key: Vec<u8>,
    last_key: Vec<u8>,
    /// Kept until `finish`, which fragments them: they may come in any order.
    range_tombstones: Vec<RangeTombstone>,
    offset: u64,
    props: TableProperties,
    compressed: Vec<u8>,
    creation_time: Option<u64>,
    /// The order keys must come in (the family's), which separators keep.
    order: KeyComparator,
    /// The blob files the `BlobIndex` entries added so far point into.
    blob_files: BTreeSet<u64>,
}

impl TableBuilder {
    /// Starts a table in `file`, which must be newly created and empty.
    pub fn new(file: Box<dyn WritableFile>, options: TableOptions) -> Result<Self> {
        options.validate()?;
        // Without whole keys or prefixes a filter would hold nothing.
        let filter = (options.bloom_bits_per_key > 0.0
            && (options.whole_key_filtering || options.prefix_extractor.is_some()))
        .then(|| BloomBuilder::new(options.bloom_bits_per_key));
        let with_filter = |name: String| {
            if filter.is_some() {
                name
            } else {
                String::new()
            }
        };
        let props = TableProperties {
            prefix_extractor_name: with_filter(
                options
                    .prefix_extractor
                    .map(|e| e.name())
                    .unwrap_or_default(),
            ),
            filter_without_whole_keys: filter.is_some() && !options.whole_key_filtering,
            compression: options.compression.name().to_string(),
            checksum: options.checksum.name().to_string(),
            bloom_millibits_per_key: (options.bloom_bits_per_key * 1000.0).round() as u64,
            smallest_seqno: u64::MAX,
            format_version: u64::from(FORMAT_VERSION_PLAIN),
            comparator_name: KeyComparator::Bytewise.name().to_owned(),
            ..TableProperties::default()
        };
        Ok(TableBuilder {
            data_block: BlockBuilder::new(options.block_restart_interval),
            index_block: BlockBuilder::new(1),
            partitioner: Partitioner::new(&options),
            file,
            options,
            filter,
            filter_keys: FilterKeys::default(),
            pending_index: None,
            first_key: Vec::new(),
            last_key: Vec::new(),
            range_tombstones: Vec::new(),
            offset: 0,
            props,
            compressed: Vec::new(),
            creation_time: None,
            order: KeyComparator::Bytewise,
            blob_files: BTreeSet::new(),
        })
    }

    /// Builds a table of keys in `order` (bytewise unless told), which the
    /// table's properties record; call before adding anything.
    pub fn with_order(mut self, order: KeyComparator) -> Self {
        self.props.comparator_name = order.name().to_owned();
        self.order = order;
        self
    }

    /// Records the column family the table is written for and its log
    /// number, so `repair` can tell whose it is, and which WALs it covers,
    /// without a MANIFEST.
    pub(crate) fn owned_by(mut self, owner: crate::flush::TableOwner<'_>) -> Self {
        self.props.column_family_id = Some(owner.family_id);
        self.props.column_family_name = owner.family_name.to_owned();
        self.props.log_number = owner.log_number;
        self
    }

    /// Records the largest sequence number among its entries that came
    /// through a WAL (`TableProperties::largest_logged_seqno`), for a table
    /// whose entries did not all come that way: a compaction output.
    pub(crate) fn logged_through(mut self, seq: u64) -> Self {
        self.props.largest_logged_seqno = Some(seq);
        self
    }

    /// Marks the table as written for ingestion (`SstFileWriter`): every
    /// entry at sequence number 0, read at the global seqno the database
    /// gives it.
    pub(crate) fn for_ingestion(mut self) -> Self {
        self.props.external_sst_file_version = crate::table::properties::EXTERNAL_SST_FILE_VERSION;
        self
    }

    /// Records `secs` (since the Unix epoch) as the creation time instead of the
    /// clock, for reproducible files.
    pub fn with_creation_time(mut self, secs: u64) -> Self {
        self.creation_time = Some(secs);
        self
    }

    /// Appends a point entry. `key` must be a valid internal key greater than
    /// the last, of type put, delete, merge or blob index (whose value must
    /// be a blob reference); range tombstones go to
    /// [`add_range_tombstone`](Self::add_range_tombstone).
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let parsed = ParsedInternalKey::parse(key)
            .filter(|p| {
                matches!(
                    p.value_type(),
                    Some(
                        ValueType::Put
                            | ValueType::Delete
                            | ValueType::Merge
                            | ValueType::BlobIndex
                    )
                )
            })
            .ok_or_else(|| {
                Error::invalid_argument(
                    "key",
                    "not a valid internal key of a put, a delete, a merge or a blob index",
                )
            })?;
        if parsed.value_type() == Some(ValueType::BlobIndex) {
            let reference = BlobRef::decode(value)
                .map_err(|reason| Error::invalid_argument("value", reason))?;
            self.blob_files.insert(reference.file_number);
        }
        let first = self.props.num_entries == 0;
        if !first && self.order.compare_internal(&self.last_key, key) != Ordering::Less {
            return Err(Error::invalid_argument(
                "key",
                "keys must be added in strictly increasing internal-key order",
            ));
        }
        if let Some(handle) = self.pending_index.take() {
            let separator = self.order.shortest_separator(&self.last_key, key);
            self.add_index_entry(&separator, handle);
        }
        let new_user_key = first || crate::key::user_key(&self.last_key) != parsed.user_key;
        if let Some(filter) = self.filter.as_mut() {
            // A new filter partition starts with the key its first block
            // starts with, even when that key's versions began in the
            // previous partition.
            if new_user_key || filter.is_empty() {
                self.filter_keys.add(filter, &self.options, parsed.user_key);
            }
        }
        if first {
            self.props.smallest_user_key = parsed.user_key.to_vec();
            self.first_key = key.to_vec();
        }
        if new_user_key {
            self.props.largest_user_key.clear();
            self.props
                .largest_user_key
                .extend_from_slice(parsed.user_key);
        }
        self.props.num_entries += 1;
        if parsed.value_type() == Some(ValueType::Delete) {
            self.props.num_deletions += 1;
        }
        self.props.raw_key_size += key.len() as u64;
        self.props.raw_value_size += value.len() as u64;
        self.props.smallest_seqno = self.props.smallest_seqno.min(parsed.seq);
        self.props.largest_seqno = self.props.largest_seqno.max(parsed.seq);

        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.data_block.add(key, value);
        if self.data_block.estimated_size() >= self.options.block_size {
            self.flush_data_block()?;
        }
        Ok(())
    }

    /// Adds the range tombstone `[start, end)@seq`, in any order relative to
    /// other tombstones and to point entries. An empty range is
    /// `Error::InvalidArgument` naming `delete_range`.
    ///
    /// Tombstones are held in memory until [`finish`](Self::finish), which
    /// stores them fragmented: block entries must be in strictly increasing
    /// internal-key order, which overlapping tombstones added in any order
    /// (two may even share start and sequence number after clipping) do not
    /// give, while fragments sorted by start, newest first, do; and a reader
    /// rebuilds the fragmented list from them in one pass.
    pub fn add_range_tombstone(
        &mut self,
        start: &[u8],
        end: &[u8],
        seq: SequenceNumber,
    ) -> Result<()> {
        let t = RangeTombstone::new(start.to_vec(), end.to_vec(), seq, &self.order)?;
        self.range_tombstones.push(t);
        Ok(())
    }

    /// Point entries added so far.
    pub fn num_entries(&self) -> u64 {
        self.props.num_entries
    }

    /// Bytes written so far plus the open data block: the size the file would
    /// have (range tombstones, written at `finish`, are not counted).
    pub fn estimated_file_size(&self) -> u64 {
        self.offset + self.data_block.estimated_size() as u64
    }

    fn add_index_entry(&mut self, separator: &[u8], handle: BlockHandle) {
        let mut value = Vec::with_capacity(20);
        handle.encode_to(&mut value);
        self.index_block.add(separator, &value);
        if let Some(p) = self.partitioner.as_mut() {
            p.after_index_entry(separator, &mut self.index_block, self.filter.as_mut());
        }
    }

    fn flush_data_block(&mut self) -> Result<()> {
        if self.data_block.is_empty() {
            return Ok(());
        }
        let compression = self.options.compression;
        let raw = self.data_block.finish();
        let mut stored_type = CompressionType::None;
        if compression != CompressionType::None {
            self.compressed.clear();
            compression.compress_into(raw, &mut self.compressed)?;
            // Keep the block raw unless compression saves at least 12.5%.
            if self.compressed.len() < raw.len() - raw.len() / 8 {
                stored_type = compression;
            }
        }
        let contents = if stored_type == CompressionType::None {
            raw
        } else {
            &self.compressed[..]
        };
        let handle = write_block(
            &mut *self.file,
            &mut self.offset,
            contents,
            stored_type,
            self.options.checksum,
        )?;
        self.props.data_size += self.offset - handle.offset;
        self.props.num_data_blocks += 1;
        self.data_block.reset();
        self.pending_index = Some(handle);
        Ok(())
    }

    fn write_meta_block(&mut self, contents: &[u8]) -> Result<BlockHandle> {
        write_block(
            &mut *self.file,
            &mut self.offset,
            contents,
            CompressionType::None,
            self.options.checksum,
        )
    }

    /// Writes the range-deletion block, if there are tombstones, recording
    /// them in the properties and returning its handle and the tombstones.
    fn write_range_del_block(
        &mut self,
    ) -> Result<Option<(BlockHandle, FragmentedRangeTombstones)>> {
        if self.range_tombstones.is_empty() {
            return Ok(None);
        }
        let fragmented =
            FragmentedRangeTombstones::new(std::mem::take(&mut self.range_tombstones), &self.order);
        let mut block = BlockBuilder::new(1);
        // `tombstones` yields internal-key order: start ascending, then newest
        // first, with no repeats.
        for t in fragmented.tombstones() {
            block.add(&t.internal_start_key(), t.end());
        }
        let handle = self.write_meta_block(block.finish())?;
        self.props.num_range_deletions = fragmented.num_tombstones() as u64;
        if let Some((newest, oldest)) = fragmented.seq_range() {
            self.props.smallest_seqno = self.props.smallest_seqno.min(oldest);
            self.props.largest_seqno = self.props.largest_seqno.max(newest);
        }
        self.props.format_version = u64::from(FORMAT_VERSION_RANGE_DEL);
        Ok(Some((handle, fragmented)))
    }

    /// The table's key range over point entries and tombstones.
    fn key_range(&self, tombstones: Option<&FragmentedRangeTombstones>) -> (Vec<u8>, Vec<u8>) {
        let mut smallest = self.first_key.clone();
        let mut largest = self.last_key.clone();
        let first = tombstones.and_then(|t| t.tombstones().next());
        let end = tombstones.and_then(|t| t.largest_end());
        if let (Some(first), Some(end)) = (first, end) {
            let start = first.internal_start_key();
            if smallest.is_empty()
                || self.order.compare_internal(&start, &smallest) == Ordering::Less
            {
                smallest = start;
            }
            let sentinel = range_end_sentinel(end);
            if largest.is_empty()
                || self.order.compare_internal(&sentinel, &largest) == Ordering::Greater
            {
                largest = sentinel;
            }
        }
        (smallest, largest)
    }

    /// Writes the remaining blocks and the footer, then syncs the file.
    /// Returns the file size, the table's properties and its key range.
    pub fn finish(mut self) -> Result<BuiltTable> {
        self.flush_data_block()?;
        if let Some(handle) = self.pending_index.take() {
            let separator = self.order.short_successor(&self.last_key);
            self.add_index_entry(&separator, handle);
            if let Some(p) = self.partitioner.as_mut() {
                p.finish(&separator, &mut self.index_block, self.filter.as_mut());
            }
        }
        let mut metaindex = Vec::new();
        let mut partitioner = self.partitioner.take();
        if let Some(p) = partitioner.as_mut().filter(|p| p.partitions_filter()) {
            let start = self.offset;
            if let Some(handle) = p.write_filter(&mut |b| self.write_meta_block(b))? {
                self.props.filter_size = self.offset - start;
                metaindex.push((PARTITIONED_FILTER_BLOCK_NAME, handle));
            }
        } else if let Some(filter) = self.filter.take().filter(|f| !f.is_empty()) {
            let start = self.offset;
            let handle = self.write_meta_block(&filter.finish())?;
            self.props.filter_size = self.offset - start;
            metaindex.push((FILTER_BLOCK_NAME, handle));
        }
        let range_del = self.write_range_del_block()?;
        if let Some((handle, _)) = &range_del {
            metaindex.push((RANGE_DEL_BLOCK_NAME, *handle));
        }
        let index_start = self.offset;
        let index_handle = match partitioner.as_mut() {
            Some(p) => {
                let written = p.write_index(&mut |b| self.write_meta_block(b))?;
                self.props.index_partitions = written.partitions;
                self.props.top_level_index_size = self.offset - written.top_level.offset;
                self.props.format_version = u64::from(FORMAT_VERSION_TWO_LEVEL_INDEX);
                written.top_level
            }
            None => {
                let index_contents = self.index_block.finish().to_vec();
                self.write_meta_block(&index_contents)?
            }
        };
        self.props.index_size = self.offset - index_start;

        if self.props.num_entries == 0 && range_del.is_none() {
            self.props.smallest_seqno = 0;
        }
        self.props.creation_time = self.creation_time.unwrap_or_else(|| {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0)
        });
        let props_handle = self.write_meta_block(&self.props.encode())?;
        metaindex.push((PROPERTIES_BLOCK_NAME, props_handle));
        metaindex.sort_by_key(|(name, _)| *name);

        let mut mb = BlockBuilder::new(1);
        for (name, handle) in &metaindex {
            let mut v = Vec::new();
            handle.encode_to(&mut v);
            mb.add(name, &v);
        }
        let metaindex_handle = self.write_meta_block(mb.finish())?;
        let footer = Footer {
            checksum_code: self.options.checksum.code(),
            metaindex: metaindex_handle,
            index: index_handle,
            format_version: if partitioner.is_some() {
                FORMAT_VERSION_TWO_LEVEL_INDEX
            } else if range_del.is_some() {
                FORMAT_VERSION_RANGE_DEL
            } else {
                FORMAT_VERSION_PLAIN
            },
        };
        let footer = footer.encode();
        crash_point!("table.before_footer");
        self.file.append(&footer)?;
        self.offset += footer.len() as u64;
        crash_point!("table.before_sync");
        self.file.sync()?;
        crash_point!("table.after_sync");
        let (smallest, largest) = self.key_range(range_del.as_ref().map(|(_, t)| t));
        Ok(BuiltTable {
            file_size: self.offset,
            properties: self.props,
            smallest,
            largest,
            blob_files: self.blob_files.into_iter().collect(),
        })
    }
}

/// Adds each new user key's filter entries: the key itself (with
/// `whole_key_filtering`) and its prefix, once per run of keys sharing it.
#[derive(Debug, Default)]
struct FilterKeys {
    last_prefix: Option<Vec<u8>>,
}

impl FilterKeys {
    /// Adds what `user_key` contributes. A new filter partition (an empty
    /// builder) gets the prefix again even within a run: a prefix query
    /// asks only the partition its seek target selects.
    fn add(&mut self, filter: &mut BloomBuilder, options: &TableOptions, user_key: &[u8]) {
        if filter.is_empty() {
            self.last_prefix = None;
        }
        if options.whole_key_filtering {
            filter.add_key(user_key);
        }
        let Some(prefix) = options.prefix_extractor.and_then(|e| e.prefix(user_key)) else {
            return;
        };
        // Keys arrive sorted and a prefix's keys are contiguous, so one
        // entry per run adds each prefix once.
        if self.last_prefix.as_deref() != Some(prefix) {
            filter.add_key(prefix);
            let last = self.last_prefix.get_or_insert_with(Vec::new);
            last.clear();
            last.extend_from_slice(prefix);
        }
    }
}

/// Appends `contents` and its trailer at `*offset`, advancing it.
fn write_block(
    file: &mut dyn WritableFile,
    offset: &mut u64,
    contents: &[u8],
    compression: CompressionType,
    checksum: crate::checksum::ChecksumType,
) -> Result<BlockHandle> {
    let handle = BlockHandle {
        offset: *offset,
        size: contents.len() as u64,
    };
    let trailer = block_trailer(contents, compression, checksum);
    file.append(contents)?;
    file.append(&trailer)?;
    *offset += contents.len() as u64 + trailer.len() as u64;
    Ok(handle)
}
