//! The live files of every family, with what the MANIFEST knows of them
//! (RocksDB's `GetLiveFilesMetaData`), for tools and backups.

use std::path::PathBuf;

use super::Db;
use crate::filename::{blob_file_name, table_file_name};
use crate::key::{user_key, SequenceNumber};

/// One table of a family's current version (RocksDB's `LiveFileMetaData`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveFileMetaData {
    pub column_family_name: String,
    pub level: usize,
    pub file_number: u64,
    pub file_path: PathBuf,
    pub size: u64,
    /// The smallest and largest user keys (the largest may be a range
    /// deletion's exclusive end).
    pub smallest_key: Vec<u8>,
    pub largest_key: Vec<u8>,
    pub smallest_seqno: SequenceNumber,
    pub largest_seqno: SequenceNumber,
    /// A running compaction reads it.
    pub being_compacted: bool,
}

/// One blob file a family's current version links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveBlobFileMetaData {
    pub column_family_name: String,
    pub file_number: u64,
    pub file_path: PathBuf,
    pub size: u64,
    /// Bytes of records no table references any more.
    pub garbage_bytes: u64,
}

impl Db {
    /// Every live table of every family, family by family (in id order),
    /// level by level, each level in key order (L0 newest first).
    pub fn live_files_metadata(&self) -> Vec<LiveFileMetaData> {
        let inner = &self.inner;
        let state = inner.state.lock();
        let mut out = Vec::new();
        for (&id, family) in &state.cfs {
            let version = state.versions.current(id);
            for (level, f) in version.all_files() {
                out.push(LiveFileMetaData {
                    column_family_name: family.shared.name.clone(),
                    level,
                    file_number: f.number,
                    file_path: table_file_name(&inner.dir, f.number),
                    size: f.file_size,
                    smallest_key: user_key(&f.smallest).to_vec(),
                    largest_key: user_key(&f.largest).to_vec(),
                    smallest_seqno: f.smallest_seqno,
                    largest_seqno: f.largest_seqno,
                    being_compacted: state.jobs.compacting.contains(&f.number),
                });
            }
        }
        out
    }

    /// The statistics the database was opened with (`DbOptions::statistics`).
    pub fn statistics(&self) -> Option<&std::sync::Arc<crate::Statistics>> {
        self.inner.options.statistics.as_ref()
    }

    /// The directory the database is in.
    pub fn path(&self) -> &std::path::Path {
        &self.inner.dir
    }

    /// Every blob file every family's current version links, by family and
    /// number.
    pub fn live_blob_files_metadata(&self) -> Vec<LiveBlobFileMetaData> {
        let inner = &self.inner;
        let state = inner.state.lock();
        let mut out = Vec::new();
        for (&id, family) in &state.cfs {
            let version = state.versions.current(id);
            for (&number, meta) in version.blob_files() {
                out.push(LiveBlobFileMetaData {
                    column_family_name: family.shared.name.clone(),
                    file_number: number,
                    file_path: blob_file_name(&inner.dir, number),
                    size: meta.addition.file_size,
                    garbage_bytes: meta.garbage_bytes,
                });
            }
        }
        out
    }
}
