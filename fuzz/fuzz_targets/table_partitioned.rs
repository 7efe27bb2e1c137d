//! A table with a two-level index (and partitioned filters, tiny partitions,
//! other options as the input says) built from the input's keys: read
//! whole, every read must agree with the entries it was built from; then
//! damaged by the input's byte flips, every read through the partitions
//! (open, scans both ways, seeks, gets, verify, with and without the block
//! cache and pinning) must return data or an error, never panic, hang or
//! over-allocate.
//!
//! With the flip count byte's high bit set, the table first takes one or
//! two global seqno tails (as ingestion appends them), which every read
//! must pass over and verify must accept whole, and flips may land in.
//!
//! Input: one byte of options, one byte counting flips (at most 8; its high
//! bit: tails, its next bit: two of them), three bytes per flip (position
//! u16 little-endian, xor mask), then the keys: each a length byte (0..8),
//! that many bytes, and a byte of version count.
#![no_main]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use strata::cache::lru::{LruCache, LruOptions};
use strata::cache::{Cache, Priority};
use strata::fs::{Fs, ReadFileOptions, SimFs};
use strata::iter::InternalIterator;
use strata::key::{internal_key, seek_key, ValueType};
use strata::table::seqno_tail::{append_global_seqno, Ingested};
use strata::table::{MetaPinning, TableBuilder, TableReader};
use strata::{CompressionType, IndexType, ReadOptions, TableOptions};

type Entries = Vec<(Vec<u8>, Vec<u8>)>;

fn options(byte: u8) -> TableOptions {
    TableOptions {
        block_size: [32, 64, 256, 1024][usize::from(byte & 3)],
        metadata_block_size: [1, 32, 128, 4096][usize::from((byte >> 2) & 3)],
        partition_filters: byte & 0x10 != 0,
        bloom_bits_per_key: if byte & 0x20 != 0 { 10.0 } else { 0.0 },
        compression: if byte & 0x40 != 0 {
            CompressionType::Snappy
        } else {
            CompressionType::None
        },
        block_restart_interval: if byte & 0x80 != 0 { 1 } else { 4 },
        index_type: IndexType::TwoLevelIndexSearch,
        ..TableOptions::default()
    }
}

/// Entries in internal-key order: each key with 1 to 4 versions, newest
/// first, the oldest a deletion when the count byte is odd.
fn entries(mut material: &[u8]) -> Entries {
    let mut map = BTreeMap::new();
    let mut seq = 1u64;
    // Few enough that a scan's step limit never cuts the comparison short.
    while let ([len, rest @ ..], true) = (material, map.len() < 4000) {
        let len = usize::from(len % 8).min(rest.len());
        let (user, rest) = rest.split_at(len);
        let versions = rest.first().copied().unwrap_or(0);
        material = rest.get(1..).unwrap_or(&[]);
        for v in 0..=(versions % 4) {
            let delete = v == 0 && versions % 2 == 1;
            let value = if delete {
                Vec::new()
            } else {
                format!("{seq}").into_bytes()
            };
            map.insert((user.to_vec(), std::cmp::Reverse(seq)), (delete, value));
            seq += 1;
        }
    }
    map.into_iter()
        .map(|((user, seq), (delete, value))| {
            let t = if delete {
                ValueType::Delete
            } else {
                ValueType::Put
            };
            (internal_key(&user, seq.0, t), value)
        })
        .collect()
}

fn build(fs: &SimFs, path: &Path, entries: &Entries, options: TableOptions) -> Vec<u8> {
    let file = fs.create(path).expect("create");
    let mut builder = TableBuilder::new(file, options).expect("valid options");
    for (k, v) in entries {
        builder.add(k, v).expect("sorted entries");
    }
    let size = builder.finish().expect("finish").file_size;
    let file = fs.open(path, ReadFileOptions::default()).expect("open");
    let len = usize::try_from(size).expect("small table");
    file.read_at(0, len).expect("read").to_vec()
}

fn write(fs: &SimFs, path: &Path, bytes: &[u8]) {
    let mut file = fs.create(path).expect("create");
    file.append(bytes).expect("append");
    file.sync().expect("sync");
}

