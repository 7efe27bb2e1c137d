//! `strata serve`: the live web view of a database (`strata-web`), until
//! the process is stopped. The database is opened for writing, so it is
//! live (compactions run); when another process holds it, it is opened
//! read-only instead, as it was at that moment, and the command says so.

use clap::Args;
use strata::DbOptions;

use crate::cli_error::CliResult;
use crate::db_flags::{with_db, with_db_read_only, DbFlags};

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub flags: DbFlags,
    /// Where to listen: loopback unless an address says otherwise.
    #[arg(long = "http_addr", default_value = "127.0.0.1:8080")]
    http_addr: String,
}

pub fn serve(flags: &DbFlags, a: &ServeArgs) -> CliResult {
    let run = |db: &strata::Db, how: &str| -> CliResult {
        let view = strata_web::WebView::start(db, &a.http_addr)?;
        eprintln!(
            "serving {} ({how}) at http://{}/ until stopped",
            db.path().display(),
            view.addr()
        );
        loop {
            std::thread::park();
        }
    };
    match with_db(flags, DbOptions::default(), |db, _| {
        run(db, "open for writing")
    }) {
        Err(crate::cli_error::CliError::Failed(m)) if m.starts_with("Lock held") => {
            eprintln!("{m}: another process has it open; serving a read-only view as of now");
            with_db_read_only(flags, DbOptions::default(), |db, _| run(db, "read-only"))
        }
        other => other,
    }
}
