//! Runs one compaction task: merges the input tables, keeps what
//! [`DropRules`] keep, and writes output tables cut at the target size
//! (and where grandparent overlap grows too large), each synced before the
//! directory is synced and the edit returned. A trivial move writes nothing.
//! A large task may run as several subcompactions, one per key span, on
//! threads of their own (`subcompaction.rs`).
//!
//! The job does I/O only; installing its edit is the caller's business.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::blobs::{gc_cutoff, BlobContext, SpanBlobs};
use super::iter::{DropCounts, DropRules};
use super::merge_collapse;
use super::output_cut::OutputCutter;
use super::range_dels;
use super::subcompaction::{self, KeySpan};
use super::CompactionTask;
use crate::blob::{remove_blob_files, BlobOutput};
use crate::compaction_filter::{CompactionFilter, Decision, FilterContext};
use crate::crash_point::crash_point;
use crate::error::{Error, Result};
use crate::filename::table_file_name;
use crate::flush::TableOwner;
use crate::fs::Fs;
use crate::iter::merging::{BoxedIterator, MergingIterator};
use crate::iter::InternalIterator;
use crate::key::{
    internal_key, seek_key, user_key, ParsedInternalKey, SequenceNumber, ValueType,
    MAX_SEQUENCE_NUMBER,
};
use crate::merge::MergeOperator;
use crate::options::{ReadOptions, TableOptions};
use crate::range_del::FragmentedRangeTombstones;
use crate::statistics::thread_cpu_micros;
use crate::table::TableBuilder;
use crate::table_cache::TableCache;
use crate::version::{BlobFileAddition, FileMetaData, GarbageTally, Version, VersionEdit};

/// What a job needs from the database.
pub struct JobContext<'a> {
    pub fs: &'a dyn Fs,
    pub dir: &'a Path,
    pub table_cache: &'a TableCache,
    pub table_options: &'a TableOptions,
    /// The family compacted: its id and name, recorded in every output.
    pub family: crate::flush::FamilyTag<'a>,
    /// Live snapshots when the job started.
    pub snapshots: Vec<SequenceNumber>,
    /// The version the task was picked from.
    pub version: &'a Version,
    pub num_levels: usize,
    /// Allocates a file number for an output.
    pub new_file_number: &'a (dyn Fn() -> u64 + Sync),
    /// The family's compaction filter, if it has one.
    pub compaction_filter: Option<&'a dyn CompactionFilter>,
    /// The family's merge operator, to combine operand chains.
    pub merge_operator: Option<&'a dyn MergeOperator>,
    /// Most threads one job may split into (`max_subcompactions`).
    pub max_subcompactions: u32,
    /// The family's blob files and options: inputs may hold references
    /// whatever the options say now.
    pub blobs: BlobContext<'a>,
}

impl std::fmt::Debug for JobContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobContext")
            .field("dir", &self.dir)
            .field("snapshots", &self.snapshots)
            .field("num_levels", &self.num_levels)
            .field("max_subcompactions", &self.max_subcompactions)
            .finish_non_exhaustive()
    }
}

/// What a job did, for the edit and the compaction stats.
#[derive(Debug, Clone, Default)]
pub struct JobResult {
    pub edit: VersionEdit,
    pub outputs: Vec<FileMetaData>,
    /// Bytes read from the start level and from the output level.
    pub bytes_read_start: u64,
    pub bytes_read_output: u64,
    pub bytes_written: u64,
    /// Of `bytes_written`, the bytes written to blob files.
    pub blob_bytes_written: u64,
    /// Bytes read from blob files (values relocated, filtered or merged).
    pub blob_bytes_read: u64,
    /// Bytes moved by a trivial move.
    pub bytes_moved: u64,
    pub counts: DropCounts,
    /// Values the compaction filter removed or changed.
    pub filter_changes: u64,
    /// Of `filter_changes`, the values it removed.
    pub filter_removals: u64,
    pub micros: u64,
    /// CPU time of the job's threads (all its subcompactions').
    pub cpu_micros: u64,
    /// How many subcompactions the job ran as (1: not split).
    pub subcompactions: usize,
}

