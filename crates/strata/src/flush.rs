//! Flush: turns a memtable into an L0 table file: its point entries, and its
//! range tombstones in the table's range-deletion block (a memtable holding
//! only tombstones still makes a table, whose key range they span).

use std::path::Path;
use std::time::Instant;

use crate::error::Result;
use crate::filename::table_file_name;
use crate::fs::Fs;
use crate::iter::InternalIterator;
use crate::memtable::MemTable;
use crate::options::TableOptions;
use crate::table::TableBuilder;
use crate::version::FileMetaData;

/// What a flush wrote.
#[derive(Debug, Clone)]
pub struct FlushOutput {
    /// The new table, or `None` if the memtable was empty.
    pub file: Option<FileMetaData>,
    /// Wall time spent.
    pub micros: u128,
}

/// Writes every entry and range tombstone of `mem` to table `number` in `dir` and syncs the file and
/// the directory, so the table is durable before any MANIFEST edit names it. A
/// partial file left by an error is removed.
pub fn write_level0_table(
    fs: &dyn Fs,
    dir: &Path,
    number: u64,
    mem: &MemTable,
    options: &TableOptions,
) -> Result<FlushOutput> {
    let start = Instant::now();
    if mem.is_empty() {
        return Ok(FlushOutput {
            file: None,
            micros: start.elapsed().as_micros(),
        });
    }
    let path = table_file_name(dir, number);
    let result = build(fs, &path, number, mem, options);
    if result.is_err() {
        // Best effort: the file is not referenced by any version.
        let _ = fs.remove(&path);
    }
    let file = result?;
    fs.sync_dir(dir)?;
    Ok(FlushOutput {
        file: Some(file),
        micros: start.elapsed().as_micros(),
    })
}

fn build(
    fs: &dyn Fs,
    path: &Path,
    number: u64,
    mem: &MemTable,
    options: &TableOptions,
) -> Result<FileMetaData> {
    let mut builder =
        TableBuilder::new(fs.create(path)?, options.clone())?.with_order(mem.order().clone());
    let mut it = mem.iter();
    it.seek_to_first();
    while it.valid() {
        builder.add(it.key(), it.value())?;
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
    })
}
