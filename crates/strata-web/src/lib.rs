//! A live, read-only web view of a Strata database.
//!
//! [`WebView::start`] serves, on a loopback address unless told otherwise:
//!
//! - `/`: every family's LSM drawn as a picture (a row per level, each table
//!   a box placed by its key range and sized by its bytes; tables a running
//!   compaction reads are outlined in red), with a summary per level;
//! - `/tables`: every live table's metadata and properties;
//! - `/stats`: the compaction stats (`rocksdb.stats`);
//! - `/plots`: writes per second, W-Amp, stalls and the block cache hit
//!   rate over the last ten minutes, sampled every second;
//! - `/options`: the newest OPTIONS file;
//! - `/log`: the last lines of the LOG;
//! - `/metrics`: every ticker, histogram and the main properties in
//!   Prometheus' text format, named `rocksdb_*`.
//!
//! Inside an application, the view starts with the database and stops when
//! it closes: put [`http_addr`] in `DbOptions::services`.
//!
//! ```
//! use strata::{Db, DbOptions};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! let options = DbOptions {
//!     create_if_missing: true,
//!     services: vec![strata_web::http_addr("127.0.0.1:0")],
//!     ..DbOptions::default()
//! };
//! let db = Db::open(dir.path(), options)?;
//! // ... served until:
//! db.close()?;
//! # Ok(())
//! # }
//! ```
//!
//! The view holds no handle of its own: it never keeps the database open,
//! and a page asked for after the last handle is gone gets 503.
//!
//! Beside an application in another process, [`WebView::start_read_only`]
//! serves a handle the view opened read-only (no LOCK taken, nothing
//! written, no compaction run), reopened when a page is asked for after a
//! given interval, so pages follow the application's writes; each page says
//! as of when.
//!
//! Nothing served changes the database. Requests other than a bodiless GET
//! (or HEAD) are refused with 405, unknown paths with 404, overlong URLs
//! with 414; a client that goes away mid-response costs nothing. Two
//! threads answer requests and one samples; none holds an engine lock
//! longer than reading a property takes.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use strata::{Db, DbService, WeakDb};

mod html;
mod metrics;
mod pages;
mod samples;
mod source;

pub use source::Reopen;
use source::{Seen, Source};

/// Longest URL answered; longer ones get 414.
const MAX_URL: usize = 2048;
/// Threads answering requests.
const WORKERS: usize = 2;

