//! The database commands, in the form and with the output of RocksDB's `ldb`:
//! `strata --db=DIR [--create_if_missing] [--hex|--key_hex|--value_hex] COMMAND`.
//!
//! Each command opens the database, does one thing, and closes it with
//! [`Db::close`], reporting a failure to close like any other. Stdout carries
//! only data (`OK` for writes, as ldb prints it); failures go to stderr as
//! `Failed: <message>` with exit status 1.

use std::ffi::OsString;
use std::io::{self, BufRead, Write};

use clap::{Args, Subcommand};
use strata::filename::{parse_file_name, FileType};
use strata::{ColumnFamily, Db, DbOptions, ReadOptions, WriteBatch, WriteOptions};

use crate::cli_error::{context, stdout_error, CliError, CliResult};
use crate::db_flags::{print_ok, with_db, with_db_read_only, with_stdout, DbFlags};
use crate::{blob_dump, cf_cmd, hex, idump, inspect, kv_line};

/// The database commands (ldb's names).
#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Set KEY to VALUE; prints OK.
    Put(PutArgs),
    /// Print the value of KEY; a missing key fails with NotFound.
    Get(KeyArgs),
    /// Delete KEY; prints OK.
    Delete(KeyArgs),
    /// Delete every key in [BEGIN, END) with one range deletion; prints OK.
    #[command(name = "deleterange")]
    DeleteRange(DeleteRangeArgs),
    /// Merge OPERAND into KEY with the family's merge operator
    /// (`--merge_operator=NAME` or the one its OPTIONS file names); prints OK.
    Merge(PutArgs),
    /// Set several keys atomically: KEY1 VALUE1 [KEY2 VALUE2 ...]; prints OK.
    #[command(name = "batchput")]
    BatchPut(BatchPutArgs),
    /// Print `key : value` lines in key order.
    Scan(ScanArgs),
    /// Print `key ==> value` lines (the input format of `load`) and a count;
    /// with `--path=NNNNNN.blob`, the records of that blob file instead.
    Dump(DumpArgs),
    /// Print every stored version of the keys in the range, as ldb's idump:
    /// `'key' seq:N, type:T => value` (type 1 value, 0 deletion, 2 merge
    /// operand, 15 range deletion whose value is its end key, 17 reference to
    /// a value in a blob file), and a count.
    Idump(idump::IdumpArgs),
    /// Apply `key ==> value` lines from stdin in order (later lines win).
    Load(FlagsOnly),
    /// Print about how many bytes of table files hold the keys in
    /// [--from, --to) (all keys by default).
    #[command(name = "approxsize")]
    ApproxSize(CompactArgs),
    /// Print a property: `NAME: value`.
    #[command(name = "get_property")]
    GetProperty(PropertyArgs),
    /// Print every edit of the live MANIFEST without opening the DB.
    #[command(name = "manifest_dump")]
    ManifestDump(inspect::ManifestDumpArgs),
    /// Print the write batches of a WAL file (or of every WAL in a directory).
    #[command(name = "dump_wal")]
    DumpWal(inspect::DumpWalArgs),
    /// Compact the keys in [--from, --to] (all keys by default) down to the
    /// last level; prints nothing on success (as ldb's compact).
    Compact(CompactArgs),
    /// Make an openable copy of the database in --checkpoint_dir (which must
    /// not exist), hard-linking its files where it can; prints OK.
    Checkpoint(CheckpointArgs),
    /// Ingest table files written by SstFileWriter (or `strata sst build`)
    /// into the family, atomically; prints OK (as ldb's ingest_extern_sst).
    #[command(name = "ingest_extern_sst")]
    IngestExternSst(IngestArgs),
    /// List every family's live tables level by level, and its blob files
    /// (as ldb's list_live_files_metadata).
    #[command(name = "list_live_files_metadata")]
    ListLiveFilesMetadata(crate::live_files::ListArgs),
    /// Dump the MANIFEST, every live table (entries as stored and
    /// properties), every live blob file and every WAL (as ldb's
    /// dump_live_files).
    #[command(name = "dump_live_files")]
    DumpLiveFiles(FlagsOnly),
    /// Serve the live web view of the database (the LSM, tables, stats,
    /// plots, options, LOG and Prometheus /metrics) until stopped.
    #[cfg(feature = "web")]
    Serve(crate::serve::ServeArgs),
    /// Rebuild a lost or damaged MANIFEST from the tables, blob files and
    /// WALs in the directory (as ldb's repair); damaged files move to
    /// lost/. Prints what it found and OK.
    Repair(FlagsOnly),
    /// Open the DB, read every WAL and verify every live table; prints OK.
    #[command(name = "checkconsistency")]
    CheckConsistency(FlagsOnly),
    /// Print the names of the column families.
    #[command(name = "list_column_families")]
    ListColumnFamilies(FlagsOnly),
    /// Create a column family named NAME; prints OK.
    #[command(name = "create_column_family")]
    CreateColumnFamily(cf_cmd::FamilyArgs),
    /// Drop the column family named NAME; prints OK.
    #[command(name = "drop_column_family")]
    DropColumnFamily(cf_cmd::FamilyArgs),
}

