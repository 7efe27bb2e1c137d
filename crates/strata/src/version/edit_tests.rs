//! Tests of the version edit encoding.

use super::text::display_internal_key;
use super::*;
use crate::key::{internal_key, ValueType};
use crate::version::blob_files::{BlobFileAddition, BlobFileGarbage};
use proptest::prelude::*;

fn meta(number: u64, small: (&[u8], u64), large: (&[u8], u64)) -> FileMetaData {
    FileMetaData {
        number,
        file_size: 4096,
        smallest: internal_key(small.0, small.1, ValueType::Put),
        largest: internal_key(large.0, large.1, ValueType::Put),
        smallest_seqno: 1,
        largest_seqno: 500,
        blob_files: Vec::new(),
        global_seqno: None,
    }
}

fn sample() -> VersionEdit {
    let mut e = VersionEdit::new();
    e.set_comparator_name(BYTEWISE_COMPARATOR_NAME)
        .set_log_number(12)
        .set_next_file_number(15)
        .set_last_sequence(1000)
        .delete_file(1, 7)
        .add_file(0, meta(13, (b"a", 500), (b"z", 1)));
    e
}

fn assert_corrupt(bytes: &[u8], reason_part: &str) {
    match VersionEdit::decode(bytes) {
        Err(Error::Corruption { reason, .. }) => {
            assert!(
                reason.contains(reason_part),
                "{reason:?} lacks {reason_part:?}"
            )
        }
        other => panic!("{bytes:?} gave {other:?}"),
    }
}

/// Encodes `edit` then `extra` raw bytes.
fn with_extra(edit: &VersionEdit, extra: &[u8]) -> Vec<u8> {
    let mut bytes = edit.encode();
    bytes.extend_from_slice(extra);
    bytes
}

#[test]
fn golden_bytes() {
    #[rustfmt::skip]
    let expected: &[u8] = &[
        1, 15, b's', b't', b'r', b'a', b't', b'a', b'.',        // comparator
            b'b', b'y', b't', b'e', b'w', b'i', b's', b'e',
        2, 12,                                                  // log_number 12
        3, 15,                                                  // next_file_number 15
        4, 0xe8, 0x07,                                          // last_sequence 1000
        6, 1, 7,                                                // delete L1 #7
        7, 0, 13, 0x80, 0x20,                                   // add L0 #13 size 4096
        9, b'a', 0x01, 0xf4, 0x01, 0, 0, 0, 0, 0,               // smallest 'a'@500 put
        9, b'z', 0x01, 0x01, 0, 0, 0, 0, 0, 0,                  // largest 'z'@1 put
        1, 0xf4, 0x03,                                          // seqnos 1, 500
        0,                                                      // end of per-file fields
    ];
    assert_eq!(sample().encode(), expected);
    assert_eq!(VersionEdit::decode(expected).unwrap(), sample());
    assert_eq!(VersionEdit::decode(&[]).unwrap(), VersionEdit::new());
}

#[test]
fn display_is_one_line_per_field() {
    let mut e = sample();
    let mut odd = meta(14, (b"\x00\xff", 3), (b"it's", 2));
    odd.largest = internal_key(b"it's", 2, ValueType::Delete);
    e.add_file(6, odd);
    assert_eq!(
        e.to_string(),
        "comparator: strata.bytewise\n\
         log_number: 12\n\
         next_file_number: 15\n\
         last_sequence: 1000\n\
         delete file L1 #7\n\
         add file L0 #13 size=4096 seq=[1,500] keys=['a'@500 .. 'z'@1]\n\
         add file L6 #14 size=4096 seq=[1,500] keys=[0x00ff@3 .. 0x69742773@2:del]"
    );
    assert_eq!(VersionEdit::new().to_string(), "(empty edit)");
    assert_eq!(display_internal_key(b"abc"), "0x616263(bad)");
    let mut weird = internal_key(b"k", 9, ValueType::Put);
    weird[1] = 7;
    assert_eq!(display_internal_key(&weird), "'k'@9:type=7");
}

