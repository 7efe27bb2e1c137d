use super::*;
#[cfg(not(feature = "shuttle"))]
use crate::comparator::Comparator;
use crate::key::{compare_internal, internal_key, ValueType};

fn insert(list: &SkipList, key: &[u8], value: &[u8]) {
    list.insert_with(key.len(), value.len(), |k, v| {
        k.copy_from_slice(key);
        v.copy_from_slice(value);
    })
    .unwrap();
}

fn ikey(user: u32, seq: u64) -> Vec<u8> {
    internal_key(&user.to_be_bytes(), seq, ValueType::Put)
}

/// Orders 4-byte keys by their value read little-endian (so unlike
/// bytewise on [`ikey`]'s big-endian keys), through the `dyn` path.
#[cfg(not(feature = "shuttle"))]
#[derive(Debug)]
struct U32Le;

#[cfg(not(feature = "shuttle"))]
impl Comparator for U32Le {
    fn name(&self) -> &str {
        "test.U32LittleEndian"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> KeyOrdering {
        let num = |k: &[u8]| k.try_into().map(u32::from_le_bytes).ok();
        num(a).cmp(&num(b)).then_with(|| a.cmp(b))
    }
}

/// The three kinds of order: built in, built in reversed, the application's.
#[cfg(not(feature = "shuttle"))]
fn order(which: usize) -> KeyComparator {
    match which {
        0 => KeyComparator::Bytewise,
        1 => KeyComparator::ReverseBytewise,
        _ => KeyComparator::User(Arc::new(U32Le)),
    }
}

fn collect(list: Arc<SkipList>) -> Vec<Vec<u8>> {
    let mut c = Cursor::new(list);
    let mut out = Vec::new();
    c.seek_to_first();
    while c.valid() {
        out.push(c.key().to_vec());
        c.next();
    }
    out
}

// Shuttle's atomics work only inside a shuttle execution, so the ordinary tests
// and the model-checked ones never build together.
#[cfg(not(feature = "shuttle"))]
mod std_threads {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn empty_list() {
        let list = Arc::new(SkipList::new(4096));
        let mut c = Cursor::new(list.clone());
        c.seek_to_first();
        assert!(!c.valid());
        c.seek_to_last();
        assert!(!c.valid());
        c.seek(b"anything");
        assert!(!c.valid());
        c.seek_for_prev(b"anything");
        assert!(!c.valid());
        assert!(list.seek_entry(b"").is_none());
        assert!(list.is_empty());
    }

    #[test]
    fn memory_usage_is_exact_and_grows() {
        let list = SkipList::new(1 << 20);
        let before = list.memory_usage();
        insert(&list, &ikey(1, 1), &[7u8; 100]);
        let grew = list.memory_usage() - before;
        // header + at least one link + 12-byte key + 100-byte value, rounded to 8.
        assert!(
            (HEADER + LINK + 12 + 100..=HEADER + MAX_HEIGHT * LINK + 12 + 100 + 8).contains(&grew)
        );
    }

    #[test]
    fn a_key_too_long_for_the_header_is_refused_before_allocating() {
        let list = SkipList::new(1 << 10);
        let before = list.memory_usage();
        let err = list
            .insert_with(KEY_LEN_MASK as usize + 1, 0, |_, _| unreachable!())
            .unwrap_err();
        assert!(err.to_string().contains("16 MiB"), "{err}");
        assert_eq!(list.memory_usage(), before);
        // The longest key the header holds still round-trips.
        let key = vec![b'k'; KEY_LEN_MASK as usize];
        list.insert_with(key.len(), 3, |k, v| {
            k.copy_from_slice(&key);
            v.copy_from_slice(b"val");
        })
        .unwrap();
        let mut c = Cursor::new(Arc::new(list));
        c.seek_to_first();
        assert_eq!((c.key().len(), c.value()), (key.len(), &b"val"[..]));
    }

    #[test]
    fn arena_overflow_still_works() {
        // A tiny arena: most nodes overflow to the heap.
        let list = Arc::new(SkipList::new(64));
        for i in 0..500u32 {
            insert(&list, &ikey(i, 1), &[1u8; 300]);
        }
        assert_eq!(collect(list.clone()).len(), 500);
        assert!(list.memory_usage() >= 500 * 300);
    }

