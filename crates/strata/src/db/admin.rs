//! Operations on a database directory as a whole: destroying it, checking its
//! consistency beside a live writer, and reporting WAL damage.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::open_checks::{not_whole_error, retry_while_changing, tables_not_whole};
use super::wal_replay::WalDamage;
use super::{Db, DbInner};
use crate::error::Result;
use crate::filename::{corrupt_log_file_name, lock_file_name, parse_file_name, FileType};
use crate::fs::Fs;
use crate::options::DbOptions;
use crate::version::VersionSet;

pub(super) fn destroy(dir: &Path, options: &DbOptions) -> Result<()> {
    let fs = &*options.fs;
    if !fs.exists(dir)? {
        return Ok(());
    }
    // Held until the end: no process can open the database while its files
    // go, and one that has it open makes this fail before anything is lost.
    let lock_path = lock_file_name(dir);
    let lock = fs.lock(&lock_path)?;
    for name in fs.list(dir)? {
        match parse_file_name(&name) {
            None | Some(FileType::Lock) => {}
            Some(_) => fs.remove(&dir.join(&name))?,
        }
    }
    fs.remove(&lock_path)?;
    drop(lock);
    Ok(())
}

/// What [`check_consistency`] found.
///
/// ```
/// use strata::{check_consistency, Db, DbOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let dir = tempfile::tempdir()?;
/// let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// db.put("k", "v")?;
/// db.flush()?;
/// // Works beside the live writer, and writes nothing.
/// let report = check_consistency(dir.path(), &DbOptions::default())?;
/// assert!(report.is_clean());
/// assert_eq!(report.tables_checked, 1);
/// assert!(report.wal_damage.is_empty() && report.corrupt_wals.is_empty());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsistencyReport {
    /// Table files checked (each exists with the size its MANIFEST records).
    pub tables_checked: usize,
    /// Blob files checked the same way.
    pub blob_files_checked: usize,
    /// Damage that replaying the WALs found now.
    pub wal_damage: Vec<WalDamage>,
    /// Damaged WALs an earlier read-write open set aside (`NNNNNN.log.corrupt`):
    /// writes in them after the damage were not recovered.
    pub corrupt_wals: Vec<PathBuf>,
}

impl ConsistencyReport {
    /// True when nothing was found wrong.
    pub fn is_clean(&self) -> bool {
        self.wal_damage.is_empty() && self.corrupt_wals.is_empty()
    }
}

/// Checks the database in `path` without writing anything (so beside a live
/// writer too): the MANIFEST replays, every table it lists exists with its
/// recorded size, and so does every blob file it links, and the WALs replay; damaged WALs, now or kept from earlier
/// opens, are reported. Missing or short tables are an `Error::Corruption`
/// naming each. Files a concurrent writer deletes in the middle of the check
/// make it start again on the newer state, never a false alarm.
pub fn check_consistency(path: impl AsRef<Path>, options: &DbOptions) -> Result<ConsistencyReport> {
    let dir = path.as_ref();
    let fs = &*options.fs;
    retry_while_changing(fs, dir, || {
        let db = Db::open_read_only(dir, options.clone())?;
        let (mut tables_checked, mut blob_files_checked) = (0, 0);
        let mut problems = Vec::new();
        let mut comparators = Vec::new();
        for cf in db.column_families() {
            let sv = cf.shared.super_version.load();
            comparators.push(sv.options.comparator.clone());
            let version = sv.version.clone();
            problems.extend(tables_not_whole(fs, dir, &version)?);
            tables_checked += version.all_files().count();
            blob_files_checked += version.blob_files().len();
        }
        if !problems.is_empty() {
            // A writer beside the check deletes tables right after the
            // MANIFEST stops listing them, and a busy one changes the
            // MANIFEST faster than a large one is read again: a table is
            // damage only if the newest MANIFEST still lists it (a writer
            // never deletes a listed table, and never lists one before it
            // is whole).
            let newest = VersionSet::recover(options.fs.clone(), dir, &comparators)?;
            let listed: HashSet<u64> = newest
                .families()
                .flat_map(|(id, _)| {
                    let version = newest.current(id);
                    let mut numbers: Vec<u64> =
                        version.all_files().map(|(_, f)| f.number).collect();
                    numbers.extend(version.blob_files().keys().copied());
                    numbers
                })
                .collect();
            problems.retain(|(number, _)| listed.contains(number));
            not_whole_error(fs, dir, &problems)?;
        }
        Ok(ConsistencyReport {
            tables_checked,
            blob_files_checked,
            wal_damage: db.inner.wal_damage.clone(),
            corrupt_wals: corrupt_wals(fs, dir)?,
        })
    })
}

fn corrupt_wals(fs: &dyn Fs, dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found: Vec<u64> = fs
        .list(dir)?
        .iter()
        .filter_map(|name| match parse_file_name(name) {
            Some(FileType::CorruptLog(n)) => Some(n),
            _ => None,
        })
        .collect();
    found.sort_unstable();
    Ok(found
        .into_iter()
        .map(|n| corrupt_log_file_name(dir, n))
        .collect())
}

/// The `strata.wal-damage` property: one line per damage this open found and
/// per damaged WAL kept in the directory; empty when there is none.
pub(super) fn wal_damage_report(inner: &DbInner) -> String {
    let mut lines: Vec<String> = inner.wal_damage.iter().map(|d| d.to_string()).collect();
    match corrupt_wals(&*inner.fs, &inner.dir) {
        Ok(kept) => lines.extend(
            kept.iter()
                .map(|p| format!("damaged WAL kept as {}", p.display())),
        ),
        Err(e) => {
            if !e.is_not_found() {
                lines.push(format!("could not list {}: {e}", inner.dir.display()));
            }
        }
    }
    lines.join("\n")
}
