//! `Options`, `ReadOptions` and `WriteOptions`, with RocksDB's option names.

use pyo3::exceptions::{PyAttributeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict};
use strata::options::{
    apply_cf_option, apply_db_option, cf_option_value, db_option_value, load_latest_options,
    option_names, LoadOptions,
};
use strata::{CfOptions, DbOptions, ReadTier};

use crate::{bytes_of, to_py, InvalidArgument};

/// A database's (or a column family's) options, set by RocksDB's names as
/// keyword arguments, e.g. `Options(write_buffer_size=64 << 20,
/// compression="kLZ4Compression", merge_operator="uint64add")`, or as
/// attributes (`opts.max_background_jobs = 4`), and read back as
/// attributes. Values are written as the OPTIONS file spells them:
/// `"kLZ4Compression"`, `"uint64add"`. `create_if_missing` is on unless set
/// off, as rocksdict has it.
///
/// Opening a database that exists, `Db` starts from the options its
/// newest OPTIONS file records and applies over them only the options set
/// here by name (see `crate::open`).
#[pyclass(module = "strata")]
#[derive(Debug, Clone)]
pub struct Options {
    pub(crate) db: DbOptions,
    /// The options set by name (keywords, attributes, `set`), the last
    /// setting of each, in the order set.
    given: Vec<Given>,
}

/// One option set by name, as the OPTIONS file spells its value.
#[derive(Debug, Clone)]
struct Given {
    name: String,
    text: String,
    /// A column family option (else a database option).
    family: bool,
}

/// The text the engine's option parser takes for a Python value.
pub(crate) fn option_text(value: &Bound<'_, PyAny>) -> PyResult<String> {
    // The OPTIONS file's spelling of "none", for a merge operator or a
    // prefix extractor.
    if value.is_none() {
        return Ok("nullptr".to_owned());
    }
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
        "an option value must be a bool, int, float, str or None, not {}",
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
            given: Vec::new(),
        }
    }

    pub(crate) fn cf(&self) -> CfOptions {
        self.db.cf_options()
    }

    /// Applies the options set by name to `db` (its column family fields
    /// are the default family's).
    pub(crate) fn apply_given(&self, db: &mut DbOptions) -> PyResult<()> {
        for given in self.given.iter().filter(|g| !g.family) {
            apply_db_option(db, &given.name, &given.text).map_err(to_py)?;
        }
        // Taken after the database options: the database-wide ones among
        // them (`max_background_jobs`) live in the default family's fields.
        let mut cf = db.cf_options();
        self.apply_given_cf(&mut cf)?;
        db.set_cf_options(cf);
        Ok(())
    }

    /// Applies the column family options set by name to `cf`.
    pub(crate) fn apply_given_cf(&self, cf: &mut CfOptions) -> PyResult<()> {
        for given in self.given.iter().filter(|g| g.family) {
            apply_cf_option(cf, &given.name, &given.text).map_err(to_py)?;
        }
        Ok(())
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
        let family = match apply_db_option(&mut self.db, name, &text) {
            Ok(()) => false,
            Err(_) => {
                let mut cf = self.db.cf_options();
                apply_cf_option(&mut cf, name, &text).map_err(to_py)?;
                self.db.set_cf_options(cf);
                true
            }
        };
        self.given.retain(|g| g.name != name);
        self.given.push(Given {
            name: name.to_owned(),
            text,
            family,
        });
        Ok(())
    }

    /// The options the newest OPTIONS file in `path` records: the
    /// database's, and every column family's by name. None of them counts
    /// as set by name. Options this build lacks are skipped; an operator,
    /// comparator or compaction filter the application wrote raises
    /// `strata.InvalidArgument` naming it (Python cannot supply one, and
    /// options without it would open the database wrongly).
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
                let mut family = Options {
                    db: db.clone(),
                    given: Vec::new(),
                };
                family.db.set_cf_options(cf);
                (name, family)
            })
            .collect();
        Ok((
            Options {
                db,
                given: Vec::new(),
            },
            families,
        ))
    }

    /// The value of option `name`: a bool, an int, a float or the
    /// OPTIONS file's text; `None` when unset. `strata.InvalidArgument`
    /// for a name Strata does not know.
    fn get(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        let text = match db_option_value(&self.db, name) {
            Ok(text) => text,
            Err(_) => cf_option_value(&self.db.cf_options(), name).map_err(to_py)?,
        };
        Ok(match text {
            None => py.None(),
            Some(text) => python_value(py, &text)?,
        })
    }

    fn __getattr__(&self, py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
        self.get(py, name)
            .map_err(|_| PyAttributeError::new_err(format!("Options has no option {name:?}")))
    }

    fn __setattr__(&mut self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.set(name, value)
    }

    fn __dir__(&self) -> Vec<&'static str> {
        let mut names = option_names();
        names.extend(["get", "set", "load_latest"]);
        names
    }

    fn __repr__(&self) -> String {
        format!(
            "Options(create_if_missing={}, write_buffer_size={})",
            self.db.create_if_missing, self.db.write_buffer_size
        )
    }
}

