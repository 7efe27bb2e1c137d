//! Two-level index and partitioned filters: every read agrees with the same
//! entries in a one-block-index table, across partition boundaries, with
//! and without the block cache and pinning; keys whose versions straddle
//! partitions; damage found and named; golden bytes.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use rand::{Rng, SeedableRng};

use super::format::FORMAT_VERSION_TWO_LEVEL_INDEX;
use super::range_del_tests::{footer_version, with_footer_version};
use super::tests::{
    build_table, damage_detected, open, random_entries, scan_forward, sweep_entries, Entries,
    MemFile, MemReadFile,
};
use super::*;
use crate::cache::lru::{LruCache, LruOptions};
use crate::cache::{Cache, Priority};
use crate::checksum::ChecksumType;
use crate::compression::CompressionType;
use crate::error::Error;
use crate::iter::InternalIterator;
use crate::key::{internal_key, seek_key, user_key, ParsedInternalKey, ValueType};
use crate::options::{IndexType, ReadOptions, TableOptions};
use crate::statistics::{Statistics, Ticker};

fn partitioned(block_size: usize, metadata_block_size: usize, filters: bool) -> TableOptions {
    TableOptions {
        block_size,
        block_restart_interval: 2,
        compression: CompressionType::None,
        checksum: ChecksumType::Crc32c,
        index_type: IndexType::TwoLevelIndexSearch,
        partition_filters: filters,
        metadata_block_size,
        ..TableOptions::default()
    }
}

fn one_block_index(options: &TableOptions) -> TableOptions {
    TableOptions {
        index_type: IndexType::BinarySearch,
        ..options.clone()
    }
}

fn scan_backward(t: &Arc<TableReader>) -> Entries {
    let mut it = t.iter(&ReadOptions::default());
    let mut out = Vec::new();
    it.seek_to_last();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    out.reverse();
    out
}

fn get(t: &TableReader, key: &[u8], seq: u64) -> Option<(u64, ValueType, Vec<u8>)> {
    t.get(&ReadOptions::default(), key, seq)
        .unwrap()
        .map(|e| (e.seq, e.value_type, e.value.to_vec()))
}

/// Every kind of read of `table` gives what it gives on `oracle` (the same
/// entries with a one-block index), for targets drawn by `rng`.
fn assert_reads_agree(table: &Arc<TableReader>, oracle: &Arc<TableReader>, rng: &mut impl Rng) {
    let entries = scan_forward(oracle);
    assert_eq!(scan_forward(table), entries);
    assert_eq!(scan_backward(table), entries);
    let ro = ReadOptions::default();
    let (mut it, mut want) = (table.iter(&ro), oracle.iter(&ro));
    for _ in 0..200 {
        let user: Vec<u8> = match entries.len() {
            n if n > 0 && rng.gen_bool(0.6) => user_key(&entries[rng.gen_range(0..n)].0).to_vec(),
            _ => (0..rng.gen_range(0..5))
                .map(|_| rng.gen_range(b'a'..=b'f'))
                .collect(),
        };
        let seq = rng.gen_range(0..1100);
        let target = seek_key(&user, seq);
        it.seek(&target);
        want.seek(&target);
        assert_eq!(
            it.valid().then(|| it.key()),
            want.valid().then(|| want.key())
        );
        // A few steps each way from there cross block and partition edges.
        for _ in 0..rng.gen_range(0..6) {
            if !want.valid() {
                break;
            }
            let forward = rng.gen_bool(0.5);
            if forward {
                it.next();
                want.next();
            } else {
                it.prev();
                want.prev();
            }
            assert_eq!(
                it.valid().then(|| it.key()),
                want.valid().then(|| want.key())
            );
        }
        it.seek_for_prev(&target);
        want.seek_for_prev(&target);
        assert_eq!(
            it.valid().then(|| it.key()),
            want.valid().then(|| want.key())
        );
        assert_eq!(get(table, &user, seq), get(oracle, &user, seq));
        // A filter may only say "absent" of a key without entries.
        if table.filter_answer(&user) == Some(false) {
            assert_eq!(get(oracle, &user, u64::MAX >> 8), None);
        }
        // Past the last key the estimate is where the meta blocks start,
        // which the layouts place differently.
        if !entries.is_empty() && user.as_slice() <= oracle.properties().largest_user_key.as_slice()
        {
            assert_eq!(
                table.approximate_offset_of(&user).unwrap(),
                oracle.approximate_offset_of(&user).unwrap(),
            );
        }
    }
    it.status().unwrap();
}

