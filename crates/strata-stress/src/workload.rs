//! What the writer threads write, derived from the seed alone so that any
//! process can regenerate any batch: keys, values, batch contents and which
//! writes sync. A quarter of the operations are merges, and some values are
//! marked for the compaction filter (see `model.rs`).
//!
//! Each thread owns its keys (`t07k00042`), so while it runs it knows their
//! values (exactly, but for what the filter may have removed) and can check
//! every read. Every batch also puts the thread's
//! sequence key (`t07~seq` = `c<cycle>i<index>`), so after a crash the
//! recovered sequence key says which prefix of the thread's batches survived,
//! and the other keys must then equal exactly that prefix's state: a batch
//! is all there or not at all.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::families::of_key;
use crate::model::{set, KeyState, MergeKind, Possible, MARK};
use crate::options::StressOptions;

/// One operation of a batch, on the thread's key numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Put {
        key: u32,
        value: Vec<u8>,
    },
    Delete {
        key: u32,
    },
    /// Deletes the thread's keys `key..end`.
    DeleteRange {
        key: u32,
        end: u32,
    },
    /// A merge operand for the key's family's operator.
    Merge {
        key: u32,
        operand: Vec<u8>,
    },
}

impl Op {
    /// The key the operation is on (the first one, for a range).
    pub fn key(&self) -> u32 {
        match self {
            Op::Put { key, .. }
            | Op::Delete { key }
            | Op::DeleteRange { key, .. }
            | Op::Merge { key, .. } => *key,
        }
    }

    /// The operation, without its bytes, for a report.
    pub fn describe(&self) -> String {
        match self {
            Op::Put { key, value } => format!("put k{key} ({} bytes)", value.len()),
            Op::Delete { key } => format!("delete k{key}"),
            Op::DeleteRange { key, end } => format!("delete_range k{key}..k{end}"),
            Op::Merge { key, operand } => format!("merge k{key} ({} bytes)", operand.len()),
        }
    }
}

/// A batch as a thread writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub ops: Vec<Op>,
    pub sync: bool,
}

impl Batch {
    /// How many merge operands the batch holds.
    pub fn merges(&self) -> u64 {
        self.ops
            .iter()
            .filter(|op| matches!(op, Op::Merge { .. }))
            .count() as u64
    }
}

/// The parameters every process of a run derives the same way.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    pub seed: u64,
    pub threads: usize,
    pub keys_per_thread: u32,
    /// Share of batches written with `sync`.
    pub sync_ratio: f64,
    /// Column families the keys are spread over (see `families.rs`).
    pub families: usize,
    /// Each family's merge operator, by family index.
    pub merge_kinds: [MergeKind; 3],
}

pub fn key(thread: usize, n: u32) -> Vec<u8> {
    format!("t{thread:02}k{n:05}").into_bytes()
}

/// Every key of `thread` (its own and its sequence key) starts with this.
pub fn thread_prefix(thread: usize) -> Vec<u8> {
    format!("t{thread:02}").into_bytes()
}

pub fn seq_key(thread: usize) -> Vec<u8> {
    format!("t{thread:02}~seq").into_bytes()
}

pub fn seq_value(cycle: u64, index: u64) -> Vec<u8> {
    format!("c{cycle}i{index}").into_bytes()
}

/// `(cycle, index)` from a sequence key's value.
pub fn parse_seq(value: &[u8]) -> Option<(u64, u64)> {
    let s = std::str::from_utf8(value).ok()?.strip_prefix('c')?;
    let (cycle, index) = s.split_once('i')?;
    Some((cycle.parse().ok()?, index.parse().ok()?))
}

/// A key's number from its bytes, if it is one of `thread`'s keys.
pub fn parse_key(thread: usize, key: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(key).ok()?;
    s.strip_prefix(&format!("t{thread:02}k"))?.parse().ok()
}

impl Workload {
    /// The workload of `threads` writer threads under `opts`.
    pub fn new(seed: u64, threads: usize, opts: &StressOptions) -> Workload {
        Workload {
            seed,
            threads,
            keys_per_thread: 200,
            sync_ratio: opts.sync_ratio,
            families: crate::families::used(opts.disable_wal),
            merge_kinds: opts.merge_kinds,
        }
    }

    /// The merge operator of key number `n`'s family.
    pub fn merge_kind(&self, n: u32) -> MergeKind {
        self.merge_kinds[of_key(n, self.families)]
    }

