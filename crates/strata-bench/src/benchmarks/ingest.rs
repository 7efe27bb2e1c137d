//! The `ingest` benchmark: `--num` keys of `--key_size` and `--value_size`
//! bytes, in key order, written into `--ingest_files` table files with the
//! engine's own SST writer, then ingested into the open database in one call
//! (copied, not moved, and not read whole first: RocksDB's defaults). Run on
//! a fresh database it ingests into an empty one; after a fill, over
//! overlapping data. Prints the build and the ingestion as two results.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::engine::Engine;
use crate::flags::Flags;
use crate::generator::{make_key, ValuePool};
use crate::json::Record;
use crate::report::{self, Resources, Stats, Suffix, Usage};

/// The benchmark's name in `--benchmarks`.
pub(super) const NAME: &str = "ingest";

pub(super) fn run<E: Engine>(
    flags: &Flags,
    db: &E,
    dir: &Path,
    pool: &ValuePool,
    out: &mut Vec<Record>,
) -> Result<(), String> {
    let staging = dir.with_extension("ingest");
    let _ = std::fs::remove_dir_all(&staging);
    std::fs::create_dir_all(&staging).map_err(|e| format!("ingest: {}: {e}", staging.display()))?;
    let files = flags.ingest_files.max(1);
    let per_file = flags.num.div_ceil(files);
    let mut key = vec![0u8; flags.key_size];
    let mut values = pool.cursor();
    let mut paths: Vec<PathBuf> = Vec::new();
    let mut stats = Stats::new(false)?;
    let usage = Usage::now()?;
    for f in 0..files {
        let (first, end) = (f * per_file, ((f + 1) * per_file).min(flags.num));
        if first >= end {
            break;
        }
        let path = staging.join(format!("{f:04}.sst"));
        db.write_sst(&path, &mut |put| {
            for n in first..end {
                make_key(n, &mut key);
                put(&key, values.next_value(flags.value_size))?;
            }
            Ok(())
        })
        .map_err(|e| format!("ingest: writing {}: {e}", path.display()))?;
        paths.push(path);
    }
    stats.done = flags.num;
    stats.bytes = flags.num * (flags.key_size + flags.value_size) as u64;
    let usage = record(out, "ingest_build", &mut stats, usage, dir, paths.len())?;
    let mut stats = Stats::new(false)?;
    db.ingest(&paths).map_err(|e| format!("ingest: {e}"))?;
    stats.done = flags.num;
    record(out, "ingest", &mut stats, usage, dir, paths.len())?;
    let _ = std::fs::remove_dir_all(&staging);
    Ok(())
}

/// Prints and records one phase that ran from `stats.start` until now, with
/// the process's CPU time and peak memory since `before`; returns the usage
/// now, for the next phase.
fn record(
    out: &mut Vec<Record>,
    name: &str,
    stats: &mut Stats,
    before: Usage,
    dir: &Path,
    files: usize,
) -> Result<Usage, String> {
    stats.finish = Instant::now();
    stats.thread_seconds = stats.finish.duration_since(stats.start).as_secs_f64();
    let after = Usage::now()?;
    println!(
        "{}",
        report::result_line(name, stats, &Suffix::Label(format!("({files} files)")))
    );
    let resources = Resources::measure(&before, &after, stats.done, dir);
    println!("{}", resources.lines());
    let mut record = Record::new(name, stats);
    record.resources = Some(resources);
    out.push(record);
    Ok(after)
}
