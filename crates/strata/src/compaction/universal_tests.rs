use std::fmt::Write as _;

use super::*;
use crate::key::{internal_key, ValueType};
use crate::options::UniversalOptions;
use crate::version::VersionEdit;

const MIB: u64 = 1 << 20;

fn file(number: u64, size: u64, seqs: (u64, u64)) -> FileMetaData {
    FileMetaData {
        number,
        file_size: size,
        smallest: internal_key(b"a", seqs.1, ValueType::Put),
        largest: internal_key(b"z", seqs.0, ValueType::Put),
        smallest_seqno: seqs.0,
        largest_seqno: seqs.1,
        blob_files: Vec::new(),
        global_seqno: None,
    }
}

fn shape(v: &Version) -> String {
    let mut out = String::new();
    for run in sorted_runs(v, 7) {
        let _ = write!(out, "L{}:{}MiB ", run.level, run.bytes / MIB);
    }
    out
}

fn options() -> CompactionOptions {
    CompactionOptions {
        compaction_style: crate::options::CompactionStyle::Universal,
        ..CompactionOptions::default()
    }
}

#[test]
fn runs_of_similar_size_merge_and_a_big_old_run_waits() {
    // Newest first: four 1 MiB L0 files over a 100 MiB last level.
    let mut edit = VersionEdit::new();
    for i in 0..4u64 {
        edit.add_file(0, file(10 + i, MIB, (100 + i, 100 + i)));
    }
    edit.add_file(6, file(1, 100 * MIB, (1, 50)));
    let v = Version::default().apply(&edit).unwrap();
    let task = pick(&v, &options(), CompressionType::None, &HashSet::new()).unwrap();
    assert_eq!(
        task.reason,
        CompactionReason::UniversalSizeRatio,
        "{}",
        shape(&v)
    );
    assert_eq!(task.inputs.len(), 4);
    assert!(task.output_level_inputs.is_empty() && task.middle_inputs.is_empty());
    // Merged above the next older run: L5, not L6.
    assert_eq!(task.output_level, 5);
    // Three runs only: below the trigger.
    let mut fewer = VersionEdit::new();
    fewer.delete_file(0, 10);
    fewer.delete_file(0, 11);
    let v3 = v.apply(&fewer).unwrap();
    assert!(pick(&v3, &options(), CompressionType::None, &HashSet::new()).is_none());
}

#[test]
fn space_amplification_forces_a_full_compaction() {
    let mut edit = VersionEdit::new();
    for i in 0..4u64 {
        edit.add_file(0, file(10 + i, 10 * MIB, (100 + i, 100 + i)));
    }
    edit.add_file(6, file(1, 15 * MIB, (1, 50)));
    let v = Version::default().apply(&edit).unwrap();
    let task = pick(&v, &options(), CompressionType::None, &HashSet::new()).unwrap();
    assert_eq!(task.reason, CompactionReason::UniversalSizeAmplification);
    assert_eq!(task.output_level, 6);
    assert_eq!(task.all_inputs().count(), 5);
    // Nothing newer than the held run is worth merging on its own: the four
    // L0 runs are similar, so they merge, above the held L6 run.
    let busy: HashSet<u64> = [1].into();
    let task = pick(&v, &options(), CompressionType::None, &busy).unwrap();
    assert_eq!(task.reason, CompactionReason::UniversalSizeRatio);
    assert_eq!((task.inputs.len(), task.output_level), (4, 5));
    // With the two oldest L0 runs held as well, only the two newest are
    // free: two runs make a merge (min_merge_width 2), into L0 above the
    // held ones; no task touches a held file.
    let busy: HashSet<u64> = [1, 10, 11].into();
    let task = pick(&v, &options(), CompressionType::None, &busy).unwrap();
    assert_eq!(task.output_level, 0);
    let taken: Vec<u64> = task.all_inputs().map(|(_, f)| f.number).collect();
    assert_eq!(taken, vec![13, 12]);
    // Only the newest free: nothing to merge.
    let busy: HashSet<u64> = [1, 10, 11, 12].into();
    assert!(pick(&v, &options(), CompressionType::None, &busy).is_none());
}

