//! Table round trips against a sorted model, corruption sweeps, and golden bytes.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};

use super::*;
use crate::checksum::ChecksumType;
use crate::compression::CompressionType;
use crate::error::{Error, Result};
use crate::fs::{RandomAccessFile, WritableFile};
use crate::iter::InternalIterator;
use crate::key::{compare_internal, internal_key, seek_key, ValueType};
use crate::key_order::KeyComparator;
use crate::options::{ReadOptions, TableOptions};

/// An in-memory file: written through `WritableFile`, read through
/// `RandomAccessFile`.
#[derive(Debug, Clone, Default)]
pub(crate) struct MemFile(pub Arc<Mutex<Vec<u8>>>);

impl WritableFile for MemFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.0.lock().extend_from_slice(data);
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        self.0.lock().len() as u64
    }
}

#[derive(Debug)]
pub(crate) struct MemReadFile(pub Bytes);

impl RandomAccessFile for MemReadFile {
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match start.checked_add(len) {
            Some(end) if end <= self.0.len() => Ok(self.0.slice(start..end)),
            _ => Err(Error::io(
                "read",
                "mem",
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            )),
        }
    }
    fn len(&self) -> u64 {
        self.0.len() as u64
    }
}

pub(crate) type Entries = Vec<(Vec<u8>, Vec<u8>)>;

pub(crate) fn build_table(entries: &[(Vec<u8>, Vec<u8>)], options: TableOptions) -> Vec<u8> {
    build_table_in(entries, options, KeyComparator::Bytewise)
}

/// [`build_table`] for `entries` sorted in `order`.
pub(crate) fn build_table_in(
    entries: &[(Vec<u8>, Vec<u8>)],
    options: TableOptions,
    order: KeyComparator,
) -> Vec<u8> {
    let file = MemFile::default();
    let mut b = TableBuilder::new(Box::new(file.clone()), options)
        .unwrap()
        .with_creation_time(1_700_000_000)
        .with_order(order);
    for (k, v) in entries {
        b.add(k, v).unwrap();
    }
    let built = b.finish().unwrap();
    let (size, props) = (built.file_size, built.properties);
    assert_eq!(props.num_entries, entries.len() as u64);
    let bytes = file.0.lock().clone();
    assert_eq!(size, bytes.len() as u64);
    bytes
}

pub(crate) fn open(bytes: Vec<u8>) -> Result<Arc<TableReader>> {
    TableReader::open(
        Arc::new(MemReadFile(Bytes::from(bytes))),
        Path::new("t.sst"),
    )
    .map(Arc::new)
}

pub(crate) fn scan_forward(t: &Arc<TableReader>) -> Entries {
    let mut it = t.iter(&ReadOptions::default());
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    out
}

/// Random internal-key entries: user keys of all sizes (the empty key included),
/// several versions each, puts and deletes, in internal-key order.
pub(crate) fn random_entries(rng: &mut impl Rng, n: usize) -> Entries {
    let mut map = BTreeMap::new();
    while map.len() < n {
        let len = match rng.gen_range(0..10) {
            0 => 0,
            1..=7 => rng.gen_range(1..12),
            _ => rng.gen_range(12..300),
        };
        let user: Vec<u8> = (0..len).map(|_| rng.gen_range(b'a'..=b'e')).collect();
        let seq = rng.gen_range(0..1000u64);
        let t = if rng.gen_bool(0.2) {
            ValueType::Delete
        } else {
            ValueType::Put
        };
        let value: Vec<u8> = if t == ValueType::Delete {
            Vec::new()
        } else {
            (0..rng.gen_range(0..200))
                .map(|_| rng.gen_range(b'0'..=b'9'))
                .collect()
        };
        map.insert((user, std::cmp::Reverse(seq)), (t, value));
    }
    let mut v: Entries = map
        .into_iter()
        .map(|((u, seq), (t, val))| (internal_key(&u, seq.0, t), val))
        .collect();
    v.sort_by(|a, b| compare_internal(&a.0, &b.0));
    v
}

