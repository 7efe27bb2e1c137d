//! The expected state and the check after a crash.
//!
//! While threads run, each records when every batch started and when it was
//! acknowledged, on one logical clock shared by all threads. After the crash
//! and reopen, for each thread the recovered sequence key names the prefix of
//! its batches that survived; the check then requires:
//! - the prefix holds every batch the durability promise covers (every
//!   acknowledged one after a process kill; every acknowledged `sync` one, and
//!   so all before it, after power loss);
//! - no batch that was never started, and the thread's keys equal exactly the
//!   state after that prefix (no partial batch, no lost or phantom value, no
//!   wrong merge), but for marked values the compaction filter may have
//!   removed (`model.rs`);
//! - across threads, no holes: if a batch survived, every batch of any thread
//!   acknowledged before it started survived too (it was committed earlier).

use std::ops::Bound;

use strata::Db;

use crate::families::{of_key, Families};
use crate::model::{expired_gone, mismatch, Found, KeyState, Possible};
use crate::workload::{parse_key, parse_seq, seq_key, thread_prefix, Workload};

/// One thread's batches in one cycle, by index: the clock when each started,
/// and when it was acknowledged, if it was.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadLog {
    pub started: Vec<u64>,
    pub acked: Vec<Option<u64>>,
    /// Indexes of acknowledged batches written with `sync`.
    pub synced: Vec<u64>,
}

impl ThreadLog {
    pub fn start(&mut self, clock: u64) {
        self.started.push(clock);
        self.acked.push(None);
    }

    pub fn ack(&mut self, index: usize, clock: u64, sync: bool) {
        if let Some(a) = self.acked.get_mut(index) {
            *a = Some(clock);
        }
        if sync {
            self.synced.push(index as u64);
        }
    }

    /// Batches acknowledged, counting from the first until one was not.
    fn acked_prefix(&self) -> usize {
        self.acked.iter().take_while(|a| a.is_some()).count()
    }

    /// How many of this thread's batches were acknowledged before `clock`.
    fn acked_before(&self, clock: u64) -> usize {
        self.acked
            .iter()
            .take_while(|a| a.is_some_and(|at| at < clock))
            .count()
    }
}

/// What a crash may lose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// A process kill: every acknowledged write reached the OS and must stay.
    Acknowledged,
    /// Power loss: only acknowledged `sync` writes (and what precedes them).
    Synced,
    /// The WAL was off: only some prefix is promised.
    PrefixOnly,
}

/// The state every thread's keys must have, as of the last verified cycle.
#[derive(Debug, Clone, Default)]
pub struct Expected {
    pub keys: Vec<KeyState>,
    pub seq: Vec<Option<Vec<u8>>>,
    /// Keys verification found absent that may have held a marked value.
    pub expired_gone: u64,
}

impl Expected {
    pub fn new(threads: usize) -> Expected {
        Expected {
            keys: vec![KeyState::new(); threads],
            seq: vec![None; threads],
            expired_gone: 0,
        }
    }
}

/// A thread's keys as the database has them, and its sequence key.
fn read_thread(db: &Db, w: &Workload, thread: usize) -> Result<(Found, Option<Vec<u8>>), String> {
    let prefix = thread_prefix(thread);
    let mut end = prefix.clone();
    end.push(0x7F);
    let mut keys = Found::new();
    let mut seq = None;
    let families = Families::of(db, w.families)?;
    for (i, cf) in families.all().iter().enumerate() {
        let span = crate::families::key_span(cf, &prefix, Bound::Excluded(&end));
        for entry in db.range_cf(cf, span) {
            let (k, v) =
                entry.map_err(|e| format!("scan of thread {thread}'s keys failed: {e}"))?;
            if k == seq_key(thread) && i == 0 {
                seq = Some(v);
            } else if let Some(n) = parse_key(thread, &k).filter(|&n| of_key(n, w.families) == i) {
                keys.insert(n, v);
            } else {
                return Err(format!(
                    "unexpected key {:?} among thread {thread}'s in column family {}",
                    String::from_utf8_lossy(&k),
                    crate::families::NAMES[i]
                ));
            }
        }
    }
    Ok((keys, seq))
}

/// Takes the database's current state as the expected one (a kill-mode child
/// starting from the state its parent verified). A marked value read may
/// still be removed by a compaction.
pub fn load(db: &Db, w: &Workload, expected: &mut Expected) -> Result<(), String> {
    for t in 0..w.threads {
        let (keys, seq) = read_thread(db, w, t)?;
        expected.keys[t] = keys
            .into_iter()
            .map(|(n, v)| (n, Possible::of(v)))
            .collect();
        expected.seq[t] = seq;
    }
    Ok(())
}