/// A running web view; stops when dropped.
pub struct WebView {
    server: Arc<tiny_http::Server>,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl WebView {
    /// Serves `db` on `addr` (`host:port`; port 0 picks a free one) while
    /// some handle of it is open.
    ///
    /// # Errors
    ///
    /// The address cannot be parsed or bound.
    pub fn start(db: &Db, addr: &str) -> Result<WebView, String> {
        Self::start_weak(db.downgrade(), addr)
    }

    /// Serves a database another process may be writing, on `addr`, until
    /// dropped: `first` (a handle from `Db::open_read_only`) at the start,
    /// then whatever `reopen` returns (also read-only), called when a page
    /// is asked for more than `every` after the last open. A reopen that
    /// fails leaves the older handle in place, and the pages say why. The
    /// view holds the handle itself; nothing is opened while nobody looks.
    ///
    /// # Errors
    ///
    /// The address cannot be parsed or bound.
    pub fn start_read_only(
        first: Db,
        reopen: Reopen,
        every: Duration,
        addr: &str,
    ) -> Result<WebView, String> {
        Self::start_source(Source::read_only(first, reopen, every), addr)
    }

    fn start_weak(db: WeakDb, addr: &str) -> Result<WebView, String> {
        Self::start_source(Source::Live(db), addr)
    }

    fn start_source(db: Source, addr: &str) -> Result<WebView, String> {
        let parsed: SocketAddr = addr
            .parse()
            .map_err(|e| format!("http_addr {addr:?} is not host:port: {e}"))?;
        let server =
            tiny_http::Server::http(parsed).map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let addr = server
            .server_addr()
            .to_ip()
            .ok_or_else(|| format!("{addr} is not an IP address"))?;
        let server = Arc::new(server);
        let stop = Arc::new(AtomicBool::new(false));
        let history = Arc::new(Mutex::new(samples::History::default()));
        let mut threads = Vec::new();
        {
            let (db, stop, history) = (db.clone(), stop.clone(), history.clone());
            threads.push(spawn("strata-web-sampler", move || {
                samples::run(&db, &history, &stop);
            })?);
        }
        for i in 0..WORKERS {
            let (db, server, history) = (db.clone(), server.clone(), history.clone());
            threads.push(spawn(&format!("strata-web-{i}"), move || {
                for request in server.incoming_requests() {
                    answer(&db, &history, request);
                }
            })?);
        }
        Ok(WebView {
            server,
            addr,
            stop,
            threads,
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl std::fmt::Debug for WebView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebView")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Drop for WebView {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        for _ in 0..WORKERS {
            self.server.unblock();
        }
        // The last handle of the database may go on one of these threads,
        // closing it and so dropping this view there: that one ends by
        // itself once it returns.
        let me = std::thread::current().id();
        for thread in self.threads.drain(..) {
            if thread.thread().id() != me {
                let _ = thread.join();
            }
        }
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, String> {
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(f)
        .map_err(|e| format!("cannot start thread {name}: {e}"))
}

/// Answers one request; a client that went away is not an error.
fn answer(db: &Source, history: &Mutex<samples::History>, request: tiny_http::Request) {
    let response = match db.for_page() {
        Some(seen) => route(&seen, db.is_read_only(), history, &request),
        None => text(503, "the database is closed\n"),
    };
    let _ = request.respond(response);
}

/// The web view as a service of the database: started when it opens (on
/// `addr`, `host:port`), stopped when it closes. Use a loopback address
/// unless the view is meant to be seen from elsewhere: nothing on it
/// changes the database, but it shows keys and options.
pub fn http_addr(addr: &str) -> Arc<dyn DbService> {
    Arc::new(HttpAddr(addr.to_owned()))
}

#[derive(Debug)]
struct HttpAddr(String);

impl DbService for HttpAddr {
    fn name(&self) -> &str {
        "web view"
    }

    fn start(&self, db: WeakDb) -> strata::Result<Box<dyn Send>> {
        let view = WebView::start_weak(db, &self.0)
            .map_err(|e| strata::Error::invalid_argument("http_addr", e))?;
        Ok(Box::new(view))
    }
}

type Response = tiny_http::Response<std::io::Cursor<Vec<u8>>>;

fn route(
    seen: &Seen,
    read_only: bool,
    history: &Mutex<samples::History>,
    request: &tiny_http::Request,
) -> Response {
    use tiny_http::Method;
    if !matches!(request.method(), Method::Get | Method::Head) {
        return text(
            405,
            "only GET and HEAD are served: this view changes nothing\n",
        );
    }
    if request.body_length().is_some_and(|n| n > 0) {
        return text(413, "a GET carries no body\n");
    }
    let url = request.url();
    if url.len() > MAX_URL {
        return text(414, "URL too long\n");
    }
    let path = url.split('?').next().unwrap_or("/");
    let db = &seen.db;
    let page = match path {
        "/" => pages::lsm(db),
        "/tables" => pages::tables(db),
        "/stats" => pages::stats(db),
        "/plots" => pages::plots(&lock(history), read_only),
        "/options" => pages::options(db),
        "/log" => pages::log(db),
        "/metrics" => {
            return with_type(
                200,
                metrics::render(db),
                "text/plain; version=0.0.4; charset=utf-8",
            )
        }
        _ => return text(404, "no such page; see /\n"),
    };
    let html = html::page(
        &db.path().display().to_string(),
        seen.note.as_deref(),
        page.title,
        &page.body,
    );
    with_type(200, html, "text/html; charset=utf-8")
}

fn lock(history: &Mutex<samples::History>) -> std::sync::MutexGuard<'_, samples::History> {
    // A sampler that panicked left a history that is still a history.
    history
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn text(status: u16, body: &str) -> Response {
    with_type(status, body.to_owned(), "text/plain; charset=utf-8")
}

fn with_type(status: u16, body: String, content_type: &str) -> Response {
    let mut response = tiny_http::Response::from_data(body.into_bytes()).with_status_code(status);
    if let Ok(header) = tiny_http::Header::from_bytes(&b"Content-Type"[..], content_type.as_bytes())
    {
        response.add_header(header);
    }
    response
}

/// How often the sampler records a point.
pub(crate) const SAMPLE_EVERY: Duration = Duration::from_secs(1);
