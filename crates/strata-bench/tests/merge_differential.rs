//! Merges in Strata against RocksDB, in process: one seeded sequence of
//! merges (uint64add in the default family, stringappend in `lists`), puts,
//! deletes, range deletes and write batches, with flushes, compactions,
//! snapshots and reopens among them, goes to both engines, and every key's
//! value, whole scans forward and backward, and short seeks in both
//! directions must agree, now and at the snapshots.
//!
//! RocksDB's operators here are written in this file from RocksDB's
//! definitions of UInt64AddOperator and StringAppendOperator, not taken from
//! Strata, so the check covers Strata's operators as well as how its reads,
//! flushes and compactions stack, partially merge and end operand chains.
//!
//! Needs the `rocksdb` feature (a RocksDB build of 20-40 minutes):
//! `cargo test --release -p strata-bench --features rocksdb --test merge_differential -- --nocapture`
//! `MERGE_DIFFERENTIAL_SEEDS=7,8` runs other seeds.

#![cfg(feature = "rocksdb")]
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::Path;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rocksdb::{ColumnFamilyDescriptor, MergeOperands, Options, DB};
use strata::{Db, DbOptions, ReadOptions, WriteBatch, WriteOptions};

const SEEDS: [u64; 4] = [1, 2, 3, 4];
/// Random operations per seed; a reopen comes halfway.
const OPS_PER_SEED: usize = 10_000;
/// Keys per family: few enough that most keys collect many operands.
const KEYS: usize = 160;
/// The stringappend family (the default family adds numbers).
const LISTS: &str = "lists";
/// StringAppendOperator's delimiter, as `merge_operator_from_name` makes it.
const DELIMITER: u8 = b',';

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// The default family, merge operator uint64add.
    Counters,
    /// `lists`, merge operator stringappend.
    Lists,
}

const FAMILIES: [Family; 2] = [Family::Counters, Family::Lists];

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::Counters => strata::DEFAULT_COLUMN_FAMILY_NAME,
            Family::Lists => LISTS,
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put(Family, Vec<u8>, Vec<u8>),
    Merge(Family, Vec<u8>, Vec<u8>),
    Delete(Family, Vec<u8>),
    DeleteRange(Family, Vec<u8>, Vec<u8>),
    /// Writes of the four kinds above, applied atomically.
    Batch(Vec<Op>),
    Flush(Family),
    /// A manual compaction of the whole family or of `[begin, end]`.
    Compact(Family, Option<(Vec<u8>, Vec<u8>)>),
}

// ---------------------------------------------------------------------------
// RocksDB's operators, from their definitions.

/// UInt64AddOperator (RocksDB's utilities/merge_operators/uint64add.cc): the
/// existing value and every operand are decoded as fixed 64-bit
/// little-endian numbers and added with wrap-around; a missing value is 0,
/// and a value of any size but 8 bytes also counts as 0 (RocksDB logs it
/// and goes on). Associative, so RocksDB also uses it for partial merges.
fn reference_uint64add(
    _key: &[u8],
    existing: Option<&[u8]>,
    operands: &MergeOperands,
) -> Option<Vec<u8>> {
    let decode = |bytes: &[u8]| -> u64 {
        if bytes.len() != 8 {
            return 0;
        }
        bytes
            .iter()
            .rev()
            .fold(0u64, |n, &byte| (n << 8) | u64::from(byte))
    };
    let mut sum = existing.map_or(0, decode);
    for operand in operands {
        sum = sum.wrapping_add(decode(operand));
    }
    Some(sum.to_le_bytes().to_vec())
}

/// StringAppendOperator's full merge (RocksDB's
/// utilities/merge_operators/string_append/stringappend.cc): the existing
/// value, if any (an empty one counts), then each operand, a delimiter
/// between each two.
fn reference_append_full(
    _key: &[u8],
    existing: Option<&[u8]>,
    operands: &MergeOperands,
) -> Option<Vec<u8>> {
    let mut out: Option<Vec<u8>> = existing.map(<[u8]>::to_vec);
    for operand in operands {
        match &mut out {
            Some(joined) => {
                joined.push(DELIMITER);
                joined.extend_from_slice(operand);
            }
            None => out = Some(operand.to_vec()),
        }
    }
    out
}

/// Its partial merge: adjacent operands joined the same way, for compactions
/// that see no base value.
fn reference_append_partial(
    key: &[u8],
    _existing: Option<&[u8]>,
    operands: &MergeOperands,
) -> Option<Vec<u8>> {
    reference_append_full(key, None, operands)
}

