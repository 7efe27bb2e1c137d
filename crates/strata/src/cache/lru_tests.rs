use std::sync::Arc;

use super::*;

fn key(n: u64) -> CacheKey {
    CacheKey {
        table_id: 1,
        offset: n,
    }
}

fn value(n: u64) -> CacheValue {
    Arc::new(n)
}

/// One shard, so eviction order is observable.
fn cache(capacity: usize, high: f64, low: f64, strict: bool) -> LruCache {
    LruCache::new(LruOptions {
        capacity,
        num_shard_bits: Some(0),
        strict_capacity_limit: strict,
        high_pri_pool_ratio: high,
        low_pri_pool_ratio: low,
    })
    .unwrap()
}

/// Inserts and releases at once: the entry is unpinned, in the cache.
fn put(c: &LruCache, n: u64, charge: usize, p: Priority) {
    drop(c.insert(key(n), value(n), charge, p).unwrap());
}

fn has(c: &LruCache, n: u64) -> bool {
    c.lookup(&key(n)).is_some()
}

const E: usize = 100; // a charge; each entry costs E + ENTRY_OVERHEAD

#[test]
fn shard_bits_double_per_doubling_above_the_minimum_shard() {
    // floor(log2(capacity / 2 MiB)), within 0..=6.
    const MIB: usize = 1 << 20;
    for (capacity, bits) in [
        (0, 0),
        (2 * MIB - 1, 0),
        (2 * MIB, 0),
        (4 * MIB - 1, 0),
        (4 * MIB, 1),
        (6 * MIB, 1),
        (8 * MIB, 2),
        (32 * MIB - 1, 3),
        (32 * MIB, 4),
        (64 * MIB, 5),
        (128 * MIB, 6),
        (1 << 30, 6),
        (usize::MAX, 6),
    ] {
        assert_eq!(default_shard_bits(capacity), bits, "capacity {capacity}");
    }
}

#[test]
fn default_shards_hold_at_least_2_mib() {
    for (capacity, shards) in [(100 << 10, 1), (4 << 20, 2), (8 << 20, 4), (1 << 30, 64)] {
        let c = LruCache::new(LruOptions::new(capacity)).unwrap();
        assert_eq!(c.shards.shards.len(), shards, "capacity {capacity}");
        for s in &c.shards.shards {
            assert!(s.lock().capacity >= MIN_DEFAULT_SHARD_BYTES.min(capacity));
        }
    }
}

/// A filter block bigger than its shard (an 8 MiB cache has 2 MiB shards):
/// without a strict limit it is cached, evicting the rest of its shard, and
/// holds more than the shard's capacity until released, as in RocksDB's LRU
/// cache; a strict cache refuses it.
#[test]
fn an_entry_larger_than_its_shard_is_admitted_unless_strict() {
    const BIG: usize = 3 << 20;
    for strict in [false, true] {
        let c = LruCache::new(LruOptions {
            strict_capacity_limit: strict,
            ..LruOptions::new(8 << 20)
        })
        .unwrap();
        for n in 0..1000 {
            put(&c, n, 4 << 10, Priority::Low);
        }
        let big = key(1 << 40);
        let shard = c.shard_of(&big);
        let shard_capacity = c.shards.shards[shard].lock().capacity;
        assert!(BIG > shard_capacity);
        let inserted = c.insert(big, value(7), BIG, Priority::High);
        if strict {
            assert!(
                matches!(inserted, Err(Error::CacheFull { .. })),
                "{inserted:?}"
            );
            assert!(!has(&c, 1 << 40));
            assert!(c.shards.shards[shard].lock().usage <= shard_capacity);
            continue;
        }
        let handle = inserted.unwrap();
        let found = c.lookup(&big).expect("an admitted entry is found");
        assert_eq!(found.value().downcast_ref::<u64>(), Some(&7));
        // Everything unpinned in its shard made room; other shards kept theirs.
        assert_eq!(c.shards.shards[shard].lock().usage, BIG + ENTRY_OVERHEAD);
        assert!(c.usage() > BIG + ENTRY_OVERHEAD);
        drop((handle, found));
        // Released over capacity, it goes: the shard is back within bounds.
        assert!(c.shards.shards[shard].lock().usage <= shard_capacity);
        assert_eq!(c.pinned_usage(), 0);
    }
}

#[test]
fn a_strict_capacity_is_never_exceeded() {
    let c = cache(10 * (E + ENTRY_OVERHEAD), 0.0, 0.0, true);
    let mut pinned = Vec::new();
    let mut refused = 0;
    for n in 0..20 {
        match c.insert(key(n), value(n), E, Priority::Low) {
            Ok(h) => pinned.push(h),
            Err(e) => {
                assert!(matches!(e, Error::CacheFull { .. }), "{e}");
                refused += 1;
            }
        }
        assert!(c.usage() <= c.capacity());
    }
    assert_eq!((pinned.len(), refused), (10, 10));
    assert_eq!(c.pinned_usage(), c.usage());
    drop(pinned);
    assert_eq!(c.pinned_usage(), 0);
    // Unpinned entries make room for new ones.
    put(&c, 100, E, Priority::Low);
    assert!(c.usage() <= c.capacity());
}