fn options_strategy() -> impl Strategy<Value = TableOptions> {
    (
        prop_oneof![Just(64usize), Just(256), Just(4096)],
        1usize..20,
        prop_oneof![Just(0.0), Just(10.0), Just(3.5)],
        prop_oneof![
            Just(CompressionType::None),
            Just(CompressionType::Snappy),
            Just(CompressionType::Lz4),
            Just(CompressionType::Zstd { level: 1 }),
        ],
        prop_oneof![Just(ChecksumType::Crc32c), Just(ChecksumType::Xxh3)],
    )
        .prop_map(
            |(block_size, restart, bloom, compression, checksum)| TableOptions {
                block_size,
                block_restart_interval: restart,
                bloom_bits_per_key: bloom,
                compression,
                checksum,
                ..TableOptions::default()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn roundtrip_matches_model(
        seed in any::<u64>(),
        n in 0usize..600,
        options in options_strategy(),
        reverse in any::<bool>(),
    ) {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut entries = random_entries(&mut rng, n);
        // In reverse bytewise order too: its separators, seeks and the
        // reader taking the order from the table's properties.
        let order = if reverse { KeyComparator::ReverseBytewise } else { KeyComparator::Bytewise };
        entries.sort_by(|(a, _), (b, _)| order.compare_internal(a, b));
        let compare_internal = |a: &[u8], b: &[u8]| order.compare_internal(a, b);
        let table = open(build_table_in(&entries, options, order.clone())).unwrap();
        prop_assert_eq!(table.properties().comparator_name.as_str(), order.name());
        prop_assert_eq!(scan_forward(&table), entries.clone());
        prop_assert_eq!(table.verify().unwrap().entries, n as u64);

        // Backward scan.
        let mut it = table.iter(&ReadOptions::default());
        let mut back = Vec::new();
        it.seek_to_last();
        while it.valid() { back.push((it.key().to_vec(), it.value().to_vec())); it.prev(); }
        back.reverse();
        prop_assert_eq!(&back, &entries);

        // Seeks against the model, with targets both present and absent.
        for _ in 0..50 {
            let target = if !entries.is_empty() && rng.gen_bool(0.5) {
                let (k, _) = &entries[rng.gen_range(0..entries.len())];
                let p = crate::key::ParsedInternalKey::parse(k).unwrap();
                seek_key(p.user_key, rng.gen_range(0..1000))
            } else {
                let len = rng.gen_range(0..6);
                seek_key(&(0..len).map(|_| rng.gen_range(b'a'..=b'f')).collect::<Vec<_>>(), 500)
            };
            let lower = entries.iter().position(|(k, _)| compare_internal(k, &target).is_ge());
            it.seek(&target);
            prop_assert_eq!(it.valid().then(|| it.key().to_vec()), lower.map(|i| entries[i].0.clone()));
            let upper = entries.iter().rposition(|(k, _)| compare_internal(k, &target).is_le());
            it.seek_for_prev(&target);
            prop_assert_eq!(it.valid().then(|| it.key().to_vec()), upper.map(|i| entries[i].0.clone()));

            // get(user key, seq) = first entry with that user key at or below seq.
            let p = crate::key::ParsedInternalKey::parse(&target).unwrap();
            let want = lower
                .map(|i| &entries[i])
                .filter(|(k, _)| crate::key::user_key(k) == p.user_key)
                .map(|(k, v)| {
                    let q = crate::key::ParsedInternalKey::parse(k).unwrap();
                    (q.seq, q.value_type().unwrap(), v.clone())
                });
            let got = table.get(&ReadOptions::default(), p.user_key, p.seq).unwrap()
                .map(|e| (e.seq, e.value_type, e.value.to_vec()));
            prop_assert_eq!(got, want);
        }
        prop_assert!(it.status().is_ok());
    }
}

/// A database reads a table only in its family's order: a table that names
/// another is `InvalidArgument` naming both; a tool reads it in the order it
/// names, if built in.
#[test]
fn a_table_opens_only_in_the_order_it_names() {
    let entries: Vec<_> = [b"c", b"b", b"a"]
        .iter()
        .map(|k| (internal_key(*k, 1, ValueType::Put), b"v".to_vec()))
        .collect();
    let bytes = build_table_in(
        &entries,
        TableOptions::default(),
        KeyComparator::ReverseBytewise,
    );
    let file = || Arc::new(MemReadFile(Bytes::from(bytes.clone())));
    let path = Path::new("t.sst");
    let err = TableReader::open_in_order(file(), path, &KeyComparator::Bytewise).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    for name in [
        "rocksdb.ReverseBytewiseComparator",
        "leveldb.BytewiseComparator",
        "t.sst",
    ] {
        assert!(err.to_string().contains(name), "{err}");
    }
    let table = TableReader::open_in_order(file(), path, &KeyComparator::ReverseBytewise).unwrap();
    assert_eq!(scan_forward(&Arc::new(table)), entries);
    // A bytewise table does not write the property (so its bytes are what
    // they were before comparators) and reads back as bytewise.
    let bytewise = build_table(&[], TableOptions::default());
    assert!(!bytewise.windows(18).any(|w| w == b"rocksdb.comparator"));
    assert_eq!(
        open(bytewise).unwrap().properties().comparator_name,
        "leveldb.BytewiseComparator"
    );
}

#[test]
fn empty_table() {
    let table = open(build_table(&[], TableOptions::default())).unwrap();
    assert!(scan_forward(&table).is_empty());
    assert_eq!(table.get(&ReadOptions::default(), b"", 5).unwrap(), None);
    assert_eq!(table.verify().unwrap().entries, 0);
    let mut it = table.iter(&ReadOptions::default());
    it.seek_for_prev(b"zzzzzzzzz");
    assert!(!it.valid());
}

#[test]
fn bad_options_and_order_are_invalid_argument() {
    let bad = TableOptions {
        block_restart_interval: 0,
        ..TableOptions::default()
    };
    let err = TableBuilder::new(Box::new(MemFile::default()), bad).unwrap_err();
    assert!(matches!(
        err,
        Error::InvalidArgument {
            field: "block_restart_interval",
            ..
        }
    ));

    let mut b = TableBuilder::new(Box::new(MemFile::default()), TableOptions::default()).unwrap();
    b.add(&internal_key(b"b", 1, ValueType::Put), b"").unwrap();
    let err = b
        .add(&internal_key(b"a", 1, ValueType::Put), b"")
        .unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { field: "key", .. }));
    let err = b.add(b"short", b"").unwrap_err();
    assert!(matches!(err, Error::InvalidArgument { field: "key", .. }));
}

