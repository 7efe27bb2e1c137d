//! The global seqno tail: how an ingested table records, in its own file,
//! the sequence number the database reads its entries at and the column
//! family that ingested it, so that `repair` finds both when the MANIFEST,
//! which records them too, is lost. `SstFileWriter` cannot know the family
//! (RocksDB's leaves it unknown too), so without the tail a table ingested
//! into one family would come back in another.
//!
//! ```text
//! ingested table
//! +--------------------------+  offset 0
//! | the table as written     |  data, index, properties, metaindex and its
//! | (SstFileWriter)          |  first footer, which the tail supersedes
//! +--------------------------+  the file's size before ingestion
//! | properties     | trailer |  the superseded properties, every entry kept
//! |                          |  (names this build does not know too), plus
//! |                          |  rocksdb.column.family.id = varint32 id,
//! |                          |  rocksdb.column.family.name = its name,
//! |                          |  rocksdb.external_sst_file.global_seqno =
//! |                          |  varint64 sequence number (0 included)
//! | metaindex      | trailer |  the superseded metaindex, its
//! |                          |  "strata.properties" handle pointing at the
//! |                          |  block above, every other entry unchanged
//! | footer (57 bytes)        |  the superseded footer, its metaindex handle
//! |                          |  pointing at the block above
//! +--------------------------+  file size
//! ```
//!
//! Both blocks are stored uncompressed, under the file's checksum type.
//! It is RocksDB's `write_global_seqno` made append-only: no block checksum
//! is broken, and a hard-linked file (`move_files`) takes it as safely as a
//! copy does. A table may carry several tails (an ingestion retried on a
//! hard-linked file whose earlier try failed after its tail); each
//! supersedes the one before, and readers see only the last.
//!
//! The global seqno is a varint64 as every Strata number property;
//! RocksDB's is a fixed64 only so that it can be overwritten in place, which
//! this never does. The family entries are the ones flushes and compactions
//! write, so a reader takes them as it takes any table's.
//!
//! Compatibility: readers of every format version start from the last
//! footer and skip property names they do not know, so the footer's format
//! version is unchanged and builds before the tail read an ingested table
//! as before (at the global seqno its MANIFEST records). Their `verify`
//! does not know the superseded bytes and reports them as a gap. Tails
//! written by builds before the family entries hold the global seqno only.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::compression::CompressionType;
use crate::encoding::put_varint64;
use crate::error::{Error, Result};
use crate::fs::{Fs, RandomAccessFile, ReadFileOptions};
use crate::iter::InternalIterator;
use crate::key::SequenceNumber;
use crate::table::block::BytewiseOrder;
use crate::table::block_builder::BlockBuilder;
use crate::table::format::{block_trailer, BlockHandle, Footer, FOOTER_LEN, PROPERTIES_BLOCK_NAME};
use crate::table::properties::{COLUMN_FAMILY_ID, COLUMN_FAMILY_NAME, GLOBAL_SEQNO_PROPERTY};
use crate::table::reader::{metaindex_entries, BlockFetcher, TableReader};

/// What a footer leads to: the metaindex's entries and the properties
/// block's, as stored.
struct TopLevel {
    metaindex: Vec<(Vec<u8>, BlockHandle)>,
    properties_handle: BlockHandle,
    properties: Vec<(Vec<u8>, Vec<u8>)>,
}

impl TopLevel {
    /// Reads the metaindex `footer` names and the properties block it names,
    /// checksums verified.
    fn read(fetcher: &BlockFetcher, footer: &Footer, path: &Path) -> Result<TopLevel> {
        let metaindex = metaindex_entries(&fetcher.read_block(footer.metaindex, true, None)?)?;
        let properties_handle = metaindex
            .iter()
            .find(|(name, _)| name.as_slice() == PROPERTIES_BLOCK_NAME)
            .map(|&(_, handle)| handle)
            .ok_or_else(|| {
                Error::corruption(
                    path,
                    footer.metaindex.offset,
                    "metaindex lacks the properties block",
                )
            })?;
        let block = fetcher.read_block(properties_handle, true, None)?;
        let mut properties = Vec::new();
        let mut it = block.iter(BytewiseOrder);
        it.seek_to_first();
        while it.valid() {
            properties.push((it.key().to_vec(), it.value().to_vec()));
            it.next();
        }
        it.status()?;
        Ok(TopLevel {
            metaindex,
            properties_handle,
            properties,
        })
    }

