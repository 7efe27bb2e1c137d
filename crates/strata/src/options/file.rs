//! The OPTIONS file: the options a database was opened with, in RocksDB's
//! INI layout and names (`OPTIONS-000007`), so tools and a later open can
//! read them back, and RocksDB's own tools can read Strata's.
//!
//! What is written: every option of the catalogue (`catalog.rs`), for
//! `[DBOptions]`, each family's `[CFOptions "name"]` (the default family
//! first) and its `[TableOptions/BlockBasedTable "name"]`. Options with no
//! text form (the file system, block cache, rate limiter, statistics) are not
//! written, as RocksDB writes none of them, and a loaded `DbOptions` has
//! their defaults (the file system is the one the file was read through).
//!
//! What is read: the same names. By default an option Strata lacks fails
//! the load with one `InvalidArgument` listing every such option with its
//! section and line; [`LoadOptions::ignore_unknown_options`] skips them. A
//! known option whose value Strata cannot honour (a comparator neither
//! built in nor in [`LoadOptions::comparators`], a merge operator or
//! compaction filter neither built in nor the caller's, a codec or table
//! factory it lacks, a malformed number) always fails, naming the option:
//! opened without it, the database would be read or compacted wrongly, and
//! the OPTIONS file that open writes would have lost it.
//! `max_background_jobs` and `delayed_write_rate` are read from
//! `[DBOptions]` into every family's `CompactionOptions` (they are
//! database-wide; the default family's copy is `DbOptions::compaction`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::catalog::{self, OptionDef, BLOCK_BASED_TABLE, CF_OPTIONS, DB_OPTIONS, TABLE_OPTIONS};
use super::ini::{self, Document, Entry, Section, SectionKind};
use super::{CfOptions, CompactionOptions, DbOptions};
use crate::compaction_filter::CompactionFilter;
use crate::comparator::{comparator_from_name, Comparator};
use crate::crash_point::crash_point;
use crate::error::{Error, Result};
use crate::filename::{options_file_name, parse_file_name, temp_file_name, FileType};
use crate::fs::{Fs, ReadFileOptions, StdFs};
use crate::merge::MergeOperator;

/// The RocksDB release whose option names and spellings the file follows
/// (Debian's, the `db_bench` Strata is compared with). RocksDB reads it to
/// judge whether options it does not know may be newer than itself.
pub const ROCKSDB_VERSION: &str = "7.8.3";

/// The layout's version, as RocksDB 7.8.3 writes it.
const OPTIONS_FILE_VERSION: &str = "1.1";

/// The default column family's name.
const DEFAULT_FAMILY: &str = "default";

/// Largest OPTIONS file read (1 MiB); RocksDB's are about 20 KiB.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// How OPTIONS files are loaded.
///
/// ```
/// use strata::options::LoadOptions;
///
/// let lenient = LoadOptions {
///     ignore_unknown_options: true,
///     ..LoadOptions::default()
/// };
/// assert!(lenient.merge_operators.is_empty());
/// ```
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Skip options Strata lacks instead of failing (RocksDB's
    /// `ignore_unknown_options`). Default false: every unknown option is
    /// listed in the error. Values Strata cannot honour fail either way.
    pub ignore_unknown_options: bool,
    /// The application's own merge operators, matched by
    /// [`MergeOperator::name`] before the built-ins. Default none.
    pub merge_operators: Vec<Arc<dyn MergeOperator>>,
    /// The application's compaction filters, matched by
    /// [`CompactionFilter::name`]: a filter is code, so the file only names
    /// it. A name none of them has fails the load with `InvalidArgument`,
    /// even with `ignore_unknown_options`: compactions without the filter
    /// would keep what it removes, and the next OPTIONS file would lose it
    /// (RocksDB, which cannot find it either, drops it silently). Strata
    /// has no built-in filters. Default none.
    pub compaction_filters: Vec<Arc<dyn CompactionFilter>>,
    /// The application's comparators, matched by [`Comparator::name`]
    /// before the built-ins. A name neither knows fails the load with
    /// `InvalidArgument`: data sorted by an unknown order cannot be read.
    /// Default none.
    pub comparators: Vec<Arc<dyn Comparator>>,
}