#[test]
fn without_similar_runs_the_newest_merge_down_to_the_trigger() {
    // Each run much larger than all newer ones together: no size-ratio pick.
    let sizes = [1, 4, 16, 64, 256];
    let mut edit = VersionEdit::new();
    for (i, &s) in sizes.iter().enumerate() {
        let seq = 100 - i as u64;
        edit.add_file(0, file(20 + i as u64, s * MIB, (seq, seq)));
    }
    edit.add_file(6, file(1, 10_000 * MIB, (1, 50)));
    let v = Version::default().apply(&edit).unwrap();
    let o = CompactionOptions {
        compaction_options_universal: UniversalOptions {
            size_ratio: 0,
            ..UniversalOptions::default()
        },
        ..options()
    };
    let task = pick(&v, &o, CompressionType::None, &HashSet::new()).unwrap();
    assert_eq!(
        task.reason,
        CompactionReason::UniversalSortedRunNum,
        "{}",
        shape(&v)
    );
    // 6 runs, trigger 4: the newest 3 merge, into L0 (the next run is L0).
    assert_eq!(task.inputs.len(), 3);
    assert_eq!(task.output_level, 0);
    assert_eq!(task.target_file_size, u64::MAX, "an L0 run is one file");
}

/// Whether every sorted run of `v` holds only data older than the run
/// before it (by sequence number), as universal compaction must keep it.
fn runs_ordered(v: &Version) -> bool {
    sorted_runs(v, 7).windows(2).all(|w| {
        let newer = w[0].files.iter().map(|f| f.smallest_seqno).min();
        let older = w[1].files.iter().map(|f| f.largest_seqno).max();
        older < newer
    })
}

/// The one file a simulated merge of `task` writes: all its input bytes,
/// their sequence range, and the whole key space.
fn merged_output(task: &CompactionTask, number: u64) -> FileMetaData {
    let lo = task
        .all_inputs()
        .map(|(_, f)| f.smallest_seqno)
        .min()
        .unwrap_or(0);
    let hi = task
        .all_inputs()
        .map(|(_, f)| f.largest_seqno)
        .max()
        .unwrap_or(0);
    file(number, task.input_bytes(), (lo, hi))
}

/// Drives the picker over many flushes without I/O and checks that runs stay
/// ordered newest to oldest (by sequence numbers) after every task. Reports
/// write amplification beside the leveled picker's on the same input.
#[test]
fn simulated_fill_keeps_runs_ordered_with_less_write_amp_than_leveled() {
    let flush = 8 * MIB;
    let simulate = |o: &CompactionOptions| -> f64 {
        let mut v = Version::default();
        let (mut next, mut seq) = (1u64, 1u64);
        let (mut ingested, mut written) = (0u64, 0u64);
        for _ in 0..300 {
            let mut edit = VersionEdit::new();
            edit.add_file(0, file(next, flush, (seq, seq + 9)));
            next += 1;
            seq += 10;
            ingested += flush;
            written += flush;
            v = v.apply(&edit).unwrap();
            loop {
                let task = match o.compaction_style {
                    crate::options::CompactionStyle::Universal => {
                        pick(&v, o, CompressionType::None, &HashSet::new())
                    }
                    _ => super::super::leveled::pick(&v, o, CompressionType::None, &HashSet::new()),
                };
                let Some(task) = task else { break };
                let mut edit = VersionEdit::new();
                for (level, f) in task.all_inputs() {
                    edit.delete_file(level as u32, f.number);
                }
                if task.trivial_move {
                    for f in &task.inputs {
                        edit.add_file(task.output_level as u32, (**f).clone());
                    }
                } else {
                    written += task.input_bytes();
                    edit.add_file(task.output_level as u32, merged_output(&task, next));
                    next += 1;
                }
                v = v.apply(&edit).unwrap();
                if o.compaction_style == crate::options::CompactionStyle::Universal {
                    assert!(runs_ordered(&v), "runs out of order: {}", shape(&v));
                }
            }
        }
        let total: u64 = v.all_files().map(|(_, f)| f.file_size).sum();
        assert_eq!(total, ingested, "{}", shape(&v));
        written as f64 / ingested as f64
    };
    let universal = simulate(&CompactionOptions {
        max_bytes_for_level_base: 32 * MIB,
        target_file_size_base: 8 * MIB,
        ..options()
    });
    let leveled = simulate(&CompactionOptions {
        max_bytes_for_level_base: 32 * MIB,
        target_file_size_base: 8 * MIB,
        ..CompactionOptions::default()
    });
    println!("simulated write amplification: universal {universal:.2}, leveled {leveled:.2}");
    assert!(
        universal < leveled,
        "universal {universal:.2} vs leveled {leveled:.2}"
    );
}

