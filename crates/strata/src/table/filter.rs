//! Full-file bloom filter over user keys, cache-line local.
//!
//! ```text
//! filter block
//! +-------------------------------------------+-----------+----------+-----------+
//! | bit array: num_lines x 64-byte lines      | probes:u8 | reserved | num_lines |
//! |                                           |           | 3 x 0u8  | fixed32   |
//! +-------------------------------------------+-----------+----------+-----------+
//! ```
//!
//! A key's 64-bit xxh3 hash picks one 512-bit line with its upper 32 bits
//! (multiply-shift range reduction) and `probes` bit positions inside the line
//! from its lower 32 bits: each probe takes the top 9 bits of the running value,
//! then multiplies it by an odd constant. A query therefore touches exactly one
//! 64-byte cache line. The probe count is chosen to minimise the theoretical false
//! positive rate of this blocked layout (see [`blocked_bloom_fp_rate`]), which is
//! lower than the classic `bits_per_key * ln 2` because lines hold a Poisson-varying
//! number of keys.

use crate::encoding::decode_fixed32;

const LINE_BYTES: usize = 64;
const LINE_BITS: u32 = 512;
const TRAILER_LEN: usize = 8;
const MAX_PROBES: u32 = 30;
/// Odd multiplier (2^32 / golden ratio) that spreads successive probe positions.
const PROBE_MULTIPLIER: u32 = 0x9E37_79B9;

/// Hash of a user key as stored in the filter.
#[inline]
pub fn filter_hash(user_key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(user_key)
}

/// Theoretical false-positive rate of a blocked bloom filter with 512-bit lines.
///
/// Keys per line follow a Poisson law with mean `512 / bits_per_key`; a line with
/// `n` keys has each bit set with probability `1 - (1 - 1/512)^(probes * n)`.
pub fn blocked_bloom_fp_rate(bits_per_key: f64, probes: u32) -> f64 {
    if bits_per_key <= 0.0 {
        return 1.0;
    }
    let mean = f64::from(LINE_BITS) / bits_per_key;
    let miss_one = 1.0 - 1.0 / f64::from(LINE_BITS);
    let mut total = 0.0;
    let mut pmf = (-mean).exp(); // P(n = 0)
    let upper = (mean * 4.0 + 50.0) as u32;
    for n in 0..upper {
        let bit_set = 1.0 - miss_one.powf(f64::from(probes) * f64::from(n));
        total += pmf * bit_set.powi(probes as i32);
        pmf *= mean / f64::from(n + 1);
    }
    total
}

/// The probe count that minimises [`blocked_bloom_fp_rate`] for `bits_per_key`.
pub fn choose_probes(bits_per_key: f64) -> u32 {
    (1..=MAX_PROBES)
        .min_by(|&a, &b| {
            blocked_bloom_fp_rate(bits_per_key, a)
                .total_cmp(&blocked_bloom_fp_rate(bits_per_key, b))
        })
        .unwrap_or(1)
}

#[inline]
fn line_index(hash: u64, num_lines: u32) -> usize {
    (((hash >> 32) * u64::from(num_lines)) >> 32) as usize
}

/// Collects key hashes and builds the filter block.
#[derive(Debug)]
pub struct BloomBuilder {
    bits_per_key: f64,
    hashes: Vec<u64>,
}

impl BloomBuilder {
    /// A builder for `bits_per_key` > 0.
    pub fn new(bits_per_key: f64) -> Self {
        BloomBuilder {
            bits_per_key,
            hashes: Vec::new(),
        }
    }

    /// Adds a user key. Consecutive duplicates should be skipped by the caller.
    pub fn add_key(&mut self, user_key: &[u8]) {
        self.hashes.push(filter_hash(user_key));
    }

    /// Number of keys added.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// True when no key was added.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Builds the filter block bytes.
    pub fn finish(&self) -> Vec<u8> {
        let total_bits = (self.hashes.len() as f64 * self.bits_per_key).ceil();
        let num_lines =
            ((total_bits / f64::from(LINE_BITS)).ceil() as u64).clamp(1, u64::from(u32::MAX));
        let num_lines = num_lines as u32;
        let probes = choose_probes(self.bits_per_key);
        let mut out = vec![0u8; num_lines as usize * LINE_BYTES + TRAILER_LEN];
        for &hash in &self.hashes {
            let base = line_index(hash, num_lines) * LINE_BYTES;
            let mut h = hash as u32;
            for _ in 0..probes {
                let bit = (h >> 23) as usize;
                out[base + (bit >> 3)] |= 1 << (bit & 7);
                h = h.wrapping_mul(PROBE_MULTIPLIER);
            }
        }
        let trailer = num_lines as usize * LINE_BYTES;
        out[trailer] = probes as u8;
        out[trailer + 4..].copy_from_slice(&num_lines.to_le_bytes());
        out
    }
}

/// A loaded filter, ready for queries.
#[derive(Debug, Clone)]
pub struct BloomFilter {
    bits: bytes::Bytes,
    num_lines: u32,
    probes: u32,
}

