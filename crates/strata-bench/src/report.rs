//! What a run prints: db_bench's header and result lines, then the figures
//! db_bench leaves out but design §7 asks for (CPU per op, peak RSS, space),
//! and latency percentiles.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use strata::CompressionType;

use crate::flags::Flags;

const MB: f64 = 1048576.0;

/// Counts of one benchmark thread, merged across threads for the result line.
#[derive(Debug)]
pub struct Stats {
    pub start: Instant,
    pub finish: Instant,
    /// Sum of the threads' own elapsed times: db_bench divides this by the
    /// operations for micros/op, so with N threads it is per-thread latency.
    pub thread_seconds: f64,
    pub done: u64,
    /// Key plus value bytes written, or read and found.
    pub bytes: u64,
    /// Point lookups and seeks: how many were tried and how many found a key.
    pub reads: u64,
    pub found: u64,
    /// Puts of the mixed benchmarks (readrandomwriterandom, updaterandom).
    pub writes: u64,
    /// YCSB's operations by kind (read, update, insert, scan, rmw).
    pub kinds: [u64; 5],
    /// Advanced every `PROGRESS_STEP` operations.
    pub progress: Option<Progress>,
    /// All threads' operations so far, advanced every `COUNT_STEP`, for the
    /// interval samples.
    pub shared_ops: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Per-operation latency in nanoseconds, with `--histogram=1`.
    pub hist: Option<Histogram<u64>>,
    /// The thread's perf context, with `--perf_level` above 1; a merge keeps
    /// the first thread's, as db_bench prints.
    pub perf: Option<String>,
}

impl Stats {
    pub fn new(histogram: bool) -> Result<Stats, String> {
        let now = Instant::now();
        let hist = if histogram {
            // Three significant digits, growing as needed: a stall of seconds
            // must not be clipped.
            Some(Histogram::new(3).map_err(|e| format!("histogram: {e}"))?)
        } else {
            None
        };
        Ok(Stats {
            start: now,
            finish: now,
            thread_seconds: 0.0,
            done: 0,
            bytes: 0,
            reads: 0,
            found: 0,
            writes: 0,
            kinds: [0; 5],
            progress: None,
            shared_ops: None,
            hist,
            perf: None,
        })
    }

    /// Notes one finished operation that began at `op_start` (only read when
    /// the histogram is on, so callers pass `None` otherwise to skip the clock).
    #[inline]
    pub fn finished_op(&mut self, op_start: Option<Instant>) -> Result<(), String> {
        self.done += 1;
        if self.done % COUNT_STEP == 0 {
            if let Some(ops) = &self.shared_ops {
                ops.fetch_add(COUNT_STEP, std::sync::atomic::Ordering::Relaxed);
            }
            if self.done % PROGRESS_STEP == 0 {
                if let Some(progress) = &self.progress {
                    progress.inc(PROGRESS_STEP);
                }
            }
        }
        if let (Some(hist), Some(t)) = (self.hist.as_mut(), op_start) {
            let nanos = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
            hist.record(nanos).map_err(|e| format!("histogram: {e}"))?;
        }
        Ok(())
    }

    /// Counts one point read of a `key_len`-byte key, and when it found a
    /// value of `value_len` bytes, the hit and its bytes.
    pub fn read(&mut self, key_len: usize, value_len: Option<usize>) {
        self.reads += 1;
        if let Some(len) = value_len {
            self.found += 1;
            self.bytes += (key_len + len) as u64;
        }
    }

    /// Adds another thread's counts (db_bench's `Stats::Merge`).
    pub fn merge(&mut self, other: Stats) -> Result<(), String> {
        self.start = self.start.min(other.start);
        self.finish = self.finish.max(other.finish);
        self.thread_seconds += other.thread_seconds;
        self.done += other.done;
        self.bytes += other.bytes;
        self.reads += other.reads;
        self.found += other.found;
        self.writes += other.writes;
        for (mine, theirs) in self.kinds.iter_mut().zip(other.kinds) {
            *mine += theirs;
        }
        match (self.hist.as_mut(), other.hist) {
            (Some(mine), Some(theirs)) => {
                mine.add(&theirs).map_err(|e| format!("histogram: {e}"))?;
            }
            (None, theirs) => self.hist = theirs,
            (Some(_), None) => {}
        }
        if self.perf.is_none() {
            self.perf = other.perf;
        }
        Ok(())
    }

    fn elapsed(&self) -> f64 {
        self.finish.duration_since(self.start).as_secs_f64()
    }
}

