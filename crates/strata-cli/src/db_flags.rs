//! What every database command shares: its flags (`--db`, `--column_family`,
//! hex), opening the database with all its column families, closing it with
//! errors reported, and buffered stdout.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use strata::{
    load_latest_options, merge_operator_from_name, CfOptions, ColumnFamily, Db, DbOptions,
    LoadOptions, DEFAULT_COLUMN_FAMILY_NAME,
};

use crate::cli_error::{context, stdout_error, CliError, CliResult};
use crate::hex;

/// Options every database command takes, before or after the command name
/// (ldb accepts them in either place).
#[derive(Debug, Clone, Default, Args)]
pub struct DbFlags {
    /// The database directory.
    #[arg(long = "db", value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// Create the database if it does not exist.
    #[arg(long = "create_if_missing")]
    pub create_if_missing: bool,
    /// Keys and values are given and printed as `0x` + hex.
    #[arg(long)]
    pub hex: bool,
    /// Keys are given and printed as `0x` + hex.
    #[arg(long = "key_hex")]
    pub key_hex: bool,
    /// Values are given and printed as `0x` + hex.
    #[arg(long = "value_hex")]
    pub value_hex: bool,
    /// The column family the command reads or writes (default: "default").
    #[arg(long = "column_family", value_name = "NAME")]
    pub column_family: Option<String>,
    /// The merge operator of the `--column_family` family (uint64add,
    /// stringappend, max, put, or RocksDB's class names); by default the one
    /// its OPTIONS file names.
    #[arg(long = "merge_operator", value_name = "NAME")]
    pub merge_operator: Option<String>,
    /// The memtable size in bytes of the `--column_family` family (ldb's
    /// flag, RocksDB's write_buffer_size: a flush every BYTES of writes);
    /// by default the one its OPTIONS file names.
    #[arg(long = "write_buffer_size", value_name = "BYTES")]
    pub write_buffer_size: Option<usize>,
}

impl DbFlags {
    /// True when no flag was given.
    pub fn is_empty(&self) -> bool {
        self.db.is_none()
            && self.column_family.is_none()
            && self.merge_operator.is_none()
            && self.write_buffer_size.is_none()
            && !(self.create_if_missing || self.hex || self.key_hex || self.value_hex)
    }

