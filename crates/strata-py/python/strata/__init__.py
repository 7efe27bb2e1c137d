"""Strata, an embedded LSM-tree key-value store, for Python.

Keys and values are bytes, as in rocksdict's raw mode::

    import strata

    with strata.Db("/tmp/db") as db:
        db[b"k"] = b"v"
        assert db[b"k"] == b"v"
        for key, value in db.items(start=b"a", stop=b"z"):
            ...
        with db.write_batch() as wb:
            wb.put(b"a", b"1")
            wb.delete(b"b")

Errors of the engine raise ``strata.Error`` or one of its subclasses
``Corruption``, ``InvalidArgument``, ``IOError``, ``Busy`` and
``Incomplete`` (a read limited to memory needed a file). ``len(db)``
is not offered: an LSM tree cannot count its keys cheaply.
"""

from ._strata import (
    BatchContext,
    Busy,
    ColumnFamily,
    Corruption,
    Db,
    Error,
    Incomplete,
    InvalidArgument,
    IOError,
    Items,
    Options,
    RawIterator,
    ReadOptions,
    Snapshot,
    SstFileWriter,
    WriteBatch,
    WriteOptions,
)

# A child made by os.fork() must not use its parent's handles (see the
# Rust module `fork`): they raise strata.Error there.
import os as _os

if hasattr(_os, "register_at_fork"):
    from ._strata import _after_fork_in_child

    _os.register_at_fork(after_in_child=_after_fork_in_child)

__all__ = [
    "BatchContext",
    "Busy",
    "ColumnFamily",
    "Corruption",
    "Db",
    "Error",
    "Incomplete",
    "InvalidArgument",
    "IOError",
    "Items",
    "Options",
    "RawIterator",
    "ReadOptions",
    "Snapshot",
    "SstFileWriter",
    "WriteBatch",
    "WriteOptions",
]
