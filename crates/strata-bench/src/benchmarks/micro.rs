//! db_bench's micro-benchmarks of the building blocks: checksums and hashes
//! over 4 KiB blocks, and block compression with `--compression_type`, on data
//! from the value generator (so it compresses to `--compression_ratio`).

use std::time::Instant;

use strata::CompressionType;

use crate::generator::ValuePool;
use crate::report::{Stats, Suffix};

/// One micro-benchmark, by db_bench name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Micro {
    Crc32c,
    XxHash,
    XxHash64,
    Xxh3,
    Compress,
    Uncompress,
}

/// db_bench's block size for these benchmarks.
const BLOCK: usize = 4096;
/// Bytes hashed per run (db_bench: 500 MB), and compressed (1 GB).
const HASH_BYTES: u64 = 500 << 20;
const CODEC_BYTES: u64 = 1 << 30;

impl Micro {
    pub(super) fn from_name(name: &str) -> Option<Micro> {
        Some(match name {
            "crc32c" => Micro::Crc32c,
            "xxhash" => Micro::XxHash,
            "xxhash64" => Micro::XxHash64,
            "xxh3" => Micro::Xxh3,
            "compress" => Micro::Compress,
            "uncompress" => Micro::Uncompress,
            _ => return None,
        })
    }

    /// Runs on one thread; returns the stats and the result line's suffix.
    pub(super) fn run(
        self,
        pool: &ValuePool,
        codec: CompressionType,
    ) -> Result<(Stats, Suffix), String> {
        let mut cursor = pool.cursor();
        let block = cursor.next_value(BLOCK).to_vec();
        let mut stats = Stats::new(false)?;
        let mut sink = 0u64;
        let suffix = match self {
            Micro::Crc32c | Micro::XxHash | Micro::XxHash64 | Micro::Xxh3 => {
                stats.start = Instant::now();
                while stats.bytes < HASH_BYTES {
                    sink = sink.wrapping_add(match self {
                        Micro::Crc32c => u64::from(crc32c::crc32c(&block)),
                        Micro::XxHash => u64::from(xxhash_rust::xxh32::xxh32(&block, 0)),
                        Micro::XxHash64 => xxhash_rust::xxh64::xxh64(&block, 0),
                        _ => xxhash_rust::xxh3::xxh3_64(&block),
                    });
                    stats.bytes += BLOCK as u64;
                    stats.finished_op(None)?;
                }
                Suffix::Label("(4K per op)".into())
            }
            Micro::Compress => {
                let mut out = Vec::with_capacity(2 * BLOCK);
                stats.start = Instant::now();
                let mut produced = 0u64;
                while stats.bytes < CODEC_BYTES {
                    out.clear();
                    codec
                        .compress_into(&block, &mut out)
                        .map_err(|e| format!("compress: {e}"))?;
                    produced += out.len() as u64;
                    stats.bytes += BLOCK as u64;
                    stats.finished_op(None)?;
                }
                let percent = produced as f64 * 100.0 / stats.bytes.max(1) as f64;
                Suffix::Label(format!("(output: {percent:.1}%)"))
            }
            Micro::Uncompress => {
                let mut compressed = Vec::with_capacity(2 * BLOCK);
                codec
                    .compress_into(&block, &mut compressed)
                    .map_err(|e| format!("compress: {e}"))?;
                stats.start = Instant::now();
                while stats.bytes < CODEC_BYTES {
                    let raw = if codec == CompressionType::None {
                        compressed.clone()
                    } else {
                        codec
                            .decompress(&compressed)
                            .map_err(|e| format!("uncompress: {e}"))?
                    };
                    sink = sink.wrapping_add(raw.len() as u64);
                    stats.bytes += BLOCK as u64;
                    stats.finished_op(None)?;
                }
                Suffix::None
            }
        };
        std::hint::black_box(sink);
        stats.finish = Instant::now();
        stats.thread_seconds = stats.finish.duration_since(stats.start).as_secs_f64();
        Ok((stats, suffix))
    }
}
