//! Options set by name on an open database (RocksDB's `SetOptions` and
//! `SetDBOptions`): the value spellings are the OPTIONS file's, and which
//! options may change at run time is RocksDB's rule, both from the one
//! catalogue (`catalog.rs`).
//!
//! The db layer checks [`is_mutable_cf_option`] for every pair, applies them
//! to a copy with [`apply_cf_option`], validates the copy, and only then
//! installs it, so a failed `set_options` changes nothing.

use super::catalog::{self, OptionDef, CF_OPTIONS, DB_OPTIONS, TABLE_OPTIONS};
use super::{CfOptions, DbOptions};
use crate::error::{Error, Result};

/// Sets the column family option `name` (a `[CFOptions]` or
/// `[TableOptions/BlockBasedTable]` name) from `value` in RocksDB's spelling.
/// Applies any known option, mutable or not: opening with options from a
/// file needs them all; `set_options` checks [`is_mutable_cf_option`] first.
/// The result is not validated (call [`CfOptions::validate`]).
///
/// # Errors
///
/// `InvalidArgument` naming the option for an unknown name, a malformed
/// value, a value Strata cannot honour, or a `{...}` value with a
/// sub-option Strata lacks.
///
/// ```
/// use strata::options::apply_cf_option;
/// use strata::{CfOptions, CompressionType};
///
/// let mut cf = CfOptions::default();
/// apply_cf_option(&mut cf, "write_buffer_size", "8388608").unwrap();
/// apply_cf_option(&mut cf, "compression", "kLZ4Compression").unwrap();
/// apply_cf_option(&mut cf, "block_size", "16384").unwrap();
/// assert_eq!(cf.write_buffer_size, 8 << 20);
/// assert_eq!(cf.table.compression, CompressionType::Lz4);
/// assert_eq!(cf.table.block_size, 16384);
/// assert!(apply_cf_option(&mut cf, "write_buffer_size", "8MB").is_err());
/// ```
pub fn apply_cf_option(cf: &mut CfOptions, name: &str, value: &str) -> Result<()> {
    if let Some(def) = catalog::find(CF_OPTIONS, name) {
        return set_strictly(def, cf, value);
    }
    if let Some(def) = catalog::find(TABLE_OPTIONS, name) {
        return set_strictly(def, &mut cf.table, value);
    }
    Err(Error::invalid_argument(
        "options",
        format!("{name:?} is not a column family option Strata knows"),
    ))
}

/// Sets the database option `name` (a `[DBOptions]` name) from `value`; see
/// [`apply_cf_option`]. `set_db_options` checks [`is_mutable_db_option`].
///
/// ```
/// use strata::options::apply_db_option;
/// use strata::DbOptions;
///
/// let mut db = DbOptions::default();
/// apply_db_option(&mut db, "max_background_jobs", "4").unwrap();
/// assert_eq!(db.compaction.max_background_jobs, 4);
/// ```
pub fn apply_db_option(db: &mut DbOptions, name: &str, value: &str) -> Result<()> {
    match catalog::find(DB_OPTIONS, name) {
        Some(def) => set_strictly(def, db, value),
        None => Err(Error::invalid_argument(
            "options",
            format!("{name:?} is not a database option Strata knows"),
        )),
    }
}

/// The value of the column family option `name` (as [`apply_cf_option`]
/// takes it) in the OPTIONS file's spelling; `None` when the option is
/// unset and so not written (a `prefix_extractor` of none, say).
///
/// # Errors
///
/// `InvalidArgument` naming the option when Strata has no such option.
///
/// ```
/// use strata::options::{apply_cf_option, cf_option_value};
/// use strata::CfOptions;
///
/// let mut cf = CfOptions::default();
/// apply_cf_option(&mut cf, "block_size", "16384").unwrap();
/// assert_eq!(cf_option_value(&cf, "block_size").unwrap().as_deref(), Some("16384"));
/// assert!(cf_option_value(&cf, "no_such_option").is_err());
/// ```
pub fn cf_option_value(cf: &CfOptions, name: &str) -> Result<Option<String>> {
    if let Some(def) = catalog::find(CF_OPTIONS, name) {
        return Ok((def.get)(cf));
    }
    if let Some(def) = catalog::find(TABLE_OPTIONS, name) {
        return Ok((def.get)(&cf.table));
    }
    Err(Error::invalid_argument(
        "options",
        format!("{name:?} is not a column family option Strata knows"),
    ))
}