#[derive(Debug, Args)]
pub struct CheckpointArgs {
    #[command(flatten)]
    flags: DbFlags,
    /// Where the copy goes.
    #[arg(long = "checkpoint_dir")]
    checkpoint_dir: std::path::PathBuf,
}

#[derive(Debug, Args)]
pub struct IngestArgs {
    #[command(flatten)]
    flags: DbFlags,
    /// The files to ingest.
    #[arg(required = true)]
    files: Vec<std::path::PathBuf>,
    /// Hard-link the files in and remove them once ingested.
    #[arg(long = "move_files")]
    move_files: bool,
    /// Snapshots taken before do not see the files (true by default).
    #[arg(long = "snapshot_consistency", num_args = 0..=1, default_value_t = true, default_missing_value = "true", action = clap::ArgAction::Set)]
    snapshot_consistency: bool,
    /// Allow a global sequence number where the files overlap data (true by default).
    #[arg(long = "allow_global_seqno", num_args = 0..=1, default_value_t = true, default_missing_value = "true", action = clap::ArgAction::Set)]
    allow_global_seqno: bool,
    /// Allow flushing an overlapping memtable first (true by default).
    #[arg(long = "allow_blocking_flush", num_args = 0..=1, default_value_t = true, default_missing_value = "true", action = clap::ArgAction::Set)]
    allow_blocking_flush: bool,
    /// Read and check every block of the files first (true by default).
    #[arg(long = "verify_checksums_before_ingest", num_args = 0..=1, default_value_t = true, default_missing_value = "true", action = clap::ArgAction::Set)]
    verify_checksums_before_ingest: bool,
}

#[derive(Debug, Args)]
pub struct FlagsOnly {
    #[command(flatten)]
    pub flags: DbFlags,
}

#[derive(Debug, Args)]
pub struct PutArgs {
    #[command(flatten)]
    flags: DbFlags,
    #[arg(allow_hyphen_values = true)]
    key: OsString,
    #[arg(allow_hyphen_values = true)]
    value: OsString,
}

#[derive(Debug, Args)]
pub struct KeyArgs {
    #[command(flatten)]
    flags: DbFlags,
    #[arg(allow_hyphen_values = true)]
    key: OsString,
}

#[derive(Debug, Args)]
pub struct DeleteRangeArgs {
    #[command(flatten)]
    flags: DbFlags,
    /// First key deleted (inclusive).
    #[arg(allow_hyphen_values = true)]
    begin: OsString,
    /// First key kept after the range (exclusive).
    #[arg(allow_hyphen_values = true)]
    end: OsString,
}

#[derive(Debug, Args)]
pub struct BatchPutArgs {
    #[command(flatten)]
    flags: DbFlags,
    /// KEY1 VALUE1 [KEY2 VALUE2 ...]
    #[arg(allow_hyphen_values = true, value_name = "KEY VALUE")]
    pairs: Vec<OsString>,
}

/// The key range of `scan` and `dump`.
#[derive(Debug, Args)]
pub struct RangeArgs {
    /// First key to print (inclusive).
    #[arg(long, allow_hyphen_values = true)]
    from: Option<OsString>,
    /// Key to stop before (exclusive).
    #[arg(long, allow_hyphen_values = true)]
    to: Option<OsString>,
    /// Print at most this many keys (negative: no limit).
    #[arg(long = "max_keys", allow_hyphen_values = true)]
    max_keys: Option<i64>,
}