/// Deletes the outputs of a job that will not be installed (best effort:
/// nothing references them).
pub fn discard_outputs(result: &JobResult, ctx: &JobContext<'_>) {
    for meta in &result.outputs {
        ctx.table_cache.evict(meta.number);
        let _ = ctx.fs.remove(&table_file_name(ctx.dir, meta.number));
    }
    let blob_numbers: Vec<u64> = result
        .edit
        .blob_file_additions
        .iter()
        .map(|a| a.number)
        .collect();
    remove_blob_files(ctx.fs, ctx.dir, &blob_numbers);
}

/// Runs `task`. On error, output files already written are removed (nothing
/// references them).
pub fn run(task: &CompactionTask, ctx: &JobContext<'_>) -> Result<JobResult> {
    let start = Instant::now();
    let cpu_start = thread_cpu_micros();
    let mut result = JobResult::default();
    for (level, f) in task.all_inputs() {
        result.edit.delete_file(level as u32, f.number);
    }
    if task.deletion_only {
        result.micros = elapsed_micros(start);
        return Ok(result);
    }
    if task.trivial_move {
        for f in &task.inputs {
            result
                .edit
                .add_file(task.output_level as u32, (**f).clone());
            result.bytes_moved += f.file_size;
        }
        result.micros = elapsed_micros(start);
        result.cpu_micros = thread_cpu_micros().saturating_sub(cpu_start);
        return Ok(result);
    }
    result.bytes_read_start = task.inputs.iter().map(|f| f.file_size).sum();
    result.bytes_read_output = task.output_level_inputs.iter().map(|f| f.file_size).sum();
    let spans = subcompaction::split(task, ctx.version.order(), ctx.max_subcompactions);
    result.subcompactions = spans.len();
    let outcomes = run_spans(task, ctx, &spans);
    let mut outputs = Vec::new();
    let mut blob_additions: Vec<BlobFileAddition> = Vec::new();
    let mut tally = GarbageTally::default();
    let mut failure = None;
    let mut other_threads_cpu = 0;
    for (i, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            Ok(span) => {
                outputs.extend(span.finished);
                blob_additions.extend(span.blobs.additions);
                result.blob_bytes_written += span.blobs.bytes_written;
                result.blob_bytes_read += span.blobs.bytes_read;
                tally.merge(&span.blobs.tally);
                result.counts.add(&span.counts);
                result.filter_changes += span.filter_changes;
                result.filter_removals += span.filter_removals;
                if i > 0 {
                    other_threads_cpu += span.cpu_micros;
                }
            }
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    let garbage = tally
        .garbage()
        .map_err(|reason| Error::corruption(ctx.dir, 0, reason));
    let synced = match (failure, garbage) {
        (Some(e), _) | (None, Err(e)) => Err(e),
        (None, Ok(garbage)) => {
            result.edit.blob_file_garbage = garbage;
            if outputs.is_empty() && blob_additions.is_empty() {
                Ok(())
            } else {
                // Not durably named, the outputs must not be installed.
                ctx.fs.sync_dir(ctx.dir)
            }
        }
    };
    if let Err(e) = synced {
        // The failed spans removed their own outputs; these are the others'.
        for meta in &outputs {
            let _ = ctx.fs.remove(&table_file_name(ctx.dir, meta.number));
        }
        let numbers: Vec<u64> = blob_additions.iter().map(|a| a.number).collect();
        remove_blob_files(ctx.fs, ctx.dir, &numbers);
        return Err(e);
    }
    for meta in &outputs {
        result.bytes_written += meta.file_size;
        result.edit.add_file(task.output_level as u32, meta.clone());
    }
    result.bytes_written += result.blob_bytes_written;
    result.edit.blob_file_additions = blob_additions;
    result.outputs = outputs;
    result.micros = elapsed_micros(start);
    result.cpu_micros = thread_cpu_micros().saturating_sub(cpu_start) + other_threads_cpu;
    Ok(result)
}

/// What one subcompaction wrote.
struct SpanOutput {
    finished: Vec<FileMetaData>,
    blobs: super::blobs::SpanBlobOutput,
    counts: DropCounts,
    filter_changes: u64,
    filter_removals: u64,
    cpu_micros: u64,
}

/// Runs one subcompaction per span, the first on this thread and the others
/// on threads of their own; their outcomes in span order. A span that fails
/// has removed its outputs.
fn run_spans(
    task: &CompactionTask,
    ctx: &JobContext<'_>,
    spans: &[KeySpan],
) -> Vec<Result<SpanOutput>> {
    let Some((first, others)) = spans.split_first() else {
        return Vec::new();
    };
    if others.is_empty() {
        return vec![run_span(task, ctx, first)];
    }
    std::thread::scope(|scope| {
        let threads: Vec<_> = others
            .iter()
            .map(|span| {
                std::thread::Builder::new()
                    .name("strata-subcompaction".into())
                    .spawn_scoped(scope, move || run_span(task, ctx, span))
            })
            .collect();
        let mut outcomes = vec![run_span(task, ctx, first)];
        for (thread, span) in threads.into_iter().zip(others) {
            outcomes.push(match thread {
                Ok(handle) => handle.join().unwrap_or_else(|_| {
                    Err(Error::BackgroundThreadPanicked {
                        thread: "strata-subcompaction".into(),
                    })
                }),
                // No thread to be had: run the span here instead.
                Err(_) => run_span(task, ctx, span),
            });
        }
        outcomes
    })
}

/// Merges the inputs' entries in `span` and writes them to outputs of its own.
fn run_span(task: &CompactionTask, ctx: &JobContext<'_>, span: &KeySpan) -> Result<SpanOutput> {
    let cpu_start = thread_cpu_micros();
    let (mut log_number, mut logged_through) = (0, 0);
    for (level, f) in task.all_inputs() {
        let table = ctx.table_cache.get(f, level, ctx.version.order())?;
        log_number = log_number.max(table.properties().log_number);
        logged_through = logged_through.max(table.properties().logged_through());
    }
    let mut writer = OutputWriter {
        ctx,
        log_number,
        logged_through,
        options: TableOptions {
            compression: task.compression,
            ..ctx.table_options.clone()
        },
        current: None,
        finished: Vec::new(),
        cutter: OutputCutter::new(
            task.grandparents.clone(),
            ctx.version.order().clone(),
            task.target_file_size,
            task.max_grandparent_overlap,
        ),
        range_tombstones: FragmentedRangeTombstones::default(),
        span,
        output_lower: span.lower.clone(),
        filter_changes: 0,
        filter_removals: 0,
        blobs: SpanBlobs::new(
            ctx.blobs,
            BlobOutput {
                fs: ctx.fs,
                dir: ctx.dir,
                new_file_number: ctx.new_file_number,
                column_family_id: ctx.blobs.column_family_id,
            },
            task.output_level,
            gc_cutoff(ctx.blobs.options, ctx.version),
        ),
    };
    let written = merge_inputs(task, ctx).and_then(|it| writer.write_all(it, task, ctx));
    let created = writer.blobs.created().to_vec();
    let outcome = written.and_then(|counts| {
        let finished = std::mem::take(&mut writer.finished);
        let blobs = writer.blobs.finish()?;
        Ok(SpanOutput {
            finished,
            blobs,
            counts,
            filter_changes: writer.filter_changes,
            filter_removals: writer.filter_removals,
            cpu_micros: thread_cpu_micros().saturating_sub(cpu_start),
        })
    });
    if outcome.is_err() {
        writer.abandon();
        remove_blob_files(ctx.fs, ctx.dir, &created);
    }
    outcome
}

/// Whether an L0 file older than the task's newest input is not in the task:
/// its keys are not in a level below the output, so a tombstone dropped here
/// could uncover them.
fn leaves_older_l0_files_out(task: &CompactionTask, version: &Version) -> bool {
    let newest_input = task
        .all_inputs()
        .map(|(_, f)| f.largest_seqno)
        .max()
        .unwrap_or(0);
    let included: std::collections::HashSet<u64> =
        task.all_inputs().map(|(_, f)| f.number).collect();
    version
        .files(0)
        .iter()
        .any(|f| !included.contains(&f.number) && f.smallest_seqno < newest_input)
}

fn elapsed_micros(start: Instant) -> u64 {
    u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX)
}

