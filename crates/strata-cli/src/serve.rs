//! `strata serve`: the web view of a database (`strata-web`), until the
//! process is stopped. By default the database is opened read-only, so the
//! view takes no LOCK, writes nothing and runs no compaction: the
//! application can open its database, or go on writing it, while an
//! operator looks. The view reopens it when a page is asked for a second or
//! more after the last open, so pages follow the writer; each page says as
//! of when. `--read_only=false` opens it for writing instead (live
//! counters and stalls, and compactions run), for a database no
//! application is using.

use std::time::Duration;

use clap::Args;
use strata::DbOptions;

use crate::cli_error::{CliError, CliResult};
use crate::db_flags::{open_read_only, with_db, DbFlags};

/// A page asked for this long after the last open reopens the database: the
/// pages reload every 5 s, so one viewer costs an open every 5 s, and a
/// page is never more than this out of date when asked for.
const REOPEN_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub flags: DbFlags,
    /// Where to listen: loopback unless an address says otherwise.
    #[arg(long = "http_addr", default_value = "127.0.0.1:8080")]
    http_addr: String,
    /// Open the database read-only (the default): no LOCK is taken and
    /// nothing written, so an application can open and write it meanwhile;
    /// it is reopened when a page is asked for a second or more after the
    /// last open. `--read_only=false` opens it for writing: live counters
    /// and stalls, and compactions run, but the application cannot open it
    /// until serve stops.
    #[arg(long = "read_only", num_args = 0..=1, default_value_t = true, default_missing_value = "true", action = clap::ArgAction::Set)]
    read_only: bool,
}

pub fn serve(flags: &DbFlags, a: &ServeArgs) -> CliResult {
    if !a.read_only {
        return with_db(flags, DbOptions::default(), |db, _| {
            let view = strata_web::WebView::start(db, &a.http_addr)?;
            eprintln!(
                "serving {} (open for writing) at http://{}/ until stopped",
                db.path().display(),
                view.addr()
            );
            park()
        });
    }
    if flags.create_if_missing {
        return Err(CliError::Failed(
            "--create_if_missing needs --read_only=false: a read-only view creates nothing".into(),
        ));
    }
    let first = open_read_only(flags, DbOptions::default())?;
    // Damage is reported once, at the start, not at every reopen.
    for damage in first.wal_damage() {
        eprintln!("warning: {damage}");
    }
    let reopen_flags = flags.clone();
    let reopen: strata_web::Reopen = Box::new(move || {
        open_read_only(&reopen_flags, DbOptions::default()).map_err(|e| match e {
            CliError::Failed(message) => message,
            CliError::StdoutClosed => "stdout closed".to_owned(),
        })
    });
    let path = first.path().to_owned();
    let view = strata_web::WebView::start_read_only(first, reopen, REOPEN_EVERY, &a.http_addr)?;
    eprintln!(
        "serving {} (read-only, reopened as pages are asked for) at http://{}/ until stopped",
        path.display(),
        view.addr()
    );
    park()
}

/// Waits until the process is stopped.
fn park() -> CliResult {
    loop {
        std::thread::park();
    }
}
