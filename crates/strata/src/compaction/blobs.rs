//! What a compaction does with blobs, for one subcompaction:
//! - values it writes at or below `blob_file_starting_level` that are large
//!   enough go to new blob files;
//! - references it keeps pass through, except, with garbage collection on,
//!   those into the oldest `blob_garbage_collection_age_cutoff` of the blob
//!   files, whose values move to new blob files (or back into the table when
//!   they no longer qualify), so those files can go;
//! - the records its inputs referenced and its outputs no longer do are
//!   counted as garbage of their blob files, for the MANIFEST.
//!
//! Values are read back (resolved) when something needs them whole: a
//! compaction filter, a merge over a separated base, a relocation.

use crate::blob::format::BLOB_RECORD_HEADER_LEN;
use crate::blob::{BlobFileBuilder, BlobOutput, BlobRead, BlobRef, BlobSource};
use crate::error::{Error, Result};
use crate::key::{internal_key, ParsedInternalKey, ValueType};
use crate::options::BlobOptions;
use crate::statistics::{Statistics, Ticker};
use crate::version::{BlobFileAddition, GarbageTally, Version};

/// The family's blob settings a compaction job needs.
#[derive(Clone, Copy, Debug)]
pub struct BlobContext<'a> {
    pub source: &'a BlobSource,
    pub options: &'a BlobOptions,
    pub column_family_id: u32,
    pub statistics: Option<&'a Statistics>,
}

/// References into blob files numbered below this are relocated, with
/// garbage collection on: the oldest `age_cutoff` fraction of the version's
/// blob files. 0 (nothing) with it off.
pub fn gc_cutoff(options: &BlobOptions, version: &Version) -> u64 {
    if !options.enable_blob_garbage_collection {
        return 0;
    }
    let files = version.blob_files();
    let count = (options.blob_garbage_collection_age_cutoff * files.len() as f64).floor() as usize;
    match files.keys().nth(count) {
        Some(&first_kept) => first_kept,
        // Every file is within the cutoff.
        None => files.keys().next_back().map_or(0, |&n| n + 1),
    }
}

/// One subcompaction's blob work.
#[derive(Debug)]
pub struct SpanBlobs<'a> {
    ctx: BlobContext<'a>,
    builder: BlobFileBuilder<'a>,
    tally: GarbageTally,
    gc_cutoff: u64,
    /// Record bytes read back from blob files.
    bytes_read: std::cell::Cell<u64>,
}

/// What a span's blob work produced.
#[derive(Debug)]
pub struct SpanBlobOutput {
    pub additions: Vec<BlobFileAddition>,
    pub bytes_written: u64,
    pub bytes_read: u64,
    pub tally: GarbageTally,
}

impl<'a> SpanBlobs<'a> {
    pub fn new(ctx: BlobContext<'a>, out: BlobOutput<'a>, level: usize, gc_cutoff: u64) -> Self {
        SpanBlobs {
            ctx,
            builder: BlobFileBuilder::new(out, ctx.options, level),
            tally: GarbageTally::default(),
            gc_cutoff,
            bytes_read: std::cell::Cell::new(0),
        }
    }

    fn tick(&self, ticker: Ticker, n: u64) {
        if let Some(stats) = self.ctx.statistics {
            stats.add(ticker, n);
        }
    }

    /// Counts a reference an input holds (every input entry passes here,
    /// kept or dropped).
    pub fn note_input(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if let Some((user_key, reference)) = blob_entry(key, value)? {
            self.tally.count(
                reference.file_number,
                record_bytes(user_key, &reference),
                true,
            );
        }
        Ok(())
    }

    /// The value of a `BlobIndex` entry, read from its blob file; `None`
    /// for other entries.
    pub fn resolve(&self, key: &[u8], value: &[u8]) -> Result<Option<Vec<u8>>> {
        let Some((user_key, reference)) = blob_entry(key, value)? else {
            return Ok(None);
        };
        self.bytes_read
            .set(self.bytes_read.get() + record_bytes(user_key, &reference));
        let read = BlobRead {
            cache: None,
            verify_checksums: true,
            fill_cache: false,
        };
        Ok(Some(self.ctx.source.get(user_key, value, read)?.to_vec()))
    }

    /// The entry to write in place of `(key, value)`, if it changes: a large
    /// value goes to a blob file, a reference into a file under collection
    /// is relocated. Every reference written is counted for the tally.
    pub fn rewrite(&mut self, key: &[u8], value: &[u8]) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
        let Some(parsed) = ParsedInternalKey::parse(key) else {
            return Ok(None);
        };
        match parsed.value_type() {
            Some(ValueType::Put) if self.builder.separates(value.len()) => {
                let reference = self.builder.add(parsed.user_key, value)?;
                let key = internal_key(parsed.user_key, parsed.seq, ValueType::BlobIndex);
                Ok(Some((key, reference.encode())))
            }
            Some(ValueType::BlobIndex) => {
                let reference = decode(parsed.user_key, value)?;
                if reference.file_number >= self.gc_cutoff {
                    self.tally.count(
                        reference.file_number,
                        record_bytes(parsed.user_key, &reference),
                        false,
                    );
                    return Ok(None);
                }
                let resolved = self.resolve(key, value)?.unwrap_or_default();
                self.tick(Ticker::BlobGcKeysRelocated, 1);
                self.tick(Ticker::BlobGcBytesRelocated, resolved.len() as u64);
                let (user_key, seq) = (parsed.user_key, parsed.seq);
                if self.builder.separates(resolved.len()) {
                    let moved = self.builder.add(user_key, &resolved)?;
                    let key = internal_key(user_key, seq, ValueType::BlobIndex);
                    Ok(Some((key, moved.encode())))
                } else {
                    Ok(Some((
                        internal_key(user_key, seq, ValueType::Put),
                        resolved,
                    )))
                }
            }
            _ => Ok(None),
        }
    }

    /// Files created so far, for removal if the job fails.
    pub fn created(&self) -> &[u64] {
        self.builder.created()
    }

    /// Finishes the open blob file.
    pub fn finish(&mut self) -> Result<SpanBlobOutput> {
        let (additions, bytes_written) = self.builder.finish()?;
        Ok(SpanBlobOutput {
            additions,
            bytes_written,
            bytes_read: self.bytes_read.take(),
            tally: std::mem::take(&mut self.tally),
        })
    }
}

/// The user key and reference of a `BlobIndex` entry; `None` for others.
fn blob_entry<'k>(key: &'k [u8], value: &[u8]) -> Result<Option<(&'k [u8], BlobRef)>> {
    match ParsedInternalKey::parse(key) {
        Some(p) if p.value_type() == Some(ValueType::BlobIndex) => {
            Ok(Some((p.user_key, decode(p.user_key, value)?)))
        }
        _ => Ok(None),
    }
}

fn decode(user_key: &[u8], value: &[u8]) -> Result<BlobRef> {
    BlobRef::decode(value).map_err(|reason| {
        Error::corruption(
            "",
            0,
            format!("blob reference of key {user_key:x?}: {reason}"),
        )
    })
}

/// A record's bytes, as blob file additions and garbage count them. The
/// reference comes from disk unchecked: its length may be anything.
pub(crate) fn record_bytes(user_key: &[u8], reference: &BlobRef) -> u64 {
    (BLOB_RECORD_HEADER_LEN as u64 + user_key.len() as u64).saturating_add(reference.stored_len)
}