/// Opens the table in `path`, with a block cache of `cache_bytes` holding
/// index and filter blocks when `meta`, pinned as `pinning`.
fn open(
    fs: &SimFs,
    path: &Path,
    cache: Option<(usize, MetaPinning)>,
) -> strata::Result<TableReader> {
    let file = fs.open(path, ReadFileOptions::default())?;
    let table = TableReader::open(file, path)?;
    match cache {
        None => Ok(table),
        Some((bytes, pinning)) => {
            let lru: Arc<dyn Cache> = Arc::new(LruCache::new(LruOptions::new(bytes))?);
            table.with_block_cache(lru, None, Some(Priority::High), pinning)
        }
    }
}

/// Reads everything, both ways, and some keys; returns the forward scan.
fn read_all(table: &Arc<TableReader>, entries: &Entries) -> strata::Result<Entries> {
    let ro = ReadOptions::default();
    let mut it = table.iter(&ro);
    let mut forward = Vec::new();
    it.seek_to_first();
    while it.valid() && forward.len() < 20_000 {
        forward.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status()?;
    let mut backward = 0;
    it.seek_to_last();
    while it.valid() && backward < 20_000 {
        backward += 1;
        it.prev();
    }
    it.status()?;
    for (k, _) in entries.iter().step_by(3) {
        let user = &k[..k.len() - 8];
        it.seek(&seek_key(user, 1 << 40));
        it.seek_for_prev(k);
        let _ = table.get(&ro, user, 1 << 40)?;
        let _ = table.approximate_offset_of(user)?;
    }
    it.status()?;
    Ok(forward)
}

fuzz_target!(|data: &[u8]| {
    let [head, flips_byte, rest @ ..] = data else {
        return;
    };
    let flips_byte = *flips_byte;
    let flips = usize::from((flips_byte & 0x3f) % 9).min(rest.len() / 3);
    let (flip_bytes, material) = rest.split_at(flips * 3);
    let entries = entries(material);
    let fs = SimFs::new(0);
    let dir = Path::new("/fuzz");
    fs.create_dir_all(dir).expect("dir");
    let path = dir.join("000001.sst");
    let mut bytes = build(&fs, &path, &entries, options(*head));
    if flips_byte & 0x80 != 0 {
        let tails = 1 + usize::from(flips_byte & 0x40 != 0);
        for seq in (u64::from(*head)..).take(tails) {
            let ingested = Ingested {
                global_seqno: seq,
                column_family_id: u32::from(*head),
                column_family_name: "fuzz",
            };
            append_global_seqno(&fs, &path, &ingested).expect("tail");
        }
        bytes = fs.file_contents(&path).expect("tailed table");
    }

    if flips == 0 {
        // Undamaged: every way of opening reads back exactly the entries.
        for cache in [
            None,
            Some((1 << 20, MetaPinning::TopLevel)),
            Some((2048, MetaPinning::Nothing)),
            Some((1 << 20, MetaPinning::All)),
        ] {
            let table = Arc::new(open(&fs, &path, cache).expect("open"));
            assert!(table.has_two_level_index());
            assert_eq!(read_all(&table, &entries).expect("read"), entries);
            for (k, v) in &entries {
                let user = &k[..k.len() - 8];
                let seq = u64::from_le_bytes(k[k.len() - 8..].try_into().expect("tag")) >> 8;
                let got = table.get(&ReadOptions::default(), user, seq).expect("get");
                assert_eq!(got.map(|e| e.value.to_vec()).as_ref(), Some(v));
                assert!(table.may_contain(user));
            }
            table.verify().expect("verify");
        }
        return;
    }
    let mut damaged = bytes.clone();
    for flip in flip_bytes.chunks_exact(3) {
        let at = usize::from(u16::from_le_bytes([flip[0], flip[1]])) % damaged.len();
        damaged[at] ^= flip[2].max(1);
    }
    write(&fs, &path, &damaged);
    for cache in [
        None,
        Some((4096, MetaPinning::TopLevel)),
        Some((1 << 20, MetaPinning::All)),
    ] {
        let Ok(table) = open(&fs, &path, cache) else {
            continue;
        };
        let table = Arc::new(table);
        let _ = read_all(&table, &entries);
        let _ = table.verify();
    }
});
