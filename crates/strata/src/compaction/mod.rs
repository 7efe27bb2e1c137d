//! Compaction: choosing what to merge ([`leveled`], a pure function of a
//! [`Version`](crate::version::Version)), merging it ([`job`], which does the
//! I/O), and the rules for what a merge may drop ([`iter`]); range tombstones
//! travel beside the merged point entries (`range_dels`).

pub mod blobs;
pub mod fifo;
pub mod iter;
pub mod job;
pub mod leveled;
mod merge_collapse;
mod output_cut;
mod range_dels;
pub mod rate_limiter;
mod subcompaction;
pub mod universal;

use std::sync::Arc;

use crate::compression::CompressionType;
use crate::key::user_key;
use crate::key_order::KeyComparator;
use crate::version::FileMetaData;

/// Why a compaction was picked (RocksDB's `CompactionReason`, for the LOG).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompactionReason {
    /// L0 reached `level0_file_num_compaction_trigger` files (or its size target).
    L0FilesNum,
    /// A level grew past its target size.
    LevelMaxLevelSize,
    /// `compact_range` asked for it.
    Manual,
    /// Universal: space amplification past `max_size_amplification_percent`.
    UniversalSizeAmplification,
    /// Universal: runs of similar size (`size_ratio`).
    UniversalSizeRatio,
    /// Universal: more runs than the trigger allows.
    UniversalSortedRunNum,
    /// FIFO: the total size is over `max_table_files_size`.
    FifoMaxSize,
    /// FIFO: tables older than `ttl`.
    FifoTtl,
    /// Leveled with blob garbage collection: the oldest blob files hold
    /// garbage past `blob_garbage_collection_force_threshold`, and these
    /// tables reference the oldest of them.
    ForcedBlobGc,
}

/// One compaction, as a picker describes it: which files, into which level, and
/// how to write the outputs.
#[derive(Debug, Clone)]
pub struct CompactionTask {
    pub reason: CompactionReason,
    /// The level the compaction starts from.
    pub start_level: usize,
    /// The level the outputs go to.
    pub output_level: usize,
    /// Files of `start_level`. For L0, newest first.
    pub inputs: Vec<Arc<FileMetaData>>,
    /// Files of `output_level` overlapping the inputs (empty when the two
    /// levels are the same).
    pub output_level_inputs: Vec<Arc<FileMetaData>>,
    /// Universal compaction merges runs of several levels: the files of the
    /// levels strictly between `start_level` and `output_level`.
    pub middle_inputs: Vec<(usize, Arc<FileMetaData>)>,
    /// FIFO: the inputs are deleted and nothing is written.
    pub deletion_only: bool,
    /// Files of the level below `output_level` overlapping the inputs: an output
    /// file is cut when it would overlap too many of their bytes, so a later
    /// compaction of it stays small.
    pub grandparents: Vec<Arc<FileMetaData>>,
    /// Cut outputs at about this many bytes.
    pub target_file_size: u64,
    /// Cut an output before it and the grandparents it overlaps reach this
    /// many bytes (`max_compaction_bytes`).
    pub max_grandparent_overlap: u64,
    /// Codec of the outputs.
    pub compression: CompressionType,
    /// Move the inputs to `output_level` by a version edit alone: nothing in the
    /// output level overlaps them and the codec does not change.
    pub trivial_move: bool,
    /// The picker's score for the start level (1.0 and above means due).
    pub score: f64,
}

impl CompactionTask {
    /// Every input file with its level.
    pub fn all_inputs(&self) -> impl Iterator<Item = (usize, &Arc<FileMetaData>)> {
        let middle = self.middle_inputs.iter().map(|(level, f)| (*level, f));
        let output = self
            .output_level_inputs
            .iter()
            .map(|f| (self.output_level, f));
        self.inputs
            .iter()
            .map(|f| (self.start_level, f))
            .chain(middle)
            .chain(output)
    }

    /// Total bytes of the input files.
    pub fn input_bytes(&self) -> u64 {
        self.all_inputs().map(|(_, f)| f.file_size).sum()
    }
}

/// The user-key range `[smallest, largest]` covered by `files`, whose keys
/// are in `order`.
pub fn key_range<'a>(
    files: impl IntoIterator<Item = &'a Arc<FileMetaData>>,
    order: &KeyComparator,
) -> Option<(&'a [u8], &'a [u8])> {
    files.into_iter().fold(None, |range, f| {
        let (lo, hi) = (user_key(&f.smallest), user_key(&f.largest));
        Some(match range {
            None => (lo, hi),
            Some((a, b)) => (
                if order.lt(lo, a) { lo } else { a },
                if order.lt(b, hi) { hi } else { b },
            ),
        })
    })
}
