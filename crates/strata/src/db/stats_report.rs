//! `strata.stats` (also `rocksdb.stats`) and its two halves, `strata.cfstats`
//! (the compaction stats) and `strata.dbstats` (the DB stats), in RocksDB's
//! layout and wording, so tools that parse RocksDB's report parse ours.
//!
//! Per-level rows count work *into* the level: flushes into L0, each
//! compaction into its output level. W-Amp is bytes written into a level over
//! bytes read from the level above (on L0, over bytes flushed); on the Sum row
//! it is all bytes written by flushes and compactions over bytes flushed. The
//! `Int` row and the `Interval` lines cover the time since the previous report
//! of the same half, as RocksDB's do.
//!
//! Counters are gathered under the locks; rendering is a pure function of
//! them, so the arithmetic is tested on known numbers.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use super::stats::DbStats;
use super::DbInner;
use crate::cf::stats::{LevelStats, StallCounter, STALL_COUNTERS};
use crate::cf::CfShared;
use crate::compaction::leveled::{level_targets, scores};
use crate::compaction::universal::sorted_runs;
use crate::options::{CompactionOptions, CompactionStyle};
use crate::version::{Version, NUM_LEVELS};

const GIB: f64 = (1u64 << 30) as f64;
const MIB: f64 = (1u64 << 20) as f64;

/// What the previous report of each half saw (the compaction half per
/// column family).
#[derive(Debug, Default)]
pub(crate) struct ReportMarks {
    compaction: HashMap<u32, CompactionMark>,
    db: Option<DbMark>,
}

/// The compaction half's counters at one moment.
#[derive(Debug, Clone, Copy)]
struct CompactionMark {
    at: Instant,
    sum: LevelStats,
    flushed: u64,
    /// Stall conditions counted, `with_compaction` subsets excluded.
    stalls: u64,
}

impl CompactionMark {
    fn zero(at: Instant) -> CompactionMark {
        CompactionMark {
            at,
            sum: LevelStats::default(),
            flushed: 0,
            stalls: 0,
        }
    }
}

/// The DB half's counters at one moment.
#[derive(Debug, Clone, Copy)]
struct DbMark {
    at: Instant,
    writes: u64,
    keys: u64,
    groups: u64,
    ingest: u64,
    wal_writes: u64,
    wal_syncs: u64,
    wal_bytes: u64,
    stall_micros: u64,
}

impl DbMark {
    fn now(stats: &DbStats) -> DbMark {
        let get = DbStats::get;
        DbMark {
            at: Instant::now(),
            writes: get(&stats.writes),
            keys: get(&stats.keys_written),
            groups: get(&stats.write_groups),
            ingest: get(&stats.bytes_written),
            wal_writes: get(&stats.wal_writes),
            wal_syncs: get(&stats.wal_syncs),
            wal_bytes: get(&stats.wal_bytes),
            stall_micros: get(&stats.stall_micros),
        }
    }

    fn zero(at: Instant) -> DbMark {
        DbMark {
            at,
            writes: 0,
            keys: 0,
            groups: 0,
            ingest: 0,
            wal_writes: 0,
            wal_syncs: 0,
            wal_bytes: 0,
            stall_micros: 0,
        }
    }
}

/// `19.48 MB`, `0.00 KB`: RocksDB's `BytesToHumanString` for sizes.
fn human_bytes(bytes: u64) -> String {
    let mut size = bytes as f64 / 1024.0;
    let mut unit = 0;
    while unit < 3 && size >= 1024.0 {
        size /= 1024.0;
        unit += 1;
    }
    format!("{size:.2} {}", ["KB", "MB", "GB", "TB"][unit])
}

/// `4494K`, `10M`, `123`: RocksDB's `NumberToHumanString`.
fn human_count(n: u64) -> String {
    if n < 10_000 {
        n.to_string()
    } else if n < 10_000_000 {
        format!("{}K", n / 1000)
    } else if n < 10_000_000_000 {
        format!("{}M", n / 1_000_000)
    } else {
        format!("{}G", n / 1_000_000_000)
    }
}

