//! Databases and forked processes. A child made by `os.fork()` (the
//! default of `multiprocessing` on Linux) inherits its parent's open
//! handles but none of the engine's background threads, and its writes
//! would interleave with the parent's in the same files. So a handle
//! opened before a fork refuses every use in the child, and the child
//! never shuts the engine down or unlocks its LOCK file, which the parent
//! still holds: dropping the last handle there leaks it instead.

use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;

use crate::Error;

/// How many forks this process descends from; handles remember it at open.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The current process's fork generation.
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

/// Registered with `os.register_at_fork(after_in_child=...)` by the
/// package: every handle opened before now belongs to the parent.
#[pyfunction]
pub(crate) fn _after_fork_in_child() {
    GENERATION.fetch_add(1, Ordering::AcqRel);
}

/// The error for a handle used in a child of the process that opened it.
pub(crate) fn forked_error() -> PyErr {
    Error::new_err(
        "this database was opened before the process forked; open it again in the \
         child process (its parent's handle stays the parent's)",
    )
}
