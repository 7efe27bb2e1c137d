//! Helpers shared by the integration tests.

use std::path::Path;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::Rng;
use strata::fs::SimFs;
use strata::{CompactionOptions, Db, DbIterator, DbOptions, DbRange};

/// Key-value pairs in the order a scan yields them.
pub type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// The WAL files of `/db`, oldest first.
pub fn wals(fs: &SimFs) -> Vec<std::path::PathBuf> {
    let mut names: Vec<String> = strata::Fs::list(fs, Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".log"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| Path::new("/db").join(n))
        .collect()
}

/// Options for a small database on a simulated file system: tiny memtables so
/// tests exercise flushes and many L0 files.
pub fn sim_options(fs: &SimFs) -> DbOptions {
    DbOptions {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        max_write_buffer_number: 3,
        fs: Arc::new(fs.clone()),
        ..DbOptions::default()
    }
}

/// Opens `/db` on `fs`.
pub fn open_sim(fs: &SimFs) -> Db {
    Db::open(Path::new("/db"), sim_options(fs)).expect("open")
}

/// Leveled compaction with tiny levels and files, so data moves through
/// several levels in a short test.
pub fn small_leveled() -> CompactionOptions {
    CompactionOptions {
        level0_file_num_compaction_trigger: 2,
        max_bytes_for_level_base: 32 << 10,
        max_bytes_for_level_multiplier: 2.0,
        target_file_size_base: 8 << 10,
        ..CompactionOptions::default()
    }
}

/// What `it` holds, scanned forward from the first entry and backward from
/// the last (put back in forward order); the iterator's status must be
/// clean after each.
pub fn scan_both_ways(it: &mut DbIterator) -> (Entries, Entries) {
    let entry = |it: &DbIterator| (it.key().unwrap().to_vec(), it.value().unwrap().to_vec());
    let mut forward = Vec::new();
    it.seek_to_first();
    while it.valid() {
        forward.push(entry(it));
        it.next();
    }
    it.status().unwrap();
    let mut backward = Vec::new();
    it.seek_to_last();
    while it.valid() {
        backward.push(entry(it));
        it.prev();
    }
    it.status().unwrap();
    backward.reverse();
    (forward, backward)
}

/// Drains `range` from both ends at random; returns what the front yielded
/// and what the back yielded, each in forward order.
pub fn drain_from_both_ends(mut range: DbRange, rng: &mut SmallRng) -> (Entries, Entries) {
    let (mut front, mut back) = (Vec::new(), Vec::new());
    loop {
        let item = if rng.gen_bool(0.5) {
            range.next().map(|r| (true, r))
        } else {
            range.next_back().map(|r| (false, r))
        };
        match item {
            Some((true, r)) => front.push(r.unwrap()),
            Some((false, r)) => back.push(r.unwrap()),
            None => break,
        }
    }
    back.reverse();
    (front, back)
}

/// Holds the syncs of the files named like `name_part`, starts `db.flush()`
/// on a thread, and returns once the flush waits in such a sync.
pub fn flush_held_at_sync(
    db: &Arc<Db>,
    fs: &SimFs,
    name_part: &str,
) -> std::thread::JoinHandle<strata::Result<()>> {
    fs.hold_syncs_of(name_part);
    let flusher = {
        let db = db.clone();
        std::thread::spawn(move || db.flush())
    };
    wait_until(&format!("the flush to reach a sync of {name_part}"), || {
        fs.held_syncs() == 1
    });
    flusher
}

/// Waits for `condition`, which the test has made inevitable; the deadline
/// only turns a hang into a failure, it times nothing.
pub fn wait_until(what: &str, condition: impl Fn() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !condition() {
        assert!(
            std::time::Instant::now() < deadline,
            "waited a minute for {what}"
        );
        std::thread::yield_now();
    }
}

/// Removes CURRENT and every MANIFEST from the database in `dir` (on the
/// real file system): what a lost MANIFEST leaves.
pub fn lose_manifest(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("list") {
        let name = entry
            .expect("entry")
            .file_name()
            .into_string()
            .expect("name");
        if name == "CURRENT" || name.starts_with("MANIFEST-") {
            std::fs::remove_file(dir.join(name)).expect("remove");
        }
    }
}
