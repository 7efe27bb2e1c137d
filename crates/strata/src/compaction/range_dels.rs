//! Range tombstones in a compaction: gathered from the inputs, used to drop
//! the point entries they delete, and written to the outputs, each output
//! getting the tombstones between its cut points.
//!
//! Outputs are cut between user keys, so output `i` owns the user keys
//! `[cut_i, cut_{i+1})` (the first from below everything, the last to above
//! everything) and gets the tombstones clipped to that range: neighbouring
//! outputs cover every tombstone with no overlap and no gap. An output whose
//! tombstones run to its upper cut ends at the cut's sentinel, which
//! excludes the cut's user key (see [`range_end_sentinel`]).
//!
//! [`range_end_sentinel`]: crate::range_del::range_end_sentinel

use super::job::JobContext;
use super::CompactionTask;
use crate::error::Result;
use crate::key::SequenceNumber;
use crate::range_del::FragmentedRangeTombstones;
use crate::table::TableBuilder;
use crate::version::Version;

/// Every input table's tombstones, merged.
pub fn input_tombstones(
    task: &CompactionTask,
    ctx: &JobContext<'_>,
) -> Result<FragmentedRangeTombstones> {
    let mut sets = Vec::new();
    for (level, f) in task.all_inputs() {
        let table = ctx.table_cache.get(f, level, ctx.version.order())?;
        if !table.range_tombstones().is_empty() {
            sets.push(table.range_tombstones().clone());
        }
    }
    Ok(FragmentedRangeTombstones::merge(
        sets.iter().map(|s| &**s),
        ctx.version.order(),
    ))
}

/// The tombstones the outputs must carry: those some reader still needs.
/// With nothing that they could delete below the output level
/// (`nothing_older_outside`, and no deeper file overlapping them), the
/// oldest stripe goes: the compaction dropped every entry it deletes.
pub fn output_tombstones(
    inputs: &FragmentedRangeTombstones,
    snapshots: &[SequenceNumber],
    version: &Version,
    output_level: usize,
    nothing_older_outside: bool,
) -> FragmentedRangeTombstones {
    if inputs.is_empty() {
        return FragmentedRangeTombstones::empty(version.order());
    }
    let mut sorted = snapshots.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let bottommost = nothing_older_outside && !deeper_levels_overlap(inputs, version, output_level);
    inputs.for_compaction(&sorted, bottommost)
}

/// Whether a level below `output_level` holds a file overlapping the user
/// keys the tombstones span.
fn deeper_levels_overlap(
    tombstones: &FragmentedRangeTombstones,
    version: &Version,
    output_level: usize,
) -> bool {
    let (Some(lo), Some(end)) = (tombstones.smallest_key(), tombstones.largest_end()) else {
        return false;
    };
    let order = version.order();
    (output_level + 1..crate::version::NUM_LEVELS).any(|level| {
        version
            .files(level)
            .iter()
            .any(|f| !f.ends_before(lo, order) && order.lt(crate::key::user_key(&f.smallest), end))
    })
}

/// Adds to `builder` the tombstones of `tombstones` within the user keys
/// `[lower, upper)` (`None`: unbounded), the range one output owns.
pub fn add_clipped(
    builder: &mut TableBuilder,
    tombstones: &FragmentedRangeTombstones,
    lower: Option<&[u8]>,
    upper: Option<&[u8]>,
) -> Result<()> {
    if tombstones.is_empty() {
        return Ok(());
    }
    for t in tombstones.clip(lower, upper).tombstones() {
        builder.add_range_tombstone(t.start(), t.end(), t.seq())?;
    }
    Ok(())
}
