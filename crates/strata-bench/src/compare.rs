//! `--compare_with_rocksdb[=PATH]`: the same benchmarks through strata-bench
//! and RocksDB's db_bench, alternating engines `--repeat` times, each run a
//! fresh process on a fresh database, with every engine option passed
//! explicitly to both so no default decides a comparison. Prints one table of
//! medians: throughput and ratio, P99, CPU per operation, write amplification,
//! peak RSS and size on disk.
//!
//! A benchmark that reads runs after a `fillrandom` in the same process; its
//! CPU per operation subtracts a run of the fill alone (as both engines are
//! measured the same way, the figure compares like with like).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::flags::Flags;
use crate::intervals::{self, Series};
use crate::report::dir_size;

/// One engine's figures for one run of one benchmark.
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    ops_per_sec: f64,
    p99: f64,
    /// CPU per operation, microseconds.
    cpu_micros: f64,
    write_amp: Option<f64>,
    size_mb: f64,
}

/// The engine options, named as db_bench names them, with these flags'
/// values: both engines get the same explicit list.
fn engine_args(f: &Flags) -> Vec<String> {
    let c = &f.compaction;
    let mut args = vec![
        format!("--num={}", f.num),
        format!("--reads={}", f.reads),
        format!("--key_size={}", f.key_size),
        format!("--value_size={}", f.value_size),
        format!("--threads={}", f.threads),
        format!("--seed={}", f.seed),
        format!("--compression_ratio={}", f.compression_ratio),
        format!("--write_buffer_size={}", f.write_buffer_size),
        format!("--max_write_buffer_number={}", f.max_write_buffer_number),
        format!("--block_size={}", f.block_size),
        format!("--block_restart_interval={}", f.block_restart_interval),
        format!(
            "--bloom_bits={}",
            if f.bloom_bits > 0.0 {
                f.bloom_bits
            } else {
                -1.0
            }
        ),
        format!("--compression_type={}", f.compression_type.name()),
        format!("--checksum_type={}", f.checksum_type.code()),
        format!("--min_level_to_compress={}", f.min_level_to_compress),
        format!("--cache_size={}", f.cache_size),
        format!("--open_files={}", f.open_files),
        format!("--compaction_style={}", c.compaction_style as u32),
        format!("--num_levels={}", c.num_levels),
        format!(
            "--level0_file_num_compaction_trigger={}",
            c.level0_file_num_compaction_trigger
        ),
        format!(
            "--level0_slowdown_writes_trigger={}",
            c.level0_slowdown_writes_trigger
        ),
        format!(
            "--level0_stop_writes_trigger={}",
            c.level0_stop_writes_trigger
        ),
        format!("--max_bytes_for_level_base={}", c.max_bytes_for_level_base),
        format!(
            "--max_bytes_for_level_multiplier={}",
            c.max_bytes_for_level_multiplier
        ),
        format!(
            "--level_compaction_dynamic_level_bytes={}",
            c.level_compaction_dynamic_level_bytes
        ),
        format!("--target_file_size_base={}", c.target_file_size_base),
        format!("--max_background_jobs={}", c.max_background_jobs),
        format!("--subcompactions={}", c.max_subcompactions),
        format!("--sync={}", f.sync),
        format!("--disable_wal={}", f.disable_wal),
        format!("--manual_wal_flush={}", f.manual_wal_flush),
        format!("--batch_size={}", f.batch_size),
        format!("--multiread_batched={}", f.multiread_batched),
        format!("--seek_nexts={}", f.seek_nexts),
        format!("--prefix_size={}", f.prefix_size),
        format!("--keys_per_prefix={}", f.keys_per_prefix),
        format!(
            "--memtable_bloom_size_ratio={}",
            f.memtable_bloom_size_ratio
        ),
        format!("--whole_key_filtering={}", f.whole_key_filtering),
        format!(
            "--memtable_whole_key_filtering={}",
            f.memtable_whole_key_filtering
        ),
        format!("--total_order_seek={}", f.total_order_seek),
        format!("--prefix_same_as_start={}", f.prefix_same_as_start),
        format!("--seek_missing_prefix={}", f.seek_missing_prefix),
        format!("--readwritepercent={}", f.readwritepercent),
        format!(
            "--benchmark_write_rate_limit={}",
            f.benchmark_write_rate_limit
        ),
        format!(
            "--cache_index_and_filter_blocks={}",
            f.cache_index_and_filter_blocks
        ),
        format!(
            "--pin_top_level_index_and_filter={}",
            f.pin_top_level_index_and_filter
        ),
        format!("--partition_index={}", f.partition_index),
        format!(
            "--partition_index_and_filters={}",
            f.partition_index_and_filters
        ),
        format!("--metadata_block_size={}", f.metadata_block_size),
        format!(
            "--cache_high_pri_pool_ratio={}",
            f.cache_high_pri_pool_ratio
        ),
        format!("--cache_low_pri_pool_ratio={}", f.cache_low_pri_pool_ratio),
        format!("--verify_checksum={}", f.verify_checksum),
        format!("--use_direct_reads={}", f.use_direct_reads),
        format!(
            "--use_direct_io_for_flush_and_compaction={}",
            f.use_direct_io_for_flush_and_compaction
        ),
        format!("--mmap_read={}", f.mmap_read),
        "--histogram=1".into(),
        "--statistics=1".into(),
    ];
    args.extend(f.blob.db_bench_args());
    if f.clock_cache {
        args.push("--cache_type=hyper_clock_cache".into());
    }
    args
}

