//! Range tombstones against a naive model: every query is the maximum over the
//! tombstones that cover a key, computed tombstone by tombstone.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::key::internal_key;

type Model = Vec<(Vec<u8>, Vec<u8>, SequenceNumber)>;

fn tombstone(start: &[u8], end: &[u8], seq: SequenceNumber) -> RangeTombstone {
    RangeTombstone::new(start.to_vec(), end.to_vec(), seq, &KeyComparator::Bytewise).unwrap()
}

fn build(model: &Model) -> FragmentedRangeTombstones {
    FragmentedRangeTombstones::new(
        model.iter().map(|(s, e, q)| tombstone(s, e, *q)),
        &KeyComparator::Bytewise,
    )
}

/// The largest `seq <= read_seq` of a tombstone covering `key`, or 0.
fn naive_max(model: &Model, key: &[u8], read_seq: SequenceNumber) -> SequenceNumber {
    model
        .iter()
        .filter(|(s, e, q)| s.as_slice() <= key && key < e.as_slice() && *q <= read_seq)
        .map(|(_, _, q)| *q)
        .max()
        .unwrap_or(0)
}

/// Every key of up to three letters from `a..=d`: all the keys the strategies
/// below can name, and the ones between them.
fn all_keys() -> Vec<Vec<u8>> {
    let mut keys = vec![Vec::new()];
    let mut last = vec![Vec::new()];
    for _ in 0..3 {
        let next: Vec<Vec<u8>> = last
            .iter()
            .flat_map(|k: &Vec<u8>| {
                (b'a'..=b'd').map(move |c| {
                    let mut k = k.clone();
                    k.push(c);
                    k
                })
            })
            .collect();
        keys.extend(next.iter().cloned());
        last = next;
    }
    keys.sort();
    keys
}

fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(b'a'..=b'd', 0..=3)
}

fn model_strategy() -> impl Strategy<Value = Model> {
    proptest::collection::vec((key_strategy(), key_strategy(), 1u64..40), 0..12).prop_map(|v| {
        v.into_iter()
            .filter(|(a, b, _)| a != b)
            .map(|(a, b, q)| if a < b { (a, b, q) } else { (b, a, q) })
            .collect()
    })
}

fn snapshots_strategy() -> impl Strategy<Value = Vec<SequenceNumber>> {
    proptest::collection::vec(1u64..45, 0..4).prop_map(|mut v| {
        v.sort_unstable();
        v.dedup();
        v
    })
}

fn check_invariants(f: &FragmentedRangeTombstones) {
    let frags: Vec<Fragment<'_>> = f.fragments().collect();
    for w in frags.windows(2) {
        assert!(w[0].end <= w[1].start, "fragments overlap: {w:?}");
    }
    for fr in &frags {
        assert!(fr.start < fr.end, "empty fragment {fr:?}");
        assert!(!fr.seqs.is_empty(), "fragment without seqs {fr:?}");
        assert!(fr.seqs.windows(2).all(|w| w[0] > w[1]), "seqs {fr:?}");
    }
    assert_eq!(f.num_tombstones(), f.tombstones().count());
}

#[test]
fn fragments_as_drawn() {
    let f = FragmentedRangeTombstones::new(
        [
            tombstone(b"c", b"d", 4),
            tombstone(b"g", b"h", 7),
            tombstone(b"a", b"z", 10),
        ],
        &KeyComparator::Bytewise,
    );
    let got: Vec<(&[u8], &[u8], Vec<u64>)> = f
        .fragments()
        .map(|fr| (fr.start, fr.end, fr.seqs.to_vec()))
        .collect();
    let want: Vec<(&[u8], &[u8], Vec<u64>)> = vec![
        (b"a", b"c", vec![10]),
        (b"c", b"d", vec![10, 4]),
        (b"d", b"g", vec![10]),
        (b"g", b"h", vec![10, 7]),
        (b"h", b"z", vec![10]),
    ];
    assert_eq!(got, want);
    assert_eq!(f.max_covering_seq(b"e", 100), 10);
    assert_eq!(f.max_covering_seq(b"e", 9), 0);
    assert_eq!(f.max_covering_seq(b"c", 9), 4);
    assert_eq!(f.max_covering_seq(b"z", 100), 0);
    assert_eq!(f.seq_range(), Some((10, 4)));
    assert_eq!(f.smallest_key(), Some(&b"a"[..]));
    assert_eq!(f.largest_end(), Some(&b"z"[..]));
}

#[test]
fn touching_tombstones_at_one_seq_make_one_fragment() {
    let f = FragmentedRangeTombstones::new(
        [
            tombstone(b"a", b"c", 5),
            tombstone(b"c", b"e", 5),
            tombstone(b"b", b"d", 5),
        ],
        &KeyComparator::Bytewise,
    );
    let got: Vec<_> = f.fragments().map(|fr| (fr.start, fr.end)).collect();
    assert_eq!(got, vec![(&b"a"[..], &b"e"[..])]);
}

