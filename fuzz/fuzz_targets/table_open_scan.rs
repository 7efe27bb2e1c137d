//! Any bytes given as a table file: open, scan both ways, get, prefix-filter
//! seeks, range-tombstone queries and verify must return data or `Error::Corruption`, never panic,
//! hang or over-allocate.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use strata::fs::{Fs, ReadFileOptions, SimFs};
use strata::iter::InternalIterator;
use strata::table::TableReader;
use strata::{PrefixExtractor, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let fs = SimFs::new(0);
    let dir = Path::new("/fuzz");
    let path = dir.join("000001.sst");
    let write = || -> strata::Result<()> {
        fs.create_dir_all(dir)?;
        let mut f = fs.create(&path)?;
        f.append(data)?;
        f.sync()
    };
    if write().is_err() {
        return;
    }
    let Ok(file) = fs.open(&path, ReadFileOptions::default()) else {
        return;
    };
    let Ok(table) = TableReader::open(file, &path) else {
        return;
    };
    let table = Arc::new(table);
    let tombstones = table.range_tombstones();
    for key in [&b""[..], b"key", b"\xff"] {
        let _ = tombstones.max_covering_seq(key, 100);
        let _ = tombstones.next_visible(key, 100);
        let _ = tombstones.prev_visible(key, 100);
    }
    let _ = tombstones.for_compaction(&[50], true).num_tombstones();
    for verify_checksums in [true, false] {
        let ro = ReadOptions {
            verify_checksums,
            ..ReadOptions::default()
        };
        let mut it = table.iter(&ro);
        it.seek_to_first();
        let mut steps = 0;
        while it.valid() && steps < 10_000 {
            it.next();
            steps += 1;
        }
        it.seek_to_last();
        while it.valid() && steps < 20_000 {
            it.prev();
            steps += 1;
        }
        let _ = it.status();
        let _ = table.get(&ro, b"key", 100);
        // The prefix filter, under the extractor the table may name.
        for extractor in [PrefixExtractor::Fixed(2), PrefixExtractor::Capped(3)] {
            let _ = table.prefix_may_match(&extractor, b"key", b"ke");
            it.seek_in_prefix(b"key\x01\0\0\0\0\0\0\0", &extractor, b"ke");
            let _ = it.status();
        }
    }
    let _ = table.verify();
});
