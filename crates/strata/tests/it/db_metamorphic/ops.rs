//! The operations of a metamorphic run and their generator.
//!
//! The generator draws one sequence from a seed, knowing nothing of the
//! options it will run under. It tracks which snapshots and iterators are
//! live so that it refers to them sensibly, but every runner also tolerates
//! references to ids that are not live (it records "absent"): the minimizer
//! removes operations freely and must not turn a sequence into nonsense.

use std::collections::VecDeque;
use std::fmt;
use std::ops::Bound;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// How a write goes through the commit pipeline.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct WriteFlags {
    pub sync: bool,
    pub disable_wal: bool,
}

impl fmt::Debug for WriteFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.sync, self.disable_wal) {
            (false, false) => write!(f, "wal"),
            (true, false) => write!(f, "sync"),
            (false, true) => write!(f, "no_wal"),
            (true, true) => write!(f, "sync+no_wal"),
        }
    }
}

/// One step of a live iterator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IterStep {
    SeekToFirst,
    SeekToLast,
    Seek(Key),
    SeekForPrev(Key),
    Next,
    Prev,
}

/// How the database handle goes away before a reopen: both must persist
/// every acknowledged write, `disable_wal` ones included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shutdown {
    Close,
    Drop,
}

/// A user key, printed as text (every generated key is ASCII except the
/// zero byte some seek targets end with).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key(pub Vec<u8>);

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.0))
    }
}

/// A value: a prefix unique to the writing operation, then filler. Printed
/// short, since values run to kilobytes.
#[derive(Clone, PartialEq, Eq)]
pub struct Value(pub Vec<u8>);

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&describe_value(&self.0))
    }
}

/// A short, exact-enough rendering of a value: its unique prefix, its length
/// and a hash of the whole, so a value damaged in the middle still differs.
pub fn describe_value(v: &[u8]) -> String {
    let prefix_len = v.iter().position(|&b| b == b'.').unwrap_or(v.len());
    let prefix = String::from_utf8_lossy(&v[..prefix_len.min(16)]);
    let hash = v.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    format!("{prefix}(len {}, #{:04x})", v.len(), hash & 0xffff)
}

/// One write of a batch, in the family and at the key its entry names.
#[derive(Debug, Clone)]
pub enum BatchWrite {
    Put(Value),
    Delete,
    /// Deletes `[key, end)`.
    DeleteRange(Key),
}

/// One operation. Snapshot and iterator ids are generator-assigned numbers.
#[derive(Debug, Clone)]
pub enum Op {
    Put {
        cf: usize,
        key: Key,
        value: Value,
        flags: WriteFlags,
    },
    Delete {
        cf: usize,
        key: Key,
        flags: WriteFlags,
    },
    /// `delete_range_cf(begin, end)`, `begin < end`.
    DeleteRange {
        cf: usize,
        begin: Key,
        end: Key,
        flags: WriteFlags,
    },
    /// A merge operand; every family appends operands with "," (RocksDB's
    /// `StringAppendOperator`).
    Merge {
        cf: usize,
        key: Key,
        value: Value,
        flags: WriteFlags,
    },
    /// Entries apply in order, each in its family; the batch is atomic
    /// across families.
    Batch {
        entries: Vec<(usize, Key, BatchWrite)>,
        flags: WriteFlags,
    },
    Get {
        cf: usize,
        key: Key,
        snapshot: Option<usize>,
    },
    /// Keys with their families: one family (`multi_get_cf`) or several
    /// (`multi_get_cfs`).
    MultiGet {
        keys: Vec<(usize, Key)>,
        snapshot: Option<usize>,
    },
    NewSnapshot {
        id: usize,
    },
    ReleaseSnapshot {
        id: usize,
    },
    /// An iterator at a snapshot (or at the state now), within
    /// `iterate_lower_bound` / `iterate_upper_bound`. It stays open across
    /// writes, flushes and compactions until closed or the reopen.
    NewIter {
        id: usize,
        cf: usize,
        snapshot: Option<usize>,
        lower: Option<Key>,
        upper: Option<Key>,
        fill_cache: bool,
    },
    IterStep {
        id: usize,
        step: IterStep,
    },
    CloseIter {
        id: usize,
    },
    /// `Db::range`, drained from both ends: bit `i` of `ends` says whether
    /// item `i` comes from the front (1) or the back (0).
    Range {
        cf: usize,
        snapshot: Option<usize>,
        lower: Bound<Key>,
        upper: Bound<Key>,
        ends: u64,
    },
    Flush {
        cf: usize,
    },
    CompactRange {
        cf: usize,
        begin: Option<Key>,
        end: Option<Key>,
    },
    /// Drops family `cf` (never the default one) and creates it again under
    /// the same name: empty, at every snapshot; iterators already open on
    /// the dropped family keep reading it.
    RecreateFamily {
        cf: usize,
    },
    WaitForCompaction,
    /// Writes on a second thread (flushing every `flush_every` writes, so
    /// flushes and compactions run meanwhile) while this thread reads `reads`
    /// at the latest state and at snapshots it takes. The only op whose reads
    /// race with writes: each read may return any value its key held during
    /// the window, and reads at one snapshot must agree with each other.
    Concurrent {
        writes: Vec<(Key, Option<Value>, WriteFlags)>,
        flush_every: usize,
        reads: Vec<Key>,
    },
    /// Shut down and open again; every snapshot and iterator ends here.
    /// `options_seed` draws the option changes of this reopen.
    Reopen {
        shutdown: Shutdown,
        options_seed: u64,
    },
}

