//! Every page and `/metrics` over real HTTP, and the requests the view
//! refuses; a client that goes away mid-request does not stop it.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use strata::{Db, DbOptions, Statistics};
use strata_web::WebView;

/// Sends `request` as written and returns the status code and the body.
fn exchange(addr: SocketAddr, request: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    exchange(
        addr,
        &format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
    )
}

#[test]
fn every_page_and_the_metrics_are_served_and_bad_requests_refused() {
    let dir = tempfile::tempdir().unwrap();
    let stats = Arc::new(Statistics::new());
    let options = DbOptions {
        create_if_missing: true,
        statistics: Some(stats),
        write_buffer_size: 64 << 10,
        ..DbOptions::default()
    };
    let db = Db::open(dir.path(), options).unwrap();
    for i in 0..5000u32 {
        db.put(format!("key{i:05}"), "v".repeat(50)).unwrap();
    }
    db.flush().unwrap();
    db.get("key00007").unwrap();
    let view = WebView::start(&db, "127.0.0.1:0").unwrap();
    let addr = view.addr();
    assert!(addr.ip().is_loopback());

    let (status, lsm) = get(addr, "/");
    assert_eq!(status, 200);
    assert!(
        lsm.contains("<svg class=\"lsm\" id=\"lsm-default\""),
        "{lsm}"
    );
    assert!(
        lsm.contains("<rect class=\"table"),
        "no table drawn:\n{lsm}"
    );
    assert!(lsm.contains("<table class=\"levels\">"));
    for (path, mark) in [
        ("/tables", "<table id=\"tables\">"),
        ("/stats", "Compaction Stats"),
        ("/plots", "<svg class=\"plot\" id=\"plot-writes\""),
        ("/options", "[DBOptions]"),
        ("/log", "The last"),
    ] {
        let (status, body) = get(addr, path);
        assert_eq!(status, 200, "{path}");
        assert!(body.contains(mark), "{path} lacks {mark}:\n{body}");
        assert!(body.contains("<nav>"), "{path}");
    }
    let (status, metrics) = get(addr, "/metrics");
    assert_eq!(status, 200);
    for line in [
        "# TYPE rocksdb_number_keys_written_total counter\nrocksdb_number_keys_written_total 5000\n",
        "# TYPE rocksdb_db_get_micros summary\n",
        "rocksdb_db_get_micros_count 1\n",
        "rocksdb_num_files_at_level{cf=\"default\",level=\"0\"} ",
        "rocksdb_estimate_num_keys{cf=\"default\"} ",
    ] {
        assert!(metrics.contains(line), "{line:?} missing:\n{metrics}");
    }
    // Every metric line is `name[{labels}] number`.
    for line in metrics.lines().filter(|l| !l.starts_with('#')) {
        let value = line.rsplit(' ').next().unwrap();
        assert!(value.parse::<f64>().is_ok(), "{line}");
        assert!(line.starts_with("rocksdb_"), "{line}");
    }

    let (status, _) = exchange(
        addr,
        "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
    );
    assert_eq!(status, 405);
    assert_eq!(get(addr, "/nope").0, 404);
    assert_eq!(get(addr, &format!("/{}", "a".repeat(5000))).0, 414);
    let (status, _) = exchange(addr, "NOT-HTTP\r\n\r\n");
    assert!(
        (400..500).contains(&status),
        "a malformed request got {status}"
    );
    // A client that asks and leaves at once; then one that sends half a
    // request and leaves. The view serves the next client.
    for partial in ["GET /tables HTTP/1.1\r\nHost: x\r\n\r\n", "GET /ta"] {
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(partial.as_bytes()).unwrap();
        drop(stream);
    }
    assert_eq!(get(addr, "/").0, 200);
    // The database went on working, and nothing served changed it.
    db.put("after", "1").unwrap();
    assert_eq!(
        db.get("key00007").unwrap().as_deref(),
        Some("v".repeat(50).as_bytes())
    );
    drop(view);
    db.close().unwrap();
}

