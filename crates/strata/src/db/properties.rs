//! Database properties (RocksDB's `GetProperty`). Names use the `strata.` prefix;
//! the same names with RocksDB's `rocksdb.` prefix are accepted.

use std::fmt::Write as _;

use super::stats::DbStats;
use super::DbInner;
use crate::version::NUM_LEVELS;

pub(super) fn property(inner: &DbInner, name: &str) -> Option<String> {
    let name = name
        .strip_prefix("strata.")
        .or_else(|| name.strip_prefix("rocksdb."))?;
    let sv = inner.super_version.load();
    if let Some(level) = name.strip_prefix("num-files-at-level") {
        let level: usize = level.parse().ok()?;
        return (level < NUM_LEVELS).then(|| sv.version.num_files(level).to_string());
    }
    let value = match name {
        "num-immutable-mem-table" => sv.imm.len().to_string(),
        "cur-size-active-mem-table" => sv.mem.memory_usage().to_string(),
        "cur-size-all-mem-tables" => (sv.mem.memory_usage()
            + sv.imm.iter().map(|m| m.memory_usage()).sum::<usize>())
        .to_string(),
        "num-entries-active-mem-table" => sv.mem.len().to_string(),
        "total-sst-files-size" => (0..NUM_LEVELS)
            .map(|l| sv.version.level_bytes(l))
            .sum::<u64>()
            .to_string(),
        "num-snapshots" => inner.snapshots.sequences().len().to_string(),
        "latest-sequence-number" => inner
            .visible_seq
            .load(std::sync::atomic::Ordering::Acquire)
            .to_string(),
        "background-errors" => {
            let state = inner.state.lock();
            u64::from(state.bg_error.is_some()).to_string()
        }
        "statistics" => inner.options.statistics.as_ref()?.report(),
        "dbstats" => inner.stats.report(inner.opened_at.elapsed()),
        "bytes-written" => DbStats::get(&inner.stats.bytes_written).to_string(),
        "wal-bytes-written" => DbStats::get(&inner.stats.wal_bytes).to_string(),
        "flush-bytes-written" => DbStats::get(&inner.stats.flush_bytes).to_string(),
        "num-flushes-completed" => inner.state.lock().flushes_completed.to_string(),
        "levelstats" => {
            let mut out = String::from("Level Files Size(MB)\n--------------------\n");
            for level in 0..NUM_LEVELS {
                let _ = writeln!(
                    out,
                    "{level:>5} {:>5} {:>8.1}",
                    sv.version.num_files(level),
                    sv.version.level_bytes(level) as f64 / 1048576.0
                );
            }
            out
        }
        _ => return None,
    };
    Some(value)
}
