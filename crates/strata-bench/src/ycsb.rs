//! YCSB's core workloads and request distributions (Cooper et al., SoCC'10),
//! as its reference implementation defines them: zipfian with constant 0.99
//! (Gray et al.'s generator, scrambled so hot keys spread over the key
//! space), latest (zipfian over recency), uniform.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::Rng;

/// YCSB's zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// Draws `0..n` with P(i) proportional to 1 / (i + 1)^theta: item 0 hottest.
#[derive(Debug, Clone)]
pub struct Zipfian {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
}

fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
}

impl Zipfian {
    pub fn new(n: u64, theta: f64) -> Zipfian {
        let n = n.max(1);
        let zetan = zeta(n, theta);
        let zeta2 = zeta(2, theta);
        Zipfian {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan),
        }
    }

    pub fn next(&self, rng: &mut SmallRng) -> u64 {
        let u: f64 = rng.gen();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1;
        }
        let v = (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        v.min(self.n - 1)
    }
}

/// FNV-1a of `x`'s bytes: YCSB scrambles zipfian draws and builds its keys
/// with it.
pub fn fnv1a64(x: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in x.to_le_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01B3);
    }
    h
}

/// How a workload picks the records it requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    /// Scrambled zipfian: popular items spread over the key space.
    Zipfian,
    /// Zipfian over recency: the newest records are the hottest.
    Latest,
    Uniform,
}

/// One of YCSB's core workloads: the mix of operations per hundred.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    pub read: u32,
    pub update: u32,
    pub insert: u32,
    pub scan: u32,
    pub read_modify_write: u32,
    pub distribution: Distribution,
}

impl Workload {
    /// `a`..`f`, as YCSB's `workloads/workloada`..`workloadf` define them.
    pub fn core(letter: char) -> Option<Workload> {
        let w = |read, update, insert, scan, rmw, distribution| Workload {
            read,
            update,
            insert,
            scan,
            read_modify_write: rmw,
            distribution,
        };
        Some(match letter {
            'a' => w(50, 50, 0, 0, 0, Distribution::Zipfian),
            'b' => w(95, 5, 0, 0, 0, Distribution::Zipfian),
            'c' => w(100, 0, 0, 0, 0, Distribution::Zipfian),
            'd' => w(95, 0, 5, 0, 0, Distribution::Latest),
            'e' => w(0, 0, 5, 95, 0, Distribution::Zipfian),
            'f' => w(50, 0, 0, 0, 50, Distribution::Zipfian),
            _ => return None,
        })
    }
}

/// YCSB's scan lengths: uniform in 1..=100.
pub const MAX_SCAN_LENGTH: u64 = 100;

/// Picks record numbers for a workload over `records` loaded records (and
/// `inserted` since), as YCSB's request distributions do.
#[derive(Debug, Clone)]
pub struct Chooser {
    zipf: Zipfian,
    distribution: Distribution,
}

impl Chooser {
    pub fn new(distribution: Distribution, records: u64) -> Chooser {
        Chooser {
            zipf: Zipfian::new(records, ZIPFIAN_CONSTANT),
            distribution,
        }
    }

    /// A record number in `0..total` (`total` counts inserts so far).
    pub fn next(&self, rng: &mut SmallRng, total: u64) -> u64 {
        let total = total.max(1);
        match self.distribution {
            Distribution::Uniform => rng.gen_range(0..total),
            Distribution::Zipfian => fnv1a64(self.zipf.next(rng)) % total,
            Distribution::Latest => total - 1 - self.zipf.next(rng).min(total - 1),
        }
    }
}

/// YCSB's acknowledged counter: inserts take the next record number, and
/// readers see only records below the first insert not yet acknowledged, so
/// a read never asks for a record another thread has reserved but not yet
/// written.
#[derive(Debug)]
pub struct InsertCounter {
    next: AtomicU64,
    /// Records `0..acknowledged` are all written.
    acknowledged: AtomicU64,
    /// Acknowledged numbers above `acknowledged`, finished out of order.
    ahead: Mutex<BTreeSet<u64>>,
}

impl InsertCounter {
    /// A counter over `loaded` records, all written.
    pub fn new(loaded: u64) -> InsertCounter {
        InsertCounter {
            next: AtomicU64::new(loaded),
            acknowledged: AtomicU64::new(loaded),
            ahead: Mutex::new(BTreeSet::new()),
        }
    }

    /// The number of a new record, to insert and then [`Self::acknowledge`].
    pub fn reserve(&self) -> u64 {
        self.next.fetch_add(1, Ordering::AcqRel)
    }

    /// Marks `record` written; the readable limit moves past every record
    /// written without a gap.
    pub fn acknowledge(&self, record: u64) {
        let mut ahead = self.ahead.lock();
        ahead.insert(record);
        let mut limit = self.acknowledged.load(Ordering::Acquire);
        while ahead.remove(&limit) {
            limit += 1;
        }
        self.acknowledged.store(limit, Ordering::Release);
    }

    /// How many records, from 0, are known to be written.
    pub fn readable(&self) -> u64 {
        self.acknowledged.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn zipfian_is_as_skewed_as_theory_says() {
        let n = 1000;
        let z = Zipfian::new(n, ZIPFIAN_CONSTANT);
        let mut rng = SmallRng::seed_from_u64(1);
        let mut counts = vec![0u64; n as usize];
        let draws = 200_000;
        for _ in 0..draws {
            counts[z.next(&mut rng) as usize] += 1;
        }
        // P(0) = 1 / zeta(n), P(9) = P(0) / 10^0.99.
        let p0 = 1.0 / zeta(n, ZIPFIAN_CONSTANT);
        let share = |i: usize| counts[i] as f64 / draws as f64;
        assert!((share(0) - p0).abs() < 0.1 * p0, "{} vs {p0}", share(0));
        let p9 = p0 / 10f64.powf(ZIPFIAN_CONSTANT);
        assert!((share(9) - p9).abs() < 0.25 * p9, "{} vs {p9}", share(9));
        // The top 1% of items take far more than 1% of draws.
        let top: u64 = counts[..10].iter().sum();
        assert!(top as f64 / draws as f64 > 0.35);
    }

    #[test]
    fn latest_prefers_new_records_and_every_draw_is_in_range() {
        let c = Chooser::new(Distribution::Latest, 1000);
        let mut rng = SmallRng::seed_from_u64(2);
        let draws: Vec<u64> = (0..10_000).map(|_| c.next(&mut rng, 1500)).collect();
        assert!(draws.iter().all(|&d| d < 1500));
        let newest = draws.iter().filter(|&&d| d >= 1490).count();
        assert!(newest > 3000, "{newest}");
        let z = Chooser::new(Distribution::Zipfian, 1000);
        assert!((0..10_000).all(|_| z.next(&mut rng, 1000) < 1000));
        assert_eq!(Workload::core('e').map(|w| w.scan), Some(95));
        assert!(Workload::core('g').is_none());
    }

    #[test]
    fn readers_see_inserts_only_once_every_earlier_one_is_written() {
        let c = InsertCounter::new(10);
        let (a, b, d) = (c.reserve(), c.reserve(), c.reserve());
        assert_eq!((a, b, d), (10, 11, 12));
        c.acknowledge(b);
        c.acknowledge(d);
        assert_eq!(c.readable(), 10, "record 10 is reserved, not written");
        c.acknowledge(a);
        assert_eq!(c.readable(), 13);
    }
}
