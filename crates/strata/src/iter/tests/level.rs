//! The level iterator against a sorted-vector model, over real tables on the
//! simulated file system.

use std::path::Path;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::filename::table_file_name;
use crate::fs::{Fs, ReadFileOptions, SimFs};
use crate::iter::level::LevelIterator;
use crate::iter::InternalIterator;
use crate::key::{compare_internal, internal_key, ValueType};
use crate::options::{ReadOptions, TableOptions};
use crate::table::TableBuilder;
use crate::table_cache::TableCache;
use crate::version::FileMetaData;

use super::Pairs;

/// Writes `files` runs of consecutive keys as tables 1.., returning the cache,
/// the files' metadata and every entry in order.
fn level(fs: &Arc<SimFs>, sizes: &[usize]) -> (Arc<TableCache>, Vec<Arc<FileMetaData>>, Pairs) {
    let dir = Path::new("/db");
    fs.create_dir_all(dir).unwrap();
    let mut metas = Vec::new();
    let mut all = Vec::new();
    let mut next_key = 0u32;
    for (i, &n) in sizes.iter().enumerate() {
        let number = i as u64 + 1;
        let file = fs.create(&table_file_name(dir, number)).unwrap();
        let mut builder = TableBuilder::new(file, TableOptions::default()).unwrap();
        let mut entries = Vec::new();
        for _ in 0..n {
            let k = internal_key(format!("k{next_key:05}").as_bytes(), 7, ValueType::Put);
            next_key += 2;
            builder.add(&k, format!("v{next_key}").as_bytes()).unwrap();
            entries.push((k, format!("v{next_key}").into_bytes()));
        }
        let file_size = builder.finish().unwrap().file_size;
        metas.push(Arc::new(FileMetaData {
            number,
            file_size,
            smallest: entries[0].0.clone(),
            largest: entries[n - 1].0.clone(),
            smallest_seqno: 7,
            largest_seqno: 7,
            blob_files: Vec::new(),
            global_seqno: None,
        }));
        all.extend(entries);
    }
    let cache = Arc::new(TableCache::new(
        fs.clone(),
        dir.to_path_buf(),
        ReadFileOptions::default(),
    ));
    (cache, metas, all)
}

fn target(n: u32) -> Vec<u8> {
    internal_key(format!("k{n:05}").as_bytes(), 7, ValueType::Put)
}

#[test]
fn seeks_and_steps_match_the_model_across_files() {
    let fs = Arc::new(SimFs::new(1));
    let (cache, files, all) = level(&fs, &[3, 1, 40, 7, 2]);
    let mut it = LevelIterator::new(Arc::default(), cache, 1, files, &ReadOptions::default());
    let mut rng = SmallRng::seed_from_u64(5);
    for _ in 0..500 {
        let t = target(rng.gen_range(0..120));
        // seek: first entry >= t; seek_for_prev: last entry <= t.
        let first = all
            .iter()
            .position(|(k, _)| compare_internal(k, &t).is_ge());
        let last = all
            .iter()
            .rposition(|(k, _)| compare_internal(k, &t).is_le());
        let (mut pos, forward) = if rng.gen_bool(0.5) {
            it.seek(&t);
            (first, true)
        } else {
            it.seek_for_prev(&t);
            (last, false)
        };
        for _ in 0..rng.gen_range(0..60) {
            match pos {
                Some(p) => {
                    assert!(it.valid());
                    assert_eq!(
                        (it.key(), it.value()),
                        (all[p].0.as_slice(), all[p].1.as_slice())
                    );
                }
                None => {
                    assert!(!it.valid());
                    break;
                }
            }
            if forward {
                it.next();
                pos = pos.and_then(|p| (p + 1 < all.len()).then_some(p + 1));
            } else {
                it.prev();
                pos = pos.and_then(|p| p.checked_sub(1));
            }
        }
        it.status().unwrap();
    }
    it.seek_to_first();
    let forward: Vec<_> = std::iter::from_fn(|| {
        let entry = it.valid().then(|| it.key().to_vec());
        it.next();
        entry
    })
    .collect();
    assert_eq!(forward.len(), all.len());
    it.seek_to_last();
    assert_eq!(it.key(), all[all.len() - 1].0.as_slice());
}

#[test]
fn a_missing_table_is_an_error_not_a_gap() {
    let fs = Arc::new(SimFs::new(2));
    let (cache, files, _) = level(&fs, &[3, 3, 3]);
    fs.remove(&table_file_name(Path::new("/db"), 2)).unwrap();
    let mut it = LevelIterator::new(Arc::default(), cache, 1, files, &ReadOptions::default());
    it.seek_to_first();
    let mut seen = 0;
    while it.valid() {
        seen += 1;
        it.next();
    }
    assert_eq!(seen, 3, "stops at the missing table");
    assert!(it.status().is_err());
}
