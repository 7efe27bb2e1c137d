//! The catalogue of options Strata reads and writes by RocksDB's names: one
//! entry per option says its name, whether `set_options` may change it on an
//! open database (RocksDB's mutable column family options), and how its value
//! is written and read. The OPTIONS file, `set_options` and the tools all go
//! through it, so a name means the same everywhere.
//!
//! `max_background_jobs` and `delayed_write_rate` live in
//! [`CompactionOptions`](super::CompactionOptions) but are database-wide in
//! RocksDB, so they are catalogued with `[DBOptions]` and read from and
//! written to the default family's copy (`DbOptions::compaction`).

use super::merge_operator::{format_merge_operator, parse_merge_operator};
use super::values::{
    bad_value, checksum_name, compaction_style_name, compression_name, format_compression_list,
    format_f64, format_filter_policy, format_struct, parse_bool, parse_checksum,
    parse_compaction_style, parse_compression, parse_compression_list, parse_f64,
    parse_filter_policy, parse_int, parse_struct, parse_zstd_level, ZSTD_DEFAULT_LEVEL,
};
use super::{
    CfOptions, DbOptions, PrefixExtractor, PrepopulateBlobCache, TableOptions, WalRecoveryMode,
};
use crate::comparator::comparator_from_name;
use crate::compression::CompressionType;
use crate::error::{Error, Result};

/// One option: its name and how its value is written and read.
pub(crate) struct OptionDef<T> {
    /// RocksDB's name.
    pub name: &'static str,
    /// RocksDB lets `SetOptions` change it on an open database.
    pub mutable: bool,
    /// The value in file form; `None` when there is nothing to write.
    pub get: fn(&T) -> Option<String>,
    /// Sets the option from file form. Sub-options of a `{...}` value that
    /// Strata lacks are pushed, as `option.sub`, onto the last argument.
    pub set: fn(&mut T, &str, &mut Vec<String>) -> Result<()>,
}

macro_rules! opt {
    ($name:literal, $mutable:expr, $($field:ident).+, $parse:expr) => {
        OptionDef {
            name: $name,
            mutable: $mutable,
            get: |o| Some(o.$($field).+.to_string()),
            set: |o, v, _| {
                o.$($field).+ = $parse($name, v)?;
                Ok(())
            },
        }
    };
}

macro_rules! opt_f64 {
    ($name:literal, $mutable:expr, $($field:ident).+) => {
        OptionDef {
            name: $name,
            mutable: $mutable,
            get: |o| Some(format_f64(o.$($field).+)),
            set: |o, v, _| {
                o.$($field).+ = parse_f64($name, v)?;
                Ok(())
            },
        }
    };
}

/// `[DBOptions]`.
pub(crate) const DB_OPTIONS: &[OptionDef<DbOptions>] = &[
    opt!("create_if_missing", false, create_if_missing, parse_bool),
    opt!("error_if_exists", false, error_if_exists, parse_bool),
    opt!(
        "create_missing_column_families",
        false,
        create_missing_column_families,
        parse_bool
    ),
    opt!("paranoid_checks", false, paranoid_checks, parse_bool),
    opt!("manual_wal_flush", false, manual_wal_flush, parse_bool),
    opt!("allow_mmap_reads", false, use_mmap_reads, parse_bool),
    opt!("use_direct_reads", false, use_direct_reads, parse_bool),
    opt!(
        "use_direct_io_for_flush_and_compaction",
        false,
        use_direct_io_for_flush_and_compaction,
        parse_bool
    ),
    OptionDef {
        name: "wal_recovery_mode",
        mutable: false,
        get: |o| Some(o.wal_recovery_mode.name().to_owned()),
        set: |o, v, _| {
            o.wal_recovery_mode = v.parse::<WalRecoveryMode>()?;
            Ok(())
        },
    },
    opt!("keep_log_file_num", false, keep_log_file_num, parse_int),
    opt!("max_open_files", true, max_open_files, parse_int),
    opt!(
        "max_background_jobs",
        true,
        compaction.max_background_jobs,
        parse_int
    ),
    opt!(
        "delayed_write_rate",
        true,
        compaction.delayed_write_rate,
        parse_int
    ),
    opt!(
        "max_subcompactions",
        true,
        compaction.max_subcompactions,
        parse_int
    ),
];

