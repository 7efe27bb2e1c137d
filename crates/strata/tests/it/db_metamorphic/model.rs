//! The reference: the same operations on a `BTreeMap`, producing the results
//! every database run must reproduce. Each snapshot keeps its own copy of the
//! map; each iterator keeps the entries it can see and a position among them.
//!
//! Results are strings so that a mismatch prints as text; [`super::render`]
//! formats them identically for the model and the database.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;

use super::ops::{BatchWrite, IterStep, Key, Op, Value, WriteFlags, FAMILIES};
use super::render;

type Map = BTreeMap<Vec<u8>, Vec<u8>>;

/// What an iterator sees: its entries in key order and where it stands.
struct ModelIter {
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    pos: Option<usize>,
}

impl ModelIter {
    fn step(&mut self, step: &IterStep) {
        let len = self.entries.len();
        self.pos = match step {
            IterStep::SeekToFirst => (len > 0).then_some(0),
            IterStep::SeekToLast => len.checked_sub(1),
            IterStep::Seek(Key(t)) => {
                let i = self.entries.partition_point(|(k, _)| k < t);
                (i < len).then_some(i)
            }
            IterStep::SeekForPrev(Key(t)) => {
                self.entries.partition_point(|(k, _)| k <= t).checked_sub(1)
            }
            IterStep::Next => self.pos.and_then(|i| (i + 1 < len).then_some(i + 1)),
            IterStep::Prev => self.pos.and_then(|i| i.checked_sub(1)),
        };
    }

    fn current(&self) -> Option<(&[u8], &[u8])> {
        self.pos
            .map(|i| (self.entries[i].0.as_slice(), self.entries[i].1.as_slice()))
    }
}

/// One map per column family.
type Families = Vec<Map>;

pub struct Model {
    latest: Families,
    snapshots: HashMap<usize, Families>,
    iterators: HashMap<usize, ModelIter>,
}

impl Default for Model {
    fn default() -> Self {
        Model {
            latest: vec![Map::new(); FAMILIES],
            snapshots: HashMap::new(),
            iterators: HashMap::new(),
        }
    }
}

/// Whether `key` lies within the two bounds.
pub fn within(key: &[u8], lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    let above = match lower {
        Bound::Included(l) => key >= l,
        Bound::Excluded(l) => key > l,
        Bound::Unbounded => true,
    };
    let below = match upper {
        Bound::Included(u) => key <= u,
        Bound::Excluded(u) => key < u,
        Bound::Unbounded => true,
    };
    above && below
}