/// A cut inside a field is Corruption; a cut at a field boundary is the edit
/// made of the fields before it (re-encoding gives back exactly the prefix).
#[test]
fn truncation_is_corruption_or_a_field_prefix() {
    let bytes = sample().encode();
    let mut valid_prefixes = 0;
    for n in 0..bytes.len() {
        match VersionEdit::decode(&bytes[..n]) {
            Ok(e) => {
                assert_eq!(e.encode(), &bytes[..n], "cut at {n}");
                valid_prefixes += 1;
            }
            Err(e) => assert!(e.is_corruption(), "cut at {n}: {e}"),
        }
    }
    // Empty, then after each of the five fields before the last.
    assert_eq!(valid_prefixes, 6);
}

#[test]
fn ignorable_tags_are_skipped() {
    let e = sample();
    // Tag 0x2001 (varint 0x81 0x40), 3-byte payload; then an empty one.
    let bytes = with_extra(&e, &[0x81, 0x40, 3, 9, 9, 9, 0x80, 0x40, 0]);
    assert_eq!(VersionEdit::decode(&bytes).unwrap(), e);
    // An ignorable field in the middle of the record is skipped too.
    let mut middle = vec![0x81, 0x40, 1, 0xff];
    middle.extend_from_slice(&e.encode());
    assert_eq!(VersionEdit::decode(&middle).unwrap(), e);
    // Its length must still fit the record.
    assert_corrupt(
        &with_extra(&e, &[0x81, 0x40, 5, 1]),
        "ignorable field payload",
    );
}

#[test]
fn unknown_tags_are_corruption() {
    for tag in [0u32, 5, 8, 9, 12, 100, 204, 300, 402, 0x1fff] {
        let mut extra = Vec::new();
        put_varint32(&mut extra, tag);
        extra.push(0);
        assert_corrupt(
            &with_extra(&sample(), &extra),
            &format!("unknown tag {tag}"),
        );
    }
}

/// Builds a `new_file` payload for file #13 whose per-file fields are `fields`
/// (raw bytes, then the end marker).
fn new_file_with_fields(fields: &[u8]) -> Vec<u8> {
    let mut e = VersionEdit::new();
    e.add_file(2, meta(13, (b"a", 5), (b"b", 5)));
    let mut bytes = e.encode();
    bytes.pop(); // the end marker
    bytes.extend_from_slice(fields);
    bytes.push(0);
    bytes
}

/// The blob file records and a table's blob files, byte for byte.
#[test]
fn golden_blob_bytes() {
    let mut e = VersionEdit::new();
    let mut table = meta(13, (b"a", 5), (b"b", 5));
    table.blob_files = vec![10, 12];
    e.add_file(0, table);
    e.blob_file_additions.push(BlobFileAddition {
        number: 12,
        record_count: 3,
        record_bytes: 300,
        file_size: 356,
    });
    e.blob_file_garbage.push(BlobFileGarbage {
        number: 10,
        count: 1,
        bytes: 100,
    });
    let bytes = e.encode();
    #[rustfmt::skip]
    let tail: &[u8] = &[
        1, 0xf4, 0x03,                        // smallest_seqno 1, largest_seqno 500
        1, 3, 2, 10, 2,                       // blob_files: 2 numbers, #10, +2
        0,                                    // end of per-file fields
        0x90, 0x03, 12, 3, 0xac, 0x02, 0xe4, 0x02, // addition #12: 3 records, 300 B, 356 B
        0x91, 0x03, 10, 1, 100,               // garbage #10: 1 record, 100 B
    ];
    assert!(bytes.ends_with(tail), "{bytes:?}");
    assert_eq!(VersionEdit::decode(&bytes).unwrap(), e);
    let shown = e.to_string();
    assert!(shown.contains("blob_files=[#10,#12]"), "{shown}");
    assert!(
        shown.contains("add blob file #12 records=3 record_bytes=300 size=356"),
        "{shown}"
    );
    assert!(
        shown.contains("blob file #10 garbage records=1 bytes=100"),
        "{shown}"
    );
}