/// Checks that `db` holds exactly the expected state: nothing written since
/// the last verified cycle, nothing lost (after an attack between cycles).
pub fn verify_unchanged(db: &Db, w: &Workload, expected: &Expected) -> Result<(), String> {
    for t in 0..w.threads {
        let (keys, seq) = read_thread(db, w, t)?;
        if seq != expected.seq[t] {
            return Err(format!(
                "thread {t}: sequence key is {:?}, expected {:?}",
                seq.as_deref().map(String::from_utf8_lossy),
                expected.seq[t].as_deref().map(String::from_utf8_lossy),
            ));
        }
        if let Some(difference) = mismatch(&expected.keys[t], &keys) {
            return Err(format!("thread {t}: {difference}"));
        }
    }
    Ok(())
}

/// How many of a thread's first batches `durability` promises survive.
pub fn required(log: &ThreadLog, durability: Durability) -> usize {
    match durability {
        Durability::Acknowledged => log.acked_prefix(),
        Durability::Synced => log.synced.iter().max().map_or(0, |&i| i as usize + 1),
        Durability::PrefixOnly => 0,
    }
}

/// Checks the reopened `db` after `cycle` and, when it passes, makes its
/// state the expected one for the next cycle and returns how many batches
/// of each thread survived. The error describes the first violation.
pub fn verify(
    db: &Db,
    w: &Workload,
    cycle: u64,
    expected: &mut Expected,
    logs: &[ThreadLog],
    durability: Durability,
) -> Result<Vec<usize>, String> {
    let mut prefixes = Vec::with_capacity(w.threads);
    let mut states = Vec::with_capacity(w.threads);
    for (t, log) in logs.iter().enumerate() {
        let (recovered, seq) = read_thread(db, w, t)?;
        let prefix = match seq.as_deref().map(parse_seq) {
            Some(Some((c, i))) if c == cycle => i as usize + 1,
            _ if seq == expected.seq[t] => 0,
            _ => {
                return Err(format!(
                    "thread {t}: sequence key is {:?}, expected {:?} or one of cycle {cycle}",
                    seq.as_deref().map(String::from_utf8_lossy),
                    expected.seq[t].as_deref().map(String::from_utf8_lossy),
                ))
            }
        };
        if prefix > log.started.len() {
            return Err(format!(
                "thread {t}: batch {} survived but only {} were started",
                prefix - 1,
                log.started.len()
            ));
        }
        let required = required(log, durability);
        if prefix < required {
            return Err(format!(
                "thread {t}: lost acknowledged writes: {prefix} batches survived, \
                 {required} were promised ({durability:?})"
            ));
        }
        let mut state = expected.keys[t].clone();
        for index in 0..prefix {
            w.apply(&mut state, &w.batch(cycle, t, index as u64));
        }
        if let Some(difference) = mismatch(&state, &recovered) {
            return Err(format!(
                "thread {t}: state is not that of its first {prefix} batches: {difference}"
            ));
        }
        expected.expired_gone += expired_gone(&state, &recovered);
        prefixes.push(prefix);
        states.push((state, seq));
    }
    // No holes across threads.
    for (b, log) in logs.iter().enumerate() {
        let Some(last) = prefixes[b].checked_sub(1) else {
            continue;
        };
        let started = log.started[last];
        for (a, other) in logs.iter().enumerate() {
            let committed_before = other.acked_before(started);
            if prefixes[a] < committed_before {
                return Err(format!(
                    "hole: thread {b}'s batch {last} survived, but thread {a} kept only \
                     {} of the {committed_before} batches acknowledged before it started",
                    prefixes[a]
                ));
            }
        }
    }
    for (t, (state, seq)) in states.into_iter().enumerate() {
        expected.keys[t] = state;
        expected.seq[t] = seq;
    }
    Ok(prefixes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holes_and_lost_writes_are_caught() {
        let mut log = ThreadLog::default();
        log.start(1);
        log.ack(0, 2, false);
        log.start(3);
        log.ack(1, 4, true);
        log.start(5);
        assert_eq!(log.acked_prefix(), 2);
        assert_eq!(log.acked_before(3), 1);
        assert_eq!(log.acked_before(100), 2);
        assert_eq!(log.synced, vec![1]);
    }
}
