//! The text of `strata-bench --help`: every benchmark and flag with its
//! default.

use super::{blob, Flags, DEFAULT_BENCHMARKS, DEFAULT_SEED};

/// The text of `--help`.
pub fn usage() -> String {
    let d = Flags::default();
    format!(
        "\
strata-bench: db_bench for Strata. Same flag names, meanings and result lines as
RocksDB's db_bench, so one command line runs against both.

Usage: strata-bench [--flag=value | -flag=value]...

Benchmarks (run in the order given, each timed separately):
  fillseq      write num keys in order into a fresh DB
  fillrandom   write num random keys into a fresh DB
  overwrite    write num random keys into the existing DB
  readrandom   get reads random keys in [0, num); reports (found of reads found)
  readseq      scan the whole DB forward with an iterator
  readreverse  scan the whole DB backward with an iterator
  seekrandom   seek reads random keys and read the entry there (and --seek_nexts
               more, backward with --reverse_iterator); reports found
  filluniquerandom  write each key of [0, num) once, in random order, into a fresh DB
  updaterandom read-modify-write of reads random keys
  deleterandom delete num random keys
  readmissing  get reads random keys that are never present
  multireadrandom  reads random keys, --batch_size per call (see --multiread_batched)
  fwdrange / revrange  seekrandom reading --seek_nexts entries on (10 if 0)
  readrandomwriterandom  reads operations: --readwritepercent% gets, the rest puts
  mergerandom  merge reads random keys with --merge_operator (uint64add takes
               8-byte operands: use --value_size=8; others count as 0)
  readrandommergerandom  reads operations: --mergereadpercent% gets, the rest merges
  readwhilewriting, seekrandomwhilewriting, fwdrangewhilewriting,
  revrangewhilewriting  the reads while one more thread writes random keys
               (at most --benchmark_write_rate_limit bytes/s; 0 = unlimited)
  crc32c, xxhash, xxhash64, xxh3  hash 4 KiB blocks (500 MB)
  compress, uncompress  --compression_type on 4 KiB blocks (1 GB)
  ycsb_load    load --ycsb_record_count records (default num) into a fresh DB
  ycsb_a .. ycsb_f  YCSB's core workloads, --ycsb_operation_count requests per
               thread (default reads): A 50/50 read/update, B 95/5 read/update,
               C reads, D 95/5 read/insert (latest), E 95/5 scan/insert,
               F 50/50 read/read-modify-write; zipfian 0.99 unless noted or
               --ycsb_request_distribution=zipfian|latest|uniform says
  compact, flush, waitforcompaction, stats, levelstats, sstables  as db_bench
  ingest       num keys in key order written into --ingest_files files with the
               engine's SST writer, then ingested in one call (build and ingest
               timed apart; over a fill's data, or into an empty database)
With --threads=N every thread does the full count (as db_bench) on one shared DB.
Fill benchmarks are skipped with --use_existing_db=1 (as db_bench).

Flags (default in brackets):
  --benchmarks=LIST          [{benchmarks}]
  --num=N                    keys per fill, key range of reads [{num}]
  --ingest_files=N           files the ingest benchmark builds and ingests [10]
  --reads=N                  reads per thread; -1 means num [-1]
  --key_size=N               [{key_size}]  keys are db_bench's: the number as 8
                             big-endian bytes, padded with '0' to key_size
  --value_size=N             [{value_size}]
  --compression_ratio=R      [{ratio}]  values compress to about R (db_bench's generator)
  --threads=N                [{threads}]
  --db=PATH                  [a temporary directory, removed at exit]
  --use_existing_db=0|1      [0]  otherwise the DB in --db is destroyed first
  --disable_wal=0|1          [0]
  --manual_wal_flush=0|1     [0]  keep WAL writes in the process's buffer until it
                             fills (a killed process loses them); for fjall, 0
                             hands each write to the OS (PersistMode::Buffer) and
                             1 leaves them in its journal buffer (its default)
  --sync=0|1                 [0]  fsync the WAL on every write
  --num_column_families=N    [1]  key n goes to family n % N (db_bench's mapping);
                             scans read the default family only, as db_bench's do
  --seed=N                   [0]  0 means the fixed seed {seed} (RocksDB's db_bench
                             takes the clock instead: pass --seed to compare)
  --write_buffer_size=BYTES  [{wbs}]
  --max_write_buffer_number=N [{mwbn}]
  --block_size=BYTES         [{block_size}]
  --block_restart_interval=N [16]  keys between restart points in data blocks
  --bloom_bits=N             [-1]  bits per key of the bloom filter; -1 (db_bench's
                             default, no filter) and 0 both mean none
  --compression_type=none|snappy|lz4|zstd [snappy]
  --checksum_type=1|4        [4]  RocksDB codes: 1 crc32c, 4 xxh3 (names accepted);
                             the default is the engine's, as in db_bench
  --mmap_read=0|1            [0]
  --use_direct_reads=0|1     [0]
  --use_direct_io_for_flush_and_compaction=0|1 [0]  O_DIRECT table writes
  --histogram=0|1            [0]  per-op latency percentiles
  --http_addr=HOST:PORT      serve the web view of the database under test there
                             while the run goes on (Strata; see `strata serve`)
  --perf_level=1..5          [1]  each thread's perf context (2 counts, 3-5 also
                             times); thread 0's printed after each benchmark
  --verify_checksum=0|1      [1]  check data block checksums on reads
  --cache_index_and_filter_blocks=0|1 [0]  index and filter blocks in the block cache
  --pin_l0_filter_and_index_blocks_in_cache=0|1 [0]
  --pin_top_level_index_and_filter=0|1 [0]  pin the top level of partitioned
                             index and filters in the cache (db_bench's default)
  --partition_index=0|1      [0]  two-level index (index_type=kTwoLevelIndexSearch)
  --partition_index_and_filters=0|1 [0]  two-level index and partitioned filters
  --metadata_block_size=BYTES [4096]  target size of index and filter partitions
  --file_index_prefix_cache=0|1 [1]  search each level's files by the 8-byte
                             key prefixes of their largest keys first (Strata only)
  --stats_interval_seconds=N [0]  print ops and rate every N seconds;
  --stats_per_interval=0|1   [0]  with the engine's strata.stats each time
  --duration=SECONDS         [0]  stop each benchmark after this long (0: full count)
  --batch_size=N             [1]  keys per write batch and per multi_get
  --multiread_batched=0|1    [0]  multireadrandom through the batched multi_get
                             (else one get per key, as db_bench)
  --prefix_size=N            [0]  prefix extractor fixed:N (0: none)
  --keys_per_prefix=N        [0]  keys start with a prefix number, N keys each
  --memtable_bloom_size_ratio=R [0]  memtable bloom of R x write_buffer_size
  --whole_key_filtering=0|1  [1]  whole keys in table filters (else prefixes only)
  --memtable_whole_key_filtering=0|1 [0]  whole keys in the memtable bloom
  --prefix_same_as_start=0|1 [0]  iterators stay in the seek key's prefix
  --total_order_seek=0|1     [0]  iterators never use prefix filters
  --seek_missing_prefix=0|1  [0]  seekrandom seeks into absent prefixes (needs
                             --prefix_size > 8 and --keys_per_prefix)
  --writes_per_range_tombstone=N [0]  every N-th fill write (and *whilewriting
                             write) adds a range tombstone over
  --range_tombstone_width=W  [100]  keys from a random one, until
  --max_num_range_tombstones=M [0]  tombstones were written (per thread)
  --seek_nexts=N             [0]  --reverse_iterator=0|1 [0]
  --readwritepercent=P       [90]
  --mergereadpercent=P       [70]
  --merge_operator=NAME      [none]  uint64add, stringappend, max or put
  --benchmark_write_rate_limit=BYTES_PER_SEC [0]
  --options_file=PATH        [none]  open with the default family's options of
                             this OPTIONS file (Strata's or RocksDB's) instead of
                             the option flags, as db_bench does; --engine=strata only
  --ignore_unknown_options=0|1 [0]  skip options the file has and Strata lacks
                             (else they are named in an error)
  --report_interval_seconds=N [0]  sample throughput every N seconds into
                             --report_file [report.csv] (benchmark,secs_elapsed,interval_qps)
  --plot=PATH.svg            draw throughput over time, one line per benchmark
                             (samples every --report_interval_seconds, else 1 s);
                             with --compare_with_rocksdb, one line per benchmark
                             and engine, from each engine's first run
  --compare_with_rocksdb[=PATH]  run each benchmark through strata and RocksDB's
                             db_bench [db_bench on PATH], alternating, --repeat=N [3]
                             times each, every engine option passed to both; prints
                             medians: ops/s and ratio, P99, CPU/op, W-Amp, size
  --engine=strata|rocksdb|fjall [strata]  the engine the benchmarks drive, in
                             this process with the same generators; rocksdb and fjall
                             need the build features of the same names
  --report_json=PATH         write every result (rates, CPU/op, RSS, size, write amp,
                             percentiles) as JSON
  --help
{blob_help}",
        blob_help = blob::BLOB_HELP,
        benchmarks = DEFAULT_BENCHMARKS,
        num = d.num,
        key_size = d.key_size,
        value_size = d.value_size,
        ratio = d.compression_ratio,
        threads = d.threads,
        seed = DEFAULT_SEED,
        wbs = d.write_buffer_size,
        mwbn = d.max_write_buffer_number,
        block_size = d.block_size,
    )
}
