use std::collections::HashSet;
use std::fmt::Write as _;

use super::*;
use crate::key::{internal_key, ValueType};
use crate::version::VersionEdit;

const MIB: u64 = 1 << 20;

fn key(n: u64) -> Vec<u8> {
    format!("{n:012}").into_bytes()
}

fn file(number: u64, lo: u64, hi: u64, size: u64, seq: u64) -> FileMetaData {
    FileMetaData {
        number,
        file_size: size,
        smallest: internal_key(&key(lo), seq, ValueType::Put),
        largest: internal_key(&key(hi), seq, ValueType::Put),
        smallest_seqno: seq,
        largest_seqno: seq,
        blob_files: Vec::new(),
        global_seqno: None,
    }
}

fn version_with(files: &[(usize, FileMetaData)]) -> Version {
    let mut edit = VersionEdit::new();
    for (level, f) in files {
        edit.add_file(*level as u32, f.clone());
    }
    Version::default().apply(&edit).unwrap()
}

/// The LSM's shape, one line per non-empty level: `L<n>: <files> files <MiB>`.
fn shape(v: &Version) -> String {
    let mut out = String::new();
    for level in 0..NUM_LEVELS {
        if v.num_files(level) > 0 {
            let _ = writeln!(
                out,
                "L{level}: {} files {} MiB",
                v.num_files(level),
                v.level_bytes(level) / MIB
            );
        }
    }
    out
}

#[test]
fn dynamic_targets_derive_from_the_last_level() {
    let o = CompactionOptions::default();
    // Empty tree: L0 goes straight to the last level.
    let t = level_targets(&Version::default(), &o);
    assert_eq!(t.base_level, 6);
    // 100 GiB in L6: 10 GiB, 1 GiB, 102 MiB above it; the base level is the
    // first whose share falls to max_bytes_for_level_base, and no level's
    // target is below it.
    let v = version_with(&[(6, file(1, 0, 100, 100 << 30, 1))]);
    let t = level_targets(&v, &o);
    assert_eq!(t.base_level, 3);
    assert_eq!(t.max_bytes[3], 256 * MIB);
    // 100 GiB / 10^3 truncates to 107374182 bytes, as in RocksDB's integer math.
    assert_eq!(t.max_bytes[4], 1_073_741_820);
    assert_eq!(t.max_bytes[6], 107_374_182_000);
    assert_eq!(t.max_bytes[2], u64::MAX);
    // 1 GiB in L6: L5 would hold 100 MiB, below the base size, so L6 is the base.
    let v = version_with(&[(6, file(1, 0, 100, 1 << 30, 1))]);
    assert_eq!(level_targets(&v, &o).base_level, 5);
    let small = version_with(&[(6, file(1, 0, 100, 100 * MIB, 1))]);
    assert_eq!(level_targets(&small, &o).base_level, 6);
}

#[test]
fn static_targets_multiply_from_l1() {
    let o = CompactionOptions {
        level_compaction_dynamic_level_bytes: false,
        ..CompactionOptions::default()
    };
    let t = level_targets(&Version::default(), &o);
    assert_eq!(t.base_level, 1);
    assert_eq!(t.max_bytes[1], 256 * MIB);
    assert_eq!(t.max_bytes[2], 2560 * MIB);
}

#[test]
fn l0_at_its_trigger_moves_everything_into_the_base_level() {
    let o = CompactionOptions::default();
    let mut files: Vec<_> = (1..=4)
        .map(|n| (0, file(n, n * 10, n * 10 + 50, MIB, n)))
        .collect();
    files.push((6, file(9, 0, 30, 300 * MIB, 0)));
    files.push((6, file(10, 31, 1000, 300 * MIB, 0)));
    let v = version_with(&files);
    let none = HashSet::new();
    let task = pick(&v, &o, CompressionType::None, &none).unwrap();
    assert_eq!(task.start_level, 0);
    assert_eq!(task.output_level, level_targets(&v, &o).base_level);
    assert_eq!(task.inputs.len(), 4);
    assert!(!task.trivial_move, "L0 files overlap each other");
    // Three files: not due.
    let v3 = version_with(&files[1..]);
    assert!(pick(&v3, &o, CompressionType::None, &none).is_none());
    // A running L0 compaction blocks another.
    let busy: HashSet<u64> = [1].into();
    assert!(pick(&v, &o, CompressionType::None, &busy).is_none());
}

