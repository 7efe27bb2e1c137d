//! Batched point reads (RocksDB's batched `MultiGet`).
//!
//! The keys are sorted (duplicates read once) and walked through the sources
//! together, newest first: the memtables key by key, then each L0 table with
//! the keys its range holds, then each sorted level, where consecutive keys
//! that land in the same file form one group. A group reads its table through
//! one [`TableLookup`]: the filter and index are fetched once for the group,
//! and keys that share a data block read it (and ask the block cache for it)
//! once. Each key keeps its own merge operands and range-tombstone cover, so
//! every key gets exactly the answer a `get` at the same sequence number
//! gives. Results come back in the caller's order.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use super::range_dels::RangeCover;
use super::read::{finish_get, get_from_memtables, read_sequence, TableProbe};
use super::DbInner;
use crate::cf::CfShared;
use crate::error::{Error, Result};
use crate::key::{user_key, SequenceNumber};
use crate::options::ReadOptions;
use crate::statistics::{micros_since, Histogram, Ticker};
use crate::table::TableLookup;
use crate::version::{FileMetaData, SuperVersion, NUM_LEVELS};

/// Attempts at loading several families' super versions and the sequence
/// number without the DB mutex before taking it.
const LOCK_FREE_ATTEMPTS: usize = 3;

/// The values of `keys` in family `cf`, read at one sequence number.
pub(super) fn multi_get<K: AsRef<[u8]>>(
    inner: &DbInner,
    cf: &CfShared,
    options: &ReadOptions,
    keys: &[K],
) -> Vec<Result<Option<Bytes>>> {
    let _tier = crate::read_tier::enter(options.read_tier);
    let start = inner.options.statistics.as_ref().map(|_| Instant::now());
    let sv = cf.super_version.load_full();
    let values = match read_sequence(inner, options) {
        Ok(seq) => {
            let keys: Vec<&[u8]> = keys.iter().map(|k| k.as_ref()).collect();
            batch(inner, &sv, options, seq, &keys)
        }
        Err(e) => keys.iter().map(|_| Err(e.clone())).collect(),
    };
    record_time(inner, start);
    values
}

/// The values of `(family, key)` pairs, every family read at one sequence
/// number: a batch written across families is seen whole or not at all.
pub(super) fn multi_get_across<K: AsRef<[u8]>>(
    inner: &DbInner,
    options: &ReadOptions,
    requests: &[(&CfShared, K)],
) -> Vec<Result<Option<Bytes>>> {
    let _tier = crate::read_tier::enter(options.read_tier);
    let start = inner.options.statistics.as_ref().map(|_| Instant::now());
    // The families asked for, each once, with the positions of its keys.
    let mut families: Vec<(&CfShared, Vec<usize>)> = Vec::new();
    for (i, (cf, _)) in requests.iter().enumerate() {
        match families.iter_mut().find(|(f, _)| f.id == cf.id) {
            Some((_, positions)) => positions.push(i),
            None => families.push((cf, vec![i])),
        }
    }
    let shared: Vec<&CfShared> = families.iter().map(|(cf, _)| *cf).collect();
    let mut values: Vec<Result<Option<Bytes>>> = Vec::new();
    values.resize_with(requests.len(), || Ok(None));
    match consistent_super_versions(inner, options, &shared) {
        Ok((svs, seq)) => {
            for ((_, positions), sv) in families.iter().zip(&svs) {
                let keys: Vec<&[u8]> = positions.iter().map(|&i| requests[i].1.as_ref()).collect();
                let found = batch(inner, sv, options, seq, &keys);
                for (&i, value) in positions.iter().zip(found) {
                    values[i] = value;
                }
            }
        }
        Err(e) => values.iter_mut().for_each(|v| *v = Err(e.clone())),
    }
    record_time(inner, start);
    values
}

