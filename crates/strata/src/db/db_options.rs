//! `Db::set_db_options`: changing database-wide options while open
//! (RocksDB's `SetDBOptions`).
//!
//! Strata keeps `delayed_write_rate` and `max_background_jobs` in every
//! family's compaction options (the write controller reads the family's),
//! and the OPTIONS file takes its `[DBOptions]` values from the default
//! family; so a change is applied to every family, then written out.

use std::sync::Arc;

use super::info_log::info;
use crate::error::{Error, Result};
use crate::options::{apply_db_option, CfOptions};

use super::families::options_to_persist;
use super::Db;

/// The database options `set_db_options` can change, by RocksDB's names.
const SETTABLE: &[&str] = &[
    "delayed_write_rate",
    "max_background_jobs",
    "max_subcompactions",
];

impl Db {
    /// Changes database-wide options while the database is open (RocksDB's
    /// `SetDBOptions`), by RocksDB's names and spellings:
    /// `delayed_write_rate` (bytes per second writes are held to during a
    /// slowdown), `max_background_jobs` (more compaction threads start at
    /// once; with fewer, the extra ones finish their job and idle) and
    /// `max_subcompactions` (for compactions picked from then on). All or
    /// nothing: another name or a bad value fails with `InvalidArgument`
    /// naming it, changing nothing. The change is written to a new OPTIONS
    /// file.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// # let options = strata::DbOptions { create_if_missing: true, ..Default::default() };
    /// # let db = strata::Db::open(dir.path(), options)?;
    /// db.set_db_options(&[("max_background_jobs", "4"), ("delayed_write_rate", "8388608")])?;
    /// assert!(db.set_db_options(&[("max_open_files", "10")]).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn set_db_options(&self, changes: &[(&str, &str)]) -> Result<()> {
        self.inner.check_writable()?;
        let mut state = self.inner.state.lock();
        let mut db_options = self.inner.options.clone();
        if let Some(default) = state.cfs.values().next() {
            db_options.set_cf_options((*default.options).clone());
        }
        for &(name, value) in changes {
            if !SETTABLE.contains(&name) {
                return Err(Error::invalid_argument(
                    "set_db_options",
                    format!(
                        "{name:?} cannot change while the database is open (Strata can change {})",
                        SETTABLE.join(", ")
                    ),
                ));
            }
            apply_db_option(&mut db_options, name, value)?;
        }
        db_options.validate()?;
        let wanted = &db_options.compaction;
        let changed: Vec<(u32, CfOptions)> = state
            .cfs
            .iter()
            .map(|(&id, family)| {
                let mut options = (*family.options).clone();
                options.compaction.delayed_write_rate = wanted.delayed_write_rate;
                options.compaction.max_background_jobs = wanted.max_background_jobs;
                options.compaction.max_subcompactions = wanted.max_subcompactions;
                options.validate().map(|()| (id, options))
            })
            .collect::<Result<_>>()?;
        if changes
            .iter()
            .any(|(name, _)| *name == "delayed_write_rate")
        {
            state
                .commit
                .write_controller
                .reset_rate(wanted.delayed_write_rate);
        }
        for (id, options) in changed {
            if let Some(family) = state.cfs.get_mut(&id) {
                family.options = Arc::new(options);
            }
            self.inner.install_super_version(&mut state, id);
        }
        let threads = wanted.compaction_threads();
        state.jobs.compaction_threads = threads;
        info!(self.inner.info_log, "set_db_options: {changes:?}");
        self.inner.bg_cv.notify_all();
        let options_file = options_to_persist(&self.inner, &mut state);
        drop(state);
        let persisted = options_file.write(&self.inner);
        self.lifecycle.add_compaction_threads(threads)?;
        persisted
    }
}
