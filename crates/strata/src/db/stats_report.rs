//! `strata.stats` (also `rocksdb.stats`): the compaction stats table and the
//! DB stats lines in RocksDB's layout and wording, so tools that parse
//! RocksDB's report parse ours.
//!
//! Per-level rows count work *into* the level: flushes into L0, each
//! compaction into its output level. W-Amp is bytes written into a level over
//! bytes read from the level above; on L0 and the Sum row it is bytes written
//! over bytes flushed. The `Int` row and the `Interval` lines cover the time
//! since the previous report.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use super::stats::{DbStats, LevelStats};
use super::DbInner;
use crate::compaction::leveled::{level_targets, scores};
use crate::version::NUM_LEVELS;

const GIB: f64 = (1u64 << 30) as f64;
const MIB: f64 = (1u64 << 20) as f64;

/// What the previous report saw, for the interval figures.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReportMark {
    at: Instant,
    sum: LevelStats,
    flushed: u64,
    writes: u64,
    keys: u64,
    groups: u64,
    ingest: u64,
    wal_writes: u64,
    wal_syncs: u64,
    wal_bytes: u64,
    stall_micros: u64,
}

impl ReportMark {
    fn now(stats: &DbStats, sum: LevelStats) -> ReportMark {
        let get = DbStats::get;
        ReportMark {
            at: Instant::now(),
            sum,
            flushed: get(&stats.flush_bytes),
            writes: get(&stats.writes),
            keys: get(&stats.keys_written),
            groups: get(&stats.write_groups),
            ingest: get(&stats.bytes_written),
            wal_writes: get(&stats.write_groups),
            wal_syncs: get(&stats.wal_syncs),
            wal_bytes: get(&stats.wal_bytes),
            stall_micros: get(&stats.stall_micros),
        }
    }
}

/// `19.48 MB`, `0.00 KB`: RocksDB's `BytesToHumanString` for sizes.
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.2} GB", b / GIB)
    } else if b >= MIB {
        format!("{:.2} MB", b / MIB)
    } else {
        format!("{:.2} KB", b / 1024.0)
    }
}

