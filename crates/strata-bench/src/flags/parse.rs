//! Parsing the command line into [`Flags`], gflags-style: `--name=value` or
//! `-name=value`, bare booleans and `--noname`, unknown names refused.

use std::path::PathBuf;

use strata::{ChecksumType, CompactionStyle, CompressionType};

use crate::engine::EngineKind;
use crate::ycsb::Distribution;

use super::blob::{is_blob_flag, parse_blob_flag, BLOB_BOOL_FLAGS};
use super::{err, Command, FlagError, Flags, DEFAULT_SEED, KNOWN_BENCHMARKS};

/// Names of the boolean flags: only these may appear bare or with a `no` prefix.
const BOOL_FLAGS: &[&str] = &[
    "use_existing_db",
    "ignore_unknown_options",
    "disable_wal",
    "manual_wal_flush",
    "sync",
    "mmap_read",
    "use_direct_reads",
    "use_direct_io_for_flush_and_compaction",
    "histogram",
    "level_compaction_dynamic_level_bytes",
    "disable_auto_compactions",
    "statistics",
    "cache_index_and_filter_blocks",
    "pin_l0_filter_and_index_blocks_in_cache",
    "pin_top_level_index_and_filter",
    "partition_index",
    "partition_index_and_filters",
    "file_index_prefix_cache",
    "multiread_batched",
    "whole_key_filtering",
    "memtable_whole_key_filtering",
    "prefix_same_as_start",
    "total_order_seek",
    "seek_missing_prefix",
    "reverse_iterator",
    "verify_checksum",
    "stats_per_interval",
    // Also takes a path: `--compare_with_rocksdb=/usr/bin/db_bench`.
    "compare_with_rocksdb",
];

