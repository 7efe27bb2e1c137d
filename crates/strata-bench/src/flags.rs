//! Command-line flags, parsed by hand so that they behave exactly like db_bench's
//! gflags: `--name=value` and `-name=value` both work, booleans take
//! `0/1/true/false` (and gflags' `yes/no/t/f/y/n`), a bare `--bool` means true and
//! `--nobool` means false. Names, meanings and defaults are db_bench's, so one
//! command line runs against both engines; where Strata differs the help says so.

pub mod blob;
mod help;
mod parse;

pub use help::usage;

use std::fmt;
use std::path::PathBuf;

use std::sync::Arc;

use strata::cache::clock::{ClockCache, ClockOptions};
use strata::cache::lru::{LruCache, LruOptions};
use strata::cache::Cache;
use strata::{
    ChecksumType, CompactionOptions, CompressionType, DbOptions, IndexType, TableOptions,
};
use strata::{PrefixExtractor, ReadOptions};

use crate::generator::make_prefixed_key;

pub use parse::parse;

/// The benchmarks this tool knows, by db_bench name.
pub const KNOWN_BENCHMARKS: &[&str] = &[
    "fillseq",
    "fillrandom",
    "filluniquerandom",
    "overwrite",
    "updaterandom",
    "deleterandom",
    "readrandom",
    "readmissing",
    "readhot",
    "multireadrandom",
    "readseq",
    "readreverse",
    "seekrandom",
    "fwdrange",
    "revrange",
    "readrandomwriterandom",
    "mergerandom",
    "readrandommergerandom",
    "readwhilewriting",
    "seekrandomwhilewriting",
    "fwdrangewhilewriting",
    "revrangewhilewriting",
    "crc32c",
    "xxhash",
    "xxhash64",
    "xxh3",
    "compress",
    "uncompress",
    "ycsb_load",
    "ycsb_a",
    "ycsb_b",
    "ycsb_c",
    "ycsb_d",
    "ycsb_e",
    "ycsb_f",
    "compact",
    "flush",
    "waitforcompaction",
    "stats",
    "levelstats",
    "sstables",
    "ingest",
];

/// The suite run when `--benchmarks` is not given: db_bench's core benchmarks,
/// short enough for the README's main job (about 30 s after the build here),
/// ending with the compaction stats.
pub const DEFAULT_BENCHMARKS: &str =
    "fillseq,fillrandom,readrandom,readseq,readreverse,seekrandom,overwrite,stats";

/// Used when `--seed=0`. db_bench (RocksDB 7.x) derives seed 0 from the clock;
/// Strata keeps runs reproducible instead and uses LevelDB's fixed seed.
pub const DEFAULT_SEED: u64 = 301;

