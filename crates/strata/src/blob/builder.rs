//! Separates the large values of one flush or compaction into blob files
//! (RocksDB's `BlobFileBuilder`): each value that qualifies is appended to
//! the current blob file, which is finished and a new one started once it
//! reaches `blob_file_size`. The caller writes the returned reference to its
//! table as a `BlobIndex` entry, and names the finished files in the same
//! MANIFEST edit as the table, so a blob file is linked only once whole.

use std::path::Path;
use std::sync::Arc;

use crate::blob::format::BlobRef;
use crate::blob::source::BlobSource;
use crate::blob::writer::BlobFileWriter;
use crate::cache::Cache;
use crate::error::Result;
use crate::filename::blob_file_name;
use crate::fs::Fs;
use crate::options::{BlobOptions, PrepopulateBlobCache};
use crate::version::BlobFileAddition;

/// Where the builder's files go and how they are numbered.
pub struct BlobOutput<'a> {
    pub fs: &'a dyn Fs,
    pub dir: &'a Path,
    /// Hands out the number of each new blob file; every number it returns
    /// is spared by obsolete-file deletion until the job installs or fails.
    pub new_file_number: &'a (dyn Fn() -> u64 + Sync),
    pub column_family_id: u32,
}

impl std::fmt::Debug for BlobOutput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlobOutput")
            .field("dir", &self.dir)
            .field("column_family_id", &self.column_family_id)
            .finish_non_exhaustive()
    }
}

/// Writes the separated values of one job.
#[derive(Debug)]
pub struct BlobFileBuilder<'a> {
    out: BlobOutput<'a>,
    options: BlobOptions,
    /// The output level: values are separated only at or below
    /// `blob_file_starting_level`.
    level: usize,
    current: Option<BlobFileWriter>,
    finished: Vec<BlobFileAddition>,
    /// Every file created, finished or not, removed if the job fails.
    created: Vec<u64>,
    /// With `prepopulate_blob_cache = kFlushOnly`: where blobs are cached as
    /// they are written.
    prepopulate: Option<(&'a BlobSource, Arc<dyn Cache>)>,
    bytes_written: u64,
}

impl<'a> BlobFileBuilder<'a> {
    /// A builder for a job writing to `level` with the family's `options`.
    pub fn new(out: BlobOutput<'a>, options: &BlobOptions, level: usize) -> BlobFileBuilder<'a> {
        BlobFileBuilder {
            out,
            options: options.clone(),
            level,
            current: None,
            finished: Vec::new(),
            created: Vec::new(),
            prepopulate: None,
            bytes_written: 0,
        }
    }

    /// Puts each blob written in `source`'s view of the family's blob cache
    /// when the options ask for it (flushes only, as in RocksDB).
    pub fn with_prepopulate(mut self, source: &'a BlobSource) -> Self {
        if self.options.prepopulate_blob_cache == PrepopulateBlobCache::FlushOnly {
            if let Some(cache) = &self.options.blob_cache {
                self.prepopulate = Some((source, cache.clone()));
            }
        }
        self
    }

    /// Whether a value of `len` bytes goes to a blob file.
    pub fn separates(&self, len: usize) -> bool {
        self.options.separates(self.level, len)
    }

    /// Appends `value` of `user_key` to the current blob file and returns
    /// its reference. Call only for values [`separates`](Self::separates)
    /// accepts.
    pub fn add(&mut self, user_key: &[u8], value: &[u8]) -> Result<BlobRef> {
        let writer = match self.current.as_mut() {
            Some(writer) => writer,
            None => {
                let number = (self.out.new_file_number)();
                self.created.push(number);
                let file = self.out.fs.create(&blob_file_name(self.out.dir, number))?;
                self.current.insert(BlobFileWriter::new(
                    file,
                    number,
                    self.out.column_family_id,
                    self.options.blob_compression_type,
                )?)
            }
        };
        let reference = writer.add(user_key, value)?;
        let full = writer.len() >= self.options.blob_file_size;
        if let Some((source, cache)) = &self.prepopulate {
            source.prepopulate(cache, &reference, value);
        }
        if full {
            self.finish_current()?;
        }
        Ok(reference)
    }

    fn finish_current(&mut self) -> Result<()> {
        if let Some(writer) = self.current.take() {
            let built = writer.finish()?;
            self.bytes_written += built.file_size;
            self.finished.push(BlobFileAddition {
                number: built.file_number,
                record_count: built.record_count,
                record_bytes: built.record_bytes(),
                file_size: built.file_size,
            });
        }
        Ok(())
    }

    /// Finishes the open file and returns every file written, each complete
    /// and synced (the caller syncs the directory), with the bytes written.
    pub fn finish(&mut self) -> Result<(Vec<BlobFileAddition>, u64)> {
        self.finish_current()?;
        let bytes = std::mem::take(&mut self.bytes_written);
        Ok((std::mem::take(&mut self.finished), bytes))
    }

    /// The numbers of every file created so far, for removal after a failure.
    pub fn created(&self) -> &[u64] {
        &self.created
    }
}

/// Removes the blob files `numbers` a failed job left (best effort: no
/// version names them, and the next open removes what is left).
pub fn remove_blob_files(fs: &dyn Fs, dir: &Path, numbers: &[u64]) {
    for &number in numbers {
        let _ = fs.remove(&blob_file_name(dir, number));
    }
}
