//! The corruption sweep over a small live database: every file (tables, blob
//! files, WAL, MANIFEST, CURRENT) has bytes XORed, bits flipped, or is truncated, and the
//! database is reopened and read in full. Each case must end in the right
//! answers or a clear error: no panic, no wrong value, no false NotFound, no
//! hang, no single allocation over 64 MiB. A damaged WAL may cost its tail
//! (point-in-time recovery), never a batch in the middle.
//!
//! Its own test binary, because it installs an allocator that records the
//! largest allocation.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use strata::fs::SimFs;
use strata::{BlobOptions, Db, DbOptions, Error, Fs, WriteBatch, WriteOptions};

/// Records the largest single allocation.
struct Measuring;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call unchanged to the system allocator; it only
// records the requested size.
unsafe impl GlobalAlloc for Measuring {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        // SAFETY: the caller's contract for `realloc` is passed on as is.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Measuring = Measuring;

const KEYS: u64 = 50;
const BATCHES: u64 = 120;
const FLUSHED: u64 = 80;

fn key(n: u64) -> Vec<u8> {
    format!("key{n:03}").into_bytes()
}

fn batch(i: u64) -> WriteBatch {
    let mut b = WriteBatch::new();
    b.put(
        key(i % KEYS),
        format!("v{i}-{}", "x".repeat((i % 7) as usize * 30)).as_bytes(),
    )
    .unwrap();
    if i % 5 == 0 {
        b.delete(key((i * 3) % KEYS)).unwrap();
    }
    b.put(b"~seq", i.to_string().as_bytes()).unwrap();
    b
}

/// The state after batches `0..n`, read back through a model.
fn state_after(n: u64) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut state = BTreeMap::new();
    for i in 0..n {
        state.insert(
            key(i % KEYS),
            format!("v{i}-{}", "x".repeat((i % 7) as usize * 30)).into_bytes(),
        );
        if i % 5 == 0 {
            state.remove(&key((i * 3) % KEYS));
        }
    }
    state
}

fn options(fs: &SimFs) -> DbOptions {
    let mut o = DbOptions {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        fs: Arc::new(fs.clone()),
        ..DbOptions::default()
    };
    o.table.block_size = 512;
    // Values of 100 bytes and more (about half of them) live in blob files.
    o.blob = BlobOptions {
        enable_blob_files: true,
        min_blob_size: 100,
        ..BlobOptions::default()
    };
    o
}

/// The files of a small database: two flushed tables (and what compaction
/// made of them) with their blob files, a WAL holding the last batches, the MANIFEST and CURRENT.
fn build() -> BTreeMap<String, Vec<u8>> {
    let fs = SimFs::new(1);
    let db = Db::open(Path::new("/db"), options(&fs)).unwrap();
    for i in 0..BATCHES {
        db.write(&WriteOptions::default(), batch(i)).unwrap();
        if i + 1 == FLUSHED / 2 || i + 1 == FLUSHED {
            db.flush().unwrap();
        }
    }
    drop(db);
    let dir = Path::new("/db");
    fs.list(dir)
        .unwrap()
        .into_iter()
        .filter(|name| name != "LOCK" && !name.starts_with("LOG"))
        .map(|name| {
            let contents = fs.file_contents(&dir.join(&name)).unwrap();
            (name, contents)
        })
        .collect()
}

/// A fresh file system holding `files`, all durable.
fn materialize(files: &BTreeMap<String, Vec<u8>>) -> SimFs {
    let fs = SimFs::new(2);
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    for (name, contents) in files {
        let mut f = fs.create(&dir.join(name)).unwrap();
        f.append(contents).unwrap();
        f.sync().unwrap();
    }
    fs.sync_dir(dir).unwrap();
    fs
}