/// Every setting of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Flags {
    pub benchmarks: Vec<String>,
    pub num: u64,
    /// Table files the `ingest` benchmark writes the keys into.
    pub ingest_files: u64,
    /// Already resolved: a negative `--reads` means `num`, as in db_bench.
    pub reads: u64,
    pub key_size: usize,
    pub value_size: usize,
    pub threads: usize,
    /// `None`: a temporary directory removed at exit.
    pub db: Option<PathBuf>,
    pub use_existing_db: bool,
    pub disable_wal: bool,
    /// Writes wait in the WAL's buffer instead of reaching the OS one by one
    /// (db_bench's and RocksDB's `manual_wal_flush`).
    pub manual_wal_flush: bool,
    pub sync: bool,
    /// Column families the keys are spread over: key `n` goes to family
    /// `n % num_column_families` (db_bench's mapping); scans read the
    /// default family only, as db_bench's do.
    pub num_column_families: usize,
    /// Already resolved: `--seed=0` becomes [`DEFAULT_SEED`].
    pub seed: u64,
    pub write_buffer_size: usize,
    pub max_write_buffer_number: usize,
    pub block_size: usize,
    /// Keys between restart points in data blocks (db_bench's default 16).
    pub block_restart_interval: usize,
    /// Already resolved: db_bench's `-1` (no filter) becomes 0.
    pub bloom_bits: f64,
    pub compression_type: CompressionType,
    pub checksum_type: ChecksumType,
    pub mmap_read: bool,
    pub use_direct_reads: bool,
    pub use_direct_io_for_flush_and_compaction: bool,
    pub histogram: bool,
    pub compression_ratio: f64,
    /// Compaction settings: `--compaction_style`, level sizes, triggers,
    /// `--max_background_jobs`; the engine's defaults otherwise.
    pub compaction: CompactionOptions,
    /// db_bench's `--min_level_to_compress`: levels below it are written
    /// uncompressed (-1: every level uses `--compression_type`).
    pub min_level_to_compress: i64,
    /// Print the engine's statistics once, at the end (`--statistics`).
    pub statistics: bool,
    /// RocksDB's `PerfLevel` number for the benchmark threads (1: off).
    pub perf_level: u32,
    /// Serve the web view of the database under test here (Strata only).
    pub http_addr: Option<String>,
    /// Block cache bytes (db_bench's default 8 MiB); negative: no cache.
    pub cache_size: i64,
    /// `None` (db_bench's -1): the engine picks the shard count.
    pub cache_numshardbits: Option<u32>,
    pub cache_high_pri_pool_ratio: f64,
    pub cache_low_pri_pool_ratio: f64,
    /// db_bench's `--open_files` (the engine's `max_open_files`); -1: no limit.
    pub open_files: i64,
    pub cache_index_and_filter_blocks: bool,
    /// db_bench's blob flags.
    pub blob: blob::BlobFlags,
    pub pin_l0_filter_and_index_blocks_in_cache: bool,
    /// db_bench's default false (the engine's is true): pin the top level of
    /// partitioned index and filters in the cache.
    pub pin_top_level_index_and_filter: bool,
    /// db_bench's `--partition_index`: a two-level index (`kTwoLevelIndexSearch`).
    pub partition_index: bool,
    /// db_bench's `--partition_index_and_filters`: a two-level index and
    /// partitioned filters.
    pub partition_index_and_filters: bool,
    /// Target size of index and filter partitions (db_bench's default 4096).
    pub metadata_block_size: usize,
    /// Strata's own `--file_index_prefix_cache` (default true): search each
    /// level's files through the key-prefix cache; false for full compares.
    pub file_index_prefix_cache: bool,
    /// db_bench's `--multiread_batched` (default false): multireadrandom
    /// reads through the engine's batched `multi_get`, else key by key.
    pub multiread_batched: bool,
    /// db_bench's `--prefix_size` (0: none): the engines' prefix extractor
    /// takes this many bytes (`fixed:N`), and with `--keys_per_prefix` keys
    /// start with a prefix number.
    pub prefix_size: usize,
    /// db_bench's `--keys_per_prefix` (0: keys have no prefix number).
    pub keys_per_prefix: u64,
    /// db_bench's `--memtable_bloom_size_ratio` (RocksDB's
    /// `memtable_prefix_bloom_size_ratio`).
    pub memtable_bloom_size_ratio: f64,
    pub whole_key_filtering: bool,
    pub memtable_whole_key_filtering: bool,
    /// Iterator reads stay inside the seek target's prefix (ReadOptions).
    pub prefix_same_as_start: bool,
    /// Iterator seeks never use prefix filters (ReadOptions).
    pub total_order_seek: bool,
    /// db_bench's `--seek_missing_prefix`: seekrandom seeks into prefixes
    /// no key has (byte 8 of the key, '0' padding of a prefix longer than 8
    /// bytes, becomes '1').
    pub seek_missing_prefix: bool,
    /// `--cache_type=clock_cache` (else lru_cache).
    pub clock_cache: bool,
    /// Seconds after which a benchmark stops early (0: run the full count).
    pub duration: u64,
    /// Keys per write batch, and per multi_get in multireadrandom.
    pub batch_size: usize,
    /// Every N-th write of a fill (and of the `*whilewriting` writer) also
    /// writes a range tombstone (db_bench's); 0: never.
    pub writes_per_range_tombstone: u64,
    /// Keys each range tombstone covers, from a random key on.
    pub range_tombstone_width: u64,
    /// Range tombstones written per thread and benchmark at most.
    pub max_num_range_tombstones: u64,
    /// Entries read after each seek of seekrandom (db_bench's default 0).
    pub seek_nexts: u64,
    /// seekrandom seeks backward (seek_for_prev, then prev).
    pub reverse_iterator: bool,
    /// Percent of readrandomwriterandom's operations that are reads.
    pub readwritepercent: u32,
    /// readrandommergerandom's share of gets, in percent (db_bench's 70).
    pub mergereadpercent: u32,
    /// The merge operator of the merge benchmarks (uint64add, stringappend,
    /// max, put); none by default, as in db_bench.
    pub merge_operator: Option<String>,
    /// Bytes per second of the `*whilewriting` writer; 0: unlimited.
    pub benchmark_write_rate_limit: u64,
    /// An OPTIONS file whose default family's options the database opens
    /// with instead of the option flags (db_bench's `--options_file`).
    pub options_file: Option<std::path::PathBuf>,
    /// Skip options in `--options_file` that Strata lacks instead of failing
    /// (RocksDB's `ignore_unknown_options`).
    pub ignore_unknown_options: bool,
    /// YCSB records to load (0: `--num`).
    pub ycsb_record_count: u64,
    /// YCSB requests per thread (0: `--reads`).
    pub ycsb_operation_count: u64,
    /// Where to write every result as JSON.
    pub report_json: Option<PathBuf>,
    /// Seconds between throughput samples (0: none, unless `--plot`).
    pub report_interval_seconds: u64,
    /// The CSV the samples go to (db_bench's `--report_file`).
    pub report_file: PathBuf,
    /// An SVG of throughput over time, one line per benchmark.
    pub plot: Option<PathBuf>,
    /// RocksDB's db_bench to compare with (`--compare_with_rocksdb[=PATH]`).
    pub compare_with_rocksdb: Option<String>,
    /// Runs per engine in a comparison.
    pub repeat: usize,
    /// Verify data block checksums on reads (db_bench's default true).
    pub verify_checksum: bool,
    /// Print progress every this many seconds (0: never).
    pub stats_interval_seconds: u64,
    /// With it, print the engine's stats at every interval too.
    pub stats_per_interval: bool,
    /// YCSB's `requestdistribution`, overriding each workload's own.
    pub ycsb_request_distribution: Option<crate::ycsb::Distribution>,
    /// The engine the benchmarks drive (`--engine`).
    pub engine: crate::engine::EngineKind,
}