    /// Combines the flags given before the command with those after it.
    pub fn merge(&self, after: &DbFlags) -> CliResult<DbFlags> {
        let db = match (&self.db, &after.db) {
            (Some(a), Some(b)) if a != b => {
                return Err(CliError::Failed(format!(
                    "--db given twice: {} and {}",
                    a.display(),
                    b.display()
                )))
            }
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        let column_family = once("column_family", &self.column_family, &after.column_family)?;
        let merge_operator = once(
            "merge_operator",
            &self.merge_operator,
            &after.merge_operator,
        )?;
        let write_buffer_size = once(
            "write_buffer_size",
            &self.write_buffer_size,
            &after.write_buffer_size,
        )?;
        Ok(DbFlags {
            db,
            column_family,
            merge_operator,
            write_buffer_size,
            create_if_missing: self.create_if_missing || after.create_if_missing,
            hex: self.hex || after.hex,
            key_hex: self.key_hex || after.key_hex,
            value_hex: self.value_hex || after.value_hex,
        })
    }

    /// Keys are hex (`--hex` or `--key_hex`).
    pub fn is_key_hex(&self) -> bool {
        self.hex || self.key_hex
    }

    /// Values are hex (`--hex` or `--value_hex`).
    pub fn is_value_hex(&self) -> bool {
        self.hex || self.value_hex
    }

    /// The `--db` directory, which every command that opens the DB needs.
    pub fn db_dir(&self) -> CliResult<&Path> {
        self.db
            .as_deref()
            .ok_or_else(|| CliError::Failed("--db=<path> must be specified".into()))
    }

    /// Decodes a key argument; `what` names it in an error (`key`, `--from`).
    pub fn key(&self, arg: &OsString, what: &str) -> CliResult<Vec<u8>> {
        Ok(hex::parse_arg(arg, self.is_key_hex(), what)?)
    }

    pub fn value(&self, arg: &OsString) -> CliResult<Vec<u8>> {
        Ok(hex::parse_arg(arg, self.is_value_hex(), "value")?)
    }
    /// `options` and `families` with `--merge_operator` and
    /// `--write_buffer_size` set on the `--column_family` family only, as
    /// ldb overrides the options of the family it works on.
    fn with_family_flags(
        &self,
        mut options: DbOptions,
        mut families: Vec<(String, CfOptions)>,
    ) -> CliResult<(DbOptions, Vec<(String, CfOptions)>)> {
        let operator = match &self.merge_operator {
            Some(name) => {
                Some(merge_operator_from_name(name).map_err(context("--merge_operator"))?)
            }
            None => None,
        };
        match self.column_family.as_deref() {
            None | Some(DEFAULT_COLUMN_FAMILY_NAME) => {
                if operator.is_some() {
                    options.merge_operator = operator;
                }
                if let Some(bytes) = self.write_buffer_size {
                    options.write_buffer_size = bytes;
                }
            }
            Some(family) => {
                if let Some((_, cf)) = families.iter_mut().find(|(n, _)| n == family) {
                    if operator.is_some() {
                        cf.merge_operator = operator;
                    }
                    if let Some(bytes) = self.write_buffer_size {
                        cf.write_buffer_size = bytes;
                    }
                }
            }
        }
        Ok((options, families))
    }

    /// The options of the database in `dir` and of its other families:
    /// its OPTIONS file's, with this command's family flags applied.
    pub fn options_for(
        &self,
        dir: &Path,
        options: DbOptions,
    ) -> CliResult<(DbOptions, Vec<(String, CfOptions)>)> {
        let (options, families) = stored_options(dir, options)?;
        self.with_family_flags(options, families)
    }

    /// The handle of the `--column_family` family in `db`.
    pub fn family(&self, db: &Db) -> CliResult<ColumnFamily> {
        let name = self
            .column_family
            .as_deref()
            .unwrap_or(DEFAULT_COLUMN_FAMILY_NAME);
        db.cf_handle(name)
            .ok_or_else(|| CliError::Failed(format!("Column family {name:?} does not exist")))
    }
}

/// Opens the database, runs `f`, and closes it. A failure of `f` wins over a
/// failure to close, which is then printed as well.
/// Every column family of the database is opened, as RocksDB requires,
/// with the options the database was last opened with (its newest OPTIONS
/// file; options this build lacks are ignored), so a FIFO or universal
/// database stays one; `options` only fills in what no OPTIONS file says.
/// An application's merge operator, comparator or compaction filter named
/// there is code the tool lacks: the load fails, naming it, rather than
/// open without it and write an OPTIONS file that lost it.
/// `f` gets the `--column_family` family's handle.
pub fn with_db<T>(
    flags: &DbFlags,
    options: DbOptions,
    f: impl FnOnce(&Db, &ColumnFamily) -> CliResult<T>,
) -> CliResult<T> {
    let dir = flags.db_dir()?;
    let (options, families) = flags.options_for(dir, options)?;
    let options = DbOptions {
        create_if_missing: flags.create_if_missing,
        ..options
    };
    let db = Db::open_cf(dir, options, families)?;
    run_and_close(db, |db| f(db, &flags.family(db)?))
}

/// The database's stored options and its other families', from its newest
/// OPTIONS file; without one (a new database, or one written before OPTIONS
/// files), `options` and every family the MANIFEST names with defaults.
fn stored_options(
    dir: &Path,
    options: DbOptions,
) -> CliResult<(DbOptions, Vec<(String, CfOptions)>)> {
    let load = LoadOptions {
        ignore_unknown_options: true,
        ..LoadOptions::default()
    };
    match load_latest_options(dir, &load) {
        Ok((stored, families)) => {
            let options = DbOptions {
                fs: options.fs,
                block_cache: options.block_cache,
                statistics: options.statistics,
                rate_limiter: options.rate_limiter,
                ..stored
            };
            let others = families
                .into_iter()
                .filter(|(n, _)| n != DEFAULT_COLUMN_FAMILY_NAME)
                .collect();
            Ok((options, others))
        }
        Err(e) if e.is_not_found() => {
            let families = match Db::list_column_families(dir, &options) {
                Ok(names) => names
                    .into_iter()
                    .filter(|n| n != DEFAULT_COLUMN_FAMILY_NAME)
                    .map(|n| (n, CfOptions::default()))
                    .collect(),
                // No database yet (or one the open will report on): open says why.
                Err(_) => Vec::new(),
            };
            Ok((options, families))
        }
        Err(e) => Err(context("Failed to load the OPTIONS file")(e)),
    }
}

/// Like [`with_db`] for commands that only read: the database is opened
/// read-only, so the command writes nothing (no table from the WAL, no new
/// LOG) and cannot start a compaction it would then wait for.
pub fn with_db_read_only<T>(
    flags: &DbFlags,
    options: DbOptions,
    f: impl FnOnce(&Db, &ColumnFamily) -> CliResult<T>,
) -> CliResult<T> {
    let db = open_read_only(flags, options)?;
    // Writes after damage in a WAL are not there to read: say so, rather
    // than answer as if the database were whole.
    for damage in db.wal_damage() {
        eprintln!("warning: {damage}");
    }
    run_and_close(db, |db| f(db, &flags.family(db)?))
}

/// Opens the database read-only with its stored options and this command's
/// family flags, as [`with_db_read_only`] does, for a caller that keeps the
/// handle (and reports its WAL damage) itself.
pub fn open_read_only(flags: &DbFlags, options: DbOptions) -> CliResult<Db> {
    let dir = flags.db_dir()?;
    let (options, families) = stored_options(dir, options)?;
    let (options, _) = flags.with_family_flags(options, families)?;
    Ok(Db::open_read_only(dir, options)?)
}

pub fn run_and_close<T>(db: Db, f: impl FnOnce(&Db) -> CliResult<T>) -> CliResult<T> {
    let result = f(&db);
    let closed = db.close();
    match (result, closed) {
        (Ok(v), Ok(())) => Ok(v),
        (Ok(_), Err(e)) => Err(context("Close failed")(e)),
        (Err(e), Ok(())) => Err(e),
        (Err(e), Err(close)) => {
            eprintln!("Failed: Close failed: {close}");
            Err(e)
        }
    }
}

/// Runs `f` with a buffered stdout, flushed at the end.
pub fn with_stdout<T>(
    f: impl FnOnce(&mut BufWriter<io::StdoutLock<'_>>) -> CliResult<T>,
) -> CliResult<T> {
    let mut out = BufWriter::new(io::stdout().lock());
    let v = f(&mut out)?;
    out.flush().map_err(stdout_error)?;
    Ok(v)
}

/// A flag given before the command, after it, or both times with one value.
fn once<T: Clone + PartialEq + std::fmt::Display>(
    name: &str,
    before: &Option<T>,
    after: &Option<T>,
) -> CliResult<Option<T>> {
    match (before, after) {
        (Some(a), Some(b)) if a != b => Err(CliError::Failed(format!(
            "--{name} given twice: {a} and {b}"
        ))),
        (a, b) => Ok(a.clone().or_else(|| b.clone())),
    }
}

/// Prints `OK`, as ldb does after a write.
pub fn print_ok() -> CliResult {
    with_stdout(|out| out.write_all(b"OK\n").map_err(stdout_error))
}