/// One iterator over every input, checksums verified. The blocks it reads
/// are not inserted into the block cache: a compaction reads each once, and
/// caching them would push the readers' hot set out (RocksDB's compaction
/// reads with `fill_cache = false` too). Blocks already cached are used.
fn merge_inputs(task: &CompactionTask, ctx: &JobContext<'_>) -> Result<MergingIterator> {
    let read = ReadOptions {
        fill_cache: false,
        ..ReadOptions::default()
    };
    let mut children: Vec<BoxedIterator> = Vec::new();
    for (level, f) in task.all_inputs() {
        let table = ctx.table_cache.get(f, level, ctx.version.order())?;
        children.push(Box::new(table.iter(&read)));
    }
    Ok(MergingIterator::with_order(
        children,
        ctx.version.order().clone(),
    ))
}

/// What the family's compaction filter makes of a kept entry: `None` to
/// write it as it is, or the entry to write instead. Only values newer than
/// every live snapshot are filtered (no snapshot may see them change), and
/// only the newest one of a key (the drop rules kept it, so a version above
/// it in its stripe would have hidden it).
fn apply_filter(
    ctx: &JobContext<'_>,
    task: &CompactionTask,
    key: &[u8],
    value: &[u8],
    blobs: &SpanBlobs<'_>,
) -> Result<Option<(Vec<u8>, Vec<u8>)>> {
    let Some(filter) = ctx.compaction_filter else {
        return Ok(None);
    };
    let Some(parsed) = ParsedInternalKey::parse(key) else {
        return Ok(None);
    };
    if !matches!(
        parsed.value_type(),
        Some(ValueType::Put | ValueType::BlobIndex)
    ) {
        return Ok(None);
    }
    if ctx.snapshots.iter().any(|&s| s >= parsed.seq) {
        return Ok(None);
    }
    // The filter sees a separated value whole, as it was written.
    let resolved = blobs.resolve(key, value)?;
    let value = resolved.as_deref().unwrap_or(value);
    let filter_ctx = FilterContext {
        level: task.output_level,
        is_bottommost: (task.output_level + 1..ctx.num_levels)
            .all(|level| ctx.version.files(level).is_empty()),
    };
    Ok(match filter.filter(&filter_ctx, parsed.user_key, value) {
        Decision::Keep => None,
        Decision::Remove => Some((
            internal_key(parsed.user_key, parsed.seq, ValueType::Delete),
            Vec::new(),
        )),
        Decision::ChangeValue(new) => Some((as_put(key), new)),
    })
}

