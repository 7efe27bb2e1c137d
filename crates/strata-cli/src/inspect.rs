//! Commands that look at a database's files rather than its contents:
//! `manifest_dump` and `dump_wal` read files directly (without the LOCK, so they
//! work on a database in use), and `checkconsistency` opens the database and
//! checks every byte it depends on.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use strata::filename::{
    log_file_name, manifest_file_name, parse_file_name, read_current_file, table_file_name,
    FileType,
};
use strata::fs::{Fs, ReadFileOptions, StdFs};
use strata::key::ValueType;
use strata::table::TableReader;
use strata::version::{Version, VersionEdit};
use strata::wal::{LogReader, TornTail};
use strata::{DbOptions, Error, WriteBatch, DEFAULT_COLUMN_FAMILY_NAME};

use crate::cli_error::{stdout_error, CliError, CliResult};
use crate::db_flags::{with_db_read_only, with_stdout, DbFlags};
use crate::hex;

#[derive(Debug, Args)]
pub struct ManifestDumpArgs {
    #[command(flatten)]
    pub flags: DbFlags,
    /// A MANIFEST file to read instead of the one CURRENT names.
    #[arg(long)]
    path: Option<PathBuf>,
    /// Accepted for ldb's scripts: every edit is always printed.
    #[arg(long, hide = true)]
    verbose: bool,
}

#[derive(Debug, Args)]
pub struct DumpWalArgs {
    /// Accepted as ldb does; the WAL is read without opening the database.
    #[command(flatten)]
    pub flags: DbFlags,
    /// A WAL file, or a directory whose WALs are dumped oldest first.
    #[arg(long = "walfile", value_name = "FILE|DIR")]
    walfile: PathBuf,
    /// Print a line naming the columns first.
    #[arg(long)]
    header: bool,
    /// Print the values of puts too.
    #[arg(long = "print_value")]
    print_value: bool,
}

impl ManifestDumpArgs {
    /// The arguments that dump `path` (for `dump_live_files`).
    pub fn of(flags: DbFlags, path: PathBuf) -> ManifestDumpArgs {
        ManifestDumpArgs {
            flags,
            path: Some(path),
            verbose: false,
        }
    }
}

impl DumpWalArgs {
    /// The arguments that dump every WAL of `dir` with their values (for
    /// `dump_live_files`).
    pub fn of(flags: DbFlags, dir: PathBuf) -> DumpWalArgs {
        DumpWalArgs {
            flags,
            walfile: dir,
            header: false,
            print_value: true,
        }
    }
}

/// Puts `file` and `offset` into a corruption found inside a record, whose
/// decoder knows neither (as the engine's own readers do).
fn at(e: Error, file: &Path, offset: u64) -> Error {
    match e {
        Error::Corruption { reason, .. } => Error::corruption(file, offset, reason),
        other => other,
    }
}