impl Default for Flags {
    fn default() -> Self {
        Flags {
            benchmarks: DEFAULT_BENCHMARKS.split(',').map(String::from).collect(),
            num: 1_000_000,
            ingest_files: 10,
            reads: 1_000_000,
            key_size: 16,
            value_size: 100,
            threads: 1,
            db: None,
            use_existing_db: false,
            disable_wal: false,
            manual_wal_flush: false,
            sync: false,
            num_column_families: 1,
            seed: DEFAULT_SEED,
            write_buffer_size: 64 << 20,
            max_write_buffer_number: 2,
            block_size: 4096,
            block_restart_interval: 16,
            bloom_bits: 0.0,
            compression_type: CompressionType::Snappy,
            checksum_type: ChecksumType::default(),
            mmap_read: false,
            use_direct_reads: false,
            use_direct_io_for_flush_and_compaction: false,
            histogram: false,
            compression_ratio: 0.5,
            compaction: CompactionOptions::default(),
            min_level_to_compress: -1,
            statistics: false,
            perf_level: 1,
            http_addr: None,
            cache_size: 8 << 20,
            cache_numshardbits: None,
            cache_high_pri_pool_ratio: 0.0,
            cache_low_pri_pool_ratio: 0.0,
            open_files: -1,
            cache_index_and_filter_blocks: false,
            blob: blob::BlobFlags::default(),
            pin_l0_filter_and_index_blocks_in_cache: false,
            pin_top_level_index_and_filter: false,
            partition_index: false,
            partition_index_and_filters: false,
            metadata_block_size: 4096,
            file_index_prefix_cache: true,
            multiread_batched: false,
            prefix_size: 0,
            keys_per_prefix: 0,
            memtable_bloom_size_ratio: 0.0,
            whole_key_filtering: true,
            memtable_whole_key_filtering: false,
            prefix_same_as_start: false,
            total_order_seek: false,
            seek_missing_prefix: false,
            clock_cache: false,
            duration: 0,
            batch_size: 1,
            writes_per_range_tombstone: 0,
            range_tombstone_width: 100,
            max_num_range_tombstones: 0,
            seek_nexts: 0,
            reverse_iterator: false,
            readwritepercent: 90,
            mergereadpercent: 70,
            merge_operator: None,
            benchmark_write_rate_limit: 0,
            options_file: None,
            ignore_unknown_options: false,
            ycsb_record_count: 0,
            ycsb_operation_count: 0,
            ycsb_request_distribution: None,
            report_json: None,
            report_interval_seconds: 0,
            report_file: PathBuf::from("report.csv"),
            plot: None,
            compare_with_rocksdb: None,
            repeat: 3,
            verify_checksum: true,
            stats_interval_seconds: 0,
            stats_per_interval: false,
            engine: crate::engine::EngineKind::Strata,
        }
    }
}

