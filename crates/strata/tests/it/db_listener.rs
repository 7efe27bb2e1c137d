//! Event listeners: what they are told agrees with the tickers and with the
//! files the database ends with, through flushes, automatic and manual
//! compactions, ingestion, and a close that delivers every queued event.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use strata::filename::parse_file_name;
use strata::fs::{Fs, SimFs};
use strata::listener::{
    CompactionJobInfo, EventListener, ExternalFileIngestionInfo, FlushJobInfo,
    TableFileCreationInfo, TableFileDeletionInfo, WriteStallInfo,
};
use strata::{
    CfOptions, Db, DbOptions, Histogram, IngestExternalFileOptions, SstFileWriter, Statistics,
    Ticker,
};

use crate::util::{sim_options, small_leveled};

/// Everything it was told.
#[derive(Debug, Default)]
struct Recorder {
    flush_begun: Mutex<Vec<FlushJobInfo>>,
    flushed: Mutex<Vec<FlushJobInfo>>,
    compactions_begun: Mutex<Vec<CompactionJobInfo>>,
    compacted: Mutex<Vec<CompactionJobInfo>>,
    created: Mutex<Vec<TableFileCreationInfo>>,
    deleted: Mutex<Vec<TableFileDeletionInfo>>,
    ingested: Mutex<Vec<ExternalFileIngestionInfo>>,
    stalls: Mutex<Vec<WriteStallInfo>>,
}

impl EventListener for Recorder {
    fn on_flush_begin(&self, info: &FlushJobInfo) {
        self.flush_begun.lock().push(info.clone());
    }
    fn on_flush_completed(&self, info: &FlushJobInfo) {
        self.flushed.lock().push(info.clone());
    }
    fn on_compaction_begin(&self, info: &CompactionJobInfo) {
        self.compactions_begun.lock().push(info.clone());
    }
    fn on_compaction_completed(&self, info: &CompactionJobInfo) {
        self.compacted.lock().push(info.clone());
    }
    fn on_table_file_created(&self, info: &TableFileCreationInfo) {
        self.created.lock().push(info.clone());
    }
    fn on_table_file_deleted(&self, info: &TableFileDeletionInfo) {
        self.deleted.lock().push(info.clone());
    }
    fn on_external_file_ingested(&self, info: &ExternalFileIngestionInfo) {
        self.ingested.lock().push(info.clone());
    }
    fn on_stall_conditions_changed(&self, info: &WriteStallInfo) {
        self.stalls.lock().push(info.clone());
    }
}

fn number_of(path: &Path) -> u64 {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap();
    match parse_file_name(name) {
        Some(strata::filename::FileType::Table(n)) => n,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn listeners_agree_with_the_tickers_and_the_files() {
    let fs = SimFs::new(71);
    let stats = Arc::new(Statistics::new());
    let recorder = Arc::new(Recorder::default());
    let options = DbOptions {
        statistics: Some(stats.clone()),
        listeners: vec![recorder.clone()],
        compaction: small_leveled(),
        ..sim_options(&fs)
    };
    let db = Db::open(Path::new("/db"), options).unwrap();
    for round in 0..4u32 {
        for i in 0..3000u32 {
            let key = format!("k{:05}", (i * 7919 + round) % 5000);
            db.put(key, format!("value {round} {i} ").repeat(4))
                .unwrap();
        }
        if round == 2 {
            db.delete_range("k01000", "k02000").unwrap();
        }
    }
    db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
    fs.create_dir_all(Path::new("/in")).unwrap();
    let mut w =
        SstFileWriter::create_with_fs(&fs, Path::new("/in/a.sst"), &CfOptions::default()).unwrap();
    w.put("z1", "1").unwrap();
    w.finish().unwrap();
    db.ingest_external_file(
        &[Path::new("/in/a.sst")],
        &IngestExternalFileOptions::default(),
    )
    .unwrap();
    db.wait_for_compaction().unwrap();
    db.close().unwrap();

    let flushed = recorder.flushed.lock();
    assert!(flushed.len() >= 5, "{} flushes", flushed.len());
    assert_eq!(recorder.flush_begun.lock().len(), flushed.len());
    assert_eq!(
        stats.histogram(Histogram::FlushTime).count,
        flushed.len() as u64
    );
    let flushed_bytes: u64 = flushed.iter().map(|f| f.file_size + f.blob_bytes).sum();
    assert_eq!(stats.ticker(Ticker::FlushWriteBytes), flushed_bytes);

    let compacted = recorder.compacted.lock();
    assert_eq!(recorder.compactions_begun.lock().len(), compacted.len());
    assert!(
        compacted.iter().all(|c| c.status.is_none()),
        "a compaction failed"
    );
    let merged: Vec<&CompactionJobInfo> = compacted
        .iter()
        .filter(|c| !c.stats.is_trivial_move)
        .collect();
    assert!(!merged.is_empty());
    assert_eq!(
        stats.histogram(Histogram::CompactionTime).count,
        merged.len() as u64
    );
    let written: u64 = compacted.iter().map(|c| c.stats.total_output_bytes).sum();
    assert_eq!(stats.ticker(Ticker::CompactWriteBytes), written);
    let dropped: u64 = compacted.iter().map(|c| c.stats.num_dropped_records).sum();
    let ticked = stats.ticker(Ticker::CompactionKeyDropNewerEntry)
        + stats.ticker(Ticker::CompactionKeyDropObsolete)
        + stats.ticker(Ticker::CompactionKeyDropRangeDel);
    assert_eq!(dropped, ticked);
    assert!(dropped > 0);

    // Tables: every one created was a flush's or a merging compaction's
    // output; the ones created (and ingested) minus the ones deleted are
    // exactly the live ones.
    let created = recorder.created.lock();
    let outputs: usize = merged.iter().map(|c| c.output_files.len()).sum();
    let flush_tables = flushed.iter().filter(|f| f.file_size > 0).count();
    assert_eq!(created.len(), flush_tables + outputs);
    let ingested = recorder.ingested.lock();
    assert_eq!(ingested.len(), 1);
    let mut alive: BTreeSet<u64> = created.iter().map(|c| number_of(&c.file_path)).collect();
    alive.extend(ingested.iter().map(|i| number_of(&i.internal_file_path)));
    for d in recorder.deleted.lock().iter() {
        assert!(
            alive.remove(&number_of(&d.file_path)),
            "deleted a table never created: {d:?}"
        );
    }
    let reopened = Db::open(Path::new("/db"), sim_options(&fs)).unwrap();
    let live: BTreeSet<u64> = reopened.live_files().iter().map(|&(_, n, _)| n).collect();
    assert_eq!(alive, live);
    let on_disk: BTreeSet<PathBuf> = fs
        .list(Path::new("/db"))
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".sst"))
        .map(|n| Path::new("/db").join(n))
        .collect();
    assert_eq!(on_disk.len(), live.len());
    // Stall changes are changes.
    assert!(recorder
        .stalls
        .lock()
        .iter()
        .all(|s| s.current != s.previous));
}
