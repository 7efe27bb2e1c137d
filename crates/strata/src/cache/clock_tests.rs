use super::*;

fn key(n: u64) -> CacheKey {
    CacheKey {
        table_id: 1,
        offset: n,
    }
}

fn cache(entries: usize, strict: bool) -> ClockCache {
    ClockCache::new(ClockOptions {
        capacity: entries * 100,
        estimated_entry_charge: 100,
        strict_capacity_limit: strict,
    })
    .unwrap()
}

fn put(c: &ClockCache, n: u64, p: Priority) {
    drop(c.insert(key(n), Arc::new(n), 100, p).unwrap());
}

#[cfg(not(feature = "shuttle"))]
mod std_threads {
    use super::*;

    /// A crowded table (32 slots, charges too small to ever evict by
    /// capacity): after any sequence of inserts and erases, a lookup finds a
    /// key exactly when some slot holds it visibly (so no probe stops too
    /// early), and erased keys are gone.
    #[test]
    fn crowded_probes_find_every_entry_after_inserts_and_erases() {
        let c = ClockCache::new(ClockOptions {
            capacity: 20_000,
            estimated_entry_charge: 1000,
            strict_capacity_limit: false,
        })
        .unwrap();
        assert_eq!(c.table.slots.len(), 32);
        let in_table = |n: u64| {
            c.table
                .slots
                .iter()
                .any(|s| state(s.meta.load(Ordering::Relaxed)) == VISIBLE && s.holds(&key(n)))
        };
        let mut x = 12345u64;
        let mut max_displaced = 0;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let n = (x >> 33) % 40;
            if (x >> 20) % 3 == 0 {
                c.erase(&key(n));
                assert!(!in_table(n));
            } else {
                drop(c.insert(key(n), Arc::new(n), 1, Priority::Low).unwrap());
            }
            for m in 0..40 {
                let found = c.lookup(&key(m));
                assert_eq!(found.is_some(), in_table(m), "key {m}");
                if let Some(h) = found {
                    assert_eq!(h.value().downcast_ref::<u64>(), Some(&m));
                }
            }
            let displaced = c
                .table
                .slots
                .iter()
                .map(|s| s.displacements.load(Ordering::Relaxed))
                .max();
            max_displaced = max_displaced.max(displaced.unwrap_or(0));
        }
        assert!(max_displaced > 1, "no probe chains: the test is too easy");
        for n in 0..40 {
            c.erase(&key(n));
        }
        assert!(c
            .table
            .slots
            .iter()
            .all(|s| s.displacements.load(Ordering::Relaxed) == 0));
        assert_eq!(c.usage(), 0);
    }

    #[test]
    fn lookups_find_what_was_inserted_and_erase_removes_it() {
        let c = cache(100, false);
        for n in 0..50 {
            put(&c, n, Priority::Low);
        }
        for n in 0..50 {
            let h = c.lookup(&key(n)).expect("cached");
            assert_eq!(h.value().downcast_ref::<u64>(), Some(&n));
        }
        c.erase(&key(7));
        assert!(c.lookup(&key(7)).is_none());
        assert_eq!(c.usage(), 49 * 100);
        assert_eq!(c.pinned_usage(), 0);
    }

    #[test]
    fn pinned_entries_survive_and_an_erased_one_lives_until_released() {
        let c = cache(10, false);
        let held = c
            .insert(key(0), Arc::new(0u64), 100, Priority::Bottom)
            .unwrap();
        for n in 1..200 {
            put(&c, n, Priority::High);
        }
        assert!(c.lookup(&key(0)).is_some(), "a pinned entry was evicted");
        assert!(c.usage() <= c.capacity() + 100);
        c.erase(&key(0));
        assert!(c.lookup(&key(0)).is_none());
        assert_eq!(held.value().downcast_ref::<u64>(), Some(&0));
        let before = c.usage();
        drop(held);
        assert_eq!(c.usage(), before - 100, "freed by its last release");
    }

    #[test]
    fn a_strict_capacity_is_never_exceeded() {
        let c = cache(10, true);
        let mut held = Vec::new();
        let mut refused = 0;
        for n in 0..20 {
            match c.insert(key(n), Arc::new(n), 100, Priority::Low) {
                Ok(h) => held.push(h),
                Err(_) => refused += 1,
            }
            assert!(c.usage() <= c.capacity());
        }
        assert_eq!((held.len(), refused), (10, 10));
        assert_eq!(c.pinned_usage(), 1000);
    }

    /// An entry larger than the whole cache: without a strict limit it is
    /// cached (evicting what it must) and found; a strict cache refuses it.
    #[test]
    fn an_entry_larger_than_the_cache_is_admitted_unless_strict() {
        for strict in [false, true] {
            let c = cache(10, strict);
            for n in 0..5 {
                put(&c, n, Priority::Low);
            }
            let inserted = c.insert(key(99), Arc::new(99u64), 5000, Priority::High);
            if strict {
                assert!(
                    matches!(inserted, Err(Error::CacheFull { .. })),
                    "{inserted:?}"
                );
                assert!(c.lookup(&key(99)).is_none());
                assert!(c.usage() <= c.capacity());
                continue;
            }
            let handle = inserted.unwrap();
            let found = c.lookup(&key(99)).expect("an admitted entry is found");
            assert_eq!(found.value().downcast_ref::<u64>(), Some(&99));
            assert_eq!(c.usage(), 5000, "the unpinned entries made room");
            drop((handle, found));
            assert_eq!(c.pinned_usage(), 0);
        }
    }

    #[test]
    fn bottom_priority_goes_before_high_priority() {
        // Ten high entries, then enough bottom ones to force a few evictions:
        // the sweep frees bottom entries (countdown 1) before high ones
        // (countdown 3). Entries never hit do age out eventually: this is a
        // clock, not a pool.
        let c = cache(20, false);
        for n in 0..10 {
            put(&c, n, Priority::High);
        }
        for n in 100..115 {
            put(&c, n, Priority::Bottom);
        }
        assert_eq!((0..10).filter(|&n| c.lookup(&key(n)).is_some()).count(), 10);
        assert!((100..115).filter(|&n| c.lookup(&key(n)).is_some()).count() < 15);
    }

    #[test]
    fn many_threads_keep_values_right_and_usage_exact() {
        let c = Arc::new(cache(64, false));
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let c = c.clone();
                std::thread::spawn(move || {
                    let mut x = t + 7;
                    let mut held = Vec::new();
                    for _ in 0..20_000 {
                        x = x
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let n = (x >> 33) % 300;
                        match x % 10 {
                            0..=3 => held
                                .push(c.insert(key(n), Arc::new(n), 100, Priority::Low).unwrap()),
                            4..=7 => {
                                if let Some(h) = c.lookup(&key(n)) {
                                    assert_eq!(h.value().downcast_ref::<u64>(), Some(&n));
                                    held.push(h);
                                }
                            }
                            _ => c.erase(&key(n)),
                        }
                        if held.len() > 6 {
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
        let cached = (0..300).filter(|&n| c.lookup(&key(n)).is_some()).count();
        assert_eq!(c.usage(), cached * 100);
    }
}

/// The slot protocol under shuttle's randomized scheduler: lookups racing
/// inserts, erases and evictions of the same keys never see a wrong value,
/// and every byte is accounted for at the end.
#[cfg(feature = "shuttle")]
mod shuttle_model {
    use super::*;

    #[test]
    fn shuttle_lookups_race_erase_and_eviction() {
        shuttle::check_random(
            || {
                let c = Arc::new(cache(3, false));
                put(&c, 1, Priority::Low);
                put(&c, 2, Priority::Low);
                let readers: Vec<_> = (0..2)
                    .map(|_| {
                        let c = c.clone();
                        shuttle::thread::spawn(move || {
                            for n in [1u64, 2, 3, 1] {
                                if let Some(h) = c.lookup(&key(n)) {
                                    assert_eq!(h.value().downcast_ref::<u64>(), Some(&n));
                                }
                            }
                        })
                    })
                    .collect();
                let writer = {
                    let c = c.clone();
                    shuttle::thread::spawn(move || {
                        c.erase(&key(1));
                        put(&c, 3, Priority::Low);
                        put(&c, 4, Priority::Bottom);
                        put(&c, 5, Priority::Bottom);
                    })
                };
                for r in readers {
                    r.join().unwrap();
                }
                writer.join().unwrap();
                assert_eq!(c.pinned_usage(), 0);
                let cached = (1..=5).filter(|&n| c.lookup(&key(n)).is_some()).count();
                assert_eq!(c.usage(), cached * 100);
                assert!(c.usage() <= c.capacity());
            },
            2000,
        );
    }
}