/// Prints each edit of the MANIFEST with its offset, then the state they add
/// up to.
pub fn manifest_dump(flags: &DbFlags, a: &ManifestDumpArgs) -> CliResult {
    let path = match &a.path {
        Some(p) => p.clone(),
        None => {
            let dir = flags.db_dir()?;
            manifest_file_name(dir, read_current_file(&StdFs, dir)?)
        }
    };
    let file = StdFs.open(&path, ReadFileOptions::default())?;
    let mut reader = LogReader::new(file, &path);
    // Each live family's name, version and last log number, as recovery
    // rebuilds them; and the DB-wide counters.
    let mut families: BTreeMap<u32, (String, Version, Option<u64>)> = BTreeMap::new();
    families.insert(
        0,
        (
            DEFAULT_COLUMN_FAMILY_NAME.to_owned(),
            Version::default(),
            None,
        ),
    );
    let mut counters = VersionEdit::new();
    let mut edits = 0u64;
    with_stdout(|out| {
        writeln!(out, "MANIFEST {}", path.display()).map_err(stdout_error)?;
        while let Some((offset, record)) = reader.read_record()? {
            let edit = VersionEdit::decode(record).map_err(|e| at(e, &path, offset))?;
            writeln!(out, "edit #{edits} at offset {offset}").map_err(stdout_error)?;
            for line in edit.to_string().lines() {
                writeln!(out, "  {line}").map_err(stdout_error)?;
            }
            // As the engine's recovery does: an edit that cannot apply is a
            // corrupt MANIFEST record, named by its file and offset.
            apply_to_families(&mut families, &edit)
                .map_err(|e| Error::corruption(&path, offset, e))?;
            counters.next_file_number = edit.next_file_number.or(counters.next_file_number);
            counters.last_sequence = edit.last_sequence.or(counters.last_sequence);
            counters.max_column_family = edit.max_column_family.or(counters.max_column_family);
            counters.min_log_number_to_keep = edit
                .min_log_number_to_keep
                .or(counters.min_log_number_to_keep);
            edits += 1;
        }
        writeln!(out, "--- the state after {edits} edits ---\n{counters}").map_err(stdout_error)?;
        for (id, (name, version, log_number)) in &families {
            let mut state = VersionEdit::new();
            state.log_number = *log_number;
            for (level, file) in version.all_files() {
                let level = u32::try_from(level).unwrap_or(u32::MAX);
                state.add_file(level, (**file).clone());
            }
            writeln!(out, "--- column family {id} {name:?} ---\n{state}").map_err(stdout_error)?;
        }
        Ok(())
    })?;
    if let Some(torn) = reader.torn_tail() {
        eprintln!(
            "{}: ends with an incomplete record at offset {} ({}); it was never \
             synced, and opening the database ignores it",
            path.display(),
            torn.offset,
            torn.reason
        );
    }
    Ok(())
}

/// Applies `edit` to the family it names, creating or dropping families as
/// it says; the reason when it cannot apply.
fn apply_to_families(
    families: &mut BTreeMap<u32, (String, Version, Option<u64>)>,
    edit: &VersionEdit,
) -> Result<(), String> {
    let id = edit.column_family;
    if let Some(name) = &edit.column_family_add {
        if families.contains_key(&id) {
            return Err(format!("column family {id} is created twice"));
        }
        let version = Version::default().apply(edit).map_err(|e| e.0)?;
        families.insert(id, (name.clone(), version, edit.log_number));
        return Ok(());
    }
    if edit.column_family_drop {
        return families
            .remove(&id)
            .map(drop)
            .ok_or_else(|| format!("column family {id} is dropped but does not exist"));
    }
    let (_, version, log_number) = families
        .get_mut(&id)
        .ok_or_else(|| format!("the edit names column family {id}, which does not exist"))?;
    *version = version.apply(edit).map_err(|e| e.0)?;
    *log_number = edit.log_number.or(*log_number);
    Ok(())
}

/// Reads every write batch of a WAL, calling `visit` with its offset.
/// Corruption is an error; a torn tail is returned.
fn read_wal(
    path: &Path,
    mut visit: impl FnMut(u64, &WriteBatch) -> CliResult,
) -> CliResult<Option<TornTail>> {
    let file = StdFs.open(path, ReadFileOptions::default())?;
    let mut reader = LogReader::new(file, path);
    while let Some((offset, payload)) = reader.read_record()? {
        // Metadata (the predecessor record a memtable switch writes first)
        // holds no writes.
        if strata::wal::meta::is_meta(payload) {
            continue;
        }
        let batch = WriteBatch::from_data(payload.to_vec()).map_err(|e| at(e, path, offset))?;
        visit(offset, &batch)?;
    }
    Ok(reader.torn_tail().cloned())
}

/// The WALs of a database directory, oldest first.
fn log_files(dir: &Path) -> CliResult<Vec<PathBuf>> {
    let mut numbers: Vec<u64> = StdFs
        .list(dir)?
        .iter()
        .filter_map(|name| match parse_file_name(name) {
            Some(FileType::Log(n)) => Some(n),
            _ => None,
        })
        .collect();
    numbers.sort_unstable();
    Ok(numbers.into_iter().map(|n| log_file_name(dir, n)).collect())
}

