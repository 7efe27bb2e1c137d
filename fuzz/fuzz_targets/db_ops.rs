//! Operation sequences against a `BTreeMap` model: the input is read as a
//! list of operations (put, delete, delete_range, merge, batch, get, scan,
//! snapshot read, flush, compaction, reopen, crash and reopen) on a small
//! database on the
//! simulated file system. Every read must agree with the model, and after a
//! crash the database must hold the model's state after some write at or
//! after the last sync (unsynced writes may or may not survive, in order).
#![no_main]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use strata::fs::sim::{CrashMode, DataLoss};
use strata::fs::SimFs;
use strata::merge::StringAppendOperator;
use strata::{Db, DbOptions, ReadOptions, WriteBatch, WriteOptions};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn options(fs: &SimFs) -> DbOptions {
    let mut o = DbOptions {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        fs: Arc::new(fs.clone()),
        merge_operator: Some(Arc::new(StringAppendOperator::new(b",".to_vec()))),
        ..DbOptions::default()
    };
    o.table.block_size = 256;
    o.compaction.level0_file_num_compaction_trigger = 2;
    o
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

    fn key(&mut self) -> Vec<u8> {
        // A small key space, so operations meet the same keys.
        format!("k{:02}", self.byte() % 40).into_bytes()
    }

    /// A range `[begin, end)` of a few keys of the key space.
    fn range(&mut self) -> (Vec<u8>, Vec<u8>) {
        let begin = self.byte() % 40;
        let width = 1 + self.byte() % 8;
        (
            format!("k{begin:02}").into_bytes(),
            format!("k{:02}", begin + width).into_bytes(),
        )
    }

    fn value(&mut self) -> Vec<u8> {
        let len = usize::from(self.byte()) * 3;
        let fill = self.byte();
        vec![fill; len]
    }
}

fn delete_range(model: &mut Model, begin: &[u8], end: &[u8]) {
    model.retain(|k, _| k.as_slice() < begin || k.as_slice() >= end);
}

fn scan_matches(db: &Db, model: &Model) {
    let got: Model = db
        .range(..)
        .map(|e| e.expect("scan"))
        .collect();
    assert!(&got == model, "scan differs from the model");
}

fuzz_target!(|data: &[u8]| {
    let fs = SimFs::new(u64::from(data.first().copied().unwrap_or(0)));
    let path = Path::new("/db");
    let mut db = Db::open(path, options(&fs)).expect("open");
    let mut model = Model::new();
    // The states since the last durable point, oldest first: a power loss
    // keeps one of them.
    let mut history = vec![Model::new()];
    let mut input = Input(data);
    let mut steps = 0;
    while !input.0.is_empty() && steps < 400 {
        steps += 1;
        match input.byte() % 13 {
            0..=3 => {
                let (k, v, sync) = (input.key(), input.value(), input.byte() % 8 == 0);
                db.put_opt(&WriteOptions { sync, ..WriteOptions::default() }, &k, &v)
                    .expect("put");
                model.insert(k, v);
                if sync {
                    history.clear();
                }
                history.push(model.clone());
            }
            4 => {
                if input.byte() % 3 == 0 {
                    let (begin, end) = input.range();
                    db.delete_range(&begin, &end).expect("delete_range");
                    delete_range(&mut model, &begin, &end);
                } else {
                    let k = input.key();
                    db.delete(&k).expect("delete");
                    model.remove(&k);
                }
                history.push(model.clone());
            }
            5 => {
                let mut batch = WriteBatch::new();
                for _ in 0..input.byte() % 5 {
                    let k = input.key();
                    let kind = input.byte() % 6;
                    if kind == 0 {
                        batch.delete(&k).expect("batch delete");
                        model.remove(&k);
                    } else if kind == 1 {
                        let (begin, end) = input.range();
                        batch.delete_range(&begin, &end).expect("batch delete_range");
                        delete_range(&mut model, &begin, &end);
                    } else {
                        let v = input.value();
                        batch.put(&k, &v).expect("batch put");
                        model.insert(k, v);
                    }
                }
                db.write(&WriteOptions::default(), batch).expect("write");
                history.push(model.clone());
            }
            6 => {
                let k = input.key();
                let got = db.get(&k).expect("get");
                assert_eq!(got.as_deref(), model.get(&k).map(Vec::as_slice));
            }
            7 => scan_matches(&db, &model),
            8 => {
                let snapshot = db.snapshot();
                let frozen = model.clone();
                let k = input.key();
                db.put(&k, b"after the snapshot").expect("put");
                model.insert(k.clone(), b"after the snapshot".to_vec());
                history.push(model.clone());
                let options = ReadOptions {
                    snapshot: Some(snapshot.clone()),
                    ..ReadOptions::default()
                };
                let got = db.get_opt(&options, &k).expect("snapshot get");
                assert_eq!(got.as_deref(), frozen.get(&k).map(Vec::as_slice));
            }
            9 => {
                db.flush().expect("flush");
                history = vec![model.clone()];
            }
            10 => {
                db.compact_range(None, None).expect("compact");
                history = vec![model.clone()];
            }
            11 => {
                // A merge operand, appended with "," as the model does.
                let (k, v) = (input.key(), input.value());
                db.merge(&k, &v).expect("merge");
                let merged = match model.get(&k) {
                    Some(old) => [old.as_slice(), b",", &v].concat(),
                    None => v,
                };
                model.insert(k, merged);
                history.push(model.clone());
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
                db = Db::open(path, options(&fs)).expect("reopen");
                let recovered: Model = db
                    .range(..)
                    .map(|e| e.expect("scan"))
                    .collect();
                if crash {
                    assert!(
                        history.contains(&recovered),
                        "after power loss: not the state after any write since the last sync"
                    );
                } else {
                    assert!(recovered == model, "a clean reopen lost writes");
                }
                model = recovered;
                history = vec![model.clone()];
            }
        }
    }
    scan_matches(&db, &model);
});
