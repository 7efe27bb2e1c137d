//! What the writer threads write, derived from the seed alone so that any
//! process can regenerate any batch: keys, values, batch contents and which
//! writes sync.
//!
//! Each thread owns its keys (`t07k00042`), so while it runs it knows their
//! exact values and can check every read. Every batch also puts the thread's
//! sequence key (`t07~seq` = `c<cycle>i<index>`), so after a crash the
//! recovered sequence key says which prefix of the thread's batches survived,
//! and the other keys must then equal exactly that prefix's state: a batch
//! is all there or not at all.

use std::collections::BTreeMap;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// One thread's keys (by number) and their values.
pub type KeyState = BTreeMap<u32, Vec<u8>>;

/// One operation of a batch: a put, or a delete when `value` is `None`;
/// with `range_end`, a range deletion of the thread's keys `key..range_end`
/// (and `value` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    pub key: u32,
    pub value: Option<Vec<u8>>,
    pub range_end: Option<u32>,
}

/// A batch as a thread writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub ops: Vec<Op>,
    pub sync: bool,
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
        let ops = (0..len)
            .map(|_| {
                let key = rng.gen_range(0..self.keys_per_thread);
                if rng.gen_bool(0.03) {
                    // A range of the thread's own keys: its end stays below
                    // the sequence key, which sorts after every key number.
                    let end = key + rng.gen_range(1..=16);
                    return Op {
                        key,
                        value: None,
                        range_end: Some(end.min(self.keys_per_thread)),
                    };
                }
                let value = (!rng.gen_bool(0.2)).then(|| {
                    // Mostly small values; sometimes one that spans WAL blocks.
                    let filler = if rng.gen_bool(0.02) {
                        rng.gen_range(4_000..40_000)
                    } else {
                        rng.gen_range(0..200)
                    };
                    let mut v = format!("c{cycle}t{thread}i{index}-").into_bytes();
                    v.extend((0..filler).map(|i| b'a' + ((index as usize + i) % 26) as u8));
                    v
                });
                Op {
                    key,
                    value,
                    range_end: None,
                }
            })
            .collect();
        Batch {
            ops,
            sync: rng.gen_bool(self.sync_ratio),
        }
    }
}

/// Applies `batch` to a thread's state.
pub fn apply(state: &mut KeyState, batch: &Batch) {
    for op in &batch.ops {
        match (&op.value, op.range_end) {
            (_, Some(end)) => state.retain(|&k, _| k < op.key || k >= end),
            (Some(v), None) => {
                state.insert(op.key, v.clone());
            }
            (None, None) => {
                state.remove(&op.key);
            }
        }
    }
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