#[test]
fn golden_global_seqno_bytes() {
    let mut e = VersionEdit::new();
    let mut table = meta(13, (b"a", 7), (b"b", 7));
    (
        table.smallest_seqno,
        table.largest_seqno,
        table.global_seqno,
    ) = (7, 7, Some(7));
    e.add_file(6, table);
    let bytes = e.encode();
    #[rustfmt::skip]
    let tail: &[u8] = &[
        7, 7,       // smallest_seqno 7, largest_seqno 7
        2, 1, 7,    // global_seqno: 1 byte, 7
        0,          // end of per-file fields
    ];
    assert!(bytes.ends_with(tail), "{bytes:?}");
    assert_eq!(VersionEdit::decode(&bytes).unwrap(), e);
    assert!(e.to_string().contains(" global_seqno=7"), "{e}");
    // A global seqno that is not the file's seqnos cannot be right.
    let mut bad = bytes.clone();
    let at = bad.len() - tail.len();
    bad[at] = 6;
    assert!(VersionEdit::decode(&bad).is_err());
}

#[test]
fn per_file_fields() {
    let plain = {
        let mut e = VersionEdit::new();
        e.add_file(2, meta(13, (b"a", 5), (b"b", 5)));
        e
    };
    // Ignorable ids (bit 0x40) are skipped.
    let bytes = new_file_with_fields(&[0x41, 2, 7, 7, 0x7f, 0]);
    assert_eq!(VersionEdit::decode(&bytes).unwrap(), plain);
    // Others must be understood.
    assert_corrupt(
        &new_file_with_fields(&[0x03, 1, 7]),
        "unknown per-file field 3",
    );
    // Field 2 is an ingested table's global seqno, which must be its seqnos
    // (1..500 here), and well formed.
    assert_corrupt(&new_file_with_fields(&[0x02, 1, 7]), "global seqno 7");
    assert_corrupt(&new_file_with_fields(&[0x02, 2, 7, 7]), "bad global_seqno");
    // Field 1 lists blob files: count, first number, then deltas.
    let with_blobs = VersionEdit::decode(&new_file_with_fields(&[0x01, 3, 2, 9, 3])).unwrap();
    assert_eq!(with_blobs.new_files[0].1.blob_files, vec![9, 12]);
    for (payload, reason) in [
        (&[0x01, 3, 2, 9, 0][..], "repeat"),
        (&[0x01, 2, 2, 9][..], "truncated"),
        (&[0x01, 2, 9, 1][..], "claims 9 numbers"),
        (&[0x01, 3, 1, 9, 5][..], "trailing bytes"),
        (&[0x01, 1, 0, 0x01, 1, 0][..], "blob_files appears twice"),
    ] {
        assert_corrupt(&new_file_with_fields(payload), reason);
    }
    // A payload longer than the record.
    assert_corrupt(
        &new_file_with_fields(&[0x41, 9, 7]),
        "per-file field payload",
    );
    // A missing end marker.
    let mut no_end = plain.encode();
    no_end.pop();
    assert_corrupt(&no_end, "per-file field id");
}

