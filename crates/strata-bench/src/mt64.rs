//! The 64-bit Mersenne Twister (MT19937-64), the generator behind RocksDB's
//! `Random64` and so behind every key, operation and value of `cache_bench`.
//! strata-cache-bench draws from the same generator so that the work around
//! each cache call costs the same in both tools, and only the caches differ.

const N: usize = 312;
const M: usize = 156;
const MATRIX_A: u64 = 0xB502_6F5A_A966_19E9;
const UPPER: u64 = 0xFFFF_FFFF_8000_0000;
const LOWER: u64 = 0x7FFF_FFFF;

/// MT19937-64 state.
pub struct Mt64 {
    state: [u64; N],
    next: usize,
}

impl Mt64 {
    /// Seeded as `std::mt19937_64(seed)`.
    pub fn new(seed: u64) -> Mt64 {
        let mut state = [0u64; N];
        state[0] = seed;
        for i in 1..N {
            let prev = state[i - 1];
            state[i] = 6_364_136_223_846_793_005u64
                .wrapping_mul(prev ^ (prev >> 62))
                .wrapping_add(i as u64);
        }
        Mt64 { state, next: N }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        if self.next >= N {
            self.twist();
        }
        let mut x = self.state[self.next];
        self.next += 1;
        x ^= (x >> 29) & 0x5555_5555_5555_5555;
        x ^= (x << 17) & 0x71D6_7FFF_EDA6_0000;
        x ^= (x << 37) & 0xFFF7_EEE0_0000_0000;
        x ^ (x >> 43)
    }

    /// A number in `[0, n)`; `n` must be above 0.
    pub fn uniform(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    fn twist(&mut self) {
        for i in 0..N {
            let x = (self.state[i] & UPPER) | (self.state[(i + 1) % N] & LOWER);
            let mut shifted = x >> 1;
            if x & 1 == 1 {
                shifted ^= MATRIX_A;
            }
            self.state[i] = self.state[(i + M) % N] ^ shifted;
        }
        self.next = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_standard_generator() {
        // The C++ standard fixes the 10000th output of a default-seeded
        // mt19937_64 (seed 5489).
        let mut mt = Mt64::new(5489);
        let ten_thousandth = (0..10_000).map(|_| mt.next_u64()).last();
        assert_eq!(ten_thousandth, Some(9_981_545_732_273_789_042));
    }
}
