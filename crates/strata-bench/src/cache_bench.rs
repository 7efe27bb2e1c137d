//! strata-cache-bench: the block cache under RocksDB's `cache_bench` workload,
//! with its flags, defaults and per-operation work, so the two tools compare
//! like for like.
//!
//! Each thread runs `-ops_per_thread` operations on random keys from a key
//! space `cache_size / resident_ratio / value_bytes` large: lookup, inserting on
//! a miss (`-lookup_insert_percent`), insert (`-insert_percent`), lookup
//! (`-lookup_percent`), erase (`-erase_percent`). A hit hashes the value unless
//! `-lean`; an insert allocates and fills a value. `-populate_cache` first
//! inserts twice the capacity.

use std::sync::{Arc, Barrier};
use std::time::Instant;

use strata::cache::clock::{ClockCache, ClockOptions};
use strata::cache::lru::{LruCache, LruOptions};
use strata::cache::{Cache, CacheHandle, CacheKey, CacheValue, Priority};

use crate::mt64::Mt64;

/// cache_bench's flags, with its defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheBenchFlags {
    pub threads: usize,
    pub cache_size: usize,
    pub num_shard_bits: u32,
    pub cache_type: String,
    pub value_bytes: usize,
    pub ops_per_thread: u64,
    pub lookup_insert_percent: u32,
    pub insert_percent: u32,
    pub lookup_percent: u32,
    pub erase_percent: u32,
    pub skew: u32,
    pub skewed: bool,
    pub resident_ratio: f64,
    pub lean: bool,
    pub populate_cache: bool,
    /// Not a cache_bench flag: its LRU cache is built with a high-priority
    /// pool of 0.5 and no low pool; these change that, to measure the pools.
    pub high_pri_pool_ratio: f64,
    pub low_pri_pool_ratio: f64,
}

impl Default for CacheBenchFlags {
    fn default() -> Self {
        CacheBenchFlags {
            threads: 16,
            cache_size: 1 << 30,
            num_shard_bits: 6,
            cache_type: "lru_cache".into(),
            value_bytes: 8192,
            ops_per_thread: 2_000_000,
            lookup_insert_percent: 87,
            insert_percent: 2,
            lookup_percent: 10,
            erase_percent: 1,
            skew: 5,
            skewed: false,
            resident_ratio: 0.25,
            lean: false,
            populate_cache: true,
            high_pri_pool_ratio: 0.5,
            low_pri_pool_ratio: 0.0,
        }
    }
}

/// Parses `-flag=value` / `--flag=value` arguments; an unknown flag is an
/// error naming it.
pub fn parse(args: &[String]) -> Result<CacheBenchFlags, String> {
    let mut f = CacheBenchFlags::default();
    for arg in args {
        let body = arg
            .strip_prefix("--")
            .or_else(|| arg.strip_prefix('-'))
            .ok_or_else(|| format!("unexpected argument {arg:?}: flags are written -name=value"))?;
        let (name, value) = body.split_once('=').unwrap_or((body, "true"));
        let num = |v: &str| -> Result<u64, String> {
            v.parse()
                .map_err(|_| format!("-{name}: {v:?} is not a valid number"))
        };
        let boolean = |v: &str| -> Result<bool, String> {
            match v {
                "1" | "true" | "yes" => Ok(true),
                "0" | "false" | "no" => Ok(false),
                _ => Err(format!("-{name}: {v:?} is not a boolean")),
            }
        };
        let ratio = |v: &str| -> Result<f64, String> {
            v.parse()
                .map_err(|_| format!("-{name}: {v:?} is not a number"))
        };
        let small = |v: &str| -> Result<u32, String> {
            u32::try_from(num(v)?).map_err(|_| format!("-{name}: {v} is too large"))
        };
        match name {
            "threads" => f.threads = num(value)? as usize,
            "cache_size" => f.cache_size = num(value)? as usize,
            "num_shard_bits" => f.num_shard_bits = small(value)?,
            "cache_type" => f.cache_type = value.to_string(),
            "value_bytes" => f.value_bytes = num(value)? as usize,
            "ops_per_thread" => f.ops_per_thread = num(value)?,
            "lookup_insert_percent" => f.lookup_insert_percent = small(value)?,
            "insert_percent" => f.insert_percent = small(value)?,
            "lookup_percent" => f.lookup_percent = small(value)?,
            "erase_percent" => f.erase_percent = small(value)?,
            "skew" => f.skew = small(value)?,
            "skewed" => f.skewed = boolean(value)?,
            "resident_ratio" => f.resident_ratio = ratio(value)?,
            "high_pri_pool_ratio" => f.high_pri_pool_ratio = ratio(value)?,
            "low_pri_pool_ratio" => f.low_pri_pool_ratio = ratio(value)?,
            "lean" => f.lean = boolean(value)?,
            "populate_cache" => f.populate_cache = boolean(value)?,
            _ => return Err(format!("unknown flag -{name}")),
        }
    }
    if !matches!(
        f.cache_type.as_str(),
        "lru_cache" | "clock_cache" | "hyper_clock_cache"
    ) {
        return Err(format!(
            "-cache_type={}: expected lru_cache or clock_cache (hyper_clock_cache)",
            f.cache_type
        ));
    }
    let percents = [
        f.lookup_insert_percent,
        f.insert_percent,
        f.lookup_percent,
        f.erase_percent,
    ];
    if percents.iter().map(|&p| u64::from(p)).sum::<u64>() != 100 {
        return Err(format!(
            "-lookup_insert_percent, -insert_percent, -lookup_percent and -erase_percent \
             must add to 100, not {}",
            percents.iter().map(|&p| u64::from(p)).sum::<u64>()
        ));
    }
    let ratio_ok = f.resident_ratio.is_finite() && f.resident_ratio > 0.0;
    if f.threads == 0 || f.value_bytes == 0 || !ratio_ok {
        return Err("-threads, -value_bytes and -resident_ratio must be above 0".into());
    }
    Ok(f)
}