#[test]
fn validation_failures_are_corruption_and_invalid_argument() {
    let bad = |change: fn(&mut FileMetaData)| {
        let mut m = meta(9, (b"a", 5), (b"b", 5));
        change(&mut m);
        let mut e = VersionEdit::new();
        e.add_file(0, m);
        e
    };
    let mut cases = vec![
        (bad(|m| m.smallest = b"short".to_vec()), "at least 8 bytes"),
        (bad(|m| m.largest = Vec::new()), "at least 8 bytes"),
        // Whether smallest sorts after largest is the family's order's to
        // say: applying the edit checks it (see `version.rs`).
        (bad(|m| m.smallest_seqno = 501), "smallest_seqno"),
        (
            bad(|m| m.largest_seqno = MAX_SEQUENCE_NUMBER + 1),
            "exceeds",
        ),
    ];
    let mut level = VersionEdit::new();
    level.add_file(MAX_LEVELS, meta(9, (b"a", 5), (b"b", 5)));
    cases.push((level, "level 64"));
    let mut deleted = VersionEdit::new();
    deleted.delete_file(MAX_LEVELS, 3);
    cases.push((deleted, "level 64"));
    let mut seq = VersionEdit::new();
    seq.set_last_sequence(MAX_SEQUENCE_NUMBER + 1);
    cases.push((seq, "last_sequence"));

    for (edit, why) in cases {
        assert_corrupt(&edit.encode(), why);
        let err = edit.validate().unwrap_err();
        let field = match err {
            Error::InvalidArgument { field, .. } => field,
            other => panic!("{other}"),
        };
        assert_eq!(field, "version_edit");
    }
    let mut ok = VersionEdit::new();
    ok.add_file(MAX_LEVELS - 1, meta(9, (b"k", 9), (b"k", 3)));
    ok.validate().unwrap();
    assert_eq!(VersionEdit::decode(&ok.encode()).unwrap(), ok);
}

#[test]
fn malformed_fields_are_corruption() {
    assert_corrupt(&[2, 0x80], "log_number");
    assert_corrupt(&[1, 2, 0xff, 0xfe], "not UTF-8");
    assert_corrupt(&[1, 5, b'a'], "comparator name");
    assert_corrupt(&[0x80], "field tag");
    // A tag that does not fit in 32 bits.
    assert_corrupt(&[0xff, 0xff, 0xff, 0xff, 0x7f], "field tag");
    assert_corrupt(&[2, 1, 3, 4, 2, 2], "log_number appears twice");
    assert_corrupt(&[1, 0, 1, 0], "comparator appears twice");
    assert_corrupt(&[6, 0x80, 0x80, 0x80, 0x80, 0x10, 1], "level");
    // A key length far beyond the record is refused without allocating it.
    assert_corrupt(&[7, 0, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f], "smallest key");
}

fn ikey() -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::collection::vec(any::<u8>(), 0..10),
        0..=MAX_SEQUENCE_NUMBER,
        prop_oneof![Just(ValueType::Put), Just(ValueType::Delete)],
    )
        .prop_map(|(user, seq, t)| internal_key(&user, seq, t))
}

prop_compose! {
    fn file_meta()(number in any::<u64>(), file_size in any::<u64>(), a in ikey(), b in ikey(),
                   s1 in 0..=MAX_SEQUENCE_NUMBER, s2 in 0..=MAX_SEQUENCE_NUMBER,
                   blob_files in proptest::collection::btree_set(any::<u64>(), 0..4),
                   ingested in any::<bool>()) -> FileMetaData {
        let (smallest, largest) = match crate::key::compare_internal(&a, &b) {
            Ordering::Greater => (b, a),
            _ => (a, b),
        };
        // An ingested table's seqnos are its global seqno (above 0).
        let (lo, hi) = if ingested { (s2.max(1), s2.max(1)) } else { (s1.min(s2), s1.max(s2)) };
        FileMetaData {
            number, file_size, smallest, largest,
            smallest_seqno: lo, largest_seqno: hi,
            blob_files: blob_files.into_iter().collect(),
            global_seqno: ingested.then_some(hi),
        }
    }
}