#[test]
fn disjoint_files_move_trivially_unless_the_codec_changes() {
    let mut o = CompactionOptions::default();
    let files: Vec<_> = (0..4)
        .map(|n| (0, file(n + 1, n * 10, n * 10 + 5, MIB, n + 1)))
        .collect();
    let v = version_with(&files);
    let task = pick(&v, &o, CompressionType::None, &HashSet::new()).unwrap();
    assert!(task.trivial_move);
    assert_eq!(task.output_level, 6);
    // L0 uncompressed, everything below lz4: the move must rewrite.
    o.compression_per_level = vec![CompressionType::None, CompressionType::Lz4];
    let task = pick(&v, &o, CompressionType::None, &HashSet::new()).unwrap();
    assert!(!task.trivial_move);
    assert_eq!(task.compression, CompressionType::Lz4);
}

#[test]
fn a_level_over_target_compacts_its_least_overlapping_file() {
    let o = CompactionOptions {
        level_compaction_dynamic_level_bytes: false,
        max_bytes_for_level_base: 10 * MIB,
        ..CompactionOptions::default()
    };
    // L1 is 24 MiB (over 10); file 2 overlaps nothing below, file 1 a lot.
    let v = version_with(&[
        (1, file(1, 0, 49, 12 * MIB, 5)),
        (1, file(2, 50, 99, 12 * MIB, 5)),
        (2, file(3, 0, 40, 50 * MIB, 1)),
    ]);
    let task = pick(&v, &o, CompressionType::None, &HashSet::new()).unwrap();
    assert_eq!((task.start_level, task.output_level), (1, 2));
    assert_eq!(task.inputs[0].number, 2);
    assert!(task.trivial_move);
    // With file 2 busy, file 1 goes, taking its overlap in L2 along.
    let busy: HashSet<u64> = [2].into();
    let task = pick(&v, &o, CompressionType::None, &busy).unwrap();
    assert_eq!(task.inputs[0].number, 1);
    assert_eq!(task.output_level_inputs.len(), 1);
    assert!(!task.trivial_move);
}

#[test]
fn files_sharing_a_boundary_user_key_move_together() {
    let mut a = file(1, 0, 10, MIB, 5);
    let b = file(2, 10, 20, MIB, 3);
    a.largest = internal_key(&key(10), 5, ValueType::Put);
    let v = version_with(&[(1, a), (1, b)]);
    let inputs = expand_to_clean_cut(v.files(1), 1, &KeyComparator::Bytewise);
    assert_eq!(
        inputs.iter().map(|f| f.number).collect::<Vec<_>>(),
        vec![1, 2]
    );
}