fn record_time(inner: &DbInner, start: Option<Instant>) {
    if let (Some(stats), Some(start)) = (&inner.options.statistics, start) {
        stats.record(Histogram::DbMultiGetMicros, micros_since(start));
    }
}

/// The super versions of `families` and a sequence number that every one of
/// them holds all writes up to. One family's read needs only its super version
/// loaded before the sequence (see [`read_sequence`]); several need every
/// super version still current when the sequence is read, or a batch written
/// to two families between two loads could be seen in one and not the other.
/// A snapshot needs neither: every write at or below it was visible before
/// any super version was loaded. Tried without the DB mutex a few times, then
/// under it (super versions are installed and the sequence published under it).
fn consistent_super_versions(
    inner: &DbInner,
    options: &ReadOptions,
    families: &[&CfShared],
) -> Result<(Vec<Arc<SuperVersion>>, SequenceNumber)> {
    let load = || -> Vec<Arc<SuperVersion>> {
        families
            .iter()
            .map(|cf| cf.super_version.load_full())
            .collect()
    };
    if options.snapshot.is_some() || families.len() <= 1 {
        let svs = load();
        return Ok((svs, read_sequence(inner, options)?));
    }
    for _ in 0..LOCK_FREE_ATTEMPTS {
        let svs = load();
        let seq = inner.publisher.visible();
        let unchanged = families
            .iter()
            .zip(&svs)
            .all(|(cf, sv)| Arc::ptr_eq(&cf.super_version.load(), sv));
        if unchanged {
            return Ok((svs, seq));
        }
    }
    let _state = inner.state.lock();
    let svs = load();
    Ok((svs, inner.publisher.visible()))
}

/// One distinct key of a batch, and what the sources said of it so far.
struct Pending<'k> {
    key: &'k [u8],
    /// Merge operands met, newest first.
    operands: Vec<Bytes>,
    /// Range tombstones of the tables consulted so far.
    cover: RangeCover,
    /// `Some` once a source answered: the value, or `None` for a deletion.
    base: Option<Option<Bytes>>,
    error: Option<Error>,
}

impl Pending<'_> {
    fn done(&self) -> bool {
        self.base.is_some() || self.error.is_some()
    }
}

/// `keys` of one family at `seq`, in the caller's order.
fn batch(
    inner: &DbInner,
    sv: &SuperVersion,
    options: &ReadOptions,
    seq: SequenceNumber,
    keys: &[&[u8]],
) -> Vec<Result<Option<Bytes>>> {
    let stats = inner.options.statistics.as_deref();
    let count = |ticker: Ticker, n: u64| {
        if let Some(stats) = stats {
            stats.add(ticker, n);
        }
    };
    count(Ticker::NumberKeysRead, keys.len() as u64);
    count(Ticker::NumberMultigetCalls, 1);
    count(Ticker::NumberMultigetKeysRead, keys.len() as u64);
    // In the family's order, which files and blocks are searched in.
    let key_order = sv.version.order();
    let mut by_key: Vec<usize> = (0..keys.len()).collect();
    by_key.sort_by(|&a, &b| key_order.compare_user(keys[a], keys[b]));
    // `slot[i]`: the pending entry of `keys[i]`; `pending` is sorted by key.
    let mut slot = vec![0; keys.len()];
    let mut pending: Vec<Pending> = Vec::with_capacity(keys.len());
    for &i in &by_key {
        if pending.last().is_none_or(|p| p.key != keys[i]) {
            pending.push(Pending {
                key: keys[i],
                operands: Vec::new(),
                cover: RangeCover::default(),
                base: None,
                error: None,
            });
        }
        slot[i] = pending.len() - 1;
    }

    let mut memtable_hits = 0;
    for p in &mut pending {
        match get_from_memtables(sv, p.key, seq, &mut p.operands) {
            Ok(base) => p.base = base,
            Err(e) => p.error = Some(e),
        }
        if p.base.is_some() || !p.operands.is_empty() {
            memtable_hits += 1;
        }
    }
    count(Ticker::MemtableHit, memtable_hits);
    count(Ticker::MemtableMiss, pending.len() as u64 - memtable_hits);

    read_tables(inner, sv, options, seq, &mut pending);

    // Each answer moves to the last caller position asking for it and is
    // cloned only for the earlier ones (duplicate keys).
    let mut uses = vec![0u32; pending.len()];
    for &s in &slot {
        uses[s] += 1;
    }
    let mut answers: Vec<Result<Option<Bytes>>> = pending
        .into_iter()
        .map(|p| match p.error {
            Some(e) => Err(e),
            None => finish_get(sv, p.key, p.base, &p.operands),
        })
        .collect();
    slot.iter()
        .map(|&s| {
            uses[s] -= 1;
            let answer = if uses[s] == 0 {
                std::mem::replace(&mut answers[s], Ok(None))
            } else {
                answers[s].clone()
            };
            if let Ok(Some(value)) = &answer {
                count(Ticker::BytesRead, value.len() as u64);
                crate::perf_context::count(|c| c.multiget_read_bytes += value.len() as u64);
            }
            answer
        })
        .collect()
}

