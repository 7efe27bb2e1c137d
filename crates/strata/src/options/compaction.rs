//! Compaction options (RocksDB's column family options of the same names).
//!
//! How `compression_per_level` maps onto levels: entry 0 is L0. With
//! `level_compaction_dynamic_level_bytes` off, entry `i` is level `i`. With it on
//! (the default), as in RocksDB, entries from 1 on follow the *base level* (the
//! level L0 compacts into, which moves up as data grows): entry 1 is the base
//! level, entry 2 the level below it, and so on, so a setting like
//! "none, none, lz4, lz4, zstd" keeps meaning "L0 and the base level uncompressed,
//! the next two lz4" however deep the tree is. Levels past the vector's end use
//! its last entry; an empty vector means `TableOptions::compression` everywhere.
//! `bottommost_compression`, when set, overrides the last level.

use crate::compression::CompressionType;
use crate::error::{Error, Result};
use crate::version::NUM_LEVELS;

/// Compaction strategy (RocksDB's `compaction_style`).
///
/// ```
/// use strata::{CompactionOptions, CompactionStyle, Db, DbOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert_eq!(CompactionStyle::default(), CompactionStyle::Level);
/// let compaction_style = CompactionStyle::Universal;
/// let compaction = CompactionOptions { compaction_style, ..Default::default() };
/// let dir = tempfile::tempdir()?;
/// let options = DbOptions { create_if_missing: true, compaction, ..Default::default() };
/// let db = Db::open(dir.path(), options)?;
/// for i in 0..3 {
///     db.put("k", format!("v{i}"))?;
///     db.flush()?;
/// }
/// db.compact_range(None, None)?;
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v2"[..]));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CompactionStyle {
    /// Leveled compaction: each level below L0 is one sorted run, sized by
    /// `max_bytes_for_level_base` x `max_bytes_for_level_multiplier`^n. The default.
    #[default]
    Level,
    /// Universal (tiered) compaction: sorted runs are merged when their sizes
    /// are similar or space amplification grows too large. Less write
    /// amplification than leveled, more space amplification.
    Universal,
    /// FIFO: tables are never merged; the oldest are deleted when the total
    /// exceeds `compaction_options_fifo.max_table_files_size` (or they outlive
    /// `ttl`). For data that expires, such as logs and metrics.
    Fifo,
}

/// Universal compaction's options (RocksDB's `CompactionOptionsUniversal`).
///
/// ```
/// use strata::{CompactionOptions, CompactionStyle, UniversalOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let universal = UniversalOptions { max_size_amplification_percent: 50, ..Default::default() };
/// assert_eq!(universal.min_merge_width, 2);
/// let compaction = CompactionOptions {
///     compaction_style: CompactionStyle::Universal,
///     compaction_options_universal: universal,
///     ..Default::default()
/// };
/// compaction.validate()?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UniversalOptions {
    /// Percent by which a run may be larger than the runs before it and still
    /// be merged with them. Default 1.
    pub size_ratio: u32,
    /// Fewest runs merged by a size-ratio compaction. Default 2.
    pub min_merge_width: u32,
    /// Most runs merged by a size-ratio compaction. Default `u32::MAX`.
    pub max_merge_width: u32,
    /// When all runs but the oldest exceed this percent of the oldest's size,
    /// everything is compacted into one run. Default 200.
    pub max_size_amplification_percent: u32,
}

impl Default for UniversalOptions {
    fn default() -> Self {
        UniversalOptions {
            size_ratio: 1,
            min_merge_width: 2,
            max_merge_width: u32::MAX,
            max_size_amplification_percent: 200,
        }
    }
}

/// FIFO compaction's options (RocksDB's `CompactionOptionsFIFO`).
///
/// ```
/// use strata::{CompactionOptions, CompactionStyle, FifoOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert_eq!(FifoOptions::default().max_table_files_size, 1 << 30);
/// // Keep at most 64 MiB of tables; the oldest are deleted first.
/// let compaction = CompactionOptions {
///     compaction_style: CompactionStyle::Fifo,
///     compaction_options_fifo: FifoOptions { max_table_files_size: 64 << 20 },
///     ..Default::default()
/// };
/// compaction.validate()?;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FifoOptions {
    /// The oldest tables are deleted while the total is above this. Default
    /// 1 GiB.
    pub max_table_files_size: u64,
}

impl Default for FifoOptions {
    fn default() -> Self {
        FifoOptions {
            max_table_files_size: 1 << 30,
        }
    }
}

