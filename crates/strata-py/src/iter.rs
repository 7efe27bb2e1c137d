//! Iteration: the lazy `keys()`/`values()`/`items()` iterators, with
//! plyvel's `start`/`stop`/`prefix`/`reverse`, and the raw iterator.

use std::collections::VecDeque;
use std::ops::Bound as KeyBound;

use parking_lot::Mutex;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use strata::{DbIterator, DbRange, ReadOptions};

use crate::db::Target;
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

/// Bytes read ahead per trip at most (past the first entry), so a scan of
/// large values holds few of them at a time.
const READ_AHEAD_BYTES: usize = 1 << 20;

/// A lazy iterator over a family's keys, values or items. Raises
/// `strata.Error` once its database is closed, or the snapshot it reads at
/// released.
#[pyclass(module = "strata")]
pub struct Items {
    /// What it reads: checked before every entry.
    target: Target,
    state: Mutex<ItemsState>,
    kind: Kind,
    reverse: bool,
}

struct ItemsState {
    range: DbRange,
    /// The bytes of the entries read ahead, back to back (only the parts
    /// `kind` yields); cleared and reused by each trip, so entries cost no
    /// allocation of their own.
    bytes: Vec<u8>,
    /// Per entry read ahead, in the order they are handed out: where its
    /// key starts, where the key ends and the value starts, where the value
    /// ends, in `bytes`.
    ahead: VecDeque<(usize, usize, usize)>,
    /// The range ran out, or failed with `error`, handed out after `ahead`.
    done: bool,
    error: Option<strata::Error>,
}

impl ItemsState {
    /// Refills `ahead` (which must be empty) with the next entries.
    fn read_ahead(&mut self, kind: Kind, reverse: bool) {
        self.bytes.clear();
        while self.ahead.len() < READ_AHEAD && self.bytes.len() < READ_AHEAD_BYTES {
            let next = if reverse {
                self.range.next_back_entry()
            } else {
                self.range.next_entry()
            };
            match next {
                Some(Ok((key, value))) => {
                    let start = self.bytes.len();
                    if !matches!(kind, Kind::Values) {
                        self.bytes.extend_from_slice(key);
                    }
                    let key_end = self.bytes.len();
                    if !matches!(kind, Kind::Keys) {
                        self.bytes.extend_from_slice(value);
                    }
                    self.ahead.push_back((start, key_end, self.bytes.len()));
                }
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

    /// The next entry read ahead, as the Python bytes `kind` yields. Only
    /// `bytes` objects are made here, with the state locked: making them
    /// never runs the garbage collector, so never other Python code that
    /// could want this lock.
    fn pop<'py>(
        &mut self,
        py: Python<'py>,
        kind: Kind,
    ) -> Option<(Bound<'py, PyBytes>, Bound<'py, PyBytes>)> {
        let (start, key_end, end) = self.ahead.pop_front()?;
        let key = PyBytes::new(py, &self.bytes[start..key_end]);
        let value = match kind {
            Kind::Keys => PyBytes::new(py, &[]),
            _ => PyBytes::new(py, &self.bytes[key_end..end]),
        };
        Some((key, value))
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
            target: target.clone(),
            state: Mutex::new(ItemsState {
                range,
                bytes: Vec::new(),
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
        let (kind, reverse) = (self.kind, self.reverse);
        // Twice at most: what is read ahead, else a refill and then that.
        loop {
            // Closed or released: nothing more, read ahead or not.
            self.target.check_readable()?;
            {
                let mut state = self.state.lock();
                if let Some((key, value)) = state.pop(py, kind) {
                    drop(state);
                    return Ok(Some(match kind {
                        Kind::Keys => key.into_any(),
                        Kind::Values => value.into_any(),
                        Kind::Items => PyTuple::new(py, [key, value])?.into_any(),
                    }));
                }
                if state.done {
                    return match state.error.take() {
                        Some(e) => Err(to_py(e)),
                        None => Ok(None),
                    };
                }
            }
            // The lock is taken again with the interpreter detached: held
            // across a detach, it would deadlock with a thread of the same
            // iterator waiting for it while holding the interpreter.
            engine_call(py, || {
                let mut state = self.state.lock();
                if state.ahead.is_empty() && !state.done {
                    state.read_ahead(kind, reverse);
                }
            });
        }
    }
}

/// A raw iterator, as RocksDB's: position it, then step. Raises
/// `strata.Error` as `Items` does.
#[pyclass(module = "strata")]
pub struct RawIterator {
    /// What it reads: checked before every use.
    target: Target,
    it: Mutex<DbIterator>,
}

impl RawIterator {
    pub(crate) fn new(target: &Target, read: ReadOptions) -> PyResult<RawIterator> {
        let db = target.shared.db()?;
        Ok(RawIterator {
            target: target.clone(),
            it: Mutex::new(db.iter_cf_opt(&target.cf, &read)),
        })
    }

    /// Runs `step` on the iterator with the interpreter detached, once the
    /// database is known open (and the snapshot held), and reports its
    /// status.
    fn step(&self, py: Python<'_>, step: impl FnOnce(&mut DbIterator) + Send) -> PyResult<()> {
        self.target.check_readable()?;
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
        self.target.check_readable()?;
        Ok(self.it.lock().valid())
    }

    /// The key at the position; `None` when not valid.
    fn key<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.target.check_readable()?;
        Ok(self.it.lock().key().map(|k| PyBytes::new(py, k)))
    }

    /// The value at the position; `None` when not valid.
    fn value<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
        self.target.check_readable()?;
        Ok(self.it.lock().value().map(|v| PyBytes::new(py, v)))
    }
}
