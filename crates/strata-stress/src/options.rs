//! Engine options drawn from the seed, so each run covers another corner
//! (and a failing seed reproduces its options).

use std::fmt;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::cache::clock::{ClockCache, ClockOptions};
use strata::cache::lru::{LruCache, LruOptions};
use strata::cache::Cache;
use strata::ReverseBytewiseComparator;
use strata::{BlobOptions, PrepopulateBlobCache};
use strata::{CfOptions, IndexType, PrefixExtractor, TableOptions, WalRecoveryMode};
use strata::{ChecksumType, CompactionOptions, CompactionStyle, CompressionType, DbOptions, Fs};

use crate::model::{ExpiredFilter, MergeKind};

/// The drawn options, with what the engine's `DbOptions` cannot say.
#[derive(Clone)]
pub struct StressOptions {
    /// The default family's options are these (with its merge operator and
    /// the filter); the other families' come from [`StressOptions::cf_options`].
    pub db: DbOptions,
    pub disable_wal: bool,
    pub sync_ratio: f64,
    /// Each key family's merge operator, by family index.
    pub merge_kinds: [MergeKind; 3],
    /// The compaction filter every key family shares, kept to count what it
    /// removed.
    pub filter: Arc<ExpiredFilter>,
    cache: &'static str,
    /// Family "s2" sorts its keys in reverse bytewise order (and so has no
    /// prefix extractor).
    pub reverse_s2: bool,
    /// Which blob cache the blob options name: none, the block cache, or
    /// one of their own.
    blob_cache: &'static str,
}

impl StressOptions {
    /// The options of key family `family`: the default family's, with the
    /// family's own merge operator.
    pub fn cf_options(&self, family: usize) -> CfOptions {
        let mut options = CfOptions {
            merge_operator: self.merge_kinds.get(family).map(|k| k.operator()),
            ..self.db.cf_options()
        };
        if family == 2 && self.reverse_s2 {
            options.comparator = Arc::new(ReverseBytewiseComparator);
            options.table.prefix_extractor = None;
        }
        options
    }
}

impl fmt::Display for StressOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (o, c, t) = (&self.db, &self.db.compaction, &self.db.table);
        write!(
            f,
            "write_buffer_size={} max_write_buffer_number={} compaction_style={:?} \
             level0_file_num_compaction_trigger={} level0_slowdown_writes_trigger={} \
             level0_stop_writes_trigger={} max_background_jobs={} max_subcompactions={} \
             target_file_size_base={} \
             max_bytes_for_level_base={} block_size={} compression={:?} checksum={:?} \
             bloom_bits={} index_type={:?} partition_filters={} metadata_block_size={} \
             prefix_extractor={:?} whole_key_filtering={} memtable_bloom={} \
             cache={} cache_index_and_filter_blocks={} max_open_files={} \
             disable_wal={} manual_wal_flush={} sync_ratio={} merge_operators={} compaction_filter=remove-{} \
             s2_comparator={} {}",
            o.write_buffer_size,
            o.max_write_buffer_number,
            c.compaction_style,
            c.level0_file_num_compaction_trigger,
            c.level0_slowdown_writes_trigger,
            c.level0_stop_writes_trigger,
            c.max_background_jobs,
            c.max_subcompactions,
            c.target_file_size_base,
            c.max_bytes_for_level_base,
            t.block_size,
            t.compression,
            t.checksum,
            t.bloom_bits_per_key,
            t.index_type,
            t.partition_filters,
            t.metadata_block_size,
            t.prefix_extractor,
            t.whole_key_filtering,
            o.memtable_prefix_bloom_size_ratio,
            self.cache,
            t.cache_index_and_filter_blocks,
            o.max_open_files,
            self.disable_wal,
            o.manual_wal_flush,
            self.sync_ratio,
            self.merge_kinds.map(MergeKind::name).join(","),
            String::from_utf8_lossy(crate::model::MARK),
            self.cf_options(2).comparator.name(),
            describe_blobs(&self.db.blob, self.blob_cache),
        )
    }
}

