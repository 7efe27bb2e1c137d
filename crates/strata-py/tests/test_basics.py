"""The dict protocol, batches, snapshots, families and errors."""

import pytest

import strata


def test_dict_protocol(db):
    db[b"a"] = b"1"
    db[b"b"] = b"2"
    assert db[b"a"] == b"1"
    assert b"a" in db and b"zz" not in db
    assert db.get(b"zz") is None
    assert db.get(b"zz", b"dflt") == b"dflt"
    del db[b"a"]
    with pytest.raises(KeyError):
        db[b"a"]
    del db[b"never-there"]
    assert db.get_many([b"a", b"b", b"c"]) == [None, b"2", None]
    with pytest.raises(TypeError, match="cheap len"):
        len(db)


@pytest.mark.parametrize("bad", ["text", 7, None, 1.5])
def test_non_bytes_are_a_type_error_naming_the_type(db, bad):
    kind = type(bad).__name__
    with pytest.raises(TypeError, match=f"key must be bytes, not {kind}"):
        db[bad] = b"v"
    with pytest.raises(TypeError, match=f"value must be bytes, not {kind}"):
        db[b"k"] = bad
    with pytest.raises(TypeError, match=f"key must be bytes, not {kind}"):
        db.get(bad)


def test_iteration_with_plyvels_arguments(db):
    for i in range(100):
        db[b"k%03d" % i] = b"v%d" % i
    db[b"other"] = b"x"
    keys = list(db.keys())
    assert keys == sorted(keys) and len(keys) == 101
    assert list(db.keys(start=b"k010", stop=b"k013")) == [b"k010", b"k011", b"k012"]
    assert list(db.keys(start=b"k097")) == [b"k097", b"k098", b"k099", b"other"]
    assert list(db.keys(prefix=b"k09", reverse=True))[:2] == [b"k099", b"k098"]
    assert len(list(db.keys(prefix=b"k0"))) == 100
    assert list(db.values(start=b"k001", stop=b"k002")) == [b"v1"]
    assert list(db.items(stop=b"k002")) == [(b"k000", b"v0"), (b"k001", b"v1")]
    assert list(iter(db))[:1] == [b"k000"]
    with pytest.raises(ValueError):
        db.keys(prefix=b"k", start=b"k")


def test_raw_iterator(db):
    for k in (b"a", b"c", b"e"):
        db[k] = k.upper()
    it = db.iterator()
    it.seek(b"b")
    assert it.valid() and it.key() == b"c" and it.value() == b"C"
    it.next()
    assert it.key() == b"e"
    it.next()
    assert not it.valid() and it.key() is None
    it.seek_for_prev(b"d")
    assert it.key() == b"c"
    it.prev()
    assert it.key() == b"a"
    it.seek_to_last()
    assert it.key() == b"e"
    it.seek_to_first()
    assert it.key() == b"a"


def test_write_batch_commits_on_exit_and_drops_on_an_exception(db):
    with db.write_batch() as wb:
        wb.put(b"x", b"1")
        wb.put(b"y", b"2")
        wb.delete(b"y")
        assert len(wb) == 3
    assert db[b"x"] == b"1" and b"y" not in db
    with pytest.raises(RuntimeError):
        with db.write_batch() as wb:
            wb.put(b"z", b"never")
            raise RuntimeError("boom")
    assert b"z" not in db
    batch = strata.WriteBatch()
    batch.put(b"p", b"q")
    batch.delete_range(b"x", b"y")
    db.write(batch, sync=True)
    assert db[b"p"] == b"q" and b"x" not in db
    with pytest.raises(strata.Error, match="already written"):
        db.write(batch)


def test_snapshot_sees_its_point_in_time(db):
    db[b"k"] = b"old"
    with db.snapshot() as snap:
        db[b"k"] = b"new"
        db[b"later"] = b"1"
        assert snap[b"k"] == b"old"
        assert b"later" not in snap
        assert list(snap.keys()) == [b"k"]
    assert db[b"k"] == b"new"


def test_a_released_snapshot_refuses_every_use(db):
    db[b"k"] = b"old"
    snap = db.snapshot()
    keys = snap.keys()
    raw = snap.iterator()
    raw.seek_to_first()
    bounded = snap.items(read_options=strata.ReadOptions(fill_cache=False))
    db[b"k"] = b"new"
    snap.release()
    ro = strata.ReadOptions()
    uses = [
        lambda: snap[b"k"],
        lambda: b"k" in snap,
        lambda: snap.get(b"k"),
        lambda: snap.get(b"k", read_options=ro),
        lambda: snap.get_many([b"k"]),
        lambda: snap.get_many([b"k"], read_options=ro),
        lambda: list(snap.keys()),
        lambda: list(snap.values()),
        lambda: list(snap.items(read_options=ro)),
        lambda: list(snap),
        lambda: snap.iterator(),
        lambda: snap.iterator(read_options=ro),
        # Iterators made before the release stop too.
        lambda: next(keys),
        lambda: next(bounded),
        lambda: raw.seek_to_first(),
        lambda: raw.next(),
        lambda: raw.valid(),
        lambda: raw.key(),
        lambda: raw.value(),
    ]
    for i, use in enumerate(uses):
        with pytest.raises(strata.Error, match="released"):
            use()
            pytest.fail(f"use {i} of a released snapshot succeeded")
    snap.release()
    assert db[b"k"] == b"new"