#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    flags: DbFlags,
    #[command(flatten)]
    range: RangeArgs,
    /// Print only the keys.
    #[arg(long = "no_value")]
    no_value: bool,
}

#[derive(Debug, Args)]
pub struct DumpArgs {
    #[command(flatten)]
    flags: DbFlags,
    #[command(flatten)]
    range: RangeArgs,
    /// Print only the count.
    #[arg(long = "count_only")]
    count_only: bool,
    /// Dump this blob file (`NNNNNN.blob`) instead of the database, as ldb's
    /// `dump --path` does; the database is not opened.
    #[arg(long)]
    path: Option<std::path::PathBuf>,
    /// With --path, print each value too, decompressed.
    #[arg(long = "dump_uncompressed_blobs")]
    dump_uncompressed_blobs: bool,
}

#[derive(Debug, Args)]
pub struct CompactArgs {
    #[command(flatten)]
    flags: DbFlags,
    /// First key of the range (inclusive).
    #[arg(long, allow_hyphen_values = true)]
    from: Option<OsString>,
    /// Last key of the range (inclusive).
    #[arg(long, allow_hyphen_values = true)]
    to: Option<OsString>,
}

#[derive(Debug, Args)]
pub struct PropertyArgs {
    #[command(flatten)]
    flags: DbFlags,
    /// A property name such as strata.num-files-at-level0 (rocksdb. works too).
    name: String,
}

/// Runs one database command; `before` holds the flags given before its name.
pub fn run(cmd: DbCommand, before: &DbFlags) -> CliResult {
    match cmd {
        DbCommand::Put(a) => put(&before.merge(&a.flags)?, &a),
        DbCommand::Get(a) => get(&before.merge(&a.flags)?, &a),
        DbCommand::Delete(a) => delete(&before.merge(&a.flags)?, &a),
        DbCommand::DeleteRange(a) => delete_range(&before.merge(&a.flags)?, &a),
        DbCommand::Merge(a) => merge(&before.merge(&a.flags)?, &a),
        DbCommand::BatchPut(a) => batch_put(&before.merge(&a.flags)?, &a),
        DbCommand::Scan(a) => scan(&before.merge(&a.flags)?, &a),
        DbCommand::Dump(a) => dump(&before.merge(&a.flags)?, &a),
        DbCommand::Idump(a) => idump::run(&before.merge(&a.flags)?, &a),
        DbCommand::Load(a) => load(&before.merge(&a.flags)?),
        DbCommand::GetProperty(a) => get_property(&before.merge(&a.flags)?, &a),
        DbCommand::ApproxSize(a) => approx_size(&before.merge(&a.flags)?, &a),
        DbCommand::Compact(a) => compact(&before.merge(&a.flags)?, &a),
        DbCommand::Checkpoint(a) => checkpoint(&before.merge(&a.flags)?, &a),
        DbCommand::IngestExternSst(a) => ingest(&before.merge(&a.flags)?, &a),
        DbCommand::ListLiveFilesMetadata(a) => {
            crate::live_files::list(&before.merge(&a.flags)?, &a)
        }
        DbCommand::DumpLiveFiles(a) => crate::live_files::dump(&before.merge(&a.flags)?),
        #[cfg(feature = "web")]
        DbCommand::Serve(a) => crate::serve::serve(&before.merge(&a.flags)?, &a),
        DbCommand::ManifestDump(a) => {
            let flags = before.merge(&a.flags)?;
            inspect::manifest_dump(&flags, &a)
        }
        DbCommand::DumpWal(a) => inspect::dump_wal(&a),
        DbCommand::Repair(a) => crate::repair_cmd::repair(&before.merge(&a.flags)?),
        DbCommand::CheckConsistency(a) => inspect::check_consistency(&before.merge(&a.flags)?),
        DbCommand::ListColumnFamilies(a) => cf_cmd::list(&before.merge(&a.flags)?),
        DbCommand::CreateColumnFamily(a) => cf_cmd::create(&before.merge(&a.flags)?, &a),
        DbCommand::DropColumnFamily(a) => cf_cmd::drop_family(&before.merge(&a.flags)?, &a),
    }
}