/// db_bench's result line, field for field:
/// `name : X micros/op N ops/sec S seconds N operations; R MB/s (F of R found)`.
/// db_bench bumps zero operations to one to avoid dividing by zero; here the
/// line says 0 operations and 0 ops/sec instead.
/// What a result line says after its rate, as db_bench words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Suffix {
    None,
    /// `(found of reads found)`.
    Found,
    /// readrandomwriterandom's `( reads:R writes:W total:T found:F)`.
    ReadsWrites,
    /// updaterandom's `( updates:U found:F)`.
    Updates,
    /// A fixed label, such as `(4K per op)`.
    Label(String),
    /// YCSB's operations by kind and the reads that found their record.
    Kinds,
}

/// Names of [`Stats::kinds`], in order.
pub const KIND_NAMES: [&str; 5] = ["read", "update", "insert", "scan", "rmw"];

/// Operations between two updates of the progress bar: one shared atomic
/// add per step keeps it off the measured path.
const PROGRESS_STEP: u64 = 4096;
/// Operations between two updates of the shared count the interval samples
/// read (a multiple of nothing else: `PROGRESS_STEP` must be a multiple of it).
const COUNT_STEP: u64 = 256;

/// How a running benchmark shows its progress on stderr.
#[derive(Debug, Clone)]
pub enum Progress {
    /// On a terminal: a bar with the total, percentage, rate and time left
    /// (a spinner with the count and rate when the total is unknown).
    Bar(indicatif::ProgressBar),
    /// Off a terminal (logs, pipes): db_bench's `... finished N ops` lines,
    /// at db_bench's growing steps.
    Lines(Arc<ProgressLines>),
}

/// The state of [`Progress::Lines`]: operations so far, and the count at
/// which the next line is due.
#[derive(Debug, Default)]
pub struct ProgressLines {
    done: AtomicU64,
    next: AtomicU64,
}

/// db_bench's next report after `done` operations: every 100 up to 1,000,
/// then 500, 1,000, 5,000, 10,000, 50,000 and 100,000 apart.
fn next_report(done: u64) -> u64 {
    let step = match done {
        0..1_000 => 100,
        1_000..5_000 => 500,
        5_000..10_000 => 1_000,
        10_000..50_000 => 5_000,
        50_000..100_000 => 10_000,
        100_000..500_000 => 50_000,
        _ => 100_000,
    };
    (done / step + 1) * step
}

impl Progress {
    /// The progress of benchmark `name`, of `total` operations when known.
    pub fn new(name: &str, total: Option<u64>) -> Progress {
        use std::io::IsTerminal;
        if !std::io::stderr().is_terminal() {
            let lines = ProgressLines::default();
            lines.next.store(next_report(0), Ordering::Relaxed);
            return Progress::Lines(Arc::new(lines));
        }
        let (bar, template) = match total {
            Some(total) => (
                indicatif::ProgressBar::new(total),
                "{msg} [{bar:30}] {human_pos}/{human_len} ({percent}%) {per_sec}, {eta} left",
            ),
            None => (
                indicatif::ProgressBar::new_spinner(),
                "{spinner} {msg} {human_pos} ops ({per_sec}) {elapsed}",
            ),
        };
        let style = indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_message(name.to_string());
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Progress::Bar(bar)
    }

    /// Counts `n` more operations.
    pub fn inc(&self, n: u64) {
        match self {
            Progress::Bar(bar) => bar.inc(n),
            Progress::Lines(lines) => {
                let done = lines.done.fetch_add(n, Ordering::Relaxed) + n;
                let due = lines.next.load(Ordering::Relaxed);
                // One thread prints each line: the one that moves `next` on.
                if done >= due
                    && lines
                        .next
                        .compare_exchange(
                            due,
                            next_report(done),
                            Ordering::Relaxed,
                            Ordering::Relaxed,
                        )
                        .is_ok()
                {
                    eprintln!("... finished {done} ops");
                }
            }
        }
    }

