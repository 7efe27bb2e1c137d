//! The option sets a sequence runs under: drawn from the seed, and partly
//! redrawn at every reopen, so one database lives through several shapes
//! (a leveled tree reopened as universal, a smaller cache, fewer levels...).
//!
//! [`Knobs`] holds only what varies, so a failure prints a short description
//! rather than all of `DbOptions`.

use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::cache::clock::{ClockCache, ClockOptions};
use strata::cache::lru::{LruCache, LruOptions};
use strata::cache::Cache;
use strata::fs::SimFs;
use strata::{ChecksumType, CompactionOptions, CompactionStyle, CompressionType, DbOptions};
use strata::{FifoOptions, IndexType, PrefixExtractor, TableOptions, UniversalOptions};

/// The block cache a run opens with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CacheKind {
    None,
    Lru {
        capacity: usize,
        num_shard_bits: u32,
        high_pri_pool_ratio: f64,
    },
    Clock {
        capacity: usize,
    },
}

impl CacheKind {
    fn random(rng: &mut SmallRng) -> CacheKind {
        // Small capacities so blocks are evicted and read again.
        let capacity = [16 << 10, 128 << 10, 4 << 20][rng.gen_range(0..3)];
        match rng.gen_range(0..3) {
            0 => CacheKind::None,
            1 => CacheKind::Lru {
                capacity,
                num_shard_bits: rng.gen_range(0..4),
                high_pri_pool_ratio: [0.0, 0.5, 0.9][rng.gen_range(0..3)],
            },
            _ => CacheKind::Clock { capacity },
        }
    }

    /// A new cache of this kind, sized for blocks of `block_size` bytes.
    pub fn build(self, block_size: usize) -> Option<Arc<dyn Cache>> {
        match self {
            CacheKind::None => None,
            CacheKind::Lru {
                capacity,
                num_shard_bits,
                high_pri_pool_ratio,
            } => {
                let options = LruOptions {
                    num_shard_bits: Some(num_shard_bits),
                    high_pri_pool_ratio,
                    ..LruOptions::new(capacity)
                };
                Some(Arc::new(LruCache::new(options).expect("lru cache")))
            }
            CacheKind::Clock { capacity } => {
                let options = ClockOptions {
                    capacity,
                    estimated_entry_charge: block_size,
                    strict_capacity_limit: false,
                };
                Some(Arc::new(ClockCache::new(options).expect("clock cache")))
            }
        }
    }
}

/// What varies between option sets and between reopens.
#[derive(Debug, Clone, PartialEq)]
pub struct Knobs {
    pub write_buffer_size: usize,
    pub max_write_buffer_number: usize,
    pub max_open_files: i64,
    pub cache: CacheKind,
    pub table: TableOptions,
    pub compaction: CompactionOptions,
    /// `memtable_prefix_bloom_size_ratio` and `memtable_whole_key_filtering`.
    pub memtable_bloom: (f64, bool),
}

/// The engine's defaults, but with memtables small enough to flush.
pub fn standard() -> Knobs {
    Knobs {
        write_buffer_size: 64 << 10,
        max_write_buffer_number: 2,
        max_open_files: -1,
        cache: CacheKind::Lru {
            capacity: 32 << 20,
            num_shard_bits: 0,
            high_pri_pool_ratio: 0.5,
        },
        table: TableOptions::default(),
        compaction: CompactionOptions::default(),
        memtable_bloom: (0.0, false),
    }
}

fn pick<T: Copy>(rng: &mut SmallRng, choices: &[T]) -> T {
    choices[rng.gen_range(0..choices.len())]
}

fn compression(rng: &mut SmallRng) -> CompressionType {
    match rng.gen_range(0..4) {
        0 => CompressionType::None,
        1 => CompressionType::Snappy,
        2 => CompressionType::Lz4,
        _ => CompressionType::Zstd {
            level: rng.gen_range(1..4),
        },
    }
}

fn table(rng: &mut SmallRng) -> TableOptions {
    // The index layout is drawn from a generator of its own, seeded from
    // (without advancing) `rng`, so that every seed keeps the rest of its
    // options and operations as they were before partitions existed.
    let mut own = SmallRng::seed_from_u64(rng.clone().gen::<u64>() ^ 0x7061_7274_6974_696f);
    let index_type = if own.gen_bool(0.5) {
        IndexType::TwoLevelIndexSearch
    } else {
        IndexType::BinarySearch
    };
    TableOptions {
        index_type,
        partition_filters: own.gen_bool(0.5),
        // Small partitions, so that tables have several.
        metadata_block_size: pick(&mut own, &[64, 256, 1024, 4096]),
        block_size: pick(rng, &[64, 256, 1024, 4096, 16 << 10]),
        block_restart_interval: pick(rng, &[1, 2, 4, 16, 32]),
        bloom_bits_per_key: pick(rng, &[0.0, 1.0, 5.0, 10.0, 20.0]),
        compression: compression(rng),
        checksum: pick(rng, &[ChecksumType::Crc32c, ChecksumType::Xxh3]),
        cache_index_and_filter_blocks: rng.gen_bool(0.5),
        cache_index_and_filter_blocks_with_high_priority: rng.gen_bool(0.5),
        pin_l0_filter_and_index_blocks_in_cache: rng.gen_bool(0.3),
        pin_top_level_index_and_filter: rng.gen_bool(0.5),
        // Drawn last so the draws above stay what they were for every seed.
        prefix_extractor: match rng.gen_range(0..4) {
            0 | 1 => None,
            2 => Some(PrefixExtractor::Fixed(rng.gen_range(1..5))),
            _ => Some(PrefixExtractor::Capped(rng.gen_range(1..5))),
        },
        whole_key_filtering: rng.gen_bool(0.7),
    }
}

