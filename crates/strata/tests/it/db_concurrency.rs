//! Many writers and readers at once: no lost writes, batches seen atomically.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use strata::fs::SimFs;
use strata::{ReadOptions, WriteBatch, WriteOptions};

use crate::util::open_sim;

#[test]
fn four_writers_four_readers() {
    let fs = SimFs::new(7);
    let db = Arc::new(open_sim(&fs));
    let stop = Arc::new(AtomicBool::new(false));
    // Each writer owns keys w{t}-*; every batch writes the same value to a pair
    // of keys, so a reader seeing the two differ saw half a batch.
    let writers: Vec<_> = (0..4u32)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..1500u32 {
                    let mut batch = WriteBatch::new();
                    let v = format!("{t}-{i}");
                    batch
                        .put(format!("w{t}-a").as_bytes(), v.as_bytes())
                        .unwrap();
                    batch
                        .put(format!("w{t}-b").as_bytes(), v.as_bytes())
                        .unwrap();
                    batch
                        .put(format!("w{t}-{i:05}").as_bytes(), v.as_bytes())
                        .unwrap();
                    let sync = i % 100 == 0;
                    db.write(
                        &WriteOptions {
                            sync,
                            ..WriteOptions::default()
                        },
                        batch,
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..4u32)
        .map(|r| {
            let db = db.clone();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut checks = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let t = checks as u32 % 4;
                    let snap = db.snapshot();
                    let ro = ReadOptions {
                        snapshot: Some(snap.sequence()),
                        ..ReadOptions::default()
                    };
                    let a = db.get_opt(&ro, format!("w{t}-a").as_bytes()).unwrap();
                    let b = db.get_opt(&ro, format!("w{t}-b").as_bytes()).unwrap();
                    assert_eq!(a, b, "reader {r} saw half a batch");
                    // An iterator on the snapshot is stable: writes that land
                    // while it runs do not appear, and the pair agrees.
                    if checks % 16 == 0 {
                        let lower = format!("w{t}-").into_bytes();
                        let upper = format!("w{t}.").into_bytes();
                        let seen: Vec<_> = db
                            .range(&ro, lower.as_slice()..upper.as_slice())
                            .map(|e| e.unwrap())
                            .collect();
                        let again: Vec<_> = db
                            .range(&ro, lower.as_slice()..upper.as_slice())
                            .map(|e| e.unwrap())
                            .collect();
                        assert_eq!(
                            seen, again,
                            "reader {r}: iteration moved under its snapshot"
                        );
                        let value_of = |k: &str| {
                            seen.iter()
                                .find(|(key, _)| key == k.as_bytes())
                                .map(|(_, v)| v.clone())
                        };
                        assert_eq!(value_of(&format!("w{t}-a")), value_of(&format!("w{t}-b")));
                        // Keys w{t}-00000.. form a prefix of the writer's history.
                        let numbered = seen
                            .iter()
                            .filter(|(k, _)| k.len() == format!("w{t}-00000").len())
                            .count();
                        assert!(
                            seen.iter()
                                .filter(|(k, _)| k.len() == format!("w{t}-00000").len())
                                .enumerate()
                                .all(|(i, (k, _))| *k == format!("w{t}-{i:05}").into_bytes()),
                            "hole in w{t}: {numbered} keys"
                        );
                    }
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let checks: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(checks > 0);
    for t in 0..4u32 {
        for i in 0..1500u32 {
            let got = db.get(format!("w{t}-{i:05}").as_bytes()).unwrap();
            assert_eq!(
                got.as_deref(),
                Some(format!("{t}-{i}").as_bytes()),
                "lost write"
            );
        }
        assert_eq!(
            db.get(format!("w{t}-a").as_bytes()).unwrap().as_deref(),
            Some(format!("{t}-1499").as_bytes())
        );
    }
}
