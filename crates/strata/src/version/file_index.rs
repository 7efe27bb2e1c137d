//! Finding the file of a sorted level (L1 and below) that may hold a key.
//!
//! A point read, a level iterator's seek and a compaction's overlap query each
//! binary-search a level's files by their largest key. With thousands of small
//! files that search is a real share of a read: every step compares two byte
//! strings through a length check and a `memcmp`. The key-prefix cache keeps,
//! per level, the first 8 bytes of each file's largest user key as a
//! big-endian `u64` (short keys padded with zeros). Bytewise order makes that
//! prefix monotone: `a <= b` implies `prefix(a) <= prefix(b)`, so a file whose
//! prefix is below the probe's ends before the probe and one whose prefix is
//! above it ends after. Two integer binary searches bound the run of files
//! that share the probe's prefix, and only inside that run (usually zero or
//! one file) do full compares decide.
//!
//! Reverse bytewise order makes the prefix antitone instead, so the index
//! holds its bitwise complement, which is monotone again. Under an
//! application's comparator nothing is known of prefixes, and every step
//! compares whole keys.
//!
//! Invariant: `prefixes[i] == key_prefix(user_key(files[i].largest))` (its
//! complement under reverse bytewise order) for the files the index was
//! built from, in the same order; `order` is the order they are sorted in.

use std::sync::Arc;

use crate::key::user_key;
use crate::key_order::KeyComparator;
use crate::version::FileMetaData;

/// How a level's files are searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileSearch {
    /// Integer compares over the key-prefix cache first, full compares only
    /// among files whose largest key shares the probe's prefix (the
    /// built-in orders only; others compare whole keys).
    #[default]
    KeyPrefix,
    /// Full key compares at every step of the binary search.
    Full,
}