/// cache_bench's key for `n`.
fn key(n: u64) -> CacheKey {
    CacheKey {
        table_id: 1,
        offset: n,
    }
}

/// A value of `bytes` random bytes, filled 8 at a time as cache_bench does.
fn new_value(rng: &mut Mt64, bytes: usize) -> CacheValue {
    let mut v = Vec::with_capacity(bytes.next_multiple_of(8));
    for _ in 0..bytes.div_ceil(8) {
        v.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    v.truncate(bytes);
    Arc::new(v.into_boxed_slice())
}

/// cache_bench's key choice. By default the smallest of `skew + 1` random
/// numbers, scaled to `[0, max_key)`: low keys are hotter, more so as `skew`
/// grows. With `-skewed`, its `Random64::Skewed`: a random bit count up to
/// `max_log`, then a random number of that many bits, folded into the range.
fn next_key(rng: &mut Mt64, f: &CacheBenchFlags, max_key: u64, max_log: u32) -> u64 {
    if f.skewed {
        let bits = rng.uniform(u64::from(max_log.min(62)) + 1);
        let key = rng.uniform(1u64 << bits);
        if key > max_key {
            key - max_key
        } else {
            key
        }
    } else {
        let mut raw = rng.next_u64();
        for _ in 0..f.skew {
            raw = raw.min(rng.next_u64());
        }
        ((u128::from(raw) * u128::from(max_key)) >> 64) as u64
    }
}

/// `floor(log2(max_key))`, cache_bench's bit count for `-skewed` (its
/// round-up step tests the already shifted-out key, so it never rounds up).
fn max_log(max_key: u64) -> u32 {
    63 - max_key.max(1).leading_zeros()
}

/// Runs the benchmark and prints cache_bench's result lines.
pub fn run(f: &CacheBenchFlags) -> Result<(), String> {
    let cache: Arc<dyn Cache> = if f.cache_type == "lru_cache" {
        Arc::new(
            LruCache::new(LruOptions {
                num_shard_bits: Some(f.num_shard_bits),
                high_pri_pool_ratio: f.high_pri_pool_ratio,
                low_pri_pool_ratio: f.low_pri_pool_ratio,
                ..LruOptions::new(f.cache_size)
            })
            .map_err(|e| e.to_string())?,
        )
    } else {
        // cache_bench sizes its hyper clock table by the value size too.
        Arc::new(
            ClockCache::new(ClockOptions {
                capacity: f.cache_size,
                estimated_entry_charge: f.value_bytes,
                strict_capacity_limit: false,
            })
            .map_err(|e| e.to_string())?,
        )
    };
    let max_key = (f.cache_size as f64 / f.resident_ratio / f.value_bytes as f64) as u64;
    let max_log = if f.skewed { max_log(max_key) } else { 0 };
    println!("Number of threads   : {}", f.threads);
    println!("Ops per thread      : {}", f.ops_per_thread);
    println!("Cache size          : {}", f.cache_size);
    println!("Num shard bits      : {}", f.num_shard_bits);
    println!("Max key             : {max_key}");
    println!("Resident ratio      : {}", f.resident_ratio);
    println!("Skew degree         : {}", f.skew);
    println!("Populate cache      : {}", u8::from(f.populate_cache));
    println!("Lookup+Insert pct   : {}%", f.lookup_insert_percent);
    println!("Insert percentage   : {}%", f.insert_percent);
    println!("Lookup percentage   : {}%", f.lookup_percent);
    println!("Erase percentage    : {}%", f.erase_percent);
    println!("----------------------------");
    if f.populate_cache {
        let mut rng = Mt64::new(1);
        let mut filled = 0;
        while filled < 2 * f.cache_size {
            let k = next_key(&mut rng, f, max_key, max_log);
            let v = new_value(&mut rng, f.value_bytes);
            drop(
                cache
                    .insert(key(k), v, f.value_bytes, Priority::Low)
                    .map_err(|e| e.to_string())?,
            );
            filled += f.value_bytes;
        }
    }
    let barrier = Barrier::new(f.threads);
    let start = Instant::now();
    let thread_secs: Vec<f64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..f.threads)
            .map(|t| {
                let (cache, barrier) = (&cache, &barrier);
                s.spawn(move || operate(cache.as_ref(), f, (max_key, max_log), t as u64, barrier))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(0.0))
            .collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    let total = f.ops_per_thread * f.threads as u64;
    let mean_thread = thread_secs.iter().sum::<f64>() / thread_secs.len().max(1) as f64;
    println!(
        "Complete in {elapsed:.3} s; Rough parallel ops/sec = {}",
        (total as f64 / elapsed) as u64
    );
    println!(
        "Thread ops/sec = {}",
        (f.ops_per_thread as f64 / mean_thread.max(1e-9)) as u64
    );
    Ok(())
}

/// One thread's operations; returns its running time in seconds. As in
/// cache_bench, the handle of the last lookup or insert is held until the
/// next lookup or insert, so entries stay pinned for a while.
fn operate(
    cache: &dyn Cache,
    f: &CacheBenchFlags,
    (max_key, max_log): (u64, u32),
    t: u64,
    barrier: &Barrier,
) -> f64 {
    let mut rng = Mt64::new(1000 + t);
    // Thresholds in the space of a random u64, as cache_bench draws them.
    let hundredth = u64::MAX / 100;
    let lookup_insert = hundredth * u64::from(f.lookup_insert_percent);
    let insert = lookup_insert + hundredth * u64::from(f.insert_percent);
    let lookup = insert + hundredth * u64::from(f.lookup_percent);
    let erase = lookup + hundredth * u64::from(f.erase_percent);
    let mut checksum = 0u64;
    let mut held: Option<CacheHandle> = None;
    barrier.wait();
    let start = Instant::now();
    for _ in 0..f.ops_per_thread {
        let k = key(next_key(&mut rng, f, max_key, max_log));
        let op = rng.next_u64();
        if op < lookup {
            drop(held.take());
            let look = op < lookup_insert || op >= insert;
            held = if look { cache.lookup(&k) } else { None };
            match &held {
                Some(h) if !f.lean => {
                    if let Some(bytes) = h.value().downcast_ref::<Box<[u8]>>() {
                        checksum = checksum.wrapping_add(xxhash_rust::xxh3::xxh3_64(bytes));
                    }
                }
                Some(_) => {}
                None if op < insert => {
                    let v = new_value(&mut rng, f.value_bytes);
                    held = cache.insert(k, v, f.value_bytes, Priority::Low).ok();
                }
                None => {}
            }
        } else if op < erase {
            cache.erase(&k);
        }
    }
    drop(held);
    std::hint::black_box(checksum);
    start.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_take_both_spellings_and_cache_benchs_defaults() {
        let f = parse(&[
            "-threads=2".into(),
            "--ops_per_thread=1000".into(),
            "-lean".into(),
        ])
        .unwrap();
        assert_eq!((f.threads, f.ops_per_thread, f.lean), (2, 1000, true));
        assert_eq!(f.value_bytes, 8192);
        assert_eq!(
            f.lookup_insert_percent + f.insert_percent + f.lookup_percent + f.erase_percent,
            100
        );
        assert!(parse(&["-frobnicate=1".into()])
            .unwrap_err()
            .contains("frobnicate"));
        assert!(parse(&["-cache_type=clock_cache".into()]).is_ok());
        assert!(parse(&["-cache_type=fifo".into()]).is_err());
        assert!(parse(&["-erase_percent=2".into()])
            .unwrap_err()
            .contains("add to 100"));
    }

    #[test]
    fn keys_skew_toward_the_low_end_and_stay_in_range() {
        let f = CacheBenchFlags::default();
        let mut rng = Mt64::new(7);
        let max_key = 1000;
        let keys: Vec<u64> = (0..60_000)
            .map(|_| next_key(&mut rng, &f, max_key, 0))
            .collect();
        assert!(keys.iter().all(|&k| k < max_key));
        // The minimum of 6 uniforms falls below 1/6 of the range with
        // probability 1 - (5/6)^6 = 0.665.
        let low = keys.iter().filter(|&&k| k < max_key / 6).count() as f64 / keys.len() as f64;
        assert!((low - 0.665).abs() < 0.02, "share below max/6: {low}");
        let skewed = CacheBenchFlags {
            skewed: true,
            ..CacheBenchFlags::default()
        };
        let log = max_log(max_key);
        assert_eq!(log, 9);
        assert_eq!((max_log(1024), max_log(1025), max_log(1)), (10, 10, 0));
        for _ in 0..10_000 {
            assert!(next_key(&mut rng, &skewed, max_key, log) <= max_key);
        }
    }
}