/// `key` (a put or a blob index) as a put of the same user key and sequence
/// number: the entry's value is about to be written whole.
fn as_put(key: &[u8]) -> Vec<u8> {
    match ParsedInternalKey::parse(key) {
        Some(p) => internal_key(p.user_key, p.seq, ValueType::Put),
        None => key.to_vec(),
    }
}

/// An output table being written.
struct Output {
    number: u64,
    builder: TableBuilder,
    /// The last point key added (outputs are cut between user keys).
    largest: Vec<u8>,
}

struct OutputWriter<'a, 'b> {
    ctx: &'a JobContext<'b>,
    options: TableOptions,
    current: Option<Output>,
    finished: Vec<FileMetaData>,
    /// Where the outputs end (see `output_cut.rs`).
    cutter: OutputCutter,
    /// The tombstones the outputs carry, each output those between its cuts.
    range_tombstones: FragmentedRangeTombstones,
    /// The user keys this writer's subcompaction covers.
    span: &'a KeySpan,
    /// The first user key the current (or next) output owns: the cut before
    /// it; the span's lower end for the first output.
    output_lower: Option<Vec<u8>>,
    /// Values the compaction filter removed or changed.
    filter_changes: u64,
    /// Of `filter_changes`, the values it removed.
    filter_removals: u64,
    /// Values going to blob files, references passing through.
    blobs: SpanBlobs<'a>,
    /// The outputs' log number: the largest of the inputs' (see
    /// `TableProperties::log_number`).
    log_number: u64,
    /// The outputs' largest logged sequence number: the largest of the
    /// inputs' (see `TableProperties::largest_logged_seqno`).
    logged_through: u64,
}

