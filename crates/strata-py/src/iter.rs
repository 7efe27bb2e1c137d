//! Iteration: the lazy `keys()`/`values()`/`items()` iterators, with
//! plyvel's `start`/`stop`/`prefix`/`reverse`, and the raw iterator.

use std::collections::VecDeque;
use std::ops::Bound as KeyBound;

use parking_lot::Mutex;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use strata::{DbIterator, DbRange, ReadOptions};

use crate::db::{Shared, Target};
use crate::{bytes_of, engine_call, to_py};

/// What a lazy iterator yields.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Keys,
    Values,
    Items,
}

/// The keys an iteration covers, and its direction.
#[derive(Debug, Clone)]
pub(crate) struct Span {
    lower: KeyBound<Vec<u8>>,
    upper: KeyBound<Vec<u8>>,
    reverse: bool,
}

impl Span {
    pub(crate) fn all() -> Span {
        Span {
            lower: KeyBound::Unbounded,
            upper: KeyBound::Unbounded,
            reverse: false,
        }
    }

    /// `start` inclusive, `stop` exclusive; `prefix` alone, or not at all.
    pub(crate) fn new(
        start: Option<&Bound<'_, PyAny>>,
        stop: Option<&Bound<'_, PyAny>>,
        prefix: Option<&Bound<'_, PyAny>>,
        reverse: bool,
    ) -> PyResult<Span> {
        if let Some(prefix) = prefix {
            if start.is_some() || stop.is_some() {
                return Err(PyValueError::new_err(
                    "prefix cannot be combined with start or stop",
                ));
            }
            let prefix = bytes_of(prefix, "prefix")?.to_vec();
            let upper = match prefix_end(&prefix) {
                Some(end) => KeyBound::Excluded(end),
                None => KeyBound::Unbounded,
            };
            return Ok(Span {
                lower: KeyBound::Included(prefix),
                upper,
                reverse,
            });
        }
        let bound =
            |k: Option<&Bound<'_, PyAny>>, what: &str, make: fn(Vec<u8>) -> KeyBound<Vec<u8>>| {
                k.map(|k| bytes_of(k, what).map(|b| make(b.to_vec())))
                    .transpose()
                    .map(|b| b.unwrap_or(KeyBound::Unbounded))
            };
        Ok(Span {
            lower: bound(start, "start", KeyBound::Included)?,
            upper: bound(stop, "stop", KeyBound::Excluded)?,
            reverse,
        })
    }
}

/// The first key after every key starting with `prefix`; `None` when
/// there is none (the prefix is all 0xff bytes).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Entries read per trip into the engine: each trip detaches from the
/// interpreter once, not once per entry.
const READ_AHEAD: usize = 64;

/// A lazy iterator over a family's keys, values or items. Raises
/// `strata.Error` once its database is closed.
#[pyclass(module = "strata")]
pub struct Items {
    shared: std::sync::Arc<Shared>,
    state: Mutex<ItemsState>,
    kind: Kind,
    reverse: bool,
}

type Entry = (Vec<u8>, Vec<u8>);

struct ItemsState {
    range: DbRange,
    /// Entries read ahead, in the order they are handed out.
    ahead: VecDeque<Entry>,
    /// The range ran out, or failed with `error`, handed out after `ahead`.
    done: bool,
    error: Option<strata::Error>,
}

impl ItemsState {
    fn read_ahead(&mut self, reverse: bool) {
        while self.ahead.len() < READ_AHEAD {
            let next = if reverse {
                self.range.next_back()
            } else {
                self.range.next()
            };
            match next {
                Some(Ok(entry)) => self.ahead.push_back(entry),
                Some(Err(e)) => {
                    self.error = Some(e);
                    self.done = true;
                    return;
                }
                None => {
                    self.done = true;
                    return;
                }
            }
        }
    }
}