/// The blob options as `name=value` pairs; just `enable_blob_files=false`
/// when blobs are off.
fn describe_blobs(b: &BlobOptions, cache: &str) -> String {
    if !b.enable_blob_files {
        return "enable_blob_files=false".to_owned();
    }
    format!("{b} blob_cache={cache}")
}

/// Blob options drawn from `rng`: on for half the seeds, with values split
/// at sizes the workload's values straddle. The blob cache is none, the
/// block cache itself (shared, as db_bench's
/// `--use_shared_block_and_blob_cache` makes it), or a small one of its own.
fn draw_blobs(
    rng: &mut SmallRng,
    block_cache: Option<&Arc<dyn Cache>>,
) -> (BlobOptions, &'static str) {
    if !rng.gen_bool(0.5) {
        return (BlobOptions::default(), "none");
    }
    let cache_kind = pick(rng, &["none", "shared", "own"]);
    let blob_cache = match cache_kind {
        "shared" => block_cache.cloned(),
        "own" => LruCache::new(LruOptions::new(256 << 10))
            .ok()
            .map(|c| Arc::new(c) as Arc<dyn Cache>),
        _ => None,
    };
    let options = BlobOptions {
        enable_blob_files: true,
        min_blob_size: pick(rng, &[0, 32, 100, 1_000]),
        blob_file_size: pick(rng, &[16 << 10, 256 << 10, 8 << 20]),
        blob_compression_type: pick(
            rng,
            &[
                CompressionType::None,
                CompressionType::Lz4,
                CompressionType::Zstd { level: 1 },
            ],
        ),
        blob_file_starting_level: pick(rng, &[0, 0, 1, 2]),
        enable_blob_garbage_collection: rng.gen_bool(0.5),
        // The whole documented range, extremes included: 0.0 and 1.0 are
        // where forced collection once rewrote garbage-free files forever
        // and starved the other families' compactions.
        blob_garbage_collection_age_cutoff: pick(rng, &[0.0, 0.25, 0.5, 1.0]),
        blob_garbage_collection_force_threshold: pick(rng, &[0.0, 0.25, 1.0]),
        prepopulate_blob_cache: pick(
            rng,
            &[
                PrepopulateBlobCache::Disable,
                PrepopulateBlobCache::FlushOnly,
            ],
        ),
        blob_cache,
        ..BlobOptions::default()
    };
    let cache = if options.blob_cache.is_some() {
        cache_kind
    } else {
        "none"
    };
    (options, cache)
}

fn pick<T: Copy>(rng: &mut SmallRng, choices: &[T]) -> T {
    choices[rng.gen_range(0..choices.len())]
}