#[test]
fn reads_agree_with_a_one_block_index_across_many_partitions() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    for round in 0..24 {
        let n = [0, 1, 5, 200, 600][round % 5];
        let entries = random_entries(&mut rng, n);
        let mut options = partitioned(
            [64, 256, 1024][rng.gen_range(0..3)],
            [1, 40, 100, 4096][rng.gen_range(0..4)],
            rng.gen_bool(0.5),
        );
        options.bloom_bits_per_key = [0.0, 10.0][rng.gen_range(0..2)];
        options.compression = [CompressionType::None, CompressionType::Snappy][round % 2];
        let bytes = build_table(&entries, options.clone());
        assert_eq!(footer_version(&bytes), FORMAT_VERSION_TWO_LEVEL_INDEX);
        let table = open(bytes).unwrap();
        assert!(table.has_two_level_index());
        let oracle = open(build_table(&entries, one_block_index(&options))).unwrap();
        assert_reads_agree(&table, &oracle, &mut rng);
        let report = table.verify().unwrap();
        assert_eq!(report.entries, n as u64);
        let p = table.properties();
        assert_eq!(p.format_version, u64::from(FORMAT_VERSION_TWO_LEVEL_INDEX));
        assert!(p.top_level_index_size > 0);
        if n > 100 && options.metadata_block_size < 200 {
            assert!(p.index_partitions > 3, "{} partitions", p.index_partitions);
        }
    }
}

/// `k` has 300 versions over many blocks, so its versions straddle several
/// partitions; every version is found at its sequence number, and the
/// partitioned filter (asked in the partition holding `k`'s newest version)
/// knows it.
#[test]
fn a_key_whose_versions_straddle_partitions_is_found_at_every_sequence() {
    let mut entries: Entries = Vec::new();
    for k in [b"a", b"b", b"c"] {
        entries.push((internal_key(k, 5, ValueType::Put), b"v".to_vec()));
    }
    for seq in (1..=300u64).rev() {
        let t = if seq % 10 == 0 {
            ValueType::Delete
        } else {
            ValueType::Put
        };
        let value = if t == ValueType::Put {
            format!("value-of-k-at-{seq:04}").into_bytes()
        } else {
            Vec::new()
        };
        entries.push((internal_key(b"k", seq, t), value));
    }
    for k in [b"l", b"m"] {
        entries.push((internal_key(k, 5, ValueType::Put), b"v".to_vec()));
    }
    for filters in [false, true] {
        let table = open(build_table(&entries, partitioned(64, 64, filters))).unwrap();
        let top = table.index().unwrap();
        let partitions = table.partition_handles(&top).unwrap();
        let holding_k = partitions
            .iter()
            .filter(|(separator, _)| user_key(separator) == b"k")
            .count();
        assert!(holding_k >= 3, "k ends {holding_k} partitions");
        assert!(table.may_contain(b"k"));
        for seq in 1..=310u64 {
            let want_seq = seq.min(300);
            let got = get(&table, b"k", seq).unwrap();
            assert_eq!(got.0, want_seq);
            if want_seq % 10 == 0 {
                assert_eq!(got.1, ValueType::Delete);
            } else {
                assert_eq!(got.2, format!("value-of-k-at-{want_seq:04}").into_bytes());
            }
        }
        assert_eq!(get(&table, b"k", 0), None);
        for k in [&b"a"[..], b"c", b"l", b"m"] {
            assert!(get(&table, k, 9).is_some());
        }
        assert_eq!(get(&table, b"j", 9), None);
        assert_eq!(get(&table, b"z", 9), None);
        table.verify().unwrap();
        let oracle = open(build_table(
            &entries,
            one_block_index(&partitioned(64, 64, filters)),
        ));
        let mut rng = rand::rngs::SmallRng::seed_from_u64(3);
        assert_reads_agree(&table, &oracle.unwrap(), &mut rng);
    }
}

