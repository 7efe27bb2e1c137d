//! Named crash points: places where a process dying leaves the files in a
//! state recovery must handle. With the `failpoints` feature each is a
//! `fail` point that `strata-stress --mode=crashpoints` arms (it halts the
//! simulated file system there: from that instant nothing reaches the disk);
//! without it they compile to nothing.

/// Every crash point, in the order of the write path, flush, MANIFEST,
/// compaction and recovery. strata-stress checks each is reached.
pub const CRASH_POINTS: &[&str] = &[
    "wal.append.before",
    "wal.append.after",
    "wal.sync.before",
    "wal.sync.after",
    "write.lead_passed",
    "write.before_memtable",
    "write.before_publish",
    "write.published",
    "wal.switch.created",
    "wal.switch.dir_synced",
    "wal.switch.predecessor_written",
    "table.before_footer",
    "table.before_sync",
    "table.after_sync",
    "blob.before_footer",
    "blob.before_sync",
    "blob.after_sync",
    "flush.before_table",
    "flush.before_install",
    "flush.installed",
    "wal.delete_obsolete",
    "manifest.append.before",
    "manifest.append.before_sync",
    "manifest.append.synced",
    "manifest.written.before_install",
    "manifest.new.written",
    "current.temp_synced",
    "current.renamed",
    "compaction.before_job",
    "compaction.output_finished",
    "compaction.before_install",
    "compaction.installed",
    "blob.gc_before_install",
    "table.delete_obsolete",
    "blob.delete_obsolete",
    "cf.create.applied",
    "cf.drop.applied",
    "options.temp_synced",
    "options.renamed",
    "options.delete_obsolete",
    "recovery.replayed",
    "recovery.flushed",
    "recovery.new_wal",
    "recovery.new_manifest",
];

/// Marks a crash point (see [`CRASH_POINTS`]).
macro_rules! crash_point {
    ($name:literal) => {
        fail::fail_point!($name)
    };
}
pub(crate) use crash_point;
