"""Ingestion of SstFileWriter files, options changed on an open database,
and repair."""

import os

import pytest

import strata


def test_sst_file_writer_and_ingestion(tmp_path):
    sst = str(tmp_path / "bulk.sst")
    writer = strata.SstFileWriter(sst)
    for i in range(1000):
        writer[b"bulk%04d" % i] = b"v%d" % i
    writer.delete(b"bulk9999")
    assert writer.file_size > 0
    with pytest.raises(strata.InvalidArgument):
        writer.put(b"aaa", b"out of order")
    info = writer.finish()
    assert info["num_entries"] == 1001
    assert info["smallest_key"] == b"bulk0000" and info["largest_key"] == b"bulk9999"
    with pytest.raises(strata.Error, match="finished"):
        writer.put(b"zzz", b"1")
    with strata.Db(str(tmp_path / "db")) as db:
        db[b"bulk0001"] = b"older"
        with db.snapshot() as before:
            db.ingest_external_file([sst])
            # The ingested file is newer than every earlier write, and a
            # snapshot taken before it does not see it.
            assert db[b"bulk0001"] == b"v1"
            assert before[b"bulk0001"] == b"older"
            assert b"bulk0002" not in before
        assert sum(1 for _ in db.keys(prefix=b"bulk")) == 1000
        cf = db.create_column_family("side")
        moved = str(tmp_path / "side.sst")
        w = strata.SstFileWriter(moved)
        w.put(b"s", b"1")
        w.finish()
        cf.ingest_external_file([moved], move_files=True)
        assert cf[b"s"] == b"1" and b"s" not in db
        with pytest.raises(strata.Error):
            db.ingest_external_file([str(tmp_path / "missing.sst")])


def test_options_change_on_an_open_database(tmp_path):
    path = str(tmp_path / "db")
    with strata.Db(path) as db:
        db.set_options({"disable_auto_compactions": True, "write_buffer_size": 8 << 20})
        db.set_db_options({"max_background_jobs": 3})
        with pytest.raises(strata.InvalidArgument, match="num_levels"):
            db.set_options({"num_levels": 3})
        db[b"k"] = b"v"
        db.flush()
        db.wait_for_compaction()
    loaded, families = strata.Options.load_latest(path)
    assert loaded.max_background_jobs == 3
    family = dict(families)["default"]
    assert family.write_buffer_size == 8 << 20
    assert family.disable_auto_compactions is True


def test_repair_brings_back_a_database_whose_manifest_is_gone(tmp_path):
    path = tmp_path / "db"
    with strata.Db(str(path)) as db:
        for i in range(500):
            db[b"k%03d" % i] = b"v%d" % i
        db.flush()
        for i in range(500, 600):
            db[b"k%03d" % i] = b"v%d" % i
    for name in os.listdir(path):
        if name.startswith("MANIFEST-") or name == "CURRENT":
            os.remove(path / name)
    with pytest.raises(strata.Error):
        strata.Db(str(path), options=strata.Options(create_if_missing=False))
    report = strata.Db.repair(str(path))
    assert report["families"] == ["default"]
    assert report["tables_recovered"] >= 1
    with strata.Db(str(path)) as db:
        assert list(db.items()) == [(b"k%03d" % i, b"v%d" % i) for i in range(600)]
    with pytest.raises(strata.Error, match="NotFound: database directory"):
        strata.Db.repair(str(tmp_path / "nowhere"))


def test_manual_wal_flush_buffers_writes_until_flush_wal(tmp_path):
    path = tmp_path / "db"
    with strata.Db(str(path), options=strata.Options(manual_wal_flush=True)) as db:
        db[b"a"] = b"1"
        wal = max(path.glob("*.log"), key=lambda p: p.stat().st_mtime)
        before = wal.stat().st_size
        db.flush_wal()
        assert wal.stat().st_size > before
        db.flush_wal(sync=True)
        assert db[b"a"] == b"1"
    with strata.Db(str(path)) as db:
        assert db[b"a"] == b"1"
