//! The operations of the key-value benchmarks, one method per kind, run by
//! each benchmark thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;
use rand::Rng;

use crate::engine::{Cursor, Engine, OpResult};
use crate::generator::{make_key, random_key_number};
use crate::ycsb::{fnv1a64, Chooser, Workload, MAX_SCAN_LENGTH};

use super::Worker;

/// The order a fill writes its keys in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KeyOrder {
    Sequential,
    /// Random keys in `0..num`, repeats allowed (about 63% distinct).
    Random,
    /// Every key of `0..num` once, in a random order (db_bench's UNIQUE_RANDOM).
    UniqueRandom,
}

impl<E: Engine> Worker<'_, E> {
    /// The clock is read per operation only when latencies are recorded.
    #[inline]
    pub(super) fn op_start(&self) -> Option<Instant> {
        self.stats.hist.is_some().then(Instant::now)
    }

    /// True once `--duration` seconds have passed (0: no time limit).
    fn out_of_time(&self) -> bool {
        let limit = self.ctx.flags.duration;
        limit > 0 && self.stats.start.elapsed() >= Duration::from_secs(limit)
    }

    /// `--num` puts in batches of `--batch_size`, keys in `order`.
    pub(super) fn write(&mut self, order: KeyOrder) -> OpResult {
        let flags = self.ctx.flags;
        let mut unique: Vec<u64> = Vec::new();
        if order == KeyOrder::UniqueRandom {
            unique = (0..flags.num).collect();
            unique.shuffle(&mut self.rng);
        }
        let batch_size = flags.batch_size.max(1) as u64;
        let mut i = 0;
        while i < flags.num && !self.out_of_time() {
            let t = self.op_start();
            let mut batch = self.ctx.db.new_batch();
            let in_batch = batch_size.min(flags.num - i);
            for j in 0..in_batch {
                let n = match order {
                    KeyOrder::Sequential => i + j,
                    KeyOrder::Random => random_key_number(&mut self.rng, flags.num),
                    KeyOrder::UniqueRandom => unique[(i + j) as usize],
                };
                flags.make_key(n, &mut self.key);
                let tombstone = self.range_tombstone_due();
                let value = self.values.next_value(flags.value_size);
                self.ctx.db.batch_put(&mut batch, &self.key, value)?;
                self.stats.bytes += (self.key.len() + value.len()) as u64;
                if let Some((begin, end)) = tombstone {
                    self.ctx.db.batch_delete_range(&mut batch, &begin, &end)?;
                }
            }
            self.ctx.db.write(batch)?;
            for _ in 0..in_batch {
                self.stats.finished_op(t)?;
            }
            i += in_batch;
        }
        Ok(())
    }

    /// Counts one write and says, as db_bench's `DoWrite` does, whether a
    /// range tombstone goes with it: after every
    /// `--writes_per_range_tombstone`-th write, until
    /// `--max_num_range_tombstones` were written by this thread, one over
    /// `--range_tombstone_width` keys from a random one (its begin and end).
    fn range_tombstone_due(&mut self) -> Option<(Vec<u8>, Vec<u8>)> {
        let flags = self.ctx.flags;
        let every = flags.writes_per_range_tombstone;
        if every == 0 {
            return None;
        }
        self.writes += 1;
        if self.writes % every != 0 || self.writes / every > flags.max_num_range_tombstones {
            return None;
        }
        let begin = random_key_number(&mut self.rng, flags.num);
        let (mut begin_key, mut end_key) = (vec![0; flags.key_size], vec![0; flags.key_size]);
        flags.make_key(begin, &mut begin_key);
        flags.make_key(
            begin.saturating_add(flags.range_tombstone_width),
            &mut end_key,
        );
        Some((begin_key, end_key))
    }

    /// `--reads` random point reads of keys `0..range`; with `missing`, of
    /// keys one byte longer, which are never there (db_bench's readmissing).
    pub(super) fn read_random(&mut self, range: u64, missing: bool) -> OpResult {
        let flags = self.ctx.flags;
        let mut key = self.key.clone();
        if missing {
            key.push(b'.');
        }
        for _ in 0..flags.reads {
            if self.out_of_time() {
                break;
            }
            let t = self.op_start();
            flags.make_key(
                random_key_number(&mut self.rng, range),
                &mut key[..flags.key_size],
            );
            let got = self.ctx.db.get(&key)?;
            self.stats.read(key.len(), got);
            self.stats.finished_op(t)?;
        }
        Ok(())
    }

    /// `--reads` keys read `--batch_size` at a time, with the engine's batched
    /// `multi_get` when `--multiread_batched`; each key counts as one
    /// operation, as in db_bench.
    pub(super) fn multi_read_random(&mut self) -> OpResult {
        let flags = self.ctx.flags;
        let batch = flags.batch_size.max(1) as u64;
        let mut done = 0;
        while done < flags.reads && !self.out_of_time() {
            let t = self.op_start();
            let n = batch.min(flags.reads - done);
            let keys: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    let mut k = vec![0; flags.key_size];
                    flags.make_key(random_key_number(&mut self.rng, flags.num), &mut k);
                    k
                })
                .collect();
            // db_bench reads through the batched MultiGet only with
            // --multiread_batched; otherwise key by key.
            let found = if flags.multiread_batched {
                self.ctx.db.multi_get(&keys)?
            } else {
                keys.iter()
                    .map(|k| self.ctx.db.get(k))
                    .collect::<OpResult<Vec<_>>>()?
            };
            for (k, got) in keys.iter().zip(found) {
                self.stats.read(k.len(), got);
            }
            for _ in 0..n {
                self.stats.finished_op(t)?;
            }
            done += n;
        }
        Ok(())
    }

    /// `--num` deletes of random keys, in batches of `--batch_size`.
    pub(super) fn delete_random(&mut self) -> OpResult {
        let flags = self.ctx.flags;
        let batch_size = flags.batch_size.max(1) as u64;
        let mut i = 0;
        while i < flags.num && !self.out_of_time() {
            let t = self.op_start();
            let mut batch = self.ctx.db.new_batch();
            let n = batch_size.min(flags.num - i);
            for _ in 0..n {
                flags.make_key(random_key_number(&mut self.rng, flags.num), &mut self.key);
                self.ctx.db.batch_delete(&mut batch, &self.key)?;
            }
            self.ctx.db.write(batch)?;
            for _ in 0..n {
                self.stats.finished_op(t)?;
            }
            i += n;
        }
        Ok(())
    }

    /// `--reads` operations on random keys: a get with probability
    /// `--readwritepercent`%, else a put.
    pub(super) fn read_random_write_random(&mut self) -> OpResult {
        let percent = self.ctx.flags.readwritepercent;
        self.on_random_keys(|w| {
            if w.rng.gen_range(0..100) < percent {
                w.counted_get()
            } else {
                w.counted_put()
            }
        })
    }

    /// `--reads` merges of random keys (db_bench's mergerandom).
    pub(super) fn merge_random(&mut self) -> OpResult {
        self.on_random_keys(|w| w.counted_merge())
    }

    /// `--reads` operations on random keys: `--mergereadpercent`% gets, the
    /// rest merges (db_bench's readrandommergerandom).
    pub(super) fn read_random_merge_random(&mut self) -> OpResult {
        let percent = self.ctx.flags.mergereadpercent;
        self.on_random_keys(|w| {
            if w.rng.gen_range(0..100) < percent {
                w.counted_get()
            } else {
                w.counted_merge()
            }
        })
    }

    /// A merge of the next value into the current key, counted as a write.
    fn counted_merge(&mut self) -> OpResult {
        let value = self.values.next_value(self.ctx.flags.value_size);
        self.ctx.db.merge(&self.key, value)?;
        self.stats.writes += 1;
        self.stats.bytes += (self.key.len() + value.len()) as u64;
        Ok(())
    }

    /// `--reads` read-modify-writes: get a random key, put a new value.
    pub(super) fn update_random(&mut self) -> OpResult {
        self.on_random_keys(|w| {
            w.counted_get()?;
            w.counted_put()
        })
    }

    /// Runs `op` `--reads` times (or until `--duration`), each time on a new
    /// random key of `0..num`, counting each as one operation.
    fn on_random_keys(&mut self, mut op: impl FnMut(&mut Self) -> OpResult) -> OpResult {
        let flags = self.ctx.flags;
        for _ in 0..flags.reads {
            if self.out_of_time() {
                break;
            }
            let t = self.op_start();
            flags.make_key(random_key_number(&mut self.rng, flags.num), &mut self.key);
            op(self)?;
            self.stats.finished_op(t)?;
        }
        Ok(())
    }

    /// A get of the current key, counted as a read (and as found, with its
    /// bytes, when there).
    fn counted_get(&mut self) -> OpResult {
        let got = self.ctx.db.get(&self.key)?;
        self.stats.read(self.key.len(), got);
        Ok(())
    }

    /// A put of the current key with the next value, counted as a write.
    fn counted_put(&mut self) -> OpResult {
        let value = self.values.next_value(self.ctx.flags.value_size);
        self.ctx.db.put(&self.key, value)?;
        self.stats.writes += 1;
        self.stats.bytes += (self.key.len() + value.len()) as u64;
        Ok(())
    }

    /// readseq / readreverse: one iterator over the whole DB, one operation per
    /// entry, stopping after `--reads` entries as db_bench does (by default
    /// reads = num, so a full scan of a DB of num keys).
    pub(super) fn scan(&mut self, forward: bool) -> OpResult {
        let mut it = self.ctx.db.cursor();
        if forward {
            it.seek_to_first();
        } else {
            it.seek_to_last();
        }
        let mut entries = 0u64;
        while entries < self.ctx.flags.reads && it.valid() {
            let t = self.op_start();
            self.stats.bytes += (it.key().len() + it.value().len()) as u64;
            if forward {
                it.next();
            } else {
                it.prev();
            }
            entries += 1;
            self.stats.finished_op(t)?;
        }
        it.status()?;
        Ok(())
    }

    /// `--reads` seeks to random keys in `0..num` with one iterator, reading
    /// the entry the seek lands on and then `nexts` more, forward or backward
    /// (seekrandom with db_bench's `--seek_nexts` and `--reverse_iterator`);
    /// found counts exact hits. db_bench reads no entry with its default
    /// `--seek_nexts=0` (and so prints no MB/s); reading one makes the figure
    /// comparable with a point lookup.
    pub(super) fn seek_random(&mut self, nexts: u64, forward: bool) -> OpResult {
        let flags = self.ctx.flags;
        let mut it = self.ctx.db.cursor();
        for _ in 0..flags.reads {
            if self.out_of_time() {
                break;
            }
            let t = self.op_start();
            flags.make_key(random_key_number(&mut self.rng, flags.num), &mut self.key);
            flags.miss_prefix(&mut self.key);
            if forward {
                it.seek(&self.key);
            } else {
                it.seek_for_prev(&self.key);
            }
            self.stats.reads += 1;
            if it.valid() && it.key() == self.key.as_slice() {
                self.stats.found += 1;
            }
            let mut read = 0;
            while it.valid() && read <= nexts {
                self.stats.bytes += (it.key().len() + it.value().len()) as u64;
                read += 1;
                if read <= nexts {
                    if forward {
                        it.next();
                    } else {
                        it.prev();
                    }
                }
            }
            self.stats.finished_op(t)?;
        }
        it.status()?;
        Ok(())
    }

    /// The background writer of the `*whilewriting` benchmarks: random puts
    /// until `stop`, at most `--benchmark_write_rate_limit` bytes a second
    /// (0: as fast as it can). Its operations count in the interval samples
    /// only, not in the result line.
    pub(super) fn write_until(&mut self, stop: &AtomicBool) -> OpResult {
        let flags = self.ctx.flags;
        let rate = flags.benchmark_write_rate_limit;
        let started = Instant::now();
        let mut written = 0u64;
        while !stop.load(Ordering::Acquire) {
            flags.make_key(random_key_number(&mut self.rng, flags.num), &mut self.key);
            let tombstone = self.range_tombstone_due();
            let value = self.values.next_value(flags.value_size);
            if let Some((begin, end)) = tombstone {
                let mut batch = self.ctx.db.new_batch();
                self.ctx.db.batch_put(&mut batch, &self.key, value)?;
                self.ctx.db.batch_delete_range(&mut batch, &begin, &end)?;
                self.ctx.db.write(batch)?;
            } else {
                self.ctx.db.put(&self.key, value)?;
            }
            self.stats.finished_op(None)?;
            written += (self.key.len() + value.len()) as u64;
            if rate > 0 {
                let due = Duration::from_secs_f64(written as f64 / rate as f64);
                if let Some(ahead) = due.checked_sub(started.elapsed()) {
                    std::thread::sleep(ahead.min(Duration::from_millis(100)));
                }
            }
        }
        Ok(())
    }

    /// ycsb_load: this thread's share (every `threads`-th) of the records
    /// `0..--ycsb_record_count`, each under its hashed key.
    pub(super) fn ycsb_load(&mut self, thread: u64, threads: u64) -> OpResult {
        let flags = self.ctx.flags;
        let records = flags.ycsb_records();
        let mut n = thread;
        while n < records && !self.out_of_time() {
            let t = self.op_start();
            make_key(fnv1a64(n), &mut self.key);
            let value = self.values.next_value(flags.value_size);
            self.ctx.db.put(&self.key, value)?;
            self.stats.bytes += (self.key.len() + value.len()) as u64;
            self.stats.finished_op(t)?;
            n += threads.max(1);
        }
        Ok(())
    }

    /// One YCSB core workload: `--ycsb_operation_count` requests, each a
    /// read, update, insert, scan or read-modify-write as the mix says, of
    /// records the workload's distribution picks.
    pub(super) fn ycsb_run(&mut self, w: Workload) -> OpResult {
        let flags = self.ctx.flags;
        let distribution = flags.ycsb_request_distribution.unwrap_or(w.distribution);
        let chooser = Chooser::new(distribution, flags.ycsb_records());
        let bounds = [w.read, w.update, w.insert, w.scan, w.read_modify_write];
        for _ in 0..flags.ycsb_operations() {
            if self.out_of_time() {
                break;
            }
            let t = self.op_start();
            let mut roll = self.rng.gen_range(0..100);
            let kind = bounds
                .iter()
                .position(|&share| {
                    let hit = roll < share;
                    roll = roll.saturating_sub(share);
                    hit
                })
                .unwrap_or(0);
            let record = if kind == INSERT {
                self.ctx.records.reserve()
            } else {
                chooser.next(&mut self.rng, self.ctx.records.readable())
            };
            make_key(fnv1a64(record), &mut self.key);
            match kind {
                READ => self.counted_get()?,
                UPDATE => self.counted_put()?,
                INSERT => {
                    self.counted_put()?;
                    self.ctx.records.acknowledge(record);
                }
                SCAN => self.ycsb_scan()?,
                _ => {
                    self.counted_get()?;
                    self.counted_put()?;
                }
            }
            self.stats.kinds[kind] += 1;
            self.stats.finished_op(t)?;
        }
        Ok(())
    }

    /// YCSB's scan: from the current key, 1..=100 records.
    fn ycsb_scan(&mut self) -> OpResult {
        let length = self.rng.gen_range(1..=MAX_SCAN_LENGTH);
        let mut it = self.ctx.db.cursor();
        it.seek(&self.key);
        if it.valid() && it.key() == self.key.as_slice() {
            self.stats.found += 1;
        }
        let mut read = 0;
        while it.valid() && read < length {
            self.stats.bytes += (it.key().len() + it.value().len()) as u64;
            read += 1;
            it.next();
        }
        it.status()?;
        Ok(())
    }
}

/// Indexes of YCSB's operation kinds in `Stats::kinds`.
const READ: usize = 0;
const UPDATE: usize = 1;
const INSERT: usize = 2;
const SCAN: usize = 3;