#[test]
fn filter_answers_misses_without_reading_data() {
    let entries: Entries = (0..1000u32)
        .map(|i| {
            (
                internal_key(format!("k{i:05}").as_bytes(), 1, ValueType::Put),
                vec![1; 10],
            )
        })
        .collect();
    let table = open(build_table(&entries, TableOptions::default())).unwrap();
    let misses = (0..1000u32)
        .filter(|i| table.may_contain(format!("absent{i}").as_bytes()))
        .count();
    assert!(
        misses < 50,
        "{misses} of 1000 absent keys passed the filter"
    );
    assert!((0..1000u32).all(|i| table.may_contain(format!("k{i:05}").as_bytes())));
}

/// A table whose filter holds prefixes only verifies: the check asks the
/// filter for each key's prefix, not the key.
#[test]
fn a_prefix_only_filter_verifies() {
    let entries: Entries = (0..500u32)
        .map(|i| {
            let key = format!("p{:02}-k{i:05}", i / 14);
            (internal_key(key.as_bytes(), 1, ValueType::Put), vec![1; 10])
        })
        .collect();
    let options = TableOptions {
        prefix_extractor: Some(crate::options::PrefixExtractor::Fixed(3)),
        whole_key_filtering: false,
        ..TableOptions::default()
    };
    let table = open(build_table(&entries, options)).unwrap();
    assert!(table.properties().filter_without_whole_keys);
    table.verify().unwrap();
}

pub(crate) fn sweep_entries(n: u32) -> Entries {
    (0..n)
        .map(|i| {
            let t = if i % 7 == 3 {
                ValueType::Delete
            } else {
                ValueType::Put
            };
            let v = if t == ValueType::Put {
                format!("value-{i}-{}", "x".repeat((i % 13) as usize))
            } else {
                String::new()
            };
            (
                internal_key(format!("key{i:06}").as_bytes(), u64::from(i), t),
                v.into_bytes(),
            )
        })
        .collect()
}