/// The value of the database option `name` (as [`apply_db_option`] takes
/// it) in the OPTIONS file's spelling; see [`cf_option_value`].
///
/// # Errors
///
/// `InvalidArgument` naming the option when Strata has no such option.
pub fn db_option_value(db: &DbOptions, name: &str) -> Result<Option<String>> {
    match catalog::find(DB_OPTIONS, name) {
        Some(def) => Ok((def.get)(db)),
        None => Err(Error::invalid_argument(
            "options",
            format!("{name:?} is not a database option Strata knows"),
        )),
    }
}

/// Every option name [`apply_db_option`] and then [`apply_cf_option`] take,
/// in catalogue order: database, column family, then table options.
pub fn option_names() -> Vec<&'static str> {
    let db = DB_OPTIONS.iter().map(|d| d.name);
    let cf = CF_OPTIONS.iter().map(|d| d.name);
    db.chain(cf)
        .chain(TABLE_OPTIONS.iter().map(|d| d.name))
        .collect()
}

/// Applies `value`, refusing sub-options Strata lacks.
fn set_strictly<T>(def: &OptionDef<T>, target: &mut T, value: &str) -> Result<()> {
    let mut unknown = Vec::new();
    (def.set)(target, value, &mut unknown)?;
    if unknown.is_empty() {
        return Ok(());
    }
    Err(Error::invalid_argument(
        def.name,
        format!("sub-options Strata does not know: {}", unknown.join(", ")),
    ))
}

/// Whether `set_options` may change the column family option `name` on an
/// open database (RocksDB's mutable column family options, those Strata
/// has).
///
/// ```
/// use strata::options::is_mutable_cf_option;
///
/// assert!(is_mutable_cf_option("write_buffer_size"));
/// assert!(!is_mutable_cf_option("num_levels"));
/// ```
pub fn is_mutable_cf_option(name: &str) -> bool {
    catalog::find(CF_OPTIONS, name).is_some_and(|d| d.mutable)
}

/// Whether `set_db_options` may change the database option `name` on an open
/// database (RocksDB's mutable DB options, those Strata has).
pub fn is_mutable_db_option(name: &str) -> bool {
    catalog::find(DB_OPTIONS, name).is_some_and(|d| d.mutable)
}