/// Flushes keep arriving while up to three picked tasks run at once and
/// finish in random order. After every change the runs must stay ordered
/// newest to oldest, no file may be in two running tasks, and every byte
/// must be accounted for; and tasks must have run side by side.
#[test]
fn tasks_on_disjoint_runs_run_side_by_side_and_finish_in_any_order() {
    use rand::{Rng, SeedableRng};
    let o = CompactionOptions {
        target_file_size_base: 8 * MIB,
        ..options()
    };
    for seed in 0..20u64 {
        let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
        let mut v = Version::default();
        let (mut next, mut seq, mut ingested) = (1u64, 1u64, 0u64);
        let mut running: Vec<CompactionTask> = Vec::new();
        let mut most_at_once = 0;
        for _ in 0..400 {
            match rng.gen_range(0..3) {
                0 => {
                    let size = rng.gen_range(1..=8) * MIB;
                    let mut edit = VersionEdit::new();
                    edit.add_file(0, file(next, size, (seq, seq + 9)));
                    (next, seq, ingested) = (next + 1, seq + 10, ingested + size);
                    v = v.apply(&edit).unwrap();
                }
                1 if running.len() < 3 => {
                    let busy: HashSet<u64> = running
                        .iter()
                        .flat_map(|t| t.all_inputs().map(|(_, f)| f.number))
                        .collect();
                    if let Some(task) = pick(&v, &o, CompressionType::None, &busy) {
                        assert!(
                            task.all_inputs().all(|(_, f)| !busy.contains(&f.number)),
                            "seed {seed}: a task took a running task's file: {}",
                            shape(&v)
                        );
                        running.push(task);
                        most_at_once = most_at_once.max(running.len());
                    }
                }
                _ if !running.is_empty() => {
                    let task = running.swap_remove(rng.gen_range(0..running.len()));
                    let mut edit = VersionEdit::new();
                    for (level, f) in task.all_inputs() {
                        edit.delete_file(level as u32, f.number);
                    }
                    edit.add_file(task.output_level as u32, merged_output(&task, next));
                    next += 1;
                    v = v.apply(&edit).unwrap_or_else(|e| {
                        panic!(
                            "seed {seed}: a finished task does not apply ({e:?}): {}",
                            shape(&v)
                        )
                    });
                }
                _ => {}
            }
            assert!(
                runs_ordered(&v),
                "seed {seed}: runs out of order: {}",
                shape(&v)
            );
            let total: u64 = v.all_files().map(|(_, f)| f.file_size).sum();
            assert_eq!(total, ingested, "seed {seed}: {}", shape(&v));
        }
        assert!(most_at_once >= 2, "seed {seed}: never two tasks at once");
    }
}

/// While L0 holds writes back and no rule is due, the L0 runs are merged
/// down anyway: a lone run goes to the last level, and runs the size-ratio
/// rule would never merge (the trigger at the stop trigger) merge with the
/// level below when L0 alone would stay in L0. Below the slowdown trigger
/// nothing changes.
#[test]
fn l0_holding_writes_back_is_merged_down_even_when_no_rule_is_due() {
    let stopping = CompactionOptions {
        level0_file_num_compaction_trigger: 1,
        level0_slowdown_writes_trigger: 1,
        level0_stop_writes_trigger: 1,
        ..options()
    };
    let mut edit = VersionEdit::new();
    edit.add_file(0, file(10, MIB, (5, 5)));
    let lone = Version::default().apply(&edit).unwrap();
    let task = pick(&lone, &stopping, CompressionType::None, &HashSet::new()).unwrap();
    assert_eq!((task.inputs.len(), task.output_level), (1, 6));
    // Not while a compaction holds the run.
    assert!(pick(
        &lone,
        &stopping,
        CompressionType::None,
        &HashSet::from([10])
    )
    .is_none());
    assert!(pick(&lone, &options(), CompressionType::None, &HashSet::new()).is_none());

    // Four L0 runs, each far bigger than the newer ones together: at
    // trigger = slowdown = stop = 4 no rule merges them (one run too few for
    // "too many runs", sizes too far apart for size ratio, too little for
    // space amplification).
    let at_stop = CompactionOptions {
        level0_file_num_compaction_trigger: 4,
        level0_slowdown_writes_trigger: 4,
        level0_stop_writes_trigger: 4,
        ..options()
    };
    let mut edit = VersionEdit::new();
    for (i, size) in [1, 4, 16, 64u64].into_iter().enumerate() {
        let i = i as u64;
        edit.add_file(0, file(20 + i, size * MIB, (100 - i, 100 - i)));
    }
    let v = Version::default().apply(&edit).unwrap();
    let task = pick(&v, &at_stop, CompressionType::None, &HashSet::new()).unwrap();
    assert_eq!(task.inputs.len(), 4, "{}", shape(&v));
    assert_eq!(task.output_level, 6, "{}", shape(&v));
    assert_eq!(task.reason, CompactionReason::UniversalSortedRunNum);
}