    /// Clears the bar once the benchmark is done (lines stay).
    pub fn finish(&self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// A benchmark's headline figures, as its result line prints them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Per thread: summed thread time over operations (db_bench's figure).
    pub micros_per_op: f64,
    pub ops_per_sec: u64,
    pub seconds: f64,
    /// Over wall time; `None` when nothing was moved.
    pub mb_per_sec: Option<f64>,
}

impl Stats {
    pub fn summary(&self) -> Summary {
        let elapsed = self.elapsed();
        Summary {
            micros_per_op: if self.done > 0 {
                self.thread_seconds * 1e6 / self.done as f64
            } else {
                0.0
            },
            ops_per_sec: if elapsed > 0.0 {
                (self.done as f64 / elapsed) as u64
            } else {
                0
            },
            seconds: elapsed,
            mb_per_sec: (self.bytes > 0 && elapsed > 0.0).then(|| self.bytes as f64 / MB / elapsed),
        }
    }
}

pub fn result_line(name: &str, stats: &Stats, suffix: &Suffix) -> String {
    let Summary {
        micros_per_op,
        ops_per_sec,
        seconds: elapsed,
        mb_per_sec,
    } = stats.summary();
    let mut extra = String::new();
    if let Some(rate) = mb_per_sec {
        // Rate over wall time, not summed thread time (as db_bench).
        let _ = write!(extra, "{rate:6.1} MB/s");
    }
    let tail = match suffix {
        Suffix::None => String::new(),
        Suffix::Found => format!("({} of {} found)", stats.found, stats.reads),
        Suffix::ReadsWrites => format!(
            "( reads:{} writes:{} total:{} found:{})",
            stats.reads,
            stats.writes,
            stats.reads + stats.writes,
            stats.found
        ),
        Suffix::Updates => format!("( updates:{} found:{})", stats.writes, stats.found),
        Suffix::Label(label) => label.clone(),
        Suffix::Kinds => {
            let kinds: Vec<String> = KIND_NAMES
                .iter()
                .zip(stats.kinds)
                .filter(|(_, n)| *n > 0)
                .map(|(k, n)| format!("{k}:{n}"))
                .collect();
            format!("( {} found:{})", kinds.join(" "), stats.found)
        }
    };
    if !tail.is_empty() {
        if !extra.is_empty() {
            extra.push(' ');
        }
        extra.push_str(&tail);
    }
    let sep = if extra.is_empty() { "" } else { " " };
    format!(
        "{name:<12} : {micros_per_op:11.3} micros/op {ops_per_sec} ops/sec {elapsed:.3} seconds {} operations;{sep}{extra}",
        stats.done
    )
}

/// db_bench's latency block (without its bucket table): count, mean, spread and
/// the percentiles design §7 quotes, in microseconds.
pub fn histogram_lines(hist: &Histogram<u64>) -> String {
    let us = |nanos: f64| nanos / 1000.0;
    let q = |quantile: f64| us(hist.value_at_quantile(quantile) as f64);
    format!(
        "Microseconds per op:\n\
         Count: {} Average: {:.4}  StdDev: {:.2}\n\
         Min: {:.3}  Median: {:.4}  Max: {:.3}\n\
         Percentiles: P50: {:.2} P75: {:.2} P99: {:.2} P99.9: {:.2} P99.99: {:.2}\n\
         ------------------------------------------------------",
        hist.len(),
        us(hist.mean()),
        us(hist.stdev()),
        us(hist.min() as f64),
        q(0.5),
        us(hist.max() as f64),
        q(0.5),
        q(0.75),
        q(0.99),
        q(0.999),
        q(0.9999),
    )
}

/// CPU time of the whole process (all threads, the engine's background flush
/// thread included), from `getrusage(RUSAGE_SELF)`.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    pub user: Duration,
    pub system: Duration,
    /// Peak resident set size in KiB (Linux reports `ru_maxrss` in KiB).
    pub max_rss_kib: u64,
}

impl Usage {
    pub fn now() -> Result<Usage, String> {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::uninit();
        // SAFETY: `ru` points to writable memory of the size of `rusage`, which
        // getrusage fills completely when it returns 0.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
        if rc != 0 {
            return Err(format!("getrusage: {}", std::io::Error::last_os_error()));
        }
        // SAFETY: getrusage returned 0, so it initialized the whole struct.
        let ru = unsafe { ru.assume_init() };
        let tv = |t: libc::timeval| {
            Duration::from_secs(u64::try_from(t.tv_sec).unwrap_or(0))
                + Duration::from_micros(u64::try_from(t.tv_usec).unwrap_or(0))
        };
        Ok(Usage {
            user: tv(ru.ru_utime),
            system: tv(ru.ru_stime),
            max_rss_kib: u64::try_from(ru.ru_maxrss).unwrap_or(0),
        })
    }
}

/// The lines printed under each result line: CPU per operation over the
/// benchmark, peak RSS of the process so far, and the DB's size on disk.
/// What a benchmark cost: CPU per operation, peak memory, size on disk.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resources {
    pub user_micros_per_op: f64,
    pub system_micros_per_op: f64,
    pub peak_rss_mb: f64,
    pub db_bytes: u64,
    pub db_files: u64,
}

