//! `strata serve`: the web view of a database, on loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use strata::{CompactionOptions, Db, DbOptions};

use crate::{stderr, strata};

/// A running `strata serve`, stopped when dropped (also when a test fails).
struct Serving {
    child: Child,
    addr: String,
    /// What it printed up to and including the line naming its address.
    said: String,
}

impl Serving {
    /// Starts `strata serve` with `args` on a port the OS picks and waits
    /// for the line that names its address.
    fn start(args: &[&str]) -> Serving {
        let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .args(args)
            .arg("--http_addr=127.0.0.1:0")
            .stderr(Stdio::piped())
            .spawn()
            .expect("run strata serve");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr"));
        let mut said = String::new();
        let addr = loop {
            let mut line = String::new();
            // A serve that exits closes stderr: read_line returns 0.
            if lines.read_line(&mut line).expect("read stderr") == 0 {
                let _ = child.kill();
                panic!("strata serve ended without serving: {said}");
            }
            said.push_str(&line);
            if let Some(rest) = line.split("http://").nth(1) {
                break rest.split('/').next().unwrap_or_default().to_owned();
            }
        };
        assert!(addr.starts_with("127.0.0.1:"), "{said}");
        Serving { child, addr, said }
    }

    /// The status line and body of `GET path`.
    fn get(&self, path: &str) -> String {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).expect("request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("response");
        response
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn serve_answers_until_stopped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = format!("--db={}", dir.path().join("db").display());
    let out = strata(&[&db, "--create_if_missing", "put", "k", "v"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let serving = Serving::start(&[&db, "serve"]);
    let response = serving.get("/metrics");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.contains("rocksdb_estimate_num_keys{cf=\"default\"} 1"),
        "{response}"
    );
}

/// The table files in `dir`, by name.
fn tables(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sst"))
        .collect();
    names.sort();
    names
}

/// The `L0` row of the LSM page: `<td>L0</td><td>N</td>`.
fn l0_row(tables: usize) -> String {
    format!("<td>L0</td><td>{tables}</td>")
}

/// An operator watching a database must not stop its application from
/// opening it, nor change it: serve opens read-only by default, takes no
/// LOCK and runs no compaction, and its pages follow what the application
/// writes.
#[test]
fn serve_is_read_only_beside_the_application_and_follows_its_writes() {
    const L0_TABLES: usize = 30;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    // Many L0 tables made with compactions off, then the OPTIONS file says
    // compactions are on, as for an application stopped before its
    // compactions caught up: anything that opens it for writing with the
    // stored options compacts at once.
    let quiet = DbOptions {
        create_if_missing: true,
        compaction: CompactionOptions {
            disable_auto_compactions: true,
            ..CompactionOptions::default()
        },
        ..DbOptions::default()
    };
    let db = Db::open(&path, quiet.clone()).expect("create");
    // Every table holds `last`, so they overlap and a compaction merges
    // them into fewer files, not just moves them down.
    for i in 0..L0_TABLES {
        db.put(format!("key{i:03}"), "v").expect("put");
        db.put("last", format!("{i}")).expect("put");
        db.flush().expect("flush");
    }
    db.close().expect("close");
    for entry in std::fs::read_dir(&path).expect("read dir") {
        let entry = entry.expect("entry");
        if entry.file_name().to_string_lossy().starts_with("OPTIONS-") {
            let text = std::fs::read_to_string(entry.path()).expect("OPTIONS");
            let text = text.replace(
                "disable_auto_compactions=true",
                "disable_auto_compactions=false",
            );
            std::fs::write(entry.path(), text).expect("rewrite OPTIONS");
        }
    }
    let before = tables(&path);
    assert_eq!(before.len(), L0_TABLES);

    let db_flag = format!("--db={}", path.display());
    let serving = Serving::start(&[&db_flag, "serve"]);
    let page = serving.get("/");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains(&l0_row(L0_TABLES)), "{page}");
    assert!(page.contains("Read-only view as of"), "{page}");

    // The application opens its database for writing while serve runs.
    let app = match Db::open(&path, quiet) {
        Ok(app) => app,
        Err(e) => panic!("the application cannot open its database beside strata serve: {e}"),
    };
    assert_eq!(tables(&path), before, "strata serve changed the tables");
    app.put("fresh", "v").expect("put");
    app.flush().expect("flush");

    // The view follows the application's writes (it reopens read-only),
    // within a bounded wait rather than a timed assertion.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let page = serving.get("/");
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        if page.contains(&l0_row(L0_TABLES + 1)) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the view never showed the application's new table:\n{page}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    app.close().expect("close");
}

/// `--read_only=false` serves a handle open for writing, as before: the
/// LOCK is held, so the application's own open is refused meanwhile.
#[test]
fn serve_read_only_false_opens_for_writing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("db");
    let db = format!("--db={}", path.display());
    let out = strata(&[&db, "--create_if_missing", "put", "k", "v"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let serving = Serving::start(&[&db, "serve", "--read_only=false"]);
    assert!(
        serving.said.contains("open for writing"),
        "{}",
        serving.said
    );
    let page = serving.get("/");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(!page.contains("Read-only view"), "{page}");
    match Db::open(&path, DbOptions::default()) {
        Err(strata::Error::LockHeld { .. }) => {}
        other => panic!("expected the LOCK to be held, got {other:?}"),
    }
}

/// A read-only view creates nothing: `--create_if_missing` asks for a
/// writable one, and is refused with a word on how to get it.
#[test]
fn serve_read_only_refuses_create_if_missing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = format!("--db={}", dir.path().join("db").display());
    let out = strata(
        &[
            &db,
            "--create_if_missing",
            "serve",
            "--http_addr=127.0.0.1:0",
        ],
        "",
    );
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--read_only=false"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.path().join("db").exists());
}