prop_compose! {
    fn edit()(comparator in proptest::option::of(".{0,20}"),
              merge_operator in proptest::option::of(".{0,20}"),
              merge_operator_description in proptest::option::of(".{0,30}"),
              log_number in proptest::option::of(any::<u64>()),
              next_file_number in proptest::option::of(any::<u64>()),
              last_sequence in proptest::option::of(0..=MAX_SEQUENCE_NUMBER),
              deleted_files in proptest::collection::vec((0..MAX_LEVELS, any::<u64>()), 0..5),
              new_files in proptest::collection::vec((0..MAX_LEVELS, file_meta()), 0..5),
              family in prop_oneof![Just((0, None, false)), (1..u32::MAX, proptest::option::of("[a-z]{1,8}"), any::<bool>())],
              max_column_family in proptest::option::of(any::<u32>()),
              min_log_number_to_keep in proptest::option::of(any::<u64>()),
              wal_features in proptest::option::of(0..=crate::wal::WAL_FEATURES),
              blobs in (proptest::collection::vec(any::<(u64, u64, u64, u64)>(), 0..3),
                        proptest::collection::vec(any::<(u64, u64, u64)>(), 0..3)))
              -> VersionEdit {
        let (column_family, column_family_add, drop) = family;
        let column_family_drop = drop && column_family_add.is_none();
        let blob_file_additions = blobs.0.into_iter()
            .map(|(number, record_count, record_bytes, file_size)| BlobFileAddition {
                number, record_count, record_bytes, file_size,
            })
            .collect();
        let blob_file_garbage = blobs.1.into_iter()
            .map(|(number, count, bytes)| BlobFileGarbage { number, count, bytes })
            .collect();
        VersionEdit { comparator, log_number, next_file_number, last_sequence, deleted_files, new_files,
                      column_family, column_family_add, column_family_drop, max_column_family,
                      min_log_number_to_keep, wal_features, merge_operator,
                      merge_operator_description, blob_file_additions, blob_file_garbage }
    }
}

proptest! {
    #[test]
    fn round_trip(e in edit()) {
        e.validate().unwrap();
        let bytes = e.encode();
        let decoded = VersionEdit::decode(&bytes).unwrap();
        prop_assert_eq!(&decoded, &e);
        prop_assert_eq!(decoded.encode(), bytes);
    }

    #[test]
    fn truncation_never_panics(e in edit(), cut in any::<prop::sample::Index>()) {
        let bytes = e.encode();
        let n = cut.index(bytes.len() + 1);
        match VersionEdit::decode(&bytes[..n]) {
            Ok(d) => prop_assert_eq!(d.encode(), &bytes[..n]),
            Err(err) => prop_assert!(err.is_corruption()),
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..96)) {
        match VersionEdit::decode(&bytes) {
            Ok(e) => { let _ = e.to_string(); }
            Err(err) => prop_assert!(err.is_corruption()),
        }
    }

    /// Mutating one byte of a valid edit reaches the field decoders more often
    /// than random bytes do.
    #[test]
    fn mutated_edits_never_panic(e in edit(), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = e.encode();
        if !bytes.is_empty() {
            let i = at.index(bytes.len());
            bytes[i] = byte;
        }
        if let Err(err) = VersionEdit::decode(&bytes) {
            prop_assert!(err.is_corruption());
        }
    }
}

