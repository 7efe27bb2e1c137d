//! The blob files a version links: what the MANIFEST records of each (its
//! addition, then the garbage compactions leave in it), and the rule that
//! decides when one leaves the version.
//!
//! ```text
//! tag 400 blob_file_addition (0..n)
//! +------------------+---------------------+---------------------+---------------------+
//! | number: varint64 | record_count: var64 | record_bytes: var64 | file_size: varint64 |
//! +------------------+---------------------+---------------------+---------------------+
//!
//! tag 401 blob_file_garbage (0..n)
//! +------------------+----------------------+----------------------+
//! | number: varint64 | garbage_count: var64 | garbage_bytes: var64 |
//! +------------------+----------------------+----------------------+
//!
//! new_file per-file field 1 blob_files (a table's references; not ignorable)
//! +-----------------+--------------------------------------------------+
//! | count: varint32 | first number: varint64 | deltas to the next: var64 |
//! +-----------------+--------------------------------------------------+
//! ```
//!
//! `record_bytes` counts whole records (header, key and stored value), and
//! garbage bytes are counted the same way, so `garbage_bytes / record_bytes`
//! is the share of a file no table needs.
//!
//! Lifetime: every table lists the blob files its references point into
//! (`FileMetaData::blob_files`), and a version keeps exactly the blob files
//! some table of it lists. A blob file so leaves the version with the last
//! table that references it, whatever the garbage counts say; the counts are
//! statistics and the input of garbage collection, never the reason a file
//! is deleted. A reference into a blob file the version does not have is
//! refused when the edit applies.

use std::collections::BTreeMap;
use std::fmt;

use crate::encoding::{put_varint32, put_varint64, Decoder};

/// `VersionEdit` tag of a blob file's addition.
pub(super) const TAG_BLOB_FILE_ADDITION: u32 = 400;
/// `VersionEdit` tag of garbage in a blob file.
pub(super) const TAG_BLOB_FILE_GARBAGE: u32 = 401;
/// Per-file field of `new_file`: the blob files the table references.
pub(super) const FILE_FIELD_BLOB_FILES: u32 = 1;

/// A blob file joining the version (written, footer included, and synced).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlobFileAddition {
    /// The file's number (`{number:06}.blob`).
    pub number: u64,
    /// Records in the file.
    pub record_count: u64,
    /// Bytes of the records (headers, keys and stored values).
    pub record_bytes: u64,
    /// The file's size, header and footer included.
    pub file_size: u64,
}

/// Records of a blob file that no table references any more: a compaction
/// dropped or relocated them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlobFileGarbage {
    /// The file's number.
    pub number: u64,
    /// Records that became garbage.
    pub count: u64,
    /// Their bytes, counted as `record_bytes` is.
    pub bytes: u64,
}

/// What a version knows of one linked blob file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BlobFileMeta {
    /// How the file was added.
    pub addition: BlobFileAddition,
    /// Records no table references any more.
    pub garbage_count: u64,
    /// Their bytes.
    pub garbage_bytes: u64,
}

impl BlobFileMeta {
    /// The share of the file's record bytes that is garbage, in [0, 1].
    pub fn garbage_ratio(&self) -> f64 {
        if self.addition.record_bytes == 0 {
            return 0.0;
        }
        (self.garbage_bytes as f64 / self.addition.record_bytes as f64).min(1.0)
    }

    /// Adds `garbage`; more garbage than the file has records is refused.
    pub(super) fn add_garbage(&mut self, garbage: &BlobFileGarbage) -> Result<(), String> {
        let count = self.garbage_count.saturating_add(garbage.count);
        let bytes = self.garbage_bytes.saturating_add(garbage.bytes);
        if count > self.addition.record_count || bytes > self.addition.record_bytes {
            return Err(format!(
                "blob file #{}: garbage of {count} records / {bytes} bytes exceeds its {} \
                 records / {} bytes",
                self.addition.number, self.addition.record_count, self.addition.record_bytes
            ));
        }
        self.garbage_count = count;
        self.garbage_bytes = bytes;
        Ok(())
    }
}

/// Sums garbage by blob file: what a compaction's inputs referenced minus
/// what its outputs still reference.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GarbageTally(BTreeMap<u64, (i64, i64)>);

impl GarbageTally {
    /// Counts one record of `bytes` bytes in file `number`, referenced by a
    /// compaction input (`input`) or by one of its outputs.
    pub fn count(&mut self, number: u64, bytes: u64, input: bool) {
        let slot = self.0.entry(number).or_insert((0, 0));
        let bytes = i64::try_from(bytes).unwrap_or(i64::MAX);
        if input {
            slot.0 += 1;
            slot.1 = slot.1.saturating_add(bytes);
        } else {
            slot.0 -= 1;
            slot.1 = slot.1.saturating_sub(bytes);
        }
    }

