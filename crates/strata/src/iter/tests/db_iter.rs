//! DbIterator and DbRange against a `BTreeMap` model of the visible state.

use std::collections::BTreeMap;

use proptest::prelude::*;

use super::VecIterator;
use crate::iter::db_iter::DbIterator;
use crate::iter::db_range::DbRange;
use crate::iter::merging::MergingIterator;
use crate::key::{internal_key, pack_tag, SequenceNumber, ValueType};
use crate::key_order::KeyComparator;
use crate::memtable::MemTable;

/// Keys written by the histories.
const WRITTEN: [&[u8]; 6] = [b"", b"a", b"aa", b"b", b"c", b"d"];
/// Keys used as bounds and seek targets: the written ones and some in between.
const PROBES: [&[u8]; 9] = [b"", b"a", b"aa", b"ab", b"b", b"bb", b"c", b"d", b"z"];

/// One write: user key index, put (else delete), the child (source) it lands in.
type Write = (usize, bool, usize);

#[derive(Debug, Clone)]
struct Case {
    writes: Vec<Write>,
    num_children: usize,
    snapshot: SequenceNumber,
    lower: Option<usize>,
    upper: Option<usize>,
}

impl Case {
    /// The sources: write `i` gets sequence number `i + 1`.
    fn children(&self) -> Vec<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut children = vec![Vec::new(); self.num_children];
        for (i, &(k, put, c)) in self.writes.iter().enumerate() {
            let seq = i as u64 + 1;
            let t = if put {
                ValueType::Put
            } else {
                ValueType::Delete
            };
            let value = if put {
                format!("v{seq}").into_bytes()
            } else {
                Vec::new()
            };
            children[c % self.num_children].push((internal_key(WRITTEN[k], seq, t), value));
        }
        children
    }

    fn bounds(&self) -> (Option<Vec<u8>>, Option<Vec<u8>>) {
        (
            self.lower.map(|i| PROBES[i].to_vec()),
            self.upper.map(|i| PROBES[i].to_vec()),
        )
    }

    fn iter(&self) -> DbIterator {
        self.iter_failing(None)
    }

    /// Like `iter`, but `failure = Some((child, entry))` makes that child fail
    /// transiently on landing on that entry.
    fn iter_failing(&self, failure: Option<(usize, usize)>) -> DbIterator {
        let children = self.children();
        let inner = MergingIterator::new(
            children
                .into_iter()
                .enumerate()
                .map(|(i, c)| match failure {
                    Some((fc, fe)) if fc % self.num_children == i => {
                        VecIterator::failing_transiently_at(c, fe).boxed()
                    }
                    _ => VecIterator::new(c).boxed(),
                })
                .collect(),
        );
        let (lower, upper) = self.bounds();
        DbIterator::new(
            Box::new(inner),
            self.snapshot,
            lower,
            upper,
            KeyComparator::Bytewise,
        )
    }

    /// The visible state: newest version with seq <= snapshot, if a put, in bounds.
    fn model(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut newest: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
        for (i, &(k, put, _)) in self.writes.iter().enumerate() {
            let seq = i as u64 + 1;
            if seq <= self.snapshot {
                newest.insert(
                    WRITTEN[k].to_vec(),
                    put.then(|| format!("v{seq}").into_bytes()),
                );
            }
        }
        let (lower, upper) = self.bounds();
        newest
            .into_iter()
            .filter(|(k, _)| lower.as_ref().is_none_or(|l| k >= l))
            .filter(|(k, _)| upper.as_ref().is_none_or(|u| k < u))
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect()
    }
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::collection::vec(
            (0usize..WRITTEN.len(), prop::bool::weighted(0.7), 0usize..4),
            0..40,
        ),
        1usize..5,
        0u64..45,
        prop::option::weighted(0.4, 0usize..PROBES.len()),
        prop::option::weighted(0.4, 0usize..PROBES.len()),
    )
        .prop_map(|(writes, num_children, snapshot, lower, upper)| Case {
            writes,
            num_children,
            snapshot,
            lower,
            upper,
        })
}

#[derive(Debug, Clone)]
enum Op {
    SeekToFirst,
    SeekToLast,
    Seek(usize),
    SeekForPrev(usize),
    Next,
    Prev,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::SeekToFirst),
        1 => Just(Op::SeekToLast),
        2 => (0usize..PROBES.len()).prop_map(Op::Seek),
        2 => (0usize..PROBES.len()).prop_map(Op::SeekForPrev),
        5 => Just(Op::Next),
        5 => Just(Op::Prev),
    ]
}

