"""A forked child must not use its parent's handles."""

import os
import signal
import time

import pytest

import strata


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork here")
def test_a_forked_child_cannot_use_the_parents_database(tmp_path):
    path = str(tmp_path / "db")
    db = strata.Db(path)
    db[b"k"] = b"parent"
    keys = db.keys()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        outcome = []
        for attempt in (
            lambda: db[b"k"],
            lambda: db.__setitem__(b"child", b"1"),
            lambda: next(keys),
            lambda: db.snapshot(),
        ):
            try:
                attempt()
                outcome.append("used")
            except strata.Error as e:
                outcome.append("refused" if "forked" in str(e) else "other: %s" % e)
            except Exception as e:
                outcome.append("other: %r" % e)
        try:
            db.close()  # the parent's to close: nothing happens here
            del db
            outcome.append("closed")
        except Exception as e:
            outcome.append("close failed: %r" % e)
        os.write(write, ",".join(outcome).encode())
        os._exit(0)
    os.close(write)
    # Without the protection the child hangs closing the engine (joining
    # threads it does not have): fail then, rather than hang.
    deadline = time.monotonic() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung using its parent's database")
        time.sleep(0.05)
    report = os.read(read, 4096).decode()
    os.close(read)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert report == "refused,refused,refused,refused,closed", report
    # The parent's handle is whole: it reads, writes, still holds the LOCK
    # (the child neither unlocked it nor shut the engine down).
    assert db[b"k"] == b"parent" and b"child" not in db
    assert next(keys) == b"k"
    db[b"after"] = b"1"
    with pytest.raises(strata.Busy):
        strata.Db(path)
    db.close()
    with strata.Db(path) as again:
        assert list(again.keys()) == [b"after", b"k"]