    /// The metaindex entries but the properties block's.
    fn other_meta_blocks(&self) -> impl Iterator<Item = &(Vec<u8>, BlockHandle)> {
        self.metaindex
            .iter()
            .filter(|(name, _)| name.as_slice() != PROPERTIES_BLOCK_NAME)
    }

    /// The properties but the ones a tail records (global seqno, family).
    fn properties_but_tails(&self) -> impl Iterator<Item = &(Vec<u8>, Vec<u8>)> {
        self.properties.iter().filter(|(name, _)| {
            !TAIL_PROPERTIES
                .iter()
                .any(|p| name.as_slice() == p.as_bytes())
        })
    }
}

/// The properties a tail sets, over whatever the superseded block said.
const TAIL_PROPERTIES: [&str; 3] = [COLUMN_FAMILY_ID, COLUMN_FAMILY_NAME, GLOBAL_SEQNO_PROPERTY];

/// What ingestion records in a table's tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ingested<'a> {
    /// The sequence number the database reads the table's entries at (0
    /// included: placed below every later write).
    pub global_seqno: SequenceNumber,
    /// The column family that ingested it, by id and name.
    pub column_family_id: u32,
    pub column_family_name: &'a str,
}

impl Ingested<'_> {
    /// Sets the tail's entries in `properties`.
    fn record_in(&self, properties: &mut BTreeMap<Vec<u8>, Vec<u8>>) {
        let mut seq = Vec::new();
        put_varint64(&mut seq, self.global_seqno);
        let mut id = Vec::new();
        put_varint64(&mut id, u64::from(self.column_family_id));
        let name = self.column_family_name.as_bytes().to_vec();
        for (property, value) in TAIL_PROPERTIES.into_iter().zip([id, name, seq]) {
            properties.insert(property.as_bytes().to_vec(), value);
        }
    }
}

/// The tail that records how the table in `file` (named `path` in errors)
/// was ingested, to be appended at its end.
///
/// # Errors
///
/// `Corruption` when the table's footer, metaindex or properties do not
/// read.
pub fn global_seqno_tail(
    file: Arc<dyn RandomAccessFile>,
    path: &Path,
    ingested: &Ingested<'_>,
) -> Result<Vec<u8>> {
    let (fetcher, footer) = BlockFetcher::at_last_footer(file, Arc::from(path))?;
    let top = TopLevel::read(&fetcher, &footer, path)?;
    let checksum = fetcher.checksum();
    let mut tail = Vec::new();
    let start = fetcher.file_size();
    let push_block = |tail: &mut Vec<u8>, contents: &[u8]| {
        let handle = BlockHandle {
            offset: start + tail.len() as u64,
            size: contents.len() as u64,
        };
        tail.extend_from_slice(contents);
        tail.extend_from_slice(&block_trailer(contents, CompressionType::None, checksum));
        handle
    };
    let mut properties: BTreeMap<Vec<u8>, Vec<u8>> = top.properties.into_iter().collect();
    ingested.record_in(&mut properties);
    let properties_handle = push_block(&mut tail, &block_of(&properties));
    let mut metaindex: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for (name, handle) in top.metaindex {
        let handle = match name.as_slice() {
            PROPERTIES_BLOCK_NAME => properties_handle,
            _ => handle,
        };
        let mut encoded = Vec::new();
        handle.encode_to(&mut encoded);
        metaindex.insert(name, encoded);
    }
    let metaindex_handle = push_block(&mut tail, &block_of(&metaindex));
    let footer = Footer {
        metaindex: metaindex_handle,
        ..footer
    };
    tail.extend_from_slice(&footer.encode());
    Ok(tail)
}