#[test]
fn column_family_golden_bytes() {
    let mut e = VersionEdit::new();
    e.add_column_family(3, "cf")
        .set_max_column_family(3)
        .set_log_number(9)
        .delete_file(2, 5)
        .set_min_log_number_to_keep(8)
        .set_wal_features(1);
    #[rustfmt::skip]
    let expected: &[u8] = &[
        0xc8, 0x01, 3,                  // column_family 3
        0xc9, 0x01, 2, b'c', b'f',      // column_family_add "cf"
        0xcb, 0x01, 3,                  // max_column_family 3
        2, 9,                           // log_number 9
        6, 2, 5,                        // delete L2 #5
        10, 8,                          // min_log_number_to_keep 8
        11, 1,                          // wal_features: metadata records
    ];
    assert_eq!(e.encode(), expected);
    assert_eq!(VersionEdit::decode(expected).unwrap(), e);
    assert_eq!(
        e.to_string(),
        "log_number: 9\ndelete file L2 #5\nmin_log_number_to_keep: 8\nwal_features: 0x1\ncolumn_family: 3\nadd column family \"cf\"\nmax_column_family: 3"
    );
    let mut merge = VersionEdit::new();
    merge.set_column_family(3).merge_operator = Some("Op".into());
    #[rustfmt::skip]
    let expected: &[u8] = &[
        0xc8, 0x01, 3,                  // column_family 3
        0xcc, 0x41, 2, b'O', b'p',      // merge_operator (204 | 0x2000) "Op"
    ];
    assert_eq!(merge.encode(), expected);
    assert_eq!(VersionEdit::decode(expected).unwrap(), merge);
    assert_eq!(merge.to_string(), "merge_operator: Op\ncolumn_family: 3");
    // An operator with settings is described as well, in a tag of its own.
    let mut described = VersionEdit::new();
    described
        .set_column_family(3)
        .set_merge_operator("Op", "{id=Op;k=1;}");
    #[rustfmt::skip]
    let expected: &[u8] = &[
        0xc8, 0x01, 3,                  // column_family 3
        0xcc, 0x41, 2, b'O', b'p',      // merge_operator (204 | 0x2000) "Op"
        0xcd, 0x41, 12,                 // merge_operator_description (205 | 0x2000)
        b'{', b'i', b'd', b'=', b'O', b'p', b';', b'k', b'=', b'1', b';', b'}',
    ];
    assert_eq!(described.encode(), expected);
    assert_eq!(VersionEdit::decode(expected).unwrap(), described);
    assert_eq!(
        described.to_string(),
        "merge_operator: Op\nmerge_operator_description: {id=Op;k=1;}\ncolumn_family: 3"
    );
    // Without settings the description is the name, and not written.
    merge.set_merge_operator("Op", "Op");
    assert_eq!(merge.merge_operator_description, None);
    let mut drop = VersionEdit::new();
    drop.drop_column_family(3);
    assert_eq!(drop.encode(), [0xc8, 0x01, 3, 0xca, 0x01]);
    assert_eq!(VersionEdit::decode(&drop.encode()).unwrap(), drop);
}

#[test]
fn bad_column_family_fields_are_refused() {
    // Creating or dropping the default family.
    assert_corrupt(&[0xc9, 0x01, 1, b'x'], "never created or dropped");
    assert_corrupt(&[0xca, 0x01], "never created or dropped");
    // Created and dropped at once; named "default"; named "".
    assert_corrupt(&[0xc8, 0x01, 2, 0xc9, 0x01, 1, b'x', 0xca, 0x01], "both");
    assert_corrupt(
        &[
            0xc8, 0x01, 2, 0xc9, 0x01, 7, b'd', b'e', b'f', b'a', b'u', b'l', b't',
        ],
        "named",
    );
    assert_corrupt(&[0xc8, 0x01, 2, 0xc9, 0x01, 0], "named");
    assert_corrupt(
        &[0xc8, 0x01, 2, 0xc8, 0x01, 2],
        "column family appears twice",
    );
    assert_corrupt(
        &[0xc8, 0x01, 2, 0xca, 0x01, 0xca, 0x01],
        "drop appears twice",
    );
    let mut e = VersionEdit::new();
    e.drop_column_family(0);
    assert!(e.validate().is_err());
}

#[test]
fn wal_features_unknown_to_this_version_are_refused() {
    // Bit 1 is not a feature this version knows: its WALs could hold records
    // it would misread, so the MANIFEST is refused rather than opened.
    let err = VersionEdit::decode(&[11, 3]).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    assert!(err.to_string().contains("wal_features 0x3"), "{err}");
    assert!(err.to_string().contains("bits 0x2"), "{err}");
    let mut e = VersionEdit::new();
    e.set_wal_features(2);
    assert!(e.validate().is_err());
    e.set_wal_features(crate::wal::WAL_FEATURES);
    assert_eq!(VersionEdit::decode(&e.encode()).unwrap(), e);
}
