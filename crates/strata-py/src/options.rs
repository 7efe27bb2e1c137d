//! `Options` and `WriteOptions`, with RocksDB's option names.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};
use strata::options::{apply_cf_option, apply_db_option, load_latest_options, LoadOptions};
use strata::{CfOptions, DbOptions};

use crate::to_py;

/// A database's (or a column family's) options, set by RocksDB's names as
/// keyword arguments, e.g. `Options(write_buffer_size=64 << 20,
/// compression="kLZ4Compression", merge_operator="uint64add")`.
/// `create_if_missing` is on unless set off, as rocksdict has it.
#[pyclass(module = "strata")]
#[derive(Debug, Clone)]
pub struct Options {
    pub(crate) db: DbOptions,
}

/// The text the engine's option parser takes for a Python value.
fn option_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if value.is_instance_of::<PyBool>() {
        return Ok(if value.extract::<bool>()? {
            "true"
        } else {
            "false"
        }
        .to_owned());
    }
    if let Ok(text) = value.extract::<String>() {
        return Ok(text);
    }
    if let Ok(n) = value.extract::<i64>() {
        return Ok(n.to_string());
    }
    if let Ok(x) = value.extract::<f64>() {
        return Ok(x.to_string());
    }
    Err(PyTypeError::new_err(format!(
        "an option value must be a bool, int, float or str, not {}",
        value.get_type().name()?
    )))
}

impl Options {
    pub(crate) fn defaults() -> Options {
        Options {
            db: DbOptions {
                create_if_missing: true,
                ..DbOptions::default()
            },
        }
    }

    pub(crate) fn cf(&self) -> CfOptions {
        self.db.cf_options()
    }
}

#[pymethods]
impl Options {
    #[new]
    #[pyo3(signature = (**kwargs))]
    fn new(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Options> {
        let mut options = Options::defaults();
        if let Some(kwargs) = kwargs {
            for (name, value) in kwargs.iter() {
                options.set(&name.extract::<String>()?, &value)?;
            }
        }
        Ok(options)
    }

    /// Sets option `name` (a RocksDB database or column family option name)
    /// to `value`.
    fn set(&mut self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let text = option_text(value)?;
        if apply_db_option(&mut self.db, name, &text).is_ok() {
            return Ok(());
        }
        let mut cf = self.db.cf_options();
        apply_cf_option(&mut cf, name, &text).map_err(to_py)?;
        self.db.set_cf_options(cf);
        Ok(())
    }

    /// The options the newest OPTIONS file in `path` records: the
    /// database's, and every column family's by name.
    #[staticmethod]
    fn load_latest(py: Python<'_>, path: &str) -> PyResult<(Options, Vec<(String, Options)>)> {
        let load = LoadOptions {
            ignore_unknown_options: true,
            ..LoadOptions::default()
        };
        let (db, families) = py
            .detach(|| load_latest_options(path, &load))
            .map_err(to_py)?;
        let families = families
            .into_iter()
            .map(|(name, cf)| {
                let mut family = Options { db: db.clone() };
                family.db.set_cf_options(cf);
                (name, family)
            })
            .collect();
        Ok((Options { db }, families))
    }

    #[getter]
    fn create_if_missing(&self) -> bool {
        self.db.create_if_missing
    }

    #[getter]
    fn write_buffer_size(&self) -> usize {
        self.db.write_buffer_size
    }

    fn __repr__(&self) -> String {
        format!(
            "Options(create_if_missing={}, write_buffer_size={})",
            self.db.create_if_missing, self.db.write_buffer_size
        )
    }
}

/// How a write is made: `sync` waits for the WAL to reach the disk;
/// `disable_wal` skips the WAL (the write is lost in a crash before a flush).
#[pyclass(module = "strata")]
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    #[pyo3(get, set)]
    pub sync: bool,
    #[pyo3(get, set)]
    pub disable_wal: bool,
}

#[pymethods]
impl WriteOptions {
    #[new]
    #[pyo3(signature = (sync=false, disable_wal=false))]
    fn new(sync: bool, disable_wal: bool) -> WriteOptions {
        WriteOptions { sync, disable_wal }
    }
}

impl WriteOptions {
    pub(crate) fn engine(&self) -> strata::WriteOptions {
        strata::WriteOptions {
            sync: self.sync,
            disable_wal: self.disable_wal,
            ..strata::WriteOptions::default()
        }
    }
}
