//! RocksDB behind [`Engine`] (feature `rocksdb`): a current release compiled
//! optimized by the `rocksdb` crate, so it runs the very workload generator
//! Strata runs, in the same process. Every engine flag is translated to the
//! RocksDB option of the same name, as `--compare_with_rocksdb` passes them to
//! db_bench.

use std::path::Path;

use rocksdb::statistics::{StatsLevel, Ticker};
use rocksdb::{
    BlockBasedIndexType, BlockBasedOptions, Cache, ChecksumType, DBCompactionStyle,
    DBCompressionType, DBRawIteratorWithThreadMode, LruCacheOptions, Options, ReadOptions,
    SliceTransform, WaitForCompactOptions, WriteBatch, WriteOptions, DB,
};
use strata::CompactionStyle;

use super::{Cursor, Engine, OpError, OpResult, SstFill};
use crate::flags::blob::BlobFlags;
use crate::flags::Flags;
use crate::report::WriteCounters;

/// One open RocksDB database and the options every operation uses.
pub struct RocksEngine {
    db: DB,
    write_options: WriteOptions,
    /// The point reads' options, made once: creating them is an allocation
    /// through the C API, which a per-get copy would charge to RocksDB.
    read_options: ReadOptions,
    /// What iterators' options are made from.
    read_flags: ReadFlags,
    /// A copy of the options opened with: it shares their statistics, whose
    /// tickers give the write counters.
    options: Options,
}

/// The options of every database a run opens: one statistics object and one
/// block cache live in them across reopens, as in db_bench.
pub struct RocksEnv {
    options: Options,
    /// Kept alive with the options that point at it.
    _cache: Option<Cache>,
}

fn codec(c: strata::CompressionType) -> DBCompressionType {
    match c {
        strata::CompressionType::None => DBCompressionType::None,
        strata::CompressionType::Snappy => DBCompressionType::Snappy,
        strata::CompressionType::Lz4 => DBCompressionType::Lz4,
        strata::CompressionType::Zstd { .. } => DBCompressionType::Zstd,
    }
}

fn checksum(c: strata::ChecksumType) -> ChecksumType {
    match c {
        strata::ChecksumType::Crc32c => ChecksumType::CRC32c,
        strata::ChecksumType::Xxh3 => ChecksumType::XXH3,
    }
}

fn int(name: &str, value: usize) -> Result<i32, String> {
    i32::try_from(value).map_err(|_| format!("--{name}={value} is too large for RocksDB"))
}