#[test]
fn empty_ranges_are_refused() {
    for (start, end) in [(&b"b"[..], &b"b"[..]), (b"b", b"a")] {
        let err = RangeTombstone::new(start.to_vec(), end.to_vec(), 1, &KeyComparator::Bytewise)
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidArgument {
                    field: "delete_range",
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.to_string().contains("begin key"), "{err}");
    }
    let m = RangeDelMemTable::new(&KeyComparator::Bytewise);
    assert!(m.add(1, b"x", b"x").is_err());
    assert!(m.is_empty());
}

#[test]
fn block_entries_decode_or_say_why_not() {
    let t = tombstone(b"a", b"m", 7);
    let key = t.internal_start_key();
    assert_eq!(
        RangeTombstone::decode_entry(&key, b"m", &KeyComparator::Bytewise),
        Ok(t)
    );
    let inverted = RangeTombstone::decode_entry(&key, b"a", &KeyComparator::Bytewise).unwrap_err();
    assert!(inverted.contains("end <= start"), "{inverted}");
    let put = internal_key(b"a", 7, crate::key::ValueType::Put);
    let wrong_type =
        RangeTombstone::decode_entry(&put, b"m", &KeyComparator::Bytewise).unwrap_err();
    assert!(wrong_type.contains("value type"), "{wrong_type}");
    assert!(RangeTombstone::decode_entry(b"short", b"m", &KeyComparator::Bytewise).is_err());
}

#[test]
fn end_sentinel_sorts_before_every_entry_of_its_key() {
    let sentinel = range_end_sentinel(b"k");
    assert!(is_range_end_sentinel(&sentinel));
    assert!(!is_range_end_sentinel(&internal_key(
        b"k",
        MAX_SEQUENCE_NUMBER,
        crate::key::ValueType::Put
    )));
    let newest = internal_key(b"k", MAX_SEQUENCE_NUMBER - 1, crate::key::ValueType::Put);
    assert_eq!(
        crate::key::compare_internal(&sentinel, &newest),
        std::cmp::Ordering::Less
    );
}

#[test]
fn memtable_view_is_cached_until_a_tombstone_arrives() {
    let m = RangeDelMemTable::new(&KeyComparator::Bytewise);
    let empty = m.fragmented();
    assert!(empty.is_empty());
    m.add(3, b"a", b"c").unwrap();
    let one = m.fragmented();
    assert_eq!(one.max_covering_seq(b"b", 3), 3);
    assert!(Arc::ptr_eq(&one, &m.fragmented()), "rebuilt without news");
    m.add(5, b"b", b"d").unwrap();
    let two = m.fragmented();
    assert!(!Arc::ptr_eq(&one, &two));
    assert_eq!(two.max_covering_seq(b"b", 9), 5);
    assert_eq!(two.max_covering_seq(b"b", 4), 3);
    assert_eq!(m.len(), 2);
    assert!(m.memory_usage() >= 8);
}