#[test]
fn pinned_entries_are_never_evicted() {
    let c = cache(4 * (E + ENTRY_OVERHEAD), 0.0, 0.0, false);
    let held = c.insert(key(0), value(0), E, Priority::Bottom).unwrap();
    for n in 1..100 {
        put(&c, n, E, Priority::High);
    }
    assert!(has(&c, 0));
    assert_eq!(held.value().downcast_ref::<u64>(), Some(&0));
}

#[test]
fn an_erased_entry_lives_until_its_last_handle() {
    let c = cache(4 * (E + ENTRY_OVERHEAD), 0.0, 0.0, false);
    let h = c.insert(key(7), value(7), E, Priority::Low).unwrap();
    c.erase(&key(7));
    assert!(!has(&c, 7));
    assert_eq!(c.usage(), E + ENTRY_OVERHEAD, "still pinned");
    assert_eq!(h.value().downcast_ref::<u64>(), Some(&7));
    // A new entry under the same key does not disturb the old handle.
    put(&c, 7, E, Priority::Low);
    drop(h);
    assert_eq!(c.usage(), E + ENTRY_OVERHEAD);
    assert!(has(&c, 7));
}

#[test]
fn bottom_goes_before_low_and_low_before_high() {
    // 30% high, 30% low, 40% bottom of ten entries.
    let c = cache(10 * (E + ENTRY_OVERHEAD), 0.3, 0.3, false);
    for n in 0..3 {
        put(&c, n, E, Priority::High);
    }
    for n in 10..13 {
        put(&c, n, E, Priority::Low);
    }
    for n in 20..24 {
        put(&c, n, E, Priority::Bottom);
    }
    // Four more bottom entries push out the four oldest bottom ones only.
    for n in 30..34 {
        put(&c, n, E, Priority::Bottom);
    }
    assert!((20..24).all(|n| !has(&c, n)));
    assert!((0..3).chain(10..13).all(|n| has(&c, n)));
}

#[test]
fn a_second_hit_promotes_to_the_high_pool() {
    let c = cache(10 * (E + ENTRY_OVERHEAD), 0.5, 0.0, false);
    put(&c, 1, E, Priority::Low);
    assert!(has(&c, 1)); // the hit: released into the high pool
    for n in 100..200 {
        put(&c, n, E, Priority::Low);
    }
    assert!(has(&c, 1), "a hot block was flushed out by a scan");
    assert!(!has(&c, 100));
}

#[test]
fn metadata_outranks_data_in_every_pool_combination() {
    // RocksDB's first attempt put index/filter blocks *below* data blocks
    // when there was a low pool but no high pool.
    for (high, low) in [
        (0.0, 0.0),
        (0.5, 0.0),
        (0.0, 0.5),
        (0.3, 0.3),
        (0.0, 1.0),
        (1.0, 0.0),
    ] {
        let c = cache(10 * (E + ENTRY_OVERHEAD), high, low, false);
        put(&c, 1, E, Priority::High);
        for n in 100..120 {
            put(&c, n, E, Priority::Low);
        }
        if (high, low) == (0.0, 0.0) {
            // A single list: plain LRU, the metadata block is just the oldest.
            assert!(!has(&c, 1));
        } else {
            assert!(
                has(&c, 1),
                "ratios {high}/{low}: metadata evicted before data"
            );
        }
    }
}

#[test]
fn shrinking_the_capacity_evicts_and_bad_ratios_are_refused() {
    let c = cache(10 * (E + ENTRY_OVERHEAD), 0.5, 0.0, false);
    for n in 0..10 {
        put(&c, n, E, Priority::Low);
    }
    c.set_capacity(3 * (E + ENTRY_OVERHEAD));
    assert!(c.usage() <= c.capacity());
    assert_eq!((0..10).filter(|&n| has(&c, n)).count(), 3);
    let bad = LruOptions {
        high_pri_pool_ratio: 0.7,
        low_pri_pool_ratio: 0.6,
        ..LruOptions::new(1 << 20)
    };
    assert!(LruCache::new(bad).is_err());
    assert_ne!(c.new_table_id(), c.new_table_id());
}

#[test]
fn many_threads_keep_the_accounting_exact() {
    let c = Arc::new(
        LruCache::new(LruOptions {
            num_shard_bits: Some(2),
            ..LruOptions::new(64 * (E + ENTRY_OVERHEAD))
        })
        .unwrap(),
    );
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let c = c.clone();
            std::thread::spawn(move || {
                let mut held = Vec::new();
                let mut x = t + 1;
                for _ in 0..20_000 {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let n = (x >> 33) % 200;
                    match x % 10 {
                        0..=3 => held.push(c.insert(key(n), value(n), E, Priority::Low).unwrap()),
                        4..=7 => {
                            if let Some(h) = c.lookup(&key(n)) {
                                assert_eq!(h.value().downcast_ref::<u64>(), Some(&n));
                                held.push(h);
                            }
                        }
                        _ => c.erase(&key(n)),
                    }
                    if held.len() > 8 {
                        held.remove(0);
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(c.pinned_usage(), 0);
    assert!(c.usage() <= c.capacity());
    let cached = (0..200).filter(|&n| c.lookup(&key(n)).is_some()).count();
    assert_eq!(c.usage(), cached * (E + ENTRY_OVERHEAD));
}