fn put(flags: &DbFlags, a: &PutArgs) -> CliResult {
    let (key, value) = (flags.key(&a.key, "key")?, flags.value(&a.value)?);
    with_db(flags, DbOptions::default(), |db, cf| {
        Ok(db.put_cf(cf, &key, &value)?)
    })?;
    print_ok()
}

fn merge(flags: &DbFlags, a: &PutArgs) -> CliResult {
    let (key, operand) = (flags.key(&a.key, "key")?, flags.value(&a.value)?);
    with_db(flags, DbOptions::default(), |db, cf| {
        db.merge_cf(cf, &key, &operand)
            .map_err(context("Merge failed"))
    })?;
    print_ok()
}

fn approx_size(flags: &DbFlags, a: &CompactArgs) -> CliResult {
    let from = a
        .from
        .as_ref()
        .map(|k| flags.key(k, "--from"))
        .transpose()?
        .unwrap_or_default();
    // No --to: past every key (keys are at most 8 MiB, so this sorts last
    // for any key anyone writes).
    let to = a.to.as_ref().map(|k| flags.key(k, "--to")).transpose()?;
    let size = with_db_read_only(flags, DbOptions::default(), |db, cf| {
        let to = to.clone().unwrap_or_else(|| vec![0xff; 1024]);
        db.approximate_size_cf(cf, &from, &to)
            .map_err(context("approxsize failed"))
    })?;
    with_stdout(|out| writeln!(out, "{size}").map_err(stdout_error))
}

fn checkpoint(flags: &DbFlags, a: &CheckpointArgs) -> CliResult {
    with_db(flags, DbOptions::default(), |db, _| {
        db.create_checkpoint(&a.checkpoint_dir)
            .map_err(context("Checkpoint failed"))
    })?;
    print_ok()
}

fn ingest(flags: &DbFlags, a: &IngestArgs) -> CliResult {
    let options = strata::IngestExternalFileOptions {
        move_files: a.move_files,
        snapshot_consistency: a.snapshot_consistency,
        allow_global_seqno: a.allow_global_seqno,
        allow_blocking_flush: a.allow_blocking_flush,
        verify_checksums_before_ingest: a.verify_checksums_before_ingest,
    };
    with_db(flags, DbOptions::default(), |db, cf| {
        db.ingest_external_file_cf(cf, &a.files, &options)
            .map_err(context("Ingestion failed"))
    })?;
    print_ok()
}

fn compact(flags: &DbFlags, a: &CompactArgs) -> CliResult {
    let from = a
        .from
        .as_ref()
        .map(|k| flags.key(k, "--from"))
        .transpose()?;
    let to = a.to.as_ref().map(|k| flags.key(k, "--to")).transpose()?;
    // Nothing on stdout: ldb's compact prints nothing when it succeeds.
    with_db(flags, DbOptions::default(), |db, cf| {
        db.compact_range_cf(cf, from.as_deref(), to.as_deref())
            .map_err(context("Compaction failed"))
    })
}

fn get(flags: &DbFlags, a: &KeyArgs) -> CliResult {
    let key = flags.key(&a.key, "key")?;
    let value = with_db_read_only(flags, DbOptions::default(), |db, cf| {
        db.get_cf(cf, &key).map_err(context("Get failed"))
    })?;
    let Some(value) = value else {
        return Err(CliError::Failed(format!(
            "Get failed: NotFound: Key not found: {}",
            hex::show(&key, flags.is_key_hex())
        )));
    };
    with_stdout(|out| {
        let mut line = Vec::with_capacity(value.len() + 1);
        hex::append(&mut line, &value, flags.is_value_hex());
        line.push(b'\n');
        out.write_all(&line).map_err(stdout_error)
    })
}

fn delete(flags: &DbFlags, a: &KeyArgs) -> CliResult {
    let key = flags.key(&a.key, "key")?;
    with_db(flags, DbOptions::default(), |db, cf| {
        Ok(db.delete_cf(cf, &key)?)
    })?;
    print_ok()
}

fn delete_range(flags: &DbFlags, a: &DeleteRangeArgs) -> CliResult {
    let begin = flags.key(&a.begin, "begin key")?;
    let end = flags.key(&a.end, "end key")?;
    with_db(flags, DbOptions::default(), |db, cf| {
        db.delete_range_cf(cf, &begin, &end)
            .map_err(context("DeleteRange failed"))
    })?;
    print_ok()
}