fn scan_forward(it: &mut DbIterator) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().unwrap().to_vec(), it.value().unwrap().to_vec()));
        it.next();
    }
    out
}

fn scan_backward(it: &mut DbIterator) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    it.seek_to_last();
    while it.valid() {
        out.push((it.key().unwrap().to_vec(), it.value().unwrap().to_vec()));
        it.prev();
    }
    out
}

fn range(c: &Case) -> DbRange {
    DbRange::new(c.iter(), c.iter())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn scans_match_model(c in case()) {
        let model = c.model();
        let mut it = c.iter();
        prop_assert_eq!(scan_forward(&mut it), model.clone());
        let mut reversed = model;
        reversed.reverse();
        prop_assert_eq!(scan_backward(&mut it), reversed);
        prop_assert!(it.status().is_ok());
    }

    #[test]
    fn random_moves_match_model(c in case(), ops in prop::collection::vec(op(), 1..50)) {
        let model = c.model();
        let mut it = c.iter();
        let mut pos: Option<usize> = None;
        for op in ops {
            match &op {
                Op::SeekToFirst => {
                    it.seek_to_first();
                    pos = (!model.is_empty()).then_some(0);
                }
                Op::SeekToLast => {
                    it.seek_to_last();
                    pos = model.len().checked_sub(1);
                }
                Op::Seek(t) => {
                    it.seek(PROBES[*t]);
                    let i = model.partition_point(|(k, _)| k.as_slice() < PROBES[*t]);
                    pos = (i < model.len()).then_some(i);
                }
                Op::SeekForPrev(t) => {
                    it.seek_for_prev(PROBES[*t]);
                    let i = model.partition_point(|(k, _)| k.as_slice() <= PROBES[*t]);
                    pos = i.checked_sub(1);
                }
                Op::Next => {
                    let Some(p) = pos else { continue };
                    it.next();
                    pos = (p + 1 < model.len()).then_some(p + 1);
                }
                Op::Prev => {
                    let Some(p) = pos else { continue };
                    it.prev();
                    pos = p.checked_sub(1);
                }
            }
            prop_assert_eq!(it.valid(), pos.is_some(), "after {:?}", op);
            if let Some(p) = pos {
                prop_assert_eq!(it.key(), Some(model[p].0.as_slice()), "after {:?}", op);
                prop_assert_eq!(it.value(), Some(model[p].1.as_slice()), "after {:?}", op);
            }
            prop_assert!(it.status().is_ok());
        }
    }

    /// With a child that fails transiently, every entry shown is right, and the
    /// iterator only goes invalid early with the error reported.
    #[test]
    fn random_moves_with_a_failing_child_never_lie(c in case(), fc in 0usize..4, fe in 0usize..12,
                                                   ops in prop::collection::vec(op(), 1..50)) {
        let model = c.model();
        let mut it = c.iter_failing(Some((fc, fe)));
        let mut pos: Option<usize> = None;
        for op in ops {
            match &op {
                Op::SeekToFirst => {
                    it.seek_to_first();
                    pos = (!model.is_empty()).then_some(0);
                }
                Op::SeekToLast => {
                    it.seek_to_last();
                    pos = model.len().checked_sub(1);
                }
                Op::Seek(t) => {
                    it.seek(PROBES[*t]);
                    let i = model.partition_point(|(k, _)| k.as_slice() < PROBES[*t]);
                    pos = (i < model.len()).then_some(i);
                }
                Op::SeekForPrev(t) => {
                    it.seek_for_prev(PROBES[*t]);
                    let i = model.partition_point(|(k, _)| k.as_slice() <= PROBES[*t]);
                    pos = i.checked_sub(1);
                }
                Op::Next | Op::Prev if !it.valid() => continue,
                Op::Next => {
                    it.next();
                    pos = pos.map(|p| p + 1).filter(|&p| p < model.len());
                }
                Op::Prev => {
                    it.prev();
                    pos = pos.and_then(|p| p.checked_sub(1));
                }
            }
            if it.valid() {
                prop_assert!(it.status().is_ok());
                let p = pos.unwrap();
                prop_assert_eq!(it.key(), Some(model[p].0.as_slice()), "after {:?}", op);
                prop_assert_eq!(it.value(), Some(model[p].1.as_slice()), "after {:?}", op);
            } else {
                prop_assert!(pos.is_none() || it.status().is_err(), "skipped data after {:?}", op);
                pos = None;
            }
        }
    }

    #[test]
    fn range_both_ends_match_model(c in case(), sides in prop::collection::vec(any::<bool>(), 0..30)) {
        let model = c.model();
        let forward: Vec<_> = range(&c).collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(&forward, &model);
        let mut backward: Vec<_> = range(&c).rev().collect::<Result<_, _>>().unwrap();
        backward.reverse();
        prop_assert_eq!(&backward, &model);

        // Alternate ends as `sides` says (then front only) until both are done.
        let mut r = range(&c);
        let (mut front, mut back) = (Vec::new(), Vec::new());
        let mut sides = sides.into_iter();
        loop {
            let item = if sides.next().unwrap_or(true) {
                r.next().map(|x| front.push(x.unwrap()))
            } else {
                r.next_back().map(|x| back.push(x.unwrap()))
            };
            if item.is_none() {
                break;
            }
        }
        prop_assert!(r.next().is_none() && r.next_back().is_none());
        back.reverse();
        front.extend(back);
        prop_assert_eq!(front, model);
    }
}

