//! `Db`, its column families and snapshots: the dict protocol on bytes.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use strata::ReadOptions;

use crate::batch::{BatchContext, WriteBatch};
use crate::iter::{Items, Kind, RawIterator, Span};
use crate::options::{Options, PyReadOptions, WriteOptions};
use crate::{bytes_of, engine_call, fork, to_py, Error};

/// The open engine, shared with the families, snapshots and iterators made
/// from it, so each can tell that it was closed.
#[derive(Debug)]
pub(crate) struct Shared {
    db: RwLock<Option<strata::Db>>,
    /// Set by `close` before it takes `db`: a check of it costs an atomic
    /// load, where a look at `db` takes the lock (iterators check it for
    /// every entry).
    closed: AtomicBool,
    /// The fork generation of the process that opened it (see `fork`).
    generation: u64,
}

impl Shared {
    /// Whether this process is a fork of the one that opened the database.
    fn forked(&self) -> bool {
        self.generation != fork::generation()
    }

    /// `strata.Error` once closed, or in a forked child.
    pub(crate) fn check_open(&self) -> PyResult<()> {
        if self.forked() {
            return Err(fork::forked_error());
        }
        match self.closed.load(Ordering::Acquire) {
            false => Ok(()),
            true => Err(Error::new_err("database is closed")),
        }
    }

    /// A handle of the open database, or `strata.Error` once closed or in a
    /// forked child (checked before the lock, which a parent's thread may
    /// have held at the fork).
    pub(crate) fn db(&self) -> PyResult<strata::Db> {
        if self.forked() {
            return Err(fork::forked_error());
        }
        self.db
            .read()
            .clone()
            .ok_or_else(|| Error::new_err("database is closed"))
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // In a forked child, closing would join threads the child does not
        // have and unlock the LOCK file its parent still holds: leak the
        // handle instead.
        if self.forked() {
            std::mem::forget(self.db.get_mut().take());
        }
    }
}

/// A Python snapshot's hold on the engine's, shared with the iterators
/// made through it. Once released, every read through it (theirs too)
/// raises `strata.Error`: reading the present instead, as a missing engine
/// snapshot would, returns wrong answers without a word.
#[derive(Debug)]
pub(crate) struct SnapshotHold {
    /// Set by `release` before it lets go of `snapshot`: iterators check it
    /// for every entry, so a check costs an atomic load.
    released: AtomicBool,
    snapshot: Mutex<Option<strata::Snapshot>>,
}

impl SnapshotHold {
    fn new(snapshot: strata::Snapshot) -> SnapshotHold {
        SnapshotHold {
            released: AtomicBool::new(false),
            snapshot: Mutex::new(Some(snapshot)),
        }
    }

    /// `strata.Error` once released.
    pub(crate) fn check(&self) -> PyResult<()> {
        match self.released.load(Ordering::Acquire) {
            false => Ok(()),
            true => Err(released_error()),
        }
    }

    /// The engine's snapshot, or `strata.Error` once released.
    fn get(&self) -> PyResult<strata::Snapshot> {
        self.snapshot.lock().clone().ok_or_else(released_error)
    }

    /// Lets go of the engine's snapshot (iterators made through it keep
    /// their clones until they are dropped, but read nothing more).
    fn release(&self) {
        self.released.store(true, Ordering::Release);
        self.snapshot.lock().take();
    }
}

fn released_error() -> PyErr {
    Error::new_err("the snapshot was released; take a new one with db.snapshot()")
}

/// What reads and writes go to: a family of an open database, at a
/// snapshot when `snapshot` is set (reads only).
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) shared: Arc<Shared>,
    pub(crate) cf: strata::ColumnFamily,
    pub(crate) snapshot: Option<Arc<SnapshotHold>>,
}

impl Target {
    /// The engine's read options for `given` (the defaults when `None`), at
    /// the snapshot if there is one; `strata.Error` once it is released.
    fn read(&self, given: Option<&PyReadOptions>) -> PyResult<ReadOptions> {
        let snapshot = self.snapshot.as_ref().map(|hold| hold.get()).transpose()?;
        Ok(match given {
            Some(given) => given.engine(snapshot),
            None => ReadOptions {
                snapshot,
                ..ReadOptions::default()
            },
        })
    }