fn cached(
    bytes: &[u8],
    capacity: usize,
    meta: bool,
    pinning: MetaPinning,
) -> (Arc<TableReader>, Arc<LruCache>, Arc<Statistics>) {
    let options = LruOptions {
        num_shard_bits: Some(0),
        ..LruOptions::new(capacity)
    };
    let cache = Arc::new(LruCache::new(options).unwrap());
    let stats = Arc::new(Statistics::new());
    let table = TableReader::open_with_block_cache(
        Arc::new(MemReadFile(Bytes::from(bytes.to_vec()))),
        Path::new("t.sst"),
        &crate::key_order::KeyComparator::Bytewise,
        cache.clone(),
        Some(stats.clone()),
        meta.then_some(Priority::High),
        pinning,
    )
    .unwrap();
    (Arc::new(table), cache, stats)
}

#[test]
fn reads_agree_through_the_cache_whatever_is_pinned() {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(11);
    let entries = random_entries(&mut rng, 500);
    let options = partitioned(128, 100, true);
    let bytes = build_table(&entries, options.clone());
    let oracle = open(build_table(&entries, one_block_index(&options))).unwrap();
    let mut pinned = Vec::new();
    for meta in [false, true] {
        for pinning in [
            MetaPinning::Nothing,
            MetaPinning::TopLevel,
            MetaPinning::All,
        ] {
            let (table, cache, _) = cached(&bytes, 4 << 20, meta, pinning);
            pinned.push((meta, pinning, cache.pinned_usage()));
            assert_reads_agree(&table, &oracle, &mut rng);
            table.verify().unwrap();
        }
    }
    // Without cache_index_and_filter_blocks nothing is pinned; with it, the
    // top levels, or every partition too.
    let usage = |m, p| pinned.iter().find(|e| e.0 == m && e.1 == p).unwrap().2;
    for p in [
        MetaPinning::Nothing,
        MetaPinning::TopLevel,
        MetaPinning::All,
    ] {
        assert_eq!(usage(false, p), 0);
    }
    assert_eq!(usage(true, MetaPinning::Nothing), 0);
    let top = usage(true, MetaPinning::TopLevel);
    let all = usage(true, MetaPinning::All);
    let props = open(bytes).unwrap().properties().clone();
    assert!(top > 0 && top < all, "top {top}, all {all}");
    assert!(all as u64 > props.index_size, "all {all}, {props:?}");
}

#[test]
fn a_one_block_index_pins_no_top_level() {
    let entries = sweep_entries(300);
    let bytes = build_table(&entries, one_block_index(&partitioned(128, 100, true)));
    let (_table, cache, _) = cached(&bytes, 4 << 20, true, MetaPinning::TopLevel);
    assert_eq!(cache.pinned_usage(), 0);
    let (_table, cache, _) = cached(&bytes, 4 << 20, true, MetaPinning::All);
    assert!(cache.pinned_usage() > 0);
}

