//! The properties block: facts about a table, stored as a block of
//! `name -> value` entries in bytewise name order.
//!
//! Numbers are varint64 values; names, codecs and keys are raw bytes. Unknown
//! names are ignored on read, so later versions can add properties freely.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::comparator::BYTEWISE_COMPARATOR_NAME;
use crate::encoding::{put_varint64, Decoder};
use crate::iter::InternalIterator;
use crate::table::block::{Block, BytewiseOrder};
use crate::table::block_builder::BlockBuilder;

/// What a table file holds; written by the builder, read by the reader and tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TableProperties {
    /// Number of entries (puts and deletions).
    pub num_entries: u64,
    /// Number of deletion entries.
    pub num_deletions: u64,
    /// Number of entries in the range-deletion block: one per tombstone
    /// fragment and sequence number (0 without the block).
    pub num_range_deletions: u64,
    /// Sum of internal key lengths before prefix compression.
    pub raw_key_size: u64,
    /// Sum of value lengths before compression.
    pub raw_value_size: u64,
    /// Bytes of data blocks on disk, trailers included.
    pub data_size: u64,
    /// Bytes of the index on disk, trailers included: the index block, or
    /// every index partition and the top-level index.
    pub index_size: u64,
    /// Index partitions of a two-level index (RocksDB's
    /// `rocksdb.index.partitions`; 0 for a one-block index).
    pub index_partitions: u64,
    /// Bytes of a two-level index's top level on disk, trailer included
    /// (RocksDB's `rocksdb.top-level.index.size`; 0 for a one-block index).
    pub top_level_index_size: u64,
    /// Bytes of the filter on disk, trailers included (0 without filter): the
    /// filter block, or every filter partition and their top-level index.
    pub filter_size: u64,
    /// Number of data blocks.
    pub num_data_blocks: u64,
    /// Data block codec name ("none", "snappy", "lz4", "zstd").
    pub compression: String,
    /// Checksum function name ("crc32c", "xxh3").
    pub checksum: String,
    /// Bloom filter bits per key x 1000 (0 when there is no filter).
    pub bloom_millibits_per_key: u64,
    /// Smallest user key (empty when the table is empty).
    pub smallest_user_key: Vec<u8>,
    /// Largest user key.
    pub largest_user_key: Vec<u8>,
    /// Smallest sequence number (0 for an empty table).
    pub smallest_seqno: u64,
    /// Largest sequence number.
    pub largest_seqno: u64,
    /// Seconds since the Unix epoch when the table was written.
    pub creation_time: u64,
    /// Table format version.
    pub format_version: u64,
    /// Name of the prefix extractor whose prefixes the bloom filter holds
    /// (RocksDB's `rocksdb.prefix.extractor.name`); empty when it holds none.
    pub prefix_extractor_name: String,
    /// The bloom filter holds prefixes only, not whole keys (RocksDB's
    /// `whole_key_filtering=false`), so point reads must not consult it.
    pub filter_without_whole_keys: bool,
    /// Name of the comparator the keys are sorted by (RocksDB's
    /// `rocksdb.comparator`). Written only for orders other than bytewise,
    /// so a table without it (every table before comparators existed) is
    /// bytewise; decoding fills the name in.
    pub comparator_name: String,
    /// 2 for a file written by `SstFileWriter` for ingestion, whose entries
    /// are all at sequence number 0 (RocksDB's
    /// `rocksdb.external_sst_file.version`; as in its version 2, the global
    /// seqno is in the MANIFEST, and in `global_seqno` once ingested); 0
    /// for every other table.
    pub external_sst_file_version: u64,
    /// The sequence number the database reads an ingested table's entries
    /// at (RocksDB's `rocksdb.external_sst_file.global_seqno`), 0 included
    /// (placed below every later write). Ingestion records it in a tail it
    /// appends to its copy of the file (see `table::seqno_tail`), so that
    /// `repair` finds it without the MANIFEST. `None` in every table not
    /// ingested, and in tables ingested by builds before the property.
    pub global_seqno: Option<u64>,
    /// The column family the table was written for (RocksDB's
    /// `rocksdb.column.family.id`), so `repair` can put it back there;
    /// `None` for tables written before the property existed and for
    /// `SstFileWriter` files, which belong to whichever family ingests them:
    /// ingestion records that family in the global seqno tail (see
    /// `table::seqno_tail`), except in builds before it did.
    pub column_family_id: Option<u32>,
    /// That family's name (RocksDB's `rocksdb.column.family.name`); empty
    /// when `column_family_id` is `None`.
    pub column_family_name: String,
    /// Every write of the table's family in WALs numbered below this is in
    /// this table or in tables written before it: for a flush, the family's
    /// log number once it is installed; for a compaction output, the largest
    /// of its inputs'. 0 when unknown (tables written before the property,
    /// at recovery, or for ingestion). `repair` replays no older WAL into
    /// the family.
    pub log_number: u64,
    /// The largest sequence number of the writes that reached this table
    /// through a WAL, written by compactions: the largest of their inputs'
    /// (an input without it counts its `largest_seqno`, an ingested one
    /// nothing). `None` elsewhere: a flushed table's is its
    /// `largest_seqno`, an ingested table has none. An ingestion's global
    /// seqno is above the writes still in memtables, so a compaction output
    /// holding ingested entries has a `largest_seqno` above writes no table
    /// holds; `repair` takes the WAL records up to this as flushed, not
    /// those up to `largest_seqno`.
    pub largest_logged_seqno: Option<u64>,
}

