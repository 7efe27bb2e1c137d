"""Threads: readers beside a writer, a shared iterator, a close from
another thread, an interrupted scan, and the interpreter held throughout."""

import _thread
import faulthandler
import threading
import time

import pytest

import strata


@pytest.fixture(params=[True, False], ids=["gil-released", "gil-held"])
def release_gil(request):
    """Each threads test runs as shipped (the interpreter let go around
    every engine call) and with the measuring switch holding it."""
    strata._strata._set_release_gil(request.param)
    yield request.param
    strata._strata._set_release_gil(True)


@pytest.fixture(autouse=True)
def no_hang():
    # A deadlock holds the interpreter, so no join timeout could report it:
    # faulthandler's own thread ends the process with every stack instead.
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def test_threads_read_while_one_writes(db, release_gil):
    for i in range(1000):
        db[b"k%04d" % i] = b"v%d" % i
    errors = []

    def reader():
        try:
            for i in range(2000):
                assert db[b"k%04d" % (i % 1000)].startswith(b"v")
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for t in threads:
        t.start()
    for i in range(1000):
        db[b"k%04d" % i] = b"v%d-new" % i
    for t in threads:
        t.join()
    assert not errors


def test_threads_sharing_one_iterator_neither_deadlock_nor_lose_entries(db, release_gil):
    n = 20000
    with db.write_batch() as wb:
        for i in range(n):
            wb.put(b"k%06d" % i, b"v")
    items = db.keys()
    raw = db.iterator()
    raw.seek_to_first()
    seen = [[] for _ in range(4)]

    def drain(out):
        for k in items:
            out.append(k)

    def step():
        for _ in range(n // 4):
            raw.next()

    threads = [threading.Thread(target=drain, args=(seen[t],), daemon=True) for t in range(4)]
    threads += [threading.Thread(target=step, daemon=True) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "threads sharing an iterator deadlocked"
    got = sorted(k for part in seen for k in part)
    assert got == [b"k%06d" % i for i in range(n)]
    assert raw.valid() and raw.key() == b"k%06d" % (n // 2)


def _fill(db, n):
    with db.write_batch() as wb:
        for i in range(n):
            wb.put(b"k%06d" % i, b"v%d" % i)


def test_close_from_another_thread_while_threads_iterate_and_write(tmp_path, release_gil):
    path = str(tmp_path / "db")
    n = 30000
    db = strata.Db(path)
    _fill(db, n // 2)
    db.flush()
    with db.write_batch() as wb:
        for i in range(n // 2, n):
            wb.put(b"k%06d" % i, b"v%d" % i)
    ended = {}
    started = threading.Barrier(4)

    def scan_items():
        started.wait()
        try:
            while True:
                assert sum(1 for _ in db.items(stop=b"l")) == n
        except Exception as e:
            ended["items"] = e

    def step_raw():
        it = db.iterator()
        started.wait()
        try:
            while True:
                it.seek_to_first()
                while it.valid():
                    it.next()
        except Exception as e:
            ended["raw"] = e

    acknowledged = [0]

    def write():
        started.wait()
        try:
            while True:
                db[b"w%06d" % acknowledged[0]] = b"x"
                acknowledged[0] += 1
        except Exception as e:
            ended["write"] = e

    threads = [threading.Thread(target=f, daemon=True) for f in (scan_items, step_raw, write)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.2)
    db.close()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    assert sorted(ended) == ["items", "raw", "write"]
    for what, e in ended.items():
        assert isinstance(e, strata.Error), (what, repr(e))
        assert "closed" in str(e), (what, str(e))
    # Nothing was lost or damaged: every key reads back after a reopen.
    with strata.Db(path) as db:
        assert [k for k in db.keys(stop=b"l")] == [b"k%06d" % i for i in range(n)]
        writes = list(db.keys(start=b"w"))
        assert writes == [b"w%06d" % i for i in range(len(writes))]
        assert len(writes) >= acknowledged[0] > 0


def test_keyboard_interrupt_during_a_long_scan_leaves_the_database_usable(db, release_gil):
    n = 200000
    _fill(db, n)
    db.flush()
    # Like Ctrl-C: the signal lands in the main thread mid-scan.
    timer = threading.Timer(0.05, _thread.interrupt_main)
    seen = 0
    with pytest.raises(KeyboardInterrupt):
        timer.start()
        for _ in range(1000):
            for _ in db.items():
                seen += 1
    timer.join()
    assert 0 < seen
    db[b"zz-after"] = b"1"
    assert db[b"zz-after"] == b"1"
    assert sum(1 for _ in db.keys(stop=b"l")) == n
    db.compact_range()
    assert db.get(b"k000007") == b"v7"