/// Parses the arguments after the program name.
pub fn parse<I, S>(args: I) -> Result<Command, FlagError>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut flags = Flags::default();
    // Kept raw until every flag is seen: their meaning depends on `num`.
    let mut reads: i64 = -1;
    let mut seed: u64 = 0;
    let mut bloom_bits: f64 = -1.0;
    for arg in args {
        let arg = arg.as_ref();
        let Some(body) = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-')) else {
            return err(format!(
                "unexpected argument {arg:?}: flags are written --name=value"
            ));
        };
        if matches!(body, "help" | "h" | "helpfull") {
            return Ok(Command::Help);
        }
        let (name, value) = match body.split_once('=') {
            Some((name, value)) => (name, value),
            // gflags: a bare boolean is true and `--noname` is false.
            None if is_bool_flag(body) => (body, "true"),
            None => match body.strip_prefix("no") {
                Some(name) if is_bool_flag(name) => (name, "false"),
                _ if is_known(body) => {
                    return err(format!("flag --{body} needs a value: --{body}=VALUE"));
                }
                _ => return err(format!("unknown flag --{body} (see --help)")),
            },
        };
        match name {
            "benchmarks" => {
                // Empty names are skipped, as db_bench does for "a,,b" or "a,".
                flags.benchmarks = value
                    .split(',')
                    .filter(|b| !b.is_empty())
                    .map(String::from)
                    .collect();
                if let Some(bad) = flags
                    .benchmarks
                    .iter()
                    .find(|b| !KNOWN_BENCHMARKS.contains(&b.as_str()))
                {
                    return err(format!(
                        "--benchmarks: unknown benchmark {bad:?}; known: {}",
                        KNOWN_BENCHMARKS.join(",")
                    ));
                }
            }
            "num" => flags.num = number(name, value)?,
            "ingest_files" => flags.ingest_files = number(name, value)?,
            "reads" => reads = number(name, value)?,
            "key_size" => flags.key_size = number(name, value)?,
            "value_size" => flags.value_size = number(name, value)?,
            "threads" => flags.threads = number(name, value)?,
            "db" => {
                if value.is_empty() {
                    return err("--db: the path is empty");
                }
                flags.db = Some(PathBuf::from(value));
            }
            "use_existing_db" => flags.use_existing_db = boolean(name, value)?,
            "disable_wal" => flags.disable_wal = boolean(name, value)?,
            "manual_wal_flush" => flags.manual_wal_flush = boolean(name, value)?,
            "sync" => flags.sync = boolean(name, value)?,
            "num_column_families" => {
                flags.num_column_families = number(name, value)?;
                if flags.num_column_families == 0 {
                    return err(format!("--{name}={value}: must be at least 1"));
                }
            }
            "seed" => seed = number(name, value)?,
            "write_buffer_size" => flags.write_buffer_size = number(name, value)?,
            "max_write_buffer_number" => flags.max_write_buffer_number = number(name, value)?,
            "block_size" => flags.block_size = number(name, value)?,
            "block_restart_interval" => flags.block_restart_interval = number(name, value)?,
            "bloom_bits" => bloom_bits = number(name, value)?,
            "compression_type" => {
                flags.compression_type = CompressionType::parse(value)
                    .or_else(|_| err(format!("--compression_type: unknown or unsupported compression {value:?}; expected none, snappy, lz4 or zstd")))?;
            }
            "checksum_type" => flags.checksum_type = checksum(value)?,
            "mmap_read" => flags.mmap_read = boolean(name, value)?,
            "use_direct_reads" => flags.use_direct_reads = boolean(name, value)?,
            "use_direct_io_for_flush_and_compaction" => {
                flags.use_direct_io_for_flush_and_compaction = boolean(name, value)?
            }
            "histogram" => flags.histogram = boolean(name, value)?,
            "compression_ratio" => flags.compression_ratio = number(name, value)?,
            "statistics" => flags.statistics = boolean(name, value)?,
            "http_addr" => flags.http_addr = Some(value.to_owned()),
            "perf_level" => {
                flags.perf_level = number(name, value)?;
                if !(1..=5).contains(&flags.perf_level) {
                    return err(format!("--perf_level={value}: RocksDB's levels are 1 to 5"));
                }
            }
            "cache_size" => flags.cache_size = number(name, value)?,
            "open_files" => flags.open_files = number(name, value)?,
            "cache_index_and_filter_blocks" => {
                flags.cache_index_and_filter_blocks = boolean(name, value)?
            }
            "pin_l0_filter_and_index_blocks_in_cache" => {
                flags.pin_l0_filter_and_index_blocks_in_cache = boolean(name, value)?
            }
            "multiread_batched" => flags.multiread_batched = boolean(name, value)?,
            "whole_key_filtering" => flags.whole_key_filtering = boolean(name, value)?,
            "memtable_whole_key_filtering" => {
                flags.memtable_whole_key_filtering = boolean(name, value)?
            }
            "prefix_same_as_start" => flags.prefix_same_as_start = boolean(name, value)?,
            "total_order_seek" => flags.total_order_seek = boolean(name, value)?,
            "seek_missing_prefix" => flags.seek_missing_prefix = boolean(name, value)?,
            "prefix_size" => flags.prefix_size = number(name, value)?,
            "keys_per_prefix" => flags.keys_per_prefix = number(name, value)?,
            "memtable_bloom_size_ratio" => flags.memtable_bloom_size_ratio = number(name, value)?,
            "file_index_prefix_cache" => flags.file_index_prefix_cache = boolean(name, value)?,
            "pin_top_level_index_and_filter" => {
                flags.pin_top_level_index_and_filter = boolean(name, value)?
            }
            "partition_index" => flags.partition_index = boolean(name, value)?,
            "partition_index_and_filters" => {
                flags.partition_index_and_filters = boolean(name, value)?
            }
            "metadata_block_size" => flags.metadata_block_size = number(name, value)?,
            "duration" => flags.duration = number(name, value)?,
            "batch_size" => flags.batch_size = number(name, value)?,
            "writes_per_range_tombstone" => flags.writes_per_range_tombstone = number(name, value)?,
            "range_tombstone_width" => flags.range_tombstone_width = number(name, value)?,
            "max_num_range_tombstones" => flags.max_num_range_tombstones = number(name, value)?,
            "seek_nexts" => flags.seek_nexts = number(name, value)?,
            "reverse_iterator" => flags.reverse_iterator = boolean(name, value)?,
            "readwritepercent" => {
                flags.readwritepercent = number(name, value)?;
                if flags.readwritepercent > 100 {
                    return err(format!(
                        "--readwritepercent={value}: must be within 0..=100"
                    ));
                }
            }
            "mergereadpercent" => {
                flags.mergereadpercent = number(name, value)?;
                if flags.mergereadpercent > 100 {
                    return err(format!(
                        "--mergereadpercent={value}: must be within 0..=100"
                    ));
                }
            }
            "merge_operator" => {
                strata::merge_operator_from_name(value)
                    .map_err(|e| FlagError(format!("--merge_operator={value}: {e}")))?;
                flags.merge_operator = Some(value.to_string());
            }
            "benchmark_write_rate_limit" => flags.benchmark_write_rate_limit = number(name, value)?,
            "options_file" => flags.options_file = Some(value.into()),
            "ignore_unknown_options" => flags.ignore_unknown_options = boolean(name, value)?,
            "ycsb_record_count" => flags.ycsb_record_count = number(name, value)?,
            "compare_with_rocksdb" => {
                flags.compare_with_rocksdb = match value {
                    "true" | "1" => Some("db_bench".to_string()),
                    "false" | "0" => None,
                    other => Some(other.to_string()),
                }
            }
            "repeat" => flags.repeat = number(name, value)?,
            "verify_checksum" => flags.verify_checksum = boolean(name, value)?,
            "stats_per_interval" => flags.stats_per_interval = boolean(name, value)?,
            "stats_interval_seconds" => flags.stats_interval_seconds = number(name, value)?,
            "report_interval_seconds" => flags.report_interval_seconds = number(name, value)?,
            "report_file" | "plot" if value.is_empty() => {
                return err(format!("--{name}: the path is empty"));
            }
            "report_file" => flags.report_file = PathBuf::from(value),
            "plot" => flags.plot = Some(PathBuf::from(value)),
            "report_json" => {
                if value.is_empty() {
                    return err("--report_json: the path is empty");
                }
                flags.report_json = Some(PathBuf::from(value));
            }
            "ycsb_operation_count" => flags.ycsb_operation_count = number(name, value)?,
            "engine" => {
                flags.engine = EngineKind::from_name(value).ok_or_else(|| {
                    FlagError(format!(
                        "--engine={value}: expected strata, rocksdb or fjall"
                    ))
                })?
            }
            "ycsb_request_distribution" => {
                flags.ycsb_request_distribution = Some(match value {
                    "zipfian" => Distribution::Zipfian,
                    "latest" => Distribution::Latest,
                    "uniform" => Distribution::Uniform,
                    _ => {
                        return err(format!(
                        "--ycsb_request_distribution={value}: expected zipfian, latest or uniform"
                    ))
                    }
                })
            }
            "cache_numshardbits" => {
                let bits: i32 = number(name, value)?;
                flags.cache_numshardbits = u32::try_from(bits).ok();
            }
            "cache_high_pri_pool_ratio" => flags.cache_high_pri_pool_ratio = number(name, value)?,
            "cache_low_pri_pool_ratio" => flags.cache_low_pri_pool_ratio = number(name, value)?,
            "cache_type" => {
                flags.clock_cache = match value {
                    "lru_cache" => false,
                    "clock_cache" | "hyper_clock_cache" => true,
                    _ => {
                        return err(format!(
                            "--cache_type={value}: expected lru_cache or clock_cache"
                        ))
                    }
                }
            }
            _ => parse_compaction_flag(&mut flags, name, value)?,
        }
    }
    flags.reads = u64::try_from(reads).unwrap_or(flags.num);
    flags.seed = if seed == 0 { DEFAULT_SEED } else { seed };
    // db_bench's -1 means "no filter policy"; Strata spells that 0.
    flags.bloom_bits = if bloom_bits < 0.0 { 0.0 } else { bloom_bits };
    validate(&flags)?;
    Ok(Command::Run(Box::new(flags)))
}