    /// `strata.Error` once the database is closed or the snapshot released:
    /// what iterators check before every step.
    pub(crate) fn check_readable(&self) -> PyResult<()> {
        self.shared.check_open()?;
        match &self.snapshot {
            Some(hold) => hold.check(),
            None => Ok(()),
        }
    }

    /// The value of `key`, read with the interpreter let go of.
    ///
    /// Asking memory first with the interpreter held (`kBlockCacheTier`,
    /// then the full read only when that is `Incomplete`) made warm reads
    /// of 4 threads twice as fast, but starved a writing thread: it lets go
    /// for each write and then waits out Python's switch interval for the
    /// interpreter back (under 1,000 writes/s beside 4 readers, against
    /// about 30,000 when every call lets go). So every read lets go.
    fn get(
        &self,
        py: Python<'_>,
        key: &[u8],
        read: ReadOptions,
    ) -> PyResult<Option<strata::Bytes>> {
        let db = self.shared.db()?;
        engine_call(py, || db.get_cf_opt(&self.cf, &read, key)).map_err(to_py)
    }

    fn put(&self, py: Python<'_>, key: &[u8], value: &[u8]) -> PyResult<()> {
        let db = self.shared.db()?;
        engine_call(py, || db.put_cf(&self.cf, key, value)).map_err(to_py)
    }

    fn delete(&self, py: Python<'_>, key: &[u8]) -> PyResult<()> {
        let db = self.shared.db()?;
        engine_call(py, || db.delete_cf(&self.cf, key)).map_err(to_py)
    }

    fn items(&self, read: ReadOptions, kind: Kind, span: Span) -> PyResult<Items> {
        Items::new(self, read, kind, span)
    }
}

