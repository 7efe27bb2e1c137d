//! Operations beyond reads and writes: building tables with
//! `SstFileWriter` and ingesting them, changing options on an open
//! database, waiting for compactions, and repairing a database.

use std::path::PathBuf;

use parking_lot::Mutex;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use strata::IngestExternalFileOptions;

use crate::db::{ColumnFamily, Db, Target};
use crate::options::{option_text, Options};
use crate::{bytes_of, engine_call, to_py, Error};

/// Writes a table file to ingest later (`Db.ingest_external_file`): keys in
/// ascending order, each once. `finish()` completes the file and returns
/// what it holds.
#[pyclass(module = "strata", frozen)]
pub struct SstFileWriter {
    writer: Mutex<Option<strata::SstFileWriter>>,
}

impl SstFileWriter {
    fn with(
        &self,
        f: impl FnOnce(&mut strata::SstFileWriter) -> strata::Result<()>,
    ) -> PyResult<()> {
        let mut writer = self.writer.lock();
        let writer = writer
            .as_mut()
            .ok_or_else(|| Error::new_err("this SstFileWriter is finished"))?;
        f(writer).map_err(to_py)
    }
}

#[pymethods]
impl SstFileWriter {
    /// Creates the file `path` for a family with `options` (its key order,
    /// compression and block settings).
    #[new]
    #[pyo3(signature = (path, options=None))]
    fn new(py: Python<'_>, path: PathBuf, options: Option<Options>) -> PyResult<SstFileWriter> {
        let cf = options.unwrap_or_else(Options::defaults).cf();
        let writer =
            engine_call(py, || strata::SstFileWriter::create(&path, &cf)).map_err(to_py)?;
        Ok(SstFileWriter {
            writer: Mutex::new(Some(writer)),
        })
    }

    /// Adds `key` with `value`; keys must come in ascending order.
    fn put(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let (k, v) = (bytes_of(key, "key")?, bytes_of(value, "value")?);
        self.with(|w| w.put(k, v))
    }

    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.put(key, value)
    }

    /// Adds a merge operand for `key`.
    fn merge(&self, key: &Bound<'_, PyAny>, operand: &Bound<'_, PyAny>) -> PyResult<()> {
        let (k, v) = (bytes_of(key, "key")?, bytes_of(operand, "operand")?);
        self.with(|w| w.merge(k, v))
    }

    /// Adds a deletion of `key`.
    fn delete(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        let k = bytes_of(key, "key")?;
        self.with(|w| w.delete(k))
    }

    /// Adds a deletion of every key in [`begin`, `end`).
    fn delete_range(&self, begin: &Bound<'_, PyAny>, end: &Bound<'_, PyAny>) -> PyResult<()> {
        let (b, e) = (bytes_of(begin, "begin")?, bytes_of(end, "end")?);
        self.with(|w| w.delete_range(b, e))
    }

    /// Bytes written so far.
    #[getter]
    fn file_size(&self) -> PyResult<u64> {
        let writer = self.writer.lock();
        let writer = writer
            .as_ref()
            .ok_or_else(|| Error::new_err("this SstFileWriter is finished"))?;
        Ok(writer.file_size())
    }

    /// Completes and syncs the file; returns a dict of its `file_path`,
    /// `smallest_key`, `largest_key`, `file_size`, `num_entries` and
    /// `num_range_del_entries`. The writer cannot be used afterwards.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let writer = self
            .writer
            .lock()
            .take()
            .ok_or_else(|| Error::new_err("this SstFileWriter is finished"))?;
        let info = engine_call(py, || writer.finish()).map_err(to_py)?;
        let out = PyDict::new(py);
        out.set_item("file_path", info.file_path.display().to_string())?;
        out.set_item("smallest_key", PyBytes::new(py, &info.smallest_key))?;
        out.set_item("largest_key", PyBytes::new(py, &info.largest_key))?;
        out.set_item("file_size", info.file_size)?;
        out.set_item("num_entries", info.num_entries)?;
        out.set_item("num_range_del_entries", info.num_range_del_entries)?;
        Ok(out)
    }
}

/// `(name, text)` pairs of a dict of option names to values.
fn changes_of(changes: &Bound<'_, PyDict>) -> PyResult<Vec<(String, String)>> {
    changes
        .iter()
        .map(|(name, value)| Ok((name.extract::<String>()?, option_text(&value)?)))
        .collect()
}

/// Ingests table files into `target`'s family.
fn ingest(
    py: Python<'_>,
    target: &Target,
    paths: Vec<PathBuf>,
    options: &IngestExternalFileOptions,
) -> PyResult<()> {
    let db = target.shared.db()?;
    engine_call(py, || {
        db.ingest_external_file_cf(&target.cf, &paths, options)
    })
    .map_err(to_py)
}

/// Changes column family options of `target`'s family on the open database.
fn set_family_options(
    py: Python<'_>,
    target: &Target,
    changes: &Bound<'_, PyDict>,
) -> PyResult<()> {
    let db = target.shared.db()?;
    let changes = changes_of(changes)?;
    let pairs: Vec<(&str, &str)> = changes.iter().map(|(n, v)| (&n[..], &v[..])).collect();
    engine_call(py, || db.set_options(&target.cf, &pairs)).map_err(to_py)
}

