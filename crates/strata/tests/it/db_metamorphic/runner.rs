//! Runs a sequence on a real database under one option set, comparing every
//! result with the model's as it goes, so a failure stops at the first wrong
//! result with the database still in the state that produced it.

use std::collections::HashMap;
use std::fmt;
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::SeedableRng;
use strata::cache::Cache;
use strata::fs::SimFs;
use strata::merge::StringAppendOperator;
use strata::{
    CfOptions, ColumnFamily, Db, DbIterator, DbOptions, Error, ReadOptions, Snapshot, WriteBatch,
    WriteOptions,
};

use super::model::Model;
use super::ops::{BatchWrite, IterStep, Key, Op, Shutdown, WriteFlags, FAMILIES};
use super::options::Knobs;
use super::{concurrent, render};

/// A result that differs from the model's, with what it takes to reproduce it.
#[derive(Debug)]
pub struct Mismatch {
    pub option_set: usize,
    pub op_index: usize,
    /// The op, printed (or the final check after the last op).
    pub op: String,
    pub expected: String,
    pub got: String,
    /// The options in effect from each op index on (the first at 0).
    pub history: Vec<(usize, Knobs)>,
    /// Events worth knowing, such as refused opens.
    pub notes: Vec<String>,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "option set {} op {}: {}\n  expected: {}\n  got:      {}",
            self.option_set, self.op_index, self.op, self.expected, self.got
        )?;
        for note in &self.notes {
            writeln!(f, "  note: {note}")?;
        }
        let mut earlier: Option<&Knobs> = None;
        for (from, knobs) in &self.history {
            match earlier {
                None => writeln!(f, "  options of set {}: {knobs:?}", self.option_set)?,
                Some(e) => writeln!(f, "  reopen at op {from}: {}", knobs.changes_from(e))?,
            }
            earlier = Some(knobs);
        }
        Ok(())
    }
}

/// An open iterator and the snapshot it reads at, kept alive by it even when
/// the sequence releases the snapshot first.
struct LiveIter {
    iter: DbIterator,
    _snapshot: Option<Arc<Snapshot>>,
}

struct Runner {
    option_set: usize,
    fs: SimFs,
    db: Option<Db>,
    /// The handles of the families, by index (0: the default family).
    families: Vec<ColumnFamily>,
    knobs: Knobs,
    cache: Option<Arc<dyn Cache>>,
    snapshots: HashMap<usize, Arc<Snapshot>>,
    iterators: HashMap<usize, LiveIter>,
    history: Vec<(usize, Knobs)>,
    notes: Vec<String>,
    /// The model, kept in step: the concurrent op needs the values before it.
    model: Model,
}

fn rendered<T>(r: strata::Result<T>) -> String {
    match r {
        Ok(_) => render::OK.into(),
        Err(e) => format!("error: {e}"),
    }
}

/// The families' names, by index.
const FAMILY_NAMES: [&str; FAMILIES] = ["default", "a", "b"];

fn write_options(flags: WriteFlags) -> WriteOptions {
    WriteOptions {
        sync: flags.sync,
        disable_wal: flags.disable_wal,
        no_slowdown: false,
    }
}