impl BloomFilter {
    /// Parses a filter block; the error is a reason for `Error::Corruption`.
    pub fn new(block: bytes::Bytes) -> Result<BloomFilter, String> {
        let trailer_at = block
            .len()
            .checked_sub(TRAILER_LEN)
            .ok_or("filter block shorter than its trailer")?;
        let trailer = &block[trailer_at..];
        let probes = u32::from(trailer[0]);
        let num_lines = decode_fixed32(&trailer[4..]).unwrap_or(0);
        if trailer[1..4] != [0, 0, 0] {
            return Err("filter trailer has nonzero reserved bytes".into());
        }
        if probes == 0 || probes > MAX_PROBES {
            return Err(format!(
                "filter probe count {probes} is outside 1..={MAX_PROBES}"
            ));
        }
        if num_lines == 0 || num_lines as usize * LINE_BYTES != trailer_at {
            return Err(format!(
                "filter declares {num_lines} lines but holds {trailer_at} bytes of bits"
            ));
        }
        Ok(BloomFilter {
            bits: block.slice(..trailer_at),
            num_lines,
            probes,
        })
    }

    /// False means the key is certainly absent; true means it may be present.
    #[inline]
    pub fn may_contain(&self, user_key: &[u8]) -> bool {
        self.may_contain_hash(filter_hash(user_key))
    }

    /// As [`may_contain`](Self::may_contain), for a precomputed [`filter_hash`].
    #[inline]
    pub fn may_contain_hash(&self, hash: u64) -> bool {
        let base = line_index(hash, self.num_lines) * LINE_BYTES;
        let Some(line) = self.bits.get(base..base + LINE_BYTES) else {
            return true;
        };
        let mut h = hash as u32;
        for _ in 0..self.probes {
            let bit = (h >> 23) as usize;
            if line[bit >> 3] & (1 << (bit & 7)) == 0 {
                return false;
            }
            h = h.wrapping_mul(PROBE_MULTIPLIER);
        }
        true
    }

    /// Size of the bit array in bytes.
    pub fn size(&self) -> usize {
        self.bits.len()
    }

    /// Number of probes per key.
    pub fn probes(&self) -> u32 {
        self.probes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn build(keys: impl IntoIterator<Item = Vec<u8>>, bits: f64) -> BloomFilter {
        let mut b = BloomBuilder::new(bits);
        for k in keys {
            b.add_key(&k);
        }
        BloomFilter::new(bytes::Bytes::from(b.finish())).unwrap()
    }

    #[test]
    fn no_false_negatives() {
        let keys: Vec<Vec<u8>> = (0..10_000u32).map(|i| i.to_be_bytes().to_vec()).collect();
        let f = build(keys.clone(), 10.0);
        assert!(keys.iter().all(|k| f.may_contain(k)));
        assert!(
            f.may_contain(b"") || !f.may_contain(b""),
            "empty key is a valid query"
        );
    }

    #[test]
    fn false_positive_rate_matches_theory() {
        let n = 100_000u32;
        let f = build((0..n).map(|i| format!("key{i:08}").into_bytes()), 10.0);
        let trials = 400_000u32;
        let fp = (0..trials)
            .filter(|i| f.may_contain(format!("absent{i:08}").as_bytes()))
            .count();
        let measured = fp as f64 / f64::from(trials);
        let theory = blocked_bloom_fp_rate(10.0, f.probes());
        let classic = (1.0 - (-(f64::from(f.probes())) / 10.0).exp()).powi(f.probes() as i32);
        println!(
            "bloom 10 bits/key, {} probes: measured {:.4}%, blocked theory {:.4}%, classic {:.4}%",
            f.probes(),
            measured * 100.0,
            theory * 100.0,
            classic * 100.0
        );
        assert!(
            (measured - theory).abs() / theory < 0.2,
            "measured {measured} theory {theory}"
        );
    }

    #[test]
    fn probe_choice_is_sane() {
        assert_eq!(choose_probes(10.0), 7);
        assert!(choose_probes(1.0) <= 2);
        assert!(choose_probes(20.0) > choose_probes(10.0));
    }

    #[test]
    fn golden_bytes() {
        let mut b = BloomBuilder::new(10.0);
        b.add_key(b"strata");
        let bytes = b.finish();
        assert_eq!(bytes.len(), 64 + 8);
        assert_eq!(&bytes[64..], &[7, 0, 0, 0, 1, 0, 0, 0]);
        let set: u32 = bytes[..64].iter().map(|b| b.count_ones()).sum();
        assert!((1..=7).contains(&set));
        let f = BloomFilter::new(bytes::Bytes::from(bytes)).unwrap();
        assert!(f.may_contain(b"strata"));
    }

    #[test]
    fn rejects_malformed_blocks() {
        for bad in [
            vec![0u8; 3],
            vec![0u8; 8], // zero probes, zero lines
            [vec![0u8; 64], vec![6, 0, 0, 0, 2, 0, 0, 0]].concat(), // lines mismatch
            [vec![0u8; 64], vec![31, 0, 0, 0, 1, 0, 0, 0]].concat(), // too many probes
            [vec![0u8; 64], vec![6, 1, 0, 0, 1, 0, 0, 0]].concat(), // reserved set
        ] {
            assert!(BloomFilter::new(bytes::Bytes::from(bad)).is_err());
        }
    }

    proptest! {
        #[test]
        fn every_added_key_matches(keys in proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 0..12), 0..200), bits in 1.0f64..20.0) {
            let f = build(keys.clone(), bits);
            for k in &keys { prop_assert!(f.may_contain(k)); }
        }
    }
}
