//! `strata --db=D repair` (ldb's `repair`): rebuilds the MANIFEST from the
//! files in the directory, then prints what it found and `OK`.

use std::io::Write;

use strata::{repair_db, DbOptions};

use crate::cli_error::{context, stdout_error, CliResult};
use crate::db_flags::{with_stdout, DbFlags};

/// Repairs the database in `--db`, with `--merge_operator` and
/// `--column_family` as the other commands take them (the OPTIONS file
/// gives every other family's options).
pub fn repair(flags: &DbFlags) -> CliResult {
    let dir = flags.db_dir()?;
    let (options, families) = flags.options_for(dir, DbOptions::default())?;
    let report = repair_db(dir, &options, families).map_err(context("Repair failed"))?;
    with_stdout(|out| {
        let names: Vec<_> = report
            .families
            .iter()
            .map(|(id, n)| format!("{n} ({id})"))
            .collect();
        writeln!(out, "column families: {}", names.join(", ")).map_err(stdout_error)?;
        writeln!(
            out,
            "MANIFEST records read: {}",
            report.manifest_records_read
        )
        .map_err(stdout_error)?;
        writeln!(out, "tables recovered: {}", report.tables_recovered).map_err(stdout_error)?;
        writeln!(out, "blob files recovered: {}", report.blob_files_recovered)
            .map_err(stdout_error)?;
        writeln!(
            out,
            "WAL entries recovered: {} into {} tables ({} already in tables, \
             {} of unknown families, {} damaged records skipped)",
            report.wal_entries_recovered,
            report.tables_from_wals,
            report.wal_entries_already_in_tables,
            report.wal_entries_of_unknown_families,
            report.wal_damage_skipped
        )
        .map_err(stdout_error)?;
        for name in &report.compacted_families {
            writeln!(out, "compacted column family {name}").map_err(stdout_error)?;
        }
        for (path, why) in &report.lost {
            writeln!(out, "moved {} : {why}", path.display()).map_err(stdout_error)?;
        }
        for warning in &report.warnings {
            writeln!(out, "warning: {warning}").map_err(stdout_error)?;
        }
        writeln!(out, "last sequence number: {}", report.last_sequence).map_err(stdout_error)?;
        writeln!(out, "OK").map_err(stdout_error)
    })
}