/// Runs `cmd` to the end; its stdout and stderr together.
fn run_child(mut cmd: Command) -> Result<String, String> {
    let shown = format!("{cmd:?}");
    let output = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("running {shown}: {e}"))?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        return Err(format!("{shown} failed ({}):\n{text}", output.status));
    }
    Ok(text)
}

/// CPU seconds of every child reaped so far.
fn children_cpu() -> f64 {
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: `ru` is writable memory of the size of `rusage`, which
    // getrusage fills completely when it returns 0.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, ru.as_mut_ptr()) };
    if rc != 0 {
        return 0.0;
    }
    // SAFETY: getrusage returned 0, so it initialized `ru`.
    let ru = unsafe { ru.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// The first number after `label` on the line that has it.
fn number_after(text: &str, line_start: &str, label: &str) -> Option<f64> {
    text.lines()
        .filter(|l| l.trim_start().starts_with(line_start))
        .find_map(|l| l.split(label).nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.trim_end_matches(',').parse().ok())
}

/// A ticker's count from `--statistics=1` output, either engine's prefix.
fn ticker(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find(|l| {
            let l = l.trim_start();
            (l.starts_with("rocksdb.") || l.starts_with("strata."))
                && l.split_once('.')
                    .map(|(_, rest)| rest)
                    .is_some_and(|r| r.starts_with(&format!("{name} COUNT")))
        })
        .and_then(|l| l.rsplit(':').next())
        .and_then(|n| n.trim().parse().ok())
}

/// Parses `bench`'s figures from an engine's output.
fn parse(text: &str, bench: &str) -> Result<Run, String> {
    let after = text
        .lines()
        .skip_while(|l| !l.starts_with(&format!("{bench} ")) || !l.contains("micros/op"))
        .collect::<Vec<_>>()
        .join("\n");
    let line = after
        .lines()
        .next()
        .ok_or_else(|| format!("no result line for {bench} in:\n{text}"))?;
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = |word: &str| {
        words
            .iter()
            .position(|w| *w == word)
            .and_then(|i| words.get(i.checked_sub(1)?))
            .and_then(|n| n.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let bytes = ticker(text, "bytes.written").unwrap_or(0.0);
    let tables = ticker(text, "flush.write.bytes").unwrap_or(0.0)
        + ticker(text, "compact.write.bytes").unwrap_or(0.0);
    Ok(Run {
        ops_per_sec: at("ops/sec"),
        p99: number_after(&after, "Percentiles:", "P99:").unwrap_or(f64::NAN),
        write_amp: (bytes > 0.0).then(|| tables / bytes),
        ..Run::default()
    })
}

/// Whether `bench` writes (its process's write amplification is its own,
/// the setup fill's included for overwrite-like ones).
fn writes(bench: &str) -> bool {
    bench.starts_with("fill") || matches!(bench, "overwrite" | "updaterandom" | "deleterandom")
}

/// Benchmarks that need a filled database first.
fn setup_for(bench: &str) -> Vec<&'static str> {
    match bench {
        "fillseq" | "fillrandom" | "filluniquerandom" => Vec::new(),
        _ => vec!["fillrandom"],
    }
}

/// One run of `benchmarks` by `program` on a fresh database in `dir`: its
/// output and CPU seconds. With `samples`, throughput is sampled every
/// second into that CSV file.
fn run_engine(
    program: &Path,
    flags: &Flags,
    benchmarks: &[&str],
    dir: &Path,
    samples: Option<&Path>,
) -> Result<(String, f64), String> {
    let _ = std::fs::remove_dir_all(dir);
    let mut cmd = Command::new(program);
    cmd.arg(format!("--benchmarks={}", benchmarks.join(",")))
        .arg(format!("--db={}", dir.display()))
        .args(engine_args(flags));
    if let Some(csv) = samples {
        let _ = std::fs::remove_file(csv);
        cmd.arg("--report_interval_seconds=1")
            .arg(format!("--report_file={}", csv.display()));
    }
    let before = children_cpu();
    let text = run_child(cmd)?;
    Ok((text, children_cpu() - before))
}

/// Runs the comparison and prints its table.
pub fn run(flags: &Flags, db_bench: &str) -> Result<(), String> {
    let db_bench = find_program(db_bench)?;
    let me = std::env::current_exe().map_err(|e| format!("finding strata-bench: {e}"))?;
    let temp = tempfile::Builder::new()
        .prefix("strata-compare-")
        .tempdir()
        .map_err(|e| format!("creating a temporary directory: {e}"))?;
    let mut version = String::new();
    let mut rows = Vec::new();
    let mut series = Vec::new();
    for bench in &flags.benchmarks {
        let setup = setup_for(bench);
        let mut runs: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
        for i in 0..flags.repeat.max(1) {
            for (e, program) in [&me, &db_bench].into_iter().enumerate() {
                let dir = temp.path().join(if e == 0 { "strata" } else { "rocksdb" });
                let mut list = setup.clone();
                list.push(bench);
                let engine = ["strata", "rocksdb"][e];
                // The first run of each engine is sampled for --plot.
                let csv = temp.path().join(format!("{engine}.csv"));
                let samples = (flags.plot.is_some() && i == 0).then_some(csv.as_path());
                let (text, cpu) = run_engine(program, flags, &list, &dir, samples)?;
                if samples.is_some() {
                    series.push(Series {
                        name: format!("{bench} {engine}"),
                        points: read_samples(&csv, bench),
                    });
                }
                let mut r = parse(&text, bench)?;
                // The statistics count the whole process: only a benchmark
                // that writes owns its write amplification.
                if !writes(bench) {
                    r.write_amp = None;
                }
                r.size_mb = dir_size(&dir).0 as f64 / (1 << 20) as f64;
                let base_cpu = if setup.is_empty() {
                    0.0
                } else {
                    run_engine(program, flags, &setup, &dir, None)?.1
                };
                let ops = flags.num.max(flags.reads).max(1) as f64 * flags.threads as f64;
                r.cpu_micros = (cpu - base_cpu).max(0.0) * 1e6 / ops;
                if e == 1 && version.is_empty() {
                    version = text
                        .lines()
                        .find(|l| l.starts_with("RocksDB:"))
                        .unwrap_or("RocksDB: version unknown")
                        .to_string();
                    if text.contains("Assertions are enabled") {
                        version.push_str(" (built with assertions on)");
                    }
                }
                println!(
                    "# {bench} run {} {}: {:.0} ops/sec, P99 {:.2} us, CPU {:.3} us/op",
                    i + 1,
                    engine,
                    r.ops_per_sec,
                    r.p99,
                    r.cpu_micros
                );
                runs[e].push(r);
            }
        }
        rows.push((bench.clone(), runs.map(|r| median_run(&r))));
    }
    if let Some(path) = &flags.plot {
        std::fs::write(path, intervals::svg(&series))
            .map_err(|e| format!("--plot {}: {e}", path.display()))?;
    }
    println!("\nrocksdb: {} {version}", db_bench.display());
    println!(
        "| benchmark | strata ops/s | rocksdb ops/s | ratio | P99 us s/r | CPU us/op s/r | W-Amp s/r | size MB s/r |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (bench, [s, r]) in rows {
        let amp = |x: Option<f64>| x.map_or("-".to_string(), |a| format!("{a:.2}"));
        println!(
            "| {bench} | {:.0} | {:.0} | {:.2} | {:.2} / {:.2} | {:.3} / {:.3} | {} / {} | {:.1} / {:.1} |",
            s.ops_per_sec,
            r.ops_per_sec,
            s.ops_per_sec / r.ops_per_sec.max(1.0),
            s.p99,
            r.p99,
            s.cpu_micros,
            r.cpu_micros,
            amp(s.write_amp),
            amp(r.write_amp),
            s.size_mb,
            r.size_mb
        );
    }
    Ok(())
}

/// `bench`'s samples from a `--report_file` CSV: strata-bench's rows name
/// their benchmark; db_bench's (`secs_elapsed,interval_qps`) are all the
/// last benchmark's, as it rewrites the file for each benchmark. A missing
/// file (a run shorter than one interval) has none.
fn read_samples(csv: &Path, bench: &str) -> Vec<(f64, f64)> {
    let text = std::fs::read_to_string(csv).unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            let (secs, qps) = match fields[..] {
                [name, secs, qps] if name == bench => (secs, qps),
                [secs, qps] => (secs, qps),
                _ => return None,
            };
            Some((secs.trim().parse().ok()?, qps.trim().parse().ok()?))
        })
        .collect()
}

/// The median of each figure over `runs`.
fn median_run(runs: &[Run]) -> Run {
    let med = |f: &dyn Fn(&Run) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).filter(|x| !x.is_nan()).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    Run {
        ops_per_sec: med(&|r| r.ops_per_sec),
        p99: med(&|r| r.p99),
        cpu_micros: med(&|r| r.cpu_micros),
        write_amp: runs
            .iter()
            .any(|r| r.write_amp.is_some())
            .then(|| med(&|r| r.write_amp.unwrap_or(f64::NAN))),
        size_mb: med(&|r| r.size_mb),
    }
}