/// The text of an OPTIONS file for `db` and `families` (the default family
/// first; when it is not listed, `db`'s column family fields are written for
/// it).
///
/// # Errors
///
/// `InvalidArgument` when a family is listed twice or the default family
/// is listed but not first.
pub fn options_file_text(db: &DbOptions, families: &[(&str, &CfOptions)]) -> Result<String> {
    let default_options = db.cf_options();
    let mut all: Vec<(&str, &CfOptions)> = Vec::with_capacity(families.len() + 1);
    if families.first().map(|(name, _)| *name) != Some(DEFAULT_FAMILY) {
        all.push((DEFAULT_FAMILY, &default_options));
    }
    for &(name, cf) in families {
        if all.iter().any(|(seen, _)| *seen == name) {
            return Err(Error::invalid_argument(
                "families",
                format!("column family {name:?} is listed twice, or \"default\" is not first"),
            ));
        }
        all.push((name, cf));
    }
    let mut doc = Document::default();
    let mut version = Section::new(SectionKind::Version);
    version.push("rocksdb_version", ROCKSDB_VERSION);
    version.push("options_file_version", OPTIONS_FILE_VERSION);
    doc.sections.push(version);
    doc.sections
        .push(section_of(SectionKind::DbOptions, DB_OPTIONS, db));
    for (family, cf) in all {
        let family = family.to_owned();
        let kind = SectionKind::CfOptions {
            family: family.clone(),
        };
        doc.sections.push(section_of(kind, CF_OPTIONS, cf));
        let kind = SectionKind::TableOptions {
            factory: BLOCK_BASED_TABLE.to_owned(),
            family,
        };
        doc.sections
            .push(section_of(kind, TABLE_OPTIONS, &cf.table));
    }
    Ok(ini::render(&doc))
}

fn section_of<T>(kind: SectionKind, defs: &[OptionDef<T>], target: &T) -> Section {
    let mut section = Section::new(kind);
    for def in defs {
        if let Some(value) = (def.get)(target) {
            section.push(def.name, value);
        }
    }
    section
}

/// Writes `dir/OPTIONS-<file_number>` for `db` and `families` (see
/// [`options_file_text`]) and keeps only the newest two OPTIONS files.
///
/// The text goes to a temp file (`<file_number>.dbtmp`) that is synced,
/// renamed into place and the directory synced, so a crash leaves the old
/// file set or the new one, never a torn OPTIONS file; older files are
/// deleted only after that. `file_number` must be a fresh file number,
/// larger than any earlier OPTIONS file's.
///
/// ```
/// use std::sync::Arc;
/// use strata::fs::StdFs;
/// use strata::options::{load_latest_options_with_fs, write_options_file, LoadOptions};
/// use strata::{CfOptions, DbOptions};
///
/// let tmp = tempfile::tempdir().unwrap();
/// let dir = tmp.path();
/// let db = DbOptions { write_buffer_size: 8 << 20, ..DbOptions::default() };
/// let logs = CfOptions::default();
/// write_options_file(&StdFs, dir, 5, &db, &[("default", &db.cf_options()), ("logs", &logs)])
///     .unwrap();
/// let (loaded, families) =
///     load_latest_options_with_fs(Arc::new(StdFs), dir, &LoadOptions::default()).unwrap();
/// assert_eq!(loaded.write_buffer_size, 8 << 20);
/// assert_eq!(families[1].0, "logs");
/// ```
pub fn write_options_file(
    fs: &dyn Fs,
    dir: &Path,
    file_number: u64,
    db: &DbOptions,
    families: &[(&str, &CfOptions)],
) -> Result<()> {
    let text = options_file_text(db, families)?;
    let temp = temp_file_name(dir, file_number);
    let mut file = fs.create(&temp)?;
    file.append(text.as_bytes())?;
    file.sync()?;
    drop(file);
    crash_point!("options.temp_synced");
    fs.rename(&temp, &options_file_name(dir, file_number))?;
    crash_point!("options.renamed");
    fs.sync_dir(dir)?;
    delete_older_options_files(fs, dir, file_number)
}