/// `4494K`, `10M`, `123`: RocksDB's `NumberToHumanString`.
pub fn human_count(n: u64) -> String {
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

/// One row, as RocksDB's `PrintLevelStats`.
fn row(
    out: &mut String,
    name: &str,
    files: (usize, usize),
    size: u64,
    score: f64,
    s: &LevelStats,
    w_amp: f64,
) {
    let read = s.bytes_read_start + s.bytes_read_output;
    let secs = (s.micros + 1) as f64 / 1e6;
    let wnew = s.bytes_written.saturating_sub(s.bytes_read_output);
    let _ = writeln!(
        out,
        "{name:>4} {:>6}/{:<3} {:>8} {score:5.1} {:8.1} {:7.1} {:8.1} {:9.1} {:8.1} {:9.1} {w_amp:5.1} {:8.1} {:8.1} {:9.2} {:17.2} {:9} {:8.3} {:>7} {:>6} {:9.1} {:9.1}",
        files.0,
        files.1,
        human_bytes(size),
        read as f64 / GIB,
        s.bytes_read_start as f64 / GIB,
        s.bytes_read_output as f64 / GIB,
        s.bytes_written as f64 / GIB,
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
        0.0,
        0.0,
    );
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The whole `strata.stats` report.
pub(super) fn report(inner: &DbInner) -> String {
    let (version, compacting) = {
        let state = inner.state.lock();
        (state.versions.current().clone(), state.compacting.clone())
    };
    let options = &inner.options.compaction;
    let targets = level_targets(&version, options);
    let level_scores = scores(&version, options, &targets, &compacting);
    let score_of = |level: usize| {
        level_scores
            .iter()
            .find(|(l, _)| *l == level)
            .map_or(0.0, |(_, s)| *s)
    };
    let stats = &inner.stats;
    let levels = *stats.levels.lock();
    let flushed = DbStats::get(&stats.flush_bytes);

    let mut out = String::from("\n** Compaction Stats [default] **\n");
    let _ = writeln!(out, "{HEADER}");
    let _ = writeln!(out, "{}", "-".repeat(HEADER.len()));
    let mut sum = LevelStats::default();
    let (mut files_total, mut busy_total, mut size_total) = (0, 0, 0);
    for (level, s) in levels
        .iter()
        .enumerate()
        .take(options.num_levels.min(NUM_LEVELS))
    {
        let files = version.files(level);
        if files.is_empty() && s.jobs == 0 {
            continue;
        }
        let busy = files
            .iter()
            .filter(|f| compacting.contains(&f.number))
            .count();
        let size = version.level_bytes(level);
        let w_amp = if level == 0 {
            ratio(s.bytes_written, flushed)
        } else {
            ratio(s.bytes_written, s.bytes_read_start)
        };
        row(
            &mut out,
            &format!("L{level}"),
            (files.len(), busy),
            size,
            score_of(level),
            s,
            w_amp,
        );
        sum = sum.plus(s);
        files_total += files.len();
        busy_total += busy;
        size_total += size;
    }
    row(
        &mut out,
        "Sum",
        (files_total, busy_total),
        size_total,
        0.0,
        &sum,
        ratio(sum.bytes_written, flushed),
    );

    let now = ReportMark::now(stats, sum);
    let previous = stats.last_report.lock().replace(now);
    let opened = inner.opened_at;
    let earlier = previous.unwrap_or_else(|| zero(opened));
    let interval = now.sum.minus(&earlier.sum);
    let interval_flushed = now.flushed.saturating_sub(earlier.flushed);
    row(
        &mut out,
        "Int",
        (0, 0),
        0,
        0.0,
        &interval,
        ratio(interval.bytes_written, interval_flushed),
    );

    let uptime = now.at.duration_since(opened).as_secs_f64().max(1e-3);
    let interval_secs = now.at.duration_since(earlier.at).as_secs_f64().max(1e-3);
    let _ = writeln!(
        out,
        "Uptime(secs): {uptime:.1} total, {interval_secs:.1} interval"
    );
    let _ = writeln!(
        out,
        "Flush(GB): cumulative {:.3}, interval {:.3}",
        flushed as f64 / GIB,
        interval_flushed as f64 / GIB
    );
    for (label, s, secs) in [
        ("Cumulative", &sum, uptime),
        ("Interval", &interval, interval_secs),
    ] {
        let read = s.bytes_read_start + s.bytes_read_output;
        let _ = writeln!(
            out,
            "{label} compaction: {:.2} GB write, {:.2} MB/s write, {:.2} GB read, {:.2} MB/s read, {:.1} seconds",
            s.bytes_written as f64 / GIB,
            s.bytes_written as f64 / MIB / secs,
            read as f64 / GIB,
            read as f64 / MIB / secs,
            s.micros as f64 / 1e6
        );
    }
    out.push_str("\n** DB Stats **\n");
    let _ = writeln!(
        out,
        "Uptime(secs): {uptime:.1} total, {interval_secs:.1} interval"
    );
    db_lines(&mut out, "Cumulative", &now, &zero(opened), uptime);
    db_lines(&mut out, "Interval", &now, &earlier, interval_secs);
    out
}

fn zero(at: Instant) -> ReportMark {
    ReportMark {
        at,
        sum: LevelStats::default(),
        flushed: 0,
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

/// The writes, WAL and stall lines between two marks.
fn db_lines(out: &mut String, label: &str, now: &ReportMark, then: &ReportMark, secs: f64) {
    let d = |a: u64, b: u64| a.saturating_sub(b);
    let (writes, keys, groups) = (
        d(now.writes, then.writes),
        d(now.keys, then.keys),
        d(now.groups, then.groups),
    );
    let ingest = d(now.ingest, then.ingest) as f64;
    let (wal_writes, wal_syncs) = (
        d(now.wal_writes, then.wal_writes),
        d(now.wal_syncs, then.wal_syncs),
    );
    let wal_bytes = d(now.wal_bytes, then.wal_bytes) as f64;
    let _ = writeln!(
        out,
        "{label} writes: {} writes, {} keys, {} commit groups, {:.1} writes per commit group, ingest: {:.2} GB, {:.2} MB/s",
        human_count(writes),
        human_count(keys),
        human_count(groups),
        ratio(writes, groups),
        ingest / GIB,
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

/// `00:00:1.234 H:M:S, 5.6 percent` (RocksDB's `%02d:%02d:%02.3f`).
pub fn stall_time(stalled: Duration, over_secs: f64) -> String {
    let micros = stalled.as_micros() as u64;
    let secs = stalled.as_secs_f64();
    format!(
        "{:02}:{:02}:{:.3} H:M:S, {:.1} percent",
        micros / 3_600_000_000,
        (micros / 60_000_000) % 60,
        secs % 60.0,
        100.0 * secs / over_secs.max(1e-9)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_numbers_read_like_rocksdbs() {
        assert_eq!(human_bytes(0), "0.00 KB");
        assert_eq!(human_bytes(20_426_752), "19.48 MB");
        assert_eq!(human_bytes(3 << 30), "3.00 GB");
        assert_eq!(human_count(4_494_000), "4494K");
        assert_eq!(human_count(9999), "9999");
        assert_eq!(human_count(10_000_000), "10M");
    }

    #[test]
    fn a_row_has_rocksdbs_columns() {
        let s = LevelStats {
            bytes_read_start: 400 << 20,
            bytes_read_output: 100 << 20,
            bytes_written: 450 << 20,
            bytes_moved: 0,
            micros: 3_910_000,
            cpu_micros: 2_950_000,
            jobs: 2,
            keys_in: 4_494_000,
            keys_dropped: 1_608_000,
        };
        let mut out = String::new();
        row(
            &mut out,
            "L1",
            (4, 0),
            205_160_000,
            0.8,
            &s,
            ratio(s.bytes_written, s.bytes_read_start),
        );
        let fields: Vec<&str> = out.split_whitespace().collect();
        // One more than the header: the size is a number and a unit.
        assert_eq!(fields.len(), HEADER.split_whitespace().count() + 1, "{out}");
        assert_eq!(&fields[..4], ["L1", "4/0", "195.66", "MB"], "{out}");
        // Read 0.5 GB, Rn 0.4, Rnp1 0.1, Write 0.4, Wnew 0.3, W-Amp 1.1.
        assert_eq!(
            &fields[5..12],
            ["0.5", "0.4", "0.1", "0.4", "0.3", "0.0", "1.1"],
            "{out}"
        );
        assert_eq!(
            &fields[14..21],
            ["3.91", "2.95", "2", "1.955", "4494K", "1608K", "0.0"],
            "{out}"
        );
    }

    #[test]
    fn stall_time_uses_rocksdbs_clock_format() {
        assert_eq!(
            stall_time(Duration::ZERO, 10.0),
            "00:00:0.000 H:M:S, 0.0 percent"
        );
        assert_eq!(
            stall_time(Duration::from_millis(61_500), 615.0),
            "00:01:1.500 H:M:S, 10.0 percent"
        );
    }
}
