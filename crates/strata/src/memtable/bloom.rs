//! The memtable's bloom filter (RocksDB's `memtable_prefix_bloom_size_ratio`
//! and `memtable_whole_key_filtering`): prefixes and, optionally, whole user
//! keys of the memtable's entries, so point reads and prefix seeks skip a
//! memtable that cannot hold their key.
//!
//! Writers add concurrently with `fetch_or` on 64-bit words. A key's bits are
//! set before its entry is inserted into the skip list, and readers find
//! entries only through the sequence number published after the insert
//! (release/acquire), so a reader that could see an entry also sees its
//! bits: the filter never hides a visible key.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::options::PrefixExtractor;
use crate::table::filter::filter_hash;

/// Bits per cache line: a key's probes all fall in one 64-byte line.
const LINE_WORDS: usize = 8;
const PROBES: u32 = 6;
const PROBE_MULTIPLIER: u32 = 0x9E37_79B9;

/// What a memtable's filter holds and how to ask it.
#[derive(Debug)]
pub struct MemBloom {
    words: Box<[AtomicU64]>,
    num_lines: u64,
    /// Adds and asks for prefixes when set.
    prefix_extractor: Option<PrefixExtractor>,
    whole_keys: bool,
}

impl MemBloom {
    /// A filter of about `bytes` bytes (at least one line) holding prefixes
    /// under `prefix_extractor` and, with `whole_keys`, whole user keys.
    /// `None` when it would hold nothing.
    pub fn new(
        bytes: usize,
        prefix_extractor: Option<PrefixExtractor>,
        whole_keys: bool,
    ) -> Option<MemBloom> {
        if bytes == 0 || (prefix_extractor.is_none() && !whole_keys) {
            return None;
        }
        let num_lines = (bytes / (LINE_WORDS * 8)).max(1);
        let words = (0..num_lines * LINE_WORDS)
            .map(|_| AtomicU64::new(0))
            .collect();
        Some(MemBloom {
            words,
            num_lines: num_lines as u64,
            prefix_extractor,
            whole_keys,
        })
    }

    /// Bytes of memory the bit array takes.
    pub fn memory_usage(&self) -> usize {
        self.words.len() * 8
    }

    /// Records `user_key` (and its prefix). Call before the entry becomes
    /// visible.
    pub fn add(&self, user_key: &[u8]) {
        if self.whole_keys {
            self.add_hash(filter_hash(user_key));
        }
        if let Some(prefix) = self.prefix_extractor.and_then(|e| e.prefix(user_key)) {
            self.add_hash(filter_hash(prefix));
        }
    }

    /// False when `user_key` was never added; true when it may have been or
    /// the filter holds no whole keys.
    pub fn may_contain_key(&self, user_key: &[u8]) -> bool {
        !self.whole_keys || self.may_contain_hash(filter_hash(user_key))
    }

    /// False when no key with `prefix` under `extractor` was added; true
    /// when one may have been or the filter holds other prefixes (or none).
    pub fn may_contain_prefix(&self, extractor: &PrefixExtractor, prefix: &[u8]) -> bool {
        self.prefix_extractor != Some(*extractor) || self.may_contain_hash(filter_hash(prefix))
    }

    fn probes(&self, hash: u64) -> impl Iterator<Item = (usize, u64)> {
        let line = ((hash >> 32) * self.num_lines) >> 32;
        let base = line as usize * LINE_WORDS;
        let mut h = hash as u32;
        (0..PROBES).map(move |_| {
            let bit = h >> 23; // 0..512
            h = h.wrapping_mul(PROBE_MULTIPLIER);
            (base + (bit as usize >> 6), 1u64 << (bit & 63))
        })
    }

    fn add_hash(&self, hash: u64) {
        for (word, mask) in self.probes(hash) {
            if let Some(w) = self.words.get(word) {
                w.fetch_or(mask, Ordering::Relaxed);
            }
        }
    }

    fn may_contain_hash(&self, hash: u64) -> bool {
        self.probes(hash).all(|(word, mask)| {
            self.words
                .get(word)
                .is_none_or(|w| w.load(Ordering::Relaxed) & mask != 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_keys_and_prefixes_are_always_found_and_most_others_are_not() {
        let e = PrefixExtractor::Fixed(4);
        let bloom = MemBloom::new(64 << 10, Some(e), true).unwrap();
        for i in 0..5000u32 {
            bloom.add(format!("{i:08}").as_bytes());
        }
        for i in 0..5000u32 {
            let key = format!("{i:08}");
            assert!(bloom.may_contain_key(key.as_bytes()));
            assert!(bloom.may_contain_prefix(&e, &key.as_bytes()[..4]));
        }
        let false_positives = (5000..15000u32)
            .filter(|i| bloom.may_contain_key(format!("{i:08}").as_bytes()))
            .count();
        assert!(false_positives < 500, "{false_positives} of 10000");
        let absent_prefixes = (0..1000u32)
            .filter(|i| bloom.may_contain_prefix(&e, format!("x{i:03}").as_bytes()))
            .count();
        assert!(absent_prefixes < 100, "{absent_prefixes} of 1000");
        // Another extractor's prefixes are not in it: it proves nothing.
        assert!(bloom.may_contain_prefix(&PrefixExtractor::Fixed(3), b"zzz"));
    }

    #[test]
    fn a_prefix_only_filter_says_nothing_of_whole_keys() {
        let e = PrefixExtractor::Capped(2);
        let bloom = MemBloom::new(1024, Some(e), false).unwrap();
        bloom.add(b"abc");
        assert!(bloom.may_contain_key(b"zzzz"));
        assert!(bloom.may_contain_prefix(&e, b"ab"));
        assert!(MemBloom::new(1024, None, false).is_none());
        assert!(MemBloom::new(0, Some(e), true).is_none());
    }
}