impl Flags {
    /// The block cache these flags ask for (shared by every database the run
    /// opens), or `None` for a negative `--cache_size`.
    pub fn block_cache(&self) -> Result<Option<Arc<dyn Cache>>, FlagError> {
        let Ok(capacity) = usize::try_from(self.cache_size) else {
            return Ok(None);
        };
        if self.clock_cache {
            let cache = ClockCache::new(ClockOptions {
                capacity,
                estimated_entry_charge: self.block_size.max(1),
                strict_capacity_limit: false,
            })
            .or_else(|e| err(format!("--cache_*: {e}")))?;
            return Ok(Some(Arc::new(cache)));
        }
        let cache = LruCache::new(LruOptions {
            capacity,
            num_shard_bits: self.cache_numshardbits,
            strict_capacity_limit: false,
            high_pri_pool_ratio: self.cache_high_pri_pool_ratio,
            low_pri_pool_ratio: self.cache_low_pri_pool_ratio,
        })
        .or_else(|e| err(format!("--cache_*: {e}")))?;
        Ok(Some(Arc::new(cache)))
    }

    /// db_bench's key for `n` (see [`make_prefixed_key`]).
    pub fn make_key(&self, n: u64, key: &mut [u8]) {
        make_prefixed_key(n, key, self.prefix_size, self.keys_per_prefix, self.num);
    }

    /// With `--seek_missing_prefix`, turns `key` into one whose prefix no
    /// key has, as db_bench's `GenerateKeyFromIntForSeek` does.
    pub fn miss_prefix(&self, key: &mut [u8]) {
        if self.seek_missing_prefix {
            if let Some(b) = key.get_mut(8) {
                *b = b'1';
            }
        }
    }