/// Walks the tables of `sv` newest first for the keys no memtable answered.
fn read_tables(
    inner: &DbInner,
    sv: &SuperVersion,
    options: &ReadOptions,
    seq: SequenceNumber,
    pending: &mut [Pending],
) {
    let order = sv.version.order();
    let below = |p: &Pending, file: &FileMetaData| order.lt(p.key, user_key(&file.smallest));
    for file in sv.version.files(0) {
        // The keys the file's range holds: a run of the sorted keys.
        let start = pending.partition_point(|p| below(p, file));
        let len = pending[start..].partition_point(|p| !file.ends_before(p.key, order));
        read_group(
            inner,
            options,
            seq,
            (0, file),
            sv,
            &mut pending[start..start + len],
        );
    }
    for level in 1..NUM_LEVELS {
        let files = sv.version.files(level);
        let mut i = 0;
        while i < pending.len() {
            let at = sv.version.find_file(level, pending[i].key);
            let Some(file) = files.get(at) else {
                break; // every later key is past the level's last file too
            };
            // The keys up to the file's end; those below its start (a
            // prefix of them, the keys being sorted) fall between files.
            let end = i + pending[i..].partition_point(|p| !file.ends_before(p.key, order));
            let start = i + pending[i..end].partition_point(|p| below(p, file));
            read_group(
                inner,
                options,
                seq,
                (level, file),
                sv,
                &mut pending[start..end],
            );
            i = end;
        }
    }
}

/// Reads `group` (keys within the file's range, ascending) from one table,
/// skipping those already answered.
fn read_group(
    inner: &DbInner,
    options: &ReadOptions,
    seq: SequenceNumber,
    (level, file): (usize, &Arc<FileMetaData>),
    sv: &SuperVersion,
    group: &mut [Pending],
) {
    let (order, blob_cache) = (sv.version.order(), sv.options.blob.blob_cache.as_ref());
    if file.smallest_seqno > seq || group.iter().all(Pending::done) {
        // Every entry of the file is newer than the read, or nothing to ask.
        return;
    }
    let table = match inner.table_cache.get(file, level, order) {
        Ok(table) => table,
        Err(e) => {
            for p in group.iter_mut().filter(|p| !p.done()) {
                p.error = Some(e.clone());
            }
            return;
        }
    };
    let mut lookup = TableLookup::new(&table, options);
    for p in group.iter_mut().filter(|p| !p.done()) {
        let probe = TableProbe {
            options,
            key: p.key,
            seq,
            blob_cache,
            level,
        };
        match probe.run(inner, &table, &mut lookup, &mut p.cover, &mut p.operands) {
            Ok(base) => p.base = base,
            Err(e) => p.error = Some(e),
        }
    }
}