#[test]
fn a_bad_address_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        DbOptions {
            create_if_missing: true,
            ..Default::default()
        },
    )
    .unwrap();
    let err = WebView::start(&db, "not an address").unwrap_err();
    assert!(err.contains("not host:port"), "{err}");
}

/// A free loopback port, for a view started by the database (which does
/// not say which port 0 picked).
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// `http_addr` in the options: the view serves while the database is open,
/// keeps no handle of its own, and is gone once the database closes.
#[test]
fn the_view_as_a_service_lives_as_long_as_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let addr: SocketAddr = format!("127.0.0.1:{}", free_port()).parse().unwrap();
    let options = DbOptions {
        create_if_missing: true,
        services: vec![strata_web::http_addr(&addr.to_string())],
        ..DbOptions::default()
    };
    let db = Db::open(dir.path(), options.clone()).unwrap();
    db.put("k", "v").unwrap();
    let (status, body) = get(addr, "/metrics");
    assert_eq!(status, 200);
    assert!(body.contains("rocksdb_"), "{body}");
    // Dropping the only handle closes the database: the view holds none.
    drop(db);
    assert!(
        TcpStream::connect(addr).is_err(),
        "still served after close"
    );
    let db = Db::open(dir.path(), options.clone()).unwrap();
    assert_eq!(get(addr, "/").0, 200);
    db.close().unwrap();
    assert!(
        TcpStream::connect(addr).is_err(),
        "still served after close"
    );

    // An address that cannot be bound fails the open, naming it, and
    // leaves the database closed.
    let bad = DbOptions {
        services: vec![strata_web::http_addr("not an address")],
        ..options.clone()
    };
    let err = Db::open(dir.path(), bad).unwrap_err().to_string();
    assert!(
        err.contains("web view") && err.contains("not an address"),
        "{err}"
    );
    Db::open(dir.path(), options).unwrap().close().unwrap();
}

/// A read-only view shows its own handle, says as of when, reopens when a
/// page is asked for after its interval, and keeps the older state (saying
/// why) when a reopen fails.
#[test]
fn a_read_only_view_reopens_and_survives_a_failed_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_owned();
    let writer = Db::open(
        &path,
        DbOptions {
            create_if_missing: true,
            ..DbOptions::default()
        },
    )
    .unwrap();
    writer.put("a", "1").unwrap();
    let first = Db::open_read_only(&path, DbOptions::default()).unwrap();
    let opens = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = opens.clone();
    // The first two reopens work (the first two pages), the rest fail.
    let reopen: strata_web::Reopen =
        Box::new(
            move || match counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
                0 | 1 => Db::open_read_only(&path, DbOptions::default()).map_err(|e| e.to_string()),
                _ => Err("the disk is on fire".to_owned()),
            },
        );
    // Reopened at every page.
    let view = WebView::start_read_only(first, reopen, Duration::ZERO, "127.0.0.1:0").unwrap();
    let metric = |n: u64| format!("rocksdb_estimate_num_keys{{cf=\"default\"}} {n}");

    let (status, body) = get(view.addr(), "/metrics");
    assert_eq!(status, 200);
    assert!(body.contains(&metric(1)), "{body}");
    writer.put("b", "2").unwrap();
    let (status, page) = get(view.addr(), "/");
    assert_eq!(status, 200);
    assert!(page.contains("Read-only view as of"), "{page}");
    assert!(!page.contains("reopen failed"), "{page}");
    let (_, body) = get(view.addr(), "/metrics");
    // This reopen failed: the state of the one before is still served.
    assert!(
        body.contains(&metric(2)),
        "the view did not follow the writer: {body}"
    );
    let (status, page) = get(view.addr(), "/tables");
    assert_eq!(status, 200);
    assert!(
        page.contains("The last reopen failed: the disk is on fire"),
        "{page}"
    );
    assert_eq!(opens.load(std::sync::atomic::Ordering::SeqCst), 4);
    drop(view);
    writer.close().unwrap();
}
