//! MergingIterator against a model: the sorted union of all children's entries,
//! ordered by internal key then child index, walked with a position index.

use std::cmp::Ordering;

use proptest::prelude::*;

use super::{Pairs, VecIterator};
use crate::iter::merging::MergingIterator;
use crate::iter::InternalIterator;
use crate::key::{compare_internal, internal_key, pack_tag, ValueType};
use crate::key_order::KeyComparator;

const USER_KEYS: [&[u8]; 5] = [b"", b"a", b"ab", b"b", b"c"];

/// One model entry: internal key, child index, value.
type ModelEntry = (Vec<u8>, usize, Vec<u8>);

/// Child entries from `(user key index, seq, is_put)` triples; duplicates within a
/// child are dropped (a source never holds one internal key twice), but equal
/// keys across children are kept to exercise the tie rule.
fn build_children(raw: &[Vec<(usize, u64, bool)>]) -> (Vec<Pairs>, Vec<ModelEntry>) {
    let mut children = Vec::new();
    let mut model = Vec::new();
    for (c, triples) in raw.iter().enumerate() {
        let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for (i, &(k, seq, put)) in triples.iter().enumerate() {
            let t = if put {
                ValueType::Put
            } else {
                ValueType::Delete
            };
            let key = internal_key(USER_KEYS[k % 4], seq, t);
            if entries.iter().any(|(e, _)| *e == key) {
                continue;
            }
            let value = format!("c{c}e{i}").into_bytes();
            model.push((key.clone(), c, value.clone()));
            entries.push((key, value));
        }
        children.push(entries);
    }
    model.sort_by(|a, b| compare_internal(&a.0, &b.0).then(a.1.cmp(&b.1)));
    (children, model)
}

fn merged(children: &[Vec<(Vec<u8>, Vec<u8>)>]) -> MergingIterator {
    MergingIterator::new(
        children
            .iter()
            .map(|c| VecIterator::new(c.clone()).boxed())
            .collect(),
    )
}

fn collect_forward(it: &mut MergingIterator) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    out
}

fn collect_backward(it: &mut MergingIterator) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    it.seek_to_last();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    out
}

fn model_pairs(model: &[ModelEntry]) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .iter()
        .map(|(k, _, v)| (k.clone(), v.clone()))
        .collect()
}

#[derive(Debug, Clone)]
enum Op {
    SeekToFirst,
    SeekToLast,
    Seek(Vec<u8>),
    SeekForPrev(Vec<u8>),
    Next,
    Prev,
}

/// Seek targets: any user key (present or not), any seq, stored or seek type.
fn target() -> impl Strategy<Value = Vec<u8>> {
    (
        0usize..5,
        0u64..22,
        prop::sample::select(vec![0u8, 1, 0xff]),
    )
        .prop_map(|(k, seq, t)| {
            let mut key = USER_KEYS[k].to_vec();
            key.extend_from_slice(&pack_tag(seq, t).to_le_bytes());
            key
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::SeekToFirst),
        1 => Just(Op::SeekToLast),
        2 => target().prop_map(Op::Seek),
        2 => target().prop_map(Op::SeekForPrev),
        5 => Just(Op::Next),
        5 => Just(Op::Prev),
    ]
}