impl OutputWriter<'_, '_> {
    fn write_all(
        &mut self,
        mut it: MergingIterator,
        task: &CompactionTask,
        ctx: &JobContext<'_>,
    ) -> Result<DropCounts> {
        let mut filter = DropRules::new(
            ctx.snapshots.clone(),
            ctx.version,
            task.output_level,
            ctx.num_levels,
        );
        let older_l0_left_out = leaves_older_l0_files_out(task, ctx.version);
        if older_l0_left_out {
            filter = filter.keeping_tombstones();
        }
        let input_tombstones = Arc::new(range_dels::input_tombstones(task, ctx)?);
        self.range_tombstones = range_dels::output_tombstones(
            &input_tombstones,
            &ctx.snapshots,
            ctx.version,
            task.output_level,
            !older_l0_left_out,
        );
        filter = filter.with_range_tombstones(input_tombstones);
        // The kept entries of the current user key from its first merge
        // operand on: written once the key ends, operand chains combined.
        let mut chain: Vec<merge_collapse::Entry> = Vec::new();
        let span = self.span;
        match &span.lower {
            Some(lower) => it.seek(&seek_key(lower, MAX_SEQUENCE_NUMBER)),
            None => it.seek_to_first(),
        }
        while it.valid() {
            let key = it.key();
            if span.ends_before(user_key(key), ctx.version.order()) {
                break;
            }
            if chain
                .first()
                .is_some_and(|(k, _)| user_key(k) != user_key(key))
            {
                self.write_chain(std::mem::take(&mut chain), &mut filter, ctx)?;
            }
            self.blobs.note_input(key, it.value())?;
            let keep = filter
                .keep(key)
                .map_err(|reason| malformed_input(task, ctx, reason))?;
            if keep {
                let filtered = apply_filter(ctx, task, key, it.value(), &self.blobs)?;
                self.filter_changes += u64::from(filtered.is_some());
                self.filter_removals += u64::from(filtered.as_ref().is_some_and(|(k, _)| {
                    ParsedInternalKey::parse(k)
                        .is_some_and(|p| p.value_type() == Some(ValueType::Delete))
                }));
                let (key, value) = match &filtered {
                    Some((k, v)) => (k.as_slice(), v.as_slice()),
                    None => (key, it.value()),
                };
                let chained = ctx.merge_operator.is_some()
                    && (!chain.is_empty()
                        || ParsedInternalKey::parse(key)
                            .is_some_and(|p| p.value_type() == Some(ValueType::Merge)));
                if chained {
                    // A merge needs its base whole: a separated one is read
                    // back and goes on as a put.
                    chain.push(match self.blobs.resolve(key, value)? {
                        Some(resolved) => (as_put(key), resolved),
                        None => (key.to_vec(), value.to_vec()),
                    });
                } else {
                    self.write_entry(key, value)?;
                }
            }
            it.next();
        }
        it.status()?;
        if !chain.is_empty() {
            self.write_chain(chain, &mut filter, ctx)?;
        }
        if self.current.is_none()
            && self.finished.is_empty()
            && !self
                .range_tombstones
                .clip(span.lower.as_deref(), span.upper.as_deref())
                .is_empty()
        {
            // Every point entry of the span went, but tombstones in it
            // remain: they still need a table.
            self.open_output()?;
        }
        self.finish_current(span.upper.as_deref())?;
        Ok(filter.counts)
    }

    /// Writes one kept entry, cutting the output first when a new user key
    /// may start a new file.
    fn write_entry(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        // Outputs are cut only between user keys, so every version of a key
        // lands in one file and files of a level never share a user key.
        let new_user_key = self
            .current
            .as_ref()
            .is_none_or(|o| user_key(&o.largest) != user_key(key));
        let size = self
            .current
            .as_ref()
            .map(|o| o.builder.estimated_file_size());
        if new_user_key && self.cutter.should_cut_before(user_key(key), size) {
            self.finish_current(Some(user_key(key)))?;
        }
        let rewritten = self.blobs.rewrite(key, value)?;
        let (key, value) = match &rewritten {
            Some((k, v)) => (k.as_slice(), v.as_slice()),
            None => (key, value),
        };
        let output = match self.current {
            Some(ref mut output) => output,
            None => self.open_output()?,
        };
        output.builder.add(key, value)?;
        output.largest.clear();
        output.largest.extend_from_slice(key);
        Ok(())
    }