/// The dict protocol and the rest, shared by `Db`, `ColumnFamily` and
/// `Snapshot` (which reads at its point in time and writes nothing).
macro_rules! reads {
    ($class:ty) => {
        #[pymethods]
        impl $class {
            fn __getitem__<'py>(
                &self,
                py: Python<'py>,
                key: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyBytes>> {
                let k = bytes_of(key, "key")?;
                match self.target().get(py, k, self.target().read(None)?)? {
                    Some(v) => Ok(PyBytes::new(py, &v)),
                    None => Err(PyKeyError::new_err(key.clone().unbind())),
                }
            }

            fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                let k = bytes_of(key, "key")?;
                Ok(self.target().get(py, k, self.target().read(None)?)?.is_some())
            }

            /// The value of `key`, or `default` when it is missing.
            #[pyo3(signature = (key, default=None, read_options=None))]
            fn get<'py>(
                &self,
                py: Python<'py>,
                key: &Bound<'py, PyAny>,
                default: Option<Bound<'py, PyAny>>,
                read_options: Option<PyRef<'py, PyReadOptions>>,
            ) -> PyResult<Option<Bound<'py, PyAny>>> {
                let k = bytes_of(key, "key")?;
                let read = self.target().read(read_options.as_deref())?;
                Ok(match self.target().get(py, k, read)? {
                    Some(v) => Some(PyBytes::new(py, &v).into_any()),
                    None => default,
                })
            }

            /// The values of `keys` in one batched lookup, `None` where missing.
            #[pyo3(signature = (keys, read_options=None))]
            fn get_many<'py>(
                &self,
                py: Python<'py>,
                keys: &Bound<'py, PyAny>,
                read_options: Option<PyRef<'py, PyReadOptions>>,
            ) -> PyResult<Bound<'py, PyList>> {
                let objects: Vec<Bound<'py, PyAny>> = keys.try_iter()?.collect::<PyResult<_>>()?;
                let mut slices: Vec<&[u8]> = Vec::with_capacity(objects.len());
                for key in &objects {
                    slices.push(bytes_of(key, "key")?);
                }
                let target = self.target();
                let db = target.shared.db()?;
                let read = self.target().read(read_options.as_deref())?;
                let found = engine_call(py, || db.multi_get_cf(&target.cf, &read, &slices));
                let out = PyList::empty(py);
                for value in found {
                    match value.map_err(to_py)? {
                        Some(v) => out.append(PyBytes::new(py, &v))?,
                        None => out.append(py.None())?,
                    }
                }
                Ok(out)
            }

            /// Keys from `start` (inclusive) to `stop` (exclusive), or with
            /// `prefix`, in key order or `reverse`d, read lazily.
            #[pyo3(signature = (start=None, stop=None, prefix=None, reverse=false, read_options=None))]
            fn keys(
                &self,
                start: Option<&Bound<'_, PyAny>>,
                stop: Option<&Bound<'_, PyAny>>,
                prefix: Option<&Bound<'_, PyAny>>,
                reverse: bool,
                read_options: Option<PyRef<'_, PyReadOptions>>,
            ) -> PyResult<Items> {
                let span = Span::new(start, stop, prefix, reverse)?;
                let target = self.target();
                target.items(target.read(read_options.as_deref())?, Kind::Keys, span)
            }

            /// Values, as `keys` takes its arguments.
            #[pyo3(signature = (start=None, stop=None, prefix=None, reverse=false, read_options=None))]
            fn values(
                &self,
                start: Option<&Bound<'_, PyAny>>,
                stop: Option<&Bound<'_, PyAny>>,
                prefix: Option<&Bound<'_, PyAny>>,
                reverse: bool,
                read_options: Option<PyRef<'_, PyReadOptions>>,
            ) -> PyResult<Items> {
                let span = Span::new(start, stop, prefix, reverse)?;
                let target = self.target();
                target.items(target.read(read_options.as_deref())?, Kind::Values, span)
            }

            /// `(key, value)` pairs, as `keys` takes its arguments.
            #[pyo3(signature = (start=None, stop=None, prefix=None, reverse=false, read_options=None))]
            fn items(
                &self,
                start: Option<&Bound<'_, PyAny>>,
                stop: Option<&Bound<'_, PyAny>>,
                prefix: Option<&Bound<'_, PyAny>>,
                reverse: bool,
                read_options: Option<PyRef<'_, PyReadOptions>>,
            ) -> PyResult<Items> {
                let span = Span::new(start, stop, prefix, reverse)?;
                let target = self.target();
                target.items(target.read(read_options.as_deref())?, Kind::Items, span)
            }

            fn __iter__(&self) -> PyResult<Items> {
                let target = self.target();
                target.items(target.read(None)?, Kind::Keys, Span::all())
            }

            /// A raw iterator: `seek`, `seek_to_first`, `seek_to_last`,
            /// `seek_for_prev`, `next`, `prev`, `valid`, `key`, `value`.
            #[pyo3(signature = (read_options=None))]
            fn iterator(
                &self,
                read_options: Option<PyRef<'_, PyReadOptions>>,
            ) -> PyResult<RawIterator> {
                let target = self.target();
                RawIterator::new(target, target.read(read_options.as_deref())?)
            }

            /// `len()` is not offered: an LSM tree cannot count its keys
            /// without reading them all. Use `property("rocksdb.estimate-num-keys")`.
            fn __len__(&self) -> PyResult<usize> {
                Err(pyo3::exceptions::PyTypeError::new_err(
                    "a strata database has no cheap len(); count keys() or read \
                     property('rocksdb.estimate-num-keys')",
                ))
            }
        }
    };
}

/// A Strata database: an embedded LSM-tree key-value store, bytes in and
/// bytes out. `Db(path)` creates it when missing; use it as a context
/// manager or call `close()`.
///
/// - Dict protocol: `db[k] = v`, `db[k]` (KeyError when missing),
///   `del db[k]`, `k in db`, `get(k, default)`, `get_many(keys)`. No
///   `len()`: read `property("rocksdb.estimate-num-keys")`.
/// - Iteration: `keys()`, `values()`, `items()` with `start`, `stop`,
///   `prefix`, `reverse`; `iterator()` for a raw, seekable cursor.
/// - Writes: `put`, `delete`, `merge`, `delete_range`; `write(batch)` and
///   `with db.write_batch() as wb:` for atomic batches.
/// - Views and families: `snapshot()`, `create_column_family`,
///   `get_column_family`, `drop_column_family`.
/// - Operations: `flush`, `flush_wal`, `compact_range`, `wait_for_compaction`,
///   `checkpoint`, `ingest_external_file`, `set_options`,
///   `set_db_options`, `property`; `Db.repair`, `Db.destroy`,
///   `Db.list_column_families`.
///
/// Engine errors raise `strata.Error` or a subclass. Every engine call
/// lets go of the interpreter, so threads read and write side by side.
#[pyclass(module = "strata", frozen)]
pub struct Db {
    target: Target,
    path: String,
}