/// Options for a run with `seed`, on `fs`.
pub fn draw(seed: u64, fs: Arc<dyn Fs>) -> StressOptions {
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x0005_EED0_F0B7);
    let cache_kind = pick(&mut rng, &["none", "lru", "clock"]);
    let cache_bytes = pick(&mut rng, &[64 << 10, 1 << 20, 8 << 20]);
    let block_cache: Option<Arc<dyn Cache>> = match cache_kind {
        "lru" => LruCache::new(LruOptions::new(cache_bytes))
            .ok()
            .map(|c| Arc::new(c) as Arc<dyn Cache>),
        "clock" => ClockCache::new(ClockOptions {
            capacity: cache_bytes,
            estimated_entry_charge: 4096,
            strict_capacity_limit: false,
        })
        .ok()
        .map(|c| Arc::new(c) as Arc<dyn Cache>),
        _ => None,
    };
    let style = pick(
        &mut rng,
        &[CompactionStyle::Level, CompactionStyle::Universal],
    );
    let l0_trigger = rng.gen_range(2..=4);
    // Half the runs stall and stop writes a few files past the trigger, so
    // the writers lean on compaction scheduling.
    let (slowdown, stop) = if rng.gen_bool(0.5) {
        (l0_trigger + 2, l0_trigger + 4)
    } else {
        let d = CompactionOptions::default();
        (
            d.level0_slowdown_writes_trigger,
            d.level0_stop_writes_trigger,
        )
    };
    let compaction = CompactionOptions {
        compaction_style: style,
        level0_file_num_compaction_trigger: l0_trigger,
        level0_slowdown_writes_trigger: slowdown,
        level0_stop_writes_trigger: stop,
        // 1 and 2 both run one flush and one compaction thread.
        max_background_jobs: pick(&mut rng, &[1, 2, 4]),
        target_file_size_base: pick(&mut rng, &[64 << 10, 256 << 10, 2 << 20]),
        max_bytes_for_level_base: pick(&mut rng, &[256 << 10, 1 << 20, 8 << 20]),
        level_compaction_dynamic_level_bytes: rng.gen_bool(0.5),
        ..CompactionOptions::default()
    };
    let table = TableOptions {
        block_size: pick(&mut rng, &[256, 1024, 4096, 16384]),
        block_restart_interval: pick(&mut rng, &[1, 4, 16]),
        bloom_bits_per_key: pick(&mut rng, &[0.0, 10.0]),
        compression: pick(
            &mut rng,
            &[
                CompressionType::None,
                CompressionType::Snappy,
                CompressionType::Lz4,
                CompressionType::Zstd { level: 1 },
            ],
        ),
        checksum: pick(&mut rng, &[ChecksumType::Crc32c, ChecksumType::Xxh3]),
        cache_index_and_filter_blocks: block_cache.is_some() && rng.gen_bool(0.5),
        ..TableOptions::default()
    };
    // Later knobs come from a generator of their own, so every seed keeps
    // the options drawn above.
    let mut later = SmallRng::seed_from_u64(seed ^ 0x0000_7AB1_E5E7);
    let table = TableOptions {
        index_type: pick(
            &mut later,
            &[IndexType::BinarySearch, IndexType::TwoLevelIndexSearch],
        ),
        partition_filters: later.gen_bool(0.5),
        metadata_block_size: pick(&mut later, &[256, 1024, 4096]),
        prefix_extractor: pick(
            &mut later,
            &[
                None,
                Some(PrefixExtractor::Fixed(4)),
                Some(PrefixExtractor::Capped(6)),
            ],
        ),
        whole_key_filtering: later.gen_bool(0.8),
        ..table
    };
    let memtable_prefix_bloom_size_ratio = pick(&mut later, &[0.0, 0.0, 0.05]);
    let compaction = CompactionOptions {
        max_subcompactions: pick(&mut later, &[1, 1, 2, 4]),
        ..compaction
    };
    let disable_wal = rng.gen_bool(0.1);
    let sync_ratio = if disable_wal {
        0.0
    } else {
        pick(&mut rng, &[0.0, 0.01, 0.1, 0.5])
    };
    let merge_kinds = MergeKind::for_families(seed);
    let filter = Arc::new(ExpiredFilter::default());
    let db = DbOptions {
        create_if_missing: true,
        merge_operator: Some(merge_kinds[0].operator()),
        compaction_filter: Some(filter.clone()),
        write_buffer_size: pick(&mut rng, &[64 << 10, 128 << 10, 256 << 10, 1 << 20]),
        max_write_buffer_number: rng.gen_range(2..=4),
        table,
        compaction,
        block_cache,
        max_open_files: pick(&mut rng, &[-1, 20]),
        memtable_prefix_bloom_size_ratio,
        memtable_whole_key_filtering: memtable_prefix_bloom_size_ratio > 0.0,
        wal_recovery_mode: WalRecoveryMode::PointInTimeRecovery,
        fs,
        ..DbOptions::default()
    };
    // And later ones from another, for the same reason.
    let mut newer = SmallRng::seed_from_u64(seed ^ 0x0000_0C0A_1A70);
    let reverse_s2 = newer.gen_bool(0.5);
    let db = DbOptions {
        manual_wal_flush: !disable_wal && newer.gen_bool(0.25),
        ..db
    };
    let mut blob_rng = SmallRng::seed_from_u64(seed ^ 0x0000_0B10_B5EE);
    let (blob, blob_cache) = draw_blobs(&mut blob_rng, db.block_cache.as_ref());
    let db = DbOptions { blob, ..db };
    StressOptions {
        db,
        disable_wal,
        sync_ratio,
        merge_kinds,
        filter,
        cache: cache_kind,
        reverse_s2,
        blob_cache,
    }
}