impl Resources {
    pub fn measure(before: &Usage, after: &Usage, done: u64, db: &Path) -> Resources {
        let per_op = |a: Duration, b: Duration| {
            let secs = a.saturating_sub(b).as_secs_f64();
            if done > 0 {
                secs * 1e6 / done as f64
            } else {
                0.0
            }
        };
        let (db_bytes, db_files) = dir_size(db);
        Resources {
            user_micros_per_op: per_op(after.user, before.user),
            system_micros_per_op: per_op(after.system, before.system),
            peak_rss_mb: after.max_rss_kib as f64 / 1024.0,
            db_bytes,
            db_files,
        }
    }

    pub fn cpu_micros_per_op(&self) -> f64 {
        self.user_micros_per_op + self.system_micros_per_op
    }

    pub fn lines(&self) -> String {
        format!(
            "  cpu per op:  {:.3} micros (user {:.3} + system {:.3}, all threads)\n  \
             peak rss:    {:.1} MB\n  \
             db size:     {:.1} MB in {} files",
            self.cpu_micros_per_op(),
            self.user_micros_per_op,
            self.system_micros_per_op,
            self.peak_rss_mb,
            self.db_bytes as f64 / MB,
            self.db_files,
        )
    }
}

/// The engine's write counters, to report a benchmark's write amplification.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteCounters {
    /// Batch bytes the benchmark wrote.
    pub ingest: u64,
    pub wal: u64,
    /// Table bytes written by flushes and compactions.
    pub tables: u64,
}

impl WriteCounters {
    pub fn since(&self, earlier: &WriteCounters) -> WriteCounters {
        WriteCounters {
            ingest: self.ingest.saturating_sub(earlier.ingest),
            wal: self.wal.saturating_sub(earlier.wal),
            tables: self.tables.saturating_sub(earlier.tables),
        }
    }

    /// Write amplification as RocksDB's compaction stats count it: table bytes
    /// written per byte ingested (the WAL shown beside it, not counted).
    pub fn write_amp(&self) -> f64 {
        self.tables as f64 / self.ingest.max(1) as f64
    }

    pub fn line(&self) -> String {
        format!(
            "  write amp:   {:.2} ({:.1} MB of tables for {:.1} MB ingested; WAL {:.1} MB)",
            self.write_amp(),
            self.tables as f64 / MB,
            self.ingest as f64 / MB,
            self.wal as f64 / MB
        )
    }
}

/// Total size and count of the files under `dir`, subdirectories included
/// (Strata and RocksDB keep their files in `dir`; fjall nests them). Files
/// that vanish while being listed, as a flush deletes a WAL, are skipped
/// rather than failing the run.
pub fn dir_size(dir: &Path) -> (u64, u64) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    let mut bytes = 0;
    let mut files = 0;
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_file() {
            bytes += meta.len();
            files += 1;
        } else if meta.is_dir() {
            let (b, f) = dir_size(&entry.path());
            bytes += b;
            files += f;
        }
    }
    (bytes, files)
}

/// RocksDB's names for the codecs, so the header reads like db_bench's.
fn compression_label(c: CompressionType) -> &'static str {
    match c {
        CompressionType::None => "NoCompression",
        CompressionType::Snappy => "Snappy",
        CompressionType::Lz4 => "LZ4",
        CompressionType::Zstd { .. } => "ZSTD",
    }
}