/// The compaction flags, into `flags.compaction` (and `min_level_to_compress`).
fn parse_compaction_flag(flags: &mut Flags, name: &str, value: &str) -> Result<(), FlagError> {
    let c = &mut flags.compaction;
    match name {
        "compaction_style" => {
            c.compaction_style = match number::<u32>(name, value)? {
                0 => CompactionStyle::Level,
                1 => CompactionStyle::Universal,
                2 => CompactionStyle::Fifo,
                other => {
                    return err(format!(
                    "--compaction_style={other}: expected 0 (leveled), 1 (universal) or 2 (fifo)"
                ))
                }
            }
        }
        "num_levels" => c.num_levels = number(name, value)?,
        "level0_file_num_compaction_trigger" => {
            c.level0_file_num_compaction_trigger = number(name, value)?
        }
        "level0_slowdown_writes_trigger" => c.level0_slowdown_writes_trigger = number(name, value)?,
        "level0_stop_writes_trigger" => c.level0_stop_writes_trigger = number(name, value)?,
        "max_bytes_for_level_base" => c.max_bytes_for_level_base = number(name, value)?,
        "max_bytes_for_level_multiplier" => c.max_bytes_for_level_multiplier = number(name, value)?,
        "level_compaction_dynamic_level_bytes" => {
            c.level_compaction_dynamic_level_bytes = boolean(name, value)?
        }
        "target_file_size_base" => c.target_file_size_base = number(name, value)?,
        "target_file_size_multiplier" => c.target_file_size_multiplier = number(name, value)?,
        "max_background_jobs" => c.max_background_jobs = number(name, value)?,
        // db_bench's name for max_subcompactions.
        "subcompactions" => c.max_subcompactions = number(name, value)?,
        "disable_auto_compactions" => c.disable_auto_compactions = boolean(name, value)?,
        "min_level_to_compress" => flags.min_level_to_compress = number(name, value)?,
        "universal_size_ratio" => c.compaction_options_universal.size_ratio = number(name, value)?,
        "universal_min_merge_width" => {
            c.compaction_options_universal.min_merge_width = number(name, value)?
        }
        "universal_max_merge_width" => {
            c.compaction_options_universal.max_merge_width = number(name, value)?
        }
        "universal_max_size_amplification_percent" => {
            c.compaction_options_universal
                .max_size_amplification_percent = number(name, value)?
        }
        "fifo_compaction_max_table_files_size_mb" => {
            let mb: u64 = number(name, value)?;
            c.compaction_options_fifo.max_table_files_size = mb.saturating_mul(1 << 20);
        }
        "fifo_compaction_ttl" => c.ttl = number(name, value)?,
        _ => {
            return parse_blob_flag(&mut flags.blob, name, value, boolean)
                .unwrap_or_else(|| err(format!("unknown flag --{name} (see --help)")))
        }
    }
    Ok(())
}

