//! The read path. Reads pin a super version and never take the DB mutex.
//!
//! A point read consults, newest first: the active memtable, the immutable
//! memtables, every L0 table whose key range holds the key (newest first), then
//! at most one table per deeper level. The first source that knows the key
//! answers: a value, or a deletion that hides everything older.

use std::sync::atomic::Ordering;

use bytes::Bytes;

use super::DbInner;
use crate::error::Result;
use crate::key::{SequenceNumber, ValueType};
use crate::memtable::MemGet;
use crate::options::ReadOptions;
use crate::version::SuperVersion;

/// The sequence number a read sees: the snapshot's, or the latest visible one.
/// Taken *before* the super version is loaded: every write up to it is then in a
/// memtable or table of that (or a newer) super version.
pub(super) fn read_sequence(inner: &DbInner, options: &ReadOptions) -> SequenceNumber {
    options
        .snapshot
        .unwrap_or_else(|| inner.visible_seq.load(Ordering::Acquire))
}

pub(super) fn get(inner: &DbInner, options: &ReadOptions, key: &[u8]) -> Result<Option<Bytes>> {
    let seq = read_sequence(inner, options);
    let sv = inner.super_version.load();
    get_in(inner, &sv, options, key, seq)
}

pub(super) fn multi_get<K: AsRef<[u8]>>(
    inner: &DbInner,
    options: &ReadOptions,
    keys: &[K],
) -> Vec<Result<Option<Bytes>>> {
    let seq = read_sequence(inner, options);
    let sv = inner.super_version.load();
    keys.iter()
        .map(|k| get_in(inner, &sv, options, k.as_ref(), seq))
        .collect()
}

fn get_in(
    inner: &DbInner,
    sv: &SuperVersion,
    options: &ReadOptions,
    key: &[u8],
    seq: SequenceNumber,
) -> Result<Option<Bytes>> {
    for mem in std::iter::once(&sv.mem).chain(sv.imm.iter()) {
        match mem.get(key, seq) {
            MemGet::Found(v) => return Ok(Some(v)),
            MemGet::Deleted => return Ok(None),
            MemGet::NotFound => {}
        }
    }
    for (_, file) in sv.version.files_for_key(key) {
        if file.smallest_seqno > seq {
            // Every entry of this file is newer than the read.
            continue;
        }
        let table = inner.table_cache.get(file.number, file.file_size)?;
        if let Some(entry) = table.get(options, key, seq)? {
            return Ok(match entry.value_type {
                ValueType::Put => Some(entry.value),
                ValueType::Delete => None,
            });
        }
    }
    Ok(None)
}
