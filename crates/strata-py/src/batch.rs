//! `WriteBatch` and the `with db.write_batch() as wb:` context.

use parking_lot::Mutex;
use pyo3::prelude::*;

use crate::db::{write, ColumnFamily, Target};
use crate::options::WriteOptions;
use crate::{bytes_of, to_py, Error};

/// Writes applied atomically by `Db.write` (or on leaving
/// `with db.write_batch() as wb:`). Each method takes an optional
/// `column_family`.
#[pyclass(module = "strata", frozen)]
pub struct WriteBatch {
    batch: Mutex<Option<strata::WriteBatch>>,
}

impl WriteBatch {
    fn with(&self, f: impl FnOnce(&mut strata::WriteBatch) -> strata::Result<()>) -> PyResult<()> {
        let mut batch = self.batch.lock();
        let batch = batch
            .as_mut()
            .ok_or_else(|| Error::new_err("this write batch was already written"))?;
        f(batch).map_err(to_py)
    }

    /// The batch, leaving this object spent.
    pub(crate) fn take(&self) -> PyResult<strata::WriteBatch> {
        self.batch
            .lock()
            .take()
            .ok_or_else(|| Error::new_err("this write batch was already written"))
    }
}

fn family(cf: Option<&Bound<'_, ColumnFamily>>) -> Option<strata::ColumnFamily> {
    cf.map(|cf| cf.get().handle())
}

#[pymethods]
impl WriteBatch {
    #[new]
    fn new() -> WriteBatch {
        WriteBatch {
            batch: Mutex::new(Some(strata::WriteBatch::new())),
        }
    }

    #[pyo3(signature = (key, value, column_family=None))]
    fn put(
        &self,
        key: &Bound<'_, PyAny>,
        value: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, ColumnFamily>>,
    ) -> PyResult<()> {
        let (k, v) = (bytes_of(key, "key")?, bytes_of(value, "value")?);
        match family(column_family) {
            Some(cf) => self.with(|b| b.put_cf(&cf, k, v)),
            None => self.with(|b| b.put(k, v)),
        }
    }

    #[pyo3(signature = (key, column_family=None))]
    fn delete(
        &self,
        key: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, ColumnFamily>>,
    ) -> PyResult<()> {
        let k = bytes_of(key, "key")?;
        match family(column_family) {
            Some(cf) => self.with(|b| b.delete_cf(&cf, k)),
            None => self.with(|b| b.delete(k)),
        }
    }

    #[pyo3(signature = (key, operand, column_family=None))]
    fn merge(
        &self,
        key: &Bound<'_, PyAny>,
        operand: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, ColumnFamily>>,
    ) -> PyResult<()> {
        let (k, v) = (bytes_of(key, "key")?, bytes_of(operand, "operand")?);
        match family(column_family) {
            Some(cf) => self.with(|b| b.merge_cf(&cf, k, v)),
            None => self.with(|b| b.merge(k, v)),
        }
    }

    #[pyo3(signature = (begin, end, column_family=None))]
    fn delete_range(
        &self,
        begin: &Bound<'_, PyAny>,
        end: &Bound<'_, PyAny>,
        column_family: Option<&Bound<'_, ColumnFamily>>,
    ) -> PyResult<()> {
        let (b, e) = (bytes_of(begin, "begin")?, bytes_of(end, "end")?);
        match family(column_family) {
            Some(cf) => self.with(|batch| batch.delete_range_cf(&cf, b, e)),
            None => self.with(|batch| batch.delete_range(b, e)),
        }
    }

    /// Drops every write collected so far.
    fn clear(&self) -> PyResult<()> {
        self.with(|b| {
            b.clear();
            Ok(())
        })
    }

    /// Writes collected so far.
    fn __len__(&self) -> usize {
        self.batch.lock().as_ref().map_or(0, |b| b.count() as usize)
    }
}

/// What `Db.write_batch()` returns: a context whose block collects writes.
#[pyclass(module = "strata", frozen)]
pub struct BatchContext {
    target: Target,
    options: WriteOptions,
    batch: Py<WriteBatch>,
}

impl BatchContext {
    pub(crate) fn new(target: Target, options: WriteOptions) -> PyResult<BatchContext> {
        let batch = Python::attach(|py| Py::new(py, WriteBatch::new()))?;
        Ok(BatchContext {
            target,
            options,
            batch,
        })
    }
}

#[pymethods]
impl BatchContext {
    fn __enter__(&self, py: Python<'_>) -> Py<WriteBatch> {
        self.batch.clone_ref(py)
    }

    /// Writes the batch when the block ended normally; drops it on an
    /// exception, which goes on.
    #[pyo3(signature = (exc_type, _exc_value=None, _traceback=None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc_value: Option<&Bound<'_, PyAny>>,
        _traceback: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let batch = self.batch.get().take()?;
        if exc_type.is_some_and(|t| !t.is_none()) {
            return Ok(false);
        }
        write(py, &self.target, batch, &self.options)?;
        Ok(false)
    }
}