/// [`TableProperties::external_sst_file_version`] of the files
/// `SstFileWriter` writes.
pub const EXTERNAL_SST_FILE_VERSION: u64 = 2;

// Property names, in bytewise order as a block requires.
/// The name of [`TableProperties::column_family_id`] (RocksDB's).
pub const COLUMN_FAMILY_ID: &str = "rocksdb.column.family.id";
/// The name of [`TableProperties::column_family_name`] (RocksDB's).
pub const COLUMN_FAMILY_NAME: &str = "rocksdb.column.family.name";
const COMPARATOR: &str = "rocksdb.comparator";
/// The name of [`TableProperties::global_seqno`] (RocksDB's).
pub const GLOBAL_SEQNO_PROPERTY: &str = "rocksdb.external_sst_file.global_seqno";
const EXTERNAL_SST_FILE_VERSION_NAME: &str = "rocksdb.external_sst_file.version";
const WHOLE_KEY_FILTERING: &str = "rocksdb.block.based.table.whole.key.filtering";
const INDEX_PARTITIONS: &str = "rocksdb.index.partitions";
const NUM_RANGE_DELETIONS: &str = "rocksdb.num.range-deletions";
const PREFIX_EXTRACTOR: &str = "rocksdb.prefix.extractor.name";
const TOP_LEVEL_INDEX_SIZE: &str = "rocksdb.top-level.index.size";
const CHECKSUM: &str = "strata.checksum";
const COMPRESSION: &str = "strata.compression";
const CREATION_TIME: &str = "strata.creation.time";
const DATA_SIZE: &str = "strata.data.size";
const FILTER_BITS: &str = "strata.filter.millibits.per.key";
const FILTER_SIZE: &str = "strata.filter.size";
const FORMAT_VERSION: &str = "strata.format.version";
const INDEX_SIZE: &str = "strata.index.size";
const LARGEST_KEY: &str = "strata.largest.user.key";
const LARGEST_LOGGED_SEQNO: &str = "strata.largest.logged.seqno";
const LARGEST_SEQNO: &str = "strata.largest.seqno";
const LOG_NUMBER: &str = "strata.log.number";
const NUM_DATA_BLOCKS: &str = "strata.num.data.blocks";
const NUM_DELETIONS: &str = "strata.num.deletions";
const NUM_ENTRIES: &str = "strata.num.entries";
const RAW_KEY_SIZE: &str = "strata.raw.key.size";
const RAW_VALUE_SIZE: &str = "strata.raw.value.size";
const SMALLEST_KEY: &str = "strata.smallest.user.key";
const SMALLEST_SEQNO: &str = "strata.smallest.seqno";