/// One column family: the dict protocol of `Db`, on its own keys.
#[pyclass(module = "strata", frozen)]
pub struct ColumnFamily {
    target: Target,
}

/// A point-in-time view: reads through it never see later writes.
#[pyclass(module = "strata", frozen)]
pub struct Snapshot {
    /// Its `snapshot` is always set.
    target: Target,
}

impl Db {
    /// Borrowed: a read clones nothing but the engine handle it uses.
    pub(crate) fn target(&self) -> &Target {
        &self.target
    }
}

impl ColumnFamily {
    pub(crate) fn handle(&self) -> strata::ColumnFamily {
        self.target.cf.clone()
    }

    /// Borrowed: a read clones nothing but the engine handle it uses.
    pub(crate) fn target(&self) -> &Target {
        &self.target
    }
}

impl Snapshot {
    /// Borrowed: a read clones nothing but the engine handle it uses.
    fn target(&self) -> &Target {
        &self.target
    }
}

reads!(Db);
reads!(ColumnFamily);
reads!(Snapshot);

/// Writes shared by `Db` and `ColumnFamily`.
macro_rules! writes {
    ($class:ty) => {
        #[pymethods]
        impl $class {
            fn __setitem__(
                &self,
                py: Python<'_>,
                key: &Bound<'_, PyAny>,
                value: &Bound<'_, PyAny>,
            ) -> PyResult<()> {
                self.target
                    .put(py, bytes_of(key, "key")?, bytes_of(value, "value")?)
            }

            fn __delitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
                self.target.delete(py, bytes_of(key, "key")?)
            }

            /// Sets `key` to `value`; `sync` waits for the WAL on disk.
            /// `write_options`, when given, says how instead.
            #[pyo3(signature = (key, value, sync=false, write_options=None))]
            fn put(
                &self,
                py: Python<'_>,
                key: &Bound<'_, PyAny>,
                value: &Bound<'_, PyAny>,
                sync: bool,
                write_options: Option<PyRef<'_, WriteOptions>>,
            ) -> PyResult<()> {
                let (k, v) = (bytes_of(key, "key")?, bytes_of(value, "value")?);
                let mut batch = strata::WriteBatch::new();
                batch.put_cf(&self.target.cf, k, v).map_err(to_py)?;
                let options = write_options_of(sync, false, write_options);
                write(py, &self.target, batch, &options)
            }

            /// Deletes `key` (missing is fine); `sync` and `write_options` as
            /// `put` takes them.
            #[pyo3(signature = (key, sync=false, write_options=None))]
            fn delete(
                &self,
                py: Python<'_>,
                key: &Bound<'_, PyAny>,
                sync: bool,
                write_options: Option<PyRef<'_, WriteOptions>>,
            ) -> PyResult<()> {
                let mut batch = strata::WriteBatch::new();
                batch
                    .delete_cf(&self.target.cf, bytes_of(key, "key")?)
                    .map_err(to_py)?;
                let options = write_options_of(sync, false, write_options);
                write(py, &self.target, batch, &options)
            }

            /// Merges `operand` into `key` with the family's merge operator
            /// (`Options(merge_operator="uint64add")`, say).
            #[pyo3(signature = (key, operand, write_options=None))]
            fn merge(
                &self,
                py: Python<'_>,
                key: &Bound<'_, PyAny>,
                operand: &Bound<'_, PyAny>,
                write_options: Option<PyRef<'_, WriteOptions>>,
            ) -> PyResult<()> {
                let (k, v) = (bytes_of(key, "key")?, bytes_of(operand, "operand")?);
                let mut batch = strata::WriteBatch::new();
                batch.merge_cf(&self.target.cf, k, v).map_err(to_py)?;
                let options = write_options_of(false, false, write_options);
                write(py, &self.target, batch, &options)
            }

            /// Deletes every key in [`begin`, `end`) with one range deletion.
            #[pyo3(signature = (begin, end, write_options=None))]
            fn delete_range(
                &self,
                py: Python<'_>,
                begin: &Bound<'_, PyAny>,
                end: &Bound<'_, PyAny>,
                write_options: Option<PyRef<'_, WriteOptions>>,
            ) -> PyResult<()> {
                let (b, e) = (bytes_of(begin, "begin")?, bytes_of(end, "end")?);
                let mut batch = strata::WriteBatch::new();
                batch
                    .delete_range_cf(&self.target.cf, b, e)
                    .map_err(to_py)?;
                let options = write_options_of(false, false, write_options);
                write(py, &self.target, batch, &options)
            }

            /// Writes the memtable to a table file.
            fn flush(&self, py: Python<'_>) -> PyResult<()> {
                let db = self.target.shared.db()?;
                engine_call(py, || db.flush_cf(&self.target.cf)).map_err(to_py)
            }

            /// Compacts the keys in [`begin`, `end`] (all by default).
            #[pyo3(signature = (begin=None, end=None))]
            fn compact_range(
                &self,
                py: Python<'_>,
                begin: Option<&Bound<'_, PyAny>>,
                end: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<()> {
                let db = self.target.shared.db()?;
                let b = begin.map(|k| bytes_of(k, "begin")).transpose()?;
                let e = end.map(|k| bytes_of(k, "end")).transpose()?;
                engine_call(py, || db.compact_range_cf(&self.target.cf, b, e)).map_err(to_py)
            }

            /// A property such as `rocksdb.stats` or
            /// `rocksdb.estimate-num-keys`; `None` when unknown.
            fn property(&self, name: &str) -> PyResult<Option<String>> {
                Ok(self.target.shared.db()?.property_cf(&self.target.cf, name))
            }
        }
    };
}

