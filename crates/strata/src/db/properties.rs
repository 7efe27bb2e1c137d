//! Database properties (RocksDB's `GetProperty`). Names use the `strata.` prefix;
//! the same names with RocksDB's `rocksdb.` prefix are accepted.

use std::fmt::Write as _;

use super::stats::DbStats;
use super::stats_report;
use super::DbInner;
use crate::key::user_key;
use crate::version::{SuperVersion, Version, NUM_LEVELS};

/// Live files per level, as db_bench's `sstables`: `--- level N ---` then
/// `number:size[smallest_seq .. largest_seq]['smallest' .. 'largest']`.
fn sstables(version: &Version) -> String {
    let mut out = String::new();
    for level in 0..NUM_LEVELS {
        let _ = writeln!(out, "--- level {level} ---");
        for f in version.files(level) {
            let _ = writeln!(
                out,
                " {}:{}[{} .. {}]['{}' .. '{}']",
                f.number,
                f.file_size,
                f.smallest_seqno,
                f.largest_seqno,
                printable(user_key(&f.smallest)),
                printable(user_key(&f.largest))
            );
        }
    }
    out
}

/// The key as text when it is printable ASCII, else as upper-case hex.
fn printable(key: &[u8]) -> String {
    if key.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        String::from_utf8_lossy(key).into_owned()
    } else {
        key.iter().fold(String::from("0x"), |mut s, b| {
            let _ = write!(s, "{b:02X}");
            s
        })
    }
}

/// RocksDB's estimate: entries in the memtables and tables, minus twice the
/// tables' deletions (each hides one entry and is one). Tables that cannot be
/// opened count as empty.
fn estimate_num_keys(inner: &DbInner, sv: &SuperVersion) -> u64 {
    let mem: u64 = std::iter::once(&sv.mem)
        .chain(sv.imm.iter())
        .map(|m| m.len() as u64)
        .sum();
    let (entries, deletions) = sv
        .version
        .all_files()
        .filter_map(|(_, f)| inner.table_cache.get(f.number, f.file_size).ok())
        .fold((0u64, 0u64), |(e, d), t| {
            let p = t.properties();
            (e + p.num_entries, d + p.num_deletions)
        });
    (mem + entries).saturating_sub(2 * deletions)
}

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
        "stats" => stats_report::stats(inner),
        "cfstats" | "cfstats-no-file-histogram" => stats_report::cfstats(inner),
        "dbstats" => stats_report::dbstats(inner),
        "sstables" => sstables(&sv.version),
        "estimate-num-keys" => estimate_num_keys(inner, &sv).to_string(),
        "compaction-pending" => {
            let state = inner.state.lock();
            u64::from(super::compact::pick_task(inner, &state).is_some()).to_string()
        }
        "num-running-compactions" => inner.state.lock().running_compactions.to_string(),
        "is-write-stopped" => u64::from(inner.state.lock().writes_stopped).to_string(),
        "estimate-pending-compaction-bytes" => {
            inner.state.lock().pending_compaction_bytes.to_string()
        }
        "compaction-bytes-written" => DbStats::get(&inner.stats.compaction_bytes).to_string(),
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
