//! fjall, the Rust peer, behind [`Engine`] (feature `fjall`): one keyspace
//! holds the benchmark's keys. fjall has no WAL switch, compresses with lz4
//! or nothing, checksums with xxh3 and keeps no per-benchmark byte counters,
//! so `--disable_wal` and other codecs are refused rather than silently
//! changed, and no write amplification is reported.

use std::path::Path;
use std::time::{Duration, Instant};

use fjall::compaction::Leveled;
use fjall::config::{
    BlockSizePolicy, BloomConstructionPolicy, CompressionPolicy, FilterPolicy, FilterPolicyEntry,
    RestartIntervalPolicy,
};
use fjall::{CompressionType, Database, Keyspace, KeyspaceCreateOptions, OwnedWriteBatch};
use fjall::{PersistMode, UserKey, UserValue};

use super::{Cursor, Engine, OpError, OpResult};
use crate::flags::Flags;
use crate::report::WriteCounters;

/// The keyspace every benchmark reads and writes.
const KEYSPACE: &str = "bench";

/// One open fjall database and its benchmark keyspace.
pub struct FjallEngine {
    db: Database,
    keyspace: Keyspace,
    sync: bool,
    /// `--manual_wal_flush`: leave writes in fjall's journal buffer (fjall's
    /// default) instead of handing each to the OS as RocksDB and Strata do.
    manual_wal_flush: bool,
}

impl FjallEngine {
    /// What each write makes of the journal: synced, handed to the OS (the
    /// durability of the other engines' default: a killed process loses
    /// nothing), or left in the process.
    fn persist_mode(&self) -> Option<PersistMode> {
        match (self.sync, self.manual_wal_flush) {
            (true, _) => Some(PersistMode::SyncAll),
            (false, false) => Some(PersistMode::Buffer),
            (false, true) => None,
        }
    }
}

/// The flags fjall cannot honour are refused here, before anything runs.
fn check_flags(flags: &Flags) -> Result<(), String> {
    if flags.disable_wal {
        return Err("--engine=fjall: fjall always journals; drop --disable_wal".into());
    }
    match flags.compression_type {
        strata::CompressionType::None | strata::CompressionType::Lz4 => Ok(()),
        _ => Err("--engine=fjall: fjall compresses with lz4 or not at all; \
             pass --compression_type=lz4 or none"
            .into()),
    }
}

/// `--compression_type` from `--min_level_to_compress` on, as for Strata.
fn compression_policy(flags: &Flags) -> CompressionPolicy {
    let codec = match flags.compression_type {
        strata::CompressionType::Lz4 => CompressionType::Lz4,
        _ => CompressionType::None,
    };
    let Ok(min) = usize::try_from(flags.min_level_to_compress) else {
        return CompressionPolicy::all(codec);
    };
    let levels = flags.compaction.num_levels.clamp(1, 255);
    CompressionPolicy::new(
        (0..levels)
            .map(|level| {
                if level < min {
                    CompressionType::None
                } else {
                    codec
                }
            })
            .collect::<Vec<_>>(),
    )
}

fn keyspace_options(flags: &Flags) -> KeyspaceCreateOptions {
    let filter = if flags.bloom_bits > 0.0 {
        FilterPolicy::all(FilterPolicyEntry::Bloom(
            BloomConstructionPolicy::BitsPerKey(flags.bloom_bits as f32),
        ))
    } else {
        FilterPolicy::disabled()
    };
    let compaction = &flags.compaction;
    let leveled = Leveled::default()
        .with_l0_threshold(compaction.level0_file_num_compaction_trigger.clamp(1, 255) as u8)
        .with_table_target_size(compaction.target_file_size_base)
        .with_level_ratio_policy(vec![compaction.max_bytes_for_level_multiplier as f32]);
    KeyspaceCreateOptions::default()
        .max_memtable_size(flags.write_buffer_size as u64)
        .data_block_size_policy(BlockSizePolicy::all(flags.block_size as u32))
        .data_block_restart_interval_policy(RestartIntervalPolicy::all(
            flags.block_restart_interval.clamp(1, 255) as u8,
        ))
        .filter_policy(filter)
        .data_block_compression_policy(compression_policy(flags))
        .compaction_strategy(std::sync::Arc::new(leveled))
}

fn op_error(e: fjall::Error) -> OpError {
    Box::new(e)
}

impl Engine for FjallEngine {
    type Env = ();
    type Batch = OwnedWriteBatch;
    type Cursor<'a> = FjallCursor;

    fn describe() -> String {
        "fjall 3.1 (crate, in process; leveled compaction, xxh3 checksums)".into()
    }

    fn env(flags: &Flags) -> Result<(), String> {
        check_flags(flags)
    }

    fn open(flags: &Flags, dir: &Path, _env: &()) -> Result<Self, String> {
        let opening = |e: fjall::Error| format!("opening {}: {e}", dir.display());
        let db = Database::builder(dir)
            .cache_size(flags.cache_size.max(0) as u64)
            .worker_threads(flags.compaction.max_background_jobs.max(1))
            .open()
            .map_err(opening)?;
        let keyspace = db
            .keyspace(KEYSPACE, || keyspace_options(flags))
            .map_err(opening)?;
        Ok(FjallEngine {
            db,
            keyspace,
            sync: flags.sync,
            manual_wal_flush: flags.manual_wal_flush,
        })
    }