/// The realistic stack: memtables (newest first) under a merging iterator.
#[test]
fn over_memtables() {
    let old = MemTable::new(1 << 16);
    let new = MemTable::new(1 << 16);
    old.add(1, ValueType::Put, b"a", b"a1").unwrap();
    old.add(2, ValueType::Put, b"b", b"b2").unwrap();
    old.add(3, ValueType::Put, b"c", b"c3").unwrap();
    new.add(4, ValueType::Delete, b"b", b"").unwrap();
    new.add(5, ValueType::Put, b"c", b"c5").unwrap();
    new.add(6, ValueType::Put, b"d", b"d6").unwrap();
    let view = |seq| {
        let inner = MergingIterator::new(vec![Box::new(new.iter()), Box::new(old.iter())]);
        DbIterator::new(Box::new(inner), seq, None, None, KeyComparator::Bytewise)
    };
    let pairs = |v: &[(&str, &str)]| -> Vec<(Vec<u8>, Vec<u8>)> {
        v.iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
            .collect()
    };
    assert_eq!(
        scan_forward(&mut view(6)),
        pairs(&[("a", "a1"), ("c", "c5"), ("d", "d6")])
    );
    assert_eq!(
        scan_backward(&mut view(6)),
        pairs(&[("d", "d6"), ("c", "c5"), ("a", "a1")])
    );
    assert_eq!(
        scan_forward(&mut view(3)),
        pairs(&[("a", "a1"), ("b", "b2"), ("c", "c3")])
    );
    assert_eq!(
        scan_backward(&mut view(4)),
        pairs(&[("c", "c3"), ("a", "a1")])
    );
}

fn single(
    entries: Vec<(Vec<u8>, Vec<u8>)>,
    seq: u64,
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
) -> DbIterator {
    DbIterator::new(
        VecIterator::new(entries).boxed(),
        seq,
        lower.map(<[u8]>::to_vec),
        upper.map(<[u8]>::to_vec),
        KeyComparator::Bytewise,
    )
}

fn put(k: &[u8], seq: u64, v: &[u8]) -> (Vec<u8>, Vec<u8>) {
    (internal_key(k, seq, ValueType::Put), v.to_vec())
}

fn del(k: &[u8], seq: u64) -> (Vec<u8>, Vec<u8>) {
    (internal_key(k, seq, ValueType::Delete), Vec::new())
}

#[test]
fn empty_user_key_is_an_ordinary_key() {
    let entries = vec![
        put(b"", 1, b"e1"),
        put(b"", 3, b"e3"),
        del(b"", 5),
        put(b"a", 2, b"a2"),
    ];
    let mut it = single(entries.clone(), 4, None, None);
    assert_eq!(
        scan_forward(&mut it),
        vec![
            (b"".to_vec(), b"e3".to_vec()),
            (b"a".to_vec(), b"a2".to_vec())
        ]
    );
    assert_eq!(
        scan_backward(&mut it),
        vec![
            (b"a".to_vec(), b"a2".to_vec()),
            (b"".to_vec(), b"e3".to_vec())
        ]
    );
    it.seek_for_prev(b"");
    assert_eq!(it.value(), Some(&b"e3"[..]));
    let mut it = single(entries.clone(), 9, None, None);
    assert_eq!(
        scan_backward(&mut it),
        vec![(b"a".to_vec(), b"a2".to_vec())]
    );
    let mut it = single(entries, 4, Some(b""), Some(b"a"));
    assert_eq!(scan_backward(&mut it), vec![(b"".to_vec(), b"e3".to_vec())]);
}