/// An option's text as Python reads it: `true`/`false` as a bool, a number
/// as an int or float, `nullptr` as `None`, anything else as the text
/// itself.
fn python_value(py: Python<'_>, text: &str) -> PyResult<Py<PyAny>> {
    Ok(match text {
        "nullptr" => py.None(),
        "true" => true.into_pyobject(py)?.to_owned().into_any().unbind(),
        "false" => false.into_pyobject(py)?.to_owned().into_any().unbind(),
        _ => {
            if let Ok(n) = text.parse::<i64>() {
                n.into_pyobject(py)?.into_any().unbind()
            } else if let Ok(n) = text.parse::<u64>() {
                n.into_pyobject(py)?.into_any().unbind()
            } else if let Ok(x) = text.parse::<f64>() {
                x.into_pyobject(py)?.into_any().unbind()
            } else {
                text.into_pyobject(py)?.into_any().unbind()
            }
        }
    })
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

/// How a read is made (RocksDB's `ReadOptions`), for `get`, `get_many`,
/// the iterators and `iterator` through their `read_options` argument:
/// `ReadOptions(fill_cache=False)` for a long scan that should leave the
/// block cache to the hot keys, say.
#[pyclass(module = "strata", name = "ReadOptions")]
#[derive(Debug, Clone)]
pub struct PyReadOptions {
    /// Verify the checksum of every data block read (default on).
    #[pyo3(get, set)]
    pub verify_checksums: bool,
    /// Keep the blocks read in the block cache (default on).
    #[pyo3(get, set)]
    pub fill_cache: bool,
    /// Bytes a scan reads ahead of each block it reads from a file; 0 (the
    /// default) grows it by itself from 8 KiB to 256 KiB.
    #[pyo3(get, set)]
    pub readahead_size: usize,
    /// With the family's prefix extractor, a seek stays in its target's
    /// prefix (default off).
    #[pyo3(get, set)]
    pub prefix_same_as_start: bool,
    /// Never consult prefix filters (default off).
    #[pyo3(get, set)]
    pub total_order_seek: bool,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    tier: ReadTier,
}

/// RocksDB's names of the read tiers Strata has.
const TIERS: [(&str, ReadTier); 2] = [
    ("kReadAllTier", ReadTier::ReadAll),
    ("kBlockCacheTier", ReadTier::BlockCache),
];

fn tier_of(name: &str) -> PyResult<ReadTier> {
    TIERS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, tier)| *tier)
        .ok_or_else(|| {
            InvalidArgument::new_err(format!(
                "read_tier {name:?} is not one of \"kReadAllTier\", \"kBlockCacheTier\""
            ))
        })
}

/// A bound given as bytes or `None`.
fn bound_of(value: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<Vec<u8>>> {
    match value {
        Some(v) if !v.is_none() => Ok(Some(bytes_of(v, what)?.to_vec())),
        _ => Ok(None),
    }
}

#[pymethods]
impl PyReadOptions {
    #[new]
    #[pyo3(signature = (
        verify_checksums=true,
        fill_cache=true,
        readahead_size=0,
        prefix_same_as_start=false,
        total_order_seek=false,
        iterate_lower_bound=None,
        iterate_upper_bound=None,
        read_tier="kReadAllTier",
    ))]
    // One argument per keyword of the Python constructor.
    #[allow(clippy::too_many_arguments)]
    fn new(
        verify_checksums: bool,
        fill_cache: bool,
        readahead_size: usize,
        prefix_same_as_start: bool,
        total_order_seek: bool,
        iterate_lower_bound: Option<&Bound<'_, PyAny>>,
        iterate_upper_bound: Option<&Bound<'_, PyAny>>,
        read_tier: &str,
    ) -> PyResult<PyReadOptions> {
        Ok(PyReadOptions {
            verify_checksums,
            fill_cache,
            readahead_size,
            prefix_same_as_start,
            total_order_seek,
            lower: bound_of(iterate_lower_bound, "iterate_lower_bound")?,
            upper: bound_of(iterate_upper_bound, "iterate_upper_bound")?,
            tier: tier_of(read_tier)?,
        })
    }

    /// `"kReadAllTier"` (the default), or `"kBlockCacheTier"`: answer from
    /// memory only, raising `strata.Incomplete` where a file would be read.
    #[getter]
    fn read_tier(&self) -> &'static str {
        TIERS
            .iter()
            .find(|(_, tier)| *tier == self.tier)
            .map_or("kReadAllTier", |(name, _)| name)
    }

    #[setter]
    fn set_read_tier(&mut self, name: &str) -> PyResult<()> {
        self.tier = tier_of(name)?;
        Ok(())
    }

    /// Iterators skip keys below this (inclusive; bytes or `None`).
    #[getter]
    fn iterate_lower_bound<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.lower.as_ref().map(|b| PyBytes::new(py, b))
    }

    #[setter]
    fn set_iterate_lower_bound(&mut self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.lower = bound_of(value, "iterate_lower_bound")?;
        Ok(())
    }

    /// Iterators stop before this (exclusive; bytes or `None`).
    #[getter]
    fn iterate_upper_bound<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.upper.as_ref().map(|b| PyBytes::new(py, b))
    }

    #[setter]
    fn set_iterate_upper_bound(&mut self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.upper = bound_of(value, "iterate_upper_bound")?;
        Ok(())
    }
}

impl PyReadOptions {
    /// The engine's read options these stand for, at `snapshot`.
    pub(crate) fn engine(&self, snapshot: Option<strata::Snapshot>) -> strata::ReadOptions {
        strata::ReadOptions {
            verify_checksums: self.verify_checksums,
            fill_cache: self.fill_cache,
            readahead_size: self.readahead_size,
            prefix_same_as_start: self.prefix_same_as_start,
            total_order_seek: self.total_order_seek,
            iterate_lower_bound: self.lower.clone(),
            iterate_upper_bound: self.upper.clone(),
            snapshot,
            read_tier: self.tier,
        }
    }
}
