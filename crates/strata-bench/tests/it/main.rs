//! Runs the `strata-bench` binary end to end and checks what it prints: db_bench's
//! result lines, field by field, and the counts the benchmarks must reach.

#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::process::{Command, Output};

mod destroy;
mod statistics;

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_strata-bench"))
        .args(args)
        .output()
        .expect("strata-bench runs")
}

/// One db_bench result line:
/// `name : X micros/op N ops/sec S seconds N operations; [R MB/s] [(F of R found)]`.
#[derive(Debug)]
struct ResultLine {
    name: String,
    micros_per_op: f64,
    ops_per_sec: u64,
    seconds: f64,
    operations: u64,
    /// What follows `operations;`, trimmed.
    extra: String,
}

fn parse_result(line: &str) -> Option<ResultLine> {
    let (head, extra) = line.split_once("operations;")?;
    let (name, rest) = head.split_once(" : ")?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    let [micros, "micros/op", ops, "ops/sec", secs, "seconds", operations] = words[..] else {
        return None;
    };
    Some(ResultLine {
        name: name.trim_end().to_string(),
        micros_per_op: micros.parse().ok()?,
        ops_per_sec: ops.parse().ok()?,
        seconds: secs.parse().ok()?,
        operations: operations.parse().ok()?,
        extra: extra.trim().to_string(),
    })
}

/// `(F of R found)` at the end of a result line.
fn found(extra: &str) -> Option<(u64, u64)> {
    let inner = extra.rsplit_once('(')?.1.strip_suffix(" found)")?;
    let (f, r) = inner.split_once(" of ")?;
    Some((f.parse().ok()?, r.parse().ok()?))
}

#[test]
fn every_benchmark_prints_a_db_bench_result_line() {
    let out = bench(&[
        "--num=2000",
        "--benchmarks=fillseq,readrandom,readseq,readreverse,seekrandom,overwrite,fillrandom",
        "-histogram=1",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Keys:       16 bytes each"), "{stdout}");
    assert!(stdout.contains("Values:     100 bytes each (50 bytes after compression)"));
    let results: Vec<ResultLine> = stdout.lines().filter_map(parse_result).collect();
    let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "fillseq",
            "readrandom",
            "readseq",
            "readreverse",
            "seekrandom",
            "overwrite",
            "fillrandom"
        ],
        "{stdout}"
    );
    for r in &results {
        assert_eq!(r.operations, 2000, "{r:?}");
        // Seconds print with three decimals: a fast run of 2000 reads shows 0.000.
        assert!(
            r.micros_per_op > 0.0 && r.seconds >= 0.0 && r.ops_per_sec > 0,
            "{r:?}"
        );
        // Every benchmark here moves data, so every line carries a rate.
        assert!(r.extra.contains(" MB/s"), "{r:?}");
    }
    // Name padded to 12 and micros/op right-aligned in 11, as db_bench.
    let line = stdout.lines().find(|l| l.starts_with("fillseq ")).unwrap();
    assert!(line.starts_with("fillseq      : "), "{line}");
    assert_eq!(line.find("micros/op"), Some(15 + 11 + 1), "{line}");

    let by_name = |n: &str| results.iter().find(|r| r.name == n).unwrap();
    assert_eq!(found(&by_name("readrandom").extra), Some((2000, 2000)));
    assert_eq!(found(&by_name("seekrandom").extra), Some((2000, 2000)));
    assert_eq!(found(&by_name("readseq").extra), None);
    // CPU, memory and space follow each result; percentiles with --histogram.
    assert_eq!(stdout.matches("cpu per op:").count(), 7);
    assert_eq!(stdout.matches("peak rss:").count(), 7);
    assert_eq!(stdout.matches("db size:").count(), 7);
    assert_eq!(stdout.matches("Percentiles: P50:").count(), 7);
}

#[test]
fn reads_of_an_empty_db_find_nothing() {
    let out = bench(&["--num=100", "--benchmarks=readrandom,readseq"]);
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let results: Vec<ResultLine> = stdout.lines().filter_map(parse_result).collect();
    assert_eq!(found(&results[0].extra), Some((0, 100)), "{stdout}");
    assert_eq!(results[1].operations, 0);
}

#[test]
fn existing_db_is_reused_and_fills_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().display());
    let out = bench(&[&db, "--num=500", "--benchmarks=fillseq"]);
    assert!(out.status.success());
    let out = bench(&[
        &db,
        "--num=500",
        "--use_existing_db=1",
        "--benchmarks=fillrandom,readrandom",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("fillrandom   : skipped (--use_existing_db is true)"));
    let r = stdout.lines().find_map(parse_result).unwrap();
    assert_eq!(found(&r.extra), Some((500, 500)), "{stdout}");
    // The directory named by --db is kept.
    assert!(dir.path().join("CURRENT").exists());
}