impl TableProperties {
    fn numbers(&self) -> [(&'static str, u64); 13] {
        [
            (CREATION_TIME, self.creation_time),
            (DATA_SIZE, self.data_size),
            (FILTER_BITS, self.bloom_millibits_per_key),
            (FILTER_SIZE, self.filter_size),
            (FORMAT_VERSION, self.format_version),
            (INDEX_SIZE, self.index_size),
            (LARGEST_SEQNO, self.largest_seqno),
            (NUM_DATA_BLOCKS, self.num_data_blocks),
            (NUM_DELETIONS, self.num_deletions),
            (NUM_ENTRIES, self.num_entries),
            (RAW_KEY_SIZE, self.raw_key_size),
            (RAW_VALUE_SIZE, self.raw_value_size),
            (SMALLEST_SEQNO, self.smallest_seqno),
        ]
    }

    /// The largest sequence number of the writes that reached the table
    /// through a WAL (see `largest_logged_seqno`): 0 for a table written
    /// for ingestion.
    pub fn logged_through(&self) -> u64 {
        match (self.largest_logged_seqno, self.external_sst_file_version) {
            (Some(seq), _) => seq,
            (None, 0) => self.largest_seqno,
            (None, _) => 0,
        }
    }

    /// Encodes the properties as a block.
    pub fn encode(&self) -> Vec<u8> {
        let mut entries: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
        for (name, v) in self.numbers() {
            entries.insert(name, varint(v));
        }
        // Only tables with a range-deletion block carry the count, so tables
        // without one stay byte for byte what earlier builds wrote.
        if self.num_range_deletions > 0 {
            entries.insert(NUM_RANGE_DELETIONS, varint(self.num_range_deletions));
        }
        // Likewise only tables with a two-level index (whose top level is
        // never empty on disk: a block has at least its restart count).
        if self.top_level_index_size > 0 {
            entries.insert(INDEX_PARTITIONS, varint(self.index_partitions));
            entries.insert(TOP_LEVEL_INDEX_SIZE, varint(self.top_level_index_size));
        }
        // Likewise, only tables with a prefix filter name their extractor,
        // and only prefix-only filters say so ("0", RocksDB's spelling).
        if !self.prefix_extractor_name.is_empty() {
            entries.insert(
                PREFIX_EXTRACTOR,
                self.prefix_extractor_name.clone().into_bytes(),
            );
        }
        if self.filter_without_whole_keys {
            entries.insert(WHOLE_KEY_FILTERING, b"0".to_vec());
        }
        // And only tables in another order than bytewise name it, so
        // bytewise tables stay byte for byte what they were.
        if !self.comparator_name.is_empty() && self.comparator_name != BYTEWISE_COMPARATOR_NAME {
            entries.insert(COMPARATOR, self.comparator_name.clone().into_bytes());
        }
        // And only tables the engine writes for a family name it.
        if let Some(id) = self.column_family_id {
            entries.insert(COLUMN_FAMILY_ID, varint(u64::from(id)));
            entries.insert(
                COLUMN_FAMILY_NAME,
                self.column_family_name.clone().into_bytes(),
            );
        }
        if self.log_number > 0 {
            entries.insert(LOG_NUMBER, varint(self.log_number));
        }
        // And only files written for ingestion say so.
        if self.external_sst_file_version > 0 {
            entries.insert(
                EXTERNAL_SST_FILE_VERSION_NAME,
                varint(self.external_sst_file_version),
            );
        }
        if let Some(seq) = self.global_seqno {
            entries.insert(GLOBAL_SEQNO_PROPERTY, varint(seq));
        }
        if let Some(seq) = self.largest_logged_seqno {
            entries.insert(LARGEST_LOGGED_SEQNO, varint(seq));
        }
        entries.insert(CHECKSUM, self.checksum.clone().into_bytes());
        entries.insert(COMPRESSION, self.compression.clone().into_bytes());
        entries.insert(LARGEST_KEY, self.largest_user_key.clone());
        entries.insert(SMALLEST_KEY, self.smallest_user_key.clone());
        let mut b = BlockBuilder::new(1);
        for (name, value) in &entries {
            b.add(name.as_bytes(), value);
        }
        b.finish().to_vec()
    }

    /// Decodes a properties block; the error is a reason for `Error::Corruption`.
    pub fn decode(block: &Block) -> Result<TableProperties, String> {
        let mut p = TableProperties::default();
        let mut it = block.iter(BytewiseOrder);
        it.seek_to_first();
        while it.valid() {
            let (name, value) = (it.key(), it.value());
            let text = || String::from_utf8(value.to_vec()).map_err(|_| "non-UTF-8 property");
            let number = || {
                let mut d = Decoder::new(value);
                d.varint64().filter(|_| d.is_empty()).ok_or_else(|| {
                    format!("property {} is not a number", String::from_utf8_lossy(name))
                })
            };
            match std::str::from_utf8(name).unwrap_or("") {
                CHECKSUM => p.checksum = text()?,
                COMPRESSION => p.compression = text()?,
                LARGEST_KEY => p.largest_user_key = value.to_vec(),
                SMALLEST_KEY => p.smallest_user_key = value.to_vec(),
                CREATION_TIME => p.creation_time = number()?,
                DATA_SIZE => p.data_size = number()?,
                FILTER_BITS => p.bloom_millibits_per_key = number()?,
                FILTER_SIZE => p.filter_size = number()?,
                FORMAT_VERSION => p.format_version = number()?,
                INDEX_SIZE => p.index_size = number()?,
                INDEX_PARTITIONS => p.index_partitions = number()?,
                TOP_LEVEL_INDEX_SIZE => p.top_level_index_size = number()?,
                LARGEST_SEQNO => p.largest_seqno = number()?,
                LARGEST_LOGGED_SEQNO => p.largest_logged_seqno = Some(number()?),
                LOG_NUMBER => p.log_number = number()?,
                NUM_DATA_BLOCKS => p.num_data_blocks = number()?,
                NUM_DELETIONS => p.num_deletions = number()?,
                NUM_ENTRIES => p.num_entries = number()?,
                NUM_RANGE_DELETIONS => p.num_range_deletions = number()?,
                RAW_KEY_SIZE => p.raw_key_size = number()?,
                RAW_VALUE_SIZE => p.raw_value_size = number()?,
                SMALLEST_SEQNO => p.smallest_seqno = number()?,
                PREFIX_EXTRACTOR => p.prefix_extractor_name = text()?,
                COMPARATOR => p.comparator_name = text()?,
                COLUMN_FAMILY_ID => {
                    let id = number()?;
                    let id = u32::try_from(id)
                        .map_err(|_| format!("column family id {id} is not a u32"))?;
                    p.column_family_id = Some(id);
                }
                COLUMN_FAMILY_NAME => p.column_family_name = text()?,
                EXTERNAL_SST_FILE_VERSION_NAME => p.external_sst_file_version = number()?,
                GLOBAL_SEQNO_PROPERTY => p.global_seqno = Some(number()?),
                WHOLE_KEY_FILTERING => p.filter_without_whole_keys = value == b"0",
                _ => {}
            }
            it.next();
        }
        it.status().map_err(|e| e.to_string())?;
        if p.comparator_name.is_empty() {
            p.comparator_name = BYTEWISE_COMPARATOR_NAME.to_owned();
        }
        Ok(p)
    }

    /// `name: value` lines, one per property, as `strata sst dump` prints them.
    /// Keys are shown with `key_fmt` (plain or hex).
    pub fn to_lines(&self, key_fmt: impl Fn(&[u8]) -> String) -> String {
        let mut out = String::new();
        let mut line = |name: &str, value: String| {
            let _ = writeln!(out, "{name}: {value}");
        };
        line("# entries", self.num_entries.to_string());
        line("# deletions", self.num_deletions.to_string());
        line("# range deletions", self.num_range_deletions.to_string());
        line("# data blocks", self.num_data_blocks.to_string());
        line("raw key size", self.raw_key_size.to_string());
        line("raw value size", self.raw_value_size.to_string());
        line("data block size", self.data_size.to_string());
        line("index block size", self.index_size.to_string());
        if self.top_level_index_size > 0 {
            line("index partitions", self.index_partitions.to_string());
            line(
                "top-level index size",
                self.top_level_index_size.to_string(),
            );
        }
        line("filter block size", self.filter_size.to_string());
        line(
            "filter bits per key",
            format!("{}", self.bloom_millibits_per_key as f64 / 1000.0),
        );
        line("compression", self.compression.clone());
        line("checksum", self.checksum.clone());
        line("smallest user key", key_fmt(&self.smallest_user_key));
        line("largest user key", key_fmt(&self.largest_user_key));
        line("smallest seqno", self.smallest_seqno.to_string());
        line("largest seqno", self.largest_seqno.to_string());
        line("creation time", self.creation_time.to_string());
        line("format version", self.format_version.to_string());
        line("comparator", self.comparator_name.clone());
        if let Some(id) = self.column_family_id {
            line(
                "column family",
                format!("{id} ({})", self.column_family_name),
            );
        }
        if self.log_number > 0 {
            line("log number", self.log_number.to_string());
        }
        if let Some(seq) = self.largest_logged_seqno {
            line("largest logged seqno", seq.to_string());
        }
        if self.external_sst_file_version > 0 {
            line(
                "external sst file version",
                self.external_sst_file_version.to_string(),
            );
        }
        if let Some(seq) = self.global_seqno {
            line("global seqno", seq.to_string());
        }
        if !self.prefix_extractor_name.is_empty() {
            line("prefix extractor", self.prefix_extractor_name.clone());
            line(
                "whole key filtering",
                (!self.filter_without_whole_keys).to_string(),
            );
        }
        out
    }
}

fn varint(v: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    put_varint64(&mut buf, v);
    buf
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::block::BlockOrigin;
    use std::path::Path;
    use std::sync::Arc;

    #[test]
    fn roundtrip() {
        let p = TableProperties {
            num_entries: 10,
            num_deletions: 2,
            num_range_deletions: 3,
            raw_key_size: 300,
            raw_value_size: 4000,
            data_size: 5000,
            index_size: 60,
            index_partitions: 3,
            top_level_index_size: 20,
            filter_size: 72,
            num_data_blocks: 2,
            compression: "lz4".into(),
            checksum: "xxh3".into(),
            bloom_millibits_per_key: 10_000,
            smallest_user_key: b"".to_vec(),
            largest_user_key: b"\xffzz".to_vec(),
            smallest_seqno: 1,
            largest_seqno: 99,
            creation_time: 1_700_000_000,
            format_version: 1,
            prefix_extractor_name: "rocksdb.FixedPrefix.4".into(),
            filter_without_whole_keys: true,
            comparator_name: "rocksdb.ReverseBytewiseComparator".into(),
            external_sst_file_version: EXTERNAL_SST_FILE_VERSION,
            global_seqno: Some(0),
            column_family_id: Some(3),
            column_family_name: "users".into(),
            log_number: 12,
            largest_logged_seqno: Some(90),
        };
        let origin = BlockOrigin {
            file: Arc::from(Path::new("t.sst")),
            offset: 0,
        };
        let block = Block::new(bytes::Bytes::from(p.encode()), origin).unwrap();
        assert_eq!(TableProperties::decode(&block).unwrap(), p);
        let lines = p.to_lines(|k| String::from_utf8_lossy(k).into_owned());
        assert!(lines.contains("# entries: 10\n"));
        assert!(lines.contains("comparator: rocksdb.ReverseBytewiseComparator\n"));
        assert!(lines.contains("external sst file version: 2\n"));
        assert!(lines.contains("global seqno: 0\n"));
        assert!(lines.contains("column family: 3 (users)\n"));
        assert!(lines.contains("log number: 12\n"));
        assert!(lines.contains("largest logged seqno: 90\n"));
        assert!(
            lines.contains("prefix extractor: rocksdb.FixedPrefix.4\nwhole key filtering: false\n")
        );
    }

    /// Names the decoder does not know are skipped, as they were before the
    /// global seqno existed: so a build that predates a property reads a
    /// table carrying it. Shown on an unknown name in the middle of the
    /// block (where `rocksdb.external_sst_file.global_seqno` sits).
    #[test]
    fn unknown_property_names_are_skipped() {
        let p = TableProperties {
            num_entries: 4,
            external_sst_file_version: EXTERNAL_SST_FILE_VERSION,
            ..TableProperties::default()
        };
        let mut entries: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        let origin = BlockOrigin {
            file: Arc::from(Path::new("t.sst")),
            offset: 0,
        };
        let block = Block::new(bytes::Bytes::from(p.encode()), origin.clone()).unwrap();
        let mut it = block.iter(BytewiseOrder);
        it.seek_to_first();
        while it.valid() {
            entries.insert(it.key().to_vec(), it.value().to_vec());
            it.next();
        }
        entries.insert(
            b"rocksdb.external_sst_file.zz".to_vec(),
            b"\xff\xff".to_vec(),
        );
        let mut b = BlockBuilder::new(1);
        for (name, value) in &entries {
            b.add(name, value);
        }
        let block = Block::new(bytes::Bytes::from(b.finish().to_vec()), origin).unwrap();
        let mut expected = p;
        expected.comparator_name = BYTEWISE_COMPARATOR_NAME.to_owned();
        assert_eq!(TableProperties::decode(&block).unwrap(), expected);
    }

    /// The bytes of the properties `repair` reads: each is a whole entry of
    /// the block (restart interval 1, so no shared prefix), name then value.
    #[test]
    fn golden_family_and_log_number_entries() {
        let p = TableProperties {
            column_family_id: Some(3),
            column_family_name: "users".into(),
            log_number: 12,
            largest_logged_seqno: Some(7),
            ..TableProperties::default()
        };
        let block = p.encode();
        let entry = |name: &str, value: &[u8]| {
            let mut e = vec![0, name.len() as u8, value.len() as u8];
            e.extend_from_slice(name.as_bytes());
            e.extend_from_slice(value);
            e
        };
        let has = |e: Vec<u8>| block.windows(e.len()).any(|w| w == e.as_slice());
        assert!(has(entry("rocksdb.column.family.id", &[3])));
        assert!(has(entry("rocksdb.column.family.name", b"users")));
        assert!(has(entry("strata.log.number", &[12])));
        assert!(has(entry("strata.largest.logged.seqno", &[7])));
        // Absent when unknown: tables without them stay as they were.
        let plain = TableProperties::default().encode();
        for name in [
            "rocksdb.column.family",
            "strata.log.number",
            "strata.largest.logged",
        ] {
            assert!(!plain.windows(name.len()).any(|w| w == name.as_bytes()));
        }
    }
}
