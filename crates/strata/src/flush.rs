//! Flush: turns a memtable into an L0 table file: its point entries, and its
//! range tombstones in the table's range-deletion block (a memtable holding
//! only tombstones still makes a table, whose key range they span). With
//! blob files on, values of at least `min_blob_size` go to blob files and
//! the table holds references to them.

use std::path::Path;
use std::time::Instant;

use crate::blob::{remove_blob_files, BlobFileBuilder};
use crate::error::Result;
use crate::filename::table_file_name;
use crate::fs::Fs;
use crate::iter::InternalIterator;
use crate::key::{append_internal_key, ParsedInternalKey, ValueType};
use crate::memtable::MemTable;
use crate::options::TableOptions;
use crate::table::TableBuilder;
use crate::version::{BlobFileAddition, FileMetaData};

/// What a flush wrote.
#[derive(Debug, Clone)]
pub struct FlushOutput {
    /// The new table, or `None` if the memtable was empty.
    pub file: Option<FileMetaData>,
    /// The blob files the table's references point into.
    pub blob_files: Vec<BlobFileAddition>,
    /// Bytes written to blob files.
    pub blob_bytes: u64,
    /// Wall time spent.
    pub micros: u128,
}

/// The column family a table is written for: its id and name.
pub type FamilyTag<'a> = (u32, &'a str);

/// Who a table is written for, recorded in its properties for `repair`.
#[derive(Debug, Clone, Copy)]
pub struct TableOwner<'a> {
    pub family_id: u32,
    pub family_name: &'a str,
    /// See `TableProperties::log_number`.
    pub log_number: u64,
}

/// Writes every entry and range tombstone of `mem` to table `number` in
/// `dir`, a table of `owner` (separating values into blob files through `blobs`, if given) and
/// syncs the files and the directory, so they are durable before any
/// MANIFEST edit names them. Partial files left by an error are removed.
pub fn write_level0_table(
    fs: &dyn Fs,
    dir: &Path,
    number: u64,
    owner: TableOwner<'_>,
    mem: &MemTable,
    options: &TableOptions,
    mut blobs: Option<BlobFileBuilder<'_>>,
) -> Result<FlushOutput> {
    let start = Instant::now();
    if mem.is_empty() {
        return Ok(FlushOutput {
            file: None,
            blob_files: Vec::new(),
            blob_bytes: 0,
            micros: start.elapsed().as_micros(),
        });
    }
    let path = table_file_name(dir, number);
    let result = build(fs, &path, number, owner, mem, options, blobs.as_mut()).and_then(|file| {
        let (blob_files, blob_bytes) = match blobs.as_mut() {
            Some(b) => b.finish()?,
            None => (Vec::new(), 0),
        };
        Ok((file, blob_files, blob_bytes))
    });
    let (file, blob_files, blob_bytes) = match result {
        Ok(built) => built,
        Err(e) => {
            // Best effort: no version names these files.
            let _ = fs.remove(&path);
            if let Some(b) = &blobs {
                remove_blob_files(fs, dir, b.created());
            }
            return Err(e);
        }
    };
    fs.sync_dir(dir)?;
    Ok(FlushOutput {
        file: Some(file),
        blob_files,
        blob_bytes,
        micros: start.elapsed().as_micros(),
    })
}

fn build(
    fs: &dyn Fs,
    path: &Path,
    number: u64,
    owner: TableOwner<'_>,
    mem: &MemTable,
    options: &TableOptions,
    mut blobs: Option<&mut BlobFileBuilder<'_>>,
) -> Result<FileMetaData> {
    let mut builder = TableBuilder::new(fs.create(path)?, options.clone())?
        .with_order(mem.order().clone())
        .owned_by(owner);
    let mut it = mem.iter();
    let mut blob_key = Vec::new();
    it.seek_to_first();
    while it.valid() {
        let (key, value) = (it.key(), it.value());
        let reference = match blobs.as_deref_mut() {
            Some(b) => separate(b, key, value, &mut blob_key)?,
            None => None,
        };
        match reference {
            Some(reference) => builder.add(&blob_key, &reference)?,
            None => builder.add(key, value)?,
        }
        it.next();
    }
    for t in mem.range_tombstones().tombstones() {
        builder.add_range_tombstone(t.start(), t.end(), t.seq())?;
    }
    let built = builder.finish()?;
    let (file_size, props) = (built.file_size, built.properties);
    Ok(FileMetaData {
        number,
        file_size,
        smallest: built.smallest,
        largest: built.largest,
        smallest_seqno: props.smallest_seqno,
        largest_seqno: props.largest_seqno,
        blob_files: built.blob_files,
        global_seqno: None,
    })
}

/// With `key` a put whose value `blobs` separates: writes the value to the
/// blob file, sets `blob_key` to the entry's key as a blob index, and returns
/// the reference to store in its place. `None` for every other entry.
fn separate(
    blobs: &mut BlobFileBuilder<'_>,
    key: &[u8],
    value: &[u8],
    blob_key: &mut Vec<u8>,
) -> Result<Option<Vec<u8>>> {
    let Some(parsed) = ParsedInternalKey::parse(key) else {
        return Ok(None);
    };
    if parsed.value_type() != Some(ValueType::Put) || !blobs.separates(value.len()) {
        return Ok(None);
    }
    let reference = blobs.add(parsed.user_key, value)?;
    blob_key.clear();
    append_internal_key(blob_key, parsed.user_key, parsed.seq, ValueType::BlobIndex);
    Ok(Some(reference.encode()))
}