/// Every column family option `set_options` may change, in catalogue order.
pub fn mutable_cf_option_names() -> Vec<&'static str> {
    CF_OPTIONS
        .iter()
        .filter(|d| d.mutable)
        .map(|d| d.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compression::CompressionType;

    #[test]
    fn every_option_reads_back_what_was_set() {
        let mut db = DbOptions::default();
        apply_db_option(&mut db, "max_background_jobs", "5").unwrap();
        assert_eq!(
            db_option_value(&db, "max_background_jobs")
                .unwrap()
                .as_deref(),
            Some("5")
        );
        let mut cf = CfOptions::default();
        apply_cf_option(&mut cf, "compression", "kZSTD").unwrap();
        apply_cf_option(&mut cf, "whole_key_filtering", "false").unwrap();
        assert_eq!(
            cf_option_value(&cf, "compression").unwrap().as_deref(),
            Some("kZSTD")
        );
        assert_eq!(
            cf_option_value(&cf, "whole_key_filtering")
                .unwrap()
                .as_deref(),
            Some("false")
        );
        assert!(db_option_value(&db, "compression").is_err());
        assert!(cf_option_value(&cf, "max_background_jobs").is_err());
        // Each name reads, and a value read sets the same option again.
        for name in option_names() {
            let value = match db_option_value(&db, name) {
                Ok(v) => v,
                Err(_) => cf_option_value(&cf, name).unwrap(),
            };
            if let Some(value) = value {
                let mut db2 = db.clone();
                let mut cf2 = cf.clone();
                let set = apply_db_option(&mut db2, name, &value)
                    .or_else(|_| apply_cf_option(&mut cf2, name, &value));
                assert!(set.is_ok(), "{name} = {value:?}: {set:?}");
            }
        }
    }

    #[test]
    fn mutable_names_are_rocksdbs() {
        let names = mutable_cf_option_names();
        for name in [
            "write_buffer_size",
            "max_write_buffer_number",
            "level0_file_num_compaction_trigger",
            "level0_slowdown_writes_trigger",
            "level0_stop_writes_trigger",
            "max_bytes_for_level_base",
            "target_file_size_base",
            "disable_auto_compactions",
            "compression",
            "compaction_options_universal",
        ] {
            assert!(names.contains(&name), "{name}");
        }
        for name in [
            "num_levels",
            "compaction_style",
            "merge_operator",
            "comparator",
            "block_size",
            "level_compaction_dynamic_level_bytes",
        ] {
            assert!(!is_mutable_cf_option(name), "{name}");
        }
        assert!(is_mutable_db_option("max_background_jobs"));
        assert!(!is_mutable_db_option("create_if_missing"));
    }

    #[test]
    fn zstd_level_follows_compression_opts_either_way_round() {
        let mut cf = CfOptions::default();
        apply_cf_option(&mut cf, "compression", "kZSTD").unwrap();
        apply_cf_option(&mut cf, "compression_opts", "{level=9;}").unwrap();
        assert_eq!(cf.table.compression, CompressionType::Zstd { level: 9 });
        apply_cf_option(&mut cf, "compression_per_level", "kNoCompression:kZSTD").unwrap();
        assert_eq!(
            cf.compaction.compression_per_level,
            [CompressionType::None, CompressionType::Zstd { level: 9 }]
        );
        apply_cf_option(&mut cf, "bottommost_compression", "kZSTD").unwrap();
        apply_cf_option(&mut cf, "bottommost_compression_opts", "{level=19;}").unwrap();
        assert_eq!(
            cf.compaction.bottommost_compression,
            Some(CompressionType::Zstd { level: 19 })
        );
    }

    #[test]
    fn bad_names_values_and_sub_options_are_named() {
        let mut cf = CfOptions::default();
        let message = |r: Result<()>| r.unwrap_err().to_string();
        let m = message(apply_cf_option(&mut cf, "write_bufer_size", "1"));
        assert!(m.contains("write_bufer_size"), "{m}");
        let m = message(apply_cf_option(&mut cf, "num_levels", "seven"));
        assert!(m.contains("num_levels") && m.contains("seven"), "{m}");
        let m = message(apply_cf_option(
            &mut cf,
            "compaction_options_fifo",
            "{allow_compaction=true;}",
        ));
        assert!(
            m.contains("compaction_options_fifo.allow_compaction"),
            "{m}"
        );
        let m = message(apply_cf_option(
            &mut cf,
            "compaction_options_universal",
            "{size_ratio=x;}",
        ));
        assert!(m.contains("size_ratio") && m.contains("\"x\""), "{m}");
        let m = message(apply_cf_option(
            &mut cf,
            "comparator",
            "rocksdb.NoSuchComparator",
        ));
        assert!(m.contains("comparator"), "{m}");
        let mut db = DbOptions::default();
        let m = message(apply_db_option(&mut db, "wal_recovery_mode", "kNope"));
        assert!(m.contains("wal_recovery_mode"), "{m}");
    }
}
