//! A version: the set of live table files, by level, at one point in time.
//! Immutable once built; a new version is built by applying an edit.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use crate::error::Result;
use crate::key_order::KeyComparator;
use crate::range_del::FragmentedRangeTombstones;
use crate::version::blob_files::BlobFileMeta;
use crate::version::edit::{FileMetaData, VersionEdit};
use crate::version::file_index::{FileIndex, FileSearch};

/// Number of levels (RocksDB's default `num_levels`).
pub const NUM_LEVELS: usize = 7;

/// The live files. L0 files may overlap and are ordered newest first (by largest
/// sequence number, then file number); files of L1 and below do not overlap and
/// are ordered by smallest key.
#[derive(Debug, Clone, Default)]
pub struct Version {
    levels: [Vec<Arc<FileMetaData>>; NUM_LEVELS],
    /// How sorted levels are searched; versions applied from this one inherit it.
    search: FileSearch,
    /// Per level, the search index of `levels` (built with them; empty at L0,
    /// which is never binary-searched).
    indexes: [FileIndex; NUM_LEVELS],
    /// The range tombstones of every file, merged, once an iterator asked
    /// (the files never change, so neither does the answer).
    range_tombstones: OnceLock<Arc<FragmentedRangeTombstones>>,
    /// The family's key order, which sorted levels are in; versions applied
    /// from this one inherit it.
    order: KeyComparator,
    /// The blob files some table of this version references, and only
    /// those (see `blob_files.rs`).
    blob_files: BTreeMap<u64, BlobFileMeta>,
}

impl Version {
    /// An empty version of a family in `order`, whose sorted levels are
    /// searched with `search`.
    pub fn empty(search: FileSearch, order: KeyComparator) -> Version {
        Version {
            search,
            order,
            ..Version::default()
        }
    }

    /// The family's key order.
    pub fn order(&self) -> &KeyComparator {
        &self.order
    }

    /// How this version's sorted levels are searched.
    pub fn file_search(&self) -> FileSearch {
        self.search
    }

    /// This version with its sorted levels searched with `search`.
    pub fn with_file_search(&self, search: FileSearch) -> Version {
        let mut version = Version {
            levels: self.levels.clone(),
            search,
            order: self.order.clone(),
            blob_files: self.blob_files.clone(),
            ..Version::default()
        };
        for level in 1..NUM_LEVELS {
            version.indexes[level] = FileIndex::build(&version.levels[level], search, &self.order);
        }
        version
    }

    /// The first file of sorted `level` (1 or deeper) that does not end
    /// before `user_key`: the only one that may hold it, if it starts at or
    /// below it; the level's file count when none.
    pub fn find_file(&self, level: usize, user_key: &[u8]) -> usize {
        match self.indexes.get(level) {
            Some(index) => index.find_file(self.files(level), user_key),
            None => 0,
        }
    }

    /// Files of sorted `level` (1 or deeper) overlapping the user-key range
    /// `[lo, hi]`, in order.
    pub fn overlapping_files(&self, level: usize, lo: &[u8], hi: &[u8]) -> Vec<Arc<FileMetaData>> {
        let files = self.files(level);
        files[self.find_file(level, lo).min(files.len())..]
            .iter()
            .take_while(|f| f.starts_at_or_before(hi, &self.order))
            .cloned()
            .collect()
    }

    /// The files of `level` in search order.
    pub fn files(&self, level: usize) -> &[Arc<FileMetaData>] {
        self.levels.get(level).map_or(&[], |v| v.as_slice())
    }

    /// Number of files at `level`.
    pub fn num_files(&self, level: usize) -> usize {
        self.files(level).len()
    }