/// Opens and reads everything; panics on a wrong answer. Returns whether
/// the damage was reported as an error.
fn check(files: &BTreeMap<String, Vec<u8>>, damaged: &str, case: &str) -> bool {
    let fs = materialize(files);
    let db = match Db::open(Path::new("/db"), options(&fs)) {
        Ok(db) => db,
        Err(e) => {
            assert_clear(&e, case);
            return true;
        }
    };
    // The prefix the database claims to hold.
    let seq = match db.get(b"~seq") {
        Ok(v) => v.map_or(0, |v| {
            std::str::from_utf8(&v)
                .ok()
                .and_then(|s| s.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("{case}: sequence key reads {v:?}"))
                + 1
        }),
        Err(e) => {
            assert_clear(&e, case);
            return true;
        }
    };
    let wal_damaged = damaged.ends_with(".log");
    let expected_prefix = if wal_damaged { seq } else { BATCHES };
    assert!(
        seq == expected_prefix && seq >= FLUSHED,
        "{case}: recovered {seq} batches ({BATCHES} written, {FLUSHED} in tables)"
    );
    let want = state_after(seq);
    let mut errors = 0;
    for n in 0..KEYS {
        match db.get(key(n)) {
            Ok(got) => assert_eq!(
                got.as_deref(),
                want.get(&key(n)).map(Vec::as_slice),
                "{case}: wrong answer for key {n}"
            ),
            Err(e) => {
                assert_clear(&e, case);
                errors += 1;
            }
        }
    }
    // A full scan: each entry right, or the scan ends in an error.
    let mut scanned = BTreeMap::new();
    let mut scan_failed = false;
    for entry in db.range(..) {
        match entry {
            Ok((k, v)) => {
                scanned.insert(k, v);
            }
            Err(e) => {
                assert_clear(&e, case);
                scan_failed = true;
                break;
            }
        }
    }
    if !scan_failed {
        scanned.remove(&b"~seq"[..]);
        assert!(
            scanned == want,
            "{case}: a full scan differs from the model"
        );
    }
    errors > 0 || scan_failed
}

fn assert_clear(e: &Error, case: &str) {
    assert!(
        matches!(e, Error::Corruption { .. }),
        "{case}: expected a Corruption error, got: {e}"
    );
}

/// Runs `f`, aborting the whole test if it takes longer than a minute: a
/// hang must fail, not stall CI.
fn bounded<T>(case: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{case}: took {:?}",
        start.elapsed()
    );
    out
}

#[test]
fn damaged_files_give_right_answers_or_clear_errors() {
    let clean = build();
    let names: Vec<String> = clean.keys().cloned().collect();
    assert!(names.iter().any(|n| n.ends_with(".sst")), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with(".blob")), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with(".log")), "{names:?}");
    assert!(names.iter().any(|n| n.starts_with("MANIFEST")), "{names:?}");
    // The clean files read back in full.
    assert!(!check(&clean, "", "clean"));
    let mut rng = SmallRng::seed_from_u64(7);
    let (mut cases, mut reported) = (0u64, 0u64);
    for name in &names {
        let len = clean[name].len();
        // Every byte of small files; about 400 evenly spread bytes of others.
        let stride = (len / 400).max(1);
        for offset in (0..len).step_by(stride) {
            let mut files = clean.clone();
            let file = files.get_mut(name).unwrap();
            file[offset] ^= rng.gen_range(1..=255u8);
            let case = format!("{name}: byte {offset} of {len} XORed");
            reported += u64::from(bounded(&case, || check(&files, name, &case)));
            cases += 1;
        }
        for cut in (0..len).step_by(stride) {
            let mut files = clean.clone();
            files.get_mut(name).unwrap().truncate(cut);
            let case = format!("{name}: truncated to {cut} of {len}");
            reported += u64::from(bounded(&case, || check(&files, name, &case)));
            cases += 1;
        }
        for _ in 0..50 {
            let mut files = clean.clone();
            let file = files.get_mut(name).unwrap();
            for _ in 0..rng.gen_range(1..=4) {
                let bit = rng.gen_range(0..len * 8);
                file[bit / 8] ^= 1 << (bit % 8);
            }
            let case = format!("{name}: random bits flipped");
            reported += u64::from(bounded(&case, || check(&files, name, &case)));
            cases += 1;
        }
    }
    let largest = LARGEST.load(Ordering::Relaxed);
    eprintln!(
        "corruption sweep: {cases} cases over {} files, {reported} reported as errors, \
         largest allocation {largest} bytes",
        names.len()
    );
    assert!(largest < 64 << 20, "an allocation of {largest} bytes");
    let _ = PathBuf::new();
}
