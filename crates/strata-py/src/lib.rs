//! The `strata` Python module: Strata's engine with bytes in and bytes out,
//! shaped after rocksdict's raw mode and plyvel (see `python/strata`).
//!
//! Every call that may block in the engine (a read from disk, a write that
//! syncs, a flush, a compaction, a close) runs with the interpreter
//! detached, so other Python threads go on meanwhile (see `engine_call`).

use std::sync::atomic::{AtomicBool, Ordering};

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

mod batch;
mod db;
mod fork;
mod iter;
mod open;
mod ops;
mod options;

create_exception!(strata, Error, PyException, "An error the engine reported.");
create_exception!(strata, Corruption, Error, "Damaged data on disk.");
create_exception!(strata, InvalidArgument, Error, "A bad argument or option.");
create_exception!(
    strata,
    IOError,
    Error,
    "The file system failed, or is full."
);
create_exception!(
    strata,
    Incomplete,
    Error,
    "A read limited to memory (read_tier=\"kBlockCacheTier\") needed a file."
);
create_exception!(
    strata,
    Busy,
    Error,
    "Another process or handle holds the database."
);

/// Whether engine calls let go of the interpreter. Always on, except while
/// `_set_release_gil(False)` turns it off to measure what letting go buys
/// (`python -m strata.bench --gil`).
static RELEASE_GIL: AtomicBool = AtomicBool::new(true);

/// Runs `call` in the engine with the interpreter detached, so other Python
/// threads run meanwhile.
///
/// Holding the interpreter instead (the measuring switch off) cannot
/// deadlock: then no thread ever waits for a lock of ours while another
/// holds it and waits for the interpreter, since no call lets go of it.
pub(crate) fn engine_call<T, F>(py: Python<'_>, call: F) -> T
where
    F: pyo3::marker::Ungil + FnOnce() -> T,
    T: pyo3::marker::Ungil,
{
    if RELEASE_GIL.load(Ordering::Relaxed) {
        py.detach(call)
    } else {
        call()
    }
}

/// Turns letting go of the interpreter around engine calls on (the
/// default) or off. Off is for measuring only: threads then take turns at
/// the engine.
#[pyfunction]
fn _set_release_gil(release: bool) {
    RELEASE_GIL.store(release, Ordering::Relaxed);
}

/// The engine's error as the Python exception of its kind, with its message.
pub(crate) fn to_py(e: strata::Error) -> PyErr {
    let message = e.to_string();
    match e {
        strata::Error::Corruption { .. } => Corruption::new_err(message),
        strata::Error::InvalidArgument { .. } => InvalidArgument::new_err(message),
        strata::Error::Io { .. } | strata::Error::NoSpace { .. } => IOError::new_err(message),
        strata::Error::LockHeld { .. } => Busy::new_err(message),
        strata::Error::Incomplete { .. } => Incomplete::new_err(message),
        _ => Error::new_err(message),
    }
}

/// The bytes of `obj`, which must be `bytes`; anything else is a
/// `TypeError` naming what was given (no pickling, no encoding).
pub(crate) fn bytes_of<'a>(obj: &'a Bound<'_, PyAny>, what: &str) -> PyResult<&'a [u8]> {
    match obj.downcast::<PyBytes>() {
        Ok(bytes) => Ok(bytes.as_bytes()),
        Err(_) => {
            let given = obj
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_else(|_| "?".into());
            Err(PyTypeError::new_err(format!(
                "{what} must be bytes, not {given}"
            )))
        }
    }
}

#[pymodule]
fn _strata(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("Error", py.get_type::<Error>())?;
    m.add("Corruption", py.get_type::<Corruption>())?;
    m.add("InvalidArgument", py.get_type::<InvalidArgument>())?;
    m.add("IOError", py.get_type::<IOError>())?;
    m.add("Busy", py.get_type::<Busy>())?;
    m.add("Incomplete", py.get_type::<Incomplete>())?;
    m.add_function(wrap_pyfunction!(_set_release_gil, m)?)?;
    m.add_function(wrap_pyfunction!(fork::_after_fork_in_child, m)?)?;
    m.add_class::<db::Db>()?;
    m.add_class::<db::ColumnFamily>()?;
    m.add_class::<db::Snapshot>()?;
    m.add_class::<batch::WriteBatch>()?;
    m.add_class::<batch::BatchContext>()?;
    m.add_class::<iter::Items>()?;
    m.add_class::<iter::RawIterator>()?;
    m.add_class::<options::Options>()?;
    m.add_class::<options::WriteOptions>()?;
    m.add_class::<options::PyReadOptions>()?;
    m.add_class::<ops::SstFileWriter>()?;
    Ok(())
}