/// Opens and verifies a damaged table, also reading it with checksums off to show
/// that unverified reads of bad bytes never panic. True when the damage was found.
pub(crate) fn damage_detected(bytes: Vec<u8>) -> bool {
    let Ok(table) = open(bytes) else {
        return true;
    };
    let unchecked = ReadOptions {
        verify_checksums: false,
        ..ReadOptions::default()
    };
    let mut it = table.iter(&unchecked);
    it.seek_to_first();
    let mut steps = 0;
    while it.valid() && steps < 100_000 {
        it.next();
        steps += 1;
    }
    let _ = table.get(&unchecked, b"key000005", 100);
    table.verify().is_err()
}

#[test]
fn corruption_sweep_every_byte_of_small_table() {
    for (compression, checksum) in [
        (CompressionType::None, ChecksumType::Crc32c),
        (CompressionType::Lz4, ChecksumType::Xxh3),
    ] {
        let options = TableOptions {
            block_size: 128,
            compression,
            checksum,
            ..TableOptions::default()
        };
        let bytes = build_table(&sweep_entries(40), options);
        assert_every_flip_detected(&bytes, &[0x01, 0x80, 0xff]);
    }
}

/// Flips each byte of `bytes` by each of `masks` in turn and requires
/// every flip to be found.
pub(crate) fn assert_every_flip_detected(bytes: &[u8], masks: &[u8]) {
    for i in 0..bytes.len() {
        for &mask in masks {
            let mut bad = bytes.to_vec();
            bad[i] ^= mask;
            assert!(
                damage_detected(bad),
                "flip {mask:#x} at byte {i} of {} went undetected",
                bytes.len()
            );
        }
    }
}

#[test]
fn corruption_sweep_random_bytes_of_10k_table() {
    let options = TableOptions {
        compression: CompressionType::Snappy,
        ..TableOptions::default()
    };
    let bytes = build_table(&sweep_entries(10_000), options);
    let mut rng = rand::rngs::SmallRng::seed_from_u64(0x5eed);
    for _ in 0..2000 {
        let i = rng.gen_range(0..bytes.len());
        let mask = rng.gen_range(1..=255u8);
        let mut bad = bytes.clone();
        bad[i] ^= mask;
        assert!(
            damage_detected(bad),
            "flip {mask:#x} at byte {i} went undetected"
        );
    }
}

#[test]
fn truncated_files_are_corruption() {
    let bytes = build_table(&sweep_entries(50), TableOptions::default());
    for len in (0..bytes.len()).step_by(7) {
        let err = open(bytes[..len].to_vec()).unwrap_err();
        assert!(err.is_corruption(), "length {len}: {err}");
    }
}

/// Pins the complete bytes of a tiny table so the format cannot drift silently.
#[test]
fn golden_table_bytes() {
    let entries: Entries = vec![
        (internal_key(b"a", 2, ValueType::Put), b"x".to_vec()),
        (internal_key(b"b", 1, ValueType::Delete), Vec::new()),
    ];
    let options = TableOptions {
        compression: CompressionType::None,
        checksum: ChecksumType::Crc32c,
        ..TableOptions::default()
    };
    let bytes = build_table(&entries, options);
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex, GOLDEN_TABLE_HEX,
        "table bytes changed: update docs/format/table.md too"
    );
}

