"""Strata beside rocksdict and plyvel, from Python: ``python -m strata.bench``.

Runs the same workloads through each engine that is installed (rocksdict
opened with ``Options(raw_mode=True)``, so it stores bytes as they are;
plyvel needs Debian's libleveldb), alternating engines run by run, and
prints the median ops/s of each workload and its ratio to strata's.
Keys are 16 bytes, values 100 (``--num``, ``--runs``, ``--threads``).

``--gil`` measures instead what letting go of the interpreter buys: strata
alone, 1 and then ``--threads`` Python threads reading random keys while one
more thread overwrites random keys, with the interpreter released around
engine calls (as shipped) and held (a switch kept for this measurement),
alternating run by run.
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


def read_while_writing(db, num, readers, reads, seed):
    """Reads/s of `readers` threads sharing `reads` random gets, and the
    writes/s of one thread overwriting random keys until they finish."""
    rng = random.Random(seed)
    keys = [key(rng.randrange(num)) for _ in range(reads)]
    parts = [keys[t::readers] for t in range(readers)]
    done = threading.Event()
    written = [0]

    def writer():
        wrng = random.Random(seed + 1)
        while not done.is_set():
            i = wrng.randrange(num)
            db[key(i)] = value(i)
            written[0] += 1

    def reader(part):
        for k in part:
            if db[k] is None:
                raise AssertionError("key %r missing" % k)

    pool = [threading.Thread(target=reader, args=(p,)) for p in parts]
    w = threading.Thread(target=writer)
    w.start()
    start = time.perf_counter()
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    elapsed = time.perf_counter() - start
    done.set()
    w.join()
    return reads / elapsed, written[0] / elapsed


def gil_scaling(num, runs, threads):
    """Prints reads/s with 1 and `threads` readers beside a writer, with
    the interpreter released around engine calls and held."""
    import strata

    reads = max(num, 100_000)
    results = {}
    root = tempfile.mkdtemp(prefix="strata-bench-gil-")
    try:
        db = strata.Db(os.path.join(root, "db"))
        order = list(range(num))
        random.Random(0).shuffle(order)
        for i in order:
            db[key(i)] = value(i)
        for run in range(runs):
            for release in (True, False):
                strata._strata._set_release_gil(release)
                try:
                    for readers in (1, threads):
                        got = read_while_writing(db, num, readers, reads, seed=run)
                        results.setdefault((release, readers), []).append(got)
                finally:
                    strata._strata._set_release_gil(True)
            print("run %d done" % (run + 1), flush=True)
        db.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("\nmedian of %d runs, %d keys, %d reads a run, one writer beside" % (runs, num, reads))
    print(
        "%8s%16s%16s%12s%16s%16s%12s"
        % ("readers", "reads/s rel.", "reads/s held", "ratio", "writes/s rel.", "writes/s held", "ratio")
    )
    for readers in (1, threads):
        line = "%8d" % readers
        for which in (0, 1):
            rel = statistics.median(x[which] for x in results[(True, readers)])
            held = statistics.median(x[which] for x in results[(False, readers)])
            line += "%16.0f%16.0f%12.2f" % (rel, held, rel / held)
        print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--gil", action="store_true", help="measure the GIL's release instead")
    args = parser.parse_args()
    if args.gil:
        gil_scaling(args.num, args.runs, args.threads)
        return
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
