//! ldb's `list_live_files_metadata` and `dump_live_files`: the live files of
//! every family, listed, or dumped whole (the MANIFEST, every live table's
//! entries and properties, every live blob file, every WAL).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use clap::Args;
use strata::fs::{Fs, ReadFileOptions, StdFs};
use strata::table::TableReader;
use strata::DbOptions;

use crate::cli_error::{stdout_error, CliResult};
use crate::db_flags::{with_db_read_only, with_stdout, DbFlags};
use crate::inspect;

const RULE: &str = "==============================";
const LINE: &str = "------------------------------";

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub flags: DbFlags,
    /// List the tables by file name, each with its level, instead of level
    /// by level.
    #[arg(long = "sort_by_filename")]
    sort_by_filename: bool,
}

/// `list_live_files_metadata`, in ldb's layout.
pub fn list(flags: &DbFlags, a: &ListArgs) -> CliResult {
    let levels = DbOptions::default().compaction.num_levels;
    with_db_read_only(flags, DbOptions::default(), |db, _| {
        let tables = db.live_files_metadata();
        let blobs = db.live_blob_files_metadata();
        with_stdout(|out| {
            for cf in db.column_families() {
                let name = cf.name();
                writeln!(out, "===== Column Family: {name} =====").map_err(stdout_error)?;
                writeln!(out, "Live SST Files:").map_err(stdout_error)?;
                let mine: Vec<_> = tables
                    .iter()
                    .filter(|t| t.column_family_name == name)
                    .collect();
                if a.sort_by_filename {
                    let mut sorted = mine.clone();
                    sorted.sort_by_key(|t| t.file_number);
                    for t in sorted {
                        writeln!(out, "{} : level {}", t.file_path.display(), t.level)
                            .map_err(stdout_error)?;
                    }
                } else {
                    for level in 0..levels {
                        writeln!(out, "---------- level {level} ----------")
                            .map_err(stdout_error)?;
                        for t in mine.iter().filter(|t| t.level == level) {
                            writeln!(out, "{}", t.file_path.display()).map_err(stdout_error)?;
                        }
                    }
                }
                writeln!(out, "Live Blob Files:").map_err(stdout_error)?;
                for b in blobs.iter().filter(|b| b.column_family_name == name) {
                    writeln!(out, "{}", b.file_path.display()).map_err(stdout_error)?;
                }
                writeln!(out, "{LINE}").map_err(stdout_error)?;
            }
            Ok(())
        })
    })
}

/// `dump_live_files`, in ldb's sections: the MANIFEST, each live table
/// (entries as stored, then properties), each live blob file, each WAL.
pub fn dump(flags: &DbFlags) -> CliResult {
    let dir = flags.db_dir()?.to_path_buf();
    let manifest = strata::filename::manifest_file_name(
        &dir,
        strata::filename::read_current_file(&StdFs, &dir)?,
    );
    with_stdout(|out| {
        writeln!(out, "Manifest File\n{RULE}\n{}", manifest.display()).map_err(stdout_error)
    })?;
    inspect::manifest_dump(
        flags,
        &inspect::ManifestDumpArgs::of(flags.clone(), manifest),
    )?;
    let (tables, blobs) = with_db_read_only(flags, DbOptions::default(), |db, _| {
        Ok((db.live_files_metadata(), db.live_blob_files_metadata()))
    })?;
    with_stdout(|out| {
        writeln!(out, "\nSST Files\n{RULE}").map_err(stdout_error)?;
        for t in &tables {
            writeln!(out, "{} level:{}\n{LINE}", t.file_path.display(), t.level)
                .map_err(stdout_error)?;
            writeln!(out, "Process {}", t.file_path.display()).map_err(stdout_error)?;
            let table = open_table(&t.file_path)?;
            crate::table_dump::dump_raw(&table, flags.hex, out)?;
            writeln!(out, "\nTable Properties:").map_err(stdout_error)?;
            out.write_all(
                table
                    .properties()
                    .to_lines(|k| crate::hex::show(k, flags.hex))
                    .as_bytes(),
            )
            .map_err(stdout_error)?;
            writeln!(out).map_err(stdout_error)?;
        }
        writeln!(out, "Blob Files\n{RULE}").map_err(stdout_error)?;
        Ok(())
    })?;
    for b in &blobs {
        with_stdout(|out| writeln!(out, "{}", b.file_path.display()).map_err(stdout_error))?;
        let show = crate::blob_dump::Show {
            key_hex: flags.hex,
            value_hex: flags.hex,
            values: true,
        };
        crate::blob_dump::dump_blob_file(&b.file_path, show)?;
    }
    with_stdout(|out| writeln!(out, "\nWrite Ahead Log Files\n{RULE}").map_err(stdout_error))?;
    inspect::dump_wal(&inspect::DumpWalArgs::of(flags.clone(), dir))
}

fn open_table(path: &Path) -> CliResult<Arc<TableReader>> {
    let file = StdFs.open(path, ReadFileOptions::default())?;
    Ok(Arc::new(TableReader::open(file, path)?))
}