writes!(Db);
writes!(ColumnFamily);

/// `write_options` when given, else `sync` and `disable_wal`.
fn write_options_of(
    sync: bool,
    disable_wal: bool,
    write_options: Option<PyRef<'_, WriteOptions>>,
) -> WriteOptions {
    match write_options {
        Some(given) => given.clone(),
        None => WriteOptions { sync, disable_wal },
    }
}

/// Applies `batch` with `options`, the interpreter detached.
pub(crate) fn write(
    py: Python<'_>,
    target: &Target,
    batch: strata::WriteBatch,
    options: &WriteOptions,
) -> PyResult<()> {
    let db = target.shared.db()?;
    let options = options.engine();
    engine_call(py, move || db.write(&options, batch)).map_err(to_py)
}

#[pymethods]
impl Db {
    /// Opens the database in `path`, creating it when missing (unless
    /// `options` says `create_if_missing=False`). `column_families` maps
    /// family names to their `Options`; families it names that the
    /// database lacks are created. A database that exists opens with the
    /// options its newest OPTIONS file records (every family's merge
    /// operator and comparator among them), with only the options set by
    /// name in `options` and `column_families` changed.
    #[new]
    #[pyo3(signature = (path, options=None, column_families=None, read_only=false))]
    fn open(
        py: Python<'_>,
        path: std::path::PathBuf,
        options: Option<Options>,
        column_families: Option<&Bound<'_, PyDict>>,
        read_only: bool,
    ) -> PyResult<Db> {
        let mut named: Vec<(String, Options)> = Vec::new();
        if let Some(map) = column_families {
            for (name, family) in map.iter() {
                named.push((name.extract()?, family.extract()?));
            }
        }
        let (db_options, families) =
            engine_call(py, || crate::open::open_options(&path, options, named))?;
        let opened = engine_call(py, || match read_only {
            true => strata::Db::open_cf_read_only(&path, db_options, families),
            false => strata::Db::open_cf(&path, db_options, families),
        });
        let db = opened.map_err(to_py)?;
        let cf = db.default_cf();
        Ok(Db {
            target: Target {
                shared: Arc::new(Shared {
                    db: RwLock::new(Some(db)),
                    closed: AtomicBool::new(false),
                    generation: fork::generation(),
                }),
                cf,
                snapshot: None,
            },
            path: path.display().to_string(),
        })
    }