const HEADER: &str = "Level    Files   Size     Score Read(GB)  Rn(GB) Rnp1(GB) Write(GB) Wnew(GB) Moved(GB) W-Amp Rd(MB/s) Wr(MB/s) Comp(sec) CompMergeCPU(sec) Comp(cnt) Avg(sec) KeyIn KeyDrop Rblob(GB) Wblob(GB)";

/// One level of the table: its shape in the current version and the work
/// done into it.
#[derive(Debug, Clone, Copy, Default)]
struct LevelRow {
    level: usize,
    files: usize,
    /// Files being compacted (RocksDB prints them after the slash).
    busy: usize,
    bytes: u64,
    score: f64,
    stats: LevelStats,
}

/// One row, as RocksDB's `PrintLevelStats`.
fn row(out: &mut String, name: &str, shape: &LevelRow, w_amp: f64) {
    let s = &shape.stats;
    let read = s.bytes_read_start + s.bytes_read_output;
    // RocksDB adds a microsecond so that a job of no time divides by non-zero.
    let secs = (s.micros + 1) as f64 / 1e6;
    // As RocksDB: Write(GB) and Wnew(GB) are table bytes, Wblob(GB) the
    // blob file bytes; W-Amp counts both.
    let tables_written = s.bytes_written.saturating_sub(s.blob_bytes_written);
    let wnew = tables_written.saturating_sub(s.bytes_read_output);
    let _ = writeln!(
        out,
        "{name:>4} {:>6}/{:<3} {:>8} {:5.1} {:8.1} {:7.1} {:8.1} {:9.1} {:8.1} {:9.1} {w_amp:5.1} {:8.1} {:8.1} {:9.2} {:17.2} {:9} {:8.3} {:>7} {:>6} {:9.1} {:9.1}",
        shape.files,
        shape.busy,
        human_bytes(shape.bytes),
        shape.score,
        read as f64 / GIB,
        s.bytes_read_start as f64 / GIB,
        s.bytes_read_output as f64 / GIB,
        tables_written as f64 / GIB,
        wnew as f64 / GIB,
        s.bytes_moved as f64 / GIB,
        read as f64 / MIB / secs,
        s.bytes_written as f64 / MIB / secs,
        s.micros as f64 / 1e6,
        s.cpu_micros as f64 / 1e6,
        s.jobs,
        if s.jobs == 0 { 0.0 } else { s.micros as f64 / 1e6 / s.jobs as f64 },
        human_count(s.keys_in),
        human_count(s.keys_dropped),
        s.blob_bytes_read as f64 / GIB,
        s.blob_bytes_written as f64 / GIB,
    );
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// Each level's compaction score as RocksDB computes it for the style: every
/// level's under leveled compaction; under universal, L0 carries the whole
/// database's (sorted runs not being compacted over the trigger), and under
/// FIFO L0's bytes over the size limit; other levels 0.
fn level_scores(
    version: &Version,
    options: &CompactionOptions,
    busy: &HashSet<u64>,
) -> [f64; NUM_LEVELS] {
    let mut out = [0.0; NUM_LEVELS];
    match options.compaction_style {
        CompactionStyle::Level => {
            let targets = level_targets(version, options);
            for (level, score) in scores(version, options, &targets, busy) {
                if let Some(slot) = out.get_mut(level) {
                    *slot = score;
                }
            }
        }
        CompactionStyle::Universal => {
            let idle_runs = sorted_runs(version, options.num_levels)
                .iter()
                .filter(|r| r.files.iter().all(|f| !busy.contains(&f.number)))
                .count();
            out[0] = ratio(
                idle_runs as u64,
                options.level0_file_num_compaction_trigger as u64,
            );
        }
        CompactionStyle::Fifo => {
            let idle_bytes = version
                .files(0)
                .iter()
                .filter(|f| !busy.contains(&f.number))
                .map(|f| f.file_size)
                .sum();
            out[0] = ratio(
                idle_bytes,
                options.compaction_options_fifo.max_table_files_size,
            );
        }
    }
    out
}

/// What the compaction half shows, gathered under the locks.
struct CompactionInput {
    /// The column family's name.
    name: String,
    /// Levels with files or with work done into them, in order.
    rows: Vec<LevelRow>,
    flushed: u64,
    stalls: [u64; STALL_COUNTERS],
    opened_at: Instant,
    at: Instant,
    /// The family's linked blob files: count, total bytes, garbage bytes.
    blob_files: (usize, u64, u64),
}

/// The compaction half: the table, then the uptime, flush, compaction and
/// stall lines. Returns the mark the next report's interval starts from.
fn render_compaction(
    input: &CompactionInput,
    earlier: &CompactionMark,
) -> (String, CompactionMark) {
    let mut out = format!("\n** Compaction Stats [{}] **\n", input.name);
    let _ = writeln!(out, "{HEADER}");
    // RocksDB's rule is one dash more than the header is long.
    let _ = writeln!(out, "{}", "-".repeat(HEADER.len() + 1));
    let mut sum = LevelRow::default();
    for r in &input.rows {
        let w_amp = if r.level == 0 {
            ratio(r.stats.bytes_written, input.flushed)
        } else {
            ratio(r.stats.bytes_written, r.stats.bytes_read_start)
        };
        row(&mut out, &format!("L{}", r.level), r, w_amp);
        sum.files += r.files;
        sum.busy += r.busy;
        sum.bytes += r.bytes;
        sum.stats = sum.stats.plus(&r.stats);
    }
    row(
        &mut out,
        "Sum",
        &sum,
        ratio(sum.stats.bytes_written, input.flushed),
    );
    let interval = LevelRow {
        stats: sum.stats.minus(&earlier.sum),
        ..LevelRow::default()
    };
    let interval_flushed = input.flushed.saturating_sub(earlier.flushed);
    row(
        &mut out,
        "Int",
        &interval,
        ratio(interval.stats.bytes_written, interval_flushed),
    );
    // RocksDB's blob file summary; space amp is total over live bytes.
    let (count, total, garbage) = input.blob_files;
    let _ = write!(
        out,
        "\nBlob file count: {count}, total size: {:.1} GB, garbage size: {:.1} GB, space amp: \
         {:.1}\n\n",
        total as f64 / GIB,
        garbage as f64 / GIB,
        ratio(total, total.saturating_sub(garbage)),
    );
    let uptime = seconds(input.at, input.opened_at);
    let interval_secs = seconds(input.at, earlier.at);
    let _ = writeln!(
        out,
        "Uptime(secs): {uptime:.1} total, {interval_secs:.1} interval"
    );
    let _ = writeln!(
        out,
        "Flush(GB): cumulative {:.3}, interval {:.3}",
        input.flushed as f64 / GIB,
        interval_flushed as f64 / GIB
    );
    for (label, s, secs) in [
        ("Cumulative", &sum.stats, uptime),
        ("Interval", &interval.stats, interval_secs),
    ] {
        let read = (s.bytes_read_start + s.bytes_read_output) as f64;
        let written = s.bytes_written as f64;
        let _ = writeln!(
            out,
            "{label} compaction: {:.2} GB write, {:.2} MB/s write, {:.2} GB read, {:.2} MB/s read, {:.1} seconds",
            written / GIB,
            written / MIB / secs,
            read / GIB,
            read / MIB / secs,
            s.micros as f64 / 1e6
        );
    }
    let c = |counter: StallCounter| input.stalls[counter as usize];
    let stalls = total_stalls(&input.stalls);
    let _ = writeln!(
        out,
        "Stalls(count): {} level0_slowdown, {} level0_slowdown_with_compaction, {} level0_numfiles, \
         {} level0_numfiles_with_compaction, {} stop for pending_compaction_bytes, \
         {} slowdown for pending_compaction_bytes, {} memtable_compaction, {} memtable_slowdown, \
         interval {} total count",
        c(StallCounter::L0Slowdown),
        c(StallCounter::L0SlowdownWithCompaction),
        c(StallCounter::L0Stop),
        c(StallCounter::L0StopWithCompaction),
        c(StallCounter::PendingBytesStop),
        c(StallCounter::PendingBytesSlowdown),
        c(StallCounter::MemtableStop),
        c(StallCounter::MemtableSlowdown),
        stalls.saturating_sub(earlier.stalls),
    );
    let now = CompactionMark {
        at: input.at,
        sum: sum.stats,
        flushed: input.flushed,
        stalls,
    };
    (out, now)
}

/// Stall conditions counted, without the `with_compaction` subsets (RocksDB's
/// total).
fn total_stalls(counts: &[u64; STALL_COUNTERS]) -> u64 {
    use StallCounter::*;
    [
        L0Slowdown,
        L0Stop,
        PendingBytesStop,
        PendingBytesSlowdown,
        MemtableStop,
        MemtableSlowdown,
    ]
    .iter()
    .map(|&c| counts[c as usize])
    .sum()
}

/// Seconds from `since` to `at`, at least a millisecond (RocksDB's floor for
/// the rates it divides by them).
fn seconds(at: Instant, since: Instant) -> f64 {
    at.saturating_duration_since(since).as_secs_f64().max(1e-3)
}

/// The compaction half, from the current version and counters.
pub(super) fn cfstats(inner: &DbInner, cf: &CfShared) -> String {
    let (version, busy) = {
        let state = inner.state.lock();
        (state.versions.current(cf.id), state.jobs.compacting.clone())
    };
    let sv = cf.super_version.load();
    let options = &sv.options.compaction;
    let level_scores = level_scores(&version, options, &busy);
    let stats = &cf.stats;
    let levels = *stats.levels.lock();
    let rows = (0..options.num_levels.min(NUM_LEVELS))
        .filter_map(|level| {
            let files = version.files(level);
            let work = levels[level];
            (!files.is_empty() || work.jobs > 0).then(|| LevelRow {
                level,
                files: files.len(),
                busy: files.iter().filter(|f| busy.contains(&f.number)).count(),
                bytes: version.level_bytes(level),
                score: level_scores[level],
                stats: work,
            })
        })
        .collect();
    let blobs = version.blob_files().values();
    let blob_files = blobs.fold((0, 0, 0), |(n, total, garbage), b| {
        (
            n + 1,
            total + b.addition.file_size,
            garbage + b.garbage_bytes,
        )
    });
    let input = CompactionInput {
        name: cf.name.clone(),
        rows,
        flushed: stats.flushed_bytes(),
        stalls: stats.stall_counts(),
        opened_at: inner.opened_at,
        at: Instant::now(),
        blob_files,
    };
    let mut marks = inner.stats.marks.lock();
    let earlier = marks
        .compaction
        .get(&cf.id)
        .copied()
        .unwrap_or_else(|| CompactionMark::zero(inner.opened_at));
    let (out, now) = render_compaction(&input, &earlier);
    marks.compaction.insert(cf.id, now);
    out
}

/// The DB half: RocksDB's `** DB Stats **` block, then Strata's flush and
/// parallel-insert lines.
pub(super) fn dbstats(inner: &DbInner) -> String {
    let stats = &inner.stats;
    let now = DbMark::now(stats);
    let earlier = stats
        .marks
        .lock()
        .db
        .replace(now)
        .unwrap_or_else(|| DbMark::zero(inner.opened_at));
    let mut out = render_db(&now, &earlier, inner.opened_at);
    let flushed = DbStats::get(&stats.flush_bytes);
    let _ = writeln!(
        out,
        "Cumulative flush: {} flushes, written: {:.3} GB, {:.2} flushed bytes per ingested byte",
        DbStats::get(&stats.flushes),
        flushed as f64 / GIB,
        ratio(flushed, now.ingest)
    );
    let _ = writeln!(
        out,
        "Parallel memtable inserts: {} batches",
        DbStats::get(&stats.parallel_inserts)
    );
    out
}

/// The whole report: family `cf`'s compaction half, then the DB half.
pub(super) fn stats(inner: &DbInner, cf: &CfShared) -> String {
    cfstats(inner, cf) + &dbstats(inner)
}

/// RocksDB's `DumpDBStats`: cumulative and interval writes, WAL and stall.
fn render_db(now: &DbMark, earlier: &DbMark, opened_at: Instant) -> String {
    let uptime = seconds(now.at, opened_at);
    let interval = seconds(now.at, earlier.at);
    let mut out =
        format!("\n** DB Stats **\nUptime(secs): {uptime:.1} total, {interval:.1} interval\n");
    db_lines(
        &mut out,
        "Cumulative",
        now,
        &DbMark::zero(opened_at),
        uptime,
    );
    db_lines(&mut out, "Interval", now, earlier, interval);
    out
}

/// The writes, WAL and stall lines between two marks. RocksDB gives the
/// interval's ingest in MB and everything else cumulative's way.
fn db_lines(out: &mut String, label: &str, now: &DbMark, then: &DbMark, secs: f64) {
    let d = |a: u64, b: u64| a.saturating_sub(b);
    let (writes, keys, groups) = (
        d(now.writes, then.writes),
        d(now.keys, then.keys),
        d(now.groups, then.groups),
    );
    let ingest = d(now.ingest, then.ingest) as f64;
    let (ingest_size, ingest_unit) = if label == "Interval" {
        (ingest / MIB, "MB")
    } else {
        (ingest / GIB, "GB")
    };
    let (wal_writes, wal_syncs) = (
        d(now.wal_writes, then.wal_writes),
        d(now.wal_syncs, then.wal_syncs),
    );
    let wal_bytes = d(now.wal_bytes, then.wal_bytes) as f64;
    let _ = writeln!(
        out,
        "{label} writes: {} writes, {} keys, {} commit groups, {:.1} writes per commit group, ingest: {ingest_size:.2} {ingest_unit}, {:.2} MB/s",
        human_count(writes),
        human_count(keys),
        human_count(groups),
        ratio(writes, groups),
        ingest / MIB / secs
    );
    let _ = writeln!(
        out,
        "{label} WAL: {} writes, {} syncs, {:.2} writes per sync, written: {:.2} GB, {:.2} MB/s",
        human_count(wal_writes),
        human_count(wal_syncs),
        wal_writes as f64 / wal_syncs.max(1) as f64,
        wal_bytes / GIB,
        wal_bytes / MIB / secs
    );
    let stall = d(now.stall_micros, then.stall_micros);
    let _ = writeln!(
        out,
        "{label} stall: {}",
        stall_time(Duration::from_micros(stall), secs)
    );
}

/// `00:00:1.234 H:M:S, 5.6 percent` (RocksDB's `%02d:%02d:%05.3f`).
fn stall_time(stalled: Duration, over_secs: f64) -> String {
    let micros = stalled.as_micros() as u64;
    let secs = stalled.as_secs_f64();
    format!(
        "{:02}:{:02}:{:05.3} H:M:S, {:.1} percent",
        micros / 3_600_000_000,
        (micros / 60_000_000) % 60,
        secs % 60.0,
        100.0 * secs / over_secs.max(1e-9)
    )
}

#[cfg(test)]
#[path = "stats_report_tests.rs"]
mod tests;