/// Drives the real picker over many flushes of random data without I/O: each
/// picked task is "run" by replacing its inputs with outputs covering the same
/// key range, cut at the target file size. Checks the tree's invariants after
/// every step and prints its shape.
#[test]
fn simulated_fillrandom_keeps_a_healthy_shape() {
    let o = CompactionOptions {
        max_bytes_for_level_base: 32 * MIB,
        target_file_size_base: 8 * MIB,
        ..CompactionOptions::default()
    };
    let flush_bytes = 8 * MIB;
    let key_space = 1_000_000;
    let mut v = Version::default();
    let mut next_number = 1;
    let mut seq = 1;
    let (mut ingested, mut written) = (0u64, 0u64);
    for _ in 0..300 {
        let mut edit = VersionEdit::new();
        edit.add_file(0, file(next_number, 0, key_space, flush_bytes, seq));
        next_number += 1;
        seq += 1;
        ingested += flush_bytes;
        written += flush_bytes;
        v = v.apply(&edit).unwrap();
        while let Some(task) = pick(&v, &o, CompressionType::None, &HashSet::new()) {
            let mut edit = VersionEdit::new();
            for (level, f) in task.all_inputs() {
                edit.delete_file(level as u32, f.number);
            }
            if task.trivial_move {
                for f in &task.inputs {
                    edit.add_file(task.output_level as u32, (**f).clone());
                }
            } else {
                let total = task.input_bytes();
                written += total;
                let (lo, hi) =
                    key_range(task.all_inputs().map(|(_, f)| f), &KeyComparator::Bytewise).unwrap();
                let lo: u64 = std::str::from_utf8(lo).unwrap().parse().unwrap();
                let hi: u64 = std::str::from_utf8(hi).unwrap().parse().unwrap();
                let pieces = total.div_ceil(task.target_file_size).max(1);
                let span = (hi - lo + 1).div_ceil(pieces);
                for p in 0..pieces {
                    let a = lo + p * span;
                    let b = (a + span - 1).min(hi);
                    if a > b {
                        break;
                    }
                    edit.add_file(
                        task.output_level as u32,
                        file(next_number, a, b, total / pieces, seq),
                    );
                    next_number += 1;
                }
            }
            v = v.apply(&edit).unwrap();
            let targets = level_targets(&v, &o);
            assert!(
                v.num_files(0) < o.level0_file_num_compaction_trigger,
                "{}",
                shape(&v)
            );
            for level in 1..targets.base_level {
                assert_eq!(
                    v.num_files(level),
                    0,
                    "a level above the base is in use:\n{}",
                    shape(&v)
                );
            }
        }
    }
    let last = v.level_bytes(NUM_LEVELS - 1);
    let total: u64 = (0..NUM_LEVELS).map(|l| v.level_bytes(l)).sum();
    assert_eq!(
        total,
        ingested,
        "bytes appeared or vanished:\n{}",
        shape(&v)
    );
    // Dynamic level bytes keeps most data in the last level.
    assert!(
        last * 10 >= total * 8,
        "last level holds too little:\n{}",
        shape(&v)
    );
    // Every flush spans the whole key space, so each compaction rewrites the
    // overlapping part of the next level: about 1 + (multiplier + 1) / 2 per
    // level below L0, here three levels.
    let write_amp = written as f64 / ingested as f64;
    assert!(
        write_amp < 20.0,
        "write amplification {write_amp:.1}:\n{}",
        shape(&v)
    );
    println!("{}write amplification {write_amp:.2}", shape(&v));
}

#[test]
fn pending_bytes_grow_with_the_l0_backlog() {
    let o = CompactionOptions::default();
    let few = version_with(&[(0, file(1, 0, 9, MIB, 1))]);
    assert_eq!(estimated_pending_bytes(&few, &o), 0);
    let files: Vec<_> = (1..=8).map(|n| (0, file(n, 0, 9, 10 * MIB, n))).collect();
    let many = version_with(&files);
    assert!(estimated_pending_bytes(&many, &o) >= 80 * MIB);
}

#[test]
fn one_flushed_file_is_not_an_l0_compaction() {
    // RocksDB's fillrandom shape at small sizes: a 32 MiB base level under a
    // big last level, and one 6.5 MiB L0 file. L0's size target is at least
    // max_bytes_for_level_base, so the file waits for the trigger.
    let o = CompactionOptions {
        max_bytes_for_level_base: 32 * MIB,
        ..CompactionOptions::default()
    };
    let v = version_with(&[
        (0, file(10, 0, 1000, 6 * MIB + MIB / 2, 9)),
        (5, file(1, 0, 1000, 30 * MIB, 1)),
        (6, file(2, 0, 1000, 130 * MIB, 1)),
    ]);
    let targets = level_targets(&v, &o);
    let l0 = scores(&v, &o, &targets, &HashSet::new())
        .into_iter()
        .find(|(l, _)| *l == 0)
        .unwrap()
        .1;
    assert!(l0 < 1.0, "L0 score {l0}");
}

