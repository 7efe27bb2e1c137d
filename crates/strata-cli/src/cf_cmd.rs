//! ldb's column family commands: `list_column_families`,
//! `create_column_family NAME`, `drop_column_family NAME`.

use std::io::Write;

use clap::Args;
use strata::{Db, DbOptions};

use crate::cli_error::{context, stdout_error, CliError, CliResult};
use crate::db_flags::{print_ok, with_db, with_stdout, DbFlags};

#[derive(Debug, Args)]
pub struct FamilyArgs {
    #[command(flatten)]
    pub flags: DbFlags,
    /// The column family's name.
    name: String,
}

/// Prints the families as ldb does: a header line, then `{default, a, b}`.
pub fn list(flags: &DbFlags) -> CliResult {
    let dir = flags.db_dir()?;
    let names = Db::list_column_families(dir, &DbOptions::default())
        .map_err(context("Failed to list column families"))?;
    with_stdout(|out| {
        writeln!(out, "Column families in {}: ", dir.display())
            .and_then(|()| writeln!(out, "{{{}}}", names.join(", ")))
            .map_err(stdout_error)
    })
}

pub fn create(flags: &DbFlags, a: &FamilyArgs) -> CliResult {
    with_db(flags, DbOptions::default(), |db, _| {
        db.create_column_family(&a.name, strata::CfOptions::default())
            .map(|_| ())
            .map_err(context("Fail to create new column family"))
    })?;
    print_ok()
}

pub fn drop_family(flags: &DbFlags, a: &FamilyArgs) -> CliResult {
    with_db(flags, DbOptions::default(), |db, _| {
        let cf = db.cf_handle(&a.name).ok_or_else(|| {
            CliError::Failed(format!("Column family {:?} does not exist", a.name))
        })?;
        db.drop_column_family(&cf)
            .map_err(context("Fail to drop column family"))
    })?;
    print_ok()
}