/// A block of `entries` in their (bytewise) order, restart interval 1, as
/// the builder writes properties and metaindex blocks.
fn block_of(entries: &BTreeMap<Vec<u8>, Vec<u8>>) -> Vec<u8> {
    let mut b = BlockBuilder::new(1);
    for (name, value) in entries {
        b.add(name, value);
    }
    b.finish().to_vec()
}

/// Appends to the table file `path` the tail recording how it was
/// `ingested`, and syncs it. Returns the file's new size. The file must not be
/// read meanwhile by anything that took its size before (ingestion calls
/// this before any version names the file).
///
/// # Errors
///
/// As [`global_seqno_tail`]; an I/O error from the append or the sync,
/// after which the file may end in part of a tail (and is no table until
/// the part is cut off); `Corruption` when the file grew while the tail was
/// prepared.
pub fn append_global_seqno(fs: &dyn Fs, path: &Path, ingested: &Ingested<'_>) -> Result<u64> {
    let file = fs.open(path, ReadFileOptions::default())?;
    let size = file.len();
    let tail = global_seqno_tail(file, path, ingested)?;
    let mut out = fs.reopen_writable(path)?;
    if out.len() != size {
        return Err(Error::corruption(
            path,
            size,
            format!(
                "the table grew from {size} to {} bytes while its global seqno tail was prepared",
                out.len()
            ),
        ));
    }
    out.append(&tail)?;
    out.sync()?;
    Ok(out.len())
}

impl TableReader {
    /// Checks that the bytes `start..end`, between the blocks the last
    /// footer leads to and its properties block, are exactly what global
    /// seqno tails superseded: one or more (properties, metaindex, footer)
    /// runs, each footer naming the metaindex before it with the last
    /// footer's checksum type, index and format version, each metaindex
    /// naming the properties before it and otherwise the last metaindex's
    /// blocks, and each properties block holding the last one's entries
    /// but the ones a tail sets (global seqno, family). Returns the blocks
    /// checked.
    pub(super) fn verify_superseded_tails(&self, start: u64, end: u64) -> Result<u64> {
        let path = self.path();
        let len = end.saturating_sub(start);
        let gap = |at: u64, why: &str| {
            Error::corruption(
                path,
                at,
                format!("{len} bytes at {start} before the properties block {why}"),
            )
        };
        if self.properties().global_seqno.is_none() {
            return Err(gap(start, "in a table with no global seqno tail"));
        }
        let last = TopLevel::read(&self.fetcher, &self.footer, path)?;
        let mut blocks = 0;
        let mut end = end;
        while end > start {
            let footer_at = end
                .checked_sub(FOOTER_LEN as u64)
                .filter(|&at| at >= start)
                .ok_or_else(|| gap(start, "are too short for a superseded footer"))?;
            let footer = self.fetcher.footer_at(footer_at)?;
            let same_table = footer.checksum_code == self.footer.checksum_code
                && footer.index == self.footer.index
                && footer.format_version == self.footer.format_version;
            if !same_table || footer.metaindex.end_with_trailer() != Some(footer_at) {
                return Err(gap(footer_at, "end in a footer that no tail superseded"));
            }
            let top = TopLevel::read(&self.fetcher, &footer, path)?;
            let props = top.properties_handle;
            let tiled =
                props.end_with_trailer() == Some(footer.metaindex.offset) && props.offset >= start;
            if !tiled
                || !top.other_meta_blocks().eq(last.other_meta_blocks())
                || !top.properties_but_tails().eq(last.properties_but_tails())
            {
                return Err(gap(
                    footer.metaindex.offset,
                    "hold a metaindex or properties that no tail superseded",
                ));
            }
            blocks += 2;
            end = props.offset;
        }
        Ok(blocks)
    }
}