// ---------------------------------------------------------------------------
// The two engines, opened alike.

/// Small memtables and levels, so that a few thousand operations flush and
/// compact on their own too.
const WRITE_BUFFER_BYTES: usize = 64 << 10;
const TARGET_FILE_BYTES: u64 = 64 << 10;
const LEVEL_BASE_BYTES: u64 = 256 << 10;
const L0_TRIGGER: usize = 4;

fn rocks_options(family: Family) -> Options {
    let mut o = Options::default();
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    o.set_write_buffer_size(WRITE_BUFFER_BYTES);
    o.set_target_file_size_base(TARGET_FILE_BYTES);
    o.set_max_bytes_for_level_base(LEVEL_BASE_BYTES);
    o.set_level_zero_file_num_compaction_trigger(L0_TRIGGER as i32);
    o.set_compression_type(rocksdb::DBCompressionType::None);
    match family {
        // The associative form: one function for full and partial merges.
        Family::Counters => {
            o.set_merge_operator_associative("UInt64AddOperator", reference_uint64add)
        }
        Family::Lists => o.set_merge_operator(
            "StringAppendOperator",
            reference_append_full,
            reference_append_partial,
        ),
    }
    o
}

fn open_rocks(dir: &Path) -> DB {
    let families = FAMILIES
        .iter()
        .map(|&f| ColumnFamilyDescriptor::new(f.name(), rocks_options(f)));
    DB::open_cf_descriptors(&rocks_options(Family::Counters), dir, families).expect("open RocksDB")
}

fn open_strata(dir: &Path) -> Db {
    let operator = |name| strata::merge_operator_from_name(name).expect("built-in operator");
    let mut options = DbOptions {
        create_if_missing: true,
        create_missing_column_families: true,
        write_buffer_size: WRITE_BUFFER_BYTES,
        merge_operator: Some(operator("uint64add")),
        ..DbOptions::default()
    };
    options.compaction.target_file_size_base = TARGET_FILE_BYTES;
    options.compaction.max_bytes_for_level_base = LEVEL_BASE_BYTES;
    options.compaction.level0_file_num_compaction_trigger = L0_TRIGGER;
    options.table.compression = strata::CompressionType::None;
    let lists = strata::CfOptions {
        write_buffer_size: WRITE_BUFFER_BYTES,
        merge_operator: Some(operator("stringappend")),
        compaction: options.compaction.clone(),
        table: options.table.clone(),
        ..strata::CfOptions::default()
    };
    Db::open_cf(dir, options, [(LISTS, lists)]).expect("open Strata")
}

/// Both databases, and what has been done and compared so far. Everything
/// but reopening works through `&self`, so that operations go on while a
/// RocksDB snapshot (which borrows its database) is held.
struct Engines {
    dir: tempfile::TempDir,
    strata: Db,
    rocks: DB,
    counts: RefCell<Counts>,
}

#[derive(Debug, Default)]
struct Counts {
    puts_and_deletes: usize,
    merges: usize,
    range_deletes: usize,
    batches: usize,
    flushes: usize,
    compactions: usize,
    reopens: usize,
    snapshots: usize,
    gets: usize,
    scanned_entries: usize,
    seeks: usize,
}

/// Reads at a snapshot of each engine taken at the same point, or now.
struct At<'a> {
    strata: Option<&'a strata::Snapshot>,
    rocks: Option<&'a rocksdb::Snapshot<'a>>,
}

const NOW: At<'static> = At {
    strata: None,
    rocks: None,
};

impl At<'_> {
    fn strata_options(&self) -> ReadOptions {
        ReadOptions {
            snapshot: self.strata.cloned(),
            ..ReadOptions::default()
        }
    }

    fn rocks_options(&self) -> rocksdb::ReadOptions {
        let mut o = rocksdb::ReadOptions::default();
        if let Some(snapshot) = self.rocks {
            o.set_snapshot(snapshot);
        }
        o
    }

    fn describe(&self) -> &'static str {
        if self.strata.is_some() {
            "at the snapshot"
        } else {
            "now"
        }
    }
}

/// One entry as both engines return it: key and value.
type Entry = (Vec<u8>, Vec<u8>);

impl Engines {
    fn open() -> Engines {
        let dir = tempfile::tempdir().expect("tempdir");
        let (strata, rocks) = (
            open_strata(&dir.path().join("strata")),
            open_rocks(&dir.path().join("rocksdb")),
        );
        Engines {
            dir,
            strata,
            rocks,
            counts: RefCell::default(),
        }
    }