    /// Total bytes of the files at `level`.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.files(level).iter().map(|f| f.file_size).sum()
    }

    /// The linked blob files, by number.
    pub fn blob_files(&self) -> &BTreeMap<u64, BlobFileMeta> {
        &self.blob_files
    }

    /// Every live file with its level.
    pub fn all_files(&self) -> impl Iterator<Item = (usize, &Arc<FileMetaData>)> {
        self.levels
            .iter()
            .enumerate()
            .flat_map(|(level, files)| files.iter().map(move |f| (level, f)))
    }

    /// The merged range tombstones of every file, computed by `load` (which
    /// reads each file's) on first use and kept. An error is returned and
    /// not kept, so a later call tries again.
    pub fn range_tombstones<E>(
        &self,
        load: impl FnOnce(&Version) -> Result<Arc<FragmentedRangeTombstones>, E>,
    ) -> Result<Arc<FragmentedRangeTombstones>, E> {
        if let Some(t) = self.range_tombstones.get() {
            return Ok(t.clone());
        }
        let loaded = load(self)?;
        Ok(self.range_tombstones.get_or_init(|| loaded).clone())
    }

    /// Files that may hold `user_key`, in the order a point read must consult
    /// them: every overlapping L0 file newest first, then at most one per level.
    pub fn files_for_key<'a>(
        &'a self,
        key: &'a [u8],
    ) -> impl Iterator<Item = (usize, &'a Arc<FileMetaData>)> + 'a {
        let l0 = self.levels[0]
            .iter()
            .filter(move |f| {
                f.starts_at_or_before(key, &self.order) && !f.ends_before(key, &self.order)
            })
            .map(|f| (0, f));
        let deeper = (1..NUM_LEVELS).filter_map(move |level| {
            // First file that may hold key or a larger one. A file whose
            // range ends at a tombstone's sentinel `key` holds nothing of
            // `key`: the next file may start at it.
            let i = self.find_file(level, key);
            self.levels[level]
                .get(i)
                .filter(|f| f.starts_at_or_before(key, &self.order))
                .map(|f| (level, f))
        });
        l0.chain(deeper)
    }

    /// The version that results from applying `edit` to this one.
    pub fn apply(&self, edit: &VersionEdit) -> Result<Version, InvalidEdit> {
        let mut levels: Vec<BTreeMap<u64, Arc<FileMetaData>>> = self
            .levels
            .iter()
            .map(|files| files.iter().map(|f| (f.number, f.clone())).collect())
            .collect();
        for &(level, number) in &edit.deleted_files {
            let slot = levels
                .get_mut(level as usize)
                .ok_or_else(|| bad_level(level))?;
            if slot.remove(&number).is_none() {
                return Err(InvalidEdit(format!(
                    "edit deletes file #{number} at L{level}, which is not there"
                )));
            }
        }
        for (level, meta) in &edit.new_files {
            if self.order.compare_internal(&meta.smallest, &meta.largest) == Ordering::Greater {
                return Err(InvalidEdit(format!(
                    "file #{}: smallest key sorts after largest key in {} order",
                    meta.number,
                    self.order.name()
                )));
            }
            let slot = levels
                .get_mut(*level as usize)
                .ok_or_else(|| bad_level(*level))?;
            slot.insert(meta.number, Arc::new(meta.clone()));
        }
        let mut version = Version::empty(self.search, self.order.clone());
        let order = &self.order;
        for (level, files) in levels.into_iter().enumerate() {
            let mut files: Vec<_> = files.into_values().collect();
            if level == 0 {
                files.sort_by_key(|f| std::cmp::Reverse((f.largest_seqno, f.number)));
            } else {
                files.sort_by(|a, b| order.compare_internal(&a.smallest, &b.smallest));
                if let Some(pair) = files.windows(2).find(|w| {
                    order.compare_internal(&w[0].largest, &w[1].smallest) != Ordering::Less
                }) {
                    return Err(InvalidEdit(format!(
                        "files #{} and #{} overlap at L{level}",
                        pair[0].number, pair[1].number
                    )));
                }
            }
            if level > 0 {
                version.indexes[level] = FileIndex::build(&files, self.search, order);
            }
            version.levels[level] = files;
        }
        version.blob_files = self.apply_blob_files(edit, &version)?;
        Ok(version)
    }

    /// The blob files of `next` (this version with `edit`'s tables applied):
    /// this version's, plus the edit's additions, with its garbage counted,
    /// less those no table of `next` references. A table referencing a blob
    /// file that is not there makes the edit invalid.
    fn apply_blob_files(
        &self,
        edit: &VersionEdit,
        next: &Version,
    ) -> Result<BTreeMap<u64, BlobFileMeta>, InvalidEdit> {
        let mut blob_files = self.blob_files.clone();
        for addition in &edit.blob_file_additions {
            let meta = BlobFileMeta {
                addition: *addition,
                ..BlobFileMeta::default()
            };
            if blob_files.insert(addition.number, meta).is_some() {
                return Err(InvalidEdit(format!(
                    "edit adds blob file #{}, which is already there",
                    addition.number
                )));
            }
        }
        for garbage in &edit.blob_file_garbage {
            let meta = blob_files.get_mut(&garbage.number).ok_or_else(|| {
                InvalidEdit(format!(
                    "edit counts garbage in blob file #{}, which is not there",
                    garbage.number
                ))
            })?;
            meta.add_garbage(garbage).map_err(InvalidEdit)?;
        }
        let mut referenced = std::collections::BTreeSet::new();
        for (_, table) in next.all_files() {
            for &number in &table.blob_files {
                if !blob_files.contains_key(&number) {
                    return Err(InvalidEdit(format!(
                        "table #{} references blob file #{number}, which is not there",
                        table.number
                    )));
                }
                referenced.insert(number);
            }
        }
        blob_files.retain(|number, _| referenced.contains(number));
        Ok(blob_files)
    }
}