/// Draws keys from a per-seed key space: small spaces overwrite and delete
/// the same keys often, large ones spread over many tables.
struct Keys {
    count: u32,
}

impl Keys {
    fn key(&self, rng: &mut SmallRng) -> Key {
        match rng.gen_range(0..100) {
            // The empty key sorts first and is easy to mishandle.
            0 => Key(Vec::new()),
            // Longer keys sharing a prefix with a plain key, for the block
            // format's prefix compression and for seeks between keys.
            1..=5 => Key(format!(
                "k{:04}.{}",
                rng.gen_range(0..self.count),
                rng.gen_range(0..3)
            )
            .into_bytes()),
            _ => Key(format!("k{:04}", rng.gen_range(0..self.count)).into_bytes()),
        }
    }

    /// A range to delete, `begin < end`: mostly a few neighbouring keys,
    /// sometimes a wide one (bounds drawn like seek targets).
    fn range(&self, rng: &mut SmallRng) -> (Key, Key) {
        if rng.gen_bool(0.8) {
            let n = rng.gen_range(0..self.count);
            let begin = format!("k{n:04}").into_bytes();
            let mut end = format!("k{:04}", n + rng.gen_range(1..8)).into_bytes();
            if rng.gen_bool(0.2) {
                // Ends between keys: `k0012.1` keeps `k0012.2`.
                end = format!("k{n:04}.{}", rng.gen_range(0..3)).into_bytes();
            }
            return (Key(begin), Key(end));
        }
        let (a, b) = (self.target(rng), self.target(rng));
        match a.cmp(&b) {
            std::cmp::Ordering::Less => (a, b),
            std::cmp::Ordering::Greater => (b, a),
            std::cmp::Ordering::Equal => {
                let mut end = a.0.clone();
                end.push(0);
                (a, Key(end))
            }
        }
    }

    /// A seek target or bound: a key, a key just after one, or a prefix.
    fn target(&self, rng: &mut SmallRng) -> Key {
        let Key(mut key) = self.key(rng);
        match rng.gen_range(0..10) {
            0 => key.push(0),
            1 => key.truncate(rng.gen_range(0..=key.len())),
            2 => key = b"l".to_vec(),
            _ => {}
        }
        Key(key)
    }
}

fn value(rng: &mut SmallRng, op_index: usize) -> Value {
    let len = match rng.gen_range(0..100) {
        0..=69 => rng.gen_range(0..64),
        70..=94 => rng.gen_range(64..1024),
        // Large values fill small memtables quickly, so flushes happen.
        _ => rng.gen_range(1024..16 << 10),
    };
    let mut v = format!("v{op_index}.").into_bytes();
    let fill = b'a' + (op_index % 26) as u8;
    v.resize(v.len().max(len), fill);
    Value(v)
}

fn write_flags(rng: &mut SmallRng) -> WriteFlags {
    WriteFlags {
        sync: rng.gen_bool(0.1),
        disable_wal: rng.gen_bool(0.3),
    }
}

/// Both keys, the smaller first.
fn ordered(a: Option<Key>, b: Option<Key>) -> (Option<Key>, Option<Key>) {
    match (a, b) {
        (Some(a), Some(b)) if b < a => (Some(b), Some(a)),
        pair => pair,
    }
}

fn bound(rng: &mut SmallRng, keys: &Keys) -> Bound<Key> {
    match rng.gen_range(0..3) {
        0 => Bound::Unbounded,
        1 => Bound::Included(keys.target(rng)),
        _ => Bound::Excluded(keys.target(rng)),
    }
}