/// `[CFOptions "name"]`.
pub(crate) const CF_OPTIONS: &[OptionDef<CfOptions>] = &[
    opt!("write_buffer_size", true, write_buffer_size, parse_int),
    opt!(
        "max_write_buffer_number",
        true,
        max_write_buffer_number,
        parse_int
    ),
    OptionDef {
        name: "compression",
        mutable: true,
        get: |o| Some(compression_name(o.table.compression).to_owned()),
        set: |o, v, _| {
            o.table.compression = parse_compression("compression", v, zstd_level(o))?;
            Ok(())
        },
    },
    OptionDef {
        name: "compression_per_level",
        mutable: true,
        get: |o| Some(format_compression_list(&o.compaction.compression_per_level)),
        set: |o, v, _| {
            let level = zstd_level(o);
            o.compaction.compression_per_level =
                parse_compression_list("compression_per_level", v, level)?;
            Ok(())
        },
    },
    OptionDef {
        name: "compression_opts",
        mutable: true,
        get: |o| uses_zstd(o).then(|| format_struct(&[("level", zstd_level(o).to_string())])),
        set: |o, v, unknown| {
            let Some(level) = struct_level("compression_opts", v, unknown)? else {
                return Ok(());
            };
            let compaction = &mut o.compaction;
            for c in std::iter::once(&mut o.table.compression)
                .chain(compaction.compression_per_level.iter_mut())
            {
                if let CompressionType::Zstd { level: l } = c {
                    *l = level;
                }
            }
            Ok(())
        },
    },
    OptionDef {
        name: "bottommost_compression",
        mutable: true,
        get: |o| {
            let name = o
                .compaction
                .bottommost_compression
                .map_or("kDisableCompressionOption", compression_name);
            Some(name.to_owned())
        },
        set: |o, v, _| {
            let level = match o.compaction.bottommost_compression {
                Some(CompressionType::Zstd { level }) => level,
                _ => ZSTD_DEFAULT_LEVEL,
            };
            o.compaction.bottommost_compression = match v {
                "kDisableCompressionOption" => None,
                _ => Some(parse_compression("bottommost_compression", v, level)?),
            };
            Ok(())
        },
    },
    OptionDef {
        name: "bottommost_compression_opts",
        mutable: true,
        get: |o| match o.compaction.bottommost_compression {
            Some(CompressionType::Zstd { level }) => {
                Some(format_struct(&[("level", level.to_string())]))
            }
            _ => None,
        },
        set: |o, v, unknown| {
            let level = struct_level("bottommost_compression_opts", v, unknown)?;
            if let (Some(CompressionType::Zstd { level: l }), Some(level)) =
                (&mut o.compaction.bottommost_compression, level)
            {
                *l = level;
            }
            Ok(())
        },
    },
    OptionDef {
        name: "compaction_style",
        mutable: false,
        get: |o| Some(compaction_style_name(o.compaction.compaction_style).to_owned()),
        set: |o, v, _| {
            o.compaction.compaction_style = parse_compaction_style("compaction_style", v)?;
            Ok(())
        },
    },
    opt!("num_levels", false, compaction.num_levels, parse_int),
    opt!(
        "level0_file_num_compaction_trigger",
        true,
        compaction.level0_file_num_compaction_trigger,
        parse_int
    ),
    opt!(
        "level0_slowdown_writes_trigger",
        true,
        compaction.level0_slowdown_writes_trigger,
        parse_int
    ),
    opt!(
        "level0_stop_writes_trigger",
        true,
        compaction.level0_stop_writes_trigger,
        parse_int
    ),
    opt!(
        "max_bytes_for_level_base",
        true,
        compaction.max_bytes_for_level_base,
        parse_int
    ),
    opt_f64!(
        "max_bytes_for_level_multiplier",
        true,
        compaction.max_bytes_for_level_multiplier
    ),
    opt!(
        "level_compaction_dynamic_level_bytes",
        false,
        compaction.level_compaction_dynamic_level_bytes,
        parse_bool
    ),
    opt!(
        "target_file_size_base",
        true,
        compaction.target_file_size_base,
        parse_int
    ),
    opt!(
        "target_file_size_multiplier",
        true,
        compaction.target_file_size_multiplier,
        parse_int
    ),
    opt!(
        "max_compaction_bytes",
        true,
        compaction.max_compaction_bytes,
        parse_int
    ),
    opt!(
        "soft_pending_compaction_bytes_limit",
        true,
        compaction.soft_pending_compaction_bytes_limit,
        parse_int
    ),
    opt!(
        "hard_pending_compaction_bytes_limit",
        true,
        compaction.hard_pending_compaction_bytes_limit,
        parse_int
    ),
    opt!(
        "disable_auto_compactions",
        true,
        compaction.disable_auto_compactions,
        parse_bool
    ),
    opt!("ttl", true, compaction.ttl, parse_int),
    OptionDef {
        name: "compaction_options_universal",
        mutable: true,
        get: |o| {
            let u = &o.compaction.compaction_options_universal;
            Some(format_struct(&[
                ("size_ratio", u.size_ratio.to_string()),
                ("min_merge_width", u.min_merge_width.to_string()),
                ("max_merge_width", u.max_merge_width.to_string()),
                (
                    "max_size_amplification_percent",
                    u.max_size_amplification_percent.to_string(),
                ),
            ]))
        },
        set: |o, v, unknown| {
            const NAME: &str = "compaction_options_universal";
            let u = &mut o.compaction.compaction_options_universal;
            for (key, value) in parse_struct(NAME, v)? {
                let field = match key.as_str() {
                    "size_ratio" => &mut u.size_ratio,
                    "min_merge_width" => &mut u.min_merge_width,
                    "max_merge_width" => &mut u.max_merge_width,
                    "max_size_amplification_percent" => &mut u.max_size_amplification_percent,
                    _ => {
                        unknown.push(format!("{NAME}.{key}"));
                        continue;
                    }
                };
                *field = sub_int(NAME, &key, &value)?;
            }
            Ok(())
        },
    },
    OptionDef {
        name: "compaction_options_fifo",
        mutable: true,
        get: |o| {
            let size = o.compaction.compaction_options_fifo.max_table_files_size;
            Some(format_struct(&[("max_table_files_size", size.to_string())]))
        },
        set: |o, v, unknown| {
            const NAME: &str = "compaction_options_fifo";
            for (key, value) in parse_struct(NAME, v)? {
                if key == "max_table_files_size" {
                    o.compaction.compaction_options_fifo.max_table_files_size =
                        sub_int(NAME, &key, &value)?;
                } else {
                    unknown.push(format!("{NAME}.{key}"));
                }
            }
            Ok(())
        },
    },
    // Mutable as in RocksDB: tables record the extractor that built their
    // filter and memtables the one their bloom holds, so a change makes old
    // filters prove nothing rather than mislead.
    OptionDef {
        name: "prefix_extractor",
        mutable: true,
        get: |o| {
            Some(
                o.table
                    .prefix_extractor
                    .map_or_else(|| "nullptr".to_owned(), |e| e.name()),
            )
        },
        set: |o, v, _| {
            o.table.prefix_extractor = match v {
                "nullptr" | "" => None,
                name => Some(PrefixExtractor::parse(name)?),
            };
            Ok(())
        },
    },
    opt_f64!(
        "memtable_prefix_bloom_size_ratio",
        true,
        memtable_prefix_bloom_size_ratio
    ),
    opt!(
        "memtable_whole_key_filtering",
        true,
        memtable_whole_key_filtering,
        parse_bool
    ),
    opt!(
        "enable_blob_files",
        true,
        blob.enable_blob_files,
        parse_bool
    ),
    opt!("min_blob_size", true, blob.min_blob_size, parse_int),
    opt!("blob_file_size", true, blob.blob_file_size, parse_int),
    OptionDef {
        name: "blob_compression_type",
        mutable: true,
        get: |o| Some(compression_name(o.blob.blob_compression_type).to_owned()),
        set: |o, v, _| {
            let level = zstd_level(o);
            o.blob.blob_compression_type = parse_compression("blob_compression_type", v, level)?;
            Ok(())
        },
    },
    opt!(
        "blob_file_starting_level",
        true,
        blob.blob_file_starting_level,
        parse_int
    ),
    opt!(
        "enable_blob_garbage_collection",
        true,
        blob.enable_blob_garbage_collection,
        parse_bool
    ),
    opt_f64!(
        "blob_garbage_collection_age_cutoff",
        true,
        blob.blob_garbage_collection_age_cutoff
    ),
    opt_f64!(
        "blob_garbage_collection_force_threshold",
        true,
        blob.blob_garbage_collection_force_threshold
    ),
    opt!(
        "blob_compaction_readahead_size",
        true,
        blob.blob_compaction_readahead_size,
        parse_int
    ),
    OptionDef {
        name: "prepopulate_blob_cache",
        mutable: true,
        get: |o| Some(o.blob.prepopulate_blob_cache.name().to_owned()),
        set: |o, v, _| {
            o.blob.prepopulate_blob_cache = PrepopulateBlobCache::from_name(v)
                .ok_or_else(|| bad_value("prepopulate_blob_cache", v, "kDisable or kFlushOnly"))?;
            Ok(())
        },
    },
    OptionDef {
        name: "merge_operator",
        mutable: false,
        get: |o| Some(format_merge_operator(o.merge_operator.as_deref())),
        set: |o, v, unknown| {
            o.merge_operator = parse_merge_operator(v, &[], unknown)?;
            Ok(())
        },
    },
    // A filter is code: written by name, and found on load among
    // `LoadOptions::compaction_filters` (see `options::file`); a name set
    // here directly is one Strata cannot resolve.
    OptionDef {
        name: "compaction_filter",
        mutable: false,
        get: |o| {
            Some(
                o.compaction_filter
                    .as_ref()
                    .map_or("nullptr", |f| f.name())
                    .to_owned(),
            )
        },
        set: |o, v, unknown| {
            o.compaction_filter = None;
            if v != "nullptr" {
                unknown.push(format!("compaction_filter={v}"));
            }
            Ok(())
        },
    },
    // RocksDB writes it; Strata has filters, not factories.
    OptionDef {
        name: "compaction_filter_factory",
        mutable: false,
        get: |_| Some("nullptr".to_owned()),
        set: |_, v, unknown| {
            if v != "nullptr" {
                unknown.push(format!("compaction_filter_factory={v}"));
            }
            Ok(())
        },
    },
    OptionDef {
        name: "comparator",
        mutable: false,
        get: |o| Some(o.comparator.name().to_owned()),
        // The built-ins only; `file.rs` looks among the application's own
        // comparators (`LoadOptions::comparators`) first.
        set: |o, v, _| {
            o.comparator = comparator_from_name(v)?;
            Ok(())
        },
    },
    OptionDef {
        name: "table_factory",
        mutable: false,
        get: |_| Some(BLOCK_BASED_TABLE.to_owned()),
        set: |_, v, _| match v {
            BLOCK_BASED_TABLE => Ok(()),
            _ => Err(bad_value(
                "table_factory",
                v,
                "BlockBasedTable (Strata's only table format)",
            )),
        },
    },
];

