//! `--statistics=1` prints RocksDB's ticker and histogram lines under
//! RocksDB's names: one parser reads them from `strata-bench` and from
//! Debian's `db_bench` (its output, checked in as a fixture) and finds the
//! same names for the block cache per block kind, the bloom filter, the
//! memtable, gets answered per level, and the rest Strata counts.

use std::collections::BTreeMap;

use super::bench;

/// A `--statistics` line: a ticker (`rocksdb.NAME COUNT : N`) or a
/// histogram (`rocksdb.NAME P50 : x P95 : x P99 : x P100 : x COUNT : n SUM : s`).
#[derive(Debug, Clone, PartialEq)]
enum Stat {
    Ticker(u64),
    Histogram { count: u64, sum: u64 },
}

/// Every statistics line of `text`, by name; other lines are passed over.
fn parse_statistics(text: &str) -> BTreeMap<String, Stat> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Some((name, rest)) = line.split_once(' ') else {
            continue;
        };
        if !name.starts_with("rocksdb.") {
            continue;
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        let stat = match words[..] {
            ["COUNT", ":", n] => n.parse().ok().map(Stat::Ticker),
            ["P50", ":", _, "P95", ":", _, "P99", ":", _, "P100", ":", _, "COUNT", ":", count, "SUM", ":", sum] => {
                match (count.parse(), sum.parse()) {
                    (Ok(count), Ok(sum)) => Some(Stat::Histogram { count, sum }),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(stat) = stat {
            out.insert(name.to_string(), stat);
        }
    }
    out
}

/// Names both must print: the list and what Strata counts besides.
const SHARED: &[&str] = &[
    "rocksdb.block.cache.miss",
    "rocksdb.block.cache.hit",
    "rocksdb.block.cache.add",
    "rocksdb.block.cache.data.miss",
    "rocksdb.block.cache.data.hit",
    "rocksdb.block.cache.index.miss",
    "rocksdb.block.cache.index.hit",
    "rocksdb.block.cache.filter.miss",
    "rocksdb.block.cache.filter.hit",
    "rocksdb.bloom.filter.useful",
    "rocksdb.bloom.filter.full.positive",
    "rocksdb.bloom.filter.prefix.checked",
    "rocksdb.bloom.filter.prefix.useful",
    "rocksdb.memtable.hit",
    "rocksdb.memtable.miss",
    "rocksdb.l0.hit",
    "rocksdb.l1.hit",
    "rocksdb.l2andup.hit",
    "rocksdb.bytes.read",
    "rocksdb.bytes.written",
    "rocksdb.number.keys.read",
    "rocksdb.number.keys.written",
    "rocksdb.compaction.key.drop.new",
    "rocksdb.compaction.key.drop.obsolete",
    "rocksdb.compaction.key.drop.range_del",
    "rocksdb.compaction.key.drop.user",
    "rocksdb.stall.micros",
    "rocksdb.wal.synced",
    "rocksdb.wal.bytes",
    "rocksdb.compact.read.bytes",
    "rocksdb.compact.write.bytes",
    "rocksdb.flush.write.bytes",
    "rocksdb.no.file.opens",
    "rocksdb.number.db.seek",
    "rocksdb.number.multiget.get",
    "rocksdb.number.multiget.keys.read",
    "rocksdb.db.get.micros",
    "rocksdb.db.write.micros",
    "rocksdb.db.seek.micros",
    "rocksdb.db.multiget.micros",
    "rocksdb.compaction.times.micros",
    "rocksdb.db.flush.micros",
    "rocksdb.wal.file.sync.micros",
    "rocksdb.table.open.io.micros",
    "rocksdb.num.subcompactions.scheduled",
];

#[test]
fn statistics_lines_carry_rocksdbs_names() {
    let fixture = include_str!("../fixtures/db_bench-7.8.3-statistics.txt");
    let db_bench = parse_statistics(fixture);
    let dir = tempfile::tempdir().expect("tempdir");
    let db = format!("--db={}", dir.path().join("db").display());
    let out = bench(&[
        "--benchmarks=fillseq,readrandom",
        "--num=20000",
        "--statistics=1",
        &db,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let strata = parse_statistics(&text);
    for name in SHARED {
        assert!(
            db_bench.contains_key(*name),
            "db_bench does not print {name}"
        );
        assert!(
            strata.contains_key(*name),
            "strata-bench does not print {name}:\n{text}"
        );
        assert_eq!(
            std::mem::discriminant(&db_bench[*name]),
            std::mem::discriminant(&strata[*name]),
            "{name} is a ticker in one and a histogram in the other"
        );
    }
    // Every name Strata prints is one db_bench prints, of the same kind.
    for (name, stat) in &strata {
        let theirs = db_bench.get(name);
        assert!(theirs.is_some(), "{name} is not a name db_bench prints");
        assert_eq!(
            theirs.map(std::mem::discriminant),
            Some(std::mem::discriminant(stat)),
            "{name}"
        );
    }
    // The counts are the run's: as db_bench's were, for the same flags.
    let ticker = |stats: &BTreeMap<String, Stat>, name: &str| match stats.get(name) {
        Some(Stat::Ticker(n)) => *n,
        other => panic!("{name}: {other:?}"),
    };
    for stats in [&db_bench, &strata] {
        assert_eq!(ticker(stats, "rocksdb.number.keys.written"), 20_000);
        assert_eq!(ticker(stats, "rocksdb.number.keys.read"), 20_000);
    }
    let Some(Stat::Histogram { count, .. }) = strata.get("rocksdb.db.get.micros") else {
        panic!("no get histogram");
    };
    assert_eq!(*count, 20_000);
}