    /// The read options of iterators and gets these flags ask for.
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            verify_checksums: self.verify_checksum,
            prefix_same_as_start: self.prefix_same_as_start,
            total_order_seek: self.total_order_seek,
            ..ReadOptions::default()
        }
    }

    /// YCSB's record count: `--ycsb_record_count`, else `--num`.
    pub fn ycsb_records(&self) -> u64 {
        if self.ycsb_record_count > 0 {
            self.ycsb_record_count
        } else {
            self.num
        }
    }

    /// YCSB's requests per thread: `--ycsb_operation_count`, else `--reads`.
    pub fn ycsb_operations(&self) -> u64 {
        if self.ycsb_operation_count > 0 {
            self.ycsb_operation_count
        } else {
            self.reads
        }
    }

    /// A two-level index, as db_bench asks for with either partition flag.
    pub fn partitioned_index(&self) -> bool {
        self.partition_index || self.partition_index_and_filters
    }

    /// The engine options these flags ask for.
    pub fn db_options(&self) -> DbOptions {
        DbOptions {
            // db_bench: `create_if_missing = !FLAGS_use_existing_db`, so a
            // missing DB with --use_existing_db=1 is an error, not an empty run.
            create_if_missing: !self.use_existing_db,
            manual_wal_flush: self.manual_wal_flush,
            write_buffer_size: self.write_buffer_size,
            max_write_buffer_number: self.max_write_buffer_number,
            table: TableOptions {
                block_size: self.block_size,
                block_restart_interval: self.block_restart_interval,
                bloom_bits_per_key: self.bloom_bits,
                whole_key_filtering: self.whole_key_filtering,
                prefix_extractor: (self.prefix_size > 0)
                    .then_some(PrefixExtractor::Fixed(self.prefix_size)),
                compression: self.compression_type,
                checksum: self.checksum_type,
                cache_index_and_filter_blocks: self.cache_index_and_filter_blocks,
                pin_l0_filter_and_index_blocks_in_cache: self
                    .pin_l0_filter_and_index_blocks_in_cache,
                pin_top_level_index_and_filter: self.pin_top_level_index_and_filter,
                index_type: if self.partitioned_index() {
                    IndexType::TwoLevelIndexSearch
                } else {
                    IndexType::BinarySearch
                },
                partition_filters: self.partition_index_and_filters,
                metadata_block_size: self.metadata_block_size,
                ..TableOptions::default()
            },
            compaction: CompactionOptions {
                compression_per_level: self.compression_per_level(),
                ..self.compaction.clone()
            },
            max_open_files: self.open_files,
            file_index_prefix_cache: self.file_index_prefix_cache,
            memtable_prefix_bloom_size_ratio: self.memtable_bloom_size_ratio,
            memtable_whole_key_filtering: self.memtable_whole_key_filtering,
            use_mmap_reads: self.mmap_read,
            use_direct_reads: self.use_direct_reads,
            use_direct_io_for_flush_and_compaction: self.use_direct_io_for_flush_and_compaction,
            ..DbOptions::default()
        }
    }

    /// db_bench's `--min_level_to_compress`: entries below it uncompressed,
    /// the rest `--compression_type`, one entry per level.
    fn compression_per_level(&self) -> Vec<CompressionType> {
        let Ok(min) = usize::try_from(self.min_level_to_compress) else {
            return Vec::new();
        };
        (0..self.compaction.num_levels)
            .map(|level| {
                if level < min {
                    CompressionType::None
                } else {
                    self.compression_type
                }
            })
            .collect()
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Run(Box<Flags>),
    Help,
}

/// A command-line error; the message names the flag at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlagError(pub String);

impl fmt::Display for FlagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FlagError {}