/// The first 8 bytes of `key` as a big-endian integer, zero-padded.
#[inline]
pub fn key_prefix(key: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    let n = key.len().min(8);
    bytes[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(bytes)
}

/// `key_prefix(key)`, complemented under reverse bytewise order so that it
/// grows with the key in either built-in order.
#[inline]
fn ordered_prefix(key: &[u8], order: &KeyComparator) -> u64 {
    match order {
        KeyComparator::ReverseBytewise => !key_prefix(key),
        _ => key_prefix(key),
    }
}

/// The key-prefix cache of one level, built with the level.
#[derive(Debug, Clone, Default)]
pub struct FileIndex {
    /// `key_prefix` of each file's largest user key (complemented under
    /// reverse bytewise order); empty when the level is searched with full
    /// compares.
    prefixes: Vec<u64>,
    /// The order of the files' keys.
    order: KeyComparator,
}

impl FileIndex {
    /// The index of `files` (sorted in `order`, non-overlapping) for
    /// `search`.
    pub fn build(
        files: &[Arc<FileMetaData>],
        search: FileSearch,
        order: &KeyComparator,
    ) -> FileIndex {
        let prefixes = match (search, order) {
            (FileSearch::KeyPrefix, KeyComparator::Bytewise | KeyComparator::ReverseBytewise) => {
                files
                    .iter()
                    .map(|f| ordered_prefix(user_key(&f.largest), order))
                    .collect()
            }
            _ => Vec::new(),
        };
        FileIndex {
            prefixes,
            order: order.clone(),
        }
    }

    /// The range of `files` (the ones this index was built from) where the
    /// first file for which `ends_before_probe` is false can lie, given that
    /// the probe's user key starts with `probe` bytes. `ends_before_probe`
    /// must be false for a file whose largest user key is above the probe and
    /// true for one whose largest user key is below it.
    #[inline]
    fn candidates(&self, files_len: usize, probe: &[u8]) -> (usize, usize) {
        if self.prefixes.len() != files_len {
            return (0, files_len);
        }
        let p = ordered_prefix(probe, &self.order);
        let lo = self.prefixes.partition_point(|&f| f < p);
        let hi = lo + self.prefixes[lo..].partition_point(|&f| f == p);
        (lo, hi)
    }

    /// The first file of `files` that does not end before `key` (by user
    /// key, an exclusive range-tombstone end counting as before): the only
    /// file of a sorted level that may hold `key`, if its smallest key is at
    /// or below it. `files.len()` when every file ends before `key`.
    pub fn find_file(&self, files: &[Arc<FileMetaData>], key: &[u8]) -> usize {
        let (lo, hi) = self.candidates(files.len(), key);
        lo + files[lo..hi].partition_point(|f| f.ends_before(key, &self.order))
    }

    /// The first file of `files` whose largest internal key is at or above
    /// the internal key `target` (a level iterator's seek).
    pub fn seek_file(&self, files: &[Arc<FileMetaData>], target: &[u8]) -> usize {
        let (lo, hi) = self.candidates(files.len(), user_key(target));
        lo + files[lo..hi].partition_point(|f| {
            self.order.compare_internal(&f.largest, target) == std::cmp::Ordering::Less
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueType};
    use proptest::prelude::*;

    fn file(number: u64, lo: &[u8], hi: &[u8]) -> Arc<FileMetaData> {
        Arc::new(FileMetaData {
            number,
            file_size: 1,
            smallest: internal_key(lo, 5, ValueType::Put),
            largest: internal_key(hi, 5, ValueType::Put),
            smallest_seqno: 5,
            largest_seqno: 5,
            blob_files: Vec::new(),
            global_seqno: None,
        })
    }

    #[test]
    fn prefix_is_monotone_in_bytewise_order() {
        assert_eq!(key_prefix(b""), 0);
        assert_eq!(key_prefix(b"\x01"), 1 << 56);
        assert!(key_prefix(b"ab") <= key_prefix(b"ab\0"));
        assert!(key_prefix(b"abcdefgh") == key_prefix(b"abcdefghzz"));
        assert!(key_prefix(b"abcdefg") < key_prefix(b"abcdefgh"));
    }

    /// Files with distinct boundaries drawn from `keys`, sorted in `order`,
    /// cut into consecutive pairs.
    fn level(mut keys: Vec<Vec<u8>>, order: &KeyComparator) -> Vec<Arc<FileMetaData>> {
        keys.sort_by(|a, b| order.compare_user(a, b));
        keys.dedup();
        keys.chunks_exact(2)
            .enumerate()
            .map(|(i, pair)| file(i as u64, &pair[0], &pair[1]))
            .collect()
    }

    proptest! {
        /// The prefix search finds what a full binary search finds, for keys
        /// that share long prefixes (the ties the fallback must break), in
        /// both built-in orders.
        #[test]
        fn prefix_search_matches_full_search(
            keys in prop::collection::vec(
                prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', 0xff]), 0..12),
                0..40,
            ),
            probes in prop::collection::vec(
                prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', 0xff]), 0..12),
                1..20,
            ),
        ) {
            for order in [KeyComparator::Bytewise, KeyComparator::ReverseBytewise] {
                let files = level(keys.clone(), &order);
                let fast = FileIndex::build(&files, FileSearch::KeyPrefix, &order);
                prop_assert_eq!(fast.prefixes.len(), files.len());
                let full = FileIndex::build(&files, FileSearch::Full, &order);
                for probe in &probes {
                    let expect = files.partition_point(|f| f.ends_before(probe, &order));
                    prop_assert_eq!(fast.find_file(&files, probe), expect);
                    prop_assert_eq!(full.find_file(&files, probe), expect);
                    for seq in [0, 5, 9] {
                        let target = internal_key(probe, seq, ValueType::Put);
                        let expect = files.partition_point(|f| {
                            order.compare_internal(&f.largest, &target) == std::cmp::Ordering::Less
                        });
                        prop_assert_eq!(fast.seek_file(&files, &target), expect);
                        prop_assert_eq!(full.seek_file(&files, &target), expect);
                    }
                }
            }
        }
    }

    #[test]
    fn an_index_built_for_other_files_falls_back_to_full_search() {
        let files = vec![file(1, b"a", b"b"), file(2, b"c", b"d")];
        let stale = FileIndex::build(&files[..1], FileSearch::KeyPrefix, &KeyComparator::Bytewise);
        assert_eq!(stale.find_file(&files, b"c"), 1);
        assert_eq!(stale.find_file(&files, b"e"), 2);
    }
}
