//! Microbenchmarks of the on-disk formats: block seek, table get (hit, and a miss
//! answered by the filter), bloom query, checksums over 4 KiB, and each codec.
//!
//! Run: `cargo bench -p strata --bench format`.
#![expect(
    clippy::expect_used,
    reason = "benchmark setup works on generated data"
)]

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use strata::fs::{Fs, ReadFileOptions, StdFs};
use strata::iter::InternalIterator;
use strata::key::{internal_key, seek_key, ValueType};
use strata::key_order::KeyComparator;
use strata::table::block::{Block, BlockOrigin};
use strata::table::block_builder::BlockBuilder;
use strata::table::filter::{BloomBuilder, BloomFilter};
use strata::table::{TableBuilder, TableReader};
use strata::{ChecksumType, CompressionType, ReadOptions, TableOptions};

const KEYS: u64 = 100_000;

/// db_bench-style 16-byte keys: the number in decimal, zero-padded. Written by
/// hand so that key generation costs a few nanoseconds inside timed loops.
fn user_key(mut i: u64) -> [u8; 16] {
    let mut k = [b'0'; 16];
    for slot in k.iter_mut().rev() {
        *slot = b'0' + (i % 10) as u8;
        i /= 10;
    }
    k
}

/// Pseudo-random but repeatable key order.
fn scramble(i: u64) -> u64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15) % KEYS
}

fn bench_block_seek(c: &mut Criterion) {
    let mut b = BlockBuilder::new(16);
    let n = 40u64; // about one 4 KiB block of 16-byte keys and 100-byte values
    for i in 0..n {
        b.add(&internal_key(&user_key(i), 1, ValueType::Put), &[b'v'; 100]);
    }
    let origin = BlockOrigin {
        file: Arc::from(Path::new("bench")),
        offset: 0,
    };
    let block = Block::new(Bytes::copy_from_slice(b.finish()), origin).expect("valid block");
    let targets: Vec<Vec<u8>> = (0..n)
        .map(|i| seek_key(&user_key((i * 7) % n), 5))
        .collect();
    let mut it = block.iter(KeyComparator::Bytewise);
    let mut next = 0usize;
    c.bench_function("block_seek_4k", |bench| {
        bench.iter(|| {
            it.seek(&targets[next % targets.len()]);
            next += 1;
            black_box(it.valid())
        })
    });
}

fn build_table(dir: &Path) -> Arc<TableReader> {
    let path = dir.join("bench.sst");
    let file = StdFs.create(&path).expect("create");
    let options = TableOptions {
        compression: CompressionType::None,
        ..TableOptions::default()
    };
    let mut b = TableBuilder::new(file, options).expect("builder");
    for i in 0..KEYS {
        b.add(&internal_key(&user_key(i), 1, ValueType::Put), &[b'v'; 100])
            .expect("add");
    }
    b.finish().expect("finish");
    let file = StdFs.open(&path, ReadFileOptions::default()).expect("open");
    Arc::new(TableReader::open(file, &path).expect("table"))
}

fn bench_table_get(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    let table = build_table(dir.path());
    let ro = ReadOptions::default();
    let mut i = 0u64;
    c.bench_function("table_get_hit", |bench| {
        bench.iter(|| {
            i += 1;
            let k = user_key(scramble(i));
            black_box(table.get(&ro, &k, 10).expect("get").is_some())
        })
    });
    c.bench_function("table_get_miss_filtered", |bench| {
        bench.iter(|| {
            i += 1;
            let mut k = user_key(scramble(i));
            k[0] = b'x';
            black_box(table.get(&ro, &k, 10).expect("get").is_some())
        })
    });
}

fn bench_bloom(c: &mut Criterion) {
    let mut b = BloomBuilder::new(10.0);
    for i in 0..KEYS {
        b.add_key(&user_key(i));
    }
    let filter = BloomFilter::new(Bytes::from(b.finish())).expect("filter");
    let mut i = 0u64;
    c.bench_function("bloom_query", |bench| {
        bench.iter(|| {
            i += 1;
            black_box(filter.may_contain(&user_key(scramble(i))))
        })
    });
}

fn bench_checksums(c: &mut Criterion) {
    let data: Vec<u8> = (0..4096u32).map(|i| (i * 31 % 251) as u8).collect();
    let mut g = c.benchmark_group("checksum_4k");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("crc32c", |b| {
        b.iter(|| black_box(crc32c::crc32c(black_box(&data))))
    });
    g.bench_function("xxh3", |b| {
        b.iter(|| black_box(xxhash_rust::xxh3::xxh3_64(black_box(&data))))
    });
    g.bench_function("block_trailer_xxh3", |b| {
        b.iter(|| black_box(ChecksumType::Xxh3.checksum_with_byte(black_box(&data), 0)))
    });
    g.finish();
}

/// A 4 KiB block of db_bench-like content: 16-byte keys and values that compress
/// to about half (db_bench's default `--compression_ratio=0.5`).
fn compressible_block() -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    let mut state = 0x1234_5678u32;
    let mut i = 0u64;
    while out.len() < 4096 {
        out.extend_from_slice(&user_key(i));
        // 50 random bytes then the same 50 repeated: about 2:1 compressible.
        let random: Vec<u8> = (0..50)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                b' ' + (state % 95) as u8
            })
            .collect();
        out.extend_from_slice(&random);
        out.extend_from_slice(&random);
        i += 1;
    }
    out.truncate(4096);
    out
}

fn bench_codecs(c: &mut Criterion) {
    let raw = compressible_block();
    let mut g = c.benchmark_group("codec_4k");
    g.throughput(Throughput::Bytes(raw.len() as u64));
    for codec in [
        CompressionType::Snappy,
        CompressionType::Lz4,
        CompressionType::Zstd { level: 3 },
    ] {
        let mut out = Vec::new();
        g.bench_with_input(
            BenchmarkId::new("compress", codec.name()),
            &raw,
            |b, raw| {
                b.iter(|| {
                    out.clear();
                    codec.compress_into(raw, &mut out).expect("compress");
                    black_box(out.len())
                })
            },
        );
        let mut stored = Vec::new();
        codec.compress_into(&raw, &mut stored).expect("compress");
        g.bench_with_input(
            BenchmarkId::new("uncompress", codec.name()),
            &stored,
            |b, s| b.iter(|| black_box(codec.decompress(s).expect("decompress").len())),
        );
    }
    g.finish();
}

criterion_group!(
    benches,
    bench_block_seek,
    bench_table_get,
    bench_bloom,
    bench_checksums,
    bench_codecs
);
criterion_main!(benches);