/// The RocksDB options `flags` ask for.
fn options(flags: &Flags) -> Result<(Options, Option<Cache>), String> {
    let c = &flags.compaction;
    let mut o = Options::default();
    o.create_if_missing(!flags.use_existing_db);
    if let Some(name) = &flags.merge_operator {
        // RocksDB's built-in operators are not reachable through the C API
        // the crate wraps, so both engines run the same operator code: this
        // one through a callback, which costs RocksDB a call across the FFI
        // per merge.
        let operator = strata::merge_operator_from_name(name).map_err(|e| e.to_string())?;
        let class = operator.name().to_string();
        o.set_merge_operator_associative(
            &class,
            move |key: &[u8], existing: Option<&[u8]>, operands: &rocksdb::MergeOperands| {
                let operands: Vec<&[u8]> = operands.iter().collect();
                operator.full_merge(key, existing, &operands).ok()
            },
        );
    }
    o.set_write_buffer_size(flags.write_buffer_size);
    o.set_max_write_buffer_number(int(
        "max_write_buffer_number",
        flags.max_write_buffer_number,
    )?);
    o.set_num_levels(int("num_levels", c.num_levels)?);
    o.set_level_zero_file_num_compaction_trigger(int(
        "level0_file_num_compaction_trigger",
        c.level0_file_num_compaction_trigger,
    )?);
    o.set_level_zero_slowdown_writes_trigger(int(
        "level0_slowdown_writes_trigger",
        c.level0_slowdown_writes_trigger,
    )?);
    o.set_level_zero_stop_writes_trigger(int(
        "level0_stop_writes_trigger",
        c.level0_stop_writes_trigger,
    )?);
    o.set_max_bytes_for_level_base(c.max_bytes_for_level_base);
    o.set_max_bytes_for_level_multiplier(c.max_bytes_for_level_multiplier);
    o.set_level_compaction_dynamic_level_bytes(c.level_compaction_dynamic_level_bytes);
    o.set_target_file_size_base(c.target_file_size_base);
    o.set_max_background_jobs(int("max_background_jobs", c.max_background_jobs)?);
    o.set_manual_wal_flush(flags.manual_wal_flush);
    o.set_max_subcompactions(c.max_subcompactions);
    o.set_disable_auto_compactions(c.disable_auto_compactions);
    o.set_compaction_style(match c.compaction_style {
        CompactionStyle::Level => DBCompactionStyle::Level,
        CompactionStyle::Universal => DBCompactionStyle::Universal,
        CompactionStyle::Fifo => DBCompactionStyle::Fifo,
    });
    o.set_compression_type(codec(flags.compression_type));
    if let Ok(min) = usize::try_from(flags.min_level_to_compress) {
        let per_level: Vec<DBCompressionType> = (0..c.num_levels)
            .map(|level| {
                if level < min {
                    DBCompressionType::None
                } else {
                    codec(flags.compression_type)
                }
            })
            .collect();
        o.set_compression_per_level(&per_level);
    }
    o.set_max_open_files(i32::try_from(flags.open_files).unwrap_or(-1));
    o.set_allow_mmap_reads(flags.mmap_read);
    o.set_use_direct_reads(flags.use_direct_reads);
    o.set_use_direct_io_for_flush_and_compaction(flags.use_direct_io_for_flush_and_compaction);
    // Write amplification comes from the tickers, so statistics are always
    // on; without --statistics only the per-core tickers (no timers, no
    // histograms), the cheapest level.
    o.enable_statistics();
    o.set_statistics_level(if flags.statistics {
        StatsLevel::ExceptDetailedTimers
    } else {
        StatsLevel::ExceptHistogramOrTimers
    });

    let mut table = BlockBasedOptions::default();
    table.set_block_size(flags.block_size);
    table.set_block_restart_interval(int("block_restart_interval", flags.block_restart_interval)?);
    if flags.bloom_bits > 0.0 {
        table.set_bloom_filter(flags.bloom_bits, false);
    }
    table.set_whole_key_filtering(flags.whole_key_filtering);
    if flags.prefix_size > 0 {
        o.set_prefix_extractor(SliceTransform::create_fixed_prefix(flags.prefix_size));
    }
    o.set_memtable_prefix_bloom_ratio(flags.memtable_bloom_size_ratio);
    o.set_memtable_whole_key_filtering(flags.memtable_whole_key_filtering);
    table.set_checksum_type(checksum(flags.checksum_type));
    table.set_cache_index_and_filter_blocks(flags.cache_index_and_filter_blocks);
    table
        .set_pin_l0_filter_and_index_blocks_in_cache(flags.pin_l0_filter_and_index_blocks_in_cache);
    table.set_pin_top_level_index_and_filter(flags.pin_top_level_index_and_filter);
    // As db_bench: either partition flag asks for the two-level index.
    if flags.partitioned_index() {
        table.set_index_type(BlockBasedIndexType::TwoLevelIndexSearch);
        table.set_partition_filters(flags.partition_index_and_filters);
        table.set_metadata_block_size(flags.metadata_block_size);
    }
    let cache = match flags.cache_size {
        size if size > 0 => {
            let cache = if flags.clock_cache {
                Cache::new_hyper_clock_cache(size as usize, flags.block_size)
            } else {
                let mut lru = LruCacheOptions::default();
                lru.set_capacity(size as usize);
                if let Some(bits) = flags.cache_numshardbits {
                    lru.set_num_shard_bits(bits as i32);
                }
                Cache::new_lru_cache_opts(&lru)
            };
            table.set_block_cache(&cache);
            Some(cache)
        }
        _ => {
            table.disable_cache();
            None
        }
    };
    o.set_block_based_table_factory(&table);
    blob_options(&mut o, &flags.blob, cache.as_ref());
    Ok((o, cache))
}

/// The blob flags on `o` (which keeps the blob cache alive). `blob_file_starting_level`
/// and `prepopulate_blob_cache` have no setter in the crate: they are set
/// by name once the database is open ([`blob_options_by_name`]).
fn blob_options(o: &mut Options, b: &BlobFlags, block_cache: Option<&Cache>) {
    o.set_enable_blob_files(b.enable_blob_files);
    o.set_min_blob_size(b.min_blob_size);
    o.set_blob_file_size(b.blob_file_size);
    o.set_blob_compression_type(codec(b.blob_compression_type));
    o.set_enable_blob_gc(b.enable_blob_garbage_collection);
    o.set_blob_gc_age_cutoff(b.blob_garbage_collection_age_cutoff);
    o.set_blob_gc_force_threshold(b.blob_garbage_collection_force_threshold);
    o.set_blob_compaction_readahead_size(b.blob_compaction_readahead_size);
    if !b.use_blob_cache {
        return;
    }
    match (b.use_shared_block_and_blob_cache, block_cache) {
        (true, Some(shared)) => o.set_blob_cache(shared),
        _ => o.set_blob_cache(&Cache::new_lru_cache(b.blob_cache_size)),
    }
}