fn children_strategy() -> impl Strategy<Value = Vec<Vec<(usize, u64, bool)>>> {
    prop::collection::vec(
        prop::collection::vec((0usize..4, 0u64..20, any::<bool>()), 0..12),
        0..5,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn merged_scans_equal_sorted_union(raw in children_strategy()) {
        let (children, model) = build_children(&raw);
        let mut it = merged(&children);
        let expected = model_pairs(&model);
        prop_assert_eq!(collect_forward(&mut it), expected.clone());
        let mut reversed = expected;
        reversed.reverse();
        prop_assert_eq!(collect_backward(&mut it), reversed);
        prop_assert!(it.status().is_ok());
    }

    #[test]
    fn random_moves_match_model(raw in children_strategy(),
                                ops in prop::collection::vec(op(), 1..60)) {
        let (children, model) = build_children(&raw);
        let mut it = merged(&children);
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
                    it.seek(t);
                    let i = model.partition_point(|e| compare_internal(&e.0, t) == Ordering::Less);
                    pos = (i < model.len()).then_some(i);
                }
                Op::SeekForPrev(t) => {
                    it.seek_for_prev(t);
                    let i = model.partition_point(|e| compare_internal(&e.0, t) != Ordering::Greater);
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
                prop_assert_eq!(it.key(), model[p].0.as_slice(), "after {:?}", op);
                prop_assert_eq!(it.value(), model[p].2.as_slice(), "after {:?}", op);
            }
            prop_assert!(it.status().is_ok());
        }
    }

    /// With a child that fails transiently, random moves never show a wrong
    /// entry, and the merge only goes invalid early with the error reported.
    #[test]
    fn random_moves_with_a_failing_child_never_lie(raw in children_strategy(),
                                                   victim in any::<prop::sample::Index>(),
                                                   fail in any::<prop::sample::Index>(),
                                                   ops in prop::collection::vec(op(), 1..60)) {
        let (children, model) = build_children(&raw);
        prop_assume!(!children.is_empty());
        let c = victim.index(children.len());
        let f = fail.index(children[c].len().max(1));
        let mut it = MergingIterator::new(children.iter().enumerate().map(|(i, entries)| {
            if i == c {
                VecIterator::failing_transiently_at(entries.clone(), f).boxed()
            } else {
                VecIterator::new(entries.clone()).boxed()
            }
        }).collect());
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
                    it.seek(t);
                    let i = model.partition_point(|e| compare_internal(&e.0, t) == Ordering::Less);
                    pos = (i < model.len()).then_some(i);
                }
                Op::SeekForPrev(t) => {
                    it.seek_for_prev(t);
                    let i = model.partition_point(|e| compare_internal(&e.0, t) != Ordering::Greater);
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
                prop_assert_eq!(it.key(), model[p].0.as_slice(), "after {:?}", op);
                prop_assert_eq!(it.value(), model[p].2.as_slice(), "after {:?}", op);
            } else {
                prop_assert!(pos.is_none() || it.status().is_err(), "skipped data after {:?}", op);
                pos = None;
            }
        }
    }

    /// A child failing on its entry `f` stops the merge exactly where that child
    /// would have been read, in either direction: every earlier entry is yielded,
    /// nothing after, and the error is reported.
    #[test]
    fn child_error_stops_the_merge(raw in children_strategy(), victim in any::<prop::sample::Index>(),
                                   fail in any::<prop::sample::Index>()) {
        let (children, model) = build_children(&raw);
        let nonempty: Vec<usize> = (0..children.len()).filter(|&c| !children[c].is_empty()).collect();
        prop_assume!(!nonempty.is_empty());
        let c = nonempty[victim.index(nonempty.len())];
        let mut sorted = children[c].clone();
        sorted.sort_by(|a, b| compare_internal(&a.0, &b.0));
        let f = fail.index(sorted.len());
        let build = || {
            MergingIterator::new(children.iter().enumerate().map(|(i, entries)| {
                if i == c {
                    VecIterator::failing_at(entries.clone(), f).boxed()
                } else {
                    VecIterator::new(entries.clone()).boxed()
                }
            }).collect())
        };
        let index_of = |j: usize| {
            model.iter().position(|e| e.1 == c && e.0 == sorted[j].0).unwrap()
        };
        let expected = model_pairs(&model);

        // Forward: the failure strikes when the victim steps off entry f - 1.
        let mut it = build();
        let got = collect_forward(&mut it);
        let want = if f == 0 { Vec::new() } else { expected[..=index_of(f - 1)].to_vec() };
        prop_assert_eq!(got, want);
        prop_assert!(it.status().unwrap_err().is_corruption());

        // Backward: it strikes when the victim steps back off entry f + 1.
        let mut it = build();
        let got = collect_backward(&mut it);
        let mut want = if f + 1 == sorted.len() {
            Vec::new()
        } else {
            expected[index_of(f + 1)..].to_vec()
        };
        want.reverse();
        prop_assert_eq!(got, want);
        prop_assert!(it.status().unwrap_err().is_corruption());
    }
}

#[test]
fn no_children_is_empty() {
    let mut it = MergingIterator::new(Vec::new());
    it.seek_to_first();
    assert!(!it.valid());
    it.seek_to_last();
    assert!(!it.valid());
    it.seek(b"anything");
    assert!(!it.valid());
    assert_eq!(it.key(), b"");
    assert!(it.status().is_ok());
}

