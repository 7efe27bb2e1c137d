//! End-to-end tests of the `strata` binary.
// Test code may panic on failure: that is how a test reports it.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::io::Write;
use std::process::{Command, Output, Stdio};

mod blob;
mod checkpoint;
mod db;
mod idump;
mod ingest;
mod live_files;
mod repair;
mod serve;
mod sst;
mod stored_options;

/// Runs `strata` with `args`, feeding it `stdin`.
pub fn strata(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run strata");
    // The tool may exit before reading its input (bad options): a broken pipe
    // here is expected then, and the exit status tells the story.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("wait")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