/// How compaction is triggered, shaped and throttled.
///
/// ```
/// use strata::{CompactionOptions, Db, DbOptions};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let compaction =
///     CompactionOptions { level0_file_num_compaction_trigger: 2, ..Default::default() };
/// compaction.validate()?;
/// // Each field is checked; the error names the first bad one.
/// assert!(CompactionOptions { num_levels: 1, ..compaction.clone() }.validate().is_err());
/// let dir = tempfile::tempdir()?;
/// let options = DbOptions { create_if_missing: true, compaction, ..Default::default() };
/// let db = Db::open(dir.path(), options)?;
/// db.put("k", "v")?;
/// db.flush()?;
/// assert!(db.get("k")?.is_some());
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionOptions {
    /// The strategy. Default leveled.
    pub compaction_style: CompactionStyle,
    /// Levels in the tree, L0 included, 2..=7. Default 7.
    pub num_levels: usize,
    /// L0 files that trigger an L0 compaction. Default 4. Lower keeps reads
    /// cheaper (fewer L0 files to consult), higher lowers write amplification.
    pub level0_file_num_compaction_trigger: usize,
    /// L0 files at which writes are slowed to `delayed_write_rate`. Default 20.
    pub level0_slowdown_writes_trigger: usize,
    /// L0 files at which writes stop until compaction catches up. Default 36.
    pub level0_stop_writes_trigger: usize,
    /// Target size of the base level (L1 without dynamic level bytes). Default
    /// 256 MiB.
    pub max_bytes_for_level_base: u64,
    /// Size ratio between adjacent levels. Default 10. Higher means fewer levels
    /// and more write amplification per level.
    pub max_bytes_for_level_multiplier: f64,
    /// Derive level targets from the last level's size, so the tree's shape
    /// stays stable as data grows and space amplification stays near 1.1x.
    /// Default true, as in current RocksDB.
    pub level_compaction_dynamic_level_bytes: bool,
    /// Output file size at the base level. Default 64 MiB.
    pub target_file_size_base: u64,
    /// Output file size ratio between adjacent levels. Default 1.
    pub target_file_size_multiplier: u32,
    /// Most bytes one compaction reads (also the grandparent-overlap limit at
    /// which an output file is cut). Default 0 = 25 x `target_file_size_base`.
    pub max_compaction_bytes: u64,
    /// Background threads for flushes and compactions together: one flushes,
    /// the others compact, and there is always one of each, so 1 runs as 2
    /// (RocksDB's split gives one of each for 1 too). Default 2.
    pub max_background_jobs: usize,
    /// Most threads one compaction may split into by key range (RocksDB's
    /// `max_subcompactions`): compactions from L0, manual ones and universal
    /// ones into a lower level, when large enough for an output file per
    /// thread. Database-wide. Default 1: never split.
    pub max_subcompactions: u32,
    /// Codec per level (see the module comment for the mapping). Default empty:
    /// `TableOptions::compression` at every level.
    pub compression_per_level: Vec<CompressionType>,
    /// Codec for the last level, overriding the above. Default none (unset).
    pub bottommost_compression: Option<CompressionType>,
    /// Writes are slowed when compaction is estimated to be this many bytes
    /// behind. Default 64 GiB; 0 disables.
    pub soft_pending_compaction_bytes_limit: u64,
    /// Writes stop when compaction is this many bytes behind. Default 256 GiB;
    /// 0 disables.
    pub hard_pending_compaction_bytes_limit: u64,
    /// Rate, in bytes per second, that slowed-down writes are held to. Default
    /// 16 MiB/s.
    pub delayed_write_rate: u64,
    /// Compaction runs in the background. Default false; set it to turn
    /// automatic compaction off (manual compaction still works).
    pub disable_auto_compactions: bool,
    /// Used with `CompactionStyle::Universal`.
    pub compaction_options_universal: UniversalOptions,
    /// Used with `CompactionStyle::Fifo`.
    pub compaction_options_fifo: FifoOptions,
    /// FIFO: tables older than this many seconds are deleted. Default 0 (off).
    pub ttl: u64,
}

impl Default for CompactionOptions {
    fn default() -> Self {
        CompactionOptions {
            compaction_style: CompactionStyle::Level,
            num_levels: NUM_LEVELS,
            level0_file_num_compaction_trigger: 4,
            level0_slowdown_writes_trigger: 20,
            level0_stop_writes_trigger: 36,
            max_bytes_for_level_base: 256 << 20,
            max_bytes_for_level_multiplier: 10.0,
            level_compaction_dynamic_level_bytes: true,
            target_file_size_base: 64 << 20,
            target_file_size_multiplier: 1,
            max_compaction_bytes: 0,
            max_background_jobs: 2,
            max_subcompactions: 1,
            compression_per_level: Vec::new(),
            bottommost_compression: None,
            soft_pending_compaction_bytes_limit: 64 << 30,
            hard_pending_compaction_bytes_limit: 256 << 30,
            delayed_write_rate: 16 << 20,
            disable_auto_compactions: false,
            compaction_options_universal: UniversalOptions::default(),
            compaction_options_fifo: FifoOptions::default(),
            ttl: 0,
        }
    }
}