impl Items {
    pub(crate) fn new(
        target: &Target,
        read: ReadOptions,
        kind: Kind,
        span: Span,
    ) -> PyResult<Items> {
        let db = target.shared.db()?;
        let range = db.range_cf_opt(&target.cf, &read, (span.lower, span.upper));
        Ok(Items {
            shared: target.shared.clone(),
            state: Mutex::new(ItemsState {
                range,
                ahead: VecDeque::new(),
                done: false,
                error: None,
            }),
            kind,
            reverse: span.reverse,
        })
    }
}

#[pymethods]
impl Items {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        // Closed: nothing more, read ahead or not.
        self.shared.check_open()?;
        let reverse = self.reverse;
        let ahead = self.state.lock().ahead.pop_front();
        // The lock is taken again with the interpreter detached: held across
        // a detach, it would deadlock with a thread of the same iterator
        // waiting for it while holding the interpreter.
        let next = match ahead {
            Some(entry) => Some(Ok(entry)),
            None => engine_call(py, || {
                let mut state = self.state.lock();
                if state.ahead.is_empty() && !state.done {
                    state.read_ahead(reverse);
                }
                match state.ahead.pop_front() {
                    Some(entry) => Some(Ok(entry)),
                    None => state.error.take().map(Err),
                }
            }),
        };
        let (key, value) = match next {
            Some(entry) => entry.map_err(to_py)?,
            None => return Ok(None),
        };
        Ok(Some(match self.kind {
            Kind::Keys => PyBytes::new(py, &key).into_any(),
            Kind::Values => PyBytes::new(py, &value).into_any(),
            Kind::Items => {
                PyTuple::new(py, [PyBytes::new(py, &key), PyBytes::new(py, &value)])?.into_any()
            }
        }))
    }
}

/// A raw iterator, as RocksDB's: position it, then step.
#[pyclass(module = "strata")]
pub struct RawIterator {
    shared: std::sync::Arc<Shared>,
    it: Mutex<DbIterator>,
}

impl RawIterator {
    pub(crate) fn new(target: &Target, read: ReadOptions) -> PyResult<RawIterator> {
        let db = target.shared.db()?;
        Ok(RawIterator {
            shared: target.shared.clone(),
            it: Mutex::new(db.iter_cf_opt(&target.cf, &read)),
        })
    }

    /// Runs `step` on the iterator with the interpreter detached, once the
    /// database is known open, and reports its status.
    fn step(&self, py: Python<'_>, step: impl FnOnce(&mut DbIterator) + Send) -> PyResult<()> {
        self.shared.check_open()?;
        // Locked with the interpreter detached (see `Items::__next__`).
        engine_call(py, || {
            let mut it = self.it.lock();
            step(&mut it);
            it.status()
        })
        .map_err(to_py)
    }
}

#[pymethods]
impl RawIterator {
    fn seek_to_first(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |it| it.seek_to_first())
    }

    fn seek_to_last(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |it| it.seek_to_last())
    }

    /// Positions at the first key at or after `target`.
    fn seek(&self, py: Python<'_>, target: &Bound<'_, PyAny>) -> PyResult<()> {
        let target = bytes_of(target, "target")?;
        self.step(py, |it| it.seek(target))
    }

    /// Positions at the last key at or before `target`.
    fn seek_for_prev(&self, py: Python<'_>, target: &Bound<'_, PyAny>) -> PyResult<()> {
        let target = bytes_of(target, "target")?;
        self.step(py, |it| it.seek_for_prev(target))
    }

    fn next(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |it| it.next())
    }

    fn prev(&self, py: Python<'_>) -> PyResult<()> {
        self.step(py, |it| it.prev())
    }

    fn valid(&self) -> PyResult<bool> {
        self.shared.db()?;
        Ok(self.it.lock().valid())
    }

    /// The key at the position; `None` when not valid.
    fn key<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.shared.db()?;
        Ok(self.it.lock().key().map(|k| PyBytes::new(py, k)))
    }

    /// The value at the position; `None` when not valid.
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.shared.db()?;
        Ok(self.it.lock().value().map(|v| PyBytes::new(py, v)))
    }
}
