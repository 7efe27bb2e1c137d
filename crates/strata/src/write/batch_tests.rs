//! Tests of the write batch encoding.

use super::*;
use crate::memtable::MemGet;
use bytes::Bytes;
use proptest::prelude::*;

/// One operation of a generated batch: `Some(value)` is a put, `None` a delete.
type Op = (Vec<u8>, Option<Vec<u8>>);

fn build(ops: &[Op]) -> WriteBatch {
    let mut b = WriteBatch::new();
    for (key, value) in ops {
        match value {
            Some(v) => b.put(key, v).unwrap(),
            None => b.delete(key).unwrap(),
        }
    }
    b
}

fn entries(b: &WriteBatch) -> Vec<Op> {
    b.iter()
        .map(|e| {
            let e = e.unwrap();
            let value = match e.value_type {
                ValueType::Put => Some(e.value.to_vec()),
                ValueType::Delete => {
                    assert!(e.value.is_empty());
                    None
                }
                ValueType::RangeDeletion | ValueType::Merge | ValueType::BlobIndex => {
                    panic!("decoded a {:?}", e.value_type)
                }
            };
            (e.key.to_vec(), value)
        })
        .collect()
}

fn ops_strategy() -> impl Strategy<Value = Vec<Op>> {
    let bytes = |max| proptest::collection::vec(any::<u8>(), 0..max);
    proptest::collection::vec((bytes(12), proptest::option::of(bytes(200))), 0..20)
}

fn assert_corrupt(data: Vec<u8>) {
    match WriteBatch::from_data(data.clone()) {
        Err(e) => assert!(e.is_corruption(), "{data:?}: {e}"),
        Ok(b) => panic!("{data:?} decoded as {b:?}"),
    }
}

#[test]
fn golden_bytes() {
    let mut b = WriteBatch::new();
    b.put(b"k", b"v").unwrap();
    b.delete(b"ab").unwrap();
    b.put(b"", b"").unwrap();
    b.set_sequence(0x0102);
    #[rustfmt::skip]
    let expected: &[u8] = &[
        0x02, 0x01, 0, 0, 0, 0, 0, 0, // sequence 0x0102, fixed64 LE
        3, 0, 0, 0,                   // count 3, fixed32 LE
        1, 1, b'k', 1, b'v',          // put "k" = "v"
        0, 2, b'a', b'b',             // delete "ab"
        1, 0, 0,                      // put "" = ""
    ];
    assert_eq!(b.data(), expected);
    assert_eq!(b.approximate_size(), expected.len());
    assert_eq!(WriteBatch::from_data(expected.to_vec()).unwrap(), b);
    assert_eq!(WriteBatch::new().data(), &[0u8; HEADER_LEN]);
}

#[test]
fn accessors_and_clear() {
    let mut b = WriteBatch::default();
    assert!(b.is_empty());
    b.put(b"a", b"1").unwrap();
    b.delete(b"b").unwrap();
    b.set_sequence(77);
    assert_eq!((b.count(), b.sequence(), b.is_empty()), (2, 77, false));
    let decoded = WriteBatch::from_data(b.data().to_vec()).unwrap();
    assert_eq!((decoded.count(), decoded.sequence()), (2, 77));
    b.clear();
    assert_eq!(b, WriteBatch::new());
    assert_eq!(b.iter().count(), 0);
}

#[test]
fn oversized_key_is_rejected_and_batch_unchanged() {
    let mut b = WriteBatch::new();
    b.put(b"a", b"1").unwrap();
    let before = b.clone();
    let big = vec![0u8; MAX_KEY_SIZE + 1];
    let err = b.put(&big, b"v").unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument { field: "key", .. }),
        "{err}"
    );
    let err = b.delete(&big).unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument { field: "key", .. }),
        "{err}"
    );
    assert_eq!(b, before);
    // The largest allowed key is accepted and survives a round trip.
    b.put(&big[..MAX_KEY_SIZE], b"").unwrap();
    assert_eq!(WriteBatch::from_data(b.data().to_vec()).unwrap(), b);
    // A value over the limit would need 4 GiB to build; the check itself is
    // what put calls first.
    let err = check_sizes(0, MAX_VALUE_SIZE + 1).unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument { field: "value", .. }),
        "{err}"
    );
}

#[test]
fn count_overflow_is_rejected() {
    let mut b = WriteBatch::new();
    b.count = u32::MAX;
    let err = b.put(b"k", b"v").unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { field: "batch", .. }));
    let mut one = WriteBatch::new();
    one.put(b"k", b"v").unwrap();
    let err = b.append(&one).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { field: "batch", .. }));
    assert_eq!(b.data().len(), HEADER_LEN);
}

