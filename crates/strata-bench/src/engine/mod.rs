//! The engines a benchmark can drive (`--engine`): Strata, and as peers
//! built in only on request, RocksDB through the `rocksdb` crate (feature
//! `rocksdb`) and fjall (feature `fjall`). Every benchmark is generic over
//! [`Engine`], so each engine runs the identical workload generator in the
//! same process, and Strata's own path costs no dynamic dispatch.

#[cfg(feature = "fjall")]
mod fjall_engine;
#[cfg(feature = "rocksdb")]
mod rocks;
mod strata_engine;

use std::path::{Path, PathBuf};

use crate::flags::Flags;
use crate::report::WriteCounters;

#[cfg(feature = "fjall")]
pub use fjall_engine::FjallEngine;
#[cfg(feature = "rocksdb")]
pub use rocks::RocksEngine;
pub use strata_engine::StrataEngine;

/// An engine's error, as the benchmark reports it.
pub type OpError = Box<dyn std::error::Error + Send + Sync>;
pub type OpResult<T = ()> = Result<T, OpError>;
/// Takes one key and value of an SST file being written, keys in order.
pub type SstSink<'a> = dyn FnMut(&[u8], &[u8]) -> OpResult + 'a;
/// Fills an SST file through the sink it is handed.
pub type SstFill<'a> = dyn FnMut(&mut SstSink<'_>) -> OpResult + 'a;

/// Which engine `--engine` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    Strata,
    RocksDb,
    Fjall,
}

impl EngineKind {
    pub fn from_name(name: &str) -> Option<EngineKind> {
        Some(match name {
            "strata" => EngineKind::Strata,
            "rocksdb" => EngineKind::RocksDb,
            "fjall" => EngineKind::Fjall,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Strata => "strata",
            EngineKind::RocksDb => "rocksdb",
            EngineKind::Fjall => "fjall",
        }
    }
}

/// A key-value engine under benchmark. One value is one open database; the
/// environment (`Env`) is what outlives a reopen: statistics and the block
/// cache, shared by every database a run opens, as in db_bench.
pub trait Engine: Sized + Sync {
    type Env: Sync;
    type Batch;
    type Cursor<'a>: Cursor
    where
        Self: 'a;

    /// A line for the header: the engine, its version and how it is reached.
    fn describe() -> String;
    fn env(flags: &Flags) -> Result<Self::Env, String>;
    fn open(flags: &Flags, dir: &Path, env: &Self::Env) -> Result<Self, String>;
    /// Removes this engine's database files from `dir`, and nothing else.
    fn destroy(flags: &Flags, dir: &Path, env: &Self::Env) -> Result<(), String>;
    /// Closes the database, reporting what went wrong.
    fn close(self) -> Result<(), String>;
    /// The statistics report `--statistics=1` prints at the end of a run.
    fn statistics(env: &Self::Env) -> Option<String>;

    fn new_batch(&self) -> Self::Batch;
    fn batch_put(&self, batch: &mut Self::Batch, key: &[u8], value: &[u8]) -> OpResult;
    fn batch_delete(&self, batch: &mut Self::Batch, key: &[u8]) -> OpResult;
    /// Adds a deletion of every key in `[begin, end)` (`delete_range`); an
    /// engine without range deletions fails naming it.
    fn batch_delete_range(&self, batch: &mut Self::Batch, begin: &[u8], end: &[u8]) -> OpResult;
    fn write(&self, batch: Self::Batch) -> OpResult;
    fn put(&self, key: &[u8], value: &[u8]) -> OpResult;
    /// Merges `operand` into `key` with the `--merge_operator`.
    fn merge(&self, key: &[u8], operand: &[u8]) -> OpResult;
    /// The length of the value under `key`, if there is one.
    fn get(&self, key: &[u8]) -> OpResult<Option<usize>>;
    /// The value lengths of `keys`, in order, through the engine's batched
    /// read where it has one.
    fn multi_get(&self, keys: &[Vec<u8>]) -> OpResult<Vec<Option<usize>>>;
    fn cursor(&self) -> Self::Cursor<'_>;

    fn flush(&self) -> OpResult;
    /// Compacts the whole key space (db_bench's `compact`).
    fn compact_all(&self) -> OpResult;
    fn wait_for_compaction(&self) -> OpResult;
    /// A report by its Strata property name (`strata.stats`,
    /// `strata.levelstats`, `strata.sstables`), in the engine's own form;
    /// `None` when the engine has no such report.
    fn report(&self, property: &str) -> Option<String>;
    /// Bytes ingested and written to the WAL and tables so far, when the
    /// engine counts them.
    fn write_counters(&self) -> Option<WriteCounters>;
    /// Writes a table file for ingestion at `path` with the engine's own SST
    /// writer: `fill` is handed a sink taking keys in increasing order.
    fn write_sst(&self, path: &Path, fill: &mut SstFill<'_>) -> OpResult {
        let _ = (path, fill);
        Err(format!("{} has no SST writer", Self::describe()).into())
    }
    /// Serves the web view of this database on `addr` until the returned
    /// value is dropped; `Err` for an engine without one.
    fn web_view(&self, addr: &str) -> Result<Box<dyn std::any::Any>, String> {
        let _ = addr;
        Err(format!("--http_addr: {} has no web view", Self::describe()))
    }
    /// Starts counting the calling thread's perf context at RocksDB's level
    /// `level` (2 to 5), from zero.
    fn perf_begin(level: u32) {
        let _ = level;
    }
    /// The calling thread's perf context as RocksDB's `ToString` prints it;
    /// `None` when the engine has none. Stops counting.
    fn perf_report() -> Option<String> {
        None
    }
    /// Ingests `paths` (from [`write_sst`](Self::write_sst)), copying them,
    /// without reading them whole first (RocksDB's defaults).
    fn ingest(&self, paths: &[PathBuf]) -> OpResult {
        let _ = paths;
        Err(format!("{} cannot ingest table files", Self::describe()).into())
    }
}

/// A positioned iterator in RocksDB's style. An engine whose iterators only
/// run one way (`FjallEngine`) starts a new one on every seek and refuses a
/// change of direction with an error in `status`.
pub trait Cursor {
    fn seek(&mut self, key: &[u8]);
    fn seek_for_prev(&mut self, key: &[u8]);
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    fn valid(&self) -> bool;
    /// The current key; only while `valid`.
    fn key(&self) -> &[u8];
    /// The current value; only while `valid`.
    fn value(&self) -> &[u8];
    fn next(&mut self);
    fn prev(&mut self);
    fn status(&self) -> OpResult;
}

/// Why a peer engine is missing from this build, and how to get it.
pub fn not_built(kind: EngineKind) -> String {
    format!(
        "--engine={name}: this strata-bench was built without the `{name}` feature; \
         build it with `cargo build --release -p strata-bench --features {name}`{hint}",
        name = kind.name(),
        hint = if kind == EngineKind::RocksDb {
            " after `bash scripts/install-engine-build-deps.sh` (libclang); \
             it compiles RocksDB from source, 20-40 minutes on 2 cores"
        } else {
            ""
        }
    )
}
