//! Operation sequences against a `BTreeMap` model per column family: the
//! input is read as a list of operations (put, delete, delete_range, merge,
//! batch across families, get, batched multi_get across families, scan,
//! prefix seek,
//! snapshot read, flush, compaction, ingestion of an `SstFileWriter` file,
//! reopen, crash and reopen) on a small
//! database with three families on the simulated file system, the second
//! with its values in blob files, the third in reverse bytewise order. Every read must agree with the model, and after a
//! crash the database must hold the models' state after some write at or
//! after the last sync (unsynced writes may or may not survive, in order,
//! and a batch across families survives or vanishes whole).
#![no_main]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use strata::fs::sim::{CrashMode, DataLoss};
use strata::fs::Fs;
use strata::fs::SimFs;
use strata::merge::StringAppendOperator;
use strata::{
    BlobOptions, CfOptions, ColumnFamily, Db, DbOptions, IngestExternalFileOptions,
    PrefixExtractor, ReadOptions, ReverseBytewiseComparator, SstFileWriter, WriteBatch,
    WriteOptions,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;
/// One model per family: the default one, "other" and "rev" (whose model
/// holds the same keys; its order is reverse bytewise).
type Models = [Model; 3];

/// The family in reverse bytewise order.
const REV: usize = 2;

fn options(fs: &SimFs) -> DbOptions {
    let mut o = DbOptions {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        fs: Arc::new(fs.clone()),
        merge_operator: Some(Arc::new(StringAppendOperator::new(b",".to_vec()))),
        create_missing_column_families: true,
        ..DbOptions::default()
    };
    o.table.block_size = 256;
    o.table.prefix_extractor = Some(PrefixExtractor::Fixed(2));
    o.memtable_prefix_bloom_size_ratio = 0.05;
    o.compaction.level0_file_num_compaction_trigger = 2;
    o
}

/// The other family's extractor: keys are 3 bytes, so a prefix is a key.
const OTHER_EXTRACTOR: PrefixExtractor = PrefixExtractor::Capped(3);

/// The options of the "other" and "rev" families.
fn family_options(options: &DbOptions) -> (CfOptions, CfOptions) {
    let mut other = options.cf_options();
    other.table.prefix_extractor = Some(OTHER_EXTRACTOR);
    other.table.whole_key_filtering = false;
    // Its values of 4 bytes and more live in tiny blob files, collected by
    // every compaction.
    other.blob = BlobOptions {
        enable_blob_files: true,
        min_blob_size: 4,
        blob_file_size: 1024,
        enable_blob_garbage_collection: true,
        blob_garbage_collection_age_cutoff: 1.0,
        ..BlobOptions::default()
    };
    let mut rev = options.cf_options();
    rev.comparator = Arc::new(ReverseBytewiseComparator);
    rev.table.prefix_extractor = None;
    (other, rev)
}

/// Opens (or reopens) the database with every family.
fn open(fs: &SimFs) -> (Db, [ColumnFamily; 3]) {
    let options = options(fs);
    let (other, rev) = family_options(&options);
    let db =
        Db::open_cf(Path::new("/db"), options, [("other", other), ("rev", rev)]).expect("open");
    let families = [
        db.default_cf(),
        db.cf_handle("other").expect("other family"),
        db.cf_handle("rev").expect("rev family"),
    ];
    (db, families)
}

/// Bytes consumed from the input, yielding zeroes once it runs out.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    /// Which family an operation touches.
    fn family(&mut self) -> usize {
        usize::from(self.byte() % 3)
    }

    fn key(&mut self) -> Vec<u8> {
        // A small key space, so operations meet the same keys.
        key(self.byte() % 40)
    }

    /// The keys numbered `[begin, end)` of the key space, a few of them: as
    /// the bounds of a range deletion in family `f`'s order, and as the
    /// bounds of the model's (bytewise) keys.
    fn range(&mut self, f: usize) -> ((Vec<u8>, Vec<u8>), (Vec<u8>, Vec<u8>)) {
        let begin = self.byte() % 40;
        let end = begin + 1 + self.byte() % 8;
        let bytewise = (key(begin), key(end));
        if f != REV {
            return (bytewise.clone(), bytewise);
        }
        // In reverse order the keys run from `end - 1` down to `begin`: the
        // range ends at the key below `begin` (or at "k", below them all).
        let below = begin.checked_sub(1).map_or_else(|| b"k".to_vec(), key);
        ((key(end - 1), below), bytewise)
    }

    fn value(&mut self) -> Vec<u8> {
        let len = usize::from(self.byte()) * 3;
        let fill = self.byte();
        vec![fill; len]
    }
}

fn key(n: u8) -> Vec<u8> {
    format!("k{n:02}").into_bytes()
}

fn delete_range(model: &mut Model, begin: &[u8], end: &[u8]) {
    model.retain(|k, _| k.as_slice() < begin || k.as_slice() >= end);
}