fn as_bound(b: &Bound<Key>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(&k.0),
        Bound::Excluded(k) => Bound::Excluded(&k.0),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl Model {
    /// The map a read at `snapshot` sees, or `None` for an unknown snapshot.
    fn view(&self, cf: usize, snapshot: Option<usize>) -> Option<&Map> {
        match snapshot {
            None => self.latest.get(cf),
            Some(id) => self.snapshots.get(&id)?.get(cf),
        }
    }

    fn get(&self, cf: usize, key: &Key, snapshot: Option<usize>) -> String {
        match self.view(cf, snapshot) {
            Some(map) => render::get(Ok(map.get(&key.0).map(Vec::as_slice))),
            None => render::ABSENT.into(),
        }
    }

    /// Every value `key` holds while `writes` apply in order, from the
    /// current one on (`None`: absent).
    pub fn window(
        &self,
        key: &Key,
        writes: &[(Key, Option<Value>, WriteFlags)],
    ) -> Vec<Option<Vec<u8>>> {
        let mut values = vec![self.latest[0].get(&key.0).cloned()];
        values.extend(
            writes
                .iter()
                .filter(|(k, _, _)| k == key)
                .map(|(_, v, _)| v.as_ref().map(|v| v.0.clone())),
        );
        values
    }

    /// Applies `op` and returns its result.
    pub fn apply(&mut self, op: &Op) -> String {
        match op {
            Op::Put { cf, key, value, .. } => {
                self.latest[*cf].insert(key.0.clone(), value.0.clone());
                render::OK.into()
            }
            Op::Delete { cf, key, .. } => {
                self.latest[*cf].remove(&key.0);
                render::OK.into()
            }
            Op::DeleteRange { cf, begin, end, .. } => {
                delete_range(&mut self.latest[*cf], begin, end);
                render::OK.into()
            }
            Op::Merge { cf, key, value, .. } => {
                let merged = match self.latest[*cf].get(&key.0) {
                    Some(old) => [old.as_slice(), b",", &value.0].concat(),
                    None => value.0.clone(),
                };
                self.latest[*cf].insert(key.0.clone(), merged);
                render::OK.into()
            }
            Op::Batch { entries, .. } => {
                for (cf, key, write) in entries {
                    let map = &mut self.latest[*cf];
                    match write {
                        BatchWrite::Put(v) => {
                            map.insert(key.0.clone(), v.0.clone());
                        }
                        BatchWrite::Delete => {
                            map.remove(&key.0);
                        }
                        BatchWrite::DeleteRange(end) => delete_range(map, key, end),
                    }
                }
                render::OK.into()
            }
            Op::Get { cf, key, snapshot } => self.get(*cf, key, *snapshot),
            Op::MultiGet { keys, snapshot } => {
                let results: Vec<String> = keys
                    .iter()
                    .map(|(cf, k)| self.get(*cf, k, *snapshot))
                    .collect();
                results.join(" ")
            }
            Op::NewSnapshot { id } => {
                self.snapshots.insert(*id, self.latest.clone());
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
                ..
            } => {
                let Some(map) = self.view(*cf, *snapshot) else {
                    return render::ABSENT.into();
                };
                let lower = lower
                    .as_ref()
                    .map_or(Bound::Unbounded, |k| Bound::Included(&k.0[..]));
                let upper = upper
                    .as_ref()
                    .map_or(Bound::Unbounded, |k| Bound::Excluded(&k.0[..]));
                let entries = map
                    .iter()
                    .filter(|(k, _)| within(k, lower, upper))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                self.iterators.insert(*id, ModelIter { entries, pos: None });
                render::OK.into()
            }
            Op::IterStep { id, step } => {
                let Some(it) = self.iterators.get_mut(id) else {
                    return render::ABSENT.into();
                };
                if matches!(step, IterStep::Next | IterStep::Prev) && it.pos.is_none() {
                    return render::NOT_STEPPED.into();
                }
                it.step(step);
                render::position(Ok(it.current()))
            }
            Op::CloseIter { id } => match self.iterators.remove(id) {
                Some(_) => render::OK.into(),
                None => render::ABSENT.into(),
            },
            Op::Range {
                cf,
                snapshot,
                lower,
                upper,
                ..
            } => {
                let Some(map) = self.view(*cf, *snapshot) else {
                    return render::ABSENT.into();
                };
                let (lower, upper) = (as_bound(lower), as_bound(upper));
                let items: Vec<String> = map
                    .iter()
                    .filter(|(k, _)| within(k, lower, upper))
                    .map(|(k, v)| render::entry(k, v))
                    .collect();
                render::list(&items)
            }
            Op::Concurrent { writes, .. } => {
                for (key, value, _) in writes {
                    match value {
                        Some(v) => self.latest[0].insert(key.0.clone(), v.0.clone()),
                        None => self.latest[0].remove(&key.0),
                    };
                }
                render::OK.into()
            }
            Op::Flush { .. } | Op::CompactRange { .. } | Op::WaitForCompaction => render::OK.into(),
            Op::RecreateFamily { cf } => {
                // The new family is empty at every sequence number, so at
                // every snapshot too; open iterators keep what they saw.
                if let Some(map) = self.latest.get_mut(*cf) {
                    map.clear();
                }
                for families in self.snapshots.values_mut() {
                    if let Some(map) = families.get_mut(*cf) {
                        map.clear();
                    }
                }
                render::OK.into()
            }
            Op::Reopen { .. } => {
                self.snapshots.clear();
                self.iterators.clear();
                render::OK.into()
            }
        }
    }
}

/// Removes every key in `[begin, end)`.
fn delete_range(map: &mut Map, begin: &Key, end: &Key) {
    let doomed: Vec<Vec<u8>> = map
        .range(begin.0.clone()..end.0.clone())
        .map(|(k, _)| k.clone())
        .collect();
    for k in doomed {
        map.remove(&k);
    }
}

/// The expected result of every operation.
pub fn expected(ops: &[Op]) -> Vec<String> {
    let mut model = Model::default();
    ops.iter().map(|op| model.apply(op)).collect()
}