    /// Closes both and opens them again: the operands come back from the
    /// WALs and tables.
    fn reopen(self) -> Engines {
        let Engines {
            dir,
            strata,
            rocks,
            counts,
        } = self;
        strata.close().expect("close Strata");
        drop(rocks);
        counts.borrow_mut().reopens += 1;
        Engines {
            strata: open_strata(&dir.path().join("strata")),
            rocks: open_rocks(&dir.path().join("rocksdb")),
            dir,
            counts,
        }
    }

    fn strata_cf(&self, family: Family) -> strata::ColumnFamily {
        self.strata.cf_handle(family.name()).expect("Strata family")
    }

    fn rocks_cf(&self, family: Family) -> &rocksdb::ColumnFamily {
        self.rocks.cf_handle(family.name()).expect("RocksDB family")
    }

    fn apply(&self, op: &Op) {
        match op {
            Op::Batch(writes) => {
                let mut strata_batch = WriteBatch::new();
                let mut rocks_batch = rocksdb::WriteBatch::default();
                for write in writes {
                    self.add_to_batches(write, &mut strata_batch, &mut rocks_batch);
                }
                self.strata
                    .write(&WriteOptions::default(), strata_batch)
                    .expect("Strata batch");
                self.rocks.write(rocks_batch).expect("RocksDB batch");
                self.counts.borrow_mut().batches += 1;
            }
            Op::Flush(family) => {
                self.strata
                    .flush_cf(&self.strata_cf(*family))
                    .expect("Strata flush");
                self.rocks
                    .flush_cf(self.rocks_cf(*family))
                    .expect("RocksDB flush");
                self.counts.borrow_mut().flushes += 1;
            }
            Op::Compact(family, range) => {
                let (begin, end) = match range {
                    Some((b, e)) => (Some(b.as_slice()), Some(e.as_slice())),
                    None => (None, None),
                };
                self.strata
                    .compact_range_cf(&self.strata_cf(*family), begin, end)
                    .expect("Strata compaction");
                self.rocks
                    .compact_range_cf(self.rocks_cf(*family), begin, end);
                self.counts.borrow_mut().compactions += 1;
            }
            // A single write is a batch of one in both engines' write paths,
            // but goes through each one's own single-write call.
            Op::Put(f, k, v) => {
                self.strata.put_cf(&self.strata_cf(*f), k, v).expect("put");
                self.rocks.put_cf(self.rocks_cf(*f), k, v).expect("put");
            }
            Op::Merge(f, k, v) => {
                self.strata
                    .merge_cf(&self.strata_cf(*f), k, v)
                    .expect("merge");
                self.rocks.merge_cf(self.rocks_cf(*f), k, v).expect("merge");
            }
            Op::Delete(f, k) => {
                self.strata
                    .delete_cf(&self.strata_cf(*f), k)
                    .expect("delete");
                self.rocks.delete_cf(self.rocks_cf(*f), k).expect("delete");
            }
            Op::DeleteRange(f, b, e) => {
                self.strata
                    .delete_range_cf(&self.strata_cf(*f), b, e)
                    .expect("delete_range");
                self.rocks
                    .delete_range_cf(self.rocks_cf(*f), b, e)
                    .expect("delete_range");
            }
        }
        self.count_writes(op);
    }

    fn count_writes(&self, op: &Op) {
        match op {
            Op::Batch(writes) => writes.iter().for_each(|w| self.count_writes(w)),
            Op::Merge(..) => self.counts.borrow_mut().merges += 1,
            Op::DeleteRange(..) => self.counts.borrow_mut().range_deletes += 1,
            Op::Put(..) | Op::Delete(..) => self.counts.borrow_mut().puts_and_deletes += 1,
            Op::Flush(_) | Op::Compact(..) => {}
        }
    }

    fn add_to_batches(&self, op: &Op, strata: &mut WriteBatch, rocks: &mut rocksdb::WriteBatch) {
        let written = match op {
            Op::Put(f, k, v) => {
                rocks.put_cf(self.rocks_cf(*f), k, v);
                strata.put_cf(&self.strata_cf(*f), k, v)
            }
            Op::Merge(f, k, v) => {
                rocks.merge_cf(self.rocks_cf(*f), k, v);
                strata.merge_cf(&self.strata_cf(*f), k, v)
            }
            Op::Delete(f, k) => {
                rocks.delete_cf(self.rocks_cf(*f), k);
                strata.delete_cf(&self.strata_cf(*f), k)
            }
            Op::DeleteRange(f, b, e) => {
                rocks.delete_range_cf(self.rocks_cf(*f), b, e);
                strata.delete_range_cf(&self.strata_cf(*f), b, e)
            }
            Op::Batch(_) | Op::Flush(_) | Op::Compact(..) => unreachable!("batches hold writes"),
        };
        written.expect("Strata batch write");
    }