/// A manual compaction of part of L0 takes every L0 file that shares keys
/// with the files in range, transitively: a newer file moved below an older
/// one it overlaps would be shadowed by it (reads consult L0 first).
#[test]
fn manual_l0_compaction_takes_the_overlapping_older_files_too() {
    let o = CompactionOptions::default();
    let v = version_with(&[
        // Oldest: keys 58..=100, outside the range compacted below. Then
        // 50..=60, in the range and overlapping it; then 200..=300, which
        // overlaps neither.
        (0, file(1, 58, 100, MIB, 1)),
        (0, file(2, 50, 60, MIB, 2)),
        (0, file(3, 200, 300, MIB, 3)),
    ]);
    let (lo, hi) = (key(55), key(56));
    let task = manual_task(
        &v,
        &o,
        CompressionType::None,
        (0, 100),
        Some(&lo),
        Some(&hi),
    )
    .unwrap();
    let mut numbers: Vec<u64> = task.inputs.iter().map(|f| f.number).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, vec![1, 2], "the older overlapping file goes too");
    let (lo, hi) = (key(250), key(250));
    let task = manual_task(
        &v,
        &o,
        CompressionType::None,
        (0, 100),
        Some(&lo),
        Some(&hi),
    )
    .unwrap();
    let numbers: Vec<u64> = task.inputs.iter().map(|f| f.number).collect();
    assert_eq!(numbers, vec![3], "files sharing no key stay");
}

/// Forced blob garbage collection: with the oldest blob files' garbage at
/// the threshold, the table referencing the oldest one is rewritten (never
/// moved); below it, or with collection off, nothing is picked.
#[test]
fn forced_blob_gc_rewrites_the_tables_of_the_oldest_blob_file() {
    use crate::version::{BlobFileAddition, BlobFileGarbage};
    let options = CompactionOptions::default();
    let with_garbage = |garbage: u64| {
        let mut edit = VersionEdit::new();
        let mut old = file(10, 0, 99, MIB, 5);
        old.blob_files = vec![1];
        let mut newer = file(11, 100, 199, MIB, 6);
        newer.blob_files = vec![2, 3];
        edit.add_file(1, old).add_file(1, newer);
        for number in 1..=4 {
            edit.blob_file_additions.push(BlobFileAddition {
                number,
                record_count: 100,
                record_bytes: 1000,
                file_size: 1056,
            });
        }
        let mut four = file(12, 200, 299, MIB, 7);
        four.blob_files = vec![4];
        edit.add_file(2, four);
        edit.blob_file_garbage.push(BlobFileGarbage {
            number: 1,
            count: garbage / 10,
            bytes: garbage,
        });
        Version::default().apply(&edit).unwrap()
    };
    let blob = BlobOptions {
        enable_blob_files: true,
        enable_blob_garbage_collection: true,
        // The two oldest of four files; forced at 40% garbage.
        blob_garbage_collection_age_cutoff: 0.5,
        blob_garbage_collection_force_threshold: 0.4,
        ..BlobOptions::default()
    };
    let none = HashSet::new();
    let pick = |v: &Version, b: &BlobOptions, busy: &HashSet<u64>| {
        pick_forced_blob_gc(v, &options, b, CompressionType::None, busy)
    };
    // 700 of the 2000 bytes of files 1 and 2 are garbage: 35%.
    assert!(pick(&with_garbage(700), &blob, &none).is_none());
    // 800 of 2000: 40%, due. Table 10 (L1) references file 1.
    let v = with_garbage(800);
    let task = pick(&v, &blob, &none).expect("due");
    assert_eq!(task.reason, CompactionReason::ForcedBlobGc);
    assert_eq!(
        task.inputs.iter().map(|f| f.number).collect::<Vec<_>>(),
        [10]
    );
    assert_eq!(task.output_level, 2);
    assert!(!task.trivial_move, "a move would keep the references");
    // Busy, or collection off: nothing.
    assert!(pick(&v, &blob, &HashSet::from([10])).is_none());
    let off = BlobOptions {
        enable_blob_garbage_collection: false,
        ..blob.clone()
    };
    assert!(pick(&v, &off, &none).is_none());
}