/// A cache smaller than the table's index and filter still answers every
/// read, holding partitions a few at a time: memory stays bounded by the
/// cache, with only the top levels pinned.
#[test]
fn partitions_come_and_go_with_a_small_cache() {
    let entries = sweep_entries(4000);
    let options = TableOptions {
        bloom_bits_per_key: 10.0,
        ..partitioned(256, 256, true)
    };
    let bytes = build_table(&entries, options);
    let capacity = 8 << 10;
    let (table, cache, stats) = cached(&bytes, capacity, true, MetaPinning::TopLevel);
    let props = table.properties().clone();
    assert!(
        props.index_size + props.filter_size > 2 * capacity as u64,
        "{props:?}"
    );
    for (i, (key, value)) in entries.iter().enumerate().step_by(7) {
        let p = ParsedInternalKey::parse(key).unwrap();
        let got = get(&table, p.user_key, p.seq).unwrap();
        assert_eq!(got.2, *value, "entry {i}");
        assert!(cache.usage() <= capacity, "{} > {capacity}", cache.usage());
    }
    assert!(stats.ticker(Ticker::BlockCacheIndexMiss) > props.index_partitions);
    assert!(stats.ticker(Ticker::BlockCacheFilterMiss) > 1);
    assert!(stats.ticker(Ticker::BlockCacheIndexHit) > 0);
    let absent = (0..500u32)
        .filter(|i| table.may_contain(format!("absent{i}").as_bytes()))
        .count();
    assert!(absent < 25, "{absent} of 500 absent keys passed");
}

#[test]
fn range_tombstones_and_partitions_share_format_version_three() {
    let file = MemFile::default();
    let mut b = TableBuilder::new(Box::new(file.clone()), partitioned(64, 64, true)).unwrap();
    let entries = sweep_entries(50);
    for (k, v) in &entries {
        b.add(k, v).unwrap();
    }
    b.add_range_tombstone(b"key000010", b"key000020", 100)
        .unwrap();
    let built = b.finish().unwrap();
    let bytes = file.0.lock().clone();
    assert_eq!(footer_version(&bytes), FORMAT_VERSION_TWO_LEVEL_INDEX);
    assert_eq!(built.properties.num_range_deletions, 1);
    let table = open(bytes).unwrap();
    assert_eq!(
        table.range_tombstones().max_covering_seq(b"key000015", 200),
        100
    );
    assert_eq!(scan_forward(&table), entries);
    assert_eq!(table.verify().unwrap().entries, 51);
}

#[test]
fn a_two_level_table_read_as_an_older_version_is_refused_or_found_damaged() {
    let entries = sweep_entries(60);
    let with_filters = build_table(&entries, partitioned(64, 64, true));
    let err = open(with_footer_version(&with_filters, 1)).unwrap_err();
    assert!(
        err.to_string().contains("cannot have a partitioned filter"),
        "{err}"
    );
    let err = open(with_footer_version(&with_filters, 2)).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    // Without partitioned filters, index partitions read as data blocks
    // hold no valid entries.
    let index_only = build_table(&entries, partitioned(64, 64, false));
    assert!(damage_detected(with_footer_version(&index_only, 1)));
}

/// The offset of the first index partition and of the top-level index.
fn partition_offsets(bytes: &[u8]) -> (u64, u64) {
    let table = open(bytes.to_vec()).unwrap();
    let top = table.index().unwrap();
    let first = table.partition_handles(&top).unwrap()[0].1;
    (first.offset, table.footer_index().offset)
}

fn expect_corruption_at(bytes: Vec<u8>, offset: u64, needle: &str) {
    let err = open(bytes).unwrap_err();
    let msg = err.to_string();
    match err {
        Error::Corruption {
            file, offset: at, ..
        } => {
            assert_eq!(file, Path::new("t.sst"), "{msg}");
            assert_eq!(at, offset, "{msg}");
        }
        other => panic!("expected corruption, got {other}"),
    }
    assert!(msg.contains(needle), "{msg}");
}

/// Rewrites the block at `offset` with `patch` and recomputes its checksum,
/// so that only the reader's structural checks can find the damage.
fn patch_block(bytes: &[u8], offset: u64, patch: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let table = open(bytes.to_vec()).unwrap();
    let top = table.footer_index();
    assert_eq!(top.offset, offset, "only the top level is patched here");
    let (start, end) = (offset as usize, (offset + top.size) as usize);
    let mut block = bytes[start..end].to_vec();
    patch(&mut block);
    let mut out = bytes[..start].to_vec();
    out.extend_from_slice(&block);
    let crc = ChecksumType::Crc32c.checksum_with_byte(&block, 0);
    out.push(0);
    out.extend_from_slice(&crc.to_le_bytes());
    out.extend_from_slice(&bytes[end + 5..]);
    out
}