fn batch_put(flags: &DbFlags, a: &BatchPutArgs) -> CliResult {
    if a.pairs.is_empty() {
        return Err(CliError::Failed(
            "At least one <key> <value> pair must be specified for batchput.".into(),
        ));
    }
    if a.pairs.len() % 2 != 0 {
        return Err(CliError::Failed(
            "Equal number of <key>s and <value>s must be specified for batchput.".into(),
        ));
    }
    let mut pairs = Vec::with_capacity(a.pairs.len() / 2);
    for pair in a.pairs.chunks_exact(2) {
        if let [k, v] = pair {
            pairs.push((flags.key(k, "key")?, flags.value(v)?));
        }
    }
    with_db(flags, DbOptions::default(), |db, cf| {
        let mut batch = WriteBatch::new();
        for (k, v) in &pairs {
            batch
                .put_cf(cf, k, v)
                .map_err(context("Put to write batch failed"))?;
        }
        db.write(&WriteOptions::default(), batch)
            .map_err(context("Write failed"))
    })?;
    print_ok()
}

/// A key range with its keys decoded.
pub(crate) struct KeyRange {
    pub(crate) from: Option<Vec<u8>>,
    pub(crate) to: Option<Vec<u8>>,
    pub(crate) limit: u64,
}

impl RangeArgs {
    /// Decodes the bounds (hex with `--key_hex`) before the database is opened.
    pub(crate) fn resolve(&self, flags: &DbFlags) -> CliResult<KeyRange> {
        Ok(KeyRange {
            from: self
                .from
                .as_ref()
                .map(|k| flags.key(k, "--from"))
                .transpose()?,
            to: self.to.as_ref().map(|k| flags.key(k, "--to")).transpose()?,
            limit: self
                .max_keys
                .and_then(|n| u64::try_from(n).ok())
                .unwrap_or(u64::MAX),
        })
    }
}

/// Calls `visit` on each entry of the range in key order; returns how many.
fn for_each_in_range(
    db: &Db,
    cf: &ColumnFamily,
    range: KeyRange,
    mut visit: impl FnMut(&[u8], &[u8]) -> CliResult,
) -> CliResult<u64> {
    let KeyRange { from, to, limit } = range;
    let options = ReadOptions {
        iterate_upper_bound: to,
        ..ReadOptions::default()
    };
    let mut it = db.iter_cf_opt(cf, &options);
    match &from {
        Some(k) => it.seek(k),
        None => it.seek_to_first(),
    }
    let mut count = 0u64;
    while count < limit {
        let (Some(key), Some(value)) = (it.key(), it.value()) else {
            break;
        };
        visit(key, value)?;
        count += 1;
        it.next();
    }
    it.status().map_err(context("Iterator error"))?;
    Ok(count)
}

fn scan(flags: &DbFlags, a: &ScanArgs) -> CliResult {
    let (key_hex, value_hex) = (flags.is_key_hex(), flags.is_value_hex());
    let range = a.range.resolve(flags)?;
    with_db_read_only(flags, DbOptions::default(), |db, cf| {
        with_stdout(|out| {
            let mut line = Vec::new();
            for_each_in_range(db, cf, range, |key, value| {
                line.clear();
                if a.no_value {
                    hex::append(&mut line, key, key_hex);
                    line.push(b'\n');
                } else {
                    kv_line::append_line(&mut line, (key, value), b" : ", key_hex, value_hex);
                }
                out.write_all(&line).map_err(stdout_error)
            })
            .map(drop)
        })
    })
}