pub(crate) fn err<T>(msg: impl Into<String>) -> Result<T, FlagError> {
    Err(FlagError(msg.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata::CompactionStyle;

    fn run(args: &[&str]) -> Flags {
        match parse(args) {
            Ok(Command::Run(flags)) => *flags,
            other => panic!("{args:?} gave {other:?}"),
        }
    }

    fn error(args: &[&str]) -> String {
        match parse(args) {
            Err(FlagError(msg)) => msg,
            other => panic!("{args:?} gave {other:?}"),
        }
    }

    #[test]
    fn compaction_flags_reach_the_engine_options() {
        let f = run(&[
            "--max_bytes_for_level_base=33554432",
            "-target_file_size_base=8388608",
            "--level_compaction_dynamic_level_bytes=false",
            "--level0_file_num_compaction_trigger=2",
            "--level0_slowdown_writes_trigger=8",
            "--level0_stop_writes_trigger=12",
            "--max_background_jobs=4",
            "--subcompactions=3",
            "--num_levels=5",
            "--compression_type=lz4",
            "--min_level_to_compress=2",
            "--statistics",
            "--benchmarks=fillrandom,waitforcompaction,stats,levelstats,sstables,compact,flush",
        ]);
        let o = f.db_options();
        assert_eq!(o.compaction.max_bytes_for_level_base, 32 << 20);
        assert_eq!(o.compaction.target_file_size_base, 8 << 20);
        assert!(!o.compaction.level_compaction_dynamic_level_bytes);
        assert_eq!(o.compaction.level0_file_num_compaction_trigger, 2);
        assert_eq!(o.compaction.max_background_jobs, 4);
        assert_eq!(o.compaction.max_subcompactions, 3);
        use CompressionType::{Lz4, None};
        assert_eq!(
            o.compaction.compression_per_level,
            vec![None, None, Lz4, Lz4, Lz4]
        );
        assert!(f.statistics);
        // The engine's checks, under the flag's name.
        let e = error(&["--max_bytes_for_level_multiplier=1"]);
        assert!(e.starts_with("--max_bytes_for_level_multiplier:"), "{e}");
        assert_eq!(
            run(&["--compaction_style=1"]).compaction.compaction_style,
            CompactionStyle::Universal
        );
        let e = error(&["--compaction_style=7"]);
        assert!(e.contains("--compaction_style=7"), "{e}");
        assert!(run(&["--cache_size=-1"]).block_cache().unwrap().is_none());
        let cache = run(&["--cache_size=1048576"])
            .block_cache()
            .unwrap()
            .unwrap();
        assert_eq!(cache.capacity(), 1 << 20);
        assert!(error(&["--cache_high_pri_pool_ratio=2"]).starts_with("--cache_"));
        assert!(run(&["--cache_type=clock_cache"]).clock_cache);
        assert!(error(&["--cache_type=fifo"]).contains("lru_cache"));
        let e = error(&["--level0_stop_writes_trigger=3"]);
        assert!(e.starts_with("--level0_stop_writes_trigger:"), "{e}");
    }

    #[test]
    fn partition_flags_ask_for_what_db_benchs_do() {
        let table = |args: &[&str]| run(args).db_options().table;
        let plain = table(&[]);
        assert_eq!(plain.index_type, IndexType::BinarySearch);
        assert!(!plain.partition_filters && !plain.pin_top_level_index_and_filter);
        let index = table(&["--partition_index", "--metadata_block_size=1024"]);
        assert_eq!(index.index_type, IndexType::TwoLevelIndexSearch);
        assert!(!index.partition_filters);
        assert_eq!(index.metadata_block_size, 1024);
        let both = table(&["--partition_index_and_filters=1"]);
        assert_eq!(both.index_type, IndexType::TwoLevelIndexSearch);
        assert!(both.partition_filters);
        assert_eq!(both.metadata_block_size, 4096);
        assert!(table(&["--pin_top_level_index_and_filter"]).pin_top_level_index_and_filter);
        assert!(error(&["--metadata_block_size=big"]).contains("--metadata_block_size"));
    }

    #[test]
    fn no_flags_gives_db_bench_defaults() {
        let f = run(&[]);
        assert_eq!(f, Flags::default());
        assert_eq!(f.num, 1_000_000);
        assert_eq!(f.reads, f.num);
        assert_eq!(f.benchmarks.len(), 8);
        assert_eq!(f.benchmarks.last().map(String::as_str), Some("stats"));
        assert_eq!(f.bloom_bits, 0.0);
        assert_eq!(f.seed, DEFAULT_SEED);
        assert_eq!(f.compression_type, CompressionType::Snappy);
    }

    #[test]
    fn both_spellings_work() {
        for prefix in ["--", "-"] {
            let f = run(&[
                &format!("{prefix}num=2000"),
                &format!("{prefix}value_size=50"),
                &format!("{prefix}benchmarks=fillseq,readrandom"),
                &format!("{prefix}db=/tmp/x"),
            ]);
            assert_eq!(f.num, 2000);
            assert_eq!(f.reads, 2000, "reads follows num");
            assert_eq!(f.value_size, 50);
            assert_eq!(f.benchmarks, ["fillseq", "readrandom"]);
            assert_eq!(f.db, Some(PathBuf::from("/tmp/x")));
        }
    }

    #[test]
    fn booleans_take_gflags_spellings() {
        for (value, want) in [
            ("1", true),
            ("0", false),
            ("true", true),
            ("false", false),
            ("TRUE", true),
            ("yes", true),
            ("n", false),
        ] {
            assert_eq!(run(&[&format!("--histogram={value}")]).histogram, want);
        }
        assert!(run(&["--sync"]).sync, "a bare boolean is true");
        assert!(!run(&["--sync=1", "-nosync"]).sync, "--noX is false");
        assert!(error(&["--histogram=2"]).contains("--histogram"));
    }

    #[test]
    fn unknown_flag_is_named() {
        let msg = error(&["--num=10", "--frobnicate=3"]);
        assert!(msg.contains("unknown flag --frobnicate"), "{msg}");
        assert!(error(&["--nonum"]).contains("unknown flag --nonum"));
        assert!(error(&["num=3"]).contains("unexpected argument"));
    }

    #[test]
    fn bad_numbers_are_named() {
        assert!(error(&["--num=abc"]).contains("--num"));
        assert!(error(&["--num=-5"]).contains("--num"));
        assert!(error(&["--key_size=1.5"]).contains("--key_size"));
        assert!(error(&["--num"]).contains("needs a value"));
        assert!(error(&["--threads=0"]).contains("--threads"));
        assert!(error(&["--compression_ratio=0"]).contains("--compression_ratio"));
    }

    #[test]
    fn db_bench_semantics_of_special_values() {
        let f = run(&["--num=100", "--reads=-1"]);
        assert_eq!(f.reads, 100);
        assert_eq!(run(&["--num=100", "--reads=7"]).reads, 7);
        assert_eq!(run(&["--bloom_bits=-1"]).bloom_bits, 0.0);
        assert_eq!(run(&["--bloom_bits=10"]).bloom_bits, 10.0);
        assert_eq!(run(&["--seed=0"]).seed, DEFAULT_SEED);
        assert_eq!(run(&["--seed=42"]).seed, 42);
        assert_eq!(run(&["--benchmarks=fillseq,,readseq,"]).benchmarks.len(), 2);
    }

    #[test]
    fn engine_options_are_parsed_and_checked() {
        let f = run(&[
            "--checksum_type=1",
            "--compression_type=zstd",
            "--block_size=16384",
            "--write_buffer_size=1048576",
            "--max_write_buffer_number=4",
            "-block_restart_interval=4",
        ]);
        assert_eq!(f.checksum_type, ChecksumType::Crc32c);
        assert!(matches!(f.compression_type, CompressionType::Zstd { .. }));
        let o = f.db_options();
        assert_eq!(o.table.block_size, 16384);
        assert_eq!(o.table.block_restart_interval, 4);
        assert_eq!(o.write_buffer_size, 1 << 20);
        assert_eq!(o.max_write_buffer_number, 4);
        assert_eq!(
            run(&["--checksum_type=kXXH3"]).checksum_type,
            ChecksumType::Xxh3
        );
        assert_eq!(
            run(&["--checksum_type=xxh3"]).checksum_type,
            ChecksumType::Xxh3
        );
        assert!(error(&["--checksum_type=2"]).contains("--checksum_type"));
        assert!(error(&["--compression_type=zlib"]).contains("--compression_type"));
        assert!(error(&["--benchmarks=fillseq,bogus"]).contains("\"bogus\""));
        assert!(error(&["--block_size=0"]).contains("--block_size"));
        assert!(error(&["--block_restart_interval=0"]).contains("--block_restart_interval"));
        assert!(error(&["--mmap_read=1", "--use_direct_reads=1"]).contains("use_direct_reads"));
    }

    #[test]
    fn help_is_recognized() {
        assert_eq!(parse(["--help"]), Ok(Command::Help));
        assert_eq!(parse(["-help"]), Ok(Command::Help));
        assert!(usage().contains("--compression_ratio"));
    }
}