#[test]
fn damaged_partitions_and_top_levels_are_corruption_naming_file_and_offset() {
    let bytes = build_table(&sweep_entries(80), partitioned(64, 64, true));
    let (partition, top) = partition_offsets(&bytes);
    let mut bad_checksum = bytes.clone();
    bad_checksum[partition as usize + 1] ^= 0x10;
    expect_corruption_at(bad_checksum, partition, "checksum mismatch");

    // The first top-level entry's handle: offset varint, size varint.
    let table = open(bytes.clone()).unwrap();
    let first = table.partition_handles(&table.index().unwrap()).unwrap()[0].1;
    let mut encoded = Vec::new();
    first.encode_to(&mut encoded);
    let find = |block: &[u8]| {
        block
            .windows(encoded.len())
            .position(|w| w == encoded.as_slice())
            .unwrap()
    };
    // A size varint that does not end: the value is not a handle.
    let undecodable = patch_block(&bytes, top, |b| {
        let at = find(b) + encoded.len() - 1;
        b[at] |= 0x80;
    });
    expect_corruption_at(undecodable, top, "bad index entry");
    // A handle pointing past the blocks: the largest offset of the same
    // encoded length (at least two bytes: the partitions follow the data).
    let mut offset_only = Vec::new();
    crate::encoding::put_varint64(&mut offset_only, first.offset);
    assert!(offset_only.len() >= 2);
    let past_end = patch_block(&bytes, top, |b| {
        let at = find(b);
        b[at..at + offset_only.len()].fill(0xff);
        b[at + offset_only.len() - 1] = 0x7f;
    });
    let err = open(past_end).unwrap_err();
    assert!(matches!(err, Error::Corruption { .. }), "{err}");
    assert!(err.to_string().contains("runs past the blocks"), "{err}");
}

/// With partitions left to the cache, a damaged partition is found when a
/// read needs it: the read fails naming the file and the partition, the
/// failure is never cached, and reads elsewhere go on.
#[test]
fn a_damaged_partition_fails_the_reads_that_need_it() {
    let entries = sweep_entries(200);
    let bytes = build_table(&entries, partitioned(64, 64, true));
    let (partition, _) = partition_offsets(&bytes);
    let mut bad = bytes.clone();
    bad[partition as usize + 1] ^= 0x10;
    let (table, _, stats) = cached(&bad, 1 << 20, true, MetaPinning::TopLevel);
    let first_key = ParsedInternalKey::parse(&entries[0].0).unwrap();
    let misses_before = stats.ticker(Ticker::BlockCacheIndexMiss);
    for _ in 0..2 {
        match table.get(&ReadOptions::default(), first_key.user_key, 1000) {
            Err(Error::Corruption { file, offset, .. }) => {
                assert_eq!((file.as_path(), offset), (Path::new("t.sst"), partition));
            }
            other => panic!("expected corruption, got {other:?}"),
        }
    }
    let misses = stats.ticker(Ticker::BlockCacheIndexMiss) - misses_before;
    assert_eq!(misses, 2, "cached after failing");
    let last = ParsedInternalKey::parse(&entries[199].0).unwrap();
    assert!(get(&table, last.user_key, 1000).is_some());
    let mut it = table.iter(&ReadOptions::default());
    it.seek_to_first();
    assert!(!it.valid());
    assert!(matches!(it.status(), Err(Error::Corruption { offset, .. }) if offset == partition));
    assert!(table.verify().is_err());
    // Holding its partitions, the table finds the damage at open.
    expect_corruption_at(bad, partition, "checksum mismatch");
}

#[test]
fn corruption_sweep_every_byte_of_a_partitioned_table() {
    for filters in [false, true] {
        let bytes = build_table(&sweep_entries(30), partitioned(128, 64, filters));
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x01;
            assert!(
                damage_detected(bad),
                "flip at byte {i} of {} went undetected",
                bytes.len()
            );
        }
    }
}