#[test]
fn bounds_that_exclude_everything() {
    let entries = vec![put(b"a", 1, b"1"), put(b"b", 2, b"2"), put(b"c", 3, b"3")];
    type Bounds<'a> = (Option<&'a [u8]>, Option<&'a [u8]>);
    let cases: [Bounds; 5] = [
        (Some(b"d"), None),
        (None, Some(b"a")),
        (None, Some(b"")),
        (Some(b"b"), Some(b"b")),
        (Some(b"c"), Some(b"a")),
    ];
    for (lower, upper) in cases {
        let mut it = single(entries.clone(), 9, lower, upper);
        assert!(scan_forward(&mut it).is_empty(), "{lower:?}..{upper:?}");
        assert!(scan_backward(&mut it).is_empty(), "{lower:?}..{upper:?}");
        for probe in [&b""[..], b"a", b"b", b"c", b"z"] {
            it.seek(probe);
            assert!(!it.valid(), "seek {probe:?} in {lower:?}..{upper:?}");
            it.seek_for_prev(probe);
            assert!(
                !it.valid(),
                "seek_for_prev {probe:?} in {lower:?}..{upper:?}"
            );
        }
        assert!(it.status().is_ok());
        let mut r = DbRange::new(
            single(entries.clone(), 9, lower, upper),
            single(entries.clone(), 9, lower, upper),
        );
        assert!(r.next().is_none() && r.next_back().is_none());
    }
    let mut it = single(entries, 9, Some(b"b"), Some(b"b\0"));
    assert_eq!(scan_forward(&mut it), vec![(b"b".to_vec(), b"2".to_vec())]);
}

#[test]
fn seeks_clamp_to_bounds() {
    let entries = vec![
        put(b"a", 1, b"1"),
        put(b"b", 2, b"2"),
        put(b"c", 3, b"3"),
        put(b"d", 4, b"4"),
    ];
    let mut it = single(entries, 9, Some(b"b"), Some(b"d"));
    it.seek(b"a");
    assert_eq!(it.key(), Some(&b"b"[..]));
    it.seek_for_prev(b"z");
    assert_eq!(it.key(), Some(&b"c"[..]));
    it.next();
    assert!(!it.valid());
    it.seek_to_last();
    it.prev();
    assert_eq!(it.key(), Some(&b"b"[..]));
    it.prev();
    assert!(!it.valid());
}

/// Many versions of one key with the visible one in the middle, reached from
/// both directions and across direction switches.
#[test]
fn many_versions_with_a_snapshot_in_the_middle() {
    let mut entries = vec![put(b"a", 1, b"a1"), put(b"c", 2, b"c2")];
    for seq in 10..30 {
        entries.push(if seq % 3 == 0 {
            del(b"b", seq)
        } else {
            put(b"b", seq, format!("b{seq}").as_bytes())
        });
    }
    let mut it = single(entries, 20, None, None);
    it.seek_to_last();
    assert_eq!(it.key(), Some(&b"c"[..]));
    it.prev();
    assert_eq!((it.key(), it.value()), (Some(&b"b"[..]), Some(&b"b20"[..])));
    it.next();
    assert_eq!(it.key(), Some(&b"c"[..]));
    it.prev();
    it.prev();
    assert_eq!(it.key(), Some(&b"a"[..]));
    it.next();
    assert_eq!(it.value(), Some(&b"b20"[..]));
    it.prev();
    assert_eq!(it.value(), Some(&b"a1"[..]));
}

fn corrupt_type_entry(k: &[u8], seq: u64) -> (Vec<u8>, Vec<u8>) {
    let mut key = k.to_vec();
    key.extend_from_slice(&pack_tag(seq, 7).to_le_bytes());
    (key, b"?".to_vec())
}