    /// Removes fjall's files (its version marker, lock, journals and
    /// keyspaces), only where the version marker shows a fjall database.
    fn destroy(_flags: &Flags, dir: &Path, _env: &()) -> Result<(), String> {
        if !dir.join("version").is_file() {
            return Ok(());
        }
        let entries =
            std::fs::read_dir(dir).map_err(|e| format!("listing {}: {e}", dir.display()))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("listing {}: {e}", dir.display()))?;
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let removed = if name == "keyspaces" {
                std::fs::remove_dir_all(&path)
            } else if name == "version" || name == "lock" || name.ends_with(".jnl") {
                std::fs::remove_file(&path)
            } else {
                continue;
            };
            removed.map_err(|e| format!("removing {}: {e}", path.display()))?;
        }
        Ok(())
    }

    fn close(self) -> Result<(), String> {
        self.db
            .persist(PersistMode::SyncAll)
            .map_err(|e| e.to_string())
    }

    fn statistics(_env: &()) -> Option<String> {
        None
    }

    fn new_batch(&self) -> OwnedWriteBatch {
        self.db.batch().durability(self.persist_mode())
    }

    fn batch_put(&self, batch: &mut OwnedWriteBatch, key: &[u8], value: &[u8]) -> OpResult {
        batch.insert(&self.keyspace, key, value);
        Ok(())
    }

    fn batch_delete(&self, batch: &mut OwnedWriteBatch, key: &[u8]) -> OpResult {
        batch.remove(&self.keyspace, key);
        Ok(())
    }

    fn batch_delete_range(&self, _: &mut OwnedWriteBatch, _: &[u8], _: &[u8]) -> OpResult {
        Err("--engine=fjall: fjall has no delete_range; drop --writes_per_range_tombstone".into())
    }

    fn write(&self, batch: OwnedWriteBatch) -> OpResult {
        batch.commit().map_err(op_error)
    }

    fn merge(&self, _key: &[u8], _operand: &[u8]) -> OpResult {
        Err("fjall has no merge operator; the merge benchmarks run on strata and rocksdb".into())
    }

    fn put(&self, key: &[u8], value: &[u8]) -> OpResult {
        if self.sync {
            let mut batch = self.new_batch();
            batch.insert(&self.keyspace, key, value);
            return batch.commit().map_err(op_error);
        }
        self.keyspace.insert(key, value).map_err(op_error)
    }

    fn get(&self, key: &[u8]) -> OpResult<Option<usize>> {
        Ok(self.keyspace.get(key).map_err(op_error)?.map(|v| v.len()))
    }

    /// fjall has no batched read: one get per key.
    fn multi_get(&self, keys: &[Vec<u8>]) -> OpResult<Vec<Option<usize>>> {
        keys.iter().map(|k| self.get(k)).collect()
    }

    fn cursor(&self) -> FjallCursor {
        FjallCursor {
            keyspace: self.keyspace.clone(),
            iter: None,
            forward: true,
            current: None,
            error: None,
        }
    }

    fn flush(&self) -> OpResult {
        self.keyspace.rotate_memtable_and_wait().map_err(op_error)
    }

    fn compact_all(&self) -> OpResult {
        self.keyspace.major_compact().map_err(op_error)
    }

    /// fjall reports running flushes and compactions, not pending ones: idle
    /// is taken as both at zero for 100 ms in a row.
    fn wait_for_compaction(&self) -> OpResult {
        let mut idle_since: Option<Instant> = None;
        loop {
            let busy = self.db.outstanding_flushes() > 0 || self.db.active_compactions() > 0;
            match (busy, idle_since) {
                (true, _) => idle_since = None,
                (false, None) => idle_since = Some(Instant::now()),
                (false, Some(t)) if t.elapsed() >= Duration::from_millis(100) => return Ok(()),
                (false, Some(_)) => {}
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn report(&self, _property: &str) -> Option<String> {
        None
    }

    fn write_counters(&self) -> Option<WriteCounters> {
        None
    }
}

/// A fjall range iterator, restarted at every seek, one direction at a time.
pub struct FjallCursor {
    keyspace: Keyspace,
    iter: Option<fjall::Iter>,
    forward: bool,
    current: Option<(UserKey, UserValue)>,
    error: Option<String>,
}

impl FjallCursor {
    fn start(&mut self, iter: fjall::Iter, forward: bool) {
        self.iter = Some(iter);
        self.forward = forward;
        self.error = None;
        self.step();
    }

    /// Moves to the next entry in the iterator's direction.
    fn step(&mut self) {
        let item = match self.iter.as_mut() {
            Some(iter) if self.forward => iter.next(),
            Some(iter) => iter.next_back(),
            None => None,
        };
        self.current = match item.map(|guard| guard.into_inner()) {
            Some(Ok(pair)) => Some(pair),
            Some(Err(e)) => {
                self.error = Some(e.to_string());
                None
            }
            None => None,
        };
    }

    fn step_towards(&mut self, forward: bool) {
        if forward == self.forward {
            self.step();
        } else {
            self.current = None;
            self.error = Some("fjall cursor: a change of direction needs a new seek".into());
        }
    }
}

impl Cursor for FjallCursor {
    fn seek(&mut self, key: &[u8]) {
        let iter = self.keyspace.range(key..);
        self.start(iter, true);
    }
    fn seek_for_prev(&mut self, key: &[u8]) {
        let iter = self.keyspace.range(..=key);
        self.start(iter, false);
    }
    fn seek_to_first(&mut self) {
        let iter = self.keyspace.iter();
        self.start(iter, true);
    }
    fn seek_to_last(&mut self) {
        let iter = self.keyspace.iter();
        self.start(iter, false);
    }
    fn valid(&self) -> bool {
        self.current.is_some()
    }
    fn key(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |(k, _)| k)
    }
    fn value(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |(_, v)| v)
    }
    fn next(&mut self) {
        self.step_towards(true);
    }
    fn prev(&mut self) {
        self.step_towards(false);
    }
    fn status(&self) -> OpResult {
        match &self.error {
            Some(e) => Err(e.clone().into()),
            None => Ok(()),
        }
    }
}