    proptest! {
        #[test]
        fn matches_btreeset_model(keys in proptest::collection::btree_set((0u32..500, 0u64..5), 0..300),
                                  probes in proptest::collection::vec((0u32..520, 0u64..6), 0..50),
                                  which in 0usize..3) {
            let order = order(which);
            let list = Arc::new(SkipList::with_order(1 << 16, order.clone()));
            let model: BTreeSet<Vec<u8>> = keys.iter().map(|&(u, s)| ikey(u, s)).collect();
            // Insert in an order unrelated to key order.
            let mut shuffled: Vec<_> = model.iter().cloned().collect();
            shuffled.reverse();
            let third = shuffled.len() / 3;
            shuffled.rotate_left(third);
            for k in &shuffled { insert(&list, k, k); }
            let mut sorted: Vec<_> = model.iter().cloned().collect();
            sorted.sort_by(|a, b| order.compare_internal(a, b));
            prop_assert_eq!(collect(list.clone()), sorted.clone());
            prop_assert_eq!(list.len(), sorted.len());

            let mut c = Cursor::new(list.clone());
            for &(u, s) in &probes {
                let target = ikey(u, s);
                let ge = sorted.iter().find(|k| order.compare_internal(k, &target).is_ge());
                c.seek(&target);
                prop_assert_eq!(c.valid().then(|| c.key().to_vec()), ge.cloned());
                prop_assert_eq!(list.seek_entry(&target).map(|(k, v)| { assert_eq!(k, v); k.to_vec() }), ge.cloned());
                let le = sorted.iter().rev().find(|k| order.compare_internal(k, &target).is_le());
                c.seek_for_prev(&target);
                prop_assert_eq!(c.valid().then(|| c.key().to_vec()), le.cloned());
            }
            // Backward iteration.
            let mut back = Vec::new();
            c.seek_to_last();
            while c.valid() { back.push(c.key().to_vec()); c.prev(); }
            back.reverse();
            prop_assert_eq!(back, sorted);
        }
    }

    #[test]
    fn concurrent_writers_and_readers() {
        let list = Arc::new(SkipList::new(1 << 20));
        let writers: Vec<_> = (0..4u32)
            .map(|t| {
                let list = list.clone();
                std::thread::spawn(move || {
                    for i in 0..5000u32 {
                        let k = ikey(i * 4 + t, u64::from(t));
                        insert(&list, &k, &k);
                    }
                })
            })
            .collect();
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let list = list.clone();
                std::thread::spawn(move || {
                    for _ in 0..20 {
                        // Every snapshot of the list a reader walks is sorted, and
                        // every entry's value is intact.
                        let mut c = Cursor::new(list.clone());
                        c.seek_to_first();
                        let mut prev: Option<Vec<u8>> = None;
                        while c.valid() {
                            assert_eq!(c.key(), c.value());
                            if let Some(p) = &prev {
                                assert_eq!(compare_internal(p, c.key()), KeyOrdering::Less);
                            }
                            prev = Some(c.key().to_vec());
                            c.next();
                        }
                    }
                })
            })
            .collect();
        for h in writers.into_iter().chain(readers) {
            h.join().unwrap();
        }
        let all = collect(list.clone());
        assert_eq!(all.len(), 20_000);
        assert!(all
            .windows(2)
            .all(|w| compare_internal(&w[0], &w[1]) == KeyOrdering::Less));
    }
}

#[cfg(feature = "shuttle")]
mod shuttle_model {
    use super::*;

    /// Model-checks concurrent inserts and a concurrent reader with shuttle's
    /// randomized scheduler (`cargo test -p strata --features shuttle --lib memtable::`).
    #[test]
    fn shuttle_concurrent_inserts() {
        shuttle::check_random(
            || {
                let list = Arc::new(SkipList::new(1 << 12));
                let writers: Vec<_> = (0..3u32)
                    .map(|t| {
                        let list = list.clone();
                        shuttle::thread::spawn(move || {
                            for i in 0..4u32 {
                                let k = ikey(i * 3 + t, 1);
                                insert(&list, &k, &k);
                            }
                        })
                    })
                    .collect();
                let seeker = {
                    let list = list.clone();
                    shuttle::thread::spawn(move || {
                        // A seek never lands before its target, even while inserts
                        // link smaller nodes right where it is looking.
                        let mut c = Cursor::new(list.clone());
                        for target in [ikey(5, 1), ikey(2, 1), ikey(9, 1)] {
                            c.seek(&target);
                            if c.valid() {
                                assert_ne!(compare_internal(c.key(), &target), KeyOrdering::Less);
                            }
                            if let Some((k, _)) = list.seek_entry(&target) {
                                assert_ne!(compare_internal(k, &target), KeyOrdering::Less);
                            }
                        }
                    })
                };
                let reader = {
                    let list = list.clone();
                    shuttle::thread::spawn(move || {
                        let mut c = Cursor::new(list);
                        c.seek_to_first();
                        let mut prev: Option<Vec<u8>> = None;
                        while c.valid() {
                            assert_eq!(c.key(), c.value());
                            if let Some(p) = &prev {
                                assert_eq!(compare_internal(p, c.key()), KeyOrdering::Less);
                            }
                            prev = Some(c.key().to_vec());
                            c.next();
                        }
                    })
                };
                for w in writers {
                    w.join().unwrap();
                }
                reader.join().unwrap();
                seeker.join().unwrap();
                let all = collect(list);
                assert_eq!(all.len(), 12);
                assert!(all
                    .windows(2)
                    .all(|w| compare_internal(&w[0], &w[1]) == KeyOrdering::Less));
            },
            2000,
        );
    }
}
