//! Keys, values and random numbers, generated as db_bench generates them so that
//! both engines store the same bytes for the same command line.

use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Writes db_bench's key for `n` into `key` (whose length is `--key_size`): the
/// number as big-endian bytes in the first `min(key_size, 8)` bytes, the rest
/// filled with ASCII '0' (`GenerateKeyFromInt` with no prefix). Big-endian makes
/// byte order equal numeric order, so `fillseq` writes in key order and
/// `readseq` visits keys in the order they were written. With a key shorter than
/// 8 bytes only the low bytes of `n` are kept, as db_bench does.
pub fn make_key(n: u64, key: &mut [u8]) {
    let fill = key.len().min(8);
    let be = n.to_be_bytes();
    key[..fill].copy_from_slice(&be[8 - fill..]);
    key[fill..].fill(b'0');
}

/// db_bench's key for `n` with `--keys_per_prefix` > 0 (and `--prefix_size`):
/// the first `prefix_size` bytes are the prefix number `n % (num /
/// keys_per_prefix)` as big-endian bytes (at most 8 of them, then '0'), so each
/// prefix holds `keys_per_prefix` of the `num` keys; the rest of the key is
/// [`make_key`]'s for `n`. Without a prefix it is [`make_key`].
pub fn make_prefixed_key(
    n: u64,
    key: &mut [u8],
    prefix_size: usize,
    keys_per_prefix: u64,
    num: u64,
) {
    if keys_per_prefix == 0 || prefix_size == 0 {
        return make_key(n, key);
    }
    let prefix = n % (num / keys_per_prefix).max(1);
    let prefix_len = prefix_size.min(key.len());
    let (head, rest) = key.split_at_mut(prefix_len);
    let fill = head.len().min(8);
    head[..fill].copy_from_slice(&prefix.to_be_bytes()[8 - fill..]);
    head[fill..].fill(b'0');
    make_key(n, rest);
}