/// `[TableOptions/BlockBasedTable "name"]`. Not changeable by `set_options`:
/// open tables and the block cache depend on them.
pub(crate) const TABLE_OPTIONS: &[OptionDef<TableOptions>] = &[
    opt!("block_size", false, block_size, parse_int),
    opt!(
        "block_restart_interval",
        false,
        block_restart_interval,
        parse_int
    ),
    OptionDef {
        name: "filter_policy",
        mutable: false,
        get: |o| Some(format_filter_policy(o.bloom_bits_per_key)),
        set: |o, v, _| {
            o.bloom_bits_per_key = parse_filter_policy("filter_policy", v)?;
            Ok(())
        },
    },
    opt!(
        "whole_key_filtering",
        false,
        whole_key_filtering,
        parse_bool
    ),
    OptionDef {
        name: "checksum",
        mutable: false,
        get: |o| Some(checksum_name(o.checksum).to_owned()),
        set: |o, v, _| {
            o.checksum = parse_checksum("checksum", v)?;
            Ok(())
        },
    },
    opt!(
        "cache_index_and_filter_blocks",
        false,
        cache_index_and_filter_blocks,
        parse_bool
    ),
    opt!(
        "cache_index_and_filter_blocks_with_high_priority",
        false,
        cache_index_and_filter_blocks_with_high_priority,
        parse_bool
    ),
    opt!(
        "pin_l0_filter_and_index_blocks_in_cache",
        false,
        pin_l0_filter_and_index_blocks_in_cache,
        parse_bool
    ),
    opt!(
        "pin_top_level_index_and_filter",
        false,
        pin_top_level_index_and_filter,
        parse_bool
    ),
    OptionDef {
        name: "index_type",
        mutable: false,
        get: |o| Some(o.index_type.name().to_owned()),
        set: |o, v, _| {
            o.index_type = v.parse()?;
            Ok(())
        },
    },
    opt!("partition_filters", false, partition_filters, parse_bool),
    opt!("metadata_block_size", false, metadata_block_size, parse_int),
];