#[test]
fn malformed_keys_are_corruption_in_both_directions() {
    let short = (b"short".to_vec(), b"?".to_vec());
    for bad in [short, corrupt_type_entry(b"b", 2)] {
        let entries = vec![put(b"a", 1, b"1"), bad, put(b"c", 3, b"3")];
        let mut it = single(entries.clone(), 9, None, None);
        it.seek_to_first();
        if it.valid() {
            // The short key sorts first; the bad-type key comes after "a".
            assert_eq!(it.key(), Some(&b"a"[..]));
            it.next();
        }
        assert!(!it.valid());
        let err = it.status().unwrap_err();
        assert!(err.is_corruption(), "{err}");
        assert!(
            err.to_string().contains("tag") || err.to_string().contains("value type"),
            "{err}"
        );

        let mut it = single(entries, 9, None, None);
        it.seek_to_last();
        while it.valid() {
            it.prev();
        }
        assert!(it.status().unwrap_err().is_corruption());
    }
}

#[test]
fn inner_error_is_reported_and_no_stale_candidate_is_shown() {
    // Going backward the scan holds "old" when reading the newer version fails:
    // showing "old" would resurrect an overwritten value.
    let entries = vec![put(b"b", 5, b"new"), put(b"b", 3, b"old")];
    let mut it = DbIterator::new(
        VecIterator::failing_at(entries.clone(), 0).boxed(),
        9,
        None,
        None,
        KeyComparator::Bytewise,
    );
    it.seek_to_last();
    assert!(!it.valid());
    assert!(it.status().is_err());
    // Forward, the same failure simply ends the scan with the error.
    let mut it = DbIterator::new(
        VecIterator::failing_at(entries, 1).boxed(),
        9,
        None,
        None,
        KeyComparator::Bytewise,
    );
    it.seek_to_first();
    assert_eq!(it.value(), Some(&b"new"[..]));
    it.next();
    assert!(!it.valid());
    assert!(it.status().is_err());
}

/// A range over three entries whose front iterator fails at the second.
fn range_failing_at_the_second() -> DbRange {
    let entries = vec![put(b"a", 1, b"1"), put(b"b", 2, b"2"), put(b"c", 3, b"3")];
    let front = DbIterator::new(
        VecIterator::failing_at(entries.clone(), 1).boxed(),
        9,
        None,
        None,
        KeyComparator::Bytewise,
    );
    let back = DbIterator::new(
        VecIterator::new(entries).boxed(),
        9,
        None,
        None,
        KeyComparator::Bytewise,
    );
    DbRange::new(front, back)
}

#[test]
fn range_yields_an_error_once_then_ends() {
    let mut r = range_failing_at_the_second();
    assert_eq!(r.next().unwrap().unwrap(), (b"a".to_vec(), b"1".to_vec()));
    assert!(r.next().unwrap().is_err());
    assert!(r.next().is_none());
    assert!(r.next_back().is_none());
}

#[test]
fn borrowed_entries_are_what_the_owned_ones_are_from_both_ends() {
    let entries: Vec<_> = (0..40u8)
        .map(|i| put(&[b'a' + i / 2, i], u64::from(i) + 1, &[i; 3]))
        .collect();
    let make = || {
        let it = || {
            DbIterator::new(
                VecIterator::new(entries.clone()).boxed(),
                99,
                None,
                None,
                KeyComparator::Bytewise,
            )
        };
        DbRange::new(it(), it())
    };
    let (mut owned, mut borrowed) = (make(), make());
    let mut yielded = 0;
    // Alternate ends in an uneven rhythm until both meet in the middle.
    for step in 0.. {
        let from_front = step % 3 != 2;
        let want = if from_front {
            owned.next()
        } else {
            owned.next_back()
        };
        let got = if from_front {
            borrowed.next_entry()
        } else {
            borrowed.next_back_entry()
        }
        .map(|e| e.map(|(k, v)| (k.to_vec(), v.to_vec())));
        match (want, got) {
            (None, None) => break,
            (Some(Ok(w)), Some(Ok(g))) => {
                assert_eq!(w, g, "step {step}");
                yielded += 1;
            }
            (w, g) => panic!("step {step}: {w:?} against {g:?}"),
        }
    }
    assert_eq!(
        yielded,
        entries.len(),
        "each entry once, from one end or the other"
    );
    assert!(borrowed.next_entry().is_none() && borrowed.next_back_entry().is_none());
}

#[test]
fn a_borrowed_range_reports_an_error_once() {
    let mut r = range_failing_at_the_second();
    assert_eq!(r.next_entry().unwrap().unwrap(), (&b"a"[..], &b"1"[..]));
    assert!(r.next_entry().unwrap().is_err());
    assert!(r.next_entry().is_none() && r.next_back_entry().is_none());
}