impl CompactionOptions {
    /// Compaction threads for `max_background_jobs`: all but the flush
    /// thread, and at least one.
    pub fn compaction_threads(&self) -> usize {
        self.max_background_jobs.saturating_sub(1).max(1)
    }

    /// Checks every field; the error names the first bad one.
    pub fn validate(&self) -> Result<()> {
        let bad = |field: &'static str, why: String| Err(Error::invalid_argument(field, why));
        if !(2..=NUM_LEVELS).contains(&self.num_levels) {
            return bad(
                "num_levels",
                format!("{} is outside 2..={NUM_LEVELS}", self.num_levels),
            );
        }
        if self.level0_file_num_compaction_trigger == 0 {
            return bad(
                "level0_file_num_compaction_trigger",
                "must be at least 1".into(),
            );
        }
        if self.level0_slowdown_writes_trigger < self.level0_file_num_compaction_trigger {
            return bad(
                "level0_slowdown_writes_trigger",
                format!(
                    "{} is below level0_file_num_compaction_trigger {}",
                    self.level0_slowdown_writes_trigger, self.level0_file_num_compaction_trigger
                ),
            );
        }
        if self.level0_stop_writes_trigger < self.level0_slowdown_writes_trigger {
            return bad(
                "level0_stop_writes_trigger",
                format!(
                    "{} is below level0_slowdown_writes_trigger {}",
                    self.level0_stop_writes_trigger, self.level0_slowdown_writes_trigger
                ),
            );
        }
        if self.max_bytes_for_level_base == 0 {
            return bad("max_bytes_for_level_base", "must be at least 1".into());
        }
        // The negated comparison also rejects NaN.
        if !(self.max_bytes_for_level_multiplier > 1.0
            && self.max_bytes_for_level_multiplier <= 1e6)
        {
            return bad(
                "max_bytes_for_level_multiplier",
                format!("{} must be above 1", self.max_bytes_for_level_multiplier),
            );
        }
        if self.target_file_size_base == 0 {
            return bad("target_file_size_base", "must be at least 1".into());
        }
        if self.target_file_size_multiplier == 0 {
            return bad("target_file_size_multiplier", "must be at least 1".into());
        }
        if self.max_subcompactions == 0 {
            return bad(
                "max_subcompactions",
                "must be at least 1 (1: a compaction runs on one thread)".into(),
            );
        }
        if self.max_background_jobs == 0 {
            return bad(
                "max_background_jobs",
                "must be at least 1 (one flush and one compaction thread run either way)".into(),
            );
        }
        if self.compression_per_level.len() > self.num_levels {
            return bad(
                "compression_per_level",
                format!(
                    "{} entries for {} levels",
                    self.compression_per_level.len(),
                    self.num_levels
                ),
            );
        }
        if self.hard_pending_compaction_bytes_limit != 0
            && self.soft_pending_compaction_bytes_limit > self.hard_pending_compaction_bytes_limit
        {
            return bad(
                "soft_pending_compaction_bytes_limit",
                "is above hard_pending_compaction_bytes_limit".into(),
            );
        }
        let u = &self.compaction_options_universal;
        if u.min_merge_width < 2 {
            return bad(
                "compaction_options_universal.min_merge_width",
                format!("{} is below 2", u.min_merge_width),
            );
        }
        if u.max_merge_width < u.min_merge_width {
            return bad(
                "compaction_options_universal.max_merge_width",
                format!(
                    "{} is below min_merge_width {}",
                    u.max_merge_width, u.min_merge_width
                ),
            );
        }
        // Only FIFO reads its options; RocksDB's tools write 0 here for
        // every other style, and a database of that style must still open.
        if self.compaction_style == CompactionStyle::Fifo
            && self.compaction_options_fifo.max_table_files_size == 0
        {
            return bad(
                "compaction_options_fifo.max_table_files_size",
                "must be at least 1".into(),
            );
        }
        if self.delayed_write_rate == 0 {
            return bad(
                "delayed_write_rate",
                "must be at least 1 byte per second".into(),
            );
        }
        Ok(())
    }

    /// The grandparent overlap and input size limit in bytes.
    pub fn max_compaction_bytes(&self) -> u64 {
        if self.max_compaction_bytes == 0 {
            self.target_file_size_base.saturating_mul(25)
        } else {
            self.max_compaction_bytes
        }
    }