/// The header db_bench prints before the first benchmark, with the fields that
/// apply to Strata and the engine settings a comparison must match.
pub fn header(flags: &Flags, db: &Path, engine: &str) -> String {
    let mut out = String::new();
    if cfg!(debug_assertions) {
        // db_bench warns likewise: numbers from a debug build mean little.
        out.push_str("WARNING: Optimization is disabled: benchmarks unnecessarily slow\n");
    }
    let compressed = (flags.value_size as f64 * flags.compression_ratio + 0.5) as u64;
    let num = flags.num as f64;
    let raw = (flags.key_size + flags.value_size) as f64 * num / MB;
    let file =
        (flags.key_size as f64 + flags.value_size as f64 * flags.compression_ratio) * num / MB;
    let _ = writeln!(out, "Engine:     {engine}");
    let _ = writeln!(out, "Keys:       {} bytes each", flags.key_size);
    let _ = writeln!(
        out,
        "Values:     {} bytes each ({compressed} bytes after compression)",
        flags.value_size
    );
    let _ = writeln!(out, "Entries:    {}", flags.num);
    let _ = writeln!(out, "RawSize:    {raw:.1} MB (estimated)");
    let _ = writeln!(out, "FileSize:   {file:.1} MB (estimated)");
    let _ = writeln!(
        out,
        "Compression: {}",
        compression_label(flags.compression_type)
    );
    let _ = writeln!(
        out,
        "Checksum:   {} ({})",
        flags.checksum_type.name(),
        flags.checksum_type.code()
    );
    let _ = writeln!(out, "Bloom bits: {}", flags.bloom_bits);
    let _ = writeln!(
        out,
        "Memtables:  {} x {:.1} MB",
        flags.max_write_buffer_number,
        flags.write_buffer_size as f64 / MB
    );
    let _ = writeln!(
        out,
        "Threads:    {}  Seed: {}  WAL: {}  Sync: {}",
        flags.threads,
        flags.seed,
        match (flags.disable_wal, flags.manual_wal_flush) {
            (true, _) => "off",
            (false, false) => "on",
            (false, true) => "on, flushed manually",
        },
        u8::from(flags.sync)
    );
    let _ = writeln!(out, "DB:         {}", db.display());
    out.push_str("------------------------------------------------");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// db_bench's report points: 100 apart up to 1,000, then ever wider.
    #[test]
    fn progress_lines_follow_db_benchs_steps() {
        let mut at = 0;
        let mut points = Vec::new();
        while at < 700_000 {
            at = next_report(at);
            points.push(at);
        }
        // db_bench's landmarks: 100 apart to 1,000, 500 apart to 5,000,
        // then 1,000, 5,000, 10,000, 50,000 and 100,000 apart.
        assert_eq!(
            &points[..11],
            &[100, 200, 300, 400, 500, 600, 700, 800, 900, 1_000, 1_500]
        );
        for due in [
            5_000, 6_000, 10_000, 15_000, 50_000, 60_000, 100_000, 150_000, 600_000,
        ] {
            assert!(points.contains(&due), "{due} missing from {points:?}");
        }
        for skipped in [1_100, 5_500, 10_500, 55_000, 110_000, 550_000] {
            assert!(!points.contains(&skipped), "{skipped} in {points:?}");
        }
        assert_eq!(points.len(), 10 + 8 + 5 + 8 + 5 + 8 + 2, "{points:?}");
        // Counted in steps that jump several report points, the next one
        // due is the first past the count.
        let lines = ProgressLines::default();
        lines.next.store(next_report(0), Ordering::Relaxed);
        let progress = Progress::Lines(Arc::new(lines));
        progress.inc(4_096);
        progress.inc(4_096);
        let Progress::Lines(lines) = &progress else {
            unreachable!()
        };
        assert_eq!(lines.next.load(Ordering::Relaxed), 9_000);
    }

    fn stats(done: u64, secs: f64, bytes: u64) -> Stats {
        let mut s = Stats::new(false).unwrap();
        s.finish = s.start + Duration::from_secs_f64(secs);
        s.thread_seconds = secs;
        s.done = done;
        s.bytes = bytes;
        s
    }

    #[test]
    fn result_line_has_db_bench_fields() {
        let s = stats(2_000_000, 8.786, 2_000_000 * 116);
        let line = result_line("fillrandom", &s, &Suffix::None);
        assert_eq!(
            line,
            "fillrandom   :       4.393 micros/op 227634 ops/sec 8.786 seconds 2000000 operations;   25.2 MB/s"
        );
    }

    #[test]
    fn found_counts_follow_the_rate() {
        let mut s = stats(500_000, 2.0, 1000);
        s.reads = 500_000;
        s.found = 432_069;
        let line = result_line("readrandom", &s, &Suffix::Found);
        assert!(line.ends_with("MB/s (432069 of 500000 found)"), "{line}");
        let mut none = stats(10, 1.0, 0);
        none.reads = 10;
        let line = result_line("readrandom", &none, &Suffix::Found);
        assert!(line.ends_with("operations; (0 of 10 found)"), "{line}");
        let empty = stats(0, 0.0, 0);
        assert!(result_line("readseq", &empty, &Suffix::None).ends_with("0 operations;"));
    }

    #[test]
    fn merged_threads_sum_work_and_span_time() {
        let mut a = Stats::new(true).unwrap();
        let mut b = Stats::new(true).unwrap();
        a.finished_op(Some(Instant::now())).unwrap();
        b.finished_op(Some(Instant::now())).unwrap();
        b.finish = a.start + Duration::from_secs(3);
        a.merge(b).unwrap();
        assert_eq!(a.done, 2);
        assert_eq!(a.hist.as_ref().map(|h| h.len()), Some(2));
        assert!(a.elapsed() >= 3.0);
        assert!(histogram_lines(a.hist.as_ref().unwrap()).contains("P99.99:"));
    }

    #[test]
    fn usage_is_read() {
        let u = Usage::now().unwrap();
        assert!(u.max_rss_kib > 0);
    }
}
