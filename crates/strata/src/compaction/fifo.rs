//! The FIFO compaction picker: tables are never merged. While the total size
//! is above `compaction_options_fifo.max_table_files_size`, the oldest tables
//! are deleted; with a `ttl`, tables older than it are deleted too. All tables
//! stay in L0 (flushes put them there and nothing moves them).
//!
//! Pure: the caller passes the tables past their TTL (their creation time is
//! in the table properties, which takes I/O to read).

use std::collections::HashSet;
use std::sync::Arc;

use super::{CompactionReason, CompactionTask};
use crate::compression::CompressionType;
use crate::options::CompactionOptions;
use crate::version::{FileMetaData, Version};

/// The oldest files to delete, or `None` when the database is within bounds.
pub fn pick(
    version: &Version,
    options: &CompactionOptions,
    expired: &HashSet<u64>,
    busy: &HashSet<u64>,
) -> Option<CompactionTask> {
    if version.all_files().any(|(_, f)| busy.contains(&f.number)) {
        return None;
    }
    // Oldest first: L0 is kept newest first; any deeper level (a database
    // that was leveled before) is older still.
    let mut oldest_first: Vec<(usize, &Arc<FileMetaData>)> = version.all_files().collect();
    oldest_first.sort_by_key(|(level, f)| (std::cmp::Reverse(*level), f.largest_seqno));
    let limit = options.compaction_options_fifo.max_table_files_size;
    let mut total: u64 = oldest_first.iter().map(|(_, f)| f.file_size).sum();
    let mut doomed = Vec::new();
    let mut reason = CompactionReason::FifoTtl;
    for (level, f) in oldest_first {
        if total > limit {
            reason = CompactionReason::FifoMaxSize;
        } else if !expired.contains(&f.number) {
            break;
        }
        total -= f.file_size;
        doomed.push((level, f.clone()));
    }
    let (&(start_level, _), _) = doomed.split_first()?;
    let (inputs, middle): (Vec<_>, Vec<_>) =
        doomed.into_iter().partition(|(l, _)| *l == start_level);
    Some(CompactionTask {
        reason,
        start_level,
        output_level: start_level,
        inputs: inputs.into_iter().map(|(_, f)| f).collect(),
        output_level_inputs: Vec::new(),
        middle_inputs: middle,
        deletion_only: true,
        grandparents: Vec::new(),
        target_file_size: u64::MAX,
        max_grandparent_overlap: u64::MAX,
        compression: CompressionType::None,
        trivial_move: false,
        score: 1.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, ValueType};
    use crate::options::FifoOptions;
    use crate::version::VersionEdit;

    fn l0(sizes: &[u64]) -> Version {
        let mut edit = VersionEdit::new();
        for (i, &size) in sizes.iter().enumerate() {
            let seq = i as u64 + 1;
            edit.add_file(
                0,
                FileMetaData {
                    number: seq,
                    file_size: size,
                    smallest: internal_key(b"a", seq, ValueType::Put),
                    largest: internal_key(b"z", seq, ValueType::Put),
                    smallest_seqno: seq,
                    largest_seqno: seq,
                    blob_files: Vec::new(),
                    global_seqno: None,
                },
            );
        }
        Version::default().apply(&edit).unwrap()
    }

    fn options(limit: u64) -> CompactionOptions {
        CompactionOptions {
            compaction_options_fifo: FifoOptions {
                max_table_files_size: limit,
            },
            ..CompactionOptions::default()
        }
    }

    fn numbers(task: &CompactionTask) -> Vec<u64> {
        task.all_inputs().map(|(_, f)| f.number).collect()
    }

    #[test]
    fn the_oldest_go_until_the_rest_fits() {
        let v = l0(&[10, 10, 10, 10, 10]);
        let none = HashSet::new();
        assert!(pick(&v, &options(50), &none, &none).is_none());
        let task = pick(&v, &options(25), &none, &none).unwrap();
        assert!(task.deletion_only);
        assert_eq!(numbers(&task), vec![1, 2, 3]);
        assert_eq!(task.reason, CompactionReason::FifoMaxSize);
    }

    #[test]
    fn expired_tables_go_oldest_first_and_stop_at_a_live_one() {
        let v = l0(&[10, 10, 10]);
        let none = HashSet::new();
        let expired: HashSet<u64> = [1, 3].into();
        let task = pick(&v, &options(1000), &expired, &none).unwrap();
        // Table 3 is expired but newer than live table 2: FIFO removes a prefix.
        assert_eq!(numbers(&task), vec![1]);
        assert_eq!(task.reason, CompactionReason::FifoTtl);
        let busy: HashSet<u64> = [2].into();
        assert!(pick(&v, &options(5), &none, &busy).is_none());
    }
}
