//! Replaying WALs into memtables at open, as `wal_recovery_mode` says, and
//! telling a torn tail (what a crash leaves: fine) from damage that valid
//! records follow (lost acknowledged writes: never silent).
//!
//! | mode | torn tail of the last WAL | damage, or a torn tail before the last WAL |
//! | --- | --- | --- |
//! | `TolerateCorruptedTailRecords` | ignored | the open fails |
//! | `AbsoluteConsistency` | the open fails | the open fails |
//! | `PointInTimeRecovery` (default) | ignored | replay stops there; what follows is counted and reported |
//! | `SkipAnyCorruptedRecords` | ignored | the damaged block is skipped, every valid record after it replayed, and reported |
//!
//! A WAL started by a memtable switch names the WAL before it and that WAL's
//! length (`wal/meta.rs`). When the WAL before it is shorter than that, or
//! missing while still needed, a crash kept later writes and lost earlier
//! ones (the switch does not sync the old WAL). Every write after such a
//! hole was unsynced (a sync write syncs the retired WALs first), so
//! `TolerateCorruptedTailRecords` and `PointInTimeRecovery` stop there as at
//! a torn tail, `AbsoluteConsistency` fails, and `SkipAnyCorruptedRecords`
//! reports it and replays on.
//!
//! Every damage found is a [`WalDamage`]: logged at error level in the info
//! LOG, shown by the `strata.wal-damage` and `strata.wal-records-dropped`
//! properties, and the damaged WAL (with every later one whose records were
//! dropped) is kept as `NNNNNN.log.corrupt` by a read-write open instead of
//! being deleted, so the evidence survives.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::info_log::{info, InfoLog};
use crate::error::{Error, Result};
use crate::filename::log_file_name;
use crate::fs::RandomAccessFile;
use crate::key::SequenceNumber;
use crate::memtable::MemTable;
use crate::options::{CfOptions, DbOptions, WalRecoveryMode};
use crate::version::VersionSet;
use crate::wal::meta::{self as wal_meta, PredecessorWal, WalMeta};
use crate::wal::LogReader;
use crate::write::WriteBatch;

/// Damage recovery found in one WAL, and what it cost.
///
/// ```
/// use strata::{Db, DbOptions, WalDamage};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = Db::open(dir.path(), DbOptions { create_if_missing: true, ..Default::default() })?;
/// // A clean open found nothing to report.
/// assert!(db.wal_damage().is_empty());
/// let damage = WalDamage {
///     wal: 7,
///     offset: 4096,
///     reason: "bad checksum".into(),
///     records_dropped: 3,
///     dropped_sequences: Some((100, 102)),
/// };
/// assert!(damage.to_string().starts_with("WAL #7 damaged at offset 4096: bad checksum"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalDamage {
    /// The damaged WAL's file number.
    pub wal: u64,
    /// Byte offset of the damage in that WAL.
    pub offset: u64,
    /// What was wrong.
    pub reason: String,
    /// Valid records after the damage that were not replayed (point-in-time
    /// recovery drops them, with every later WAL's; skip-any-corrupted-records
    /// replays them, so 0). Counted from just past the damaged fragment; when
    /// damage also hit a fragment's length field, from the next 32 KiB block,
    /// so the count can then be low by the records of that block.
    pub records_dropped: u64,
    /// Sequence numbers of the dropped records, first and last.
    pub dropped_sequences: Option<(SequenceNumber, SequenceNumber)>,
}

impl std::fmt::Display for WalDamage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "WAL #{} damaged at offset {}: {}; {} valid records after it dropped",
            self.wal, self.offset, self.reason, self.records_dropped
        )?;
        if let Some((first, last)) = self.dropped_sequences {
            write!(f, " (sequence numbers {first}..={last})")?;
        }
        Ok(())
    }
}

/// A WAL to replay, opened.
pub(super) struct OpenWal {
    pub number: u64,
    pub file: Arc<dyn RandomAccessFile>,
}