/// `name` as given if it has a slash, else found on PATH.
fn find_program(name: &str) -> Result<PathBuf, String> {
    let found = if name.contains('/') {
        Some(PathBuf::from(name)).filter(|p| p.is_file())
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        })
    };
    found.ok_or_else(|| {
        format!(
            "--compare_with_rocksdb: {name} not found; install RocksDB's db_bench with \
             `apt-get install rocksdb-tools` (or ./scripts/install-rocksdb-tools.sh), or pass its path"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn db_bench_output_parses_into_a_run() {
        let text = "\
RocksDB:    version 7.8.3
fillrandom   :       5.257 micros/op 190235 ops/sec 5.257 seconds 1000000 operations;   21.0 MB/s
Microseconds per write:
Count: 1000000 Average: 5.2570  StdDev: 9.01
Percentiles: P50: 4.11 P75: 5.02 P99: 12.50 P99.9: 60.10 P99.99: 900.00
rocksdb.bytes.written COUNT : 1000
rocksdb.flush.write.bytes COUNT : 1500
rocksdb.compact.write.bytes COUNT : 500
";
        let r = parse(text, "fillrandom").unwrap();
        assert_eq!(r.ops_per_sec, 190_235.0);
        assert_eq!(r.p99, 12.5);
        assert_eq!(r.write_amp, Some(2.0));
        assert!(parse(text, "readrandom").is_err());
        let args = engine_args(&Flags::default());
        assert!(args.contains(&"--bloom_bits=-1".to_string()), "{args:?}");
        assert!(args.iter().any(|a| a == "--compression_type=snappy"));
        assert!(writes("fillseq") && !writes("readrandom"));
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("r.csv");
        std::fs::write(
            &csv,
            "benchmark,secs_elapsed,interval_qps\nfillrandom,1.0,900\nreadrandom,1.0,500\n",
        )
        .unwrap();
        assert_eq!(read_samples(&csv, "readrandom"), [(1.0, 500.0)]);
        std::fs::write(&csv, "secs_elapsed,interval_qps\n1,700\n2,650\n").unwrap();
        assert_eq!(
            read_samples(&csv, "readrandom"),
            [(1.0, 700.0), (2.0, 650.0)]
        );
        assert!(read_samples(&dir.path().join("none.csv"), "x").is_empty());
        assert!(find_program("/definitely/not/db_bench")
            .unwrap_err()
            .contains("apt-get install rocksdb-tools"));
    }
}