    /// Batch `index` of `thread` in `cycle`.
    pub fn batch(&self, cycle: u64, thread: usize, index: u64) -> Batch {
        let mix = self
            .seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(cycle.wrapping_mul(0xBF58_476D_1CE4_E5B9))
            .wrapping_add((thread as u64).wrapping_mul(0x94D0_49BB_1331_11EB))
            .wrapping_add(index);
        let mut rng = SmallRng::seed_from_u64(mix);
        let len = rng.gen_range(1..=4);
        // Every value and operand names its batch, so a reader can tell
        // where any value it sees came from (the intruder checks that).
        let origin = format!("c{cycle}t{thread}i{index}-");
        let ops = (0..len)
            .map(|_| {
                let key = rng.gen_range(0..self.keys_per_thread);
                if rng.gen_bool(0.03) {
                    // A range of the thread's own keys: its end stays below
                    // the sequence key, which sorts after every key number.
                    let end = key + rng.gen_range(1..=16);
                    return Op::DeleteRange {
                        key,
                        end: end.min(self.keys_per_thread),
                    };
                }
                match rng.gen_range(0..100) {
                    0..=14 => Op::Delete { key },
                    15..=39 => Op::Merge {
                        key,
                        operand: operand(self.merge_kind(key), &origin, &mut rng),
                    },
                    _ => Op::Put {
                        key,
                        value: value(&origin, index, &mut rng),
                    },
                }
            })
            .collect();
        Batch {
            ops,
            sync: rng.gen_bool(self.sync_ratio),
        }
    }

    /// Merge operands in the first `batches` batches of `thread` in `cycle`.
    pub fn merges_in(&self, cycle: u64, thread: usize, batches: usize) -> u64 {
        (0..batches as u64)
            .map(|i| self.batch(cycle, thread, i).merges())
            .sum()
    }

    /// Applies `batch` to a thread's state.
    pub fn apply(&self, state: &mut KeyState, batch: &Batch) {
        for op in &batch.ops {
            match op {
                Op::Put { key, value } => set(state, *key, Possible::of(value.clone())),
                Op::Delete { key } => {
                    state.remove(key);
                }
                Op::DeleteRange { key, end } => state.retain(|k, _| k < key || k >= end),
                Op::Merge { key, operand } => {
                    let now = state.get(key).cloned().unwrap_or_else(Possible::absent);
                    set(state, *key, now.merged(self.merge_kind(*key), operand));
                }
            }
        }
    }
}

/// A put's value: mostly small, sometimes one that spans WAL blocks; some
/// marked for the compaction filter.
fn value(origin: &str, index: u64, rng: &mut SmallRng) -> Vec<u8> {
    let filler = if rng.gen_bool(0.02) {
        rng.gen_range(4_000..40_000)
    } else {
        rng.gen_range(0..200)
    };
    let mut v = if rng.gen_bool(0.12) {
        MARK.to_vec()
    } else {
        Vec::new()
    };
    v.extend_from_slice(origin.as_bytes());
    v.extend((0..filler).map(|i| b'a' + ((index as usize + i) % 26) as u8));
    v
}

/// A merge operand for `kind`: for sums, mostly small numbers, some near
/// the top (the sum wraps) and some of a wrong size (they count as 0);
/// for the others, the batch's origin and a number, some marked. No operand
/// holds a `,`, so appended values split back into them.
fn operand(kind: MergeKind, origin: &str, rng: &mut SmallRng) -> Vec<u8> {
    if kind == MergeKind::UInt64Add {
        return match rng.gen_range(0..100) {
            0..=4 => b"bad".to_vec(),
            5..=9 => (u64::MAX - rng.gen_range(0..1_000u64))
                .to_le_bytes()
                .to_vec(),
            _ => rng.gen_range(1..=1_000u64).to_le_bytes().to_vec(),
        };
    }
    let mark: &[u8] = if rng.gen_bool(0.1) { MARK } else { b"" };
    [
        mark,
        origin.as_bytes(),
        format!("m{}", rng.gen_range(0..1_000)).as_bytes(),
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_reproducible_and_keys_parse_back() {
        let w = Workload {
            seed: 7,
            threads: 2,
            keys_per_thread: 50,
            sync_ratio: 0.5,
            families: 3,
            merge_kinds: MergeKind::for_families(7),
        };
        assert_eq!(w.batch(3, 1, 99), w.batch(3, 1, 99));
        assert_ne!(w.batch(3, 1, 99), w.batch(3, 1, 100));
        assert_eq!(parse_seq(&seq_value(12, 345)), Some((12, 345)));
        assert_eq!(parse_key(3, &key(3, 42)), Some(42));
        assert_eq!(parse_key(3, &key(4, 42)), None);
        assert_eq!(parse_key(3, &seq_key(3)), None);
        assert!(key(3, 0).starts_with(&thread_prefix(3)));
        assert!(seq_key(3).starts_with(&thread_prefix(3)));
    }
}