fn bound(b: &Bound<Key>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(&k.0),
        Bound::Excluded(k) => Bound::Excluded(&k.0),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl Runner {
    fn db(&self) -> &Db {
        self.db
            .as_ref()
            .expect("the database is open between operations")
    }

    /// Read options at `snapshot`, or `None` when the id is not live.
    fn read_options(&self, snapshot: Option<usize>) -> Option<ReadOptions> {
        let snapshot = match snapshot {
            None => None,
            Some(id) => Some(Snapshot::clone(self.snapshots.get(&id)?)),
        };
        Some(ReadOptions {
            snapshot,
            ..ReadOptions::default()
        })
    }

    fn cf(&self, index: usize) -> &ColumnFamily {
        &self.families[index]
    }

    /// Opens the database with every family (creating the others the first
    /// time), each with the run's column family options.
    fn open(&mut self) -> strata::Result<Db> {
        let options = DbOptions {
            create_missing_column_families: true,
            merge_operator: Some(Arc::new(StringAppendOperator::new(b",".to_vec()))),
            ..self.knobs.db_options(&self.fs, self.cache.clone())
        };
        let cf_options = options.cf_options();
        let db = Db::open_cf(
            Path::new("/db"),
            options,
            FAMILY_NAMES[1..].iter().map(|n| (*n, cf_options.clone())),
        )?;
        self.families = FAMILY_NAMES
            .iter()
            .map(|n| db.cf_handle(n).expect("every family is open"))
            .collect();
        Ok(db)
    }

    fn get(&self, cf: usize, key: &Key, snapshot: Option<usize>) -> String {
        let Some(ro) = self.read_options(snapshot) else {
            return render::ABSENT.into();
        };
        let got = self.db().get_cf_opt(self.cf(cf), &ro, &key.0);
        render::get(
            got.as_ref()
                .map(|v| v.as_deref())
                .map_err(|e| e.to_string()),
        )
    }

    fn apply(&mut self, op_index: usize, op: &Op) -> String {
        match op {
            Op::Put {
                cf,
                key,
                value,
                flags,
            } => {
                let mut batch = WriteBatch::new();
                batch.put_cf(self.cf(*cf), &key.0, &value.0).expect("put");
                rendered(self.db().write(&write_options(*flags), batch))
            }
            Op::Merge {
                cf,
                key,
                value,
                flags,
            } => {
                let mut batch = WriteBatch::new();
                batch
                    .merge_cf(self.cf(*cf), &key.0, &value.0)
                    .expect("merge");
                rendered(self.db().write(&write_options(*flags), batch))
            }
            Op::Delete { cf, key, flags } => {
                let mut batch = WriteBatch::new();
                batch.delete_cf(self.cf(*cf), &key.0).expect("delete");
                rendered(self.db().write(&write_options(*flags), batch))
            }
            Op::DeleteRange {
                cf,
                begin,
                end,
                flags,
            } => {
                let mut batch = WriteBatch::new();
                batch
                    .delete_range_cf(self.cf(*cf), &begin.0, &end.0)
                    .expect("delete_range");
                rendered(self.db().write(&write_options(*flags), batch))
            }
            Op::Batch { entries, flags } => {
                let mut batch = WriteBatch::new();
                for (cf, key, write) in entries {
                    let cf = self.cf(*cf);
                    match write {
                        BatchWrite::Put(v) => batch.put_cf(cf, &key.0, &v.0).expect("batch put"),
                        BatchWrite::Delete => batch.delete_cf(cf, &key.0).expect("batch delete"),
                        BatchWrite::DeleteRange(end) => batch
                            .delete_range_cf(cf, &key.0, &end.0)
                            .expect("batch delete_range"),
                    }
                }
                rendered(self.db().write(&write_options(*flags), batch))
            }
            Op::Get { cf, key, snapshot } => self.get(*cf, key, *snapshot),
            Op::MultiGet { keys, snapshot } => self.multi_get(keys, *snapshot),
            Op::NewSnapshot { id } => {
                let snapshot = Arc::new(self.db().snapshot());
                self.snapshots.insert(*id, snapshot);
                render::OK.into()
            }
            Op::ReleaseSnapshot { id } => match self.snapshots.remove(id) {
                Some(_) => render::OK.into(),
                None => render::ABSENT.into(),
            },
            Op::NewIter {
                id,
                cf,
                snapshot,
                lower,
                upper,
                fill_cache,
            } => {
                let Some(ro) = self.read_options(*snapshot) else {
                    return render::ABSENT.into();
                };
                let ro = ReadOptions {
                    iterate_lower_bound: lower.as_ref().map(|k| k.0.clone()),
                    iterate_upper_bound: upper.as_ref().map(|k| k.0.clone()),
                    fill_cache: *fill_cache,
                    ..ro
                };
                let iter = self.db().iter_cf_opt(self.cf(*cf), &ro);
                let snapshot = snapshot.and_then(|s| self.snapshots.get(&s).cloned());
                self.iterators.insert(
                    *id,
                    LiveIter {
                        iter,
                        _snapshot: snapshot,
                    },
                );
                render::OK.into()
            }
            Op::IterStep { id, step } => match self.iterators.get_mut(id) {
                Some(live) => iter_step(&mut live.iter, step),
                None => render::ABSENT.into(),
            },
            Op::CloseIter { id } => match self.iterators.remove(id) {
                Some(_) => render::OK.into(),
                None => render::ABSENT.into(),
            },
            Op::Range {
                cf,
                snapshot,
                lower,
                upper,
                ends,
            } => self.range(*cf, *snapshot, lower, upper, *ends),
            Op::Flush { cf } => rendered(self.db().flush_cf(self.cf(*cf))),
            Op::CompactRange { cf, begin, end } => rendered(self.db().compact_range_cf(
                self.cf(*cf),
                begin.as_ref().map(|k| k.0.as_slice()),
                end.as_ref().map(|k| k.0.as_slice()),
            )),
            Op::RecreateFamily { cf } => self.recreate_family(*cf),
            Op::WaitForCompaction => rendered(self.db().wait_for_compaction()),
            Op::Concurrent {
                writes,
                flush_every,
                reads,
            } => {
                let windows = reads
                    .iter()
                    .map(|k| (k.0.clone(), self.model.window(k, writes)))
                    .collect();
                concurrent::run(
                    self.db(),
                    writes,
                    *flush_every,
                    reads,
                    &windows,
                    write_options,
                )
            }
            Op::Reopen {
                shutdown,
                options_seed,
            } => self.reopen(op_index, *shutdown, Some(*options_seed)),
        }
    }

    /// Drops family `cf` and creates it again with the same name and
    /// options.
    fn recreate_family(&mut self, cf: usize) -> String {
        let old = self.cf(cf).clone();
        if let Err(e) = self.db().drop_column_family(&old) {
            return format!("drop error: {e}");
        }
        let options = CfOptions {
            merge_operator: Some(Arc::new(StringAppendOperator::new(b",".to_vec()))),
            ..self
                .knobs
                .db_options(&self.fs, self.cache.clone())
                .cf_options()
        };
        match self.db().create_column_family(old.name(), options) {
            Ok(new) => {
                self.families[cf] = new;
                render::OK.into()
            }
            Err(e) => format!("create error: {e}"),
        }
    }

    fn multi_get(&self, keys: &[(usize, Key)], snapshot: Option<usize>) -> String {
        let Some(ro) = self.read_options(snapshot) else {
            // One result per key, as the model renders an unknown snapshot.
            return vec![render::ABSENT; keys.len()].join(" ");
        };
        let found = match keys.first() {
            Some((cf, _)) if keys.iter().all(|(f, _)| f == cf) => {
                let keys: Vec<&[u8]> = keys.iter().map(|(_, k)| k.0.as_slice()).collect();
                self.db().multi_get_cf(self.cf(*cf), &ro, &keys)
            }
            _ => {
                let requests: Vec<(&ColumnFamily, &[u8])> = keys
                    .iter()
                    .map(|(cf, k)| (self.cf(*cf), k.0.as_slice()))
                    .collect();
                self.db().multi_get_cfs(&ro, &requests)
            }
        };
        let results: Vec<String> = found
            .iter()
            .map(|r| render::get(r.as_ref().map(|v| v.as_deref()).map_err(|e| e.to_string())))
            .collect();
        results.join(" ")
    }

    /// Drains `Db::range` from both ends as `ends` says, front items first.
    fn range(
        &self,
        cf: usize,
        snapshot: Option<usize>,
        lower: &Bound<Key>,
        upper: &Bound<Key>,
        ends: u64,
    ) -> String {
        let Some(ro) = self.read_options(snapshot) else {
            return render::ABSENT.into();
        };
        let mut range = self
            .db()
            .range_cf_opt(self.cf(cf), &ro, (bound(lower), bound(upper)));
        let (mut front, mut back) = (Vec::new(), Vec::new());
        for i in 0.. {
            let from_front = ends.rotate_right(i % 64) & 1 == 1;
            let (item, side) = if from_front {
                (range.next(), &mut front)
            } else {
                (range.next_back(), &mut back)
            };
            match item {
                Some(Ok((k, v))) => side.push(render::entry(&k, &v)),
                Some(Err(e)) => {
                    side.push(format!("error: {e}"));
                    break;
                }
                None => break,
            }
        }
        back.reverse();
        front.extend(back);
        render::list(&front)
    }

    /// Ends every snapshot and iterator, shuts the database down as told and
    /// opens it again with the reopen's options (`None`: the same options).
    /// An open refused because `num_levels` went below the levels holding
    /// data is retried with the previous count: the engine may refuse, it
    /// must not lose data.
    fn reopen(&mut self, op_index: usize, shutdown: Shutdown, options_seed: Option<u64>) -> String {
        self.iterators.clear();
        self.snapshots.clear();
        let db = self.db.take().expect("open");
        let closed = match shutdown {
            Shutdown::Close => db.close(),
            Shutdown::Drop => {
                drop(db);
                Ok(())
            }
        };
        if let Err(e) = closed {
            return format!("close error: {e}");
        }
        let previous = self.knobs.clone();
        if let (Some(options_seed), true) = (options_seed, self.option_set != 0) {
            let mut rng = SmallRng::seed_from_u64(options_seed ^ self.option_set as u64);
            self.knobs = previous.reopen(&mut rng);
            if self.knobs.cache != previous.cache || options_seed % 2 == 0 {
                self.cache = self.knobs.cache.build(self.knobs.table.block_size);
            }
        }
        let db = match self.open() {
            Err(Error::InvalidArgument {
                field: "num_levels",
                reason,
            }) => {
                self.notes.push(format!(
                    "op {op_index}: open with num_levels {} refused ({reason}); reopened with {}",
                    self.knobs.compaction.num_levels, previous.compaction.num_levels
                ));
                self.knobs.compaction.num_levels = previous.compaction.num_levels;
                self.knobs.compaction.compression_per_level =
                    previous.compaction.compression_per_level.clone();
                self.open()
            }
            other => other,
        };
        match db {
            Ok(db) => {
                self.db = Some(db);
                if self.history.last().map(|(_, k)| k) != Some(&self.knobs) {
                    self.history.push((op_index, self.knobs.clone()));
                }
                render::OK.into()
            }
            Err(e) => format!("open error: {e}"),
        }
    }
}

impl Runner {
    fn mismatch(self, op_index: usize, op: String, expected: String, got: String) -> Box<Mismatch> {
        Box::new(Mismatch {
            option_set: self.option_set,
            op_index,
            op,
            expected,
            got,
            history: self.history,
            notes: self.notes,
        })
    }
}

fn iter_step(iter: &mut DbIterator, step: &IterStep) -> String {
    match step {
        IterStep::SeekToFirst => iter.seek_to_first(),
        IterStep::SeekToLast => iter.seek_to_last(),
        IterStep::Seek(k) => iter.seek(&k.0),
        IterStep::SeekForPrev(k) => iter.seek_for_prev(&k.0),
        IterStep::Next | IterStep::Prev if !iter.valid() => {
            return render::NOT_STEPPED.into();
        }
        IterStep::Next => iter.next(),
        IterStep::Prev => iter.prev(),
    }
    let position = match (iter.key(), iter.value()) {
        (Some(key), Some(value)) => Ok(Some((key, value))),
        _ => iter.status().map(|()| None).map_err(|e| e.to_string()),
    };
    render::position(position)
}

/// Runs `ops` under `knobs` on a fresh simulated file system, checking each
/// result against `expected`.
pub fn run(
    seed: u64,
    option_set: usize,
    knobs: &Knobs,
    ops: &[Op],
    expected: &[String],
) -> Result<(), Box<Mismatch>> {
    let mut runner = Runner {
        option_set,
        fs: SimFs::new(seed),
        db: None,
        families: Vec::new(),
        knobs: knobs.clone(),
        cache: knobs.cache.build(knobs.table.block_size),
        snapshots: HashMap::new(),
        iterators: HashMap::new(),
        history: vec![(0, knobs.clone())],
        notes: Vec::new(),
        model: Model::default(),
    };
    runner.db = match runner.open() {
        Ok(db) => Some(db),
        Err(e) => {
            panic!("seed {seed} option set {option_set}: the first open failed: {e}\n{knobs:?}")
        }
    };
    for (op_index, (op, expected)) in ops.iter().zip(expected).enumerate() {
        let got = runner.apply(op_index, op);
        runner.model.apply(op);
        if got != *expected {
            return Err(runner.mismatch(op_index, format!("{op:?}"), expected.clone(), got));
        }
    }
    // Everything acknowledged must survive a last clean close: reopen with
    // the same options and compare every entry.
    let reopened = runner.reopen(ops.len(), Shutdown::Close, None);
    let (expected, got) = if reopened == render::OK {
        let (mut expected, mut got) = (Vec::new(), Vec::new());
        for cf in 0..FAMILIES {
            let all = Op::Range {
                cf,
                snapshot: None,
                lower: Bound::Unbounded,
                upper: Bound::Unbounded,
                ends: u64::MAX,
            };
            expected.push(runner.model.apply(&all));
            got.push(runner.apply(ops.len(), &all));
        }
        (expected.join(" | "), got.join(" | "))
    } else {
        (render::OK.into(), reopened)
    };
    if got != expected {
        let what = "after the last op: close, reopen, full scan".to_string();
        return Err(runner.mismatch(ops.len(), what, expected, got));
    }
    let closed = runner.db.take().expect("open").close();
    if let Err(e) = closed {
        let what = "the final close".to_string();
        return Err(runner.mismatch(
            ops.len(),
            what,
            render::OK.into(),
            format!("close error: {e}"),
        ));
    }
    Ok(())
}