fn dump(flags: &DbFlags, a: &DumpArgs) -> CliResult {
    let (key_hex, value_hex) = (flags.is_key_hex(), flags.is_value_hex());
    if let Some(path) = &a.path {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !matches!(parse_file_name(name), Some(FileType::Blob(_))) {
            return Err(CliError::Failed(format!(
                "{}: dump --path takes a blob file (NNNNNN.blob); for a table use \
                 `strata sst dump`, for a WAL `strata dump_wal`",
                path.display()
            )));
        }
        let show = blob_dump::Show {
            key_hex,
            value_hex,
            values: a.dump_uncompressed_blobs,
        };
        return blob_dump::dump_blob_file(path, show);
    }
    if a.dump_uncompressed_blobs {
        return Err(CliError::Failed(
            "--dump_uncompressed_blobs needs --path=NNNNNN.blob".into(),
        ));
    }
    let range = a.range.resolve(flags)?;
    with_db_read_only(flags, DbOptions::default(), |db, cf| {
        with_stdout(|out| {
            let mut line = Vec::new();
            let count = for_each_in_range(db, cf, range, |key, value| {
                if a.count_only {
                    return Ok(());
                }
                line.clear();
                kv_line::append_line(&mut line, (key, value), kv_line::ARROW, key_hex, value_hex);
                out.write_all(&line).map_err(stdout_error)
            })?;
            // ldb prints the count on stdout; `load` skips this line.
            writeln!(out, "{KEYS_IN_RANGE} {count}").map_err(stdout_error)
        })
    })
}

/// The footer of `dump`, which `load` ignores (as ldb's load does).
const KEYS_IN_RANGE: &str = "Keys in range:";
/// A line old RocksDB builds printed among a dump's, which ldb's load also
/// ignores.
const BG_THREAD_LINE: &str = "Created bg thread 0x";

/// Entries per write batch of `load`: large enough that group commit and WAL
/// writes are amortized, small enough to keep memory flat.
const LOAD_BATCH_ENTRIES: u32 = 1000;
/// Bytes per write batch of `load`, for large values.
const LOAD_BATCH_BYTES: usize = 4 << 20;

/// Reads `key ==> value` lines from stdin as ldb's load does: each line is
/// what comes before a "\n" (a "\r" before it is data, so a value ending in
/// "\r" survives `dump | load`), a line with the arrow is a pair even when
/// it starts like a dump's footer, and any other line but the footer is
/// counted and reported on stdout with ldb's words.
fn load(flags: &DbFlags) -> CliResult {
    let (bad_lines, first_bad) = with_db(flags, DbOptions::default(), |db, cf| {
        let mut input = io::stdin().lock();
        let mut batch = WriteBatch::new();
        let mut line = Vec::new();
        let (mut number, mut bad_lines, mut first_bad) = (0usize, 0u64, None);
        let write = |batch: WriteBatch| {
            db.write(&WriteOptions::default(), batch)
                .map_err(context("Load failed"))
        };
        loop {
            line.clear();
            let n = input
                .read_until(b'\n', &mut line)
                .map_err(|e| CliError::Failed(format!("reading stdin: {e}")))?;
            if n == 0 {
                break;
            }
            number += 1;
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            if kv_line::split(&line).is_none() {
                if !(line.starts_with(KEYS_IN_RANGE.as_bytes())
                    || line.starts_with(BG_THREAD_LINE.as_bytes()))
                {
                    bad_lines += 1;
                    first_bad.get_or_insert(number);
                }
                continue;
            }
            let (key, value) =
                kv_line::parse_line(&line, number, flags.is_key_hex(), flags.is_value_hex())?;
            batch
                .put_cf(cf, &key, &value)
                .map_err(context("Load failed"))?;
            if batch.count() >= LOAD_BATCH_ENTRIES || batch.approximate_size() >= LOAD_BATCH_BYTES {
                write(std::mem::take(&mut batch))?;
            }
        }
        if !batch.is_empty() {
            write(batch)?;
        }
        Ok((bad_lines, first_bad))
    })?;
    if let Some(first) = first_bad {
        // Where to look goes to stderr: stdout keeps ldb's exact line.
        eprintln!("the first line that is not `key ==> value` is line {first}");
        with_stdout(|out| {
            writeln!(out, "Warning: {bad_lines} bad lines ignored.").map_err(stdout_error)
        })?;
    }
    Ok(())
}

fn get_property(flags: &DbFlags, a: &PropertyArgs) -> CliResult {
    let value = with_db_read_only(flags, DbOptions::default(), |db, cf| {
        Ok(db.property_cf(cf, &a.name))
    })?;
    let Some(value) = value else {
        return Err(CliError::Failed(format!(
            "failed to get property: {}",
            a.name
        )));
    };
    with_stdout(|out| writeln!(out, "{}: {value}", a.name).map_err(stdout_error))
}