fn memtable_bloom(rng: &mut SmallRng) -> (f64, bool) {
    (pick(rng, &[0.0, 0.0, 0.001, 0.1]), rng.gen_bool(0.5))
}

fn style(rng: &mut SmallRng, c: &mut CompactionOptions) {
    c.compaction_style = match rng.gen_range(0..5) {
        0..=1 => CompactionStyle::Level,
        2..=3 => CompactionStyle::Universal,
        // FIFO deletes the oldest tables above its size limit: with the limit
        // at 1 GiB and runs writing a few MiB at most, it deletes nothing, so
        // the model stays exact while FIFO's L0-only tree is exercised.
        _ => CompactionStyle::Fifo,
    };
    c.compaction_options_universal = UniversalOptions {
        size_ratio: pick(rng, &[0, 1, 10, 50]),
        min_merge_width: rng.gen_range(2..5),
        max_merge_width: pick(rng, &[4, 8, u32::MAX]),
        max_size_amplification_percent: pick(rng, &[25, 100, 200]),
    };
    c.compaction_options_fifo = FifoOptions {
        max_table_files_size: 1 << 30,
    };
    c.disable_auto_compactions = rng.gen_bool(0.1);
}

fn shape(rng: &mut SmallRng, c: &mut CompactionOptions) {
    c.level0_file_num_compaction_trigger = rng.gen_range(1..8);
    // Triggers far above the compaction trigger: slowed or stopped writes
    // only cost time here.
    c.level0_slowdown_writes_trigger = c.level0_file_num_compaction_trigger.max(20);
    c.level0_stop_writes_trigger = c.level0_slowdown_writes_trigger + 16;
    c.target_file_size_base = pick(rng, &[2 << 10, 8 << 10, 32 << 10, 128 << 10]);
    c.target_file_size_multiplier = rng.gen_range(1..3);
    c.max_bytes_for_level_base = pick(rng, &[16 << 10, 64 << 10, 256 << 10, 1 << 20]);
    c.max_bytes_for_level_multiplier = pick(rng, &[2.0, 4.0, 10.0]);
    c.level_compaction_dynamic_level_bytes = rng.gen_bool(0.5);
    c.max_compaction_bytes = pick(rng, &[0, 16 << 10, 1 << 20]);
}

/// Per-level codecs fitting `num_levels` (validate() refuses more entries
/// than levels).
fn codecs(rng: &mut SmallRng, c: &mut CompactionOptions) {
    let len = if rng.gen_bool(0.5) {
        0
    } else {
        rng.gen_range(1..=c.num_levels)
    };
    c.compression_per_level = (0..len).map(|_| compression(rng)).collect();
    c.bottommost_compression = rng.gen_bool(0.3).then(|| compression(rng));
}

impl Knobs {
    /// A random option set.
    pub fn random(rng: &mut SmallRng) -> Knobs {
        let mut compaction = CompactionOptions {
            num_levels: rng.gen_range(2..=7),
            max_background_jobs: rng.gen_range(2..=4),
            ..CompactionOptions::default()
        };
        style(rng, &mut compaction);
        shape(rng, &mut compaction);
        codecs(rng, &mut compaction);
        Knobs {
            write_buffer_size: pick(rng, &[64 << 10, 96 << 10, 256 << 10]),
            max_write_buffer_number: rng.gen_range(2..=4),
            max_open_files: pick(rng, &[-1, -1, 4, 20]),
            cache: CacheKind::random(rng),
            table: table(rng),
            compaction,
            memtable_bloom: memtable_bloom(rng),
        }
    }

    /// The options of a reopen: some groups of knobs redrawn, the rest kept.
    /// `num_levels` changes (up or down) at some reopens: a lower count than
    /// the data needs may be refused at open, which the runner handles.
    pub fn reopen(&self, rng: &mut SmallRng) -> Knobs {
        let mut k = self.clone();
        if rng.gen_bool(0.4) {
            k.table = table(rng);
            k.memtable_bloom = memtable_bloom(rng);
        }
        if rng.gen_bool(0.3) {
            k.cache = CacheKind::random(rng);
        }
        if rng.gen_bool(0.3) {
            k.write_buffer_size = pick(rng, &[64 << 10, 96 << 10, 256 << 10]);
            k.max_write_buffer_number = rng.gen_range(2..=4);
            k.max_open_files = pick(rng, &[-1, -1, 4, 20]);
        }
        if rng.gen_bool(0.3) {
            style(rng, &mut k.compaction);
        }
        if rng.gen_bool(0.4) {
            shape(rng, &mut k.compaction);
        }
        if rng.gen_bool(0.3) {
            k.compaction.num_levels = rng.gen_range(2..=7);
        }
        if rng.gen_bool(0.3) {
            k.compaction.max_background_jobs = rng.gen_range(2..=4);
        }
        if rng.gen_bool(0.3) || k.compaction.compression_per_level.len() > k.compaction.num_levels {
            codecs(rng, &mut k.compaction);
        }
        k
    }