#[test]
fn short_header_and_count_mismatch_are_corruption() {
    for n in 0..HEADER_LEN {
        assert_corrupt(vec![0; n]);
    }
    let mut b = WriteBatch::new();
    b.put(b"k", b"v").unwrap();
    let mut more = b.data().to_vec();
    more[8] = 2; // header claims 2 records, the batch holds 1
    assert_corrupt(more);
    let mut fewer = b.data().to_vec();
    fewer[8] = 0;
    assert_corrupt(fewer);
    let mut bad_type = b.data().to_vec();
    bad_type[HEADER_LEN] = 7;
    assert_corrupt(bad_type);
    // A length prefix that does not fit in 32 bits.
    let mut wide = WriteBatch::new().data().to_vec();
    wide[8] = 1;
    wide.extend_from_slice(&[1, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    assert_corrupt(wide);
}

#[test]
fn oversized_key_in_data_is_corruption() {
    let mut data = WriteBatch::new().data().to_vec();
    data[8] = 1;
    data.push(ValueType::Delete as u8);
    put_varint32(&mut data, MAX_KEY_SIZE as u32 + 1);
    data.resize(data.len() + MAX_KEY_SIZE + 1, b'x');
    assert_corrupt(data);
}

#[test]
fn iter_reports_one_error_then_ends() {
    let b = WriteBatch {
        rep: vec![0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, b'a', 9],
        count: 2,
        sequence: 0,
        names_families: false,
        has_merges: false,
        has_range_deletions: false,
        db_instance: None,
    };
    let results: Vec<_> = b.iter().collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].is_ok());
    assert!(results[1].as_ref().unwrap_err().is_corruption());
}

#[test]
fn every_truncation_is_corruption() {
    let mut b = WriteBatch::new();
    b.put(b"key", b"value").unwrap();
    b.delete(b"gone").unwrap();
    b.put(b"", b"").unwrap();
    b.delete(b"").unwrap();
    b.set_sequence(9);
    let data = b.data();
    for n in 0..data.len() {
        assert_corrupt(data[..n].to_vec());
    }
}

#[test]
fn append_concatenates_records() {
    let mut a = build(&[(b"a".to_vec(), Some(b"1".to_vec()))]);
    a.set_sequence(5);
    let mut b = build(&[(b"b".to_vec(), None), (b"c".to_vec(), Some(b"3".to_vec()))]);
    b.set_sequence(99);
    a.append(&b).unwrap();
    assert_eq!((a.count(), a.sequence()), (3, 5));
    assert_eq!(
        entries(&a),
        vec![
            (b"a".to_vec(), Some(b"1".to_vec())),
            (b"b".to_vec(), None),
            (b"c".to_vec(), Some(b"3".to_vec())),
        ]
    );
    assert_eq!(WriteBatch::from_data(a.data().to_vec()).unwrap(), a);
    a.append(&WriteBatch::new()).unwrap();
    assert_eq!(a.count(), 3);
}

#[test]
fn insert_into_assigns_consecutive_sequence_numbers() {
    let mut b = WriteBatch::new();
    b.put(b"a", b"1").unwrap();
    b.put(b"b", b"2").unwrap();
    b.delete(b"a").unwrap();
    b.put(b"c", b"").unwrap();
    b.set_sequence(10);
    let mem = MemTable::new(1 << 16);
    b.insert_into(&|_| Ok(Some(&mem))).unwrap();
    assert_eq!(mem.len(), 4);
    let found = |v: &'static [u8]| MemGet::Found(Bytes::from_static(v));
    assert_eq!(mem.get(b"a", 9, &mut Vec::new()), MemGet::NotFound);
    assert_eq!(mem.get(b"a", 10, &mut Vec::new()), found(b"1"));
    assert_eq!(mem.get(b"a", 11, &mut Vec::new()), found(b"1"));
    assert_eq!(mem.get(b"a", 12, &mut Vec::new()), MemGet::Deleted);
    assert_eq!(mem.get(b"b", 10, &mut Vec::new()), MemGet::NotFound);
    assert_eq!(mem.get(b"b", 11, &mut Vec::new()), found(b"2"));
    assert_eq!(mem.get(b"c", 12, &mut Vec::new()), MemGet::NotFound);
    assert_eq!(mem.get(b"c", 13, &mut Vec::new()), found(b""));
}