pub(crate) const GOLDEN_TABLE_HEX: &str = concat!(
    "00090161010200000000000078000900620001000000000000000000000100000000fec28c3c2000",
    "00000100002040000000200000000002000100000000200000000000000000000088000000000000",
    "000000000000000180000400000000000000000000400700000001000000005cfee83100090263ff",
    "ffffffffffffff0021000000000100000000f86d38a1000f067374726174612e636865636b73756d",
    "6372633332630012047374726174612e636f6d7072657373696f6e6e6f6e65001405737472617461",
    "2e6372656174696f6e2e74696d6580e2cfaa060010017374726174612e646174612e73697a652600",
    "1f027374726174612e66696c7465722e6d696c6c69626974732e7065722e6b6579904e0012017374",
    "726174612e66696c7465722e73697a654d0015017374726174612e666f726d61742e76657273696f",
    "6e010011017374726174612e696e6465782e73697a651b0014017374726174612e6c617267657374",
    "2e7365716e6f020017017374726174612e6c6172676573742e757365722e6b657962001601737472",
    "6174612e6e756d2e646174612e626c6f636b73010014017374726174612e6e756d2e64656c657469",
    "6f6e73010012017374726174612e6e756d2e656e7472696573020013017374726174612e7261772e",
    "6b65792e73697a65120015017374726174612e7261772e76616c75652e73697a6501001501737472",
    "6174612e736d616c6c6573742e7365716e6f010018017374726174612e736d616c6c6573742e7573",
    "65722e6b6579610000000018000000310000004d00000061000000850000009b000000b4000000c9",
    "000000e1000000fc000000160100002e010000440100005b010000740100008d0100001100000000",
    "86b5494b0013027374726174612e66696c7465722e626c6f6f6d26480011047374726174612e7072",
    "6f706572746965738e01f103000000001800000002000000005b4490d00184053c73160000000000",
    "000000000000000000000000000000000000000000000000000000000000010000003babe24e5354",
    "524154417362",
);

/// An ingested table read at a global seqno: every key and tombstone shows
/// it, seeks land exactly where they would on a table written at it, and a
/// get below it sees nothing.
#[test]
fn a_global_seqno_rewrites_every_key_and_keeps_seeks_exact() {
    let file = MemFile::default();
    let small_blocks = TableOptions {
        block_size: 128,
        ..TableOptions::default()
    };
    let mut b = TableBuilder::new(Box::new(file.clone()), small_blocks)
        .unwrap()
        .for_ingestion();
    let names: Vec<Vec<u8>> = (0..50u32)
        .map(|i| format!("k{i:03}").into_bytes())
        .collect();
    for name in &names {
        b.add(&internal_key(name, 0, ValueType::Put), name).unwrap();
    }
    b.add_range_tombstone(b"k100", b"k200", 0).unwrap();
    b.finish().unwrap();
    let bytes = Bytes::from(file.0.lock().clone());
    let table = TableReader::open(Arc::new(MemReadFile(bytes)), Path::new("t.sst"))
        .unwrap()
        .with_global_seqno(10)
        .unwrap();
    assert_eq!(table.properties().external_sst_file_version, 2);
    let table = Arc::new(table);
    let mut it = table.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut seen = 0;
    while it.valid() {
        assert_eq!(it.key(), internal_key(&names[seen], 10, ValueType::Put));
        seen += 1;
        it.next();
    }
    assert_eq!(seen, names.len());
    let at = |it: &TableIterator| it.valid().then(|| it.key().to_vec());
    for i in [0usize, 7, 25, 49] {
        let name = &names[i];
        // A target at or below the global seqno lands on the key itself;
        // one above it, on the next key, as on a table written at 10.
        it.seek(&seek_key(name, 10));
        assert_eq!(at(&it), Some(internal_key(name, 10, ValueType::Put)));
        it.seek(&seek_key(name, 9));
        assert_eq!(
            at(&it),
            names
                .get(i + 1)
                .map(|n| internal_key(n, 10, ValueType::Put))
        );
        it.seek_for_prev(&seek_key(name, 9));
        assert_eq!(at(&it), Some(internal_key(name, 10, ValueType::Put)));
        it.seek_for_prev(&seek_key(name, 11));
        let before = i
            .checked_sub(1)
            .map(|j| internal_key(&names[j], 10, ValueType::Put));
        assert_eq!(at(&it), before);
        assert_eq!(table.get(&ReadOptions::default(), name, 9).unwrap(), None);
        let entry = table
            .get(&ReadOptions::default(), name, 10)
            .unwrap()
            .unwrap();
        assert_eq!((entry.seq, &entry.value[..]), (10, &name[..]));
    }
    let tombstones: Vec<_> = table.range_tombstones().tombstones().collect();
    assert_eq!(tombstones.len(), 1);
    assert_eq!(tombstones[0].seq(), 10);
}