    /// Adds another tally (a subcompaction's) to this one.
    pub fn merge(&mut self, other: &GarbageTally) {
        for (&number, &(count, bytes)) in &other.0 {
            let slot = self.0.entry(number).or_insert((0, 0));
            slot.0 += count;
            slot.1 = slot.1.saturating_add(bytes);
        }
    }

    /// The garbage per file, leaving out files with none. Every record an
    /// output references was referenced by an input, so no sum is negative;
    /// one that is means an output references a record no input did, and is
    /// returned as the error.
    pub fn garbage(&self) -> Result<Vec<BlobFileGarbage>, String> {
        let mut out = Vec::new();
        for (&number, &(count, bytes)) in &self.0 {
            if count < 0 || bytes < 0 || (count == 0) != (bytes == 0) {
                return Err(format!(
                    "blob file #{number}: compaction outputs reference records its inputs did not"
                ));
            }
            if count > 0 {
                out.push(BlobFileGarbage {
                    number,
                    count: count as u64,
                    bytes: bytes as u64,
                });
            }
        }
        Ok(out)
    }
}

pub(super) fn encode_addition(dst: &mut Vec<u8>, a: &BlobFileAddition) {
    put_varint32(dst, TAG_BLOB_FILE_ADDITION);
    for v in [a.number, a.record_count, a.record_bytes, a.file_size] {
        put_varint64(dst, v);
    }
}

pub(super) fn encode_garbage(dst: &mut Vec<u8>, g: &BlobFileGarbage) {
    put_varint32(dst, TAG_BLOB_FILE_GARBAGE);
    for v in [g.number, g.count, g.bytes] {
        put_varint64(dst, v);
    }
}

/// Decodes an addition's payload; the error names the missing field.
pub(super) fn decode_addition(d: &mut Decoder<'_>) -> Result<BlobFileAddition, &'static str> {
    let number = d.varint64().ok_or("blob file addition number")?;
    let record_count = d.varint64().ok_or("blob file addition record count")?;
    let record_bytes = d.varint64().ok_or("blob file addition record bytes")?;
    let file_size = d.varint64().ok_or("blob file addition file size")?;
    Ok(BlobFileAddition {
        number,
        record_count,
        record_bytes,
        file_size,
    })
}

/// Decodes a garbage payload; the error names the missing field.
pub(super) fn decode_garbage(d: &mut Decoder<'_>) -> Result<BlobFileGarbage, &'static str> {
    let number = d.varint64().ok_or("blob file garbage number")?;
    let count = d.varint64().ok_or("blob file garbage count")?;
    let bytes = d.varint64().ok_or("blob file garbage bytes")?;
    Ok(BlobFileGarbage {
        number,
        count,
        bytes,
    })
}

/// The payload of the `blob_files` per-file field: `numbers` must be
/// strictly increasing.
pub(super) fn encode_blob_numbers(numbers: &[u64]) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint32(&mut out, numbers.len() as u32);
    let mut prev = 0;
    for (i, &n) in numbers.iter().enumerate() {
        put_varint64(&mut out, if i == 0 { n } else { n - prev });
        prev = n;
    }
    out
}

/// Decodes a `blob_files` payload; the numbers come out strictly increasing.
pub(super) fn decode_blob_numbers(payload: &[u8]) -> Result<Vec<u64>, String> {
    let mut d = Decoder::new(payload);
    let count = d.varint32().ok_or("blob_files count is truncated")?;
    // Each number takes at least a byte: a count the payload cannot hold
    // is refused before anything is allocated for it.
    if count as usize > payload.len() {
        return Err(format!(
            "blob_files claims {count} numbers in {} bytes",
            payload.len()
        ));
    }
    let mut numbers = Vec::with_capacity(count as usize);
    let mut prev = 0u64;
    for i in 0..count {
        let v = d.varint64().ok_or("blob_files number is truncated")?;
        let n = if i == 0 {
            v
        } else if v == 0 {
            return Err("blob_files numbers repeat".into());
        } else {
            prev.checked_add(v).ok_or("blob_files number overflows")?
        };
        numbers.push(n);
        prev = n;
    }
    if !d.is_empty() {
        return Err("blob_files has trailing bytes".into());
    }
    Ok(numbers)
}

impl fmt::Display for BlobFileAddition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "add blob file #{} records={} record_bytes={} size={}",
            self.number, self.record_count, self.record_bytes, self.file_size
        )
    }
}

impl fmt::Display for BlobFileGarbage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "blob file #{} garbage records={} bytes={}",
            self.number, self.count, self.bytes
        )
    }
}