/// The methods `Db` and `ColumnFamily` share, on their family.
macro_rules! family_operations {
    ($class:ty) => {
        #[pymethods]
        impl $class {
            /// Adds the table files at `paths` (written by `SstFileWriter`)
            /// to this family, atomically; RocksDB's ingestion options by
            /// name. On an error nothing is added.
            #[pyo3(signature = (paths, move_files=false, snapshot_consistency=true,
                                                allow_global_seqno=true, allow_blocking_flush=true,
                                                verify_checksums_before_ingest=false))]
            #[allow(clippy::too_many_arguments)]
            fn ingest_external_file(
                &self,
                py: Python<'_>,
                paths: Vec<PathBuf>,
                move_files: bool,
                snapshot_consistency: bool,
                allow_global_seqno: bool,
                allow_blocking_flush: bool,
                verify_checksums_before_ingest: bool,
            ) -> PyResult<()> {
                let options = IngestExternalFileOptions {
                    move_files,
                    snapshot_consistency,
                    allow_global_seqno,
                    allow_blocking_flush,
                    verify_checksums_before_ingest,
                };
                ingest(py, self.target(), paths, &options)
            }

            /// Changes this family's mutable options (RocksDB's
            /// `SetOptions`), e.g. `{"write_buffer_size": 8 << 20,
            /// "disable_auto_compactions": True}`; all or none apply.
            fn set_options(&self, py: Python<'_>, changes: &Bound<'_, PyDict>) -> PyResult<()> {
                set_family_options(py, self.target(), changes)
            }
        }
    };
}

family_operations!(Db);
family_operations!(ColumnFamily);

#[pymethods]
impl Db {
    /// Changes mutable database options (RocksDB's `SetDBOptions`), e.g.
    /// `{"max_background_jobs": 4}`; all or none apply.
    fn set_db_options(&self, py: Python<'_>, changes: &Bound<'_, PyDict>) -> PyResult<()> {
        let db = self.target().shared.db()?;
        let changes = changes_of(changes)?;
        let pairs: Vec<(&str, &str)> = changes.iter().map(|(n, v)| (&n[..], &v[..])).collect();
        engine_call(py, || db.set_db_options(&pairs)).map_err(to_py)
    }

    /// Hands every WAL byte written so far to the OS and, with `sync`, makes
    /// it durable (RocksDB's `FlushWAL`). With
    /// `Options(manual_wal_flush=True)` writes stay in a buffer until this
    /// (or a sync write, a memtable switch, close) writes them out.
    #[pyo3(signature = (sync=false))]
    fn flush_wal(&self, py: Python<'_>, sync: bool) -> PyResult<()> {
        let db = self.target().shared.db()?;
        engine_call(py, || db.flush_wal(sync)).map_err(to_py)
    }

    /// Waits until no flush or compaction is pending or running.
    fn wait_for_compaction(&self, py: Python<'_>) -> PyResult<()> {
        let db = self.target().shared.db()?;
        engine_call(py, || db.wait_for_compaction()).map_err(to_py)
    }

    /// Rebuilds the MANIFEST of the closed database in `path` from its
    /// files (RocksDB's `RepairDB`); damaged files move to `lost/`.
    /// `column_families` gives options of families the OPTIONS file lacks.
    /// Returns the report as a dict.
    #[staticmethod]
    #[pyo3(signature = (path, options=None, column_families=None))]
    fn repair<'py>(
        py: Python<'py>,
        path: PathBuf,
        options: Option<Options>,
        column_families: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let options = options.unwrap_or_else(Options::defaults);
        let mut families: Vec<(String, strata::CfOptions)> = Vec::new();
        if let Some(map) = column_families {
            for (name, family) in map.iter() {
                families.push((name.extract()?, family.extract::<Options>()?.cf()));
            }
        }
        let report =
            engine_call(py, || strata::repair_db(&path, &options.db, families)).map_err(to_py)?;
        let out = PyDict::new(py);
        let names: Vec<&str> = report.families.iter().map(|(_, n)| &n[..]).collect();
        out.set_item("families", names)?;
        out.set_item("tables_recovered", report.tables_recovered)?;
        out.set_item("tables_from_wals", report.tables_from_wals)?;
        out.set_item("wal_entries_recovered", report.wal_entries_recovered)?;
        out.set_item(
            "wal_entries_already_in_tables",
            report.wal_entries_already_in_tables,
        )?;
        out.set_item("wal_damage_skipped", report.wal_damage_skipped)?;
        out.set_item("blob_files_recovered", report.blob_files_recovered)?;
        let lost: Vec<(String, String)> = report
            .lost
            .iter()
            .map(|(p, why)| (p.display().to_string(), why.clone()))
            .collect();
        out.set_item("lost", lost)?;
        out.set_item("compacted_families", report.compacted_families.clone())?;
        out.set_item("warnings", report.warnings.clone())?;
        out.set_item("last_sequence", report.last_sequence)?;
        Ok(out)
    }
}
