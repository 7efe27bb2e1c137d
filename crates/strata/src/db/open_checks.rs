//! Checks an open makes before it trusts or changes a directory: that a
//! directory without CURRENT holds no database, that every live table is
//! there whole, that the data fits the configured levels; and the retry that
//! lets a reader open beside a writer that keeps changing the files.

use std::path::Path;

use crate::error::{Error, Result};
use crate::filename::{
    blob_file_name, current_file_name, manifest_file_name, parse_file_name, read_current_file,
    table_file_name, FileType,
};
use crate::fs::{Fs, ReadFileOptions};
use crate::version::{Version, VersionSet};
use crate::wal::LogReader;

/// Refuses to create a database in `dir` (which has no CURRENT) when it holds
/// files of one: a MANIFEST, a table, a WAL with data, a blob or OPTIONS file.
/// A new database would treat them as obsolete and delete them. The one
/// exception is a creation that a crash interrupted: empty WALs and
/// MANIFESTs that describe an empty database, which hold nothing to lose.
pub(super) fn refuse_files_without_current(fs: &dyn Fs, dir: &Path) -> Result<()> {
    let mut names: Vec<(String, FileType)> = fs
        .list(dir)?
        .into_iter()
        .filter_map(|name| parse_file_name(&name).map(|t| (name, t)))
        .filter(|(_, t)| t.holds_data())
        .collect();
    if names.is_empty() || interrupted_creation(fs, dir, &names) {
        return Ok(());
    }
    names.sort_by(|a, b| a.0.cmp(&b.0));
    let manifests: Vec<u64> = names
        .iter()
        .filter_map(|(_, t)| match t {
            FileType::Manifest(n) => Some(*n),
            _ => None,
        })
        .collect();
    let advice = match manifests.iter().max() {
        Some(n) => format!(
            "if MANIFEST-{n:06} is the live one, recover by writing the line \
             \"MANIFEST-{n:06}\" into {}",
            current_file_name(dir).display()
        ),
        None => "no MANIFEST is left, so the tables must be recovered by hand".to_string(),
    };
    let listed: Vec<&str> = names.iter().map(|(name, _)| name.as_str()).collect();
    Err(Error::corruption(
        current_file_name(dir),
        0,
        format!(
            "CURRENT is missing, but the directory holds a database's files ({}); refusing to \
             create a new database over them; {advice}",
            listed.join(", ")
        ),
    ))
}

/// True when the only data files are empty WALs, MANIFESTs of an empty
/// database (no tables, sequence 0) and OPTIONS files: what a crash during
/// creation leaves, or CURRENT lost from a database that never held data.
fn interrupted_creation(fs: &dyn Fs, dir: &Path, names: &[(String, FileType)]) -> bool {
    names.iter().all(|(name, t)| match t {
        FileType::Log(_) => fs.file_size(&dir.join(name)).is_ok_and(|len| len == 0),
        FileType::Manifest(n) => manifest_describes_empty_database(fs, dir, *n),
        // Settings, no data: an open of an empty database writes one.
        FileType::Options(_) => true,
        _ => false,
    })
}

fn manifest_describes_empty_database(fs: &dyn Fs, dir: &Path, number: u64) -> bool {
    let path = manifest_file_name(dir, number);
    let Ok(file) = fs.open(&path, ReadFileOptions::default()) else {
        return false;
    };
    let mut reader = LogReader::new(file, &path);
    loop {
        match reader.read_record() {
            Ok(Some((_, record))) => match crate::version::VersionEdit::decode(record) {
                Ok(edit) if edit.new_files.is_empty() && edit.last_sequence.unwrap_or(0) == 0 => {}
                _ => return false,
            },
            Ok(None) => return true,
            Err(_) => return false,
        }
    }
}

/// Refuses an open whose data lies in levels at or past `num_levels`:
/// compaction would take the new last level for the bottom and drop
/// tombstones that still hide older values below it (RocksDB refuses too).
pub(super) fn check_levels(dir: &Path, version: &Version, num_levels: usize) -> Result<()> {
    let beyond: Vec<String> = (num_levels..crate::version::NUM_LEVELS)
        .filter(|&level| version.num_files(level) > 0)
        .map(|level| format!("L{level}"))
        .collect();
    let Some(deepest) = (num_levels..crate::version::NUM_LEVELS)
        .rev()
        .find(|&level| version.num_files(level) > 0)
    else {
        return Ok(());
    };
    Err(Error::invalid_argument(
        "num_levels",
        format!(
            "the database {} has tables in {} but num_levels is {num_levels}: open it with \
             num_levels of at least {}; fewer levels need the data moved up first",
            dir.display(),
            beyond.join(", "),
            deepest + 1
        ),
    ))
}

/// Checks that every table and blob file of `version` exists with the size
/// the MANIFEST recorded; the error names every missing or short file.
pub(super) fn check_live_tables(fs: &dyn Fs, dir: &Path, version: &Version) -> Result<()> {
    not_whole_error(fs, dir, &tables_not_whole(fs, dir, version)?)
}