fn bound_key(b: &Bound<Key>) -> Option<&Key> {
    match b {
        Bound::Included(k) | Bound::Excluded(k) => Some(k),
        Bound::Unbounded => None,
    }
}

/// The generator's view of what is live, so it refers to real ids.
#[derive(Default)]
struct Live {
    next_id: usize,
    snapshots: Vec<usize>,
    iterators: Vec<usize>,
    /// Ops already decided, emitted before any new draw.
    pending: VecDeque<Op>,
}

impl Live {
    fn new_id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id
    }

    fn pick_snapshot(&self, rng: &mut SmallRng) -> Option<usize> {
        if self.snapshots.is_empty() || rng.gen_bool(0.6) {
            None
        } else {
            Some(self.snapshots[rng.gen_range(0..self.snapshots.len())])
        }
    }
}

/// The sequence of `len` operations for `seed`.
pub fn generate(seed: u64, len: usize) -> Vec<Op> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let keys = Keys {
        count: [8, 50, 300][rng.gen_range(0..3)],
    };
    let mut live = Live::default();
    let mut ops = Vec::with_capacity(len);
    for i in 0..len {
        let op = match live.pending.pop_front() {
            Some(op) => op,
            None => next_op(&mut rng, &keys, &mut live, i),
        };
        ops.push(op);
    }
    ops
}

/// A burst of large writes that fills memtables of any configured size, so
/// memtables switch on size and flush in the background while writes go on
/// (explicit flushes switch them too, but never with writes after the
/// switch). Half the bursts end with waiting for that background work and a
/// reopen: a `disable_wal` write that landed in the new memtable must
/// survive the close even though the flush finished after it.
fn burst(rng: &mut SmallRng, keys: &Keys, live: &mut Live, i: usize) -> Op {
    let count = rng.gen_range(40..120);
    for j in 1..count {
        let mut v = value(rng, i + j);
        v.0.resize(rng.gen_range(1024..4096), b'.');
        live.pending.push_back(Op::Put {
            cf: family(rng),
            key: keys.key(rng),
            value: v,
            flags: write_flags(rng),
        });
    }
    if rng.gen_bool(0.5) {
        live.snapshots.clear();
        live.iterators.clear();
        live.pending.push_back(Op::WaitForCompaction);
        live.pending.push_back(Op::Reopen {
            shutdown: if rng.gen_bool(0.5) {
                Shutdown::Close
            } else {
                Shutdown::Drop
            },
            options_seed: rng.gen(),
        });
    }
    Op::Put {
        cf: family(rng),
        key: keys.key(rng),
        value: value(rng, i),
        flags: write_flags(rng),
    }
}

/// The column families a sequence uses: the default one and two more.
pub const FAMILIES: usize = 3;

/// A family index: the default family half of the time.
fn family(rng: &mut SmallRng) -> usize {
    match rng.gen_range(0..10) {
        0..=4 => 0,
        5..=7 => 1,
        _ => 2,
    }
}

fn new_iter(rng: &mut SmallRng, keys: &Keys, live: &mut Live) -> Op {
    let id = live.new_id();
    live.iterators.push(id);
    let lower = rng.gen_bool(0.3).then(|| keys.target(rng));
    let upper = rng.gen_bool(0.3).then(|| keys.target(rng));
    let (lower, upper) = ordered(lower, upper);
    Op::NewIter {
        id,
        cf: family(rng),
        snapshot: live.pick_snapshot(rng),
        lower,
        upper,
        fill_cache: rng.gen_bool(0.8),
    }
}