/// Every family's entries; each family's must come in its order.
fn scan(db: &Db, families: &[ColumnFamily; 3]) -> Models {
    let mut f = 0;
    families.each_ref().map(|cf| {
        let entries: Vec<(Vec<u8>, Vec<u8>)> =
            db.range_cf(cf, ..).map(|e| e.expect("scan")).collect();
        let ordered = entries.windows(2).all(|w| {
            if f == REV {
                w[0].0 > w[1].0
            } else {
                w[0].0 < w[1].0
            }
        });
        assert!(ordered, "family {f} scanned out of its order");
        f += 1;
        entries.into_iter().collect()
    })
}

fn scan_matches(db: &Db, families: &[ColumnFamily; 3], models: &Models) {
    assert!(&scan(db, families) == models, "scan differs from the model");
}

fuzz_target!(|data: &[u8]| {
    let fs = SimFs::new(u64::from(data.first().copied().unwrap_or(0)));
    let (mut db, mut families) = open(&fs);
    let mut models: Models = Default::default();
    // The states since the last durable point, oldest first: a power loss
    // keeps one of them.
    let mut history = vec![models.clone()];
    let mut input = Input(data);
    let mut steps = 0;
    while !input.0.is_empty() && steps < 400 {
        steps += 1;
        match input.byte() % 13 {
            0..=3 => {
                let f = input.family();
                let (k, v, sync) = (input.key(), input.value(), input.byte() % 8 == 0);
                let options = WriteOptions {
                    sync,
                    ..WriteOptions::default()
                };
                let mut batch = WriteBatch::new();
                batch.put_cf(&families[f], &k, &v).expect("put");
                db.write(&options, batch).expect("put");
                models[f].insert(k, v);
                if sync {
                    history.clear();
                }
                history.push(models.clone());
            }
            4 => {
                let f = input.family();
                if input.byte() % 3 == 0 {
                    let ((begin, end), (lo, hi)) = input.range(f);
                    db.delete_range_cf(&families[f], &begin, &end)
                        .expect("delete_range");
                    delete_range(&mut models[f], &lo, &hi);
                } else {
                    let k = input.key();
                    db.delete_cf(&families[f], &k).expect("delete");
                    models[f].remove(&k);
                }
                history.push(models.clone());
            }
            5 => {
                // One batch across the families: atomic, after a crash too.
                let mut batch = WriteBatch::new();
                for _ in 0..input.byte() % 5 {
                    let f = input.family();
                    let cf = &families[f];
                    let k = input.key();
                    let kind = input.byte() % 6;
                    if kind == 0 {
                        batch.delete_cf(cf, &k).expect("batch delete");
                        models[f].remove(&k);
                    } else if kind == 1 {
                        let ((begin, end), (lo, hi)) = input.range(f);
                        batch
                            .delete_range_cf(cf, &begin, &end)
                            .expect("batch delete_range");
                        delete_range(&mut models[f], &lo, &hi);
                    } else {
                        let v = input.value();
                        batch.put_cf(cf, &k, &v).expect("batch put");
                        models[f].insert(k, v);
                    }
                }
                db.write(&WriteOptions::default(), batch).expect("write");
                history.push(models.clone());
            }
            6 if input.byte() % 2 == 0 => {
                let f = input.family();
                let k = input.key();
                let got = db.get_cf(&families[f], &k).expect("get");
                assert_eq!(got.as_deref(), models[f].get(&k).map(Vec::as_slice));
            }
            6 => {
                // A batched read across the families, keys in any order.
                let requests: Vec<(usize, Vec<u8>)> = (0..1 + input.byte() % 8)
                    .map(|_| (input.family(), input.key()))
                    .collect();
                let pairs: Vec<(&ColumnFamily, &Vec<u8>)> =
                    requests.iter().map(|(f, k)| (&families[*f], k)).collect();
                let got = db.multi_get_cfs(&ReadOptions::default(), &pairs);
                for ((f, k), value) in requests.iter().zip(got) {
                    let value = value.expect("multi_get");
                    assert_eq!(value.as_deref(), models[*f].get(k).map(Vec::as_slice));
                }
            }
            7 if input.byte() % 2 == 0 => scan_matches(&db, &families, &models),
            7 if input.byte() % 3 == 0 => {
                // A seek and a seek-for-prev in the reverse family: the
                // first key at or after the target in its order is the
                // largest at or below it bytewise, and the scan goes down.
                let target = input.key();
                let mut it = db.iter_cf(&families[REV]);
                it.seek(&target);
                let mut got = Vec::new();
                while let Some(k) = it.key() {
                    got.push(k.to_vec());
                    it.next();
                }
                it.status().expect("reverse seek");
                let want: Vec<Vec<u8>> = models[REV]
                    .range(..=target.clone())
                    .rev()
                    .map(|(k, _)| k.clone())
                    .collect();
                assert_eq!(got, want, "a reverse-order seek differs from the model");
                it.seek_for_prev(&target);
                let want = models[REV]
                    .range(target..)
                    .next()
                    .map(|(k, _)| k.as_slice());
                assert_eq!(it.key(), want, "a reverse-order seek_for_prev differs");
            }
            7 => {
                // A seek inside the target's prefix: exactly the model's keys
                // of that prefix from the target on.
                let f = input.family() % 2;
                let target = input.key();
                let extractor = [PrefixExtractor::Fixed(2), OTHER_EXTRACTOR][f];
                let prefix = extractor.prefix(&target).expect("keys are in the domain");
                let end = extractor.prefix_end(prefix).expect("not all 0xff");
                let options = ReadOptions {
                    prefix_same_as_start: true,
                    ..ReadOptions::default()
                };
                let mut it = db.iter_cf_opt(&families[f], &options);
                it.seek(&target);
                let mut got = Vec::new();
                while let Some(k) = it.key() {
                    got.push(k.to_vec());
                    it.next();
                }
                it.status().expect("prefix seek");
                let want: Vec<Vec<u8>> = models[f]
                    .range(target..end)
                    .map(|(k, _)| k.clone())
                    .collect();
                assert_eq!(got, want, "a prefix seek differs from the model");
            }
            8 => {
                let f = input.family();
                let snapshot = db.snapshot();
                let frozen = models[f].clone();
                let k = input.key();
                db.put_cf(&families[f], &k, b"after the snapshot")
                    .expect("put");
                models[f].insert(k.clone(), b"after the snapshot".to_vec());
                history.push(models.clone());
                let options = ReadOptions {
                    snapshot: Some(snapshot.clone()),
                    ..ReadOptions::default()
                };
                let got = db
                    .get_cf_opt(&families[f], &options, &k)
                    .expect("snapshot get");
                assert_eq!(got.as_deref(), frozen.get(&k).map(Vec::as_slice));
            }
            9 => {
                // Flushing every family makes every write durable: a
                // family with a full memtable switches and syncs the shared
                // WAL, and one with an empty memtable has its writes in
                // tables. Flushing one family makes nothing else durable (an
                // empty one is not even a WAL switch).
                if input.byte() % 2 == 0 {
                    for cf in &families {
                        db.flush_cf(cf).expect("flush");
                    }
                    history = vec![models.clone()];
                } else {
                    db.flush_cf(&families[input.family()]).expect("flush");
                }
            }
            10 if input.byte() % 2 == 0 => {
                // An SstFileWriter file of puts, deletes and merges over a
                // few keys, in the family's order, ingested: it lands above
                // every earlier write, and (the WAL synced first) is a
                // durable point.
                let f = input.family();
                let options = options(&fs);
                let (other, rev) = family_options(&options);
                let cf_options = [options.cf_options(), other, rev];
                let mut keys: Vec<Vec<u8>> =
                    (0..1 + input.byte() % 6).map(|_| input.key()).collect();
                keys.sort();
                keys.dedup();
                if f == REV {
                    keys.reverse();
                }
                let path = Path::new("/in.sst");
                let mut writer =
                    SstFileWriter::create_with_fs(&fs, path, &cf_options[f]).expect("writer");
                for k in keys {
                    match input.byte() % 4 {
                        0 => {
                            writer.delete(&k).expect("file delete");
                            models[f].remove(&k);
                        }
                        1 => {
                            let v = input.value();
                            writer.merge(&k, &v).expect("file merge");
                            let merged = match models[f].get(&k) {
                                Some(old) => [old.as_slice(), b",", &v].concat(),
                                None => v,
                            };
                            models[f].insert(k, merged);
                        }
                        _ => {
                            let v = input.value();
                            writer.put(&k, &v).expect("file put");
                            models[f].insert(k, v);
                        }
                    }
                }
                writer.finish().expect("finish");
                db.ingest_external_file_cf(
                    &families[f],
                    &[path],
                    &IngestExternalFileOptions::default(),
                )
                .expect("ingest");
                fs.remove(path).expect("remove the file");
                history = vec![models.clone()];
            }
            10 => {
                let f = input.family();
                db.compact_range_cf(&families[f], None, None)
                    .expect("compact");
            }
            11 => {
                // A merge operand, appended with "," as the model does.
                let f = input.family();
                let (k, v) = (input.key(), input.value());
                db.merge_cf(&families[f], &k, &v).expect("merge");
                let merged = match models[f].get(&k) {
                    Some(old) => [old.as_slice(), b",", &v].concat(),
                    None => v,
                };
                models[f].insert(k, merged);
                history.push(models.clone());
            }
            _ => {
                // A clean close and reopen keeps everything; a power loss
                // keeps what was synced (or flushed).
                let crash = input.byte() % 2 == 0;
                if crash {
                    fs.halt();
                }
                drop(db);
                if crash {
                    fs.crash(CrashMode {
                        data: DataLoss::DropUnsynced,
                        lose_unsynced_dir_entries: true,
                    });
                }
                (db, families) = open(&fs);
                let recovered = scan(&db, &families);
                if crash {
                    assert!(
                        history.contains(&recovered),
                        "after power loss: not the state after any write since the last sync"
                    );
                } else {
                    assert!(recovered == models, "a clean reopen lost writes");
                }
                models = recovered;
                history = vec![models.clone()];
            }
        }
    }
    scan_matches(&db, &families, &models);
});
