//! `strata serve`: the web view of a database, live, on loopback.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

use crate::{stderr, strata};

#[test]
fn serve_answers_until_stopped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = format!("--db={}", dir.path().join("db").display());
    let out = strata(&[&db, "--create_if_missing", "put", "k", "v"], "");
    assert!(out.status.success(), "{}", stderr(&out));
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args([&db, "serve", "--http_addr=127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .expect("run strata serve");
    let mut line = String::new();
    let stderr = child.stderr.take().expect("stderr");
    BufReader::new(stderr)
        .read_line(&mut line)
        .expect("the address line");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    assert!(addr.starts_with("127.0.0.1:"), "{line}");
    let mut stream = TcpStream::connect(&addr).expect("connect");
    stream
        .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .expect("request");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("response");
    child.kill().expect("stop serve");
    let _ = child.wait();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.contains("rocksdb_estimate_num_keys{cf=\"default\"} 1"),
        "{response}"
    );
}