/// Appends one batch as ldb's dump_wal prints it:
/// `seq,count,bytes,offset,PUT(0) : 0xKEY [: 0xVALUE] DELETE(0) : 0xKEY ` (keys
/// and values always hex; the 0 is ldb's column family id).
fn append_batch(
    row: &mut Vec<u8>,
    offset: u64,
    batch: &WriteBatch,
    print_value: bool,
) -> CliResult {
    let header = format!(
        "{},{},{},{offset},",
        batch.sequence(),
        batch.count(),
        batch.approximate_size()
    );
    row.extend_from_slice(header.as_bytes());
    for entry in batch.iter() {
        let entry = entry?;
        match entry.value_type {
            ValueType::Put => {
                row.extend_from_slice(b"PUT(0) : ");
                hex::append(row, entry.key, true);
                if print_value {
                    row.extend_from_slice(b" : ");
                    hex::append(row, entry.value, true);
                }
            }
            ValueType::Delete => {
                row.extend_from_slice(b"DELETE(0) : ");
                hex::append(row, entry.key, true);
            }
            ValueType::Merge => {
                row.extend_from_slice(b"MERGE(0) : ");
                hex::append(row, entry.key, true);
                if print_value {
                    row.extend_from_slice(b" : ");
                    hex::append(row, entry.value, true);
                }
            }
            // Batches never carry these; shown as ldb would, should one appear.
            ValueType::BlobIndex => {
                row.extend_from_slice(b"PUT_BLOB_INDEX(0) : ");
                hex::append(row, entry.key, true);
            }
            // As RocksDB's ldb prints it: begin, then end (the record's value).
            ValueType::RangeDeletion => {
                row.extend_from_slice(b"DELETE_RANGE(0) : ");
                hex::append(row, entry.key, true);
                row.push(b' ');
                hex::append(row, entry.value, true);
            }
        }
        row.push(b' ');
    }
    row.push(b'\n');
    Ok(())
}

/// Prints every record of a WAL (or of each WAL in a directory) as a batch.
pub fn dump_wal(a: &DumpWalArgs) -> CliResult {
    let is_dir = a.walfile.is_dir();
    let files = if is_dir {
        log_files(&a.walfile)?
    } else {
        vec![a.walfile.clone()]
    };
    if files.is_empty() {
        return Err(CliError::Failed(format!(
            "{}: No valid wal logs found",
            a.walfile.display()
        )));
    }
    with_stdout(|out| {
        let mut row = Vec::new();
        for path in &files {
            if is_dir {
                writeln!(out, "Checking wal file: {}", path.display()).map_err(stdout_error)?;
            }
            if a.header {
                let values = if a.print_value { " : value " } else { "" };
                writeln!(
                    out,
                    "Sequence,Count,ByteSize,Physical Offset,Key(s){values}"
                )
                .map_err(stdout_error)?;
            }
            let torn_tail = read_wal(path, |offset, batch| {
                row.clear();
                append_batch(&mut row, offset, batch, a.print_value)?;
                out.write_all(&row).map_err(stdout_error)
            })?;
            if let Some(torn) = torn_tail {
                eprintln!(
                    "{}: torn tail at offset {}: {} (an incomplete last record, as a \
                     crash mid-write leaves; recovery drops it)",
                    path.display(),
                    torn.offset,
                    torn.reason
                );
            }
        }
        Ok(())
    })
}

/// Checks a live table: its size against the MANIFEST, then every block,
/// checksum and key (`TableReader::verify`). Returns (blocks, entries).
fn verify_table(
    dir: &Path,
    level: usize,
    number: u64,
    expected_size: u64,
) -> strata::Result<(u64, u64)> {
    let path = table_file_name(dir, number);
    let file = open_whole(&path, expected_size, &format!("L{level} table"))?;
    let report = TableReader::open(file, &path)?.verify()?;
    Ok((report.blocks, report.entries))
}

