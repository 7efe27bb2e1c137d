//! The options `Db(path, ...)` opens a database with.
//!
//! A database that exists opens with what its newest OPTIONS file records,
//! for the database and for each family, and only the options the caller
//! set by name (`Options(write_buffer_size=...)`, an attribute, `set`)
//! applied over them. Its merge operators, comparators and compaction
//! filters above all: its data cannot be read or compacted right without
//! them, and an open without them would write an OPTIONS file that lacks
//! them, so even `Options.load_latest` could not bring them back. Built-in
//! operators and comparators are found by name; one the application wrote
//! (which Python cannot supply), and every compaction filter (Strata has no
//! built-in ones), fails the open with `strata.InvalidArgument` naming it.
//! So a plain `Db(path)` opens as the `strata` CLI and rocksdict's
//! `Rdict(path)` do. A new database, or one written before OPTIONS files,
//! opens with the options given.

use std::path::Path;

use pyo3::prelude::*;
use strata::{load_latest_options, CfOptions, DbOptions, LoadOptions, DEFAULT_COLUMN_FAMILY_NAME};

use crate::options::Options;
use crate::to_py;

/// The options of a database and of its families (the default one first
/// when an OPTIONS file lists them), as the engine's open takes them.
type DbAndFamilyOptions = (DbOptions, Vec<(String, CfOptions)>);

/// The options of the database and of every family to open it with:
/// `options` for the database and the default family, `named` for the
/// families the caller names (created when missing), the rest as stored.
pub(crate) fn open_options(
    path: &Path,
    options: Option<Options>,
    named: Vec<(String, Options)>,
) -> PyResult<DbAndFamilyOptions> {
    let given = options.unwrap_or_else(Options::defaults);
    let (mut db, stored) = match stored_options(path)? {
        None => (given.db.clone(), Vec::new()),
        Some((stored, families)) => {
            let mut db = DbOptions {
                // What this open asks, not what the database is.
                create_if_missing: given.db.create_if_missing,
                error_if_exists: given.db.error_if_exists,
                // What no OPTIONS file records.
                fs: given.db.fs.clone(),
                block_cache: given.db.block_cache.clone(),
                statistics: given.db.statistics.clone(),
                rate_limiter: given.db.rate_limiter.clone(),
                listeners: given.db.listeners.clone(),
                services: given.db.services.clone(),
                ..stored
            };
            given.apply_given(&mut db)?;
            (db, families)
        }
    };
    // The families `named` gives are created when missing.
    db.create_missing_column_families = true;
    let recorded = |name: &str| {
        stored
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, cf)| cf.clone())
    };
    let mut families: Vec<(String, CfOptions)> = Vec::with_capacity(named.len());
    for (name, options) in named {
        let cf = match recorded(&name) {
            Some(mut cf) => {
                options.apply_given_cf(&mut cf)?;
                cf
            }
            None => options.cf(),
        };
        families.push((name, cf));
    }
    // The engine opens every family or none: those on disk the caller did
    // not name open as stored, else (a family the OPTIONS file missed)
    // with the default family's options, as rocksdict opens them.
    if let Ok(on_disk) = strata::Db::list_column_families(path, &db) {
        for name in on_disk {
            if name != DEFAULT_COLUMN_FAMILY_NAME && !families.iter().any(|(n, _)| *n == name) {
                let cf = recorded(&name).unwrap_or_else(|| db.cf_options());
                families.push((name, cf));
            }
        }
    }
    Ok((db, families))
}

/// The database's and its families' options from its newest OPTIONS file;
/// `None` when there is none (no database yet, or one older than OPTIONS
/// files). Options this build lacks are skipped, as the CLI skips them;
/// an operator, comparator or compaction filter it cannot resolve fails,
/// naming it.
fn stored_options(path: &Path) -> PyResult<Option<DbAndFamilyOptions>> {
    let load = LoadOptions {
        ignore_unknown_options: true,
        ..LoadOptions::default()
    };
    match load_latest_options(path, &load) {
        Ok(stored) => Ok(Some(stored)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(to_py(e)),
    }
}
