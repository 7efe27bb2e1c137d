#!/usr/bin/env python3
"""Side-by-side runs of strata-bench and RocksDB's db_bench with the same flags.

For each benchmark group the engines alternate (strata, rocksdb, strata, ...),
RUNS times each, every run in a fresh process on a fresh database. Per run it
records db_bench's result line (micros/op, ops/sec), P99 from --histogram=1,
the child's CPU time and peak RSS from wait4(), and prints medians and the
ratio strata/rocksdb of throughput.

CPU per op is the process's user+system time over the last benchmark's
operations minus the same for a run of the preceding benchmarks alone (for
reads after a fill), so both engines are measured the same way.

Usage: scripts/compare.py [--num N] [--runs R] [--strata PATH] [--db_bench PATH]
                          [--groups fillseq fillrandom readrandom seekrandom]
                          [-- extra flags for both engines]
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

RESULT = re.compile(r"^(\w+)\s*:\s*([\d.]+) micros/op (\d+) ops/sec")
P99 = re.compile(r"P99:\s*([\d.]+)\s+P99\.9")
P99_ROCKS = re.compile(r"P50: [\d.]+ P75: [\d.]+ P99: ([\d.]+)")

# Each measured benchmark and the benchmarks that must run before it in the
# same process (db_bench's fills start from a fresh database).
SETUP = {
    "fillseq": [],
    "fillrandom": [],
    "overwrite": ["fillrandom"],
    "readrandom": ["fillrandom"],
    "seekrandom": ["fillrandom"],
    "readseq": ["fillrandom"],
}


def run(cmd):
    """Runs cmd; returns (stdout, user+sys seconds, peak RSS MiB)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if status != 0:
        sys.exit(f"command failed ({status}): {' '.join(cmd)}\n{out}")
    return out, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def parse(out, bench):
    """(micros/op, ops/sec, p99 micros) of `bench`'s result in `out`."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        m = RESULT.match(line.strip())
        if m and m.group(1) == bench:
            p99 = None
            for follow in lines[i + 1 : i + 40]:
                pm = P99.search(follow) or P99_ROCKS.search(follow)
                if pm:
                    p99 = float(pm.group(1))
                    break
                if RESULT.match(follow.strip()):
                    break
            return float(m.group(2)), int(m.group(3)), p99
    sys.exit(f"no result line for {bench} in:\n{out}")


def command(engine, paths, benchmarks, db, args, extra):
    common = [
        f"--benchmarks={','.join(benchmarks)}",
        f"--num={args.num}",
        "--key_size=16",
        "--value_size=100",
        f"--seed={args.seed}",
        "--compression_type=none",
        "--bloom_bits=10",
        "--checksum_type=4",
        f"--db={db}",
        "--threads=1",
    ] + extra
    if engine == "rocksdb":
        return [paths["rocksdb"], *common, "--histogram=1"]
    return [paths["strata"], *common, "--histogram=1"]


def measure(engine, paths, bench, args, extra, tmp):
    db = os.path.join(tmp, f"{engine}-db")
    shutil.rmtree(db, ignore_errors=True)
    setup = SETUP.get(bench, [])
    out, cpu, rss = run(command(engine, paths, setup + [bench], db, args, extra))
    micros, ops, p99 = parse(out, bench)
    base_cpu = 0.0
    if setup:
        shutil.rmtree(db, ignore_errors=True)
        _, base_cpu, _ = run(command(engine, paths, setup, db, args, extra))
    shutil.rmtree(db, ignore_errors=True)
    reads = args.num
    return {
        "micros": micros,
        "ops": ops,
        "p99": p99,
        "cpu": max(cpu - base_cpu, 0.0) * 1e6 / reads,
        "rss": rss,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=301)
    parser.add_argument("--strata", default="target/release/strata-bench")
    parser.add_argument("--db_bench", default=shutil.which("db_bench") or "db_bench")
    parser.add_argument("--groups", nargs="+", default=["fillseq", "fillrandom", "readrandom", "seekrandom"])
    parser.add_argument("extra", nargs="*")
    args = parser.parse_args()
    paths = {"strata": args.strata, "rocksdb": args.db_bench}
    tmp = tempfile.mkdtemp(prefix="strata-compare-")
    try:
        rows = []
        for bench in args.groups:
            results = {"strata": [], "rocksdb": []}
            for i in range(args.runs):
                for engine in ("strata", "rocksdb"):
                    r = measure(engine, paths, bench, args, args.extra, tmp)
                    results[engine].append(r)
                    print(
                        f"# {bench} run {i + 1} {engine}: {r['micros']:.3f} micros/op {r['ops']} ops/sec "
                        f"p99 {r['p99']} cpu/op {r['cpu']:.3f} rss {r['rss']:.1f} MB",
                        flush=True,
                    )
            rows.append((bench, results))
        print()
        print("| benchmark | engine | micros/op | ops/sec | P99 us | CPU us/op | peak RSS MB |")
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
        for bench, results in rows:
            med = {}
            for engine in ("strata", "rocksdb"):
                rs = results[engine]
                med[engine] = {k: statistics.median(r[k] for r in rs if r[k] is not None) for k in rs[0]}
                m = med[engine]
                print(
                    f"| {bench} | {engine} | {m['micros']:.3f} | {m['ops']:.0f} | {m['p99']:.2f} | "
                    f"{m['cpu']:.3f} | {m['rss']:.1f} |"
                )
            ratio = med["strata"]["ops"] / med["rocksdb"]["ops"]
            print(f"| {bench} | strata/rocksdb ops/sec | {ratio:.2f}x | | | | |")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