/// Writers take sequence numbers in order, insert in parallel and report
/// progress; readers read at the sequence number every writer has passed
/// (as the commit pipeline publishes it) and must see exactly the
/// tombstones at or below it.
#[test]
fn concurrent_inserts_give_readers_consistent_prefixes() {
    const WRITERS: u64 = 3;
    const PER_WRITER: u64 = 300;
    // Tombstone of seq `q`: overlapping ranges over 26 letters.
    let range = |q: u64| {
        let a = b'a' + (q * 7 % 26) as u8;
        let b = (a + 1 + (q % 5) as u8).min(b'z' + 1);
        (vec![a], vec![b])
    };
    let mem = Arc::new(RangeDelMemTable::new(&KeyComparator::Bytewise));
    let progress: Arc<Vec<AtomicU64>> = Arc::new((0..WRITERS).map(|_| AtomicU64::new(0)).collect());
    std::thread::scope(|s| {
        for w in 0..WRITERS {
            let (mem, progress) = (mem.clone(), progress.clone());
            s.spawn(move || {
                for i in 0..PER_WRITER {
                    let q = 1 + w + i * WRITERS;
                    let (a, b) = range(q);
                    mem.add(q, &a, &b).unwrap();
                    progress[w as usize].store(q, Ordering::Release);
                }
            });
        }
        for _ in 0..2 {
            let (mem, progress) = (mem.clone(), progress.clone());
            s.spawn(move || loop {
                // Every seq at or below the slowest writer's last is inserted.
                let published = progress
                    .iter()
                    .map(|p| p.load(Ordering::Acquire))
                    .min()
                    .unwrap_or(0);
                let view = mem.fragmented();
                check_invariants(&view);
                let model: Model = (1..=published)
                    .map(|q| {
                        let (a, b) = range(q);
                        (a, b, q)
                    })
                    .collect();
                for c in b'a'..=b'z' {
                    assert_eq!(
                        view.max_covering_seq(&[c], published),
                        naive_max(&model, &[c], published),
                        "key {} at {published}",
                        c as char
                    );
                }
                if published >= WRITERS * PER_WRITER - (WRITERS - 1) {
                    break;
                }
            });
        }
    });
    assert_eq!(mem.len() as u64, WRITERS * PER_WRITER);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn queries_match_the_model(model in model_strategy(), read_seqs in proptest::collection::vec(0u64..45, 1..4)) {
        let f = build(&model);
        check_invariants(&f);
        let keys = all_keys();
        for &r in &read_seqs {
            for k in &keys {
                let want = naive_max(&model, k, r);
                prop_assert_eq!(f.max_covering_seq(k, r), want, "key {:?} at {}", k, r);
                if let Some(c) = f.covering(k, r) {
                    prop_assert!(c.start <= k.as_slice() && k.as_slice() < c.end);
                    prop_assert_eq!(c.seq, want);
                }
                // next_visible: nothing visible between `k` and the fragment.
                match f.next_visible(k, r) {
                    Some(n) => {
                        prop_assert!(n.end > k.as_slice());
                        prop_assert_eq!(n.seq, naive_max(&model, n.start.max(k.as_slice()), r));
                        for x in keys.iter().filter(|x| x >= &k && x.as_slice() < n.start) {
                            prop_assert_eq!(naive_max(&model, x, r), 0);
                        }
                    }
                    None => for x in keys.iter().filter(|x| x >= &k) {
                        prop_assert_eq!(naive_max(&model, x, r), 0);
                    },
                }
                match f.prev_visible(k, r) {
                    Some(p) => {
                        prop_assert!(p.start <= k.as_slice());
                        prop_assert_eq!(p.seq, naive_max(&model, p.start, r));
                        for x in keys.iter().filter(|x| x <= &k && x.as_slice() >= p.end) {
                            prop_assert_eq!(naive_max(&model, x, r), 0);
                        }
                    }
                    None => for x in keys.iter().filter(|x| x <= &k) {
                        prop_assert_eq!(naive_max(&model, x, r), 0);
                    },
                }
            }
        }
        // Writing out and reading back, or merging, changes nothing.
        prop_assert_eq!(&FragmentedRangeTombstones::new(f.tombstones(), &KeyComparator::Bytewise), &f);
        let (left, right) = model.split_at(model.len() / 2);
        let merged = FragmentedRangeTombstones::merge([&build(&left.to_vec()), &build(&right.to_vec())], &KeyComparator::Bytewise);
        prop_assert_eq!(&merged, &f);
    }

    #[test]
    fn clipping_keeps_answers_inside_and_none_outside(
        model in model_strategy(),
        lower in proptest::option::of(key_strategy()),
        upper in proptest::option::of(key_strategy()),
    ) {
        let f = build(&model);
        let clipped = f.clip(lower.as_deref(), upper.as_deref());
        check_invariants(&clipped);
        for k in &all_keys() {
            let inside = lower.as_ref().is_none_or(|l| k >= l) && upper.as_ref().is_none_or(|u| k < u);
            let want = if inside { f.max_covering_seq(k, 100) } else { 0 };
            prop_assert_eq!(clipped.max_covering_seq(k, 100), want, "key {:?}", k);
        }
    }

    #[test]
    fn compaction_keeps_what_live_readers_see(
        model in model_strategy(),
        snapshots in snapshots_strategy(),
    ) {
        let f = build(&model);
        let kept = f.for_compaction(&snapshots, false);
        let bottom = f.for_compaction(&snapshots, true);
        check_invariants(&kept);
        check_invariants(&bottom);
        prop_assert!(kept.num_tombstones() <= f.num_tombstones());
        // At most one sequence number per stripe and fragment survives.
        let stripe = |q: SequenceNumber| snapshots.partition_point(|&s| s < q);
        for fr in kept.fragments() {
            prop_assert!(fr.seqs.windows(2).all(|w| stripe(w[0]) != stripe(w[1])), "{:?}", fr);
        }
        // Readers: every snapshot, and the latest state.
        let readers: Vec<SequenceNumber> =
            snapshots.iter().copied().chain([MAX_SEQUENCE_NUMBER]).collect();
        let oldest_stripe_top = snapshots.first().copied().unwrap_or(MAX_SEQUENCE_NUMBER);
        for k in &all_keys() {
            for &r in &readers {
                let want = f.max_covering_seq(k, r);
                prop_assert_eq!(kept.max_covering_seq(k, r), want, "key {:?} at {}", k, r);
                // At the bottom, what every reader sees is gone.
                let want_bottom = if want <= oldest_stripe_top { 0 } else { want };
                prop_assert_eq!(bottom.max_covering_seq(k, r), want_bottom);
            }
            // An entry may go iff a newer tombstone covers it with no
            // snapshot in between.
            for seq in 0u64..42 {
                let naive = model.iter().any(|(s, e, q)| {
                    s.as_slice() <= k.as_slice() && k.as_slice() < e.as_slice() && seq < *q
                        && !snapshots.iter().any(|&snap| seq <= snap && snap < *q)
                });
                prop_assert_eq!(f.compaction_may_drop(k, seq, &snapshots), naive, "key {:?}@{}", k, seq);
            }
        }
    }
}