    /// Target output file size at `level`, given the current base level.
    pub fn target_file_size(&self, level: usize, base_level: usize) -> u64 {
        let steps = if self.level_compaction_dynamic_level_bytes {
            level.saturating_sub(base_level)
        } else {
            level.saturating_sub(1)
        };
        let mut size = self.target_file_size_base;
        for _ in 0..steps {
            size = size.saturating_mul(u64::from(self.target_file_size_multiplier));
        }
        size
    }

    /// The codec for tables written to `level`, given the current base level;
    /// `default` is `TableOptions::compression`.
    pub fn compression_for_level(
        &self,
        level: usize,
        base_level: usize,
        default: CompressionType,
    ) -> CompressionType {
        if level + 1 == self.num_levels && level > 0 {
            if let Some(c) = self.bottommost_compression {
                return c;
            }
        }
        let Some(last) = self.compression_per_level.last() else {
            return default;
        };
        let index = if level == 0 || !self.level_compaction_dynamic_level_bytes {
            level
        } else {
            // Entry 1 is the base level.
            level.saturating_sub(base_level) + 1
        };
        *self.compression_per_level.get(index).unwrap_or(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field_of(o: &CompactionOptions) -> Option<&'static str> {
        match o.validate() {
            Err(Error::InvalidArgument { field, .. }) => Some(field),
            _ => None,
        }
    }

    #[test]
    fn defaults_are_rocksdbs_and_valid() {
        let o = CompactionOptions::default();
        assert!(o.validate().is_ok());
        assert_eq!(o.level0_file_num_compaction_trigger, 4);
        assert_eq!(o.max_bytes_for_level_base, 256 << 20);
        assert_eq!(o.max_compaction_bytes(), 25 * (64 << 20));
    }

    #[test]
    fn invalid_combinations_are_named() {
        let base = CompactionOptions::default();
        let check = |f: fn(&mut CompactionOptions), field: &str| {
            let mut o = base.clone();
            f(&mut o);
            assert_eq!(field_of(&o), Some(field));
        };
        check(
            |o| o.max_bytes_for_level_multiplier = 1.0,
            "max_bytes_for_level_multiplier",
        );
        check(
            |o| o.max_bytes_for_level_multiplier = f64::NAN,
            "max_bytes_for_level_multiplier",
        );
        check(
            |o| o.level0_slowdown_writes_trigger = 3,
            "level0_slowdown_writes_trigger",
        );
        check(
            |o| o.level0_stop_writes_trigger = 19,
            "level0_stop_writes_trigger",
        );
        check(|o| o.num_levels = 8, "num_levels");
        check(
            |o| o.compression_per_level = vec![CompressionType::None; 8],
            "compression_per_level",
        );
        check(|o| o.max_background_jobs = 0, "max_background_jobs");
        check(|o| o.max_subcompactions = 0, "max_subcompactions");
        check(
            |o| o.soft_pending_compaction_bytes_limit = u64::MAX,
            "soft_pending_compaction_bytes_limit",
        );
    }

    #[test]
    fn compression_per_level_follows_the_base_level_with_dynamic_bytes() {
        use CompressionType::*;
        let o = CompactionOptions {
            compression_per_level: vec![None, None, Lz4, Lz4, Zstd { level: 3 }],
            bottommost_compression: Some(Zstd { level: 9 }),
            ..CompactionOptions::default()
        };
        // Base level 4: L4 is entry 1, L5 entry 2; L6 is the bottommost.
        assert_eq!(o.compression_for_level(0, 4, Snappy), None);
        assert_eq!(o.compression_for_level(4, 4, Snappy), None);
        assert_eq!(o.compression_for_level(5, 4, Snappy), Lz4);
        assert_eq!(o.compression_for_level(6, 4, Snappy), Zstd { level: 9 });
        // Static levels: entry i is level i, the last entry repeats.
        let s = CompactionOptions {
            level_compaction_dynamic_level_bytes: false,
            bottommost_compression: Option::None,
            ..o
        };
        assert_eq!(s.compression_for_level(2, 1, Snappy), Lz4);
        assert_eq!(s.compression_for_level(6, 1, Snappy), Zstd { level: 3 });
        let empty = CompactionOptions::default();
        assert_eq!(empty.compression_for_level(3, 1, Snappy), Snappy);
    }

    /// RocksDB takes `max_background_jobs = 1` (one flush and one compaction
    /// thread); so does Strata, which refused it.
    #[test]
    fn one_background_job_runs_one_flush_and_one_compaction_thread() {
        let one = CompactionOptions {
            max_background_jobs: 1,
            ..CompactionOptions::default()
        };
        assert!(one.validate().is_ok());
        assert_eq!(one.compaction_threads(), 1);
        let four = CompactionOptions {
            max_background_jobs: 4,
            ..CompactionOptions::default()
        };
        assert_eq!(four.compaction_threads(), 3);
    }
}