/// The random number generator of one benchmark thread.
pub fn thread_rng(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

/// A uniformly random key number in `0..num` (db_bench: `rand.Next() % num`).
/// With `num` 0 (reads of an empty key range) it is always 0.
pub fn random_key_number(rng: &mut SmallRng, num: u64) -> u64 {
    if num == 0 {
        return 0;
    }
    rng.gen_range(0..num)
}

/// Fragment length of the pool: db_bench builds its data from 100-byte pieces
/// whatever the value size, so a value's compressibility does not depend on it.
const FRAGMENT: usize = 100;

/// Smallest pool: larger than any codec's window (32 KiB for snappy) so that
/// compression finds only the repetition inside fragments, not across values.
const MIN_POOL: usize = 1 << 20;

/// Seed of the value pool, fixed as db_bench's `Random rnd(301)`: the values do
/// not depend on `--seed`, only the key order does.
const POOL_SEED: u64 = 301;

/// db_bench's `RandomGenerator`: a pool of at least 1 MiB of printable bytes made
/// of 100-byte fragments, each `compression_ratio * 100` random bytes repeated to
/// fill the fragment, so values compress to about `compression_ratio`. Values are
/// consecutive slices of the pool, wrapping to the start. Shared by all threads;
/// each thread walks it with its own [`ValueCursor`].
#[derive(Debug, Clone)]
pub struct ValuePool {
    data: Arc<[u8]>,
}

impl ValuePool {
    pub fn new(compression_ratio: f64, value_size: usize) -> ValuePool {
        let mut rng = SmallRng::seed_from_u64(POOL_SEED);
        let target = MIN_POOL.max(value_size);
        let mut data = Vec::with_capacity(target + FRAGMENT);
        while data.len() < target {
            compressible_fragment(&mut rng, compression_ratio, &mut data);
        }
        ValuePool { data: data.into() }
    }

    /// A cursor at the start of the pool.
    pub fn cursor(&self) -> ValueCursor {
        ValueCursor {
            data: self.data.clone(),
            pos: 0,
        }
    }
}

/// Appends one fragment: `ratio * FRAGMENT` random printable bytes (at least
/// one), repeated and cut to `FRAGMENT` bytes (db_bench's `CompressibleString`).
fn compressible_fragment(rng: &mut SmallRng, ratio: f64, out: &mut Vec<u8>) {
    let raw_len = ((FRAGMENT as f64 * ratio) as usize).clamp(1, FRAGMENT);
    let start = out.len();
    for _ in 0..raw_len {
        out.push(b' ' + rng.gen_range(0..95u8));
    }
    while out.len() - start < FRAGMENT {
        let copy = raw_len.min(FRAGMENT - (out.len() - start));
        out.extend_from_within(start..start + copy);
    }
}

/// One thread's position in the shared [`ValuePool`].
#[derive(Debug)]
pub struct ValueCursor {
    data: Arc<[u8]>,
    pos: usize,
}

impl ValueCursor {
    /// The next `len` bytes of the pool; `len` is at most the pool's size, which
    /// [`ValuePool::new`] made at least `value_size`.
    pub fn next_value(&mut self, len: usize) -> &[u8] {
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        let start = self.pos;
        self.pos += len;
        self.data.get(start..self.pos).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strata::CompressionType;

    #[test]
    fn prefixed_keys_are_db_bench_s() {
        // 100 keys, 10 per prefix: prefix numbers 0..10, key n in prefix n % 10.
        let mut key = [0u8; 20];
        make_prefixed_key(23, &mut key, 8, 10, 100);
        assert_eq!(&key[..8], &3u64.to_be_bytes());
        assert_eq!(&key[8..16], &23u64.to_be_bytes());
        assert_eq!(&key[16..], b"0000");
        // A prefix longer than 8 bytes is padded with '0'.
        let mut key = [0u8; 16];
        make_prefixed_key(5, &mut key, 10, 10, 100);
        assert_eq!(&key[..8], &5u64.to_be_bytes());
        assert_eq!(&key[8..10], b"00");
        assert_eq!(&key[10..], &5u64.to_be_bytes()[2..]);
        // A missing prefix: byte 8 of a 10-byte prefix is '0' in every key.
        let flags = crate::flags::Flags {
            prefix_size: 10,
            keys_per_prefix: 10,
            seek_missing_prefix: true,
            ..crate::flags::Flags::default()
        };
        let mut key = [0u8; 16];
        flags.make_key(5, &mut key);
        flags.miss_prefix(&mut key);
        assert_eq!(&key[8..10], b"10");
        // Without keys per prefix, the plain key.
        let (mut a, mut b) = ([0u8; 16], [0u8; 16]);
        make_prefixed_key(7, &mut a, 8, 0, 100);
        make_key(7, &mut b);
        assert_eq!(a, b);
    }

    #[test]
    fn keys_are_big_endian_padded_with_ascii_zeros() {
        let mut key = [0u8; 16];
        make_key(0x0102, &mut key);
        assert_eq!(&key[..8], &[0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(&key[8..], b"00000000");
        let mut short = [0u8; 4];
        make_key(0x0102_0304_0506, &mut short);
        assert_eq!(short, [3, 4, 5, 6], "the low bytes, as db_bench");
        let mut one = [0u8; 8];
        make_key(u64::MAX, &mut one);
        assert_eq!(one, [0xff; 8]);
    }

    #[test]
    fn keys_sort_in_numeric_order() {
        let mut prev = vec![0u8; 16];
        make_key(0, &mut prev);
        for n in [1u64, 255, 256, 65_535, 1_000_000, 1 << 40] {
            let mut key = vec![0u8; 16];
            make_key(n, &mut key);
            assert!(key > prev, "{n}");
            prev = key;
        }
    }

    #[test]
    fn random_keys_stay_in_range_and_follow_the_seed() {
        let mut a = thread_rng(7);
        let mut b = thread_rng(7);
        for _ in 0..1000 {
            let n = random_key_number(&mut a, 10);
            assert!(n < 10);
            assert_eq!(n, random_key_number(&mut b, 10));
        }
    }

    #[test]
    fn values_are_printable_and_wrap() {
        let pool = ValuePool::new(0.5, 100);
        let mut cursor = pool.cursor();
        let first = cursor.next_value(100).to_vec();
        assert_eq!(first.len(), 100);
        assert!(first.iter().all(|b| (b' '..=b'~').contains(b)));
        assert_eq!(&first[..50], &first[50..], "half random, repeated");
        for _ in 0..(MIN_POOL / 100) {
            assert_eq!(cursor.next_value(100).len(), 100);
        }
        // A value larger than the default pool still fits.
        let big = ValuePool::new(0.5, 3 << 20);
        assert_eq!(big.cursor().next_value(3 << 20).len(), 3 << 20);
    }

    /// The size a block of generated values compresses to, as a fraction.
    fn ratio_after(compression: CompressionType, ratio: f64) -> f64 {
        let pool = ValuePool::new(ratio, 100);
        let mut cursor = pool.cursor();
        let mut raw = Vec::new();
        while raw.len() < 64 << 10 {
            raw.extend_from_slice(cursor.next_value(100));
        }
        let mut out = Vec::new();
        compression
            .compress_into(&raw, &mut out)
            .expect("compression works");
        out.len() as f64 / raw.len() as f64
    }

    #[test]
    fn values_compress_to_about_the_ratio() {
        for ratio in [0.25, 0.5, 1.0] {
            for codec in [CompressionType::Snappy, CompressionType::Zstd { level: 3 }] {
                let got = ratio_after(codec, ratio);
                // Random printable bytes carry ~6.6 bits each, so zstd's entropy
                // coding lands below the ratio; snappy (no entropy coding) lands
                // above it by its copy-op overhead, most at small ratios.
                assert!(
                    got > ratio * 0.7 && got < ratio * 1.3,
                    "{} at ratio {ratio}: {got}",
                    codec.name()
                );
            }
        }
    }
}