fn next_op(rng: &mut SmallRng, keys: &Keys, live: &mut Live, i: usize) -> Op {
    match rng.gen_range(0..100) {
        0..=19 => Op::Put {
            cf: family(rng),
            key: keys.key(rng),
            value: value(rng, i),
            flags: write_flags(rng),
        },
        20..=21 => {
            let (begin, end) = keys.range(rng);
            Op::DeleteRange {
                cf: family(rng),
                begin,
                end,
                flags: write_flags(rng),
            }
        }
        22..=25 => Op::Merge {
            cf: family(rng),
            key: keys.key(rng),
            value: value(rng, i),
            flags: write_flags(rng),
        },
        26..=28 => Op::Delete {
            cf: family(rng),
            key: keys.key(rng),
            flags: write_flags(rng),
        },
        29..=35 => {
            let entries = (0..rng.gen_range(1..10))
                .map(|_| match rng.gen_range(0..10) {
                    0..=6 => (family(rng), keys.key(rng), BatchWrite::Put(value(rng, i))),
                    7..=8 => (family(rng), keys.key(rng), BatchWrite::Delete),
                    _ => {
                        let (begin, end) = keys.range(rng);
                        (family(rng), begin, BatchWrite::DeleteRange(end))
                    }
                })
                .collect();
            Op::Batch {
                entries,
                flags: write_flags(rng),
            }
        }
        36..=47 => Op::Get {
            cf: family(rng),
            key: keys.key(rng),
            snapshot: live.pick_snapshot(rng),
        },
        48..=50 => {
            let cf = family(rng);
            let picked: Vec<Key> = (0..rng.gen_range(1..8)).map(|_| keys.key(rng)).collect();
            let snapshot = live.pick_snapshot(rng);
            // Every batch of an even count spreads its keys over the
            // families, decided from what was drawn already so that the
            // random stream, and so every recorded seed's run, is unchanged.
            let spread = picked.len() % 2 == 0;
            let keys = picked
                .into_iter()
                .enumerate()
                .map(|(i, k)| (if spread { (cf + i) % FAMILIES } else { cf }, k))
                .collect();
            Op::MultiGet { keys, snapshot }
        }
        51..=53 if live.snapshots.len() < 5 => {
            let id = live.new_id();
            live.snapshots.push(id);
            Op::NewSnapshot { id }
        }
        51..=55 if !live.snapshots.is_empty() => {
            let id = live
                .snapshots
                .remove(rng.gen_range(0..live.snapshots.len()));
            Op::ReleaseSnapshot { id }
        }
        // A few iterators at once, so several pin different versions while
        // flushes and compactions replace tables under them.
        51..=58 if live.iterators.len() < 4 => new_iter(rng, keys, live),
        51..=79 if !live.iterators.is_empty() => {
            let id = live.iterators[rng.gen_range(0..live.iterators.len())];
            if rng.gen_bool(0.08) {
                live.iterators.retain(|&it| it != id);
                return Op::CloseIter { id };
            }
            let step = match rng.gen_range(0..20) {
                0..=1 => IterStep::SeekToFirst,
                2..=3 => IterStep::SeekToLast,
                4..=6 => IterStep::Seek(keys.target(rng)),
                7..=8 => IterStep::SeekForPrev(keys.target(rng)),
                9..=15 => IterStep::Next,
                _ => IterStep::Prev,
            };
            Op::IterStep { id, step }
        }
        51..=79 => new_iter(rng, keys, live),
        80..=82 => {
            let (mut lower, mut upper) = (bound(rng, keys), bound(rng, keys));
            if let (Some(l), Some(u)) = (bound_key(&lower), bound_key(&upper)) {
                if u < l {
                    // Keep the inclusive/exclusive kinds on their sides.
                    let (l, u) = (u.clone(), l.clone());
                    lower = lower.map(|_| l);
                    upper = upper.map(|_| u);
                }
            }
            Op::Range {
                cf: family(rng),
                snapshot: live.pick_snapshot(rng),
                lower,
                upper,
                ends: rng.gen(),
            }
        }
        83..=88 => Op::Flush { cf: family(rng) },
        89 => Op::RecreateFamily {
            cf: rng.gen_range(1..FAMILIES),
        },
        90..=93 => {
            let (begin, end) = if rng.gen_bool(0.3) {
                (None, None)
            } else {
                let begin = rng.gen_bool(0.8).then(|| keys.target(rng));
                let end = rng.gen_bool(0.8).then(|| keys.target(rng));
                ordered(begin, end)
            };
            Op::CompactRange {
                cf: family(rng),
                begin,
                end,
            }
        }
        94 if rng.gen_bool(0.5) => Op::WaitForCompaction,
        94 => burst(rng, keys, live, i),
        95 => {
            let reads: Vec<Key> = (0..rng.gen_range(1..5)).map(|_| keys.key(rng)).collect();
            let writes = (0..rng.gen_range(8..24))
                .map(|_| {
                    // Mostly the keys being read: only their new versions
                    // let a compaction drop the versions a read needs.
                    let key = if rng.gen_bool(0.7) {
                        reads[rng.gen_range(0..reads.len())].clone()
                    } else {
                        keys.key(rng)
                    };
                    (
                        key,
                        rng.gen_bool(0.8).then(|| value(rng, i)),
                        write_flags(rng),
                    )
                })
                .collect();
            Op::Concurrent {
                writes,
                flush_every: rng.gen_range(2..10),
                reads,
            }
        }
        _ => {
            live.snapshots.clear();
            live.iterators.clear();
            Op::Reopen {
                shutdown: if rng.gen_bool(0.5) {
                    Shutdown::Close
                } else {
                    Shutdown::Drop
                },
                options_seed: rng.gen(),
            }
        }
    }
}