fn bad_level(level: u32) -> InvalidEdit {
    InvalidEdit(format!(
        "level {level} is beyond the {NUM_LEVELS} levels of this build"
    ))
}

/// Why an edit cannot apply to a version. The caller knows where the edit
/// came from (a MANIFEST record at some offset, or an edit about to be
/// written) and turns this into an error naming that place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidEdit(pub String);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueType};

    fn meta(number: u64, lo: &[u8], hi: &[u8], seq: u64) -> FileMetaData {
        FileMetaData {
            number,
            file_size: 100,
            smallest: internal_key(lo, seq, ValueType::Put),
            largest: internal_key(hi, seq, ValueType::Put),
            smallest_seqno: seq,
            largest_seqno: seq,
            blob_files: Vec::new(),
            global_seqno: None,
        }
    }

    #[test]
    fn apply_orders_l0_newest_first_and_finds_keys() {
        let mut edit = VersionEdit::new();
        edit.add_file(0, meta(1, b"a", b"m", 10));
        edit.add_file(0, meta(2, b"k", b"z", 20));
        edit.add_file(1, meta(4, b"n", b"p", 1));
        edit.add_file(1, meta(3, b"a", b"c", 1));
        let v = Version::default().apply(&edit).unwrap();
        assert_eq!(
            v.files(0).iter().map(|f| f.number).collect::<Vec<_>>(),
            vec![2, 1]
        );
        assert_eq!(
            v.files(1).iter().map(|f| f.number).collect::<Vec<_>>(),
            vec![3, 4]
        );
        let hits = |k: &[u8]| {
            v.files_for_key(k)
                .map(|(l, f)| (l, f.number))
                .collect::<Vec<_>>()
        };
        assert_eq!(hits(b"l"), vec![(0, 2), (0, 1)]);
        assert_eq!(hits(b"b"), vec![(0, 1), (1, 3)]);
        assert_eq!(hits(b"o"), vec![(0, 2), (1, 4)]);
        assert_eq!(hits(b"d"), vec![(0, 1)]);

        let mut del = VersionEdit::new();
        del.delete_file(0, 1);
        let v2 = v.apply(&del).unwrap();
        assert_eq!(v2.num_files(0), 1);
        assert!(v2.apply(&del).is_err(), "double delete");
    }

    /// A file whose smallest key sorts after its largest in the family's
    /// order does not apply; the same keys are fine in the other order.
    #[test]
    fn file_bounds_are_checked_in_the_familys_order() {
        let mut edit = VersionEdit::new();
        edit.add_file(1, meta(1, b"m", b"a", 1));
        let err = Version::default().apply(&edit).unwrap_err();
        assert!(err.0.contains("sorts after"), "{err:?}");
        let reverse = Version::empty(FileSearch::default(), KeyComparator::ReverseBytewise);
        let v = reverse.apply(&edit).unwrap();
        assert_eq!(v.files_for_key(b"c").count(), 1);
        assert_eq!(v.files_for_key(b"z").count(), 0);
        // Same user key: newer sorts first, so @3 .. @9 is out of order.
        let mut same_key = VersionEdit::new();
        let mut m = meta(2, b"k", b"k", 3);
        m.largest = internal_key(b"k", 9, ValueType::Put);
        same_key.add_file(0, m);
        assert!(Version::default().apply(&same_key).is_err());
    }

    #[test]
    fn overlap_below_l0_is_corruption() {
        let mut edit = VersionEdit::new();
        edit.add_file(1, meta(1, b"a", b"m", 1));
        edit.add_file(1, meta(2, b"k", b"z", 1));
        let err = Version::default().apply(&edit).unwrap_err();
        assert!(err.0.contains("overlap"), "{err:?}");
    }
}