    /// Writes a user key's entries from its first merge operand on, with
    /// operand chains combined.
    fn write_chain(
        &mut self,
        chain: Vec<merge_collapse::Entry>,
        filter: &mut DropRules,
        ctx: &JobContext<'_>,
    ) -> Result<()> {
        let nothing_below = chain
            .first()
            .is_some_and(|(k, _)| filter.nothing_below(user_key(k)));
        let entries =
            merge_collapse::collapse(chain, &ctx.snapshots, ctx.merge_operator, nothing_below);
        for (key, value) in &entries {
            self.write_entry(key, value)?;
        }
        Ok(())
    }

    /// Creates the next output file.
    fn open_output(&mut self) -> Result<&mut Output> {
        let number = (self.ctx.new_file_number)();
        let path = table_file_name(self.ctx.dir, number);
        let file = self.ctx.fs.create(&path)?;
        Ok(self.current.insert(Output {
            number,
            builder: TableBuilder::new(file, self.options.clone())?
                .with_order(self.ctx.version.order().clone())
                .owned_by(TableOwner {
                    family_id: self.ctx.family.0,
                    family_name: self.ctx.family.1,
                    log_number: self.log_number,
                })
                .logged_through(self.logged_through),
            largest: Vec::new(),
        }))
    }

    /// Finishes (and syncs) the current output, if any, with the tombstones
    /// it owns: those below `next_cut`, the first user key of the next
    /// output (`None`: this is the last one).
    fn finish_current(&mut self, next_cut: Option<&[u8]>) -> Result<()> {
        let Some(mut output) = self.current.take() else {
            return Ok(());
        };
        let number = output.number;
        let lower = std::mem::replace(&mut self.output_lower, next_cut.map(<[u8]>::to_vec));
        let finished = range_dels::add_clipped(
            &mut output.builder,
            &self.range_tombstones,
            lower.as_deref(),
            next_cut,
        )
        .and_then(|()| output.builder.finish());
        let (file_size, props, smallest, largest, blob_files) = match finished {
            Ok(done) => (
                done.file_size,
                done.properties,
                done.smallest,
                done.largest,
                done.blob_files,
            ),
            Err(e) => {
                let _ = self.ctx.fs.remove(&table_file_name(self.ctx.dir, number));
                return Err(e);
            }
        };
        crash_point!("compaction.output_finished");
        self.finished.push(FileMetaData {
            number,
            file_size,
            smallest,
            largest,
            smallest_seqno: props.smallest_seqno,
            largest_seqno: props.largest_seqno,
            blob_files,
            global_seqno: None,
        });
        Ok(())
    }

    /// Removes every output written so far (best effort: none is referenced).
    fn abandon(&mut self) {
        if let Some(output) = self.current.take() {
            drop(output.builder);
            let _ = self
                .ctx
                .fs
                .remove(&table_file_name(self.ctx.dir, output.number));
        }
        for meta in self.finished.drain(..) {
            let _ = self
                .ctx
                .fs
                .remove(&table_file_name(self.ctx.dir, meta.number));
        }
    }
}

/// A malformed key read by a compaction: the merged stream does not say which
/// input it came from, so the error names the directory and every input table.
fn malformed_input(task: &CompactionTask, ctx: &JobContext<'_>, reason: String) -> Error {
    let inputs: Vec<String> = task
        .all_inputs()
        .map(|(level, f)| format!("#{} (L{level})", f.number))
        .collect();
    Error::corruption(
        ctx.dir,
        0,
        format!(
            "a compaction input, one of tables {}, holds a malformed key: {reason}",
            inputs.join(", ")
        ),
    )
}