    // -----------------------------------------------------------------------
    // Comparisons. `context` says where in the run, for the failure message.

    /// Every key of both families, by get.
    fn compare_gets(&self, at: &At<'_>, context: &str) {
        let (strata_read, rocks_read) = (at.strata_options(), at.rocks_options());
        for family in FAMILIES {
            let (s, r) = (self.strata_cf(family), self.rocks_cf(family));
            for i in 0..KEYS {
                let key = key(i);
                let strata = self.strata.get_cf_opt(&s, &strata_read, &key);
                let strata = strata.expect("Strata get").map(|v| v.to_vec());
                let rocks = self.rocks.get_cf_opt(r, &key, &rocks_read);
                let rocks = rocks.expect("RocksDB get");
                assert_eq!(
                    strata.as_deref().map(show),
                    rocks.as_deref().map(show),
                    "{context}: get {:?} in {} {}",
                    show(&key),
                    family.name(),
                    at.describe()
                );
            }
            self.counts.borrow_mut().gets += KEYS;
        }
    }

    /// Whole scans of both families, forward and backward.
    fn compare_scans(&self, at: &At<'_>, context: &str) {
        for family in FAMILIES {
            for forward in [true, false] {
                let strata = self.strata_entries(family, at, Walk::Whole { forward });
                let rocks = self.rocks_entries(family, at, Walk::Whole { forward });
                let direction = if forward { "forward" } else { "backward" };
                assert_entries_eq(&strata, &rocks, || {
                    format!(
                        "{context}: {direction} scan of {} {}",
                        family.name(),
                        at.describe()
                    )
                });
                self.counts.borrow_mut().scanned_entries += strata.len();
            }
        }
    }

    /// Short walks from random keys: seek and next, seek_for_prev and prev.
    fn compare_seeks(&self, rng: &mut SmallRng, at: &At<'_>, context: &str) {
        for _ in 0..8 {
            let family = FAMILIES[rng.gen_range(0..FAMILIES.len())];
            // Keys between the written ones too (a "k042" + "~" is past k042).
            let mut target = key(rng.gen_range(0..KEYS));
            if rng.gen_bool(0.3) {
                target.push(b'~');
            }
            let forward = rng.gen_bool(0.5);
            let walk = Walk::From {
                target: &target,
                forward,
                steps: 6,
            };
            let strata = self.strata_entries(family, at, walk);
            let rocks = self.rocks_entries(family, at, walk);
            assert_entries_eq(&strata, &rocks, || {
                let how = if forward {
                    "seek + next"
                } else {
                    "seek_for_prev + prev"
                };
                format!(
                    "{context}: {how} from {:?} in {} {}",
                    show(&target),
                    family.name(),
                    at.describe()
                )
            });
            self.counts.borrow_mut().seeks += 1;
        }
    }

    fn compare_all(&self, rng: &mut SmallRng, at: &At<'_>, context: &str) {
        self.compare_gets(at, context);
        self.compare_scans(at, context);
        self.compare_seeks(rng, at, context);
    }

    fn strata_entries(&self, family: Family, at: &At<'_>, walk: Walk<'_>) -> Vec<Entry> {
        let options = at.strata_options();
        walk.read(&mut self.strata.iter_cf_opt(&self.strata_cf(family), &options))
    }

    fn rocks_entries(&self, family: Family, at: &At<'_>, walk: Walk<'_>) -> Vec<Entry> {
        let cf = self.rocks_cf(family);
        walk.read(&mut self.rocks.raw_iterator_cf_opt(cf, at.rocks_options()))
    }
}

/// The cursor calls both engines' iterators have, so one walk reads both.
trait Cursor {
    /// Seeks to the first entry, or with `!forward` to the last.
    fn first(&mut self, forward: bool);
    /// Seeks to the first entry at or after `target`, or with `!forward` to
    /// the last at or before it.
    fn seek_to(&mut self, target: &[u8], forward: bool);
    fn step(&mut self, forward: bool);
    fn entry(&self) -> Option<Entry>;
    /// Fails the test on the iterator's error.
    fn check(&self);
}