/// The blob options the crate has no setter for, as `SetOptions` pairs.
fn blob_options_by_name(b: &BlobFlags) -> [(&'static str, String); 2] {
    [
        (
            "blob_file_starting_level",
            b.blob_file_starting_level.to_string(),
        ),
        (
            "prepopulate_blob_cache",
            if b.prepopulate_blob_cache == 1 {
                "kFlushOnly"
            } else {
                "kDisable"
            }
            .to_owned(),
        ),
    ]
}

fn op_error(e: rocksdb::Error) -> OpError {
    Box::new(e)
}

fn read_options(flags: &ReadFlags) -> ReadOptions {
    let mut r = ReadOptions::default();
    r.set_verify_checksums(flags.verify_checksums);
    r.set_prefix_same_as_start(flags.prefix_same_as_start);
    r.set_total_order_seek(flags.total_order_seek);
    r
}

/// The flags every read's options come from.
#[derive(Debug, Clone, Copy)]
struct ReadFlags {
    verify_checksums: bool,
    prefix_same_as_start: bool,
    total_order_seek: bool,
}

impl Engine for RocksEngine {
    type Env = RocksEnv;
    type Batch = WriteBatch;
    type Cursor<'a> = DBRawIteratorWithThreadMode<'a, DB>;

    fn describe() -> String {
        "RocksDB (rocksdb crate 0.25, librocksdb-sys 0.19 = RocksDB 11.8.1, optimized, \
         in process; LRU pools at RocksDB's defaults)"
            .into()
    }

    fn env(flags: &Flags) -> Result<RocksEnv, String> {
        let (options, cache) = options(flags)?;
        Ok(RocksEnv {
            options,
            _cache: cache,
        })
    }

    fn open(flags: &Flags, dir: &Path, env: &RocksEnv) -> Result<Self, String> {
        // Naming the default column family gives a handle to it, which the
        // batched MultiGet needs. Its options must be named with it:
        // `DB::open_cf` would open it with `Options::default()` (no bloom
        // filter, default memtable and table settings, no merge operator),
        // whatever `env.options` says.
        let db = DB::open_cf_with_opts(
            &env.options,
            dir,
            [(rocksdb::DEFAULT_COLUMN_FAMILY_NAME, env.options.clone())],
        )
        .map_err(|e| format!("opening {}: {e}", dir.display()))?;
        let by_name = blob_options_by_name(&flags.blob);
        let pairs: Vec<(&str, &str)> = by_name.iter().map(|(k, v)| (*k, v.as_str())).collect();
        db.set_options(&pairs)
            .map_err(|e| format!("setting blob options on {}: {e}", dir.display()))?;
        let mut write_options = WriteOptions::default();
        write_options.set_sync(flags.sync);
        write_options.disable_wal(flags.disable_wal);
        let read_flags = ReadFlags {
            verify_checksums: flags.verify_checksum,
            prefix_same_as_start: flags.prefix_same_as_start,
            total_order_seek: flags.total_order_seek,
        };
        Ok(RocksEngine {
            db,
            write_options,
            read_options: read_options(&read_flags),
            read_flags,
            options: env.options.clone(),
        })
    }

    /// RocksDB's own `DestroyDB`, which removes only RocksDB's files.
    fn destroy(_flags: &Flags, dir: &Path, env: &RocksEnv) -> Result<(), String> {
        if !dir.join("CURRENT").exists() {
            return Ok(());
        }
        DB::destroy(&env.options, dir).map_err(|e| format!("destroying {}: {e}", dir.display()))
    }

    fn close(self) -> Result<(), String> {
        // db_bench's close: with the WAL off, unflushed writes would be lost.
        self.db.flush_wal(true).map_err(|e| e.to_string())?;
        drop(self.db);
        Ok(())
    }

    fn statistics(env: &RocksEnv) -> Option<String> {
        env.options.get_statistics()
    }

    fn new_batch(&self) -> WriteBatch {
        WriteBatch::default()
    }

    fn batch_put(&self, batch: &mut WriteBatch, key: &[u8], value: &[u8]) -> OpResult {
        batch.put(key, value);
        Ok(())
    }

    fn batch_delete(&self, batch: &mut WriteBatch, key: &[u8]) -> OpResult {
        batch.delete(key);
        Ok(())
    }

    fn batch_delete_range(&self, batch: &mut WriteBatch, begin: &[u8], end: &[u8]) -> OpResult {
        batch.delete_range(begin, end);
        Ok(())
    }

    fn write(&self, batch: WriteBatch) -> OpResult {
        self.db
            .write_opt(batch, &self.write_options)
            .map_err(op_error)
    }

    fn merge(&self, key: &[u8], operand: &[u8]) -> OpResult {
        self.db
            .merge_opt(key, operand, &self.write_options)
            .map_err(op_error)
    }

    fn write_sst(&self, path: &Path, fill: &mut SstFill<'_>) -> OpResult {
        let writer = rocksdb::SstFileWriter::create(&self.options);
        let mut writer = writer;
        writer.open(path).map_err(op_error)?;
        fill(&mut |key, value| writer.put(key, value).map_err(op_error))?;
        writer.finish().map_err(op_error)
    }

    fn perf_begin(level: u32) {
        use rocksdb::perf::{set_perf_stats, PerfContext, PerfStatsLevel};
        let level = match level {
            2 => PerfStatsLevel::EnableCount,
            3 => PerfStatsLevel::EnableTimeExceptForMutex,
            4 => PerfStatsLevel::EnableTimeAndCPUTimeExceptForMutex,
            _ => PerfStatsLevel::EnableTime,
        };
        set_perf_stats(level);
        // A handle on this thread's context.
        PerfContext::default().reset();
    }

    fn perf_report() -> Option<String> {
        use rocksdb::perf::{set_perf_stats, PerfContext, PerfStatsLevel};
        let report = PerfContext::default().report(false);
        set_perf_stats(PerfStatsLevel::Disable);
        Some(report)
    }

    fn ingest(&self, paths: &[std::path::PathBuf]) -> OpResult {
        let options = rocksdb::IngestExternalFileOptions::default();
        self.db
            .ingest_external_file_opts(&options, paths.to_vec())
            .map_err(op_error)
    }

    fn put(&self, key: &[u8], value: &[u8]) -> OpResult {
        self.db
            .put_opt(key, value, &self.write_options)
            .map_err(op_error)
    }

    /// A pinned read, as db_bench's: no copy of the value.
    fn get(&self, key: &[u8]) -> OpResult<Option<usize>> {
        let got = self
            .db
            .get_pinned_opt(key, &self.read_options)
            .map_err(op_error)?;
        Ok(got.map(|v| v.len()))
    }

    /// RocksDB's batched MultiGet on the default column family.
    fn multi_get(&self, keys: &[Vec<u8>]) -> OpResult<Vec<Option<usize>>> {
        let cf = self
            .db
            .cf_handle(rocksdb::DEFAULT_COLUMN_FAMILY_NAME)
            .ok_or("rocksdb: no default column family")?;
        self.db
            .batched_multi_get_cf_opt(cf, keys, false, &self.read_options)
            .into_iter()
            .map(|got| Ok(got.map_err(op_error)?.map(|v| v.len())))
            .collect()
    }

    fn cursor(&self) -> DBRawIteratorWithThreadMode<'_, DB> {
        // The iterator takes its options by value.
        self.db.raw_iterator_opt(read_options(&self.read_flags))
    }

    fn flush(&self) -> OpResult {
        self.db.flush().map_err(op_error)
    }

    fn compact_all(&self) -> OpResult {
        self.db.compact_range(None::<&[u8]>, None::<&[u8]>);
        Ok(())
    }

    fn wait_for_compaction(&self) -> OpResult {
        self.db
            .wait_for_compact(&WaitForCompactOptions::default())
            .map_err(op_error)
    }

    fn report(&self, property: &str) -> Option<String> {
        let name = format!("rocksdb.{}", property.strip_prefix("strata.")?);
        self.db.property_value(name.as_str()).ok().flatten()
    }

    fn write_counters(&self) -> Option<WriteCounters> {
        let ticker = |t| self.options.get_ticker_count(t);
        Some(WriteCounters {
            ingest: ticker(Ticker::BytesWritten),
            wal: ticker(Ticker::WalFileBytes),
            tables: ticker(Ticker::FlushWriteBytes) + ticker(Ticker::CompactWriteBytes),
        })
    }
}

impl Cursor for DBRawIteratorWithThreadMode<'_, DB> {
    fn seek(&mut self, key: &[u8]) {
        DBRawIteratorWithThreadMode::seek(self, key);
    }
    fn seek_for_prev(&mut self, key: &[u8]) {
        DBRawIteratorWithThreadMode::seek_for_prev(self, key);
    }
    fn seek_to_first(&mut self) {
        DBRawIteratorWithThreadMode::seek_to_first(self);
    }
    fn seek_to_last(&mut self) {
        DBRawIteratorWithThreadMode::seek_to_last(self);
    }
    fn valid(&self) -> bool {
        DBRawIteratorWithThreadMode::valid(self)
    }
    fn key(&self) -> &[u8] {
        DBRawIteratorWithThreadMode::key(self).unwrap_or_default()
    }
    fn value(&self) -> &[u8] {
        DBRawIteratorWithThreadMode::value(self).unwrap_or_default()
    }
    fn next(&mut self) {
        DBRawIteratorWithThreadMode::next(self);
    }
    fn prev(&mut self) {
        DBRawIteratorWithThreadMode::prev(self);
    }
    fn status(&self) -> OpResult {
        DBRawIteratorWithThreadMode::status(self).map_err(op_error)
    }
}