/// What replay produced.
pub(super) struct Replay {
    /// Each live family's last memtable (the others went to `on_full`).
    pub mems: BTreeMap<u32, MemTable>,
    pub damage: Vec<WalDamage>,
    /// WALs to keep as `.log.corrupt`: damaged ones, and later ones whose
    /// records were dropped.
    pub set_aside: Vec<u64>,
    /// Point-in-time recovery stopped at damage: the WAL and the offset.
    pub stopped_at: Option<(u64, u64)>,
    /// The last sequence number known to come before where replay stopped:
    /// the last batch replayed, or what a predecessor record read before
    /// the stop says was handed out before its WAL started, whichever is
    /// larger. Every write logged after it was lost by a stop.
    pub before_stop: Option<SequenceNumber>,
}

/// Replays `logs` in order into memtables, handing each one that fills to
/// `on_full`; raises the last sequence number to the last record replayed.
pub(super) fn replay_logs(
    dir: &Path,
    options: &DbOptions,
    info_log: &InfoLog,
    logs: &[OpenWal],
    versions: &mut VersionSet,
    families: &BTreeMap<u32, Arc<CfOptions>>,
    on_full: &mut dyn FnMut(&mut VersionSet, u32, MemTable) -> Result<()>,
) -> Result<Replay> {
    let mut replay = Replay {
        mems: families
            .iter()
            .map(|(&id, o)| (id, MemTable::for_family(o)))
            .collect(),
        damage: Vec::new(),
        set_aside: Vec::new(),
        stopped_at: None,
        before_stop: None,
    };
    let mode = options.wal_recovery_mode;
    let mut max_seq = versions.last_sequence();
    // Point-in-time recovery stopped at this damage: later records are only
    // counted.
    let mut stopped: Option<usize> = None;
    // The WAL replayed before this one: number, end of its whole records,
    // and whether it had a torn tail (reported already).
    let mut previous: Option<(u64, u64, bool)> = None;
    let needed_from = versions.min_log_number();
    for (i, wal) in logs.iter().enumerate() {
        let number = wal.number;
        let path = log_file_name(dir, number);
        let mut reader = LogReader::new(wal.file.clone(), &path);
        let mut replayed = 0u64;
        if stopped.is_some() {
            replay.set_aside.push(number);
        }
        loop {
            let batch = match reader.read_record() {
                Ok(Some((offset, payload))) if wal_meta::is_meta(payload) => {
                    match wal_meta::decode(payload, &path, offset) {
                        Ok(WalMeta::Predecessor(p)) => {
                            let earlier = &logs[..i];
                            let Some((wal, at, reason)) =
                                hole_before(&p, number, previous, earlier, needed_from)
                            else {
                                // No hole: every write numbered up to the
                                // predecessor's last sequence lies before
                                // this WAL, so before any later stop.
                                if stopped.is_none() {
                                    let known = Some(p.last_sequence);
                                    replay.before_stop = replay.before_stop.max(known);
                                }
                                continue;
                            };
                            if mode == WalRecoveryMode::AbsoluteConsistency {
                                return Err(Error::corruption(log_file_name(dir, wal), at, reason));
                            }
                            let stops = mode != WalRecoveryMode::SkipAnyCorruptedRecords;
                            if stops && stopped.is_none() {
                                stopped = Some(replay.damage.len());
                                replay.stopped_at = Some((wal, at));
                                for n in [wal, number] {
                                    let exists = logs.iter().any(|l| l.number == n);
                                    if exists && !replay.set_aside.contains(&n) {
                                        replay.set_aside.push(n);
                                    }
                                }
                            }
                            if stopped.is_none_or(|at| at == replay.damage.len()) {
                                replay.damage.push(WalDamage {
                                    wal,
                                    offset: at,
                                    reason,
                                    records_dropped: 0,
                                    dropped_sequences: None,
                                });
                            }
                            continue;
                        }
                        Ok(WalMeta::Unknown(_)) => continue,
                        Err(e) => Err(e),
                    }
                }
                Ok(Some((offset, payload))) => {
                    WriteBatch::from_data(payload.to_vec()).map_err(|e| rewrap(e, &path, offset))
                }
                Ok(None) => break,
                Err(e) => Err(e),
            };
            let batch = match batch {
                Ok(batch) => batch,
                Err(e @ Error::Corruption { .. }) => {
                    let Error::Corruption { offset, reason, .. } = &e else {
                        return Err(e);
                    };
                    match mode {
                        WalRecoveryMode::AbsoluteConsistency
                        | WalRecoveryMode::TolerateCorruptedTailRecords => return Err(e),
                        WalRecoveryMode::PointInTimeRecovery if stopped.is_none() => {
                            stopped = Some(replay.damage.len());
                            replay.stopped_at = Some((number, *offset));
                        }
                        _ => {}
                    }
                    if !replay.set_aside.contains(&number) {
                        replay.set_aside.push(number);
                    }
                    if stopped.is_none_or(|at| at == replay.damage.len()) {
                        replay.damage.push(WalDamage {
                            wal: number,
                            offset: *offset,
                            reason: reason.clone(),
                            records_dropped: 0,
                            dropped_sequences: None,
                        });
                    }
                    reader.skip_past_damage()?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            if let Some(at) = stopped {
                if let Some(damage) = replay.damage.get_mut(at) {
                    count_dropped(damage, &batch);
                }
                continue;
            }
            // A record goes to its family only if the family is live and
            // has not already flushed this WAL's writes to a table.
            let (mems, set) = (&replay.mems, &*versions);
            batch.insert_into(&|cf| Ok(mems.get(&cf).filter(|_| number >= set.log_number(cf))))?;
            replayed += 1;
            if batch.count() > 0 {
                max_seq = max_seq.max(last_sequence(&batch));
                replay.before_stop = replay.before_stop.max(Some(last_sequence(&batch)));
            }
            for (&id, family) in families {
                let full = replay
                    .mems
                    .get(&id)
                    .is_some_and(|m| m.memory_usage() >= family.write_buffer_size);
                if full {
                    let fresh = MemTable::for_family(family);
                    if let Some(full) = replay.mems.insert(id, fresh) {
                        on_full(versions, id, full)?;
                    }
                }
            }
        }
        info!(info_log, "WAL #{number}: replayed {replayed} batches");
        previous = Some((number, reader.records_end(), reader.torn_tail().is_some()));
        if let Some(torn) = reader.torn_tail().filter(|_| stopped.is_none()) {
            info!(
                info_log,
                "WAL #{number}: torn tail at offset {}: {}", torn.offset, torn.reason
            );
            let last_log = i + 1 == logs.len();
            let fail = match mode {
                WalRecoveryMode::AbsoluteConsistency => Some("incomplete record"),
                WalRecoveryMode::TolerateCorruptedTailRecords if !last_log => {
                    Some("incomplete record before the last WAL")
                }
                _ => None,
            };
            if let Some(what) = fail {
                return Err(Error::corruption(
                    &path,
                    torn.offset,
                    format!("{what}: {}", torn.reason),
                ));
            }
            if !last_log {
                // Later WALs exist, so this tail was not the crash's last
                // write: the records after it are history with a hole in it.
                if !replay.set_aside.contains(&number) {
                    replay.set_aside.push(number);
                }
                let damage = WalDamage {
                    wal: number,
                    offset: torn.offset,
                    reason: format!("incomplete record before the last WAL: {}", torn.reason),
                    records_dropped: 0,
                    dropped_sequences: None,
                };
                if mode == WalRecoveryMode::PointInTimeRecovery {
                    stopped = Some(replay.damage.len());
                    replay.stopped_at = Some((number, torn.offset));
                }
                replay.damage.push(damage);
            }
        }
    }
    for damage in &replay.damage {
        info!(info_log, "[ERROR] {damage}");
    }
    versions.set_last_sequence(max_seq);
    Ok(replay)
}

/// Point-in-time recovery keeps the state as of the last record before the
/// damage. A family whose tables already hold a later write (it flushed
/// memtables with writes past the damage before the crash) cannot be brought
/// back to that point, and the others cannot be brought forward to it: the
/// open fails, as RocksDB's does, rather than return a state no moment ever
/// had. `kSkipAnyCorruptedRecords` recovers every valid record instead.
pub(super) fn check_families_not_ahead(
    dir: &Path,
    versions: &VersionSet,
    replay: &Replay,
) -> Result<()> {
    let Some((wal, offset)) = replay.stopped_at else {
        return Ok(());
    };
    // The first write the stop gives up: the one after the last known to
    // come before it. Not the first valid record counted after the damage:
    // the damaged record (or a lost tail) comes before that one, and a
    // family whose table holds its write and nothing later would pass.
    // With nothing known (damage in the first record of a WAL without a
    // predecessor record), every write of the WAL may be lost: from 0.
    let first_lost = replay.before_stop.map_or(0, |s| s.saturating_add(1));
    // A family is ahead when it flushed past the damaged WAL (its log
    // number says so, RocksDB's test) and its tables hold a write from
    // after the damage. Either alone is no proof: tables also hold writes
    // made without the WAL, with any sequence number.
    let ahead: Vec<String> = versions
        .families()
        .filter(|(id, _)| {
            versions.log_number(*id) > wal
                && versions
                    .current(*id)
                    .all_files()
                    .any(|(_, f)| f.largest_seqno >= first_lost)
        })
        .map(|(_, name)| format!("{name:?}"))
        .collect();
    if ahead.is_empty() {
        return Ok(());
    }
    Err(Error::corruption(
        log_file_name(dir, wal),
        offset,
        format!(
            "point-in-time recovery stops at this damage (before sequence {first_lost}), but column \
             families {} already hold later writes in their tables: no single point in time can \
             be restored; open with wal_recovery_mode=kSkipAnyCorruptedRecords to recover every \
             valid record",
            ahead.join(", ")
        ),
    ))
}

/// The hole a predecessor record in WAL `number` reveals, if any: the WAL,
/// the offset where its data stops, and why. `previous` is the WAL replayed
/// just before (a torn tail there is reported already); `earlier` every WAL
/// replayed before; `needed_from` the oldest WAL the MANIFEST still needs.
fn hole_before(
    p: &PredecessorWal,
    number: u64,
    previous: Option<(u64, u64, bool)>,
    earlier: &[OpenWal],
    needed_from: u64,
) -> Option<(u64, u64, String)> {
    match previous {
        Some((n, end, torn)) if n == p.number => (!torn && end < p.size).then(|| {
            (
                n,
                end,
                format!(
                    "WAL #{n} ends after {end} bytes of whole records, but WAL #{number} recorded                      it as {} bytes long: a crash lost writes that were not synced",
                    p.size
                ),
            )
        }),
        _ if p.number >= needed_from && !earlier.iter().any(|w| w.number == p.number) => Some((
            p.number,
            0,
            format!(
                "WAL #{}, which WAL #{number} follows and the MANIFEST still needs, is missing",
                p.number
            ),
        )),
        _ => None,
    }
}

fn count_dropped(damage: &mut WalDamage, batch: &WriteBatch) {
    damage.records_dropped += 1;
    if batch.count() == 0 {
        return;
    }
    let (first, last) = (batch.sequence(), last_sequence(batch));
    damage.dropped_sequences = Some(match damage.dropped_sequences {
        Some((a, b)) => (a.min(first), b.max(last)),
        None => (first, last),
    });
}

/// The sequence number of the last entry of a non-empty `batch`. Dropped
/// records are only counted, never inserted (which would refuse an
/// overflowing sequence), so bytes from disk must not overflow here either.
fn last_sequence(batch: &WriteBatch) -> SequenceNumber {
    batch
        .sequence()
        .saturating_add(u64::from(batch.count()).saturating_sub(1))
}

fn rewrap(e: Error, path: &PathBuf, offset: u64) -> Error {
    match e {
        Error::Corruption { reason, .. } => Error::corruption(path, offset, reason),
        other => other,
    }
}