fn is_bool_flag(name: &str) -> bool {
    BOOL_FLAGS.contains(&name) || BLOB_BOOL_FLAGS.contains(&name)
}

fn is_known(name: &str) -> bool {
    matches!(
        name,
        "benchmarks"
            | "num"
            | "ingest_files"
            | "reads"
            | "key_size"
            | "value_size"
            | "threads"
            | "db"
            | "seed"
            | "write_buffer_size"
            | "max_write_buffer_number"
            | "block_size"
            | "block_restart_interval"
            | "metadata_block_size"
            | "bloom_bits"
            | "compression_type"
            | "checksum_type"
            | "compression_ratio"
            | "compaction_style"
            | "cache_size"
            | "open_files"
            | "cache_numshardbits"
            | "cache_high_pri_pool_ratio"
            | "cache_low_pri_pool_ratio"
            | "cache_type"
            | "num_levels"
            | "level0_file_num_compaction_trigger"
            | "level0_slowdown_writes_trigger"
            | "level0_stop_writes_trigger"
            | "max_bytes_for_level_base"
            | "max_bytes_for_level_multiplier"
            | "target_file_size_base"
            | "target_file_size_multiplier"
            | "max_background_jobs"
            | "subcompactions"
            | "min_level_to_compress"
            | "universal_size_ratio"
            | "universal_min_merge_width"
            | "universal_max_merge_width"
            | "universal_max_size_amplification_percent"
            | "fifo_compaction_max_table_files_size_mb"
            | "fifo_compaction_ttl"
            | "duration"
            | "batch_size"
            | "writes_per_range_tombstone"
            | "range_tombstone_width"
            | "max_num_range_tombstones"
            | "seek_nexts"
            | "prefix_size"
            | "keys_per_prefix"
            | "memtable_bloom_size_ratio"
            | "readwritepercent"
            | "mergereadpercent"
            | "merge_operator"
            | "benchmark_write_rate_limit"
            | "options_file"
            | "ycsb_record_count"
            | "ycsb_operation_count"
            | "ycsb_request_distribution"
            | "engine"
            | "report_json"
            | "perf_level"
            | "http_addr"
            | "repeat"
            | "stats_interval_seconds"
            | "report_interval_seconds"
            | "report_file"
            | "plot"
    ) || is_bool_flag(name)
        || is_blob_flag(name)
}

