"""Strata beside rocksdict and plyvel, from Python: ``python -m strata.bench``.

Runs the same workloads through each engine that is installed (rocksdict
opened with ``Options(raw_mode=True)``, so it stores bytes as they are;
plyvel needs Debian's libleveldb), alternating engines run by run, and
prints the median ops/s of each workload and its ratio to strata's.
Keys are 16 bytes, values 100 (``--num``, ``--runs``, ``--threads``).
"""

import argparse
import os
import random
import shutil
import statistics
import tempfile
import threading
import time


def key(i):
    return b"%016d" % i


def value(i):
    return (b"%08d" % i) * 12 + b"valu"


class Engine:
    """One engine's open/put/get/get_many/scan, by the calls its users make."""

    def __init__(self, name, open_db, put, get, get_many, scan, close):
        self.name = name
        self.open, self.put, self.get = open_db, put, get
        self.get_many, self.scan, self.close = get_many, scan, close


def engines():
    import strata

    found = [
        Engine(
            "strata",
            lambda path: strata.Db(path),
            lambda db, k, v: db.__setitem__(k, v),
            lambda db, k: db[k],
            lambda db, ks: db.get_many(ks),
            lambda db: db.items(),
            lambda db: db.close(),
        )
    ]
    try:
        import rocksdict

        def open_rocksdict(path):
            return rocksdict.Rdict(path, options=rocksdict.Options(raw_mode=True))

        found.append(
            Engine(
                "rocksdict",
                open_rocksdict,
                lambda db, k, v: db.__setitem__(k, v),
                lambda db, k: db[k],
                lambda db, ks: db[ks],
                lambda db: db.items(),
                lambda db: db.close(),
            )
        )
    except ImportError:
        pass
    try:
        import plyvel

        found.append(
            Engine(
                "plyvel",
                lambda path: plyvel.DB(path, create_if_missing=True),
                lambda db, k, v: db.put(k, v),
                lambda db, k: db.get(k),
                lambda db, ks: [db.get(k) for k in ks],
                lambda db: db.iterator(),
                lambda db: db.close(),
            )
        )
    except ImportError:
        pass
    return found


def run_once(engine, num, threads, seed):
    """ops/s of each workload for one fresh database."""
    rng = random.Random(seed)
    order = list(range(num))
    rng.shuffle(order)
    reads = [key(rng.randrange(num)) for _ in range(num)]
    out = {}
    root = tempfile.mkdtemp(prefix="strata-bench-")
    try:
        for workload in ("fillseq", "fillrandom"):
            path = os.path.join(root, workload)
            db = engine.open(path)
            ids = range(num) if workload == "fillseq" else order
            start = time.perf_counter()
            for i in ids:
                engine.put(db, key(i), value(i))
            out[workload] = num / (time.perf_counter() - start)
            if workload == "fillseq":
                engine.close(db)
        start = time.perf_counter()
        for k in reads:
            engine.get(db, k)
        out["readrandom"] = num / (time.perf_counter() - start)
        start = time.perf_counter()
        for i in range(0, num, 100):
            engine.get_many(db, reads[i : i + 100])
        out["multiget (100)"] = num / (time.perf_counter() - start)
        start = time.perf_counter()
        count = sum(1 for _ in engine.scan(db))
        out["scan"] = count / (time.perf_counter() - start)

        def reader(part):
            for k in part:
                engine.get(db, k)

        parts = [reads[t::threads] for t in range(threads)]
        pool = [threading.Thread(target=reader, args=(p,)) for p in parts]
        start = time.perf_counter()
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        out["readrandom %d threads" % threads] = num / (time.perf_counter() - start)
        engine.close(db)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    found = engines()
    results = {e.name: [] for e in found}
    for run in range(args.runs):
        for engine in found:
            results[engine.name].append(run_once(engine, args.num, args.threads, seed=run))
            print("run %d %s done" % (run + 1, engine.name), flush=True)
    workloads = list(results["strata"][0])
    names = [e.name for e in found]
    header = "%-24s" % "workload" + "".join("%16s" % n for n in names)
    header += "".join("%18s" % ("%s/strata" % n) for n in names[1:])
    print("\nmedian ops/s of %d runs, %d keys" % (args.runs, args.num))
    print(header)
    for w in workloads:
        med = [statistics.median(r[w] for r in results[n]) for n in names]
        line = "%-24s" % w + "".join("%16.0f" % m for m in med)
        line += "".join("%18.2f" % (m / med[0]) for m in med[1:])
        print(line)


if __name__ == "__main__":
    main()
