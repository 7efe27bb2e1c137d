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