#[test]
fn insert_into_rejects_sequence_overflow() {
    let mut b = WriteBatch::new();
    b.put(b"a", b"1").unwrap();
    b.put(b"b", b"2").unwrap();
    let mem = MemTable::new(1 << 16);
    b.set_sequence(MAX_SEQUENCE_NUMBER);
    let err = b.insert_into(&|_| Ok(Some(&mem))).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidArgument {
                field: "sequence",
                ..
            }
        ),
        "{err}"
    );
    b.set_sequence(u64::MAX);
    assert!(b.insert_into(&|_| Ok(Some(&mem))).is_err());
    assert!(mem.is_empty());
    b.set_sequence(MAX_SEQUENCE_NUMBER - 1);
    b.insert_into(&|_| Ok(Some(&mem))).unwrap();
    assert_eq!(
        mem.get(b"b", MAX_SEQUENCE_NUMBER, &mut Vec::new()),
        MemGet::Found(Bytes::from_static(b"2"))
    );
    // An empty batch inserts nothing, whatever its sequence.
    let mut empty = WriteBatch::new();
    empty.set_sequence(u64::MAX);
    empty.insert_into(&|_| Ok(Some(&mem))).unwrap();
}

proptest! {
    #[test]
    fn round_trip(ops in ops_strategy(), seq in 0..=MAX_SEQUENCE_NUMBER) {
        let mut b = build(&ops);
        b.set_sequence(seq);
        prop_assert_eq!(b.count() as usize, ops.len());
        let decoded = WriteBatch::from_data(b.data().to_vec()).unwrap();
        prop_assert_eq!(decoded.sequence(), seq);
        prop_assert_eq!(entries(&decoded), ops);
        prop_assert_eq!(decoded, b);
    }

    #[test]
    fn append_matches_building_in_one(a in ops_strategy(), b in ops_strategy()) {
        let mut joined = build(&a);
        joined.append(&build(&b)).unwrap();
        let all: Vec<Op> = a.iter().chain(&b).cloned().collect();
        prop_assert_eq!(joined, build(&all));
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
        if let Err(e) = WriteBatch::from_data(bytes) {
            prop_assert!(e.is_corruption());
        }
    }

    /// Random records after a plausible header reach deeper into the parser
    /// than fully random bytes, which mostly fail the count check.
    #[test]
    fn random_records_never_panic(count in 0u32..4,
                                  body in proptest::collection::vec(any::<u8>(), 0..48)) {
        let mut data = WriteBatch::new().data().to_vec();
        data[8..12].copy_from_slice(&count.to_le_bytes());
        data.extend_from_slice(&body);
        match WriteBatch::from_data(data) {
            Ok(b) => prop_assert_eq!(b.iter().filter(|e| e.is_ok()).count(), count as usize),
            Err(e) => prop_assert!(e.is_corruption()),
        }
    }

    #[test]
    fn truncated_batches_are_corruption(ops in ops_strategy(), cut in any::<prop::sample::Index>()) {
        let b = build(&ops);
        let n = cut.index(b.data().len());
        let result = WriteBatch::from_data(b.data()[..n].to_vec());
        prop_assert!(result.unwrap_err().is_corruption());
    }
}

#[test]
fn column_family_golden_bytes() {
    let mut b = WriteBatch::new();
    b.add(2, ValueType::Put, b"k", b"v").unwrap();
    b.set_sequence(7);
    #[rustfmt::skip]
    let expected: &[u8] = &[
        7, 0, 0, 0, 0, 0, 0, 0,
        1, 0, 0, 0,
        5, 2, 1, b'k', 1, b'v',
    ];
    assert_eq!(b.data(), expected);
    let back = WriteBatch::from_data(expected.to_vec()).unwrap();
    let e = back.iter().next().unwrap().unwrap();
    assert_eq!(
        (e.cf, e.value_type, e.key, e.value),
        (2, ValueType::Put, &b"k"[..], &b"v"[..])
    );
    assert_eq!(back.named_families(), [2]);
    let mut d = WriteBatch::new();
    d.add(3, ValueType::Delete, b"x", b"").unwrap();
    d.put(b"y", b"z").unwrap();
    assert_eq!(
        &d.data()[HEADER_LEN..],
        &[4, 3, 1, b'x', 1, 1, b'y', 1, b'z']
    );
    assert_eq!(d.families(), [0, 3]);
    // A family id cut short is corruption.
    let mut cut = expected[..HEADER_LEN].to_vec();
    cut.extend_from_slice(&[5, 0x80]);
    assert!(WriteBatch::from_data(cut).unwrap_err().is_corruption());
}