/// Deletes the OPTIONS files older than `newest` but the latest of them.
fn delete_older_options_files(fs: &dyn Fs, dir: &Path, newest: u64) -> Result<()> {
    let mut older = options_file_numbers(fs, dir)?;
    older.retain(|&n| n < newest);
    older.sort_unstable_by(|a, b| b.cmp(a));
    crash_point!("options.delete_obsolete");
    for number in older.into_iter().skip(1) {
        match fs.remove(&options_file_name(dir, number)) {
            Err(e) if !e.is_not_found() => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

fn options_file_numbers(fs: &dyn Fs, dir: &Path) -> Result<Vec<u64>> {
    Ok(fs
        .list(dir)?
        .iter()
        .filter_map(|name| match parse_file_name(name) {
            Some(FileType::Options(n)) => Some(n),
            _ => None,
        })
        .collect())
}

/// Loads the newest OPTIONS file in `dir`, on the real file system: the
/// database options (their column family fields the default family's) and
/// every family's options, the default family first.
///
/// # Errors
///
/// `NotFound` when `dir` holds no OPTIONS file; `InvalidArgument` for a
/// malformed file, an option Strata lacks (all of them listed, unless
/// `load.ignore_unknown_options`) or a value it cannot honour.
///
/// ```no_run
/// use strata::options::{load_latest_options, LoadOptions};
///
/// let load = LoadOptions { ignore_unknown_options: true, ..LoadOptions::default() };
/// let (db, families) = load_latest_options("/var/lib/rocksdb", &load)?;
/// println!("write_buffer_size={} families={}", db.write_buffer_size, families.len());
/// # Ok::<(), strata::Error>(())
/// ```
pub fn load_latest_options(
    dir: impl AsRef<Path>,
    load: &LoadOptions,
) -> Result<(DbOptions, Vec<(String, CfOptions)>)> {
    load_latest_options_with_fs(Arc::new(StdFs), dir.as_ref(), load)
}

/// [`load_latest_options`] through `fs`, which the loaded `DbOptions` keep.
pub fn load_latest_options_with_fs(
    fs: Arc<dyn Fs>,
    dir: &Path,
    load: &LoadOptions,
) -> Result<(DbOptions, Vec<(String, CfOptions)>)> {
    let path = newest_options_file(fs.as_ref(), dir)?;
    load_options_file(fs, &path, load)
}

/// [`load_latest_options_with_fs`] for an open that only reads: it neither
/// compacts nor writes an OPTIONS file, so a compaction filter the caller
/// does not supply is left out rather than failing the load.
pub(crate) fn load_latest_options_for_reading(
    fs: Arc<dyn Fs>,
    dir: &Path,
    load: &LoadOptions,
) -> Result<(DbOptions, Vec<(String, CfOptions)>)> {
    let path = newest_options_file(fs.as_ref(), dir)?;
    load_file(fs, &path, load, Filters::Optional)
}

/// The newest OPTIONS file in `dir`; `NotFound` when there is none.
fn newest_options_file(fs: &dyn Fs, dir: &Path) -> Result<PathBuf> {
    let newest = options_file_numbers(fs, dir)?
        .into_iter()
        .max()
        .ok_or_else(|| Error::NotFound {
            what: format!("an OPTIONS file in {}", dir.display()),
        })?;
    Ok(options_file_name(dir, newest))
}

/// Loads one OPTIONS file (see [`load_latest_options`]).
pub fn load_options_file(
    fs: Arc<dyn Fs>,
    path: &Path,
    load: &LoadOptions,
) -> Result<(DbOptions, Vec<(String, CfOptions)>)> {
    load_file(fs, path, load, Filters::Required)
}

fn load_file(
    fs: Arc<dyn Fs>,
    path: &Path,
    load: &LoadOptions,
    filters: Filters,
) -> Result<(DbOptions, Vec<(String, CfOptions)>)> {
    let doc = read_document(fs.as_ref(), path)?;
    let db = DbOptions {
        fs,
        ..DbOptions::default()
    };
    Loader {
        path,
        load,
        filters,
        unknown: Vec::new(),
    }
    .options_of(&doc, db)
}

/// The layout of the OPTIONS file at `path`, no option resolved.
fn read_document(fs: &dyn Fs, path: &Path) -> Result<Document> {
    let file = fs.open(path, ReadFileOptions::default())?;
    if file.len() > MAX_FILE_BYTES {
        return Err(Error::invalid_argument(
            "options_file",
            format!(
                "{} is {} bytes, more than an OPTIONS file's {MAX_FILE_BYTES}",
                path.display(),
                file.len()
            ),
        ));
    }
    let len = usize::try_from(file.len()).unwrap_or(usize::MAX);
    let bytes = file.read_at(0, len)?;
    ini::parse(&bytes, path)
}

/// The merge operators an OPTIONS file names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StoredMergeOperators {
    /// The file.
    pub file: PathBuf,
    /// `(family, description)` for each family whose section names an
    /// operator (`merge_operator=` other than `nullptr`), as written.
    pub families: Vec<(String, String)>,
}

impl StoredMergeOperators {
    /// The description of `family`'s operator, if the file names one.
    pub fn of(&self, family: &str) -> Option<&str> {
        self.families
            .iter()
            .find(|(name, _)| name == family)
            .map(|(_, description)| description.as_str())
    }
}

/// Most times [`newest_merge_operators`] looks again for the newest file
/// when the one it listed is gone.
const MAX_LISTINGS: usize = 10;

/// The merge operators the newest OPTIONS file in `dir` names, read from
/// the layout alone: no option is resolved, so a file naming application
/// objects this program lacks still says which operators its families were
/// opened with. `None` when `dir` holds no OPTIONS file.
pub(crate) fn newest_merge_operators(
    fs: &dyn Fs,
    dir: &Path,
) -> Result<Option<StoredMergeOperators>> {
    let mut listings = 0;
    loop {
        let file = match newest_options_file(fs, dir) {
            Ok(file) => file,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e),
        };
        let doc = match read_document(fs, &file) {
            Ok(doc) => doc,
            // Replaced by a writer beside a read-only open: look again.
            Err(e) if e.is_not_found() && listings < MAX_LISTINGS => {
                listings += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        let families = doc
            .sections
            .iter()
            .filter_map(|section| match &section.kind {
                SectionKind::CfOptions { family } => {
                    let entry = section
                        .entries
                        .iter()
                        .find(|e| e.name == "merge_operator")?;
                    (entry.value != "nullptr").then(|| (family.clone(), entry.value.clone()))
                }
                _ => None,
            })
            .collect();
        return Ok(Some(StoredMergeOperators { file, families }));
    }
}

/// Whether a load must supply every compaction filter the file names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filters {
    /// A name the caller has no filter for fails the load.
    Required,
    /// Such a filter is left out: the options are only read from.
    Optional,
}

/// Applies a document's sections, collecting the options Strata lacks.
struct Loader<'a> {
    path: &'a Path,
    load: &'a LoadOptions,
    filters: Filters,
    /// `[Section] name (line n)` for each option Strata lacks.
    unknown: Vec<String>,
}

/// Applied after the rest of their section: they set the level of the zstd
/// codecs the section names, in whatever order RocksDB wrote them.
const APPLIED_LAST: [&str; 2] = ["compression_opts", "bottommost_compression_opts"];

impl Loader<'_> {
    fn options_of(
        mut self,
        doc: &Document,
        mut db: DbOptions,
    ) -> Result<(DbOptions, Vec<(String, CfOptions)>)> {
        let mut families: Vec<(String, CfOptions)> = Vec::new();
        for section in &doc.sections {
            let label = section_label(&section.kind);
            match &section.kind {
                SectionKind::Version => {}
                SectionKind::DbOptions => {
                    self.apply(DB_OPTIONS, &mut db, section.entries.iter(), &label)?;
                }
                SectionKind::CfOptions { family } => {
                    let mut cf = CfOptions::default();
                    self.apply_cf(&mut cf, &section.entries, &label)?;
                    families.push((family.clone(), cf));
                }
                SectionKind::TableOptions { factory, family } => {
                    if factory != BLOCK_BASED_TABLE {
                        return Err(self.at_line(
                            section.line,
                            Error::invalid_argument(
                                "table_factory",
                                format!("{factory} tables are not supported; Strata writes only {BLOCK_BASED_TABLE}"),
                            ),
                        ));
                    }
                    // The parser put this family's [CFOptions] first.
                    if let Some((_, cf)) = families.iter_mut().find(|(n, _)| n == family) {
                        self.apply(TABLE_OPTIONS, &mut cf.table, section.entries.iter(), &label)?;
                    }
                }
            }
        }
        if !self.unknown.is_empty() && !self.load.ignore_unknown_options {
            return Err(Error::invalid_argument(
                "options_file",
                format!(
                    "{} sets {} options Strata does not know: {}; load with \
                     ignore_unknown_options to skip them",
                    self.path.display(),
                    self.unknown.len(),
                    self.unknown.join(", ")
                ),
            ));
        }
        for (_, cf) in &mut families {
            copy_db_wide(&db.compaction, &mut cf.compaction);
        }
        if let Some((_, default)) = families.first() {
            db.set_cf_options(default.clone());
        }
        Ok((db, families))
    }

    fn apply_cf(&mut self, cf: &mut CfOptions, entries: &[Entry], label: &str) -> Result<()> {
        let (last, first): (Vec<&Entry>, Vec<&Entry>) = entries
            .iter()
            .filter(|e| {
                !["merge_operator", "compaction_filter", "comparator"].contains(&e.name.as_str())
            })
            .partition(|e| APPLIED_LAST.contains(&e.name.as_str()));
        self.apply(CF_OPTIONS, cf, first.into_iter(), label)?;
        self.apply(CF_OPTIONS, cf, last.into_iter(), label)?;
        if let Some(entry) = entries.iter().find(|e| e.name == "compaction_filter") {
            cf.compaction_filter = self.compaction_filter(entry, label)?;
        }
        if let Some(entry) = entries.iter().find(|e| e.name == "comparator") {
            let own = self
                .load
                .comparators
                .iter()
                .find(|c| c.name() == entry.value);
            cf.comparator = match own {
                Some(c) => c.clone(),
                None => {
                    comparator_from_name(&entry.value).map_err(|e| self.at_line(entry.line, e))?
                }
            };
        }
        if let Some(entry) = entries.iter().find(|e| e.name == "merge_operator") {
            let mut sub = Vec::new();
            cf.merge_operator = super::merge_operator::parse_merge_operator(
                &entry.value,
                &self.load.merge_operators,
                &mut sub,
            )
            .map_err(|e| self.at_line(entry.line, e))?;
            self.note_unknown(label, &sub, entry.line);
        }
        Ok(())
    }

    /// The filter `entry` names, among the caller's (see
    /// [`LoadOptions::compaction_filters`]).
    fn compaction_filter(
        &self,
        entry: &Entry,
        label: &str,
    ) -> Result<Option<Arc<dyn CompactionFilter>>> {
        if entry.value == "nullptr" {
            return Ok(None);
        }
        let own = self
            .load
            .compaction_filters
            .iter()
            .find(|f| f.name() == entry.value);
        match (own, self.filters) {
            (Some(filter), _) => Ok(Some(filter.clone())),
            (None, Filters::Optional) => Ok(None),
            (None, Filters::Required) => Err(self.at_line(
                entry.line,
                Error::invalid_argument(
                    "compaction_filter",
                    format!(
                        "{label} names compaction filter {:?}, application code this program \
                         does not have: opened without it, compactions would keep what it \
                         removes and the next OPTIONS file would lose it; open the database \
                         from the application that has it (LoadOptions::compaction_filters \
                         finds it by name)",
                        entry.value
                    ),
                ),
            )),
        }
    }

    fn apply<'e, T>(
        &mut self,
        defs: &'static [OptionDef<T>],
        target: &mut T,
        entries: impl Iterator<Item = &'e Entry>,
        label: &str,
    ) -> Result<()> {
        for entry in entries {
            let Some(def) = catalog::find(defs, &entry.name) else {
                self.note_unknown(label, std::slice::from_ref(&entry.name), entry.line);
                continue;
            };
            let mut sub = Vec::new();
            (def.set)(target, &entry.value, &mut sub).map_err(|e| self.at_line(entry.line, e))?;
            self.note_unknown(label, &sub, entry.line);
        }
        Ok(())
    }

    fn note_unknown(&mut self, label: &str, names: &[String], line: usize) {
        for name in names {
            self.unknown.push(format!("{label} {name} (line {line})"));
        }
    }

    /// Puts the file and line in front of a value error's reason.
    fn at_line(&self, line: usize, error: Error) -> Error {
        match error {
            Error::InvalidArgument { field, reason } => Error::invalid_argument(
                field,
                format!("{} line {line}: {reason}", self.path.display()),
            ),
            other => other,
        }
    }
}

/// `[DBOptions]`, `[CFOptions "logs"]`, ... for messages.
fn section_label(kind: &SectionKind) -> String {
    match kind {
        SectionKind::Version => "[Version]".to_owned(),
        SectionKind::DbOptions => "[DBOptions]".to_owned(),
        SectionKind::CfOptions { family } => format!("[CFOptions {family:?}]"),
        SectionKind::TableOptions { factory, family } => {
            format!("[TableOptions/{factory} {family:?}]")
        }
    }
}

/// The database-wide fields kept in `CompactionOptions` (see the module
/// comment).
fn copy_db_wide(from: &CompactionOptions, to: &mut CompactionOptions) {
    to.max_background_jobs = from.max_background_jobs;
    to.max_subcompactions = from.max_subcompactions;
    to.delayed_write_rate = from.delayed_write_rate;
}

#[cfg(test)]
#[path = "file_tests.rs"]
mod tests;
