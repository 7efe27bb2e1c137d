//! Database properties (RocksDB's `GetProperty`). Names use the `strata.` prefix;
//! the same names with RocksDB's `rocksdb.` prefix are accepted.

use std::fmt::Write as _;

use super::stats::DbStats;
use super::stats_report;
use super::DbInner;
use crate::cf::CfShared;
use crate::key::ParsedInternalKey;
use crate::version::{SuperVersion, Version, NUM_LEVELS};

/// Live files per level in RocksDB's `rocksdb.sstables` layout (its
/// `Version::DebugString` with hex keys): `--- level N ---`, then per file
/// `number:size[smallest_seq .. largest_seq]['KEY' seq:S, type:T .. 'KEY' seq:S, type:T]`.
/// RocksDB also prints a version number and sampled reads, which Strata does
/// not keep.
fn sstables(version: &Version, num_levels: usize) -> String {
    let mut out = String::new();
    for level in 0..num_levels {
        let _ = writeln!(out, "--- level {level} ---");
        for f in version.files(level) {
            let _ = writeln!(
                out,
                " {}:{}[{} .. {}][{} .. {}]",
                f.number,
                f.file_size,
                f.smallest_seqno,
                f.largest_seqno,
                internal_key_text(&f.smallest),
                internal_key_text(&f.largest)
            );
        }
    }
    out
}

/// `'00616263' seq:5, type:1`: RocksDB's `InternalKey::DebugString` in hex.
fn internal_key_text(ikey: &[u8]) -> String {
    let hex = |bytes: &[u8]| {
        bytes.iter().fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02X}");
            s
        })
    };
    match ParsedInternalKey::parse(ikey) {
        Some(k) => format!("'{}' seq:{}, type:{}", hex(k.user_key), k.seq, k.type_code),
        None => format!("'{}' (bad internal key)", hex(ikey)),
    }
}

/// RocksDB's `rocksdb.levelstats`: files and whole MiB per level.
fn levelstats(version: &Version, num_levels: usize) -> String {
    let mut out = String::from("Level Files Size(MB)\n--------------------\n");
    for level in 0..num_levels {
        let _ = writeln!(
            out,
            "{level:>3} {:>8} {:>8.0}",
            version.num_files(level),
            version.level_bytes(level) as f64 / 1048576.0
        );
    }
    out
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
        .filter_map(|(level, f)| {
            let order = sv.version.order();
            inner.table_cache.get(f, level, order).ok()
        })
        .fold((0u64, 0u64), |(e, d), t| {
            let p = t.properties();
            (e + p.num_entries, d + p.num_deletions)
        });
    (mem + entries).saturating_sub(2 * deletions)
}

/// Property `name` of family `cf` (DB-wide properties are the same for every
/// family).
pub(super) fn property(inner: &DbInner, cf: &CfShared, name: &str) -> Option<String> {
    let name = name
        .strip_prefix("strata.")
        .or_else(|| name.strip_prefix("rocksdb."))?;
    let sv = cf.super_version.load();
    let num_levels = sv.options.compaction.num_levels.min(NUM_LEVELS);
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
        // One per `delete_range`, whatever the number of keys it covers.
        "num-range-deletes-active-mem-table" => sv.mem.num_range_deletions().to_string(),
        "total-sst-files-size" => (0..NUM_LEVELS)
            .map(|l| sv.version.level_bytes(l))
            .sum::<u64>()
            .to_string(),
        "num-snapshots" => inner.snapshots.sequences().len().to_string(),
        "latest-sequence-number" => inner.publisher.visible().to_string(),
        "wal-records-dropped" => inner
            .wal_damage
            .iter()
            .map(|d| d.records_dropped)
            .sum::<u64>()
            .to_string(),
        "wal-damage" => super::admin::wal_damage_report(inner),
        "background-errors" => {
            let state = inner.state.lock();
            u64::from(state.recovery.bg_error.is_some()).to_string()
        }
        "statistics" => inner.options.statistics.as_ref()?.report(),
        "stats" => stats_report::stats(inner, cf),
        "cfstats" | "cfstats-no-file-histogram" => stats_report::cfstats(inner, cf),
        "dbstats" => stats_report::dbstats(inner),
        "sstables" => sstables(&sv.version, num_levels),
        "estimate-num-keys" => estimate_num_keys(inner, &sv).to_string(),
        "compaction-pending" => {
            let state = inner.state.lock();
            u64::from(super::compact::pick_task_of(inner, &state, cf.id).is_some()).to_string()
        }
        "num-running-compactions" => inner
            .state
            .lock()
            .jobs
            .running_compactions
            .len()
            .to_string(),
        // The rate writes are held to now, 0 when they are not delayed.
        "actual-delayed-write-rate" => {
            let state = inner.state.lock();
            let delayed = matches!(
                super::stall::current(&state),
                Some(crate::write::controller::StallCondition::Delayed { .. })
            );
            if delayed {
                state.commit.write_controller.rate().to_string()
            } else {
                "0".to_owned()
            }
        }
        // Writes waiting to commit, the group being committed included: a
        // queue that grows shows writers held up by a slow WAL write or sync.
        "num-queued-writes" => inner.state.lock().commit.writers.len().to_string(),
        "is-write-stopped" => u64::from(inner.state.lock().commit.writes_stopped).to_string(),
        "estimate-pending-compaction-bytes" => inner
            .state
            .lock()
            .cfs
            .get(&cf.id)
            .map_or(0, |f| f.pending_compaction_bytes)
            .to_string(),
        "compaction-bytes-written" => DbStats::get(&inner.stats.compaction_bytes).to_string(),
        "bytes-written" => DbStats::get(&inner.stats.bytes_written).to_string(),
        "wal-bytes-written" => DbStats::get(&inner.stats.wal_bytes).to_string(),
        "flush-bytes-written" => DbStats::get(&inner.stats.flush_bytes).to_string(),
        "num-flushes-completed" => inner.state.lock().jobs.flushes_completed.to_string(),
        "levelstats" => levelstats(&sv.version, num_levels),
        // RocksDB's blob properties: the family's linked blob files, their
        // bytes, the bytes some table still references, and the garbage.
        "num-blob-files" => sv.version.blob_files().len().to_string(),
        "total-blob-file-size" | "live-blob-file-size" | "live-blob-file-garbage-size" => {
            let files = sv.version.blob_files().values();
            let sum: u64 = match name {
                "total-blob-file-size" => files.map(|b| b.addition.file_size).sum(),
                "live-blob-file-size" => files
                    .map(|b| b.addition.record_bytes.saturating_sub(b.garbage_bytes))
                    .sum(),
                _ => files.map(|b| b.garbage_bytes).sum(),
            };
            sum.to_string()
        }
        _ => return None,
    };
    Some(value)
}