/// The tables and blob files of `version` missing or of another size than
/// the MANIFEST recorded: each file number with what is wrong with it.
pub(super) fn tables_not_whole(
    fs: &dyn Fs,
    dir: &Path,
    version: &Version,
) -> Result<Vec<(u64, String)>> {
    let mut problems = Vec::new();
    for (level, file) in version.all_files() {
        let path = table_file_name(dir, file.number);
        match fs.file_size(&path) {
            Ok(size) if size == file.file_size => {}
            Ok(size) => problems.push((
                file.number,
                format!(
                    "{} (L{level}) has {size} bytes, the MANIFEST recorded {}",
                    path.display(),
                    file.file_size
                ),
            )),
            Err(e) if e.is_not_found() => problems.push((
                file.number,
                format!("{} (L{level}) is missing", path.display()),
            )),
            Err(e) => return Err(e),
        }
    }
    for (&number, blob) in version.blob_files() {
        let path = blob_file_name(dir, number);
        let recorded = blob.addition.file_size;
        match fs.file_size(&path) {
            Ok(size) if size == recorded => {}
            Ok(size) => problems.push((
                number,
                format!(
                    "{} (blob file) has {size} bytes, the MANIFEST recorded {recorded}",
                    path.display()
                ),
            )),
            Err(e) if e.is_not_found() => {
                problems.push((number, format!("{} (blob file) is missing", path.display())))
            }
            Err(e) => return Err(e),
        }
    }
    Ok(problems)
}

/// `Corruption` naming every table of `problems` (from [`tables_not_whole`]),
/// or Ok when there are none.
pub(super) fn not_whole_error(fs: &dyn Fs, dir: &Path, problems: &[(u64, String)]) -> Result<()> {
    if problems.is_empty() {
        return Ok(());
    }
    let manifest = read_current_file(fs, dir)
        .map_or_else(|_| current_file_name(dir), |n| manifest_file_name(dir, n));
    let listed: Vec<&str> = problems.iter().map(|(_, p)| p.as_str()).collect();
    Err(Error::corruption(
        manifest,
        0,
        format!(
            "{} table or blob file(s) the MANIFEST lists are not whole: {}",
            problems.len(),
            listed.join("; ")
        ),
    ))
}

/// What a writer changes when it makes a WAL or table obsolete: the MANIFEST
/// CURRENT names, and that MANIFEST's length (each edit appends to it).
#[derive(Debug, PartialEq, Eq)]
struct Fingerprint {
    manifest: u64,
    manifest_len: u64,
}

fn fingerprint(fs: &dyn Fs, dir: &Path) -> Option<Fingerprint> {
    let manifest = read_current_file(fs, dir).ok()?;
    let manifest_len = fs.file_size(&manifest_file_name(dir, manifest)).ok()?;
    Some(Fingerprint {
        manifest,
        manifest_len,
    })
}

/// Most attempts a reader makes while a writer keeps changing the database.
const MAX_ATTEMPTS: usize = 100;

/// Runs `attempt` (which only reads `dir`) again while it fails and the
/// database changed under it: a writer beside it may delete a WAL or table
/// right after the MANIFEST said it was live, and that must not read as
/// corruption. An error that persists on an unchanged database is returned.
pub(super) fn retry_while_changing<T>(
    fs: &dyn Fs,
    dir: &Path,
    mut attempt: impl FnMut() -> Result<T>,
) -> Result<T> {
    let mut tries = 0;
    loop {
        let before = fingerprint(fs, dir);
        let error = match attempt() {
            Ok(value) => return Ok(value),
            Err(e) => e,
        };
        tries += 1;
        let changed = before.is_none() || fingerprint(fs, dir) != before;
        if !changed || tries >= MAX_ATTEMPTS {
            return Err(error);
        }
        std::thread::yield_now();
    }
}

/// Refuses to open a family with a comparator other than the one its data
/// is sorted by (the MANIFEST's record), as RocksDB does: read in another
/// order, every search would go astray.
pub(super) fn check_comparators(
    versions: &VersionSet,
    families: &std::collections::BTreeMap<u32, std::sync::Arc<crate::options::CfOptions>>,
) -> Result<()> {
    for (&id, options) in families {
        let Some(order) = versions.order(id) else {
            continue;
        };
        if order.name() != options.comparator.name() {
            let name = family_name(versions, id);
            return Err(Error::invalid_argument(
                "comparator",
                format!(
                    "column family {name:?} is sorted by {}, but its options give comparator {}",
                    order.name(),
                    options.comparator.name()
                ),
            ));
        }
    }
    Ok(())
}

/// The name of live family `id`, for an error message.
pub(super) fn family_name(versions: &VersionSet, id: u32) -> &str {
    versions
        .families()
        .find(|(i, _)| *i == id)
        .map_or("?", |(_, n)| n)
}