#[test]
fn flag_errors_exit_1_naming_the_flag() {
    let out = bench(&["--num=10", "--no_such_flag=1"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--no_such_flag"), "{stderr}");
    assert!(out.stdout.is_empty());

    let out = bench(&["-num=ten"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--num"));

    let out = bench(&["--help"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("--benchmarks"));

    let out = bench(&["--engine=leveldb"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--engine=leveldb"));
}

/// A peer engine left out of the build is an error that says how to build it.
#[cfg(not(feature = "rocksdb"))]
#[test]
fn an_engine_not_built_in_says_which_feature_to_build() {
    let out = bench(&["--num=10", "--engine=rocksdb"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--features rocksdb"), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing ran");
}

/// db_bench's utility benchmarks: flush and compact print a result line of one
/// operation; stats, levelstats and sstables print the properties.
#[test]
fn utility_benchmarks_flush_compact_and_report() {
    let out = bench(&[
        "--num=3000",
        "--write_buffer_size=65536",
        "--compression_type=none",
        "--benchmarks=fillrandom,flush,waitforcompaction,compact,stats,levelstats,sstables",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<ResultLine> = stdout.lines().filter_map(parse_result).collect();
    let names: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["fillrandom", "flush", "compact"], "{stdout}");
    assert_eq!(results[1].operations, 1);
    assert_eq!(results[2].operations, 1);
    assert!(stdout.contains("waitforcompaction("), "{stdout}");
    assert!(stdout.contains("): finished\n"), "{stdout}");
    // As db_bench prints it: a blank line, then the report's own.
    assert!(
        stdout.contains("\n\n\n** Compaction Stats [default] **\nLevel    Files   Size "),
        "{stdout}"
    );
    // After compact everything is in the last level: one row for L0's
    // flushes (no files left), one for L6.
    let l0 = stdout.lines().find(|l| l.starts_with("  L0 ")).unwrap();
    assert!(l0.starts_with("  L0      0/0 "), "{l0}");
    let sum = stdout.lines().find(|l| l.starts_with(" Sum ")).unwrap();
    let w_amp: f64 = sum.split_whitespace().nth(11).unwrap().parse().unwrap();
    assert!(
        w_amp > 1.0,
        "compaction bytes count beside flushed ones: {sum}"
    );
    assert!(stdout.contains("\nStalls(count): "), "{stdout}");
    assert!(stdout.contains("\nCumulative writes: 3000 writes, 3000 keys"));
    assert!(
        stdout.contains("\n\nLevel Files Size(MB)\n--------------------\n  0        0        0\n")
    );
    assert!(
        stdout.contains("\n\n--- level 0 ---\n--- level 1 ---\n"),
        "{stdout}"
    );
    assert!(stdout.contains("--- level 6 ---\n "), "{stdout}");
}

#[test]
fn the_mixed_range_and_micro_benchmarks_report_as_db_bench() {
    let names = "filluniquerandom,updaterandom,readrandomwriterandom,readmissing,\
                 multireadrandom,fwdrange,revrange,readwhilewriting,deleterandom,crc32c,xxh3";
    let out = bench(&[
        "--num=3000",
        &format!("--benchmarks={names}"),
        "--batch_size=4",
        "--readwritepercent=50",
        "--benchmark_write_rate_limit=100000",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let results: Vec<ResultLine> = stdout.lines().filter_map(parse_result).collect();
    let got: Vec<&str> = results.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(got.join(","), names.replace(' ', ""), "{stdout}");
    let line = |name: &str| results.iter().find(|r| r.name == name).unwrap();
    // Each key once: a full overwrite finds every key.
    assert!(line("updaterandom")
        .extra
        .ends_with("( updates:3000 found:3000)"));
    let mixed = &line("readrandomwriterandom").extra;
    let reads: u64 = mixed
        .split("reads:")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1000..2000).contains(&reads), "{mixed}");
    assert!(mixed.contains("total:3000"), "{mixed}");
    assert_eq!(found(&line("readmissing").extra), Some((0, 3000)));
    assert_eq!(found(&line("multireadrandom").extra), Some((3000, 3000)));
    assert_eq!(line("fwdrange").operations, 3000);
    assert!(line("crc32c").extra.ends_with("(4K per op)"));
}

#[test]
fn ycsb_workloads_run_their_mixes() {
    let out = bench(&[
        "--benchmarks=ycsb_load,ycsb_a,ycsb_d,ycsb_e",
        "--ycsb_record_count=2000",
        "--ycsb_operation_count=1000",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let results: Vec<ResultLine> = stdout.lines().filter_map(parse_result).collect();
    let line = |name: &str| results.iter().find(|r| r.name == name).unwrap();
    assert_eq!(line("ycsb_load").operations, 2000);
    let a = &line("ycsb_a").extra;
    assert!(
        a.contains("read:") && a.contains("update:") && !a.contains("scan:"),
        "{a}"
    );
    assert!(line("ycsb_d").extra.contains("insert:"));
    assert!(line("ycsb_e").extra.contains("scan:"));
    assert!(results.iter().skip(1).all(|r| r.operations == 1000));
}