/// Equal internal keys in two children come out lower child first going forward
/// and in exactly the reverse order going backward, across direction changes.
#[test]
fn ties_follow_child_index_both_ways() {
    let k = internal_key(b"k", 7, ValueType::Put);
    let a = internal_key(b"a", 1, ValueType::Put);
    let z = internal_key(b"z", 1, ValueType::Put);
    let mut it = MergingIterator::new(vec![
        VecIterator::new(vec![
            (k.clone(), b"new".to_vec()),
            (z.clone(), b"z".to_vec()),
        ])
        .boxed(),
        VecIterator::new(vec![
            (a.clone(), b"a".to_vec()),
            (k.clone(), b"old".to_vec()),
        ])
        .boxed(),
    ]);
    it.seek(&k);
    assert_eq!(it.value(), b"new");
    it.next();
    assert_eq!(it.value(), b"old");
    it.prev();
    assert_eq!(it.value(), b"new");
    it.prev();
    assert_eq!(it.value(), b"a");
    it.next();
    assert_eq!(it.value(), b"new");
    it.next();
    assert_eq!(it.value(), b"old");
    it.next();
    assert_eq!(it.value(), b"z");
    it.seek_for_prev(&k);
    assert_eq!(it.value(), b"old");
    it.prev();
    assert_eq!(it.value(), b"new");
    it.next();
    assert_eq!(it.value(), b"old");
}

/// A failed seek in one child hides the merge until a later seek, and a child
/// that keeps a sticky error while positioned again keeps the merge failed.
#[test]
fn error_on_seek_is_reported_and_sticks_with_the_child() {
    let good = VecIterator::new(vec![(internal_key(b"a", 1, ValueType::Put), b"1".to_vec())]);
    let bad = VecIterator::failing_at(
        vec![
            (internal_key(b"b", 2, ValueType::Put), b"2".to_vec()),
            (internal_key(b"c", 3, ValueType::Put), b"3".to_vec()),
        ],
        0,
    );
    let mut it = MergingIterator::new(vec![good.boxed(), bad.boxed()]);
    it.seek_to_first();
    assert!(!it.valid(), "the failed child's data must not be skipped");
    assert!(it.status().unwrap_err().is_corruption());
    assert_eq!(it.key(), b"");
    // The child lands on "c" fine but still reports its error.
    it.seek(&internal_key(b"c", 9, ValueType::Put));
    assert!(!it.valid());
    assert!(it.status().is_err());
}

proptest! {
    /// Under reverse bytewise order the merge keeps the children's order:
    /// scans both ways, seeks, and a direction switch after a seek match a
    /// model sorted the same way.
    #[test]
    fn reverse_order_merges_match_model(raw in children_strategy(),
                                        targets in prop::collection::vec(target(), 0..10)) {
        let order = KeyComparator::ReverseBytewise;
        let (children, _) = build_children(&raw);
        let mut model: Vec<ModelEntry> = Vec::new();
        for (c, pairs) in children.iter().enumerate() {
            model.extend(pairs.iter().map(|(k, v)| (k.clone(), c, v.clone())));
        }
        model.sort_by(|a, b| order.compare_internal(&a.0, &b.0).then(a.1.cmp(&b.1)));
        let sources = children
            .iter()
            .map(|c| VecIterator::with_order(c.clone(), order.clone()).boxed())
            .collect();
        let mut it = MergingIterator::with_order(sources, order.clone());
        let expected = model_pairs(&model);
        prop_assert_eq!(collect_forward(&mut it), expected.clone());
        let mut reversed = expected;
        reversed.reverse();
        prop_assert_eq!(collect_backward(&mut it), reversed);
        let key_at = |i: Option<usize>| i.and_then(|i| model.get(i)).map(|e| e.0.clone());
        for t in &targets {
            it.seek(t);
            let i = model.partition_point(|e| order.compare_internal(&e.0, t).is_lt());
            prop_assert_eq!(it.valid().then(|| it.key().to_vec()), key_at(Some(i)));
            if it.valid() {
                it.prev();
                prop_assert_eq!(it.valid().then(|| it.key().to_vec()), key_at(i.checked_sub(1)));
            }
            it.seek_for_prev(t);
            let i = model.partition_point(|e| order.compare_internal(&e.0, t).is_le());
            prop_assert_eq!(it.valid().then(|| it.key().to_vec()), key_at(i.checked_sub(1)));
        }
        prop_assert!(it.status().is_ok());
    }
}