#[test]
fn insert_routes_records_to_their_family() {
    let (a, b) = (MemTable::new(1 << 16), MemTable::new(1 << 16));
    let mut batch = WriteBatch::new();
    batch.put(b"k", b"default").unwrap();
    batch.add(1, ValueType::Put, b"k", b"one").unwrap();
    batch.add(9, ValueType::Put, b"k", b"skipped").unwrap();
    batch.set_sequence(10);
    batch
        .insert_into(&|cf| {
            Ok(match cf {
                0 => Some(&a),
                1 => Some(&b),
                _ => None,
            })
        })
        .unwrap();
    assert_eq!(
        a.get(b"k", 100, &mut Vec::new()),
        MemGet::Found(Bytes::from_static(b"default"))
    );
    assert_eq!(
        b.get(b"k", 100, &mut Vec::new()),
        MemGet::Found(Bytes::from_static(b"one"))
    );
    // Record i keeps sequence + i even when an earlier record was skipped.
    assert_eq!(b.get(b"k", 10, &mut Vec::new()), MemGet::NotFound);
    assert_eq!(
        b.get(b"k", 11, &mut Vec::new()),
        MemGet::Found(Bytes::from_static(b"one"))
    );
}

#[test]
fn range_deletion_golden_bytes() {
    let mut b = WriteBatch::new();
    b.delete_range(b"a", b"c").unwrap();
    b.add_range_deletion(2, b"k", b"m").unwrap();
    b.set_sequence(9);
    #[rustfmt::skip]
    let expected: &[u8] = &[
        9, 0, 0, 0, 0, 0, 0, 0,
        2, 0, 0, 0,
        0x0F, 1, b'a', 1, b'c',       // range deletion ["a", "c") in the default family
        0x0E, 2, 1, b'k', 1, b'm',    // range deletion ["k", "m") in family 2
    ];
    assert_eq!(b.data(), expected);
    let back = WriteBatch::from_data(expected.to_vec()).unwrap();
    let got: Vec<_> = back
        .iter()
        .map(|e| {
            let e = e.unwrap();
            (e.cf, e.value_type, e.key.to_vec(), e.value.to_vec())
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (0, ValueType::RangeDeletion, b"a".to_vec(), b"c".to_vec()),
            (2, ValueType::RangeDeletion, b"k".to_vec(), b"m".to_vec()),
        ]
    );
    assert_eq!(back.families(), [0, 2]);
}

#[test]
fn empty_ranges_are_refused_and_corrupt_when_decoded() {
    let mut b = WriteBatch::new();
    let err = b.delete_range(b"a", b"a").unwrap_err();
    assert!(err.to_string().contains("delete_range"), "{err}");
    assert!(b.is_empty(), "a refused range leaves the batch unchanged");
    // Whether `begin` sorts before `end` is the family's comparator's to
    // say, so the batch takes an inverted range; the write checks it.
    b.delete_range(b"b", b"a").unwrap();
    assert_eq!(
        b.range_deletions().collect::<Vec<_>>(),
        [(0, &b"b"[..], &b"a"[..])]
    );
    #[rustfmt::skip]
    let empty: &[u8] = &[
        0, 0, 0, 0, 0, 0, 0, 0,
        1, 0, 0, 0,
        0x0F, 1, b'z', 1, b'z',
    ];
    assert_corrupt(empty.to_vec());
    assert_eq!(WriteBatch::new().range_deletions().count(), 0);
}

#[test]
fn range_deletions_go_to_the_memtable_tombstones() {
    let mem = MemTable::new(1 << 16);
    let mut b = WriteBatch::new();
    b.put(b"b", b"1").unwrap();
    b.delete_range(b"a", b"c").unwrap();
    b.put(b"b", b"2").unwrap();
    b.set_sequence(10);
    b.insert_into(&|_| Ok(Some(&mem))).unwrap();
    assert_eq!(mem.len(), 2);
    assert_eq!(mem.num_range_deletions(), 1);
    assert_eq!(mem.range_tombstones().max_covering_seq(b"b", 12), 11);
    assert_eq!(
        mem.get(b"b", 12, &mut Vec::new()),
        MemGet::Found(Bytes::from_static(b"2"))
    );
}

#[test]
fn merge_golden_bytes() {
    let mut b = WriteBatch::new();
    b.merge(b"k", b"1").unwrap();
    b.add(3, ValueType::Merge, b"k", b"2").unwrap();
    assert_eq!(
        &b.data()[HEADER_LEN..],
        &[2, 1, b'k', 1, b'1', 6, 3, 1, b'k', 1, b'2']
    );
    let back = WriteBatch::from_data(b.data().to_vec()).unwrap();
    let kinds: Vec<(u32, ValueType, Vec<u8>)> = back
        .iter()
        .map(|e| {
            let e = e.unwrap();
            (e.cf, e.value_type, e.value.to_vec())
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            (0, ValueType::Merge, b"1".to_vec()),
            (3, ValueType::Merge, b"2".to_vec())
        ]
    );
    assert_eq!(back.merge_families(), [0, 3]);
}