fn number<T: std::str::FromStr>(name: &str, value: &str) -> Result<T, FlagError> {
    value
        .trim()
        .parse()
        .or_else(|_| err(format!("--{name}: {value:?} is not a valid number")))
}

/// gflags' boolean spellings, case-insensitive.
fn boolean(name: &str, value: &str) -> Result<bool, FlagError> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "t" | "yes" | "y" => Ok(true),
        "0" | "false" | "f" | "no" | "n" => Ok(false),
        _ => err(format!(
            "--{name}: {value:?} is not a boolean (0/1/true/false)"
        )),
    }
}

/// RocksDB's numeric `ChecksumType` codes, or names with or without RocksDB's
/// `k` prefix (`kXXH3`).
fn checksum(value: &str) -> Result<ChecksumType, FlagError> {
    let lower = value.to_ascii_lowercase();
    let name = match lower.strip_prefix('k') {
        Some(rest) if !rest.is_empty() => rest,
        _ => lower.as_str(),
    };
    ChecksumType::parse(name).or_else(|_| {
        err(format!(
            "--checksum_type: {value:?} is not supported; expected 1 (crc32c) or 4 (xxh3)"
        ))
    })
}

/// Rejects settings the benchmarks cannot run with, before anything is created.
fn validate(flags: &Flags) -> Result<(), FlagError> {
    if flags.options_file.is_some() && flags.engine != crate::engine::EngineKind::Strata {
        return err("--options_file: only --engine=strata reads an OPTIONS file");
    }
    if flags.key_size == 0 {
        return err("--key_size: must be at least 1");
    }
    if flags.threads == 0 {
        return err("--threads: must be at least 1");
    }
    // db_bench asserts it: byte 8 must be a prefix's '0' padding.
    if flags.seek_missing_prefix && (flags.prefix_size <= 8 || flags.keys_per_prefix == 0) {
        return err("--seek_missing_prefix: needs --prefix_size above 8 and --keys_per_prefix");
    }
    if !(flags.compression_ratio > 0.0 && flags.compression_ratio.is_finite()) {
        return err(format!(
            "--compression_ratio: {} must be a number above 0",
            flags.compression_ratio
        ));
    }
    flags.block_cache()?;
    // The engine's own checks, reported with the flag name a user typed.
    flags.db_options().validate().or_else(|e| match e {
        strata::Error::InvalidArgument { field, reason } => {
            let flag = match field {
                "bloom_bits_per_key" => "bloom_bits",
                "use_direct_reads" => "use_direct_reads (with --mmap_read)",
                other => other,
            };
            err(format!("--{flag}: {reason}"))
        }
        other => err(other.to_string()),
    })
}