    /// Every knob by name, for printing what a reopen changed.
    fn fields(&self) -> Vec<(&'static str, String)> {
        let (t, c) = (&self.table, &self.compaction);
        vec![
            ("write_buffer_size", format!("{}", self.write_buffer_size)),
            (
                "max_write_buffer_number",
                format!("{}", self.max_write_buffer_number),
            ),
            ("max_open_files", format!("{}", self.max_open_files)),
            ("cache", format!("{:?}", self.cache)),
            ("block_size", format!("{}", t.block_size)),
            (
                "block_restart_interval",
                format!("{}", t.block_restart_interval),
            ),
            ("bloom_bits_per_key", format!("{}", t.bloom_bits_per_key)),
            ("prefix_extractor", format!("{:?}", t.prefix_extractor)),
            ("whole_key_filtering", format!("{}", t.whole_key_filtering)),
            ("memtable_bloom", format!("{:?}", self.memtable_bloom)),
            ("compression", format!("{:?}", t.compression)),
            ("checksum", format!("{:?}", t.checksum)),
            (
                "cache_index_and_filter_blocks",
                format!("{}", t.cache_index_and_filter_blocks),
            ),
            (
                "cache_index_and_filter_blocks_with_high_priority",
                format!("{}", t.cache_index_and_filter_blocks_with_high_priority),
            ),
            (
                "pin_l0_filter_and_index_blocks_in_cache",
                format!("{}", t.pin_l0_filter_and_index_blocks_in_cache),
            ),
            (
                "pin_top_level_index_and_filter",
                format!("{}", t.pin_top_level_index_and_filter),
            ),
            ("index_type", format!("{:?}", t.index_type)),
            ("partition_filters", format!("{}", t.partition_filters)),
            ("metadata_block_size", format!("{}", t.metadata_block_size)),
            ("compaction_style", format!("{:?}", c.compaction_style)),
            ("num_levels", format!("{}", c.num_levels)),
            (
                "level0_file_num_compaction_trigger",
                format!("{}", c.level0_file_num_compaction_trigger),
            ),
            (
                "target_file_size_base",
                format!("{}", c.target_file_size_base),
            ),
            (
                "target_file_size_multiplier",
                format!("{}", c.target_file_size_multiplier),
            ),
            (
                "max_bytes_for_level_base",
                format!("{}", c.max_bytes_for_level_base),
            ),
            (
                "max_bytes_for_level_multiplier",
                format!("{}", c.max_bytes_for_level_multiplier),
            ),
            (
                "level_compaction_dynamic_level_bytes",
                format!("{}", c.level_compaction_dynamic_level_bytes),
            ),
            (
                "max_compaction_bytes",
                format!("{}", c.max_compaction_bytes),
            ),
            ("max_background_jobs", format!("{}", c.max_background_jobs)),
            (
                "compression_per_level",
                format!("{:?}", c.compression_per_level),
            ),
            (
                "bottommost_compression",
                format!("{:?}", c.bottommost_compression),
            ),
            (
                "disable_auto_compactions",
                format!("{}", c.disable_auto_compactions),
            ),
            ("universal", format!("{:?}", c.compaction_options_universal)),
        ]
    }

    /// The knobs that differ from `earlier`, as `name: old -> new`.
    pub fn changes_from(&self, earlier: &Knobs) -> String {
        let changed: Vec<String> = earlier
            .fields()
            .into_iter()
            .zip(self.fields())
            .filter(|((_, old), (_, new))| old != new)
            .map(|((name, old), (_, new))| format!("{name}: {old} -> {new}"))
            .collect();
        changed.join(", ")
    }

    /// The database options: these knobs on `fs`, with `cache`.
    pub fn db_options(&self, fs: &SimFs, cache: Option<Arc<dyn Cache>>) -> DbOptions {
        DbOptions {
            create_if_missing: true,
            write_buffer_size: self.write_buffer_size,
            max_write_buffer_number: self.max_write_buffer_number,
            max_open_files: self.max_open_files,
            table: self.table.clone(),
            compaction: self.compaction.clone(),
            fs: Arc::new(fs.clone()),
            block_cache: cache,
            memtable_prefix_bloom_size_ratio: self.memtable_bloom.0,
            memtable_whole_key_filtering: self.memtable_bloom.1,
            ..DbOptions::default()
        }
    }
}