/// Implements [`Cursor`] with the inherent methods both iterator types name
/// alike.
macro_rules! impl_cursor {
    ($type:ty, $engine:literal) => {
        impl Cursor for $type {
            fn first(&mut self, forward: bool) {
                if forward {
                    self.seek_to_first();
                } else {
                    self.seek_to_last();
                }
            }
            fn seek_to(&mut self, target: &[u8], forward: bool) {
                if forward {
                    self.seek(target);
                } else {
                    self.seek_for_prev(target);
                }
            }
            fn step(&mut self, forward: bool) {
                if forward {
                    self.next();
                } else {
                    self.prev();
                }
            }
            fn entry(&self) -> Option<Entry> {
                Some((self.key()?.to_vec(), self.value()?.to_vec()))
            }
            fn check(&self) {
                self.status().expect(concat!($engine, " iterator"));
            }
        }
    };
}

impl_cursor!(strata::DbIterator, "Strata");
impl_cursor!(rocksdb::DBRawIterator<'_>, "RocksDB");

/// What an iterator comparison reads.
#[derive(Clone, Copy)]
enum Walk<'a> {
    Whole {
        forward: bool,
    },
    From {
        target: &'a [u8],
        forward: bool,
        steps: usize,
    },
}

impl Walk<'_> {
    /// The entries `cursor` passes on this walk, in the order it passes them.
    fn read(self, cursor: &mut impl Cursor) -> Vec<Entry> {
        let (forward, steps) = match self {
            Walk::Whole { forward } => {
                cursor.first(forward);
                (forward, usize::MAX)
            }
            Walk::From {
                target,
                forward,
                steps,
            } => {
                cursor.seek_to(target, forward);
                (forward, steps)
            }
        };
        let mut entries = Vec::new();
        while entries.len() < steps {
            let Some(entry) = cursor.entry() else { break };
            entries.push(entry);
            cursor.step(forward);
        }
        cursor.check();
        entries
    }
}

fn assert_entries_eq(strata: &[Entry], rocks: &[Entry], context: impl Fn() -> String) {
    if strata == rocks {
        return;
    }
    let at = strata
        .iter()
        .zip(rocks)
        .position(|(s, r)| s != r)
        .unwrap_or(strata.len().min(rocks.len()));
    let mut message = format!(
        "{}: {} entries in Strata, {} in RocksDB; first difference at entry {at}:\n",
        context(),
        strata.len(),
        rocks.len()
    );
    for (name, entries) in [("Strata ", strata), ("RocksDB", rocks)] {
        let entry = entries
            .get(at)
            .map(|(k, v)| format!("{} => {}", show(k), show(v)));
        let _ = writeln!(message, "  {name}: {}", entry.as_deref().unwrap_or("(end)"));
    }
    panic!("{message}");
}