    /// Closes the database: writes made without the WAL are flushed and the
    /// WAL synced. Using it (or an iterator of it) afterwards raises
    /// `strata.Error`. Closing twice is fine.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let shared = &self.target.shared;
        shared.closed.store(true, Ordering::Release);
        if shared.forked() {
            // The parent's to close; the handle is leaked (see `Shared`).
            if let Some(mut held) = shared.db.try_write() {
                std::mem::forget(held.take());
            }
            return Ok(());
        }
        let taken = shared.db.write().take();
        match taken {
            Some(db) => engine_call(py, || db.close()).map_err(to_py),
            None => Ok(()),
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    /// Deletes the database in `path` (every file of the engine's).
    #[staticmethod]
    fn destroy(py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        engine_call(py, || {
            strata::Db::destroy(&path, &strata::DbOptions::default())
        })
        .map_err(to_py)
    }

    /// The names of the column families of the database in `path`.
    #[staticmethod]
    fn list_column_families(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Vec<String>> {
        engine_call(py, || {
            strata::Db::list_column_families(&path, &strata::DbOptions::default())
        })
        .map_err(to_py)
    }

    /// Creates the column family `name`.
    #[pyo3(signature = (name, options=None))]
    fn create_column_family(
        &self,
        py: Python<'_>,
        name: &str,
        options: Option<Options>,
    ) -> PyResult<ColumnFamily> {
        let db = self.target.shared.db()?;
        let cf_options = options.unwrap_or_else(Options::defaults).cf();
        let cf = engine_call(py, || db.create_column_family(name, cf_options)).map_err(to_py)?;
        Ok(ColumnFamily {
            target: Target {
                shared: self.target.shared.clone(),
                cf,
                snapshot: None,
            },
        })
    }

    /// The column family `name`; `KeyError` when the database has none.
    fn get_column_family(&self, name: &str) -> PyResult<ColumnFamily> {
        let db = self.target.shared.db()?;
        let cf = db
            .cf_handle(name)
            .ok_or_else(|| PyKeyError::new_err(format!("no column family {name:?}")))?;
        Ok(ColumnFamily {
            target: Target {
                shared: self.target.shared.clone(),
                cf,
                snapshot: None,
            },
        })
    }

    /// Drops the column family `name`.
    fn drop_column_family(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let db = self.target.shared.db()?;
        let cf = db
            .cf_handle(name)
            .ok_or_else(|| PyKeyError::new_err(format!("no column family {name:?}")))?;
        engine_call(py, || db.drop_column_family(&cf)).map_err(to_py)
    }

    /// Applies `batch` atomically; `write_options`, when given, instead of
    /// `sync` and `disable_wal`.
    #[pyo3(signature = (batch, sync=false, disable_wal=false, write_options=None))]
    fn write(
        &self,
        py: Python<'_>,
        batch: &WriteBatch,
        sync: bool,
        disable_wal: bool,
        write_options: Option<PyRef<'_, WriteOptions>>,
    ) -> PyResult<()> {
        let options = write_options_of(sync, disable_wal, write_options);
        write(py, &self.target, batch.take()?, &options)
    }

    /// `with db.write_batch() as wb:` collects writes and applies them
    /// atomically on leaving the block, or drops them on an exception.
    #[pyo3(signature = (sync=false, disable_wal=false, write_options=None))]
    fn write_batch(
        &self,
        sync: bool,
        disable_wal: bool,
        write_options: Option<PyRef<'_, WriteOptions>>,
    ) -> PyResult<BatchContext> {
        let options = write_options_of(sync, disable_wal, write_options);
        BatchContext::new(self.target.clone(), options)
    }

    /// A snapshot of the database now; usable as a context manager, which
    /// releases it on exit.
    fn snapshot(&self) -> PyResult<Snapshot> {
        let snapshot = self.target.shared.db()?.snapshot();
        Ok(Snapshot {
            target: Target {
                snapshot: Some(Arc::new(SnapshotHold::new(snapshot))),
                ..self.target.clone()
            },
        })
    }

    /// Makes an openable copy of the database in `path`, which must not exist.
    fn checkpoint(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        let db = self.target.shared.db()?;
        engine_call(py, || db.create_checkpoint(&path)).map_err(to_py)
    }

    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    fn __repr__(&self) -> String {
        format!("strata.Db({:?})", self.path)
    }
}

#[pymethods]
impl Snapshot {
    /// Releases the snapshot: every read through it afterwards, and every
    /// step of an iterator made through it, raises `strata.Error`.
    /// Releasing twice is fine.
    fn release(&self) {
        if let Some(hold) = &self.target.snapshot {
            hold.release();
        }
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.release();
        false
    }
}