/// Opens the live file `path` (`what`, for the error) after checking it has
/// the size the MANIFEST recorded.
fn open_whole(
    path: &Path,
    expected_size: u64,
    what: &str,
) -> strata::Result<std::sync::Arc<dyn strata::fs::RandomAccessFile>> {
    let size = StdFs.file_size(path)?;
    if size != expected_size {
        return Err(Error::corruption(
            path,
            size.min(expected_size),
            format!("{what} is {size} bytes but the MANIFEST says {expected_size}"),
        ));
    }
    StdFs.open(path, ReadFileOptions::default())
}

/// Checks blob file `number` of `dir` record by record: its size is the
/// MANIFEST's and every record's checksums hold. Returns the records.
fn verify_blob_file(dir: &Path, number: u64, expected_size: u64) -> strata::Result<u64> {
    let path = strata::filename::blob_file_name(dir, number);
    let file = open_whole(&path, expected_size, "blob file")?;
    let reader = strata::blob::BlobFileReader::open(file, &path)?;
    reader.verify()?;
    Ok(reader.footer().record_count)
}

/// Checks the database without writing to it, so beside a live writer too:
/// the MANIFEST and WALs replay, no WAL is damaged (now, or kept as
/// `.log.corrupt` by an earlier open), every live table exists with its
/// recorded size and reads back block by block with good checksums, and
/// every live blob file does so record by record. Prints
/// OK, or fails with every problem found. A table that a writer's compaction
/// deletes in the middle of the check makes it start again on the newer
/// state: a live, healthy database is never called corrupt.
pub fn check_consistency(flags: &DbFlags) -> CliResult {
    let dir = flags.db_dir()?;
    let options = DbOptions::default();
    for _ in 0..MAX_CHECK_ATTEMPTS {
        let report = strata::check_consistency(dir, &options)?;
        let mut problems: Vec<String> = report.wal_damage.iter().map(|d| d.to_string()).collect();
        problems.extend(report.corrupt_wals.iter().map(|p| {
            format!(
                "{} holds writes an earlier open could not recover (WAL damage); examine it \
                 with dump_wal, then remove it",
                p.display()
            )
        }));
        let verified = with_db_read_only(flags, options.clone(), |db, _| {
            let (mut tables, mut blocks, mut entries) = (0usize, 0u64, 0u64);
            for (level, number, size) in db.live_files() {
                match verify_table(dir, level, number, size) {
                    Ok((b, e)) => {
                        tables += 1;
                        blocks += b;
                        entries += e;
                    }
                    Err(e) if e.is_not_found() => return Ok(None),
                    Err(e) => problems.push(e.to_string()),
                }
            }
            let (mut blob_files, mut records) = (0usize, 0u64);
            for (number, size) in db.live_blob_files() {
                match verify_blob_file(dir, number, size) {
                    Ok(n) => {
                        blob_files += 1;
                        records += n;
                    }
                    Err(e) if e.is_not_found() => return Ok(None),
                    Err(e) => problems.push(e.to_string()),
                }
            }
            Ok(Some(((tables, blocks, entries), (blob_files, records))))
        })?;
        let Some(((tables, blocks, entries), (blob_files, records))) = verified else {
            // A writer's compaction removed a table after the open read the
            // MANIFEST: check the newer state.
            continue;
        };
        if !problems.is_empty() {
            return Err(CliError::Failed(problems.join("\n")));
        }
        eprintln!(
            "{tables} tables ({blocks} blocks, {entries} entries) and {blob_files} blob files \
             ({records} records) verified"
        );
        return with_stdout(|out| out.write_all(b"OK\n").map_err(stdout_error));
    }
    Err(CliError::Failed(format!(
        "{} kept changing under {MAX_CHECK_ATTEMPTS} attempts to check it",
        dir.display()
    )))
}

/// Attempts of `checkconsistency` beside a writer that keeps deleting tables.
const MAX_CHECK_ATTEMPTS: usize = 50;