/// Pins the complete bytes of a table with three entries, one data block
/// and one index partition each, and a partitioned filter.
#[test]
fn golden_partitioned_table_bytes() {
    let entries: Entries = vec![
        (internal_key(b"a", 2, ValueType::Put), b"x".to_vec()),
        (internal_key(b"b", 1, ValueType::Delete), Vec::new()),
        (internal_key(b"c", 3, ValueType::Put), b"y".to_vec()),
    ];
    let bytes = build_table(&entries, partitioned(1, 1, true));
    let table = open(bytes.clone()).unwrap();
    assert_eq!(table.properties().index_partitions, 3);
    table.verify().unwrap();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex, GOLDEN_PARTITIONED_TABLE_HEX,
        "table bytes changed: update docs/format/table.md too"
    );
}

const GOLDEN_PARTITIONED_TABLE_HEX: &str = concat!(
    "00090161010200000000000078000000000100000000e30d7b190009006200010000000000000000",
    "0000010000000073189dae00090163010300000000000079000000000100000000264553fa000000",
    "00010000200000000000000000000000000000000000000000000000000000008800000000000000",
    "0000000000000080000400000000000000000000400700000001000000006568730d200000000000",
    "00004000000020000000000200010000000020000000000000000000000000000000000000000000",
    "0000000100000000000000000000000000000700000001000000007e0b8ccb000000000000000000",
    "00022000010004002000000000000000000000000000000000000000000000000000000000000000",
    "01000000000000000000000000100007000000010000000080ab18b5000902610102000000000000",
    "4d480009036200010000000000009a014800090364ffffffffffffffffe70148000000000e000000",
    "1d00000003000000008a9064b400090261010200000000000000150000000001000000002c08943e",
    "0009026200010000000000001a14000000000100000000026027de00090264ffffffffffffffff33",
    "15000000000100000000907b63cf000903610102000000000000f502160009036200010000000000",
    "0090031600090364ffffffffffffffffab0316000000000f0000001e00000003000000007b6001a5",
    "001801726f636b7364622e696e6465782e706172746974696f6e7303001c01726f636b7364622e74",
    "6f702d6c6576656c2e696e6465782e73697a6542000f067374726174612e636865636b73756d6372",
    "633332630012047374726174612e636f6d7072657373696f6e6e6f6e650014057374726174612e63",
    "72656174696f6e2e74696d6580e2cfaa060010017374726174612e646174612e73697a654d001f02",
    "7374726174612e66696c7465722e6d696c6c69626974732e7065722e6b6579904e00120273747261",
    "74612e66696c7465722e73697a65a8020015017374726174612e666f726d61742e76657273696f6e",
    "030011027374726174612e696e6465782e73697a6593010014017374726174612e6c617267657374",
    "2e7365716e6f030017017374726174612e6c6172676573742e757365722e6b657963001601737472",
    "6174612e6e756d2e646174612e626c6f636b73030014017374726174612e6e756d2e64656c657469",
    "6f6e73010012017374726174612e6e756d2e656e7472696573030013017374726174612e7261772e",
    "6b65792e73697a651b0015017374726174612e7261772e76616c75652e73697a6502001501737472",
    "6174612e736d616c6c6573742e7365716e6f010018017374726174612e736d616c6c6573742e7573",
    "65722e6b657961000000001c0000003c000000540000006d000000890000009d000000c1000000d8",
    "000000f1000000070100001f0100003a010000540100006c0100008201000099010000b2010000cb",
    "010000130000000005b4c16e001f037374726174612e66696c7465722e706172746974696f6e6564",
    "2e626c6f6f6db4023c0011047374726174612e70726f706572746965738804b70400000000250000",
    "0002000000006b59bb0101c40849c6033d0000000000000000000000000000000000000000000000",
    "000000000000000000000003000000c7e2d4135354524154417362",
);