/// Bytes for a message: text as is, other bytes escaped.
fn show(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

// ---------------------------------------------------------------------------
// The random operations.

fn key(i: usize) -> Vec<u8> {
    format!("k{i:03}").into_bytes()
}

fn counter_operand(rng: &mut SmallRng) -> Vec<u8> {
    match rng.gen_range(0..100) {
        // Any other size counts as 0 (RocksDB's rule).
        0..=2 => {
            let len = [0, 1, 4, 7, 9][rng.gen_range(0..5)];
            (0..len).map(|_| rng.gen()).collect()
        }
        // Big numbers, so sums wrap around.
        3..=7 => rng.gen::<u64>().to_le_bytes().to_vec(),
        _ => rng.gen_range(0u64..1000).to_le_bytes().to_vec(),
    }
}

fn list_operand(rng: &mut SmallRng) -> Vec<u8> {
    // Empty operands and ones holding the delimiter too.
    let len = rng.gen_range(0..6);
    (0..len).map(|_| b"abcxyz,"[rng.gen_range(0..7)]).collect()
}

fn random_write(rng: &mut SmallRng) -> Op {
    let family = FAMILIES[rng.gen_range(0..FAMILIES.len())];
    let i = rng.gen_range(0..KEYS);
    let operand = |rng: &mut SmallRng| match family {
        Family::Counters => counter_operand(rng),
        Family::Lists => list_operand(rng),
    };
    match rng.gen_range(0..100) {
        0..=71 => Op::Merge(family, key(i), operand(rng)),
        // A put sets the base later merges add to (an empty value counts).
        72..=83 => Op::Put(family, key(i), operand(rng)),
        84..=95 => Op::Delete(family, key(i)),
        _ => {
            // The end is sometimes a key never written ("k042~").
            let mut end = key((i + rng.gen_range(1..20)).min(KEYS));
            if rng.gen_bool(0.3) {
                end.push(b'~');
            }
            Op::DeleteRange(family, key(i), end)
        }
    }
}

fn random_op(rng: &mut SmallRng) -> Op {
    match rng.gen_range(0..1000) {
        0..=899 => random_write(rng),
        900..=979 => Op::Batch(
            (0..rng.gen_range(2..8))
                .map(|_| random_write(rng))
                .collect(),
        ),
        980..=993 => Op::Flush(FAMILIES[rng.gen_range(0..FAMILIES.len())]),
        _ => {
            let family = FAMILIES[rng.gen_range(0..FAMILIES.len())];
            let range = rng.gen_bool(0.5).then(|| {
                let begin = rng.gen_range(0..KEYS);
                (key(begin), key(rng.gen_range(begin..KEYS)))
            });
            Op::Compact(family, range)
        }
    }
}

// ---------------------------------------------------------------------------
// The run.

/// Applies `ops` random operations, comparing the two engines every so often.
fn run_ops(engines: &Engines, rng: &mut SmallRng, seed: u64, from: usize, ops: usize) {
    for n in from..from + ops {
        let op = random_op(rng);
        engines.apply(&op);
        if n % 500 == 499 {
            let context = format!("seed {seed}, after op {n} ({op:?})");
            engines.compare_all(rng, &NOW, &context);
        } else if rng.gen_ratio(1, 50) {
            let context = format!("seed {seed}, after op {n} ({op:?})");
            engines.compare_seeks(rng, &NOW, &context);
        }
    }
}

/// A stretch of operations while a snapshot of each engine is held: reads
/// at the snapshots must still see the operands as they were, though
/// flushes and compactions ran in between and had to keep them apart.
fn run_with_snapshots(engines: &Engines, rng: &mut SmallRng, seed: u64, from: usize, ops: usize) {
    let strata_snapshot = engines.strata.snapshot();
    let rocks_snapshot = engines.rocks.snapshot();
    let at = At {
        strata: Some(&strata_snapshot),
        rocks: Some(&rocks_snapshot),
    };
    let context = format!("seed {seed}, snapshot taken after op {from}");
    engines.compare_all(rng, &at, &format!("{context}, at once"));
    run_ops(engines, rng, seed, from, ops);
    engines.compare_all(rng, &at, &format!("{context}, {ops} ops later"));
    engines.counts.borrow_mut().snapshots += 1;
}

fn run_seed(seed: u64) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut engines = Engines::open();
    let mut n = 0;
    while n < OPS_PER_SEED {
        let stretch = rng.gen_range(200..1500).min(OPS_PER_SEED - n);
        if rng.gen_bool(0.4) {
            run_with_snapshots(&engines, &mut rng, seed, n, stretch);
        } else {
            run_ops(&engines, &mut rng, seed, n, stretch);
        }
        n += stretch;
        // Halfway, and now and then: both reopen, and must read the same
        // from their WALs and tables as before.
        let halfway = n >= OPS_PER_SEED / 2 && n - stretch < OPS_PER_SEED / 2;
        if halfway || rng.gen_ratio(1, 8) {
            engines.compare_all(
                &mut rng,
                &NOW,
                &format!("seed {seed}, before reopen at op {n}"),
            );
            engines = engines.reopen();
            engines.compare_all(
                &mut rng,
                &NOW,
                &format!("seed {seed}, after reopen at op {n}"),
            );
        }
    }
    for family in FAMILIES {
        engines.apply(&Op::Compact(family, None));
    }
    engines.compare_all(&mut rng, &NOW, &format!("seed {seed}, at the end"));
    println!(
        "seed {seed}: {OPS_PER_SEED} ops, {:?}",
        engines.counts.borrow()
    );
    engines.strata.close().expect("close Strata");
}

fn seeds() -> Vec<u64> {
    match std::env::var("MERGE_DIFFERENTIAL_SEEDS") {
        Ok(list) => list
            .split(',')
            .map(|s| s.trim().parse().expect("MERGE_DIFFERENTIAL_SEEDS: numbers"))
            .collect(),
        Err(_) => SEEDS.to_vec(),
    }
}

#[test]
fn merges_match_rocksdb() {
    for seed in seeds() {
        run_seed(seed);
    }
}