/// The only table factory, as RocksDB names it in `table_factory` and in
/// `[TableOptions/BlockBasedTable ...]`.
pub(crate) const BLOCK_BASED_TABLE: &str = "BlockBasedTable";

/// Looks an option up by name.
pub(crate) fn find<T>(defs: &'static [OptionDef<T>], name: &str) -> Option<&'static OptionDef<T>> {
    defs.iter().find(|d| d.name == name)
}

/// Whether any codec of `cf` but the bottommost override is zstd.
fn uses_zstd(cf: &CfOptions) -> bool {
    std::iter::once(&cf.table.compression)
        .chain(&cf.compaction.compression_per_level)
        .any(|c| matches!(c, CompressionType::Zstd { .. }))
}

/// The level `compression_opts` stands for: that of the first zstd codec
/// (the family's, then per level), else zstd's default. RocksDB has one
/// level for all; Strata writes the first when levels differ.
fn zstd_level(cf: &CfOptions) -> i32 {
    std::iter::once(&cf.table.compression)
        .chain(&cf.compaction.compression_per_level)
        .find_map(|c| match c {
            CompressionType::Zstd { level } => Some(*level),
            _ => None,
        })
        .unwrap_or(ZSTD_DEFAULT_LEVEL)
}

/// `level` out of a `compression_opts` struct; every other field is one
/// Strata lacks.
fn struct_level(
    option: &'static str,
    value: &str,
    unknown: &mut Vec<String>,
) -> Result<Option<i32>> {
    let mut level = None;
    for (key, v) in parse_struct(option, value)? {
        if key == "level" {
            level = Some(parse_zstd_level(option, &v)?);
        } else {
            unknown.push(format!("{option}.{key}"));
        }
    }
    Ok(level)
}

/// An integer sub-option, the error naming it as `option.key`.
fn sub_int<T: std::str::FromStr>(option: &'static str, key: &str, value: &str) -> Result<T> {
    parse_int(option, value).map_err(|e| match e {
        Error::InvalidArgument { field, reason } => {
            Error::invalid_argument(field, format!("{key}: {reason}"))
        }
        other => other,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_across_sections() {
        let mut names: Vec<&str> = DB_OPTIONS.iter().map(|d| d.name).collect();
        names.extend(CF_OPTIONS.iter().map(|d| d.name));
        names.extend(TABLE_OPTIONS.iter().map(|d| d.name));
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count);
    }
}