def test_a_snapshot_left_by_its_with_block_is_released(db):
    db[b"k"] = b"old"
    with db.snapshot() as snap:
        db[b"k"] = b"new"
        assert snap[b"k"] == b"old"
        it = snap.items()
    with pytest.raises(strata.Error, match="released"):
        snap[b"k"]
    with pytest.raises(strata.Error, match="released"):
        list(snap.items())
    with pytest.raises(strata.Error, match="released"):
        next(it)


def test_column_families_and_merge(tmp_path):
    path = str(tmp_path / "db")
    counters = strata.Options(merge_operator="uint64add")
    with strata.Db(path, column_families={"counters": counters}) as db:
        cf = db.get_column_family("counters")
        one = (1).to_bytes(8, "little")
        for _ in range(5):
            cf.merge(b"hits", one)
        cf[b"plain"] = b"v"
        assert b"plain" not in db
        with db.write_batch() as wb:
            wb.merge(b"hits", one, column_family=cf)
        other = db.create_column_family("other")
        other[b"o"] = b"1"
        db.flush()
        cf.flush()
        cf.compact_range()
    assert sorted(strata.Db.list_column_families(path)) == ["counters", "default", "other"]
    with strata.Db(path, column_families={"counters": counters}) as db:
        assert int.from_bytes(db.get_column_family("counters")[b"hits"], "little") == 6
        assert db.get_column_family("other")[b"o"] == b"1"
        with pytest.raises(KeyError):
            db.get_column_family("missing")
        db.drop_column_family("other")
    assert "other" not in strata.Db.list_column_families(path)


def test_options_by_rocksdb_names(tmp_path):
    opts = strata.Options(write_buffer_size=1 << 20, compression="kLZ4Compression")
    assert opts.write_buffer_size == 1 << 20
    with pytest.raises(strata.InvalidArgument, match="no_such_option"):
        strata.Options(no_such_option=1)
    with pytest.raises(strata.Error):
        strata.Db(str(tmp_path / "missing"), options=strata.Options(create_if_missing=False))
    with strata.Db(str(tmp_path / "db"), options=opts) as db:
        db[b"k"] = b"v"
    loaded, families = strata.Options.load_latest(str(tmp_path / "db"))
    assert loaded.write_buffer_size == 1 << 20
    assert [name for name, _ in families] == ["default"]


def test_closed_database_and_its_iterators_raise(tmp_path):
    db = strata.Db(str(tmp_path / "db"))
    for i in range(10):
        db[b"%d" % i] = b"v"
    keys = db.keys()
    raw = db.iterator()
    raw.seek_to_first()
    assert next(keys) == b"0"
    db.close()
    db.close()
    with pytest.raises(strata.Error, match="database is closed"):
        db[b"1"]
    with pytest.raises(strata.Error, match="database is closed"):
        next(keys)
    with pytest.raises(strata.Error, match="database is closed"):
        raw.next()


def test_a_second_handle_on_one_directory_is_busy(tmp_path):
    path = str(tmp_path / "db")
    with strata.Db(path):
        with pytest.raises(strata.Busy):
            strata.Db(path)
        with strata.Db(path, read_only=True) as ro:
            assert list(ro.keys()) == []


def test_damaged_table_is_corruption(tmp_path):
    path = tmp_path / "db"
    with strata.Db(str(path)) as db:
        for i in range(2000):
            db[b"key%05d" % i] = b"value" * 20
        db.flush()
    table = next(path.glob("*.sst"))
    data = bytearray(table.read_bytes())
    for i in range(200, 400):
        data[i] ^= 0x55
    table.write_bytes(bytes(data))
    with strata.Db(str(path)) as db:
        with pytest.raises(strata.Corruption):
            list(db.items())


def test_checkpoint_and_destroy(tmp_path):
    path, copy = str(tmp_path / "db"), str(tmp_path / "copy")
    with strata.Db(path) as db:
        db[b"k"] = b"v"
        db.checkpoint(copy)
        with pytest.raises(strata.InvalidArgument, match="already exists"):
            db.checkpoint(copy)
    with strata.Db(copy) as db:
        assert db[b"k"] == b"v"
    strata.Db.destroy(copy)
    assert strata.Db.list_column_families.__doc__


def test_iteration_of_large_values_and_of_many_entries(db):
    # Values past the read-ahead's byte budget, then many small entries:
    # every kind of iterator, both ways, hands out each entry exactly.
    big = {b"big%d" % i: bytes([65 + i]) * (1_500_000 + i) for i in range(3)}
    for k, v in big.items():
        db[k] = v
    small = {b"s%05d" % i: b"v%d" % i for i in range(1000)}
    with db.write_batch() as wb:
        for k, v in small.items():
            wb.put(k, v)
    want = sorted({**big, **small}.items())
    assert list(db.items()) == want
    assert list(db.items(reverse=True)) == want[::-1]
    assert list(db.keys()) == [k for k, _ in want]
    assert list(db.values(reverse=True)) == [v for _, v in want[::-1]]
    assert list(db.values(prefix=b"big")) == [big[k] for k in sorted(big)]
